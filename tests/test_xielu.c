/*
 * Apertus's activation, the xielu op (kernels/act_xielu.h), against ggml's definition restated here (ggml.c's
 * ggml_xielu stores beta + softplus(alpha_n) and softplus(alpha_p); ggml-cpu's op_xielu applies them) on the CPU in
 * both numerics and the reference backend, including the values where its branches meet and the ones that are not
 * numbers.
 */
#include "kern.h"
#include "act_xielu.h"

#include <criterion/criterion.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ggml_compute_softplus_f32 */
static float softplus_ggml(float x)
{
    return x > 20.0f ? x : logf(1.0f + expf(x));
}

/* op_xielu with ggml_xielu's stored parameters */
static float xielu_ggml(float x, float alpha_n, float alpha_p, float beta, float eps)
{
    const float an = beta + softplus_ggml(alpha_n), ap = softplus_ggml(alpha_p);
    if (x > 0.0f)
        return ap * x * x + beta * x;
    const float m = fminf(x, eps);
    return (expm1f(m) - x) * an + beta * x;
}

static bool same_float(float a, float b)
{
    return (isnan(a) && isnan(b)) || memcmp(&a, &b, sizeof a) == 0;
}

/* The file's parameters become ggml's: softplus of alpha_p, beta plus softplus of alpha_n, softplus passing values
 * above 20 as they are. */
Test(xielu, parameters_are_stored_as_ggml_xielu_stores_them)
{
    const kern_xielu p = kern_xielu_of(0.8f, 0.3f, 0.5f, -1e-6f);
    cr_expect(same_float(p.alpha_n, 0.5f + logf(1.0f + expf(0.8f))));
    cr_expect(same_float(p.alpha_p, logf(1.0f + expf(0.3f))));
    cr_expect_float_eq(p.alpha_n, 0.5 + log1p(exp(0.8)), 1e-6);
    cr_expect_eq(p.beta, 0.5f);
    cr_expect_eq(p.eps, -1e-6f);
    const kern_xielu big = kern_xielu_of(25.0f, 20.5f, 0.0f, 0.0f);
    cr_expect_eq(big.alpha_n, 25.0f, "softplus(x) is x above 20");
    cr_expect_eq(big.alpha_p, 20.5f);
}

/* Each backend's op on a sweep across both branches and the points where they meet (0, eps, negative zero), large
 * values, infinities and NaN: the CPU's bit for bit ggml's, in both numerics and past the size it splits across
 * threads; the reference's (double, rounded once) within 4 f32 roundings of its terms' size where it is finite (the
 * terms cancel); x and out the same array. */
Test(xielu, the_op_is_ggml_xielu_on_every_backend)
{
    kern_backend *bes[3] = { kern_cpu_create(2), kern_cpu_create_numerics(2, KERN_NUMERICS_GGML), kern_ref_create(1) };
    const float alpha_n = 0.6f, alpha_p = 0.9f, beta = 0.45f, eps = -1e-6f;
    const kern_xielu p = kern_xielu_of(alpha_n, alpha_p, beta, eps);
    const size_t n = 40009;
    float *x = malloc(n * sizeof(float)), *out = malloc(n * sizeof(float));
    cr_assert(x && out);
    for (size_t i = 0; i < n; i++)
        x[i] = -30.0f + 60.0f * (float)i / (float)n;
    const float special[] = { 0.0f, -0.0f, -1e-6f, -2e-6f, -5e-7f, 1e-30f, -1e-30f, 1e18f, -1e18f, INFINITY,
                              -INFINITY, NAN, 88.0f, -88.0f };
    memcpy(x, special, sizeof special);
    for (int k = 0; k < 3; k++) {
        cr_assert_eq(bes[k]->xielu(bes[k], x, n, &p, out), KERN_OK, "%s", bes[k]->name);
        for (size_t i = 0; i < n; i++) {
            const float want = xielu_ggml(x[i], alpha_n, alpha_p, beta, eps);
            if (k < 2) {
                cr_assert(same_float(out[i], want), "%s: xielu(%.9g) = %.9g, ggml's %.9g", bes[k]->name, x[i], out[i],
                          want);
            } else if (isfinite(want)) {
                /* the terms' size: their sum cancels, and ggml's f32 rounding of each shows at their scale */
                const double v = x[i];
                const double terms = v > 0 ? fabs(p.alpha_p * v * v) + fabs(beta * v)
                                           : fabs((expm1(fmin(v, eps)) - v) * p.alpha_n) + fabs(beta * v);
                cr_assert_leq(fabs((double)out[i] - want), 4 * FLT_EPSILON * terms + 1e-30,
                              "ref: xielu(%.9g) = %.9g, ggml's %.9g", x[i], out[i], want);
            } else {
                cr_assert(same_float(out[i], want) || (isnan(want) && isnan(out[i])), "ref: xielu(%.9g) = %.9g, %.9g",
                          x[i], out[i], want);
            }
        }
        /* in place */
        float y[4] = { -2.0f, -1e-6f, 0.5f, 3.0f };
        cr_assert_eq(bes[k]->xielu(bes[k], y, 4, &p, y), KERN_OK);
        cr_expect_float_eq(y[3], p.alpha_p * 9.0f + beta * 3.0f, 1e-5f);
        cr_expect_float_eq(y[0], (expm1f(-2.0f) + 2.0f) * p.alpha_n - 2.0f * beta, 1e-5f);
        bes[k]->destroy(bes[k]);
    }
    /* the branches: x > 0 is the quadratic, 0 and below the exponential (0 gives 0 there, as it does above) */
    cr_expect_eq(xielu_ggml(0.0f, alpha_n, alpha_p, beta, eps), (expm1f(-1e-6f) - 0.0f) * p.alpha_n);
    cr_expect(isnan(xielu_ggml(NAN, alpha_n, alpha_p, beta, eps)), "a NaN stays NaN (fminf drops it, - x keeps it)");
    free(x);
    free(out);
}
