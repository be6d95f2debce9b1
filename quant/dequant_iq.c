/*
 * i-quants and ternary types: 256-element super-blocks (layouts: ggml-common.h).
 * Values come from lattice grids (iq_grids.c) and sign bytes; the order of
 * operations follows ggml's reference dequantizers so results are bit-exact.
 *
 *   IQ2_XXS [d:f16][qs:32 x u16]             per 32: 4 grid bytes + u32 of 4x7 sign bits and a 4-bit scale
 *   IQ2_XS  [d:f16][qs:32 x u16][scales:8]   u16 = 9-bit grid index | 7-bit sign index
 *   IQ2_S   [d:f16][qs:32][signs:32][qh:8][scales:8]  10-bit grid index (2 bits from qh)
 *   IQ3_XXS [d:f16][qs:64][scales_signs:32]  two 4-value grid entries per 8 values
 *   IQ3_S   [d:f16][qs:64][qh:8][signs:32][scales:4]  9-bit grid index (1 bit from qh)
 *   IQ1_S   [d:f16][qs:32][qh:8 x u16]       11-bit grid index, 3-bit scale, delta sign
 *   IQ1_M   [qs:32][qh:16][scales:8]         f16 scale spread over the scales' top nibbles
 *   IQ4_XS  [d:f16][scales_h:u16][scales_l:4][qs:128]  6-bit scales, IQ4_NL levels
 *   TQ1_0   [qs:48][qh:4][d:f16]             5 (qs) or 4 (qh) base-3 digits per byte
 *   TQ2_0   [qs:64][d:f16]                   2-bit values q-1 in {-1,0,1}
 */
#include "blocks.h"
#include "iq_grids.h"

/* ggml's ksigns_iq2xs: 7 stored sign bits, the 8th makes the count of minus signs even. */
static inline uint8_t ksign(unsigned i)
{
    return (uint8_t)(i | ((unsigned)__builtin_parity(i) << 7));
}

/* +1 or -1 for sign bit j, by lookup: the multiply stays exactly ggml's (x * -1.f keeps a NaN's
 * sign, unlike flipping the bit), and no data-dependent branch stalls on random signs. */
static const float plus_minus[2] = { 1.f, -1.f };
static inline float sgn(uint8_t signs, int j) { return plus_minus[(signs >> j) & 1u]; }

void quant_deq_iq2_xxs(const void *src, float *y, int64_t n)
{
    for (const uint8_t *b = src; n > 0; n -= QK_K, b += 66) {
        const float d = rdf16(b);
        for (int ib = 0; ib < 8; ib++) {
            const uint8_t *q = b + 2 + 8 * ib; /* 4 grid indices, then a u32 of signs and scale */
            const uint32_t aux = rd32(q + 4);
            const float db = d * (0.5f + (float)(aux >> 28)) * 0.25f;
            for (int l = 0; l < 4; l++, y += 8) {
                const uint8_t *grid = quant_iq2xxs_grid[q[l]];
                const uint8_t signs = ksign((aux >> 7 * l) & 127);
                for (int j = 0; j < 8; j++)
                    y[j] = db * (float)grid[j] * sgn(signs, j);
            }
        }
    }
}

void quant_deq_iq2_xs(const void *src, float *y, int64_t n)
{
    for (const uint8_t *b = src; n > 0; n -= QK_K, b += 74) {
        const float d = rdf16(b);
        const uint8_t *scales = b + 66;
        for (int ib = 0; ib < 8; ib++) {
            const float db[2] = { d * (0.5f + (float)(scales[ib] & 0xf)) * 0.25f,
                                  d * (0.5f + (float)(scales[ib] >> 4)) * 0.25f };
            for (int l = 0; l < 4; l++, y += 8) {
                const uint16_t q = rd16(b + 2 + 2 * (4 * ib + l));
                const uint8_t *grid = quant_iq2xs_grid[q & 511];
                const uint8_t signs = ksign(q >> 9);
                for (int j = 0; j < 8; j++)
                    y[j] = db[l / 2] * (float)grid[j] * sgn(signs, j);
            }
        }
    }
}

