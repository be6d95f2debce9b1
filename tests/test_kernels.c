/*
 * The CPU backend's matrix products (and its embedding and buffers) against plain double-precision references,
 * on shapes that exercise every tail: row counts that are not multiples of the 16-row blocks or 4-row kernels,
 * token counts around the 2-token kernel and the 16-token blocks, row lengths that are not multiples of 8.
 * Quantized weights are ggml's own (quant-testvectors.gguf) or made by our quantizer. The element-wise ops are
 * test_ops.c's.
 */
#include "kern.h"
#include "quant.h"
#include "ggml_reference.h"
#include "testutil.h"
#include "weights.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* y = x W^T in double from the dequantized rows and x as the backend's numerics round it (x_type: F32 for none,
 * F16 or BF16 for the value that type holds), compared with the backend's. */
static void check_matmul_rounded(kern_backend *be, const gguf_tensor *t, int T, uint32_t x_type, const char *what)
{
    const int64_t n = (int64_t)t->ne[0], rows = (int64_t)t->ne[1];
    float *w = malloc((size_t)(n * rows) * sizeof(float)), *x = malloc((size_t)(T * n) * sizeof(float));
    float *y = malloc((size_t)(T * rows) * sizeof(float)), *xr = malloc((size_t)(T * n) * sizeof(float));
    cr_assert_eq(quant_dequantize_rows(t, 0, (uint64_t)rows, w, 1), QUANT_OK);
    uint32_t s = 7;
    for (int64_t i = 0; i < T * n; i++) {
        x[i] = test_frand(&s);
        xr[i] = x_type == GGUF_TENSOR_F16    ? quant_f16_to_f32(quant_f32_to_f16(x[i]))
                : x_type == GGUF_TENSOR_BF16 ? quant_bf16_to_f32(quant_f32_to_bf16(x[i]))
                                           : x[i];
    }
    kern_weight kw = { .t = t };
    cr_assert_eq(be->bind(be, &kw), KERN_OK, "%s", what);
    cr_assert_eq(be->matmul(be, &kw, NULL, x, T, y), KERN_OK, "%s", what);
    for (int tt = 0; tt < T; tt++)
        for (int64_t r = 0; r < rows; r++) {
            double ref = 0, mag = 0;
            for (int64_t i = 0; i < n; i++) {
                ref += (double)w[r * n + i] * xr[tt * n + i];
                mag += fabs((double)w[r * n + i] * xr[tt * n + i]);
            }
            cr_assert_leq(fabs(y[tt * rows + r] - ref), 1e-5 * mag + 1e-6,
                          "%s T=%d: y[%d][%lld] = %.7g, reference %.7g", what, T, tt, (long long)r, y[tt * rows + r],
                          ref);
        }
    free(w);
    free(x);
    free(xr);
    free(y);
}

static void check_matmul(kern_backend *be, const gguf_tensor *t, int T, const char *what)
{
    check_matmul_rounded(be, t, T, GGUF_TENSOR_F32, what);
}


Test(kernels, matmul_every_tail_for_writer_made_types)
{
    kern_backend *be = kern_cpu_create(2);
    const uint32_t types[] = { GGUF_TENSOR_F32, GGUF_TENSOR_F16, GGUF_TENSOR_BF16, GGUF_TENSOR_Q8_0, GGUF_TENSOR_Q4_0,
                               GGUF_TENSOR_Q5_0 };
    /* 576 values: prompt rows are decoded 256 at a time for the GEMM, so two whole runs and a 64-value one */
    const int64_t shapes[][2] = { { 64, 1 }, { 96, 37 }, { 160, 17 }, { 32, 5 }, { 576, 19 } };
    const int Ts[] = { 1, 2, 3, 17, 33 };
    for (size_t k = 0; k < sizeof types / sizeof types[0]; k++)
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
            int64_t n = shapes[s][0];
            if (types[k] == GGUF_TENSOR_F32 || types[k] == GGUF_TENSOR_F16 || types[k] == GGUF_TENSOR_BF16)
                n += 3;  /* row length not a multiple of 8 */
            uint8_t *buf;
            gguf_tensor t = test_weight_tensor(types[k], n, shapes[s][1], &buf);
            for (size_t i = 0; i < sizeof Ts / sizeof Ts[0]; i++) {
                char what[64];
                snprintf(what, sizeof what, "%s %lldx%lld", gguf_type_traits_of(types[k])->name, (long long)n,
                         (long long)shapes[s][1]);
                check_matmul(be, &t, Ts[i], what);
            }
            free(buf);
        }
    be->destroy(be);
}

