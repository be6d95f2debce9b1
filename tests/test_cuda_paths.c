/*
 * The CUDA paths behind issue 58's switches, against the paths they stand in for, on a GPU (ctest label "gpu"; every
 * test skips with a message where there is none): the fused ops (GGUFSCOPE_CUDA_FUSED=1) and the replayed step's
 * rope_store bit for bit the ops they fuse, the split-TF32 prompt products (GGUFSCOPE_CUDA_TF32=1) within the f32
 * products' 1e-5, and greedy steps replayed from one recording (GGUFSCOPE_CUDA_REPLAY=1), fused and launched as
 * programmatic dependents (GGUFSCOPE_CUDA_PDL=1) bit for bit the eager ones.
 */
#include "engine.h"
#include "fixture_model.h"
#include "quant.h"
#include "testutil.h"
#include "cuda_sides.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* matmul_many (GGUFSCOPE_CUDA_FUSED=1: q, k and v in one launch) gives each product's bits as matmul alone does:
 * the same type (one launch: a run of blocks each), biases on some, rows that split differently (2048, 256, 33),
 * one token and several; mixed types and prompts go one product after another; and the most weights one launch
 * takes (KERN_MATMUL_MANY: 8 chosen experts' gate and up). */
Test(cuda, matmul_many_is_each_matmul_bit_for_bit, .timeout = 60)
{
    setenv("GGUFSCOPE_CUDA_FUSED", "1", 1);
    kern_backend *gpu = cuda_or_skip();
    unsetenv("GGUFSCOPE_CUDA_FUSED");
    cr_assert(gpu->matmul_many, "no matmul_many with GGUFSCOPE_CUDA_FUSED=1");
    const int64_t K = 1024, rows[3] = { 2048, 256, 33 };
    const uint32_t sets[][3] = { { GGUF_TENSOR_F16, GGUF_TENSOR_F16, GGUF_TENSOR_F16 },
                                 { GGUF_TENSOR_Q4_K, GGUF_TENSOR_Q4_K, GGUF_TENSOR_Q4_K },
                                 { GGUF_TENSOR_Q8_0, GGUF_TENSOR_Q8_0, GGUF_TENSOR_Q8_0 },
                                 { GGUF_TENSOR_Q4_K, GGUF_TENSOR_Q4_K, GGUF_TENSOR_Q6_K } };
    const int Ts[] = { 1, 3, 20 };
    for (size_t s = 0; s < sizeof sets / sizeof sets[0]; s++) {
        wbuf w[3], bias[3];
        kern_weight kw[3], kb[3];
        for (int i = 0; i < 3; i++) {
            w[i] = make_weight(sets[s][i], K, rows[i], 70 + (uint32_t)i);
            bias[i] = make_weight(GGUF_TENSOR_F32, rows[i], 1, 80 + (uint32_t)i);
            kw[i] = (kern_weight){ .t = &w[i].t };
            kb[i] = (kern_weight){ .t = &bias[i].t };
            cr_assert_eq(gpu->bind(gpu, &kw[i]), KERN_OK, "%s", gpu->last_error(gpu));
            cr_assert_eq(gpu->bind(gpu, &kb[i]), KERN_OK, "%s", gpu->last_error(gpu));
        }
        const kern_weight *const ws[3] = { &kw[0], &kw[1], &kw[2] }, *const bs[3] = { &kb[0], NULL, &kb[2] };
        for (size_t ti = 0; ti < sizeof Ts / sizeof Ts[0]; ti++) {
            const int T = Ts[ti];
            float *x = noise((size_t)T * K, 90, 1.0f), *xd = up(gpu, x, (size_t)T * K);
            float *one[3], *many[3];
            for (int i = 0; i < 3; i++) {
                one[i] = gpu->alloc(gpu, (size_t)T * rows[i]);
                many[i] = gpu->alloc(gpu, (size_t)T * rows[i]);
                cr_assert_eq(gpu->matmul(gpu, ws[i], bs[i], xd, T, one[i]), KERN_OK, "%s", gpu->last_error(gpu));
            }
            cr_assert_eq(gpu->matmul_many(gpu, 3, ws, bs, xd, T, many), KERN_OK, "%s", gpu->last_error(gpu));
            for (int i = 0; i < 3; i++) {
                float *a = down(gpu, one[i], (size_t)T * rows[i]), *b = down(gpu, many[i], (size_t)T * rows[i]);
                cr_assert(!memcmp(a, b, (size_t)T * rows[i] * sizeof(float)), "set %zu, T=%d, product %d: rel %g", s, T,
                          i, rel_diff(a, b, (size_t)T * rows[i]));
                free(a), free(b);
                gpu->free(gpu, one[i]), gpu->free(gpu, many[i]);
            }
            gpu->free(gpu, xd), free(x);
        }
        for (int i = 0; i < 3; i++) {
            gpu->unbind(gpu, &kw[i]), gpu->unbind(gpu, &kb[i]);
            free(w[i].data), free(bias[i].data);
        }
    }
    /* the most one launch takes: 8 chosen experts' gate and up products (Q4_K, rows of an expert's width) */
    enum { MOST = KERN_MATMUL_MANY };
    wbuf mw[MOST];
    kern_weight mk[MOST];
    const kern_weight *mws[MOST];
    float *one[MOST], *many[MOST];
    float *x = noise(K, 91, 1.0f), *xd = up(gpu, x, K);
    for (int i = 0; i < MOST; i++) {
        mw[i] = make_weight(GGUF_TENSOR_Q4_K, K, 96, 100 + (uint32_t)i);
        mk[i] = (kern_weight){ .t = &mw[i].t };
        mws[i] = &mk[i];
        cr_assert_eq(gpu->bind(gpu, &mk[i]), KERN_OK, "%s", gpu->last_error(gpu));
        one[i] = gpu->alloc(gpu, 96), many[i] = gpu->alloc(gpu, 96);
        cr_assert_eq(gpu->matmul(gpu, mws[i], NULL, xd, 1, one[i]), KERN_OK, "%s", gpu->last_error(gpu));
    }
    cr_assert_eq(gpu->matmul_many(gpu, MOST, mws, NULL, xd, 1, many), KERN_OK, "%s", gpu->last_error(gpu));
    for (int i = 0; i < MOST; i++) {
        float *a = down(gpu, one[i], 96), *b = down(gpu, many[i], 96);
        cr_assert(!memcmp(a, b, 96 * sizeof(float)), "%d weights in one launch, product %d: rel %g", MOST, i,
                  rel_diff(a, b, 96));
        free(a), free(b);
        gpu->free(gpu, one[i]), gpu->free(gpu, many[i]);
        gpu->unbind(gpu, &mk[i]);
        free(mw[i].data);
    }
    gpu->free(gpu, xd), free(x);
    gpu->destroy(gpu);
}

/* matmul_glu (GGUFSCOPE_CUDA_FUSED=1: the gated block's gate and up products and its activation in one launch) is
 * matmul, matmul and glu bit for bit: each activation, with and without biases, one token and several (and a
 * prompt's 20, and mixed types, which it composes). */
Test(cuda, matmul_glu_is_matmul_matmul_glu_bit_for_bit, .timeout = 60)
{
    setenv("GGUFSCOPE_CUDA_FUSED", "1", 1);
    kern_backend *gpu = cuda_or_skip();
    unsetenv("GGUFSCOPE_CUDA_FUSED");
    cr_assert(gpu->matmul_glu, "no matmul_glu with GGUFSCOPE_CUDA_FUSED=1");
    const int64_t K = 512, F = 1000;
    const uint32_t sets[][2] = { { GGUF_TENSOR_F16, GGUF_TENSOR_F16 }, { GGUF_TENSOR_Q4_K, GGUF_TENSOR_Q4_K },
                                 { GGUF_TENSOR_Q8_0, GGUF_TENSOR_Q8_0 }, { GGUF_TENSOR_Q4_K, GGUF_TENSOR_Q6_K } };
    const kern_act acts[] = { KERN_ACT_SILU, KERN_ACT_GELU_TANH, KERN_ACT_SWIGLU_OAI };
    const int Ts[] = { 1, 3, 20 };
    for (size_t si = 0; si < sizeof sets / sizeof sets[0]; si++) {
        wbuf wg = make_weight(sets[si][0], K, F, 91), wu = make_weight(sets[si][1], K, F, 92);
        wbuf bg = make_weight(GGUF_TENSOR_F32, F, 1, 93), bu = make_weight(GGUF_TENSOR_F32, F, 1, 94);
        kern_weight g = { .t = &wg.t }, u = { .t = &wu.t }, gb = { .t = &bg.t }, ub = { .t = &bu.t };
        kern_weight *all[] = { &g, &u, &gb, &ub };
        for (int i = 0; i < 4; i++)
            cr_assert_eq(gpu->bind(gpu, all[i]), KERN_OK, "%s", gpu->last_error(gpu));
        for (size_t ai = 0; ai < sizeof acts / sizeof acts[0]; ai++)
            for (size_t ti = 0; ti < sizeof Ts / sizeof Ts[0]; ti++)
                for (int with_bias = 0; with_bias < 2; with_bias++) {
                    const int T = Ts[ti];
                    const size_t n = (size_t)T * F;
                    const kern_weight *const bs[2] = { with_bias ? &gb : NULL, with_bias ? &ub : NULL };
                    float *x = noise((size_t)T * K, 95, 1.0f), *xd = up(gpu, x, (size_t)T * K);
                    float *y1 = gpu->alloc(gpu, n), *u1 = gpu->alloc(gpu, n), *y2 = gpu->alloc(gpu, n);
                    float *scratch = gpu->alloc(gpu, n);
                    cr_assert_eq(gpu->matmul(gpu, &g, bs[0], xd, T, y1), KERN_OK, "%s", gpu->last_error(gpu));
                    cr_assert_eq(gpu->matmul(gpu, &u, bs[1], xd, T, u1), KERN_OK, "%s", gpu->last_error(gpu));
                    cr_assert_eq(gpu->glu(gpu, acts[ai], y1, u1, n, (size_t)F, y1), KERN_OK, "%s",
                                 gpu->last_error(gpu));
                    cr_assert_eq(gpu->matmul_glu(gpu, &g, &u, bs, xd, T, acts[ai], y2, scratch), KERN_OK, "%s",
                                 gpu->last_error(gpu));
                    float *a = down(gpu, y1, n), *c = down(gpu, y2, n);
                    cr_assert(!memcmp(a, c, n * sizeof(float)), "set %zu, act %d, T %d, biases %d: rel %g", si,
                              (int)acts[ai], T, with_bias, rel_diff(a, c, n));
                    free(a), free(c), free(x);
                    float *dev[] = { xd, y1, u1, y2, scratch };
                    for (int i = 0; i < 5; i++)
                        gpu->free(gpu, dev[i]);
                }
        for (int i = 0; i < 4; i++)
            gpu->unbind(gpu, all[i]);
        free(wg.data), free(wu.data), free(bg.data), free(bu.data);
    }
    gpu->destroy(gpu);
}

/* The prompt products on the tensor cores (GGUFSCOPE_CUDA_TF32=1: each operand as two TF32 parts) stay within the
 * f32 products' 1e-5 of the CPU, for weights with a low part (F32, Q8_0, Q4_K) and without (F16); and they are
 * another computation than cuBLAS's f32 one (the switch took effect: not the same bits on every type). */
Test(cuda, matmul_tf32x_prompts_keep_f32_precision, .timeout = 120)
{
    kern_backend *cpu = kern_cpu_create(2), *f32 = cuda_or_skip();
    setenv("GGUFSCOPE_CUDA_TF32", "1", 1);
    kern_backend *tc = cuda_or_skip();
    unsetenv("GGUFSCOPE_CUDA_TF32");
    const uint32_t types[] = { GGUF_TENSOR_F32, GGUF_TENSOR_F16, GGUF_TENSOR_Q8_0, GGUF_TENSOR_Q4_K };
    const int64_t K = 1024, N = 777;
    const int T = 64;
    bool any_differs = false;
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
        wbuf w = make_weight(types[i], K, N, 33);
        kern_weight wc = { .t = &w.t }, wf = { .t = &w.t }, wt = { .t = &w.t };
        cr_assert_eq(cpu->bind(cpu, &wc), KERN_OK);
        cr_assert_eq(f32->bind(f32, &wf), KERN_OK, "%s", f32->last_error(f32));
        cr_assert_eq(tc->bind(tc, &wt), KERN_OK, "%s", tc->last_error(tc));
        float *x = noise((size_t)T * K, 34, 1.0f), *yc = malloc((size_t)T * N * sizeof(float));
        float *xf = up(f32, x, (size_t)T * K), *xt = up(tc, x, (size_t)T * K);
        float *yfd = f32->alloc(f32, (size_t)T * N), *ytd = tc->alloc(tc, (size_t)T * N);
        cr_assert_eq(cpu->matmul(cpu, &wc, NULL, x, T, yc), KERN_OK);
        cr_assert_eq(f32->matmul(f32, &wf, NULL, xf, T, yfd), KERN_OK, "%s", f32->last_error(f32));
        cr_assert_eq(tc->matmul(tc, &wt, NULL, xt, T, ytd), KERN_OK, "%s", tc->last_error(tc));
        float *yf = down(f32, yfd, (size_t)T * N), *yt = down(tc, ytd, (size_t)T * N);
        const float rel = rel_diff(yc, yt, (size_t)T * N);
        cr_assert_lt(rel, 1e-5f, "%s: the split TF32 product is %g from the CPU's", gguf_type_traits_of(types[i])->name,
                     rel);
        any_differs |= memcmp(yf, yt, (size_t)T * N * sizeof(float)) != 0;
        f32->free(f32, xf), f32->free(f32, yfd), tc->free(tc, xt), tc->free(tc, ytd);
        f32->unbind(f32, &wf), tc->unbind(tc, &wt), cpu->unbind(cpu, &wc);
        free(x), free(yc), free(yf), free(yt), free(w.data);
    }
    cr_assert(any_differs, "GGUFSCOPE_CUDA_TF32=1 gave cuBLAS's f32 products bit for bit: the switch did nothing");
    tc->destroy(tc), f32->destroy(f32), cpu->destroy(cpu);
}

