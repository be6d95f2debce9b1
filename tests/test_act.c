/* quant/'s --numerics ggml products: the integer dots that multiply activations rounded as llama.cpp's CPU backend
 * rounds them (test_act_rounding.c) with weight rows, and the prompt products over 8-row panels, each held to the
 * decoded product or to the dots. */
#include "quant.h"
#include "row_kernels.h"
#include "random_blocks.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* nt activation rows (xa, arb bytes apart) as kernel k reads them: the rows themselves, or the rows its prep
 * rewrote (into a buffer for the caller to free, *stride bytes apart). */
static const uint8_t *act_rows_for(const cpu_act_kernel *k, const uint8_t *xa, uint64_t arb, int nt, int64_t n,
                                   uint8_t **owned, uint64_t *stride)
{
    *owned = NULL, *stride = arb;
    if (!k->prep)
        return xa;
    *stride = (k->prep_bytes(n) + 63) / 64 * 64;
    *owned = aligned_alloc(64, *stride * (uint64_t)nt);
    for (int t = 0; t < nt; t++)
        k->prep(xa + (uint64_t)t * arb, *owned + (uint64_t)t * *stride, n);
    return *owned;
}

/* One weight row . one activation row through kernel k. */
static float act_dot(const cpu_act_kernel *k, const uint8_t *w, const uint8_t *xa, int64_t n)
{
    uint8_t *owned;
    uint64_t stride;
    float got;
    k->dot(w, act_rows_for(k, xa, 0, 1, n, &owned, &stride), n, &got);
    free(owned);
    return got;
}

/* A 256-value block's integers against the Q8_K block ab, recovered from the row decoder: s = sum of k_i a_i, k_i
 * the weight's integer (its scale times its quant, Q3_K's -4 and Q6_K's -32 included), and for the types with mins
 * (Q2_K, Q4_K, Q5_K) m = sum of m_i a_i, m_i the min of value i's group; k_i from the block with dmin set to 0
 * (w_i = d k_i within two roundings, |k_i| < 2^13: rint(w_i / d) is k_i), m_i from it with d set to 0 and dmin to 1
 * (w_i = -m_i exactly). Also the block's d and dmin (0 without mins). */
static void block_integers(uint32_t type, const uint8_t *block, const uint8_t *ab, int64_t *s, int64_t *m, float *d,
                           float *dmin)
{
    const gguf_type_traits *tt = gguf_type_traits_of(type);
    /* where each block's f16 d and dmin are (ggml's block_q2_K .. block_iq4_xs); -1: no dmin */
    const int d_at = type == GGUF_TENSOR_Q2_K   ? 80
                     : type == GGUF_TENSOR_Q3_K ? 108
                     : type == GGUF_TENSOR_Q6_K ? 208
                                                : 0;
    const int dmin_at = type == GGUF_TENSOR_Q2_K ? 82 : type == GGUF_TENSOR_Q4_K || type == GGUF_TENSOR_Q5_K ? 2 : -1;
    float wd[256];
    uint8_t blk[256];
    uint16_t h;
    cr_assert_leq(tt->type_size, sizeof blk);
    memcpy(blk, block, tt->type_size);
    memcpy(&h, blk + d_at, 2);
    *d = quant_f16_to_f32(h), *dmin = 0.0f, *s = 0, *m = 0;
    if (dmin_at >= 0) {
        memcpy(&h, blk + dmin_at, 2);
        *dmin = quant_f16_to_f32(h);
        memset(blk + dmin_at, 0, 2);
    }
    cr_assert_eq(quant_dequantize_row(type, blk, wd, 256), QUANT_OK);
    for (int i = 0; i < 256; i++)
        *s += (int64_t)lrint((double)wd[i] / *d) * (int8_t)ab[4 + i];
    if (dmin_at >= 0) {
        const uint16_t one = 0x3c00;
        memset(blk + d_at, 0, 2);
        memcpy(blk + dmin_at, &one, 2);
        cr_assert_eq(quant_dequantize_row(type, blk, wd, 256), QUANT_OK);
        for (int i = 0; i < 256; i++)
            *m -= (int64_t)wd[i] * (int8_t)ab[4 + i];
    }
}

