/*
 * --numerics ggml's products with F16 weights, in the order llama.cpp's CPU backend adds them.
 *
 * llama.cpp rounds the activations to f16 for F16 weights and hands both to llamafile's tinyBLAS for prompts (two
 * tokens or more) whose row length is a multiple of its vector width (ggml-cpu/llamafile/sgemm.cpp, case
 * GGML_TYPE_F16, in the llama.cpp that llama-cpp-python 0.3.36 vendors): every output (row r, token t) is one vector
 * accumulator, lane l adding the products of values l, l + W, l + 2W, ... by FMA in that order, and its lanes summed
 * at the end, 16 lanes with _mm512_reduce_add_ps on AVX-512 builds, 8 with its hsum on AVX2 builds. A single token,
 * and rows of other lengths, go to ggml_vec_dot_f16 (ggml-cpu/vec.cpp): four such accumulators taking 4W values a
 * step, folded, then the row's last values one f32 product at a time in double. The exact path's GEMM chains each output over k instead, which lands within an ulp but, once llama.cpp
 * rounds the next activations to f16, an ulp can move one by 2^-11: F16 files' logits then drifted ~5e-4 from
 * llama.cpp's at every prompt position of the shared goldens. Here the same order: bit for bit the vendored
 * llama.cpp's F16 products on this machine (its op dump of tiny-llama-f16's v projection), AVX-512's form where
 * this CPU has it, AVX2's where GGUFSCOPE_SIMD=avx2 caps it or the CPU has no AVX-512.
 *
 * Tiles of 4 rows x up to 6 tokens (24 accumulators, as tinyBLAS's own largest AVX-512 tile; 4 x 2 on AVX2), each
 * row's 16 (8) values widened from f16 once per tile step; a single token, and rows tinyBLAS declines, row by row.
 */
#include "cpu.h"

#if defined(__x86_64__)
#include "ggml_sums.h"

#include <immintrin.h>
#define AVX2 __attribute__((target("avx2,fma,f16c")))
#define AVX512 __attribute__((target("avx512f,avx512vl,avx2,fma,f16c")))
#define ALWAYS_INLINE inline __attribute__((always_inline))

/* A prompt's tiles: 4 rows x up to 6 (AVX-512) or 2 (AVX2) tokens. One token takes one row at a time (its
 * ggml_vec_dot_f16 form): 4 rows read side by side as 4 streams generated SmolLM2 F16 at 63-65 tokens/s against
 * 97-133 row by row on the 2-vCPU EPYC (then in tinyBLAS's one-accumulator form; 2 rows: 60-74; a 512-byte
 * prefetch ahead in each row changed nothing). */
enum { TILE_ROWS = 4, TILE_TOKENS_ZMM = 6, TILE_TOKENS_YMM = 2 };

/* an accumulator's lanes summed as tinyBLAS's hsum does */
AVX512 static ALWAYS_INLINE float sum16(__m512 v)
{
    float lanes[16];
    _mm512_storeu_ps(lanes, v);
    return ggml_lanes_sum(lanes, 16, GGML_LANES_HSUM);
}

AVX2 static ALWAYS_INLINE float sum8(__m256 v)
{
    float lanes[8];
    _mm256_storeu_ps(lanes, v);
    return ggml_lanes_sum(lanes, 8, GGML_LANES_HSUM);
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

/* ggml_vec_dot_f16 of a row and one token (f16-rounded x): four accumulators of W lanes over 4 W values a step,
 * folded and summed over lanes, then the rest one f32 product at a time added in double, the total rounded to float */
AVX512 static float dot_f16_zmm(const uint16_t *w, const float *x, int64_t n)
{
    const int64_t np = n / 64 * 64;
    float acc[GGML_DOT_ACCUMULATORS][GGML_MAX_LANES];
    __m512 s[GGML_DOT_ACCUMULATORS] = { _mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps(),
                                        _mm512_setzero_ps() };
    for (int64_t i = 0; i < np; i += 64)
        for (int a = 0; a < GGML_DOT_ACCUMULATORS; a++)
            s[a] = _mm512_fmadd_ps(_mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(w + i + 16 * a))),
                                   _mm512_loadu_ps(x + i + 16 * a), s[a]);
    for (int a = 0; a < GGML_DOT_ACCUMULATORS; a++)
        _mm512_storeu_ps(acc[a], s[a]);
    double sum = ggml_dot_fold(acc, 16);
    for (int64_t i = np; i < n; i++)
        sum += (double)(_cvtsh_ss(w[i]) * x[i]);
    return (float)sum;
}

AVX2 static float dot_f16_ymm(const uint16_t *w, const float *x, int64_t n)
{
    const int64_t np = n / 32 * 32;
    float acc[GGML_DOT_ACCUMULATORS][GGML_MAX_LANES];
    __m256 s[GGML_DOT_ACCUMULATORS] = { _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(),
                                        _mm256_setzero_ps() };
    for (int64_t i = 0; i < np; i += 32)
        for (int a = 0; a < GGML_DOT_ACCUMULATORS; a++)
            s[a] = _mm256_fmadd_ps(_mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(w + i + 8 * a))),
                                   _mm256_loadu_ps(x + i + 8 * a), s[a]);
    for (int a = 0; a < GGML_DOT_ACCUMULATORS; a++)
        _mm256_storeu_ps(acc[a], s[a]);
    double sum = ggml_dot_fold(acc, 8);
    for (int64_t i = np; i < n; i++)
        sum += (double)(_cvtsh_ss(w[i]) * x[i]);
    return (float)sum;
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
TILE(ymm, AVX2, 4, 1)
TILE(ymm, AVX2, 4, 2)
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
    if (T == 1 || n % cpu_vector_lanes()) { /* tinyBLAS declines: ggml_vec_dot_f16 */
        for (int r = 0; r < nr; r++) {
            const uint16_t *w = (const uint16_t *)(base + (uint64_t)r * rb);
            for (int t = 0; t < T; t++)
                y[(int64_t)t * ld + r] = zmm ? dot_f16_zmm(w, x + (int64_t)t * n, n) : dot_f16_ymm(w, x + (int64_t)t * n, n);
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
