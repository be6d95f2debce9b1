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

/* Rows decoded 16 at a time into a GEMM's k-major panel (panel16_avx512.c), chosen by
 * quant_panel16_function. */
#define QUANT_PANEL16_DECL(name)                                                                                   \
    void quant_panel16_##name(const void *base, uint64_t rb, int64_t k0, int64_t kc, float *panel)
QUANT_PANEL16_DECL(q4_0_avx512); QUANT_PANEL16_DECL(q4_1_avx512); QUANT_PANEL16_DECL(q5_0_avx512);
QUANT_PANEL16_DECL(q5_1_avx512); QUANT_PANEL16_DECL(iq4_nl_avx512); QUANT_PANEL16_DECL(q2_k_avx512);
QUANT_PANEL16_DECL(q3_k_avx512); QUANT_PANEL16_DECL(q4_k_avx512); QUANT_PANEL16_DECL(q5_k_avx512);
QUANT_PANEL16_DECL(q6_k_avx512); QUANT_PANEL16_DECL(iq4_xs_avx512);

/* Fused row . x products (AVX2 + FMA + F16C: Q8_0, BF16 in vecdot.c), chosen by quant_dot_function. */
float quant_dot_q8_0_avx2(const void *src, const float *x, int64_t n);
float quant_dot_bf16_avx2(const void *src, const float *x, int64_t n);
/* The 32-value 4- and 5-bit types, IQ4_XS and the K-quants (vecdot_fields_avx2.c): they read x as their prep
 * function leaves it (IQ4_XS the IQ4_NL one, Q2_K and Q3_K Q6_K's). */
/* x (n values, n a multiple of 32) rearranged for field dots of `lanes` (8 or 16) dwords a register, 4 per block:
 * for group p of 8 * lanes values, field s (value 4 (l & 3) + s / 2 + 16 (s & 1) of block l / 4 of the group),
 * lane l, xp[8 lanes p + lanes s + l] = that x times scale[s]; after all groups (xp + quant_fields_span(n, lanes)),
 * per group `lanes` values of offset * (the sum of the 8 unscaled x lane l meets). Blocks past n read zeros
 * (vecdot_fields_avx2.c; the AVX2 pairs and the AVX-512 quads). */
static inline int64_t quant_fields_span(int64_t n, int lanes)
{
    return (n + 8 * lanes - 1) / (8 * lanes) * (8 * lanes);
}
void quant_prep_fields(const float *x, float *xp, int64_t n, int lanes, const float scale[8], float offset);
void quant_dot_prep_pairs_q4_0(const float *x, float *xp, int64_t n);
void quant_dot_prep_pairs_q4_1(const float *x, float *xp, int64_t n);
void quant_dot_prep_pairs_q5_0(const float *x, float *xp, int64_t n);
void quant_dot_prep_pairs_q5_1(const float *x, float *xp, int64_t n);
void quant_dot_prep_pairs_iq4(const float *x, float *xp, int64_t n);
float quant_dot_q4_0_avx2(const void *src, const float *xp, int64_t n);
float quant_dot_q4_1_avx2(const void *src, const float *xp, int64_t n);
float quant_dot_q5_0_avx2(const void *src, const float *xp, int64_t n);
float quant_dot_q5_1_avx2(const void *src, const float *xp, int64_t n);
float quant_dot_iq4_nl_avx2(const void *src, const float *xp, int64_t n);
void quant_dot_prep_fields_q4_k(const float *x, float *xp, int64_t n);
void quant_dot_prep_fields_q5_k(const float *x, float *xp, int64_t n);
void quant_dot_prep_fields_q6_k(const float *x, float *xp, int64_t n);
float quant_dot_q4_k_avx2(const void *src, const float *xp, int64_t n);
float quant_dot_q5_k_avx2(const void *src, const float *xp, int64_t n);
float quant_dot_q6_k_avx2(const void *src, const float *xp, int64_t n);
float quant_dot_q2_k_avx2(const void *src, const float *xp, int64_t n);
float quant_dot_q3_k_avx2(const void *src, const float *xp, int64_t n);
/* Q3_K's 16 signed scales unpacked from their 12 bytes (dequant_k.c; the fused dot reads them too). */
void quant_q3k_scales(const uint8_t *packed, int8_t out[16]);
float quant_dot_iq4_xs_avx2(const void *src, const float *xp, int64_t n);
/* Whether the AVX2 forms of the --numerics ggml code (quantizers, dots, panels: AVX2 with FMA and F16C) are to
 * run: QUANT_IMPL_AVX2 asks for them whatever GGUFSCOPE_SIMD says, QUANT_IMPL_BEST where its level allows;
 * and the AVX-512 VNNI panels, at QUANT_IMPL_BEST on the avx512 level only (dispatch.c). */
