/*
 * AVX2 integer dots of weight rows with quantized activations (act_dot.c has
 * the arithmetic and the scalar reference they are held to). 32 weight quants
 * become 32 bytes in a register, in the order of the activation quants they
 * meet; _mm256_maddubs_epi16 multiplies unsigned by signed bytes into pairs of
 * 16-bit sums (a signed weight lends its sign to the activation first), and
 * _mm256_madd_epi16 widens them to 32 bits, times the group scale where the
 * type has one. Every sum stays below 2^15 per pair and 2^31 per block (the
 * bounds are at each helper). Blocks are scaled in f32 once each.
 */
#include "blocks.h"

#if defined(__x86_64__)
#include <immintrin.h>

#include "simd_hsum.h"

#define AVX2 __attribute__((target("avx2,fma,f16c")))

AVX2 static inline float f16c(const uint8_t *p)
{
    return _cvtsh_ss(rd16(p));
}

/* Pairs of u8 x s8 products summed to 8 int32 lanes (pairs <= 2 * 255 * 127 only for bytes < 128: callers
 * pass unsigned weights of at most 6 bits, or |signed weight| <= 128 with |activation| <= 127). */
AVX2 static inline __m256i sum_u8_s8(__m256i u, __m256i s)
{
    return _mm256_madd_epi16(_mm256_maddubs_epi16(u, s), _mm256_set1_epi16(1));
}

/* Signed weights: |w| times a with w's sign. */
AVX2 static inline __m256i pairs_i8(__m256i w, __m256i a)
{
    return _mm256_maddubs_epi16(_mm256_sign_epi8(w, w), _mm256_sign_epi8(a, w));
}

AVX2 static inline __m256i sum_i8(__m256i w, __m256i a)
{
    return _mm256_madd_epi16(pairs_i8(w, a), _mm256_set1_epi16(1));
}

/* 16 pairs of 16-bit sums (8 from values 0-15, 8 from 16-31) times a scale for each half, as 8 int32. */
AVX2 static inline __m256i scale_halves(__m256i pairs, int lo, int hi)
{
    return _mm256_madd_epi16(pairs, _mm256_setr_m128i(_mm_set1_epi16((short)lo), _mm_set1_epi16((short)hi)));
}

/* 16 bytes of nibbles: low nibbles as values 0-15, high ones as 16-31 (the legacy and IQ4 block order). */
AVX2 static inline __m256i nibbles32(const uint8_t *qs)
{
    const __m128i t = _mm_loadu_si128((const __m128i *)qs);
    return _mm256_and_si256(_mm256_setr_m128i(t, _mm_srli_epi16(t, 4)), _mm256_set1_epi8(0x0f));
}

/* The 32 bits of qh as 32 bytes of 0x10 (bit set) or 0 (Q5_0 / Q5_1's fifth bit, bit j for value j). */
AVX2 static inline __m256i fifth_bits(const uint8_t *qh)
{
    uint32_t bits;
    memcpy(&bits, qh, 4);
    const __m256i spread = _mm256_shuffle_epi8(
        _mm256_set1_epi32((int)bits), _mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2,
                                                       2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3));
    const __m256i bit = _mm256_set1_epi64x(0x8040201008040201LL);
    return _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(spread, bit), bit), _mm256_set1_epi8(0x10));
}

AVX2 static inline __m256i iq4_values(const uint8_t *qs)
{
    const __m128i kv = _mm_loadu_si128((const __m128i *)quant_kvalues_iq4nl);
    return _mm256_shuffle_epi8(_mm256_setr_m128i(kv, kv), nibbles32(qs));
}

AVX2 static inline __m256i load32(const void *p)
{
    return _mm256_loadu_si256((const __m256i *)p);
}

/* ---- 32-value blocks against Q8_0 [d:f16][qs:32] ---- */

