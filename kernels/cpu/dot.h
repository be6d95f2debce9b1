/* Dot-product microkernels of the CPU backend: a few weight rows against a
 * few token rows at once, so every load of x feeds several rows. */
#ifndef GGUFSCOPE_KERN_CPU_DOT_H
#define GGUFSCOPE_KERN_CPU_DOT_H

#include <stdint.h>

/* out[t * ldo + r] = w[r] . x[t]  for r < nr (<= 4), t < nt, x[t] = x + t * n. */
void cpu_dot_rows(const float *const w[4], int nr, const float *x, int nt, int64_t n, float *out, int64_t ldo);
/* The same with rows of n f16 values (IEEE half) read in place. */
void cpu_dot_rows_f16_tokens(const uint16_t *const w[4], int nr, const float *x, int nt, int64_t n, float *out,
                             int64_t ldo);
/* out[r] = w[r] . x for r < nr (<= 4), w[r] n f16 values (IEEE half) read in place. */
void cpu_dot_rows_f16(const uint16_t *const w[4], int nr, const float *x, int64_t n, float *out);

#endif
