/*
 * Hyperparameters from GGUF metadata, with llama.cpp's defaults where a key
 * is absent (keys and defaults: llama.cpp src/llama-model.cpp, llama-arch.cpp):
 *   rope.freq_base 10000; rope.dimension_count = head dim;
 *   attention.key_length = head dim (else n_embd / n_head);
 *   attention.head_count_kv = head_count; rope type NORM for llama, NEOX for qwen2.
 */
#include "internal.h"

#include <stdio.h>
#include <string.h>

const char *engine_supported_archs(void)
{
    return "llama, qwen2";
}

static engine_status get_int(const gguf_file *f, const char *arch, const char *suffix, bool required, int64_t dflt,
                             int64_t min, int64_t max, int *out, bool *defaulted, engine_error *err)
{
    char key[160];
    snprintf(key, sizeof key, "%s.%s", arch, suffix);
    int64_t v;
    gguf_error ge;
    gguf_status s = gguf_get_int(f, key, min, max, &v, &ge);
    if (s == GGUF_E_KEY_NOT_FOUND && !required) {
        *out = (int)dflt;
        if (defaulted)
            *defaulted = true;
        return ENGINE_OK;
    }
    if (s != GGUF_OK)
        return engine_fail(err, ENGINE_E_MODEL, ge.offset, key, "%s%s", ge.message,
                           s == GGUF_E_KEY_NOT_FOUND ? ": the model's hyperparameters are incomplete" : "");
    *out = (int)v;
    return ENGINE_OK;
}

static engine_status get_float(const gguf_file *f, const char *arch, const char *suffix, float dflt, float *out,
                               bool *defaulted, engine_error *err)
{
    char key[160];
    snprintf(key, sizeof key, "%s.%s", arch, suffix);
    const gguf_kv *kv = gguf_find_kv(f, key);
    if (!kv) {
        *out = dflt;
        if (defaulted)
            *defaulted = true;
        return ENGINE_OK;
    }
    if (kv->value.type != GGUF_VT_FLOAT32 && kv->value.type != GGUF_VT_FLOAT64)
        return engine_fail(err, ENGINE_E_MODEL, kv->offset, key, "key '%s' is %s, expected a float", key,
                           gguf_value_type_name(kv->value.type));
    *out = (float)kv->value.v.f64;
    return ENGINE_OK;
}

engine_status engine_hparams_read(const gguf_file *f, engine_hparams *hp, engine_error *err)
{
    memset(hp, 0, sizeof *hp);
    gguf_str a;
    gguf_error ge;
    if (gguf_get_str(f, "general.architecture", &a, &ge) != GGUF_OK)
        return engine_fail(err, ENGINE_E_ARCH, ge.offset, "general.architecture",
                           "%s; cannot tell the architecture (supported: %s)", ge.message, engine_supported_archs());
    snprintf(hp->arch, sizeof hp->arch, "%.*s", (int)(a.len < 31 ? a.len : 31), a.ptr);
    bool neox;
    if (a.len == 5 && !memcmp(a.ptr, "llama", 5))
        neox = false;
    else if (a.len == 5 && !memcmp(a.ptr, "qwen2", 5))
        neox = true;
    else
        return engine_fail(err, ENGINE_E_ARCH, 0, "general.architecture",
                           "architecture '%.*s' is not supported by gguf-run (supported: %s)", (int)a.len, a.ptr,
                           engine_supported_archs());
    const char *ar = hp->arch;
    engine_status s;
    const int64_t big = 1 << 30;
    if ((s = get_int(f, ar, "embedding_length", true, 0, 1, big, &hp->n_embd, NULL, err)) ||
        (s = get_int(f, ar, "block_count", true, 0, 1, 65536, &hp->n_layer, NULL, err)) ||
        (s = get_int(f, ar, "attention.head_count", true, 0, 1, 65536, &hp->n_head, NULL, err)) ||
        (s = get_int(f, ar, "attention.head_count_kv", false, hp->n_head, 1, 65536, &hp->n_kv_head, NULL, err)) ||
        (s = get_int(f, ar, "feed_forward_length", false, 0, 0, big, &hp->n_ff, NULL, err)) ||
        (s = get_int(f, ar, "context_length", false, 2048, 1, big, &hp->n_ctx_train, NULL, err)))
        return s;
    bool no_key_length = false;
    if ((s = get_int(f, ar, "attention.key_length", false, hp->n_embd / hp->n_head, 1, 65536, &hp->head_dim,
                     &no_key_length, err)))
        return s;
    hp->head_dim_from_key_length = !no_key_length;
    int v_len = 0;
    if ((s = get_int(f, ar, "attention.value_length", false, hp->head_dim, 1, 65536, &v_len, NULL, err)))
        return s;
    bool no_rot = false;
    if ((s = get_int(f, ar, "rope.dimension_count", false, hp->head_dim, 2, 65536, &hp->rope.n_rot, &no_rot, err)))
        return s;
    hp->n_rot_from_key = !no_rot;
    if ((s = get_float(f, ar, "attention.layer_norm_rms_epsilon", 1e-5f, &hp->eps, &hp->eps_defaulted, err)) ||
        (s = get_float(f, ar, "rope.freq_base", 10000.0f, &hp->rope.base, &hp->base_defaulted, err)))
        return s;
    float factor = 1.0f;
    char key[160];
    snprintf(key, sizeof key, "%s.rope.scaling.type", ar);
    gguf_str st;
    if (gguf_get_str(f, key, &st, &ge) == GGUF_OK && !(st.len == 4 && !memcmp(st.ptr, "none", 4))) {
        if (!(st.len == 6 && !memcmp(st.ptr, "linear", 6)))
            return engine_fail(err, ENGINE_E_MODEL, gguf_find_kv(f, key)->offset, key,
                               "rope scaling '%.*s' is not supported (none and linear are)", (int)st.len, st.ptr);
        if ((s = get_float(f, ar, "rope.scaling.factor", 1.0f, &factor, NULL, err)))
            return s;
    }
    hp->rope.freq_scale = factor > 0.0f ? 1.0f / factor : 1.0f;
    hp->rope.neox = neox;

    if (hp->n_head % hp->n_kv_head)
        return engine_fail(err, ENGINE_E_MODEL, 0, "attention.head_count_kv",
                           "%d query heads cannot share %d key/value heads evenly", hp->n_head, hp->n_kv_head);
    if (v_len != hp->head_dim)
        return engine_fail(err, ENGINE_E_MODEL, 0, "attention.value_length",
                           "value length %d differs from key length %d: not supported", v_len, hp->head_dim);
    if (hp->rope.n_rot > hp->head_dim || hp->rope.n_rot % 2)
        return engine_fail(err, ENGINE_E_MODEL, 0, "rope.dimension_count",
                           "rotary dimensions %d do not fit a head of %d", hp->rope.n_rot, hp->head_dim);
    if (!(hp->eps > 0.0f) || !(hp->rope.base > 0.0f))
        return engine_fail(err, ENGINE_E_MODEL, 0, hp->eps > 0.0f ? "rope.freq_base" : "layer_norm_rms_epsilon",
                           "epsilon %g / rope base %g must be positive", hp->eps, hp->rope.base);
    return ENGINE_OK;
}
