/*
 * YaRN's rotary angles (Peng et al. 2023, "YaRN: Efficient Context Window Extension"), as ggml computes them
 * (ggml-cpu/ops.cpp rope_yarn and rope_yarn_ramp; ggml.c ggml_rope_yarn_corr_dims), in one place for every
 * backend. Pair i's angle is the interpolated one (theta * freq_scale) blended towards the original (theta) by
 *   mix = ramp(i) * ext_factor,  ramp(i) = 1 - clamp((i - corr_lo) / max(0.001, corr_hi - corr_lo), 0, 1)
 * (the high-frequency pairs, below corr_lo, keep their original angle), and the cosines and sines are scaled by
 * attn_factor * (1 + 0.1 ln(1 / freq_scale)) when ext_factor != 0.
 */
#ifndef GGUFSCOPE_ROPE_YARN_H
#define GGUFSCOPE_ROPE_YARN_H

#include "kern.h"

#include <math.h>

#ifdef __CUDACC__
#define ROPE_YARN_FN __host__ __device__ static inline
#else
#define ROPE_YARN_FN static inline
#endif

/* in f32, as ggml computes it (--numerics ggml) */
ROPE_YARN_FN float rope_yarn_ramp(float lo, float hi, int i)
{
    const float y = ((float)i - lo) / fmaxf(0.001f, hi - lo);
    return 1.0f - fminf(1.0f, fmaxf(0.0f, y));
}

/* The angle of pair i whose unscaled angle is theta (already divided by its frequency factor), in double: the ramp
 * too, since at the angles of long contexts (10^4 radians) f32's rounding of the ramp moves them by 10^-4. */
ROPE_YARN_FN double rope_yarn_theta(double theta, float freq_scale, float ext_factor, float lo, float hi, int i)
{
    const double interp = theta * freq_scale;
    if (ext_factor == 0.0f)
        return interp;
    const double y = ((double)i - lo) / fmax(0.001, (double)hi - lo);
    const double mix = (1.0 - fmin(1.0, fmax(0.0, y))) * ext_factor;
    return interp * (1.0 - mix) + theta * mix;
}

/* The factor on the cosines and sines, in double. */
ROPE_YARN_FN double rope_yarn_mscale(float freq_scale, float ext_factor, float attn_factor)
{
    return ext_factor != 0.0f ? attn_factor * (1.0 + 0.1 * log(1.0 / freq_scale)) : attn_factor;
}

/* ggml_rope_yarn_corr_dims: the pairs whose wavelength fits beta_fast and beta_slow rotations in the original
 * context bound the ramp, in f32 as ggml computes them. */
static inline void rope_yarn_corr_dims(int n_rot, int n_ctx_orig, float base, float beta_fast, float beta_slow,
                                       float *lo, float *hi)
{
    const float pi = 3.14159265358979323846f;
    const float start = floorf((float)n_rot * logf((float)n_ctx_orig / (beta_fast * 2 * pi)) / (2 * logf(base)));
    const float end = ceilf((float)n_rot * logf((float)n_ctx_orig / (beta_slow * 2 * pi)) / (2 * logf(base)));
    *lo = fmaxf(0.0f, start);
    *hi = fminf((float)(n_rot - 1), end);
}

#endif