/* F16 and BF16 rows whose length is a multiple of 16 are read in place by the prompt products: widened into
 * the GEMM panel as they are transposed (AVX-512, 8 tokens or more; BF16 32 values at a time as pairs, then a
 * last 16: lengths 160 and 176), or by the dot tiles (AVX2, and fewer tokens). Full and partial 16-row panels
 * (37 rows), and token counts on both sides of the GEMM's threshold. */
Test(kernels, half_rows_multiply_in_place)
{
    kern_backend *be = kern_cpu_create(2);
    const uint32_t types[] = { GGUF_TENSOR_F16, GGUF_TENSOR_BF16 };
    const int64_t lengths[] = { 160, 176 };
    const int Ts[] = { 2, 7, 8, 17, 33 };
    for (size_t k = 0; k < sizeof types / sizeof types[0]; k++)
        for (size_t l = 0; l < sizeof lengths / sizeof lengths[0]; l++) {
            uint8_t *buf;
            gguf_tensor t = test_weight_tensor(types[k], lengths[l], 37, &buf);
            for (size_t i = 0; i < sizeof Ts / sizeof Ts[0]; i++)
                check_matmul(be, &t, Ts[i], gguf_type_traits_of(types[k])->name);
            free(buf);
        }
    be->destroy(be);
}

/* --numerics ggml on F16 and BF16 weights multiplies x rounded to f16 / bf16 (as ggml does; the reference
 * rounds x the same way, and unrounded x misses it by about 2^-9 relative, far past the tolerance): every tile
 * size (T = 8, 13, 33), partial tiles (37 rows), lengths that are not a multiple of the vector (n = 98, 99). */
Test(kernels, ggml_numerics_multiply_half_types_with_x_rounded_alike)
{
    kern_backend *be = kern_cpu_create_numerics(2, KERN_NUMERICS_GGML);
    const uint32_t types[] = { GGUF_TENSOR_F16, GGUF_TENSOR_BF16 };
    const int64_t shapes[][2] = { { 98, 37 }, { 99, 16 }, { 256, 21 } };
    const int Ts[] = { 1, 5, 8, 13, 33 };
    for (size_t k = 0; k < sizeof types / sizeof types[0]; k++)
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
            uint8_t *buf;
            gguf_tensor t = test_weight_tensor(types[k], shapes[s][0], shapes[s][1], &buf);
            for (size_t i = 0; i < sizeof Ts / sizeof Ts[0]; i++) {
                char what[64];
                snprintf(what, sizeof what, "ggml numerics %s %lldx%lld", gguf_type_traits_of(types[k])->name,
                         (long long)shapes[s][0], (long long)shapes[s][1]);
                check_matmul_rounded(be, &t, Ts[i], types[k], what);
            }
            free(buf);
        }
    be->destroy(be);
}

/* --numerics ggml multiplies F16, BF16 and F32 rows as llama.cpp does, every output bit for bit (ggml_reference.c's
 * statements): tinyBLAS's order for prompts whose row length is a multiple of its step (16 lanes where this CPU's
 * llama.cpp build has AVX-512, GGUFSCOPE_SIMD not capping it, 8 on AVX2; BF16 on AVX512-BF16 by vdpbf16ps, 32
 * values a step), ggml_vec_dot_f16's / _bf16's / _f32's for one token and for the other lengths; rows of 37 (tiles of 4 and
 * a remainder), 1 to 13 tokens (tiles of 6 and 2 and their remainders), lengths 576 and 520 (a multiple of 8, not
 * of 16) and 172 (of neither; stories260K's FFN). */
