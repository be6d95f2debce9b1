/*
 * Element-wise and per-row ops of the CPU backend: RMSNorm, rotary
 * embedding, gated activations (SwiGLU, GeGLU), scaling, soft-capping,
 * residual add, row statistics. Sums of squares add f32 squares in
 * double, in order, as ggml's rms_norm does (ggml-cpu/ops.cpp: each
 * x * x rounded to f32, then summed in ggml_float): with the squares exact
 * in double, one of gemma3's q heads came out an ulp from llama.cpp's.
 */
#include "x86_target.h"
#include "cpu.h"
#include "row_stats.h"
#include "rope_yarn.h"
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

static bool same_angles(const cpu_rope_angles *a, int pos0, int T, const kern_rope *r)
{
    const size_t pairs = (size_t)T * (size_t)(r->n_rot / 2);
    return a->cs && a->pos0 == pos0 && a->T == T && a->n_rot == r->n_rot && a->base == r->base &&
           a->freq_scale == r->freq_scale && a->ext_factor == r->ext_factor && a->attn_factor == r->attn_factor &&
           a->corr_lo == r->corr_lo && a->corr_hi == r->corr_hi && a->factors == (r->freq_factors != NULL) &&
           (!a->factors || !memcmp(a->cs + 2 * pairs, r->freq_factors, (size_t)(r->n_rot / 2) * sizeof(float)));
}

/* The angles' set for this call: a kept one that matches (*fresh false), or the older set, grown to hold them
 * and marked for filling (*fresh true); NULL when it cannot grow. */
static cpu_rope_angles *angles_for(cpu_ctx *c, int pos0, int T, const kern_rope *r, bool *fresh)
{
    for (int i = 0; i < 2; i++)
        if (same_angles(&c->angles[i], pos0, T, r)) {
            *fresh = false;
            return &c->angles[i];
        }
    cpu_rope_angles *a = &c->angles[c->angles_next];
    c->angles_next ^= 1;
    const size_t need = (size_t)T * (size_t)(r->n_rot / 2) * 2 + (size_t)(r->n_rot / 2);
    if (need > a->cap) {
        free(a->cs);
        a->cap = 0;
        if (!(a->cs = malloc(need * sizeof(float))))
            return NULL;
        a->cap = need;
    }
    /* filled below; until then no call may match it */
    *a = (cpu_rope_angles){ .cs = a->cs, .cap = a->cap, .pos0 = -1 };
    *fresh = true;
    return a;
}

/* Rotates one head's pairs by the angles' cosines and sines cs = [c0, s0, c1, s1, ...]:
 * (v[a], v[b]) <- (v[a] c - v[b] s, v[a] s + v[b] c), a = 2i, b = 2i + 1 for NORM (ggml's rope mode 0) and
 * a = i, b = i + half for NEOX (mode 2). The vector paths below round each product and the sum as this does, so
 * every path gives the same bits. */
static void rope_pairs_scalar(float *v, const float *cs, int i, int half, bool neox)
{
    for (; i < half; i++) {
        const float c = cs[2 * i], sn = cs[2 * i + 1];
        const int ia = neox ? i : 2 * i, ib = neox ? i + half : 2 * i + 1;
        const float x0 = v[ia], x1 = v[ib];
        v[ia] = x0 * c - x1 * sn;
        v[ib] = x0 * sn + x1 * c;
    }
}

#if defined(__x86_64__)
/* The cosines and sines of 8 pairs' angles (cs = [c0, s0, c1, s1, ...]) in two vectors, in order: the shuffle
 * leaves their 64-bit units 0, 2, 1, 3 */
X86_AVX2 static inline void neox_angles(const float *cs, __m256 *c, __m256 *sn)
{
    const __m256 p0 = _mm256_loadu_ps(cs), p1 = _mm256_loadu_ps(cs + 8);
    *c = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(_mm256_shuffle_ps(p0, p1, 0x88)), 0xd8));
    *sn = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(_mm256_shuffle_ps(p0, p1, 0xdd)), 0xd8));
}

/* The pairs the AVX2 path rotates, from the first; the caller finishes the rest. Scalar, with the heads in the
 * inner loop (a stride of head_dim), the rotation was 1.4 % of a SmolLM2 pp64. */
