/*
 * The hyperparameters of a model file, from "<arch>.*" metadata, with
 * llama.cpp's defaults where a key is absent (src/llama-model.cpp,
 * load_hparams; src/llama-hparams.h for the sliding-window defaults):
 *   attention.head_count_kv = head_count; attention.key_length =
 *   embedding_length / head_count; value_length = key_length;
 *   rope.dimension_count = key_length; rope.freq_base 10000;
 *   rope.freq_base_swa 10000; layer_norm_rms_epsilon 1e-5.
 * Every key is read even after a problem, so that the audit sees all it can;
 * the first problem is what the caller gets back.
 */
#include "gguf.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

typedef struct reader {
    const gguf_file *f;
    const char *arch;       /* key prefix */
    gguf_status status;     /* the first problem */
    gguf_error *err;
} reader;

static void note(reader *r, gguf_status s, const gguf_error *e)
{
    if (r->status != GGUF_OK || s == GGUF_OK)
        return;
    r->status = s;
    if (r->err)
        *r->err = *e;
}

/* <arch>.suffix as an integer in [min, max]; *dflt_used when absent (not an error unless required). */
static int64_t get_int(reader *r, const char *suffix, bool required, int64_t dflt, int64_t min, int64_t max,
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
    note(r, s, &e);
    return 0;
}

static float get_float(reader *r, const char *suffix, float dflt, bool *dflt_used)
{
    char key[160];
    snprintf(key, sizeof key, "%s.%s", r->arch, suffix);
    const gguf_kv *kv = gguf_find_kv(r->f, key);
    if (!kv) {
        if (dflt_used)
            *dflt_used = true;
        return dflt;
    }
    if (kv->value.type != GGUF_VT_FLOAT32 && kv->value.type != GGUF_VT_FLOAT64) {
        gguf_error e;
        note(r, gguf_fail(&e, GGUF_E_KEY_TYPE, kv->offset, key, "key '%s' is %s, expected a float", key,
                          gguf_value_type_name(kv->value.type)), &e);
        return dflt;
    }
    return (float)kv->value.v.f64;
}

/* rope.scaling.type: none, or linear with rope.scaling.factor (what the engine implements). */
static void rope_scaling(reader *r, gguf_hparams *hp)
{
    char key[160];
    snprintf(key, sizeof key, "%s.rope.scaling.type", r->arch);
    gguf_str st;
    gguf_error e;
    gguf_status s = gguf_get_str(r->f, key, &st, &e);
    if (s == GGUF_E_KEY_NOT_FOUND || (s == GGUF_OK && st.len == 4 && memcmp(st.ptr, "none", 4) == 0))
        return;
    if (s != GGUF_OK) {
        note(r, s, &e);
        return;
    }
    if (!(st.len == 6 && memcmp(st.ptr, "linear", 6) == 0)) {
        note(r, gguf_fail(&e, GGUF_E_KEY_TYPE, gguf_find_kv(r->f, key)->offset, key,
                          "rope scaling '%.*s' is not supported (none and linear are)",
                          (int)(st.len < 32 ? st.len : 32), st.ptr), &e);
        return;
    }
    float factor = get_float(r, "rope.scaling.factor", 1.0f, NULL);
    hp->rope_freq_scale = factor > 0.0f ? 1.0f / factor : 1.0f;
}

/* attention.sliding_window_pattern: a period, or one bool per layer. */
static void swa_pattern(reader *r, gguf_hparams *hp)
{
    char key[160];
    snprintf(key, sizeof key, "%s.attention.sliding_window_pattern", r->arch);
    const gguf_kv *kv = gguf_find_kv(r->f, key);
    if (!kv)
        return;
    if (kv->value.type == GGUF_VT_ARRAY && kv->value.elem_type == GGUF_VT_BOOL) {
        gguf_error e;
        if (hp->n_layer > 0 && kv->value.count != (uint64_t)hp->n_layer)
            note(r, gguf_fail(&e, GGUF_E_KEY_TYPE, kv->offset, key,
                              "key '%s' lists %llu layers, block_count is %lld", key,
                              (unsigned long long)kv->value.count, (long long)hp->n_layer), &e);
        else {
            hp->swa_layers = &kv->value;
            hp->swa_period = 0;
        }
        return;
    }
    hp->swa_period = (uint32_t)get_int(r, "attention.sliding_window_pattern", false, hp->swa_period, 0, 65536, NULL);
}

