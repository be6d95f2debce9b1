/* Private to quant/'s x86 files (after <immintrin.h>): the sum of the 4 or 8 lanes of an SSE or AVX register. */
#ifndef GGUFSCOPE_QUANT_SIMD_HSUM_H
#define GGUFSCOPE_QUANT_SIMD_HSUM_H
#include "x86_target.h"

/* (0 + 2) + (1 + 3), the order of ggml's x86 dots */
X86_AVX2 static inline float quant_hsum4(__m128 s)
{
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

X86_AVX2 static inline float quant_hsum8(__m256 v)
{
    return quant_hsum4(_mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1)));
}

#endif