/* Q4_0 [d][qs:16]: nibble - 8 (|w| <= 8). */
AVX2 float quant_act_dot_q4_0_avx2(const void *w, const void *a, int64_t n)
{
    const uint8_t *b = w, *y = a;
    __m256 acc = _mm256_setzero_ps();
    for (int64_t i = 0; i < n; i += 32, b += 18, y += 34) {
        const __m256i q = _mm256_sub_epi8(nibbles32(b + 2), _mm256_set1_epi8(8));
        acc = _mm256_fmadd_ps(_mm256_set1_ps(f16c(b) * f16c(y)), _mm256_cvtepi32_ps(sum_i8(q, load32(y + 2))), acc);
    }
    return quant_hsum8(acc);
}

/* Q5_0 [d][qh:4][qs:16]: (nibble | bit << 4) - 16 (|w| <= 16). */
AVX2 float quant_act_dot_q5_0_avx2(const void *w, const void *a, int64_t n)
{
    const uint8_t *b = w, *y = a;
    __m256 acc = _mm256_setzero_ps();
    for (int64_t i = 0; i < n; i += 32, b += 22, y += 34) {
        const __m256i q =
            _mm256_sub_epi8(_mm256_or_si256(nibbles32(b + 6), fifth_bits(b + 2)), _mm256_set1_epi8(16));
        acc = _mm256_fmadd_ps(_mm256_set1_ps(f16c(b) * f16c(y)), _mm256_cvtepi32_ps(sum_i8(q, load32(y + 2))), acc);
    }
    return quant_hsum8(acc);
}

/* Q8_0 [d][qs:32 int8] (|w| <= 128). */
AVX2 float quant_act_dot_q8_0_avx2(const void *w, const void *a, int64_t n)
{
    const uint8_t *b = w, *y = a;
    __m256 acc = _mm256_setzero_ps();
    for (int64_t i = 0; i < n; i += 32, b += 34, y += 34)
        acc = _mm256_fmadd_ps(_mm256_set1_ps(f16c(b) * f16c(y)),
                              _mm256_cvtepi32_ps(sum_i8(load32(b + 2), load32(y + 2))), acc);
    return quant_hsum8(acc);
}

/* IQ4_NL [d][qs:16]: kvalues_iq4nl[nibble] (|w| <= 127). */
AVX2 float quant_act_dot_iq4_nl_avx2(const void *w, const void *a, int64_t n)
{
    const uint8_t *b = w, *y = a;
    __m256 acc = _mm256_setzero_ps();
    for (int64_t i = 0; i < n; i += 32, b += 18, y += 34)
        acc = _mm256_fmadd_ps(_mm256_set1_ps(f16c(b) * f16c(y)),
                              _mm256_cvtepi32_ps(sum_i8(iq4_values(b + 2), load32(y + 2))), acc);
    return quant_hsum8(acc);
}

/* ---- against Q8_1 [d:f16][s:f16][qs:32]: unsigned quants, + m * s ---- */

/* Q4_1 [d][m][qs:16]: nibble. */
AVX2 float quant_act_dot_q4_1_avx2(const void *w, const void *a, int64_t n)
{
    const uint8_t *b = w, *y = a;
    __m256 acc = _mm256_setzero_ps();
    float mins = 0.0f;
    for (int64_t i = 0; i < n; i += 32, b += 20, y += 36) {
        acc = _mm256_fmadd_ps(_mm256_set1_ps(f16c(b) * f16c(y)),
                              _mm256_cvtepi32_ps(sum_u8_s8(nibbles32(b + 4), load32(y + 4))), acc);
        mins += f16c(b + 2) * f16c(y + 2);
    }
    return quant_hsum8(acc) + mins;
}

/* Q5_1 [d][m][qh:4][qs:16]: nibble | bit << 4. */
AVX2 float quant_act_dot_q5_1_avx2(const void *w, const void *a, int64_t n)
{
    const uint8_t *b = w, *y = a;
    __m256 acc = _mm256_setzero_ps();
    float mins = 0.0f;
    for (int64_t i = 0; i < n; i += 32, b += 24, y += 36) {
        const __m256i q = _mm256_or_si256(nibbles32(b + 8), fifth_bits(b + 4));
        acc = _mm256_fmadd_ps(_mm256_set1_ps(f16c(b) * f16c(y)), _mm256_cvtepi32_ps(sum_u8_s8(q, load32(y + 4))),
                              acc);
        mins += f16c(b + 2) * f16c(y + 2);
    }
    return quant_hsum8(acc) + mins;
}

