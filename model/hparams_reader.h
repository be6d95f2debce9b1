/* Private to model/: the hyperparameter reader that hparams.c (the keys every family has), hparams_family.c (those only
 * some families' loaders read) and hparams_reader.c (the getters) share. */
#ifndef GGUFSCOPE_MODEL_HPARAMS_READER_H
#define GGUFSCOPE_MODEL_HPARAMS_READER_H

#include "model.h"

#include <stdbool.h>
#include <stdint.h>

typedef struct hp_reader {
    const gguf_file *f;
    const char *arch;       /* key prefix */
    gguf_status status;     /* the first problem */
    gguf_error *err;
} hp_reader;

/* Keeps s (with e) as the reader's status when it is the first problem. */
void hp_note(hp_reader *r, gguf_status s, const gguf_error *e);
/* hp_note of the problem code at offset, about subject, its message formatted from fmt. */
void hp_fail(hp_reader *r, gguf_status code, uint64_t offset, const char *subject, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
/* <arch>.suffix as an integer in [min, max]; dflt (and *dflt_used) when absent, a problem where required. */
int64_t hp_get_int(hp_reader *r, const char *suffix, bool required, int64_t dflt, int64_t min, int64_t max,
                   bool *dflt_used);
/* <arch>.suffix as a bool, dflt when absent. */
bool hp_get_bool(hp_reader *r, const char *suffix, bool dflt);
/* <arch>.suffix as a float (F32 or F64), dflt (and *dflt_used) when absent. */
float hp_get_float(hp_reader *r, const char *suffix, float dflt, bool *dflt_used);
/* Whether <arch>.suffix is in the file as an array. */
bool hp_is_array(hp_reader *r, const char *suffix);
/* <arch>.suffix as llama.cpp's get_key_or_arr reads it: one integer for every layer, or an array of one per layer
 * (*per_layer then points at it); the largest, dflt when absent. */
int64_t hp_get_int_or_layers(hp_reader *r, const char *suffix, int64_t dflt, int64_t min, int64_t max,
                             const gguf_value **per_layer, model_hparams *hp);

/* The keys of some families' loaders, into hp (hparams_family.c; each function's comment there says which). */
void hp_rope_scaling(hp_reader *r, model_hparams *hp);
void hp_swa_pattern(hp_reader *r, model_hparams *hp);
void hp_rope_pattern(hp_reader *r, model_hparams *hp);
void hp_ssm_sizes(hp_reader *r, model_hparams *hp);
void hp_delta_net(hp_reader *r, model_hparams *hp);
void hp_kv_heads_per_layer(hp_reader *r, model_hparams *hp);
void hp_xielu_params(hp_reader *r, model_hparams *hp);
void hp_swiglu_clamp(hp_reader *r, model_hparams *hp);
void hp_moe_routing(hp_reader *r, model_hparams *hp);
void hp_latent_attention(hp_reader *r, model_hparams *hp);
void hp_rope_sections(hp_reader *r, model_hparams *hp);

#endif
