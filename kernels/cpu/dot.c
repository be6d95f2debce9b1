/*
 * Dot-product microkernels (AVX2 + FMA + F16C when the CPU has them, with
 * AVX-512VL's 32 registers for 4-token tiles, portable C otherwise).
 * Accumulation is f32 in 8 lanes per row, summed at the end;
 * the order differs from a sequential sum by rounding only (the engine is
 * held to llama.cpp with a tolerance, not bit for bit).
 */
#include "x86_target.h"
#include "cpu.h"
#include "dot.h"
#include "kern.h"
#include "quant.h"

#include <stdbool.h>
#include <string.h>

#if defined(__x86_64__)
#include <immintrin.h>
#define X86 1
#else
#define X86 0
#endif

/* Rows up to this many values take the single-stream kernel: x (16 KiB) and
 * the row's cache lines in flight still fit in L1. */
enum { F16_SINGLE_STREAM_MAX = 4096 };

bool cpu_have_avx2(void)
{
#if X86
    static int cached = -1;
    if (cached < 0) {
        /* GGUFSCOPE_SIMD=scalar (quant/'s cap, for bisecting) holds here too. */
        cached = quant_cpu_has_avx2() && quant_cpu_has_fma() && strcmp(quant_simd_level(), "scalar") != 0;
    }
    return cached;
#else
    return false;
#endif
}

static float dot_scalar(const float *a, const float *b, int64_t n)
{
    float s = 0.0f;
    for (int64_t i = 0; i < n; i++)
        s += a[i] * b[i];
    return s;
}

/* value j of row w, f32 or f16 */
static inline float row_at(const void *w, int64_t j, bool f16)
{
    return f16 ? quant_f16_to_f32(((const uint16_t *)w)[j]) : ((const float *)w)[j];
}

#if X86
X86_AVX2 static inline float hsum8(__m256 v)
{
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

/* hsum8 of v[0..8) at once, into out[0..8): each sum by hsum8's tree, ((v0 + v4) + (v2 + v6)) + ((v1 + v5) +
 * (v3 + v7)), so bit for bit its result (an addition's operands commute exactly); 11 shuffles and 7 adds where
 * eight hsum8 take 40 instructions. The dot tiles' reductions were as many instructions as their multiply-adds
 * for attention's 64-value heads. Lanes come out as [in0, in2, in4, in6, in1, in3, in5, in7]; the inputs are
 * taken in the order that makes that v[0..8). */
X86_AVX2 static void hsum8x8(const __m256 v[8], float out[8])
{
    const __m256 a = v[0], b = v[4], c = v[1], d = v[5], e = v[2], f = v[6], g = v[3], h = v[7];
    /* lane i of each half: x_i + x_{i+4} */
    const __m256 ab = _mm256_add_ps(_mm256_permute2f128_ps(a, b, 0x20), _mm256_permute2f128_ps(a, b, 0x31));
    const __m256 cd = _mm256_add_ps(_mm256_permute2f128_ps(c, d, 0x20), _mm256_permute2f128_ps(c, d, 0x31));
    const __m256 ef = _mm256_add_ps(_mm256_permute2f128_ps(e, f, 0x20), _mm256_permute2f128_ps(e, f, 0x31));
    const __m256 gh = _mm256_add_ps(_mm256_permute2f128_ps(g, h, 0x20), _mm256_permute2f128_ps(g, h, 0x31));
    /* (0 + 2) and (1 + 3) of those, two inputs per half */
    const __m256 abcd = _mm256_add_ps(_mm256_shuffle_ps(ab, cd, 0x44), _mm256_shuffle_ps(ab, cd, 0xee));
    const __m256 efgh = _mm256_add_ps(_mm256_shuffle_ps(ef, gh, 0x44), _mm256_shuffle_ps(ef, gh, 0xee));
    /* and their sum: [a, c, e, g | b, d, f, h] = v[0..8) */
    _mm256_storeu_ps(out, _mm256_add_ps(_mm256_shuffle_ps(abcd, efgh, 0x88), _mm256_shuffle_ps(abcd, efgh, 0xdd)));
}

X86_AVX2 static float dot_avx2(const float *a, const float *b, int64_t n)
{
    __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps();
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), s0);
        s1 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 8), _mm256_loadu_ps(b + i + 8), s1);
    }
    for (; i + 8 <= n; i += 8)
        s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), s0);
    float s = hsum8(_mm256_add_ps(s0, s1));
    for (; i < n; i++)
        s += a[i] * b[i];
    return s;
}

