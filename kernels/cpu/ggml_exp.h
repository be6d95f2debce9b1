/*
 * ggml_v_expf, the e^x of llama.cpp's CPU backend (ggml-cpu/vec.h, in the llama.cpp that llama-cpp-python 0.3.36
 * vendors), in its two x86 forms: 16 lanes where ggml is built with AVX-512F and DQ (2^n applied by vscalefps), 8
 * with AVX2 and FMA (2^n built in the exponent field, the result k + j k). They round differently in the last bit,
 * so --numerics ggml keeps both, each where this CPU's build of llama.cpp would run it: SwiGLU (silu.c) and the
 * attention's softmax (attention_ggml.c). Both reach the special cases as ggml does: |n| > 126 (AVX2) or > 192
 * (AVX-512) takes the overflow and underflow forms (0, +inf, or 2^n split in two factors); -inf gives 0.
 * For x86 sources only.
 */
#ifndef GGUFSCOPE_KERN_CPU_GGML_EXP_H
#define GGUFSCOPE_KERN_CPU_GGML_EXP_H

#include "x86_target.h"
#include <immintrin.h>
#include <math.h>


/* ggml_v_expf's shared start: n = x / ln 2 rounded through the 1.5 * 2^23 shifter (z keeps n in its low bits),
 * b = x - n ln 2 with ln 2 split in two, and its polynomial without the constant term (c1 b + c2 b^2 + ...) */
#define GGML_EXP_SHIFTER 0x1.8p23f
#define GGML_EXP_LOG2E 0x1.715476p+0f
#define GGML_EXP_LN2_HI 0x1.62e4p-1f
#define GGML_EXP_LN2_LO 0x1.7f7d1cp-20f
#define GGML_EXP_C1 0x1.ffffecp-1f
#define GGML_EXP_C2 0x1.fffdb6p-2f
#define GGML_EXP_C3 0x1.555e66p-3f
#define GGML_EXP_C4 0x1.573e2ep-5f
#define GGML_EXP_C5 0x1.0e4020p-7f

X86_AVX512 static inline __m512 ggml_exp16(__m512 x)
{
    const __m512 shifter = _mm512_set1_ps(GGML_EXP_SHIFTER);
    const __m512 z = _mm512_fmadd_ps(x, _mm512_set1_ps(GGML_EXP_LOG2E), shifter);
    const __m512 n = _mm512_sub_ps(z, shifter);
    const __m512 b = _mm512_fnmadd_ps(n, _mm512_set1_ps(GGML_EXP_LN2_LO),
                                      _mm512_fnmadd_ps(n, _mm512_set1_ps(GGML_EXP_LN2_HI), x));
    const __m512 u = _mm512_mul_ps(b, b);
    /* 1 + c1 b + c2 b^2 + ... + c5 b^5 as ggml groups it: (1 + c1 b) + u ((c2 + c3 b) + u (c4 + c5 b)) */
    const __m512 hi = _mm512_fmadd_ps(_mm512_set1_ps(GGML_EXP_C5), b, _mm512_set1_ps(GGML_EXP_C4));
    const __m512 mid = _mm512_fmadd_ps(_mm512_set1_ps(GGML_EXP_C3), b, _mm512_set1_ps(GGML_EXP_C2));
    const __m512 lo = _mm512_fmadd_ps(_mm512_set1_ps(GGML_EXP_C1), b, _mm512_set1_ps(1.0f));
    const __m512 j = _mm512_fmadd_ps(_mm512_fmadd_ps(hi, u, mid), u, lo);
    const __m512 res = _mm512_scalef_ps(j, n);
    const __mmask16 far = _mm512_cmp_ps_mask(_mm512_abs_ps(n), _mm512_set1_ps(192.0f), _CMP_GT_OQ);
    if (!far)
        return res;
    /* beyond 2^+-192: +inf above, 0 below */
    const __mmask16 below = _mm512_cmp_ps_mask(n, _mm512_setzero_ps(), _CMP_LE_OQ);
    const __m512 limit = _mm512_mask_blend_ps(below, _mm512_set1_ps(INFINITY), _mm512_setzero_ps());
    return _mm512_mask_blend_ps(far, res, limit);
}

X86_AVX2 static inline __m256 ggml_exp8(__m256 x)
{
    const __m256 shifter = _mm256_set1_ps(GGML_EXP_SHIFTER);
    const __m256 z = _mm256_fmadd_ps(x, _mm256_set1_ps(GGML_EXP_LOG2E), shifter);
    const __m256 n = _mm256_sub_ps(z, shifter);
    const __m256 b = _mm256_fnmadd_ps(n, _mm256_set1_ps(GGML_EXP_LN2_LO),
                                      _mm256_fnmadd_ps(n, _mm256_set1_ps(GGML_EXP_LN2_HI), x));
    /* 2^n: n's low bits (in z's mantissa) moved into the exponent field of 1.0 */
    const __m256i e = _mm256_slli_epi32(_mm256_castps_si256(z), 23);
    const __m256 k = _mm256_castsi256_ps(_mm256_add_epi32(e, _mm256_castps_si256(_mm256_set1_ps(1.0f))));
    const __m256 abs_n = _mm256_andnot_ps(_mm256_set1_ps(-0.0f), n);
    const __m256 big = _mm256_cmp_ps(abs_n, _mm256_set1_ps(126.0f), _CMP_GT_OQ);
    const __m256 u = _mm256_mul_ps(b, b);
    /* here without the 1: c1 b + u ((c2 + c3 b) + u (c4 + c5 b)), and e^x = k + j k */
    const __m256 hi = _mm256_fmadd_ps(_mm256_set1_ps(GGML_EXP_C5), b, _mm256_set1_ps(GGML_EXP_C4));
    const __m256 mid = _mm256_fmadd_ps(_mm256_set1_ps(GGML_EXP_C3), b, _mm256_set1_ps(GGML_EXP_C2));
    const __m256 j = _mm256_fmadd_ps(_mm256_fmadd_ps(hi, u, mid), u, _mm256_mul_ps(_mm256_set1_ps(GGML_EXP_C1), b));
    if (!_mm256_movemask_ps(big))
        return _mm256_fmadd_ps(j, k, k);
    /* |n| > 126: 2^n as s1 * s2 (each a normal float), s1 = 2^+-127ish by the sign of n; |n| > 192: s1 * s1 */
    const __m256i g = _mm256_and_si256(_mm256_castps_si256(_mm256_cmp_ps(n, _mm256_setzero_ps(), _CMP_LE_OQ)),
                                       _mm256_set1_epi32((int)0x82000000u));
    const __m256 s1 = _mm256_castsi256_ps(_mm256_add_epi32(g, _mm256_set1_epi32(0x7f000000)));
    const __m256 s2 = _mm256_castsi256_ps(_mm256_sub_epi32(e, g));
    const __m256 huge = _mm256_cmp_ps(abs_n, _mm256_set1_ps(192.0f), _CMP_GT_OQ);
    const __m256 split = _mm256_blendv_ps(_mm256_fmadd_ps(k, j, k), _mm256_mul_ps(_mm256_fmadd_ps(s2, j, s2), s1), big);
    return _mm256_blendv_ps(split, _mm256_mul_ps(s1, s1), huge);
}

#endif
