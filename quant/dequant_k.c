/*
 * K-quants: 256-element super-blocks (layouts: ggml-common.h, block_qN_K).
 *
 *   Q2_K [scales:16][qs:64][d:f16][dmin:f16]        16 groups of 16: x = d*(sc&15)*q2 - dmin*(sc>>4)
 *   Q3_K [hmask:32][qs:64][scales:12][d:f16]        16 groups of 16: x = d*(sc6-32)*(q2 - (hbit ? 0 : 4))
 *   Q4_K [d:f16][dmin:f16][scales:12][qs:128]       8 groups of 32:  x = d*sc6*q4 - dmin*m6
 *   Q5_K [d:f16][dmin:f16][scales:12][qh:32][qs:128] 8 groups of 32: x = d*sc6*(q4 + 16*hbit) - dmin*m6
 *   Q6_K [ql:128][qh:64][scales:16 int8][d:f16]     16 groups of 16: x = d*sc8*(q6 - 32)
 *   Q8_K [d:f32][qs:256 int8][bsums:16 int16]       x = d*q
 *
 * Element order inside a super-block follows ggml's reference dequantizers
 * exactly (which bits of which byte feed which output), drawn per type below.
 */
#include "blocks.h"

/* Q2_K: each 128-element half uses 32 bytes of qs; output group g (0..7) takes
 * bits 2*(g/2) of bytes [0,16) or [16,32) alternately. */
void quant_deq_q2_k(const void *src, float *y, int64_t n)
{
    for (const uint8_t *b = src; n > 0; n -= QK_K, b += 84) {
        const uint8_t *scales = b, *q = b + 16;
        const float d = rdf16(b + 80), min = rdf16(b + 82);
        int is = 0;
        for (int half = 0; half < 2; half++, q += 32) {
            for (int shift = 0; shift < 8; shift += 2) {
                for (int part = 0; part < 2; part++) {
                    const uint8_t sc = scales[is++];
                    const float dl = d * (float)(sc & 0xf), ml = min * (float)(sc >> 4);
                    for (int l = 0; l < 16; l++)
                        *y++ = dl * (float)((q[l + 16 * part] >> shift) & 3) - ml;
                }
            }
        }
    }
}

/* Q3_K's 16 6-bit scales: low nibbles in bytes 0-7, top 2 bits in bytes 8-11. */
void quant_q3k_scales(const uint8_t *packed, int8_t out[16])
{
    for (int j = 0; j < 16; j++) {
        int low = j < 8 ? packed[j] & 0xf : packed[j - 8] >> 4;
        int high = (packed[8 + (j % 4)] >> (2 * (j / 4))) & 3;
        out[j] = (int8_t)((low | high << 4) - 32);
    }
}

void quant_deq_q3_k(const void *src, float *y, int64_t n)
{
    for (const uint8_t *b = src; n > 0; n -= QK_K, b += 110) {
        const uint8_t *hm = b, *q = b + 32;
        int8_t scales[16];
        quant_q3k_scales(b + 96, scales);
        const float d_all = rdf16(b + 108);
        int is = 0;
        uint8_t m = 1;
        for (int half = 0; half < 2; half++, q += 32) {
            for (int shift = 0; shift < 8; shift += 2, m <<= 1) {
                for (int part = 0; part < 2; part++) {
                    const float dl = d_all * (float)scales[is++];
                    for (int l = 0; l < 16; l++) {
                        const int k = l + 16 * part;
                        *y++ = dl * (float)(((q[k] >> shift) & 3) - ((hm[k] & m) ? 0 : 4));
                    }
                }
            }
        }
    }
}

void quant_deq_q4_k(const void *src, float *y, int64_t n)
{
    for (const uint8_t *b = src; n > 0; n -= QK_K, b += 144) {
        const float d = rdf16(b), min = rdf16(b + 2);
        const uint8_t *scales = b + 4, *q = b + 16;
        for (int is = 0; is < 8; is += 2, q += 32) {
            float d1, m1, d2, m2;
            kq_pair(is, scales, d, min, &d1, &m1, &d2, &m2);
            for (int l = 0; l < 32; l++)
                *y++ = d1 * (float)(q[l] & 0xf) - m1;
            for (int l = 0; l < 32; l++)
                *y++ = d2 * (float)(q[l] >> 4) - m2;
        }
    }
}

void quant_deq_q5_k(const void *src, float *y, int64_t n)
{
    for (const uint8_t *b = src; n > 0; n -= QK_K, b += 176) {
        const float d = rdf16(b), min = rdf16(b + 2);
        const uint8_t *scales = b + 4, *qh = b + 16, *ql = b + 48;
        uint8_t u1 = 1, u2 = 2;
        for (int is = 0; is < 8; is += 2, ql += 32, u1 <<= 2, u2 <<= 2) {
            float d1, m1, d2, m2;
            kq_pair(is, scales, d, min, &d1, &m1, &d2, &m2);
            for (int l = 0; l < 32; l++)
                *y++ = d1 * (float)((ql[l] & 0xf) + (qh[l] & u1 ? 16 : 0)) - m1;
            for (int l = 0; l < 32; l++)
                *y++ = d2 * (float)((ql[l] >> 4) + (qh[l] & u2 ? 16 : 0)) - m2;
        }
    }
}

/* Q6_K: per 128 elements, 64 bytes of ql (low nibbles) and 32 of qh (2 bits each):
 *   x[l]     = ql[l]    & 15 | qh[l] bits 0-1     x[l+32] = ql[l+32] & 15 | qh[l] bits 2-3
 *   x[l+64]  = ql[l]    >> 4 | qh[l] bits 4-5     x[l+96] = ql[l+32] >> 4 | qh[l] bits 6-7 */
void quant_deq_q6_k(const void *src, float *y, int64_t n)
{
    for (const uint8_t *b = src; n > 0; n -= QK_K, b += 210) {
        const uint8_t *ql = b, *qh = b + 128;
        const int8_t *sc = (const int8_t *)(b + 192);
        const float d = rdf16(b + 208);
        for (int half = 0; half < 2; half++, y += 128, ql += 64, qh += 32, sc += 8) {
            for (int l = 0; l < 32; l++) {
                const int is = l / 16;
                const int q1 = ((ql[l] & 0xf) | ((qh[l] >> 0) & 3) << 4) - 32;
                const int q2 = ((ql[l + 32] & 0xf) | ((qh[l] >> 2) & 3) << 4) - 32;
                const int q3 = ((ql[l] >> 4) | ((qh[l] >> 4) & 3) << 4) - 32;
                const int q4 = ((ql[l + 32] >> 4) | ((qh[l] >> 6) & 3) << 4) - 32;
                y[l] = d * (float)sc[is] * (float)q1;
                y[l + 32] = d * (float)sc[is + 2] * (float)q2;
                y[l + 64] = d * (float)sc[is + 4] * (float)q3;
                y[l + 96] = d * (float)sc[is + 6] * (float)q4;
            }
        }
    }
}

void quant_deq_q8_k(const void *src, float *y, int64_t n)
{
    for (const uint8_t *b = src; n > 0; n -= QK_K, b += 292) {
        float d;
        memcpy(&d, b, 4);
        const int8_t *qs = (const int8_t *)(b + 4);
        for (int j = 0; j < QK_K; j++)
            *y++ = d * (float)qs[j];
    }
}
