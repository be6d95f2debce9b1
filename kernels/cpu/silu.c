/*
 * SiLU-gated product for the FFN: out = gate / (1 + e^-gate) * up.
 *
 * The scalar loop spends its time in libm's expf: ~20 us per 5632-value row,
 * ~1.4% of a 1.1B decode step on one thread while the other waits. The AVX2
 * path computes e^x itself, 8 lanes at a time (16 on AVX-512, the same operations):
 *   x = k ln2 + r, k = round(x / ln2), |r| <= ln2 / 2,
 *   e^x = 2^k e^r, e^r by its Taylor series to r^7 / 7! (truncation error
 *   below 0.35^8 / 8! ~ 5e-9, so what remains is the rounding of the FMAs).
 * Measured over gates in [-87, 87]: at most 2.35 ulp from the exact product,
 * as the same formula through libm's expf; test_kernels holds it to 4.
 * ln2 is split in two (Cody and Waite) so that k ln2_hi is exact for |k| < 512.
 * x is clamped to [-87, 88] so that 2^k stays a normal float: beyond that the
 * gate is so large that 1 + e^-gate is 1 or e^-gate alone, and the result is
 * gate (or ~0) either way. NaN gates stay NaN (the clamps return their NaN
 * operand and the division keeps it); a -inf gate gives -inf (libm's form:
 * -inf / inf = NaN), non-finite either way for the smoke verdict.
 */
#include "cpu.h"
#include "quant.h"

#include <math.h>

#if defined(__x86_64__)
#include <immintrin.h>
#define AVX2 __attribute__((target("avx2,fma")))

AVX2 static inline __m256 exp_avx2(__m256 x)
{
    const __m256 ln2_hi = _mm256_set1_ps(0.693145751953125f), ln2_lo = _mm256_set1_ps(1.42860682030941723e-6f);
    /* max/min return their second operand when either is NaN, so x goes second */
    x = _mm256_min_ps(_mm256_set1_ps(88.0f), _mm256_max_ps(_mm256_set1_ps(-87.0f), x));
    const __m256 k = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
                                     _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    const __m256 r = _mm256_fnmadd_ps(k, ln2_lo, _mm256_fnmadd_ps(k, ln2_hi, x));
    /* 1 + r + r^2/2! + ... + r^7/7!, Horner from the top */
    __m256 p = _mm256_set1_ps(1.0f / 5040.0f);
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 720.0f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 120.0f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 24.0f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 6.0f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(0.5f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
    /* 2^k: k + 127 in the exponent field */
    const __m256i two_k = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(k), _mm256_set1_epi32(127)), 23);
    return _mm256_mul_ps(p, _mm256_castsi256_ps(two_k));
}

AVX2 static size_t silu_mul_avx2(const float *gate, const float *up, size_t n, float *out)
{
    const __m256 one = _mm256_set1_ps(1.0f), zero = _mm256_setzero_ps();
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 g = _mm256_loadu_ps(gate + i);
        const __m256 e = exp_avx2(_mm256_sub_ps(zero, g));
        _mm256_storeu_ps(out + i, _mm256_mul_ps(_mm256_div_ps(g, _mm256_add_ps(one, e)), _mm256_loadu_ps(up + i)));
    }
    return i;
}

#define AVX512 __attribute__((target("avx512f,avx2,fma")))

/* exp_avx2's operations, 16 lanes at a time: each lane's result is bit for bit the AVX2 one (the same IEEE
 * operations in the same order; roundscale with 0 fraction bits is vroundps's nearest-even). Half the
 * instructions per value: SmolLM2 Q4_0 pp64's SwiGLU 1.1 -> 0.8 % (perf); 0.38 -> 0.24 ns a value hot. */
AVX512 static inline __m512 exp_avx512(__m512 x)
{
    const __m512 ln2_hi = _mm512_set1_ps(0.693145751953125f), ln2_lo = _mm512_set1_ps(1.42860682030941723e-6f);
    x = _mm512_min_ps(_mm512_set1_ps(88.0f), _mm512_max_ps(_mm512_set1_ps(-87.0f), x));
    const __m512 k = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)),
                                          _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    const __m512 r = _mm512_fnmadd_ps(k, ln2_lo, _mm512_fnmadd_ps(k, ln2_hi, x));
    const float taylor[8] = { 1.0f / 5040.0f, 1.0f / 720.0f, 1.0f / 120.0f, 1.0f / 24.0f, 1.0f / 6.0f, 0.5f, 1.0f, 1.0f };
    __m512 p = _mm512_set1_ps(taylor[0]);
    for (int i = 1; i < 8; i++)
        p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(taylor[i]));
    const __m512i two_k = _mm512_slli_epi32(_mm512_add_epi32(_mm512_cvtps_epi32(k), _mm512_set1_epi32(127)), 23);
    return _mm512_mul_ps(p, _mm512_castsi512_ps(two_k));
}