/* ---- 256-value blocks against Q8_K [d:f32][qs:256][bsums:16 x i16] ----
 * Per block the 8 chunks' scaled sums add up in int32 (at most 8 chunks x 2 x 32767 x 127 < 2^31),
 * then d_w * d_a scales them once. */

AVX2 static inline float q8k_d(const uint8_t *y)
{
    float d;
    memcpy(&d, y, 4);
    return d;
}

/* sum over 8 groups of 32 of m[g] * (bsums[2g] + bsums[2g+1]): the mins' integer term */
static inline int32_t mins_by_32(const uint8_t *y, const uint8_t m[8])
{
    int16_t bs[16];
    memcpy(bs, y + 4 + QK_K, sizeof bs);
    int32_t s = 0;
    for (int g = 0; g < 8; g++)
        s += (int32_t)m[g] * (bs[2 * g] + bs[2 * g + 1]);
    return s;
}

/* Q4_K [d][dmin][scales:12][qs:128]: 64-value chunk j has low nibbles (group 2j) then high (2j+1). */
AVX2 float quant_act_dot_q4_k_avx2(const void *w, const void *a, int64_t n)
{
    const uint8_t *b = w, *y = a;
    __m256 acc = _mm256_setzero_ps();
    float mins = 0.0f;
    const __m256i low4 = _mm256_set1_epi8(0x0f);
    for (int64_t i = 0; i < n; i += QK_K, b += 144, y += 292) {
        uint8_t sc[8], m[8];
        for (int g = 0; g < 8; g++)
            kq_scale_min(g, b + 4, &sc[g], &m[g]);
        const uint8_t *qs = b + 16, *qa = y + 4;
        __m256i isum = _mm256_setzero_si256();
        for (int j = 0; j < 4; j++) {
            const __m256i q = load32(qs + 32 * j);
            const __m256i lo = _mm256_maddubs_epi16(_mm256_and_si256(q, low4), load32(qa + 64 * j));
            const __m256i hi = _mm256_maddubs_epi16(_mm256_and_si256(_mm256_srli_epi16(q, 4), low4),
                                                    load32(qa + 64 * j + 32));
            isum = _mm256_add_epi32(isum, scale_halves(lo, sc[2 * j], sc[2 * j]));
            isum = _mm256_add_epi32(isum, scale_halves(hi, sc[2 * j + 1], sc[2 * j + 1]));
        }
        const float da = q8k_d(y);
        acc = _mm256_fmadd_ps(_mm256_set1_ps(f16c(b) * da), _mm256_cvtepi32_ps(isum), acc);
        mins += f16c(b + 2) * da * (float)mins_by_32(y, m);
    }
    return quant_hsum8(acc) - mins;
}

/* Q5_K [d][dmin][scales:12][qh:32][qs:128]: Q4_K's nibbles, and bit 2j / 2j+1 of qh[l] as the fifth bit. */
AVX2 float quant_act_dot_q5_k_avx2(const void *w, const void *a, int64_t n)
{
    const uint8_t *b = w, *y = a;
    __m256 acc = _mm256_setzero_ps();
    float mins = 0.0f;
    const __m256i low4 = _mm256_set1_epi8(0x0f), one = _mm256_set1_epi8(1);
    for (int64_t i = 0; i < n; i += QK_K, b += 176, y += 292) {
        uint8_t sc[8], m[8];
        for (int g = 0; g < 8; g++)
            kq_scale_min(g, b + 4, &sc[g], &m[g]);
        const __m256i qh = load32(b + 16);
        const uint8_t *qs = b + 48, *qa = y + 4;
        __m256i isum = _mm256_setzero_si256();
        for (int j = 0; j < 4; j++) {
            const __m256i q = load32(qs + 32 * j);
            const __m256i h0 = _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 2 * j), one), 4);
            const __m256i h1 = _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 2 * j + 1), one), 4);
            const __m256i v0 = _mm256_or_si256(_mm256_and_si256(q, low4), h0);
            const __m256i v1 = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(q, 4), low4), h1);
            isum = _mm256_add_epi32(isum, scale_halves(_mm256_maddubs_epi16(v0, load32(qa + 64 * j)), sc[2 * j],
                                                       sc[2 * j]));
            isum = _mm256_add_epi32(isum, scale_halves(_mm256_maddubs_epi16(v1, load32(qa + 64 * j + 32)),
                                                       sc[2 * j + 1], sc[2 * j + 1]));
        }
        const float da = q8k_d(y);
        acc = _mm256_fmadd_ps(_mm256_set1_ps(f16c(b) * da), _mm256_cvtepi32_ps(isum), acc);
        mins += f16c(b + 2) * da * (float)mins_by_32(y, m);
    }
    return quant_hsum8(acc) - mins;
}

