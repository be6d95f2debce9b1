/*
 * --numerics ggml's products with F16 weights, in the order llama.cpp's CPU backend adds them.
 *
 * llama.cpp rounds the activations to f16 for F16 weights and hands both to llamafile's tinyBLAS whenever the row
 * length is a multiple of its vector width (ggml-cpu/llamafile/sgemm.cpp, case GGML_TYPE_F16, in the llama.cpp that
 * llama-cpp-python 0.3.36 vendors): every output (row r, token t) is one vector accumulator, lane l adding the
 * products of values l, l + W, l + 2W, ... by FMA in that order, and its lanes summed at the end, 16 lanes with
 * _mm512_reduce_add_ps on AVX-512 builds, 8 with its hsum on AVX2 builds. That holds for prompts and for a single
 * token alike. The exact path's GEMM chains each output over k instead, which lands within an ulp but, once llama.cpp
 * rounds the next activations to f16, an ulp can move one by 2^-11: F16 files' logits then drifted ~5e-4 from
 * llama.cpp's at every prompt position of the shared goldens. Here the same order: bit for bit the vendored
 * llama.cpp's F16 products on this machine (its op dump of tiny-llama-f16's v projection), AVX-512's form where
 * this CPU has it, AVX2's where GGUFSCOPE_SIMD=avx2 caps it or the CPU has no AVX-512.
 *
 * Tiles of 4 rows x up to 6 tokens (24 accumulators, as tinyBLAS's own largest AVX-512 tile; 4 x 2 on AVX2), each
 * row's 16 (8) values widened from f16 once per tile step; a single token row by row.
 */
#include "cpu.h"

#if defined(__x86_64__)
#include <immintrin.h>
#define AVX2 __attribute__((target("avx2,fma,f16c")))
#define AVX512 __attribute__((target("avx512f,avx512vl,avx2,fma,f16c")))
#define ALWAYS_INLINE inline __attribute__((always_inline))

/* A prompt's tiles: 4 rows x up to 6 (AVX-512) or 2 (AVX2) tokens. One token takes one row at a time: each output
 * is one serial FMA chain, and 4 rows read side by side are 4 streams, which on the 2-vCPU EPYC generated SmolLM2
 * F16 at 63-65 tokens/s against 97-133 row by row (2 rows: 60-74; a 512-byte prefetch ahead in each row changed
 * nothing), the exact path's 114-127. */
enum { TILE_ROWS = 4, TILE_TOKENS_ZMM = 6, TILE_TOKENS_YMM = 2 };

/* _mm512_reduce_add_ps as GCC expands it (the vendored llama.cpp's build): upper 256 + lower, upper 128 + lower,
 * then lanes (0 + 2) + (1 + 3) */
AVX512 static ALWAYS_INLINE float sum16(__m512 v)
{
    const __m256 a = _mm256_add_ps(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1)), _mm512_castps512_ps256(v));
    const __m128 b = _mm_add_ps(_mm256_extractf128_ps(a, 1), _mm256_castps256_ps128(a));
    const __m128 c = _mm_add_ps(b, _mm_shuffle_ps(b, b, _MM_SHUFFLE(1, 0, 3, 2)));
    return _mm_cvtss_f32(_mm_add_ss(c, _mm_movehdup_ps(c)));
}

/* tinyBLAS's hsum(__m256): upper 128 + lower, then lanes (0 + 2) + (1 + 3) */
AVX2 static ALWAYS_INLINE float sum8(__m256 v)
{
    const __m128 b = _mm_add_ps(_mm256_extractf128_ps(v, 1), _mm256_castps256_ps128(v));
    const __m128 c = _mm_add_ps(b, _mm_movehl_ps(b, b));
    return _mm_cvtss_f32(_mm_add_ss(c, _mm_movehdup_ps(c)));
}

/* rows w[0..3] x tokens x, x + n, ... (NT of them, a constant where inlined): out[t * ldo + r] for r < nr */
AVX512 static ALWAYS_INLINE void tile_zmm(const uint16_t *const w[TILE_ROWS], int R, int nr, const float *x, int NT,
                                          int64_t n, float *out, int64_t ldo)
{
    __m512 acc[TILE_ROWS][TILE_TOKENS_ZMM];
    for (int r = 0; r < TILE_ROWS; r++)
        for (int t = 0; t < NT; t++)
            acc[r][t] = _mm512_setzero_ps();
    for (int64_t i = 0; i < n; i += 16) {
        __m512 wv[TILE_ROWS];
        for (int r = 0; r < R; r++)
            wv[r] = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(w[r] + i)));
        for (int t = 0; t < NT; t++) {
            const __m512 xv = _mm512_loadu_ps(x + t * n + i);
            for (int r = 0; r < R; r++)
                acc[r][t] = _mm512_fmadd_ps(wv[r], xv, acc[r][t]);
        }
    }
    for (int t = 0; t < NT; t++)
        for (int r = 0; r < nr; r++)
            out[t * ldo + r] = sum16(acc[r][t]);
}

