/*
 * --numerics ggml's products with weights of the float types, F16, BF16 and F32, in the order llama.cpp's CPU
 * backend adds them (the llama.cpp that llama-cpp-python 0.3.36 vendors).
 *
 * llama.cpp rounds the activations to f16 (bf16; F32 weights meet them as they are) and hands both to llamafile's
 * tinyBLAS for prompts (two tokens or more) whose row length is a multiple of its step
 * (ggml-cpu/llamafile/sgemm.cpp): every output (row r, token t) is one vector accumulator, lane l adding the
 * products of values l, l + W, l + 2W, ... by FMA in that order, its lanes summed at the end, 16 lanes with
 * _mm512_reduce_add_ps on AVX-512 builds, 8 with its hsum on AVX2 builds.
 * A single token, and rows of other lengths, go to ggml_vec_dot_f16 / _bf16 / _f32 (ggml-cpu/vec.cpp): for F16 and
 * F32 four such accumulators taking 4W values a step, folded; for BF16 two of 16 lanes (AVX-512) or four of 8
 * (AVX2) taking 32 values a step, the two each summed over lanes and added in double, or the four folded and
 * summed; then the row's last values one f32 product at a time in double (F32: in f32). Where the build has
 * AVX512-BF16, BF16 goes by vdpbf16ps instead (two products into each of 16 lanes): tinyBLAS 32 values a step
 * (rows a multiple of 32), vec_dot_bf16 two accumulators 64 values a step. The exact path's GEMM chains each output
 * over k instead, which lands within an ulp but, once llama.cpp rounds the next activations, an ulp can move one by
 * 2^-11: F16 files' logits then drifted ~5e-4 from llama.cpp's at every prompt position of the shared goldens. Here
 * each build's order: bit for bit the vendored llama.cpp's products (its op dumps), AVX-512's forms where this CPU
 * has it, AVX2's where GGUFSCOPE_SIMD=avx2 caps it or the CPU has no AVX-512.
 *
 * Tiles of 4 rows x up to 6 tokens (24 accumulators, as tinyBLAS's own largest AVX-512 tile; 4 x 3 on AVX2, its
 * AVX2 tile), each row's 16 (8, 32 bf16) values loaded once per tile step; a single token, and rows tinyBLAS
 * declines, row by row.
 */
#include "x86_target.h"
#include "cpu.h"
#include "quant.h"

#include <string.h>

#if defined(__x86_64__)
#include "ggml_sums.h"

#include <immintrin.h>
#define ALWAYS_INLINE inline __attribute__((always_inline))

/* A prompt's tiles: 4 rows x up to 6 (AVX-512) or 2 (AVX2) tokens. One token takes one row at a time (its
 * ggml_vec_dot_f16 form): 4 rows read side by side as 4 streams generated SmolLM2 F16 at 63-65 tokens/s against
 * 97-133 row by row on the 2-vCPU EPYC (then in tinyBLAS's one-accumulator form; 2 rows: 60-74; a 512-byte
 * prefetch ahead in each row changed nothing). */
enum { TILE_ROWS = 4, TILE_TOKENS_ZMM = 6, TILE_TOKENS_YMM = 3 };

/* an accumulator's lanes summed as tinyBLAS's hsum does */
X86_AVX512 static ALWAYS_INLINE float sum16(__m512 v)
{
    float lanes[16];
    _mm512_storeu_ps(lanes, v);
    return ggml_lanes_sum(lanes, 16, GGML_LANES_HSUM);
}

X86_AVX2 static ALWAYS_INLINE float sum8(__m256 v)
{
    float lanes[8];
    _mm256_storeu_ps(lanes, v);
    return ggml_lanes_sum(lanes, 8, GGML_LANES_HSUM);
}

/* What a row's values are (a constant where inlined) */
typedef enum weight_kind { W_F16, W_BF16, W_F32 } weight_kind;

/* Values i.. of a row, 16 (8) of them as f32: F16 by F16C, BF16 by moving the bits up (bf16 is the top half of an
 * f32), F32 as they lie */
X86_AVX512 static ALWAYS_INLINE __m512 load16(const void *row, int64_t i, weight_kind k)
{
    if (k == W_F32)
        return _mm512_loadu_ps((const float *)row + i);
    const __m256i h = _mm256_loadu_si256((const __m256i *)((const uint16_t *)row + i));
    return k == W_BF16 ? _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16)) : _mm512_cvtph_ps(h);
}

