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

/* A block's f16 scale through F16C: the software conversion's call was 29% of a SmolLM2 (Q4_1) token. */
AVX2 static inline float f16c(const uint8_t *p)
{
    return _cvtsh_ss(rd16(p));
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
        acc = _mm256_fmadd_ps(s, _mm256_set1_ps(f16c(b)), acc);
    }
    return quant_hsum8(acc);
}

/* BF16: the top half of an f32, so each value widens to 32 bits and shifts up 16 (no rounding). */
AVX2 float quant_dot_bf16_avx2(const void *src, const float *x, int64_t n)
{
    const uint8_t *b = src;
    __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const __m256i v = _mm256_loadu_si256((const __m256i *)(b + 2 * i));
        const __m256 lo = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(_mm256_castsi256_si128(v)), 16));
        const __m256 hi = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(_mm256_extracti128_si256(v, 1)), 16));
        acc0 = _mm256_fmadd_ps(lo, _mm256_loadu_ps(x + i), acc0);
        acc1 = _mm256_fmadd_ps(hi, _mm256_loadu_ps(x + i + 8), acc1);
    }
    float tail = 0.0f;
    for (; i < n; i++)
        tail += quant_bf16_to_f32((uint16_t)(b[2 * i] | b[2 * i + 1] << 8)) * x[i];
    return quant_hsum8(_mm256_add_ps(acc0, acc1)) + tail;
}

/* Q2_K: per 256 values 16 bytes of scales (low nibble: scale, high: min), 64 bytes of 2-bit quants, d and dmin
 * (f16) last. Each 128 values take 32 quant bytes; shift s of them gives 32 values, 16 per scale (ggml-common.h's
 * block_q2_K; the order the scalar decoder walks). */
AVX2 float quant_dot_q2_k_avx2(const void *src, const float *x, int64_t n)
{
    const uint8_t *b = src;
    __m256 acc = _mm256_setzero_ps(), macc = _mm256_setzero_ps();
    const __m256i three = _mm256_set1_epi8(3);
    for (; n > 0; n -= 256, b += 84) {
        const float d = f16c(b + 80), dmin = f16c(b + 82);
        int is = 0;
        for (int half = 0; half < 2; half++) {
            const __m256i q = _mm256_loadu_si256((const __m256i *)(b + 16 + 32 * half));
            for (int shift = 0; shift < 8; shift += 2) {
                const __m256i v = _mm256_and_si256(_mm256_srl_epi16(q, _mm_cvtsi32_si128(shift)), three);
                const __m128i lanes[2] = { _mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1) };
                for (int part = 0; part < 2; part++, x += 16, is++) {
                    const __m256 x0 = _mm256_loadu_ps(x), x1 = _mm256_loadu_ps(x + 8);
                    __m256 s = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(lanes[part])), x0);
                    s = _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_srli_si128(lanes[part], 8))), x1, s);
                    acc = _mm256_fmadd_ps(s, _mm256_set1_ps(d * (float)(b[is] & 0xf)), acc);
                    macc = _mm256_fmadd_ps(_mm256_add_ps(x0, x1), _mm256_set1_ps(dmin * (float)(b[is] >> 4)), macc);
                }
            }
        }
    }
    return quant_hsum8(acc) - quant_hsum8(macc);
}

/* Q3_K: per 256 values hmask[32], 2-bit quants[64], 12 bytes of 6-bit scales, d (f16). In the order the scalar
 * decoder walks (as Q2_K): each 128 values take 32 quant bytes, shift s gives 32 values, 16 per scale; a value
 * is its 2 bits minus 4 where its bit of hmask (bit s/2 + 4 * half) is clear. */
AVX2 float quant_dot_q3_k_avx2(const void *src, const float *x, int64_t n)
{
    const uint8_t *b = src;
    __m256 acc = _mm256_setzero_ps();
    const __m256i three = _mm256_set1_epi8(3), four = _mm256_set1_epi8(4), zero = _mm256_setzero_si256();
    for (; n > 0; n -= 256, b += 110) {
        int8_t scales[16];
        quant_q3k_scales(b + 96, scales);
        const float d = f16c(b + 108);
        const __m256i hm = _mm256_loadu_si256((const __m256i *)b);
        int is = 0, bit = 0;
        for (int half = 0; half < 2; half++) {
            const __m256i q = _mm256_loadu_si256((const __m256i *)(b + 32 + 32 * half));
            for (int shift = 0; shift < 8; shift += 2, bit++) {
                const __m256i low = _mm256_and_si256(_mm256_srl_epi16(q, _mm_cvtsi32_si128(shift)), three);
                const __m256i clear = _mm256_cmpeq_epi8(_mm256_and_si256(hm, _mm256_set1_epi8((char)(1 << bit))), zero);
                const __m256i v = _mm256_sub_epi8(low, _mm256_and_si256(clear, four));
                const __m128i lanes[2] = { _mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1) };
                for (int part = 0; part < 2; part++, x += 16, is++) {
                    __m256 s = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(lanes[part])), _mm256_loadu_ps(x));
                    s = _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_srli_si128(lanes[part], 8))),
                                        _mm256_loadu_ps(x + 8), s);
                    acc = _mm256_fmadd_ps(s, _mm256_set1_ps(d * (float)scales[is]), acc);
                }
            }
        }
    }
    return quant_hsum8(acc);
}

#endif
