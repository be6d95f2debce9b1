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
#include "model.h"
#include "model_internal.h"

#include <math.h>
#include <stdarg.h>
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

/* <arch>.suffix as a bool, dflt when absent */
static bool get_bool(reader *r, const char *suffix, bool dflt)
{
    char key[160];
    snprintf(key, sizeof key, "%s.%s", r->arch, suffix);
    bool v;
    gguf_error e;
    gguf_status s = gguf_get_bool(r->f, key, &v, &e);
    if (s == GGUF_OK)
        return v;
    if (s != GGUF_E_KEY_NOT_FOUND)
        note(r, s, &e);
    return dflt;
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

/* rope.scaling.type: none, linear, or yarn, with rope.scaling.factor; YaRN's settings as llama.cpp's context derives
 * them (src/llama-context.cpp: ext_factor 1, the magnitude correction get_mscale(factor, 1) cancelled by the
 * 1 + 0.1 ln(factor) that ggml's rope_yarn multiplies in again, times rope.scaling.attn_factor; beta_fast 32 and
 * beta_slow 1, which llama.cpp does not read from files), each in f32 as there. */
static void rope_scaling(reader *r, model_hparams *hp)
{
    hp->rope_scaling = MODEL_ROPE_SCALING_LINEAR; /* llama.cpp's default: a factor alone scales linearly */
    const bool betas = hp->arch && (hp->arch->yarn_keys & MODEL_YARN_KEY_BETAS);
    hp->yarn_beta_fast = betas ? get_float(r, "rope.scaling.yarn_beta_fast", 32.0f, NULL) : 32.0f;
    hp->yarn_beta_slow = betas ? get_float(r, "rope.scaling.yarn_beta_slow", 1.0f, NULL) : 1.0f;
    hp->yarn_attn_factor = 1.0f;
    hp->n_ctx_orig_yarn = get_int(r, "rope.scaling.original_context_length", false, hp->n_ctx_train, 1,
                                  INT64_C(1) << 30, NULL);
    char key[160];
    snprintf(key, sizeof key, "%s.rope.scaling.type", r->arch);
    gguf_str st;
    gguf_error e;
    gguf_status s = gguf_get_str(r->f, key, &st, &e);
    static const struct {
        const char *name;
        model_rope_scaling kind;
    } kinds[] = { { "none", MODEL_ROPE_SCALING_NONE }, { "linear", MODEL_ROPE_SCALING_LINEAR },
                  { "yarn", MODEL_ROPE_SCALING_YARN } };
    if (s == GGUF_OK) {
        size_t k = 0;
        while (k < sizeof kinds / sizeof kinds[0] && !(st.len == strlen(kinds[k].name) &&
                                                        memcmp(st.ptr, kinds[k].name, st.len) == 0))
            k++;
        if (k == sizeof kinds / sizeof kinds[0]) {
            note(r, gguf_fail(&e, GGUF_E_KEY_TYPE, gguf_find_kv(r->f, key)->offset, key,
                              "rope scaling '%.*s' is not supported (none, linear and yarn are)",
                              (int)(st.len < 32 ? st.len : 32), st.ptr), &e);
            return;
        }
        hp->rope_scaling = kinds[k].kind;
    } else if (s != GGUF_E_KEY_NOT_FOUND) {
        note(r, s, &e);
        return;
    }
    const float factor = get_float(r, "rope.scaling.factor", 0.0f, NULL);
    if (hp->rope_scaling != MODEL_ROPE_SCALING_NONE) /* llama.cpp: "never scale if scaling type is none" */
        hp->rope_freq_scale = factor != 0.0f ? 1.0f / factor : 1.0f;
    if (hp->rope_scaling == MODEL_ROPE_SCALING_YARN) {
        hp->yarn_ext_factor = 1.0f;
        const float f = 1.0f / hp->rope_freq_scale;
        /* llama.cpp's context: get_mscale(f, m) / get_mscale(f, yarn_log_multiplier) with m 1, but for deepseek2
         * (latent attention) the multiplier itself, whose ratio is then 1; without the key get_mscale(f, 1) */
        const float lm = hp->yarn_log_mul, m = hp->arch && hp->arch->mla && lm != 1.0f ? lm : 1.0f;
        const float mscale = f <= 1.0f ? 1.0f
                             : lm != 0.0f ? (0.1f * m * logf(f) + 1.0f) / (0.1f * lm * logf(f) + 1.0f)
                                          : 0.1f * logf(f) + 1.0f;
        hp->yarn_attn_factor = mscale * (1.0f / (1.0f + 0.1f * logf(f)));
    }
    hp->yarn_attn_factor *= get_float(r, "rope.scaling.attn_factor", 1.0f, NULL);
}

/* attention.sliding_window_pattern: a period, or one bool per layer. */
static void swa_pattern(reader *r, model_hparams *hp)
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

/* How the router weighs its choice: the entry's fields, or the file's keys where the family's llama.cpp loader reads
 * them (model_moe_key: src/models/glm4-moe.cpp all, minimax-m2.cpp the gating function); expert_gating_func 0
 * ("none") is the entry's, 0 or 1 for expert_weights_scale is none. nextn_predict_layers and expert_group_count
 * llama.cpp reads for every family (src/llama-model.cpp), leading_dense_block_count we read for a family not in the
 * table too, since it says which tensors a file has (the audit reads it whatever the architecture). */
static void moe_routing(reader *r, model_hparams *hp)
{
    const model_arch *ma = hp->arch;
    const unsigned keys = ma ? ma->moe_keys : MODEL_MOE_KEY_DENSE_LEAD;
    hp->moe_gating = ma ? ma->moe_gating : MODEL_MOE_SOFTMAX;
    hp->moe_renormalise = ma && ma->moe_renormalise;
    hp->moe_scale = 1.0f;
    const int64_t dims = 65536;
    hp->n_layer_nextn = get_int(r, "nextn_predict_layers", false, 0, 0, hp->n_layer > 0 ? hp->n_layer : dims, NULL);
    hp->n_expert_groups = get_int(r, "expert_group_count", false, 0, 0, dims, NULL);
    hp->n_group_used = get_int(r, "expert_group_used_count", false, 0, 0, dims, NULL);
    if (keys & MODEL_MOE_KEY_DENSE_LEAD)
        hp->n_layer_dense_lead = get_int(r, "leading_dense_block_count", false, 0, 0, dims, NULL);
    if (!ma || hp->n_expert == 0)
        return;
    if (keys & MODEL_MOE_KEY_GATING) {
        /* llama.cpp's llama_expert_gating_func_type: 1 softmax, 2 sigmoid, 3 softmax over the chosen; 4 (the square
         * root of softplus) and above are refused by check() */
        static const model_moe_gating gating_of[] = { MODEL_MOE_SOFTMAX, MODEL_MOE_SOFTMAX, MODEL_MOE_SIGMOID,
                                                      MODEL_MOE_SOFTMAX_WEIGHT };
        hp->moe_gating_func = get_int(r, "expert_gating_func", false, 0, 0, 255, NULL);
        if (hp->moe_gating_func > 0 && hp->moe_gating_func < 4)
            hp->moe_gating = gating_of[hp->moe_gating_func];
    }
    if (keys & MODEL_MOE_KEY_STEP)
        hp->n_moe_layer_step = get_int(r, "interleave_moe_layer_step", false, -1, 1, dims, NULL);
    if (keys & MODEL_MOE_KEY_NORM)
        hp->moe_renormalise = get_bool(r, "expert_weights_norm", false);
    if (keys & MODEL_MOE_KEY_SCALE) {
        const float scale = get_float(r, "expert_weights_scale", 0.0f, NULL);
        hp->moe_scale = scale != 0.0f ? scale : 1.0f;
    }
    if (keys & MODEL_MOE_KEY_SHARED) {
        /* one shared expert's width: the key where the loader reads it that way (and the file has it), else an
         * expert's */
        const int64_t each = keys & MODEL_MOE_KEY_SHARED_WIDTH
                                 ? get_int(r, "expert_shared_feed_forward_length", false, 0, 0, INT64_C(1) << 30, NULL)
                                 : 0;
        hp->n_ff_shexp = get_int(r, "expert_shared_count", false, 0, 0, dims, NULL) * (each ? each : hp->n_ff_exp);
    }
}

/* Latent attention's sizes as llama.cpp's deepseek2 loader reads them: kv_lora_rank required; q_lora_rank required
 * except in the "lite" shapes it knows by their layer count (26 or 27 layers, or 48 with a 128256-token vocabulary:
 * DeepSeek-V2-Lite, GigaChat3, Kanana-2), which take the query straight from the input whatever the key says;
 * key_length_mla and value_length_mla together or not at all. */
static void latent_attention(reader *r, model_hparams *hp)
{
    const int64_t big = INT64_C(1) << 20;
    const int64_t vocab = hp->vocab_size ? hp->vocab_size : hp->n_vocab;
    const bool lite = hp->n_layer == 26 || hp->n_layer == 27 || (hp->n_layer == 48 && vocab == 128256);
    hp->n_lora_q = lite ? 0 : get_int(r, "attention.q_lora_rank", true, 0, 0, big, NULL);
    hp->n_lora_kv = get_int(r, "attention.kv_lora_rank", true, 0, 1, big, NULL);
    bool no_k = false, no_v = false;
    hp->head_dim_k_mla = get_int(r, "attention.key_length_mla", false, 0, 1, big, &no_k);
    hp->head_dim_v_mla = get_int(r, "attention.value_length_mla", false, 0, 1, big, &no_v);
    if (no_k != no_v) {
        char key[160];
        gguf_error e;
        snprintf(key, sizeof key, "%s.attention.%s", r->arch, no_k ? "key_length_mla" : "value_length_mla");
        note(r, gguf_fail(&e, GGUF_E_KEY_NOT_FOUND, 0, key,
                          "key '%s' is missing: latent attention's key and value lengths come together (llama.cpp "
                          "asserts it)", key), &e);
    }
}

/* An integer value of any width as an int64 (false for another type, or a uint64 past INT64_MAX). */
static bool integer_of(const gguf_value *v, int64_t *out)
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

/* rope.dimension_sections as llama.cpp's get_key_or_arr reads it: an array of exactly 4, or one value for all four;
 * required by the families whose loader requires it. Whether it applies: model_arch.mrope, or for a family where it is
 * optional llama.cpp's use_mrope (the first two sections above 0). */
static void rope_sections(reader *r, model_hparams *hp)
{
    const model_arch *ma = hp->arch;
    char key[160];
    snprintf(key, sizeof key, "%s.rope.dimension_sections", r->arch);
    const gguf_kv *kv = gguf_find_kv(r->f, key);
    gguf_error e;
    if (!kv) {
        if (!ma->mrope_optional)
            note(r, gguf_fail(&e, GGUF_E_KEY_NOT_FOUND, 0, key,
                              "key '%s' is not in the file: a %s model rotates by sections (llama.cpp requires it)", key,
                              r->arch), &e);
        return;
    }
    const bool array = kv->value.type == GGUF_VT_ARRAY;
    if (array && kv->value.count != 4) {
        note(r, gguf_fail(&e, GGUF_E_KEY_TYPE, kv->offset, key, "key '%s' lists %llu sections, llama.cpp reads 4", key,
                          (unsigned long long)kv->value.count), &e);
        return;
    }
    for (uint64_t i = 0; i < 4; i++) {
        gguf_value v = kv->value;
        if (array && gguf_array_scalar(&kv->value, i, &v) != GGUF_OK) {
            note(r, gguf_fail(&e, GGUF_E_KEY_TYPE, kv->offset, key, "key '%s' is not an array of integers", key), &e);
            return;
        }
        int64_t n;
        if (!integer_of(&v, &n) || n < 0 || n > 65536) {
            note(r, gguf_fail(&e, GGUF_E_KEY_TYPE, kv->offset, key, "key '%s' holds a section that is not a count of "
                              "pairs (0 to 65536)", key), &e);
            return;
        }
        hp->rope_sections[i] = n;
    }
    hp->mrope = !ma->mrope_optional || (hp->rope_sections[0] > 0 && hp->rope_sections[1] > 0) ? ma->mrope
                                                                                              : MODEL_MROPE_NONE;
}

/* Every key, the first problem in err (the values read before and after it kept). */
static gguf_status read_keys(const gguf_file *f, model_hparams *hp, gguf_error *err)
{
    memset(hp, 0, sizeof *hp);
    hp->file_type = -1;
    hp->embd_scale = 1.0f;
    hp->residual_scale = 1.0f;
    hp->logit_scale = 1.0f;
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
    hp->arch = model_arch_find(a.ptr, (size_t)a.len);

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
    if (hp->n_expert > 0) { /* widths as llama.cpp's loaders default them (src/models/qwen2moe.cpp, llama.cpp) */
        const model_arch *ma = hp->arch;
        int64_t split = ma && ma->moe_ff_split && hp->n_expert_used > 0 ? hp->n_ff / hp->n_expert_used : hp->n_ff;
        hp->n_ff_exp = get_int(&r, "expert_feed_forward_length", false, split, 0, big, NULL);
        hp->n_ff_shexp = get_int(&r, "expert_shared_feed_forward_length", false, hp->n_ff, 0, big, NULL);
    }
    moe_routing(&r, hp);
    bool no_key_length = false, no_rot = false;
    const int64_t per_head = hp->n_head > 0 && hp->n_embd % hp->n_head == 0 ? hp->n_embd / hp->n_head : 0;
    hp->head_dim_k = get_int(&r, "attention.key_length", false, per_head, 1, dims, &no_key_length);
    hp->head_dim_from_key_length = !no_key_length;
    hp->head_dim_v = get_int(&r, "attention.value_length", false, hp->head_dim_k, 1, dims, NULL);
    hp->n_rot = get_int(&r, "rope.dimension_count", false, hp->head_dim_k, 2, dims, &no_rot);
    if (hp->arch && hp->arch->mla)
        latent_attention(&r, hp);
    if (hp->arch && hp->arch->mrope) {
        rope_sections(&r, hp);
        hp->n_deepstack_layers = get_int(&r, "n_deepstack_layers", false, 0, 0, dims, NULL);
    }
    hp->n_rot_from_key = !no_rot;
    hp->eps = get_float(&r, "attention.layer_norm_rms_epsilon", 1e-5f, &hp->eps_defaulted);
    hp->rope_base = get_float(&r, "rope.freq_base", 10000.0f, &hp->rope_base_defaulted);
    hp->rope_freq_scale = 1.0f;
    const unsigned yarn_keys = hp->arch ? hp->arch->yarn_keys : 0;
    if (yarn_keys & (MODEL_YARN_KEY_LOG_MUL | MODEL_YARN_KEY_LOG_MUL_TENTHS))
        hp->yarn_log_mul = get_float(&r, "rope.scaling.yarn_log_multiplier", 0.0f, NULL) /
                           (yarn_keys & MODEL_YARN_KEY_LOG_MUL_TENTHS ? 0.1f : 1.0f);
    if (hp->arch && hp->arch->attn_temperature)
        hp->attn_temp_scale = get_float(&r, "attention.temperature_scale", 0.0f, NULL);
    rope_scaling(&r, hp);
    hp->rope_base_swa = hp->rope_base;
    hp->rope_freq_scale_swa = hp->rope_freq_scale;

    const model_arch *ar = hp->arch;
    if (ar && ar->swa_period && (!ar->swa_n_layer || hp->n_layer == ar->swa_n_layer)) {
        hp->swa_window = get_int(&r, "attention.sliding_window", false, ar->swa_window_default, 0, INT32_MAX, NULL);
        if (hp->swa_window > 0) {
            hp->swa_period = ar->swa_period;
            swa_pattern(&r, hp);
            const bool global = ar->swa_rope == MODEL_SWA_ROPE_GLOBAL;
            const float base = get_float(&r, "rope.freq_base_swa", global ? hp->rope_base : 10000.0f, NULL);
            hp->rope_base_swa = ar->swa_rope == MODEL_SWA_ROPE_UNSCALED ? hp->rope_base : base;
            hp->rope_freq_scale_swa = global ? hp->rope_freq_scale : 1.0f;
            hp->yarn_swa_off = ar->swa_rope == MODEL_SWA_ROPE_UNSCALED;
        }
    }
    if (ar && ar->final_softcap)
        hp->final_softcap = get_float(&r, "final_logit_softcapping", ar->final_softcap_default, NULL);
    if (ar && ar->attn_softcap_default > 0.0f)
        hp->attn_softcap = get_float(&r, "attn_logit_softcapping", ar->attn_softcap_default, NULL);
    if (ar && ar->embd_scale_sqrt && hp->n_embd > 0)
        hp->embd_scale = sqrtf((float)hp->n_embd);
    if (ar && ar->attn_scale_embd_layers && hp->n_layer == ar->attn_scale_embd_layers && per_head > 0)
        hp->attn_scale = 1.0f / sqrtf((float)per_head);
    else if (hp->head_dim_k > 0)
        hp->attn_scale = 1.0f / sqrtf((float)hp->head_dim_k);
    if (ar && ar->mla) {
        /* llama.cpp's deepseek2 graph: the magnitude YaRN's rotation takes out of q and k put back into the scores
         * squared, with DeepSeek's own multiplier, over a head's key length after decompression */
        const float ln_factor = logf(1.0f / hp->rope_freq_scale);
        const float mscale = hp->yarn_attn_factor * (1.0f + 0.1f * ln_factor) * (1.0f + 0.1f * hp->yarn_log_mul * ln_factor);
        const int64_t k_mla = hp->head_dim_k_mla ? hp->head_dim_k_mla : hp->head_dim_k;
        if (k_mla > 0)
            hp->attn_scale = mscale * mscale / sqrtf((float)k_mla);
    }
    if (ar && ar->multipliers) { /* llama.cpp's granite loader: 0 (absent) leaves each one out; logit_scale required */
        const float embd = get_float(&r, "embedding_scale", 0.0f, NULL), res = get_float(&r, "residual_scale", 0.0f, NULL),
                    attn = get_float(&r, "attention.scale", 0.0f, NULL);
        hp->embd_scale = embd != 0.0f ? embd : 1.0f;
        hp->residual_scale = res != 0.0f ? res : 1.0f;
        hp->attn_scale = attn != 0.0f ? attn : hp->attn_scale;
        bool absent = false; /* get_float sets it only when the key is absent */
        const float logit = get_float(&r, "logit_scale", 0.0f, &absent);
        hp->logit_scale = absent || logit == 0.0f ? 0.0f : 1.0f / logit; /* 0: refused by check() */
    }
    return r.status;
}

bool model_hparams_layer_is_swa(const model_hparams *hp, int64_t il)
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

bool model_hparams_layer_rotates(const model_hparams *hp, int64_t il)
{
    if (hp->arch && hp->arch->rope_swa_only && hp->swa_window > 0)
        return model_hparams_layer_is_swa(hp, il);
    const uint32_t period = hp->arch ? hp->arch->no_rope_period : 0;
    return period == 0 || (il + 1) % period != 0;
}

int64_t model_hparams_dim(const model_hparams *hp, model_dim d)
{
    /* a head's key and value lengths as the attention computes them: after latent attention's decompression */
    const int64_t k_mla = hp->head_dim_k_mla ? hp->head_dim_k_mla : hp->head_dim_k;
    const int64_t v_mla = hp->head_dim_v_mla ? hp->head_dim_v_mla : hp->head_dim_v;
    switch (d) {
    case MODEL_DIM_EMBD: return hp->n_embd;
    case MODEL_DIM_VOCAB: return hp->n_vocab;
    case MODEL_DIM_FF: return hp->n_ff;
    case MODEL_DIM_Q: return hp->n_head * k_mla;
    case MODEL_DIM_KV_K: return hp->n_head_kv * hp->head_dim_k;
    case MODEL_DIM_KV_V: return hp->n_head_kv * hp->head_dim_v;
    case MODEL_DIM_Q_V: return hp->n_head * v_mla;
    case MODEL_DIM_QK_NORM_Q: return hp->arch && hp->arch->qk_norm_full ? hp->n_head * hp->head_dim_k : hp->head_dim_k;
    case MODEL_DIM_QK_NORM_K:
        return hp->arch && hp->arch->qk_norm_full ? hp->n_head_kv * hp->head_dim_k : hp->head_dim_k;
    case MODEL_DIM_QKV: return (hp->n_head + 2 * hp->n_head_kv) * hp->head_dim_k;
    case MODEL_DIM_FF_UP: return hp->arch && hp->arch->gate_up_fused ? 2 * hp->n_ff : hp->n_ff;
    case MODEL_DIM_ROT_HALF: return hp->n_rot / 2;
    case MODEL_DIM_EXPERT: return hp->n_expert;
    case MODEL_DIM_FF_EXP: return hp->n_ff_exp;
    case MODEL_DIM_FF_SHEXP: return hp->n_ff_shexp;
    case MODEL_DIM_HEAD: return hp->n_head;
    case MODEL_DIM_Q_LORA: return hp->n_lora_q;
    case MODEL_DIM_KV_LORA: return hp->n_lora_kv;
    case MODEL_DIM_KV_A: return hp->n_lora_kv > 0 ? hp->n_lora_kv + hp->n_rot : 0;
    case MODEL_DIM_KV_B: return k_mla > hp->n_rot ? hp->n_head * (k_mla - hp->n_rot + v_mla) : 0;
    case MODEL_DIM_QK_NOPE: return k_mla > hp->n_rot ? k_mla - hp->n_rot : 0;
    case MODEL_DIM_V_MLA: return v_mla;
    default: return 0;
    }
}

bool model_role_shape(const model_hparams *hp, const model_role_info *ri, int64_t ne[3])
{
    const model_dim dims[3] = { ri->ne0, ri->ne1, ri->ne2 };
    bool known = true;
    for (int k = 0; k < 3; k++) {
        ne[k] = k > 0 && dims[k] == MODEL_DIM_NONE ? 1 : model_hparams_dim(hp, dims[k]);
        known &= ne[k] > 0;
    }
    return known;
}

const char *model_dim_name(model_dim d)
{
    static const char *const names[MODEL_DIM_COUNT] = {
        [MODEL_DIM_NONE] = "", [MODEL_DIM_EMBD] = "embedding_length", [MODEL_DIM_VOCAB] = "tokens in the vocabulary",
        [MODEL_DIM_FF] = "feed_forward_length", [MODEL_DIM_Q] = "head_count x key_length",
        [MODEL_DIM_KV_K] = "head_count_kv x key_length", [MODEL_DIM_KV_V] = "head_count_kv x value_length",
        [MODEL_DIM_Q_V] = "head_count x value_length", [MODEL_DIM_QK_NORM_Q] = "key_length (or head_count x key_length)",
        [MODEL_DIM_QK_NORM_K] = "key_length (or head_count_kv x key_length)",
        [MODEL_DIM_QKV] = "(head_count + 2 head_count_kv) x key_length",
        [MODEL_DIM_FF_UP] = "feed_forward_length (x2 with the gate fused in)",
        [MODEL_DIM_ROT_HALF] = "rope.dimension_count / 2", [MODEL_DIM_EXPERT] = "expert_count",
        [MODEL_DIM_FF_EXP] = "expert_feed_forward_length", [MODEL_DIM_FF_SHEXP] = "expert_shared_feed_forward_length",
        [MODEL_DIM_HEAD] = "head_count", [MODEL_DIM_Q_LORA] = "q_lora_rank", [MODEL_DIM_KV_LORA] = "kv_lora_rank",
        [MODEL_DIM_KV_A] = "kv_lora_rank + rope.dimension_count",
        [MODEL_DIM_KV_B] = "head_count x (key_length_mla - rope.dimension_count + value_length_mla)",
        [MODEL_DIM_QK_NOPE] = "key_length_mla - rope.dimension_count", [MODEL_DIM_V_MLA] = "value_length_mla",
    };
    return (unsigned)d < MODEL_DIM_COUNT ? names[d] : "";
}

model_status model_fail(model_error *err, model_status code, uint64_t offset, const char *subject, const char *fmt,
                        ...)
{
    if (err) {
        err->code = code;
        err->offset = offset;
        va_list ap;
        va_start(ap, fmt);
        gguf_error_textv(err->subject, err->message, subject, fmt, ap);
        va_end(ap);
    }
    return code;
}

/* Where a key starts (0 when the file leaves it to its default): the offset a message names. */
static uint64_t key_offset(const gguf_file *f, const char *key)
{
    const gguf_kv *kv = gguf_find_kv(f, key);
    return kv ? kv->offset : 0;
}

/* What llama.cpp's loader refuses or asserts on, and what makes every output NaN or a constant, for an
 * architecture in the table (src/llama-model.cpp load_hparams; src/models/<arch>.cpp load_arch_tensors). */
static model_status check(const gguf_file *f, const model_hparams *hp, model_error *err)
{
    char key[160];
    const char *arch = hp->arch_name;
    if (hp->arch->no_gqa && hp->n_head_kv != hp->n_head) {
        snprintf(key, sizeof key, "%s.attention.head_count_kv", arch);
        return model_fail(err, MODEL_E_MALFORMED, key_offset(f, key), key,
                    "key '%s' is %lld, head_count %lld: llama.cpp's %s loader sizes attn_k and attn_v as attn_q and "
                    "refuses grouped heads", key, (long long)hp->n_head_kv, (long long)hp->n_head, arch);
    }
    if (hp->n_layer_nextn > 0 && hp->n_layer_nextn >= hp->n_layer) {
        snprintf(key, sizeof key, "%s.nextn_predict_layers", arch);
        return model_fail(err, MODEL_E_UNSUPPORTED, key_offset(f, key), key,
                    "key '%s' is %lld of %lld blocks: a file of multi-token prediction blocks alone has no "
                    "layers to generate with", key, (long long)hp->n_layer_nextn, (long long)hp->n_layer);
    }
    if (hp->n_expert > 0) { /* llama.cpp asserts 0 < expert_used_count <= expert_count, then reads the experts */
        snprintf(key, sizeof key, "%s.expert_count", arch);
        if (hp->moe_gating_func >= 4) {
            snprintf(key, sizeof key, "%s.expert_gating_func", arch);
            return model_fail(err, hp->moe_gating_func == 4 ? MODEL_E_UNSUPPORTED : MODEL_E_MALFORMED,
                        key_offset(f, key), key, hp->moe_gating_func == 4
                            ? "key '%s' is 4: experts weighed by the square root of softplus are not run by gguf-run yet"
                            : "key '%s' is %lld, which is no gating function llama.cpp knows (1 softmax, 2 sigmoid, "
                              "3 softmax of the chosen, 4 square root of softplus)", key, (long long)hp->moe_gating_func);
        }
        snprintf(key, sizeof key, "%s.interleave_moe_layer_step", arch);
        if (hp->n_moe_layer_step < 0)
            return model_fail(err, MODEL_E_MALFORMED, 0, key, "key '%s' is missing: llama.cpp's %s loader requires it",
                        key, arch);
        if (hp->n_moe_layer_step > 1)
            return model_fail(err, MODEL_E_UNSUPPORTED, key_offset(f, key), key,
                        "key '%s' is %lld: experts every %lld-th layer are not run by gguf-run yet (llama.cpp's "
                        "loader makes experts for every layer past the dense ones)", key,
                        (long long)hp->n_moe_layer_step, (long long)hp->n_moe_layer_step);
        snprintf(key, sizeof key, "%s.expert_count", arch);
        if (hp->n_expert > MODEL_EXPERTS_MAX)
            return model_fail(err, MODEL_E_MALFORMED, key_offset(f, key), key,
                        "key '%s' is %lld: llama.cpp loads at most %d experts and stops on an assertion", key,
                        (long long)hp->n_expert, MODEL_EXPERTS_MAX);
        /* llama.cpp's asserts on grouped routing (src/llama-model.cpp) */
        if (hp->n_expert_groups >= hp->n_expert || (hp->n_expert_groups > 1 && hp->n_expert % hp->n_expert_groups)) {
            snprintf(key, sizeof key, "%s.expert_group_count", arch);
            return model_fail(err, MODEL_E_MALFORMED, key_offset(f, key), key,
                        "key '%s' is %lld: the %lld experts cannot be cut into that many groups of equal size "
                        "(llama.cpp stops on an assertion)", key, (long long)hp->n_expert_groups,
                        (long long)hp->n_expert);
        }
        if (hp->n_expert_groups > 1 && (hp->n_group_used < 1 || hp->n_group_used >= hp->n_expert_groups)) {
            snprintf(key, sizeof key, "%s.expert_group_used_count", arch);
            return model_fail(err, MODEL_E_MALFORMED, key_offset(f, key), key,
                        "key '%s' is %lld: a token must choose 1 to %lld of the %lld groups of experts (llama.cpp "
                        "stops on an assertion)", key, (long long)hp->n_group_used,
                        (long long)hp->n_expert_groups - 1, (long long)hp->n_expert_groups);
        }
        char router[64]; /* the first layer with experts: after the leading dense ones */
        snprintf(router, sizeof router, "blk.%lld.ffn_gate_inp.weight", (long long)hp->n_layer_dense_lead);
        if (hp->n_layer_dense_lead < hp->n_layer && !gguf_tensor_by_name(f, router))
            return model_fail(err, MODEL_E_MALFORMED, key_offset(f, key), key,
                        "key '%s' says %lld experts, but the file has no expert tensors (llama.cpp looks for "
                        "%s and refuses it)", key, (long long)hp->n_expert, router);
        if (hp->n_expert_used < 1 || hp->n_expert_used > hp->n_expert) {
            snprintf(key, sizeof key, "%s.expert_used_count", arch);
            return model_fail(err, MODEL_E_MALFORMED, key_offset(f, key), key,
                        "key '%s' is %lld: it must be 1 to expert_count (%lld); llama.cpp stops on an assertion", key,
                        (long long)hp->n_expert_used, (long long)hp->n_expert);
        }
        if (!hp->arch->moe)
            return model_fail(err, MODEL_E_UNSUPPORTED, key_offset(f, key), key,
                        "a mixture-of-experts %s (%lld experts, %lld used per token) is not run by gguf-run yet",
                        arch, (long long)hp->n_expert, (long long)hp->n_expert_used);
        if (hp->n_ff_exp <= 0) {
            snprintf(key, sizeof key, "%s.expert_feed_forward_length", arch);
            return model_fail(err, MODEL_E_MALFORMED, key_offset(f, key), key,
                        "the experts are 0 values wide (key '%s', or feed_forward_length / expert_used_count): "
                        "llama.cpp refuses the expert tensors", key);
        }
    } else if (hp->arch->need[MODEL_ROLE_FFN_GATE_INP] && !hp->arch->need[MODEL_ROLE_FFN_GATE]) {
        /* an architecture that is only ever a mixture of experts */
        snprintf(key, sizeof key, "%s.expert_count", arch);
        return model_fail(err, MODEL_E_MALFORMED, key_offset(f, key), key,
                    "a %s model needs key '%s' > 0 (it has no dense feed-forward block); llama.cpp refuses it", arch,
                    key);
    }
    if (hp->n_expert == 0 && hp->n_ff <= 0) { /* llama.cpp sizes ffn_gate (n_embd, n_ff) by it and refuses the file */
        snprintf(key, sizeof key, "%s.feed_forward_length", arch);
        return model_fail(err, MODEL_E_MALFORMED, key_offset(f, key), key,
                    "key '%s' is %s: llama.cpp sizes the feed-forward tensors by it and refuses the file", key,
                    gguf_find_kv(f, key) ? "0" : "missing");
    }
    if (hp->head_dim_k == 0) {
        snprintf(key, sizeof key, "%s.attention.head_count", arch);
        return model_fail(err, MODEL_E_MALFORMED, key_offset(f, key), key,
                    "no attention.key_length, and %lld heads (key '%s') do not divide embedding_length %lld",
                    (long long)hp->n_head, key, (long long)hp->n_embd);
    }
    if (hp->n_head * hp->head_dim_k > (INT64_C(1) << 30)) { /* a forward pass indexes rows with int */
        snprintf(key, sizeof key, "%s.attention.head_count", arch);
        return model_fail(err, MODEL_E_MALFORMED, key_offset(f, key), key,
                    "%lld heads (key '%s') of %lld values make query rows of more than 2^30 values",
                    (long long)hp->n_head, key, (long long)hp->head_dim_k);
    }
    if (hp->n_head % hp->n_head_kv) {
        snprintf(key, sizeof key, "%s.attention.head_count_kv", arch);
        return model_fail(err, MODEL_E_MALFORMED, key_offset(f, key), key,
                    "%lld query heads cannot share %lld key/value heads (key '%s') evenly", (long long)hp->n_head,
                    (long long)hp->n_head_kv, key);
    }
    if (hp->head_dim_v != hp->head_dim_k && !hp->arch->mla) {
        snprintf(key, sizeof key, "%s.attention.value_length", arch);
        return model_fail(err, MODEL_E_MALFORMED, key_offset(f, key), key,
                    "value length %lld (key '%s') differs from key length %lld: not supported",
                    (long long)hp->head_dim_v, key, (long long)hp->head_dim_k);
    }
    if (hp->arch->mla) { /* what llama.cpp's deepseek2 loader asserts, or its cache would not fit its rows */
        const bool split = hp->head_dim_k_mla > 0;
        const int64_t k_mla = split ? hp->head_dim_k_mla : hp->head_dim_k;
        const struct {
            bool bad;
            const char *suffix;
        } fits[] = {
            { k_mla <= hp->n_rot, split ? "attention.key_length_mla" : "attention.key_length" },
            { split && hp->head_dim_k != hp->n_lora_kv + hp->n_rot, "attention.key_length" },
            { split && hp->head_dim_v != hp->n_lora_kv, "attention.value_length" },
            { hp->n_head_kv != (split ? 1 : hp->n_head), "attention.head_count_kv" },
        };
        const char *bad = NULL;
        for (size_t i = 0; i < sizeof fits / sizeof fits[0] && !bad; i++)
            bad = fits[i].bad ? fits[i].suffix : NULL;
        if (bad) {
            snprintf(key, sizeof key, "%s.%s", arch, bad);
            return model_fail(err, MODEL_E_MALFORMED, key_offset(f, key), key,
                        "latent attention's sizes do not fit (key '%s'): a head's key of %lld values (%lld rotary) "
                        "needs more than its rotary part; split per head, the cached key is kv_lora_rank %lld + the "
                        "rotary %lld, the value kv_lora_rank, one key/value head; whole, one key/value head per query "
                        "head (the file: key_length %lld, value_length %lld, head_count_kv %lld of %lld)", key,
                        (long long)k_mla, (long long)hp->n_rot, (long long)hp->n_lora_kv, (long long)hp->n_rot,
                        (long long)hp->head_dim_k, (long long)hp->head_dim_v, (long long)hp->n_head_kv,
                        (long long)hp->n_head);
        }
    }
    if (hp->mrope) { /* what llama.cpp's multi-axis rope and its qwen2vl / qwen3vl graphs assert */
        const int64_t *s = hp->rope_sections, sum = s[0] + s[1] + s[2] + s[3];
        const bool whole = hp->arch->mrope_optional || hp->n_rot == hp->head_dim_k;
        if (sum > hp->head_dim_k || (s[0] == 0 && s[1] == 0 && s[2] == 0) || !whole) {
            snprintf(key, sizeof key, "%s.%s", arch, whole ? "rope.dimension_sections" : "rope.dimension_count");
            return model_fail(err, MODEL_E_MALFORMED, key_offset(f, key), key,
                        "rotary sections %lld, %lld, %lld, %lld (key '%s.rope.dimension_sections') do not fit heads of "
                        "%lld values with %lld rotating: llama.cpp asserts that the sections, one of the first three "
                        "at least, fit a head%s", (long long)s[0], (long long)s[1], (long long)s[2], (long long)s[3],
                        arch, (long long)hp->head_dim_k, (long long)hp->n_rot,
                        hp->arch->mrope_optional ? "" : ", and that the whole head rotates");
        }
    }
    if (hp->n_rot > hp->head_dim_k || hp->n_rot % 2) {
        snprintf(key, sizeof key, "%s.rope.dimension_count", arch);
        return model_fail(err, MODEL_E_MALFORMED, key_offset(f, key), key,
                    "rotary dimensions %lld (key '%s') do not fit a head of %lld", (long long)hp->n_rot, key,
                    (long long)hp->head_dim_k);
    }
    /* llama.cpp takes these as they come; out of these ranges every output is NaN or a constant (an infinite
     * epsilon or soft-cap, a scaling factor whose inverse overflows), so the file is refused, naming the key */
    const struct {
        const char *suffix;
        double value, max; /* finite, above 0 (at 0 too where zero_ok), below max */
        bool zero_ok;
        const char *range;
    } ranged[] = {
        { "attention.layer_norm_rms_epsilon", hp->eps, 1.0, false,
          "a small positive number (under 1: an epsilon is added to a mean square, not in place of it)" },
        { "rope.freq_base", hp->rope_base, HUGE_VAL, false, "a finite positive number" },
        { "rope.freq_base_swa", hp->rope_base_swa, HUGE_VAL, false, "a finite positive number" },
        /* the factor as the forward pass sees it: the inverse of its position scale (0 or infinite when the
         * factor's inverse overflows or vanishes in float) */
        { "rope.scaling.factor", 1.0 / hp->rope_freq_scale, HUGE_VAL, false,
          "a positive number whose inverse (the position scale) is finite and above 0" },
        { "final_logit_softcapping", hp->final_softcap, HUGE_VAL, true, "a finite positive number, or 0 (none)" },
        { "attn_logit_softcapping", hp->attn_softcap, HUGE_VAL, true, "a finite positive number, or 0 (none)" },
        /* the multipliers as the forward pass sees them (granite's keys; 1 where an architecture has none) */
        { "logit_scale", hp->logit_scale, HUGE_VAL, false, "a positive number whose inverse is finite" },
        { "residual_scale", hp->residual_scale, HUGE_VAL, false, "a finite positive number" },
        { "embedding_scale", hp->embd_scale, HUGE_VAL, false, "a finite positive number" },
        { "attention.scale", hp->attn_scale, HUGE_VAL, false, "a finite positive number" },
    };
    for (size_t i = 0; i < sizeof ranged / sizeof ranged[0]; i++) {
        const double v = ranged[i].value;
        if (isfinite(v) && (v > 0 || (ranged[i].zero_ok && v == 0)) && v < ranged[i].max)
            continue;
        snprintf(key, sizeof key, "%s.%s", arch, ranged[i].suffix);
        const gguf_kv *kv = gguf_find_kv(f, key); /* the file's own number, as the message shows it */
        const bool raw = kv && (kv->value.type == GGUF_VT_FLOAT32 || kv->value.type == GGUF_VT_FLOAT64);
        return model_fail(err, MODEL_E_MALFORMED, key_offset(f, key), key, "key '%s' is %g: it must be %s", key,
                    raw ? kv->value.v.f64 : v, ranged[i].range);
    }
    return MODEL_OK;
}

model_status model_hparams_read(const gguf_file *f, model_hparams *hp, model_error *err)
{
    gguf_error ge;
    const gguf_status gs = read_keys(f, hp, &ge);
    if (!hp->arch_name[0] && gs != GGUF_OK)
        return model_fail(err, MODEL_E_MALFORMED, ge.offset, "general.architecture",
                    "%s; cannot tell the architecture (supported: %s)", ge.message, model_arch_names());
    if (!hp->arch) {
        const gguf_kv *kv = gguf_find_kv(f, "general.architecture");
        if (!gguf_is_identifier(kv->value.v.str.ptr, kv->value.v.str.len))
            return model_fail(err, MODEL_E_MALFORMED, kv->offset, "general.architecture",
                        "general.architecture '%s' is not an architecture's name (letters, digits, '_', '-', '.'; "
                        "supported: %s)", hp->arch_name, model_arch_names());
        return model_fail(err, MODEL_E_UNSUPPORTED, kv->offset, "general.architecture",
                    "architecture '%s' is not supported by gguf-run (supported: %s)", hp->arch_name,
                    model_arch_names());
    }
    if (gs != GGUF_OK)
        return model_fail(err, MODEL_E_MALFORMED, ge.offset, ge.subject, "%s", ge.message);
    return check(f, hp, err);
}
