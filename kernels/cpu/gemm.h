/* Prompt products as a GEMM on AVX-512 (gemm.c): 16 weight rows packed k-major into a panel, tokens packed
 * k-major in tiles of up to 24, the 16 rows' sums for one token in one register. */
#ifndef GGUFSCOPE_KERN_CPU_GEMM_H
#define GGUFSCOPE_KERN_CPU_GEMM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum { CPU_GEMM_ROWS = 16 };

/* Whether the GEMM may run: AVX-512F with FMA, GGUFSCOPE_SIMD not capping below avx512. Rows and tokens are f32
 * values ("words" below: one step of k each). */
bool cpu_have_gemm(void);
/* Words (floats) cpu_gemm_pack_x writes for T tokens of `words` words. */
size_t cpu_gemm_x_words(int T, int64_t words);
/* Word columns [k0, k1) of x (T rows of `words` floats) packed tile by tile,
 * k-major, each tile's tokens padded to a multiple of 4 with zeros (threads pack disjoint column ranges of one
 * xp). */
void cpu_gemm_pack_x(const void *x, int T, int64_t words, int64_t k0, int64_t k1, float *xp);
/* rows[0..nr) (nr <= 16, `words` words each, any alignment) into panel[k][16] (16 words per k), rows past nr
 * as zeros. */
void cpu_gemm_pack_rows(const void *const rows[], int nr, int64_t words, float *panel);
/* 16 F16 (bf16 false) or BF16 rows of n values (n a multiple of 16) straight into an f32 panel, each value
 * widened exactly (an F16 NaN comes out quiet; the product is NaN all the same); false, packing nothing, for
 * other shapes or without AVX-512. */
bool cpu_gemm_pack_rows_half(const uint16_t *const rows[], bool bf16, int nr, int64_t n, float *panel);
/* out[t * ldo + r] = row r . x[t] for r < nr, t < T, from a packed panel and packed x; meanwhile ahead_bytes at
 * `ahead` (the next panel's rows; NULL: none) are brought into cache a line at a time. */
void cpu_gemm_panel(const float *panel, int nr, const float *xp, int T, int64_t words, float *out, int64_t ldo,
                    const void *ahead, size_t ahead_bytes);

#endif
