/*
 * The CPU backend's attention against a softmax computed in double, on every
 * shape its blocks take (8 tokens times the query heads sharing a KV head;
 * prompts' scores with the queries in 8 or 16 vector lanes, generation's by
 * the 2 x 3 / 4 x T dot tiles, values by 6 x 16 / 12 x 32 tiles), and bit for
 * bit against one defined order of the arithmetic.
 */
#include "kern.h"
#include "quant.h"
#include "ggml_reference.h"
#include "testutil.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The backend's attention within 1e-5 of the reference, and its output in out. */
static void check_against_reference(kern_backend *be, const float *q, const float *k, const float *v, int T, int pos0,
                                    const kern_attn *a, float *out)
{
    const size_t nq = (size_t)T * a->n_head * kern_attn_v_dim(a);
    float *ref = malloc(nq * sizeof(float));
    kern_backend *rb = kern_ref_create(1); /* every query's softmax over its own keys, in double */
    cr_assert(rb);
    cr_assert_eq(be->attention(be, q, k, v, T, pos0, a, out), KERN_OK);
    cr_assert_eq(rb->attention(rb, q, k, v, T, pos0, a, ref), KERN_OK);
    rb->destroy(rb);
    for (size_t i = 0; i < nq; i++)
        cr_assert_leq(fabs(out[i] - ref[i]), 1e-5, "heads %d/%d x %d, T=%d pos0=%d window %d: out[%zu] = %.7g, reference %.7g",
                      a->n_head, a->n_kv_head, a->head_dim, T, pos0, a->window, i, out[i], ref[i]);
    free(ref);
}

/* Causal GQA attention: every key before the query, then a sliding window of 3 positions with another score
 * scale; a window wider than the context changes nothing; heads that do not divide among the KV heads are
 * refused. Head sizes of 16 (the 16-dim value tiles), 64 and 96 (the 32-dim ones where AVX-512 runs). */
static void attention_causal_gqa(const int d)
{
    kern_backend *be = kern_cpu_create(2);
    const int H = 4, KV = 2, pos0 = 3, T = 4, n = pos0 + T;
    float q[T * H * d], k[n * KV * d], v[n * KV * d], out[T * H * d];
    uint32_t s = 11;
    for (int i = 0; i < T * H * d; i++)
        q[i] = test_frand(&s);
    for (int i = 0; i < n * KV * d; i++) {
        k[i] = test_frand(&s);
        v[i] = test_frand(&s);
    }
    const kern_attn cases[3] = { { H, KV, d, 1.0f / sqrtf((float)d), 0, 0, NULL, 0, false, 0, 0 },
                                 { H, KV, d, 0.37f, 3, 0, NULL, 0, false, 0, 0 },
                                 { H, KV, d, 0.37f, 3, 0.5f, NULL, 0, false, 0, 0 } };
    for (int c = 0; c < 3; c++)
        check_against_reference(be, q, k, v, T, pos0, &cases[c], out);
    float wide[T * H * d];
    const kern_attn all = { H, KV, d, 0.25f, 0, 0, NULL, 0, false, 0, 0 },
                    w100 = { H, KV, d, 0.25f, 100, 0, NULL, 0, false, 0, 0 };
    cr_assert_eq(be->attention(be, q, k, v, T, pos0, &all, out), KERN_OK);
    cr_assert_eq(be->attention(be, q, k, v, T, pos0, &w100, wide), KERN_OK);
    cr_assert_arr_eq(out, wide, sizeof out);
    const kern_attn bad = { H, 3, d, 1.0f, 0, 0, NULL, 0, false, 0, 0 };
    cr_assert_eq(be->attention(be, q, k, v, T, pos0, &bad, out), KERN_E_SHAPE, "4 heads do not share 3 kv heads");
    be->destroy(be);
}

/* Grok's soft-capped scores (llama.cpp's build_attn_mha for grok): q.k unscaled, then c tanh(q.k * f) with f the
 * output scale over the cap in one product, is c tanh(s / c) of the scores scaled first: on every backend (both CPU
 * numerics, a prompt and a decode step, and the reference in double) within 1e-5 of the reference's scaled-first
 * form, and each within 1e-5 of the reference of its own form. Scores reach the cap's bend: q and k of size 4. */
