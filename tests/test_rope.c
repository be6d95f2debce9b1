/*
 * The CPU backend's rotary embedding (kernels/cpu/rope.c) against its definition and a double-precision rotation, and
 * under --numerics ggml against llama.cpp's, at every SIMD level the CPU has (the suite runs again with
 * GGUFSCOPE_SIMD=avx2).
 */
#include "kern.h"
#include "quant.h"
#include "ggml_reference.h"
#include "testutil.h"
#include "weights.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* NORM rotates (2i, 2i+1), NEOX (i, i + d/2), by theta = pos * base^(-2i/d): each value bit for bit what the
 * scalar formula gives from the float cosine and sine of theta (v[a] c - v[b] s, v[a] s + v[b] c, rounded once
 * each), whichever SIMD path runs (GGUFSCOPE_SIMD=scalar for the other), and within 1e-5 of the rotation in
 * double. Under --numerics ggml, bit for bit llama.cpp's instead (ggml-cpu/ops.cpp ggml_rope_cache_init and
 * rotate_pairs as GCC compiles them): theta from the position, times powf(base, -2 / d) pair after pair in f32,
 * divided by the factor and times freq_scale, libm's cosf and sinf, then v[a] c - (v[b] s) and v[a] s + (v[b] c)
 * each with the product in brackets rounded and the other fused. Head sizes 8, 64 and 76 give the vector paths no
 * body, bodies only, and bodies with a scalar tail. One backend takes every call, so the angles it keeps between
 * calls (cpu_rope_angles) must follow each change: of base, scaling, factors (also rewritten in place, behind the
 * same pointer), positions and the number of tokens. */
static void check_rope(bool ggml)
{
    kern_backend *be = kern_cpu_create_numerics(2, ggml ? KERN_NUMERICS_GGML : KERN_NUMERICS_EXACT);
    const int H = 2, dims[3] = { 8, 64, 76 };
    float factors[38];
    for (int i = 0; i < 38; i++)
        factors[i] = 0.5f + 0.25f * (float)(i % 7);
    for (int di = 0; di < 3; di++) {
        const int d = dims[di];
        /* plain; then what the per-layer settings and Llama 3.1's rope_freqs change: another base, linear
         * scaling (theta * freq_scale) and a divisor per frequency */
        const kern_rope settings[3] = { { .n_rot = d, .base = 10000.0f, .freq_scale = 1.0f, .attn_factor = 1.0f },
                                        { .n_rot = d, .base = 1e6f, .freq_scale = 0.125f, .attn_factor = 1.0f },
                                        { .n_rot = d, .base = 500000.0f, .freq_scale = 1.0f, .freq_factors = factors,
                                          .attn_factor = 1.0f } };
        /* each setting four times in a row, one thing changed each time: the factors' values, the positions,
         * the number of tokens */
        for (int k = 0; k < 3; k++)
            for (int pass = 0; pass < 4; pass++) {
                const int T = pass == 3 ? 4 : 3, pos0 = pass == 2 ? 6 : 5;
                if (pass == 1)
                    factors[1] += 1.0f;
                for (int neox = 0; neox < 2; neox++) {
                    float x[4 * 2 * 76], orig[4 * 2 * 76];
                    uint32_t s = 3;
                    for (int i = 0; i < T * H * d; i++)
                        orig[i] = x[i] = test_frand(&s);
                    kern_rope r = settings[k];
                    r.neox = neox;
                    cr_assert_eq(be->rope(be, x, T, H, d, pos0, &r), KERN_OK);
                    for (int t = 0; t < T; t++)
                        for (int h = 0; h < H; h++)
                            for (int i = 0; i < d / 2; i++) {
                                int a = neox ? i : 2 * i, b = neox ? i + d / 2 : 2 * i + 1;
                                const float *o = orig + (t * H + h) * d;
                                const float *v = x + (t * H + h) * d;
                                double th = (pos0 + t) * (double)r.freq_scale * pow((double)r.base, -2.0 * i / d) /
                                            (r.freq_factors ? r.freq_factors[i] : 1.0);
                                float c = (float)cos(th), sn = (float)sin(th);
                                float ea = o[a] * c - o[b] * sn, eb = o[a] * sn + o[b] * c;
                                if (ggml) {
                                    const float scale = powf(r.base, -2.0f / (float)d);
                                    float theta = (float)(pos0 + t);
                                    for (int j = 0; j < i; j++)
                                        theta *= scale;
                                    const float ti = r.freq_scale * (r.freq_factors ? theta / r.freq_factors[i] : theta);
                                    c = cosf(ti), sn = sinf(ti);
                                    ea = fmaf(o[a], c, -(o[b] * sn)), eb = fmaf(o[a], sn, o[b] * c);
                                }
                                cr_assert(v[a] == ea && v[b] == eb,
                                          "%s: d %d pass %d setting %d neox=%d t=%d i=%d: (%.9g, %.9g), formula (%.9g, %.9g)",
                                          ggml ? "ggml" : "exact", d, pass, k, neox, t, i, v[a], v[b], ea, eb);
                                cr_assert_float_eq(v[a], o[a] * cos(th) - o[b] * sin(th), 1e-5, "d %d i=%d", d, i);
                                cr_assert_float_eq(v[b], o[a] * sin(th) + o[b] * cos(th), 1e-5, "d %d i=%d", d, i);
                            }
                }
            }
    }
    be->destroy(be);
}

