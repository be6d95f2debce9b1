/*
 * What makes a backend comparison trustworthy, checked on any machine:
 * identical backends agree exactly; a deliberately broken op is named as the
 * first divergence (rotary mode: layer 0's q at position 1, because position
 * 0 does not rotate; a wrong lm_head stride: the logits and nothing before);
 * the lm_head spot check names exactly the corrupted rows; the argmax that
 * stays on the backend picks what the host would; and the CUDA kernels'
 * block decoders, compiled for the host, decode every type as quant/ does.
 * What the comparison explains away, and the bug zoo: test_compare.c.
 */
#include "engine.h"
#include "fixture_model.h"
#include "quant.h"
#include "random_blocks.h"
#include "backend_sides.h"
#include "testutil.h"

#include <criterion/criterion.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

Test(backends, identical_backends_agree_exactly)
{
    const char *models[] = { "tiny-llama-f32.gguf", "tiny-qwen2-f16.gguf", "stories260K.gguf" };
    for (size_t i = 0; i < 3; i++) {
        char path[4096];
        engine_comparison r = compare(models[i], NULL, 4, path, sizeof path);
        cr_assert_eq(r.first_bad, -1, "%s: a divergence between identical backends", path);
        cr_assert_eq(r.n_prompt, 10);
        cr_assert_eq(r.n_decode, 6);
        cr_assert_eq(r.n_tokens, 6);
        cr_assert_eq(r.greedy_disagree, 0);
        for (int k = 0; k < r.n_points; k++) {
            const engine_op op = r.points[k].op;
            if (op == ENGINE_OP_EMBD && r.points[k].layer > 0) {
                cr_assert(r.points[k].worst_pos < 0, "%s: embeddings compared at layer %d", path, r.points[k].layer);
                continue;
            }
            if (op == ENGINE_OP_ATTN_POST_NORM || op == ENGINE_OP_FFN_POST_NORM) {
                cr_assert(r.points[k].worst_pos < 0, "%s has no post-norms, yet point %d was compared", path, k);
                continue;
            }
            cr_assert_eq(r.points[k].rel_worst, 0.0f, "%s point %d: %g", path, k, r.points[k].rel_worst);
            cr_assert(r.points[k].worst_pos >= 0, "%s point %d never compared", path, k);
            cr_assert(r.points[k].rel_decode >= 0.0f, "%s point %d: no decode rows", path, k);
        }
        engine_comparison_free(&r);
    }
}

Test(backends, rope_mode_fault_is_pinpointed_to_layer0_q)
{
    char path[4096];
    engine_comparison r = compare("tiny-qwen2-f32.gguf", "rope-mode", 4, path, sizeof path);
    cr_assert_geq(r.first_bad, 0, "%s: the broken rotary went unnoticed", path);
    const engine_cmp_point *p = &r.points[r.first_bad];
    cr_assert_eq(p->layer, 0, "%s: first divergence in layer %d", path, p->layer);
    cr_assert_eq(p->op, ENGINE_OP_Q, "%s: first divergence at %s", path, engine_op_name(p->op));
    cr_assert_eq(p->first_pos, 1, "position 0 does not rotate, position 1 does (got %d)", p->first_pos);
    /* A rotation keeps each pair's length: the RMS agrees while the values do not. */
    cr_assert_float_eq(p->first_a.rms, p->first_b.rms, 1e-4f * p->first_a.rms);
    /* Everything before the rotary agrees. */
    cr_assert_eq(r.points[ENGINE_OP_ATTN_NORM].rel_worst, 0.0f);
    engine_comparison_free(&r);
}

Test(backends, lm_head_fault_is_pinpointed_to_the_logits)
{
    char path[4096];
    engine_comparison r = compare("tiny-llama-f16.gguf", "lm-head-rows", 4, path, sizeof path);
    cr_assert_geq(r.first_bad, 0);
    const engine_cmp_point *p = &r.points[r.first_bad];
    cr_assert_eq(p->op, ENGINE_OP_COUNT, "%s: first divergence at %s, not the logits", path, engine_op_name(p->op));
    cr_assert_eq(r.points[r.n_points - 2].rel_worst, 0.0f, "result_norm must agree");
    cr_assert_eq(p->first_pos, 0);
    engine_comparison_free(&r);
}