/* llama.cpp's tiled K-quant product of one row (ggml-cpu/tiled/tiled-kernel.cpp, from CPU_TILED_MIN_TOKENS tokens
 * on) stated in scalar code: per block r = fma(-dmin, m, s * d) and acc = fma(r, d_a, acc), block after block, with
 * s and m the block's integers (block_integers). */
static float tiled_reference(uint32_t type, const uint8_t *w, const uint8_t *xa, int64_t n)
{
    const gguf_type_traits *tt = gguf_type_traits_of(type);
    float acc = 0.0f;
    for (int64_t b = 0; b < n / 256; b++) {
        const uint8_t *ab = xa + (size_t)b * 292;
        int64_t s, m;
        float d, dmin, da;
        block_integers(type, w + (size_t)b * tt->type_size, ab, &s, &m, &d, &dmin);
        memcpy(&da, ab, 4);
        acc = fmaf(fmaf(-dmin, (float)m, (float)s * d), da, acc);
    }
    return acc;
}

/* Every integer dot, scalar and at every SIMD level, against the weights and the rounded activations
 * decoded by the row decoders and multiplied in double; for Q4_1 and Q5_1 the min term is m * s, with
 * s as Q8_1 stores it (f16), where the decoded product would have m * d * sum(q). */
Test(act, integer_dots_equal_the_decoded_product_at_every_level)
{
    const uint32_t types[] = { GGUF_TENSOR_Q4_0, GGUF_TENSOR_Q4_1, GGUF_TENSOR_Q5_0, GGUF_TENSOR_Q5_1,
                               GGUF_TENSOR_Q8_0, GGUF_TENSOR_IQ4_NL, GGUF_TENSOR_Q2_K, GGUF_TENSOR_Q3_K,
                               GGUF_TENSOR_Q4_K, GGUF_TENSOR_Q5_K, GGUF_TENSOR_Q6_K, GGUF_TENSOR_IQ4_XS,
                               GGUF_TENSOR_MXFP4, GGUF_TENSOR_TQ1_0, GGUF_TENSOR_TQ2_0, GGUF_TENSOR_IQ3_S,
                               GGUF_TENSOR_IQ3_XXS, GGUF_TENSOR_IQ2_XXS, GGUF_TENSOR_IQ2_XS, GGUF_TENSOR_IQ2_S,
                               GGUF_TENSOR_IQ1_S, GGUF_TENSOR_IQ1_M, GGUF_TENSOR_NVFP4 };
    const quant_impl impls[] = { QUANT_IMPL_SCALAR, QUANT_IMPL_AVX2, QUANT_IMPL_BEST };
    int checked = 0, dot4_checked = 0;
    for (size_t k = 0; k < sizeof types / sizeof types[0]; k++) {
        const uint32_t type = types[k], at = quant_act_type(type);
        const gguf_type_traits *tt = gguf_type_traits_of(type);
        /* 7 blocks: the VNNI forms' last pair of blocks holds one, and ASan sees a read past the row */
        const size_t n_blocks = 7, n = n_blocks * tt->block_size;
        uint8_t *raw = malloc(n_blocks * tt->type_size), *xa = malloc(quant_act_row_bytes(at, (int64_t)n));
        float *w = malloc(n * 4), *x = malloc(n * 4), *xd = malloc(n * 4);
        for (int row = 0; row < 8; row++) {
            for (size_t i = 0; i < n_blocks; i++)
                test_random_block(type, raw + i * tt->type_size, tt->type_size);
            for (size_t i = 0; i < n; i++)
                x[i] = (float)((int)(test_rnd() % 20001) - 10000) / 997.0f;
            cr_assert_eq(quant_act_quantize(at, x, xa, (int64_t)n), QUANT_OK);
            quant_dequantize_row(type, raw, w, (int64_t)n);
            quant_dequantize_row(at, xa, xd, (int64_t)n);
            double ref = 0, mag = 0;
            for (size_t i = 0; i < n; i++) {
                ref += (double)w[i] * xd[i];
                mag += fabs((double)w[i] * xd[i]);
            }
            /* Q4_1 and Q5_1: each block's min times Q8_1's f16 sum, not times the rounded quants' sum (the dots
             * below, ggml's, hold quant_act_sum_correction to that; 0 for the other types) */
            ref += quant_act_sum_correction(type, raw, xa, (int64_t)n);
            float avx2_got = 0;
            for (size_t p = 0; p < 3; p++) {
                cpu_act_kernel k = cpu_act_dot_function(type, impls[p]);
                cr_assert_not_null(k.dot, "%s has no integer dot", tt->name);
                const float got = act_dot(&k, raw, xa, (int64_t)n);
                cr_assert(isfinite(ref), "%s: random blocks gave a non-finite reference", tt->name);
                cr_assert_leq(fabs(got - ref), 2e-6 * mag + 1e-30, "%s impl %zu row %d: %.9g, reference %.9g",
                              tt->name, p, row, got, ref);
                /* the AVX2 dots add up as ggml's vec_dot does, and the VNNI ones as the AVX2 ones */
                if (impls[p] == QUANT_IMPL_AVX2)
                    avx2_got = got;
                else if (impls[p] == QUANT_IMPL_BEST && strcmp(quant_simd_level(), "scalar") != 0)
                    cr_assert_eq(got, avx2_got, "%s row %d: %.9g at the best level, %.9g with AVX2", tt->name, row,
                                 got, avx2_got);
                if (k.dot4) { /* the same activations as the 2nd of 4 rows: the same value */
                    const uint64_t arb = quant_act_row_bytes(at, (int64_t)n);
                    uint8_t *four = calloc(4, arb), *owned;
                    memcpy(four + arb, xa, arb);
                    uint64_t stride;
                    const uint8_t *rows = act_rows_for(&k, four, arb, 4, (int64_t)n, &owned, &stride);
                    float out[4];
                    k.dot4(raw, rows, stride, (int64_t)n, out);
                    cr_assert_eq(out[1], got, "%s: the 4-row kernel's row gives %.9g, the 1-row %.9g", tt->name,
                                 out[1], got);
                    cr_assert_eq(out[0], 0.0f);
                    free(four), free(owned);
                    dot4_checked++;
                }
            }
        }
        free(raw), free(xa), free(w), free(x), free(xd);
        checked++;
    }
    cr_assert_eq(checked, 23);
    if (strcmp(quant_simd_level(), "scalar") != 0)
        cr_assert_geq(dot4_checked, 13 * 8 * 2, "a 4-row kernel is missing"); /* every type, AVX2 and best level */
    cr_assert_null(cpu_act_dot_function(GGUF_TENSOR_F16, QUANT_IMPL_BEST).dot, "F16 multiplies its rounded values");
    cr_assert_eq(quant_act_type(GGUF_TENSOR_F16), GGUF_TENSOR_F16);
    cr_assert_eq(quant_act_type(GGUF_TENSOR_Q4_1), GGUF_TENSOR_Q8_1);
    cr_assert_eq(quant_act_type(GGUF_TENSOR_IQ2_XXS), GGUF_TENSOR_Q8_K);
}

