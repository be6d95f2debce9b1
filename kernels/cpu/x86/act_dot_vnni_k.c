/*
 * AVX-512 VNNI integer dots of Q4_K and Q6_K rows with Q8_K activations: the two types of a Q4_K_M file, the
 * generation path of --numerics ggml. Bit for bit the AVX2 dots (act_dot_avx2.c), which add up as ggml's
 * vec_dot does: each 32-bit lane j of a chunk's product sums values 4j..4j+3 times the chunk half's scale, the
 * 8 lanes of a block add up in int32 and are scaled in f32 once. Here two chunks share a 512-bit register and
 * vpdpbusd makes each lane's sum of 4 products at once (unsigned weight bytes by signed activations, no 16-bit
 * step); the halves are added lane by lane at the block's end, so every lane holds the same integer as in the
 * AVX2 dot and the float steps after it are the same. Q6_K's -32 comes off the 8 lanes after that, as the AVX2
 * dot (and ggml's) takes it.
 */
#include "x86_target.h"
#include "x86.h"

#if defined(__x86_64__)
#include <immintrin.h>

#include "act_unpack_avx2.h"
#include "prefetch_ahead.h"
#include "row_sums.h"
#include "simd_hsum.h"


/* Two chunks of 32 weight bytes as one register, in the order of 64 consecutive activation bytes. */
X86_AVX512_VNNI static inline __m512i pair(__m256i first, __m256i second)
{
    return _mm512_inserti64x4(_mm512_castsi256_si512(first), second, 1);
}

/* The 8 lanes of the AVX2 dot's block sum: the two chunks' lanes added. */
X86_AVX512_VNNI static inline __m256i fold(__m512i s)
{
    return _mm256_add_epi32(_mm512_castsi512_si256(s), _mm512_extracti64x4_epi64(s, 1));
}

/* Lane l of chunk pair j's scales: for Q4_K the scale of chunk 2j + l / 8 (lanes 0-7 one chunk, 8-15 the
 * next), for Q6_K that of 16-value group 4j + l / 4; from the block's scales widened to 32 bits. */
X86_AVX512_VNNI static inline __m512i spread(__m512i s32, int first, int shift)
{
    const __m512i lane = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    return _mm512_permutexvar_epi32(_mm512_add_epi32(_mm512_set1_epi32(first), _mm512_srli_epi32(lane, shift)),
                                    s32);
}

/* A block's 16 lanes against Q8_K row y: each chunk pair's 4-product sums times its lanes' scales, the pairs added. */
X86_AVX512_VNNI static inline __m512i block_isum(const __m512i w[4], const __m512i sc[4], const uint8_t *y)
{
    __m512i isum = _mm512_setzero_si512();
    for (int j = 0; j < 4; j++) {
        const __m512i dp = _mm512_dpbusd_epi32(_mm512_setzero_si512(), w[j], _mm512_loadu_si512(y + 4 + 64 * j));
        isum = _mm512_add_epi32(isum, _mm512_mullo_epi32(dp, sc[j]));
    }
    return isum;
}

/* Those 16 lanes with the halves folded: the AVX2 dot's 8 lanes. */
X86_AVX512_VNNI static inline __m256i block_lanes(const __m512i w[4], const __m512i sc[4], const uint8_t *y)
{
    return fold(block_isum(w, sc, y));
}

/* A Q4_K block's quants as 4 registers of two chunks each (chunk 2j: low nibbles of qs[32j..], chunk 2j + 1: their
 * high ones), their scales spread to the lanes (sc), and its 8 mins widened to 16 bits. */
X86_AVX512_VNNI static INLINE void q4k_unpack(const uint8_t *b, __m512i w[4], __m512i sc[4], __m128i *mins16)
{
    const __m128i sm = kq_scale_bytes(b);
    const __m512i s32 = _mm512_cvtepu8_epi32(sm); /* lanes 0-7: the scales */
    *mins16 = _mm_cvtepu8_epi16(_mm_srli_si128(sm, 8));
    for (int j = 0; j < 4; j++) {
        const __m256i q = load32(b + 16 + 32 * j);
        w[j] = _mm512_and_si512(pair(q, _mm256_srli_epi16(q, 4)), _mm512_set1_epi8(0x0f));
        sc[j] = spread(s32, 2 * j, 3);
    }
}

/* The mins term as the AVX2 dot (q4k_body there) forms it, in 4 lanes added after the 8. */
X86_AVX512_VNNI static INLINE void q4k_body(const uint8_t *b, const uint8_t *a, uint64_t as, int nt, int64_t n, float *out)
{
    __m256 acc[ACT_MAX_ROWS];
    __m128 acc_m[ACT_MAX_ROWS];
    for (int t = 0; t < nt; t++)
        acc[t] = _mm256_setzero_ps(), acc_m[t] = _mm_setzero_ps();
    for (int64_t i = 0; i < n; i += QK_K, b += 144, a += Q8K_BYTES) {
        prefetch_block_ahead(b, 144, n);
        __m512i w[4], sc[4];
        __m128i mins16;
        q4k_unpack(b, w, sc, &mins16);
        const float d = f16c(b), dmin = f16c(b + 2);
        for (int t = 0; t < nt; t++) {
            const uint8_t *y = a + t * as;
            const float da = q8k_d(y);
            acc[t] = _mm256_fmadd_ps(_mm256_set1_ps(d * da), _mm256_cvtepi32_ps(block_lanes(w, sc, y)), acc[t]);
            acc_m[t] = _mm_fmadd_ps(_mm_set1_ps(dmin * da), _mm_cvtepi32_ps(q8k_mins_lanes(y, mins16)), acc_m[t]);
        }
    }
    for (int t = 0; t < nt; t++)
        out[t] = quant_hsum8(acc[t]) - quant_hsum4(acc_m[t]);
}

