/* The CPU backend's private parts: its context and the ops the table points at. */
#ifndef GGUFSCOPE_KERN_CPU_H
#define GGUFSCOPE_KERN_CPU_H

#include "kern.h"

/* The cosines and sines of one rope call's angles, (T, n_rot / 2) pairs, kept for the next call with the same
 * positions and frequencies: q and k of a layer, and every layer of a forward pass, turn by the same angles. */
typedef struct cpu_rope_angles {
    float *cs;              /* the pairs, then a copy of the frequency factors where there are any */
    size_t cap;             /* floats cs holds */
    int pos0, T, n_rot;
    float base, freq_scale, ext_factor, attn_factor, corr_lo, corr_hi;
    bool factors;
} cpu_rope_angles;

typedef struct cpu_ctx {
    int n_threads;              /* OpenMP threads for every op */
    cpu_rope_angles angles[2];  /* two sets: gemma's layers alternate two bases */
    int angles_next;            /* the set the next new angles replace */
} cpu_ctx;

static inline int cpu_threads(const kern_backend *b)
{
    return ((const cpu_ctx *)b->ctx)->n_threads;
}

static inline kern_numerics cpu_numerics(const kern_backend *b)
{
    return b->numerics;
}

/* A small vector weight (norm, bias) of n values as f32: the mapping itself
 * when it is aligned F32, else dequantized into *owned (malloc'd, for the
 * caller to free). KERN_E_SHAPE when it does not hold n values. */
kern_status cpu_vector(const kern_weight *w, int64_t n, const float **out, float **owned);

/* Whether the AVX2 + FMA + F16C kernels may run (the CPU has them and GGUFSCOPE_SIMD does not cap to scalar). */
bool cpu_have_avx2(void);
/* AVX-512F and VL usable (GGUFSCOPE_SIMD not capping below avx512): 32 vector registers for the dot tiles. */
bool cpu_have_avx512vl(void);
/* f32 lanes of the widest vectors the kernels may use: 16 (AVX-512), 8 (AVX2), or 0 (scalar code only). */
int cpu_vector_lanes(void);
/* out[i] = silu(gate[i]) * up[i] = gate[i] / (1 + e^-gate[i]) * up[i]: AVX-512 or AVX2 with a polynomial e^x (within
 * 4 ulp of the exact product; silu.c) when the CPU has it, libm's expf otherwise. */
void cpu_silu_mul(const float *gate, const float *up, size_t n, float *out);
/* The same for one row of n values as llama.cpp's CPU backend computes it (--numerics ggml): ggml's own e^x,
 * 16 or 8 lanes as its build for this CPU would take them, libm's expf for the row's last n % width (silu.c). */
void cpu_silu_mul_ggml(const float *gate, const float *up, size_t n, float *out);

/* --numerics ggml with weights of a float type (F32, F16, BF16; float_ggml.c): rows [0, nr) of base (rb bytes apart)
 * times T tokens of x (rounded to f16 or bf16 for those), n values each (for BF16 also as bf16 rows, xh), into
 * y[t * ld + r], each in the order the llama.cpp build for this CPU adds them (tinyBLAS or ggml_vec_dot_*). */
void cpu_float_rows_ggml(const uint8_t *base, uint64_t rb, int nr, uint32_t type, const float *x, const uint16_t *xh,
                         int T, int64_t n, float *y, int64_t ld);
/* ggml_vec_dot_f32 of n values in W (8 or 16) lanes (float_ggml.c; x86 with AVX2 only) */
float cpu_dot_f32_ggml(const float *x, const float *y, int n, int W);

/* Zeroed host memory of `bytes`, 64-byte aligned; 2 MiB aligned and advised into huge pages from 2 MiB on
 * (buffers.c). NULL when out of memory. Freed by cpu_buffer_free only. */
void *cpu_buffer_alloc(size_t bytes);
void cpu_buffer_free(void *p);

/* p[lo, hi) <- the softmax of p[j] * scale over that span (scaled in f32, e^(s - max) by kern_expf's arithmetic,
 * vectorized, summed in double, each times the f32 reciprocal of the sum); p[0, lo) and p[hi, n) <- 0. A finite
 * sink is one more logit in the softmax (in the max and the sum) with no place in p: -INFINITY for none. */
void cpu_softmax_scaled(float *p, int lo, int hi, int n, float scale, float sink);

/* Softmax down the lanes of key-major scores s[j * ldm + m] (j < nj; m < lanes, a multiple of a nonzero
 * cpu_score_lanes()): lane m over its keys [lo[m], hi[m]) in cpu_softmax_scaled's arithmetic (scaled in f32,
 * e^(s - max) by kern_expf's, each times the f32 reciprocal of the sum), the double sum taken over the keys in
 * order; 0 at its other keys. */
void cpu_softmax_lanes(float *s, int64_t ldm, int nj, int lanes, const int *lo, const int *hi, float scale);

/* Attention scores with a block's queries in vector lanes (scores.c): the lane width (16 with AVX-512, 8 with
 * AVX2, 0 without either: then the other two are not to be called); q[0..M) (d values each) packed value-major
 * in chunks of W = that width (qt: ceil(M / W) * W * d floats, lanes past M zero); and s[j * ldm + m] = the chain
 * of fused multiply-adds over i < d of qt's query m and key j (k + j * ldk), for j < nj and every lane of the
 * chunks (ldm >= their lanes). */
int cpu_score_lanes(void);
void cpu_scores_pack_queries(const float *const q[], int M, int d, int W, float *qt);
void cpu_scores_lanes(const float *qt, int M, int d, int W, const float *k, int64_t ldk, int nj, float *s,
                      int64_t ldm);

/* --numerics ggml: attention in the order of llama.cpp's CPU backend without flash attention, W = cpu_vector_lanes()
 * lanes (attention_ggml.c); false, doing nothing, where that order cannot be had (no AVX2; 16 lanes without
 * AVX512DQ), else *status is the outcome. */
bool cpu_attention_ggml(kern_backend *b, const float *q, const float *k_cache, const float *v_cache, int T, int pos0,
                        const kern_attn *a, float *out, kern_status *status);

/* The ops of kern.h's list as cpu_NAME (the table in backend.c), its products of the optional ones too. */
#define CPU_OP_DECLARE(name, params, args) kern_status cpu_##name(kern_backend *b, KERN_ARGS params);
KERN_OPS(CPU_OP_DECLARE)
#undef CPU_OP_DECLARE
kern_status cpu_matmul_many(kern_backend *b, int n, const kern_weight *const ws[], const kern_weight *const biases[],
                            const float *x, int T, float *const ys[]);
kern_status cpu_matmul_many_x(kern_backend *b, int n, const kern_weight *const ws[],
                              const kern_weight *const biases[], const float *const xs[], int T, float *const ys[]);
kern_status cpu_matmul_each(kern_backend *b, int n, const kern_weight *const ws[], const kern_weight *const biases[],
                            const float *x, int T, float *const ys[]);

#endif