Test(kernels, ggml_numerics_multiply_half_rows_in_llama_cpp_order)
{
    kern_backend *be = kern_cpu_create_numerics(2, KERN_NUMERICS_GGML);
    const bool scalar = strcmp(quant_simd_level(), "scalar") == 0;
    const int width = scalar ? 0 : strcmp(quant_simd_level(), "avx512") == 0 && quant_cpu_has_avx512vl() ? 16 : 8;
    const bool pairs = width == 16 && quant_cpu_has_avx512bf16();
    const int64_t lengths[] = { 576, 520, 172 }, rows = 37;
    const int Ts[] = { 1, 2, 5, 6, 13 };
    int held = 0;
    const uint32_t types[] = { GGUF_TENSOR_F16, GGUF_TENSOR_BF16, GGUF_TENSOR_F32 };
    for (size_t ki = 0; ki < sizeof types / sizeof types[0]; ki++)
    for (size_t li = 0; li < sizeof lengths / sizeof lengths[0]; li++) {
        const int64_t n = lengths[li];
        const uint32_t type = types[ki];
        const bool bf16 = type == GGUF_TENSOR_BF16, f32 = type == GGUF_TENSOR_F32;
        uint8_t *buf;
        gguf_tensor t = test_weight_tensor(type, n, rows, &buf);
        kern_weight kw = { .t = &t };
        cr_assert_eq(be->bind(be, &kw), KERN_OK);
        float *w = malloc((size_t)(n * rows) * sizeof(float));
        cr_assert_eq(quant_dequantize_rows(&t, 0, (uint64_t)rows, w, 1), QUANT_OK);
        for (size_t ti = 0; ti < sizeof Ts / sizeof Ts[0]; ti++) {
            const int T = Ts[ti];
            float *x = malloc((size_t)(T * n) * sizeof(float)), *xr = malloc((size_t)(T * n) * sizeof(float));
            float *y = malloc((size_t)(T * rows) * sizeof(float));
            uint32_t seed = 3;
            for (int64_t i = 0; i < T * n; i++) {
                x[i] = test_frand(&seed);
                xr[i] = f32    ? x[i]
                        : bf16 ? quant_bf16_to_f32(quant_f32_to_bf16(x[i]))
                               : quant_f16_to_f32(quant_f32_to_f16(x[i]));
            }
            cr_assert_eq(be->matmul(be, &kw, NULL, x, T, y), KERN_OK);
            const bool dp = bf16 && pairs, tinyblas = T >= 2 && width && n % (dp ? 32 : width) == 0;
            const int form = dp ? GGML_BF16_PAIRS : width == 16 ? GGML_BF16_AVX512 : GGML_BF16_AVX2;
            for (int tt = 0; tt < T && width; tt++)
                for (int64_t r = 0; r < rows; r++) {
                    const float *wr = w + r * n, *xt = xr + (int64_t)tt * n;
                    const float want = tinyblas ? ggml_ref_tinyblas(wr, xt, n, width, dp)
                                       : bf16   ? ggml_ref_dot_bf16(wr, xt, n, form)
                                       : f32    ? ggml_ref_dot_f32(wr, xt, (int)n, width == 16)
                                                : ggml_ref_dot_f16(wr, xt, n, width == 16);
                    cr_assert(memcmp(&y[tt * rows + r], &want, 4) == 0, "%s n=%lld T=%d: y[%d][%lld] = %.9g, %s's %.9g",
                              gguf_type_traits_of(type)->name, (long long)n, T, tt, (long long)r, y[tt * rows + r],
                              tinyblas ? "tinyBLAS" : "vec_dot", want);
                    held++;
                }
            free(x);
            free(xr);
            free(y);
            char what[64];
            snprintf(what, sizeof what, "ggml numerics %s %lldx%lld", gguf_type_traits_of(type)->name, (long long)n,
                     (long long)rows);
            check_matmul_rounded(be, &t, T, type, what);
        }
        free(w);
        free(buf);
    }
    if (width)
        cr_assert_gt(held, 0, "no output was held to llama.cpp's order");
    be->destroy(be);
}

