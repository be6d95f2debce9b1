/* A block's f16 scale as f32 at the AVX-512 level: F16C's conversion, except for infinities and NaNs, which the
 * exact converter gives bit for bit (NaN payloads). Shared by quant/'s decoders and the CPU backend's dots. */
#ifndef GGUFSCOPE_QUANT_F16_SCALE_AVX512_H
#define GGUFSCOPE_QUANT_F16_SCALE_AVX512_H

#include "blocks.h"
#include "x86_target.h"

#include <immintrin.h>

X86_AVX512 static inline float scale_f16(const uint8_t *p)
{
    const uint16_t h = rd16(p);
    return (h & 0x7c00) == 0x7c00 ? quant_f16_to_f32(h) : _cvtsh_ss(h);
}

#endif
