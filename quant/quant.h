/*
 * quant.h — numbers inside ggml blocks: dequantize rows of every type to f32
 * (and f16), quantize a few types from f32, and exact f16/bf16 conversion.
 *
 * Block layouts are format facts from ggml (ggml/src/ggml-common.h and the
 * reference dequantizers in ggml/src/ggml-quants.c); the code is our own and
 * reproduces ggml's results bit for bit (same operations in the same order,
 * no fused multiply-add). Nothing here prints or exits.
 */
#ifndef GGUFSCOPE_QUANT_H
#define GGUFSCOPE_QUANT_H

#include "gguf.h"

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum quant_status {
    QUANT_OK = 0,
    QUANT_E_UNSUPPORTED,  /* a type we cannot dequantize (yet): never garbage */
    QUANT_E_SHAPE,        /* n is not a multiple of the type's block size */
    QUANT_E_INVALID_ARG,
} quant_status;

/* Which implementation to use: the portable scalar reference, the AVX2 path
 * (scalar where the type or CPU has none), or the best SIMD path this CPU has
 * (AVX-512, else AVX2, else scalar; GGUFSCOPE_SIMD=scalar|avx2 caps it). */
typedef enum quant_impl { QUANT_IMPL_SCALAR, QUANT_IMPL_AVX2, QUANT_IMPL_BEST } quant_impl;

/* Dequantizes n values (a multiple of the block size) from src. */
typedef void (*quant_row_fn)(const void *src, float *dst, int64_t n);

bool quant_can_dequantize(uint32_t type);
/* The row function for type, or NULL when unsupported. */
quant_row_fn quant_row_function(uint32_t type, quant_impl impl);
/* Rows r = 0..15 at base + r * row_bytes, values [k0, k0 + kc) (whole blocks), decoded into a GEMM's k-major
 * panel: panel[(k - k0) * 16 + r] = the row function's float for value k of row r, bit for bit. NULL where the
 * type or the level has none (QUANT_IMPL_BEST on the avx512 level only: Q4_0, Q4_1, Q5_0, Q5_1, IQ4_NL). */
typedef void (*quant_panel16_fn)(const void *base, uint64_t row_bytes, int64_t k0, int64_t kc, float *panel);
quant_panel16_fn quant_panel16_function(uint32_t type, quant_impl impl);
/* Name of the SIMD level chosen at run time for QUANT_IMPL_BEST ("avx512", "avx2", "scalar"). */
const char *quant_simd_level(void);
/* What the CPU and OS support (CPUID and XCR0, read once; cpu_features.c), whatever GGUFSCOPE_SIMD says.
 * "avx2" means AVX2 with F16C; "avx512" means AVX-512 F, VL, BW and DQ on top of that (x86_target.h). */
bool quant_cpu_has_avx2(void);
bool quant_cpu_has_fma(void);
bool quant_cpu_has_avx512(void);
bool quant_cpu_has_avx512dq(void);
bool quant_cpu_has_avx512vl(void);
bool quant_cpu_has_avx512bw(void);
bool quant_cpu_has_avx512vnni(void); /* with BW and VL */
bool quant_cpu_has_avx512bf16(void); /* with BW */

/* Dequantizes n values of `type` from src into dst (f32). */
quant_status quant_dequantize_row(uint32_t type, const void *src, float *dst, int64_t n);
/* Same, converted to f16 (round to nearest even), for uploads to a GPU. */
quant_status quant_dequantize_row_f16(uint32_t type, const void *src, uint16_t *dst, int64_t n);
/* Dequantizes rows [row0, row0 + n_rows) of a tensor (rows of ne[0] values),
 * spreading rows over n_threads OpenMP threads (0: all). */
quant_status quant_dequantize_rows(const gguf_tensor *t, uint64_t row0, uint64_t n_rows, float *dst,
                                   int n_threads);

/* Fused dot product of one row of n values of a quantized type with f32 x,
 * decoded in registers (the matrix-vector path). Agrees with
 * dequantize-then-dot to f32 rounding, not bit for bit. Some kernels read x
 * rearranged: `prep`, when not NULL, writes that form of x (n values) into
 * xp, which must hold quant_dot_prep_floats(n) floats (best 64-byte aligned:
 * the AVX-512 dots read it in 64-byte vectors), once per product, and
 * `dot` is then given xp for every row. */