AVX512 static size_t silu_mul_avx512(const float *gate, const float *up, size_t n, float *out)
{
    const __m512 one = _mm512_set1_ps(1.0f), zero = _mm512_setzero_ps();
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const __m512 g = _mm512_loadu_ps(gate + i);
        const __m512 e = exp_avx512(_mm512_sub_ps(zero, g));
        _mm512_storeu_ps(out + i, _mm512_mul_ps(_mm512_div_ps(g, _mm512_add_ps(one, e)), _mm512_loadu_ps(up + i)));
    }
    return i;
}

/*
 * --numerics ggml: SwiGLU as llama.cpp's CPU backend computes it (ggml-cpu/vec.cpp ggml_vec_swiglu_f32 and
 * vec.h ggml_v_silu / ggml_v_expf, in the llama.cpp that llama-cpp-python 0.3.36 vendors), so that the rounding
 * of its output into Q8 blocks for ffn_down lands where llama.cpp's does: gate / (1 + e^-gate) * up with
 * e^x from a degree-5 polynomial on a range reduction by n = round(x / ln 2), not exp_avx2's series. ggml
 * compiles one form per build: 16 lanes where the build has AVX-512F and DQ (2^n applied by vscalefps), else 8
 * with AVX2 and FMA (2^n built in the exponent field, the result k + j k); the values a row's vector loop leaves
 * (the row length modulo the width) go through libm's expf, as ggml_silu_f32 does. The two vector forms round
 * differently in the last bit, so each is kept: the AVX-512 one where this CPU has it (a native build of llama.cpp
 * here), the AVX2 one where GGUFSCOPE_SIMD=avx2 caps it or the CPU has no AVX-512 (an AVX2 build).
 * Both reach the special cases as ggml does: |n| > 126 (AVX2) or > 192 (AVX-512) takes the overflow and
 * underflow forms (0, +inf, or 2^n split in two factors).
 */
/* ggml_v_expf's shared start: n = x / ln 2 rounded through the 1.5 * 2^23 shifter (z keeps n in its low bits),
 * b = x - n ln 2 with ln 2 split in two, and its polynomial without the constant term (c1 b + c2 b^2 + ...) */
#define GGML_EXP_SHIFTER 0x1.8p23f
#define GGML_EXP_LOG2E 0x1.715476p+0f
#define GGML_EXP_LN2_HI 0x1.62e4p-1f
#define GGML_EXP_LN2_LO 0x1.7f7d1cp-20f
#define GGML_EXP_C1 0x1.ffffecp-1f
#define GGML_EXP_C2 0x1.fffdb6p-2f
#define GGML_EXP_C3 0x1.555e66p-3f
#define GGML_EXP_C4 0x1.573e2ep-5f
#define GGML_EXP_C5 0x1.0e4020p-7f

AVX512 static inline __m512 ggml_exp16(__m512 x)
{
    const __m512 shifter = _mm512_set1_ps(GGML_EXP_SHIFTER);
    const __m512 z = _mm512_fmadd_ps(x, _mm512_set1_ps(GGML_EXP_LOG2E), shifter);
    const __m512 n = _mm512_sub_ps(z, shifter);
    const __m512 b = _mm512_fnmadd_ps(n, _mm512_set1_ps(GGML_EXP_LN2_LO),
                                      _mm512_fnmadd_ps(n, _mm512_set1_ps(GGML_EXP_LN2_HI), x));
    const __m512 u = _mm512_mul_ps(b, b);
    /* 1 + c1 b + c2 b^2 + ... + c5 b^5 as ggml groups it: (1 + c1 b) + u ((c2 + c3 b) + u (c4 + c5 b)) */
    const __m512 hi = _mm512_fmadd_ps(_mm512_set1_ps(GGML_EXP_C5), b, _mm512_set1_ps(GGML_EXP_C4));
    const __m512 mid = _mm512_fmadd_ps(_mm512_set1_ps(GGML_EXP_C3), b, _mm512_set1_ps(GGML_EXP_C2));
    const __m512 lo = _mm512_fmadd_ps(_mm512_set1_ps(GGML_EXP_C1), b, _mm512_set1_ps(1.0f));
    const __m512 j = _mm512_fmadd_ps(_mm512_fmadd_ps(hi, u, mid), u, lo);
    const __m512 res = _mm512_scalef_ps(j, n);
    const __mmask16 far = _mm512_cmp_ps_mask(_mm512_abs_ps(n), _mm512_set1_ps(192.0f), _CMP_GT_OQ);
    if (!far)
        return res;
    /* beyond 2^+-192: +inf above, 0 below */
    const __mmask16 below = _mm512_cmp_ps_mask(n, _mm512_setzero_ps(), _CMP_LE_OQ);
    const __m512 limit = _mm512_mask_blend_ps(below, _mm512_set1_ps(INFINITY), _mm512_setzero_ps());
    return _mm512_mask_blend_ps(far, res, limit);
}

