/*
 * Fused dot products: one quantized row against f32 activations, decoded in
 * registers and never written out (the decode path of a matrix-vector
 * product is bound by how fast weight bytes turn into multiply-adds).
 * Block layouts as in the decoders (ggml-common.h); sums are f32 in a
 * different order than "dequantize, then dot", so results agree to rounding.
 */
#include "blocks.h"

#if defined(__x86_64__)
#include <immintrin.h>
#include "simd_hsum.h"
#define AVX2 __attribute__((target("avx2,fma,f16c")))

/* 32 unsigned bytes (0..15 or 0..63) times x[0..31], as f32. */
AVX2 static inline __m256 dot32_u8(__m256i q, const float *x, __m256 *xsum)
{
    __m128i lo = _mm256_castsi256_si128(q), hi = _mm256_extracti128_si256(q, 1);
    __m256 x0 = _mm256_loadu_ps(x), x1 = _mm256_loadu_ps(x + 8), x2 = _mm256_loadu_ps(x + 16),
           x3 = _mm256_loadu_ps(x + 24);
    __m256 s = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(lo)), x0);
    s = _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_srli_si128(lo, 8))), x1, s);
    s = _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(hi)), x2, s);
    s = _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_srli_si128(hi, 8))), x3, s);
    *xsum = _mm256_add_ps(_mm256_add_ps(x0, x1), _mm256_add_ps(x2, x3));
    return s;
}

/* Q4_K: per 256-value block d, dmin (f16), 12 bytes of 6-bit scales/mins,
 * 128 bytes of nibbles; 64-value chunk j: low nibbles of qs[32j..] use
 * scale/min 2j, high nibbles 2j+1; y = d*sc*q - dmin*m. */
AVX2 float quant_dot_q4_k_avx2(const void *src, const float *x, int64_t n)
{
    const uint8_t *b = src;
    const __m256i mask = _mm256_set1_epi8(0x0f);
    __m256 acc = _mm256_setzero_ps(), macc = _mm256_setzero_ps();
    for (int64_t i = 0; i < n; i += QK_K, b += 144, x += QK_K) {
        float d = rdf16(b), dmin = rdf16(b + 2);
        const uint8_t *scales = b + 4, *qs = b + 16;
        for (int j = 0; j < 4; j++) {
            float d1, m1, d2, m2;
            kq_pair(2 * j, scales, d, dmin, &d1, &m1, &d2, &m2);
            __m256i q = _mm256_loadu_si256((const __m256i *)(qs + 32 * j));
            __m256 xs1, xs2;
            __m256 s1 = dot32_u8(_mm256_and_si256(q, mask), x + 64 * j, &xs1);
            __m256 s2 = dot32_u8(_mm256_and_si256(_mm256_srli_epi16(q, 4), mask), x + 64 * j + 32, &xs2);
            acc = _mm256_fmadd_ps(s1, _mm256_set1_ps(d1), acc);
            acc = _mm256_fmadd_ps(s2, _mm256_set1_ps(d2), acc);
            macc = _mm256_fmadd_ps(xs1, _mm256_set1_ps(m1), macc);
            macc = _mm256_fmadd_ps(xs2, _mm256_set1_ps(m2), macc);
        }
    }
    return quant_hsum8(acc) - quant_hsum8(macc);
}

/* Q8_0: per 32 values an f16 scale and 32 signed bytes. */
AVX2 float quant_dot_q8_0_avx2(const void *src, const float *x, int64_t n)
{
    const uint8_t *b = src;
    __m256 acc = _mm256_setzero_ps();
    for (int64_t i = 0; i < n; i += 32, b += 34, x += 32) {
        __m128i lo = _mm_loadu_si128((const __m128i *)(b + 2)), hi = _mm_loadu_si128((const __m128i *)(b + 18));
        __m256 s = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(lo)), _mm256_loadu_ps(x));
        s = _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_srli_si128(lo, 8))), _mm256_loadu_ps(x + 8), s);
        s = _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(hi)), _mm256_loadu_ps(x + 16), s);
        s = _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_srli_si128(hi, 8))), _mm256_loadu_ps(x + 24), s);
        acc = _mm256_fmadd_ps(s, _mm256_set1_ps(rdf16(b)), acc);
    }
    return quant_hsum8(acc);
}

bool quant_cpu_has_fma(void)
{
    return __builtin_cpu_supports("fma");
}
#else
bool quant_cpu_has_fma(void) { return false; }
#endif
