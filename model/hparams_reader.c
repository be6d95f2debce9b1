/*
 * The hyperparameter reader's getters (hparams_reader.h): "<arch>.suffix" keys as integers, bools and floats with
 * llama.cpp's defaults, one value or one per layer, each problem noted and the first kept.
 */
#include "model.h"
#include "model_internal.h"
#include "hparams_reader.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void hp_note(hp_reader *r, gguf_status s, const gguf_error *e)
{
    if (r->status != GGUF_OK || s == GGUF_OK)
        return;
    r->status = s;
    if (r->err)
        *r->err = *e;
}

void hp_fail(hp_reader *r, gguf_status code, uint64_t offset, const char *subject, const char *fmt, ...)
{
    if (r->status != GGUF_OK) /* only the first problem is kept */
        return;
    gguf_error e = { .code = code, .offset = offset };
    va_list ap;
    va_start(ap, fmt);
    gguf_error_textv(e.subject, e.message, subject, fmt, ap);
    va_end(ap);
    hp_note(r, code, &e);
}

/* <arch>.suffix as an integer in [min, max]; *dflt_used when absent (not an error unless required). */
int64_t hp_get_int(hp_reader *r, const char *suffix, bool required, int64_t dflt, int64_t min, int64_t max,
                   bool *dflt_used)
{
    char key[160];
    snprintf(key, sizeof key, "%s.%s", r->arch, suffix);
    int64_t v;
    gguf_error e;
    gguf_status s = gguf_get_int(r->f, key, min, max, &v, &e);
    if (s == GGUF_OK)
        return v;
    if (s == GGUF_E_KEY_NOT_FOUND && !required) {
        if (dflt_used)
            *dflt_used = true;
        return dflt;
    }
    if (s == GGUF_E_KEY_NOT_FOUND)
        gguf_fail(&e, s, 0, key, "key '%s' is not in the file: the model's hyperparameters are incomplete", key);
    hp_note(r, s, &e);
    return 0;
}

/* <arch>.suffix as a bool, dflt when absent */
bool hp_get_bool(hp_reader *r, const char *suffix, bool dflt)
{
    char key[160];
    snprintf(key, sizeof key, "%s.%s", r->arch, suffix);
    bool v;
    gguf_error e;
    gguf_status s = gguf_get_bool(r->f, key, &v, &e);
    if (s == GGUF_OK)
        return v;
    if (s != GGUF_E_KEY_NOT_FOUND)
        hp_note(r, s, &e);
    return dflt;
}

float hp_get_float(hp_reader *r, const char *suffix, float dflt, bool *dflt_used)
{
    char key[160];
    snprintf(key, sizeof key, "%s.%s", r->arch, suffix);
    const gguf_kv *kv = gguf_find_kv(r->f, key);
    if (!kv) {
        if (dflt_used)
            *dflt_used = true;
        return dflt;
    }
    float v;
    if (!model_value_float(&kv->value, &v)) {
        hp_fail(r, GGUF_E_KEY_TYPE, kv->offset, key, "key '%s' is %s, expected a float", key,
                gguf_value_type_name(kv->value.type));
        return dflt;
    }
    return v;
}

/* whether <arch>.suffix is in the file as an array */
bool hp_is_array(hp_reader *r, const char *suffix)
{
    char key[160];
    snprintf(key, sizeof key, "%s.%s", r->arch, suffix);
    const gguf_kv *kv = gguf_find_kv(r->f, key);
    return kv && kv->value.type == GGUF_VT_ARRAY;
}

/* <arch>.suffix as llama.cpp's get_key_or_arr reads it: one integer in [min, max] for every layer, or an array of one
 * per layer (block_count of them, *per_layer pointing at it); the largest of them, dflt when absent. */

int64_t hp_get_int_or_layers(hp_reader *r, const char *suffix, int64_t dflt, int64_t min, int64_t max,
                             const gguf_value **per_layer, model_hparams *hp)
{
    char key[160];
    snprintf(key, sizeof key, "%s.%s", r->arch, suffix);
    const gguf_kv *kv = gguf_find_kv(r->f, key);
    *per_layer = NULL;
    if (!kv || kv->value.type != GGUF_VT_ARRAY)
        return hp_get_int(r, suffix, false, dflt, min, max, NULL);
    if (hp->n_layer > 0 && kv->value.count != (uint64_t)hp->n_layer) {
        hp_fail(r, GGUF_E_KEY_TYPE, kv->offset, key, "key '%s' lists %llu layers, block_count is %lld", key,
                (unsigned long long)kv->value.count, (long long)hp->n_layer);
        return dflt;
    }
    int64_t widest = 0;
    for (uint64_t i = 0; i < kv->value.count; i++) {
        gguf_value v;
        int64_t n;
        if (gguf_array_scalar(&kv->value, i, &v) != GGUF_OK || !model_value_integer(&v, &n) || n < min || n > max) {
            hp_fail(r, GGUF_E_KEY_TYPE, kv->offset, key, "key '%s' must list one integer from %lld to %lld "
                    "per layer (entry %llu is not)", key, (long long)min, (long long)max,
                    (unsigned long long)i);
            return dflt;
        }
        widest = n > widest ? n : widest;
    }
    *per_layer = &kv->value;
    return widest;
}

bool model_value_float(const gguf_value *v, float *out)
{
    if (v->type != GGUF_VT_FLOAT32 && v->type != GGUF_VT_FLOAT64)
        return false;
    *out = (float)v->v.f64;
    return true;
}

bool model_value_integer(const gguf_value *v, int64_t *out)
{
    switch (v->type) {
    case GGUF_VT_UINT8: case GGUF_VT_UINT16: case GGUF_VT_UINT32: case GGUF_VT_UINT64:
        *out = (int64_t)v->v.u64;
        return v->v.u64 <= INT64_MAX;
    case GGUF_VT_INT8: case GGUF_VT_INT16: case GGUF_VT_INT32: case GGUF_VT_INT64:
        *out = v->v.i64;
        return true;
    default:
        return false;
    }
}
