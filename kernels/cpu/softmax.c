/*
 * Attention's softmax over one query's scores, vectorized without changing its results.
 *
 * The scalar loops called libm's expf once per score: in a 512-token prompt of a Qwen3-0.6B-shaped model the
 * softmax was 7 % of the time (perf), most of it there. Here e^x is computed in double precision, 8 or 4 lanes
 * at a time, and rounded once to float:
 *   x log2(e) = k + f, k = round(x log2(e)), |f| <= 1/2;  e^x = 2^k e^u with u = f ln 2, |u| <= 0.347,
 *   e^u by its Taylor series to u^10 / 10! (truncation below 0.347^11 / 11! ~ 2.2e-13 relative).
 * Relative error about 3e-13 before the final rounding, so the float is the correctly rounded e^x unless e^x
 * lies within 3e-13 of halfway between two floats. glibc's expf is within 0.502 ulp (it documents), which is
 * the correctly rounded value but for such near-halfway cases too: the two agree on all but a few in a
 * million arguments, and then by one ulp (test_kernels counts them over a sweep of floats). That matters
 * because --numerics ggml reproduces llama.cpp's rounding of activations through these probabilities.
 * kern_expf is the same arithmetic one value at a time (every step an IEEE double operation, the multiply-adds
 * fused), so the vector lanes, the rows' tails and machines without AVX2 all give the same float for the same
 * score.
 * Everything else keeps the scalar loops' arithmetic: scores scaled in f32, the max (order-free), x - max in
 * f32, the sum of the rounded floats in double (in lanes: a double sum of at most 2^20 floats in [0, 1] is off
 * the sequential one by far less than the f32 rounding of 1 / sum that follows), each probability times
 * that reciprocal.
 * Inputs are clamped to [-200, 100] first (kern_expf too): e^-200 is 0 and e^100 is +inf in float either way, and 2^k stays
 * a normal double. NaN stays NaN (max/min return their second operand when one is NaN, so x goes second);
 * -inf gives 0, as expf does.
 */
#include "x86_target.h"
#include "cpu.h"

#include <math.h>

/* Taylor coefficients 1 / n! for n = 10 down to 2 (1 / 1! and 1 / 0! are the two ones Horner's last steps add) */
static const double inv_factorial[] = { 1.0 / 3628800, 1.0 / 362880, 1.0 / 40320, 1.0 / 5040, 1.0 / 720,
                                        1.0 / 120,     1.0 / 24,     1.0 / 6,     1.0 / 2 };
#define LOG2E 1.4426950408889634074
#define LN2 0.69314718055994530942
#define EXP_LO (-200.0f)
#define EXP_HI 100.0f
#define N_COEFS (sizeof inv_factorial / sizeof inv_factorial[0])

float kern_expf(float x)
{
    if (isnan(x))
        return x;
    const float xc = x < EXP_LO ? EXP_LO : x > EXP_HI ? EXP_HI : x;
    const double z = (double)xc * LOG2E, k = nearbyint(z), u = (z - k) * LN2;
    double p = inv_factorial[0];
    for (size_t i = 1; i < N_COEFS; i++)
        p = fma(p, u, inv_factorial[i]);
    p = fma(fma(p, u, 1.0), u, 1.0);
    return (float)ldexp(p, (int)k);
}

#if defined(__x86_64__)
#include <immintrin.h>

/* e^u for |u| <= 0.35, 4 lanes */
X86_AVX2 static inline __m256d exp_small_pd4(__m256d u)
{
    __m256d p = _mm256_set1_pd(inv_factorial[0]);
    for (size_t i = 1; i < N_COEFS; i++)
        p = _mm256_fmadd_pd(p, u, _mm256_set1_pd(inv_factorial[i]));
    p = _mm256_fmadd_pd(p, u, _mm256_set1_pd(1.0));
    return _mm256_fmadd_pd(p, u, _mm256_set1_pd(1.0));
}

