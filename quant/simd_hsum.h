/* Private to quant/'s x86 files (after <immintrin.h>): the sum of the 8 lanes of an AVX register. */
#ifndef GGUFSCOPE_QUANT_SIMD_HSUM_H
#define GGUFSCOPE_QUANT_SIMD_HSUM_H

__attribute__((target("avx2"))) static inline float quant_hsum8(__m256 v)
{
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

#endif
