/* quant/'s --numerics ggml activations, rounded as llama.cpp's CPU backend rounds them (Q8_0, Q8_1, Q8_K, f16, bf16),
 * each held to its rule spelled out in plain C; the dots that multiply them are test_act.c's. */
#include "quant.h"
#include "row_kernels.h"
#include "random_blocks.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Q8_0 as ggml's AVX2 quantizer: q = round(x * 127 / amax) with ties to even (the reference quantizer
 * that llama-quantize uses rounds 2.5 to 3), d = amax / 127 stored as f16. Q8_1 adds s = d * sum(q). */
Test(act, activations_round_to_q8_0_and_q8_1_as_ggml_cpu_does)
{
    float x[32] = { 127.0f, 2.5f, 3.5f, -2.5f, -0.5f, 0.5f, 1.49f, -127.0f };
    uint8_t b[36];
    cr_assert_eq(quant_act_quantize(GGUF_TENSOR_Q8_0, x, b, 32), QUANT_OK);
    const int8_t *q = (const int8_t *)(b + 2);
    const int8_t want[8] = { 127, 2, 4, -2, 0, 0, 1, -127 };
    for (int j = 0; j < 8; j++)
        cr_assert_eq(q[j], want[j], "value %d: %g -> %d, ggml gives %d", j, x[j], q[j], want[j]);
    uint16_t d;
    memcpy(&d, b, 2);
    cr_assert_eq(quant_f16_to_f32(d), 1.0f);
    cr_assert_eq(quant_act_quantize(GGUF_TENSOR_Q8_1, x, b, 32), QUANT_OK);
    uint16_t s;
    memcpy(&s, b + 2, 2);
    cr_assert_eq(quant_f16_to_f32(s), 127.0f + 2 + 4 - 2 + 1 - 127, "s = d * sum(q)");
    cr_assert_eq(memcmp(b + 4, want, 8), 0);
    /* a zero block quantizes to zeros with d 0, not NaN */
    float z[32] = { 0 };
    cr_assert_eq(quant_act_quantize(GGUF_TENSOR_Q8_0, z, b, 32), QUANT_OK);
    for (int j = 0; j < 34; j++)
        cr_assert_eq(b[j], 0);
    cr_assert_eq(quant_act_quantize(GGUF_TENSOR_Q8_0, x, b, 31), QUANT_E_SHAPE);
}

/* Q8_K as ggml's reference: the value of largest magnitude m (with its sign) maps to -127, so d = -m / 127
 * is negative when m is positive; bsums hold the sums of each 16 quants. */
Test(act, activations_round_to_q8_k_as_ggml_does)
{
    float x[256];
    for (int j = 0; j < 256; j++)
        x[j] = (float)(j % 7) - 3.0f;
    x[5] = 127.0f; /* the largest, positive: iscale = -1 */
    x[6] = 2.5f;   /* a tie: to even */
    uint8_t b[292];
    cr_assert_eq(quant_act_quantize(GGUF_TENSOR_Q8_K, x, b, 256), QUANT_OK);
    float d;
    memcpy(&d, b, 4);
    cr_assert_eq(d, -1.0f);
    const int8_t *q = (const int8_t *)(b + 4);
    cr_assert_eq(q[5], -127);
    cr_assert_eq(q[6], -2);
    int16_t bsums[16];
    memcpy(bsums, b + 260, sizeof bsums);
    for (int g = 0; g < 16; g++) {
        int sum = 0;
        for (int j = 0; j < 16; j++) {
            cr_assert_eq(q[16 * g + j], g * 16 + j == 5 ? -127 : g * 16 + j == 6 ? -2 : -(int)x[16 * g + j]);
            sum += q[16 * g + j];
        }
        cr_assert_eq(bsums[g], sum, "bsums[%d]", g);
    }
    /* and it decodes to d * q */
    float back[256];
    cr_assert_eq(quant_dequantize_row(GGUF_TENSOR_Q8_K, b, back, 256), QUANT_OK);
    cr_assert_eq(back[5], 127.0f);
}

/* F16 and BF16 rounding of activations (vectors where the CPU has them) equals the scalar rule bit for bit on
 * every class of float: random bit patterns (NaNs, infinities, subnormals included), and known roundings:
 * f16 ties to even at 1 + 2^-11 and 2^-25, 65519 to the largest finite 65504, 65520 to infinity; bf16 ties to
 * even. 1003 values:
 * a tail past the vectors' 8 and 16. */