/* rope_store (the fused op of a replayed step) is rope of q, rope of k and both rows into the caches, bit for bit,
 * in both modes, with a partial rotation (dimensions past n_rot stored as they are) and grouped heads. */
Test(cuda, rope_store_is_rope_then_store_bit_for_bit)
{
    setenv("GGUFSCOPE_CUDA_REPLAY", "1", 1); /* the op is offered while steps replay */
    kern_backend *gpu = cuda_or_skip();
    unsetenv("GGUFSCOPE_CUDA_REPLAY");
    cr_assert(gpu->rope_store, "no rope_store with GGUFSCOPE_CUDA_REPLAY=1");
    const int n_head = 8, n_kv = 2, hd = 64, n_ctx = 12, T = 3, pos0 = 6, kv_dim = n_kv * hd;
    for (int mode = 0; mode < 4; mode++) {
        const kern_rope r = { .n_rot = mode & 2 ? 32 : hd, .neox = mode & 1, .base = 1e4f, .freq_scale = 1.0f,
                              .attn_factor = 1.0f };
        const size_t nq = (size_t)T * n_head * hd, nk = (size_t)T * kv_dim, nc = (size_t)n_ctx * kv_dim;
        float *q = noise(nq, 51, 1.0f), *k = noise(nk, 52, 1.0f), *v = noise(nk, 53, 1.0f);
        float *cache = noise(nc, 54, 1.0f);
        float *q1 = up(gpu, q, nq), *k1 = up(gpu, k, nk), *q2 = up(gpu, q, nq), *k2 = up(gpu, k, nk);
        float *vd = up(gpu, v, nk), *kc1 = up(gpu, cache, nc), *vc1 = up(gpu, cache, nc);
        float *kc2 = up(gpu, cache, nc), *vc2 = up(gpu, cache, nc);
        cr_assert_eq(gpu->rope(gpu, q1, T, n_head, hd, pos0, &r), KERN_OK, "%s", gpu->last_error(gpu));
        cr_assert_eq(gpu->rope(gpu, k1, T, n_kv, hd, pos0, &r), KERN_OK);
        cr_assert_eq(gpu->store_rows(gpu, kc1, k1, T, kv_dim, pos0), KERN_OK, "%s", gpu->last_error(gpu));
        cr_assert_eq(gpu->store_rows(gpu, vc1, vd, T, kv_dim, pos0), KERN_OK);
        cr_assert_eq(gpu->rope_store(gpu, q2, k2, vd, T, n_head, n_kv, hd, pos0, &r, kc2, vc2), KERN_OK, "%s",
                     gpu->last_error(gpu));
        const struct { float *a, *b; size_t n; const char *what; } pairs[] = {
            { q1, q2, nq, "q" }, { k1, k2, nk, "k" }, { kc1, kc2, nc, "the key cache" },
            { vc1, vc2, nc, "the value cache" },
        };
        for (int i = 0; i < 4; i++) {
            float *a = down(gpu, pairs[i].a, pairs[i].n), *b = down(gpu, pairs[i].b, pairs[i].n);
            cr_assert(!memcmp(a, b, pairs[i].n * sizeof(float)), "mode %d: %s differs (rel %g)", mode, pairs[i].what,
                      rel_diff(a, b, pairs[i].n));
            free(a), free(b);
        }
        float *kc = down(gpu, kc1, nc);
        cr_assert(!memcmp(kc, cache, (size_t)pos0 * kv_dim * sizeof(float)), "rows before pos0 were written");
        free(kc);
        float *dev[] = { q1, k1, q2, k2, vd, kc1, vc1, kc2, vc2 };
        for (size_t i = 0; i < sizeof dev / sizeof dev[0]; i++)
            gpu->free(gpu, dev[i]);
        free(q), free(k), free(v), free(cache);
    }
    gpu->destroy(gpu);
}

