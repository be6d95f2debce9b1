/*
 * AVX2 row decoders for the types whose blocks the integer dots already unpack into bytes
 * (act_unpack_avx2.h): Q4_1, Q5_0, Q5_1, IQ4_NL (one scale per 32 values) and Q2_K, Q3_K, IQ4_XS (one per
 * 16 or 32). Prompts on AVX2 decode rows to f32 before multiplying them (kernels/cpu/matmul.c); without
 * these the scalar decoders were 15 % of a gemma-3-270m prompt, whose matrices are mostly Q5_0.
 *
 * Each computes what its scalar twin (dequant_legacy.c, dequant_k.c, dequant_iq.c) computes, in its order
 * and without FMA: the value as an integer (exact in f32), times the scale, then plus the min (Q4_1, Q5_1)
 * or minus it (Q2_K), so results are bit-identical; test_quant holds every decoder to that on random blocks.
 * Block scales go through F16C, which quiets a signalling NaN the scalar conversion keeps: every use of a
 * scale here is an arithmetic operation, which quiets it there too, so the bits still agree.
 */
#include "x86_target.h"
#include "blocks.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#include <string.h>

#include "act_unpack_avx2.h"

/* 16 values held as signed bytes, times s: two vectors of 8. */
X86_AVX2 static INLINE void times16(__m128i v, __m256 s, __m256 out[2])
{
    out[0] = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(v)), s);
    out[1] = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_srli_si128(v, 8))), s);
}

/* y[0..16) = s_lo * v[0..16), y[16..32) = s_hi * v[16..32), then plus or minus the min of each half (mins
 * NULL: none). */
typedef enum min_sign { MIN_NONE, MIN_ADDED, MIN_SUBTRACTED } min_sign;

X86_AVX2 static INLINE void store32(float *y, __m256i v, float s_lo, float s_hi, min_sign sign, const float mins[2])
{
    const __m128i half[2] = { _mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1) };
    const float s[2] = { s_lo, s_hi };
    for (int h = 0; h < 2; h++) {
        __m256 p[2];
        times16(half[h], _mm256_set1_ps(s[h]), p);
        for (int i = 0; i < 2 && sign != MIN_NONE; i++) {
            const __m256 m = _mm256_set1_ps(mins[h]);
            p[i] = sign == MIN_ADDED ? _mm256_add_ps(p[i], m) : _mm256_sub_ps(p[i], m);
        }
        _mm256_storeu_ps(y + 16 * h, p[0]);
        _mm256_storeu_ps(y + 16 * h + 8, p[1]);
    }
}

/* The 32-value types: v * d, then + m for Q4_1 and Q5_1 (added, as the scalar decoder adds it: subtracting -m
 * would flip a NaN min's sign). */
X86_AVX2 static INLINE void deq_legacy(legacy_kind k, int block_bytes, const uint8_t *b, float *y, int64_t n)
{
    const bool has_min = k == LEG_Q4_1 || k == LEG_Q5_1;
    for (; n > 0; n -= 32, b += block_bytes, y += 32) {
        const float d = f16c(b), m = has_min ? f16c(b + 2) : 0.0f;
        store32(y, legacy_quants(k, b), d, d, has_min ? MIN_ADDED : MIN_NONE, (const float[2]){ m, m });
    }
}

X86_AVX2 void quant_deq_q4_1_avx2(const void *src, float *y, int64_t n)
{
    deq_legacy(LEG_Q4_1, 20, src, y, n);
}

X86_AVX2 void quant_deq_q5_0_avx2(const void *src, float *y, int64_t n)
{
    deq_legacy(LEG_Q5_0, 22, src, y, n);
}

X86_AVX2 void quant_deq_q5_1_avx2(const void *src, float *y, int64_t n)
{
    deq_legacy(LEG_Q5_1, 24, src, y, n);
}

X86_AVX2 void quant_deq_iq4_nl_avx2(const void *src, float *y, int64_t n)
{
    deq_legacy(LEG_IQ4_NL, 18, src, y, n);
}

/* The K-layout types: chunk c of kblock_unpack holds values 32c..32c+32, groups of 16 (Q2_K, Q3_K) or one group
 * of 32 (IQ4_XS, s_lo == s_hi); the group scale is d * scale, the scalar decoder's dl, and Q2_K's min
 * dmin * (scale byte >> 4). */
X86_AVX2 static INLINE void deq_kblocks(kquant_kind k, int block_bytes, const uint8_t *b, float *y, int64_t n)
{
    for (; n > 0; n -= QK_K, b += block_bytes) {
        kblock u;
        kblock_unpack(k, b, &u);
        for (int c = 0; c < 8; c++, y += 32) {
            const float lo = u.d * (float)u.s_lo[c], hi = u.d * (float)u.s_hi[c];
            if (k == KQ_Q2_K) {
                const float mins[2] = { u.dmin * (float)(b[2 * c] >> 4), u.dmin * (float)(b[2 * c + 1] >> 4) };
                store32(y, u.q[c], lo, hi, MIN_SUBTRACTED, mins);
            } else {
                store32(y, u.q[c], lo, hi, MIN_NONE, NULL);
            }
        }
    }
}

X86_AVX2 void quant_deq_q2_k_avx2(const void *src, float *y, int64_t n)
{
    deq_kblocks(KQ_Q2_K, 84, src, y, n);
}

X86_AVX2 void quant_deq_q3_k_avx2(const void *src, float *y, int64_t n)
{
    deq_kblocks(KQ_Q3_K, 110, src, y, n);
}

X86_AVX2 void quant_deq_iq4_xs_avx2(const void *src, float *y, int64_t n)
{
    deq_kblocks(KQ_IQ4_XS, 136, src, y, n);
}

#endif