/* Several weights against one x as one product (q, k and v; gate and up), and each against its own x
 * (matmul_many_x: the chosen experts' down products): each output bit for bit what its own matmul gives, in both
 * numerics, for one token, the dot kernels' prompts and the GEMM's; with weights of one type (which share their
 * rounded x where they read the same one) and of several, a bias on one of them, and 37-row partial panels; the
 * most weights one product takes (KERN_MATMUL_MANY: 8 experts' gate and up) at once. Weights of different row
 * lengths, none, and one too many are refused. */
Test(kernels, matmul_many_is_each_matmul_bit_for_bit)
{
    const uint32_t sets[][3] = { { GGUF_TENSOR_Q4_0, GGUF_TENSOR_Q4_0, GGUF_TENSOR_Q8_0 },
                                 { GGUF_TENSOR_Q4_K, GGUF_TENSOR_Q6_K, GGUF_TENSOR_Q4_K },
                                 { GGUF_TENSOR_F16, GGUF_TENSOR_BF16, GGUF_TENSOR_F32 } };
    const int64_t rows[3] = { 37, 16, 21 };
    const int Ts[] = { 1, 5, 8, 33 };
    const int64_t n = 512;
    for (int numerics = 0; numerics < 2; numerics++) {
        kern_backend *be = kern_cpu_create_numerics(2, numerics ? KERN_NUMERICS_GGML : KERN_NUMERICS_EXACT);
        for (size_t k = 0; k < sizeof sets / sizeof sets[0]; k++) {
            uint8_t *buf[3], *bias_buf;
            gguf_tensor t[3];
            kern_weight kw[3];
            for (int i = 0; i < 3; i++) {
                t[i] = test_weight_tensor(sets[k][i], n, rows[i], &buf[i]);
                kw[i] = (kern_weight){ .t = &t[i] };
                cr_assert_eq(be->bind(be, &kw[i]), KERN_OK);
            }
            gguf_tensor bt = test_weight_tensor(GGUF_TENSOR_F32, rows[1], 1, &bias_buf);
            kern_weight bias = { .t = &bt };
            cr_assert_eq(be->bind(be, &bias), KERN_OK);
            const kern_weight *const ws[3] = { &kw[0], &kw[1], &kw[2] }, *const bs[3] = { NULL, &bias, NULL };
            for (size_t ti = 0; ti < sizeof Ts / sizeof Ts[0]; ti++) {
                const int T = Ts[ti];
                /* matmul_many: x for all three; matmul_many_x: each its own (weights of one type must not
                 * borrow each other's rounded x then) */
                for (int own = 0; own < 2; own++) {
                    float *x = malloc((size_t)(3 * T * n) * sizeof(float)), *one[3], *many[3];
                    const float *xs[3];
                    uint32_t seed = 11;
                    for (int64_t i = 0; i < 3 * T * n; i++)
                        x[i] = test_frand(&seed);
                    for (int i = 0; i < 3; i++) {
                        xs[i] = x + (own ? (size_t)i * T * n : 0);
                        one[i] = malloc((size_t)(T * rows[i]) * sizeof(float));
                        many[i] = calloc((size_t)(T * rows[i]), sizeof(float));
                        cr_assert_eq(be->matmul(be, &kw[i], bs[i], xs[i], T, one[i]), KERN_OK);
                    }
                    cr_assert_eq(own ? be->matmul_many_x(be, 3, ws, bs, xs, T, many)
                                     : be->matmul_many(be, 3, ws, bs, x, T, many), KERN_OK);
                    for (int i = 0; i < 3; i++) {
                        cr_assert_eq(memcmp(one[i], many[i], (size_t)(T * rows[i]) * sizeof(float)), 0,
                                     "%s numerics, %s, %s (weight %d of 3), T=%d: not its own matmul's floats",
                                     numerics ? "ggml" : "exact", own ? "matmul_many_x" : "matmul_many",
                                     gguf_type_traits_of(sets[k][i])->name, i, T);
                        free(one[i]);
                        free(many[i]);
                    }
                    free(x);
                }
            }
            for (int i = 0; i < 3; i++)
                free(buf[i]);
            free(bias_buf);
        }
        uint8_t *a, *b2;
        gguf_tensor ta = test_weight_tensor(GGUF_TENSOR_Q8_0, 64, 4, &a);
        gguf_tensor tb = test_weight_tensor(GGUF_TENSOR_Q8_0, 96, 4, &b2);
        kern_weight wa = { .t = &ta }, wb = { .t = &tb };
        const kern_weight *const mixed[2] = { &wa, &wb };
        float x[96] = { 0 }, ya[4], yb[4];
        float *const ys[2] = { ya, yb };
        cr_assert_eq(be->matmul_many(be, 2, mixed, NULL, x, 1, ys), KERN_E_SHAPE, "row lengths 64 and 96 together");
        cr_assert_eq(be->matmul_many(be, 0, mixed, NULL, x, 1, ys), KERN_E_SHAPE, "no weights");
        /* KERN_MATMUL_MANY weights of one type and x (8 experts' gate and up): each its own matmul's floats */
        enum { MOST = KERN_MATMUL_MANY };
        kern_weight most[MOST + 1];
        const kern_weight *most_ws[MOST + 1];
        uint8_t *most_buf[MOST + 1];
        gguf_tensor most_t[MOST + 1];
        float most_one[MOST + 1][16], most_many[MOST + 1][16], xm[256];
        float *most_ys[MOST + 1];
        uint32_t seed = 5;
        for (int i = 0; i < 256; i++)
            xm[i] = test_frand(&seed);
        for (int i = 0; i <= MOST; i++) {
            most_t[i] = test_weight_tensor(GGUF_TENSOR_Q4_K, 256, 16, &most_buf[i]);
            most[i] = (kern_weight){ .t = &most_t[i] };
            most_ws[i] = &most[i];
            most_ys[i] = most_many[i];
            cr_assert_eq(be->bind(be, &most[i]), KERN_OK);
            cr_assert_eq(be->matmul(be, &most[i], NULL, xm, 1, most_one[i]), KERN_OK);
        }
        cr_assert_eq(be->matmul_many(be, MOST, most_ws, NULL, xm, 1, most_ys), KERN_OK);
        for (int i = 0; i < MOST; i++)
            cr_assert_eq(memcmp(most_one[i], most_many[i], sizeof most_one[i]), 0, "weight %d of %d", i, MOST);
        cr_assert_eq(be->matmul_many(be, MOST + 1, most_ws, NULL, xm, 1, most_ys), KERN_E_SHAPE, "%d weights",
                     MOST + 1);
        for (int i = 0; i <= MOST; i++)
            free(most_buf[i]);
        free(a);
        free(b2);
        be->destroy(be);
    }
}

