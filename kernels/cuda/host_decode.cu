/*
 * The device block decoders and activations compiled for the host, so that a
 * machine without a GPU (CI) still checks them value for value against quant/
 * and kernels/cpu.
 */
#include "act.cuh"
#include "blocks.cuh"
#include "tf32.cuh"

extern "C" {
#include "kern.h"
}

/* Decodes k values of a row (k a multiple of 8, the row 16-byte aligned) as
 * the CUDA kernels do; false when the CUDA backend does not read `type`. */
extern "C" bool kern_cuda_decode_row_host_impl(uint32_t type, const void *row, int64_t k, float *out)
{
    return kc_dispatch(type, [&]<uint32_t TYPE>() {
        for (int64_t i = 0; i < k / 8; i++)
            decode8<TYPE>((const uint8_t *)row, i, out + 8 * i);
    });
}

/* The GeGLU kernel's GELU, compiled for the host. */
extern "C" float kern_cuda_gelu_host_impl(float x)
{
    return kc_gelu_ggml(x);
}

/* The TF32 split of the prompt's tensor-core products (tf32.cuh), compiled for the host. */
extern "C" float kern_cuda_tf32_host_impl(float x)
{
    return kc_tf32(x);
}