/* Generation with the spot check on: which rows it names. */
static engine_spot spot_run(const char *fault, char *path, size_t path_len)
{
    tok_error te;
    gguf_file *f = open_model("tiny-qwen2-f32.gguf", path, path_len);
    int32_t toks[10];
    tokens_for(f, toks, 10);
    side s = make_side(f, fault, 32, 16);
    tok_vocab *v;
    engine_error e;
    cr_assert_eq(tok_vocab_load(f, &v, &te), TOK_OK, "%s", te.message);
    engine_gen_params gp = { .n_predict = 5, .sampler = engine_sampler_default(), .spot_rows = ENGINE_SPOT_ROWS };
    engine_gen_result g;
    cr_assert_eq(engine_generate(s.c, v, toks, 10, &gp, NULL, NULL, NULL, &g, &e), ENGINE_OK, "%s", e.message);
    engine_spot out = g.spot;
    engine_gen_result_free(&g);
    tok_vocab_free(v);
    free_side(&s);
    gguf_close(f);
    return out;
}

Test(backends, spot_check_names_the_corrupted_rows)
{
    char path[4096];
    engine_spot good = spot_run(NULL, path, sizeof path);
    cr_assert_gt(good.checks, 1);
    cr_assert_eq(good.rows, good.checks * ENGINE_SPOT_ROWS);
    cr_assert_eq(good.mismatches, 0, "%s: a correct backend failed the spot check (max %g)", path, good.max_rel);
    cr_assert_lt(good.max_rel, 1e-5f);

    engine_spot bad = spot_run("lm-head-rows", path, sizeof path);
    cr_assert_gt(bad.mismatches, 0, "%s: corrupted rows went unnoticed", path);
    cr_assert_gt(bad.n_bad, 0);
    for (int i = 0; i < bad.n_bad; i++)
        cr_assert_eq(bad.bad_rows[i] % 7, 3, "row %d named, but only rows r %% 7 == 3 are corrupted", bad.bad_rows[i]);
    cr_assert_eq(bad.first_pos, 9, "the prompt's last position is checked first");
    cr_assert_neq(bad.first_backend, bad.first_reference);
}

/* Generates with sampler sp twice: with a trace (every logit comes to the host
 * and the sampler picks) and without (the backend's argmax or top-k picks).
 * Asserts the same tokens; returns how many draws were not the argmax. */
static int host_and_backend_agree(const char *model, engine_sampler_params sp, int n_predict)
{
    tok_error te;
    char path[4096];
    gguf_file *f = open_model(model, path, sizeof path);
    int32_t toks[10];
    tokens_for(f, toks, 10);
    side a = make_side(f, NULL, 64, 16), b = make_side(f, NULL, 64, 16);
    tok_vocab *v;
    engine_error e;
    cr_assert_eq(tok_vocab_load(f, &v, &te), TOK_OK);
    const engine_hparams *hp = engine_model_hparams(a.m);
    engine_trace *tr = engine_trace_create(hp->n_layer, hp->n_vocab);
    engine_gen_params gp = { .n_predict = n_predict, .sampler = sp };
    engine_gen_result ga, gb;
    cr_assert_eq(engine_generate(a.c, v, toks, 10, &gp, tr, NULL, NULL, &ga, &e), ENGINE_OK, "%s", e.message);
    cr_assert_eq(engine_generate(b.c, v, toks, 10, &gp, NULL, NULL, NULL, &gb, &e), ENGINE_OK, "%s", e.message);
    cr_assert_eq(ga.n_tokens, gb.n_tokens);
    int not_argmax = 0;
    for (size_t i = 0; i < ga.n_tokens; i++) {
        cr_assert_eq(ga.tokens[i], gb.tokens[i], "%s: step %zu: host %d, backend %d", path, i, ga.tokens[i],
                     gb.tokens[i]);
        const engine_step *st = engine_trace_step_at(tr, i);
        not_argmax += st->token != st->top_id[0];
    }
    engine_gen_result_free(&ga);
    engine_gen_result_free(&gb);
    engine_trace_free(tr);
    tok_vocab_free(v);
    free_side(&a);
    free_side(&b);
    gguf_close(f);
    return not_argmax;
}