/* llama.cpp's own dots (scripts/llama-vec-dot-reference.c: libggml-cpu's vec_dot on ggml's quantizations of random
 * rows, -128 activations among them) of the types whose x86 forms keep eight int32 lanes (act_dot_lanes.c: the
 * ternary, IQ3, IQ2 and IQ1 types against Q8_K, NVFP4 against Q8_0): ours bit for bit, at the AVX2 level and the
 * best. */
Test(act, lanes_dots_equal_llama_cpps_vec_dot)
{
    FILE *f = fopen("tests/data/llama_cpp_vec_dot.bin", "rb");
    cr_assert(f, "tests/data/llama_cpp_vec_dot.bin is missing");
    char magic[8];
    uint32_t n_types = 0;
    cr_assert(fread(magic, 1, 8, f) == 8 && memcmp(magic, "VECDOT01", 8) == 0 && fread(&n_types, 4, 1, f) == 1);
    int checked = 0;
    for (uint32_t k = 0; k < n_types; k++) {
        uint32_t h[5]; /* type, n, rows, weight row bytes, activation row bytes */
        cr_assert_eq(fread(h, 4, 5, f), 5);
        const gguf_type_traits *tt = gguf_type_traits_of(h[0]);
        cr_assert(h[3] <= 1024 && h[4] <= 1024 && h[3] == tt->type_size * h[1] / tt->block_size);
        for (uint32_t r = 0; r < h[2]; r++) {
            uint8_t w[1024], a[1024];
            float want;
            cr_assert(fread(w, 1, h[3], f) == h[3] && fread(a, 1, h[4], f) == h[4] && fread(&want, 4, 1, f) == 1);
            const quant_impl impls[2] = { QUANT_IMPL_AVX2, QUANT_IMPL_BEST };
            for (int p = 0; p < 2 && strcmp(quant_simd_level(), "scalar") != 0; p++) {
                const cpu_act_kernel kd = cpu_act_dot_function(h[0], impls[p]);
                cr_assert_not_null(kd.dot, "%s has no integer dot", gguf_type_traits_of(h[0])->name);
                float got;
                kd.dot(w, a, (int64_t)h[1], &got);
                cr_assert_eq(got, want, "%s row %u impl %d: %.9g, llama.cpp's %.9g", gguf_type_traits_of(h[0])->name, r,
                             p, got, want);
            }
            checked++;
        }
    }
    fclose(f);
    cr_assert_eq(checked, 10 * 8);
}

