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
 */
#include "cuda.h"

kern_status cu_gemm_rows(kern_backend *b, int N, int T, int K, const float *W, const float *x, float *y)
{
    /* cuBLAS is column-major. A row-major (R, C) matrix is the column-major (C, R)
     * matrix with leading dimension C, so in column-major terms:
     *   W (N, K) row-major = A (K, N), lda K;   x (T, K) row-major = B (K, T), ldb K;
     *   y (T, N) row-major = C (N, T), ldc N;   and y = x W^T  <=>  C = A^T B.
     * Hence op(A) = T, op(B) = N, m = N, n = T, k = K. */
    const float one = 1.0f, zero = 0.0f;
    if (!CUBLAS_OK(b, cublasGemmEx(cu_of(b)->blas, CUBLAS_OP_T, CUBLAS_OP_N, N, T, K, &one, W, CUDA_R_32F, K, x,
                                   CUDA_R_32F, K, &zero, y, CUDA_R_32F, N, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT)))
        return cu_status(b);
    return KERN_OK;
}

__global__ void add_bias_k(float *y, const float *bias, int64_t N, size_t n)
{
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
    if (cw->type == GGUF_TENSOR_F32) {
        s = cu_gemm_rows(b, N, T, K, (const float *)cw->data, x, y);
    } else if (!(s = cu_reserve(b, (void **)&c->w32, &c->w32_cap, elems * sizeof(float), "a decoded weight")) &&
               !(s = cu_dequant_f32(b, cw, c->w32))) {
        s = cu_gemm_rows(b, N, T, K, c->w32, x, y);
    }
    if (s || !bv)
        return s;
    add_bias_k<<<cu_grid((size_t)T * N), 256, 0, c->stream>>>(y, bv, N, (size_t)T * N);
    if (!CU_LAUNCH_OK(b, "add_bias_k"))
        return cu_status(b);
    return KERN_OK;
}