Test(backends, greedy_on_the_backend_picks_what_the_host_picks)
{
    cr_assert_eq(host_and_backend_agree("tiny-llama-q8_0.gguf", engine_sampler_default(), 12), 0);
}

Test(backends, cpu_argmax_ties_and_nan)
{
    kern_backend *be = kern_cpu_create(1);
    float x[6] = { NAN, 1.0f, 3.0f, -INFINITY, 3.0f, 2.0f };
    int32_t at = -1;
    cr_assert_eq(be->argmax(be, x, 6, &at), KERN_OK);
    cr_assert_eq(at, 2, "ties go to the lowest index and NaN never wins (got %d)", at);
    cr_assert_eq(at, engine_argmax(x, 6));
    be->destroy(be);
}

Test(backends, unknown_fault_is_refused)
{
    cr_assert_null(kern_fault_wrap(kern_cpu_create(1), "no-such-fault"));
    cr_assert(strstr(kern_fault_names(), "rope-mode") && strstr(kern_fault_names(), "lm-head-rows"));
}

Test(backends, cuda_without_a_device_says_why)
{
    char why[512] = "";
    kern_backend *b = kern_cuda_create(0, why, sizeof why);
    if (b) {
        b->destroy(b);
        cr_skip_test("a CUDA device is present: the no-device message is for machines without one");
    }
    cr_assert(strstr(why, "CUDA"), "the reason should name CUDA: '%s'", why);
    if (!kern_cuda_built())
        cr_assert(strstr(why, "nvcc"), "a build without CUDA should say nvcc was missing: '%s'", why);
}

/* ---- the CUDA kernels' decoders, on the host -------------------------------- */

static size_t row_bytes(uint32_t type, int64_t k)
{
    const gguf_type_traits *t = gguf_type_traits_of(type);
    return (size_t)(k / t->block_size) * t->type_size;
}

static void check_decoder(uint32_t type, const uint8_t *data, int64_t k, const char *what)
{
    float *want = malloc((size_t)k * sizeof(float)), *got = malloc((size_t)k * sizeof(float));
    void *aligned = aligned_alloc(64, ((size_t)row_bytes(type, k) + 63) / 64 * 64);
    cr_assert(want && got && aligned);
    memcpy(aligned, data, (size_t)row_bytes(type, k));
    cr_assert_eq(quant_dequantize_row(type, aligned, want, k), QUANT_OK);
    cr_assert(kern_cuda_decode_row_host(type, aligned, k, got), "%s: the CUDA backend does not read %s", what,
              gguf_type_traits_of(type)->name);
    for (int64_t i = 0; i < k; i++)
        cr_assert(got[i] == want[i] || (isnan(got[i]) && isnan(want[i])), "%s (%s) value %lld: cuda %.9g, quant %.9g",
                  what, gguf_type_traits_of(type)->name, (long long)i, got[i], want[i]);
    free(want);
    free(got);
    free(aligned);
}