Test(attention, grok_cap_factor_is_the_scale_inside_the_tanh)
{
    enum { H = 4, KV = 2, d = 64, pos0 = 3, T = 5, n = pos0 + T };
    float q[T * H * d], k[n * KV * d], v[n * KV * d], out[T * H * d], want[T * H * d];
    uint32_t s = 41;
    for (int i = 0; i < T * H * d; i++)
        q[i] = test_frand(&s) * 4.0f;
    for (int i = 0; i < n * KV * d; i++)
        k[i] = test_frand(&s) * 4.0f, v[i] = test_frand(&s);
    const float cap = 30.0f, out_scale = 0.125f;
    const kern_attn grok = { .n_head = H, .n_kv_head = KV, .head_dim = d, .scale = 1.0f, .softcap = cap,
                             .softcap_in = out_scale / cap };
    const kern_attn scaled_first = { .n_head = H, .n_kv_head = KV, .head_dim = d, .scale = out_scale, .softcap = cap };
    kern_backend *ref = kern_ref_create(1);
    cr_assert_eq(ref->attention(ref, q, k, v, T, pos0, &scaled_first, want), KERN_OK);
    kern_backend *bes[3] = { kern_cpu_create(2), kern_cpu_create_numerics(2, KERN_NUMERICS_GGML), kern_ref_create(1) };
    for (int b = 0; b < 3; b++) {
        cr_assert_not_null(bes[b]);
        cr_assert_eq(bes[b]->attention(bes[b], q, k, v, T, pos0, &grok, out), KERN_OK);
        for (int i = 0; i < T * H * d; i++)
            cr_assert_leq(fabsf(out[i] - want[i]), 1e-5f, "backend %d: out[%d] = %g, scaled first %g", b, i, out[i],
                          want[i]);
        if (b < 2) {
            check_against_reference(bes[b], q, k, v, T, pos0, &grok, out);
            check_against_reference(bes[b], q + (size_t)(T - 1) * H * d, k, v, 1, n - 1, &grok, out);
        }
        bes[b]->destroy(bes[b]);
    }
    /* without the factor the cap divides the scores: unscaled scores capped so differ from the scaled ones */
    const kern_attn unscaled = { .n_head = H, .n_kv_head = KV, .head_dim = d, .scale = 1.0f, .softcap = cap };
    cr_assert_eq(ref->attention(ref, q, k, v, T, pos0, &unscaled, out), KERN_OK);
    float most = 0.0f;
    for (int i = 0; i < T * H * d; i++)
        most = fmaxf(most, fabsf(out[i] - want[i]));
    cr_assert_gt(most, 1e-3f, "the factor is what the test exercises");
    ref->destroy(ref);
}

/* Llama 4's chunked attention (llama.cpp's LLAMA_SWA_TYPE_CHUNKED): a query at position p sees the keys of its own
 * chunk of `window` positions up to itself, so each query's row equals plain causal attention over a cache that starts
 * at its chunk: the prompt (which spans three chunks of 4, from position 5) and a decode step, in both numerics and on
 * the reference backend, each within 1e-5 of that construction. */