/* matmul_each (the grouped experts' products under --numerics ggml): each token's row bit for bit what the same
 * row of x gives as a one-token matmul, whatever the batch, for every type our writer makes, in both numerics;
 * 40 rows (whole panels of 8 for the repacked kernels) and 37 (a partial one), a bias on one weight, token counts
 * around the thresholds where a batch's own kernels change (4 and 8). */
Test(kernels, matmul_each_is_every_token_alone_bit_for_bit)
{
    const int64_t n = 512, rows[2] = { 40, 37 };
    const int Ts[] = { 2, 4, 9, 33 };
    int held = 0;
    for (int numerics = 0; numerics < 2; numerics++) {
        kern_backend *be = kern_cpu_create_numerics(2, numerics ? KERN_NUMERICS_GGML : KERN_NUMERICS_EXACT);
        for (uint32_t type = 0; type < GGUF_TENSOR_COUNT; type++) {
            if (!quant_can_quantize(type) || !kern_cpu_supports(type) || n % gguf_type_traits_of(type)->block_size)
                continue;
            uint8_t *buf[2], *bias_buf;
            gguf_tensor t[2];
            kern_weight kw[2];
            for (int i = 0; i < 2; i++) {
                t[i] = test_weight_tensor(type, n, rows[i], &buf[i]);
                kw[i] = (kern_weight){ .t = &t[i] };
                cr_assert_eq(be->bind(be, &kw[i]), KERN_OK);
            }
            gguf_tensor bt = test_weight_tensor(GGUF_TENSOR_F32, rows[1], 1, &bias_buf);
            kern_weight bias = { .t = &bt };
            cr_assert_eq(be->bind(be, &bias), KERN_OK);
            const kern_weight *const ws[2] = { &kw[0], &kw[1] }, *const bs[2] = { NULL, &bias };
            for (size_t ti = 0; ti < sizeof Ts / sizeof Ts[0]; ti++) {
                const int T = Ts[ti];
                float *x = malloc((size_t)(T * n) * sizeof(float)), *each[2];
                uint32_t seed = 5;
                for (int64_t i = 0; i < T * n; i++)
                    x[i] = test_frand(&seed);
                for (int i = 0; i < 2; i++)
                    cr_assert(each[i] = calloc((size_t)(T * rows[i]), sizeof(float)));
                cr_assert_eq(be->matmul_each(be, 2, ws, bs, x, T, each), KERN_OK);
                for (int tok = 0; tok < T; tok++)
                    for (int i = 0; i < 2; i++) {
                        float alone[40];
                        cr_assert_eq(be->matmul(be, &kw[i], bs[i], x + (int64_t)tok * n, 1, alone), KERN_OK);
                        cr_assert_eq(memcmp(alone, each[i] + (int64_t)tok * rows[i], (size_t)rows[i] * sizeof(float)),
                                     0, "%s numerics, %s (%lld rows), token %d of %d: not the one-token product",
                                     numerics ? "ggml" : "exact", gguf_type_traits_of(type)->name,
                                     (long long)rows[i], tok, T);
                        held++;
                    }
                for (int i = 0; i < 2; i++)
                    free(each[i]);
                free(x);
            }
            for (int i = 0; i < 2; i++)
                free(buf[i]);
            free(bias_buf);
        }
        be->destroy(be);
    }
    /* the ten types our writer makes (F32, F16, BF16, Q4_0, Q5_0, Q8_0, Q4_K, Q5_K, Q6_K, MXFP4), two weights
     * and 48 tokens each, in both numerics */
    cr_assert_geq(held, 2 * 10 * 2 * 48, "only %d token rows compared: types went missing", held);
}

