/*
 * row_kernels.h — the CPU backend's kernels for rows of a weight type, by type and SIMD level (row_kernels.c's
 * table): fused dots of a quantized row with f32 x (generation), 16-row panels decoded for the f32 GEMM (prompts),
 * and, for --numerics ggml, llama.cpp's integer dots and prompt products against activations quantized as its CPU
 * backend quantizes them (quant/'s quant_act_quantize). The decoders themselves are quant/'s.
 */
#ifndef GGUFSCOPE_KERNELS_CPU_ROW_KERNELS_H
#define GGUFSCOPE_KERNELS_CPU_ROW_KERNELS_H

#include "quant.h"

#include <stdbool.h>
#include <stdint.h>

/* Rows r = 0..15 at base + r * row_bytes, values [k0, k0 + kc) (whole blocks), decoded into a GEMM's k-major
 * panel: panel[(k - k0) * 16 + r] = the row function's float for value k of row r, bit for bit. NULL where the
 * type or the level has none (QUANT_IMPL_BEST on the avx512 level only: Q4_0, Q4_1, Q5_0, Q5_1, IQ4_NL). */
typedef void (*cpu_panel16_fn)(const void *base, uint64_t row_bytes, int64_t k0, int64_t kc, float *panel);
cpu_panel16_fn cpu_panel16_function(uint32_t type, quant_impl impl);
/* Fused dot product of one row of n values of a quantized type with f32 x,
 * decoded in registers (the matrix-vector path). Agrees with
 * dequantize-then-dot to f32 rounding, not bit for bit. Some kernels read x
 * rearranged: `prep`, when not NULL, writes that form of x (n values) into
 * xp, which must hold cpu_dot_prep_floats(n) floats (best 64-byte aligned:
 * the AVX-512 dots read it in 64-byte vectors), once per product, and
 * `dot` is then given xp for every row. */
typedef float (*cpu_dot_fn)(const void *row, const float *x, int64_t n);
typedef void (*cpu_dot_prep_fn)(const float *x, float *xp, int64_t n);
typedef struct cpu_dot_kernel {
    cpu_dot_fn dot;        /* NULL when the type or the CPU has none, or for QUANT_IMPL_SCALAR */
    cpu_dot_prep_fn prep;  /* NULL: dot reads x as it is */
} cpu_dot_kernel;
/* The fused kernel at a level: QUANT_IMPL_BEST is what the CPU and GGUFSCOPE_SIMD allow. */
cpu_dot_kernel cpu_dot_function(uint32_t type, quant_impl impl);
int64_t cpu_dot_prep_floats(int64_t n);

/* One weight row of n values . n activations in quant_act_type(weight type), into *out: ggml's
 * integer block sums, scaled per block in f32 (equal to ggml's to f32 summation order). dot4 does
 * the same for 4 activation rows at a, a + a_stride, ... (the weights unpacked once for all four). */
typedef void (*cpu_act_dot_fn)(const void *w, const void *a, int64_t n, float *out);
typedef void (*cpu_act_dot4_fn)(const void *w, const void *a, uint64_t a_stride, int64_t n, float out[4]);
typedef struct cpu_act_kernel {
    cpu_act_dot_fn dot;    /* NULL: the type has none (see below) */
    cpu_act_dot4_fn dot4;  /* NULL: call dot for each row */
    /* NULL: dot and dot4 read the activation rows as quantized; else they read each row as prep rewrites it
     * (once per row, for every weight row to read) into prep_bytes(n) bytes, 64-byte aligned */
    void (*prep)(const void *a, void *dst, int64_t n);
    uint64_t (*prep_bytes)(int64_t n);
    /* Where llama.cpp multiplies fewer than 4 tokens in another order than vec_dot's (its repacked GEMV, for the
     * types it repacks on this level): nr (1..gemv_rows) weight rows at w, row_bytes apart, against one activation
     * row a as prep left it, into out[0..nr), in that order. NULL: dot's order is llama.cpp's. */
    void (*gemv)(const void *w, uint64_t row_bytes, int nr, const void *a, int64_t n, float *out);
    int gemv_rows;
} cpu_act_kernel;
/* The integer dot for weight_type (Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, IQ4_NL, Q2_K..Q6_K, IQ4_XS, MXFP4, TQ1_0,
 * TQ2_0, and the IQ3, IQ2 and IQ1 types), or none: the float types multiply their rounded activations. */
