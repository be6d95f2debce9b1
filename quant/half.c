/* f16 and bf16 <-> f32, bit-exact, portable.
 *
 *   f16:  s eeeee mmmmmmmmmm          (bias 15)
 *   bf16: s eeeeeeee mmmmmmm          (the top half of an f32)
 *   f32:  s eeeeeeee mmmmmmmmmmmmmmmmmmmmmmm (bias 127)
 */
#include "quant.h"

#include <string.h>

static float from_bits(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static uint32_t to_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

float quant_f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu, man = h & 0x3ffu;
    if (exp == 0x1f) /* inf or NaN: payload moves to the top of the f32 mantissa */
        return from_bits(sign | 0x7f800000u | man << 13);
    if (exp != 0)
        return from_bits(sign | (exp + 112u) << 23 | man << 13);
    if (man == 0)
        return from_bits(sign);
    /* subnormal: normalise the mantissa */
    int shift = 0;
    while (!(man & 0x400u)) {
        man <<= 1;
        shift++;
    }
    man &= 0x3ffu;
    return from_bits(sign | (uint32_t)(113 - shift) << 23 | man << 13);
}

uint16_t quant_f32_to_f16(float f)
{
    uint32_t x = to_bits(f);
    uint32_t sign = (x >> 16) & 0x8000u;
    uint32_t exp = (x >> 23) & 0xffu, man = x & 0x7fffffu;
    if (exp == 0xff) /* inf stays inf; NaN stays NaN, quieted */
        return (uint16_t)(sign | 0x7c00u | (man ? 0x200u | (man >> 13) : 0));
    int32_t e = (int32_t)exp - 127 + 15;
    if (e >= 0x1f)
        return (uint16_t)(sign | 0x7c00u); /* overflow to inf */
    uint32_t mant, shift;
    if (e <= 0) {
        if (e < -10)
            return (uint16_t)sign; /* below half the smallest subnormal: rounds to zero */
        mant = man | 0x800000u;    /* subnormal result: include the implicit bit */
        shift = (uint32_t)(14 - e);
    } else {
        mant = man;
        shift = 13;
    }
    uint32_t h = e <= 0 ? mant >> shift : (uint32_t)e << 10 | mant >> shift;
    uint32_t rest = mant & ((1u << shift) - 1), half = 1u << (shift - 1);
    if (rest > half || (rest == half && (h & 1u)))
        h++; /* may carry into the exponent, which is the right answer */
    return (uint16_t)(sign | h);
}

float quant_bf16_to_f32(uint16_t h)
{
    return from_bits((uint32_t)h << 16);
}

uint16_t quant_f32_to_bf16(float f)
{
    uint32_t u = to_bits(f);
    if ((u & 0x7fffffffu) > 0x7f800000u)
        return (uint16_t)((u >> 16) | 0x40u); /* NaN: force quiet, as ggml does */
    return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}