Test(backends, cuda_block_decoders_match_quant)
{
    if (!kern_cuda_built())
        cr_skip_test("this build has no CUDA backend (nvcc was not found): nothing to check");
    static const uint32_t types[] = { GGUF_TENSOR_F32, GGUF_TENSOR_F16, GGUF_TENSOR_BF16, GGUF_TENSOR_Q4_0,
                                      GGUF_TENSOR_Q4_1, GGUF_TENSOR_Q5_0, GGUF_TENSOR_Q5_1, GGUF_TENSOR_Q8_0,
                                      GGUF_TENSOR_Q4_K, GGUF_TENSOR_Q5_K, GGUF_TENSOR_Q6_K, GGUF_TENSOR_Q2_K,
                                      GGUF_TENSOR_Q3_K, GGUF_TENSOR_IQ4_NL, GGUF_TENSOR_IQ4_XS, GGUF_TENSOR_MXFP4,
                                      GGUF_TENSOR_NVFP4 };
    /* Our own quantizer where it has the type (every value a block can hold shows up across 8 rows of noise). */
    const int64_t k = 2048;
    float *src = malloc((size_t)k * sizeof(float));
    for (int64_t i = 0; i < k; i++)
        src[i] = fixture_value(7, (uint64_t)i, 1.0f) * (1.0f + (float)(i % 97));
    int checked = 0;
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
        if (!quant_can_quantize(types[i]))
            continue;
        uint8_t *q = malloc((size_t)row_bytes(types[i], k));
        cr_assert_eq(quant_quantize_row(types[i], src, q, k), QUANT_OK);
        check_decoder(types[i], q, k, "quantized noise");
        free(q);
        checked++;
    }
    free(src);
    /* ggml's own blocks for every type (the shared test vectors), K-quants included. */
    char *tv = model_path("quant-testvectors.gguf");
    if (tv) {
        gguf_file *f;
        gguf_error ge;
        cr_assert_eq(gguf_open(tv, &f, &ge), GGUF_OK);
        for (uint64_t t = 0; t < gguf_tensor_count(f); t++) {
            const gguf_tensor *x = gguf_tensor_at(f, t);
            bool wanted = false;
            for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
                wanted |= x->type == types[i];
            if (!wanted || x->n_elements % 8)
                continue;
            check_decoder(x->type, x->data, (int64_t)x->n_elements, x->name);
            checked++;
        }
        gguf_close(f);
        free(tv);
    }
    /* Random blocks of the types no quantizer here writes (NVFP4; MXFP4's is checked above too) */
    static const uint32_t unwritten[] = { GGUF_TENSOR_MXFP4, GGUF_TENSOR_NVFP4 };
    for (size_t i = 0; i < sizeof unwritten / sizeof unwritten[0]; i++) {
        const gguf_type_traits *tt = gguf_type_traits_of(unwritten[i]);
        const size_t blocks = (size_t)k / tt->block_size;
        uint8_t *raw = malloc(blocks * tt->type_size);
        for (size_t b = 0; b < blocks; b++)
            test_random_block(unwritten[i], raw + b * tt->type_size, tt->type_size);
        check_decoder(unwritten[i], raw, k, "random blocks");
        free(raw);
        checked++;
    }
    cr_assert_gt(checked, 3);
}

/* ---- the decode-step recording contract (what CUDA graphs rely on) ---------- */

static struct {
    int begins, runs, discards;
    bool open, fail_rope;
    kern_status (*rope)(kern_backend *, float *, int, int, int, int, const kern_rope *);
} rec;

static kern_status rec_begin(kern_backend *b, uint64_t key, int pos)
{
    (void)b;
    (void)key;
    (void)pos;
    cr_assert(!rec.open, "step_begin while a step is open");
    rec.open = true;
    rec.begins++;
    return KERN_OK;
}

static kern_status rec_end(kern_backend *b, bool run)
{
    (void)b;
    cr_assert(rec.open, "step_end without step_begin");
    rec.open = false;
    run ? rec.runs++ : rec.discards++;
    return KERN_OK;
}

static kern_status rec_to_host(kern_backend *b, float *d, const float *s, size_t n)
{
    (void)b;
    cr_assert(!rec.open, "the host was needed inside a recorded step");
    memcpy(d, s, n * sizeof(float));
    return KERN_OK;
}

static kern_status rec_rope(kern_backend *b, float *x, int T, int nh, int hd, int pos0, const kern_rope *r)
{
    return rec.fail_rope ? KERN_E_SHAPE : rec.rope(b, x, T, nh, hd, pos0, r);
}