Test(attention, chunks_see_only_their_own_chunk)
{
    enum { H = 4, KV = 2, d = 32, pos0 = 5, T = 9, n = pos0 + T, W = 4 };
    float q[T * H * d], k[n * KV * d], v[n * KV * d], out[T * H * d], one[H * d];
    uint32_t s = 31;
    for (int i = 0; i < T * H * d; i++)
        q[i] = test_frand(&s) * 2.0f;
    for (int i = 0; i < n * KV * d; i++)
        k[i] = test_frand(&s) * 2.0f, v[i] = test_frand(&s);
    kern_backend *bes[3] = { kern_cpu_create(2), kern_cpu_create_numerics(2, KERN_NUMERICS_GGML), kern_ref_create(1) };
    kern_backend *plain = kern_ref_create(1);
    const kern_attn chunked = { .n_head = H, .n_kv_head = KV, .head_dim = d, .scale = 0.3f, .window = W, .chunked = true };
    const kern_attn causal = { .n_head = H, .n_kv_head = KV, .head_dim = d, .scale = 0.3f };
    for (int b = 0; b < 3; b++) {
        cr_assert_not_null(bes[b]);
        for (int decode = 0; decode < 2; decode++) {
            const int t0 = decode ? T - 1 : 0, nt = decode ? 1 : T; /* the last query alone, as a decode step */
            cr_assert_eq(bes[b]->attention(bes[b], q + (size_t)t0 * H * d, k, v, nt, pos0 + t0, &chunked, out), KERN_OK);
            for (int t = 0; t < nt; t++) {
                const int p = pos0 + t0 + t, start = p / W * W;
                cr_assert_eq(plain->attention(plain, q + (size_t)(t0 + t) * H * d, k + (size_t)start * KV * d,
                                              v + (size_t)start * KV * d, 1, p - start, &causal, one), KERN_OK);
                for (int i = 0; i < H * d; i++)
                    cr_assert_leq(fabsf(out[(size_t)t * H * d + i] - one[i]), 1e-5f, "backend %d, position %d: %g vs %g",
                                  b, p, out[(size_t)t * H * d + i], one[i]);
            }
        }
        bes[b]->destroy(bes[b]);
    }
    plain->destroy(plain);
}

/* Latent attention's shape (DeepSeek-V2/V3 files as llama.cpp runs them): all query heads on one key/value head,
 * keys longer than values (the compressed latent and its rotary part; the values the latent alone), so the output
 * rows are the values' length. A prompt (the lanes path), a generation step, and --numerics ggml's order each
 * within 1e-5 of the reference in double. */
Test(attention, values_shorter_than_keys)
{
    enum { H = 16, d = 80, dv = 64, pos0 = 5, T = 11, n = pos0 + T };
    float *q = malloc(sizeof(float) * T * H * d), *k = malloc(sizeof(float) * n * d), *v = malloc(sizeof(float) * n * dv);
    float *out = malloc(sizeof(float) * T * H * dv);
    uint32_t s = 23;
    for (int i = 0; i < T * H * d; i++)
        q[i] = test_frand(&s);
    for (int i = 0; i < n * d; i++)
        k[i] = test_frand(&s);
    for (int i = 0; i < n * dv; i++)
        v[i] = test_frand(&s);
    const kern_attn a = { .n_head = H, .n_kv_head = 1, .head_dim = d, .scale = 0.11f, .v_dim = dv };
    kern_backend *backends[2] = { kern_cpu_create(2), kern_cpu_create_numerics(2, KERN_NUMERICS_GGML) };
    for (int b = 0; b < 2; b++) {
        check_against_reference(backends[b], q, k, v, T, pos0, &a, out);
        check_against_reference(backends[b], q, k, v, 1, n - 1, &a, out);
        backends[b]->destroy(backends[b]);
    }
    free(q), free(k), free(v), free(out);
}

/* Soft-capped scores (gemma2) on every backend here against the definition written out: one head, one query over
 * three keys whose scaled scores are 6, -4 and 1, capped at 2: 2 tanh(3), 2 tanh(-2), 2 tanh(0.5). */
Test(attention, soft_capping_follows_its_definition)
{
    const float q[2] = { 2.0f, 0.0f }, k[6] = { 3.0f, 0.0f, -2.0f, 0.0f, 0.5f, 0.0f };
    const float v[6] = { 1.0f, 0.0f, 0.0f, 1.0f, 0.5f, 0.5f };
    const kern_attn a = { .n_head = 1, .n_kv_head = 1, .head_dim = 2, .scale = 1.0f, .window = 0, .softcap = 2.0f };
    double s[3], sum = 0, want[2] = { 0, 0 };
    for (int j = 0; j < 3; j++)
        sum += s[j] = exp(2.0 * tanh(q[0] * k[2 * j] / 2.0));
    for (int j = 0; j < 3; j++)
        for (int i = 0; i < 2; i++)
            want[i] += s[j] / sum * v[2 * j + i];
    kern_backend *bes[3] = { kern_cpu_create_numerics(1, KERN_NUMERICS_EXACT),
                             kern_cpu_create_numerics(1, KERN_NUMERICS_GGML), kern_ref_create(1) };
    for (int b = 0; b < 3; b++) {
        float out[2];
        cr_assert_eq(bes[b]->attention(bes[b], q, k, v, 1, 2, &a, out), KERN_OK); /* the query at position 2 */
        for (int i = 0; i < 2; i++)
            cr_expect_leq(fabs(out[i] - want[i]), 2e-6, "backend %d: out[%d] %.7g, the definition's %.7g", b, i,
                          out[i], want[i]);
        bes[b]->destroy(bes[b]);
    }
}

