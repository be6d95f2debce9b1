/* Private to kernels/cpu: the row kernels' entry points at each x86 level, which row_kernels.c's table chooses
 * from. They read the blocks through quant/'s private helpers (blocks.h: block fields, K-quant scales). */
#ifndef GGUFSCOPE_KERNELS_CPU_X86_H
#define GGUFSCOPE_KERNELS_CPU_X86_H

#include "blocks.h"
#include "row_kernels.h"
#include "x86_target.h"

/* Rows decoded 16 at a time into a GEMM's k-major panel (panel16_avx512.c), chosen by
 * cpu_panel16_function. */
#define CPU_PANEL16_DECL(name)                                                                                   \
    void cpu_panel16_##name(const void *base, uint64_t rb, int64_t k0, int64_t kc, float *panel)
CPU_PANEL16_DECL(q4_0_avx512); CPU_PANEL16_DECL(q4_1_avx512); CPU_PANEL16_DECL(q5_0_avx512);
CPU_PANEL16_DECL(q5_1_avx512); CPU_PANEL16_DECL(iq4_nl_avx512); CPU_PANEL16_DECL(q2_k_avx512);
CPU_PANEL16_DECL(q3_k_avx512); CPU_PANEL16_DECL(q4_k_avx512); CPU_PANEL16_DECL(q5_k_avx512);
CPU_PANEL16_DECL(q6_k_avx512); CPU_PANEL16_DECL(iq4_xs_avx512);

/* Fused row . x products (AVX2 + FMA + F16C: Q8_0, BF16 in vecdot.c), chosen by cpu_dot_function. */
float cpu_dot_q8_0_avx2(const void *src, const float *x, int64_t n);
float cpu_dot_bf16_avx2(const void *src, const float *x, int64_t n);
/* The 32-value 4- and 5-bit types, IQ4_XS and the K-quants (vecdot_fields_avx2.c): they read x as their prep
 * function leaves it (IQ4_XS the IQ4_NL one, Q2_K and Q3_K Q6_K's). */
/* x (n values, n a multiple of 32) rearranged for field dots of `lanes` (8 or 16) dwords a register, 4 per block:
 * for group p of 8 * lanes values, field s (value 4 (l & 3) + s / 2 + 16 (s & 1) of block l / 4 of the group),
 * lane l, xp[8 lanes p + lanes s + l] = that x times scale[s]; after all groups (xp + cpu_fields_span(n, lanes)),
 * per group `lanes` values of offset * (the sum of the 8 unscaled x lane l meets). Blocks past n read zeros
 * (vecdot_fields_avx2.c; the AVX2 pairs and the AVX-512 quads). */
static inline int64_t cpu_fields_span(int64_t n, int lanes)
{
    return (n + 8 * lanes - 1) / (8 * lanes) * (8 * lanes);
}
void cpu_prep_fields(const float *x, float *xp, int64_t n, int lanes, const float scale[8], float offset);
void cpu_dot_prep_pairs_q4_0(const float *x, float *xp, int64_t n);
void cpu_dot_prep_pairs_q4_1(const float *x, float *xp, int64_t n);
void cpu_dot_prep_pairs_q5_0(const float *x, float *xp, int64_t n);
void cpu_dot_prep_pairs_q5_1(const float *x, float *xp, int64_t n);
void cpu_dot_prep_pairs_iq4(const float *x, float *xp, int64_t n);
void cpu_dot_prep_pairs_mxfp4(const float *x, float *xp, int64_t n);
float cpu_dot_q4_0_avx2(const void *src, const float *xp, int64_t n);
float cpu_dot_q4_1_avx2(const void *src, const float *xp, int64_t n);
float cpu_dot_q5_0_avx2(const void *src, const float *xp, int64_t n);
float cpu_dot_q5_1_avx2(const void *src, const float *xp, int64_t n);
float cpu_dot_iq4_nl_avx2(const void *src, const float *xp, int64_t n);
float cpu_dot_mxfp4_avx2(const void *src, const float *xp, int64_t n);
void cpu_dot_prep_fields_q4_k(const float *x, float *xp, int64_t n);
void cpu_dot_prep_fields_q5_k(const float *x, float *xp, int64_t n);
void cpu_dot_prep_fields_q6_k(const float *x, float *xp, int64_t n);
float cpu_dot_q4_k_avx2(const void *src, const float *xp, int64_t n);
float cpu_dot_q5_k_avx2(const void *src, const float *xp, int64_t n);
float cpu_dot_q6_k_avx2(const void *src, const float *xp, int64_t n);
float cpu_dot_q2_k_avx2(const void *src, const float *xp, int64_t n);
float cpu_dot_q3_k_avx2(const void *src, const float *xp, int64_t n);
float cpu_dot_iq4_xs_avx2(const void *src, const float *xp, int64_t n);
/* Integer dots against quantized activations (act_dot_avx2.c; the 32-value types' act_dot_legacy.c), chosen by
 * cpu_act_dot_function. */
