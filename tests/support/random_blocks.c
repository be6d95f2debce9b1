/* Random but valid blocks of every quant type for the quant/ suites (see random_blocks.h). */
#include "random_blocks.h"

#include "gguf.h"

#include <math.h>
#include <string.h>

static uint64_t rng = 0x12345678abcdefull;
uint32_t test_rnd(void)
{
    rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17;
    return (uint32_t)(rng >> 16);
}

/* A random f16 of magnitude 2^-12 .. 2^-1, either sign: a valid, non-trivial scale. */
uint16_t test_rand_scale(bool allow_negative)
{
    uint16_t exp = (uint16_t)(3 + test_rnd() % 11), man = (uint16_t)(test_rnd() & 0x3ff);
    uint16_t sign = allow_negative && (test_rnd() & 1) ? 0x8000 : 0;
    return (uint16_t)(sign | exp << 10 | man);
}

static void put16(uint8_t *p, uint16_t v) { memcpy(p, &v, 2); }

/* The scale fields of a block set to valid, varied values. */
static void set_scales(uint32_t type, uint8_t *b)
{
    switch (type) {
    case GGUF_TENSOR_F16: case GGUF_TENSOR_BF16: case GGUF_TENSOR_F32: break; /* all bit patterns */
    case GGUF_TENSOR_Q4_1: case GGUF_TENSOR_Q5_1: case GGUF_TENSOR_Q8_1: case GGUF_TENSOR_Q4_K: case GGUF_TENSOR_Q5_K:
        put16(b, test_rand_scale(true));
        put16(b + 2, test_rand_scale(true));
        break;
    case GGUF_TENSOR_Q2_K: put16(b + 80, test_rand_scale(true)); put16(b + 82, test_rand_scale(true)); break;
    case GGUF_TENSOR_Q3_K: put16(b + 108, test_rand_scale(true)); break;
    case GGUF_TENSOR_Q6_K: put16(b + 208, test_rand_scale(true)); break;
    case GGUF_TENSOR_TQ1_0: put16(b + 52, test_rand_scale(true)); break;
    case GGUF_TENSOR_TQ2_0: put16(b + 64, test_rand_scale(true)); break;
    case GGUF_TENSOR_Q8_K: {
        float d = ldexpf((float)(test_rnd() % 1000 + 1), -(int)(test_rnd() % 20) - 10);
        memcpy(b, &d, 4);
        break;
    }
    case GGUF_TENSOR_MXFP4: b[0] = (uint8_t)(110 + test_rnd() % 30); break;
    case GGUF_TENSOR_NVFP4: /* four UE4M3 sub-block scales of 2^-3 .. 2^3 (never 0x7F, which reads as 0) */
        for (int s = 0; s < 4; s++)
            b[s] = (uint8_t)(((4 + test_rnd() % 7) << 3) | (test_rnd() & 7));
        break;
    case GGUF_TENSOR_IQ1_M: { /* the f16 scale lives in the top nibble of the four scale words */
        uint16_t d = test_rand_scale(true);
        for (int k = 0; k < 4; k++) {
            uint16_t w;
            memcpy(&w, b + 48 + 2 * k, 2);
            w = (uint16_t)((w & 0x0fff) | ((d >> (4 * k)) & 0xf) << 12);
            memcpy(b + 48 + 2 * k, &w, 2);
        }
        break;
    }
    default: put16(b, test_rand_scale(true)); break; /* d first: Q4_0 Q5_0 Q8_0 IQ* */
    }
}

void test_random_block(uint32_t type, uint8_t *b, size_t size)
{
    for (size_t i = 0; i < size; i++)
        b[i] = (uint8_t)test_rnd();
    set_scales(type, b);
}

void test_saturated_block(uint32_t type, uint8_t *b, size_t size)
{
    memset(b, 0xff, size);
    set_scales(type, b);
}
