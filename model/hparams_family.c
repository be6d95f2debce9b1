/*
 * The hyperparameters only some families' llama.cpp loaders read (hparams_reader.h): rope scaling and YaRN, the
 * sliding-window pattern, the recurrent layers' sizes, key/value heads per layer, xIELU's parameters, the router's
 * keys, latent attention's sizes, rotary sections.
 */
#include "model.h"
#include "model_internal.h"
#include "hparams_reader.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* rope.scaling.type: none, linear, or yarn, with rope.scaling.factor; YaRN's settings as llama.cpp's context derives
 * them (src/llama-context.cpp: ext_factor 1, the magnitude correction get_mscale(factor, 1) cancelled by the
 * 1 + 0.1 ln(factor) that ggml's rope_yarn multiplies in again, times rope.scaling.attn_factor; beta_fast 32 and
 * beta_slow 1, which llama.cpp does not read from files), each in f32 as there. */
void hp_rope_scaling(hp_reader *r, model_hparams *hp)
{
    hp->rope_scaling = MODEL_ROPE_SCALING_LINEAR; /* llama.cpp's default: a factor alone scales linearly */
    const bool betas = hp->arch && (hp->arch->yarn_keys & MODEL_YARN_KEY_BETAS);
    const float fast = hp->arch && hp->arch->yarn_beta_fast_default > 0.0f ? hp->arch->yarn_beta_fast_default : 32.0f;
    hp->yarn_beta_fast = betas ? hp_get_float(r, "rope.scaling.yarn_beta_fast", fast, NULL) : fast;
    hp->yarn_beta_slow = betas ? hp_get_float(r, "rope.scaling.yarn_beta_slow", 1.0f, NULL) : 1.0f;
    hp->yarn_attn_factor = 1.0f;
    hp->n_ctx_orig_yarn = hp_get_int(r, "rope.scaling.original_context_length", false, hp->n_ctx_train, 1,
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
            hp_fail(r, GGUF_E_KEY_TYPE, gguf_find_kv(r->f, key)->offset, key,
                    "rope scaling '%.*s' is not supported (none, linear and yarn are)",
                    (int)(st.len < 32 ? st.len : 32), st.ptr);
            return;
        }
        hp->rope_scaling = kinds[k].kind;
    } else if (s != GGUF_E_KEY_NOT_FOUND) {
        hp_note(r, s, &e);
        return;
    }
    const float factor = hp_get_float(r, "rope.scaling.factor", 0.0f, NULL);
    if (hp->rope_scaling != MODEL_ROPE_SCALING_NONE) /* llama.cpp: "never scale if scaling type is none" */
        hp->rope_freq_scale = factor != 0.0f ? 1.0f / factor : 1.0f;
    /* llama.cpp's context: ext_factor 1 under YaRN, else 0, where the loader read none (a negative value) */
    const bool ext_key = hp->arch && (hp->arch->yarn_keys & MODEL_YARN_KEY_EXT_ATTN);
    const float ext = ext_key ? hp_get_float(r, "rope.scaling.yarn_ext_factor", -1.0f, NULL) : -1.0f;
    if (!isfinite(ext)) { /* llama.cpp would blend every angle with it */
        snprintf(key, sizeof key, "%s.rope.scaling.yarn_ext_factor", r->arch);
        hp_fail(r, GGUF_E_KEY_TYPE, gguf_find_kv(r->f, key)->offset, key, "key '%s' is %g: it must be a finite number",
                key, (double)ext);
        return;
    }
    hp->yarn_ext_factor = ext >= 0.0f ? ext : hp->rope_scaling == MODEL_ROPE_SCALING_YARN ? 1.0f : 0.0f;
    if (hp->yarn_ext_factor == 0.0f && ext_key) { /* the loader's magnitude stands only where nothing extrapolates */
        hp->yarn_attn_factor = hp_get_float(r, "rope.scaling.yarn_attn_factor", 1.0f, NULL);
        if (!isfinite(hp->yarn_attn_factor) || hp->yarn_attn_factor <= 0.0f) {
            snprintf(key, sizeof key, "%s.rope.scaling.yarn_attn_factor", r->arch);
            hp_fail(r, GGUF_E_KEY_TYPE, gguf_find_kv(r->f, key)->offset, key,
                    "key '%s' is %g: it must be a finite positive number (the rotation's magnitude)", key,
                    (double)hp->yarn_attn_factor);
            return;
        }
    }
    if (hp->yarn_ext_factor != 0.0f) {
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
    hp->yarn_attn_factor *= hp_get_float(r, "rope.scaling.attn_factor", 1.0f, NULL);
}

