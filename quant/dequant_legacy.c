/*
 * Plain types and 32-element blocks (layouts: ggml-common.h).
 *
 *   Q4_0  [d:f16][qs:16]             x = (nibble - 8) * d        nibble j -> x[j], high -> x[j+16]
 *   Q4_1  [d:f16][m:f16][qs:16]      x = nibble * d + m
 *   Q5_0  [d:f16][qh:4][qs:16]       x = ((nibble | bit<<4) - 16) * d, bit j of qh for x[j]
 *   Q5_1  [d:f16][m:f16][qh:4][qs:16] x = (nibble | bit<<4) * d + m
 *   Q8_0  [d:f16][qs:32 int8]        x = q * d
 *   Q8_1  [d:f16][s:f16][qs:32]      x = q * d (s = d * sum(q), for dot products)
 *   IQ4_NL [d:f16][qs:16]            x = d * kvalues[nibble]
 *   MXFP4 [e:e8m0][qs:16]            x = kvalues_e2m1[nibble] * 2^(e-128)
 *   NVFP4 [d:4 ue4m3][qs:32]         64 values in four sub-blocks of 16: x = kvalues_e2m1[nibble] * ue4m3(d[s]) / 2,
 *                                    sub-block s's bytes qs[8s..8s+8), nibble j -> x[16s+j], high -> x[16s+j+8]
 */
#include "blocks.h"

const int8_t quant_kvalues_iq4nl[16] = { -127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113 };

void quant_deq_f32(const void *src, float *y, int64_t n)
{
    memcpy(y, src, (size_t)n * sizeof(float));
}

void quant_deq_f16(const void *src, float *y, int64_t n)
{
    const uint8_t *p = src;
    for (int64_t i = 0; i < n; i++)
        y[i] = quant_f16_to_f32(rd16(p + 2 * i));
}

void quant_deq_bf16(const void *src, float *y, int64_t n)
{
    const uint8_t *p = src;
    for (int64_t i = 0; i < n; i++)
        y[i] = quant_bf16_to_f32(rd16(p + 2 * i));
}

void quant_deq_q4_0(const void *src, float *y, int64_t n)
{
    for (const uint8_t *b = src; n > 0; n -= 32, b += 18, y += 32) {
        const float d = rdf16(b);
        const uint8_t *qs = b + 2;
        for (int j = 0; j < 16; j++) {
            y[j] = (float)((qs[j] & 0xf) - 8) * d;
            y[j + 16] = (float)((qs[j] >> 4) - 8) * d;
        }
    }
}

void quant_deq_q4_1(const void *src, float *y, int64_t n)
{
    for (const uint8_t *b = src; n > 0; n -= 32, b += 20, y += 32) {
        const float d = rdf16(b), m = rdf16(b + 2);
        const uint8_t *qs = b + 4;
        for (int j = 0; j < 16; j++) {
            y[j] = (float)(qs[j] & 0xf) * d + m;
            y[j + 16] = (float)(qs[j] >> 4) * d + m;
        }
    }
}

void quant_deq_q5_0(const void *src, float *y, int64_t n)
{
    for (const uint8_t *b = src; n > 0; n -= 32, b += 22, y += 32) {
        const float d = rdf16(b);
        const uint32_t qh = rd32(b + 2);
        const uint8_t *qs = b + 6;
        for (int j = 0; j < 16; j++) {
            const int hi0 = (int)((qh >> j) << 4 & 0x10), hi1 = (int)((qh >> (j + 12)) & 0x10);
            y[j] = (float)(((qs[j] & 0xf) | hi0) - 16) * d;
            y[j + 16] = (float)(((qs[j] >> 4) | hi1) - 16) * d;
        }
    }
}

void quant_deq_q5_1(const void *src, float *y, int64_t n)
{
    for (const uint8_t *b = src; n > 0; n -= 32, b += 24, y += 32) {
        const float d = rdf16(b), m = rdf16(b + 2);
        const uint32_t qh = rd32(b + 4);
        const uint8_t *qs = b + 8;
        for (int j = 0; j < 16; j++) {
            const int hi0 = (int)((qh >> j) << 4 & 0x10), hi1 = (int)((qh >> (j + 12)) & 0x10);
            y[j] = (float)((qs[j] & 0xf) | hi0) * d + m;
            y[j + 16] = (float)((qs[j] >> 4) | hi1) * d + m;
        }
    }
}

void quant_deq_q8_0(const void *src, float *y, int64_t n)
{
    for (const uint8_t *b = src; n > 0; n -= 32, b += 34, y += 32) {
        const float d = rdf16(b);
        const int8_t *qs = (const int8_t *)(b + 2);
        for (int j = 0; j < 32; j++)
            y[j] = (float)qs[j] * d;
    }
}

void quant_deq_q8_1(const void *src, float *y, int64_t n)
{
    for (const uint8_t *b = src; n > 0; n -= 32, b += 36, y += 32) {
        const float d = rdf16(b);
        const int8_t *qs = (const int8_t *)(b + 4);
        for (int j = 0; j < 32; j++)
            y[j] = (float)qs[j] * d;
    }
}

void quant_deq_iq4_nl(const void *src, float *y, int64_t n)
{
    for (const uint8_t *b = src; n > 0; n -= 32, b += 18, y += 32) {
        const float d = rdf16(b);
        const uint8_t *qs = b + 2;
        for (int j = 0; j < 16; j++) {
            y[j] = d * (float)quant_kvalues_iq4nl[qs[j] & 0xf];
            y[j + 16] = d * (float)quant_kvalues_iq4nl[qs[j] >> 4];
        }
    }
}

/* E2M1 values doubled (OCP microscaling spec); the scale below halves them back. */
const int8_t quant_kvalues_mxfp4[16] = { 0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12 };

void quant_deq_nvfp4(const void *src, float *y, int64_t n)
{
    for (const uint8_t *b = src; n > 0; n -= 64, b += 36, y += 64)
        for (int s = 0; s < 4; s++) {
            const float d = quant_ue4m3_half(b[s]);
            const uint8_t *qs = b + 4 + 8 * s;
            for (int j = 0; j < 8; j++) {
                y[16 * s + j] = (float)quant_kvalues_mxfp4[qs[j] & 0xf] * d;
                y[16 * s + j + 8] = (float)quant_kvalues_mxfp4[qs[j] >> 4] * d;
            }
        }
}

void quant_deq_mxfp4(const void *src, float *y, int64_t n)
{
    for (const uint8_t *b = src; n > 0; n -= 32, b += 17, y += 32) {
        const float d = quant_e8m0_half(b[0]);
        const uint8_t *qs = b + 1;
        for (int j = 0; j < 16; j++) {
            y[j] = (float)quant_kvalues_mxfp4[qs[j] & 0xf] * d;
            y[j + 16] = (float)quant_kvalues_mxfp4[qs[j] >> 4] * d;
        }
    }
}
