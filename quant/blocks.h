/* Private: helpers the block decoders share, and the per-type entry points. */
#ifndef GGUFSCOPE_QUANT_BLOCKS_H
#define GGUFSCOPE_QUANT_BLOCKS_H

#include "quant.h"

#include <string.h>

#define QK_K 256

/* Blocks sit at any byte offset (18-, 34-, 110-byte blocks): read fields with memcpy. */
static inline uint16_t rd16(const uint8_t *p)
{
    uint16_t v;
    memcpy(&v, p, 2);
    return v;
}

static inline uint32_t rd32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

static inline float rdf16(const uint8_t *p) { return quant_f16_to_f32(rd16(p)); }

/* Scalar reference row decoders, one per type (n is a multiple of the block size). */
#define QUANT_DECL(name) void quant_deq_##name(const void *src, float *y, int64_t n)
QUANT_DECL(f32); QUANT_DECL(f16); QUANT_DECL(bf16);
QUANT_DECL(q4_0); QUANT_DECL(q4_1); QUANT_DECL(q5_0); QUANT_DECL(q5_1); QUANT_DECL(q8_0); QUANT_DECL(q8_1);
QUANT_DECL(iq4_nl); QUANT_DECL(mxfp4);
QUANT_DECL(q2_k); QUANT_DECL(q3_k); QUANT_DECL(q4_k); QUANT_DECL(q5_k); QUANT_DECL(q6_k); QUANT_DECL(q8_k);
QUANT_DECL(iq2_xxs); QUANT_DECL(iq2_xs); QUANT_DECL(iq2_s); QUANT_DECL(iq3_xxs); QUANT_DECL(iq3_s);
QUANT_DECL(iq1_s); QUANT_DECL(iq1_m); QUANT_DECL(iq4_xs); QUANT_DECL(tq1_0); QUANT_DECL(tq2_0);

/* AVX2+F16C twins of the hottest decoders (simd_avx2.c); used only when the CPU has them. */
QUANT_DECL(f16_avx2); QUANT_DECL(bf16_avx2); QUANT_DECL(q8_0_avx2); QUANT_DECL(q4_0_avx2);
QUANT_DECL(q4_k_avx2); QUANT_DECL(q5_k_avx2); QUANT_DECL(q6_k_avx2);
/* The types whose blocks act_unpack_avx2.h unpacks (simd_avx2_unpacked.c). */
QUANT_DECL(q4_1_avx2); QUANT_DECL(q5_0_avx2); QUANT_DECL(q5_1_avx2); QUANT_DECL(iq4_nl_avx2);
QUANT_DECL(q2_k_avx2); QUANT_DECL(q3_k_avx2); QUANT_DECL(iq4_xs_avx2);

/* AVX-512F twins (simd_avx512.c); used when the CPU has AVX-512F as well as AVX2. */
QUANT_DECL(f16_avx512); QUANT_DECL(q8_0_avx512); QUANT_DECL(q4_0_avx512); QUANT_DECL(q4_1_avx512);
QUANT_DECL(q5_0_avx512); QUANT_DECL(q5_1_avx512); QUANT_DECL(iq4_nl_avx512); QUANT_DECL(iq4_xs_avx512);
QUANT_DECL(q4_k_avx512); QUANT_DECL(q5_k_avx512); QUANT_DECL(q6_k_avx512);

/* Q3_K's 16 signed scales unpacked from their 12 bytes (dequant_k.c; the fused dot reads them too). */
void quant_q3k_scales(const uint8_t *packed, int8_t out[16]);
/* The activation quantizers' AVX2 forms (act_quant_avx2.c). */
int quant_act_q8_block_avx2(const float *x, int8_t q[32], float *d_out);
void quant_act_q8k_block_avx2(const float *x, uint8_t *b);
void quant_act_f16_row_avx2(const float *x, uint16_t *h, int64_t n);
void quant_act_bf16_row_avx2(const float *x, uint16_t *h, int64_t n);
/* Reference quantizers (quantize_k.c): n values (a multiple of 256) into n / 256 blocks at dst. */
void quant_quantize_q4_k(const float *x, uint8_t *dst, int64_t n);
void quant_quantize_q6_k(const float *x, uint8_t *dst, int64_t n);

/* The 16 IQ4_NL / IQ4_XS levels (ggml's kvalues_iq4nl). */
extern const int8_t quant_kvalues_iq4nl[16];

/* K-quant 6-bit scale and min j (0..7) from the 12 packed bytes of Q4_K/Q5_K:
 *   bytes 0-3:  low 6 bits = scale 0-3,  top 2 bits = high bits of scale 4-7
 *   bytes 4-7:  low 6 bits = min 0-3,    top 2 bits = high bits of min 4-7
 *   bytes 8-11: low nibble = low bits of scale 4-7, high nibble = low bits of min 4-7 */
static inline void kq_scale_min(int j, const uint8_t *q, uint8_t *sc, uint8_t *m)
{
    if (j < 4) {
        *sc = q[j] & 63;
        *m = q[j + 4] & 63;
    } else {
        *sc = (uint8_t)((q[j + 4] & 0xf) | ((q[j - 4] >> 6) << 4));
        *m = (uint8_t)((q[j + 4] >> 4) | ((q[j] >> 6) << 4));
    }
}

/* The scale and min of the two 32-value groups is and is+1 of a Q4_K/Q5_K block,
 * multiplied out as ggml does: d * sc and dmin * m. */
static inline void kq_pair(int is, const uint8_t *scales, float d, float dmin, float *d1, float *m1, float *d2,
                           float *m2)
{
    uint8_t sc, m;
    kq_scale_min(is, scales, &sc, &m);
    *d1 = d * (float)sc;
    *m1 = dmin * (float)m;
    kq_scale_min(is + 1, scales, &sc, &m);
    *d2 = d * (float)sc;
    *m2 = dmin * (float)m;
}

#endif
