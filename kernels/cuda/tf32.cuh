/*
 * f32 values as sums of two TF32 values, for products on the tensor cores that keep f32's precision (issue 58's
 * stage 3): a tensor core reads 10 bits of mantissa (TF32), so x = hi + lo with hi = x rounded to TF32 and lo the
 * rest (exact in f32, itself read to 10 bits: 21 bits of x in all), and
 *   W x = Wh xh + Wh xl + Wl xh (+ Wl xl, below f32's rounding: dropped),
 * three TF32 products accumulated in f32; two where W is already TF32 (F16 and BF16 weights are: 11 and 8
 * significant bits within f32's exponent range). Host and device alike, so the split is tested without a GPU.
 */
#ifndef GGUFSCOPE_KERN_CUDA_TF32_CUH
#define GGUFSCOPE_KERN_CUDA_TF32_CUH

#include "blocks.cuh"

/* x rounded to the nearest TF32 value (ties to even): its low 13 bits cleared. Infinities and NaN stay as they
 * are; a value that would round past the largest finite one is cut instead (x - hi must stay finite). */
KC_HD float kc_tf32(float x)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    if ((u & 0x7f800000u) == 0x7f800000u)
        return x;
    uint32_t r = (u + 0xfffu + ((u >> 13) & 1u)) & 0xffffe000u;
    if ((r & 0x7f800000u) == 0x7f800000u)
        r = u & 0xffffe000u;
    float y;
    memcpy(&y, &r, sizeof y);
    return y;
}

#endif
