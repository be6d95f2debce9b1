/* memory.c's split: the compute buffer's model, in memory_compute.c. */
#ifndef GGUFSCOPE_MODEL_MEMORY_INTERNAL_H
#define GGUFSCOPE_MODEL_MEMORY_INTERNAL_H

#include "model.h"

/* The bytes llama.cpp's graph allocator reserves for the worst-case batch of m->n_tokens tokens against a full
 * cache (m's cells, n_layer_full/swa and flash_attn set). */
uint64_t model_memory_compute(const model_hparams *hp, const model_memory *m);

#endif