/* Attention sinks (gpt-oss) on every backend here against the definition written out (OpenAI's gpt-oss reference,
 * llama.cpp's ggml_soft_max_add_sinks): head h's sink s_h is one more logit in its softmax, answered by no value,
 * so out = sum_j e^(x_j) v_j / (sum_j e^(x_j) + e^(s_h)). Two query heads share one KV head, with sinks 1.5 and
 * -30 (next to nothing), and a third case with a sink far above every score (the output shrinks towards 0). */
Test(attention, sinks_follow_their_definition)
{
    const float q[4] = { 2.0f, 0.0f, 0.5f, 1.0f }, k[6] = { 3.0f, 0.0f, -2.0f, 1.0f, 0.5f, 0.0f };
    const float v[6] = { 1.0f, 0.0f, 0.0f, 1.0f, 0.5f, 0.5f };
    const float sink_values[3][2] = { { 1.5f, -30.0f }, { 40.0f, 0.0f }, { -1.0f, 2.0f } };
    kern_backend *bes[3] = { kern_cpu_create_numerics(1, KERN_NUMERICS_EXACT),
                             kern_cpu_create_numerics(1, KERN_NUMERICS_GGML), kern_ref_create(1) };
    for (int c = 0; c < 3; c++) {
        gguf_tensor st = { .name = "blk.0.attn_sinks.weight", .n_dims = 1, .ne = { 2, 1, 1, 1 },
                           .type = GGUF_TENSOR_F32, .size = 8, .n_elements = 2,
                           .data = (const uint8_t *)sink_values[c] };
        const kern_weight sinks = { .t = &st };
        const kern_attn a = { .n_head = 2, .n_kv_head = 1, .head_dim = 2, .scale = 0.5f, .sinks = &sinks };
        for (int b = 0; b < 3; b++) {
            float out[4];
            cr_assert_eq(bes[b]->attention(bes[b], q, k, v, 1, 2, &a, out), KERN_OK); /* the query at position 2 */
            for (int h = 0; h < 2; h++) {
                double e[3], sum = exp(sink_values[c][h]), want[2] = { 0, 0 };
                for (int j = 0; j < 3; j++)
                    sum += e[j] = exp(0.5 * (q[2 * h] * k[2 * j] + q[2 * h + 1] * k[2 * j + 1]));
                for (int j = 0; j < 3; j++)
                    for (int i = 0; i < 2; i++)
                        want[i] += e[j] / sum * v[2 * j + i];
                for (int i = 0; i < 2; i++)
                    cr_expect_leq(fabs(out[2 * h + i] - want[i]), 2e-6 + 2e-6 * fabs(want[i]),
                                  "case %d backend %d head %d: out[%d] %.7g, the definition's %.7g", c, b, h, i,
                                  out[2 * h + i], want[i]);
            }
        }
    }
    for (int b = 0; b < 3; b++)
        bes[b]->destroy(bes[b]);
}

Test(attention, causal_gqa_and_sliding_window)
{
    attention_causal_gqa(16);
    attention_causal_gqa(64);
    attention_causal_gqa(96);
}

/* Group sizes 1, 3 and 4 (rows of a block not a multiple of 6 or 12), head sizes 64, 48 (16-dim value tiles where
 * 32-dim ones run), 40 (not a multiple of 16: the plain loop) and 36 (not a multiple of 8: the queries' packing
 * ends in its scalar loop), prompts from 0 and later, decode steps, a sliding window narrower than a block and
 * wider, and key counts that are not a multiple of 4. */
