/* Activations the CUDA kernels share with their host-compiled checks (host_decode.cu). */
#ifndef GGUFSCOPE_KERN_CUDA_ACT_CUH
#define GGUFSCOPE_KERN_CUDA_ACT_CUH

extern "C" {
#include "kern.h"
}
#include "act_oai.h"

#include <cuda_fp16.h>
#include <math.h>

/* GELU as kern_gelu_ggml defines it (llama.cpp's CPU table: the tanh approximation at x rounded to f16,
 * the result rounded to f16; 0 at x <= -10, x at x >= 10; 1 + a x x one fused multiply-add, as GCC compiles
 * ggml's), computed instead of looked up. On the device tanhf may differ from glibc's by an ulp; after the f16
 * rounding that almost never shows. */
__host__ __device__ inline float kc_gelu_ggml(float x)
{
    if (x <= -10.0f)
        return 0.0f;
    if (x >= 10.0f)
        return x;
    const float sqrt_2_over_pi = 0.79788456080286535588f, coef_a = 0.044715f;
    const float xh = __half2float(__float2half_rn(x));
    const float y = 0.5f * xh * (1.0f + tanhf(sqrt_2_over_pi * xh * fmaf(coef_a * xh, xh, 1.0f)));
    return __half2float(__float2half_rn(y));
}

/* The gated activation act(g) * u of kern.h's glu, one expression for every kernel that applies it (the element-wise
 * glu kernels, the fused gate/up product), so that they give the same bits. */
__device__ inline float kc_glu(kern_act act, float g, float u)
{
    switch (act) {
    case KERN_ACT_GELU_TANH: return kc_gelu_ggml(g) * u;
    case KERN_ACT_SWIGLU_OAI: return act_oai(g, u);
    case KERN_ACT_SIGMOID: return u * (1.0f / (1.0f + expf(-g)));
    case KERN_ACT_SOFTPLUS: return u * (g > 20.0f ? g : log1pf(expf(g))); /* the CPU's exact numerics */
    case KERN_ACT_NONE: return u * g;
    case KERN_ACT_RELU: return (g > 0.0f ? g : 0.0f) * u;
    default: return g / (1.0f + expf(-g)) * u; /* KERN_ACT_SILU */
    }
}

#endif