/* add_rmsnorm (GGUFSCOPE_CUDA_FUSED=1) is add then rmsnorm, bit for bit: the sum and the norm, rows of a width
 * that is not a multiple of the block (1000) and of a real model's (2048), one row and several. */
Test(cuda, add_rmsnorm_is_add_then_rmsnorm_bit_for_bit)
{
    setenv("GGUFSCOPE_CUDA_FUSED", "1", 1);
    kern_backend *gpu = cuda_or_skip();
    unsetenv("GGUFSCOPE_CUDA_FUSED");
    cr_assert(gpu->add_rmsnorm, "no add_rmsnorm with GGUFSCOPE_CUDA_FUSED=1");
    const int widths[] = { 1000, 2048 }, Ts[] = { 1, 7 };
    for (int wi = 0; wi < 2; wi++)
        for (int ti = 0; ti < 2; ti++) {
            const int n = widths[wi], T = Ts[ti];
            const size_t len = (size_t)T * n;
            wbuf g = make_weight(GGUF_TENSOR_F32, n, 1, 60);
            kern_weight kg = { .t = &g.t };
            cr_assert_eq(gpu->bind(gpu, &kg), KERN_OK, "%s", gpu->last_error(gpu));
            float *x = noise(len, 61, 2.0f), *y = noise(len, 62, 1.0f);
            float *x1 = up(gpu, x, len), *x2 = up(gpu, x, len), *yd = up(gpu, y, len);
            float *h1 = gpu->alloc(gpu, len), *h2 = gpu->alloc(gpu, len);
            cr_assert_eq(gpu->add(gpu, x1, yd, len), KERN_OK);
            cr_assert_eq(gpu->rmsnorm(gpu, &kg, x1, T, n, 1e-6f, h1), KERN_OK, "%s", gpu->last_error(gpu));
            cr_assert_eq(gpu->add_rmsnorm(gpu, x2, yd, &kg, T, n, 1e-6f, h2), KERN_OK, "%s", gpu->last_error(gpu));
            float *a = down(gpu, x1, len), *b = down(gpu, x2, len), *c = down(gpu, h1, len), *d = down(gpu, h2, len);
            cr_assert(!memcmp(a, b, len * sizeof(float)), "n %d, T %d: the sums differ", n, T);
            cr_assert(!memcmp(c, d, len * sizeof(float)), "n %d, T %d: the norms differ (rel %g)", n, T,
                      rel_diff(c, d, len));
            float *dev[] = { x1, x2, yd, h1, h2 };
            for (size_t i = 0; i < 5; i++)
                gpu->free(gpu, dev[i]);
            free(a), free(b), free(c), free(d), free(x), free(y);
            gpu->unbind(gpu, &kg);
            free(g.data);
        }
    gpu->destroy(gpu);
}

