/* The engine held to llama.cpp's goldens (../shared/golden, read its README): a model loaded on the CPU, one
 * golden checked (prompt tokens identical, prompt logits within the README's tolerance of the golden computed on
 * f32 weights, greedy tokens identical up to the first near-tie, per-layer trace RMS within 1e-3), and every golden
 * of a folder's models. Shared by test_engine and test_engine_arch. */
#ifndef GGUFSCOPE_TEST_ENGINE_GOLDENS_H
#define GGUFSCOPE_TEST_ENGINE_GOLDENS_H

#include "engine.h"

#include <stdbool.h>
#include <stddef.h>

#define LOGIT_TOL 5e-4
#define TRACE_TOL 1e-3
#define GGML_LOGIT_TOL 1e-4

typedef struct golden_model {
    gguf_file *f;
    kern_backend *be;
    engine_model *m;
    tok_vocab *v;
} golden_model;

/* path loaded on a 2-thread CPU backend in these numerics, with its vocabulary (asserted). */
bool golden_model_open(const char *path, kern_numerics numerics, golden_model *l);
void golden_model_close(golden_model *l);

typedef struct outcome {
    double logit_rel, trace_rel;
    size_t greedy_compared, greedy_total;
    double first_rel;                  /* the first prompt position's logits */
    bool int8_activations;             /* some weights are quantized: ggml rounds activations to 8-bit blocks */
    bool gelu;                         /* gemma3 */
    size_t rows_within, rows;          /* prompt positions within the logit tolerance, of all */
} outcome;

/* Runs model_file on golden ref (a stem like "tiny-llama-q4_k_m-deq.p0"), its prompt tokens checked against own (the
 * model's own golden); asserts the README's tolerances and returns what it measured. */
outcome check_against(const char *model_file, const char *own, const char *ref, kern_numerics numerics);
/* Whether generate/STEM.json is among the goldens. */
bool golden_exists(const char *stem);
/* Every golden whose model is in the folder models (see engine_goldens.c); how many model/prompt pairs it checked;
 * with ggml numerics, the quantized files' rows within 1e-4 added to *sum. */
int check_goldens_in(const char *models, kern_numerics numerics, outcome *sum);
/* Runs the T tokens of prompt through ctx (from where it stands) with every row's logits and asserts each row within
 * rel of whole's row (T x nv: the same prompt in one batch) relative to that row's max |logit|; what names the run in
 * a failure. */
void assert_logits_match(engine_ctx *ctx, int nv, const int32_t *prompt, int T, const float *whole, double rel,
                         const char *what);

#endif
