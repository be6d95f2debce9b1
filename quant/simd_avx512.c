/*
 * AVX-512F row decoders: 16 lanes where the AVX2 twins use 8. Same operations
 * in the same order as the scalar reference (no FMA), so bit-identical.
 * Byte shuffling stays in 256-bit AVX2 registers; only the int->float and
 * float work is widened. The fused Q4_K/Q6_K dots further down use FMA and
 * agree with dequantize-then-dot to f32 rounding instead.
 */
#include "x86_target.h"
#include "blocks.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#include "kq_scales_avx2.h"
#include "k23_chunk_avx2.h"
#include "prefetch_ahead.h"
#include "nibble_lookup_avx512.h"
#include "f16_scale_avx512.h"



/* 16 signed bytes -> 16 floats scaled by d */
X86_AVX512 static inline void store_i8x16(float *y, __m128i q, __m512 d)
{
    _mm512_storeu_ps(y, _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(q)), d));
}

X86_AVX512 void quant_deq_f16_avx512(const void *src, float *y, int64_t n)
{
    const uint8_t *p = src;
    const __m512i exp_mask = _mm512_set1_epi32(0x7c00), man_mask = _mm512_set1_epi32(0x3ff);
    const __m512i sign_mask = _mm512_set1_epi32(0x8000), inf_bits = _mm512_set1_epi32(0x7f800000);
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const __m256i h = _mm256_loadu_si256((const __m256i *)(p + 2 * i));
        __m512 f = _mm512_cvtph_ps(h);
        const __m512i w = _mm512_cvtepu16_epi32(h);
        const __m512i man = _mm512_and_si512(w, man_mask);
        /* NaN lanes: F16C quiets them; rebuild the exact bits as the scalar path does */
        const __mmask16 nan = _mm512_cmpeq_epi32_mask(_mm512_and_si512(w, exp_mask), exp_mask) &
                              _mm512_cmpneq_epi32_mask(man, _mm512_setzero_si512());
        if (nan) {
            const __m512i bits = _mm512_or_si512(_mm512_slli_epi32(_mm512_and_si512(w, sign_mask), 16),
                                                 _mm512_or_si512(inf_bits, _mm512_slli_epi32(man, 13)));
            f = _mm512_mask_blend_ps(nan, f, _mm512_castsi512_ps(bits));
        }
        _mm512_storeu_ps(y + i, f);
    }
    quant_deq_f16(p + 2 * i, y + i, n - i);
}

X86_AVX512 void quant_deq_q8_0_avx512(const void *src, float *y, int64_t n)
{
    for (const uint8_t *b = src; n > 0; n -= 32, b += 34, y += 32) {
        const __m512 d = _mm512_set1_ps(scale_f16(b));
        store_i8x16(y, _mm_loadu_si128((const __m128i *)(b + 2)), d);
        store_i8x16(y + 16, _mm_loadu_si128((const __m128i *)(b + 18)), d);
    }
}

X86_AVX512 void quant_deq_q4_0_avx512(const void *src, float *y, int64_t n)
{
    const __m128i m4 = _mm_set1_epi8(0x0f), eight = _mm_set1_epi8(8);
    for (const uint8_t *b = src; n > 0; n -= 32, b += 18, y += 32) {
        const __m512 d = _mm512_set1_ps(scale_f16(b));
        const __m128i q = _mm_loadu_si128((const __m128i *)(b + 2));
        store_i8x16(y, _mm_sub_epi8(_mm_and_si128(q, m4), eight), d);
        store_i8x16(y + 16, _mm_sub_epi8(_mm_and_si128(_mm_srli_epi16(q, 4), m4), eight), d);
    }
}

/* The other 32-value types through one table lookup per nibble (nibble_lookup_avx512.h), then the scalar
 * decoder's operations in its order: (value) * d, then + m for the types with a min. The values are small
 * integers (or kvalues), exact in f32 before and after the fifth bit's + 16, so the results are the scalar
 * decoder's bits. */