/* e^x for 4 floats, clamped, in double; 2^k built in the exponent field (k + 1023 within 1 .. 2046 here) */
X86_AVX2 static inline __m128 exp_ps4(__m128 x)
{
    const __m256d z = _mm256_mul_pd(_mm256_cvtps_pd(x), _mm256_set1_pd(LOG2E));
    const __m256d k = _mm256_round_pd(z, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    const __m256d p = exp_small_pd4(_mm256_mul_pd(_mm256_sub_pd(z, k), _mm256_set1_pd(LN2)));
    const __m256i ki = _mm256_cvtepi32_epi64(_mm256_cvtpd_epi32(k));
    const __m256d two_k = _mm256_castsi256_pd(_mm256_slli_epi64(_mm256_add_epi64(ki, _mm256_set1_epi64x(1023)), 52));
    /* NaN lanes: k's conversion gave garbage, p is NaN, the product NaN */
    return _mm256_cvtpd_ps(_mm256_mul_pd(p, two_k));
}

/* e^v for 8 floats, clamped to [EXP_LO, EXP_HI] first (v goes second, so a NaN stays NaN); the halves in e[0..2) */
X86_AVX2 static inline void exp_clamped8(__m256 v, __m128 e[2])
{
    v = _mm256_min_ps(_mm256_set1_ps(EXP_HI), _mm256_max_ps(_mm256_set1_ps(EXP_LO), v));
    e[0] = exp_ps4(_mm256_castps256_ps128(v));
    e[1] = exp_ps4(_mm256_extractf128_ps(v, 1));
}

/* dst[0..8) <- e^(src[j] - mx) (mx in every lane of m), their sum in double added to *acc's lanes */
X86_AVX2 static inline void exp8(const float *src, float *dst, __m256 m, __m256d *acc)
{
    __m128 e[2];
    exp_clamped8(_mm256_sub_ps(_mm256_loadu_ps(src), m), e);
    _mm_storeu_ps(dst, e[0]);
    _mm_storeu_ps(dst + 4, e[1]);
    *acc = _mm256_add_pd(*acc, _mm256_add_pd(_mm256_cvtps_pd(e[0]), _mm256_cvtps_pd(e[1])));
}

/* x[i] <- e^(x[i] - mx) for i < n; the sum of the new values in double, added to *sum */
X86_AVX2 static int exp_shifted_avx2(float *x, int n, float mx, double *sum)
{
    const __m256 m = _mm256_set1_ps(mx);
    __m256d acc = _mm256_setzero_pd();
    int i = 0;
    for (; i + 8 <= n; i += 8)
        exp8(x + i, x + i, m, &acc);
    if (i < n) {
        /* the tail through 8 lanes padded with -inf, whose e^x is 0 and adds nothing */
        float pad[8];
        for (int j = 0; j < 8; j++)
            pad[j] = i + j < n ? x[i + j] : -INFINITY;
        exp8(pad, pad, m, &acc);
        for (int j = 0; i < n; i++, j++)
            x[i] = pad[j];
    }
    double lanes[4];
    _mm256_storeu_pd(lanes, acc);
    *sum += (lanes[0] + lanes[1]) + (lanes[2] + lanes[3]);
    return i;
}

/* The same 16 floats at a time with AVX-512, 2^k applied by vscalefpd */
X86_AVX512 static inline __m256 exp_ps8(__m256 x)
{
    const __m512d z = _mm512_mul_pd(_mm512_cvtps_pd(x), _mm512_set1_pd(LOG2E));
    const __m512d k = _mm512_roundscale_pd(z, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    const __m512d u = _mm512_mul_pd(_mm512_sub_pd(z, k), _mm512_set1_pd(LN2));
    __m512d p = _mm512_set1_pd(inv_factorial[0]);
    for (size_t i = 1; i < N_COEFS; i++)
        p = _mm512_fmadd_pd(p, u, _mm512_set1_pd(inv_factorial[i]));
    p = _mm512_fmadd_pd(p, u, _mm512_set1_pd(1.0));
    p = _mm512_fmadd_pd(p, u, _mm512_set1_pd(1.0));
    return _mm512_cvtpd_ps(_mm512_scalef_pd(p, k));
}

X86_AVX512 static inline __m256 upper8(__m512 v)
{
    return _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1));
}

