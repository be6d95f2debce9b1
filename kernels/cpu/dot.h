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
/* out[t * ldo + r] = kern_dot_f32(w + r * ldw, x + t * ldx, n) bit for bit, for r < nr, t < nt: any number of
 * rows against any number of tokens, each pair summed in kern_dot_f32's order (attention's scores, whose
 * rounding --numerics ggml reproduces), two rows by three tokens at a time. */
void cpu_dot_grid(const float *w, int64_t ldw, int nr, const float *x, int64_t ldx, int nt, int64_t n, float *out,
                  int64_t ldo);
/* out[r] = w[r] . x for r < nr (<= 4), w[r] n f16 values (IEEE half) read in place. */
void cpu_dot_rows_f16(const uint16_t *const w[4], int nr, const float *x, int64_t n, float *out);

#endif
