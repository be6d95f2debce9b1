/*
 * A gated delta net's two recurrent ops on the CPU (kern.h's ssm_conv and delta_net): the short convolution over the
 * inputs before and its SiLU, and the delta rule's state, token by token. llama.cpp's CPU backend computes both the
 * same way (ggml-cpu/ops.cpp: ggml_compute_forward_ssm_conv_f32, the sums in f32 tap by tap; ..._gated_delta_net,
 * one state per value head); the state is the context's, so a prompt and the decode steps after it continue one
 * recurrence. Heads and channels are independent: they share the threads.
 */
#include "cpu.h"
#include "ssm_conv.h"

#include <math.h>
#include <stdlib.h>

kern_status cpu_ssm_conv(kern_backend *b, const kern_weight *w, const float *x, int T, int n, int d_conv, bool silu,
                         float *state, float *out)
{
    if (T < 0 || n < 1 || d_conv < 1 || d_conv > SSM_CONV_MAX_TAPS)
        return KERN_E_SHAPE;
    const float *taps;
    float *owned;
    const kern_status s = w && w->t ? cpu_vector(w, (int64_t)n * d_conv, &taps, &owned) : KERN_E_SHAPE;
    if (s)
        return s;
#pragma omp parallel for num_threads(cpu_threads(b)) if ((int64_t)n * T >= 4096)
    for (int c = 0; c < n; c++)
        ssm_conv_channel(taps + (size_t)c * d_conv, x, T, n, c, d_conv, silu, state, out);
    free(owned);
    return KERN_OK;
}

/* 1 / max(|x|, eps) for a row of d (ggml_l2_norm: the sum of squares in double). */
static float l2_scale(const float *x, int d, float eps)
{
    double sum = 0.0;
    for (int i = 0; i < d; i++)
        sum += (double)x[i] * x[i];
    return 1.0f / fmaxf(sqrtf((float)sum), eps);
}

static float dot(const float *a, const float *b, int d)
{
    float sum = 0.0f;
    for (int i = 0; i < d; i++)
        sum += a[i] * b[i];
    return sum;
}

kern_status cpu_delta_net(kern_backend *b, const float *qkv, const float *beta, const float *alpha,
                          const kern_weight *dt, const kern_weight *a, float *state, int T, int hk, int hv,
                          bool grouped, int d, float eps, float *out)
{
    if (T < 0 || hk < 1 || hv < 1 || d < 1 || d > 4096 || hv % hk)
        return KERN_E_SHAPE;
    const float *dts, *as;
    float *dts_owned = NULL, *as_owned = NULL;
    kern_status vs = dt && dt->t && a && a->t ? cpu_vector(dt, hv, &dts, &dts_owned) : KERN_E_SHAPE;
    if (!vs)
        vs = cpu_vector(a, hv, &as, &as_owned);
    if (vs) {
        free(dts_owned);
        return vs;
    }
    const size_t row = (size_t)(2 * hk + hv) * d;
    const float scale = 1.0f / sqrtf((float)d);
    kern_status st = KERN_OK;
#pragma omp parallel num_threads(cpu_threads(b)) if (hv > 1)
    {
        float *qn = malloc(2 * (size_t)d * sizeof *qn);
        if (!qn) {
#pragma omp atomic write
            st = KERN_E_NOMEM;
        }
#pragma omp for
        for (int h = 0; h < hv; h++) {
            if (!qn)
                continue;
            float *kn = qn + d, *S = state + (size_t)h * d * d;
            const int kh = grouped ? h / (hv / hk) : h % hk;
            for (int t = 0; t < T; t++) {
                const float *r = qkv + (size_t)t * row;
                const float *q = r + (size_t)kh * d, *k = r + (size_t)(hk + kh) * d, *v = r + (size_t)(2 * hk + h) * d;
                const float qs = l2_scale(q, d, eps), ks = l2_scale(k, d, eps);
                for (int i = 0; i < d; i++) {
                    qn[i] = q[i] * qs;
                    kn[i] = k[i] * ks;
                }
                const float x = alpha[(size_t)t * hv + h] + dts[h];
                const float g = (x > 20.0f ? x : logf(1.0f + expf(x))) * as[h]; /* ggml_softplus, times a */
                const float decay = expf(g);
                const float bt = 1.0f / (1.0f + expf(-beta[(size_t)t * hv + h]));
                for (size_t i = 0; i < (size_t)d * d; i++)
                    S[i] *= decay;
                for (int j = 0; j < d; j++) {
                    float *Sj = S + (size_t)j * d;
                    const float delta = (v[j] - dot(Sj, kn, d)) * bt;
                    for (int i = 0; i < d; i++)
                        Sj[i] += kn[i] * delta;
                }
                float *o = out + (size_t)t * hv * d + (size_t)h * d;
                for (int j = 0; j < d; j++)
                    o[j] = dot(S + (size_t)j * d, qn, d) * scale;
            }
        }
        free(qn);
    }
    free(dts_owned);
    free(as_owned);
    return st;
}
