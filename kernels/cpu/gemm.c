/*
 * Prompt products on AVX-512F: 16 weight rows against up to 24 tokens per pass, as a GEMM rather than as
 * dot products.
 *
 * The 16 rows are packed k-major (panel[k][16]: one zmm per k, lane r = row r) and the tokens of a tile
 * k-major too (xt[k][nt]), so each step of k is one panel load and nt multiply-adds whose second operand is
 * one token's x[k] broadcast from memory: 24 accumulators, each holding the 16 rows' sums for one token,
 * and no horizontal sums at the end. The dot-product kernels (dot.c) read both operands along k and
 * keep one accumulator per (row, token) pair in 256-bit registers, then add its 8 lanes: half the FMA
 * width, and one horizontal sum per pair (measured on one thread, a 1536 x 576 product: 119 GFLOP/s at
 * 4 tokens through them, 235 at 64 tokens here).
 *
 * Sums run over k in order, one lane per row: a different order from the dot kernels, equal to rounding
 * (exact numerics are held to llama.cpp's f32 goldens with a tolerance, test_engine).
 * x is packed once per product (cpu_gemm_pack_x) and shared by every thread; each thread packs its own
 * 16-row panels from its rows (decoded to f32, or F16/BF16 rows widened as they are packed).
 */
#include "x86_target.h"
#include "gemm.h"

#include "cpu.h"
#include "quant.h"

#include <string.h>

#if defined(__x86_64__)
#include <immintrin.h>
#define X86 1
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

size_t cpu_gemm_x_words(int T, int64_t words)
{
    size_t total = 0;
    for (int t0 = 0; t0 < T; t0 += TILE)
        total += (size_t)padded(tile_tokens(T, t0)) * (size_t)words;
    return total;
}

#if X86
/* r[0..16), 16 rows of 16 values each, transposed in registers: u[j] is column j (r is overwritten). */
X86_AVX512 static inline __attribute__((always_inline)) void transpose16_cols(__m512 r[16], __m512 u[16])
{
    __m512 t[16];
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
        u[j + 0] = _mm512_shuffle_f32x4(ab_lo, cd_lo, 0x88); /* lane 0 of a, b, c, d */
        u[j + 4] = _mm512_shuffle_f32x4(ab_lo, cd_lo, 0xdd); /* lane 1 */
        u[j + 8] = _mm512_shuffle_f32x4(ab_hi, cd_hi, 0x88); /* lane 2 */
        u[j + 12] = _mm512_shuffle_f32x4(ab_hi, cd_hi, 0xdd); /* lane 3 */
    }
}

/* r[0..16), 16 rows of 16 values each, transposed into out[j * ld .. j * ld + 15] for j < 16 (r is overwritten). */
X86_AVX512 static inline __attribute__((always_inline)) void transpose16_regs(__m512 r[16], float *out, int64_t ld)
{
    __m512 u[16];
    transpose16_cols(r, u);
    for (int j = 0; j < 16; j++)
        _mm512_storeu_ps(out + j * ld, u[j]);
}

/* 16 rows x 16 words starting at word k of rows[], transposed into panel[k .. k+15][16]. */
X86_AVX512 static void transpose16(const void *const rows[16], int64_t k, float *panel)
{
    __m512 r[16];
    for (int i = 0; i < 16; i++)
        r[i] = _mm512_loadu_ps((const unsigned char *)rows[i] + k * 4);
    transpose16_regs(r, panel, 16);
}

/* The same from 16 rows of F16, widened by F16C as they are loaded. */
X86_AVX512 static void pack_rows_f16(const uint16_t *const rows[16], int64_t n, float *panel)
{
    for (int64_t k = 0; k < n; k += 16) {
        __m512 r[16];
        for (int i = 0; i < 16; i++)
            r[i] = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(rows[i] + k)));
        transpose16_regs(r, panel + k * 16, 16);
    }
}

/* 16 rows of BF16: 32 values a row transposed as 16 pairs (the 32-bit words), then each column of pairs split into
 * its two f32 columns, since a bf16 is the top half of an f32: the even value moved up, the odd one with the low
 * half cleared. Half the shuffles a value of widening first and transposing f32 (perf, SmolLM2 BF16 pp64: the
 * packing 7.6 % of the time before). */
