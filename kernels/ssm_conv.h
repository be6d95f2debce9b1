/*
 * One channel of kern.h's ssm_conv, one loop for every backend (the CPU's threads and the CUDA threads each take a
 * channel c): ggml_ssm_conv's sum tap by tap in f32, its bias where it has one, then ggml_silu's x / (1 + e^-x) where silu; the channel's
 * inputs before (state, rows of n, oldest first) slide along and are written back.
 */
#ifndef GGUFSCOPE_SSM_CONV_H
#define GGUFSCOPE_SSM_CONV_H

#include <math.h>
#include <stdbool.h>
#include <stddef.h>

#ifdef __CUDACC__
#define SSM_CONV_FN __host__ __device__ static inline
#else
#define SSM_CONV_FN static inline
#endif

enum { SSM_CONV_MAX_TAPS = 64 };

/* taps: channel c's d_conv (<= SSM_CONV_MAX_TAPS) weights; bias: the n channels' biases, or NULL; x, out: (T, n). */
SSM_CONV_FN void ssm_conv_channel(const float *taps, const float *bias, const float *x, int T, int n, int c, int d_conv,
                                  bool silu, float *state, float *out)
{
    const int past = d_conv - 1;
    float win[SSM_CONV_MAX_TAPS];
    for (int j = 0; j < past; j++)
        win[j] = state[(size_t)j * n + c];
    for (int t = 0; t < T; t++) {
        win[past] = x[(size_t)t * n + c];
        float sum = 0.0f;
        for (int j = 0; j < d_conv; j++)
            sum += win[j] * taps[j];
        if (bias) /* ggml_add after the convolution (Mamba-2's conv1d bias) */
            sum += bias[c];
        out[(size_t)t * n + c] = silu ? sum / (1.0f + expf(-sum)) : sum;
        for (int j = 0; j < past; j++)
            win[j] = win[j + 1];
    }
    for (int j = 0; j < past; j++)
        state[(size_t)j * n + c] = win[j];
}

#endif