/* out[r * T + t] = sums[r * T + t] + the products of w[r] and x[t] past j (the tail no vector step covered), for
 * the R x T pairs of a dot tile, each in dot_avx2's order */
static void add_tails(const float *sums, const float *const w[], int R, const float *const x[], int T, int64_t j,
                      int64_t n, float *out)
{
    for (int r = 0; r < R; r++)
        for (int t = 0; t < T; t++) {
            float s = sums[r * T + t];
            for (int64_t k = j; k < n; k++)
                s += w[r][k] * x[t][k];
            out[r * T + t] = s;
        }
}

/* Rows w0, w1 x tokens x0..x2: the six dots of dot_avx2, each accumulated in its order (chunks of 8 alternating
 * between two accumulators, their sum reduced, the tail added value by value), so each result is bit for bit
 * what dot_avx2 gives for that pair, into out[r * 3 + t]. 12 accumulators, 10 loads per 12 FMAs. */
X86_AVX2 static void dot_pairs_2x3_avx2(const float *const w[2], const float *const x[3], int64_t n, float out[6])
{
    __m256 s0[2][3], s1[2][3];
    for (int r = 0; r < 2; r++)
        for (int t = 0; t < 3; t++)
            s0[r][t] = s1[r][t] = _mm256_setzero_ps();
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m256 u0[3], u1[3];
        for (int t = 0; t < 3; t++)
            u0[t] = _mm256_loadu_ps(x[t] + i), u1[t] = _mm256_loadu_ps(x[t] + i + 8);
        for (int r = 0; r < 2; r++) {
            const __m256 a0 = _mm256_loadu_ps(w[r] + i), a1 = _mm256_loadu_ps(w[r] + i + 8);
            for (int t = 0; t < 3; t++) {
                s0[r][t] = _mm256_fmadd_ps(a0, u0[t], s0[r][t]);
                s1[r][t] = _mm256_fmadd_ps(a1, u1[t], s1[r][t]);
            }
        }
    }
    for (; i + 8 <= n; i += 8)
        for (int r = 0; r < 2; r++)
            for (int t = 0; t < 3; t++)
                s0[r][t] = _mm256_fmadd_ps(_mm256_loadu_ps(w[r] + i), _mm256_loadu_ps(x[t] + i), s0[r][t]);
    __m256 v[8];
    for (int r = 0; r < 2; r++)
        for (int t = 0; t < 3; t++)
            v[r * 3 + t] = _mm256_add_ps(s0[r][t], s1[r][t]);
    v[6] = v[7] = _mm256_setzero_ps();
    float sums[8];
    hsum8x8(v, sums);
    add_tails(sums, w, 2, x, 3, i, n, out);
}

/* The same for 4 rows x T tokens (T <= 6, a constant where inlined) in 512-bit registers: lanes 0-7 of an
 * accumulator are dot_avx2's first accumulator and lanes 8-15 its second, so each lane sees the same products in
 * the same order, and the halves are added and reduced as there: bit for bit dot_avx2 again, into out[r * T + t].
 * At 6 tokens 24 accumulators, 10 loads per 24 FMAs; fewer tokens are a grid's last column (attention's 16
 * queries of a Qwen3-shaped block are 6 + 6 + 4, one query of a generation step is 1): through the AVX2 tiles
 * and dot_avx2 those took 2.6 % of a Qwen3-0.6B-shape pp512, as long as the 4 x 6 tiles' 3.4 %. */
X86_AVX512 static inline __attribute__((always_inline)) void
dot_pairs_4xT_avx512(const float *const w[4], const float *const x[], const int T, int64_t n, float *out)
{
    __m512 acc[4][6];
    for (int r = 0; r < 4; r++)
        for (int t = 0; t < T; t++)
            acc[r][t] = _mm512_setzero_ps();
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m512 u[6];
        for (int t = 0; t < T; t++)
            u[t] = _mm512_loadu_ps(x[t] + i);
        for (int r = 0; r < 4; r++) {
            const __m512 a = _mm512_loadu_ps(w[r] + i);
            for (int t = 0; t < T; t++)
                acc[r][t] = _mm512_fmadd_ps(a, u[t], acc[r][t]);
        }
    }
    const int64_t j0 = i + 8 <= n ? i + 8 : i;
    __m256 v[24];
    for (int r = 0; r < 4; r++)
        for (int t = 0; t < T; t++) {
            __m256 s0 = _mm512_castps512_ps256(acc[r][t]);
            const __m256 s1 = _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(acc[r][t]), 1));
            if (j0 > i)
                s0 = _mm256_fmadd_ps(_mm256_loadu_ps(w[r] + i), _mm256_loadu_ps(x[t] + i), s0);
            v[r * T + t] = _mm256_add_ps(s0, s1);
        }
    float sums[24];
    for (int g = 0; g < 4 * T; g += 8) {
        for (int k = 4 * T - g; k < 8; k++) /* 4 x 1 and 4 x 3 fill half a group of eight */
            v[g + k] = _mm256_setzero_ps();
        hsum8x8(v + g, sums + g);
    }
    add_tails(sums, w, 4, x, T, j0, n, out);
}