gguf_status gguf_hparams_read(const gguf_file *f, gguf_hparams *hp, gguf_error *err)
{
    memset(hp, 0, sizeof *hp);
    hp->file_type = -1;
    hp->embd_scale = 1.0f;
    reader r = { .f = f, .arch = hp->arch_name, .status = GGUF_OK, .err = err };
    gguf_error e;
    int64_t ft;
    if (gguf_get_int(f, "general.file_type", 0, 1 << 20, &ft, NULL) == GGUF_OK)
        hp->file_type = ft;
    const gguf_kv *tok = gguf_find_kv(f, "tokenizer.ggml.tokens");
    if (tok && tok->value.type == GGUF_VT_ARRAY)
        hp->n_vocab = (int64_t)tok->value.count;
    gguf_str a;
    gguf_status s = gguf_get_str(f, "general.architecture", &a, &e);
    if (s != GGUF_OK) {
        note(&r, s, &e);
        return r.status;
    }
    size_t n = a.len < sizeof hp->arch_name - 1 ? (size_t)a.len : sizeof hp->arch_name - 1;
    memcpy(hp->arch_name, a.ptr, n);
    hp->arch_name[strnlen(hp->arch_name, n)] = '\0'; /* a NUL inside the name ends the prefix there */
    hp->arch = gguf_arch_find(a.ptr, (size_t)a.len);

    const int64_t big = INT64_C(1) << 30, dims = 65536;
    hp->n_embd = get_int(&r, "embedding_length", true, 0, 1, big, NULL);
    hp->n_layer = get_int(&r, "block_count", true, 0, 1, dims, NULL);
    hp->n_head = get_int(&r, "attention.head_count", true, 0, 1, dims, NULL);
    hp->n_head_kv = get_int(&r, "attention.head_count_kv", false, hp->n_head, 1, dims, NULL);
    hp->n_ff = get_int(&r, "feed_forward_length", false, 0, 0, big, NULL);
    hp->n_ctx_train = get_int(&r, "context_length", false, 2048, 1, big, NULL);
    hp->vocab_size = get_int(&r, "vocab_size", false, 0, 1, INT32_MAX, NULL);
    hp->n_expert = get_int(&r, "expert_count", false, 0, 0, dims, NULL);
    hp->n_expert_used = get_int(&r, "expert_used_count", false, 0, 0, dims, NULL);
    bool no_key_length = false, no_rot = false;
    const int64_t per_head = hp->n_head > 0 && hp->n_embd % hp->n_head == 0 ? hp->n_embd / hp->n_head : 0;
    hp->head_dim_k = get_int(&r, "attention.key_length", false, per_head, 1, dims, &no_key_length);
    hp->head_dim_from_key_length = !no_key_length;
    hp->head_dim_v = get_int(&r, "attention.value_length", false, hp->head_dim_k, 1, dims, NULL);
    hp->n_rot = get_int(&r, "rope.dimension_count", false, hp->head_dim_k, 2, dims, &no_rot);
    hp->n_rot_from_key = !no_rot;
    hp->eps = get_float(&r, "attention.layer_norm_rms_epsilon", 1e-5f, &hp->eps_defaulted);
    hp->rope_base = get_float(&r, "rope.freq_base", 10000.0f, &hp->rope_base_defaulted);
    hp->rope_freq_scale = 1.0f;
    rope_scaling(&r, hp);
    hp->rope_base_swa = hp->rope_base;
    hp->rope_freq_scale_swa = hp->rope_freq_scale;

    const gguf_arch *ar = hp->arch;
    if (ar && ar->swa_period) {
        hp->swa_window = get_int(&r, "attention.sliding_window", false, 0, 0, INT32_MAX, NULL);
        if (hp->swa_window > 0) {
            hp->swa_period = ar->swa_period;
            swa_pattern(&r, hp);
            hp->rope_base_swa = get_float(&r, "rope.freq_base_swa", 10000.0f, NULL);
            hp->rope_freq_scale_swa = 1.0f;
        }
    }
    if (ar && ar->final_softcap)
        hp->final_softcap = get_float(&r, "final_logit_softcapping", 0.0f, NULL);
    if (ar && ar->embd_scale_sqrt && hp->n_embd > 0)
        hp->embd_scale = sqrtf((float)hp->n_embd);
    if (ar && ar->attn_scale_embd_layers && hp->n_layer == ar->attn_scale_embd_layers && per_head > 0)
        hp->attn_scale = 1.0f / sqrtf((float)per_head);
    else if (hp->head_dim_k > 0)
        hp->attn_scale = 1.0f / sqrtf((float)hp->head_dim_k);
    return r.status;
}

bool gguf_hparams_layer_is_swa(const gguf_hparams *hp, int64_t il)
{
    if (hp->swa_window <= 0 || il < 0)
        return false;
    if (hp->swa_layers) {
        gguf_value v;
        return gguf_array_scalar(hp->swa_layers, (uint64_t)il, &v) == GGUF_OK && v.v.b;
    }
    /* llama.cpp's set_swa_pattern: period 0 makes every layer sliding */
    return hp->swa_period == 0 || (uint32_t)(il % hp->swa_period) < hp->swa_period - 1;
}

int64_t gguf_hparams_dim(const gguf_hparams *hp, gguf_dim d)
{
    switch (d) {
    case GGUF_DIM_EMBD: return hp->n_embd;
    case GGUF_DIM_VOCAB: return hp->n_vocab;
    case GGUF_DIM_FF: return hp->n_ff;
    case GGUF_DIM_Q: return hp->n_head * hp->head_dim_k;
    case GGUF_DIM_KV_K: return hp->n_head_kv * hp->head_dim_k;
    case GGUF_DIM_KV_V: return hp->n_head_kv * hp->head_dim_v;
    case GGUF_DIM_Q_V: return hp->n_head * hp->head_dim_v;
    case GGUF_DIM_HEAD_K: return hp->head_dim_k;
    case GGUF_DIM_ROT_HALF: return hp->n_rot / 2;
    default: return 0;
    }
}

const char *gguf_dim_name(gguf_dim d)
{
    static const char *const names[GGUF_DIM_COUNT] = {
        [GGUF_DIM_NONE] = "", [GGUF_DIM_EMBD] = "embedding_length", [GGUF_DIM_VOCAB] = "tokens in the vocabulary",
        [GGUF_DIM_FF] = "feed_forward_length", [GGUF_DIM_Q] = "head_count x key_length",
        [GGUF_DIM_KV_K] = "head_count_kv x key_length", [GGUF_DIM_KV_V] = "head_count_kv x value_length",
        [GGUF_DIM_Q_V] = "head_count x value_length", [GGUF_DIM_HEAD_K] = "key_length",
        [GGUF_DIM_ROT_HALF] = "rope.dimension_count / 2",
    };
    return (unsigned)d < GGUF_DIM_COUNT ? names[d] : "";
}