/* Each activation row's sums of 16 quants: Q8_K's bsums as stored, Q8_0 / Q8_1 summed. */
Test(act, sums_of_16_are_the_quants_sums)
{
    const uint32_t types[] = { GGUF_TENSOR_Q8_0, GGUF_TENSOR_Q8_1, GGUF_TENSOR_Q8_K };
    const int64_t n = 512;
    float x[512];
    for (int i = 0; i < n; i++)
        x[i] = (float)((int)(test_rnd() % 2001) - 1000) / 37.0f;
    for (size_t k = 0; k < 3; k++) {
        const gguf_type_traits *tr = gguf_type_traits_of(types[k]);
        uint8_t *q = malloc(quant_act_row_bytes(types[k], n));
        float back[512];
        int16_t sums[32];
        cr_assert_eq(quant_act_quantize(types[k], x, q, n), QUANT_OK);
        cr_assert_eq(quant_act_sums16(types[k], q, n, sums), QUANT_OK);
        cr_assert_eq(quant_dequantize_row(types[k], q, back, n), QUANT_OK);
        for (int g = 0; g < n / 16; g++) {
            /* the quants themselves: the decoded values divided by the block's d */
            const uint8_t *blk = q + (uint64_t)(16 * g / (int)tr->block_size) * tr->type_size;
            float d;
            if (types[k] == GGUF_TENSOR_Q8_K)
                memcpy(&d, blk, 4);
            else {
                uint16_t h;
                memcpy(&h, blk, 2);
                d = quant_f16_to_f32(h);
            }
            long s = 0;
            for (int j = 0; j < 16; j++)
                s += lrintf(back[16 * g + j] / d);
            cr_assert_eq(sums[g], s, "%s group %d: %d, the quants sum to %ld", tr->name, g, sums[g], s);
        }
        free(q);
    }
    int16_t s[2];
    cr_assert_eq(quant_act_sums16(GGUF_TENSOR_F16, x, 32, s), QUANT_E_UNSUPPORTED);
    cr_assert_eq(quant_act_sums16(GGUF_TENSOR_Q8_0, x, 48, s), QUANT_E_SHAPE);
}

