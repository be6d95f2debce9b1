/* Private to quant/'s x86 files (after <immintrin.h> and blocks.h): weight blocks unpacked into AVX2
 * registers, 32 quants in the order of the activation quants they meet, for the integer dots
 * (act_dot_avx2.c) and the prompt products (act_gemm_avx2.c). */
#ifndef GGUFSCOPE_QUANT_ACT_UNPACK_AVX2_H
#define GGUFSCOPE_QUANT_ACT_UNPACK_AVX2_H

#include "x86_target.h"
#include "k23_chunk_avx2.h"
#include "kq_scales_avx2.h"


X86_AVX2 static inline float f16c(const uint8_t *p)
{
    return _cvtsh_ss(rd16(p));
}

/* 16 bytes of nibbles: low nibbles as values 0-15, high ones as 16-31 (the legacy and IQ4 block order). */
X86_AVX2 static inline __m256i nibbles32(const uint8_t *qs)
{
    const __m128i t = _mm_loadu_si128((const __m128i *)qs);
    return _mm256_and_si256(_mm256_setr_m128i(t, _mm_srli_epi16(t, 4)), _mm256_set1_epi8(0x0f));
}

/* The 32 bits of qh as 32 bytes of 0x10 (bit set) or 0 (Q5_0 / Q5_1's fifth bit, bit j for value j). */
X86_AVX2 static inline __m256i fifth_bits(const uint8_t *qh)
{
    uint32_t bits;
    memcpy(&bits, qh, 4);
    const __m256i spread = _mm256_shuffle_epi8(
        _mm256_set1_epi32((int)bits), _mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2,
                                                       2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3));
    const __m256i bit = _mm256_set1_epi64x(0x8040201008040201LL);
    return _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(spread, bit), bit), _mm256_set1_epi8(0x10));
}

/* The 32 levels a block's 16 nibble bytes at qs pick from a 16-entry table (IQ4_NL's, MXFP4's). */
X86_AVX2 static inline __m256i table_values(const int8_t *table, const uint8_t *qs)
{
    const __m128i kv = _mm_loadu_si128((const __m128i *)table);
    return _mm256_shuffle_epi8(_mm256_setr_m128i(kv, kv), nibbles32(qs));
}

X86_AVX2 static inline __m256i iq4_values(const uint8_t *qs)
{
    return table_values(quant_kvalues_iq4nl, qs);
}

/* Q8_K's d, an f32 at the block's start */
X86_AVX2 static inline float q8k_d(const uint8_t *y)
{
    float d;
    memcpy(&d, y, 4);
    return d;
}

/* Q8_K's block: [d:f32][qs:256][bsums:16 x i16]. The dots' bodies take up to ACT_MAX_ROWS activation rows. */
enum { Q8K_BYTES = 4 + QK_K + 32, ACT_MAX_ROWS = 4 };

/* Q8_K: sum over 8 groups of 32 of m[g] * (bsums[2g] + bsums[2g+1]), the
 * integer term of Q4_K's and Q5_K's mins */
static inline int32_t q8k_mins_by_32(const uint8_t *y, const uint8_t m[8])
{
    int16_t bs[16];
    memcpy(bs, y + 4 + QK_K, sizeof bs);
    int32_t s = 0;
    for (int g = 0; g < 8; g++)
        s += (int32_t)m[g] * (bs[2 * g] + bs[2 * g + 1]);
    return s;
}

X86_AVX2 static inline __m256i load32(const void *p)
{
    return _mm256_loadu_si256((const __m256i *)p);
}

/* Q6_K's -32 in the 8 int32 lanes of ggml's AVX2 dot: lane k holds 32 * (s[2k] bsums[2k] + s[2k + 1] bsums[2k + 1]),
 * s the block's 16 scales (s8), bsums Q8_K row y's (at most 32 * 2 * 128 * 16 * 128 in size). */
X86_AVX2 static inline __m256i q6k_offsets(const uint8_t *y, __m128i s8)
{
    return _mm256_slli_epi32(_mm256_madd_epi16(load32(y + 4 + QK_K), _mm256_cvtepi8_epi16(s8)), 5);
}

/* Q8_K row y's 16 bsums added in pairs, 8 int16: bsums[2j] + bsums[2j + 1] in lane j. A pair of bsums is at most
 * 32 * 128 in size, so the 16-bit adds stay exact. */
X86_AVX2 static inline __m128i q8k_bsum_pairs(const uint8_t *y)
{
    const __m256i bs = load32(y + 4 + QK_K);
    return _mm_hadd_epi16(_mm256_castsi256_si128(bs), _mm256_extracti128_si256(bs, 1));
}