/* e^v for 16 floats, clamped to [EXP_LO, EXP_HI] first (v goes second, so a NaN stays NaN): the halves in e[0..2),
 * and all 16 as one vector */
X86_AVX512 static inline __m512 exp_clamped16(__m512 v, __m256 e[2])
{
    v = _mm512_min_ps(_mm512_set1_ps(EXP_HI), _mm512_max_ps(_mm512_set1_ps(EXP_LO), v));
    e[0] = exp_ps8(_mm512_castps512_ps256(v));
    e[1] = exp_ps8(upper8(v));
    return _mm512_castpd_ps(
        _mm512_insertf64x4(_mm512_castpd256_pd512(_mm256_castps_pd(e[0])), _mm256_castps_pd(e[1]), 1));
}

/* x[j] <- e^(x[j] - mx) for the lanes j < 16 of `lanes` (the others neither read nor written), their sum in double
 * added to *acc's lanes: the missing lanes are -inf, whose e^x is 0 and adds nothing */
X86_AVX512 static inline void exp16(float *x, __mmask16 lanes, __m512 m, __m512d *acc)
{
    __m256 e[2];
    const __m512 all = exp_clamped16(_mm512_sub_ps(_mm512_mask_loadu_ps(_mm512_set1_ps(-INFINITY), lanes, x), m), e);
    _mm512_mask_storeu_ps(x, lanes, all);
    *acc = _mm512_add_pd(*acc, _mm512_add_pd(_mm512_cvtps_pd(e[0]), _mm512_cvtps_pd(e[1])));
}

X86_AVX512 static int exp_shifted_avx512(float *x, int n, float mx, double *sum)
{
    const __m512 m = _mm512_set1_ps(mx);
    __m512d acc = _mm512_setzero_pd();
    int i = 0;
    for (; i + 16 <= n; i += 16)
        exp16(x + i, 0xffff, m, &acc);
    if (i < n)
        exp16(x + i, (__mmask16)((1u << (n - i)) - 1), m, &acc);
    *sum += _mm512_reduce_add_pd(acc);
    return n;
}

/* The softmax down 16 lanes of key-major scores (cpu_softmax_lanes): lane m's keys [lo[m], hi[m]). Each lane's max,
 * e^x and double sum as the scalar loop forms them for one query (the sum over its keys in order; keys outside
 * its span add +0, which changes no double sum). */
