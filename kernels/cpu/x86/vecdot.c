/*
 * Fused dot products: one quantized row against f32 activations, decoded in
 * registers and never written out (the decode path of a matrix-vector
 * product is bound by how fast weight bytes turn into multiply-adds).
 * Block layouts as in the decoders (ggml-common.h); sums are f32 in a
 * different order than "dequantize, then dot", so results agree to rounding.
 */
#include "x86_target.h"
#include "x86.h"

#if defined(__x86_64__)
#include <immintrin.h>
#include "prefetch_ahead.h"
#include "simd_hsum.h"

/* A block's f16 scale through F16C: the software conversion's call was 29% of a SmolLM2 (Q4_1) token. */
X86_AVX2 static inline float f16c(const uint8_t *p)
{
    return _cvtsh_ss(rd16(p));
}

/* Q8_0: per 32 values an f16 scale and 32 signed bytes. */
X86_AVX2 float cpu_dot_q8_0_avx2(const void *src, const float *x, int64_t n)
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
X86_AVX2 float cpu_dot_bf16_avx2(const void *src, const float *x, int64_t n)
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

#endif