/* llama.cpp's GEMV order for Q4_K, which it repacks (ggml_gemv_q4_K_8x8_q8_K; act_dot_legacy.c says why it
 * matters): per row, block after block, acc = fma((float)isum, d * d_a, acc) and, apart, accm = fma((float)imin,
 * dmin * d_a, accm), the result acc - accm, with isum the block's whole scaled integer and imin its mins' (as the
 * prompts' panels at fewer than 4 tokens, act_gemm_body.h). nr (1..16) rows at w, rb bytes apart, against the Q8_K
 * row y, into out[0..nr): each row's integers as the dot's, then added across lanes into lane r for row r
 * (row_sums.h). Rows past nr repeat the last. */
X86_AVX512_VNNI static INLINE void q4k_gemv(const uint8_t *w, uint64_t rb, int nr, const uint8_t *y, int64_t n, float *out)
{
    enum { ROWS = 16 };
    const int64_t nb = n / QK_K;
    rows_ahead ahead = rows_ahead_start(w, (uint64_t)ROWS * rb, 1, nb); /* the next group of rows */
    __m512 acc = _mm512_setzero_ps(), accm = _mm512_setzero_ps();
    for (int64_t i = 0; i < nb; i++, y += Q8K_BYTES) {
        rows_ahead_step(&ahead);
        const __m128i bs_pairs = q8k_bsum_pairs(y);
        __m512i isum[ROWS / 2];
        __m128i imin[ROWS];
        uint32_t d_dmin[ROWS]; /* each row's f16 d and dmin, adjacent in the block */
        const uint8_t *b = w + (uint64_t)i * 144;
#pragma GCC unroll 16
        for (int r = 0; r < ROWS; r++) {
            __m512i q[4], sc[4];
            __m128i mins16;
            q4k_unpack(b, q, sc, &mins16);
            const __m512i s = block_isum(q, sc, y);
            isum[r / 2] = r % 2 ? quant_add_pairs(isum[r / 2], s) : s;
            imin[r] = _mm_madd_epi16(mins16, bs_pairs);
            d_dmin[r] = rd32(b);
            b += r + 1 < nr ? rb : 0;
        }
        const __m512i dd = _mm512_loadu_si512(d_dmin);
        const __m512 d = _mm512_cvtph_ps(_mm512_cvtepi32_epi16(dd));
        const __m512 dmin = _mm512_cvtph_ps(_mm512_cvtepi32_epi16(_mm512_srli_epi32(dd, 16)));
        const __m512 da = _mm512_set1_ps(q8k_d(y));
        acc = _mm512_fmadd_ps(_mm512_cvtepi32_ps(quant_rows16_sum_paired(isum)), _mm512_mul_ps(d, da), acc);
        accm = _mm512_fmadd_ps(_mm512_cvtepi32_ps(quant_rows16_sum4(imin)), _mm512_mul_ps(dmin, da), accm);
    }
    _mm512_mask_storeu_ps(out, (__mmask16)((1u << nr) - 1), _mm512_sub_ps(acc, accm));
}

X86_AVX512_VNNI void cpu_act_gemv_q4_k_vnni(const void *w, uint64_t rb, int nr, const void *a, int64_t n, float *out)
{
    q4k_gemv(w, rb, nr, a, n, out);
}

X86_AVX512_VNNI static INLINE void q6k_body(const uint8_t *b, const uint8_t *a, uint64_t as, int nt, int64_t n, float *out)
{
    __m256 acc[ACT_MAX_ROWS];
    for (int t = 0; t < nt; t++)
        acc[t] = _mm256_setzero_ps();
    for (int64_t i = 0; i < n; i += QK_K, b += 210, a += Q8K_BYTES) {
        prefetch_block_ahead(b, 210, n);
        const __m128i s8 = _mm_loadu_si128((const __m128i *)(b + 192));
        const __m512i s32 = _mm512_cvtepi8_epi32(s8);
        __m512i w[4], sc[4];
        for (int h = 0; h < 2; h++) {  /* chunks 4h .. 4h + 3, unsigned (q, not q - 32) */
            __m256i q[4];
            q6k_half_chunks(b, h, q);
            for (int p = 0; p < 2; p++) {
                w[2 * h + p] = pair(q[2 * p], q[2 * p + 1]);
                sc[2 * h + p] = spread(s32, 4 * (2 * h + p), 2);
            }
        }
        const float d = f16c(b + 208);
        for (int t = 0; t < nt; t++) {
            const uint8_t *y = a + t * as;
            const __m256i lanes = _mm256_sub_epi32(block_lanes(w, sc, y), q6k_offsets(y, s8));
            acc[t] = _mm256_fmadd_ps(_mm256_set1_ps(d * q8k_d(y)), _mm256_cvtepi32_ps(lanes), acc[t]);
        }
    }
    for (int t = 0; t < nt; t++)
        out[t] = quant_hsum8(acc[t]);
}

#define VNNI_ENTRY_POINTS(name, body)                                                                          \
    X86_AVX512_VNNI void cpu_act_dot_##name##_vnni(const void *w, const void *a, int64_t n, float *out)                  \
    {                                                                                                          \
        body(w, a, 0, 1, n, out);                                                                              \
    }                                                                                                          \
    X86_AVX512_VNNI void cpu_act_dot4_##name##_vnni(const void *w, const void *a, uint64_t as, int64_t n, float out[4]) \
    {                                                                                                          \
        body(w, a, as, 4, n, out);                                                                             \
    }
VNNI_ENTRY_POINTS(q4_k, q4k_body)
VNNI_ENTRY_POINTS(q6_k, q6k_body)

#endif