Test(ops, rope_norm_and_neox_pairs)
{
    check_rope(false);
    check_rope(true);
}

/* YaRN (gpt-oss: factor 32 from 4096 positions, base 150000) against Hugging Face transformers' formulation
 * (modeling_rope_utils.py, _compute_yarn_parameters), which blends inverse frequencies rather than angles:
 *   inv_i = inv_interp_i (1 - e_i) + inv_extrap_i e_i, e_i = 1 - clamp((i - low) / (high - low), 0, 1),
 *   low/high = floor/ceil of d ln(n_ctx_orig / (beta 2 pi)) / (2 ln base) for beta 32 and 1,
 *   cos and sin times 0.1 ln(factor) + 1,
 * on every backend here, at positions far past the original context too; and the same with a frequency factor per
 * pair (divisors of the extrapolated frequency). */
Test(ops, rope_yarn_follows_transformers)
{
    const int H = 2, d = 64, half = d / 2;
    const float base = 150000.0f, factor = 32.0f;
    const int n_ctx_orig = 4096;
    const double pi = 3.14159265358979323846;
    const double low = fmax(0.0, floor(d * log(n_ctx_orig / (32.0 * 2 * pi)) / (2 * log(base))));
    const double high = fmin(d - 1, ceil(d * log(n_ctx_orig / (1.0 * 2 * pi)) / (2 * log(base))));
    cr_assert(low > 0 && high < half, "the ramp lies inside the pairs: %g..%g", low, high);
    kern_backend *bes[3] = { kern_cpu_create_numerics(1, KERN_NUMERICS_EXACT),
                             kern_cpu_create_numerics(1, KERN_NUMERICS_GGML), kern_ref_create(1) };
    float factors[32];
    for (int i = 0; i < half; i++)
        factors[i] = 1.0f + 0.125f * (float)(i % 3);
    for (int with_factors = 0; with_factors < 2; with_factors++)
        for (int b = 0; b < 3; b++) {
            kern_rope r = { .n_rot = d, .neox = true, .base = base, .freq_scale = 1.0f / factor, .ext_factor = 1.0f,
                            .attn_factor = 1.0f, .freq_factors = with_factors ? factors : NULL };
            r.corr_lo = (float)low, r.corr_hi = (float)high;
            const int T = 3, pos0 = 40000;
            float x[3 * 2 * 64], orig[3 * 2 * 64];
            uint32_t st = 5;
            for (int i = 0; i < T * H * d; i++)
                orig[i] = x[i] = test_frand(&st);
            cr_assert_eq(bes[b]->rope(bes[b], x, T, H, d, pos0, &r), KERN_OK);
            const double mscale = 0.1 * log(factor) + 1.0;
            for (int t = 0; t < T; t++)
                for (int i = 0; i < half; i++) {
                    const double extrap = pow(base, -2.0 * i / d) / (with_factors ? factors[i] : 1.0);
                    const double e = 1.0 - fmin(1.0, fmax(0.0, (i - low) / (high - low)));
                    const double th = (pos0 + t) * (extrap / factor * (1.0 - e) + extrap * e);
                    for (int h = 0; h < H; h++) {
                        const float *o = orig + (t * H + h) * d, *v = x + (t * H + h) * d;
                        const double ea = (o[i] * cos(th) - o[i + half] * sin(th)) * mscale;
                        const double eb = (o[i] * sin(th) + o[i + half] * cos(th)) * mscale;
                        /* angles of about 4e4 radians: f32's stepping (ggml) loses ~3e-3 of a radian there */
                        const double tol = b == 1 ? 1e-2 : 2e-5;
                        cr_assert_float_eq(v[i], ea, tol, "backend %d factors %d t=%d i=%d: %.7g, transformers %.7g", b,
                                           with_factors, t, i, v[i], ea);
                        cr_assert_float_eq(v[i + half], eb, tol, "backend %d factors %d t=%d i=%d", b, with_factors,
                                           t, i);
                    }
                }
        }
    for (int b = 0; b < 3; b++)
        bes[b]->destroy(bes[b]);
}