/* The prompt products: a whole panel (8 rows, or 16 with VNNI), 13 and 5 rows (a matrix's last panel), times
 * 1..9 activation rows (every remainder of the 4-token step), equal to each row's integer dot up to the f32 order of adding blocks. */
Test(act, panel_products_equal_the_integer_dots)
{
    const uint32_t types[] = { GGUF_TENSOR_Q4_0, GGUF_TENSOR_Q4_1, GGUF_TENSOR_Q5_0, GGUF_TENSOR_Q5_1,
                               GGUF_TENSOR_Q8_0, GGUF_TENSOR_IQ4_NL, GGUF_TENSOR_Q2_K, GGUF_TENSOR_Q3_K,
                               GGUF_TENSOR_Q4_K, GGUF_TENSOR_Q5_K, GGUF_TENSOR_Q6_K, GGUF_TENSOR_IQ4_XS };
    if (!cpu_act_gemm_function(GGUF_TENSOR_Q4_0, QUANT_IMPL_BEST, 9).pack) {
        cr_log_warn("no panel products at SIMD level %s: skipped", quant_simd_level());
        cr_assert_null(cpu_act_gemm_function(GGUF_TENSOR_Q4_K, QUANT_IMPL_BEST, 9).multiply);
        return;
    }
    int checked = 0;
    for (size_t k = 0; k < sizeof types / sizeof types[0]; k++) {
        const uint32_t type = types[k], at = quant_act_type(type);
        const gguf_type_traits *tt = gguf_type_traits_of(type);
        const int64_t n = tt->block_size == 256 ? 512 : 192;
        const uint64_t rb = (uint64_t)n / tt->block_size * tt->type_size, arb = quant_act_row_bytes(at, n);
        const int T = 9;
        enum { R = 16 }; /* the most rows a panel holds */
        uint8_t *w = malloc(R * rb), *xa = malloc(T * arb);
        int16_t *sums = malloc((size_t)T * (size_t)(n / 16) * sizeof(int16_t));
        float *x = malloc((size_t)n * sizeof(float)), y[9 * R];
        /* row 2 saturated and tokens 5 and 6 all +-127: the largest 16-bit partial sums the kernels make */
        for (uint64_t i = 0; i < R * rb; i += tt->type_size)
            (i / rb == 2 || i / rb == 11 ? test_saturated_block : test_random_block)(type, w + i, tt->type_size);
        for (int t = 0; t < T; t++) {
            for (int64_t i = 0; i < n; i++)
                x[i] = t == 5 ? 1.0f : t == 6 ? -1.0f
                                             : (float)((int)(test_rnd() % 20001) - 10000) / 997.0f * (t == 3 ? 1e-3f : 1.0f);
            cr_assert_eq(quant_act_quantize(at, x, xa + t * arb, n), QUANT_OK);
            cr_assert_eq(quant_act_sums16(at, xa + t * arb, n, sums + t * (n / 16)), QUANT_OK);
        }
        const cpu_act_kernel dot = cpu_act_dot_function(type, QUANT_IMPL_SCALAR);
        float *wd = malloc((size_t)n * sizeof(float)), *xd = malloc((size_t)n * sizeof(float)), first[9 * R];
        /* QUANT_IMPL_AVX2 is the maddubs form; BEST is the VNNI one where the CPU has AVX-512 VNNI */
        const quant_impl impls[] = { QUANT_IMPL_AVX2, QUANT_IMPL_BEST };
        for (int p = 0; p < 2; p++) {
            /* each count of tokens asks for its own product: from CPU_TILED_MIN_TOKENS on, the tiled kinds */
            const int rows = cpu_act_gemm_function(type, impls[p], 1).rows;
            cr_assert(rows == 8 || rows == 16, "%s: a panel of %d rows", tt->name, rows);
            /* all rows, then (a matrix's last panel) 13 with 16-row panels, and 5: with 16, only the first half */
            const int row_counts[] = { rows, 13, 5 };
            for (int rc = 0; rc < 3; rc++)
                for (int nt = 1; nt <= T; nt++) {
                    const int nr = row_counts[rc];
                    if (nr > rows)
                        break;
                    const cpu_act_gemm g = cpu_act_gemm_function(type, impls[p], nt);
                    cr_assert_not_null(g.pack, "%s has no panel product for %d tokens", tt->name, nt);
                    cr_assert_eq(g.rows, rows);
                    void *panel = malloc(g.panel_bytes(n));
                    for (int i = 0; i < 9 * R; i++)
                        y[i] = -1e30f; /* what must stay: nothing past row nr or token nt is written */
                    g.pack(w, rb, nr, n, panel);
                    g.multiply(panel, xa, arb, sums, nt, n, y, R, nr);
                    free(panel);
                    for (int t = 0; t < T; t++)
                        for (int r = 0; r < R; r++) {
                            if (t >= nt || r >= nr) {
                                cr_assert_eq(y[t * R + r], -1e30f, "%s: row %d token %d written", tt->name, r, t);
                                continue;
                            }
                            const float want = act_dot(&dot, w + r * rb, xa + t * arb, n);
                            quant_dequantize_row(type, w + r * rb, wd, n);
                            quant_dequantize_row(at, xa + t * arb, xd, n);
                            double mag = 0;
                            for (int64_t i = 0; i < n; i++)
                                mag += fabs((double)wd[i] * xd[i]);
                            cr_assert_leq(fabs((double)y[t * R + r] - want), 2e-6 * mag + 1e-30,
                                          "%s impl %d rows %d tokens %d: row %d token %d gives %.9g, the dot %.9g",
                                          tt->name, p, nr, nt, r, t, y[t * R + r], want);
                        }
                }
            /* the types llama.cpp multiplies with vec_dot below CPU_TILED_MIN_TOKENS tokens (7 here): bit for bit the
             * AVX2 1-row dot, which adds as vec_dot does; from there on the 256-value ones follow the tiled kernel's
             * statement above (9 tokens, the last call's). Q2_K where llama.cpp does not repack it: an AVX2 build. */
            const bool repacked_q2_k =
                type == GGUF_TENSOR_Q2_K && impls[p] == QUANT_IMPL_BEST && !strcmp(quant_simd_level(), "avx512");
            const bool tiled = tt->block_size == 256 && type != GGUF_TENSOR_Q4_K && !repacked_q2_k;
            const bool vec_dot = tiled || type == GGUF_TENSOR_Q8_0 || type == GGUF_TENSOR_Q5_0 ||
                                 type == GGUF_TENSOR_Q4_1 || type == GGUF_TENSOR_Q5_1;
            const cpu_act_gemm g7 = cpu_act_gemm_function(type, impls[p], 7),
                                 g9 = cpu_act_gemm_function(type, impls[p], 9);
            cr_assert(g9.llama_cpp_order, "%s: llama.cpp's order from 9 tokens", tt->name);
            cr_assert_eq(g7.llama_cpp_order, type != GGUF_TENSOR_Q2_K || repacked_q2_k, "%s: 7 tokens", tt->name);
            if (vec_dot && g7.llama_cpp_order) {
                const cpu_act_kernel d2 = cpu_act_dot_function(type, QUANT_IMPL_AVX2);
                void *panel = malloc(g7.panel_bytes(n));
                float few[7 * R];
                g7.pack(w, rb, 5, n, panel);
                g7.multiply(panel, xa, arb, sums, 7, n, few, R, 5);
                free(panel);
                for (int t = 0; t < 7; t++)
                    for (int r = 0; r < 5; r++) {
                        const float want = act_dot(&d2, w + r * rb, xa + t * arb, n);
                        cr_assert_eq(few[t * R + r], want, "%s impl %d row %d token %d of 7: %.9g, the AVX2 dot %.9g",
                                     tt->name, p, r, t, few[t * R + r], want);
                    }
            }
            for (int t = 0; t < T && tiled; t++)
                for (int r = 0; r < 5; r++) {
                    const float want = tiled_reference(type, w + r * rb, xa + t * arb, n);
                    cr_assert_eq(y[t * R + r], want, "%s impl %d row %d token %d of 9: %.9g, the tiled order %.9g",
                                 tt->name, p, r, t, y[t * R + r], want);
                }
            /* the last call (5 rows, all tokens): the same integers and f32 order at both levels (but Q2_K, repacked
             * by llama.cpp's AVX-512 build, not by its AVX2 one) */
            if (p == 0)
                memcpy(first, y, sizeof first);
            else if (!repacked_q2_k)
                cr_assert_eq(memcmp(first, y, sizeof first), 0, "%s: the AVX2 and best-level products differ",
                             tt->name);
        }
        free(w), free(xa), free(sums), free(x), free(wd), free(xd);
        checked++;
    }
    cr_assert_eq(checked, 12);
    cr_assert_null(cpu_act_gemm_function(GGUF_TENSOR_F16, QUANT_IMPL_BEST, 9).pack,
                   "F16 multiplies its rounded values");
}

