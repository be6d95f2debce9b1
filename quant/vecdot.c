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

/* 32 unsigned bytes (0..15 or 0..63) times x[0..31], as f32. */
AVX2 static inline __m256 dot32_u8(__m256i q, const float *x, __m256 *xsum)
{
    __m128i lo = _mm256_castsi256_si128(q), hi = _mm256_extracti128_si256(q, 1);
    __m256 x0 = _mm256_loadu_ps(x), x1 = _mm256_loadu_ps(x + 8), x2 = _mm256_loadu_ps(x + 16),
           x3 = _mm256_loadu_ps(x + 24);
    __m256 s = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(lo)), x0);
    s = _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_srli_si128(lo, 8))), x1, s);
    s = _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(hi)), x2, s);
    s = _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_srli_si128(hi, 8))), x3, s);
    *xsum = _mm256_add_ps(_mm256_add_ps(x0, x1), _mm256_add_ps(x2, x3));
    return s;
}

/* Q4_K: per 256-value block d, dmin (f16), 12 bytes of 6-bit scales/mins,
 * 128 bytes of nibbles; 64-value chunk j: low nibbles of qs[32j..] use
 * scale/min 2j, high nibbles 2j+1; y = d*sc*q - dmin*m. */
AVX2 float quant_dot_q4_k_avx2(const void *src, const float *x, int64_t n)
{
    const uint8_t *b = src;
    const __m256i mask = _mm256_set1_epi8(0x0f);
    __m256 acc = _mm256_setzero_ps(), macc = _mm256_setzero_ps();
    for (int64_t i = 0; i < n; i += QK_K, b += 144, x += QK_K) {
        float d = f16c(b), dmin = f16c(b + 2);
        const uint8_t *scales = b + 4, *qs = b + 16;
        for (int j = 0; j < 4; j++) {
            float d1, m1, d2, m2;
            kq_pair(2 * j, scales, d, dmin, &d1, &m1, &d2, &m2);
            __m256i q = _mm256_loadu_si256((const __m256i *)(qs + 32 * j));
            __m256 xs1, xs2;
            __m256 s1 = dot32_u8(_mm256_and_si256(q, mask), x + 64 * j, &xs1);
            __m256 s2 = dot32_u8(_mm256_and_si256(_mm256_srli_epi16(q, 4), mask), x + 64 * j + 32, &xs2);
            acc = _mm256_fmadd_ps(s1, _mm256_set1_ps(d1), acc);
            acc = _mm256_fmadd_ps(s2, _mm256_set1_ps(d2), acc);
            macc = _mm256_fmadd_ps(xs1, _mm256_set1_ps(m1), macc);
            macc = _mm256_fmadd_ps(xs2, _mm256_set1_ps(m2), macc);
        }
    }
    return quant_hsum8(acc) - quant_hsum8(macc);
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

/* The legacy 32-value types: 16 bytes of nibbles (value j in the low nibble of byte j, value j + 16
 * in its high nibble), for the 5-bit ones a 32-bit qh whose bit j is value j's fifth bit, and
 *   Q4_0: | d | qs[16] |            y = d (q - 8)      Q4_1: | d | m | qs[16] |       y = d q + m
 *   Q5_0: | d | qh | qs[16] |       y = d (q - 16)     Q5_1: | d | m | qh | qs[16] |  y = d q + m
 * (d, m f16; ggml-common.h's block_q4_0 ... block_q5_1). The 32 unsigned q go through dot32_u8, which
 * also sums x, so the offset or the min is applied once per block: d sum(q x) + (m or -offset d) sum(x). */
AVX2 static inline __m256i nibbles32(const uint8_t *qs)
{
    const __m128i v = _mm_loadu_si128((const __m128i *)qs), mask = _mm_set1_epi8(0x0f);
    return _mm256_set_m128i(_mm_and_si128(_mm_srli_epi16(v, 4), mask), _mm_and_si128(v, mask));
}

/* Bit j of qh as 0x10 in byte j: each byte picks the qh byte holding its bit, then tests the bit. */
AVX2 static inline __m256i fifth_bits32(const uint8_t *qh_bytes)
{
    uint32_t qh;
    memcpy(&qh, qh_bytes, 4);
    const __m256i pick = _mm256_set_epi64x(0x0303030303030303, 0x0202020202020202, 0x0101010101010101, 0);
    const __m256i bit = _mm256_set1_epi64x((long long)0x8040201008040201ull);
    const __m256i v = _mm256_and_si256(_mm256_shuffle_epi8(_mm256_set1_epi32((int)qh), pick), bit);
    return _mm256_and_si256(_mm256_cmpeq_epi8(v, bit), _mm256_set1_epi8(0x10));
}

/* The 32 nibbles of a block without a fifth bit (qs as above) times x[0..31], as f32: 8 bytes at a time
 * widened to dwords straight from memory (one load-and-extend), the low nibbles masked and the high ones
 * shifted in the dword lanes. nibbles32 + dot32_u8 take byte shuffles and extracts on top, about 35
 * instructions a block against 23; SmolLM2 Q4_0 generation on the AVX2 path went from 209 to 231 tokens/s. */
AVX2 static inline __m256 dot32_nibbles(const uint8_t *qs, const float *x, __m256 *xsum)
{
    const __m256i mask = _mm256_set1_epi32(15);
    const __m256i v0 = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)qs));
    const __m256i v1 = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(qs + 8)));
    const __m256 x0 = _mm256_loadu_ps(x), x1 = _mm256_loadu_ps(x + 8), x2 = _mm256_loadu_ps(x + 16),
                 x3 = _mm256_loadu_ps(x + 24);
    __m256 s = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_and_si256(v0, mask)), x0);
    s = _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_and_si256(v1, mask)), x1, s);
    s = _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_srli_epi32(v0, 4)), x2, s);
    s = _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_srli_epi32(v1, 4)), x3, s);
    *xsum = _mm256_add_ps(_mm256_add_ps(x0, x1), _mm256_add_ps(x2, x3));
    return s;
}