void quant_deq_iq2_s(const void *src, float *y, int64_t n)
{
    for (const uint8_t *b = src; n > 0; n -= QK_K, b += 82) {
        const float d = rdf16(b);
        const uint8_t *qs = b + 2, *signs = b + 34, *qh = b + 66, *scales = b + 74;
        for (int ib = 0; ib < 8; ib++, qs += 4, signs += 4) {
            const float db[2] = { d * (0.5f + (float)(scales[ib] & 0xf)) * 0.25f,
                                  d * (0.5f + (float)(scales[ib] >> 4)) * 0.25f };
            for (int l = 0; l < 4; l++, y += 8) {
                const uint8_t *grid = quant_iq2s_grid[qs[l] | ((qh[ib] << (8 - 2 * l)) & 0x300)];
                for (int j = 0; j < 8; j++)
                    y[j] = db[l / 2] * (float)grid[j] * sgn(signs[l], j);
            }
        }
    }
}

void quant_deq_iq3_xxs(const void *src, float *y, int64_t n)
{
    for (const uint8_t *b = src; n > 0; n -= QK_K, b += 98) {
        const float d = rdf16(b);
        const uint8_t *qs = b + 2, *scales_signs = b + 66;
        for (int ib = 0; ib < 8; ib++, qs += 8) {
            const uint32_t aux = rd32(scales_signs + 4 * ib);
            const float db = d * (0.5f + (float)(aux >> 28)) * 0.5f;
            for (int l = 0; l < 4; l++, y += 8) {
                const uint8_t signs = ksign((aux >> 7 * l) & 127);
                const uint8_t *g1 = quant_iq3xxs_grid[qs[2 * l]], *g2 = quant_iq3xxs_grid[qs[2 * l + 1]];
                for (int j = 0; j < 4; j++) {
                    y[j] = db * (float)g1[j] * sgn(signs, j);
                    y[j + 4] = db * (float)g2[j] * sgn(signs, j + 4);
                }
            }
        }
    }
}

void quant_deq_iq3_s(const void *src, float *y, int64_t n)
{
    for (const uint8_t *b = src; n > 0; n -= QK_K, b += 110) {
        const float d = rdf16(b);
        const uint8_t *qs = b + 2, *qh = b + 66, *signs = b + 74, *scales = b + 106;
        for (int ib = 0; ib < 8; ib++, qs += 8, signs += 4) {
            const uint8_t sc = scales[ib / 2];
            const float db = d * (float)(1 + 2 * (ib % 2 ? sc >> 4 : sc & 0xf));
            for (int l = 0; l < 4; l++, y += 8) {
                const uint8_t *g1 = quant_iq3s_grid[qs[2 * l] | ((qh[ib] << (8 - 2 * l)) & 256)];
                const uint8_t *g2 = quant_iq3s_grid[qs[2 * l + 1] | ((qh[ib] << (7 - 2 * l)) & 256)];
                for (int j = 0; j < 4; j++) {
                    y[j] = db * (float)g1[j] * sgn(signs[l], j);
                    y[j + 4] = db * (float)g2[j] * sgn(signs[l], j + 4);
                }
            }
        }
    }
}

#define IQ1_DELTA 0.125f

void quant_deq_iq1_s(const void *src, float *y, int64_t n)
{
    for (const uint8_t *b = src; n > 0; n -= QK_K, b += 50) {
        const float d = rdf16(b);
        const uint8_t *qs = b + 2;
        for (int ib = 0; ib < 8; ib++, qs += 4) {
            const uint16_t qh = rd16(b + 34 + 2 * ib);
            const float dl = d * (float)(2 * ((qh >> 12) & 7) + 1);
            const float delta = qh & 0x8000 ? -IQ1_DELTA : IQ1_DELTA;
            for (int l = 0; l < 4; l++, y += 8) {
                const int8_t *grid = quant_iq1s_grid[qs[l] | (((qh >> 3 * l) & 7) << 8)];
                for (int j = 0; j < 8; j++)
                    y[j] = dl * ((float)grid[j] + delta);
            }
        }
    }
}

