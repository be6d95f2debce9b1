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
         * the multiplier itself, whose ratio is then 1; without the key get_mscale(f, 1) */
        const bool own = hp->arch && (hp->arch->yarn_keys & MODEL_YARN_KEY_MSCALE_OWN);
        const float lm = hp->yarn_log_mul, m = own && lm != 1.0f ? lm : 1.0f;
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

/* A recurrent layer's sizes as llama.cpp's qwen35, nemotron_h and mamba loaders read them (all required): the
 * convolution's taps, the inner width, the state; then ssm.time_step_rank, which is the heads of a delta net or of
 * Mamba-2 (and ssm.group_count their groups), and Mamba-1's dt rank (a head per channel, one group; dt_b_c_rms
 * optional). */
static void ssm_sizes(reader *r, model_hparams *hp)
{
    const int64_t big = INT64_C(1) << 20, dims = 65536;
    hp->ssm_d_conv = get_int(r, "ssm.conv_kernel", true, 0, 1, 64, NULL);
    hp->ssm_d_inner = get_int(r, "ssm.inner_size", true, 0, 1, big, NULL);
    hp->ssm_d_state = get_int(r, "ssm.state_size", true, 0, 1, dims, NULL);
    const int64_t rank = get_int(r, "ssm.time_step_rank", true, 0, 1, dims, NULL);
    if (hp->arch && hp->arch->mamba1) {
        hp->ssm_dt_rank = rank;
        hp->ssm_dt_b_c_rms = get_bool(r, "ssm.dt_b_c_rms", false);
        hp->ssm_n_v_heads = hp->ssm_d_inner;
        return;
    }
    hp->ssm_n_v_heads = rank;
    hp->ssm_n_k_heads = get_int(r, "ssm.group_count", true, 0, 1, dims, NULL);
}

/* A gated delta net's sizes as llama.cpp's qwen35 loader reads them (all required), and which layers recur:
 * attention.recurrent_layers (an array of bools, one per layer) where the file has it, else all but every
 * full_attention_interval-th (default 4). */
static void delta_net(reader *r, model_hparams *hp)
{
    const int64_t dims = 65536;
    ssm_sizes(r, hp);
    hp->full_attn_interval = get_int(r, "full_attention_interval", false, 4, 1, dims, NULL);
    char key[160];
    snprintf(key, sizeof key, "%s.attention.recurrent_layers", r->arch);
    const gguf_kv *kv = gguf_find_kv(r->f, key);
    if (!kv)
        return;
    gguf_error e;
    if (kv->value.type != GGUF_VT_ARRAY || kv->value.elem_type != GGUF_VT_BOOL ||
        (hp->n_layer > 0 && kv->value.count != (uint64_t)hp->n_layer))
        note(r, gguf_fail(&e, GGUF_E_KEY_TYPE, kv->offset, key, "key '%s' must list block_count (%lld) bools", key,
                          (long long)hp->n_layer), &e);
    else
        hp->recurrent_layers = &kv->value;
}

/* A hybrid's attention.head_count_kv as llama.cpp's get_key_or_arr reads it: one count for every layer, or an array
 * of one per layer (block_count of them), where 0 marks a layer without attention (LFM2's short convolutions,
 * Nemotron-H's Mamba-2 and feed-forward layers); the attention layers' count is n_head_kv (one count for all of them:
 * the engine's cache has one row shape). */
static void kv_heads_per_layer(reader *r, model_hparams *hp)
{
    char key[160];
    snprintf(key, sizeof key, "%s.attention.head_count_kv", r->arch);
    const gguf_kv *kv = gguf_find_kv(r->f, key);
    if (!kv || kv->value.type != GGUF_VT_ARRAY) {
        hp->n_head_kv = get_int(r, "attention.head_count_kv", false, hp->n_head, 1, 65536, NULL);
        return;
    }
    gguf_error e;
    int64_t count = 0;
    for (uint64_t i = 0; i < kv->value.count; i++) {
        gguf_value v;
        int64_t n;
        if (gguf_array_scalar(&kv->value, i, &v) != GGUF_OK || !model_value_integer(&v, &n) || n < 0 || n > 65536 ||
            (n && count && n != count)) {
            note(r, gguf_fail(&e, GGUF_E_KEY_TYPE, kv->offset, key, "key '%s' must list a key/value head count for "
                              "each layer, 0 for a layer without attention, the others one count (entry %llu)", key,
                              (unsigned long long)i), &e);
            return;
        }
        count = n ? n : count;
    }
    if (hp->n_layer > 0 && kv->value.count != (uint64_t)hp->n_layer) {
        note(r, gguf_fail(&e, GGUF_E_KEY_TYPE, kv->offset, key, "key '%s' lists %llu layers, block_count is %lld", key,
                          (unsigned long long)kv->value.count, (long long)hp->n_layer), &e);
        return;
    }
    hp->kv_heads_layers = &kv->value;
    hp->n_head_kv = count ? count : hp->n_head; /* convolutions only: the attention's shape is never used */
}