X86_AVX512 static void pack_rows_bf16(const uint16_t *const rows[16], int64_t n, float *panel)
{
    const __m512i high_half = _mm512_set1_epi32((int)0xffff0000u);
    int64_t k = 0;
    for (; k + 32 <= n; k += 32) {
        __m512 r[16], u[16];
        for (int i = 0; i < 16; i++)
            r[i] = _mm512_loadu_ps(rows[i] + k);
        transpose16_cols(r, u);
        for (int j = 0; j < 16; j++) {
            const __m512i pair = _mm512_castps_si512(u[j]);
            _mm512_storeu_ps(panel + (k + 2 * j) * 16, _mm512_castsi512_ps(_mm512_slli_epi32(pair, 16)));
            _mm512_storeu_ps(panel + (k + 2 * j + 1) * 16, _mm512_castsi512_ps(_mm512_and_si512(pair, high_half)));
        }
    }
    for (; k < n; k += 16) { /* a last 16 values */
        __m512 r[16];
        for (int i = 0; i < 16; i++)
            r[i] = _mm512_castsi512_ps(
                _mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)(rows[i] + k))), 16));
        transpose16_regs(r, panel + k * 16, 16);
    }
}

/* 8 tokens' words [k, k + 8) (r[0..8), one token each) transposed into out[j * ld .. j * ld + 7] for j < 8 */
X86_AVX512 static inline __attribute__((always_inline)) void transpose8_regs(const __m256 r[8], float *out, int64_t ld)
{
    __m256 t[8], u[8];
    for (int i = 0; i < 8; i += 2) {
        t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);
        t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
    }
    for (int i = 0; i < 8; i += 4) {
        u[i] = _mm256_shuffle_ps(t[i], t[i + 2], 0x44);
        u[i + 1] = _mm256_shuffle_ps(t[i], t[i + 2], 0xee);
        u[i + 2] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0x44);
        u[i + 3] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0xee);
    }
    /* u[i] holds, in each 128-bit half, word i of 4 tokens: tokens 0-3 from u[i], 4-7 from u[4 + i] */
    for (int j = 0; j < 4; j++) {
        _mm256_storeu_ps(out + j * ld, _mm256_permute2f128_ps(u[j], u[4 + j], 0x20));
        _mm256_storeu_ps(out + (4 + j) * ld, _mm256_permute2f128_ps(u[j], u[4 + j], 0x31));
    }
}

/* Words [k, k + 16) of 8 of a tile's tokens [t, t + 8), as pack_x16 packs them (padding past nt as zeros): two
 * 8 x 8 transposes, stored in place (through pack_x16's square they cost a 16 x 16 one and masked copies) */
X86_AVX512 static void pack_x8(const unsigned char *x, int64_t words, int t0, int nt, int np, int t, int64_t k, float *xp)
{
    for (int h = 0; h < 16; h += 8) {
        __m256 r[8];
        for (int i = 0; i < 8; i++)
            r[i] = t + i < nt ? _mm256_loadu_ps((const float *)(x + ((int64_t)(t0 + t + i) * words + k + h) * 4))
                              : _mm256_setzero_ps();
        transpose8_regs(r, xp + (k + h) * np + t, np);
    }
}

/* Words [k, k + 16) of a tile's tokens [t, t + tn) (the tile's first token is row t0 of x, rows of `words` words;
 * tokens at or past nt are padding, zeros), transposed into the tile's xp[(k + j) * np + t ..] for j < 16: 16 tokens
 * in place, fewer through a square on the stack. */
X86_AVX512 static void pack_x16(const unsigned char *x, int64_t words, int t0, int nt, int np, int t, int tn, int64_t k,
                            float *xp)
{
    __m512 r[16];
    for (int i = 0; i < 16; i++)
        r[i] = i < tn && t + i < nt ? _mm512_loadu_ps(x + ((int64_t)(t0 + t + i) * words + k) * 4) : _mm512_setzero_ps();
    if (tn == 16) {
        transpose16_regs(r, xp + k * np + t, np);
        return;
    }
    float square[16 * 16];
    transpose16_regs(r, square, 16);
    const __mmask16 m = (__mmask16)((1u << tn) - 1);
    for (int j = 0; j < 16; j++)
        _mm512_mask_storeu_ps(xp + (k + j) * np + t, m, _mm512_loadu_ps(square + j * 16));
}
#endif