Test(backends, decode_steps_are_recorded_whole_and_discarded_on_failure)
{
    char path[4096];
    gguf_file *f = open_model("stories260K.gguf", path, sizeof path);
    kern_backend *be = kern_cpu_create(1);
    rec.rope = be->rope;
    be->step_begin = rec_begin;
    be->step_end = rec_end;
    be->to_host = rec_to_host;
    be->rope = rec_rope;
    engine_model *m;
    engine_ctx *c;
    engine_error e;
    cr_assert_eq(engine_model_load(f, be, &m, &e), ENGINE_OK, "%s", e.message);
    cr_assert_eq(engine_ctx_create(m, 32, 8, &c, &e), ENGINE_OK);
    const int nv = engine_model_hparams(m)->n_vocab;
    float *logits = malloc((size_t)nv * sizeof(float));
    int32_t toks[4] = { 1, 2, 3, 4 }, next;
    cr_assert_eq(engine_forward(c, toks, 4, false, logits, NULL, &e), ENGINE_OK);
    cr_assert_eq(rec.begins, 0, "a prompt batch is not a decode step");
    cr_assert_eq(engine_forward(c, toks, 1, false, logits, NULL, &e), ENGINE_OK);
    cr_assert_eq(engine_forward_argmax(c, toks, 1, &next, NULL, &e), ENGINE_OK);
    cr_assert_eq(engine_forward(c, toks, 1, false, NULL, NULL, &e), ENGINE_OK);
    cr_assert_eq(rec.begins, 3);
    cr_assert_eq(rec.runs, 3);
    engine_trace *t = engine_trace_create(engine_model_hparams(m)->n_layer, nv);
    engine_probe p = engine_trace_probe(t);
    cr_assert_eq(engine_forward(c, toks, 1, false, logits, &p, &e), ENGINE_OK);
    cr_assert_eq(rec.begins, 3, "a probed step needs the host: it must not be recorded");
    rec.fail_rope = true;
    cr_assert_neq(engine_forward(c, toks, 1, false, logits, NULL, &e), ENGINE_OK);
    cr_assert(strstr(e.message, "rope"), "%s", e.message);
    cr_assert_eq(rec.discards, 1, "a step that failed part-way must be thrown away");
    cr_assert(!rec.open);
    engine_trace_free(t);
    free(logits);
    engine_ctx_free(c);
    engine_model_free(m);
    be->destroy(be);
    gguf_close(f);
}

Test(backends, cpu_top_k_order_ties_and_nan)
{
    kern_backend *be = kern_cpu_create(1);
    float x[9] = { 1.0f, NAN, 5.0f, 3.0f, 5.0f, -INFINITY, 3.0f, 7.0f, NAN };
    int32_t ids[8];
    float vals[8];
    cr_assert_eq(be->top_k(be, x, 9, 4, ids, vals), KERN_OK);
    const int32_t want[4] = { 7, 2, 4, 3 };  /* 7, then the tied 5s and 3s lower index first */
    for (int i = 0; i < 4; i++) {
        cr_assert_eq(ids[i], want[i], "rank %d: id %d, want %d", i, ids[i], want[i]);
        cr_assert_eq(vals[i], x[want[i]]);
    }
    cr_assert_eq(be->top_k(be, x, 9, 8, ids, vals), KERN_OK);
    cr_assert_eq(ids[6], 5, "-inf is a value and can be chosen");
    cr_assert_eq(ids[7], -1, "only 7 values are not NaN");
    cr_assert_neq(be->top_k(be, x, 9, KERN_TOP_K_MAX + 1, ids, vals), KERN_OK);
    be->destroy(be);
}

Test(backends, top_k_sampling_on_the_backend_draws_what_the_host_draws)
{
    engine_sampler_params sp = { .temp = 1.5f, .top_k = 40, .top_p = 0.95f, .min_p = 0.01f, .seed = 42 };
    cr_assert_gt(host_and_backend_agree("stories260K.gguf", sp, 24), 0,
                 "at temperature 1.5 some draw should not be the argmax");
}

/* The CUDA GeGLU's GELU, compiled for the host, is kern_gelu_ggml (llama.cpp's f16 table) at every f16
 * value and around the cut-offs at +-10: the device code's formula and roundings, checked without a GPU. */