cpu_act_kernel cpu_act_dot_function(uint32_t weight_type, quant_impl impl);
/* llama.cpp's x86 order for the ternary types and the IQ3, IQ2 and IQ1 types (act_dot_lanes.c) */
void cpu_act_dot_tq1_0_lanes(const void *w, const void *a, int64_t n, float *out);
void cpu_act_dot_tq2_0_lanes(const void *w, const void *a, int64_t n, float *out);
void cpu_act_dot_iq3_s_lanes(const void *w, const void *a, int64_t n, float *out);
void cpu_act_dot_iq3_xxs_lanes(const void *w, const void *a, int64_t n, float *out);
void cpu_act_dot_iq2_xxs_lanes(const void *w, const void *a, int64_t n, float *out);
void cpu_act_dot_iq2_xs_lanes(const void *w, const void *a, int64_t n, float *out);
void cpu_act_dot_iq2_s_lanes(const void *w, const void *a, int64_t n, float *out);
void cpu_act_dot_iq1_s_lanes(const void *w, const void *a, int64_t n, float *out);
void cpu_act_dot_iq1_m_lanes(const void *w, const void *a, int64_t n, float *out);
/* NVFP4 against Q8_0: llama.cpp's x86 order, and its generic one (act_dot_lanes.c) */
void cpu_act_dot_nvfp4_lanes(const void *w, const void *a, int64_t n, float *out);
void cpu_act_dot_nvfp4_generic(const void *w, const void *a, int64_t n, float *out);
/* From this many tokens on llama.cpp multiplies the 256-value types it does not repack with its tiled K-quant
 * kernel (ggml-cpu/tiled, ggml_tiled_min_batch), whose order of arithmetic differs from vec_dot's: so does
 * cpu_act_gemm's multiply for those types. */
enum { CPU_TILED_MIN_TOKENS = 8 };

/* Prompts of `tokens` tokens: `rows` weight rows (w, w + row_bytes, ...; nr <= rows of them; 8, or 16 with
 * AVX-512 VNNI) packed into a panel of panel_bytes(n), then multiplied with T activation rows (a, a + a_stride,
 * ...) into y[t * ld + r], r < nr. sums holds each activation row's quant_act_sums16, n / 16 per row. The
 * integers are the dot's; the f32 sum adds up the blocks as llama.cpp adds them for a prompt of `tokens` tokens
 * where llama_cpp_order (for the types it multiplies with vec_dot, bit for bit as the dot below
 * CPU_TILED_MIN_TOKENS tokens, as its tiled kernel from there on for the 256-value ones: the panel differs, so
 * T must fall on the same side of CPU_TILED_MIN_TOKENS as `tokens`), and otherwise block after block per row,
 * which may differ from llama.cpp in the last bit (and a last-bit difference can round a later activation the
 * other way). All NULL where the type has none at this level. */
typedef struct cpu_act_gemm {
    uint64_t (*panel_bytes)(int64_t n);
    void (*pack)(const void *w, uint64_t row_bytes, int nr, int64_t n, void *panel);
    void (*multiply)(const void *panel, const void *a, uint64_t a_stride, const int16_t *sums, int T, int64_t n,
                     float *y, int64_t ld, int nr);
    /* llama.cpp's x86 CPU backend adds a prompt's products of this type up in the same order on this CPU:
     * the types it repacks into 8-row blocks (Q4_0, Q4_K, IQ4_NL with AVX2, Q2_K in a build with AVX-512:
     * ggml-cpu/repack.cpp, ggml_repack_get_optimal_repack_type), and Q8_0, Q5_0, Q4_1, Q5_1, Q3_K, Q5_K, Q6_K,
     * IQ4_XS (vec_dot's order; its tiled kernel's for the 256-value ones, and Q2_K where not repacked, from
     * CPU_TILED_MIN_TOKENS tokens) */
    bool llama_cpp_order;
    int rows;
} cpu_act_gemm;
cpu_act_gemm cpu_act_gemm_function(uint32_t weight_type, quant_impl impl, int tokens);
#endif
