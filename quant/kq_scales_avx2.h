/* Private to quant/'s x86 files (after <immintrin.h>): the packed 6-bit scales and mins of Q4_K / Q5_K blocks
 * unpacked to bytes in AVX2, shared by the AVX2 and AVX-512 fused dots (inlined into either). */
#ifndef GGUFSCOPE_QUANT_KQ_SCALES_AVX2_H
#define GGUFSCOPE_QUANT_KQ_SCALES_AVX2_H

#include "x86_target.h"
#include <stdint.h>

/* The 8 scales (bytes 0-7) and 8 mins (bytes 8-15) of two Q4_K blocks, block a
 * in the low 128 bits and block b in the high, from their 12 packed bytes each
 * (kq_scale_min's layout: j < 4 in the low 6 bits of bytes j and j + 4; j >= 4
 * split between byte j + 4 and the top bits of bytes j - 4 and j). Two blocks
 * per 256-bit op: one at a time in 128-bit ops the scale work was 5-8% of the
 * AVX-512 dot, and pairing measured +1-4% on 2048- and 5632-value rows. Each load
 * reads 4 bytes past the scales, which are the block's own (Q4_K's qs, Q5_K's qh). */
X86_AVX2 static inline __m256i kq_scale_bytes_pair(const uint8_t *a, const uint8_t *b)
{
    const __m256i u = _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_loadu_si128((const __m128i *)(a + 4))),
                                              _mm_loadu_si128((const __m128i *)(b + 4)), 1); /* u0 u1 u2 (qs) */
    const __m256i p = _mm256_shuffle_epi32(u, _MM_SHUFFLE(2, 1, 2, 0));                    /* u0 u2 u1 u2 */
    const __m256i q = _mm256_shuffle_epi32(u, _MM_SHUFFLE(1, 1, 0, 0));                    /* u0 u0 u1 u1 */
    const __m256i low = _mm256_and_si256(_mm256_srlv_epi32(p, _mm256_setr_epi32(0, 0, 0, 4, 0, 0, 0, 4)),
                                         _mm256_setr_epi32(0x3f3f3f3f, 0x0f0f0f0f, 0x3f3f3f3f, 0x0f0f0f0f,
                                                           0x3f3f3f3f, 0x0f0f0f0f, 0x3f3f3f3f, 0x0f0f0f0f));
    const __m256i high = _mm256_and_si256(_mm256_srli_epi32(q, 2), _mm256_setr_epi32(0, 0x30303030, 0, 0x30303030,
                                                                                      0, 0x30303030, 0, 0x30303030));
    return _mm256_or_si256(low, high);
}

/* One block's 8 scales (bytes 0-7) and 8 mins (bytes 8-15): the pair's steps in 128 bits. */
X86_AVX2 static inline __m128i kq_scale_bytes(const uint8_t *b)
{
    const __m128i u = _mm_loadu_si128((const __m128i *)(b + 4));
    const __m128i low = _mm_and_si128(_mm_srlv_epi32(_mm_shuffle_epi32(u, _MM_SHUFFLE(2, 1, 2, 0)), _mm_setr_epi32(0, 0, 0, 4)),
                                      _mm_setr_epi32(0x3f3f3f3f, 0x0f0f0f0f, 0x3f3f3f3f, 0x0f0f0f0f));
    const __m128i high = _mm_and_si128(_mm_srli_epi32(_mm_shuffle_epi32(u, _MM_SHUFFLE(1, 1, 0, 0)), 2),
                                       _mm_setr_epi32(0, 0x30303030, 0, 0x30303030));
    return _mm_or_si128(low, high);
}

#endif