/* Q6_K [ql:128][qh:64][scales:16 x i8][d]: per 128-value half h, values l, l+32, l+64, l+96 take
 * ql[l] low, ql[l+32] low, ql[l] high, ql[l+32] high as bits 0-3 and qh[l]'s bit pairs 0-1, 2-3, 4-5,
 * 6-7 as bits 4-5, minus 32; scale per 16 values. */
AVX2 float quant_act_dot_q6_k_avx2(const void *w, const void *a, int64_t n)
{
    const uint8_t *b = w, *y = a;
    __m256 acc = _mm256_setzero_ps();
    const __m256i low4 = _mm256_set1_epi8(0x0f), two = _mm256_set1_epi8(3), off = _mm256_set1_epi8(32);
    for (int64_t i = 0; i < n; i += QK_K, b += 210, y += 292) {
        const int8_t *sc = (const int8_t *)(b + 192);
        __m256i isum = _mm256_setzero_si256();
        for (int h = 0; h < 2; h++) {
            const uint8_t *ql = b + 64 * h, *qh = b + 128 + 32 * h, *qa = y + 4 + 128 * h;
            const int8_t *s = sc + 8 * h;
            const __m256i l0 = load32(ql), l1 = load32(ql + 32), hb = load32(qh);
            const __m256i nib[4] = { _mm256_and_si256(l0, low4), _mm256_and_si256(l1, low4),
                                     _mm256_and_si256(_mm256_srli_epi16(l0, 4), low4),
                                     _mm256_and_si256(_mm256_srli_epi16(l1, 4), low4) };
            for (int k = 0; k < 4; k++) {
                const __m256i hi = _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(hb, 2 * k), two), 4);
                const __m256i q = _mm256_sub_epi8(_mm256_or_si256(nib[k], hi), off); /* |q| <= 32 */
                isum = _mm256_add_epi32(isum, scale_halves(pairs_i8(q, load32(qa + 32 * k)), s[2 * k], s[2 * k + 1]));
            }
        }
        acc = _mm256_fmadd_ps(_mm256_set1_ps(f16c(b + 208) * q8k_d(y)), _mm256_cvtepi32_ps(isum), acc);
    }
    return quant_hsum8(acc);
}

/* Q3_K [hmask:32][qs:64][scales:12][d]: per half n and shift j, 2 bits of qs[32n + l] at 2j, minus 4 where
 * bit 4n+j of hmask[l] is clear; signed 6-bit scales per 16 values. */