/* Tokens are tiled 4, 2 and 1 at a time by the dot kernels, and up to 24 at a time by the GEMM that prompts of
 * 8 tokens or more take on AVX-512; in both, every accumulator sees its products in the same order whatever the
 * tile. So a token multiplied inside a batch of 7 gives bit for bit what it gives alone, and a token inside a
 * batch of 40 what it gives inside any batch of 9 (for types whose one-token product goes through the same
 * kernels: F32; the quantized types and BF16 have fused one-token dots, held to the scalar decoder in
 * test_quant instead). */
static void matmul_f32(kern_backend *be, kern_weight *kw, const float *x, int T, float *y)
{
    cr_assert_eq(be->matmul(be, kw, NULL, x, T, y), KERN_OK);
}

Test(kernels, matmul_rows_do_not_depend_on_the_token_tiling)
{
    kern_backend *be = kern_cpu_create(2);
    enum { SMALL = 7, SMALL_GEMM = 9, BIG = 40, N = 160, ROWS = 37 };
    uint8_t *buf;
    gguf_tensor t = test_weight_tensor(GGUF_TENSOR_F32, N, ROWS, &buf);
    kern_weight kw = { .t = &t };
    cr_assert_eq(be->bind(be, &kw), KERN_OK);
    static float x[BIG * N], batch[BIG * ROWS], part[SMALL_GEMM * ROWS];
    uint32_t s = 3;
    for (int i = 0; i < BIG * N; i++)
        x[i] = test_frand(&s);
    matmul_f32(be, &kw, x, SMALL, batch);
    for (int tt = 0; tt < SMALL; tt++) {
        matmul_f32(be, &kw, x + tt * N, 1, part);
        cr_assert_eq(memcmp(&batch[tt * ROWS], part, ROWS * sizeof(float)), 0, "token %d: alone differs from a batch of %d",
                     tt, SMALL);
    }
    matmul_f32(be, &kw, x, BIG, batch);
    const int starts[] = { 0, 9, 20, 31 }; /* windows across the big batch's tiles of 24 */
    for (size_t w = 0; w < sizeof starts / sizeof starts[0]; w++) {
        matmul_f32(be, &kw, x + starts[w] * N, SMALL_GEMM, part);
        for (int tt = 0; tt < SMALL_GEMM; tt++)
            for (int r = 0; r < ROWS; r++)
                cr_assert_eq(memcmp(&batch[(starts[w] + tt) * ROWS + r], &part[tt * ROWS + r], sizeof(float)), 0,
                             "token %d row %d: %.9g in a batch of %d, %.9g in a batch of %d", starts[w] + tt, r,
                             batch[(starts[w] + tt) * ROWS + r], BIG, part[tt * ROWS + r], SMALL_GEMM);
    }
    free(buf);
    be->destroy(be);
}