#define CPU_ACT_DOT_DECL_AT(name, level)                                                      \
    void cpu_act_dot_##name##_##level(const void *w, const void *a, int64_t n, float *out); \
    void cpu_act_dot4_##name##_##level(const void *w, const void *a, uint64_t as, int64_t n, float out[4])
#define CPU_ACT_DOT_DECL(name) CPU_ACT_DOT_DECL_AT(name, avx2)
CPU_ACT_DOT_DECL(q4_0); CPU_ACT_DOT_DECL(q4_1); CPU_ACT_DOT_DECL(q5_0); CPU_ACT_DOT_DECL(q5_1);
CPU_ACT_DOT_DECL(q8_0); CPU_ACT_DOT_DECL(iq4_nl); CPU_ACT_DOT_DECL(q2_k); CPU_ACT_DOT_DECL(q3_k);
CPU_ACT_DOT_DECL(q4_k); CPU_ACT_DOT_DECL(q5_k); CPU_ACT_DOT_DECL(q6_k); CPU_ACT_DOT_DECL(iq4_xs);
CPU_ACT_DOT_DECL(mxfp4);
/* Their AVX-512 VNNI forms for the 32-value types, and (at both levels) the preps of the activation rows these
 * 32-value dots read (act_dot_legacy.c). */
CPU_ACT_DOT_DECL_AT(q4_0, vnni); CPU_ACT_DOT_DECL_AT(q5_0, vnni); CPU_ACT_DOT_DECL_AT(q8_0, vnni);
CPU_ACT_DOT_DECL_AT(iq4_nl, vnni); CPU_ACT_DOT_DECL_AT(q4_1, vnni); CPU_ACT_DOT_DECL_AT(q5_1, vnni);
CPU_ACT_DOT_DECL_AT(mxfp4, vnni);
/* Q4_K and Q6_K with Q8_K activations in 512-bit lanes (act_dot_vnni_k.c): a Q4_K_M file's generation. */
CPU_ACT_DOT_DECL_AT(q4_k, vnni); CPU_ACT_DOT_DECL_AT(q6_k, vnni);
/* llama.cpp's GEMV order for the types it repacks (act_dot_legacy.c), nr rows against one prepared row. */
#define CPU_ACT_GEMV_DECL_AT(name, level) \
    void cpu_act_gemv_##name##_##level(const void *w, uint64_t rb, int nr, const void *a, int64_t n, float *out)
CPU_ACT_GEMV_DECL_AT(q4_0, vnni); CPU_ACT_GEMV_DECL_AT(q4_0, avx2);
CPU_ACT_GEMV_DECL_AT(iq4_nl, vnni); CPU_ACT_GEMV_DECL_AT(iq4_nl, avx2);
CPU_ACT_GEMV_DECL_AT(mxfp4, vnni); CPU_ACT_GEMV_DECL_AT(mxfp4, avx2);
CPU_ACT_GEMV_DECL_AT(q4_k, vnni); CPU_ACT_GEMV_DECL_AT(q4_k, avx2); /* act_dot_vnni_k.c, act_dot_avx2.c */
CPU_ACT_GEMV_DECL_AT(q2_k, avx2); /* where an AVX-512 llama.cpp repacks it: no VNNI form of its dots either */
uint64_t cpu_act_prep_bytes_legacy(int64_t n);
void cpu_act_prep_q8_0_offset8(const void *a, void *dst, int64_t n);
void cpu_act_prep_q8_0_offset16(const void *a, void *dst, int64_t n);
void cpu_act_prep_q8_0_offset128(const void *a, void *dst, int64_t n);
void cpu_act_prep_q8_1(const void *a, void *dst, int64_t n);
/* Prompt products against 8 rows packed into a panel (act_gemm_avx2.c), chosen by cpu_act_gemm_function. */
#define CPU_ACT_GEMM_DECL_AT(name, level)                                                                    \
    uint64_t cpu_act_panel_bytes_##name##_##level(int64_t n);                                                 \
    void cpu_act_pack_##name##_##level(const void *w, uint64_t rb, int nr, int64_t n, void *panel);           \
    void cpu_act_gemm_##name##_##level(const void *panel, const void *a, uint64_t as, const int16_t *sums, int T, \
                                         int64_t n, float *y, int64_t ld, int nr)