X86_AVX2 static int rope_pairs_avx2(float *v, const float *cs, int half, bool neox)
{
    int i = 0;
    if (!neox) {
        /* 4 pairs a vector: lanes (2j, 2j + 1) hold (x0, x1); addsub subtracts in even lanes, adds in odd */
        for (; i + 4 <= half; i += 4) {
            const __m256 p = _mm256_loadu_ps(cs + 2 * i), x = _mm256_loadu_ps(v + 2 * i);
            const __m256 swapped = _mm256_permute_ps(x, 0xb1); /* (x1, x0) in each pair */
            _mm256_storeu_ps(v + 2 * i, _mm256_addsub_ps(_mm256_mul_ps(x, _mm256_moveldup_ps(p)),
                                                         _mm256_mul_ps(swapped, _mm256_movehdup_ps(p))));
        }
        return i;
    }
    for (; i + 8 <= half; i += 8) {
        __m256 c, sn;
        neox_angles(cs + 2 * i, &c, &sn);
        const __m256 x0 = _mm256_loadu_ps(v + i), x1 = _mm256_loadu_ps(v + half + i);
        _mm256_storeu_ps(v + i, _mm256_sub_ps(_mm256_mul_ps(x0, c), _mm256_mul_ps(x1, sn)));
        _mm256_storeu_ps(v + half + i, _mm256_add_ps(_mm256_mul_ps(x0, sn), _mm256_mul_ps(x1, c)));
    }
    return i;
}
#endif

/* --numerics ggml: the rotation as llama.cpp's build computes it (ggml-cpu/ops.cpp rotate_pairs, x0 c - x1 s and
 * x0 s + x1 c, which GCC fuses): the second product rounded, the first fused with the sum. Bit for bit the
 * vendored build's q and k on SmolLM2 (NORM) and gemma-3 (NEOX), natively and AVX2-only (op dumps). */
static void rope_pairs_ggml_scalar(float *v, const float *cs, int i, int half, bool neox)
{
    for (; i < half; i++) {
        const float c = cs[2 * i], sn = cs[2 * i + 1];
        const int ia = neox ? i : 2 * i, ib = neox ? i + half : 2 * i + 1;
        const float x0 = v[ia], x1 = v[ib];
        v[ia] = fmaf(x0, c, -(x1 * sn));
        v[ib] = fmaf(x0, sn, x1 * c);
    }
}

#if defined(__x86_64__)
X86_AVX2 static int rope_pairs_ggml_avx2(float *v, const float *cs, int half, bool neox)
{
    int i = 0;
    if (!neox) {
        /* pairs (x0, x1) in lanes (2j, 2j + 1): fmaddsub subtracts x1 s in even lanes, adds x1 c in odd ones */
        for (; i + 4 <= half; i += 4) {
            const __m256 p = _mm256_loadu_ps(cs + 2 * i), x = _mm256_loadu_ps(v + 2 * i);
            const __m256 x1_sc = _mm256_mul_ps(_mm256_movehdup_ps(x), _mm256_permute_ps(p, 0xb1));
            _mm256_storeu_ps(v + 2 * i, _mm256_fmaddsub_ps(_mm256_moveldup_ps(x), p, x1_sc));
        }
        return i;
    }
    for (; i + 8 <= half; i += 8) {
        __m256 c, sn;
        neox_angles(cs + 2 * i, &c, &sn);
        const __m256 x0 = _mm256_loadu_ps(v + i), x1 = _mm256_loadu_ps(v + half + i);
        _mm256_storeu_ps(v + i, _mm256_fmsub_ps(x0, c, _mm256_mul_ps(x1, sn)));
        _mm256_storeu_ps(v + half + i, _mm256_fmadd_ps(x0, sn, _mm256_mul_ps(x1, c)));
    }
    return i;
}
#endif

/* --numerics ggml: llama.cpp's angles for one position (ggml_rope_cache_init and rope_yarn): theta starts at the
 * position and is multiplied by powf(base, -2 / n_rot) from pair to pair, all in f32, each divided by its frequency
 * factor, interpolated (times freq_scale) and, with YaRN, blended back towards itself (GCC fuses the blend's first
 * product with its sum, as in the rotation below), then libm's cosf and sinf times the magnitude. Our exact angles
 * (each in double) differ from these in the last bit now and then. */
static void ggml_angles(float *ct, int pos, int half, const kern_rope *r)
{
    const float theta_scale = powf(r->base, -2.0f / (float)r->n_rot);
    const float mscale = r->ext_factor != 0.0f ? r->attn_factor * (1.0f + 0.1f * logf(1.0f / r->freq_scale))
                                               : r->attn_factor;
    float theta = (float)pos;
    for (int i = 0; i < half; i++) {
        const float extrap = r->freq_factors ? theta / r->freq_factors[i] : theta, interp = r->freq_scale * extrap;
        float t = interp;
        if (r->ext_factor != 0.0f) {
            const float mix = rope_yarn_ramp(r->corr_lo, r->corr_hi, i) * r->ext_factor;
            t = fmaf(interp, 1.0f - mix, extrap * mix);
        }
        ct[2 * i] = cosf(t) * mscale, ct[2 * i + 1] = sinf(t) * mscale;
        theta *= theta_scale;
    }
}

