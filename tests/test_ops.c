/*
 * The CPU backend's element-wise and per-row ops (GeGLU, scaling and soft-capping, RMSNorm, SwiGLU, residual add, row
 * statistics) against their definitions and double-precision references, at every SIMD level the CPU has (the suite
 * runs again with GGUFSCOPE_SIMD=avx2); the rotary embedding's in test_rope.c.
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

/* clamp_kqv's clamp (ggml_clamp): values past either bound become the bound, the rest are untouched, a NaN becomes
 * the upper bound as ggml's MAX(MIN(x, hi), lo) makes it, infinities the bounds; reversed bounds are refused. On the
 * CPU (both numerics, past the size it splits across threads) and the reference backend. */
Test(ops, clamp_is_ggml_clamp)
{
    kern_backend *bes[3] = { kern_cpu_create(2), kern_cpu_create_numerics(2, KERN_NUMERICS_GGML), kern_ref_create(1) };
    const size_t n = 40009;
    float *x = malloc(n * sizeof(float));
    for (int k = 0; k < 3; k++) {
        for (size_t i = 0; i < n; i++)
            x[i] = -20.0f + 40.0f * (float)i / (float)n;
        x[7] = NAN, x[8] = INFINITY, x[9] = -INFINITY, x[10] = 6.0f, x[11] = -6.0f, x[12] = -0.0f;
        cr_assert_eq(bes[k]->clamp(bes[k], x, n, -6.0f, 6.0f), KERN_OK);
        for (size_t i = 13; i < n; i++) {
            const float v = -20.0f + 40.0f * (float)i / (float)n;
            const float want = v > 6.0f ? 6.0f : v < -6.0f ? -6.0f : v;
            cr_assert_eq(x[i], want, "%s: clamp(%.9g) = %.9g", bes[k]->name, v, x[i]);
        }
        cr_assert_eq(x[7], 6.0f, "%s: ggml's comparisons make a NaN the upper bound", bes[k]->name);
        cr_assert_eq(x[8], 6.0f);
        cr_assert_eq(x[9], -6.0f);
        cr_assert_eq(x[10], 6.0f);
        cr_assert_eq(x[11], -6.0f);
        cr_assert(x[12] == 0.0f && signbit(x[12]), "-0 is inside the bounds and stays as it is");
        cr_assert_eq(bes[k]->clamp(bes[k], x, n, 1.0f, -1.0f), KERN_E_SHAPE, "lo above hi is no clamp");
        cr_assert_eq(bes[k]->clamp(bes[k], x, n, NAN, 1.0f), KERN_E_SHAPE);
        bes[k]->destroy(bes[k]);
    }
    free(x);
}

/* GeGLU (gemma): GELU as llama.cpp's CPU computes it, the tanh approximation
 * 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) through f16: every value an
 * f16, within f16 rounding (of x and of the result) of the exact GELU in
 * double, 0 at or below -10, x at or above 10; scaling and soft-capping likewise. */