typedef float (*quant_dot_fn)(const void *row, const float *x, int64_t n);
typedef void (*quant_dot_prep_fn)(const float *x, float *xp, int64_t n);
typedef struct quant_dot_kernel {
    quant_dot_fn dot;        /* NULL when the type or the CPU has none, or for QUANT_IMPL_SCALAR */
    quant_dot_prep_fn prep;  /* NULL: dot reads x as it is */
} quant_dot_kernel;
/* The fused kernel at a level: QUANT_IMPL_BEST is what the CPU and GGUFSCOPE_SIMD allow. */
quant_dot_kernel quant_dot_function(uint32_t type, quant_impl impl);
int64_t quant_dot_prep_floats(int64_t n);

/* ---- llama.cpp's CPU numerics (--numerics ggml) ----
 * Before multiplying activations with weights, ggml's CPU backend rounds them
 * to a type chosen by the weight type (its vec_dot_type): Q8_0 for Q4_0, Q5_0,
 * Q8_0, IQ4_NL and MXFP4, Q8_1 for Q4_1 and Q5_1, Q8_K for the K- and I-quants,
 * F16 for F16, BF16 for BF16, F32 for F32. These reproduce that rounding and
 * the integer dot products that follow it. */
/* The activation type for weights of weight_type; GGML_TYPE_COUNT when ggml has none. */
uint32_t quant_act_type(uint32_t weight_type);
/* Bytes of n activations in act_type; 0 when n is not a whole number of its blocks. */
uint64_t quant_act_row_bytes(uint32_t act_type, int64_t n);
/* n f32 activations into act_type (F32, F16, BF16, Q8_0, Q8_1, Q8_K) as ggml's x86 CPU backend
 * quantizes them. Decode them with quant_dequantize_row. */
quant_status quant_act_quantize(uint32_t act_type, const float *x, void *dst, int64_t n);
/* What ggml's product of one weight row (n values) with n activations in quant_act_type(weight_type) adds beyond
 * the decoded weights times the decoded activations, in double: Q4_1 and Q5_1 rows add each block's min times
 * its Q8_1 block's s, which is d * sum(q) rounded to f16 apart from the quants, so they add
 * sum over blocks of m * (s - d * sum(q)); 0 for every other type (their activations' sums are exact integers).
 * A reference product in llama.cpp's numerics is the exact product of the decoded rows plus this. */
double quant_act_sum_correction(uint32_t weight_type, const void *w, const void *a, int64_t n);
/* One weight row of n values . n activations in quant_act_type(weight type), into *out: ggml's
 * integer block sums, scaled per block in f32 (equal to ggml's to f32 summation order). dot4 does
 * the same for 4 activation rows at a, a + a_stride, ... (the weights unpacked once for all four). */
typedef void (*quant_act_dot_fn)(const void *w, const void *a, int64_t n, float *out);
typedef void (*quant_act_dot4_fn)(const void *w, const void *a, uint64_t a_stride, int64_t n, float out[4]);
typedef struct quant_act_kernel {
    quant_act_dot_fn dot;    /* NULL: the type has none (see below) */
    quant_act_dot4_fn dot4;  /* NULL: call dot for each row */
    /* NULL: dot and dot4 read the activation rows as quantized; else they read each row as prep rewrites it
     * (once per row, for every weight row to read) into prep_bytes(n) bytes, 64-byte aligned */
    void (*prep)(const void *a, void *dst, int64_t n);
    uint64_t (*prep_bytes)(int64_t n);
    /* Where llama.cpp multiplies fewer than 4 tokens in another order than vec_dot's (its repacked GEMV, for the
     * types it repacks on this level): nr (1..gemv_rows) weight rows at w, row_bytes apart, against one activation
     * row a as prep left it, into out[0..nr), in that order. NULL: dot's order is llama.cpp's. */
    void (*gemv)(const void *w, uint64_t row_bytes, int nr, const void *a, int64_t n, float *out);
    int gemv_rows;
} quant_act_kernel;
/* The integer dot for weight_type (Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, IQ4_NL, Q2_K..Q6_K, IQ4_XS), or none:
 * other types multiply exactly what their activations round to (dequantized) in f32, which is the
 * same sum, since they have no f16-rounded offset term. */
quant_act_kernel quant_act_dot_function(uint32_t weight_type, quant_impl impl);
/* From this many tokens on llama.cpp multiplies the 256-value types it does not repack with its tiled K-quant
 * kernel (ggml-cpu/tiled, ggml_tiled_min_batch), whose order of arithmetic differs from vec_dot's: so does
 * quant_act_gemm's multiply for those types. */