/* attention.sliding_window_pattern: a period, or one bool per layer (that list a key the family's loader requires where
 * its entry says swa_pattern_required). */
void hp_swa_pattern(hp_reader *r, model_hparams *hp)
{
    char key[160];
    snprintf(key, sizeof key, "%s.attention.sliding_window_pattern", r->arch);
    const gguf_kv *kv = gguf_find_kv(r->f, key);
    const bool listed = kv && kv->value.type == GGUF_VT_ARRAY && kv->value.elem_type == GGUF_VT_BOOL;
    if (hp->arch && hp->arch->swa_pattern_required && !listed) {
        hp_fail(r, kv ? GGUF_E_KEY_TYPE : GGUF_E_KEY_NOT_FOUND, kv ? kv->offset : 0, key,
                "key '%s' %s: a %s model lists its sliding-window layers (llama.cpp requires one bool per layer)", key,
                kv ? "is not a list of bools" : "is not in the file", r->arch);
        return;
    }
    if (!kv)
        return;
    if (listed) {
        /* one flag per block, or per generating block where the file has prediction blocks (Cohere2 MoE's converter
         * lists the checkpoint's layer_types: the blocks past the list attend in full, as llama.cpp's reading leaves
         * them) */
        const uint64_t trunk = (uint64_t)(hp->n_layer - hp->n_layer_nextn);
        if (hp->n_layer > 0 && kv->value.count != (uint64_t)hp->n_layer &&
            (hp->n_layer_nextn <= 0 || kv->value.count != trunk))
            hp_fail(r, GGUF_E_KEY_TYPE, kv->offset, key,
                    "key '%s' lists %llu layers, block_count is %lld", key,
                    (unsigned long long)kv->value.count, (long long)hp->n_layer);
        else {
            hp->swa_layers = &kv->value;
            hp->swa_period = 0;
        }
        return;
    }
    hp->swa_period = (uint32_t)hp_get_int(r, "attention.sliding_window_pattern", false, hp->swa_period, 0, 65536, NULL);
}

/* <arch>.suffix as one bool per layer (llama.cpp's get_arr of a layer pattern): NULL where absent, and where it is
 * anything but an array of block_count bools, which is then a problem. */
static const gguf_value *layer_bools(hp_reader *r, const model_hparams *hp, const char *suffix)
{
    char key[160];
    snprintf(key, sizeof key, "%s.%s", r->arch, suffix);
    const gguf_kv *kv = gguf_find_kv(r->f, key);
    if (kv && (kv->value.type != GGUF_VT_ARRAY || kv->value.elem_type != GGUF_VT_BOOL ||
               (hp->n_layer > 0 && kv->value.count != (uint64_t)hp->n_layer))) {
        hp_fail(r, GGUF_E_KEY_TYPE, kv->offset, key, "key '%s' must list block_count (%lld) bools", key,
                (long long)hp->n_layer);
        return NULL;
    }
    return kv ? &kv->value : NULL;
}

/* attention.rope_pattern (Granite's iSWA files): one bool per layer, whether it rotates; absent, every layer does (its
 * loader fills the pattern with 1s). */
void hp_rope_pattern(hp_reader *r, model_hparams *hp)
{
    hp->rope_layers = layer_bools(r, hp, "attention.rope_pattern");
}

/* A recurrent layer's sizes as llama.cpp's qwen35, nemotron_h and mamba loaders read them (all required): the
 * convolution's taps, the inner width, the state; then ssm.time_step_rank, which is the heads of a delta net or of
 * Mamba-2 (and ssm.group_count their groups), and Mamba-1's dt rank (a head per channel, one group; dt_b_c_rms
 * optional). */