#define DOT_PAIRS_4X(T)                                                                                             \
    X86_AVX512 static void dot_pairs_4x##T##_avx512(                               \
        const float *const w[4], const float *const x[], int64_t n, float *out)                                     \
    {                                                                                                               \
        dot_pairs_4xT_avx512(w, x, T, n, out);                                                                      \
    }
DOT_PAIRS_4X(1)
DOT_PAIRS_4X(2)
DOT_PAIRS_4X(3)
DOT_PAIRS_4X(4)
DOT_PAIRS_4X(5)
DOT_PAIRS_4X(6)
typedef void (*dot_pairs_4x_fn)(const float *const w[4], const float *const x[], int64_t n, float *out);
/* by token count */
static const dot_pairs_4x_fn dot_pairs_4x[7] = { NULL,
                                                 dot_pairs_4x1_avx512,
                                                 dot_pairs_4x2_avx512,
                                                 dot_pairs_4x3_avx512,
                                                 dot_pairs_4x4_avx512,
                                                 dot_pairs_4x5_avx512,
                                                 dot_pairs_4x6_avx512 };

/* 8 values of row w at i: f32 as they lie, or f16 widened by F16C (f16 is a constant where inlined). F16 rows
 * read in place skip their decode to an f32 scratch, 6-7 % of a Qwen3-0.6B-shape F16 prompt on AVX2; the
 * conversion does not compete with the multiply-adds for their pipes. */
X86_AVX2 static inline __attribute__((always_inline)) __m256 row8(const void *w, int64_t i, bool f16)
{
    return f16 ? _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)((const uint16_t *)w + i)))
               : _mm256_loadu_ps((const float *)w + i);
}

/*
 * 4 weight rows x nt tokens: 4 nt accumulators, 4 + nt loads per 4 nt FMAs.
 * Loads bound it below 4 tokens (measured on this project's Zen 4: ~1.5
 * 256-bit loads per cycle against 2 FMAs), so with AVX-512VL's 32 vector
 * registers 4 tokens at once; AVX2's 16 hold 3. Every accumulator sees its
 * products in the same order whatever nt is, so results do not depend on how
 * the tokens were tiled. nt and f16 are constants where this is inlined, and
 * the loops over nt unroll into registers.
 */
X86_AVX2 static inline __attribute__((always_inline)) void dot_4xn_body(const void *const w[4], bool f16, const float *x,
                                                               int nt, int64_t n, float *out, int64_t ldo)
{
    __m256 acc[4][4];
    for (int r = 0; r < 4; r++)
        for (int t = 0; t < nt; t++)
            acc[r][t] = _mm256_setzero_ps();
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 u[4];
        for (int t = 0; t < nt; t++)
            u[t] = _mm256_loadu_ps(x + t * n + i);
        for (int r = 0; r < 4; r++) {
            const __m256 wr = row8(w[r], i, f16);
            for (int t = 0; t < nt; t++)
                acc[r][t] = _mm256_fmadd_ps(wr, u[t], acc[r][t]);
        }
    }
    for (int t = 0; t < nt; t++)
        for (int r = 0; r < 4; r++) {
            float s = hsum8(acc[r][t]);
            for (int64_t j = i; j < n; j++)
                s += row_at(w[r], j, f16) * x[t * n + j];
            out[t * ldo + r] = s;
        }
}

typedef void (*dot_tile_fn)(const void *const w[4], const float *x, int64_t n, float *out, int64_t ldo);

/* NAME_f32 / NAME_f16: the body for NT tokens with rows of either type, compiled for the set isa (x86_target.h). */
#define DEFINE_DOT_TILES(name, isa, nt)                                                                     \
    isa static void name##_f32(const void *const w[4], const float *x, int64_t n, \
                                                           float *out, int64_t ldo)                          \
    {                                                                                                         \
        dot_4xn_body(w, false, x, nt, n, out, ldo);                                                           \
    }                                                                                                         \
    isa static void name##_f16(const void *const w[4], const float *x, int64_t n, \
                                                           float *out, int64_t ldo)                          \
    {                                                                                                         \
        dot_4xn_body(w, true, x, nt, n, out, ldo);                                                            \
    }