void quant_deq_iq1_m(const void *src, float *y, int64_t n)
{
    for (const uint8_t *b = src; n > 0; n -= QK_K, b += 56) {
        const uint8_t *qs = b, *qh = b + 32;
        uint16_t sc[4];
        for (int k = 0; k < 4; k++)
            sc[k] = rd16(b + 48 + 2 * k);
        /* the block's f16 scale is the top nibble of each of the four scale words */
        const uint16_t dbits = (uint16_t)((sc[0] >> 12) | ((sc[1] >> 8) & 0x00f0) | ((sc[2] >> 4) & 0x0f00) |
                                          (sc[3] & 0xf000));
        const float d = quant_f16_to_f32(dbits);
        for (int ib = 0; ib < 8; ib++, qs += 4, qh += 2) {
            const float dl1 = d * (float)(2 * ((sc[ib / 2] >> (6 * (ib % 2) + 0)) & 7) + 1);
            const float dl2 = d * (float)(2 * ((sc[ib / 2] >> (6 * (ib % 2) + 3)) & 7) + 1);
            const uint16_t idx[4] = { (uint16_t)(qs[0] | ((qh[0] << 8) & 0x700)),
                                      (uint16_t)(qs[1] | ((qh[0] << 4) & 0x700)),
                                      (uint16_t)(qs[2] | ((qh[1] << 8) & 0x700)),
                                      (uint16_t)(qs[3] | ((qh[1] << 4) & 0x700)) };
            const float delta[4] = { qh[0] & 0x08 ? -IQ1_DELTA : IQ1_DELTA, qh[0] & 0x80 ? -IQ1_DELTA : IQ1_DELTA,
                                     qh[1] & 0x08 ? -IQ1_DELTA : IQ1_DELTA, qh[1] & 0x80 ? -IQ1_DELTA : IQ1_DELTA };
            for (int l = 0; l < 4; l++, y += 8) {
                const int8_t *grid = quant_iq1s_grid[idx[l]];
                const float dl = l < 2 ? dl1 : dl2;
                for (int j = 0; j < 8; j++)
                    y[j] = dl * ((float)grid[j] + delta[l]);
            }
        }
    }
}

void quant_deq_iq4_xs(const void *src, float *y, int64_t n)
{
    for (const uint8_t *b = src; n > 0; n -= QK_K, b += 136) {
        const float d = rdf16(b);
        const uint16_t scales_h = rd16(b + 2);
        const uint8_t *scales_l = b + 4, *qs = b + 8;
        for (int ib = 0; ib < 8; ib++, y += 32, qs += 16) {
            const int ls = ((scales_l[ib / 2] >> 4 * (ib % 2)) & 0xf) | (((scales_h >> 2 * ib) & 3) << 4);
            const float dl = d * (float)(ls - 32);
            for (int j = 0; j < 16; j++) {
                y[j] = dl * (float)quant_kvalues_iq4nl[qs[j] & 0xf];
                y[j + 16] = dl * (float)quant_kvalues_iq4nl[qs[j] >> 4];
            }
        }
    }
}

/* A base-3 digit: byte q holds 5 ternary digits as round(value * 256 / 243);
 * multiplying by 3^k (mod 256) brings digit k to the top, and *3 >> 8 reads it. */
static inline float tq1_digit(uint8_t q, uint8_t pow3)
{
    const uint8_t shifted = (uint8_t)(q * pow3);
    return (float)((int)(((uint16_t)shifted * 3) >> 8) - 1);
}

void quant_deq_tq1_0(const void *src, float *y, int64_t n)
{
    static const uint8_t pow3[6] = { 1, 3, 9, 27, 81, 243 };
    for (const uint8_t *b = src; n > 0; n -= QK_K, b += 54) {
        const uint8_t *qs = b, *qh = b + 48;
        const float d = rdf16(b + 52);
        for (int pass = 0; pass < 2; pass++) { /* 32 bytes x 5 digits, then 16 bytes x 5 digits */
            const int start = pass ? 32 : 0, width = pass ? 16 : 32;
            for (int k = 0; k < 5; k++)
                for (int m = 0; m < width; m++)
                    *y++ = tq1_digit(qs[start + m], pow3[k]) * d;
        }
        for (int k = 0; k < 4; k++)
            for (int j = 0; j < 4; j++)
                *y++ = tq1_digit(qh[j], pow3[k]) * d;
    }
}

void quant_deq_tq2_0(const void *src, float *y, int64_t n)
{
    for (const uint8_t *b = src; n > 0; n -= QK_K, b += 66) {
        const float d = rdf16(b + 64);
        for (int j = 0; j < 64; j += 32)
            for (int l = 0; l < 4; l++)
                for (int m = 0; m < 32; m++)
                    *y++ = (float)((int)((b[j + m] >> (2 * l)) & 3) - 1) * d;
    }
}
