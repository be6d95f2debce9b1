/*
 * One row of kern.h's ssm_scan (Mamba's selective scan), one loop for every backend (the CPU's threads and the CUDA
 * threads each take a row i of a head h): ggml_compute_forward_ssm_scan_f32 (ggml-cpu/ops.cpp) in its two forms, a
 * decay rate per head (Mamba-2: exp(dt A) once) or one per state value (Mamba-1: exp(dt A[j]) for each), the dt bias
 * added first as llama.cpp's mamba layers add it (ggml_add), softplus as ggml_compute_softplus_f32, the state's d_state
 * values updated and read by C in order, then D x added (ggml_mul, ggml_add).
 */
#ifndef GGUFSCOPE_SSM_SCAN_H
#define GGUFSCOPE_SSM_SCAN_H

#include <math.h>
#include <stdbool.h>
#include <stddef.h>

#ifdef __CUDACC__
#define SSM_SCAN_FN __host__ __device__ static inline
#else
#define SSM_SCAN_FN static inline
#endif

typedef struct ssm_scan_shape {
    int T, n_head, head_dim, n_group, d_state;
    size_t ld_dt; /* dt's rows are this far apart */
} ssm_scan_shape;

/* xbc: (T, n_head head_dim + 2 n_group d_state) rows of x, then B and C of each group; dt: T rows of n_head (ld_dt
 * apart); a: head h's decay rate, or its d_state rates where a_per_state; s: the row's state (d_state); out: (T, n_head
 * head_dim). Head h reads group h / (n_head / n_group). */
SSM_SCAN_FN void ssm_scan_row(const ssm_scan_shape *sh, const float *xbc, const float *dt, float dt_bias, const float *a,
                              bool a_per_state, float d, int h, int i, float *s, float *out)
{
    const int inner = sh->n_head * sh->head_dim, g = h / (sh->n_head / sh->n_group), S = sh->d_state;
    const size_t ld = (size_t)inner + 2 * (size_t)sh->n_group * S;
    for (int t = 0; t < sh->T; t++) {
        const float *row = xbc + (size_t)t * ld;
        const float *B = row + inner + (size_t)g * S, *C = row + inner + (size_t)sh->n_group * S + (size_t)g * S;
        const float v = dt[(size_t)t * sh->ld_dt + h] + dt_bias;
        const float soft = v > 20.0f ? v : logf(1.0f + expf(v));
        const float decay = expf(soft * a[0]);
        const float x = row[(size_t)h * sh->head_dim + i], x_dt = x * soft;
        float sum = 0.0f;
        for (int j = 0; j < S; j++) {
            const float state = s[j] * (a_per_state ? expf(soft * a[j]) : decay) + B[j] * x_dt;
            sum += state * C[j];
            s[j] = state;
        }
        out[(size_t)t * inner + (size_t)h * sh->head_dim + i] = sum + x * d;
    }
}

#endif