/* A prompt and 64 greedy decode steps on a CUDA backend made under the given switches (before step 40, three
 * positions rewound and run again), then one more token's logits (the cache's contents speak in them); what
 * GGUFSCOPE_CUDA_TIMING kept, when asked. */
enum { REPLAY_STEPS = 64 };
typedef struct greedy_run {
    int32_t tokens[REPLAY_STEPS];
    float *logits;
    int n_vocab;
    char timing[512];
} greedy_run;

/* The switches a run is made under: GGUFSCOPE_CUDA_GRAPHS, _REPLAY, _FUSED, _PDL ("0" or "1" each). */
typedef struct cuda_switches {
    const char *graphs, *replay, *fused, *pdl;
} cuda_switches;

static void greedy_on_cuda(const char *path, cuda_switches sw, greedy_run *out)
{
    setenv("GGUFSCOPE_CUDA_GRAPHS", sw.graphs, 1);
    setenv("GGUFSCOPE_CUDA_REPLAY", sw.replay, 1);
    setenv("GGUFSCOPE_CUDA_FUSED", sw.fused, 1);
    setenv("GGUFSCOPE_CUDA_PDL", sw.pdl, 1);
    setenv("GGUFSCOPE_CUDA_TIMING", "1", 1);
    kern_backend *gpu = cuda_or_skip();
    const char *names[] = { "GGUFSCOPE_CUDA_GRAPHS", "GGUFSCOPE_CUDA_REPLAY", "GGUFSCOPE_CUDA_FUSED",
                            "GGUFSCOPE_CUDA_PDL", "GGUFSCOPE_CUDA_TIMING" };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        unsetenv(names[i]);
    const bool replay = !strcmp(sw.replay, "1") && strcmp(sw.graphs, "0");
    cr_assert_eq(gpu->step_replay != NULL, replay, "replay switch ignored");
    gguf_file *f;
    gguf_error ge;
    engine_error e;
    cr_assert_eq(gguf_open(path, &f, &ge), GGUF_OK);
    engine_model *m;
    engine_ctx *c;
    cr_assert_eq(engine_model_load(f, gpu, &m, &e), ENGINE_OK, "%s", e.message);
    cr_assert_eq(engine_ctx_create(m, REPLAY_STEPS + 16, 8, &c, &e), ENGINE_OK, "%s", e.message);
    const int nv = engine_model_hparams(m)->n_vocab;
    int32_t prompt[5] = { 1, 7, 11, 13, 17 }, tok;
    cr_assert_eq(engine_forward_argmax(c, prompt, 5, &tok, NULL, &e), ENGINE_OK, "%s", e.message);
    int32_t fed[REPLAY_STEPS];
    for (int s = 0; s < REPLAY_STEPS; s++) {
        if (s == 40) { /* three positions forgotten and run again: replays at earlier positions */
            cr_assert_eq(engine_ctx_rewind(c, engine_ctx_pos(c) - 3, &e), ENGINE_OK, "%s", e.message);
            for (int r = s - 3; r < s; r++) {
                int32_t again;
                cr_assert_eq(engine_forward_argmax(c, &fed[r], 1, &again, NULL, &e), ENGINE_OK, "%s", e.message);
                cr_assert_eq(again, out->tokens[r], "step %d after the rewind: %d, first %d", r, again, out->tokens[r]);
            }
        }
        fed[s] = tok;
        cr_assert_eq(engine_forward_argmax(c, &tok, 1, &out->tokens[s], NULL, &e), ENGINE_OK, "%s", e.message);
        tok = out->tokens[s];
    }
    out->n_vocab = nv;
    out->logits = malloc((size_t)nv * sizeof(float));
    cr_assert_eq(engine_forward(c, &tok, 1, false, out->logits, NULL, &e), ENGINE_OK, "%s", e.message);
    const char *t = gpu->step_timing ? gpu->step_timing(gpu) : NULL;
    snprintf(out->timing, sizeof out->timing, "%s", t ? t : "");
    engine_ctx_free(c);
    engine_model_free(m);
    gguf_close(f);
    gpu->destroy(gpu);
}

