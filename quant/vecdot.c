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
#include "prefetch_ahead.h"
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
        prefetch_block_ahead(b, 34, n);
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
    /* 32 values and four accumulators an iteration, as the F16 row dot (kernels/cpu/dot.c): with 16 and two,
     * BF16 generation read 47 GB/s where F16 reads 50 */
    __m256 acc[4] = { _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps() };
    int64_t i = 0;
    for (; i + 32 <= n; i += 32)
        for (int k = 0; k < 4; k++) {
            const __m128i h = _mm_loadu_si128((const __m128i *)(b + 2 * (i + 8 * k)));
            const __m256 w = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
            acc[k] = _mm256_fmadd_ps(w, _mm256_loadu_ps(x + i + 8 * k), acc[k]);
        }
    for (; i + 8 <= n; i += 8) {
        const __m128i h = _mm_loadu_si128((const __m128i *)(b + 2 * i));
        acc[0] = _mm256_fmadd_ps(_mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16)),
                                 _mm256_loadu_ps(x + i), acc[0]);
    }
    float tail = 0.0f;
    for (; i < n; i++)
        tail += quant_bf16_to_f32((uint16_t)(b[2 * i] | b[2 * i + 1] << 8)) * x[i];
    return quant_hsum8(_mm256_add_ps(_mm256_add_ps(acc[0], acc[1]), _mm256_add_ps(acc[2], acc[3]))) + tail;
}

/* f * v[g] for 16 small integers v (bytes, sign-extended where is_signed), as floats to broadcast from memory:
 * one vector conversion per block where a scalar int-to-float conversion and multiply per group of 16 values
 * cost as much as the group's multiply-adds. */
AVX2 static inline void scaled16(__m128i v, bool is_signed, float f, float out[16])
{
    const __m256 lo = _mm256_cvtepi32_ps(is_signed ? _mm256_cvtepi8_epi32(v) : _mm256_cvtepu8_epi32(v));
    const __m256 hi = _mm256_cvtepi32_ps(is_signed ? _mm256_cvtepi8_epi32(_mm_srli_si128(v, 8))
                                                   : _mm256_cvtepu8_epi32(_mm_srli_si128(v, 8)));
    _mm256_storeu_ps(out, _mm256_mul_ps(lo, _mm256_set1_ps(f)));
    _mm256_storeu_ps(out + 8, _mm256_mul_ps(hi, _mm256_set1_ps(f)));
}

/* d * scale and dmin * min of each of a Q2_K block's 16 groups (the low and high nibbles of its first 16 bytes). */
AVX2 void quant_q2k_group_scales(const uint8_t *block, float ds[16], float ms[16])
{
    const __m128i sm = _mm_loadu_si128((const __m128i *)block), low4 = _mm_set1_epi8(0x0f);
    scaled16(_mm_and_si128(sm, low4), false, f16c(block + 80), ds);
    scaled16(_mm_and_si128(_mm_srli_epi16(sm, 4), low4), false, f16c(block + 82), ms);
}

/* Q3_K's 16 signed 6-bit scales from their 12 bytes, as quant_q3k_scales reads them: low 4 bits in the nibbles
 * of bytes 0-7 (scales 0-7 low, 8-15 high), high 2 bits of scale j at bits 2 (j / 4) of byte 8 + j % 4, so
 * the 4 bytes shifted by 0, 2, 4 and 6 are the high bits of scales 0-3, 4-7, 8-11 and 12-15 in byte order. */
AVX2 static inline __m128i q3k_scales16(const uint8_t *p)
{
    const __m128i l = _mm_loadl_epi64((const __m128i *)p);
    const uint32_t aux = rd32(p + 8);
    const __m128i low4 = _mm_and_si128(_mm_unpacklo_epi64(l, _mm_srli_epi16(l, 4)), _mm_set1_epi8(0x0f));
    const __m128i high2 = _mm_and_si128(_mm_setr_epi32((int)aux, (int)(aux >> 2), (int)(aux >> 4), (int)(aux >> 6)),
                                        _mm_set1_epi8(3));
    return _mm_sub_epi8(_mm_or_si128(low4, _mm_slli_epi16(high2, 4)), _mm_set1_epi8(32));
}

AVX2 void quant_q3k_group_scales(const uint8_t *block, float ds[16])
{
    scaled16(q3k_scales16(block + 96), true, f16c(block + 108), ds);
}

#endif
