/*
 * y = x W^T (+ bias) on the device. A few tokens (decode, logits in groups of
 * eight): the matrix-vector kernels read the blocks directly. More tokens
 * (prompts): the weight is decoded into f32 scratch (F32 weights are used as
 * they are) and cuBLAS multiplies f32 by f32, accumulating in f32 with no
 * TF32: the same numerics as the CPU backend's default (weights decoded
 * exactly, activations never rounded), so --compare cpu,cuda measures
 * summation order and nothing else. Rounding activations to f16 for the
 * tensor cores, as llama.cpp's cuBLAS path does, moved a 0.5B model's prompt
 * logits by 8e-3 of their range and a 1.1B Q4_K_M's greedy tokens (measured on
 * an H100): every quantized model then looked like a divergence.
 * GGUFSCOPE_CUDA_TF32=1 (issue 58's stage 3, off until a GPU run shows it within the f32 product's 1e-5 and faster)
 * multiplies on the tensor cores instead, each operand split in two TF32 parts (tf32.cuh).
 */
#include "cuda.h"
#include "tf32.cuh"

/* y (+)= x W^T in the given compute type; beta 0 writes y, 1 adds to it. */
static kern_status gemm_rows(kern_backend *b, int N, int T, int K, const float *W, const float *x, float beta,
                             float *y, cublasComputeType_t compute)
{
    /* cuBLAS is column-major. A row-major (R, C) matrix is the column-major (C, R)
     * matrix with leading dimension C, so in column-major terms:
     *   W (N, K) row-major = A (K, N), lda K;   x (T, K) row-major = B (K, T), ldb K;
     *   y (T, N) row-major = C (N, T), ldc N;   and y = x W^T  <=>  C = A^T B.
     * Hence op(A) = T, op(B) = N, m = N, n = T, k = K. */
    const float one = 1.0f;
    if (!CUBLAS_OK(b, cublasGemmEx(cu_of(b)->blas, CUBLAS_OP_T, CUBLAS_OP_N, N, T, K, &one, W, CUDA_R_32F, K, x,
                                   CUDA_R_32F, K, &beta, y, CUDA_R_32F, N, compute, CUBLAS_GEMM_DEFAULT)))
        return cu_status(b);
    return KERN_OK;
}

kern_status cu_gemm_rows(kern_backend *b, int N, int T, int K, const float *W, const float *x, float *y)
{
    return gemm_rows(b, N, T, K, W, x, 0.0f, y, CUBLAS_COMPUTE_32F);
}

/* a (n) into its TF32 part hi and the rest lo (tf32.cuh); hi may be a itself */
__global__ void tf32_split_k(const float *a, size_t n, float *hi, float *lo)
{
    kc_grid_wait();
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        const float v = a[i], h = kc_tf32(v);
        hi[i] = h;
        lo[i] = v - h;
    }
}

static kern_status tf32_split(kern_backend *b, const float *a, size_t n, float *hi, float *lo)
{
    if (kern_status ls = cu_launch(b, "tf32_split_k", tf32_split_k, dim3(cu_grid(n)), dim3(256), a, n, hi, lo))
        return ls;
    return KERN_OK;
}

/* y = x W^T on the tensor cores to f32's precision (GGUFSCOPE_CUDA_TF32=1): the small products first, then
 * Wh xh. W_exact: W is already TF32 (F16, BF16 weights), so it has no low part. W is split in place when
 * W_in_scratch (a decoded weight), else into scratch. */
static kern_status gemm_rows_tf32x(kern_backend *b, int N, int T, int K, float *W, bool W_in_scratch, bool W_exact,
                                   const float *x, float *y)
{
    cu_ctx *c = cu_of(b);
    const size_t nx = (size_t)T * K, nw = (size_t)N * K;
    kern_status s = cu_reserve(b, (void **)&c->tf_x, &c->tf_x_cap, 2 * nx * sizeof(float), "split activations");
    if (s)
        return s;
    float *xh = c->tf_x, *xl = c->tf_x + nx, *Wh = W, *Wl = NULL;
    if ((s = tf32_split(b, x, nx, xh, xl)))
        return s;
    if (!W_exact) {
        if ((s = cu_reserve(b, (void **)&c->tf_w, &c->tf_w_cap, (W_in_scratch ? 1 : 2) * nw * sizeof(float),
                            "a split weight")))
            return s;
        Wl = c->tf_w;
        Wh = W_in_scratch ? W : c->tf_w + nw;
        if ((s = tf32_split(b, W, nw, Wh, Wl)))
            return s;
    }
    const cublasComputeType_t tc = CUBLAS_COMPUTE_32F_FAST_TF32;
    if ((s = gemm_rows(b, N, T, K, Wh, xl, 0.0f, y, tc)))
        return s;
    if (Wl && (s = gemm_rows(b, N, T, K, Wl, xh, 1.0f, y, tc)))
        return s;
    return gemm_rows(b, N, T, K, Wh, xh, 1.0f, y, tc);
}

__global__ void add_bias_k(float *y, const float *bias, int64_t N, size_t n)
{
    kc_grid_wait();
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        y[i] += bias[i % N];
}

kern_status cu_matmul(kern_backend *b, const kern_weight *w, const kern_weight *bias, const float *x, int T, float *y)
{
    cu_ctx *c = cu_of(b);
    const cu_weight *cw = (const cu_weight *)w->dev;
    const float *bv = bias ? ((const cu_weight *)bias->dev)->vec : NULL;
    if (bias && (!bv || ((const cu_weight *)bias->dev)->ne0 != cw->ne1))
        return KERN_E_SHAPE;
    if (T <= CU_MATVEC_MAX_T)
        return cu_matvec(b, cw, bv, x, T, y);
    if (cw->ne0 > INT32_MAX || cw->ne1 > INT32_MAX)
        return KERN_E_SHAPE;
    const int N = (int)cw->ne1, K = (int)cw->ne0;
    const size_t elems = (size_t)N * K;
    kern_status s;
    const bool exact_in_tf32 = cw->type == GGUF_TENSOR_F16 || cw->type == GGUF_TENSOR_BF16;
    if (cw->type == GGUF_TENSOR_F32) {
        s = c->tf32x ? gemm_rows_tf32x(b, N, T, K, (float *)cw->data, false, false, x, y)
                     : cu_gemm_rows(b, N, T, K, (const float *)cw->data, x, y);
    } else if (!(s = cu_reserve(b, (void **)&c->w32, &c->w32_cap, elems * sizeof(float), "a decoded weight")) &&
               !(s = cu_dequant_f32(b, cw, c->w32))) {
        s = c->tf32x ? gemm_rows_tf32x(b, N, T, K, c->w32, true, exact_in_tf32, x, y)
                     : cu_gemm_rows(b, N, T, K, c->w32, x, y);
    }
    if (s || !bv)
        return s;
    if (kern_status ls = cu_launch(b, "add_bias_k", add_bias_k, dim3(cu_grid((size_t)T * N)), dim3(256), y, bv, N,
                                   (size_t)T * N))
        return ls;
    return KERN_OK;
}