X86_AVX2 static ALWAYS_INLINE __m256 load8(const void *row, int64_t i, weight_kind k)
{
    if (k == W_F32)
        return _mm256_loadu_ps((const float *)row + i);
    const __m128i h = _mm_loadu_si128((const __m128i *)((const uint16_t *)row + i));
    return k == W_BF16 ? _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16)) : _mm256_cvtph_ps(h);
}

static float half_to_float(uint16_t h, bool bf16)
{
    if (!bf16)
        return quant_f16_to_f32(h);
    const uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* rows w[0..3] x tokens x, x + n, ... (NT of them, a constant where inlined): out[t * ldo + r] for r < nr */
X86_AVX512 static ALWAYS_INLINE void tile_zmm(const uint16_t *const w[TILE_ROWS], int R, int nr, const float *x, int NT,
                                          int64_t n, float *out, int64_t ldo, weight_kind kind)
{
    __m512 acc[TILE_ROWS][TILE_TOKENS_ZMM];
    for (int r = 0; r < TILE_ROWS; r++)
        for (int t = 0; t < NT; t++)
            acc[r][t] = _mm512_setzero_ps();
    for (int64_t i = 0; i < n; i += 16) {
        __m512 wv[TILE_ROWS];
        for (int r = 0; r < R; r++)
            wv[r] = load16(w[r], i, kind);
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

X86_AVX2 static ALWAYS_INLINE void tile_ymm(const uint16_t *const w[TILE_ROWS], int R, int nr, const float *x, int NT,
                                        int64_t n, float *out, int64_t ldo, weight_kind kind)
{
    __m256 acc[TILE_ROWS][TILE_TOKENS_YMM];
    for (int r = 0; r < TILE_ROWS; r++)
        for (int t = 0; t < NT; t++)
            acc[r][t] = _mm256_setzero_ps();
    for (int64_t i = 0; i < n; i += 8) { /* x first, then a row at a time: 12 + 3 + 1 of AVX2's 16 registers */
        __m256 xv[TILE_TOKENS_YMM];
        for (int t = 0; t < NT; t++)
            xv[t] = _mm256_loadu_ps(x + t * n + i);
        for (int r = 0; r < R; r++) {
            const __m256 wv = load8(w[r], i, kind);
            for (int t = 0; t < NT; t++)
                acc[r][t] = _mm256_fmadd_ps(wv, xv[t], acc[r][t]);
        }
    }
    for (int t = 0; t < NT; t++)
        for (int r = 0; r < nr; r++)
            out[t * ldo + r] = sum8(acc[r][t]);
}

/* 32 bf16 values as vdpbf16ps reads them */
X86_AVX512_BF16 static ALWAYS_INLINE __m512bh pairs32(const uint16_t *p)
{
    return (__m512bh)_mm512_loadu_si512(p);
}

/* AVX512-BF16 builds' tinyBLAS for BF16: vdpbf16ps, 32 values a step, the pairs (2l, 2l + 1) into lane l */
X86_AVX512_BF16 static ALWAYS_INLINE void tile_dp(const uint16_t *const w[TILE_ROWS], int R, int nr, const uint16_t *x,
                                              int NT, int64_t n, float *out, int64_t ldo)
{
    __m512 acc[TILE_ROWS][TILE_TOKENS_ZMM];
    for (int r = 0; r < TILE_ROWS; r++)
        for (int t = 0; t < NT; t++)
            acc[r][t] = _mm512_setzero_ps();
    for (int64_t i = 0; i < n; i += 32) {
        __m512bh wv[TILE_ROWS];
        for (int r = 0; r < R; r++)
            wv[r] = pairs32(w[r] + i);
        for (int t = 0; t < NT; t++) {
            const __m512bh xv = pairs32(x + t * n + i);
            for (int r = 0; r < R; r++)
                acc[r][t] = _mm512_dpbf16_ps(acc[r][t], wv[r], xv);
        }
    }
    for (int t = 0; t < NT; t++)
        for (int r = 0; r < nr; r++)
            out[t * ldo + r] = sum16(acc[r][t]);
}

/* ggml_vec_dot_f16 of a row and one token (f16-rounded x): four accumulators of W lanes over 4 W values a step,
 * folded and summed over lanes, then the rest one f32 product at a time added in double, the total rounded to float */
X86_AVX512 static float dot_f16_zmm(const uint16_t *w, const float *x, int64_t n)
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

X86_AVX2 static float dot_f16_ymm(const uint16_t *w, const float *x, int64_t n)
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

/* ggml_vec_dot_bf16 where the build has AVX512-BF16: two vdpbf16ps accumulators, 64 values a step (x as bf16 rows,
 * xh), each summed over its lanes and the two added in double; then the rest one f32 product at a time in double.
 * One row at a time: four rows side by side, four streams, generated SmolLM2 BF16 at half the speed (as F16, above). */
X86_AVX512_BF16 static float dot_bf16_dp(const uint16_t *w, const uint16_t *xh, const float *x, int64_t n)
{
    __m512 c1 = _mm512_setzero_ps(), c2 = _mm512_setzero_ps();
    int64_t i = 0;
    for (; i + 64 <= n; i += 64) {
        c1 = _mm512_dpbf16_ps(c1, pairs32(w + i), pairs32(xh + i));
        c2 = _mm512_dpbf16_ps(c2, pairs32(w + i + 32), pairs32(xh + i + 32));
    }
    double sum = sum16(c1);
    sum += sum16(c2);
    for (; i < n; i++)
        sum += (double)(half_to_float(w[i], true) * x[i]);
    return (float)sum;
}

/* ggml_vec_dot_bf16 on AVX-512F without BF16: two accumulators of 16 lanes, 32 values a step (its multiply and add,
 * written apart, fused by GCC), each summed over lanes and added in double; then the rest in double */
X86_AVX512 static float dot_bf16_zmm(const uint16_t *w, const float *x, int64_t n)
{
    __m512 c1 = _mm512_setzero_ps(), c2 = _mm512_setzero_ps();
    int64_t i = 0;
    for (; i + 32 <= n; i += 32) {
        c1 = _mm512_fmadd_ps(load16(w, i, W_BF16), _mm512_loadu_ps(x + i), c1);
        c2 = _mm512_fmadd_ps(load16(w, i + 16, W_BF16), _mm512_loadu_ps(x + i + 16), c2);
    }
    double sum = sum16(c1);
    sum += sum16(c2);
    for (; i < n; i++)
        sum += (double)(half_to_float(w[i], true) * x[i]);
    return (float)sum;
}

/* ggml_vec_dot_bf16 on AVX2: four accumulators of 8 lanes, 32 values a step (fused by GCC), (c1 + c3) + (c2 + c4),
 * its lanes summed as the softmax's (the halves, movehl, movehdup); then the rest in double */
X86_AVX2 static float dot_bf16_ymm(const uint16_t *w, const float *x, int64_t n)
{
    __m256 c[4] = { _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps() };
    int64_t i = 0;
    for (; i + 32 <= n; i += 32)
        for (int a = 0; a < 4; a++)
            c[a] = _mm256_fmadd_ps(load8(w, i + 8 * a, W_BF16), _mm256_loadu_ps(x + i + 8 * a), c[a]);
    double sum = sum8(_mm256_add_ps(_mm256_add_ps(c[0], c[2]), _mm256_add_ps(c[1], c[3])));
    for (; i < n; i++)
        sum += (double)(half_to_float(w[i], true) * x[i]);
    return (float)sum;
}

/* a tile's x: floats, or bf16 rows for the vdpbf16ps tiles; its rows w: their first value's address, as uint16_t *
 * for F32 rows too (load16 and load8 index them by their kind) */
typedef void (*float_tile_fn)(const uint16_t *const w[TILE_ROWS], int nr, const void *x, int64_t n, float *out,
                            int64_t ldo);
/* tile_KIND_R_NT: R rows x NT tokens, both constants */
#define TILE(kind, attr, rows, nt, ...)                                                                           \
    attr static void tile_##kind##_##rows##_##nt(const uint16_t *const w[TILE_ROWS], int nr, const void *x,      \
                                                 int64_t n, float *out, int64_t ldo)                             \
    {                                                                                                            \
        __VA_ARGS__(w, rows, nr, x, nt, n, out, ldo);                                                            \
    }
#define F16(...) tile_zmm(__VA_ARGS__, W_F16)
#define BF16(...) tile_zmm(__VA_ARGS__, W_BF16)
#define F32(...) tile_zmm(__VA_ARGS__, W_F32)
#define F16_YMM(...) tile_ymm(__VA_ARGS__, W_F16)
#define BF16_YMM(...) tile_ymm(__VA_ARGS__, W_BF16)
#define F32_YMM(...) tile_ymm(__VA_ARGS__, W_F32)
#define TILES_ZMM(kind, attr, call)                                                                                \
    TILE(kind, attr, 4, 1, call) TILE(kind, attr, 4, 2, call) TILE(kind, attr, 4, 3, call)                        \
    TILE(kind, attr, 4, 4, call) TILE(kind, attr, 4, 5, call) TILE(kind, attr, 4, 6, call)
TILES_ZMM(zmm_f16, X86_AVX512, F16)
TILES_ZMM(zmm_bf16, X86_AVX512, BF16)
TILES_ZMM(zmm_f32, X86_AVX512, F32)
TILES_ZMM(dp, X86_AVX512_BF16, tile_dp)
TILE(ymm_f16, X86_AVX2, 4, 1, F16_YMM)
TILE(ymm_f16, X86_AVX2, 4, 2, F16_YMM)
TILE(ymm_f16, X86_AVX2, 4, 3, F16_YMM)
TILE(ymm_bf16, X86_AVX2, 4, 1, BF16_YMM)
TILE(ymm_bf16, X86_AVX2, 4, 2, BF16_YMM)
TILE(ymm_bf16, X86_AVX2, 4, 3, BF16_YMM)
TILE(ymm_f32, X86_AVX2, 4, 1, F32_YMM)
TILE(ymm_f32, X86_AVX2, 4, 2, F32_YMM)
TILE(ymm_f32, X86_AVX2, 4, 3, F32_YMM)
_Static_assert(TILE_ROWS == 4 && TILE_TOKENS_ZMM == 6 && TILE_TOKENS_YMM == 3, "the tile tables name these sizes");
#define ZMM_TABLE(kind) { NULL, tile_##kind##_4_1, tile_##kind##_4_2, tile_##kind##_4_3, tile_##kind##_4_4, \
                          tile_##kind##_4_5, tile_##kind##_4_6 }
static const float_tile_fn tiles_zmm_f16[TILE_TOKENS_ZMM + 1] = ZMM_TABLE(zmm_f16);
static const float_tile_fn tiles_zmm_bf16[TILE_TOKENS_ZMM + 1] = ZMM_TABLE(zmm_bf16);
static const float_tile_fn tiles_dp[TILE_TOKENS_ZMM + 1] = ZMM_TABLE(dp);
#define YMM_TABLE(kind) { NULL, tile_##kind##_4_1, tile_##kind##_4_2, tile_##kind##_4_3 }
static const float_tile_fn tiles_ymm_f16[TILE_TOKENS_YMM + 1] = YMM_TABLE(ymm_f16);
static const float_tile_fn tiles_ymm_bf16[TILE_TOKENS_YMM + 1] = YMM_TABLE(ymm_bf16);
static const float_tile_fn tiles_zmm_f32[TILE_TOKENS_ZMM + 1] = ZMM_TABLE(zmm_f32);
static const float_tile_fn tiles_ymm_f32[TILE_TOKENS_YMM + 1] = YMM_TABLE(ymm_f32);
/* ggml_vec_dot_f32 of n values: its four accumulators as pairs of 8-lane halves (W = 16) or single ones, folded
 * and summed over lanes in registers in ggml_sums.h's orders, the leftovers added one product at a time */
X86_AVX2 float cpu_dot_f32_ggml(const float *x, const float *y, int n, int W)
{
    const int step = GGML_DOT_ACCUMULATORS * W, np = n / step * step, halves = W / 8;
    __m256 acc[GGML_DOT_ACCUMULATORS][2];
    for (int a = 0; a < GGML_DOT_ACCUMULATORS; a++)
        acc[a][0] = acc[a][1] = _mm256_setzero_ps();
    for (int i = 0; i < np; i += step)
        for (int a = 0; a < GGML_DOT_ACCUMULATORS; a++)
            for (int h = 0; h < halves; h++)
                acc[a][h] = _mm256_fmadd_ps(_mm256_loadu_ps(x + i + a * W + 8 * h),
                                            _mm256_loadu_ps(y + i + a * W + 8 * h), acc[a][h]);
    for (int h = 0; h < halves; h++) { /* 0 += 2, 1 += 3, 0 += 1 */
        acc[0][h] = _mm256_add_ps(acc[0][h], acc[2][h]);
        acc[1][h] = _mm256_add_ps(acc[1][h], acc[3][h]);
        acc[0][h] = _mm256_add_ps(acc[0][h], acc[1][h]);
    }
    float sum;
    if (W == 16) { /* lanes l + 8 onto l, then the HSUM tree: halves of 4, (0 + 2), (1 + 3), then their sum */
        const __m256 v = _mm256_add_ps(acc[0][1], acc[0][0]);
        const __m128 t = _mm_add_ps(_mm256_extractf128_ps(v, 1), _mm256_castps256_ps128(v));
        const __m128 u = _mm_add_ps(t, _mm_movehl_ps(t, t));
        sum = _mm_cvtss_f32(_mm_add_ss(u, _mm_movehdup_ps(u)));
    } else { /* the HADD tree: halves of 4, then (0 + 1) + (2 + 3) */
        const __m128 t = _mm_add_ps(_mm256_castps256_ps128(acc[0][0]), _mm256_extractf128_ps(acc[0][0], 1));
        const __m128 u = _mm_hadd_ps(t, t);
        sum = _mm_cvtss_f32(_mm_hadd_ps(u, u));
    }
    for (int i = np; i < n; i++)
        sum += x[i] * y[i]; /* two roundings: not fused in the vendored build (C17 here: no contraction either) */
    return sum;
}

/* the same as a row's product with one token */
static float dot_f32(const uint16_t *w, const float *x, int64_t n)
{
    return cpu_dot_f32_ggml((const float *)(const void *)w, x, (int)n, cpu_vector_lanes());
}

#endif

void cpu_float_rows_ggml(const uint8_t *base, uint64_t rb, int nr, uint32_t type, const float *x, const uint16_t *xh,
                         int T, int64_t n, float *y, int64_t ld)
{
#if defined(__x86_64__)
    const weight_kind kind = type == GGUF_TENSOR_F32 ? W_F32 : type == GGUF_TENSOR_BF16 ? W_BF16 : W_F16;
    const bool zmm = cpu_vector_lanes() == 16, dp = kind == W_BF16 && zmm && xh && quant_cpu_has_avx512bf16();
    if (T == 1 || n % (dp ? 32 : cpu_vector_lanes())) { /* tinyBLAS declines: ggml_vec_dot_f16 / _bf16 / _f32 */
        float (*const dots[][2])(const uint16_t *, const float *, int64_t) = {
            [W_F16] = { dot_f16_ymm, dot_f16_zmm }, [W_BF16] = { dot_bf16_ymm, dot_bf16_zmm },
            [W_F32] = { dot_f32, dot_f32 } };
        float (*dot)(const uint16_t *, const float *, int64_t) = dots[kind][zmm];
        for (int r = 0; r < nr; r++) {
            const uint16_t *w = (const uint16_t *)(base + (uint64_t)r * rb);
            for (int t = 0; t < T; t++)
                y[(int64_t)t * ld + r] = dp ? dot_bf16_dp(w, xh + (int64_t)t * n, x + (int64_t)t * n, n)
                                            : dot(w, x + (int64_t)t * n, n);
        }
        return;
    }
    const float_tile_fn *const tables[][2] = { [W_F16] = { tiles_ymm_f16, tiles_zmm_f16 },
                                               [W_BF16] = { tiles_ymm_bf16, tiles_zmm_bf16 },
                                               [W_F32] = { tiles_ymm_f32, tiles_zmm_f32 } };
    const int most = zmm ? TILE_TOKENS_ZMM : TILE_TOKENS_YMM;
    const float_tile_fn *tiles = dp ? tiles_dp : tables[kind][zmm];
    const void *xs = dp ? (const void *)xh : (const void *)x; /* the tiles read x as floats, or as bf16 (dp) */
    const size_t x_size = dp ? sizeof(uint16_t) : sizeof(float);
    for (int r = 0; r < nr; r += TILE_ROWS) {
        const int k = nr - r < TILE_ROWS ? nr - r : TILE_ROWS;
        const uint16_t *w[TILE_ROWS];
        for (int j = 0; j < TILE_ROWS; j++) /* a short tile repeats its first row, whose sums are not stored */
            w[j] = (const uint16_t *)(base + (uint64_t)(r + (j < k ? j : 0)) * rb);
        for (int t = 0; t < T; t += most) {
            const int nt = T - t < most ? T - t : most;
            tiles[nt](w, k, (const char *)xs + (size_t)t * (size_t)n * x_size, n, y + (int64_t)t * ld + r, ld);
        }
    }
#else
    (void)base, (void)rb, (void)nr, (void)type, (void)x, (void)xh, (void)T, (void)n, (void)y, (void)ld;
#endif
}
