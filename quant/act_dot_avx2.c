/*
 * AVX2 integer dots of K- and I-quant rows with Q8_K activations (act_dot.c has the arithmetic and the scalar
 * reference they are held to; the 32-value types are act_dot_legacy.c's). 32 weight quants become 32 bytes in
 * a register, in the order of the activation quants they meet; _mm256_maddubs_epi16 multiplies unsigned by
 * signed bytes into pairs of 16-bit sums (a signed weight lends its sign to the activation first), and
 * _mm256_madd_epi16 widens them to 32 bits, times the group scale. Every sum stays below 2^15 per pair and
 * 2^31 per block (the bounds are at each helper). Blocks are scaled in f32 once each.
 */
#include "blocks.h"

#if defined(__x86_64__)
#include <immintrin.h>

#include "act_unpack_avx2.h"
#include "simd_hsum.h"

/* Signed weights: |w| times a with w's sign. */
AVX2 static inline __m256i pairs_i8(__m256i w, __m256i a)
{
    return _mm256_maddubs_epi16(_mm256_sign_epi8(w, w), _mm256_sign_epi8(a, w));
}

/* 16 pairs of 16-bit sums (8 from values 0-15, 8 from 16-31) times a scale for each half, as 8 int32. */
AVX2 static inline __m256i scale_halves(__m256i pairs, int lo, int hi)
{
    return _mm256_madd_epi16(pairs, _mm256_setr_m128i(_mm_set1_epi16((short)lo), _mm_set1_epi16((short)hi)));
}

/* Each kernel's body takes nt (1..ACT_MAX_ROWS) activation rows at a, a + as, ...: the weights are unpacked once
 * per block for all of them (a prompt's tokens), and nt is a constant where the body is inlined, so the loops
 * over it unroll into registers. The entry points are the 1-row dot and the 4-row one. */

/* ---- 256-value blocks against Q8_K [d:f32][qs:256][bsums:16 x i16] ----
 * Per block the 8 chunks' scaled sums add up in int32 (at most 8 chunks x 2 x 32767 x 127 < 2^31),
 * then d_w * d_a scales them once. */

/* sum over 16 groups of 16 of (scales[g] >> 4) * bsums[g]: Q2_K's mins */
static inline int32_t mins_by_16(const uint8_t *y, const uint8_t *scales)
{
    int16_t bs[16];
    memcpy(bs, y + 4 + QK_K, sizeof bs);
    int32_t s = 0;
    for (int g = 0; g < 16; g++)
        s += (scales[g] >> 4) * bs[g];
    return s;
}


AVX2 static INLINE void kquant_body(kquant_kind k, const uint8_t *b, const uint8_t *a, uint64_t as, int nt, int64_t n,
                                    float *out)
{
    static const uint8_t block_bytes[] = { 84, 110, 144, 176, 210, 136 };
    __m256 acc[ACT_MAX_ROWS];
    float mins[ACT_MAX_ROWS];
    for (int t = 0; t < nt; t++)
        acc[t] = _mm256_setzero_ps(), mins[t] = 0.0f;
    for (int64_t i = 0; i < n; i += QK_K, b += block_bytes[k], a += Q8K_BYTES) {
        kblock u;
        kblock_unpack(k, b, &u);
        for (int t = 0; t < nt; t++) {
            const uint8_t *y = a + t * as;
            __m256i isum = _mm256_setzero_si256();
            for (int c = 0; c < 8; c++) {
                const __m256i ya = load32(y + 4 + 32 * c);
                const __m256i pairs = u.is_signed ? pairs_i8(u.q[c], ya) : _mm256_maddubs_epi16(u.q[c], ya);
                isum = _mm256_add_epi32(isum, scale_halves(pairs, u.s_lo[c], u.s_hi[c]));
            }
            const float da = q8k_d(y);
            acc[t] = _mm256_fmadd_ps(_mm256_set1_ps(u.d * da), _mm256_cvtepi32_ps(isum), acc[t]);
            if (k == KQ_Q2_K)
                mins[t] += u.dmin * da * (float)mins_by_16(y, b);
            else if (k == KQ_Q4_K || k == KQ_Q5_K)
                mins[t] += u.dmin * da * (float)q8k_mins_by_32(y, u.m);
        }
    }
    for (int t = 0; t < nt; t++)
        out[t] = quant_hsum8(acc[t]) - mins[t];
}

/* The entry points: one row (decode) and four (prompts), per type. */
#define ACT_ENTRY_POINTS(name, body, kind) ACT_ENTRY_POINTS_AT(avx2, AVX2, name, body, kind)
ACT_ENTRY_POINTS(q2_k, kquant_body, KQ_Q2_K)
ACT_ENTRY_POINTS(q3_k, kquant_body, KQ_Q3_K)
ACT_ENTRY_POINTS(q4_k, kquant_body, KQ_Q4_K)
ACT_ENTRY_POINTS(q5_k, kquant_body, KQ_Q5_K)
ACT_ENTRY_POINTS(q6_k, kquant_body, KQ_Q6_K)
ACT_ENTRY_POINTS(iq4_xs, kquant_body, KQ_IQ4_XS)

#endif
