/* The i-quant lattice grids (format facts from ggml, via gguf-py; see iq_grids.c). */
#ifndef GGUFSCOPE_IQ_GRIDS_H
#define GGUFSCOPE_IQ_GRIDS_H

#include <stdint.h>

extern const uint8_t quant_iq2xxs_grid[256][8];
extern const uint8_t quant_iq2xs_grid[512][8];
extern const uint8_t quant_iq2s_grid[1024][8];
extern const uint8_t quant_iq3xxs_grid[256][4];
extern const uint8_t quant_iq3s_grid[512][4];
extern const int8_t quant_iq1s_grid[2048][8];

#endif
