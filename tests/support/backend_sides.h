/* Test support: two engine contexts on CPU backends (one perhaps with a bug-zoo fault) over one model, for the
 * backend-comparison suites (test_backends, test_compare). Criterion asserts inside. */
#ifndef GGUFSCOPE_TEST_BACKEND_SIDES_H
#define GGUFSCOPE_TEST_BACKEND_SIDES_H

#include "engine.h"

#include <stddef.h>
#include <stdint.h>

typedef struct side {
    kern_backend *be;
    engine_model *m;
    engine_ctx *c;
} side;

/* The shared model `name` (its path into path), else our writer's llama-shaped fixture in /tmp. */
gguf_file *open_model(const char *name, char *path, size_t n);
/* The model of f on backend be (owned by the side from here on), with a context. */
side load_side(const gguf_file *f, kern_backend *be, int n_ctx, int batch);
/* A 2-thread CPU backend, wrapped in the bug-zoo fault `fault` unless NULL. */
side make_side(const gguf_file *f, const char *fault, int n_ctx, int batch);
void free_side(side *s);
/* A fixed 10-token prompt, clipped into f's vocabulary. */
void tokens_for(const gguf_file *f, int32_t *out, size_t n);
/* The plain CPU against the CPU with `fault` on `model`: 10 prompt tokens in chunks of `chunk`, 6 greedy steps. */
engine_comparison compare(const char *model, const char *fault, int chunk, char *path, size_t path_len);

#endif
