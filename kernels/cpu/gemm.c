/*
 * Prompt products of f32 rows on AVX-512F: 16 weight rows against up to 24 tokens per pass, as a GEMM
 * rather than as dot products.
 *
 * The 16 rows are packed k-major (panel[k][16]: one zmm per k, lane r = row r) and the tokens of a tile
 * k-major too (xt[k][nt]), so each step of k is one panel load and nt FMAs whose second operand is one
 * token's x[k] broadcast from memory: 24 accumulators, each holding the 16 rows' sums for one token,
 * and no horizontal sums at the end. The dot-product kernels (dot.c) read both operands along k and
 * keep one accumulator per (row, token) pair in 256-bit registers, then add its 8 lanes: half the FMA
 * width, and one horizontal sum per pair (measured on one thread, a 1536 x 576 product: 119 GFLOP/s at
 * 4 tokens through them, 235 at 64 tokens here).
 *
 * Sums run over k in order, one lane per row: a different order from the dot kernels, equal to rounding
 * (exact numerics are held to llama.cpp's f32 goldens with a tolerance, test_engine).
 * x is packed once per product (cpu_gemm_pack_x) and shared by every thread; each thread packs its own
 * 16-row panels from the rows it has decoded.
 */
#include "gemm.h"

#include "cpu.h"
#include "quant.h"

#include <string.h>

#if defined(__x86_64__)
#include <immintrin.h>
#define X86 1
#define AVX512 __attribute__((target("avx512f,avx2,fma")))
#else
#define X86 0
#endif

/* Tokens per tile (a multiple of 4, the padding step), and the accumulators that leaves: 24 + 1 panel
 * register of AVX-512's 32. */
enum { TILE = 24, PAD = 4 };

bool cpu_have_gemm(void)
{
#if X86
    static int cached = -1;
    if (cached < 0)
        cached = cpu_have_avx2() && strcmp(quant_simd_level(), "avx512") == 0;
    return cached;
#else
    return false;
#endif
}

static int tile_tokens(int T, int t0)
{
    return T - t0 < TILE ? T - t0 : TILE;
}

static int padded(int nt)
{
    return (nt + PAD - 1) / PAD * PAD;
}

size_t cpu_gemm_x_floats(int T, int64_t n)
{
    size_t total = 0;
    for (int t0 = 0; t0 < T; t0 += TILE)
        total += (size_t)padded(tile_tokens(T, t0)) * (size_t)n;
    return total;
}

void cpu_gemm_pack_x(const float *x, int T, int64_t n, int64_t k0, int64_t k1, float *xp)
{
    for (int t0 = 0; t0 < T; t0 += TILE) {
        const int nt = tile_tokens(T, t0), np = padded(nt);
        for (int64_t k = k0; k < k1; k++) {
            for (int t = 0; t < nt; t++)
                xp[k * np + t] = x[(int64_t)(t0 + t) * n + k];
            for (int t = nt; t < np; t++)
                xp[k * np + t] = 0.0f;
        }
        xp += (size_t)np * (size_t)n;
    }
}

#if X86
/* 16 rows x 16 values starting at column k of rows[], transposed into panel[k .. k+15][16]. */
AVX512 static void transpose16(const float *const rows[16], int64_t k, float *panel)
{
    __m512 r[16], t[16], u[16];
    for (int i = 0; i < 16; i++)
        r[i] = _mm512_loadu_ps(rows[i] + k);
    /* 2x2 blocks of 1, then of 2 floats within each 128-bit lane, then the lanes themselves */
    for (int i = 0; i < 16; i += 2) {
        t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
        t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
    }
    for (int i = 0; i < 16; i += 4) {
        r[i] = _mm512_castpd_ps(_mm512_unpacklo_pd(_mm512_castps_pd(t[i]), _mm512_castps_pd(t[i + 2])));
        r[i + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(_mm512_castps_pd(t[i]), _mm512_castps_pd(t[i + 2])));
        r[i + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(_mm512_castps_pd(t[i + 1]), _mm512_castps_pd(t[i + 3])));
        r[i + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(_mm512_castps_pd(t[i + 1]), _mm512_castps_pd(t[i + 3])));
    }
    /* r[4q + j] holds, in its 128-bit lane L, column 4L + j of rows 4q..4q+3; two rounds of shuffle_f32x4
     * gather lane L of r[j], r[4 + j], r[8 + j], r[12 + j] into one register: column 4L + j of all 16 rows. */
    for (int j = 0; j < 4; j++) {
        const __m512 a = r[j], b = r[4 + j], c = r[8 + j], d = r[12 + j];
        const __m512 ab_lo = _mm512_shuffle_f32x4(a, b, 0x44), ab_hi = _mm512_shuffle_f32x4(a, b, 0xee);
        const __m512 cd_lo = _mm512_shuffle_f32x4(c, d, 0x44), cd_hi = _mm512_shuffle_f32x4(c, d, 0xee);
        u[4 * j + 0] = _mm512_shuffle_f32x4(ab_lo, cd_lo, 0x88); /* lane 0 of a, b, c, d */
        u[4 * j + 1] = _mm512_shuffle_f32x4(ab_lo, cd_lo, 0xdd); /* lane 1 */
        u[4 * j + 2] = _mm512_shuffle_f32x4(ab_hi, cd_hi, 0x88); /* lane 2 */
        u[4 * j + 3] = _mm512_shuffle_f32x4(ab_hi, cd_hi, 0xdd); /* lane 3 */
    }
    for (int j = 0; j < 4; j++)
        for (int L = 0; L < 4; L++)
            _mm512_storeu_ps(panel + (4 * L + j) * 16, u[4 * j + L]);
}
#endif

