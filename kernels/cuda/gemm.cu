/*
 * y = x W^T (+ bias) on the device. A few tokens (decode, logits in groups of
 * eight): the matrix-vector kernels read the blocks directly. More tokens
 * (prompts): the weight is dequantized into scratch and cuBLAS multiplies,
 * accumulating in f32:
 *   F32   as it is, with f32 activations (SGEMM, no TF32)
 *   F16   as it is, activations rounded to f16 (as llama.cpp's cuBLAS path does)
 *   BF16  dequantized to f32 (bf16 -> f16 could overflow), f32 activations
 *   quantized  dequantized to f16, activations rounded to f16
 */
#include "cuda.h"

kern_status cu_gemm_rows(kern_backend *b, int N, int T, int K, const void *W, cudaDataType wt, const void *x,
                         cudaDataType xt, float *y)
{
    /* cuBLAS is column-major. A row-major (R, C) matrix is the column-major (C, R)
     * matrix with leading dimension C, so in column-major terms:
     *   W (N, K) row-major = A (K, N), lda K;   x (T, K) row-major = B (K, T), ldb K;
     *   y (T, N) row-major = C (N, T), ldc N;   and y = x W^T  <=>  C = A^T B.
     * Hence op(A) = T, op(B) = N, m = N, n = T, k = K. */
    const float one = 1.0f, zero = 0.0f;
    CUBLAS_TRY(b, cublasGemmEx(cu_of(b)->blas, CUBLAS_OP_T, CUBLAS_OP_N, N, T, K, &one, W, wt, K, x, xt, K, &zero, y,
                               CUDA_R_32F, N, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    return KERN_OK;
}

__global__ void to_f16_k(const float *x, size_t n, __half *out)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        out[i] = __float2half(x[i]);
}

__global__ void add_bias_k(float *y, const float *bias, int64_t N, size_t n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        y[i] += bias[i % N];
}

static kern_status x_to_f16(kern_backend *b, const float *x, size_t n, __half **out)
{
    cu_ctx *c = cu_of(b);
    kern_status s = cu_reserve(b, (void **)&c->x16, &c->x16_cap, n * sizeof(__half), "f16 activations for a GEMM");
    if (s)
        return s;
    to_f16_k<<<cu_grid(n), 256, 0, c->stream>>>(x, n, c->x16);
    CU_LAUNCHED(b, "to_f16_k");
    *out = c->x16;
    return KERN_OK;
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
    if (cw->type == GGML_TYPE_F32) {
        s = cu_gemm_rows(b, N, T, K, cw->data, CUDA_R_32F, x, CUDA_R_32F, y);
    } else if (cw->type == GGML_TYPE_BF16) {
        if (!(s = cu_reserve(b, (void **)&c->w32, &c->w32_cap, elems * sizeof(float), "a dequantized weight")) &&
            !(s = cu_dequant_f32(b, cw, c->w32)))
            s = cu_gemm_rows(b, N, T, K, c->w32, CUDA_R_32F, x, CUDA_R_32F, y);
    } else {
        const void *w16 = cw->data;
        __half *x16 = NULL;
        s = KERN_OK;
        if (cw->type != GGML_TYPE_F16 &&
            !(s = cu_reserve(b, (void **)&c->w16, &c->w16_cap, elems * sizeof(__half), "a dequantized weight")) &&
            !(s = cu_dequant_f16(b, cw, c->w16)))
            w16 = c->w16;
        if (!s && !(s = x_to_f16(b, x, (size_t)T * K, &x16)))
            s = cu_gemm_rows(b, N, T, K, w16, CUDA_R_16F, x16, CUDA_R_16F, y);
    }
    if (s || !bv)
        return s;
    add_bias_k<<<cu_grid((size_t)T * N), 256, 0, c->stream>>>(y, bv, N, (size_t)T * N);
    CU_LAUNCHED(b, "add_bias_k");
    return KERN_OK;
}