/* 4 x 3: 12 accumulators, 3 token vectors and one row vector, all 16 AVX2 registers */
DEFINE_DOT_TILES(dot_4x3, X86_AVX2, 3)
DEFINE_DOT_TILES(dot_4x2, X86_AVX2, 2)
DEFINE_DOT_TILES(dot_4x1, X86_AVX2, 1)
DEFINE_DOT_TILES(dot_4x4_avx512, X86_AVX512, 4)

int cpu_vector_lanes(void)
{
    return cpu_have_avx512vl() ? 16 : cpu_have_avx2() ? 8 : 0;
}

/* quant/'s level "avx512" already means AVX-512F and AVX2 and no GGUFSCOPE_SIMD cap below it. */
bool cpu_have_avx512vl(void)
{
    static int cached = -1;
    if (cached < 0)
        cached = quant_cpu_has_avx512vl() && strcmp(quant_simd_level(), "avx512") == 0;
    return cached;
}

/* 1 f16 row x 1 token, 4 accumulators. Rows lie back to back, so a thread
 * taking them one at a time reads one sequential stream, which the hardware
 * prefetcher follows across row ends; 4 rows at once are 4 short streams
 * (measured on 896-value rows: 35 GB/s against 22). */
X86_AVX2 static float dot_f16_1x1_avx2(const uint16_t *w, const float *x, int64_t n)
{
    __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
    int64_t i = 0;
    for (; i + 32 <= n; i += 32) {
        a0 = _mm256_fmadd_ps(_mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(w + i))), _mm256_loadu_ps(x + i), a0);
        a1 = _mm256_fmadd_ps(_mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(w + i + 8))),
                             _mm256_loadu_ps(x + i + 8), a1);
        a2 = _mm256_fmadd_ps(_mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(w + i + 16))),
                             _mm256_loadu_ps(x + i + 16), a2);
        a3 = _mm256_fmadd_ps(_mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(w + i + 24))),
                             _mm256_loadu_ps(x + i + 24), a3);
    }
    for (; i + 8 <= n; i += 8)
        a0 = _mm256_fmadd_ps(_mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(w + i))), _mm256_loadu_ps(x + i), a0);
    float s = hsum8(_mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)));
    for (; i < n; i++)
        s += quant_f16_to_f32(w[i]) * x[i];
    return s;
}

/* 4 f16 rows x 1 token, converted in registers (F16C): the decode path for
 * F16 weights reads each weight byte once and writes nothing. Used for long
 * rows, where x no longer sits in L1 beside the weights and reading it once
 * per 4 rows wins over the single stream. */
X86_AVX2 static void dot_f16_4x1_avx2(const uint16_t *const w[4], const float *x, int64_t n, float *o)
{
    __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 u = _mm256_loadu_ps(x + i);
        a0 = _mm256_fmadd_ps(_mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(w[0] + i))), u, a0);
        a1 = _mm256_fmadd_ps(_mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(w[1] + i))), u, a1);
        a2 = _mm256_fmadd_ps(_mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(w[2] + i))), u, a2);
        a3 = _mm256_fmadd_ps(_mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(w[3] + i))), u, a3);
    }
    float s[4] = { hsum8(a0), hsum8(a1), hsum8(a2), hsum8(a3) };
    for (; i < n; i++)
        for (int r = 0; r < 4; r++)
            s[r] += quant_f16_to_f32(w[r][i]) * x[i];
    for (int r = 0; r < 4; r++)
        o[r] = s[r];
}
#endif

float kern_dot_f32(const float *a, const float *b, int64_t n)
{
#if X86
    if (cpu_have_avx2())
        return dot_avx2(a, b, n);
#endif
    return dot_scalar(a, b, n);
}

#if X86
/* Tiles by token count (index nt, 1..4), rows f32 [0] or f16 [1]. */
static const dot_tile_fn tiles[2][5] = {
    { NULL, dot_4x1_f32, dot_4x2_f32, dot_4x3_f32, dot_4x4_avx512_f32 },
    { NULL, dot_4x1_f16, dot_4x2_f16, dot_4x3_f16, dot_4x4_avx512_f16 },
};
#endif