/* ggml's own test vectors (the shared quant-testvectors.gguf: a tensor q.<type> of each type), open; the test is
 * skipped where the file is absent. */
static gguf_file *open_test_vectors(void)
{
    char *path = model_path("quant-testvectors.gguf");
    if (!path)
        cr_skip_test("quant-testvectors.gguf not found: skipped");
    gguf_file *f;
    gguf_error ge;
    cr_assert_eq(gguf_open(path, &f, &ge), GGUF_OK, "%s", ge.message);
    free(path);
    return f;
}

/* Under --numerics ggml a prompt's rows are each token's one-token product (llama.cpp's mul_mat rounds every token's
 * activations and meets each weight row with its vec_dot whatever the batch), for every type of ggml's test vectors
 * (the half types through their rounded rows, the quantized ones through their integer dots and panels), alone and
 * as the second of two products of one x. */
Test(kernels, ggml_numerics_prompt_rows_are_each_token_alone)
{
    gguf_file *f = open_test_vectors();
    kern_backend *be = kern_cpu_create_numerics(2, KERN_NUMERICS_GGML);
    enum { T = 12 };
    int checked = 0;
    for (size_t i = 0; i < gguf_tensor_count(f); i++) {
        const gguf_tensor *t = gguf_tensor_at(f, i);
        if (strncmp(t->name, "q.", 2))
            continue;
        const int n = (int)t->ne[0], rows = (int)t->ne[1];
        float *x = malloc(sizeof(float) * T * n), *all = malloc(sizeof(float) * T * rows);
        float *one = malloc(sizeof(float) * rows);
        cr_assert(x && all && one);
        uint32_t s = 17;
        for (int k = 0; k < T * n; k++)
            x[k] = test_frand(&s);
        kern_weight kw = { .t = t };
        cr_assert_eq(be->bind(be, &kw), KERN_OK);
        /* alone, and as the second of two products of one x (q, k and v's matmul_many: the first's rounding shared) */
        const kern_weight *const pair[2] = { &kw, &kw };
        float *first = malloc(sizeof(float) * T * rows);
        float *const ys[2] = { first, all };
        cr_assert_eq(be->matmul_many(be, 2, pair, NULL, x, T, ys), KERN_OK);
        cr_assert_eq(memcmp(first, all, sizeof(float) * T * rows), 0, "%s: the pair's products differ", t->name);
        free(first);
        for (int tt = 0; tt < T; tt++) {
            matmul_f32(be, &kw, x + (size_t)tt * n, 1, one);
            for (int r = 0; r < rows; r++)
                cr_assert_leq(fabsf(all[(size_t)tt * rows + r] - one[r]), 1e-5f * (1.0f + fabsf(one[r])),
                              "%s token %d row %d: %.9g in a batch of %d, %.9g alone", t->name, tt, r,
                              all[(size_t)tt * rows + r], T, one[r]);
        }
        free(x), free(all), free(one);
        checked++;
    }
    cr_assert_geq(checked, 19);
    be->destroy(be);
    gguf_close(f);
}

