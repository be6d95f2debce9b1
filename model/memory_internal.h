/* memory.c's split: the compute buffer's model, in memory_compute.c. */
#ifndef GGUFSCOPE_MODEL_MEMORY_INTERNAL_H
#define GGUFSCOPE_MODEL_MEMORY_INTERNAL_H

#include "model.h"

/* The bytes llama.cpp's graph allocator reserves for the worst-case batch of m->n_tokens tokens against a full
 * cache (m's cells and flash_attn set), p->n_ubatch already at most n_batch. */
uint64_t model_memory_compute(const model_hparams *hp, const model_memory_params *p, const model_memory *m);

#endif