AVX2 static ALWAYS_INLINE void tile_ymm(const uint16_t *const w[TILE_ROWS], int R, int nr, const float *x, int NT,
                                        int64_t n, float *out, int64_t ldo)
{
    __m256 acc[TILE_ROWS][TILE_TOKENS_YMM];
    for (int r = 0; r < TILE_ROWS; r++)
        for (int t = 0; t < NT; t++)
            acc[r][t] = _mm256_setzero_ps();
    for (int64_t i = 0; i < n; i += 8) {
        __m256 wv[TILE_ROWS];
        for (int r = 0; r < R; r++)
            wv[r] = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(w[r] + i)));
        for (int t = 0; t < NT; t++) {
            const __m256 xv = _mm256_loadu_ps(x + t * n + i);
            for (int r = 0; r < R; r++)
                acc[r][t] = _mm256_fmadd_ps(wv[r], xv, acc[r][t]);
        }
    }
    for (int t = 0; t < NT; t++)
        for (int r = 0; r < nr; r++)
            out[t * ldo + r] = sum8(acc[r][t]);
}

typedef void (*f16_tile_fn)(const uint16_t *const w[TILE_ROWS], int nr, const float *x, int64_t n, float *out,
                            int64_t ldo);
/* tile_KIND_R_NT: R rows x NT tokens, both constants */
#define TILE(kind, attr, rows, nt)                                                                                \
    attr static void tile_##kind##_##rows##_##nt(const uint16_t *const w[TILE_ROWS], int nr, const float *x,     \
                                                 int64_t n, float *out, int64_t ldo)                             \
    {                                                                                                            \
        tile_##kind(w, rows, nr, x, nt, n, out, ldo);                                                            \
    }
TILE(zmm, AVX512, 4, 1)
TILE(zmm, AVX512, 4, 2)
TILE(zmm, AVX512, 4, 3)
TILE(zmm, AVX512, 4, 4)
TILE(zmm, AVX512, 4, 5)
TILE(zmm, AVX512, 4, 6)
TILE(zmm, AVX512, 1, 1)
TILE(ymm, AVX2, 4, 1)
TILE(ymm, AVX2, 4, 2)
TILE(ymm, AVX2, 1, 1)
_Static_assert(TILE_ROWS == 4 && TILE_TOKENS_ZMM == 6 && TILE_TOKENS_YMM == 2,
               "the tile tables name these sizes");
static const f16_tile_fn tiles_zmm[TILE_TOKENS_ZMM + 1] = { NULL,         tile_zmm_4_1, tile_zmm_4_2, tile_zmm_4_3,
                                                            tile_zmm_4_4, tile_zmm_4_5, tile_zmm_4_6 };
static const f16_tile_fn tiles_ymm[TILE_TOKENS_YMM + 1] = { NULL, tile_ymm_4_1, tile_ymm_4_2 };
#endif

void cpu_f16_rows_ggml(const uint8_t *base, uint64_t rb, int nr, const float *x, int T, int64_t n, float *y,
                       int64_t ld)
{
#if defined(__x86_64__)
    const bool zmm = cpu_vector_lanes() == 16;
    if (T == 1) {
        const f16_tile_fn one = zmm ? tile_zmm_1_1 : tile_ymm_1_1;
        for (int r = 0; r < nr; r++) {
            const uint16_t *w[TILE_ROWS] = { (const uint16_t *)(base + (uint64_t)r * rb) };
            one(w, 1, x, n, y + r, ld);
        }
        return;
    }
    const int most = zmm ? TILE_TOKENS_ZMM : TILE_TOKENS_YMM;
    const f16_tile_fn *tiles = zmm ? tiles_zmm : tiles_ymm;
    for (int r = 0; r < nr; r += TILE_ROWS) {
        const int k = nr - r < TILE_ROWS ? nr - r : TILE_ROWS;
        const uint16_t *w[TILE_ROWS];
        for (int j = 0; j < TILE_ROWS; j++) /* a short tile repeats its first row, whose sums are not stored */
            w[j] = (const uint16_t *)(base + (uint64_t)(r + (j < k ? j : 0)) * rb);
        for (int t = 0; t < T; t += most) {
            const int nt = T - t < most ? T - t : most;
            tiles[nt](w, k, x + (int64_t)t * n, n, y + (int64_t)t * ld + r, ld);
        }
    }
#else
    (void)base, (void)rb, (void)nr, (void)x, (void)T, (void)n, (void)y, (void)ld;
#endif
}
