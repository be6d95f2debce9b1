/*
 * llama.cpp's CPU arithmetic stated in scalar C, one value at a time, for the tests that hold --numerics ggml to it
 * bit for bit (written from the formulas of the llama.cpp that llama-cpp-python 0.3.36 vendors, apart from the
 * kernels' vectors). `wide`: the 16-lane forms of builds with AVX-512, else the 8-lane forms of AVX2 builds.
 */
#ifndef GGUFSCOPE_TESTS_GGML_REFERENCE_H
#define GGUFSCOPE_TESTS_GGML_REFERENCE_H

#include <stdbool.h>
#include <stdint.h>

/* ggml_v_expf (ggml-cpu/vec.h): n = x / ln 2 rounded by the 1.5 * 2^23 shifter, b = x - n ln 2 (ln 2 in two parts),
 * a degree-5 polynomial in b, and 2^n applied by vscalefps (wide) or built in the exponent field, k + j k (AVX2),
 * each with its far-range forms. */
float ggml_ref_expf(float x, bool wide);
/* ggml_vec_dot_f32 (ggml-cpu/vec.cpp) of n values: four accumulators of 8 or 16 lanes over 4 x that many values a
 * step by FMA, folded (0 + 2, 1 + 3, 0 + 1), their lanes summed (16: upper half + lower half, then as the 8-lane
 * hsum; 8: GGML_F32x8_REDUCE's halves and two hadds), then the rest one product at a time (two roundings each). */
float ggml_ref_dot_f32(const float *x, const float *y, int n, bool wide);
/* ggml_vec_dot_f16 (ggml-cpu/vec.cpp) of an f16 row w and f16-rounded x, both given as floats: the same four
 * accumulators, their sum taken to double, then the rest one f32 product at a time in double, rounded to float. */
float ggml_ref_dot_f16(const float *w, const float *x, int64_t n, bool wide);
/* One output of llamafile's tinyBLAS (ggml-cpu/llamafile/sgemm.cpp) for F16 or BF16 rows: lane l of a width-lane
 * accumulator adds w[i] x[i] for i = l mod width by FMA in order, its lanes summed as ggml_ref_hsum; with
 * bf16_pairs (AVX512-BF16 builds' BF16), 16 lanes each taking the pairs (2l, 2l + 1) of every 32 values by
 * vdpbf16ps. */
float ggml_ref_tinyblas(const float *w, const float *x, int64_t n, int width, bool bf16_pairs);
/* ggml_vec_dot_bf16 (ggml-cpu/vec.cpp) in each x86 build's form: */
enum { GGML_BF16_AVX2, GGML_BF16_AVX512, GGML_BF16_PAIRS };
/* AVX2: four 8-lane accumulators over 32 values a step by FMA, (0 + 2) + (1 + 3), summed as ggml_ref_hsum;
 * AVX512 (without BF16): two 16-lane ones over 32 a step; PAIRS (AVX512-BF16): two of vdpbf16ps over 64 a step;
 * each of the two summed over its lanes and added in double; then the rest one f32 product at a time in double. */
float ggml_ref_dot_bf16(const float *w, const float *x, int64_t n, int form);
/* GELU as ggml's table gives it (ggml-cpu.c fills ggml_table_gelu_f16 with ggml_gelu_f32 of every f16; vec.h's
 * ggml_vec_geglu_f32 reads it at x rounded to f16): 0 at or below -10, x at or above 10, else the tanh form
 * 0.5 h (1 + tanh(sqrt(2/pi) h (1 + 0.044715 h h))) at h = f16(x), rounded to f16. fused: 1 + a h h as GCC
 * contracts it in that C file, one fused multiply-add of a h and h (false: two roundings, for contrast). */
float ggml_ref_gelu(float x, bool fused);
/* The lanes of a[0..8) or a[0..16) summed as llamafile's hsum and the softmax's reduction do: 16 lanes upper half +
 * lower half first; then ((a0 + a4) + (a2 + a6)) + ((a1 + a5) + (a3 + a7)). */
float ggml_ref_hsum(const float *a, bool wide);

#endif
