/*
 * Private to quant/'s x86 GEMV forms (after <immintrin.h>): the integer lane sums of several weight rows, each
 * row's lanes added into one lane of one register, lane r for row r, so that the f32 steps after them run for
 * all the rows at once (llama.cpp's repacked GEMV keeps its rows in lanes). Integers: any order is exact.
 */
#ifndef GGUFSCOPE_QUANT_ROW_SUMS_H
#define GGUFSCOPE_QUANT_ROW_SUMS_H
#include "x86_target.h"


/* x and y pairwise added: lanes 0-7 x's lanes (0+1), (2+3), ..., lanes 8-15 y's. */
X86_AVX512 static inline __m512i quant_add_pairs(__m512i x, __m512i y)
{
    const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    const __m512i odd = _mm512_add_epi32(even, _mm512_set1_epi32(1));
    return _mm512_add_epi32(_mm512_permutex2var_epi32(x, even, y), _mm512_permutex2var_epi32(x, odd, y));
}

/* 16 rows' 16 lanes each, given as the 8 quant_add_pairs of rows 2i and 2i + 1 (v[i]; overwritten: so that a caller
 * holds 8 registers, not 16), into lane r of the result for row r. */
X86_AVX512 static inline __m512i quant_rows16_sum_paired(__m512i v[8])
{
    for (int width = 8; width > 1; width /= 2) /* each step halves the registers and keeps the rows in order */
        for (int i = 0; i < width / 2; i++)
            v[i] = quant_add_pairs(v[2 * i], v[2 * i + 1]);
    return v[0];
}

/* 16 rows' 4 lanes each (v[r]) into lane r of the result. */
X86_AVX512 static inline __m512i quant_rows16_sum4(const __m128i v[16])
{
    __m512i q[4];
    for (int i = 0; i < 4; i++) /* rows 4i..4i+3 side by side */
        q[i] = _mm512_inserti32x4(_mm512_inserti32x4(_mm512_inserti32x4(_mm512_castsi128_si512(v[4 * i]), v[4 * i + 1],
                                                                         1),
                                                     v[4 * i + 2], 2),
                                  v[4 * i + 3], 3);
    /* pairs of lanes added: rows 0-3 then 4-7 in 2 lanes each, rows 8-15 likewise; then again */
    return quant_add_pairs(quant_add_pairs(q[0], q[1]), quant_add_pairs(q[2], q[3]));
}

/* 8 rows' 8 lanes each (v[r]) into lane r of the result. */
X86_AVX2 static inline __m256i quant_rows8_sum(const __m256i v[8])
{
    const __m256i t0 = _mm256_hadd_epi32(v[0], v[1]), t1 = _mm256_hadd_epi32(v[2], v[3]);
    const __m256i t2 = _mm256_hadd_epi32(v[4], v[5]), t3 = _mm256_hadd_epi32(v[6], v[7]);
    const __m256i u0 = _mm256_hadd_epi32(t0, t1), u1 = _mm256_hadd_epi32(t2, t3); /* rows' halves, by 128-bit lane */
    return _mm256_add_epi32(_mm256_permute2x128_si256(u0, u1, 0x20), _mm256_permute2x128_si256(u0, u1, 0x31));
}

/* The sum of 8 int32 lanes. */
X86_AVX2 static inline int32_t quant_hsum8_epi32(__m256i v)
{
    __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4e));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xb1));
    return _mm_cvtsi128_si32(s);
}

/* 8 rows' 4 lanes each (v[r]) into lane r of the result. */
X86_AVX2 static inline __m256i quant_rows8_sum4(const __m128i v[8])
{
    const __m128i lo = _mm_hadd_epi32(_mm_hadd_epi32(v[0], v[1]), _mm_hadd_epi32(v[2], v[3]));
    const __m128i hi = _mm_hadd_epi32(_mm_hadd_epi32(v[4], v[5]), _mm_hadd_epi32(v[6], v[7]));
    return _mm256_setr_m128i(lo, hi);
}

#endif
