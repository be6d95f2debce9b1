/* f32 -> F16, BF16, Q8_0, Q5_0, Q5_1, Q4_0, rounding as ggml's reference quantizers (quantize_row_q8_0_ref,
 * quantize_row_q5_0_ref, quantize_row_q5_1_ref, quantize_row_q4_0_ref in ggml-quants.c); Q4_K and Q6_K are in
 * quantize_k.c. */
#include "blocks.h"

#include <math.h>

static void put16(uint8_t *p, uint16_t v) { memcpy(p, &v, 2); }

/* Q8_0: d = max|x| / 127, q = round(x / d) (halves away from zero). */
void quant_quantize_q8_0(const float *x, uint8_t *b, int64_t n)
{
    for (; n > 0; n -= 32, x += 32, b += 34) {
        float amax = 0.0f;
        for (int j = 0; j < 32; j++)
            amax = fmaxf(amax, fabsf(x[j]));
        const float d = amax / 127.0f, id = d != 0.0f ? 1.0f / d : 0.0f;
        put16(b, quant_f32_to_f16(d));
        for (int j = 0; j < 32; j++)
            b[2 + j] = (uint8_t)(int8_t)roundf(x[j] * id);
    }
}

/* The first of 32 values with the largest magnitude, with its sign (Q4_0 and Q5_0 map it to their lowest level). */
static float signed_absmax32(const float *x)
{
    float amax = 0.0f, max = 0.0f;
    for (int j = 0; j < 32; j++) {
        if (amax < fabsf(x[j])) {
            amax = fabsf(x[j]);
            max = x[j];
        }
    }
    return max;
}

/* Q4_0: d = (the value of largest magnitude, with its sign) / -8, so that
 * value maps to -8 exactly; q = min(15, trunc(x / d + 8.5)). */
void quant_quantize_q4_0(const float *x, uint8_t *b, int64_t n)
{
    for (; n > 0; n -= 32, x += 32, b += 18) {
        const float d = signed_absmax32(x) / -8.0f, id = d != 0.0f ? 1.0f / d : 0.0f;
        put16(b, quant_f32_to_f16(d));
        for (int j = 0; j < 16; j++) {
            const float x0 = x[j] * id, x1 = x[j + 16] * id;
            const int8_t q0 = (int8_t)(x0 + 8.5f), q1 = (int8_t)(x1 + 8.5f);
            const uint8_t a = (uint8_t)(q0 < 15 ? q0 : 15), c = (uint8_t)(q1 < 15 ? q1 : 15);
            b[2 + j] = (uint8_t)(a | c << 4);
        }
    }
}

/* MXFP4: e = floor(log2(max |x|)) - 2 + 127 as an E8M0 exponent (0 for an all-zero block), so that the largest
 * value lands near the top of E2M1's range (6 = 12 halves), each value the nearest of the 16 (the first on a tie);
 * ggml's quantize_row_mxfp4_ref.
 *   block (17 bytes): | e | qs[16]: q[j] | q[j + 16] << 4 | */
static int nearest_mxfp4(float x, float d)
{
    int best = 0;
    float best_err = fabsf((float)quant_kvalues_mxfp4[0] * d - x);
    for (int i = 1; i < 16; i++) {
        const float err = fabsf((float)quant_kvalues_mxfp4[i] * d - x);
        if (err < best_err) {
            best = i;
            best_err = err;
        }
    }
    return best;
}

void quant_quantize_mxfp4(const float *x, uint8_t *b, int64_t n)
{
    for (; n > 0; n -= 32, x += 32, b += 17) {
        float amax = 0.0f;
        for (int j = 0; j < 32; j++)
            if (amax < fabsf(x[j]))
                amax = fabsf(x[j]);
        /* through int: ggml's float-to-byte conversion wraps the way x86's does for a tiny block's negative value */
        const uint8_t e = amax > 0.0f ? (uint8_t)(int)(floorf(log2f(amax)) - 2 + 127) : 0;
        const float d = quant_e8m0_half(e);
        b[0] = e;
        for (int j = 0; j < 16; j++)
            b[1 + j] = (uint8_t)(nearest_mxfp4(x[j], d) | nearest_mxfp4(x[j + 16], d) << 4);
    }
}