Test(attention, matches_a_double_reference_for_every_block_shape)
{
    kern_backend *be = kern_cpu_create(2);
    const int heads[][3] = { { 4, 4, 64 }, { 9, 3, 64 }, { 8, 2, 40 }, { 6, 2, 48 }, { 4, 2, 36 } }; /* n_head, n_kv_head, d */
    const int cases[][3] = { { 19, 0, 0 }, { 1, 38, 0 }, { 5, 30, 0 }, { 17, 3, 0 },  /* T, pos0, window */
                             { 19, 0, 5 }, { 1, 38, 5 }, { 21, 10, 11 }, { 8, 29, 3 } };
    for (size_t hs = 0; hs < sizeof heads / sizeof heads[0]; hs++)
        for (size_t c = 0; c < 3 * sizeof cases / sizeof cases[0]; c++) {
            /* every case three times: the second time with the scores soft-capped (gemma2) at 0.8, the third with a
             * sink per head (gpt-oss) */
            const size_t n_cases = sizeof cases / sizeof cases[0], cs = c % n_cases;
            float sink_values[16];
            for (int h = 0; h < 16; h++)
                sink_values[h] = 0.3f * (float)(h % 5) - 0.5f;
            gguf_tensor st = { .name = "attn_sinks.weight", .n_dims = 1, .ne = { (uint64_t)heads[hs][0], 1, 1, 1 },
                               .type = GGUF_TENSOR_F32, .size = 4 * (uint64_t)heads[hs][0],
                               .n_elements = (uint64_t)heads[hs][0], .data = (const uint8_t *)sink_values };
            const kern_weight sinks = { .t = &st };
            const kern_attn a = { .n_head = heads[hs][0], .n_kv_head = heads[hs][1], .head_dim = heads[hs][2],
                                  .scale = 1.0f / sqrtf((float)heads[hs][2]), .window = cases[cs][2],
                                  .softcap = c / n_cases == 1 ? 0.8f : 0.0f, .sinks = c / n_cases == 2 ? &sinks : NULL };
            const int T = cases[cs][0], pos0 = cases[cs][1], n_ctx = pos0 + T;
            const size_t nq = (size_t)T * a.n_head * a.head_dim, nkv = (size_t)n_ctx * a.n_kv_head * a.head_dim;
            float *q = malloc(nq * sizeof(float)), *k = malloc(nkv * sizeof(float)), *v = malloc(nkv * sizeof(float));
            float *o = malloc(nq * sizeof(float));
            uint32_t s = 11 + (uint32_t)c;
            for (size_t i = 0; i < nq; i++)
                q[i] = test_frand(&s) * 2.0f;
            for (size_t i = 0; i < nkv; i++)
                k[i] = test_frand(&s) * 2.0f, v[i] = test_frand(&s);
            check_against_reference(be, q, k, v, T, pos0, &a, o);
            free(q), free(k), free(v), free(o);
        }
    be->destroy(be);
}

/* A prompt's score: the chain of fused multiply-adds over the head's values in order (scores.c) */
static float fma_chain(const float *a, const float *b, int n)
{
    float s = 0.0f;
    for (int i = 0; i < n; i++)
        s = fmaf(a[i], b[i], s);
    return s;
}

/* One query row's attention as llama.cpp's CPU backend computes it without flash attention, over a KV cache whose
 * cells are the positions, padded to a multiple of 256 (ggml_reference.h for the pieces): each score
 * ggml_vec_dot_f32(key, query) times the scale; e^(s - max) by ggml_v_expf over chunks of 8 or 16 cells from cell
 * 0 (the masked ones 0), each chunk's lanes summed to a float and the chunks in double; each probability times the
 * f32 reciprocal of the sum; then, for a prompt (tinyBLAS), one accumulator of 8 or 16 lanes per output over the
 * cells by FMA, its lanes summed; for a single token ggml_vec_dot_f32 over the padded row. */