void hp_ssm_sizes(hp_reader *r, model_hparams *hp)
{
    const int64_t big = INT64_C(1) << 20, dims = 65536;
    hp->ssm_d_conv = hp_get_int(r, "ssm.conv_kernel", true, 0, 1, 64, NULL);
    hp->ssm_d_inner = hp_get_int(r, "ssm.inner_size", true, 0, 1, big, NULL);
    hp->ssm_d_state = hp_get_int(r, "ssm.state_size", true, 0, 1, dims, NULL);
    const int64_t rank = hp_get_int(r, "ssm.time_step_rank", true, 0, 1, dims, NULL);
    if (hp->arch && hp->arch->mamba1) {
        hp->ssm_dt_rank = rank;
        hp->ssm_dt_b_c_rms = hp_get_bool(r, "ssm.dt_b_c_rms", false);
        hp->ssm_n_v_heads = hp->ssm_d_inner;
        return;
    }
    hp->ssm_n_v_heads = rank;
    hp->ssm_n_k_heads = hp_get_int(r, "ssm.group_count", true, 0, 1, dims, NULL);
}

/* A gated delta net's sizes as llama.cpp's qwen35 loader reads them (all required), and which layers recur:
 * attention.recurrent_layers (an array of bools, one per layer) where the file has it, else all but every
 * full_attention_interval-th (default 4). */
void hp_delta_net(hp_reader *r, model_hparams *hp)
{
    const int64_t dims = 65536;
    hp_ssm_sizes(r, hp);
    hp->full_attn_interval = hp_get_int(r, "full_attention_interval", false, 4, 1, dims, NULL);
    hp->recurrent_layers = layer_bools(r, hp, "attention.recurrent_layers");
}

/* A hybrid's attention.head_count_kv as llama.cpp's get_key_or_arr reads it: one count for every layer, or an array
 * of one per layer (block_count of them), where 0 marks a layer without attention (LFM2's short convolutions,
 * Nemotron-H's Mamba-2 and feed-forward layers); the attention layers' count is n_head_kv (one count for all of them:
 * the engine's cache has one row shape). */
void hp_kv_heads_per_layer(hp_reader *r, model_hparams *hp)
{
    char key[160];
    snprintf(key, sizeof key, "%s.attention.head_count_kv", r->arch);
    const gguf_kv *kv = gguf_find_kv(r->f, key);
    if (!kv || kv->value.type != GGUF_VT_ARRAY) {
        hp->n_head_kv = hp_get_int(r, "attention.head_count_kv", false, hp->n_head, 1, 65536, NULL);
        return;
    }
    int64_t count = 0;
    for (uint64_t i = 0; i < kv->value.count; i++) {
        gguf_value v;
        int64_t n;
        if (gguf_array_scalar(&kv->value, i, &v) != GGUF_OK || !model_value_integer(&v, &n) || n < 0 || n > 65536 ||
            (n && count && n != count)) {
            hp_fail(r, GGUF_E_KEY_TYPE, kv->offset, key, "key '%s' must list a key/value head count for "
                    "each layer, 0 for a layer without attention, the others one count (entry %llu)", key,
                    (unsigned long long)i);
            return;
        }
        count = n ? n : count;
    }
    if (hp->n_layer > 0 && kv->value.count != (uint64_t)hp->n_layer) {
        hp_fail(r, GGUF_E_KEY_TYPE, kv->offset, key, "key '%s' lists %llu layers, block_count is %lld", key,
                (unsigned long long)kv->value.count, (long long)hp->n_layer);
        return;
    }
    hp->kv_heads_layers = &kv->value;
    hp->n_head_kv = count ? count : hp->n_head; /* convolutions only: the attention's shape is never used */
}

/* A float key as llama.cpp's get_key_or_arr reads it: one value for every layer, or an array of block_count (*layers
 * then points at it and *value holds layer 0's). key is the whole name; absent, *value is dflt, and a problem where
 * required (what: what needs it, for the message). */