X86_AVX512 static void softmax_lanes16(float *s, int64_t ldm, int nj, const int *lo, const int *hi, float scale)
{
    const __m512i lov = _mm512_loadu_si512(lo), hiv = _mm512_loadu_si512(hi);
    const __mmask16 busy = _mm512_cmplt_epi32_mask(lov, hiv);
    const __m512 sv = _mm512_set1_ps(scale);
    __m512 mx = _mm512_set1_ps(-INFINITY);
    for (int j = 0; j < nj; j++) {
        const __m512i jv = _mm512_set1_epi32(j);
        const __mmask16 in = _mm512_cmple_epi32_mask(lov, jv) & _mm512_cmpgt_epi32_mask(hiv, jv);
        const __m512 x = _mm512_mul_ps(_mm512_loadu_ps(s + j * ldm), sv);
        _mm512_storeu_ps(s + j * ldm, x);
        mx = _mm512_mask_max_ps(mx, in, x, mx); /* a NaN x keeps mx, as the scalar comparison does */
    }
    mx = _mm512_mask_blend_ps(busy, _mm512_setzero_ps(), mx); /* lanes with no keys: no -inf - -inf below */
    __m512d sum0 = _mm512_setzero_pd(), sum1 = _mm512_setzero_pd();
    for (int j = 0; j < nj; j++) {
        const __m512i jv = _mm512_set1_epi32(j);
        const __mmask16 in = _mm512_cmple_epi32_mask(lov, jv) & _mm512_cmpgt_epi32_mask(hiv, jv);
        __m256 e[2];
        const __m512 v = _mm512_mask_sub_ps(_mm512_set1_ps(-INFINITY), in, _mm512_loadu_ps(s + j * ldm), mx);
        _mm512_storeu_ps(s + j * ldm, exp_clamped16(v, e));
        sum0 = _mm512_add_pd(sum0, _mm512_cvtps_pd(e[0]));
        sum1 = _mm512_add_pd(sum1, _mm512_cvtps_pd(e[1]));
    }
    const __m512d one = _mm512_set1_pd(1.0);
    const __m256 inv0 = _mm512_cvtpd_ps(_mm512_div_pd(one, _mm512_mask_blend_pd((__mmask8)busy, one, sum0)));
    const __m256 inv1 = _mm512_cvtpd_ps(_mm512_div_pd(one, _mm512_mask_blend_pd((__mmask8)(busy >> 8), one, sum1)));
    const __m512 inv = _mm512_castpd_ps(
        _mm512_insertf64x4(_mm512_castpd256_pd512(_mm256_castps_pd(inv0)), _mm256_castps_pd(inv1), 1));
    for (int j = 0; j < nj; j++)
        _mm512_storeu_ps(s + j * ldm, _mm512_mul_ps(_mm512_loadu_ps(s + j * ldm), inv));
}

/* The same for 8 lanes with AVX2 */
X86_AVX2 static void softmax_lanes8(float *s, int64_t ldm, int nj, const int *lo, const int *hi, float scale)
{
    const __m256i lov = _mm256_loadu_si256((const __m256i *)lo), hiv = _mm256_loadu_si256((const __m256i *)hi);
    const __m256 busy = _mm256_castsi256_ps(_mm256_cmpgt_epi32(hiv, lov));
    const __m256 sv = _mm256_set1_ps(scale), ninf = _mm256_set1_ps(-INFINITY);
    __m256 mx = ninf;
    for (int j = 0; j < nj; j++) {
        const __m256i jv = _mm256_set1_epi32(j);
        /* lo <= j < hi: not (lo > j), and hi > j */
        const __m256 in = _mm256_castsi256_ps(
            _mm256_andnot_si256(_mm256_cmpgt_epi32(lov, jv), _mm256_cmpgt_epi32(hiv, jv)));
        const __m256 x = _mm256_mul_ps(_mm256_loadu_ps(s + j * ldm), sv);
        _mm256_storeu_ps(s + j * ldm, x);
        mx = _mm256_blendv_ps(mx, _mm256_max_ps(x, mx), in); /* a NaN x keeps mx */
    }
    mx = _mm256_blendv_ps(_mm256_setzero_ps(), mx, busy);
    __m256d sum0 = _mm256_setzero_pd(), sum1 = _mm256_setzero_pd();
    for (int j = 0; j < nj; j++) {
        const __m256i jv = _mm256_set1_epi32(j);
        const __m256 in = _mm256_castsi256_ps(
            _mm256_andnot_si256(_mm256_cmpgt_epi32(lov, jv), _mm256_cmpgt_epi32(hiv, jv)));
        __m128 e[2];
        exp_clamped8(_mm256_blendv_ps(ninf, _mm256_sub_ps(_mm256_loadu_ps(s + j * ldm), mx), in), e);
        _mm_storeu_ps(s + j * ldm, e[0]);
        _mm_storeu_ps(s + j * ldm + 4, e[1]);
        sum0 = _mm256_add_pd(sum0, _mm256_cvtps_pd(e[0]));
        sum1 = _mm256_add_pd(sum1, _mm256_cvtps_pd(e[1]));
    }
    float busy_lanes[8], inv[8];
    double sums[8];
    _mm256_storeu_ps(busy_lanes, busy);
    _mm256_storeu_pd(sums, sum0);
    _mm256_storeu_pd(sums + 4, sum1);
    for (int l = 0; l < 8; l++)
        inv[l] = busy_lanes[l] != 0.0f ? (float)(1.0 / sums[l]) : 0.0f;
    const __m256 iv = _mm256_loadu_ps(inv);
    for (int j = 0; j < nj; j++)
        _mm256_storeu_ps(s + j * ldm, _mm256_mul_ps(_mm256_loadu_ps(s + j * ldm), iv));
}