static void llama_cpp_row(const float *qv, const float *k, const float *v, int kv_dim, int d, int j0, int n_keys,
                          float scale, bool prompt, bool wide, float *out)
{
    const int W = wide ? 16 : 8, padded = (n_keys + 255) / 256 * 256;
    float *p = calloc((size_t)padded, sizeof(float)), *col = calloc((size_t)padded, sizeof(float));
    float mx = -INFINITY;
    for (int j = j0; j < n_keys; j++) {
        p[j] = ggml_ref_dot_f32(k + (size_t)j * kv_dim, qv, d, wide) * scale;
        mx = p[j] > mx ? p[j] : mx;
    }
    double sum = 0;
    for (int c = 0; c < padded; c += W) {
        float e[16];
        for (int l = 0; l < W; l++)
            e[l] = c + l >= j0 && c + l < n_keys ? ggml_ref_expf(p[c + l] - mx, wide) : 0.0f;
        for (int l = 0; l < W; l++)
            p[c + l] = e[l];
        sum += ggml_ref_hsum(e, wide);
    }
    const float inv = (float)(1.0 / sum);
    for (int j = 0; j < padded; j++)
        p[j] *= inv;
    for (int i = 0; i < d; i++) {
        if (prompt) {
            float lanes[16] = { 0 };
            for (int j = j0; j < n_keys; j++)
                lanes[j % W] = fmaf(v[(size_t)j * kv_dim + i], p[j], lanes[j % W]);
            out[i] = ggml_ref_hsum(lanes, wide);
        } else {
            for (int j = j0; j < n_keys; j++)
                col[j] = v[(size_t)j * kv_dim + i];
            out[i] = ggml_ref_dot_f32(col, p, padded, wide);
        }
    }
    free(p);
    free(col);
}

/* Every output in one defined order of arithmetic, whatever the blocks, tiles and lanes. Exact numerics: each score
 * a chain of fused multiply-adds over the head's values in order in prompts (8 tokens and more: the queries in
 * vector lanes), as kern_dot_f32 sums it in generation steps; softmax in the per-query loop's order (e^x as
 * kern_expf computes it, the sum in double over the keys in turn); each output value a chain of fused multiply-adds
 * over the keys in turn. --numerics ggml: llama.cpp's order (llama_cpp_row), 16 lanes where this CPU's llama.cpp
 * build would take them (AVX-512, not capped by GGUFSCOPE_SIMD), else 8. Held here on the AVX2 and AVX-512 paths
 * (head sizes a multiple of 16), in both numerics. */
