/*
 * AVX-512 VNNI integer dots of Q4_K and Q6_K rows with Q8_K activations: the two types of a Q4_K_M file, the
 * generation path of --numerics ggml. Bit for bit the AVX2 dots (act_dot_avx2.c), which add up as ggml's
 * vec_dot does: each 32-bit lane j of a chunk's product sums values 4j..4j+3 times the chunk half's scale, the
 * 8 lanes of a block add up in int32 and are scaled in f32 once. Here two chunks share a 512-bit register and
 * vpdpbusd makes each lane's sum of 4 products at once (unsigned weight bytes by signed activations, no 16-bit
 * step); the halves are added lane by lane at the block's end, so every lane holds the same integer as in the
 * AVX2 dot and the float steps after it are the same. Q6_K's weights are signed (q - 32): each lane takes
 * 32 times the sum of its activations off, made by a second vpdpbusd.
 */
#include "blocks.h"

#if defined(__x86_64__)
#include <immintrin.h>

#include "act_unpack_avx2.h"
#include "simd_hsum.h"

#define VNNI __attribute__((target("avx2,fma,f16c,avx512f,avx512vl,avx512bw,avx512vnni")))

/* Two chunks of 32 weight bytes as one register, in the order of 64 consecutive activation bytes. */
VNNI static inline __m512i pair(__m256i first, __m256i second)
{
    return _mm512_inserti64x4(_mm512_castsi256_si512(first), second, 1);
}

/* Per lane: the lane's 4-value group scale (halves of 16 values: lanes 0-3, 4-7, 8-11, 12-15). */
VNNI static inline __m512i half_scales(int a_lo, int a_hi, int b_lo, int b_hi)
{
    return _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_setr_m128i(_mm_set1_epi32(a_lo), _mm_set1_epi32(a_hi))),
                              _mm256_setr_m128i(_mm_set1_epi32(b_lo), _mm_set1_epi32(b_hi)), 1);
}

/* The 8 lanes of the AVX2 dot's block sum: the two chunks' lanes added. */
VNNI static inline __m256i fold(__m512i s)
{
    return _mm256_add_epi32(_mm512_castsi512_si256(s), _mm512_extracti64x4_epi64(s, 1));
}

VNNI static INLINE void q4k_body(const uint8_t *b, const uint8_t *a, uint64_t as, int nt, int64_t n, float *out)
{
    __m256 acc[ACT_MAX_ROWS];
    float mins[ACT_MAX_ROWS];
    for (int t = 0; t < nt; t++)
        acc[t] = _mm256_setzero_ps(), mins[t] = 0.0f;
    const __m256i low4 = _mm256_set1_epi8(0x0f);
    for (int64_t i = 0; i < n; i += QK_K, b += 144, a += Q8K_BYTES) {
        __m512i w[4], sc[4];
        uint8_t m[8];
        for (int j = 0; j < 4; j++) {  /* chunk 2j: low nibbles of qs[32j..], chunk 2j + 1: their high ones */
            const __m256i q = load32(b + 16 + 32 * j);
            w[j] = pair(_mm256_and_si256(q, low4), _mm256_and_si256(_mm256_srli_epi16(q, 4), low4));
            uint8_t s0, s1;
            kq_scale_min(2 * j, b + 4, &s0, &m[2 * j]);
            kq_scale_min(2 * j + 1, b + 4, &s1, &m[2 * j + 1]);
            sc[j] = half_scales(s0, s0, s1, s1);
        }
        const float d = f16c(b), dmin = f16c(b + 2);
        for (int t = 0; t < nt; t++) {
            const uint8_t *y = a + t * as;
            __m512i isum = _mm512_setzero_si512();
            for (int j = 0; j < 4; j++) {
                const __m512i dp = _mm512_dpbusd_epi32(_mm512_setzero_si512(), w[j], _mm512_loadu_si512(y + 4 + 64 * j));
                isum = _mm512_add_epi32(isum, _mm512_mullo_epi32(dp, sc[j]));
            }
            const float da = q8k_d(y);
            acc[t] = _mm256_fmadd_ps(_mm256_set1_ps(d * da), _mm256_cvtepi32_ps(fold(isum)), acc[t]);
            mins[t] += dmin * da * (float)q8k_mins_by_32(y, m);
        }
    }
    for (int t = 0; t < nt; t++)
        out[t] = quant_hsum8(acc[t]) - mins[t];
}

VNNI static INLINE void q6k_body(const uint8_t *b, const uint8_t *a, uint64_t as, int nt, int64_t n, float *out)
{
    __m256 acc[ACT_MAX_ROWS];
    for (int t = 0; t < nt; t++)
        acc[t] = _mm256_setzero_ps();
    const __m512i thirty_two = _mm512_set1_epi8(32);
    for (int64_t i = 0; i < n; i += QK_K, b += 210, a += Q8K_BYTES) {
        const int8_t *s = (const int8_t *)(b + 192);
        __m512i w[4], sc[4];
        for (int h = 0; h < 2; h++) {  /* chunks 4h .. 4h + 3, unsigned (q, not q - 32) */
            __m256i q[4];
            q6k_half_chunks(b, h, q);
            for (int p = 0; p < 2; p++) {
                const int c = 2 * p, g = 8 * h + 2 * c;
                w[2 * h + p] = pair(q[c], q[c + 1]);
                sc[2 * h + p] = half_scales(s[g], s[g + 1], s[g + 2], s[g + 3]);
            }
        }
        const float d = f16c(b + 208);
        for (int t = 0; t < nt; t++) {
            const uint8_t *y = a + t * as;
            __m512i isum = _mm512_setzero_si512();
            for (int j = 0; j < 4; j++) {
                const __m512i ya = _mm512_loadu_si512(y + 4 + 64 * j);
                const __m512i dp = _mm512_sub_epi32(_mm512_dpbusd_epi32(_mm512_setzero_si512(), w[j], ya),
                                                    _mm512_dpbusd_epi32(_mm512_setzero_si512(), thirty_two, ya));
                isum = _mm512_add_epi32(isum, _mm512_mullo_epi32(dp, sc[j]));
            }
            acc[t] = _mm256_fmadd_ps(_mm256_set1_ps(d * q8k_d(y)), _mm256_cvtepi32_ps(fold(isum)), acc[t]);
        }
    }
    for (int t = 0; t < nt; t++)
        out[t] = quant_hsum8(acc[t]);
}

#define VNNI_ENTRY_POINTS(name, body)                                                                          \
    VNNI void quant_act_dot_##name##_vnni(const void *w, const void *a, int64_t n, float *out)                  \
    {                                                                                                          \
        body(w, a, 0, 1, n, out);                                                                              \
    }                                                                                                          \
    VNNI void quant_act_dot4_##name##_vnni(const void *w, const void *a, uint64_t as, int64_t n, float out[4]) \
    {                                                                                                          \
        body(w, a, as, 4, n, out);                                                                             \
    }
VNNI_ENTRY_POINTS(q4_k, q4k_body)
VNNI_ENTRY_POINTS(q6_k, q6k_body)

#endif
