/*
 * Attention scores of a prompt's block with the queries in vector lanes.
 *
 * The dot tiles (dot.c's cpu_dot_grid) keep one accumulator per (key, query) pair, with the head's values in
 * its lanes, and end each pair with a horizontal sum: for heads of 64-128 values those sums were as many
 * instructions as the multiply-adds, and the scores of a Qwen3-0.6B-shape pp512 ran at half the rate of the
 * GEMM (5.7 % of the time for 3 % of its multiply-adds, perf). Here a block's queries are packed value-major
 * (qt[i][m]: one vector holds value i of 8 or 16 queries), and each key's value i is broadcast against it: one
 * accumulator per key holds that key's scores for all the lanes' queries, so there is nothing to reduce and the
 * scores are stored as they are, key-major (s[j][m]), the layout the softmax over a query's keys then reads down
 * its lane (softmax.c's cpu_softmax_lanes).
 * Each score is a chain of fused multiply-adds over the head's values in order: s = fma(q[i], k[i], s) for
 * i = 0 .. d-1 from s = 0, the same float in every lane and at both widths. Without AVX2 cpu_score_lanes is 0
 * and attention keeps its query-major path (attention.c).
 */
#include "x86_target.h"
#include "cpu.h"

#include <stddef.h>

#if defined(__x86_64__)
#include <immintrin.h>
#define X86 1
#else
#define X86 0
#endif

/* Keys per pass: one accumulator each, beside the queries' vector and a broadcast (16 registers on AVX2). Keys
 * a KV-cache row apart are often 4 KiB apart, the same L1 set for each: 12 stays within its 12 ways. */
enum { KEYS = 12 };

int cpu_score_lanes(void)
{
    return cpu_vector_lanes();
}

#if X86
/* rows r[0..8) as columns: out[i] holds value i of each of the 8 rows (the unpack / shuffle / lane-swap
 * transpose, pure data movement) */
X86_AVX2 static inline void transpose8(__m256 r[8])
{
    __m256 t[8], u[8];
    for (int p = 0; p < 4; p++) {
        t[2 * p] = _mm256_unpacklo_ps(r[2 * p], r[2 * p + 1]);     /* a0 b0 a1 b1 | a4 b4 a5 b5 */
        t[2 * p + 1] = _mm256_unpackhi_ps(r[2 * p], r[2 * p + 1]); /* a2 b2 a3 b3 | a6 b6 a7 b7 */
    }
    for (int h = 0; h < 2; h++) /* rows 0-3, then 4-7 */
        for (int p = 0; p < 2; p++) {
            u[4 * h + 2 * p] = _mm256_shuffle_ps(t[4 * h + p], t[4 * h + p + 2], 0x44);
            u[4 * h + 2 * p + 1] = _mm256_shuffle_ps(t[4 * h + p], t[4 * h + p + 2], 0xee);
        }
    for (int i = 0; i < 4; i++) {
        r[i] = _mm256_permute2f128_ps(u[i], u[4 + i], 0x20);
        r[4 + i] = _mm256_permute2f128_ps(u[i], u[4 + i], 0x31);
    }
}

/* 8 queries' values [0, d8) (d8 a multiple of 8) into their 8 lanes of qt rows of stride W; queries past M are 0 */
X86_AVX2 static void pack8(const float *const q[], int m0, int M, int d8, int W, float *dst)
{
    for (int i0 = 0; i0 < d8; i0 += 8) {
        __m256 r[8];
        for (int l = 0; l < 8; l++)
            r[l] = m0 + l < M ? _mm256_loadu_ps(q[m0 + l] + i0) : _mm256_setzero_ps();
        transpose8(r);
        for (int i = 0; i < 8; i++)
            _mm256_storeu_ps(dst + (size_t)(i0 + i) * W, r[i]);
    }
}
#endif

/* The scalar loop read each query at a stride and was 0.5-1 % of a SmolLM2 pp64 (perf); 8 x 8 transposes where
 * AVX2 is there. */