static void check_the_defined_order(bool ggml)
{
    kern_backend *be = kern_cpu_create_numerics(2, ggml ? KERN_NUMERICS_GGML : KERN_NUMERICS_EXACT);
    const bool wide = strcmp(quant_simd_level(), "avx512") == 0 && quant_cpu_has_avx512vl() && quant_cpu_has_avx512dq();
    /* blocks of 1 to 24 queries: every width of the score tiles' last column (1 to 6 queries) */
    const int heads[][3] = { { 9, 3, 64 }, { 16, 8, 128 }, { 4, 4, 64 } };
    const int cases[][3] = { { 19, 0, 0 }, { 1, 38, 0 }, { 21, 10, 11 } };
    for (size_t hs = 0; hs < sizeof heads / sizeof heads[0]; hs++)
        for (size_t c = 0; c < 3; c++) {
            const kern_attn a = { .n_head = heads[hs][0], .n_kv_head = heads[hs][1], .head_dim = heads[hs][2],
                                  .scale = 1.0f / sqrtf((float)heads[hs][2]), .window = cases[c][2] };
            const int T = cases[c][0], pos0 = cases[c][1], n_ctx = pos0 + T, d = a.head_dim;
            const int group = a.n_head / a.n_kv_head, kv_dim = a.n_kv_head * d;
            const size_t nq = (size_t)T * a.n_head * d, nkv = (size_t)n_ctx * kv_dim;
            float *q = malloc(nq * sizeof(float)), *k = malloc(nkv * sizeof(float)), *v = malloc(nkv * sizeof(float));
            float *o = malloc(nq * sizeof(float)), *want = malloc(nq * sizeof(float));
            float *s = malloc((size_t)n_ctx * sizeof(float));
            uint32_t st = 5 + (uint32_t)c;
            for (size_t i = 0; i < nq; i++)
                q[i] = test_frand(&st) * 2.0f;
            for (size_t i = 0; i < nkv; i++)
                k[i] = test_frand(&st) * 2.0f, v[i] = test_frand(&st);
            for (int t = 0; t < T; t++)
                for (int h = 0; h < a.n_head; h++) {
                    const int kh = h / group, n_keys = pos0 + t + 1;
                    const int j0 = a.window > 0 && n_keys > a.window ? n_keys - a.window : 0;
                    if (ggml) {
                        llama_cpp_row(q + ((size_t)t * a.n_head + h) * d, k + kh * d, v + kh * d, kv_dim, d, j0, n_keys,
                                      a.scale, T >= 2, wide, want + ((size_t)t * a.n_head + h) * d);
                        continue;
                    }
                    float mx = -INFINITY;
                    for (int j = j0; j < n_keys; j++) {
                        const float *qv = q + ((size_t)t * a.n_head + h) * d, *kv = k + (size_t)j * kv_dim + kh * d;
                        s[j] = T >= 8 ? fma_chain(qv, kv, d) : kern_dot_f32(qv, kv, d);
                        s[j] *= a.scale;
                        mx = s[j] > mx ? s[j] : mx;
                    }
                    double sum = 0;
                    for (int j = j0; j < n_keys; j++)
                        sum += s[j] = kern_expf(s[j] - mx);
                    const float inv = (float)(1.0 / sum);
                    float *w = want + ((size_t)t * a.n_head + h) * d;
                    for (int i = 0; i < d; i++) {
                        w[i] = 0.0f;
                        for (int j = j0; j < n_keys; j++)
                            w[i] = fmaf(s[j] * inv, v[(size_t)j * kv_dim + kh * d + i], w[i]);
                    }
                }
            cr_assert_eq(be->attention(be, q, k, v, T, pos0, &a, o), KERN_OK);
            for (size_t i = 0; i < nq; i++)
                cr_assert_eq(memcmp(&o[i], &want[i], sizeof(float)), 0,
                             "%s numerics, heads %d/%d x %d, T=%d pos0=%d: out[%zu] = %.9g, per query %.9g",
                             ggml ? "ggml" : "exact", a.n_head, a.n_kv_head, d, T, pos0, i, o[i], want[i]);
            free(q), free(k), free(v), free(o), free(want), free(s);
        }
    be->destroy(be);
}

Test(attention, sums_in_the_per_query_order)
{
    if (!quant_cpu_has_avx2() || !quant_cpu_has_fma() || !strcmp(quant_simd_level(), "scalar"))
        cr_skip_test("no AVX2 here: skipped");
    check_the_defined_order(false);
    check_the_defined_order(true);
}

static uint32_t float_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

/* Softmax's e^x (computed in double, rounded once) against e^x in double rounded to float, over a spread of every
 * float from -110 (past expf's denormals) to 90 (past its overflow): the same float for all but one argument in a
 * million, and never a whole ulp off. libm's expf, within 0.502 ulp by its documentation, is logged beside it
 * (measured: 1 argument in 13000 a ulp away, all of them where expf is the one not correctly rounded). */
Test(attention, softmax_exp_is_correctly_rounded)
{
    long n = 0, off_exact = 0, off_libm = 0;
    for (uint64_t u = 0; u < 0x100000000ull; u += 4099) {
        float x;
        const uint32_t bits = (uint32_t)u;
        memcpy(&x, &bits, sizeof x);
        if (isnan(x) || x < -110.0f || x > 90.0f)
            continue;
        const float got = kern_expf(x), want = (float)exp((double)x);
        const long ulps = labs((long)float_bits(got) - (long)float_bits(want));
        cr_assert_leq(ulps, 1, "e^%.9g = %.9g, correctly rounded %.9g", x, got, want);
        off_exact += ulps != 0;
        off_libm += float_bits(got) != float_bits(expf(x));
        n++;
    }
    cr_assert_gt(n, 500000);
    cr_assert_leq(off_exact * 1000000, n, "%ld of %ld arguments off the correctly rounded e^x", off_exact, n);
    cr_log_info("kern_expf: %ld of %ld arguments a ulp off the correctly rounded e^x, %ld off libm's expf", off_exact, n,
                off_libm);
    cr_assert(isnan(kern_expf(NAN)));
    cr_assert_eq(kern_expf(-INFINITY), 0.0f);
    cr_assert(isinf(kern_expf(INFINITY)) && kern_expf(INFINITY) > 0);
    cr_assert_eq(kern_expf(0.0f), 1.0f);
    cr_assert_eq(kern_expf(-300.0f), 0.0f);
    cr_assert(isinf(kern_expf(1000.0f)));
    cr_assert_eq(float_bits(kern_expf(-100.0f)), float_bits((float)exp(-100.0)), "a denormal result rounds once");
}