static void dot_rows(const void *const w[4], bool f16, int nr, const float *x, int nt, int64_t n, float *out,
                     int64_t ldo)
{
#if X86
    if (cpu_have_avx2() && nr == 4) {
        const dot_tile_fn *tile = tiles[f16];
        int t = 0;
        if (cpu_have_avx512vl())
            for (; t + 4 <= nt; t += 4)
                tile[4](w, x + t * n, n, out + t * ldo, ldo);
        for (; t + 3 <= nt; t += 3)
            tile[3](w, x + t * n, n, out + t * ldo, ldo);
        for (; t + 2 <= nt; t += 2)
            tile[2](w, x + t * n, n, out + t * ldo, ldo);
        if (t < nt)
            tile[1](w, x + t * n, n, out + t * ldo, ldo);
        return;
    }
#endif
    for (int t = 0; t < nt; t++)
        for (int r = 0; r < nr; r++) {
            if (f16)
                cpu_dot_rows_f16((const uint16_t *const *)&w[r], 1, x + t * n, n, &out[t * ldo + r]);
            else
                out[t * ldo + r] = kern_dot_f32(w[r], x + t * n, n);
        }
}

void cpu_dot_rows(const float *const w[4], int nr, const float *x, int nt, int64_t n, float *out, int64_t ldo)
{
    dot_rows((const void *const *)w, false, nr, x, nt, n, out, ldo);
}

void cpu_dot_rows_f16_tokens(const uint16_t *const w[4], int nr, const float *x, int nt, int64_t n, float *out,
                             int64_t ldo)
{
    dot_rows((const void *const *)w, true, nr, x, nt, n, out, ldo);
}

/* cpu_dot_grid through the AVX2 tiles of 2 x 3 (and kern_dot_f32 for what they leave) */
static void dot_grid_pairs(const float *w, int64_t ldw, int nr, const float *x, int64_t ldx, int nt, int64_t n,
                           float *out, int64_t ldo)
{
    int r = 0;
#if X86
    if (cpu_have_avx2())
        for (; r + 2 <= nr; r += 2) {
            const float *wr[2] = { w + r * ldw, w + (r + 1) * ldw };
            int t = 0;
            for (; t + 3 <= nt; t += 3) {
                const float *xt[3] = { x + t * ldx, x + (t + 1) * ldx, x + (t + 2) * ldx };
                float o[6];
                dot_pairs_2x3_avx2(wr, xt, n, o);
                for (int i = 0; i < 2; i++)
                    for (int j = 0; j < 3; j++)
                        out[(t + j) * ldo + r + i] = o[i * 3 + j];
            }
            for (; t < nt; t++)
                for (int i = 0; i < 2; i++)
                    out[t * ldo + r + i] = kern_dot_f32(wr[i], x + t * ldx, n);
        }
#endif
    for (; r < nr; r++)
        for (int t = 0; t < nt; t++)
            out[t * ldo + r] = kern_dot_f32(w + r * ldw, x + t * ldx, n);
}

void cpu_dot_grid(const float *w, int64_t ldw, int nr, const float *x, int64_t ldx, int nt, int64_t n, float *out,
                  int64_t ldo)
{
    int r = 0;
#if X86
    if (cpu_have_avx512vl())
        for (; r + 4 <= nr; r += 4) {
            const float *wr[4] = { w + r * ldw, w + (r + 1) * ldw, w + (r + 2) * ldw, w + (r + 3) * ldw };
            for (int t = 0; t < nt; t += 6) {
                const int tn = nt - t < 6 ? nt - t : 6;
                const float *xt[6];
                for (int j = 0; j < tn; j++)
                    xt[j] = x + (t + j) * ldx;
                float o[24];
                dot_pairs_4x[tn](wr, xt, n, o);
                for (int i = 0; i < 4; i++)
                    for (int j = 0; j < tn; j++)
                        out[(t + j) * ldo + r + i] = o[i * tn + j];
            }
        }
#endif
    dot_grid_pairs(w + r * ldw, ldw, nr - r, x, ldx, nt, n, out + r, ldo);
}

void cpu_dot_rows_f16(const uint16_t *const w[4], int nr, const float *x, int64_t n, float *out)
{
#if X86
    if (cpu_have_avx2() && nr == 4 && n > F16_SINGLE_STREAM_MAX) {
        dot_f16_4x1_avx2(w, x, n, out);
        return;
    }
    if (cpu_have_avx2()) {
        for (int r = 0; r < nr; r++)
            out[r] = dot_f16_1x1_avx2(w[r], x, n);
        return;
    }
#endif
    for (int r = 0; r < nr; r++) {
        float s = 0.0f;
        for (int64_t i = 0; i < n; i++)
            s += quant_f16_to_f32(w[r][i]) * x[i];
        out[r] = s;
    }
}
