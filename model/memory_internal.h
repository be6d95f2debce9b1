/* memory.c's split: the compute buffer, replayed in memory_compute.c. */
#ifndef GGUFSCOPE_MODEL_MEMORY_INTERNAL_H
#define GGUFSCOPE_MODEL_MEMORY_INTERNAL_H

#include "model.h"

/* The bytes llama.cpp's graph allocator reserves for the worst-case batch of m->n_tokens tokens against a full
 * cache (m's cells, n_layer_full/swa and flash_attn set; p's cache types), by replaying its graph and allocator;
 * 0 for an architecture whose graph it does not know, or when its own memory runs out. */
uint64_t model_memory_compute(const gguf_file *f, const model_hparams *hp, const model_memory_params *p,
                              const model_memory *m);

/* The width every layer's V rows are padded to: without flash attention, where the layers' widths differ, the widest
 * of them (llama_kv_cache pads a transposed V cache so: "padding V cache to ..."; Gemma 4's two kinds of layer); 0 with
 * flash attention. */
uint64_t model_memory_v_padded(const model_hparams *hp, bool flash_attn);
/* The values of a position's V row in layer il's cache: its key/value heads times the value length, or padded (what
 * model_memory_v_padded gave), whichever is wider. */
uint64_t model_memory_v_width(const model_hparams *hp, int64_t il, uint64_t padded);

#endif