/* Each of the n ways gives what running every op eagerly gives, bit for bit, over 64 greedy steps and in the
 * logits after them (the cache's contents); and steps replayed were replays (the median step recorded nothing). */
static void ways_equal_eager(const char *path, const char *name, const cuda_switches *ways, size_t n)
{
    greedy_run eager = { 0 };
    greedy_on_cuda(path, (cuda_switches){ "0", "0", "0", "0" }, &eager);
    for (size_t w = 0; w < n; w++) {
        greedy_run run = { 0 };
        greedy_on_cuda(path, ways[w], &run);
        char how[96];
        snprintf(how, sizeof how, "graphs %s, replay %s, fused %s, pdl %s", ways[w].graphs, ways[w].replay,
                 ways[w].fused, ways[w].pdl);
        for (int s = 0; s < REPLAY_STEPS; s++)
            cr_assert_eq(run.tokens[s], eager.tokens[s], "%s step %d (%s): %d, eager %d", name, s, how,
                         run.tokens[s], eager.tokens[s]);
        const size_t nv = (size_t)eager.n_vocab;
        cr_assert(!memcmp(eager.logits, run.logits, nv * sizeof(float)),
                  "%s (%s): the logits after the steps differ from the eager ones (rel %g)", name, how,
                  rel_diff(eager.logits, run.logits, nv));
        if (!strcmp(ways[w].replay, "1")) {
            const char *cap = strstr(run.timing, "\"capture_us\": ");
            cr_assert(cap, "%s (%s): no step timing: %s", name, how, run.timing);
            cr_assert_lt(atof(cap + strlen("\"capture_us\": ")), 1.0, "%s (%s): steps were recorded, not replayed: %s",
                         name, how, run.timing);
        }
        free(run.logits);
    }
    free(eager.logits);
}