static void hp_float_or_layers(hp_reader *r, const model_hparams *hp, const char *key, bool required, float dflt,
                               const char *what, float *value, const gguf_value **layers)
{
    const gguf_kv *kv = gguf_find_kv(r->f, key);
    *value = dflt;
    *layers = NULL;
    if (!kv) {
        if (required)
            hp_fail(r, GGUF_E_KEY_NOT_FOUND, 0, key,
                    "key '%s' is not in the file: the %s architecture's %s needs it (llama.cpp requires it)", key,
                    r->arch, what);
        return;
    }
    if (kv->value.type != GGUF_VT_ARRAY) {
        if (!model_value_float(&kv->value, value))
            hp_fail(r, GGUF_E_KEY_TYPE, kv->offset, key, "key '%s' is %s, expected a float", key,
                    gguf_value_type_name(kv->value.type));
        return;
    }
    if (hp->n_layer > 0 && kv->value.count != (uint64_t)hp->n_layer) {
        hp_fail(r, GGUF_E_KEY_TYPE, kv->offset, key, "key '%s' lists %llu layers, block_count is %lld", key,
                (unsigned long long)kv->value.count, (long long)hp->n_layer);
        return;
    }
    for (uint64_t i = 0; i < kv->value.count; i++) {
        gguf_value v;
        float x;
        if (gguf_array_scalar(&kv->value, i, &v) != GGUF_OK || !model_value_float(&v, &x)) {
            hp_fail(r, GGUF_E_KEY_TYPE, kv->offset, key, "key '%s' must list one float per layer (entry %llu is not)",
                    key, (unsigned long long)i);
            return;
        }
        if (i == 0)
            *value = x;
    }
    *layers = &kv->value;
}

/* xIELU's four parameters as llama.cpp's apertus loader reads them (get_key_or_arr, required: one float for every
 * layer, or an array of block_count): keys of no architecture's prefix (xielu.alpha_n, as gguf-py's Keys.xIELU). */
void hp_xielu_params(hp_reader *r, model_hparams *hp)
{
    static const char *const names[4] = { "xielu.alpha_n", "xielu.alpha_p", "xielu.beta", "xielu.eps" };
    for (int k = 0; k < 4; k++)
        hp_float_or_layers(r, hp, names[k], true, 0.0f, "xIELU activation", &hp->xielu[k], &hp->xielu_layers[k]);
}

/* The experts' SwiGLU limit, <arch>.swiglu_clamp_exp, and the shared expert's, <arch>.swiglu_clamp_shexp, where the
 * family's loader reads them (model_arch.swiglu_clamp_key, _shexp_key: Maple's requires the first; 0 where absent: no
 * clamp). */
void hp_swiglu_clamp(hp_reader *r, model_hparams *hp)
{
    hp->swiglu_clamp_exp = hp->swiglu_clamp_shexp = 0.0f;
    hp->swiglu_clamp_exp_layers = hp->swiglu_clamp_shexp_layers = NULL;
    char key[160];
    if (hp->arch && hp->arch->swiglu_clamp_key) {
        snprintf(key, sizeof key, "%s.swiglu_clamp_exp", r->arch);
        hp_float_or_layers(r, hp, key, hp->arch->swiglu_clamp_key == MODEL_NEED_REQUIRED, 0.0f,
                           "experts' SwiGLU limit", &hp->swiglu_clamp_exp, &hp->swiglu_clamp_exp_layers);
    }
    if (hp->arch && hp->arch->swiglu_clamp_shexp_key) {
        snprintf(key, sizeof key, "%s.swiglu_clamp_shexp", r->arch);
        hp_float_or_layers(r, hp, key, hp->arch->swiglu_clamp_shexp_key == MODEL_NEED_REQUIRED, 0.0f,
                           "shared expert's SwiGLU limit", &hp->swiglu_clamp_shexp, &hp->swiglu_clamp_shexp_layers);
    }
}

/* How the router weighs its choice: the entry's fields, or the file's keys where the family's llama.cpp loader reads
 * them (model_moe_key: src/models/glm4-moe.cpp all, minimax-m2.cpp the gating function); expert_gating_func 0
 * ("none") is the entry's, 0 or 1 for expert_weights_scale is none. nextn_predict_layers and expert_group_count
 * llama.cpp reads for every family (src/llama-model.cpp), leading_dense_block_count we read for a family not in the
 * table too, since it says which tensors a file has (the audit reads it whatever the architecture). */