/* whether <arch>.suffix is in the file as an array */
static bool is_array(reader *r, const char *suffix)
{
    char key[160];
    snprintf(key, sizeof key, "%s.%s", r->arch, suffix);
    const gguf_kv *kv = gguf_find_kv(r->f, key);
    return kv && kv->value.type == GGUF_VT_ARRAY;
}

/* <arch>.suffix as llama.cpp's get_key_or_arr reads it: one integer in [min, max] for every layer, or an array of one
 * per layer (block_count of them, *per_layer pointing at it); the largest of them, dflt when absent. */

static int64_t get_int_or_layers(reader *r, const char *suffix, int64_t dflt, int64_t min, int64_t max,
                                 const gguf_value **per_layer, model_hparams *hp)
{
    char key[160];
    snprintf(key, sizeof key, "%s.%s", r->arch, suffix);
    const gguf_kv *kv = gguf_find_kv(r->f, key);
    *per_layer = NULL;
    if (!kv || kv->value.type != GGUF_VT_ARRAY)
        return get_int(r, suffix, false, dflt, min, max, NULL);
    gguf_error e;
    if (hp->n_layer > 0 && kv->value.count != (uint64_t)hp->n_layer) {
        note(r, gguf_fail(&e, GGUF_E_KEY_TYPE, kv->offset, key, "key '%s' lists %llu layers, block_count is %lld", key,
                          (unsigned long long)kv->value.count, (long long)hp->n_layer), &e);
        return dflt;
    }
    int64_t widest = 0;
    for (uint64_t i = 0; i < kv->value.count; i++) {
        gguf_value v;
        int64_t n;
        if (gguf_array_scalar(&kv->value, i, &v) != GGUF_OK || !model_value_integer(&v, &n) || n < min || n > max) {
            note(r, gguf_fail(&e, GGUF_E_KEY_TYPE, kv->offset, key, "key '%s' must list one integer from %lld to %lld "
                              "per layer (entry %llu is not)", key, (long long)min, (long long)max,
                              (unsigned long long)i), &e);
            return dflt;
        }
        widest = n > widest ? n : widest;
    }
    *per_layer = &kv->value;
    return widest;
}

/* A float of a metadata value (F32 or F64), or false. */
static bool value_float(const gguf_value *v, float *out)
{
    if (v->type != GGUF_VT_FLOAT32 && v->type != GGUF_VT_FLOAT64)
        return false;
    *out = (float)v->v.f64;
    return true;
}

/* xIELU's four parameters as llama.cpp's apertus loader reads them (get_key_or_arr, required: one float for every
 * layer, or an array of block_count): keys of no architecture's prefix (xielu.alpha_n, as gguf-py's Keys.xIELU). */
