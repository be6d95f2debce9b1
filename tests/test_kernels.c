/*
 * The CPU backend's ops against plain double-precision references, on shapes
 * that exercise every tail: row counts that are not multiples of the 16-row
 * blocks or 4-row kernels, token counts around the 2-token kernel and the
 * 16-token blocks, row lengths that are not multiples of 8. Quantized weights
 * are ggml's own (quant-testvectors.gguf) or made by our quantizer.
 */
#include "kern.h"
#include "quant.h"
#include "testutil.h"

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
        xr[i] = x_type == GGML_TYPE_F16    ? quant_f16_to_f32(quant_f32_to_f16(x[i]))
                : x_type == GGML_TYPE_BF16 ? quant_bf16_to_f32(quant_f32_to_bf16(x[i]))
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
    check_matmul_rounded(be, t, T, GGML_TYPE_F32, what);
}

static gguf_tensor make_tensor(uint32_t type, int64_t n, int64_t rows, uint8_t **buf)
{
    const gguf_type_traits *tr = gguf_type_traits_of(type);
    size_t rb = (size_t)n / tr->block_size * tr->type_size;
    *buf = aligned_alloc(64, (rb * rows + 63) / 64 * 64);
    float *src = malloc((size_t)n * sizeof(float));
    uint32_t s = 42;
    for (int64_t r = 0; r < rows; r++) {
        for (int64_t i = 0; i < n; i++)
            src[i] = test_frand(&s) * 0.5f;
        cr_assert_eq(quant_quantize_row(type, src, *buf + rb * r, n), QUANT_OK);
    }
    free(src);
    return (gguf_tensor){ .name = "w", .n_dims = 2, .ne = { (uint64_t)n, (uint64_t)rows, 1, 1 }, .type = type,
                          .size = rb * rows, .n_elements = (uint64_t)(n * rows), .data = *buf };
}