Test(backends, cuda_gelu_is_llama_cpp_s_table_gelu)
{
    if (!kern_cuda_built())
        cr_skip_test("this build has no CUDA backend (nvcc was not found): nothing to check");
    int checked = 0;
    for (uint32_t h = 0; h < 1u << 16; h++) {
        const float x = quant_f16_to_f32((uint16_t)h);
        if (!isfinite(x))
            continue;
        float got;
        cr_assert(kern_cuda_gelu_host(x, &got));
        const float want = kern_gelu_ggml(x);
        cr_assert(got == want, "gelu(%.9g): cuda %.9g, table %.9g", x, got, want);
        checked++;
    }
    const float edges[] = { -10.0f, -9.999f, -10.001f, 9.999f, 10.0f, 10.001f, 1e30f, -1e30f, 0.3333333f, -2.71828f };
    for (size_t i = 0; i < sizeof edges / sizeof edges[0]; i++) {
        float got;
        cr_assert(kern_cuda_gelu_host(edges[i], &got));
        cr_assert(got == kern_gelu_ggml(edges[i]), "gelu(%.9g): cuda %.9g, table %.9g", edges[i], got,
                  kern_gelu_ggml(edges[i]));
    }
    cr_assert_gt(checked, 60000);
}

/* The TF32 split of the CUDA prompt products (GGUFSCOPE_CUDA_TF32=1), compiled for the host: hi is x to the nearest
 * TF32 value (10 mantissa bits, ties to even, found here by the definition: the nearer of the two TF32 neighbours),
 * x - hi is exact, F16 and BF16 values are their own TF32 (the weights whose low part the product skips), and
 * infinities, NaN and the largest finite values stay what they are. */
static float from_bits(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

Test(backends, cuda_tf32_split_rounds_to_nearest_and_keeps_f16_exact)
{
    float got;
    if (!kern_cuda_tf32_host(1.0f, &got))
        cr_skip_test("this build has no CUDA backend (nvcc was not found): nothing to check");
    int checked = 0;
    for (uint32_t k = 0; k < 200000; k++) {
        const uint32_t u = (k * 2654435761u) & 0x7fffffffu; /* positive finite patterns spread over every exponent */
        if ((u & 0x7f800000u) == 0x7f800000u)
            continue;
        const float x = from_bits(u);
        cr_assert(kern_cuda_tf32_host(x, &got));
        uint32_t g;
        memcpy(&g, &got, sizeof g);
        cr_assert_eq(g & 0x1fffu, 0, "tf32(%a) = %a keeps bits below its 10th", x, got);
        const float down = from_bits(u & 0xffffe000u), up = from_bits((u & 0xffffe000u) + 0x2000u);
        const double dd = (double)x - down, du = (double)up - x;
        const bool up_even = (((u & 0xffffe000u) + 0x2000u) & 0x2000u) == 0;
        const float want = isinf(up) ? down : dd < du ? down : du < dd ? up : up_even ? up : down;
        cr_assert(got == want, "tf32(%a) = %a, nearest %a", x, got, want);
        cr_assert((double)x - got == (double)(x - got), "x - tf32(x) is not exact at %a", x);
        float neg;
        cr_assert(kern_cuda_tf32_host(-x, &neg) && neg == -got, "tf32 is not odd at %a", x);
        checked++;
    }
    for (uint32_t h = 0; h < 1u << 16; h++) {
        const float f16 = quant_f16_to_f32((uint16_t)h), bf16 = from_bits(h << 16);
        if (!isnan(f16))
            cr_assert(kern_cuda_tf32_host(f16, &got) && got == f16, "the f16 value %a is not its own TF32", f16);
        if (!isnan(bf16))
            cr_assert(kern_cuda_tf32_host(bf16, &got) && got == bf16, "the bf16 value %a is not its own TF32", bf16);
    }
    const float fixed[] = { INFINITY, -INFINITY, FLT_MAX, -FLT_MAX, 0.0f, -0.0f };
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++) {
        cr_assert(kern_cuda_tf32_host(fixed[i], &got));
        cr_assert(isfinite(fixed[i]) ? isfinite(got) && fabsf(got - fixed[i]) <= fabsf(fixed[i]) * 0x1p-10f
                                     : got == fixed[i], "tf32(%a) = %a", fixed[i], got);
    }
    cr_assert(kern_cuda_tf32_host(NAN, &got) && isnan(got));
    cr_assert_gt(checked, 150000);
}