void cpu_scores_pack_queries(const float *const q[], int M, int d, int W, float *qt)
{
    const int chunks = (M + W - 1) / W;
    int d8 = 0;
#if X86
    if (cpu_have_avx2() && W % 8 == 0)
        d8 = d / 8 * 8;
#endif
    for (int c = 0; c < chunks; c++) {
        float *dst = qt + (size_t)c * (size_t)d * (size_t)W;
#if X86
        for (int l0 = 0; d8 && l0 < W; l0 += 8)
            pack8(q, c * W + l0, M, d8, W, dst + l0);
#endif
        for (int i = d8; i < d; i++)
            for (int l = 0; l < W; l++) {
                const int m = c * W + l;
                dst[(size_t)i * W + l] = m < M ? q[m][i] : 0.0f;
            }
    }
}

#if X86
/* One chunk's scores against keys [0, nj), KEYS at a time (the last pass repeats its last key into the lanes
 * past nj and stores only the first). */
X86_AVX512 static void scores_zmm(const float *qt, int d, const float *k,
                                                                          int64_t ldk, int nj, float *s, int64_t ldm)
{
    for (int j0 = 0; j0 < nj; j0 += KEYS) {
        const int jn = nj - j0 < KEYS ? nj - j0 : KEYS;
        const float *kj[KEYS];
        for (int j = 0; j < KEYS; j++)
            kj[j] = k + (int64_t)(j0 + (j < jn ? j : jn - 1)) * ldk;
        __m512 acc[KEYS];
        _Pragma("GCC unroll 12") for (int j = 0; j < KEYS; j++)
            acc[j] = _mm512_setzero_ps();
        for (int i = 0; i < d; i++) {
            const __m512 qi = _mm512_loadu_ps(qt + (size_t)i * 16);
            _Pragma("GCC unroll 12") for (int j = 0; j < KEYS; j++)
                acc[j] = _mm512_fmadd_ps(qi, _mm512_set1_ps(kj[j][i]), acc[j]);
        }
        /* unrolled with the test inside, so acc[] stays in registers (a loop to jn kept a copy of it in memory,
         * stored at every step of i) */
        _Pragma("GCC unroll 12") for (int j = 0; j < KEYS; j++) if (j < jn)
            _mm512_storeu_ps(s + (int64_t)(j0 + j) * ldm, acc[j]);
    }
}

X86_AVX2 static void scores_ymm(const float *qt, int d, const float *k, int64_t ldk,
                                                         int nj, float *s, int64_t ldm)
{
    for (int j0 = 0; j0 < nj; j0 += KEYS) {
        const int jn = nj - j0 < KEYS ? nj - j0 : KEYS;
        const float *kj[KEYS];
        for (int j = 0; j < KEYS; j++)
            kj[j] = k + (int64_t)(j0 + (j < jn ? j : jn - 1)) * ldk;
        __m256 acc[KEYS];
        _Pragma("GCC unroll 12") for (int j = 0; j < KEYS; j++)
            acc[j] = _mm256_setzero_ps();
        for (int i = 0; i < d; i++) {
            const __m256 qi = _mm256_loadu_ps(qt + (size_t)i * 8);
            _Pragma("GCC unroll 12") for (int j = 0; j < KEYS; j++)
                acc[j] = _mm256_fmadd_ps(qi, _mm256_broadcast_ss(&kj[j][i]), acc[j]);
        }
        _Pragma("GCC unroll 12") for (int j = 0; j < KEYS; j++) if (j < jn)
            _mm256_storeu_ps(s + (int64_t)(j0 + j) * ldm, acc[j]);
    }
}
#endif

void cpu_scores_lanes(const float *qt, int M, int d, int W, const float *k, int64_t ldk, int nj, float *s,
                      int64_t ldm)
{
#if X86
    const int chunks = (M + W - 1) / W;
    for (int c = 0; c < chunks; c++) {
        const float *qc = qt + (size_t)c * (size_t)d * (size_t)W;
        if (W == 16)
            scores_zmm(qc, d, k, ldk, nj, s + c * W, ldm);
        else
            scores_ymm(qc, d, k, ldk, nj, s + c * W, ldm);
    }
#else
    (void)qt, (void)M, (void)d, (void)W, (void)k, (void)ldk, (void)nj, (void)s, (void)ldm;
#endif
}