/* Our angles for one position: pos * base^(-2i / n_rot) (power[i]) / factor_i in double, interpolated and blended
 * as YaRN says (rope_yarn.h), its cosine and sine times the magnitude rounded once to float. */
static void exact_angles(float *ct, int pos, int half, const kern_rope *r, const double *power)
{
    const double mscale = rope_yarn_mscale(r->freq_scale, r->ext_factor, r->attn_factor);
    for (int i = 0; i < half; i++) {
        double theta = (double)pos * power[i];
        if (r->freq_factors)
            theta /= r->freq_factors[i];
        theta = rope_yarn_theta(theta, r->freq_scale, r->ext_factor, r->corr_lo, r->corr_hi, i);
        ct[2 * i] = (float)(cos(theta) * mscale), ct[2 * i + 1] = (float)(sin(theta) * mscale);
    }
}

/* One head's rotation in our form or llama.cpp's (ggml): the vector path's pairs, then the rest one at a time */
static void rope_pairs(float *v, const float *cs, int half, bool neox, bool avx2, bool ggml)
{
    int i = 0;
#if defined(__x86_64__)
    if (avx2)
        i = (ggml ? rope_pairs_ggml_avx2 : rope_pairs_avx2)(v, cs, half, neox);
#else
    (void)avx2;
#endif
    (ggml ? rope_pairs_ggml_scalar : rope_pairs_scalar)(v, cs, i, half, neox);
}

/* theta_i = pos * freq_scale * base^(-2i / n_rot) / factor_i, rotating the
 * pair (2i, 2i+1) for NORM and (i, i + n_rot/2) for NEOX (ggml's rope modes
 * 0 and 2); dimensions past n_rot pass through. */
kern_status cpu_rope(kern_backend *b, float *x, int T, int n_head, int head_dim, int pos0, const kern_rope *r)
{
    const int half = r->n_rot / 2;
    if (r->n_rot > head_dim || r->n_rot % 2)
        return KERN_E_SHAPE;
    if (half == 0 || T <= 0)
        return KERN_OK;
    bool fresh;
    cpu_rope_angles *a = angles_for(b->ctx, pos0, T, r, &fresh);
    const bool avx2 = cpu_have_avx2(), ggml = cpu_numerics(b) == KERN_NUMERICS_GGML, exact = fresh && !ggml;
    double *power = exact ? malloc((size_t)half * sizeof(double)) : NULL; /* base^(-2i / n_rot) */
    if (!a || (exact && !power)) {
        free(power);
        return KERN_E_NOMEM;
    }
    for (int i = 0; exact && i < half; i++)
        power[i] = pow(r->base, -2.0 * i / r->n_rot);
    float *cs = a->cs;
    /* New angles are computed by the thread that uses them: before the parallel loop, the sines and cosines of
     * a 64-token prompt were a few percent of its time on one thread while the others waited. */
#pragma omp parallel for num_threads(cpu_threads(b)) if (T > 1)
    for (int t = 0; t < T; t++) {
        float *ct = &cs[(size_t)t * half * 2];
        if (fresh && ggml)
            ggml_angles(ct, pos0 + t, half, r);
        else if (exact)
            exact_angles(ct, pos0 + t, half, r, power);
        for (int h = 0; h < n_head; h++)
            rope_pairs(x + ((size_t)t * n_head + h) * head_dim, ct, half, r->neox, avx2, ggml);
    }
    if (fresh) {
        if (r->freq_factors)
            memcpy(cs + (size_t)T * half * 2, r->freq_factors, (size_t)half * sizeof(float));
        *a = (cpu_rope_angles){ .cs = cs, .cap = a->cap, .pos0 = pos0, .T = T, .n_rot = r->n_rot, .base = r->base,
                                .freq_scale = r->freq_scale, .ext_factor = r->ext_factor,
                                .attn_factor = r->attn_factor, .corr_lo = r->corr_lo, .corr_hi = r->corr_hi,
                                .factors = r->freq_factors != NULL };
    }
    free(power);
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
        act != KERN_ACT_NONE && act != KERN_ACT_RELU)
        return KERN_E_UNSUPPORTED;
    if (!up && !kern_act_alone(act))
        return KERN_E_UNSUPPORTED;
    if (row == 0 || n % row)
        return KERN_E_SHAPE;
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