bool quant_use_avx2(quant_impl impl);
bool quant_use_avx512(quant_impl impl); /* the level AVX-512: a llama.cpp built for it (not capped by GGUFSCOPE_SIMD) */
bool quant_use_vnni(quant_impl impl);
/* Integer dots against quantized activations (act_dot_avx2.c; the 32-value types' act_dot_legacy.c), chosen by
 * quant_act_dot_function. */
#define QUANT_ACT_DOT_DECL_AT(name, level)                                                      \
    void quant_act_dot_##name##_##level(const void *w, const void *a, int64_t n, float *out); \
    void quant_act_dot4_##name##_##level(const void *w, const void *a, uint64_t as, int64_t n, float out[4])
#define QUANT_ACT_DOT_DECL(name) QUANT_ACT_DOT_DECL_AT(name, avx2)
QUANT_ACT_DOT_DECL(q4_0); QUANT_ACT_DOT_DECL(q4_1); QUANT_ACT_DOT_DECL(q5_0); QUANT_ACT_DOT_DECL(q5_1);
QUANT_ACT_DOT_DECL(q8_0); QUANT_ACT_DOT_DECL(iq4_nl); QUANT_ACT_DOT_DECL(q2_k); QUANT_ACT_DOT_DECL(q3_k);
QUANT_ACT_DOT_DECL(q4_k); QUANT_ACT_DOT_DECL(q5_k); QUANT_ACT_DOT_DECL(q6_k); QUANT_ACT_DOT_DECL(iq4_xs);
/* Their AVX-512 VNNI forms for the 32-value types, and (at both levels) the preps of the activation rows these
 * 32-value dots read (act_dot_legacy.c). */
QUANT_ACT_DOT_DECL_AT(q4_0, vnni); QUANT_ACT_DOT_DECL_AT(q5_0, vnni); QUANT_ACT_DOT_DECL_AT(q8_0, vnni);
QUANT_ACT_DOT_DECL_AT(iq4_nl, vnni); QUANT_ACT_DOT_DECL_AT(q4_1, vnni); QUANT_ACT_DOT_DECL_AT(q5_1, vnni);
/* Q4_K and Q6_K with Q8_K activations in 512-bit lanes (act_dot_vnni_k.c): a Q4_K_M file's generation. */
QUANT_ACT_DOT_DECL_AT(q4_k, vnni); QUANT_ACT_DOT_DECL_AT(q6_k, vnni);
/* llama.cpp's GEMV order for the types it repacks (act_dot_legacy.c), nr rows against one prepared row. */
#define QUANT_ACT_GEMV_DECL_AT(name, level) \
    void quant_act_gemv_##name##_##level(const void *w, uint64_t rb, int nr, const void *a, int64_t n, float *out)
QUANT_ACT_GEMV_DECL_AT(q4_0, vnni); QUANT_ACT_GEMV_DECL_AT(q4_0, avx2);
QUANT_ACT_GEMV_DECL_AT(iq4_nl, vnni); QUANT_ACT_GEMV_DECL_AT(iq4_nl, avx2);
QUANT_ACT_GEMV_DECL_AT(q4_k, vnni); QUANT_ACT_GEMV_DECL_AT(q4_k, avx2); /* act_dot_vnni_k.c, act_dot_avx2.c */
QUANT_ACT_GEMV_DECL_AT(q2_k, avx2); /* where an AVX-512 llama.cpp repacks it: no VNNI form of its dots either */
uint64_t quant_act_prep_bytes_legacy(int64_t n);
void quant_act_prep_q8_0_offset8(const void *a, void *dst, int64_t n);
void quant_act_prep_q8_0_offset16(const void *a, void *dst, int64_t n);
void quant_act_prep_q8_0_offset128(const void *a, void *dst, int64_t n);
void quant_act_prep_q8_1(const void *a, void *dst, int64_t n);
/* The activation quantizers' AVX2 forms (act_quant_avx2.c). */
int quant_act_q8_block_avx2(const float *x, int8_t q[32], float *d_out);
void quant_act_q8k_block_avx2(const float *x, uint8_t *b);
void quant_act_f16_row_avx2(const float *x, uint16_t *h, int64_t n);
void quant_act_bf16_row_avx2(const float *x, uint16_t *h, int64_t n);
/* Prompt products against 8 rows packed into a panel (act_gemm_avx2.c), chosen by quant_act_gemm_function. */
#define QUANT_ACT_GEMM_DECL_AT(name, level)                                                                    \
    uint64_t quant_act_panel_bytes_##name##_##level(int64_t n);                                                 \
    void quant_act_pack_##name##_##level(const void *w, uint64_t rb, int nr, int64_t n, void *panel);           \
    void quant_act_gemm_##name##_##level(const void *panel, const void *a, uint64_t as, const int16_t *sums, int T, \
                                         int64_t n, float *y, int64_t ld, int nr)
