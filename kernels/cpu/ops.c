/*
 * Element-wise and per-row ops of the CPU backend: RMSNorm, gated
 * activations (SwiGLU, GeGLU), scaling, soft-capping, residual add, row
 * statistics (the rotary embedding: rope.c). Sums of squares add f32 squares in
 * double, in order, as ggml's rms_norm does (ggml-cpu/ops.cpp: each
 * x * x rounded to f32, then summed in ggml_float): with the squares exact
 * in double, one of gemma3's q heads came out an ulp from llama.cpp's.
 */
#include "x86_target.h"
#include "cpu.h"
#include "row_stats.h"
#include "act_oai.h"
#include "act_xielu.h"

#include "quant.h"

#include <math.h>
#if defined(__x86_64__)
#include <immintrin.h>
#endif
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* Rows a thread normalizes together. Each row's sum of squares is one chain of double additions in element order
 * (ggml's), so a lone chain waits on every add's latency; interleaving rows' chains keeps the adder busy, and each
 * row's result is bit for bit its own chain's. SmolLM2 pp64: the norm was 2.4 % of the time with one chain, ~1 %
 * with four rows' chains in scalar code (GCC kept them in memory across iterations). Eight rows in two vectors'
 * lanes keep the AVX2 sums at their instruction rate (sixteen were no faster), and 8 rows of a 576-wide model
 * (18 KiB) are still in L1 when they are scaled. */
enum { NORM_ROWS = 8 };

/* Element-wise ops over fewer values than this stay on the calling thread: a decode step's rows (a few thousand)
 * cost less than waking the team. A 64-token prompt's residual adds (SmolLM2: 36 864 values) ran on one thread
 * at 65 536 while the other waited: 0.8 % of its time, and as much again in the other's wait. */
enum { ELEMENTWISE_PARALLEL_MIN = 16384 };

#if defined(__x86_64__)
/* The sums of squares of 4 * chains rows (chains <= 4; row r at x + r n): four rows a vector of doubles, one lane a
 * row, four values of each transposed into place at a time. Every float squared in double is exact, so each lane
 * adds the same terms in the same order as the scalar chain. */
X86_AVX2 static void sum_squares_avx2(const float *x, int chains, int n, double *ss)
{
    __m256d acc[4] = { _mm256_setzero_pd(), _mm256_setzero_pd(), _mm256_setzero_pd(), _mm256_setzero_pd() };
    int i = 0;
    for (; i + 4 <= n; i += 4)
        _Pragma("GCC unroll 4") for (int c = 0; c < 4; c++) if (c < chains)
        {
            const float *b = x + (size_t)(4 * c) * (size_t)n + i;
            const __m128 r0 = _mm_loadu_ps(b), r1 = _mm_loadu_ps(b + n), r2 = _mm_loadu_ps(b + 2 * (size_t)n),
                         r3 = _mm_loadu_ps(b + 3 * (size_t)n);
            const __m128 t0 = _mm_unpacklo_ps(r0, r1), t1 = _mm_unpackhi_ps(r0, r1); /* a0 b0 a1 b1, a2 b2 a3 b3 */
            const __m128 t2 = _mm_unpacklo_ps(r2, r3), t3 = _mm_unpackhi_ps(r2, r3);
            const __m128 column[4] = { _mm_movelh_ps(t0, t2), _mm_movehl_ps(t2, t0), _mm_movelh_ps(t1, t3),
                                       _mm_movehl_ps(t3, t1) }; /* value i + k of the four rows */
            for (int k = 0; k < 4; k++) {
                acc[c] = _mm256_add_pd(acc[c], _mm256_cvtps_pd(_mm_mul_ps(column[k], column[k])));
            }
        }
    for (int c = 0; c < chains; c++)
        _mm256_storeu_pd(ss + 4 * c, acc[c]);
    for (int r = 0; r < 4 * chains; r++)
        for (int j = i; j < n; j++)
            ss[r] += (double)(x[(size_t)r * n + j] * x[(size_t)r * n + j]);
}

/* o[i] = x[i] * scale * g[i], in that order: 8 lanes at a time (the scalar loop is left to GCC's SSE2) */
X86_AVX2 static void scale_row_avx2(const float *x, float scale, const float *g, int n, float *o)
{
    const __m256 vs = _mm256_set1_ps(scale);
    int i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(o + i, _mm256_mul_ps(_mm256_mul_ps(_mm256_loadu_ps(x + i), vs), _mm256_loadu_ps(g + i)));
    for (; i < n; i++)
        o[i] = x[i] * scale * g[i];
}
#endif

/* o = x * scale: the norm without gains (ggml_rms_norm's own product) */
static void scale_row_plain(const float *x, float scale, int n, float *o)
{
    for (int i = 0; i < n; i++)
        o[i] = x[i] * scale;
}

static void scale_row(const float *x, float scale, const float *g, int n, float *o, bool avx2)
{
    if (!g) {
        scale_row_plain(x, scale, n, o);
        return;
    }
#if defined(__x86_64__)
    if (avx2) {
        scale_row_avx2(x, scale, g, n, o);
        return;
    }
#else
    (void)avx2;
#endif
    for (int i = 0; i < n; i++)
        o[i] = x[i] * scale * g[i];
}

/* ss[t] = the sum of squares of row t < nt (at x + t n), each a chain of double additions in element order. */
static void sum_squares(const float *x, int nt, int n, double *ss, bool avx2)
{
    int t = 0;
#if defined(__x86_64__)
    if (avx2 && nt >= 4) {
        t = nt / 4 * 4;
        sum_squares_avx2(x, t / 4, n, ss);
    }
#else
    (void)avx2;
#endif
    for (; t < nt; t++) {
        const float *xr = x + (size_t)t * n;
        ss[t] = 0;
        for (int i = 0; i < n; i++)
            ss[t] += (double)(xr[i] * xr[i]);
    }
}

kern_status cpu_rmsnorm(kern_backend *b, const kern_weight *w, const float *x, int T, int n, float eps, float *out)
{
    const float *g = NULL;
    float *buf = NULL;
    /* gains of one row, or of m rows that the rows take in turn (Mamba-2's per group) */
    const int64_t m = w && n > 0 && w->t->n_elements % (uint64_t)n == 0 ? (int64_t)(w->t->n_elements / (uint64_t)n) : 1;
    kern_status s = w ? cpu_vector(w, (int64_t)n * m, &g, &buf) : KERN_OK;
    if (s)
        return s;
    const int groups = (T + NORM_ROWS - 1) / NORM_ROWS;
    const bool avx2 = cpu_have_avx2();
#pragma omp parallel for num_threads(cpu_threads(b)) if (T > 1)
    for (int grp = 0; grp < groups; grp++) {
        const int t0 = grp * NORM_ROWS, nt = T - t0 < NORM_ROWS ? T - t0 : NORM_ROWS;
        double ss[NORM_ROWS];
        sum_squares(x + (size_t)t0 * n, nt, n, ss, avx2);
        for (int t = 0; t < nt; t++) {
            const float *xr = x + (size_t)(t0 + t) * n;
            float *o = out + (size_t)(t0 + t) * n;
            scale_row(xr, 1.0f / sqrtf((float)(ss[t] / n) + eps), g ? g + (size_t)((t0 + t) % m) * n : NULL, n, o, avx2);
        }
    }
    free(buf);
    return KERN_OK;
}

kern_status cpu_add_bias(kern_backend *b, const kern_weight *bias, int T, int n, float *x)
{
    const float *bv = NULL;
    float *buf = NULL;
    kern_status s = cpu_vector(bias, n, &bv, &buf);
    if (s)
        return s;
#pragma omp parallel for num_threads(cpu_threads(b)) if (T > 1)
    for (int t = 0; t < T; t++) {
        float *r = x + (size_t)t * n;
        for (int i = 0; i < n; i++)
            r[i] += bv[i];
    }
    free(buf);
    return KERN_OK;
}

/* ggml_norm's order (ggml-cpu ops.cpp, norm_f32): the sum in double, the mean rounded to float, each value less the
 * mean in float, the squares' sum in double, the variance in float; then the gains. */
kern_status cpu_layernorm(kern_backend *b, const kern_weight *w, const kern_weight *bias, const float *x, int T, int n,
                          float eps, float *out)
{
    const float *g = NULL, *bv = NULL;
    float *buf = NULL, *bias_buf = NULL;
    const int64_t m = w && n > 0 && w->t->n_elements % (uint64_t)n == 0 ? (int64_t)(w->t->n_elements / (uint64_t)n) : 1;
    kern_status s = w ? cpu_vector(w, (int64_t)n * m, &g, &buf) : KERN_OK;
    if (!s && bias)
        s = cpu_vector(bias, n, &bv, &bias_buf);
    if (s) {
        free(buf);
        return s;
    }
    const bool avx2 = cpu_have_avx2();
#pragma omp parallel for num_threads(cpu_threads(b)) if (T > 1)
    for (int t = 0; t < T; t++) {
        const float *xr = x + (size_t)t * n;
        float *o = out + (size_t)t * n;
        double sum = 0.0;
        for (int i = 0; i < n; i++)
            sum += (double)xr[i];
        const float mean = (float)(sum / n);
        double sum2 = 0.0;
        for (int i = 0; i < n; i++) {
            const float v = xr[i] - mean;
            o[i] = v;
            sum2 += (double)(v * v);
        }
        const float variance = (float)(sum2 / n);
        scale_row(o, 1.0f / sqrtf(variance + eps), g ? g + (size_t)(t % m) * n : NULL, n, o, avx2);
        for (int i = 0; bv && i < n; i++) /* ggml_add of the bias after the gains' ggml_mul */
            o[i] += bv[i];
    }
    free(buf);
    free(bias_buf);
    return KERN_OK;
}

/* GELU as llama.cpp computes it on the CPU (ggml-cpu/vec.h, ggml_vec_geglu_f32 with GGML_GELU_FP16):
 * the tanh approximation 0.5 x (1 + tanh(sqrt(2/pi) x (1 + 0.044715 x^2))) evaluated in f32 at x
 * rounded to f16 and rounded to f16 again (a 64K-entry table), 0 below -10 and x above 10. The
 * rounding is llama.cpp's definition of the op, not a shortcut: gemma's residual stream carries a
 * few positions with activations in the thousands, where it moves hidden states by percents (the
 * golden long0 prompt), so a reference engine that is to agree with llama.cpp must round the same. */
static float gelu_table[1 << 16];

/* ggml_gelu_f32 as GCC compiles it into llama.cpp's table (ggml-cpu.c, C with FMA contraction): 1 + a x x is
 * one fused multiply-add of a x and x, the rest rounded step by step. Unfused, 191 of layer 0's 512 x 2048 GeGLU
 * outputs of gemma-3-270m's 512-token prompt were an ulp off llama.cpp's dump, and its 16th layer a Q8 rounding
 * away (found with the golden long0 prompt). */
static float gelu_tanh_f32(float x)
{
    const float sqrt_2_over_pi = 0.79788456080286535588f, coef_a = 0.044715f;
    return 0.5f * x * (1.0f + tanhf(sqrt_2_over_pi * x * fmaf(coef_a * x, x, 1.0f)));
}

static void gelu_table_fill(void)
{
    for (uint32_t i = 0; i < 1u << 16; i++)
        gelu_table[i] = quant_f16_to_f32(quant_f32_to_f16(gelu_tanh_f32(quant_f16_to_f32((uint16_t)i))));
}

static pthread_once_t gelu_table_once = PTHREAD_ONCE_INIT;

/* The table must be filled (gelu_table_once) before this runs. */
static inline float gelu_lookup(float x)
{
    if (x <= -10.0f)
        return 0.0f;
    if (x >= 10.0f)
        return x;
    return gelu_table[quant_f32_to_f16(x)];
}

float kern_gelu_ggml(float x)
{
    pthread_once(&gelu_table_once, gelu_table_fill);
    return gelu_lookup(x);
}

#if defined(__x86_64__)
/* Eight at a time where all eight lie inside (-10, 10): F16C's round-to-nearest-even is quant_f32_to_f16's
 * rounding for every finite value in that range, and the table is read by a gather. Other groups (NaN, the
 * ends) take the scalar lookup. The scalar conversion was a third of gemma's GeGLU time in a prompt. */
X86_AVX2 static size_t gelu_tanh_mul_avx2(const float *gate, const float *up, size_t n,
                                                                      float *out)
{
    const __m256 lo = _mm256_set1_ps(-10.0f), hi = _mm256_set1_ps(10.0f);
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 x = _mm256_loadu_ps(gate + i);
        const __m256 inside = _mm256_and_ps(_mm256_cmp_ps(x, lo, _CMP_GT_OQ), _mm256_cmp_ps(x, hi, _CMP_LT_OQ));
        if (_mm256_movemask_ps(inside) != 0xff) {
            for (size_t j = i; j < i + 8; j++)
                out[j] = up ? gelu_lookup(gate[j]) * up[j] : gelu_lookup(gate[j]);
            continue;
        }
        const __m256i h = _mm256_cvtepu16_epi32(_mm256_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
        const __m256 g = _mm256_i32gather_ps(gelu_table, h, 4);
        _mm256_storeu_ps(out + i, up ? _mm256_mul_ps(g, _mm256_loadu_ps(up + i)) : g);
    }
    return i;
}
#endif

/* GELU(gate) * up, or GELU(gate) alone where up is NULL (ggml_gelu: an ungated block) */
static void gelu_tanh_mul(const float *gate, const float *up, size_t n, float *out)
{
    size_t i = 0;
#if defined(__x86_64__)
    if (cpu_have_avx2())
        i = gelu_tanh_mul_avx2(gate, up, n, out);
#endif
    for (; i < n; i++)
        out[i] = up ? gelu_lookup(gate[i]) * up[i] : gelu_lookup(gate[i]);
}

kern_status cpu_glu(kern_backend *b, kern_act act, const float *gate, const float *up, size_t n, size_t row,
                    float *out)
{
    if (act != KERN_ACT_SILU && act != KERN_ACT_GELU_TANH && act != KERN_ACT_SWIGLU_OAI && act != KERN_ACT_SIGMOID &&
        act != KERN_ACT_NONE && act != KERN_ACT_RELU && act != KERN_ACT_SOFTPLUS)
        return KERN_E_UNSUPPORTED;
    if (!up && !kern_act_alone(act))
        return KERN_E_UNSUPPORTED;
    if (row == 0 || n % row)
        return KERN_E_SHAPE;
    if (act == KERN_ACT_SOFTPLUS) { /* ggml_softplus (x above 20 is x; else logf(1 + expf(x))) then ggml_mul; exact
                                     * numerics take log1pf, which keeps a very negative x's e^x rather than 0 */
        const bool ggml = cpu_numerics(b) == KERN_NUMERICS_GGML;
#pragma omp parallel for num_threads(cpu_threads(b)) if (n >= ELEMENTWISE_PARALLEL_MIN)
        for (size_t i = 0; i < n; i++) {
            const float x = gate[i];
            out[i] = up[i] * (x > 20.0f ? x : ggml ? logf(1.0f + expf(x)) : log1pf(expf(x)));
        }
        return KERN_OK;
    }
    if (act == KERN_ACT_RELU) { /* ggml_relu's x > 0 ? x : 0, then the product, in both numerics */
#pragma omp parallel for num_threads(cpu_threads(b)) if (n >= ELEMENTWISE_PARALLEL_MIN)
        for (size_t i = 0; i < n; i++)
            out[i] = (gate[i] > 0.0f ? gate[i] : 0.0f) * (up ? up[i] : 1.0f);
        return KERN_OK;
    }
    if (act == KERN_ACT_SIGMOID || act == KERN_ACT_NONE) { /* ggml_sigmoid then ggml_mul, or ggml_mul: both numerics */
#pragma omp parallel for num_threads(cpu_threads(b)) if (n >= ELEMENTWISE_PARALLEL_MIN)
        for (size_t i = 0; i < n; i++)
            out[i] = up[i] * (act == KERN_ACT_NONE ? gate[i] : 1.0f / (1.0f + expf(-gate[i])));
        return KERN_OK;
    }
    if (act == KERN_ACT_SWIGLU_OAI) { /* ggml's scalar loop, in both numerics */
#pragma omp parallel for num_threads(cpu_threads(b)) if (n >= ELEMENTWISE_PARALLEL_MIN)
        for (size_t i = 0; i < n; i++)
            out[i] = act_oai(gate[i], up[i]);
        return KERN_OK;
    }
    if (act == KERN_ACT_SILU && cpu_numerics(b) == KERN_NUMERICS_GGML) {
        /* row by row, as llama.cpp's vector loop and its scalar tail meet each row */
        const int64_t rows = (int64_t)(n / row);
#pragma omp parallel for num_threads(cpu_threads(b)) if (n >= ELEMENTWISE_PARALLEL_MIN)
        for (int64_t r = 0; r < rows; r++)
            cpu_silu_mul_ggml(gate + r * row, up + r * row, row, out + r * row);
        return KERN_OK;
    }
    if (act == KERN_ACT_GELU_TANH)
        pthread_once(&gelu_table_once, gelu_table_fill); /* once here, not per value */
    /* in pieces of 4096 values: a prompt's rows spread over the threads, a decode step's one row stays here */
    enum { PIECE = 4096 };
    const int64_t pieces = (int64_t)((n + PIECE - 1) / PIECE);
#pragma omp parallel for num_threads(cpu_threads(b)) if (n >= ELEMENTWISE_PARALLEL_MIN)
    for (int64_t p = 0; p < pieces; p++) {
        const size_t i0 = (size_t)p * PIECE, len = n - i0 < PIECE ? n - i0 : PIECE;
        if (act == KERN_ACT_SILU)
            cpu_silu_mul(gate + i0, up + i0, len, out + i0);
        else
            gelu_tanh_mul(gate + i0, up ? up + i0 : NULL, len, out + i0);
    }
    return KERN_OK;
}

kern_status cpu_scale(kern_backend *b, float *x, size_t n, float s)
{
#pragma omp parallel for num_threads(cpu_threads(b)) if (n >= ELEMENTWISE_PARALLEL_MIN)
    for (size_t i = 0; i < n; i++)
        x[i] *= s;
    return KERN_OK;
}

/* ggml computes it as scale(1/cap), tanh, scale(cap): the same three roundings here. */
kern_status cpu_softcap(kern_backend *b, float *x, size_t n, float cap)
{
    if (!(cap > 0.0f))
        return KERN_E_SHAPE;
    const float inv = 1.0f / cap;
#pragma omp parallel for num_threads(cpu_threads(b)) if (n >= ELEMENTWISE_PARALLEL_MIN)
    for (size_t i = 0; i < n; i++)
        x[i] = tanhf(x[i] * inv) * cap;
    return KERN_OK;
}

/* ggml_clamp's MAX(MIN(x, hi), lo) with its comparisons: a NaN fails x < hi and becomes hi. */
kern_status cpu_clamp(kern_backend *b, float *x, size_t n, float lo, float hi)
{
    if (!(lo <= hi))
        return KERN_E_SHAPE;
#pragma omp parallel for num_threads(cpu_threads(b)) if (n >= ELEMENTWISE_PARALLEL_MIN)
    for (size_t i = 0; i < n; i++) {
        const float v = x[i] < hi ? x[i] : hi;
        x[i] = v > lo ? v : lo;
    }
    return KERN_OK;
}

/* ggml_xielu's function in f32 (act_xielu.h) */
kern_status cpu_xielu(kern_backend *b, const float *x, size_t n, const kern_xielu *xp, float *out)
{
    const kern_xielu q = *xp;
#pragma omp parallel for num_threads(cpu_threads(b)) if (n >= ELEMENTWISE_PARALLEL_MIN)
    for (size_t i = 0; i < n; i++)
        out[i] = act_xielu(x[i], q.alpha_n, q.alpha_p, q.beta, q.eps);
    return KERN_OK;
}

kern_status cpu_add(kern_backend *b, float *x, const float *y, size_t n)
{
#pragma omp parallel for num_threads(cpu_threads(b)) if (n >= ELEMENTWISE_PARALLEL_MIN)
    for (size_t i = 0; i < n; i++)
        x[i] += y[i];
    return KERN_OK;
}

kern_status cpu_store_rows(kern_backend *b, float *dst, const float *src, int T, int n, int pos0)
{
    (void)b;
    memmove(dst + (size_t)pos0 * n, src, (size_t)T * n * sizeof(float));
    return KERN_OK;
}

kern_status cpu_copy_rows(kern_backend *b, float *dst, size_t ld_dst, const float *src, size_t ld_src, int rows, int n)
{
    (void)b;
    if (rows < 0 || n < 0)
        return KERN_E_SHAPE;
    for (int r = 0; r < rows; r++)
        memcpy(dst + (size_t)r * ld_dst, src + (size_t)r * ld_src, (size_t)n * sizeof(float));
    return KERN_OK;
}

void kern_stats_row(const float *r, int n, kern_row_stats *out)
{
    row_stats_acc a = row_stats_start();
    for (int i = 0; i < n; i++)
        row_stats_add(&a, r[i]);
    *out = row_stats_finish(&a);
}

kern_status cpu_row_stats(kern_backend *b, const float *x, int T, int n, kern_row_stats *out)
{
    (void)b;
    for (int t = 0; t < T; t++)
        kern_stats_row(x + (size_t)t * n, n, &out[t]);
    return KERN_OK;
}

kern_status cpu_argmax(kern_backend *b, const float *x, int n, int32_t *out)
{
    (void)b;
    int32_t best = 0;
    for (int i = 1; i < n; i++)
        if (x[i] > x[best] || (isnan(x[best]) && !isnan(x[i])))
            best = i;
    *out = best;
    return KERN_OK;
}

/* Keeps a sorted list of the best k seen; most values fall below the k-th and cost one compare. */
kern_status cpu_top_k(kern_backend *b, const float *x, int n, int k, int32_t *ids, float *vals)
{
    (void)b;
    if (k < 1 || k > KERN_TOP_K_MAX)
        return KERN_E_SHAPE;
    int have = 0;
    for (int i = 0; i < n; i++) {
        const float v = x[i];
        if (isnan(v) || (have == k && !(v > vals[k - 1])))
            continue;  /* equal to the k-th: the earlier index already holds the place */
        int at = have < k ? have++ : k - 1;
        while (at > 0 && v > vals[at - 1]) {
            vals[at] = vals[at - 1];
            ids[at] = ids[at - 1];
            at--;
        }
        vals[at] = v;
        ids[at] = i;
    }
    for (int i = have; i < k; i++) {
        ids[i] = -1;
        vals[i] = NAN;
    }
    return KERN_OK;
}
