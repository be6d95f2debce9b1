/*
 * Fused dots of IQ4_NL, MXFP4, Q8_0 and IQ4_XS at the AVX-512 level: one row against f32 x, 16 lanes at a time (Q4_0,
 * Q4_1, Q5_0 and Q5_1 take the field form there: vecdot_fields_avx512.c).
 *
 * A 4-bit index becomes its float in one table lookup (nibble_lookup_avx512.h); the table carries the
 * type's offset (Q4_0: q - 8, Q5_0: q - 16, IQ4_NL/IQ4_XS: kvalues_iq4nl), so no sum of x is needed for
 * them; Q5's fifth bit adds 16 under a lane mask read straight from qh. The AVX2 twins (vecdot.c) widen and convert bytes 8 at a time: about 25
 * instructions per block against 11 here, and generation of these types was compute bound (16-19 GB/s
 * of weights on SmolLM2, where Q8_0 and F16 reach 35-50).
 *
 * Sums are f32, per block (d applied once per block with an FMA), in two interleaved accumulators; they
 * agree with dequantize-then-dot to f32 rounding (test_quant holds every fused dot to that).
 */
#include "x86_target.h"
#include "x86.h"

#if defined(__x86_64__)
#include <immintrin.h>
#include "nibble_lookup_avx512.h"
#include "prefetch_ahead.h"


X86_AVX512 static inline float f16c(const uint8_t *p)
{
    return _cvtsh_ss(rd16(p));
}

/* One block's sum(value x) before d, and, for a type with a min, sum(x) scaled by m into *macc. */
X86_AVX512 static inline __m512 legacy_block(const uint8_t *b, const float *x, __m512 table, quant_nibble_form F,
                                         __m512 *macc)
{
    __m512 lo, hi;
    quant_lookup32_avx512(b + F.qs_at, table, &lo, &hi);
    if (F.qh_at >= 0)
        quant_fifth_bits32_avx512(rd32(b + F.qh_at), &lo, &hi);
    const __m512 x0 = _mm512_loadu_ps(x), x1 = _mm512_loadu_ps(x + 16);
    if (F.m_at >= 0)
        *macc = _mm512_fmadd_ps(_mm512_add_ps(x0, x1), _mm512_set1_ps(f16c(b + F.m_at)), *macc);
    return _mm512_fmadd_ps(hi, x1, _mm512_mul_ps(lo, x0));
}

/* A block's scale d: an f16 at its start, or MXFP4's E8M0 byte (2^(e - 128)). */
X86_AVX512 static inline __m512 block_scale(const uint8_t *b, bool e8m0)
{
    return _mm512_set1_ps(e8m0 ? quant_e8m0_half(b[0]) : f16c(b));
}

X86_AVX512 static inline float dot_legacy(const uint8_t *b, const float *x, int64_t n, quant_nibble_form F,
                                          __m512 table, bool e8m0)
{
    __m512 acc0 = _mm512_setzero_ps(), acc1 = acc0, macc = acc0;
    int64_t i = 0;
    for (; i + 64 <= n; i += 64, b += 2 * F.block_bytes, x += 64) {
        prefetch_block_ahead(b, 2 * F.block_bytes, n);
        acc0 = _mm512_fmadd_ps(legacy_block(b, x, table, F, &macc), block_scale(b, e8m0), acc0);
        acc1 = _mm512_fmadd_ps(legacy_block(b + F.block_bytes, x + 32, table, F, &macc),
                               block_scale(b + F.block_bytes, e8m0), acc1);
    }
    if (i < n)
        acc0 = _mm512_fmadd_ps(legacy_block(b, x, table, F, &macc), block_scale(b, e8m0), acc0);
    return _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(acc0, acc1), macc));
}

X86_AVX512 float cpu_dot_iq4_nl_avx512(const void *src, const float *x, int64_t n)
{
    const quant_nibble_form F = quant_nibble_forms[QUANT_NIB_IQ4_NL];
    return dot_legacy(src, x, n, F, quant_nibble_table_avx512(F), false);
}