/* Issue 58's stages 1 and 2: steps replayed from one recording (positions read on the device, the argmax inside
 * the graph), with the fused ops and with programmatic dependent launches, and the eager path with those two. */
static void replay_equals_eager(const char *path, const char *name)
{
    const cuda_switches ways[] = { { "1", "1", "0", "0" }, { "1", "1", "1", "0" }, { "1", "1", "1", "1" },
                                   { "0", "0", "1", "1" } };
    ways_equal_eager(path, name, ways, sizeof ways / sizeof ways[0]);
}

static void replay_model(const char *name)
{
    char *path = model_path(name);
    if (!path)
        cr_skip_test("%s is not in ../shared/models", name);
    replay_equals_eager(path, name);
    free(path);
}

/* A mixture's decode steps (never recorded: routing reads the host) with the fused ops: the chosen experts' gate and
 * up products as one launch (matmul_many, 2k weights), with and without programmatic launches, bit for bit the
 * eager ones. The shared mixture where ../shared/models/moe has it, else gpu-validate's own quantization. */
static void fused_experts(const char *preset, const char *quant)
{
    char shared[128], ours[128];
    snprintf(shared, sizeof shared, "moe/%s-%s.gguf", preset, quant);
    snprintf(ours, sizeof ours, "arch-%s-%s.gguf", preset, quant);
    char *path = model_path(shared);
    if (!path)
        path = model_path(ours);
    if (!path)
        cr_skip_test("neither %s nor %s is in the models folder", shared, ours);
    const cuda_switches ways[] = { { "0", "0", "1", "0" }, { "0", "0", "1", "1" } };
    ways_equal_eager(path, preset, ways, sizeof ways / sizeof ways[0]);
    free(path);
}

