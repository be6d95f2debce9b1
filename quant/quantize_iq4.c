/*
 * f32 -> IQ4_NL and IQ4_XS as llama-quantize writes them without an importance matrix (ggml-quants.c's quantize_iq4_nl
 * and quantize_iq4_xs, which ggml_quantize_chunk calls: 7 tries each side of the first scale, not the _ref functions'
 * none): each 32-value block's scale fitted to the 16 non-uniform levels (quant_kvalues_iq4nl) by weighted (x^2) least
 * squares, then every value to its nearest level. The arithmetic keeps the reference's order (quant/ is built with
 * -ffp-contract=off); test_quant holds the bytes to ggml's test vectors.
 */
#include "blocks.h"

#include <math.h>

enum { TRIES = 7 };

/* The index of the level nearest x (the lower one of two equally near), by bisection as ggml's best_index_int8. */
static int nearest_level(float x)
{
    const int8_t *v = quant_kvalues_iq4nl;
    if (x <= v[0])
        return 0;
    if (x >= v[15])
        return 15;
    int lo = 0, hi = 15;
    while (hi - lo > 1) {
        const int mid = (lo + hi) / 2;
        if (x < v[mid])
            hi = mid;
        else
            lo = mid;
    }
    return x - v[hi - 1] < v[hi] - x ? hi - 1 : hi;
}

/* The weighted (x^2) least-squares fit of the levels L gives to x over one block of 32 at inverse scale id: sum w q x
 * into *qx and sum w q^2 into *q2, the levels into L where it is not NULL. */
static void fit_at(const float *x, float id, uint8_t *L, float *qx, float *q2)
{
    float sumqx = 0, sumq2 = 0;
    for (int j = 0; j < 32; j++) {
        const int l = nearest_level(id * x[j]);
        if (L)
            L[j] = (uint8_t)l;
        const float q = quant_kvalues_iq4nl[l], w = x[j] * x[j];
        sumqx += w * q * x[j];
        sumq2 += w * q * q;
    }
    *qx = sumqx;
    *q2 = sumq2;
}

/* One block's scale: the value of largest magnitude on the outermost level, refined by the fit, then the best of the
 * 2 TRIES + 1 scales around it. 0 for an all-zero block. */
static float block_scale(const float *x, uint8_t *L)
{
    float amax = 0, max = 0;
    for (int j = 0; j < 32; j++) {
        if (fabsf(x[j]) > amax) {
            amax = fabsf(x[j]);
            max = x[j];
        }
    }
    if (amax < 1e-15f) /* ggml's GROUP_MAX_EPS */
        return 0.0f;
    float d = -max / quant_kvalues_iq4nl[0], sumqx, sumq2;
    fit_at(x, 1 / d, L, &sumqx, &sumq2);
    d = sumq2 > 0 ? sumqx / sumq2 : 0.0f;
    float best = d * sumqx;
    for (int t = -TRIES; t <= TRIES; t++) {
        fit_at(x, (t + quant_kvalues_iq4nl[0]) / max, NULL, &sumqx, &sumq2);
        if (sumq2 > 0 && sumqx * sumqx > best * sumq2) {
            d = sumqx / sumq2;
            best = d * sumqx;
        }
    }
    return d;
}

/* Each value of a block to its nearest level at inverse scale id */
static void levels_at(const float *x, float id, uint8_t *L)
{
    for (int j = 0; j < 32; j++)
        L[j] = (uint8_t)nearest_level(id * x[j]);
}

/* Two 32-value blocks' levels a byte each: value j in the low nibble of qs[j], value j + 16 in its high one. */
static void pack_nibbles(const uint8_t *L, uint8_t *qs)
{
    for (int j = 0; j < 16; j++)
        qs[j] = (uint8_t)(L[j] | L[j + 16] << 4);
}

/* IQ4_NL block (18 bytes; block_iq4_nl): d (f16) | qs[16]. Value = d levels[q]. */
void quant_quantize_iq4_nl(const float *x, uint8_t *b, int64_t n)
{
    for (; n > 0; n -= 32, x += 32, b += 18) {
        uint8_t L[32];
        const float d = block_scale(x, L);
        const uint16_t d16 = quant_f32_to_f16(d);
        memcpy(b, &d16, 2);
        levels_at(x, d ? 1 / d : 0.0f, L);
        pack_nibbles(L, b + 2);
    }
}

/*
 * IQ4_XS block (136 bytes; block_iq4_xs): d (f16) | scales_h (u16) | scales_l[4] | qs[128]. Block i of the 8 has the
 * six-bit scale s_i + 32 (its low nibble in scales_l[i / 2], low or high as i is even or odd, its top two bits at bit
 * 2 (i % 8) of scales_h); value = d s_i levels[q]. The levels are chosen at the block's scale before d is rounded to
 * f16, as the reference does.
 */
void quant_quantize_iq4_xs(const float *x, uint8_t *b, int64_t n)
{
    for (; n > 0; n -= 256, x += 256, b += 136) {
        uint8_t L[256];
        float scales[8], max_scale = 0, amax_scale = 0;
        for (int i = 0; i < 8; i++) {
            scales[i] = block_scale(x + 32 * i, L + 32 * i);
            if (fabsf(scales[i]) > amax_scale) {
                amax_scale = fabsf(scales[i]);
                max_scale = scales[i];
            }
        }
        const float d = -max_scale / 32, id = d ? 1 / d : 0.0f;
        const uint16_t d16 = quant_f32_to_f16(d);
        uint16_t scales_h = 0;
        uint8_t *scales_l = b + 4;
        memset(scales_l, 0, 4);
        for (int i = 0; i < 8; i++) {
            int l = quant_nearest_int(id * scales[i]);
            l = l < -32 ? -32 : l > 31 ? 31 : l;
            const float dl = d * l;
            levels_at(x + 32 * i, dl ? 1 / dl : 0.0f, L + 32 * i);
            l += 32;
            scales_l[i / 2] |= (uint8_t)((l & 0xf) << (i % 2 ? 4 : 0));
            scales_h |= (uint16_t)((l >> 4) << (2 * (i % 8)));
        }
        memcpy(b, &d16, 2);
        memcpy(b + 2, &scales_h, 2);
        for (int i = 0; i < 8; i++)
            pack_nibbles(L + 32 * i, b + 8 + 16 * i);
    }
}
