/* Private to quant/'s x86 files (after <immintrin.h>): Q2_K's and Q3_K's 2-bit quants, 32 at a time, for the
 * integer dots (act_unpack_avx2.h); Q3_K's scales for the fused dots (vecdot.c, simd_avx512.c). */
#ifndef GGUFSCOPE_QUANT_K23_CHUNK_AVX2_H
#define GGUFSCOPE_QUANT_K23_CHUNK_AVX2_H
#include "x86_target.h"

/* Chunk c (0..7) of a block's 256 values: half c / 4's 32 quant bytes q shifted down 2 (c % 4), low 2 bits;
 * for Q3_K (hm: its 32 hmask bytes) minus 4 where bit c of the value's hmask byte is clear. */
X86_AVX2 static inline __m256i quant_k23_chunk(__m256i q, int c, const __m256i *hm)
{
    const __m256i v = _mm256_and_si256(_mm256_srl_epi16(q, _mm_cvtsi32_si128(2 * (c % 4))), _mm256_set1_epi8(3));
    if (!hm)
        return v;
    const __m256i clear = _mm256_cmpeq_epi8(_mm256_and_si256(*hm, _mm256_set1_epi8((char)(1 << c))),
                                            _mm256_setzero_si256());
    return _mm256_sub_epi8(v, _mm256_and_si256(clear, _mm256_set1_epi8(4)));
}

/* Q3_K's 16 signed 6-bit scales from their 12 bytes, as quant_q3k_scales reads them: low 4 bits in the nibbles
 * of bytes 0-7 (scales 0-7 low, 8-15 high), high 2 bits of scale j at bits 2 (j / 4) of byte 8 + j % 4, so
 * the 4 bytes shifted by 0, 2, 4 and 6 are the high bits of scales 0-3, 4-7, 8-11 and 12-15 in byte order. */
X86_AVX2 static inline __m128i quant_q3k_scales16(const uint8_t *p)
{
    const __m128i l = _mm_loadl_epi64((const __m128i *)p);
    const uint32_t aux = rd32(p + 8);
    const __m128i low4 = _mm_and_si128(_mm_unpacklo_epi64(l, _mm_srli_epi16(l, 4)), _mm_set1_epi8(0x0f));
    const __m128i high2 = _mm_and_si128(_mm_setr_epi32((int)aux, (int)(aux >> 2), (int)(aux >> 4), (int)(aux >> 6)),
                                        _mm_set1_epi8(3));
    return _mm_sub_epi8(_mm_or_si128(low4, _mm_slli_epi16(high2, 4)), _mm_set1_epi8(32));
}

#endif