/* llama.cpp's GEMV for the types it repacks (ggml-cpu/arch/x86/repack.cpp: gemv_q4_b32_8x8_q8_0_lut_avx,
 * ggml_gemv_q4_K_8x8_q8_K, ggml_gemv_q2_K_8x8_q8_K), stated in scalar code for one row. Q4_0, IQ4_NL, MXFP4: per
 * 32-value block the integer s = sum of q_i a_i (q_i the signed quant, recovered as rint(w_i / d): w_i is d q_i
 * exactly; MXFP4's d is 2^(e - 128), ggml's GGML_E8M0_TO_FP32_HALF),
 * acc = fma((float)s, d * d_a, acc), block after block. Q4_K, Q2_K: per 256-value block acc = fma((float)s, d * d_a,
 * acc) and accm = fma((float)m, dmin * d_a, accm), s and m the block's integers (block_integers); then acc - accm. */
static float gemv_reference(uint32_t type, const uint8_t *w, const uint8_t *xa, int64_t n)
{
    float acc = 0.0f, accm = 0.0f;
    if (type == GGUF_TENSOR_Q4_K || type == GGUF_TENSOR_Q2_K) {
        for (int64_t b = 0; b < n / 256; b++) {
            const uint8_t *ab = xa + (size_t)b * 292;
            int64_t s, m;
            float d, dmin, da;
            block_integers(type, w + (size_t)b * gguf_type_traits_of(type)->type_size, ab, &s, &m, &d, &dmin);
            memcpy(&da, ab, 4);
            acc = fmaf((float)s, d * da, acc);
            accm = fmaf((float)m, dmin * da, accm);
        }
        return acc - accm;
    }
    float wd[32];
    const size_t block_bytes = gguf_type_traits_of(type)->type_size;
    for (int64_t b = 0; b < n / 32; b++) {
        const uint8_t *blk = w + (size_t)b * block_bytes, *ab = xa + (size_t)b * 34;
        uint16_t h;
        memcpy(&h, blk, 2);
        const float d = type == GGUF_TENSOR_MXFP4 ? ldexpf(1.0f, (int)blk[0] - 128) : quant_f16_to_f32(h);
        memcpy(&h, ab, 2);
        const float da = quant_f16_to_f32(h);
        cr_assert_eq(quant_dequantize_row(type, blk, wd, 32), QUANT_OK);
        int32_t sum = 0;
        for (int i = 0; i < 32; i++)
            sum += (int32_t)lrint((double)wd[i] / d) * (int8_t)ab[2 + i];
        acc = fmaf((float)sum, d * da, acc);
    }
    return acc;
}

