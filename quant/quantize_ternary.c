/* f32 -> TQ1_0 and TQ2_0 as ggml's reference quantizers round (quantize_row_tq1_0_ref, quantize_row_tq2_0_ref in
 * ggml-quants.c): each block of 256 scaled by its largest magnitude d (an f16), every value rounded to -1, 0 or 1 of
 * it (lroundf: halves away from zero) and stored as its digit 0, 1, 2. */
#include "blocks.h"

#include <math.h>


/* the block's d (max |x|, as ggml keeps it before the f16 rounding) and the digit of x[j] */
static float block_amax(const float *x)
{
    float amax = 0.0f;
    for (int j = 0; j < QK_K; j++)
        amax = fmaxf(amax, fabsf(x[j]));
    return amax;
}

static int digit(float x, float id)
{
    return (int)lroundf(x * id) + 1;
}

/* TQ2_0: qs[64] (byte j + m holds the digits of values 128 (j / 32) + m + 32 n, n = 0..3, at bits 2n), d */
void quant_quantize_tq2_0(const float *x, uint8_t *b, int64_t n)
{
    for (; n > 0; n -= QK_K, x += QK_K, b += 66) {
        const float d = block_amax(x), id = d != 0.0f ? 1.0f / d : 0.0f;
        const uint16_t h = quant_f32_to_f16(d);
        memcpy(b + 64, &h, 2);
        for (int j = 0; j < 64; j += 32)
            for (int m = 0; m < 32; m++) {
                uint8_t q = 0;
                for (int k = 0; k < 4; k++)
                    q = (uint8_t)(q + ((digit(x[j * 4 + m + k * 32], id) & 3) << (2 * k)));
                b[j + m] = q;
            }
    }
}

/* Five base-3 digits (the first the most significant) as one byte: their value times 256 / 243, rounded up, which
 * the decode's multiply by 3^k and top bits take apart again. */
static uint8_t five_trits(const float *x, int stride, float id)
{
    uint8_t q = 0;
    for (int k = 0; k < 5; k++)
        q = (uint8_t)(q * 3 + digit(x[k * stride], id));
    return (uint8_t)(((uint16_t)q * 256 + (243 - 1)) / 243);
}

/* TQ1_0: qs[48] (32 bytes of five values 32 apart, then 16 of five values 16 apart), qh[4] (four values 4 apart
 * each), d */
void quant_quantize_tq1_0(const float *x, uint8_t *b, int64_t n)
{
    for (; n > 0; n -= QK_K, x += QK_K, b += 54) {
        const float d = block_amax(x), id = d != 0.0f ? 1.0f / d : 0.0f;
        const uint16_t h = quant_f32_to_f16(d);
        memcpy(b + 52, &h, 2);
        for (int m = 0; m < 32; m++)
            b[m] = five_trits(x + m, 32, id);
        for (int m = 0; m < 16; m++)
            b[32 + m] = five_trits(x + 160 + m, 16, id);
        for (int m = 0; m < 4; m++) {
            uint8_t q = 0;
            for (int k = 0; k < 4; k++)
                q = (uint8_t)(q * 3 + digit(x[240 + m + k * 4], id));
            /* (the fifth digit of these bytes is 0: 4 digits, times 3 once more) */
            q = (uint8_t)(q * 3);
            b[48 + m] = (uint8_t)(((uint16_t)q * 256 + (243 - 1)) / 243);
        }
    }
}