enum { QUANT_TILED_MIN_TOKENS = 8 };

/* Prompts of `tokens` tokens: `rows` weight rows (w, w + row_bytes, ...; nr <= rows of them; 8, or 16 with
 * AVX-512 VNNI) packed into a panel of panel_bytes(n), then multiplied with T activation rows (a, a + a_stride,
 * ...) into y[t * ld + r], r < nr. sums holds each activation row's quant_act_sums16, n / 16 per row. The
 * integers are the dot's; the f32 sum adds up the blocks as llama.cpp adds them for a prompt of `tokens` tokens
 * where llama_cpp_order (for the types it multiplies with vec_dot, bit for bit as the dot below
 * QUANT_TILED_MIN_TOKENS tokens, as its tiled kernel from there on for the 256-value ones: the panel differs, so
 * T must fall on the same side of QUANT_TILED_MIN_TOKENS as `tokens`), and otherwise block after block per row,
 * which may differ from llama.cpp in the last bit (and a last-bit difference can round a later activation the
 * other way). All NULL where the type has none at this level. */
typedef struct quant_act_gemm {
    uint64_t (*panel_bytes)(int64_t n);
    void (*pack)(const void *w, uint64_t row_bytes, int nr, int64_t n, void *panel);
    void (*multiply)(const void *panel, const void *a, uint64_t a_stride, const int16_t *sums, int T, int64_t n,
                     float *y, int64_t ld, int nr);
    /* llama.cpp's x86 CPU backend adds a prompt's products of this type up in the same order on this CPU:
     * the types it repacks into 8-row blocks (Q4_0, Q4_K, IQ4_NL with AVX2, Q2_K in a build with AVX-512:
     * ggml-cpu/repack.cpp, ggml_repack_get_optimal_repack_type), and Q8_0, Q5_0, Q4_1, Q5_1, Q3_K, Q5_K, Q6_K,
     * IQ4_XS (vec_dot's order; its tiled kernel's for the 256-value ones, and Q2_K where not repacked, from
     * QUANT_TILED_MIN_TOKENS tokens) */
    bool llama_cpp_order;
    int rows;
} quant_act_gemm;
quant_act_gemm quant_act_gemm_function(uint32_t weight_type, quant_impl impl, int tokens);
/* The sums of each 16 quants of a row of n activations in Q8_0, Q8_1 or Q8_K (Q8_K's bsums). */
quant_status quant_act_sums16(uint32_t act_type, const void *a, int64_t n, int16_t *sums);

/* Quantizes n f32 values into `type` (F16, BF16, Q8_0, Q4_0, Q4_K, Q6_K),
 * choosing and rounding as ggml's reference quantizers do (what llama-quantize
 * writes without an importance matrix), so the bytes are the same. */
quant_status quant_quantize_row(uint32_t type, const float *src, void *dst, int64_t n);
bool quant_can_quantize(uint32_t type);

/* ---- whole models, as llama-quantize writes them ---- */

/* Writes one block of `type` at b decoded field by field (scales, mins,
 * quants, in ggml's names) as text into out (NUL-terminated, cut at cap).
 * Returns the length written. */
size_t quant_describe_block(uint32_t type, const uint8_t *b, char *out, size_t cap);

/* Scale fields of one block of `type` (d; dmin, m or s where the type has
 * one), as f32: returns how many (0 for plain types). Names are ggml's. A
 * field that ggml's quantizer never writes negative is flagged, so a negative
 * one there means the bytes were altered or written by something else. */
int quant_scale_count(uint32_t type);
const char *quant_scale_name(uint32_t type, int i);
bool quant_scale_never_negative(uint32_t type, int i);
int quant_block_scales(uint32_t type, const uint8_t *block, float out[2]);

/* Exact conversions: every f16/bf16 maps to the f32 of the same value
 * (subnormals, infinities and NaN payloads included); f32 -> f16/bf16
 * rounds to nearest even and keeps NaNs NaN (quieted, payload's top bits kept). */
float quant_f16_to_f32(uint16_t h);
uint16_t quant_f32_to_f16(float f);
float quant_bf16_to_f32(uint16_t h);
uint16_t quant_f32_to_bf16(float f);

#ifdef __cplusplus
}
#endif

#endif