/* One row of a legacy type: bytes per block, where d, m (or -1: none), qh (or -1) and qs sit, the offset. */
typedef struct legacy_layout {
    int block_bytes, m_at, qh_at, qs_at;
    float offset;
} legacy_layout;

AVX2 static inline float dot_legacy(const uint8_t *b, const float *x, int64_t n, legacy_layout L)
{
    __m256 acc = _mm256_setzero_ps(), macc = _mm256_setzero_ps();
    for (int64_t i = 0; i < n; i += 32, b += L.block_bytes, x += 32) {
        __m256 xs, s;
        if (L.qh_at >= 0)
            s = dot32_u8(_mm256_or_si256(nibbles32(b + L.qs_at), fifth_bits32(b + L.qh_at)), x, &xs);
        else
            s = dot32_nibbles(b + L.qs_at, x, &xs);
        const float d = f16c(b);
        acc = _mm256_fmadd_ps(s, _mm256_set1_ps(d), acc);
        macc = _mm256_fmadd_ps(xs, _mm256_set1_ps(L.m_at >= 0 ? f16c(b + L.m_at) : -L.offset * d), macc);
    }
    return quant_hsum8(acc) + quant_hsum8(macc);
}

AVX2 float quant_dot_q4_0_avx2(const void *src, const float *x, int64_t n)
{
    return dot_legacy(src, x, n, (legacy_layout){ 18, -1, -1, 2, 8.0f });
}

AVX2 float quant_dot_q4_1_avx2(const void *src, const float *x, int64_t n)
{
    return dot_legacy(src, x, n, (legacy_layout){ 20, 2, -1, 4, 0.0f });
}

AVX2 float quant_dot_q5_0_avx2(const void *src, const float *x, int64_t n)
{
    return dot_legacy(src, x, n, (legacy_layout){ 22, -1, 2, 6, 16.0f });
}

AVX2 float quant_dot_q5_1_avx2(const void *src, const float *x, int64_t n)
{
    return dot_legacy(src, x, n, (legacy_layout){ 24, 2, 4, 8, 0.0f });
}

/* 32 signed bytes times x[0..31], as f32. */
AVX2 static inline __m256 dot32_i8(__m256i q, const float *x)
{
    __m128i lo = _mm256_castsi256_si128(q), hi = _mm256_extracti128_si256(q, 1);
    __m256 s = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(lo)), _mm256_loadu_ps(x));
    s = _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_srli_si128(lo, 8))), _mm256_loadu_ps(x + 8), s);
    s = _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(hi)), _mm256_loadu_ps(x + 16), s);
    return _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_srli_si128(hi, 8))), _mm256_loadu_ps(x + 24), s);
}

/* IQ4_NL's and IQ4_XS's 4-bit indices into their 16 non-uniform values (ggml-common.h's kvalues_iq4nl), looked
 * up 32 at a time with one byte shuffle (the table fits a 128-bit lane). */
AVX2 static inline __m256i iq4_values32(const uint8_t *qs)
{
    const __m256i table = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)quant_kvalues_iq4nl));
    return _mm256_shuffle_epi8(table, nibbles32(qs));
}

/* IQ4_NL: [d:f16][qs:16] per 32 values, x = d * kvalues[nibble] (low nibbles first, as Q4_0). */
AVX2 float quant_dot_iq4_nl_avx2(const void *src, const float *x, int64_t n)
{
    const uint8_t *b = src;
    __m256 acc = _mm256_setzero_ps();
    for (int64_t i = 0; i < n; i += 32, b += 18, x += 32)
        acc = _mm256_fmadd_ps(dot32_i8(iq4_values32(b + 2), x), _mm256_set1_ps(f16c(b)), acc);
    return quant_hsum8(acc);
}

/* IQ4_XS: per 256 values [d:f16][scales_h:u16][scales_l:4][qs:128]; sub-block ib of 32 has the 6-bit scale
 * (low 4 bits from scales_l, high 2 from scales_h) minus 32, times d. */
AVX2 float quant_dot_iq4_xs_avx2(const void *src, const float *x, int64_t n)
{
    const uint8_t *b = src;
    __m256 acc = _mm256_setzero_ps();
    for (; n > 0; n -= 256, b += 136) {
        const float d = f16c(b);
        const unsigned scales_h = (unsigned)b[2] | (unsigned)b[3] << 8;
        for (int ib = 0; ib < 8; ib++, x += 32) {
            const int ls = ((b[4 + ib / 2] >> 4 * (ib % 2)) & 0xf) | (int)(((scales_h >> 2 * ib) & 3) << 4);
            acc = _mm256_fmadd_ps(dot32_i8(iq4_values32(b + 8 + 16 * ib), x), _mm256_set1_ps(d * (float)(ls - 32)), acc);
        }
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