Test(kernels, matmul_every_tail_for_writer_made_types)
{
    kern_backend *be = kern_cpu_create(2);
    const uint32_t types[] = { GGML_TYPE_F32, GGML_TYPE_F16, GGML_TYPE_BF16, GGML_TYPE_Q8_0, GGML_TYPE_Q4_0,
                               GGML_TYPE_Q5_0 };
    /* 576 values: prompt rows are decoded 256 at a time for the GEMM, so two whole runs and a 64-value one */
    const int64_t shapes[][2] = { { 64, 1 }, { 96, 37 }, { 160, 17 }, { 32, 5 }, { 576, 19 } };
    const int Ts[] = { 1, 2, 3, 17, 33 };
    for (size_t k = 0; k < sizeof types / sizeof types[0]; k++)
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
            int64_t n = shapes[s][0];
            if (types[k] == GGML_TYPE_F32 || types[k] == GGML_TYPE_F16 || types[k] == GGML_TYPE_BF16)
                n += 3;  /* row length not a multiple of 8 */
            uint8_t *buf;
            gguf_tensor t = make_tensor(types[k], n, shapes[s][1], &buf);
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
 * the GEMM panel as they are transposed (AVX-512, 8 tokens or more), or by the dot tiles (AVX2, and fewer
 * tokens). Full and partial 16-row panels (37 rows), and token counts on both sides of the GEMM's threshold. */
Test(kernels, half_rows_multiply_in_place)
{
    kern_backend *be = kern_cpu_create(2);
    const uint32_t types[] = { GGML_TYPE_F16, GGML_TYPE_BF16 };
    const int Ts[] = { 2, 7, 8, 17, 33 };
    for (size_t k = 0; k < sizeof types / sizeof types[0]; k++) {
        uint8_t *buf;
        gguf_tensor t = make_tensor(types[k], 160, 37, &buf);
        for (size_t i = 0; i < sizeof Ts / sizeof Ts[0]; i++)
            check_matmul(be, &t, Ts[i], gguf_type_traits_of(types[k])->name);
        free(buf);
    }
    be->destroy(be);
}

/* --numerics ggml on F16 and BF16 weights multiplies x rounded to f16 / bf16 (as ggml does; the reference
 * rounds x the same way, and unrounded x misses it by about 2^-9 relative, far past the tolerance). For prompts
 * of 8 tokens or more on AVX512-BF16, BF16 rows of an even length go through the GEMM in bf16 pairs: every tile
 * size (T = 8, 13, 33), partial panels (37 rows), word counts that are not a multiple of 16 (n = 98: 49 pairs),
 * and odd lengths (n = 99, the f32 path). */
Test(kernels, ggml_numerics_multiply_half_types_with_x_rounded_alike)
{
    kern_backend *be = kern_cpu_create_numerics(2, KERN_NUMERICS_GGML);
    const uint32_t types[] = { GGML_TYPE_F16, GGML_TYPE_BF16 };
    const int64_t shapes[][2] = { { 98, 37 }, { 99, 16 }, { 256, 21 } };
    const int Ts[] = { 1, 5, 8, 13, 33 };
    for (size_t k = 0; k < sizeof types / sizeof types[0]; k++)
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
            uint8_t *buf;
            gguf_tensor t = make_tensor(types[k], shapes[s][0], shapes[s][1], &buf);
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

/* Several weights against one x as one product (q, k and v; gate and up): each output bit for bit what its own
 * matmul gives, in both numerics, for one token, the dot kernels' prompts and the GEMM's; with weights of one
 * type (which share their rounded x) and of several, a bias on one of them, and 37-row partial panels. Weights of
 * different row lengths are refused. */
Test(kernels, matmul_many_is_each_matmul_bit_for_bit)
{
    const uint32_t sets[][3] = { { GGML_TYPE_Q4_0, GGML_TYPE_Q4_0, GGML_TYPE_Q8_0 },
                                 { GGML_TYPE_Q4_K, GGML_TYPE_Q6_K, GGML_TYPE_Q4_K },
                                 { GGML_TYPE_F16, GGML_TYPE_BF16, GGML_TYPE_F32 } };
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
                t[i] = make_tensor(sets[k][i], n, rows[i], &buf[i]);
                kw[i] = (kern_weight){ .t = &t[i] };
                cr_assert_eq(be->bind(be, &kw[i]), KERN_OK);
            }
            gguf_tensor bt = make_tensor(GGML_TYPE_F32, rows[1], 1, &bias_buf);
            kern_weight bias = { .t = &bt };
            cr_assert_eq(be->bind(be, &bias), KERN_OK);
            const kern_weight *const ws[3] = { &kw[0], &kw[1], &kw[2] }, *const bs[3] = { NULL, &bias, NULL };
            for (size_t ti = 0; ti < sizeof Ts / sizeof Ts[0]; ti++) {
                const int T = Ts[ti];
                float *x = malloc((size_t)(T * n) * sizeof(float)), *one[3], *many[3];
                uint32_t seed = 11;
                for (int64_t i = 0; i < T * n; i++)
                    x[i] = test_frand(&seed);
                for (int i = 0; i < 3; i++) {
                    one[i] = malloc((size_t)(T * rows[i]) * sizeof(float));
                    many[i] = calloc((size_t)(T * rows[i]), sizeof(float));
                    cr_assert_eq(be->matmul(be, &kw[i], bs[i], x, T, one[i]), KERN_OK);
                }
                cr_assert_eq(be->matmul_many(be, 3, ws, bs, x, T, many), KERN_OK);
                for (int i = 0; i < 3; i++) {
                    cr_assert_eq(memcmp(one[i], many[i], (size_t)(T * rows[i]) * sizeof(float)), 0,
                                 "%s numerics, %s (weight %d of 3), T=%d: not its own matmul's floats",
                                 numerics ? "ggml" : "exact", gguf_type_traits_of(sets[k][i])->name, i, T);
                    free(one[i]);
                    free(many[i]);
                }
                free(x);
            }
            for (int i = 0; i < 3; i++)
                free(buf[i]);
            free(bias_buf);
        }
        uint8_t *a, *b2;
        gguf_tensor ta = make_tensor(GGML_TYPE_Q8_0, 64, 4, &a), tb = make_tensor(GGML_TYPE_Q8_0, 96, 4, &b2);
        kern_weight wa = { .t = &ta }, wb = { .t = &tb };
        const kern_weight *const mixed[2] = { &wa, &wb };
        float x[96] = { 0 }, ya[4], yb[4];
        float *const ys[2] = { ya, yb };
        cr_assert_eq(be->matmul_many(be, 2, mixed, NULL, x, 1, ys), KERN_E_SHAPE, "row lengths 64 and 96 together");
        cr_assert_eq(be->matmul_many(be, 0, mixed, NULL, x, 1, ys), KERN_E_SHAPE, "no weights");
        free(a);
        free(b2);
        be->destroy(be);
    }
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
    gguf_tensor t = make_tensor(GGML_TYPE_F32, N, ROWS, &buf);
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

