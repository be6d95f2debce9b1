/*
 * The rules of a row's statistics, in one place for every backend: NaNs are
 * counted and left out of everything else, infinities are counted and kept
 * (so they show in min/max and make rms/mean infinite), and a row with no
 * value other than NaN has NaN rms/mean/min/max. The CPU kernel feeds one
 * accumulator a whole row; the CUDA kernel feeds one per thread, merges
 * them, then finishes. --compare holds the two backends' statistics against
 * each other, so they must not drift apart.
 */
#ifndef GGUFSCOPE_ROW_STATS_H
#define GGUFSCOPE_ROW_STATS_H

#include "kern.h"

#include <math.h>

#ifdef __CUDACC__
#define ROW_STATS_FN __host__ __device__ static inline
#else
#define ROW_STATS_FN static inline
#endif

typedef struct row_stats_acc {
    double sum, ss;
    float mn, mx, ma;
    unsigned n_nan, n_inf, n_counted; /* n_counted: the values that are not NaN */
} row_stats_acc;

ROW_STATS_FN row_stats_acc row_stats_start(void)
{
    row_stats_acc a = { 0.0, 0.0, INFINITY, -INFINITY, 0.0f, 0, 0, 0 };
    return a;
}

ROW_STATS_FN void row_stats_add(row_stats_acc *a, float v)
{
    if (isnan(v)) {
        a->n_nan++;
        return;
    }
    if (isinf(v))
        a->n_inf++;
    a->sum += v;
    a->ss += (double)v * v;
    a->mn = v < a->mn ? v : a->mn;
    a->mx = v > a->mx ? v : a->mx;
    a->ma = fabsf(v) > a->ma ? fabsf(v) : a->ma;
    a->n_counted++;
}

ROW_STATS_FN kern_row_stats row_stats_finish(const row_stats_acc *a)
{
    const unsigned n = a->n_counted;
    kern_row_stats s;
    s.rms = n ? (float)sqrt(a->ss / n) : NAN;
    s.mean = n ? (float)(a->sum / n) : NAN;
    s.min = n ? a->mn : NAN;
    s.max = n ? a->mx : NAN;
    s.max_abs = a->ma;
    s.n_nan = a->n_nan;
    s.n_inf = a->n_inf;
    return s;
}

#endif