/* Fewer than 4 tokens of Q4_0, IQ4_NL, MXFP4 and Q4_K (the types llama.cpp repacks on every x86 build), and of Q2_K on the
 * AVX-512 level (its AVX-512 build repacks it too), in its GEMV's order, at both levels: every row count up to the
 * kernel's, rows of an odd number of blocks (the last pair half empty) and an even one, saturated rows among them;
 * nothing past nr written. */
Test(act, repacked_types_take_llama_cpps_gemv_order)
{
    const uint32_t types[] = { GGUF_TENSOR_Q4_0, GGUF_TENSOR_IQ4_NL, GGUF_TENSOR_MXFP4, GGUF_TENSOR_Q4_K,
                               GGUF_TENSOR_Q2_K };
    const quant_impl impls[] = { QUANT_IMPL_AVX2, QUANT_IMPL_BEST };
    if (!cpu_act_dot_function(GGUF_TENSOR_Q4_0, QUANT_IMPL_AVX2).gemv) {
        cr_log_warn("no GEMV forms on this CPU (no AVX2): skipped");
        return;
    }
    int checked = 0;
    for (size_t ti = 0; ti < sizeof types / sizeof types[0]; ti++)
        for (int p = 0; p < 2; p++) {
            const uint32_t type = types[ti], at = quant_act_type(type);
            const gguf_type_traits *tt = gguf_type_traits_of(type);
            const cpu_act_kernel k = cpu_act_dot_function(type, impls[p]);
            const bool avx512 = impls[p] == QUANT_IMPL_BEST && !strcmp(quant_simd_level(), "avx512");
            if (type == GGUF_TENSOR_Q2_K && !avx512) {
                cr_assert_null(k.gemv, "Q2_K impl %d: vec_dot's order, as llama.cpp's AVX2 build", p);
                continue;
            }
            cr_assert_not_null(k.gemv, "%s impl %d", tt->name, p);
            cr_assert(k.gemv_rows == 8 || k.gemv_rows == 16);
            enum { R = 16 };
            for (int64_t blocks = 3; blocks <= 4; blocks++) { /* an odd and an even count: 7 and 8 of 32 values */
                const int64_t n = (tt->block_size == 32 ? blocks + 4 : blocks) * (int64_t)tt->block_size;
                const uint64_t rb = (uint64_t)n / tt->block_size * tt->type_size;
                uint8_t *w = malloc(R * rb), *xa = malloc(quant_act_row_bytes(at, n));
                float x[1024], out[R + 1];
                for (uint64_t i = 0; i < R * rb; i += tt->type_size)
                    (i / rb == 3 ? test_saturated_block : test_random_block)(type, w + i, tt->type_size);
                for (int64_t i = 0; i < n; i++)
                    x[i] = (float)((int)(test_rnd() % 20001) - 10000) / 997.0f;
                cr_assert_eq(quant_act_quantize(at, x, xa, n), QUANT_OK);
                uint8_t *owned;
                uint64_t stride;
                const uint8_t *a = act_rows_for(&k, xa, 0, 1, n, &owned, &stride);
                for (int nr = 1; nr <= k.gemv_rows; nr++) {
                    for (int r = 0; r <= R; r++)
                        out[r] = -1e30f;
                    k.gemv(w, rb, nr, a, n, out);
                    for (int r = 0; r <= R; r++) {
                        if (r >= nr) {
                            cr_assert_eq(out[r], -1e30f, "%s: row %d of %d written", gguf_type_traits_of(type)->name,
                                         r, nr);
                            continue;
                        }
                        const float want = gemv_reference(type, w + r * rb, xa, n);
                        cr_assert_eq(out[r], want, "%s impl %d n %lld rows %d: row %d gives %.9g, the GEMV order %.9g",
                                     gguf_type_traits_of(type)->name, p, (long long)n, nr, r, out[r], want);
                    }
                }
                free(owned), free(w), free(xa);
            }
            checked++;
        }
    cr_assert_eq(checked, strcmp(quant_simd_level(), "avx512") ? 8 : 9);
    cr_assert_null(cpu_act_dot_function(GGUF_TENSOR_Q8_0, QUANT_IMPL_AVX2).gemv, "Q8_0: vec_dot's order");
}
