/* Private to quant/'s x86 files (after <immintrin.h>): Q2_K's and Q3_K's 2-bit quants, 32 at a time, for the
 * fused dots (vecdot.c, vecdot_avx512.c) and the integer dots (act_unpack_avx2.h). */
#ifndef GGUFSCOPE_QUANT_K23_CHUNK_AVX2_H
#define GGUFSCOPE_QUANT_K23_CHUNK_AVX2_H

/* Chunk c (0..7) of a block's 256 values: half c / 4's 32 quant bytes q shifted down 2 (c % 4), low 2 bits;
 * for Q3_K (hm: its 32 hmask bytes) minus 4 where bit c of the value's hmask byte is clear. */
__attribute__((target("avx2"))) static inline __m256i quant_k23_chunk(__m256i q, int c, const __m256i *hm)
{
    const __m256i v = _mm256_and_si256(_mm256_srl_epi16(q, _mm_cvtsi32_si128(2 * (c % 4))), _mm256_set1_epi8(3));
    if (!hm)
        return v;
    const __m256i clear = _mm256_cmpeq_epi8(_mm256_and_si256(*hm, _mm256_set1_epi8((char)(1 << c))),
                                            _mm256_setzero_si256());
    return _mm256_sub_epi8(v, _mm256_and_si256(clear, _mm256_set1_epi8(4)));
}

#endif