AVX2 static inline __m256 ggml_exp8(__m256 x)
{
    const __m256 shifter = _mm256_set1_ps(GGML_EXP_SHIFTER);
    const __m256 z = _mm256_fmadd_ps(x, _mm256_set1_ps(GGML_EXP_LOG2E), shifter);
    const __m256 n = _mm256_sub_ps(z, shifter);
    const __m256 b = _mm256_fnmadd_ps(n, _mm256_set1_ps(GGML_EXP_LN2_LO),
                                      _mm256_fnmadd_ps(n, _mm256_set1_ps(GGML_EXP_LN2_HI), x));
    /* 2^n: n's low bits (in z's mantissa) moved into the exponent field of 1.0 */
    const __m256i e = _mm256_slli_epi32(_mm256_castps_si256(z), 23);
    const __m256 k = _mm256_castsi256_ps(_mm256_add_epi32(e, _mm256_castps_si256(_mm256_set1_ps(1.0f))));
    const __m256 abs_n = _mm256_andnot_ps(_mm256_set1_ps(-0.0f), n);
    const __m256 big = _mm256_cmp_ps(abs_n, _mm256_set1_ps(126.0f), _CMP_GT_OQ);
    const __m256 u = _mm256_mul_ps(b, b);
    /* here without the 1: c1 b + u ((c2 + c3 b) + u (c4 + c5 b)), and e^x = k + j k */
    const __m256 hi = _mm256_fmadd_ps(_mm256_set1_ps(GGML_EXP_C5), b, _mm256_set1_ps(GGML_EXP_C4));
    const __m256 mid = _mm256_fmadd_ps(_mm256_set1_ps(GGML_EXP_C3), b, _mm256_set1_ps(GGML_EXP_C2));
    const __m256 j = _mm256_fmadd_ps(_mm256_fmadd_ps(hi, u, mid), u, _mm256_mul_ps(_mm256_set1_ps(GGML_EXP_C1), b));
    if (!_mm256_movemask_ps(big))
        return _mm256_fmadd_ps(j, k, k);
    /* |n| > 126: 2^n as s1 * s2 (each a normal float), s1 = 2^+-127ish by the sign of n; |n| > 192: s1 * s1 */
    const __m256i g = _mm256_and_si256(_mm256_castps_si256(_mm256_cmp_ps(n, _mm256_setzero_ps(), _CMP_LE_OQ)),
                                       _mm256_set1_epi32((int)0x82000000u));
    const __m256 s1 = _mm256_castsi256_ps(_mm256_add_epi32(g, _mm256_set1_epi32(0x7f000000)));
    const __m256 s2 = _mm256_castsi256_ps(_mm256_sub_epi32(e, g));
    const __m256 huge = _mm256_cmp_ps(abs_n, _mm256_set1_ps(192.0f), _CMP_GT_OQ);
    const __m256 split = _mm256_blendv_ps(_mm256_fmadd_ps(k, j, k), _mm256_mul_ps(_mm256_fmadd_ps(s2, j, s2), s1), big);
    return _mm256_blendv_ps(split, _mm256_mul_ps(s1, s1), huge);
}

AVX512 static size_t silu_mul_ggml16(const float *gate, const float *up, size_t n, float *out)
{
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const __m512 g = _mm512_loadu_ps(gate + i);
        const __m512 e = ggml_exp16(_mm512_sub_ps(_mm512_setzero_ps(), g));
        const __m512 silu = _mm512_div_ps(g, _mm512_add_ps(_mm512_set1_ps(1.0f), e));
        _mm512_storeu_ps(out + i, _mm512_mul_ps(silu, _mm512_loadu_ps(up + i)));
    }
    return i;
}

AVX2 static size_t silu_mul_ggml8(const float *gate, const float *up, size_t n, float *out)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 g = _mm256_loadu_ps(gate + i);
        const __m256 e = ggml_exp8(_mm256_sub_ps(_mm256_setzero_ps(), g));
        const __m256 silu = _mm256_div_ps(g, _mm256_add_ps(_mm256_set1_ps(1.0f), e));
        _mm256_storeu_ps(out + i, _mm256_mul_ps(silu, _mm256_loadu_ps(up + i)));
    }
    return i;
}
#endif

void cpu_silu_mul_ggml(const float *gate, const float *up, size_t n, float *out)
{
    size_t i = 0;
#if defined(__x86_64__)
    if (cpu_have_avx512vl() && quant_cpu_has_avx512dq()) /* ggml's condition for its 16-lane form */
        i = silu_mul_ggml16(gate, up, n, out);
    else if (cpu_have_avx2())
        i = silu_mul_ggml8(gate, up, n, out);
#endif
    for (; i < n; i++)
        out[i] = gate[i] / (1.0f + expf(-gate[i])) * up[i];
}

void cpu_silu_mul(const float *gate, const float *up, size_t n, float *out)
{
    size_t i = 0;
#if defined(__x86_64__)
    if (cpu_have_avx512vl())
        i = silu_mul_avx512(gate, up, n, out);
    if (cpu_have_avx2())
        i += silu_mul_avx2(gate + i, up + i, n - i, out + i);
#endif
    for (; i < n; i++)
        out[i] = gate[i] / (1.0f + expf(-gate[i])) * up[i];
}