Test(cuda, fused_experts_qwen3moe, .timeout = 120) { fused_experts("tiny-qwen3moe", "q4_k_m"); }
Test(cuda, fused_experts_qwen2moe_shared_expert, .timeout = 120) { fused_experts("tiny-qwen2moe", "q4_k_m"); }
Test(cuda, fused_experts_gptoss_mxfp4_biases, .timeout = 120) { fused_experts("tiny-gptoss", "mxfp4"); }

Test(cuda, replay_stories260k, .timeout = 120) { replay_model("stories260K.gguf"); }
Test(cuda, replay_tiny_qwen2_q4_k_m, .timeout = 120) { replay_model("tiny-qwen2-q4_k_m.gguf"); }
Test(cuda, replay_tiny_qwen3_q8_0, .timeout = 120) { replay_model("tiny-qwen3-q8_0.gguf"); }
Test(cuda, replay_fixture_gemma3, .timeout = 120)
{
    kern_backend *gpu = cuda_or_skip(); /* before the file is written: a skip would leave it behind */
    gpu->destroy(gpu);
    fixture_opts o = fixture_default_opts();
    o.arch = "gemma3"; /* a sliding window of 4 positions: what a replay moves must move the window too */
    o.n_layer = 3;
    o.n_embd = 128;
    o.n_ff = 256;
    char path[256];
    snprintf(path, sizeof path, "/tmp/ggufscope-cuda-replay-gemma3-%d.gguf", (int)getpid());
    gguf_error ge;
    cr_assert_eq(fixture_write_file(path, &o, &ge), GGUF_OK, "%s", ge.message);
    replay_equals_eager(path, "the gemma3 fixture");
    unlink(path);
}