#define CPU_ACT_GEMM_DECL(name) CPU_ACT_GEMM_DECL_AT(name, avx2); CPU_ACT_GEMM_DECL_AT(name, vnni)
CPU_ACT_GEMM_DECL(q4_0); CPU_ACT_GEMM_DECL(q4_1); CPU_ACT_GEMM_DECL(q5_0); CPU_ACT_GEMM_DECL(q5_1);
CPU_ACT_GEMM_DECL(q8_0); CPU_ACT_GEMM_DECL(iq4_nl); CPU_ACT_GEMM_DECL(q2_k); CPU_ACT_GEMM_DECL(q3_k);
CPU_ACT_GEMM_DECL(q4_k); CPU_ACT_GEMM_DECL(q5_k); CPU_ACT_GEMM_DECL(q6_k); CPU_ACT_GEMM_DECL(iq4_xs);
CPU_ACT_GEMM_DECL(q2_k_tiled); CPU_ACT_GEMM_DECL(q3_k_tiled); CPU_ACT_GEMM_DECL(q5_k_tiled);
CPU_ACT_GEMM_DECL(q6_k_tiled); CPU_ACT_GEMM_DECL(iq4_xs_tiled);
/* AVX-512 twins (simd_avx512.c): they read x as their prep function leaves it and need AVX-512DQ. */
void cpu_dot_prep_q4_k(const float *x, float *xp, int64_t n);
float cpu_dot_q4_k_avx512(const void *src, const float *xp, int64_t n);
void cpu_dot_prep_q5_k(const float *x, float *xp, int64_t n);
float cpu_dot_q5_k_avx512(const void *src, const float *xp, int64_t n);
void cpu_dot_prep_q23_k(const float *x, float *xp, int64_t n); /* Q2_K's and Q3_K's */
float cpu_dot_q2_k_avx512(const void *src, const float *xp, int64_t n);
float cpu_dot_q3_k_avx512(const void *src, const float *xp, int64_t n);
void cpu_dot_prep_q6_k(const float *x, float *xp, int64_t n);
float cpu_dot_q6_k_avx512(const void *src, const float *xp, int64_t n);

/* IQ4_NL's, MXFP4's, Q8_0's and IQ4_XS's fused dots at the AVX-512 level (vecdot_avx512.c): x as it is, no prep. */
float cpu_dot_iq4_nl_avx512(const void *src, const float *x, int64_t n);
float cpu_dot_mxfp4_avx512(const void *src, const float *x, int64_t n);
float cpu_dot_iq4_xs_avx512(const void *src, const float *x, int64_t n);
float cpu_dot_q8_0_avx512(const void *src, const float *x, int64_t n);
/* Q4_0, Q4_1, Q5_0 and Q5_1 as fields, four blocks a register, against x their prep rearranged
 * (vecdot_fields_avx512.c) */
void cpu_dot_prep_quads_q4_0(const float *x, float *xp, int64_t n);
void cpu_dot_prep_quads_q4_1(const float *x, float *xp, int64_t n);
void cpu_dot_prep_quads_q5_0(const float *x, float *xp, int64_t n);
void cpu_dot_prep_quads_q5_1(const float *x, float *xp, int64_t n);
float cpu_dot_quads_q4_0_avx512(const void *src, const float *xp, int64_t n);
float cpu_dot_quads_q4_1_avx512(const void *src, const float *xp, int64_t n);
float cpu_dot_quads_q5_0_avx512(const void *src, const float *xp, int64_t n);
float cpu_dot_quads_q5_1_avx512(const void *src, const float *xp, int64_t n);

/* A dot's two entry points at one level: one activation row (decode) and four (prompts), through a body taking
 * nt rows (nt a constant where inlined). */
#define ACT_ENTRY_POINTS_AT(level, ATTR, name, body, kind)                                                     \
    ATTR void cpu_act_dot_##name##_##level(const void *w, const void *a, int64_t n, float *out)               \
    {                                                                                                          \
        body(kind, w, a, 0, 1, n, out);                                                                        \
    }                                                                                                          \
    ATTR void cpu_act_dot4_##name##_##level(const void *w, const void *a, uint64_t as, int64_t n, float out[4]) \
    {                                                                                                          \
        body(kind, w, a, as, 4, n, out);                                                                       \
    }

#endif