/* Q4_K's mins term of one block against Q8_K row y in the 4 int32 lanes of ggml's AVX2 dot: lane k holds
 * m[2k] * (bsums[4k] + bsums[4k + 1]) + m[2k + 1] * (bsums[4k + 2] + bsums[4k + 3]), m as 8 int16 (mins16). */
X86_AVX2 static inline __m128i q8k_mins_lanes(const uint8_t *y, __m128i mins16)
{
    return _mm_madd_epi16(mins16, q8k_bsum_pairs(y));
}

#define INLINE __attribute__((always_inline)) inline

/* ---- 32-value blocks against Q8_0 [d:f16][qs:32] or Q8_1 [d:f16][s:f16][qs:32] ----
 * The weight quants of one block as 32 bytes: signed (|w| <= 128), or unsigned with the Q4_1/Q5_1 min. */
typedef enum legacy_kind { LEG_Q4_0, LEG_Q5_0, LEG_Q8_0, LEG_IQ4_NL, LEG_Q4_1, LEG_Q5_1, LEG_MXFP4 } legacy_kind;

/* Q4_0, Q5_0, Q4_1, Q5_1: the quants as they are stored, unsigned (0..15 or 0..31). */
X86_AVX2 static INLINE __m256i legacy_nibbles(legacy_kind k, const uint8_t *b)
{
    switch (k) {
    case LEG_Q5_0: return _mm256_or_si256(nibbles32(b + 6), fifth_bits(b + 2));  /* nibble | bit << 4 */
    case LEG_Q4_1: return nibbles32(b + 4);
    case LEG_Q5_1: return _mm256_or_si256(nibbles32(b + 8), fifth_bits(b + 4));
    default: return nibbles32(b + 2);                                             /* Q4_0 */
    }
}

X86_AVX2 static INLINE __m256i legacy_quants(legacy_kind k, const uint8_t *b)
{
    switch (k) {
    case LEG_Q4_0: return _mm256_sub_epi8(legacy_nibbles(k, b), _mm256_set1_epi8(8));   /* nibble - 8 */
    case LEG_Q5_0: return _mm256_sub_epi8(legacy_nibbles(k, b), _mm256_set1_epi8(16));  /* 5 bits - 16 */
    case LEG_Q8_0: return load32(b + 2);
    case LEG_IQ4_NL: return iq4_values(b + 2);                                         /* kvalues[nibble] */
    case LEG_MXFP4: return table_values(quant_kvalues_mxfp4, b + 1);                   /* E2M1 doubled */
    default: return legacy_nibbles(k, b);                                              /* Q4_1, Q5_1 */
    }
}

/* A K-quant block unpacked: 8 chunks of 32 quants in activation order, each with the scales of its two
 * halves; unsigned quants (Q2_K, Q4_K, Q5_K, at most 5 bits) or signed (|q| <= 128); d and dmin as f32. */
typedef struct kblock {
    __m256i q[8];
    int16_t s_lo[8], s_hi[8];
    uint8_t m[8];  /* Q4_K / Q5_K: the 6-bit min of each chunk */
    bool is_signed;
    float d, dmin;
} kblock;

typedef enum kquant_kind { KQ_Q2_K, KQ_Q3_K, KQ_Q4_K, KQ_Q5_K, KQ_Q6_K, KQ_IQ4_XS } kquant_kind;

/* Q2_K [scales:16][qs:64][d][dmin]: per half h and shift j, 2 bits of qs[32h + l]; scale low nibble.
 * Q3_K [hmask:32][qs:64][scales:12][d]: the same 2 bits, minus 4 where bit 4h+j of hmask[l] is clear.
 * Q4_K [d][dmin][scales:12][qs:128]: chunk 2j low nibbles of qs[32j..], chunk 2j+1 high.
 * Q5_K [d][dmin][scales:12][qh:32][qs:128]: Q4_K's, with bit 2j / 2j+1 of qh[l] as the fifth bit.
 * Q6_K [ql:128][qh:64][scales:16 x i8][d]: per half h, chunks of ql[l] low, ql[l+32] low, ql[l] high,
 *   ql[l+32] high with qh[l]'s bit pairs as bits 4-5, minus 32.
 * IQ4_XS [d][scales_h:u16][scales_l:4][qs:128]: kvalues[nibble]; group scale from 4 + 2 bits, minus 32. */
/* Q6_K's half h (values 128h ..) as its 4 chunks of 32 quants before the -32, 0..63: ql[l] low, ql[l + 32] low,
 * ql[l] high, ql[l + 32] high nibbles, with qh[l]'s bit pairs 2c, 2c + 1 as bits 4-5 of chunk c. */
