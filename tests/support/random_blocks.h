/* Random blocks for the quant/ suites: random bytes everywhere, then each type's scale fields set to
 * valid, varied values (so every quant pattern is reached and nothing decodes to inf or NaN). */
#ifndef GGUFSCOPE_RANDOM_BLOCKS_H
#define GGUFSCOPE_RANDOM_BLOCKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A deterministic xorshift stream, shared by the whole suite process. */
uint32_t test_rnd(void);
/* A random f16 of magnitude 2^-12 .. 2^-1 (either sign when allowed). */
uint16_t test_rand_scale(bool allow_negative);
/* size bytes of one random block of type. */
void test_random_block(uint32_t type, uint8_t *b, size_t size);
/* The same with every other byte 0xff: the largest quants most types hold (the bounds of 16-bit sums). */
void test_saturated_block(uint32_t type, uint8_t *b, size_t size);

#endif