#define QUANT_ACT_GEMM_DECL(name) QUANT_ACT_GEMM_DECL_AT(name, avx2); QUANT_ACT_GEMM_DECL_AT(name, vnni)
QUANT_ACT_GEMM_DECL(q4_0); QUANT_ACT_GEMM_DECL(q4_1); QUANT_ACT_GEMM_DECL(q5_0); QUANT_ACT_GEMM_DECL(q5_1);
QUANT_ACT_GEMM_DECL(q8_0); QUANT_ACT_GEMM_DECL(iq4_nl); QUANT_ACT_GEMM_DECL(q2_k); QUANT_ACT_GEMM_DECL(q3_k);
QUANT_ACT_GEMM_DECL(q4_k); QUANT_ACT_GEMM_DECL(q5_k); QUANT_ACT_GEMM_DECL(q6_k); QUANT_ACT_GEMM_DECL(iq4_xs);
QUANT_ACT_GEMM_DECL(q2_k_tiled); QUANT_ACT_GEMM_DECL(q3_k_tiled); QUANT_ACT_GEMM_DECL(q5_k_tiled);
QUANT_ACT_GEMM_DECL(q6_k_tiled); QUANT_ACT_GEMM_DECL(iq4_xs_tiled);
/* AVX-512 twins (simd_avx512.c): they read x as their prep function leaves it and need AVX-512DQ. */
void quant_dot_prep_q4_k(const float *x, float *xp, int64_t n);
float quant_dot_q4_k_avx512(const void *src, const float *xp, int64_t n);
void quant_dot_prep_q5_k(const float *x, float *xp, int64_t n);
float quant_dot_q5_k_avx512(const void *src, const float *xp, int64_t n);
void quant_dot_prep_q23_k(const float *x, float *xp, int64_t n); /* Q2_K's and Q3_K's */
float quant_dot_q2_k_avx512(const void *src, const float *xp, int64_t n);
float quant_dot_q3_k_avx512(const void *src, const float *xp, int64_t n);
void quant_dot_prep_q6_k(const float *x, float *xp, int64_t n);
float quant_dot_q6_k_avx512(const void *src, const float *xp, int64_t n);

/* AVX-512F twins of the 32-value types' and IQ4_XS's fused dots (vecdot_avx512.c): x as it is,
 * no prep. */
float quant_dot_q4_0_avx512(const void *src, const float *x, int64_t n);
float quant_dot_q4_1_avx512(const void *src, const float *x, int64_t n);
float quant_dot_q5_0_avx512(const void *src, const float *x, int64_t n);
float quant_dot_q5_1_avx512(const void *src, const float *x, int64_t n);
float quant_dot_iq4_nl_avx512(const void *src, const float *x, int64_t n);
float quant_dot_iq4_xs_avx512(const void *src, const float *x, int64_t n);
float quant_dot_q8_0_avx512(const void *src, const float *x, int64_t n);
/* Q4_0, Q4_1, Q5_0 and Q5_1 as fields, four blocks a register, against x their prep rearranged
 * (vecdot_fields_avx512.c) */
void quant_dot_prep_quads_q4_0(const float *x, float *xp, int64_t n);
void quant_dot_prep_quads_q4_1(const float *x, float *xp, int64_t n);
void quant_dot_prep_quads_q5_0(const float *x, float *xp, int64_t n);
void quant_dot_prep_quads_q5_1(const float *x, float *xp, int64_t n);
float quant_dot_quads_q4_0_avx512(const void *src, const float *xp, int64_t n);
float quant_dot_quads_q4_1_avx512(const void *src, const float *xp, int64_t n);
float quant_dot_quads_q5_0_avx512(const void *src, const float *xp, int64_t n);
float quant_dot_quads_q5_1_avx512(const void *src, const float *xp, int64_t n);

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
