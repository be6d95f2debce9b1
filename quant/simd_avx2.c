/*
 * AVX2 (+F16C) row decoders, chosen at run time. Each computes exactly what
 * its scalar twin computes (same operations, same order, no FMA), so results
 * are bit-identical; the tests hold them to that on random blocks.
 */
#include "x86_target.h"
#include "blocks.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>


/* A block scale: F16C where that is exact (everything but NaN, which F16C quiets). */
X86_AVX2 static inline float scale_f16(const uint8_t *p)
{
    const uint16_t h = rd16(p);
    return (h & 0x7c00) == 0x7c00 ? quant_f16_to_f32(h) : _cvtsh_ss(h);
}

/* Eight bytes at p as eight floats (signed or unsigned bytes). */
X86_AVX2 static inline __m256 i8x8_to_ps(const void *p)
{
    return _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *)p)));
}

X86_AVX2 static inline __m256 u8x8_to_ps(__m128i v)
{
    return _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(v));
}

/* F16C turns signalling NaNs quiet; the scalar path (and numpy) keep the payload as is. */
X86_AVX2 void quant_deq_f16_avx2(const void *src, float *y, int64_t n)
{
    const uint8_t *p = src;
    const __m256i exp_mask = _mm256_set1_epi32(0x7c00), man_mask = _mm256_set1_epi32(0x3ff);
    const __m256i sign_mask = _mm256_set1_epi32(0x8000), inf_bits = _mm256_set1_epi32(0x7f800000);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m128i h = _mm_loadu_si128((const __m128i *)(p + 2 * i));
        __m256 f = _mm256_cvtph_ps(h);
        const __m256i w = _mm256_cvtepu16_epi32(h);
        const __m256i man = _mm256_and_si256(w, man_mask);
        const __m256i nan = _mm256_andnot_si256(_mm256_cmpeq_epi32(man, _mm256_setzero_si256()),
                                                _mm256_cmpeq_epi32(_mm256_and_si256(w, exp_mask), exp_mask));
        if (!_mm256_testz_si256(nan, nan)) {
            const __m256i bits = _mm256_or_si256(_mm256_slli_epi32(_mm256_and_si256(w, sign_mask), 16),
                                                 _mm256_or_si256(inf_bits, _mm256_slli_epi32(man, 13)));
            f = _mm256_blendv_ps(f, _mm256_castsi256_ps(bits), _mm256_castsi256_ps(nan));
        }
        _mm256_storeu_ps(y + i, f);
    }
    quant_deq_f16(p + 2 * i, y + i, n - i);
}

X86_AVX2 void quant_deq_bf16_avx2(const void *src, float *y, int64_t n)
{
    const uint8_t *p = src;
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const __m128i a = _mm_loadu_si128((const __m128i *)(p + 2 * i));
        const __m128i b = _mm_loadu_si128((const __m128i *)(p + 2 * i + 16));
        _mm256_storeu_si256((__m256i *)(y + i), _mm256_slli_epi32(_mm256_cvtepu16_epi32(a), 16));
        _mm256_storeu_si256((__m256i *)(y + i + 8), _mm256_slli_epi32(_mm256_cvtepu16_epi32(b), 16));
    }
    quant_deq_bf16(p + 2 * i, y + i, n - i);
}

X86_AVX2 void quant_deq_q8_0_avx2(const void *src, float *y, int64_t n)
{
    for (const uint8_t *b = src; n > 0; n -= 32, b += 34, y += 32) {
        const __m256 d = _mm256_set1_ps(scale_f16(b));
        for (int k = 0; k < 4; k++)
            _mm256_storeu_ps(y + 8 * k, _mm256_mul_ps(i8x8_to_ps(b + 2 + 8 * k), d));
    }
}

X86_AVX2 void quant_deq_q4_0_avx2(const void *src, float *y, int64_t n)
{
    const __m128i m4 = _mm_set1_epi8(0x0f), eight = _mm_set1_epi8(8);
    for (const uint8_t *b = src; n > 0; n -= 32, b += 18, y += 32) {
        const __m256 d = _mm256_set1_ps(scale_f16(b));
        const __m128i q = _mm_loadu_si128((const __m128i *)(b + 2));
        const __m128i lo = _mm_sub_epi8(_mm_and_si128(q, m4), eight);                        /* elements 0-15 */
        const __m128i hi = _mm_sub_epi8(_mm_and_si128(_mm_srli_epi16(q, 4), m4), eight);     /* elements 16-31 */
        _mm256_storeu_ps(y, _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(lo)), d));
        _mm256_storeu_ps(y + 8, _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_srli_si128(lo, 8))), d));
        _mm256_storeu_ps(y + 16, _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(hi)), d));
        _mm256_storeu_ps(y + 24, _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_srli_si128(hi, 8))), d));
    }
}

/* y[0..32) = d * q - m for 32 unsigned byte values in v (scalar order: mul, then sub). */
X86_AVX2 static inline void scale_sub_32(float *y, __m256i v, float d, float m)
{
    const __m256 vd = _mm256_set1_ps(d), vm = _mm256_set1_ps(m);
    const __m128i lo = _mm256_castsi256_si128(v), hi = _mm256_extracti128_si256(v, 1);
    _mm256_storeu_ps(y, _mm256_sub_ps(_mm256_mul_ps(vd, u8x8_to_ps(lo)), vm));
    _mm256_storeu_ps(y + 8, _mm256_sub_ps(_mm256_mul_ps(vd, u8x8_to_ps(_mm_srli_si128(lo, 8))), vm));
    _mm256_storeu_ps(y + 16, _mm256_sub_ps(_mm256_mul_ps(vd, u8x8_to_ps(hi)), vm));
    _mm256_storeu_ps(y + 24, _mm256_sub_ps(_mm256_mul_ps(vd, u8x8_to_ps(_mm_srli_si128(hi, 8))), vm));
}

/* y[0..32) = ds[k/16] * q for 32 signed byte values q (two scales of 16). */
X86_AVX2 static inline void q6_store_32(float *y, __m256i q, float ds0, float ds1)
{
    const __m128i lo = _mm256_castsi256_si128(q), hi = _mm256_extracti128_si256(q, 1);
    const __m256 a = _mm256_set1_ps(ds0), c = _mm256_set1_ps(ds1);
    _mm256_storeu_ps(y, _mm256_mul_ps(a, _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(lo))));
    _mm256_storeu_ps(y + 8, _mm256_mul_ps(a, _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_srli_si128(lo, 8)))));
    _mm256_storeu_ps(y + 16, _mm256_mul_ps(c, _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(hi))));
    _mm256_storeu_ps(y + 24, _mm256_mul_ps(c, _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_srli_si128(hi, 8)))));
}

#define SIMD_TARGET X86_AVX2
#define SIMD_NAME(base) base##_avx2
#include "simd_kquants.inc"

#endif