static void xielu_params(reader *r, model_hparams *hp)
{
    static const char *const names[4] = { "xielu.alpha_n", "xielu.alpha_p", "xielu.beta", "xielu.eps" };
    for (int k = 0; k < 4; k++) {
        const gguf_kv *kv = gguf_find_kv(r->f, names[k]);
        gguf_error e;
        hp->xielu[k] = 0.0f;
        hp->xielu_layers[k] = NULL;
        if (!kv) {
            note(r, gguf_fail(&e, GGUF_E_KEY_NOT_FOUND, 0, names[k],
                              "key '%s' is not in the file: the %s architecture's xIELU activation needs it "
                              "(llama.cpp requires it)", names[k], r->arch), &e);
            return;
        }
        if (kv->value.type != GGUF_VT_ARRAY) {
            if (!value_float(&kv->value, &hp->xielu[k]))
                note(r, gguf_fail(&e, GGUF_E_KEY_TYPE, kv->offset, names[k], "key '%s' is %s, expected a float",
                                  names[k], gguf_value_type_name(kv->value.type)), &e);
            continue;
        }
        if (hp->n_layer > 0 && kv->value.count != (uint64_t)hp->n_layer) {
            note(r, gguf_fail(&e, GGUF_E_KEY_TYPE, kv->offset, names[k], "key '%s' lists %llu layers, block_count is "
                              "%lld", names[k], (unsigned long long)kv->value.count, (long long)hp->n_layer), &e);
            continue;
        }
        for (uint64_t i = 0; i < kv->value.count; i++) {
            gguf_value v;
            float x;
            if (gguf_array_scalar(&kv->value, i, &v) != GGUF_OK || !value_float(&v, &x)) {
                note(r, gguf_fail(&e, GGUF_E_KEY_TYPE, kv->offset, names[k], "key '%s' must list one float per layer "
                                  "(entry %llu is not)", names[k], (unsigned long long)i), &e);
                break;
            }
            if (i == 0)
                hp->xielu[k] = x;
        }
        hp->xielu_layers[k] = &kv->value;
    }
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
        hp->moe_gating_func = get_int(r, "expert_gating_func", keys & MODEL_MOE_KEY_GATING_REQUIRED, 0, 0, 255, NULL);
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
        if (!model_value_integer(&v, &n) || n < 0 || n > 65536) {
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
    hp->file = f;
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
    const bool by_width = hp->arch && hp->arch->blocks_by_width;
    if (by_width && is_array(&r, "attention.head_count")) /* DeciLM's: a count per layer, 0 for one without attention */
        hp->n_head = get_int_or_layers(&r, "attention.head_count", 0, 0, dims, &hp->heads_layers, hp);
    else
        hp->n_head = get_int(&r, "attention.head_count", true, 0, hp->arch && hp->arch->attention_free ? 0 : 1, dims,
                             NULL);
    if (hp->arch && hp->arch->shortconv)
        hp->shortconv_l_cache = get_int(&r, "shortconv.l_cache", true, 0, 2, 64, NULL);
    /* a hybrid's counts may mark layers without attention; Falcon-H1's every layer attends (mixer_beside) */
    if (hp->arch && (hp->arch->shortconv || hp->arch->mamba1 || (hp->arch->mamba2 && !hp->arch->mixer_beside)))
        kv_heads_per_layer(&r, hp);
    else /* DeciLM's 0: no key/value heads (a layer without attention, or its "linear attention") */
        hp->n_head_kv = get_int_or_layers(&r, "attention.head_count_kv", hp->n_head, by_width ? 0 : 1, dims,
                                          &hp->kv_heads_layers, hp);
    hp->n_ff = get_int_or_layers(&r, "feed_forward_length", 0, 0, big, &hp->ff_layers, hp);
    hp->n_ctx_train = get_int(&r, "context_length", false, 2048, 1, big, NULL);
    hp->vocab_size = get_int(&r, "vocab_size", false, 0, 1, INT32_MAX, NULL);
    hp->n_expert = get_int(&r, "expert_count", false, 0, 0, dims, NULL);
    hp->n_expert_used = get_int(&r, "expert_used_count", false, 0, 0, dims, NULL);
    if (hp->arch && hp->arch->expert_count_one_dense && hp->n_expert <= 1) /* its loader: one expert is dense */
        hp->n_expert = hp->n_expert_used = 0;
    if (hp->n_expert > 0) { /* widths as llama.cpp's loaders default them (src/models/qwen2moe.cpp, llama.cpp) */
        const model_arch *ma = hp->arch;
        int64_t split = ma && ma->moe_ff_split && hp->n_expert_used > 0 ? hp->n_ff / hp->n_expert_used : hp->n_ff;
        hp->n_ff_exp = get_int(&r, "expert_feed_forward_length", false, split, 0, big, NULL);
        if (ma && ma->moe_experts_ff_wide)
            hp->n_ff_exp = hp->n_ff;
        hp->n_ff_shexp = get_int(&r, "expert_shared_feed_forward_length", false, hp->n_ff, 0, big, NULL);
    }
    moe_routing(&r, hp);
    bool no_key_length = false, no_rot = false;
    const int64_t per_head = hp->n_head > 0 && hp->n_embd % hp->n_head == 0 ? hp->n_embd / hp->n_head : 0;
    hp->head_dim_k = get_int(&r, "attention.key_length", false, per_head, 1, dims, &no_key_length);
    hp->head_dim_from_key_length = !no_key_length;
    hp->head_dim_v = get_int(&r, "attention.value_length", false, hp->head_dim_k, 1, dims, NULL);
    hp->n_rot = get_int(&r, "rope.dimension_count", false, hp->head_dim_k, 2, dims, &no_rot);
    hp->head_dim_k_swa = get_int(&r, "attention.key_length_swa", false, 0, 1, dims, NULL);
    hp->head_dim_v_swa = get_int(&r, "attention.value_length_swa", false, 0, 1, dims, NULL);
    hp->n_rot_swa = get_int(&r, "rope.dimension_count_swa", false, 0, 2, dims, NULL);
    hp->n_kv_shared = get_int(&r, "attention.shared_kv_layers", false, 0, 0, dims, NULL);
    hp->n_embd_per_layer = get_int(&r, "embedding_length_per_layer_input", false, 0, 0, dims, NULL);
    hp->n_layer_kv = hp->n_layer - hp->n_kv_shared;
    if (hp->arch && hp->arch->mla)
        latent_attention(&r, hp);
    if (hp->arch && hp->arch->mrope) {
        rope_sections(&r, hp);
        hp->n_deepstack_layers = get_int(&r, "n_deepstack_layers", false, 0, 0, dims, NULL);
    }
    if (hp->arch && hp->arch->delta_net)
        delta_net(&r, hp);
    if (hp->arch && (hp->arch->mamba2 || hp->arch->mamba1))
        ssm_sizes(&r, hp);
    if (hp->arch && hp->arch->single_block) /* nemotron_h's loader */
        hp->moe_latent_size = get_int(&r, "moe_latent_size", false, 0, 0, big, NULL);
    hp->parallel = hp->arch && (hp->arch->parallel_ffn ||
                                (hp->arch->parallel_residual_key && get_bool(&r, "use_parallel_residual", true)));
    if (hp->arch && hp->arch->rope_finetuned_switch) /* granitehybrid's loader: the hybrids write false */
        hp->rope_off = !get_bool(&r, "rope.scaling.finetuned", true);
    if (hp->arch && hp->arch->shortconv) /* LFM2's window (llama.cpp reads it; not run here yet: check()) */
        hp->swa_window = get_int(&r, "attention.sliding_window", false, 0, 0, INT32_MAX, NULL);
    hp->n_rot_from_key = !no_rot;
    hp->eps = get_float(&r, hp->arch && hp->arch->norm_layer ? "attention.layer_norm_epsilon"
                                                             : "attention.layer_norm_rms_epsilon",
                        1e-5f, &hp->eps_defaulted);
    if (hp->eps_defaulted && hp->arch && hp->arch->eps_either_key) { /* nemotron_h's loader: the LayerNorm key */
        hp->eps_defaulted = false;
        hp->eps = get_float(&r, "attention.layer_norm_epsilon", 1e-5f, &hp->eps_defaulted);
    }
    hp->rope_base = get_float(&r, "rope.freq_base", 10000.0f, &hp->rope_base_defaulted);
    if (hp->arch && hp->arch->rope_base_alpha) { /* Hunyuan's NTK-aware base, in f32 as its loader computes it */
        const float alpha = get_float(&r, "rope.scaling.alpha", 0.0f, NULL);
        const int64_t d = hp->head_dim_k;
        if (alpha > 0.0f && d > 2)
            hp->rope_base = hp->rope_base * powf(alpha, (float)d / (float)(d - 2));
    }
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
    if (hp->arch && hp->arch->attn_temperature) /* Ministral 3: floors of the original context */
        hp->attn_temp_floor = (float)hp->n_ctx_orig_yarn;
    if (ar && ar->swa_period && (!ar->swa_n_layer || hp->n_layer == ar->swa_n_layer)) {
        hp->swa_window = get_int(&r, "attention.sliding_window", false, ar->swa_window_default, 0, INT32_MAX, NULL);
        if (ar->swa_chunked && hp->swa_window > 0) /* any window but 0 is the loader's own size (0: refused) */
            hp->swa_window = ar->swa_window_default;
        if (hp->swa_window > 0 && ar->swa_chunked) {
            hp->swa_chunked = true;
            hp->attn_temp_scale = ar->attn_temp_fixed_scale;
            hp->attn_temp_floor = (float)ar->attn_temp_fixed_floor;
            hp->attn_temp_offset = ar->attn_temp_fixed_offset;
            hp->attn_temp_nope_only = true;
        }
        if (hp->swa_window > 0) {
            hp->swa_period = ar->swa_period;
            swa_pattern(&r, hp);
            const bool global = ar->swa_rope == MODEL_SWA_ROPE_GLOBAL || ar->swa_rope == MODEL_SWA_ROPE_SAME;
            const float base = get_float(&r, "rope.freq_base_swa", global ? hp->rope_base : 10000.0f, NULL);
            hp->rope_base_swa = ar->swa_rope == MODEL_SWA_ROPE_UNSCALED || ar->swa_rope == MODEL_SWA_ROPE_SAME
                                    ? hp->rope_base
                                    : base;
            hp->rope_freq_scale_swa = global ? hp->rope_freq_scale : 1.0f;
            hp->yarn_swa_off = ar->swa_rope == MODEL_SWA_ROPE_UNSCALED;
        }
    }
    hp->qk_l2_norm = ar && ar->qk_l2_norm && hp->n_expert != ar->qk_l2_norm_off_experts;
    if (ar && ar->shexp_expert_wide && hp->n_expert > 0)
        hp->n_ff_shexp = hp->n_ff_exp;
    if (ar && ar->final_softcap)
        hp->final_softcap = get_float(&r, "final_logit_softcapping", ar->final_softcap_default, NULL);
    if (ar && ar->attn_softcap_default > 0.0f)
        hp->attn_softcap = get_float(&r, "attn_logit_softcapping", ar->attn_softcap_default, NULL);
    if (ar) { /* llama.cpp applies either where its value is > 0 (so not where it is NaN) */
        const float alibi = ar->alibi_key ? get_float(&r, "attention.max_alibi_bias", 0.0f, NULL) : ar->alibi_max_bias;
        bool clamp_absent = false;
        const float clamp = ar->clamp_kqv_key ? get_float(&r, "attention.clamp_kqv", 0.0f, &clamp_absent) : 0.0f;
        if (clamp_absent && ar->clamp_kqv_key == MODEL_NEED_REQUIRED) {
            char key[160];
            gguf_error e;
            snprintf(key, sizeof key, "%s.attention.clamp_kqv", r.arch);
            note(&r, gguf_fail(&e, GGUF_E_KEY_NOT_FOUND, 0, key,
                               "key '%s' is not in the file: a %s model clamps q, k and v (llama.cpp requires it)", key,
                               r.arch), &e);
        }
        hp->alibi_max_bias = alibi > 0.0f ? alibi : 0.0f;
        hp->clamp_kqv = clamp > 0.0f ? clamp : 0.0f;
        if (ar->act == MODEL_ACT_XIELU)
            xielu_params(&r, hp);
    }
    if (ar && ar->embd_scale_sqrt && hp->n_embd > 0)
        hp->embd_scale = sqrtf((float)hp->n_embd);
    if (ar && ar->attn_scale_embd_layers && hp->n_layer == ar->attn_scale_embd_layers && per_head > 0)
        hp->attn_scale = 1.0f / sqrtf((float)per_head);
    else if (ar && (ar->attn_scale_one || ar->attention_free)) /* (a state-space model's: never used) */
        hp->attn_scale = 1.0f;
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
    if (ar && ar->logit_scale_mul) { /* Cohere: the logits times logit_scale (absent or 0: none) */
        const float logit = get_float(&r, "logit_scale", 0.0f, NULL);
        hp->logit_scale = logit != 0.0f ? logit : 1.0f;
    }
    if (ar && ar->multipliers) { /* llama.cpp's granite loader: 0 (absent) leaves each one out; logit_scale required */
        const bool mini = ar->multipliers_minicpm; /* its loader's defaults, its graph granite's */
        const float d_embd = mini ? 12.0f : 0.0f, d_res = mini && hp->n_layer > 0 ? 1.4f / sqrtf((float)hp->n_layer) : 0.0f;
        const float d_logit = mini && hp->n_embd > 0 ? 256.0f / (float)hp->n_embd : 0.0f;
        const float embd = get_float(&r, "embedding_scale", d_embd, NULL), res = get_float(&r, "residual_scale", d_res, NULL),
                    attn = mini ? 0.0f : get_float(&r, "attention.scale", 0.0f, NULL);
        hp->embd_scale = embd != 0.0f ? embd : 1.0f;
        hp->residual_scale = res != 0.0f ? res : 1.0f;
        hp->attn_scale = attn != 0.0f ? attn : hp->attn_scale;
        bool absent = false; /* get_float sets it only when the key is absent */
        const float logit = get_float(&r, "logit_scale", d_logit, &absent);
        hp->logit_scale = (absent && !mini) || logit == 0.0f ? 0.0f : 1.0f / logit; /* 0: refused by check() */
        if (hp->logit_scale == 0.0f && ar->logit_scale_optional) /* granitehybrid's: absent or 0, no scaling */
            hp->logit_scale = 1.0f;
    }
    return r.status;
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
    return model_hparams_check(f, hp, err);
}