/* ALiBi (BLOOM): head h's slopes are the paper's geometric sequence (12 heads, max_bias 8: 2^-1 .. 2^-8 for the first
 * 8, then 2^-0.5, 2^-1.5, 2^-2.5, 2^-3.5 interleaved between them), and each score gains slope x (key position - query
 * position). With q = 0 every dot product is 0, so a query's weights are e^(slope (j - p)) normalised: the output is
 * that average of the values, computed here in double; with random q, each backend within 1e-5 of the reference. */
Test(attention, alibi_leans_on_the_nearest_keys)
{
    enum { H = 12, KV = 12, d = 16, pos0 = 6, T = 9, n = pos0 + T };
    for (int h = 0; h < H; h++) {
        const double want = h < 8 ? pow(2.0, -(h + 1)) : pow(2.0, -(h - 8) - 0.5);
        cr_assert_leq(fabs(kern_alibi_slope(8.0f, H, h) - want), 1e-6 * want, /* f32: m1 rounded, then powered */ "head %d: %.9g, want %.9g", h,
                      kern_alibi_slope(8.0f, H, h), want);
    }
    float *q = calloc((size_t)T * H * d, sizeof(float)), *k = malloc(sizeof(float) * n * KV * d);
    float *v = malloc(sizeof(float) * n * KV * d), *out = malloc(sizeof(float) * T * H * d);
    uint32_t s = 41;
    for (int i = 0; i < n * KV * d; i++)
        k[i] = test_frand(&s), v[i] = test_frand(&s);
    const kern_attn a = { .n_head = H, .n_kv_head = KV, .head_dim = d, .scale = 0.25f, .alibi_max_bias = 8.0f };
    kern_backend *bes[3] = { kern_cpu_create(2), kern_cpu_create_numerics(2, KERN_NUMERICS_GGML), kern_ref_create(1) };
    for (int b = 0; b < 3; b++) {
        cr_assert_eq(bes[b]->attention(bes[b], q, k, v, T, pos0, &a, out), KERN_OK);
        for (int t = 0; t < T; t++)
            for (int h = 0; h < H; h++) {
                const int p = pos0 + t;
                const double slope = h < 8 ? pow(2.0, -(h + 1)) : pow(2.0, -(h - 8) - 0.5);
                double sum = 0, o[d] = { 0 };
                for (int j = 0; j <= p; j++) {
                    const double w = exp(slope * (j - p));
                    sum += w;
                    for (int i = 0; i < d; i++)
                        o[i] += w * v[((size_t)j * KV + h) * d + i];
                }
                for (int i = 0; i < d; i++)
                    cr_assert_leq(fabs(out[((size_t)t * H + h) * d + i] - o[i] / sum), 2e-6,
                                  "backend %d, position %d, head %d, value %d", b, p, h, i);
            }
    }
    for (int i = 0; i < T * H * d; i++)
        q[i] = test_frand(&s) * 2.0f;
    for (int b = 0; b < 2; b++) {
        check_against_reference(bes[b], q, k, v, T, pos0, &a, out);
        check_against_reference(bes[b], q, k, v, 1, n - 1, &a, out);
    }
    for (int b = 0; b < 3; b++)
        bes[b]->destroy(bes[b]);
    free(q), free(k), free(v), free(out);
}