bool cpu_gemm_pack_rows_half(const uint16_t *const rows[], bool bf16, int nr, int64_t n, float *panel)
{
#if X86
    if (nr != 16 || n % 16)
        return false;
    (bf16 ? pack_rows_bf16 : pack_rows_f16)(rows, n, panel);
    return true;
#else
    (void)rows, (void)bf16, (void)nr, (void)n, (void)panel;
    return false;
#endif
}

/* Column k of a tile's tokens one word at a time: the columns at the edges of [k0, k1) that do not fill 16. */
static void pack_x_column(const unsigned char *x, int64_t words, int t0, int nt, int np, int64_t k, float *xp)
{
    for (int t = 0; t < nt; t++)
        memcpy(&xp[k * np + t], x + ((int64_t)(t0 + t) * words + k) * 4, 4);
    for (int t = nt; t < np; t++)
        xp[k * np + t] = 0.0f;
}

/* 16 columns at a time by register transposes where AVX-512 runs (the GEMM needs it anyway): one word at a
 * time, reading a different token's row at each step, this packing was 6.7 % of SmolLM2 Q4_0 prompts (perf). */
void cpu_gemm_pack_x(const void *x, int T, int64_t words, int64_t k0, int64_t k1, float *xp)
{
    const unsigned char *xb = x;
#if X86
    const bool simd = cpu_have_gemm();
#endif
    for (int t0 = 0; t0 < T; t0 += TILE) {
        const int nt = tile_tokens(T, t0), np = padded(nt);
        int64_t k = k0;
#if X86
        /* a tile's padded tokens 16, then 8, then the last 4 at a time */
        for (; simd && k + 16 <= k1; k += 16)
            for (int t = 0; t < np;) {
                const int tn = np - t >= 16 ? 16 : np - t;
                if (tn >= 8 && tn < 16) {
                    pack_x8(xb, words, t0, nt, np, t, k, xp);
                    t += 8;
                } else {
                    pack_x16(xb, words, t0, nt, np, t, tn, k, xp);
                    t += tn;
                }
            }
#endif
        for (; k < k1; k++)
            pack_x_column(xb, words, t0, nt, np, k, xp);
        xp += (size_t)np * (size_t)words;
    }
}

void cpu_gemm_pack_rows(const void *const rows[], int nr, int64_t words, float *panel)
{
    int64_t k = 0;
#if X86
    if (nr == 16)
        for (; k + 16 <= words; k += 16)
            transpose16(rows, k, panel + k * 16);
#endif
    for (; k < words; k++)
        for (int r = 0; r < 16; r++) {
            if (r < nr)
                memcpy(&panel[k * 16 + r], (const unsigned char *)rows[r] + k * 4, 4);
            else
                panel[k * 16 + r] = 0.0f;
        }
}

#if X86
/* The multiply-adds of one step of k: the panel's 16 rows (w) times one token's word (at x) into acc. */
X86_AVX512 static inline __attribute__((always_inline)) __m512 f32_step(__m512 acc, __m512 w, const float *x)
{
    return _mm512_fmadd_ps(w, _mm512_set1_ps(*x), acc);
}


/* The next panel's bytes, brought into cache one line every `every` steps of k while this one is multiplied.
 * A burst of prefetches just before the multiply gave little with long rows (Qwen3-0.6B's 1024: +4 %), as if
 * most were dropped while the first still missed; one line every few steps gave 10 % more on its F16 prompts,
 * where decoding the next rows had waited on memory for 14 % of the time. */
typedef struct stream_ahead {
    const unsigned char *at, *end;
    int64_t every, countdown;
} stream_ahead;

static inline __attribute__((always_inline)) void stream_step(stream_ahead *s)
{
    if (--s->countdown == 0) {
        s->countdown = s->every;
        if (s->at < s->end) {
            __builtin_prefetch(s->at);
            s->at += 64;
        }
    }
}