/* Every type of ggml's own test vectors, as multiplied from the mapping. */
Test(kernels, matmul_reads_every_ggml_type_in_place)
{
    char *path = model_path("quant-testvectors.gguf");
    if (!path)
        cr_skip_test("quant-testvectors.gguf not found: skipped");
    gguf_file *f;
    gguf_error ge;
    cr_assert_eq(gguf_open(path, &f, &ge), GGUF_OK);
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
    free(path);
}

Test(kernels, matmul_adds_the_bias)
{
    kern_backend *be = kern_cpu_create(1);
    uint8_t *wb, *bb;
    gguf_tensor t = make_tensor(GGML_TYPE_F32, 32, 3, &wb), b = make_tensor(GGML_TYPE_F32, 3, 1, &bb);
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

/* NORM rotates (2i, 2i+1), NEOX (i, i + d/2), by theta = pos * base^(-2i/d): each value bit for bit what the
 * scalar formula gives from the float cosine and sine of theta (v[a] c - v[b] s, v[a] s + v[b] c, rounded once
 * each), whichever SIMD path runs (GGUFSCOPE_SIMD=scalar for the other), and within 1e-5 of the rotation in
 * double. Head sizes 8, 64 and 76 give the vector paths no body, bodies only, and bodies with a scalar tail.
 * One backend takes every call, so the angles it keeps between calls (cpu_rope_angles) must follow each change:
 * of base, scaling, factors (also rewritten in place, behind the same pointer), positions and the number of
 * tokens. */
Test(kernels, rope_norm_and_neox_pairs)
{
    kern_backend *be = kern_cpu_create(2);
    const int H = 2, dims[3] = { 8, 64, 76 };
    float factors[38];
    for (int i = 0; i < 38; i++)
        factors[i] = 0.5f + 0.25f * (float)(i % 7);
    for (int di = 0; di < 3; di++) {
        const int d = dims[di];
        /* plain; then what the per-layer settings and Llama 3.1's rope_freqs change: another base, linear
         * scaling (theta * freq_scale) and a divisor per frequency */
        const kern_rope settings[3] = { { .n_rot = d, .base = 10000.0f, .freq_scale = 1.0f },
                                        { .n_rot = d, .base = 1e6f, .freq_scale = 0.125f },
                                        { .n_rot = d, .base = 500000.0f, .freq_scale = 1.0f, .freq_factors = factors } };
        /* each setting four times in a row, one thing changed each time: the factors' values, the positions,
         * the number of tokens */
        for (int k = 0; k < 3; k++)
            for (int pass = 0; pass < 4; pass++) {
                const int T = pass == 3 ? 4 : 3, pos0 = pass == 2 ? 6 : 5;
                if (pass == 1)
                    factors[1] += 1.0f;
                for (int neox = 0; neox < 2; neox++) {
                    float x[4 * 2 * 76], orig[4 * 2 * 76];
                    uint32_t s = 3;
                    for (int i = 0; i < T * H * d; i++)
                        orig[i] = x[i] = test_frand(&s);
                    kern_rope r = settings[k];
                    r.neox = neox;
                    cr_assert_eq(be->rope(be, x, T, H, d, pos0, &r), KERN_OK);
                    for (int t = 0; t < T; t++)
                        for (int h = 0; h < H; h++)
                            for (int i = 0; i < d / 2; i++) {
                                int a = neox ? i : 2 * i, b = neox ? i + d / 2 : 2 * i + 1;
                                const float *o = orig + (t * H + h) * d;
                                const float *v = x + (t * H + h) * d;
                                double th = (pos0 + t) * (double)r.freq_scale * pow((double)r.base, -2.0 * i / d) /
                                            (r.freq_factors ? r.freq_factors[i] : 1.0);
                                const float c = (float)cos(th), sn = (float)sin(th);
                                const float ea = o[a] * c - o[b] * sn, eb = o[a] * sn + o[b] * c;
                                cr_assert(v[a] == ea && v[b] == eb,
                                          "d %d pass %d setting %d neox=%d t=%d i=%d: (%.9g, %.9g), formula (%.9g, %.9g)",
                                          d, pass, k, neox, t, i, v[a], v[b], ea, eb);
                                cr_assert_float_eq(v[a], o[a] * cos(th) - o[b] * sin(th), 1e-5, "d %d i=%d", d, i);
                                cr_assert_float_eq(v[b], o[a] * sin(th) + o[b] * cos(th), 1e-5, "d %d i=%d", d, i);
                            }
                }
            }
    }
    be->destroy(be);
}

/* GeGLU (gemma): GELU as llama.cpp's CPU computes it, the tanh approximation
 * 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) through f16: every value an
 * f16, within f16 rounding (of x and of the result) of the exact GELU in
 * double, 0 at or below -10, x at or above 10; scaling and soft-capping likewise. */
Test(kernels, geglu_scale_and_softcap)
{
    kern_backend *be = kern_cpu_create(2);
    const size_t n = 100003;
    float *g = malloc(n * sizeof(float)), *u = malloc(n * sizeof(float)), *o = malloc(n * sizeof(float));
    for (size_t i = 0; i < n; i++) {
        g[i] = -12.0f + 24.0f * (float)i / (float)n;
        u[i] = 1.0f;
    }
    cr_assert_eq(be->glu(be, GGUF_ACT_GELU_TANH, g, u, n, o), KERN_OK);
    for (size_t i = 0; i < n; i++) {
        const double x = g[i];
        double ref = 0.5 * x * (1 + tanh(sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
        if (x <= -10)
            ref = 0;
        else if (x >= 10)
            ref = x;
        else
            cr_assert_eq(quant_f16_to_f32(quant_f32_to_f16(o[i])), o[i], "gelu(%.9g) = %.9g is not an f16", g[i], o[i]);
        /* x rounded to f16 moves gelu by |gelu'(x)| |x| 2^-11; the result's rounding adds 2^-11 of it */
        const double slope = fabs(ref) > 0 ? 2.0 : 0.0, tol = 0x1p-11 * (fabs(ref) + slope * fabs(x)) + 1e-7;
        cr_assert_leq(fabs(o[i] - ref), tol, "gelu(%.9g) = %.9g, exact %.9g", g[i], o[i], ref);
    }
    cr_assert_eq(kern_gelu_ggml(-10.0f), 0.0f);
    cr_assert_eq(kern_gelu_ggml(10.0f), 10.0f);
    cr_assert_eq(kern_gelu_ggml(0.0f), 0.0f);
    cr_assert_eq(be->glu(be, (gguf_act)7, g, u, n, o), KERN_E_UNSUPPORTED);
    float x[5] = { -3, 0, 2.5f, 1e30f, -1e30f };
    cr_assert_eq(be->scale(be, x, 3, 2.0f), KERN_OK);
    cr_assert_float_eq(x[0], -6.0f, 0);
    cr_assert_float_eq(x[2], 5.0f, 0);
    cr_assert_eq(be->softcap(be, x, 5, 30.0f), KERN_OK);
    cr_assert_float_eq(x[0], 30.0 * tanh(-6.0 / 30.0), 1e-5);
    cr_assert_float_eq(x[1], 0.0f, 0);
    cr_assert_float_eq(x[3], 30.0f, 1e-5, "huge logits saturate at the cap");
    cr_assert_float_eq(x[4], -30.0f, 1e-5);
    cr_assert_eq(be->softcap(be, x, 5, 0.0f), KERN_E_SHAPE, "a cap of 0 is no cap: the engine never asks for it");
    free(g);
    free(u);
    free(o);
    be->destroy(be);
}

/* The backend's GeGLU is kern_gelu_ggml(x) * u bit for bit, whichever path computes it (the AVX2 one rounds x
 * to f16 with F16C and gathers from the table): every f16 value, the midpoints between neighbours (the
 * rounding ties, which go to the even one) and the floats either side of them, the infinities and NaN, mixed
 * so that groups of eight hold values inside and outside (-10, 10). */
Test(kernels, geglu_equals_the_table_lookup_bit_for_bit)
{
    kern_backend *be = kern_cpu_create(2);
    const size_t n = (size_t)0x10000 * 4;
    float *g = malloc(n * sizeof(float)), *u = malloc(n * sizeof(float)), *o = malloc(n * sizeof(float));
    for (size_t h = 0; h < 0x10000; h++) {
        const float x = quant_f16_to_f32((uint16_t)h), next = quant_f16_to_f32((uint16_t)(h + 1));
        const float mid = isfinite(x) && isfinite(next) ? (float)(((double)x + next) / 2) : x;
        g[4 * h] = x, g[4 * h + 1] = mid;
        g[4 * h + 2] = nextafterf(mid, INFINITY), g[4 * h + 3] = nextafterf(mid, -INFINITY);
    }
    for (size_t i = 0; i < n; i++)
        u[i] = 0.75f + (float)(i % 13) * 0.125f;
    cr_assert_eq(be->glu(be, GGUF_ACT_GELU_TANH, g, u, n, o), KERN_OK);
    for (size_t i = 0; i < n; i++) {
        const float want = kern_gelu_ggml(g[i]) * u[i];
        cr_assert(memcmp(&want, &o[i], 4) == 0, "geglu(%.9g, %g) = %.9g, the table's %.9g", g[i], u[i], o[i], want);
    }
    free(g);
    free(u);
    free(o);
    be->destroy(be);
}

/* RMSNorm sums rows' squares several at a time (their chains interleaved, in vector lanes where AVX2 is there):
 * every row of a batch of any size is bit for bit that row normalized alone and bit for bit the definition (the sum
 * of squares one chain of double additions in element order, then x * (1 / sqrtf(mean + eps)) * g in float), and
 * within 2e-7 relative of the norm in double. Batches of 1 to 40 rows: groups of 8 and the rows past them. */
Test(kernels, rmsnorm_rows_do_not_depend_on_the_batch)
{
    kern_backend *be = kern_cpu_create(2);
    enum { N = 577, MAX_T = 40 };
    uint8_t *gb;
    gguf_tensor g = make_tensor(GGML_TYPE_F32, N, 1, &gb);
    g.n_dims = 1;
    kern_weight kg = { .t = &g };
    const float *gv = (const float *)gb;
    static float x[MAX_T * N], out[MAX_T * N], alone[N];
    uint32_t s = 9;
    for (int i = 0; i < MAX_T * N; i++)
        x[i] = test_frand(&s) * (float)(1 + i / N);
    const int Ts[] = { 1, 2, 3, 4, 5, 7, 8, 9, 13, 16, 17, 21, 33, 40 };
    for (size_t k = 0; k < sizeof Ts / sizeof Ts[0]; k++) {
        cr_assert_eq(be->rmsnorm(be, &kg, x, Ts[k], N, 1e-6f, out), KERN_OK);
        for (int t = 0; t < Ts[k]; t++) {
            const float *xr = x + (size_t)t * N;
            cr_assert_eq(be->rmsnorm(be, &kg, xr, 1, N, 1e-6f, alone), KERN_OK);
            cr_assert_eq(memcmp(alone, out + (size_t)t * N, sizeof alone), 0, "row %d of %d differs from itself alone",
                         t, Ts[k]);
            double ss = 0;
            for (int i = 0; i < N; i++)
                ss += (double)xr[i] * xr[i];
            const float scale = 1.0f / sqrtf((float)(ss / N) + 1e-6f);
            for (int i = 0; i < N; i++) {
                const float defined = xr[i] * scale * gv[i];
                cr_assert(out[(size_t)t * N + i] == defined, "row %d of %d [%d]: %.9g, defined %.9g", t, Ts[k], i,
                          out[(size_t)t * N + i], defined);
                const double want = xr[i] / sqrt(ss / N + 1e-6) * gv[i];
                cr_assert_leq(fabs(out[(size_t)t * N + i] - want), 2e-7 * fabs(want) + 1e-30, "row %d [%d]: %.9g, %.9g",
                              t, i, out[(size_t)t * N + i], want);
            }
        }
    }
    free(gb);
    be->destroy(be);
}

Test(kernels, rmsnorm_swiglu_add_and_row_stats)
{
    kern_backend *be = kern_cpu_create(1);
    uint8_t *gb;
    gguf_tensor g = make_tensor(GGML_TYPE_F32, 5, 1, &gb);
    g.n_dims = 1;
    float x[10] = { 1, 2, 3, 4, 5, -1, 0, 0, 0, 1 }, out[10];
    kern_weight kg = { .t = &g };
    cr_assert_eq(be->rmsnorm(be, &kg, x, 2, 5, 1e-5f, out), KERN_OK);
    for (int t = 0; t < 2; t++) {
        double ss = 0;
        for (int i = 0; i < 5; i++)
            ss += x[t * 5 + i] * x[t * 5 + i];
        for (int i = 0; i < 5; i++)
            cr_assert_float_eq(out[t * 5 + i], x[t * 5 + i] / sqrt(ss / 5 + 1e-5) * ((float *)gb)[i], 1e-6);
    }
    float a[3] = { -2, 0, 3 }, b[3] = { 2, 5, -1 }, o[3];
    cr_assert_eq(be->glu(be, GGUF_ACT_SILU, a, b, 3, o), KERN_OK);
    for (int i = 0; i < 3; i++)
        cr_assert_float_eq(o[i], a[i] / (1 + exp(-a[i])) * b[i], 1e-6);
    cr_assert_eq(be->add(be, a, b, 3), KERN_OK);
    cr_assert_float_eq(a[2], 2.0f, 0);
    float r[6] = { 3, -4, 0, NAN, INFINITY, 1 };
    kern_row_stats st[2];
    cr_assert_eq(be->row_stats(be, r, 2, 3, st), KERN_OK);
    cr_assert_float_eq(st[0].rms, sqrtf(25.0f / 3), 1e-6);
    cr_assert_float_eq(st[0].max_abs, 4.0f, 0);
    cr_assert_eq(st[1].n_nan, 1);
    cr_assert_eq(st[1].n_inf, 1);
    free(gb);
    be->destroy(be);
}

/* The SiLU product (a polynomial e^x on AVX2 machines, libm elsewhere) against the exact value in double:
 * within 4 ulp over every gate whose e^-gate is a normal float, the row long enough for the vector
 * path and odd-sized for the scalar tail; prompt-sized rows (spread over threads) the same; NaN stays
 * NaN, +inf and large gates give gate * up, very negative gates give ~0. */
Test(kernels, swiglu_is_within_4_ulp_of_the_exact_silu)
{
    kern_backend *be = kern_cpu_create(2);
    const size_t n = 200003;
    float *g = malloc(n * sizeof(float)), *u = malloc(n * sizeof(float)), *o = malloc(n * sizeof(float));
    uint32_t s = 11;
    for (size_t i = 0; i < n; i++) {
        g[i] = -87.0f + 174.0f * (float)i / (float)n;
        u[i] = test_frand(&s) * 2.0f;
    }
    for (int k = 0; k < 2; k++) {
        const size_t len = k ? n : 5631; /* one decode row, then a prompt's worth */
        cr_assert_eq(be->glu(be, GGUF_ACT_SILU, g, u, len, o), KERN_OK);
        for (size_t i = 0; i < len; i++) {
            const double ref = (double)g[i] / (1.0 + exp(-(double)g[i])) * u[i];
            cr_assert_leq(fabs(o[i] - ref), 4 * 0x1p-23 * fabs(ref) + 1e-37, "silu(%.9g) * %.9g = %.9g, exact %.9g", g[i],
                          u[i], o[i], ref);
        }
    }
    /* the nine special gates three times over (25 values): through the 16-lane, the 8-lane and the scalar code */
    const float specials[9] = { NAN, INFINITY, 90.0f, 20.0f, -87.5f, -95.0f, -200.0f, 0.0f, 1.0f };
    float sg[25], su[25], so[25];
    for (int i = 0; i < 25; i++) {
        sg[i] = specials[i % 9];
        su[i] = i % 9 == 8 ? NAN : 1.5f;
    }
    cr_assert_eq(be->glu(be, GGUF_ACT_SILU, sg, su, 25, so), KERN_OK);
    for (int base = 0; base < 25; base += 9) {
        const float *v = so + base;
        cr_assert(isnan(v[0]), "a NaN gate gives NaN (value %d)", base);
        cr_assert(isinf(v[1]) && v[1] > 0, "+inf gate: %g", v[1]);
        cr_assert_float_eq(v[2], 90.0f * 1.5f, 0, "large gate: gate * up");
        if (base + 3 < 25)
            cr_assert_float_eq(v[3], 20.0f / (1.0f + expf(-20.0f)) * 1.5f, 1e-5);
        for (int i = 4; i < 7 && base + i < 25; i++)
            cr_assert_leq(fabsf(v[i]), 1e-30f, "silu(%g) = %g, ~0", sg[base + i], v[i]);
        if (base + 7 < 25)
            cr_assert_eq(v[7], 0.0f);
        if (base + 8 < 25)
            cr_assert(isnan(v[8]), "a NaN up gives NaN");
    }
    /* Every vector width computes silu.c's e^x with the same float operations: each value bit for bit this
     * scalar statement of them (the scalar fallback, GGUFSCOPE_SIMD=scalar, uses libm's expf instead). */
    if (strcmp(quant_simd_level(), "scalar") != 0)
        for (size_t i = 0; i < n; i += 7) {
            const float x = fminf(88.0f, fmaxf(-87.0f, -g[i]));
            const float k = nearbyintf(x * 1.44269504088896341f);
            const float r = fmaf(-k, 1.42860682030941723e-6f, fmaf(-k, 0.693145751953125f, x));
            const float taylor[8] = { 1.0f / 5040.0f, 1.0f / 720.0f, 1.0f / 120.0f, 1.0f / 24.0f,
                                      1.0f / 6.0f,    0.5f,           1.0f,           1.0f };
            float p = taylor[0];
            for (int j = 1; j < 8; j++)
                p = fmaf(p, r, taylor[j]);
            const float e = p * ldexpf(1.0f, (int)k), want = g[i] / (1.0f + e) * u[i];
            cr_assert(o[i] == want, "value %zu: silu(%.9g) * %.9g = %.9g, the e^x arithmetic gives %.9g", i, g[i],
                      u[i], o[i], want);
        }
    free(g);
    free(u);
    free(o);
    be->destroy(be);
}

Test(kernels, embed_rejects_out_of_range_tokens)
{
    kern_backend *be = kern_cpu_create(1);
    uint8_t *buf;
    gguf_tensor t = make_tensor(GGML_TYPE_Q8_0, 32, 4, &buf);
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