/* Every type of ggml's own test vectors, as multiplied from the mapping. */
Test(kernels, matmul_reads_every_ggml_type_in_place)
{
    gguf_file *f = open_test_vectors();
    kern_backend *be = kern_cpu_create(2);
    int checked = 0;
    for (size_t i = 0; i < gguf_tensor_count(f); i++) {
        const gguf_tensor *t = gguf_tensor_at(f, i);
        if (strncmp(t->name, "q.", 2))
            continue;
        cr_assert(kern_cpu_supports(t->type), "%s is not multiplied", t->name);
        check_matmul(be, t, 1, t->name);
        check_matmul(be, t, 5, t->name);
        checked++;
    }
    cr_assert_geq(checked, 19);
    be->destroy(be);
    gguf_close(f);
}

Test(kernels, matmul_adds_the_bias)
{
    kern_backend *be = kern_cpu_create(1);
    uint8_t *wb, *bb;
    gguf_tensor t = test_weight_tensor(GGUF_TENSOR_F32, 32, 3, &wb), b = test_weight_tensor(GGUF_TENSOR_F32, 3, 1, &bb);
    b.n_dims = 1;
    float x[32] = { 0 }, y[3];
    kern_weight kw = { .t = &t }, kb = { .t = &b };
    cr_assert_eq(be->matmul(be, &kw, &kb, x, 1, y), KERN_OK);
    for (int r = 0; r < 3; r++)
        cr_assert_float_eq(y[r], ((float *)bb)[r], 0, "zero input gives the bias");
    free(wb);
    free(bb);
    be->destroy(be);
}

Test(kernels, embed_rejects_out_of_range_tokens)
{
    kern_backend *be = kern_cpu_create(1);
    uint8_t *buf;
    gguf_tensor t = test_weight_tensor(GGUF_TENSOR_Q8_0, 32, 4, &buf);
    kern_weight kw = { .t = &t };
    float out[32];
    int32_t bad = 4, good = 3;
    cr_assert_eq(be->embed(be, &kw, &bad, 1, out), KERN_E_SHAPE);
    cr_assert_eq(be->embed(be, &kw, &good, 1, out), KERN_OK);
    free(buf);
    be->destroy(be);
}

/* The backend's buffers (KV cache, activations) come zeroed and 64-byte aligned; those of 2 MiB and more are
 * mapped 2 MiB aligned (so the kernel can back them with huge pages). Each is written end to end and freed (under
 * ASan, where all come from the heap, an overrun or a leak shows). */
Test(kernels, buffers_are_zeroed_aligned_and_large_ones_huge_page_aligned)
{
    kern_backend *be = kern_cpu_create(1);
    const size_t sizes[] = { 1, 100, (2u << 20) / sizeof(float) - 1, (2u << 20) / sizeof(float),
                             (5u << 20) / sizeof(float) + 3 };
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        const size_t n = sizes[i];
        float *p = be->alloc(be, n);
        cr_assert_not_null(p, "%zu floats", n);
        cr_assert_eq((uintptr_t)p % 64, 0, "%zu floats at %p", n, (void *)p);
#if !defined(__SANITIZE_ADDRESS__) /* ASan builds take every buffer from the heap, to watch it */
        if (n * sizeof(float) >= (2u << 20))
            cr_assert_eq((uintptr_t)p % (2u << 20), 0, "%zu floats at %p, not on a 2 MiB boundary", n, (void *)p);
#endif
        for (size_t j = 0; j < n; j++)
            if (p[j] != 0.0f)
                cr_assert_fail("%zu floats: [%zu] = %g, not zero", n, j, p[j]);
        for (size_t j = 0; j < n; j++)
            p[j] = (float)j;
        cr_assert_eq(p[n - 1], (float)(n - 1));
        be->free(be, p);
    }
    be->destroy(be);
}