Test(ops, geglu_scale_and_softcap)
{
    kern_backend *be = kern_cpu_create(2);
    const size_t n = 100003;
    float *g = malloc(n * sizeof(float)), *u = malloc(n * sizeof(float)), *o = malloc(n * sizeof(float));
    for (size_t i = 0; i < n; i++) {
        g[i] = -12.0f + 24.0f * (float)i / (float)n;
        u[i] = 1.0f;
    }
    cr_assert_eq(be->glu(be, KERN_ACT_GELU_TANH, g, u, n, n, o), KERN_OK);
    for (size_t i = 0; i < n; i++) {
        const double x = g[i];
        double ref = 0.5 * x * (1 + tanh(sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
        if (x <= -10)
            ref = 0;
        else if (x >= 10)
            ref = x;
        else
            cr_assert_eq(quant_f16_to_f32(quant_f32_to_f16(o[i])), o[i], "gelu(%.9g) = %.9g is not an f16", g[i], o[i]);
        /* x rounded to f16 moves gelu by |gelu'(x)| |x| 2^-11; the result's rounding adds 2^-11 of it */
        const double slope = fabs(ref) > 0 ? 2.0 : 0.0, tol = 0x1p-11 * (fabs(ref) + slope * fabs(x)) + 1e-7;
        cr_assert_leq(fabs(o[i] - ref), tol, "gelu(%.9g) = %.9g, exact %.9g", g[i], o[i], ref);
    }
    cr_assert_eq(kern_gelu_ggml(-10.0f), 0.0f);
    cr_assert_eq(kern_gelu_ggml(10.0f), 10.0f);
    cr_assert_eq(kern_gelu_ggml(0.0f), 0.0f);
    cr_assert_eq(be->glu(be, (kern_act)7, g, u, n, n, o), KERN_E_UNSUPPORTED);
    float x[5] = { -3, 0, 2.5f, 1e30f, -1e30f };
    cr_assert_eq(be->scale(be, x, 3, 2.0f), KERN_OK);
    cr_assert_float_eq(x[0], -6.0f, 0);
    cr_assert_float_eq(x[2], 5.0f, 0);
    cr_assert_eq(be->softcap(be, x, 5, 30.0f), KERN_OK);
    cr_assert_float_eq(x[0], 30.0 * tanh(-6.0 / 30.0), 1e-5);
    cr_assert_float_eq(x[1], 0.0f, 0);
    cr_assert_float_eq(x[3], 30.0f, 1e-5, "huge logits saturate at the cap");
    cr_assert_float_eq(x[4], -30.0f, 1e-5);
    cr_assert_eq(be->softcap(be, x, 5, 0.0f), KERN_E_SHAPE, "a cap of 0 is no cap: the engine never asks for it");
    free(g);
    free(u);
    free(o);
    be->destroy(be);
}

/* kern_gelu_ggml is llama.cpp's GELU table bit for bit at every f16 input (ggml_reference.c's statement, with the
 * fused multiply-add GCC makes of ggml_gelu_f32), and that statement tells the fused form from the unfused one at
 * some inputs, so the check has teeth (the unfused table put gemma-3's 512-token prompt a Q8 rounding off at its
 * 16th layer). */
Test(ops, gelu_is_llama_cpps_table)
{
    int differs = 0;
    for (uint32_t u = 0; u < 1u << 16; u++) {
        const float x = quant_f16_to_f32((uint16_t)u);
        if (isnan(x))
            continue;
        const float want = ggml_ref_gelu(x, true);
        cr_assert_eq(kern_gelu_ggml(x), want, "gelu(%a) = %a, llama.cpp's table %a", (double)x,
                     (double)kern_gelu_ggml(x), (double)want);
        differs += want != ggml_ref_gelu(x, false);
    }
    cr_assert_gt(differs, 0, "no f16 input tells the fused form from the unfused one");
    cr_log_info("the unfused form differs at %d f16 inputs", differs);
}

/* The backend's GeGLU is kern_gelu_ggml(x) * u bit for bit, whichever path computes it (the AVX2 one rounds x
 * to f16 with F16C and gathers from the table): every f16 value, the midpoints between neighbours (the
 * rounding ties, which go to the even one) and the floats either side of them, the infinities and NaN, mixed
 * so that groups of eight hold values inside and outside (-10, 10). */
Test(ops, geglu_equals_the_table_lookup_bit_for_bit)
{
    kern_backend *be = kern_cpu_create(2);
    const size_t n = (size_t)0x10000 * 4;
    float *g = malloc(n * sizeof(float)), *u = malloc(n * sizeof(float)), *o = malloc(n * sizeof(float));
    for (size_t h = 0; h < 0x10000; h++) {
        const float x = quant_f16_to_f32((uint16_t)h), next = quant_f16_to_f32((uint16_t)(h + 1));
        const float mid = isfinite(x) && isfinite(next) ? (float)(((double)x + next) / 2) : x;
        g[4 * h] = x, g[4 * h + 1] = mid;
        g[4 * h + 2] = nextafterf(mid, INFINITY), g[4 * h + 3] = nextafterf(mid, -INFINITY);
    }
    for (size_t i = 0; i < n; i++)
        u[i] = 0.75f + (float)(i % 13) * 0.125f;
    cr_assert_eq(be->glu(be, KERN_ACT_GELU_TANH, g, u, n, n, o), KERN_OK);
    for (size_t i = 0; i < n; i++) {
        const float want = kern_gelu_ggml(g[i]) * u[i];
        cr_assert(memcmp(&want, &o[i], 4) == 0, "geglu(%.9g, %g) = %.9g, the table's %.9g", g[i], u[i], o[i], want);
    }
    /* without up: GELU alone (StarCoder2's ungated block, ggml_gelu), the same table; SiLU alone is not an op here */
    cr_assert_eq(be->glu(be, KERN_ACT_GELU_TANH, g, NULL, n, n, o), KERN_OK);
    for (size_t i = 0; i < n; i++) {
        const float want = kern_gelu_ggml(g[i]);
        cr_assert(memcmp(&want, &o[i], 4) == 0, "gelu(%.9g) = %.9g, the table's %.9g", g[i], o[i], want);
    }
    cr_assert_eq(be->glu(be, KERN_ACT_SILU, g, NULL, n, n, o), KERN_E_UNSUPPORTED);
    free(g);
    free(u);
    free(o);
    be->destroy(be);
}

/* RMSNorm sums rows' squares several at a time (their chains interleaved, in vector lanes where AVX2 is there):
 * every row of a batch of any size is bit for bit that row normalized alone and bit for bit ggml's definition
 * (ggml-cpu/ops.cpp's rms_norm: each square rounded to f32, summed in one chain of double additions in element
 * order, then x * (1 / sqrtf(mean + eps)) * g in float), and within 2e-7 relative of the norm in double. Batches
 * of 1 to 40 rows: groups of 8 and the rows past them. The rows are ones where squares exact in double give
 * another scale for some of them, so the rounding of the squares is held too. */
Test(ops, rmsnorm_rows_do_not_depend_on_the_batch)
{
    kern_backend *be = kern_cpu_create(2);
    enum { N = 577, MAX_T = 40 };
    uint8_t *gb;
    gguf_tensor g = test_weight_tensor(GGUF_TENSOR_F32, N, 1, &gb);
    g.n_dims = 1;
    kern_weight kg = { .t = &g };
    const float *gv = (const float *)gb;
    static float x[MAX_T * N], out[MAX_T * N], alone[N];
    uint32_t s = 9;
    for (int i = 0; i < MAX_T * N; i++) {
        /* odd rows: values whose f32 squares round up by over 0.3 ulp, so that their sum moves the mean */
        float v;
        do
            v = test_frand(&s) * (float)(1 + i / N);
        while ((i / N) % 2 && (double)(v * v) - (double)v * v <= 0.3 * 0x1p-23 * ((double)v * v));
        x[i] = v;
    }
    const int Ts[] = { 1, 2, 3, 4, 5, 7, 8, 9, 13, 16, 17, 21, 33, 40 };
    int told_apart = 0; /* rows whose scale differs with the squares exact */
    for (size_t k = 0; k < sizeof Ts / sizeof Ts[0]; k++) {
        cr_assert_eq(be->rmsnorm(be, &kg, x, Ts[k], N, 1e-6f, out), KERN_OK);
        for (int t = 0; t < Ts[k]; t++) {
            const float *xr = x + (size_t)t * N;
            cr_assert_eq(be->rmsnorm(be, &kg, xr, 1, N, 1e-6f, alone), KERN_OK);
            cr_assert_eq(memcmp(alone, out + (size_t)t * N, sizeof alone), 0, "row %d of %d differs from itself alone",
                         t, Ts[k]);
            double ss = 0, exact = 0;
            for (int i = 0; i < N; i++) {
                ss += (double)(xr[i] * xr[i]);
                exact += (double)xr[i] * xr[i];
            }
            const float scale = 1.0f / sqrtf((float)(ss / N) + 1e-6f);
            told_apart += scale != 1.0f / sqrtf((float)(exact / N) + 1e-6f);
            for (int i = 0; i < N; i++) {
                const float defined = xr[i] * scale * gv[i];
                cr_assert(out[(size_t)t * N + i] == defined, "row %d of %d [%d]: %.9g, defined %.9g", t, Ts[k], i,
                          out[(size_t)t * N + i], defined);
                const double want = xr[i] / sqrt(ss / N + 1e-6) * gv[i];
                cr_assert_leq(fabs(out[(size_t)t * N + i] - want), 2e-7 * fabs(want) + 1e-30, "row %d [%d]: %.9g, %.9g",
                              t, i, out[(size_t)t * N + i], want);
            }
        }
    }
    cr_assert_gt(told_apart, 0, "no row tells f32 squares from exact ones: the data does not test the rule");
    free(gb);
    be->destroy(be);
}

Test(ops, rmsnorm_swiglu_add_and_row_stats)
{
    kern_backend *be = kern_cpu_create(1);
    uint8_t *gb;
    gguf_tensor g = test_weight_tensor(GGUF_TENSOR_F32, 5, 1, &gb);
    g.n_dims = 1;
    float x[10] = { 1, 2, 3, 4, 5, -1, 0, 0, 0, 1 }, out[10];
    kern_weight kg = { .t = &g };
    cr_assert_eq(be->rmsnorm(be, &kg, x, 2, 5, 1e-5f, out), KERN_OK);
    for (int t = 0; t < 2; t++) {
        double ss = 0;
        for (int i = 0; i < 5; i++)
            ss += x[t * 5 + i] * x[t * 5 + i];
        for (int i = 0; i < 5; i++)
            cr_assert_float_eq(out[t * 5 + i], x[t * 5 + i] / sqrt(ss / 5 + 1e-5) * ((float *)gb)[i], 1e-6);
    }
    float a[3] = { -2, 0, 3 }, b[3] = { 2, 5, -1 }, o[3];
    cr_assert_eq(be->glu(be, KERN_ACT_SILU, a, b, 3, 3, o), KERN_OK);
    for (int i = 0; i < 3; i++)
        cr_assert_float_eq(o[i], a[i] / (1 + exp(-a[i])) * b[i], 1e-6);
    cr_assert_eq(be->add(be, a, b, 3), KERN_OK);
    cr_assert_float_eq(a[2], 2.0f, 0);
    float r[6] = { 3, -4, 0, NAN, INFINITY, 1 };
    kern_row_stats st[2];
    cr_assert_eq(be->row_stats(be, r, 2, 3, st), KERN_OK);
    cr_assert_float_eq(st[0].rms, sqrtf(25.0f / 3), 1e-6);
    cr_assert_float_eq(st[0].max_abs, 4.0f, 0);
    cr_assert_eq(st[1].n_nan, 1);
    cr_assert_eq(st[1].n_inf, 1);
    free(gb);
    be->destroy(be);
}

/* The SiLU product (a polynomial e^x on AVX2 machines, libm elsewhere) against the exact value in double:
 * within 4 ulp over every gate whose e^-gate is a normal float, the row long enough for the vector
 * path and odd-sized for the scalar tail; prompt-sized rows (spread over threads) the same; NaN stays
 * NaN, +inf and large gates give gate * up, very negative gates give ~0. */
Test(ops, swiglu_is_within_4_ulp_of_the_exact_silu)
{
    kern_backend *be = kern_cpu_create(2);
    const size_t n = 200003;
    float *g = malloc(n * sizeof(float)), *u = malloc(n * sizeof(float)), *o = malloc(n * sizeof(float));
    uint32_t s = 11;
    for (size_t i = 0; i < n; i++) {
        g[i] = -87.0f + 174.0f * (float)i / (float)n;
        u[i] = test_frand(&s) * 2.0f;
    }
    for (int k = 0; k < 2; k++) {
        const size_t len = k ? n : 5631; /* one decode row, then a prompt's worth */
        cr_assert_eq(be->glu(be, KERN_ACT_SILU, g, u, len, len, o), KERN_OK);
        for (size_t i = 0; i < len; i++) {
            const double ref = (double)g[i] / (1.0 + exp(-(double)g[i])) * u[i];
            cr_assert_leq(fabs(o[i] - ref), 4 * 0x1p-23 * fabs(ref) + 1e-37, "silu(%.9g) * %.9g = %.9g, exact %.9g", g[i],
                          u[i], o[i], ref);
        }
    }
    /* the nine special gates three times over (25 values): through the 16-lane, the 8-lane and the scalar code */
    const float specials[9] = { NAN, INFINITY, 90.0f, 20.0f, -87.5f, -95.0f, -200.0f, 0.0f, 1.0f };
    float sg[25], su[25], so[25];
    for (int i = 0; i < 25; i++) {
        sg[i] = specials[i % 9];
        su[i] = i % 9 == 8 ? NAN : 1.5f;
    }
    cr_assert_eq(be->glu(be, KERN_ACT_SILU, sg, su, 25, 25, so), KERN_OK);
    for (int base = 0; base < 25; base += 9) {
        const float *v = so + base;
        cr_assert(isnan(v[0]), "a NaN gate gives NaN (value %d)", base);
        cr_assert(isinf(v[1]) && v[1] > 0, "+inf gate: %g", v[1]);
        cr_assert_float_eq(v[2], 90.0f * 1.5f, 0, "large gate: gate * up");
        if (base + 3 < 25)
            cr_assert_float_eq(v[3], 20.0f / (1.0f + expf(-20.0f)) * 1.5f, 1e-5);
        for (int i = 4; i < 7 && base + i < 25; i++)
            cr_assert_leq(fabsf(v[i]), 1e-30f, "silu(%g) = %g, ~0", sg[base + i], v[i]);
        if (base + 7 < 25)
            cr_assert_eq(v[7], 0.0f);
        if (base + 8 < 25)
            cr_assert(isnan(v[8]), "a NaN up gives NaN");
    }
    /* Every vector width computes silu.c's e^x with the same float operations: each value bit for bit this
     * scalar statement of them (the scalar fallback, GGUFSCOPE_SIMD=scalar, uses libm's expf instead). */
    if (strcmp(quant_simd_level(), "scalar") != 0)
        for (size_t i = 0; i < n; i += 7) {
            const float x = fminf(88.0f, fmaxf(-87.0f, -g[i]));
            const float k = nearbyintf(x * 1.44269504088896341f);
            const float r = fmaf(-k, 1.42860682030941723e-6f, fmaf(-k, 0.693145751953125f, x));
            const float taylor[8] = { 1.0f / 5040.0f, 1.0f / 720.0f, 1.0f / 120.0f, 1.0f / 24.0f,
                                      1.0f / 6.0f,    0.5f,           1.0f,           1.0f };
            float p = taylor[0];
            for (int j = 1; j < 8; j++)
                p = fmaf(p, r, taylor[j]);
            const float e = p * ldexpf(1.0f, (int)k), want = g[i] / (1.0f + e) * u[i];
            cr_assert(o[i] == want, "value %zu: silu(%.9g) * %.9g = %.9g, the e^x arithmetic gives %.9g", i, g[i],
                      u[i], o[i], want);
        }
    free(g);
    free(u);
    free(o);
    be->destroy(be);
}

/* Laguna's softplus gate (glu with KERN_ACT_SOFTPLUS): under --numerics ggml, ggml_softplus's statement (a gate above 20
 * is itself, else logf(1 + expf(x))) then ggml_mul's product, bit for bit; in exact numerics and on the reference
 * backend within 2 ulp of softplus in double times up where both are normal floats, a very negative gate's e^x kept
 * (llama.cpp's 1 + e^x rounds it away); gates from -60 to 60 reach both ends. Without up the activation is refused (a gate needs its values). */
Test(ops, softplus_gate_is_ggml_softplus_then_mul)
{
    kern_backend *bes[3] = { kern_cpu_create_numerics(2, KERN_NUMERICS_GGML), kern_cpu_create(2), kern_ref_create(1) };
    const size_t n = 40013;
    float *g = malloc(n * sizeof(float)), *u = malloc(n * sizeof(float)), *o = malloc(n * sizeof(float));
    uint32_t s = 11;
    for (size_t i = 0; i < n; i++) {
        g[i] = -60.0f + 120.0f * test_frand(&s);
        u[i] = test_frand(&s) * 4.0f - 2.0f;
    }
    for (int k = 0; k < 3; k++) {
        cr_assert_eq(bes[k]->glu(bes[k], KERN_ACT_SOFTPLUS, g, u, n, n, o), KERN_OK, "%s", bes[k]->name);
        size_t tiny = 0;
        for (size_t i = 0; i < n; i++) {
            if (k == 0) {
                const float want = u[i] * (g[i] > 20.0f ? g[i] : logf(1.0f + expf(g[i])));
                cr_assert(memcmp(&o[i], &want, 4) == 0, "softplus(%.9g) * %.9g = %.9g, ggml's %.9g", g[i], u[i],
                          o[i], want);
                continue;
            }
            const double x = g[i], sp = x > 0.0 ? x + log1p(exp(-x)) : log1p(exp(x)), ref = sp * u[i];
            if (fabs(ref) < 0x1p-126 || sp < 0x1p-126)
                continue; /* a subnormal e^x or product: fewer bits than a float's */
            cr_assert_leq(fabs(o[i] - ref), 2 * 0x1p-23 * fabs(ref), "%s: softplus(%.9g) * %.9g = %.9g, exact %.9g",
                          bes[k]->name, g[i], u[i], o[i], ref);
            tiny += g[i] < -17.0f;
        }
        cr_assert(k == 0 || tiny > 0, "no gate so negative that 1 + e^x rounds to 1");
        cr_assert_eq(bes[k]->glu(bes[k], KERN_ACT_SOFTPLUS, g, NULL, n, n, o), KERN_E_UNSUPPORTED);
        bes[k]->destroy(bes[k]);
    }
    free(g);
    free(u);
    free(o);
}

/* --numerics ggml's SwiGLU is llama.cpp's: each value of rows of 1541 (96 x 16 + 5) bit for bit the scalar
 * statement of ggml_v_expf (ggml_reference.c), 16 lanes where this CPU's llama.cpp build would take them (AVX-512 with DQ, not capped by
 * GGUFSCOPE_SIMD), else 8 (AVX2), the row's last values through libm's expf as ggml_silu_f32; gates from -100 to
 * 100 reach the far-range forms. And within 4 ulp of the exact product where e^-gate is a normal float. */
Test(ops, swiglu_with_ggml_numerics_is_llama_cpps)
{
    kern_backend *be = kern_cpu_create_numerics(2, KERN_NUMERICS_GGML);
    const size_t row = 1541, rows = 40, n = row * rows;
    float *g = malloc(n * sizeof(float)), *u = malloc(n * sizeof(float)), *o = malloc(n * sizeof(float));
    uint32_t s = 5;
    for (size_t i = 0; i < n; i++) {
        g[i] = -100.0f + 200.0f * test_frand(&s);
        u[i] = test_frand(&s) * 4.0f - 2.0f;
    }
    cr_assert_eq(be->glu(be, KERN_ACT_SILU, g, u, n, row, o), KERN_OK);
    const bool scalar = strcmp(quant_simd_level(), "scalar") == 0;
    const bool wide = strcmp(quant_simd_level(), "avx512") == 0 && quant_cpu_has_avx512vl() && quant_cpu_has_avx512dq();
    const size_t width = scalar ? 1 : wide ? 16 : 8, body = row / width * width;
    size_t far = 0;
    for (size_t i = 0; i < n; i++) {
        const float e = i % row < body && !scalar ? ggml_ref_expf(-g[i], wide) : expf(-g[i]);
        const float want = g[i] / (1.0f + e) * u[i];
        cr_assert(memcmp(&o[i], &want, 4) == 0, "value %zu (column %zu): silu(%.9g) * %.9g = %.9g, ggml's %.9g", i,
                  i % row, g[i], u[i], o[i], want);
        far += fabsf(g[i]) > 126.0f * 0.6931f;
        if (fabsf(g[i]) < 87.0f) {
            const double ref = (double)g[i] / (1.0 + exp(-(double)g[i])) * u[i];
            cr_assert_leq(fabs(o[i] - ref), 4 * 0x1p-23 * fabs(ref) + 1e-37, "silu(%.9g) * %.9g = %.9g, exact %.9g",
                          g[i], u[i], o[i], ref);
        }
    }
    cr_assert_gt(far, 0, "no gate reached the far-range forms");
    cr_assert_eq(be->glu(be, KERN_ACT_SILU, g, u, n, 7, o), KERN_E_SHAPE, "rows must divide n");
    free(g);
    free(u);
    free(o);
    be->destroy(be);
}

/* The reference backend is the oracle of the tests and of --compare: its ops are held here to their definitions
 * worked out by hand, not to another backend. One key: the output is that key's value row; two keys of equal
 * scores: their mean; a window of 1: the query's own value. RMSNorm of (3, 4) with gains 2: (3, 4) * 2 / sqrt(12.5
 * + eps). SiLU(x) * u = x u / (1 + e^-x); GELU is the table's; soft-capping is cap * tanh(x / cap). */
Test(ops, the_reference_backend_is_its_definition)
{
    kern_backend *ref = kern_ref_create(1);
    cr_assert(ref);
    const kern_attn a = { .n_head = 2, .n_kv_head = 1, .head_dim = 2, .scale = 0.5f, .window = 0 };
    const float q[2 * 2 * 2] = { 1, 0, 0, 1, 1, 0, 0, 1 }, k[2 * 2] = { 1, 1, 1, 1 }, v[2 * 2] = { 2, 4, 6, 8 };
    float out[8];
    cr_assert_eq(ref->attention(ref, q, k, v, 1, 0, &a, out), KERN_OK); /* the first position sees one key */
    for (int h = 0; h < 2; h++)
        cr_assert(out[h * 2] == 2.0f && out[h * 2 + 1] == 4.0f, "head %d: %g %g", h, out[h * 2], out[h * 2 + 1]);
    cr_assert_eq(ref->attention(ref, q + 4, k, v, 1, 1, &a, out), KERN_OK); /* equal scores: the mean */
    for (int h = 0; h < 2; h++)
        cr_assert(out[h * 2] == 4.0f && out[h * 2 + 1] == 6.0f, "head %d: %g %g", h, out[h * 2], out[h * 2 + 1]);
    const kern_attn w1 = { .n_head = 2, .n_kv_head = 1, .head_dim = 2, .scale = 0.5f, .window = 1 };
    cr_assert_eq(ref->attention(ref, q + 4, k, v, 1, 1, &w1, out), KERN_OK); /* a window of one: its own value */
    cr_assert(out[0] == 6.0f && out[1] == 8.0f, "%g %g", out[0], out[1]);

    uint8_t *gb;
    gguf_tensor g = test_weight_tensor(GGUF_TENSOR_F32, 2, 1, &gb);
    g.n_dims = 1;
    ((float *)gb)[0] = ((float *)gb)[1] = 2.0f;
    const kern_weight kg = { .t = &g };
    const float x[2] = { 3, 4 };
    float y[2];
    cr_assert_eq(ref->rmsnorm(ref, &kg, x, 1, 2, 1e-5f, y), KERN_OK);
    for (int i = 0; i < 2; i++)
        cr_assert_eq(y[i], (float)(x[i] * 2.0 / sqrt(12.5 + (double)1e-5f)), "%d: %.9g", i, y[i]);
    free(gb);

    const float gate[4] = { -3.0f, -0.5f, 0.25f, 7.0f }, up[4] = { 1.5f, -2.0f, 3.0f, 0.5f };
    float o[4];
    cr_assert_eq(ref->glu(ref, KERN_ACT_SILU, gate, up, 4, 2, o), KERN_OK);
    for (int i = 0; i < 4; i++)
        cr_assert_eq(o[i], (float)((double)gate[i] * up[i] / (1.0 + exp(-(double)gate[i]))), "%d", i);
    cr_assert_eq(ref->glu(ref, KERN_ACT_GELU_TANH, gate, up, 4, 4, o), KERN_OK);
    for (int i = 0; i < 4; i++)
        cr_assert_eq(o[i], (float)((double)kern_gelu_ggml(gate[i]) * up[i]), "%d", i);
    float c[3] = { -100.0f, 0.5f, 30.0f };
    cr_assert_eq(ref->softcap(ref, c, 3, 30.0f), KERN_OK);
    cr_assert_eq(c[0], (float)(30.0 * tanh(-100.0 / 30.0)));
    cr_assert_eq(c[1], (float)(30.0 * tanh(0.5 / 30.0)));
    cr_assert_eq(c[2], (float)(30.0 * tanh(1.0)));
    ref->destroy(ref);
}

/* add_bias (PhiMoE's RMSNorms' bias, added after the gains as llama.cpp's build_norm adds it): the one row added to
 * every row, exactly, on the CPU and the reference backends; a bias of another length is refused. */
Test(ops, add_bias_adds_the_row_to_every_row)
{
    enum { N = 70, T = 3 };
    uint8_t *bb;
    gguf_tensor bt = test_weight_tensor(GGUF_TENSOR_F32, N, 1, &bb);
    bt.n_dims = 1;
    const kern_weight kb = { .t = &bt };
    const float *bv = (const float *)bb;
    float x[T * N], want[T * N];
    uint32_t s = 5;
    kern_backend *bes[2] = { kern_cpu_create(2), kern_ref_create(1) };
    for (int b = 0; b < 2; b++) {
        for (int i = 0; i < T * N; i++)
            want[i] = (x[i] = test_frand(&s)) + bv[i % N];
        cr_assert_eq(bes[b]->add_bias(bes[b], &kb, T, N, x), KERN_OK);
        cr_assert_eq(memcmp(x, want, sizeof x), 0, "backend %d", b);
        cr_assert_eq(bes[b]->add_bias(bes[b], &kb, T, N - 1, x), KERN_E_SHAPE, "backend %d: a bias of %d values", b, N);
        bes[b]->destroy(bes[b]);
    }
    free(bb);
}

/* LayerNorm (Cohere's norms; StarCoder2's with a bias): each row less its mean, over the square root of its variance
 * plus eps, times the gains (or none), plus the bias (or none), on the CPU and the reference backends, each within
 * 2e-6 of the definition in double; a row shifted by a constant normalises to the same values (the mean is taken
 * out), which an RMSNorm would not. */
Test(ops, layernorm_takes_the_mean_out)
{
    enum { N = 300, T = 3 };
    uint8_t *gb, *bb;
    gguf_tensor g = test_weight_tensor(GGUF_TENSOR_F32, N, 1, &gb), bt = test_weight_tensor(GGUF_TENSOR_F32, N, 1, &bb);
    g.n_dims = bt.n_dims = 1;
    const kern_weight kg = { .t = &g }, kb = { .t = &bt };
    const float *gv = (const float *)gb, *bv = (const float *)bb;
    static float x[T * N], out[T * N];
    uint32_t s = 17;
    for (int i = 0; i < N; i++) {
        x[i] = test_frand(&s) * 3.0f + 0.5f;
        x[N + i] = x[i] + 40.0f; /* row 1: row 0 shifted */
        x[2 * N + i] = test_frand(&s) * 0.01f;
    }
    kern_backend *bes[2] = { kern_cpu_create(2), kern_ref_create(1) };
    for (int b = 0; b < 2; b++)
        for (int gains = 0; gains < 4; gains++) { /* gains: bit 0 the gains, bit 1 the bias */
            cr_assert_eq(bes[b]->layernorm(bes[b], gains & 1 ? &kg : NULL, gains & 2 ? &kb : NULL, x, T, N, 1e-5f, out),
                         KERN_OK);
            for (int t = 0; t < T; t++) {
                const float *xr = x + (size_t)t * N;
                double mean = 0, var = 0;
                for (int i = 0; i < N; i++)
                    mean += xr[i];
                mean /= N;
                for (int i = 0; i < N; i++)
                    var += (xr[i] - mean) * (xr[i] - mean);
                const double scale = 1.0 / sqrt(var / N + 1e-5);
                for (int i = 0; i < N; i++) {
                    const double want = (xr[i] - mean) * scale * (gains & 1 ? gv[i] : 1.0) + (gains & 2 ? bv[i] : 0.0);
                    cr_assert_leq(fabs(out[(size_t)t * N + i] - want), 2e-6 * (1.0 + fabs(want)),
                                  "backend %d, gains %d, row %d, value %d: %g, want %g", b, gains, t, i,
                                  out[(size_t)t * N + i], want);
                }
            }
            for (int i = 0; i < N; i++)
                cr_assert_leq(fabsf(out[i] - out[N + i]), 1e-4f * (1.0f + fabsf(out[i])), "a shifted row normalises alike");
        }
    bes[0]->destroy(bes[0]);
    bes[1]->destroy(bes[1]);
    free(gb);
    free(bb);
}

/* add_rows (GPT-2's learned positions): x row t gains row row0 + t of the table, decoded as the type decodes it, added
 * after what x holds (ggml_add(inpL, pos)); rows past the table are refused. */
Test(ops, add_rows_adds_the_rows_of_the_positions)
{
    enum { N = 64, ROWS = 9, T = 3 };
    const uint32_t types[2] = { GGUF_TENSOR_F16, GGUF_TENSOR_Q8_0 };
    kern_backend *bes[2] = { kern_cpu_create(2), kern_ref_create(1) };
    for (int k = 0; k < 2; k++) {
        uint8_t *buf;
        gguf_tensor w = test_weight_tensor(types[k], N, ROWS, &buf);
        const kern_weight kw = { .t = &w };
        float rows[ROWS * N];
        cr_assert_eq(quant_dequantize_row(types[k], buf, rows, ROWS * N), QUANT_OK);
        for (int b = 0; b < 2; b++)
            for (int row0 = 0; row0 <= ROWS - T; row0 += ROWS - T) {
                float x[T * N], orig[T * N];
                uint32_t s = 5;
                for (int i = 0; i < T * N; i++)
                    orig[i] = x[i] = test_frand(&s);
                cr_assert_eq(bes[b]->add_rows(bes[b], &kw, row0, T, x), KERN_OK);
                for (int i = 0; i < T * N; i++)
                    cr_assert_eq(x[i], orig[i] + rows[(size_t)row0 * N + i], "type %u, backend %d, row0 %d, value %d",
                                 types[k], b, row0, i);
            }
        float x[T * N] = { 0 };
        cr_assert_eq(bes[0]->add_rows(bes[0], &kw, ROWS - T + 1, T, x), KERN_E_SHAPE, "the last row is past the table");
        cr_assert_eq(bes[0]->add_rows(bes[0], &kw, -1, T, x), KERN_E_SHAPE);
        free(buf);
    }
    bes[0]->destroy(bes[0]);
    bes[1]->destroy(bes[1]);
}
