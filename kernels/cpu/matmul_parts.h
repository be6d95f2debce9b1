/* Private to the CPU backend's matrix products (matmul.c, matmul_ggml.c): the token counts that pick a path, the
 * prefetch of the block a thread multiplies next, 64-byte aligned float buffers, and --numerics ggml's rounded
 * activations with the integer products that read them (matmul_ggml.c). */
#ifndef GGUFSCOPE_KERN_CPU_MATMUL_PARTS_H
#define GGUFSCOPE_KERN_CPU_MATMUL_PARTS_H

#include "cpu.h"
#include "quant.h"
#include "row_kernels.h"

#include <stdlib.h>

/* PANEL_MIN_TOKENS: from this many tokens on, --numerics ggml packs panels of 8 or 16 rows (cpu_act_gemm);
 * below it the 1- and 4-row dots read the weights as they lie. */
/* GEMM_MIN_TOKENS: from this many tokens on, rows decoded to f32 are multiplied as a GEMM (gemm.c) where
 * the CPU has AVX-512; below it, and on AVX2, by the 4-row dot kernels (dot.c). */
enum { PANEL_MIN_TOKENS = 4, GEMM_MIN_TOKENS = 8 };

/* count floats, 64-byte aligned (the SIMD kernels read 64-byte vectors; one straddling two lines costs two loads). */
static inline float *alloc_floats64(size_t count)
{
    return aligned_alloc(64, (count * sizeof(float) + 63) / 64 * 64);
}

/* The next row block's bytes, brought into cache a slice at a time while this block is multiplied. A prompt
 * product decodes (or packs) a block's rows and then spends long on them in registers and L1; the decode of
 * the next block then waited on memory, which the hardware prefetchers had stopped streaming during the
 * multiply: 13 % of an F16 prompt's time on AVX2 went to that wait (perf). The GEMM takes the bytes and spreads
 * the prefetches over its steps (gemm.c): a burst before it gained little there. The block is the one this
 * thread multiplies next, wherever it lies (the scheduler in cpu_matmul_many claims its next run of blocks
 * before starting the last of the current one). Measured on SmolLM2-135M F16, pp64, 2 threads: AVX2 prompts
 * 845 -> 928 tokens/s, AVX-512 1334 -> 1450, with the rows after this block; the next block's own rows were
 * then missed at each new run (a sixth of the blocks of a 60-block product) and at each matrix's end. */
typedef struct next_rows {
    const uint8_t *at;
    uint64_t left, slice;
} next_rows;

/* A row block's bytes in the mapping (rows are contiguous); at NULL and bytes 0 for none. */
typedef struct block_span {
    const uint8_t *at;
    uint64_t bytes;
} block_span;

/* The next block's bytes, fetched over `steps` calls of next_rows_fetch. */
static inline next_rows next_rows_over(block_span next, int steps)
{
    return (next_rows){ .at = next.at, .left = next.bytes,
                        .slice = (next.bytes / (uint64_t)(steps > 0 ? steps : 1) + 63) / 64 * 64 };
}

static inline void next_rows_fetch(next_rows *nx)
{
    const uint64_t n = nx->left < nx->slice ? nx->left : nx->slice;
    if (n == 0) /* nothing left, or no next block (at NULL: no arithmetic on it) */
        return;
    for (uint64_t i = 0; i < n; i += 64)
        __builtin_prefetch(nx->at + i);
    nx->at += n, nx->left -= n;
}

/* Activations rounded for weights of type t as llama.cpp rounds them: with an integer dot for the type,
 * quantized rows (*xq, *arb bytes each; as the dot's prep rewrote them where it has one) and *dot, and, for prompts
 * with a panel product (*gemm), each row's sums of 16 (*sums); else *xf, the f32 values the rounded activations
 * hold (and for BF16 the bf16 rows too, *xq). All NULL for F32 weights, which ggml multiplies with x as it is. */
typedef struct rounded_acts {
    cpu_act_kernel dot;
    cpu_act_gemm gemm;
    uint8_t *xq;
    uint64_t arb;
    int16_t *sums;
    float *xf;
} rounded_acts;

/* Rounds T rows of x (ne[0] values each) for weights t as llama.cpp does into *r (zeroed first), with `threads`
 * threads for long prompts, for the kernels a product of order_T tokens takes (T, or 1 where each row must come
 * out as a one-token product's). KERN_E_SHAPE when a row is no whole number of the activation type's blocks,
 * KERN_E_NOMEM when a buffer cannot be had (nothing left allocated). */
kern_status cpu_round_activations(const gguf_tensor *t, const float *x, int T, int order_T, int threads,
                                  rounded_acts *r);
void cpu_rounded_acts_free(rounded_acts *r);
/* Rows [r0, r0 + nr) against T rows of quantized activations (xq, arb bytes each), into y (T, ld):
 * 4 tokens at a time where the kernel takes 4 (each weight block unpacked once for the four). */
void cpu_act_rows(const gguf_tensor *t, cpu_act_kernel k, uint64_t rb, int64_t r0, int nr,
                  const uint8_t *xq, uint64_t arb, int T, float *y, int64_t ld);
/* Rows [r0, r0 + nr) against all T rows of quantized activations through panels packed into *panel
 * (allocated on first need; false when that fails), into y (T, ld), fetching the next block's bytes meanwhile. */
bool cpu_act_panel_rows(const gguf_tensor *t, const cpu_act_gemm *g, uint64_t rb, int64_t r0, int nr,
                        const uint8_t *xq, uint64_t arb, const int16_t *sums, int T, uint8_t **panel, float *y,
                        int64_t ld, block_span next);

#endif