void hp_moe_routing(hp_reader *r, model_hparams *hp)
{
    const model_arch *ma = hp->arch;
    const unsigned keys = ma ? ma->moe_keys : MODEL_MOE_KEY_DENSE_LEAD;
    hp->moe_gating = ma ? ma->moe_gating : MODEL_MOE_SOFTMAX;
    hp->moe_renormalise = ma && ma->moe_renormalise;
    hp->moe_scale = 1.0f;
    const int64_t dims = 65536;
    hp->n_layer_nextn = hp_get_int(r, "nextn_predict_layers", false, 0, 0, hp->n_layer > 0 ? hp->n_layer : dims, NULL);
    hp->n_expert_groups = hp_get_int(r, "expert_group_count", false, 0, 0, dims, NULL);
    hp->n_group_used = hp_get_int(r, "expert_group_used_count", false, 0, 0, dims, NULL);
    if (keys & MODEL_MOE_KEY_DENSE_LEAD)
        hp->n_layer_dense_lead = hp_get_int(r, "leading_dense_block_count", keys & MODEL_MOE_KEY_DENSE_LEAD_REQUIRED,
                                            0, 0, dims, NULL);
    if (!ma || hp->n_expert == 0)
        return;
    if (keys & MODEL_MOE_KEY_GATING) {
        /* llama.cpp's llama_expert_gating_func_type: 1 softmax, 2 sigmoid, 3 softmax over the chosen; 4 (the square
         * root of softplus) and above are refused by check() */
        static const model_moe_gating gating_of[] = { MODEL_MOE_SOFTMAX, MODEL_MOE_SOFTMAX, MODEL_MOE_SIGMOID,
                                                      MODEL_MOE_SOFTMAX_WEIGHT };
        hp->moe_gating_func =
            hp_get_int(r, "expert_gating_func", keys & MODEL_MOE_KEY_GATING_REQUIRED, 0, 0, 255, NULL);
        if (hp->moe_gating_func > 0 && hp->moe_gating_func < 4)
            hp->moe_gating = gating_of[hp->moe_gating_func];
    }
    if (keys & MODEL_MOE_KEY_STEP)
        hp->n_moe_layer_step = hp_get_int(r, "interleave_moe_layer_step", false, -1, 1, dims, NULL);
    if (keys & MODEL_MOE_KEY_NORM)
        hp->moe_renormalise = hp_get_bool(r, "expert_weights_norm", false);
    if (keys & MODEL_MOE_KEY_SCALE) {
        const float scale = hp_get_float(r, "expert_weights_scale", 0.0f, NULL);
        hp->moe_scale = scale != 0.0f ? scale : 1.0f;
    }
    if (keys & MODEL_MOE_KEY_SHARED) {
        /* one shared expert's width: the key where the loader reads it that way (and the file has it), else an
         * expert's */
        const int64_t each =
            keys & MODEL_MOE_KEY_SHARED_WIDTH
                ? hp_get_int(r, "expert_shared_feed_forward_length", false, 0, 0, INT64_C(1) << 30, NULL)
                : 0;
        hp->n_ff_shexp = hp_get_int(r, "expert_shared_count", keys & MODEL_MOE_KEY_SHARED_REQUIRED,
                                    ma->shexp_count_default, 0, dims, NULL) *
                         (each ? each : hp->n_ff_exp);
        /* the whole width where the file gives one (not 0), whatever the count, where the shared expert is always
         * there (Laguna's); else where there are shared experts (cohere2moe's loader makes none without a count) */
        const bool always = ma->need[MODEL_ROLE_FFN_UP_SHEXP] == MODEL_NEED_REQUIRED;
        if (keys & MODEL_MOE_KEY_SHARED_TOTAL && (hp->n_ff_shexp > 0 || always)) {
            const int64_t total = hp_get_int(r, "expert_shared_feed_forward_length", false, 0, 0, INT64_C(1) << 30,
                                             NULL);
            hp->n_ff_shexp = total > 0 ? total : hp->n_ff_shexp;
        }
    }
}