/* Q5_0: as Q4_0 with 5 bits, d = (the value of largest magnitude, signed) / -16 and
 * q = min(31, trunc(x / d + 16.5)); the low 4 bits of value j and j + 16 share byte j of qs,
 * the fifth bit of value j is bit j of qh (little-endian u32, after d).
 *   block (22 bytes): | d (f16) | qh (4 bytes: bit j = q[j] >> 4) | qs[16]: q[j] & 15 | (q[j+16] & 15) << 4 | */
void quant_quantize_q5_0(const float *x, uint8_t *b, int64_t n)
{
    for (; n > 0; n -= 32, x += 32, b += 22) {
        const float d = signed_absmax32(x) / -16.0f, id = d != 0.0f ? 1.0f / d : 0.0f;
        put16(b, quant_f32_to_f16(d));
        uint32_t qh = 0;
        for (int j = 0; j < 16; j++) {
            const int8_t q0 = (int8_t)(x[j] * id + 16.5f), q1 = (int8_t)(x[j + 16] * id + 16.5f);
            const uint8_t a = (uint8_t)(q0 < 31 ? q0 : 31), c = (uint8_t)(q1 < 31 ? q1 : 31);
            b[6 + j] = (uint8_t)((a & 0x0f) | (c & 0x0f) << 4);
            qh |= (uint32_t)(a >> 4) << j | (uint32_t)(c >> 4) << (j + 16);
        }
        for (int k = 0; k < 4; k++)
            b[2 + k] = (uint8_t)(qh >> (8 * k));
    }
}

/* Q5_1 (what llama-quantize writes where Q5_K does not fit a row, e.g. the attention output of a mixture's Q4_K_M
 * with rows of 96 or 160): d = (max - min) / 31, m = min, q = trunc((x - min) / d + 0.5), laid out as Q5_0 after
 * its two scales.
 *   block (24 bytes): | d (f16) | m (f16) | qh (4 bytes: bit j = q[j] >> 4) | qs[16]: q[j] & 15 | (q[j+16] & 15) << 4 | */
void quant_quantize_q5_1(const float *x, uint8_t *b, int64_t n)
{
    for (; n > 0; n -= 32, x += 32, b += 24) {
        float min = INFINITY, max = -INFINITY;
        for (int j = 0; j < 32; j++) {
            min = x[j] < min ? x[j] : min;
            max = x[j] > max ? x[j] : max;
        }
        const float d = (max - min) / 31.0f, id = d != 0.0f ? 1.0f / d : 0.0f;
        put16(b, quant_f32_to_f16(d));
        put16(b + 2, quant_f32_to_f16(min));
        uint32_t qh = 0;
        for (int j = 0; j < 16; j++) {
            const uint8_t a = (uint8_t)((x[j] - min) * id + 0.5f), c = (uint8_t)((x[j + 16] - min) * id + 0.5f);
            b[8 + j] = (uint8_t)((a & 0x0f) | (c & 0x0f) << 4);
            qh |= (uint32_t)((a & 0x10u) >> 4) << j | (uint32_t)((c & 0x10u) >> 4) << (j + 16);
        }
        for (int k = 0; k < 4; k++)
            b[4 + k] = (uint8_t)(qh >> (8 * k));
    }
}

void quant_quantize_f32(const float *x, uint8_t *b, int64_t n) { memcpy(b, x, (size_t)n * sizeof *x); }

void quant_quantize_f16(const float *x, uint8_t *b, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        put16(b + 2 * i, quant_f32_to_f16(x[i]));
}

void quant_quantize_bf16(const float *x, uint8_t *b, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        put16(b + 2 * i, quant_f32_to_bf16(x[i]));
}

bool quant_can_quantize(uint32_t type)
{
    return quant_type_row_of(type)->quantize != NULL;
}

quant_status quant_quantize_row(uint32_t type, const float *src, void *dst, int64_t n)
{
    if (!quant_can_quantize(type))
        return QUANT_E_UNSUPPORTED;
    if (!src || !dst || n < 0)
        return QUANT_E_INVALID_ARG;
    if (n % gguf_type_traits_of(type)->block_size != 0)
        return QUANT_E_SHAPE;
    quant_type_row_of(type)->quantize(src, dst, n);
    return QUANT_OK;
}
