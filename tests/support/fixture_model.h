/* A small llama-shaped model written by our own writer: deterministic
 * pseudo-random weights in F32, F16 and Q8_0, a SentencePiece-style
 * vocabulary with byte tokens, and the usual hyperparameter keys. */
#ifndef GGUFSCOPE_FIXTURE_MODEL_H
#define GGUFSCOPE_FIXTURE_MODEL_H

#include "gguf.h"

#include <stdbool.h>

typedef struct fixture_opts {
    uint32_t version;    /* 2 or 3 */
    uint32_t alignment;  /* 0: default (no general.alignment key) */
    uint32_t n_layer;    /* 96 at most */
    uint32_t n_embd;     /* multiple of 32 */
    uint32_t n_ff;       /* multiple of 32 */
    uint32_t n_vocab;    /* >= 259 (3 specials + 256 byte tokens) */
    uint32_t seed;
    bool f16_output;     /* output.weight in F16 (a source a quantizer takes) rather than Q8_0 */
    uint32_t rope_freqs; /* > 0: a rope_freqs.weight of this many factors (Llama 3.1's; head dim / 2 fits) */
    const char *arch;    /* NULL: llama; else an architecture gguf/arch.c describes: the roles it requires
                          * beyond llama's (q/k/v biases, per-head norms, post-norms) are written too, and
                          * gemma3 gets a sliding window of 4 positions and final soft-capping at 30 */
} fixture_opts;

/* The defaults used by the demo: 2 layers, n_embd 64, n_ff 128, vocab 288. */
fixture_opts fixture_default_opts(void);

/* Adds the model's keys and tensors to w; w must be written before any
 * other fixture call with the same opts pointer goes out of scope. */
gguf_status fixture_add_model(gguf_writer *w, const fixture_opts *o, gguf_error *err);

gguf_status fixture_write_file(const char *path, const fixture_opts *o, gguf_error *err);
gguf_status fixture_write_buffer(const fixture_opts *o, uint8_t **buf, size_t *len, gguf_error *err);

/* The f32 value fixture tensors of `seed` hold at element i, in [-scale, scale). */
float fixture_value(uint32_t seed, uint64_t i, float scale);

#endif