void cpu_gemm_pack_rows(const float *const rows[], int nr, int64_t n, float *panel)
{
    int64_t k = 0;
#if X86
    if (nr == 16)
        for (; k + 16 <= n; k += 16)
            transpose16(rows, k, panel + k * 16);
#endif
    for (; k < n; k++)
        for (int r = 0; r < 16; r++)
            panel[k * 16 + r] = r < nr ? rows[r][k] : 0.0f;
}

#if X86
/* One tile: NT (a constant where inlined) padded tokens of xt against the panel; the first nt stored. */
AVX512 static inline __attribute__((always_inline)) void tile(const float *panel, const float *xt, int64_t n,
                                                              const int NT, int nt, float *y, int64_t ldo,
                                                              __mmask16 rows)
{
    /* The pragmas keep acc[] in registers: GCC does not unroll loops of more than 16 by itself, and then
     * keeps the accumulators in memory (seen in the object code; prompts were then no faster than
     * through the dot kernels). */
    __m512 acc[TILE];
#pragma GCC unroll 24
    for (int t = 0; t < NT; t++)
        acc[t] = _mm512_setzero_ps();
    for (int64_t k = 0; k < n; k++) {
        const __m512 w = _mm512_loadu_ps(panel + k * 16);
#pragma GCC unroll 24
        for (int t = 0; t < NT; t++)
            acc[t] = _mm512_fmadd_ps(w, _mm512_set1_ps(xt[k * NT + t]), acc[t]);
    }
#pragma GCC unroll 24
    for (int t = 0; t < NT; t++)
        if (t < nt)
            _mm512_mask_storeu_ps(y + t * ldo, rows, acc[t]);
}

#define TILE_FN(NT)                                                                                          \
    AVX512 static void tile_##NT(const float *panel, const float *xt, int64_t n, int nt, float *y, int64_t ldo, \
                                 __mmask16 rows)                                                             \
    {                                                                                                        \
        tile(panel, xt, n, NT, nt, y, ldo, rows);                                                            \
    }
TILE_FN(4)
TILE_FN(8)
TILE_FN(12)
TILE_FN(16)
TILE_FN(20)
TILE_FN(24)
#endif

void cpu_gemm_panel(const float *panel, int nr, const float *xp, int T, int64_t n, float *y, int64_t ldo)
{
#if X86
    typedef void (*tile_fn)(const float *, const float *, int64_t, int, float *, int64_t, __mmask16);
    static const tile_fn by_quads[] = { NULL, tile_4, tile_8, tile_12, tile_16, tile_20, tile_24 };
    const __mmask16 rows = (__mmask16)((1u << nr) - 1);
    for (int t0 = 0; t0 < T; t0 += TILE) {
        const int nt = tile_tokens(T, t0), np = padded(nt);
        by_quads[np / PAD](panel, xp, n, nt, y + t0 * ldo, ldo, rows);
        xp += (size_t)np * (size_t)n;
    }
#else
    (void)panel, (void)nr, (void)xp, (void)T, (void)n, (void)y, (void)ldo;
#endif
}
