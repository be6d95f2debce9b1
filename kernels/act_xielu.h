/*
 * Apertus's activation, xIELU, one formula for every backend: ggml_xielu (ggml.c: the parameters it stores) and
 * op_xielu (ggml-cpu/unary-ops.cpp: the function of them), as llama.cpp's apertus graph calls it with each layer's
 * xielu.alpha_n, alpha_p, beta and eps:
 *   alpha_p' = softplus(alpha_p), alpha_n' = beta + softplus(alpha_n)  (softplus as ggml_compute_softplus_f32)
 *   x > 0: alpha_p' x^2 + beta x;  else: (expm1(min(x, eps)) - x) alpha_n' + beta x
 * The comparisons are ggml's: a NaN takes the second branch, and fminf(NaN, eps) is eps, so it stays NaN through the
 * "- x" and "+ beta x" that follow.
 */
#ifndef GGUFSCOPE_ACT_XIELU_H
#define GGUFSCOPE_ACT_XIELU_H

#include "kern.h"

#include <math.h>

#ifdef __CUDACC__
#define ACT_XIELU_FN __host__ __device__ static inline
#else
#define ACT_XIELU_FN static inline
#endif

/* ggml_compute_softplus_f32: x itself above 20, where log(1 + e^x) is x in float */
ACT_XIELU_FN float act_xielu_softplus(float x)
{
    return x > 20.0f ? x : logf(1.0f + expf(x));
}

/* A layer's parameters as the file gives them, as ggml_xielu stores them */
static inline kern_xielu kern_xielu_of(float alpha_n, float alpha_p, float beta, float eps)
{
    kern_xielu p;
    p.alpha_n = beta + act_xielu_softplus(alpha_n);
    p.alpha_p = act_xielu_softplus(alpha_p);
    p.beta = beta;
    p.eps = eps;
    return p;
}

/* in f32 as ggml computes it */
ACT_XIELU_FN float act_xielu(float x, float alpha_n, float alpha_p, float beta, float eps)
{
    if (x > 0.0f)
        return alpha_p * x * x + beta * x;
    return (expm1f(fminf(x, eps)) - x) * alpha_n + beta * x;
}

/* in double, rounded once by the caller: the reference backend's */
ACT_XIELU_FN double act_xielu_double(float x, const kern_xielu *p)
{
    const double v = x;
    if (x > 0.0f)
        return (double)p->alpha_p * v * v + (double)p->beta * v;
    return (expm1(fmin(v, (double)p->eps)) - v) * (double)p->alpha_n + (double)p->beta * v;
}

#endif