Test(act, f16_and_bf16_rounding_equals_the_scalar_rule)
{
    enum { N = 1003 };
    static float x[N];
    static uint16_t got[N];
    const float known[] = { 1.0f + 0x1p-11f, 1.0f + 0x3p-11f, 0x1p-25f, 0x3p-25f, 0x1p-24f, 65519.0f, 65520.0f,
                            -65504.0f, 0.0f, -0.0f, INFINITY, -INFINITY, NAN };
    const uint16_t known_f16[] = { 0x3c00, 0x3c02, 0x0000, 0x0002, 0x0001, 0x7bff, 0x7c00, 0xfbff, 0x0000, 0x8000,
                                   0x7c00, 0xfc00 };
    for (int i = 0; i < N; i++) {
        uint32_t u = test_rnd() << 16 ^ test_rnd();
        memcpy(&x[i], &u, 4);
    }
    memcpy(x + 100, known, sizeof known);
    /* bf16 ties: below the halfway point, at it with an even and an odd last bit, past it */
    const uint32_t bf16_ties[] = { 0x3f807fff, 0x3f808000, 0x3f818000, 0x3f808001 };
    const uint16_t known_bf16[] = { 0x3f80, 0x3f80, 0x3f82, 0x3f81 };
    memcpy(x + 200, bf16_ties, sizeof bf16_ties);
    const uint32_t types[] = { GGUF_TENSOR_F16, GGUF_TENSOR_BF16 };
    for (int k = 0; k < 2; k++) {
        cr_assert_eq(quant_act_quantize(types[k], x, got, N), QUANT_OK);
        for (int i = 0; i < N; i++) {
            const uint16_t want = types[k] == GGUF_TENSOR_F16 ? quant_f32_to_f16(x[i]) : quant_f32_to_bf16(x[i]);
            uint32_t bits;
            memcpy(&bits, &x[i], 4);
            cr_assert_eq(got[i], want, "%s value %d (bits %08x): %04x, the scalar rule %04x",
                         gguf_type_traits_of(types[k])->name, i, (unsigned)bits, got[i], want);
        }
    }
    for (size_t i = 0; i < sizeof known_f16 / sizeof known_f16[0]; i++)
        cr_assert_eq(quant_f32_to_f16(known[i]), known_f16[i], "f16 of %a", (double)known[i]);
    cr_assert_eq(quant_act_quantize(GGUF_TENSOR_BF16, x, got, N), QUANT_OK);
    for (int i = 0; i < 4; i++)
        cr_assert_eq(got[200 + i], known_bf16[i], "bf16 of bits %08x: %04x", (unsigned)bf16_ties[i], got[200 + i]);
    cr_assert_eq(quant_f32_to_f16(NAN) & 0x7e00, 0x7e00, "a NaN stays a quiet NaN");
}

/* The quantizers on random rows with ties, at whatever SIMD level runs: byte for byte the rules above
 * (act_quant.c), spelled out here once more in plain C. */
Test(act, quantizers_follow_the_rules_on_random_rows)
{
    enum { N = 512 };
    float x[N];
    uint8_t got[N / 256 * 292 + 64], want[sizeof got];
    for (int row = 0; row < 40; row++) {
        /* row % 4 == 0: halves exactly (ties to even with amax 127); otherwise random reals */
        for (int i = 0; i < N; i++)
            x[i] = row % 4 == 0 ? (float)((int)(test_rnd() % 255) - 127) / 2.0f
                                : (float)((int)(test_rnd() % 200001) - 100000) / 7919.0f;
        if (row % 4 == 0)
            x[17] = row % 8 ? 127.0f : -127.0f;
        for (int kind = 0; kind < 3; kind++) {
            const uint32_t at = kind == 0 ? GGUF_TENSOR_Q8_0 : kind == 1 ? GGUF_TENSOR_Q8_1 : GGUF_TENSOR_Q8_K;
            memset(want, 0, sizeof want);
            if (at == GGUF_TENSOR_Q8_K) {
                float m = 0.0f, signed_max = 0.0f;
                for (int j = 0; j < 256; j++)
                    if (fabsf(x[j]) > m)
                        m = fabsf(x[j]), signed_max = x[j];
                const float iscale = -127.0f / signed_max, d = 1.0f / iscale;
                memcpy(want, &d, 4);
                for (int j = 0; j < 256; j++) {
                    const float v = rintf(iscale * x[j]);
                    want[4 + j] = (uint8_t)(int8_t)(v > 127.0f ? 127 : (int)v);
                }
                for (int g = 0; g < 16; g++) {
                    int16_t s = 0;
                    for (int j = 0; j < 16; j++)
                        s = (int16_t)(s + (int8_t)want[4 + 16 * g + j]);
                    memcpy(want + 260 + 2 * g, &s, 2);
                }
            } else {
                float m = 0.0f;
                for (int j = 0; j < 32; j++)
                    m = fmaxf(m, fabsf(x[j]));
                const float id = m != 0.0f ? 127.0f / m : 0.0f, d = m / 127.0f;
                const int qa = at == GGUF_TENSOR_Q8_0 ? 2 : 4;
                int sum = 0;
                for (int j = 0; j < 32; j++) {
                    const int q = (int)rintf(x[j] * id);
                    want[qa + j] = (uint8_t)(int8_t)q;
                    sum += q;
                }
                uint16_t h = quant_f32_to_f16(d);
                memcpy(want, &h, 2);
                if (at == GGUF_TENSOR_Q8_1) {
                    h = quant_f32_to_f16(d * (float)sum);
                    memcpy(want + 2, &h, 2);
                }
            }
            const int64_t len = at == GGUF_TENSOR_Q8_K ? 256 : 32; /* the first block of each */
            cr_assert_eq(quant_act_quantize(at, x, got, len), QUANT_OK);
            const uint64_t bytes = quant_act_row_bytes(at, len);
            for (uint64_t j = 0; j < bytes; j++)
                cr_assert_eq(got[j], want[j], "row %d, %s byte %llu: %d, the rule gives %d (SIMD %s)", row,
                             at == GGUF_TENSOR_Q8_0 ? "Q8_0" : at == GGUF_TENSOR_Q8_1 ? "Q8_1" : "Q8_K",
                             (unsigned long long)j, got[j], want[j], quant_simd_level());
        }
    }
}
