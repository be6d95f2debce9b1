/* Private to quant/'s AVX-512 files (after <immintrin.h>): the 32 4-bit indices of a block (16 bytes, value j in
 * the low nibble of byte j, value j + 16 in its high nibble) turned into floats by one table lookup each.
 * The 16 bytes widen to 16 dwords (vpmovzxbd) and vpermps looks each dword's low 4 bits up in a 16-float
 * table held in one zmm: the low nibbles are the dwords as they are (vpermps ignores the other bits), the
 * high ones the same dwords shifted right by 4. */
#ifndef GGUFSCOPE_QUANT_NIBBLE_LOOKUP_AVX512_H
#define GGUFSCOPE_QUANT_NIBBLE_LOOKUP_AVX512_H

#include "x86_target.h"
#include <stdbool.h>
#include <stdint.h>


X86_AVX512 static inline void quant_lookup32_avx512(const uint8_t *qs, __m512 table, __m512 *lo, __m512 *hi)
{
    const __m512i v = _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)qs));
    *lo = _mm512_permutexvar_ps(v, table);
    *hi = _mm512_permutexvar_ps(_mm512_srli_epi32(v, 4), table);
}

/* The table q + offset for q = 0..15 (Q4_0: -8, Q5_0: -16, the types with a min: 0). */
X86_AVX512 static inline __m512 quant_ramp_avx512(float offset)
{
    return _mm512_add_ps(_mm512_set_ps(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0), _mm512_set1_ps(offset));
}

/* The table of IQ4_NL's and IQ4_XS's 16 levels (quant_kvalues_iq4nl). */
X86_AVX512 static inline __m512 quant_iq4_table_avx512(void)
{
    return _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128((const __m128i *)quant_kvalues_iq4nl)));
}

/* The 32-value types read through this lookup: where a block keeps m (-1: none), qh (-1: none) and qs (d is at
 * 0; ggml-common.h's block_q4_0 ... block_q5_1, block_iq4_nl), and the table its nibbles index: q + offset,
 * or IQ4_NL's levels. One table serves the fused dots (vecdot_avx512.c) and the decoders (simd_avx512.c). */
typedef struct quant_nibble_form {
    int block_bytes, m_at, qh_at, qs_at;
    float offset;
    bool iq4;
} quant_nibble_form;

enum { QUANT_NIB_Q4_0, QUANT_NIB_Q4_1, QUANT_NIB_Q5_0, QUANT_NIB_Q5_1, QUANT_NIB_IQ4_NL };
static const quant_nibble_form quant_nibble_forms[] = {
    [QUANT_NIB_Q4_0] = { 18, -1, -1, 2, -8.0f, false },  [QUANT_NIB_Q4_1] = { 20, 2, -1, 4, 0.0f, false },
    [QUANT_NIB_Q5_0] = { 22, -1, 2, 6, -16.0f, false },  [QUANT_NIB_Q5_1] = { 24, 2, 4, 8, 0.0f, false },
    [QUANT_NIB_IQ4_NL] = { 18, -1, -1, 2, 0.0f, true },
};

X86_AVX512 static inline __m512 quant_nibble_table_avx512(quant_nibble_form F)
{
    return F.iq4 ? quant_iq4_table_avx512() : quant_ramp_avx512(F.offset);
}

/* Q5's fifth bits: bit j of qh adds 16 to value j (lo: values 0-15, hi: 16-31). */
X86_AVX512 static inline void quant_fifth_bits32_avx512(uint32_t qh, __m512 *lo, __m512 *hi)
{
    const __m512 sixteen = _mm512_set1_ps(16.0f);
    *lo = _mm512_mask_add_ps(*lo, (__mmask16)qh, *lo, sixteen);
    *hi = _mm512_mask_add_ps(*hi, (__mmask16)(qh >> 16), *hi, sixteen);
}

#endif