X86_AVX512 static inline void deq_nibbles(const uint8_t *b, float *y, int64_t n, quant_nibble_form F)
{
    const __m512 table = quant_nibble_table_avx512(F);
    for (; n > 0; n -= 32, b += F.block_bytes, y += 32) {
        const __m512 d = _mm512_set1_ps(scale_f16(b));
        __m512 lo, hi;
        quant_lookup32_avx512(b + F.qs_at, table, &lo, &hi);
        if (F.qh_at >= 0)
            quant_fifth_bits32_avx512(rd32(b + F.qh_at), &lo, &hi);
        lo = _mm512_mul_ps(lo, d);
        hi = _mm512_mul_ps(hi, d);
        if (F.m_at >= 0) {
            const __m512 m = _mm512_set1_ps(scale_f16(b + F.m_at));
            lo = _mm512_add_ps(lo, m);
            hi = _mm512_add_ps(hi, m);
        }
        _mm512_storeu_ps(y, lo);
        _mm512_storeu_ps(y + 16, hi);
    }
}

X86_AVX512 void quant_deq_q4_1_avx512(const void *src, float *y, int64_t n)
{
    deq_nibbles(src, y, n, quant_nibble_forms[QUANT_NIB_Q4_1]);
}

X86_AVX512 void quant_deq_q5_0_avx512(const void *src, float *y, int64_t n)
{
    deq_nibbles(src, y, n, quant_nibble_forms[QUANT_NIB_Q5_0]);
}

X86_AVX512 void quant_deq_q5_1_avx512(const void *src, float *y, int64_t n)
{
    deq_nibbles(src, y, n, quant_nibble_forms[QUANT_NIB_Q5_1]);
}

X86_AVX512 void quant_deq_iq4_nl_avx512(const void *src, float *y, int64_t n)
{
    deq_nibbles(src, y, n, quant_nibble_forms[QUANT_NIB_IQ4_NL]);
}

/* IQ4_XS: sub-block ib of 32 is IQ4_NL's layout with the scale d (ls - 32), computed as the scalar decoder does. */
X86_AVX512 void quant_deq_iq4_xs_avx512(const void *src, float *y, int64_t n)
{
    const __m512 table = quant_iq4_table_avx512();
    for (const uint8_t *b = src; n > 0; n -= QK_K, b += 136) {
        const float d = scale_f16(b);
        const uint16_t scales_h = rd16(b + 2);
        for (int ib = 0; ib < 8; ib++, y += 32) {
            const int ls = ((b[4 + ib / 2] >> 4 * (ib % 2)) & 0xf) | (((scales_h >> 2 * ib) & 3) << 4);
            const __m512 dl = _mm512_set1_ps(d * (float)(ls - 32));
            __m512 lo, hi;
            quant_lookup32_avx512(b + 8 + 16 * ib, table, &lo, &hi);
            _mm512_storeu_ps(y, _mm512_mul_ps(dl, lo));
            _mm512_storeu_ps(y + 16, _mm512_mul_ps(dl, hi));
        }
    }
}

/* y[0..32) = d * q - m for 32 unsigned byte values in v (scalar order: mul, then sub). */
X86_AVX512 static inline void scale_sub_32(float *y, __m256i v, float d, float m)
{
    const __m512 vd = _mm512_set1_ps(d), vm = _mm512_set1_ps(m);
    const __m512 lo = _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(_mm256_castsi256_si128(v)));
    const __m512 hi = _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(_mm256_extracti128_si256(v, 1)));
    _mm512_storeu_ps(y, _mm512_sub_ps(_mm512_mul_ps(vd, lo), vm));
    _mm512_storeu_ps(y + 16, _mm512_sub_ps(_mm512_mul_ps(vd, hi), vm));
}

/* y[0..16) = a * q, y[16..32) = c * q for 32 signed bytes q */
X86_AVX512 static inline void q6_store_32(float *y, __m256i q, float a, float c)
{
    store_i8x16(y, _mm256_castsi256_si128(q), _mm512_set1_ps(a));
    store_i8x16(y + 16, _mm256_extracti128_si256(q, 1), _mm512_set1_ps(c));
}

#define SIMD_TARGET X86_AVX512
#define SIMD_NAME(base) base##_avx512
#include "simd_kquants.inc"

#endif