/* x[i] *= s for i < n rounded down to 8; the largest result (NaN ignored, as the scalar comparison does) */
X86_AVX2 static int scale_max_avx2(float *x, int n, float s, float *mx)
{
    const __m256 sv = _mm256_set1_ps(s);
    __m256 m = _mm256_set1_ps(-INFINITY);
    int i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 v = _mm256_mul_ps(_mm256_loadu_ps(x + i), sv);
        _mm256_storeu_ps(x + i, v);
        m = _mm256_max_ps(v, m); /* a NaN v returns m */
    }
    float lanes[8];
    _mm256_storeu_ps(lanes, m);
    for (int j = 0; j < 8; j++)
        *mx = lanes[j] > *mx ? lanes[j] : *mx;
    return i;
}
#endif

/* e^(x[i] - mx) for every i, as attention's softmax needs it; returns the sum of the rounded values */
static double exp_shifted(float *x, int n, float mx)
{
    double sum = 0.0;
    int i = 0;
#if defined(__x86_64__)
    if (cpu_have_avx512vl())
        i = exp_shifted_avx512(x, n, mx, &sum);
    else if (cpu_have_avx2())
        i = exp_shifted_avx2(x, n, mx, &sum);
#endif
    for (; i < n; i++) {
        x[i] = kern_expf(x[i] - mx);
        sum += x[i];
    }
    return sum;
}

void cpu_softmax_scaled(float *p, int lo, int hi, int n, float scale, float sink)
{
    float *x = p + lo;
    const int len = hi - lo;
    float mx = -INFINITY;
    int i = 0;
#if defined(__x86_64__)
    if (cpu_have_avx2())
        i = scale_max_avx2(x, len, scale, &mx);
#endif
    for (; i < len; i++) {
        x[i] *= scale;
        mx = x[i] > mx ? x[i] : mx;
    }
    mx = sink > mx ? sink : mx;
    double sum = exp_shifted(x, len, mx);
    if (sink > -INFINITY)
        sum += kern_expf(sink - mx);
    const float inv = (float)(1.0 / sum);
    for (int j = 0; j < lo; j++)
        p[j] = 0.0f;
    for (int j = 0; j < len; j++)
        x[j] *= inv;
    for (int j = hi; j < n; j++)
        p[j] = 0.0f;
}

void cpu_softmax_lanes(float *s, int64_t ldm, int nj, int lanes, const int *lo, const int *hi, float scale)
{
#if defined(__x86_64__)
    /* lanes is a multiple of cpu_score_lanes(): 16 where AVX-512 runs, else 8 */
    if (cpu_have_avx512vl())
        for (int m = 0; m < lanes; m += 16)
            softmax_lanes16(s + m, ldm, nj, lo + m, hi + m, scale);
    else
        for (int m = 0; m < lanes; m += 8)
            softmax_lanes8(s + m, ldm, nj, lo + m, hi + m, scale);
#else
    (void)s, (void)ldm, (void)nj, (void)lanes, (void)lo, (void)hi, (void)scale;
#endif
}
