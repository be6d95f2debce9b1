/* Prompt products as a GEMM on AVX-512 (gemm.c): 16 weight rows packed k-major into a panel, tokens packed
 * k-major in tiles of up to 24, the 16 rows' sums for one token in one register. */
#ifndef GGUFSCOPE_KERN_CPU_GEMM_H
#define GGUFSCOPE_KERN_CPU_GEMM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum { CPU_GEMM_ROWS = 16 };

/* What one 32-bit word of a row and of a token holds, and so how a step of k multiplies: an f32 value (FMA), or
 * two consecutive bf16 values (vdpbf16ps, AVX512-BF16; rows of an even length, --numerics ggml on BF16 weights). */
typedef enum cpu_gemm_kind { CPU_GEMM_F32, CPU_GEMM_BF16_PAIRS } cpu_gemm_kind;

/* Whether the GEMM may run for this kind: AVX-512F with FMA, GGUFSCOPE_SIMD not capping below avx512, and for the
 * pairs AVX512-BF16. */
bool cpu_have_gemm(cpu_gemm_kind kind);
/* Words (floats) cpu_gemm_pack_x writes for T tokens of `words` words. */
size_t cpu_gemm_x_words(int T, int64_t words);
/* Word columns [k0, k1) of x (T rows of `words` 32-bit words: floats, or bf16 pairs) packed tile by tile,
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
/* out[t * ldo + r] = row r . x[t] for r < nr, t < T, from a packed panel and packed x of that kind; meanwhile
 * ahead_bytes at `ahead` (the next panel's rows; NULL: none) are brought into cache a line at a time. */
void cpu_gemm_panel(cpu_gemm_kind kind, const float *panel, int nr, const float *xp, int T, int64_t words,
                    float *out, int64_t ldo, const void *ahead, size_t ahead_bytes);

#endif