AVX2 float quant_act_dot_q3_k_avx2(const void *w, const void *a, int64_t n)
{
    const uint8_t *b = w, *y = a;
    __m256 acc = _mm256_setzero_ps();
    const __m256i three = _mm256_set1_epi8(3), four = _mm256_set1_epi8(4), zero = _mm256_setzero_si256();
    for (int64_t i = 0; i < n; i += QK_K, b += 110, y += 292) {
        int8_t sc[16];
        quant_q3k_scales(b + 96, sc);
        const __m256i hm = load32(b);
        __m256i isum = _mm256_setzero_si256();
        for (int h = 0; h < 2; h++) {
            const __m256i q = load32(b + 32 + 32 * h);
            for (int j = 0; j < 4; j++) {
                const __m256i v = _mm256_and_si256(_mm256_srli_epi16(q, 2 * j), three);
                const __m256i bit = _mm256_set1_epi8((char)(1 << (4 * h + j)));
                const __m256i sub = _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(hm, bit), zero), four);
                const __m256i qv = _mm256_sub_epi8(v, sub); /* -4..3 */
                isum = _mm256_add_epi32(isum, scale_halves(pairs_i8(qv, load32(y + 4 + 128 * h + 32 * j)),
                                                           sc[8 * h + 2 * j], sc[8 * h + 2 * j + 1]));
            }
        }
        acc = _mm256_fmadd_ps(_mm256_set1_ps(f16c(b + 108) * q8k_d(y)), _mm256_cvtepi32_ps(isum), acc);
    }
    return quant_hsum8(acc);
}

/* Q2_K [scales:16][qs:64][d][dmin]: Q3_K's 2-bit layout without hmask; scale low nibble, min high nibble. */
AVX2 float quant_act_dot_q2_k_avx2(const void *w, const void *a, int64_t n)
{
    const uint8_t *b = w, *y = a;
    __m256 acc = _mm256_setzero_ps();
    float mins = 0.0f;
    const __m256i three = _mm256_set1_epi8(3);
    for (int64_t i = 0; i < n; i += QK_K, b += 84, y += 292) {
        const uint8_t *sc = b;
        __m256i isum = _mm256_setzero_si256();
        for (int h = 0; h < 2; h++) {
            const __m256i q = load32(b + 16 + 32 * h);
            for (int j = 0; j < 4; j++) {
                const __m256i v = _mm256_and_si256(_mm256_srli_epi16(q, 2 * j), three);
                const int g = 8 * h + 2 * j;
                isum = _mm256_add_epi32(isum, scale_halves(_mm256_maddubs_epi16(v, load32(y + 4 + 128 * h + 32 * j)),
                                                           sc[g] & 0xf, sc[g + 1] & 0xf));
            }
        }
        int16_t bs[16];
        memcpy(bs, y + 4 + QK_K, sizeof bs);
        int32_t summ = 0;
        for (int g = 0; g < 16; g++)
            summ += (sc[g] >> 4) * bs[g];
        const float da = q8k_d(y);
        acc = _mm256_fmadd_ps(_mm256_set1_ps(f16c(b + 80) * da), _mm256_cvtepi32_ps(isum), acc);
        mins += f16c(b + 82) * da * (float)summ;
    }
    return quant_hsum8(acc) - mins;
}

/* IQ4_XS [d][scales_h:u16][scales_l:4][qs:128]: group ib's 6-bit scale is scales_l's nibble ib with bits
 * 2ib..2ib+1 of scales_h on top, minus 32; values as IQ4_NL's. */
AVX2 float quant_act_dot_iq4_xs_avx2(const void *w, const void *a, int64_t n)
{
    const uint8_t *b = w, *y = a;
    __m256 acc = _mm256_setzero_ps();
    for (int64_t i = 0; i < n; i += QK_K, b += 136, y += 292) {
        const uint16_t sh = rd16(b + 2);
        __m256i isum = _mm256_setzero_si256();
        for (int ib = 0; ib < 8; ib++) {
            const int ls = ((b[4 + ib / 2] >> 4 * (ib % 2)) & 0xf) | (((sh >> 2 * ib) & 3) << 4);
            isum = _mm256_add_epi32(isum, scale_halves(pairs_i8(iq4_values(b + 8 + 16 * ib), load32(y + 4 + 32 * ib)),
                                                       ls - 32, ls - 32));
        }
        acc = _mm256_fmadd_ps(_mm256_set1_ps(f16c(b) * q8k_d(y)), _mm256_cvtepi32_ps(isum), acc);
    }
    return quant_hsum8(acc);
}

#endif