/* MXFP4 [e:e8m0][qs:16]: IQ4_NL's nibble order, its levels E2M1 doubled (ggml's kvalues_mxfp4), d = 2^(e - 128). */
X86_AVX512 float cpu_dot_mxfp4_avx512(const void *src, const float *x, int64_t n)
{
    const __m128i kv = _mm_loadu_si128((const __m128i *)quant_kvalues_mxfp4);
    const __m512 levels = _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(kv));
    return dot_legacy(src, x, n, (quant_nibble_form){ 17, -1, -1, 1, 0.0f, false }, levels, true);
}

/* IQ4_XS: per 256 values [d:f16][scales_h:u16][scales_l:4][qs:128]; sub-block ib of 32 is IQ4_NL's nibble
 * layout with the scale d (ls - 32), ls 6 bits (low 4 from scales_l, high 2 from scales_h). */
X86_AVX512 float cpu_dot_iq4_xs_avx512(const void *src, const float *x, int64_t n)
{
    const uint8_t *b = src;
    const __m512 table = quant_iq4_table_avx512();
    __m512 acc0 = _mm512_setzero_ps(), acc1 = acc0;
    const int64_t row = n;
    for (; n > 0; n -= 256, b += 136) {
        prefetch_block_ahead(b, 136, row);
        const float d = f16c(b);
        const unsigned scales_h = rd16(b + 2);
        for (int ib = 0; ib < 8; ib += 2, x += 64) {
            __m512 s[2];
            for (int j = 0; j < 2; j++) {
                const int k = ib + j;
                const int ls = ((b[4 + k / 2] >> 4 * (k % 2)) & 0xf) | (int)(((scales_h >> 2 * k) & 3) << 4);
                __m512 lo, hi;
                quant_lookup32_avx512(b + 8 + 16 * k, table, &lo, &hi);
                s[j] = _mm512_mul_ps(_mm512_fmadd_ps(hi, _mm512_loadu_ps(x + 32 * j + 16),
                                                     _mm512_mul_ps(lo, _mm512_loadu_ps(x + 32 * j))),
                                     _mm512_set1_ps(d * (float)(ls - 32)));
            }
            acc0 = _mm512_add_ps(acc0, s[0]);
            acc1 = _mm512_add_ps(acc1, s[1]);
        }
    }
    return _mm512_reduce_add_ps(_mm512_add_ps(acc0, acc1));
}

/* Q8_0: per 32 values an f16 scale and 32 signed bytes, widened 16 at a time; sum(q x) before d. */
X86_AVX512 static inline __m512 q8_block(const uint8_t *b, const float *x)
{
    const __m512 lo = _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128((const __m128i *)(b + 2))));
    const __m512 hi = _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128((const __m128i *)(b + 18))));
    return _mm512_fmadd_ps(hi, _mm512_loadu_ps(x + 16), _mm512_mul_ps(lo, _mm512_loadu_ps(x)));
}

X86_AVX512 float cpu_dot_q8_0_avx512(const void *src, const float *x, int64_t n)
{
    const uint8_t *b = src;
    __m512 acc0 = _mm512_setzero_ps(), acc1 = acc0;
    int64_t i = 0;
    for (; i + 64 <= n; i += 64, b += 68, x += 64) {
        prefetch_block_ahead(b, 68, n);
        acc0 = _mm512_fmadd_ps(q8_block(b, x), _mm512_set1_ps(f16c(b)), acc0);
        acc1 = _mm512_fmadd_ps(q8_block(b + 34, x + 32), _mm512_set1_ps(f16c(b + 34)), acc1);
    }
    if (i < n)
        acc0 = _mm512_fmadd_ps(q8_block(b, x), _mm512_set1_ps(f16c(b)), acc0);
    return _mm512_reduce_add_ps(_mm512_add_ps(acc0, acc1));
}

#endif
