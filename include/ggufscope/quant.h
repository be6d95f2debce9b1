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

#include "export.h"

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

GGUFSCOPE_API bool quant_can_dequantize(uint32_t type);
/* The row function for type, or NULL when unsupported. */
GGUFSCOPE_API quant_row_fn quant_row_function(uint32_t type, quant_impl impl);
/* Name of the SIMD level chosen at run time for QUANT_IMPL_BEST ("avx512", "avx2", "scalar"). */
GGUFSCOPE_API const char *quant_simd_level(void);
/* What the CPU and OS support (CPUID and XCR0, read once; cpu_features.c), whatever GGUFSCOPE_SIMD says.
 * "avx2" means AVX2 with F16C; "avx512" means AVX-512 F, VL, BW and DQ on top of that (x86_target.h). */
GGUFSCOPE_API bool quant_cpu_has_avx2(void);
GGUFSCOPE_API bool quant_cpu_has_fma(void);
GGUFSCOPE_API bool quant_cpu_has_avx512(void);
GGUFSCOPE_API bool quant_cpu_has_avx512dq(void);
GGUFSCOPE_API bool quant_cpu_has_avx512vl(void);
GGUFSCOPE_API bool quant_cpu_has_avx512bw(void);
GGUFSCOPE_API bool quant_cpu_has_avx512vnni(void); /* with BW and VL */
GGUFSCOPE_API bool quant_cpu_has_avx512bf16(void); /* with BW */

/* Whether the AVX2 forms (AVX2 with FMA and F16C) are to run: QUANT_IMPL_AVX2 asks for them whatever
 * GGUFSCOPE_SIMD says, QUANT_IMPL_BEST where its level allows; and the AVX-512 and VNNI forms, at
 * QUANT_IMPL_BEST on the avx512 level only (dispatch.c). The activation quantizers here and the CPU backend's row
 * kernels (kernels/cpu/row_kernels.h) ask. */
GGUFSCOPE_API bool quant_use_avx2(quant_impl impl);
/* the level AVX-512: a llama.cpp built for it (not capped by GGUFSCOPE_SIMD) */
GGUFSCOPE_API bool quant_use_avx512(quant_impl impl);
GGUFSCOPE_API bool quant_use_vnni(quant_impl impl);
/* Dequantizes n values of `type` from src into dst (f32). */
GGUFSCOPE_API quant_status quant_dequantize_row(uint32_t type, const void *src, float *dst, int64_t n);
/* Same, converted to f16 (round to nearest even), for uploads to a GPU. */
GGUFSCOPE_API quant_status quant_dequantize_row_f16(uint32_t type, const void *src, uint16_t *dst, int64_t n);
/* Dequantizes rows [row0, row0 + n_rows) of a tensor (rows of ne[0] values),
 * spreading rows over n_threads OpenMP threads (0: all). */
GGUFSCOPE_API quant_status quant_dequantize_rows(const gguf_tensor *t, uint64_t row0, uint64_t n_rows, float *dst,
                                   int n_threads);

/* ---- llama.cpp's CPU numerics (--numerics ggml) ----
 * Before multiplying activations with weights, ggml's CPU backend rounds them
 * to a type chosen by the weight type (its vec_dot_type): Q8_0 for Q4_0, Q5_0,
 * Q8_0, IQ4_NL and MXFP4, Q8_1 for Q4_1 and Q5_1, Q8_K for the K- and I-quants,
 * F16 for F16, BF16 for BF16, F32 for F32. These reproduce that rounding and
 * the integer dot products that follow it. */
/* The activation type for weights of weight_type; GGUF_TENSOR_COUNT when ggml has none. */
GGUFSCOPE_API uint32_t quant_act_type(uint32_t weight_type);
/* Bytes of n activations in act_type; 0 when n is not a whole number of its blocks. */
GGUFSCOPE_API uint64_t quant_act_row_bytes(uint32_t act_type, int64_t n);
/* n f32 activations into act_type (F32, F16, BF16, Q8_0, Q8_1, Q8_K) as ggml's x86 CPU backend
 * quantizes them. Decode them with quant_dequantize_row. */
GGUFSCOPE_API quant_status quant_act_quantize(uint32_t act_type, const float *x, void *dst, int64_t n);
/* What ggml's product of one weight row (n values) with n activations in quant_act_type(weight_type) adds beyond
 * the decoded weights times the decoded activations, in double: Q4_1 and Q5_1 rows add each block's min times
 * its Q8_1 block's s, which is d * sum(q) rounded to f16 apart from the quants, so they add
 * sum over blocks of m * (s - d * sum(q)); 0 for every other type (their activations' sums are exact integers).
 * A reference product in llama.cpp's numerics is the exact product of the decoded rows plus this. */
GGUFSCOPE_API double quant_act_sum_correction(uint32_t weight_type, const void *w, const void *a, int64_t n);
/* The sums of each 16 quants of a row of n activations in Q8_0, Q8_1 or Q8_K (Q8_K's bsums). */
GGUFSCOPE_API quant_status quant_act_sums16(uint32_t act_type, const void *a, int64_t n, int16_t *sums);

/* Quantizes n f32 values into `type` (F16, BF16, Q8_0, Q4_0, Q4_K, Q6_K),
 * choosing and rounding as ggml's reference quantizers do (what llama-quantize
 * writes without an importance matrix), so the bytes are the same. */
GGUFSCOPE_API quant_status quant_quantize_row(uint32_t type, const float *src, void *dst, int64_t n);
GGUFSCOPE_API bool quant_can_quantize(uint32_t type);

/* ---- whole models, as llama-quantize writes them ---- */

/* Writes one block of `type` at b decoded field by field (scales, mins,
 * quants, in ggml's names) as text into out (NUL-terminated, cut at cap).
 * Returns the length written. */
GGUFSCOPE_API size_t quant_describe_block(uint32_t type, const uint8_t *b, char *out, size_t cap);

/* Scale fields of one block of `type` (d; dmin, m or s where the type has
 * one; NVFP4's four sub-block scales), as f32: returns how many (0 for plain
 * types, at most QUANT_MAX_SCALES). Names are ggml's. A field that ggml's
 * quantizer never writes negative is flagged, so a negative one there means
 * the bytes were altered or written by something else. */
#define QUANT_MAX_SCALES 4
GGUFSCOPE_API int quant_scale_count(uint32_t type);
GGUFSCOPE_API const char *quant_scale_name(uint32_t type, int i);
GGUFSCOPE_API bool quant_scale_never_negative(uint32_t type, int i);
GGUFSCOPE_API int quant_block_scales(uint32_t type, const uint8_t *block, float out[QUANT_MAX_SCALES]);

/* Exact conversions: every f16/bf16 maps to the f32 of the same value
 * (subnormals, infinities and NaN payloads included); f32 -> f16/bf16
 * rounds to nearest even and keeps NaNs NaN (quieted, payload's top bits kept). */
GGUFSCOPE_API float quant_f16_to_f32(uint16_t h);
GGUFSCOPE_API uint16_t quant_f32_to_f16(float f);
GGUFSCOPE_API float quant_bf16_to_f32(uint16_t h);
GGUFSCOPE_API uint16_t quant_f32_to_bf16(float f);

#ifdef __cplusplus
}
#endif

#endif