/* NAME: one tile, NT (a constant where inlined) padded tokens of xt against the panel, the first nt stored.
 * The pragmas keep acc[] in registers: GCC does not unroll loops of more than 16 by itself, and then keeps the
 * accumulators in memory (seen in the object code; prompts were then no faster than through the dot kernels). */
#define DEFINE_TILE(NAME, ATTR, STEP)                                                                        \
    ATTR static inline __attribute__((always_inline)) void NAME(const float *panel, const float *xt,          \
                                                                int64_t words, const int NT, int nt, float *y, \
                                                                int64_t ldo, __mmask16 rows, stream_ahead *sa) \
    {                                                                                                        \
        __m512 acc[TILE];                                                                                    \
        stream_ahead s = *sa; /* in registers: through sa, every step stored its countdown */                \
        _Pragma("GCC unroll 24") for (int t = 0; t < NT; t++) acc[t] = _mm512_setzero_ps();                  \
        for (int64_t k = 0; k < words; k++) {                                                                \
            const __m512 w = _mm512_loadu_ps(panel + k * 16);                                                \
            _Pragma("GCC unroll 24") for (int t = 0; t < NT; t++) acc[t] = STEP(acc[t], w, &xt[k * NT + t]); \
            stream_step(&s);                                                                                 \
        }                                                                                                    \
        *sa = s;                                                                                             \
        _Pragma("GCC unroll 24") for (int t = 0; t < NT; t++) if (t < nt)                                    \
            _mm512_mask_storeu_ps(y + t * ldo, rows, acc[t]);                                                \
    }
DEFINE_TILE(tile_f32, X86_AVX512, f32_step)

typedef void (*tile_fn)(const float *, const float *, int64_t, int, float *, int64_t, __mmask16, stream_ahead *);

#define TILE_FN(KIND, ATTR, NT)                                                                             \
    ATTR static void KIND##_##NT(const float *panel, const float *xt, int64_t words, int nt, float *y,       \
                                 int64_t ldo, __mmask16 rows, stream_ahead *sa)                              \
    {                                                                                                        \
        KIND(panel, xt, words, NT, nt, y, ldo, rows, sa);                                                    \
    }
#define TILE_FNS(KIND, ATTR)                                                                                 \
    TILE_FN(KIND, ATTR, 4) TILE_FN(KIND, ATTR, 8) TILE_FN(KIND, ATTR, 12) TILE_FN(KIND, ATTR, 16)             \
    TILE_FN(KIND, ATTR, 20) TILE_FN(KIND, ATTR, 24)
TILE_FNS(tile_f32, X86_AVX512)

/* By padded tile size in quads of tokens. */
static const tile_fn by_quads[TILE / PAD + 1] = { NULL,       tile_f32_4,  tile_f32_8, tile_f32_12,
                                                 tile_f32_16, tile_f32_20, tile_f32_24 };
#endif

void cpu_gemm_panel(const float *panel, int nr, const float *xp, int T, int64_t words, float *y, int64_t ldo,
                    const void *ahead, size_t ahead_bytes)
{
#if X86
    const __mmask16 rows = (__mmask16)((1u << nr) - 1);
    /* the lines spread evenly over every step of k of every tile */
    const int64_t steps = (int64_t)((T + TILE - 1) / TILE) * words, lines = (int64_t)(ahead_bytes + 63) / 64;
    const int64_t every = lines > 0 && steps > lines ? steps / lines : 1;
    stream_ahead sa = { ahead, ahead ? (const unsigned char *)ahead + ahead_bytes : NULL, every, every };
    for (int t0 = 0; t0 < T; t0 += TILE) {
        const int nt = tile_tokens(T, t0), np = padded(nt);
        by_quads[np / PAD](panel, xp, words, nt, y + t0 * ldo, ldo, rows, &sa);
        xp += (size_t)np * (size_t)words;
    }
#else
    (void)panel, (void)nr, (void)xp, (void)T, (void)words, (void)y, (void)ldo, (void)ahead,
        (void)ahead_bytes;
#endif
}
