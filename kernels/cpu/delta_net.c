/*
 * The recurrent layers' ops on the CPU (kern.h's ssm_conv, ssm_scan and delta_net): the short convolution over the
 * inputs before and its SiLU, and the delta rule's state, token by token. llama.cpp's CPU backend computes both the
 * same way (ggml-cpu/ops.cpp: ggml_compute_forward_ssm_conv_f32, the sums in f32 tap by tap; ..._gated_delta_net,
 * one state per value head); the state is the context's, so a prompt and the decode steps after it continue one
 * recurrence. Heads and channels are independent: they share the threads.
 */
#include "cpu.h"
#include "ssm_conv.h"
#include "ssm_scan.h"

#include <math.h>
#include <stdlib.h>

kern_status cpu_ssm_conv(kern_backend *b, const kern_weight *w, const kern_weight *bias, const float *x, int T, int n,
                         int d_conv, bool silu, float *state, float *out)
{
    if (T < 0 || n < 1 || d_conv < 1 || d_conv > SSM_CONV_MAX_TAPS)
        return KERN_E_SHAPE;
    const float *taps, *biases = NULL;
    float *owned, *bias_owned = NULL;
    kern_status s = w && w->t ? cpu_vector(w, (int64_t)n * d_conv, &taps, &owned) : KERN_E_SHAPE;
    if (s)
        return s;
    if (bias && (s = bias->t ? cpu_vector(bias, n, &biases, &bias_owned) : KERN_E_SHAPE)) {
        free(owned);
        return s;
    }
#pragma omp parallel for num_threads(cpu_threads(b)) if ((int64_t)n * T >= 4096)
    for (int c = 0; c < n; c++)
        ssm_conv_channel(taps + (size_t)c * d_conv, biases, x, T, n, c, d_conv, silu, state, out);
    free(owned);
    free(bias_owned);
    return KERN_OK;
}

kern_status cpu_ssm_scan(kern_backend *b, const float *xbc, const float *dt, size_t ld_dt, const kern_weight *dt_bias,
                         const kern_weight *a, const kern_weight *d, float *state, int T, int n_head, int head_dim,
                         int n_group, int d_state, float *out)
{
    if (T < 0 || n_head < 1 || head_dim < 1 || n_group < 1 || d_state < 1 || n_head % n_group)
        return KERN_E_SHAPE;
    const kern_weight *const vecs[3] = { dt_bias, a, d };
    const float *v[3] = { 0 };
    float *owned[3] = { 0 };
    /* a decay rate per head (Mamba-2), or per head and state value (Mamba-1's A: d_state x n_head) */
    const bool per_state = a && a->t && a->t->n_elements == (uint64_t)n_head * (uint64_t)d_state && d_state > 1;
    const int a_len = per_state ? d_state : 1;
    kern_status s = KERN_OK;
    for (int i = 0; i < 3 && !s; i++)
        s = vecs[i] && vecs[i]->t ? cpu_vector(vecs[i], (int64_t)n_head * (i == 1 ? a_len : 1), &v[i], &owned[i])
                                  : KERN_E_SHAPE;
    if (!s) {
        const ssm_scan_shape sh = { T, n_head, head_dim, n_group, d_state, ld_dt };
        const int rows = n_head * head_dim;
#pragma omp parallel for num_threads(cpu_threads(b)) if ((int64_t)rows * T * d_state >= 65536)
        for (int r = 0; r < rows; r++) {
            const int h = r / head_dim;
            ssm_scan_row(&sh, xbc, dt, v[0][h], v[1] + (size_t)h * a_len, per_state, v[2][h], h, r % head_dim,
                         state + (size_t)r * d_state, out);
        }
    }
    for (int i = 0; i < 3; i++)
        free(owned[i]);
    return s;
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
