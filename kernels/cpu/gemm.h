/* Prompt products of f32 rows as a GEMM on AVX-512 (gemm.c): 16 weight rows packed k-major into a panel,
 * tokens packed k-major in tiles of up to 24, the 16 rows' sums for one token in one register. */
#ifndef GGUFSCOPE_KERN_CPU_GEMM_H
#define GGUFSCOPE_KERN_CPU_GEMM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum { CPU_GEMM_ROWS = 16 };

/* Whether the GEMM may run: AVX-512F with FMA, and GGUFSCOPE_SIMD not capping below avx512. */
bool cpu_have_gemm(void);
/* Floats cpu_gemm_pack_x writes for T tokens of n values. */
size_t cpu_gemm_x_floats(int T, int64_t n);
/* Columns [k0, k1) of x (T rows of n) packed tile by tile, k-major, each tile's tokens padded to a multiple of 4
 * with zeros (threads pack disjoint column ranges of one xp). */
void cpu_gemm_pack_x(const float *x, int T, int64_t n, int64_t k0, int64_t k1, float *xp);
/* rows[0..nr) (nr <= 16, n floats each) into panel[k][16] (16 n floats), rows past nr as zeros. */
void cpu_gemm_pack_rows(const float *const rows[], int nr, int64_t n, float *panel);
/* out[t * ldo + r] = row r . x[t] for r < nr, t < T, from a packed panel and packed x. */
void cpu_gemm_panel(const float *panel, int nr, const float *xp, int T, int64_t n, float *out, int64_t ldo);

#endif