X86_AVX2 static inline void q6k_half_chunks(const uint8_t *b, int h, __m256i q[4])
{
    const __m256i low4 = _mm256_set1_epi8(0x0f), three = _mm256_set1_epi8(3);
    const __m256i l0 = load32(b + 64 * h), l1 = load32(b + 64 * h + 32), hb = load32(b + 128 + 32 * h);
    const __m256i nib[4] = { _mm256_and_si256(l0, low4), _mm256_and_si256(l1, low4),
                             _mm256_and_si256(_mm256_srli_epi16(l0, 4), low4),
                             _mm256_and_si256(_mm256_srli_epi16(l1, 4), low4) };
    for (int c = 0; c < 4; c++)
        q[c] = _mm256_or_si256(nib[c], _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(hb, 2 * c), three), 4));
}

X86_AVX2 static INLINE void kblock_unpack(kquant_kind k, const uint8_t *b, kblock *u)
{
    const __m256i low4 = _mm256_set1_epi8(0x0f);
    switch (k) {
    case KQ_Q2_K:
    case KQ_Q3_K: {
        const uint8_t *qs = b + (k == KQ_Q2_K ? 16 : 32);
        int8_t sc3[16];
        if (k == KQ_Q3_K)
            _mm_storeu_si128((__m128i *)sc3, quant_q3k_scales16(b + 96)); /* inline: dropped where unused */
        const __m256i hm = load32(b);
        for (int h = 0; h < 2; h++) {
            const __m256i q = load32(qs + 32 * h);
            for (int j = 0; j < 4; j++) {
                const int c = 4 * h + j, g = 8 * h + 2 * j;
                u->q[c] = quant_k23_chunk(q, c, k == KQ_Q3_K ? &hm : NULL);
                if (k == KQ_Q3_K)
                    u->s_lo[c] = sc3[g], u->s_hi[c] = sc3[g + 1];
                else
                    u->s_lo[c] = b[g] & 0xf, u->s_hi[c] = b[g + 1] & 0xf;
            }
        }
        u->is_signed = k == KQ_Q3_K;
        u->d = f16c(b + (k == KQ_Q2_K ? 80 : 108));
        u->dmin = k == KQ_Q2_K ? f16c(b + 82) : 0.0f;
        return;
    }
    case KQ_Q4_K:
    case KQ_Q5_K: {
        const uint8_t *qs = b + (k == KQ_Q4_K ? 16 : 48);
        const __m256i qh = load32(b + 16), one = _mm256_set1_epi8(1);
        for (int j = 0; j < 4; j++) {
            const __m256i q = load32(qs + 32 * j);
            __m256i v0 = _mm256_and_si256(q, low4), v1 = _mm256_and_si256(_mm256_srli_epi16(q, 4), low4);
            if (k == KQ_Q5_K) {
                v0 = _mm256_or_si256(v0, _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 2 * j), one), 4));
                v1 = _mm256_or_si256(v1,
                                     _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 2 * j + 1), one), 4));
            }
            u->q[2 * j] = v0, u->q[2 * j + 1] = v1;
            uint8_t sc;
            kq_scale_min(2 * j, b + 4, &sc, &u->m[2 * j]);
            u->s_lo[2 * j] = u->s_hi[2 * j] = sc;
            kq_scale_min(2 * j + 1, b + 4, &sc, &u->m[2 * j + 1]);
            u->s_lo[2 * j + 1] = u->s_hi[2 * j + 1] = sc;
        }
        u->is_signed = false;
        u->d = f16c(b);
        u->dmin = f16c(b + 2);
        return;
    }
    case KQ_Q6_K: {
        const int8_t *sc = (const int8_t *)(b + 192);
        for (int h = 0; h < 2; h++) {
            __m256i q[4];
            q6k_half_chunks(b, h, q);
            for (int c = 0; c < 4; c++) {
                u->q[4 * h + c] = _mm256_sub_epi8(q[c], _mm256_set1_epi8(32));
                u->s_lo[4 * h + c] = sc[8 * h + 2 * c], u->s_hi[4 * h + c] = sc[8 * h + 2 * c + 1];
            }
        }
        u->is_signed = true;
        u->d = f16c(b + 208);
        u->dmin = 0.0f;
        return;
    }
    default: { /* IQ4_XS */
        const uint16_t sh = rd16(b + 2);
        for (int ib = 0; ib < 8; ib++) {
            const int ls = ((b[4 + ib / 2] >> 4 * (ib % 2)) & 0xf) | (((sh >> 2 * ib) & 3) << 4);
            u->q[ib] = iq4_values(b + 8 + 16 * ib);
            u->s_lo[ib] = u->s_hi[ib] = (int16_t)(ls - 32);
        }
        u->is_signed = true;
        u->d = f16c(b);
        u->dmin = 0.0f;
        return;
    }
    }
}

#endif