/* Latent attention's sizes as llama.cpp's loaders read them: kv_lora_rank required. deepseek2's: q_lora_rank required
 * except in the "lite" shapes it knows by their layer count (26 or 27 layers, or 48 with a 128256-token vocabulary:
 * DeepSeek-V2-Lite, GigaChat3, Kanana-2), which take the query straight from the input whatever the key says;
 * key_length_mla and value_length_mla together or not at all. The whole form's (minicpm3, plm): q_lora_rank required
 * (and above 0) where the family compresses the query, not read where it does not. */
void hp_latent_attention(hp_reader *r, model_hparams *hp)
{
    const int64_t big = INT64_C(1) << 20;
    if (hp->arch->mla == MODEL_MLA_WHOLE) {
        const bool q_lora = hp->arch->need[MODEL_ROLE_ATTN_Q_A] == MODEL_NEED_REQUIRED;
        hp->n_lora_q = q_lora ? hp_get_int(r, "attention.q_lora_rank", true, 0, 1, big, NULL) : 0;
        hp->n_lora_kv = hp_get_int(r, "attention.kv_lora_rank", true, 0, 1, big, NULL);
        return;
    }
    const int64_t vocab = hp->vocab_size ? hp->vocab_size : hp->n_vocab;
    const bool lite = hp->n_layer == 26 || hp->n_layer == 27 || (hp->n_layer == 48 && vocab == 128256);
    hp->n_lora_q = lite ? 0 : hp_get_int(r, "attention.q_lora_rank", true, 0, 0, big, NULL);
    hp->n_lora_kv = hp_get_int(r, "attention.kv_lora_rank", true, 0, 1, big, NULL);
    bool no_k = false, no_v = false;
    hp->head_dim_k_mla = hp_get_int(r, "attention.key_length_mla", false, 0, 1, big, &no_k);
    hp->head_dim_v_mla = hp_get_int(r, "attention.value_length_mla", false, 0, 1, big, &no_v);
    if (no_k != no_v) {
        char key[160];
        snprintf(key, sizeof key, "%s.attention.%s", r->arch, no_k ? "key_length_mla" : "value_length_mla");
        hp_fail(r, GGUF_E_KEY_NOT_FOUND, 0, key,
                "key '%s' is missing: latent attention's key and value lengths come together (llama.cpp "
                "asserts it)", key);
    }
}

/* rope.dimension_sections as llama.cpp's get_key_or_arr reads it: an array of exactly 4, or one value for all four;
 * required by the families whose loader requires it. Whether it applies: model_arch.mrope, or for a family where it is
 * optional llama.cpp's use_mrope (the first two sections above 0). */
void hp_rope_sections(hp_reader *r, model_hparams *hp)
{
    const model_arch *ma = hp->arch;
    char key[160];
    snprintf(key, sizeof key, "%s.rope.dimension_sections", r->arch);
    const gguf_kv *kv = gguf_find_kv(r->f, key);
    if (!kv) {
        if (!ma->mrope_optional)
            hp_fail(r, GGUF_E_KEY_NOT_FOUND, 0, key,
                    "key '%s' is not in the file: a %s model rotates by sections (llama.cpp requires it)", key,
                    r->arch);
        return;
    }
    const bool array = kv->value.type == GGUF_VT_ARRAY;
    if (array && kv->value.count != 4) {
        hp_fail(r, GGUF_E_KEY_TYPE, kv->offset, key, "key '%s' lists %llu sections, llama.cpp reads 4", key,
                (unsigned long long)kv->value.count);
        return;
    }
    for (uint64_t i = 0; i < 4; i++) {
        gguf_value v = kv->value;
        if (array && gguf_array_scalar(&kv->value, i, &v) != GGUF_OK) {
            hp_fail(r, GGUF_E_KEY_TYPE, kv->offset, key, "key '%s' is not an array of integers", key);
            return;
        }
        int64_t n;
        if (!model_value_integer(&v, &n) || n < 0 || n > 65536) {
            hp_fail(r, GGUF_E_KEY_TYPE, kv->offset, key, "key '%s' holds a section that is not a count of "
                    "pairs (0 to 65536)", key);
            return;
        }
        hp->rope_sections[i] = n;
    }
    hp->mrope = !ma->mrope_optional || (hp->rope_sections[0] > 0 && hp->rope_sections[1] > 0) ? ma->mrope
                                                                                              : MODEL_MROPE_NONE;
}
