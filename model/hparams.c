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
#include "hparams_reader.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* A key the family's loader requires that the file lacks (<arch>.suffix): refused, saying what the model does with it. */
static void require_key(hp_reader *r, const char *suffix, const char *what)
{
    char key[160];
    snprintf(key, sizeof key, "%s.%s", r->arch, suffix);
    hp_fail(r, GGUF_E_KEY_NOT_FOUND, 0, key, "key '%s' is not in the file: a %s model %s (llama.cpp requires it)", key,
            r->arch, what);
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
    hp_reader r = { .f = f, .arch = hp->arch_name, .status = GGUF_OK, .err = err };
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
        hp_note(&r, s, &e);
        return r.status;
    }
    size_t n = a.len < sizeof hp->arch_name - 1 ? (size_t)a.len : sizeof hp->arch_name - 1;
    memcpy(hp->arch_name, a.ptr, n);
    hp->arch_name[strnlen(hp->arch_name, n)] = '\0'; /* a NUL inside the name ends the prefix there */
    hp->arch = model_arch_find(a.ptr, (size_t)a.len);

    const int64_t big = INT64_C(1) << 30, dims = 65536;
    hp->n_embd = hp_get_int(&r, "embedding_length", true, 0, 1, big, NULL);
    hp->n_layer = hp_get_int(&r, "block_count", true, 0, 1, dims, NULL);
    hp->n_loops = 1;
    if (hp->arch && hp->arch->layer_loops) { /* llama.cpp's nanbeige loader asserts both bounds (512: LLAMA_MAX_LAYERS) */
        const int64_t most = hp->n_layer > 0 && hp->n_layer < 512 ? 512 / hp->n_layer : 1;
        hp->n_loops = hp_get_int(&r, "num_loops", false, 1, 1, most, NULL);
        hp->skip_loop_final_norm = hp_get_bool(&r, "skip_loop_final_norm", false);
    }
    const bool by_width = hp->arch && hp->arch->blocks_by_width;
    /* DeciLM's: a count per layer, 0 for one without attention; OpenELM's: a count per layer, each at least 1 */
    if ((by_width || (hp->arch && hp->arch->heads_by_layer)) && hp_is_array(&r, "attention.head_count"))
        hp->n_head = hp_get_int_or_layers(&r, "attention.head_count", 0, by_width ? 0 : 1, dims, &hp->heads_layers, hp);
    else
        hp->n_head = hp_get_int(&r, "attention.head_count", true, 0, hp->arch && hp->arch->attention_free ? 0 : 1, dims,
                                NULL);
    if (hp->arch && hp->arch->shortconv)
        hp->shortconv_l_cache = hp_get_int(&r, "shortconv.l_cache", true, 0, 2, 64, NULL);
    /* a hybrid's counts may mark layers without attention; Falcon-H1's every layer attends (mixer_beside) */
    if (hp->arch && (hp->arch->shortconv || hp->arch->mamba1 || (hp->arch->mamba2 && !hp->arch->mixer_beside)))
        hp_kv_heads_per_layer(&r, hp);
    else /* DeciLM's 0: no key/value heads (a layer without attention, or its "linear attention") */
        hp->n_head_kv = hp_get_int_or_layers(&r, "attention.head_count_kv", hp->n_head, by_width ? 0 : 1, dims,
                                             &hp->kv_heads_layers, hp);
    hp->n_ff = hp_get_int_or_layers(&r, "feed_forward_length", 0, 0, big, &hp->ff_layers, hp);
    if (hp->arch && hp->arch->n_ff_halved) /* Qwen's intermediate_size counts w1's rows and w2's */
        hp->n_ff /= 2;
    hp->n_ctx_train = hp_get_int(&r, "context_length", false, 2048, 1, big, NULL);
    hp->vocab_size = hp_get_int(&r, "vocab_size", false, 0, 1, INT32_MAX, NULL);
    hp->n_expert = hp_get_int(&r, "expert_count", false, 0, 0, dims, NULL);
    hp->n_expert_used = hp_get_int(&r, "expert_used_count", false, 0, 0, dims, NULL);
    if (hp->arch && hp->arch->expert_count_one_dense && hp->n_expert <= 1) /* its loader: one expert is dense */
        hp->n_expert = hp->n_expert_used = 0;
    if (hp->n_expert > 0) { /* widths as llama.cpp's loaders default them (src/models/qwen2moe.cpp, llama.cpp) */
        const model_arch *ma = hp->arch;
        int64_t split = ma && ma->moe_ff_split && hp->n_expert_used > 0 ? hp->n_ff / hp->n_expert_used : hp->n_ff;
        const gguf_value *ff_exp_layers = NULL;
        if (ma && (ma->moe_keys & MODEL_MOE_KEY_FF_EXP_LAYERS)) { /* one width, or layer 0's of a list */
            hp->n_ff_exp = hp_get_int_or_layers(&r, "expert_feed_forward_length", split, 0, big, &ff_exp_layers, hp);
            gguf_value v0;
            int64_t first;
            if (ff_exp_layers && gguf_array_scalar(ff_exp_layers, 0, &v0) == GGUF_OK &&
                model_value_integer(&v0, &first))
                hp->n_ff_exp = first;
        } else {
            hp->n_ff_exp = hp_get_int(&r, "expert_feed_forward_length", false, split, 0, big, NULL);
        }
        if (ma && ma->moe_experts_ff_wide)
            hp->n_ff_exp = hp->n_ff;
        hp->n_ff_shexp = hp_get_int(&r, "expert_shared_feed_forward_length", false,
                                    ma && ma->shexp_one_key_wide ? hp->n_ff_exp : hp->n_ff, 0, big, NULL);
    }
    if (hp->arch && hp->arch->moe_dense_residual) /* Arctic's loader: the dense block n_embd x n_embd */
        hp->n_ff = hp->n_embd;
    hp_moe_routing(&r, hp);
    bool no_key_length = false, no_rot = false;
    const int64_t per_head = hp->n_head > 0 && hp->n_embd % hp->n_head == 0 ? hp->n_embd / hp->n_head : 0;
    hp->head_dim_k = hp_get_int(&r, "attention.key_length", false, per_head, 1, dims, &no_key_length);
    hp->head_dim_from_key_length = !no_key_length;
    /* llama.cpp's default for both lengths is embedding_length / head_count, so a file with key_length alone
     * (MiniCPM3's converter writes no value_length) has values of that width, not the keys' */
    const int64_t v_default = hp->n_head > 0 && hp->n_embd / hp->n_head > 0 ? hp->n_embd / hp->n_head : hp->head_dim_k;
    hp->head_dim_v = hp_get_int(&r, "attention.value_length", false, v_default, 1, dims, NULL);
    hp->n_rot = hp_get_int(&r, "rope.dimension_count", false, hp->head_dim_k, 2, dims, &no_rot);
    hp->head_dim_k_swa = hp_get_int(&r, "attention.key_length_swa", false, 0, 1, dims, NULL);
    hp->head_dim_v_swa = hp_get_int(&r, "attention.value_length_swa", false, 0, 1, dims, NULL);
    hp->n_rot_swa = hp_get_int(&r, "rope.dimension_count_swa", false, 0, 2, dims, NULL);
    if (hp->arch && hp->arch->rope_full_half) { /* llama.cpp's step35 loader halves the full layers' count after it
                                                 * gave the sliding layers theirs */
        hp->n_rot_swa = hp->n_rot_swa ? hp->n_rot_swa : hp->n_rot;
        hp->n_rot /= 2;
    }
    hp->n_kv_shared = hp_get_int(&r, "attention.shared_kv_layers", false, 0, 0, dims, NULL);
    hp->n_embd_per_layer = hp_get_int(&r, "embedding_length_per_layer_input", false, 0, 0, dims, NULL);
    hp->n_layer_kv = hp->n_layer - hp->n_kv_shared;
    if (hp->arch && hp->arch->mla)
        hp_latent_attention(&r, hp);
    if (hp->arch && hp->arch->mrope) {
        hp_rope_sections(&r, hp);
        hp->n_deepstack_layers = hp_get_int(&r, "n_deepstack_layers", false, 0, 0, dims, NULL);
    }
    if (hp->arch && hp->arch->delta_net)
        hp_delta_net(&r, hp);
    if (hp->arch && (hp->arch->mamba2 || hp->arch->mamba1))
        hp_ssm_sizes(&r, hp);
    if (hp->arch && hp->arch->single_block) /* nemotron_h's loader */
        hp->moe_latent_size = hp_get_int(&r, "moe_latent_size", false, 0, 0, big, NULL);
    hp->parallel = hp->arch && (hp->arch->parallel_ffn ||
                                (hp->arch->parallel_residual_key && hp_get_bool(&r, "use_parallel_residual", true)));
    if (hp->arch && hp->arch->rope_finetuned_switch) /* granitehybrid's loader: the hybrids write false */
        hp->rope_off = !hp_get_bool(&r, "rope.scaling.finetuned", true);
    if (hp->arch && hp->arch->rope_n_layer && hp->n_layer != hp->arch->rope_n_layer)
        hp->rope_off = true;
    if (hp->arch && hp->arch->shortconv) /* LFM2's window (llama.cpp reads it; not run here yet: check()) */
        hp->swa_window = hp_get_int(&r, "attention.sliding_window", false, 0, 0, INT32_MAX, NULL);
    hp->n_rot_from_key = !no_rot;
    hp->norm_layer = hp->arch && hp->arch->norm_layer;
    if (hp->arch && hp->arch->norm_rms_by_key) { /* cohere2moe's loader: RMSNorms where it finds their key */
        char key[160];
        snprintf(key, sizeof key, "%s.attention.layer_norm_rms_epsilon", r.arch);
        hp->norm_layer = gguf_find_kv(f, key) == NULL;
    }
    hp->eps = hp_get_float(&r, hp->norm_layer ? "attention.layer_norm_epsilon" : "attention.layer_norm_rms_epsilon",
                           1e-5f, &hp->eps_defaulted);
    if (hp->eps_defaulted && hp->arch && hp->arch->norm_rms_by_key) {
        char key[160];
        snprintf(key, sizeof key, "%s.attention.layer_norm_epsilon", r.arch);
        hp_fail(&r, GGUF_E_KEY_NOT_FOUND, 0, key,
                "a %s model needs key '%s' (LayerNorms) or attention.layer_norm_rms_epsilon (RMSNorms): llama.cpp's "
                "loader refuses a file with neither", r.arch, key);
    }
    if (hp->eps_defaulted && hp->arch && hp->arch->eps_either_key) { /* nemotron_h's loader: the LayerNorm key */
        hp->eps_defaulted = false;
        hp->eps = hp_get_float(&r, "attention.layer_norm_epsilon", 1e-5f, &hp->eps_defaulted);
    }
    hp->rope_base = hp_get_float(&r, "rope.freq_base", 10000.0f, &hp->rope_base_defaulted);
    if (hp->arch && hp->arch->rope_base_alpha) { /* Hunyuan's NTK-aware base, in f32 as its loader computes it */
        const float alpha = hp_get_float(&r, "rope.scaling.alpha", 0.0f, NULL);
        const int64_t d = hp->head_dim_k;
        if (alpha > 0.0f && d > 2)
            hp->rope_base = hp->rope_base * powf(alpha, (float)d / (float)(d - 2));
    }
    hp->rope_freq_scale = 1.0f;
    const unsigned yarn_keys = hp->arch ? hp->arch->yarn_keys : 0;
    if (yarn_keys & (MODEL_YARN_KEY_LOG_MUL | MODEL_YARN_KEY_LOG_MUL_TENTHS))
        hp->yarn_log_mul = hp_get_float(&r, "rope.scaling.yarn_log_multiplier", 0.0f, NULL) /
                           (yarn_keys & MODEL_YARN_KEY_LOG_MUL_TENTHS ? 0.1f : 1.0f);
    if (hp->arch && hp->arch->attn_temperature)
        hp->attn_temp_scale = hp_get_float(&r, "attention.temperature_scale", 0.0f, NULL);
    hp_rope_scaling(&r, hp);
    hp->rope_base_swa = hp->rope_base;
    hp->rope_freq_scale_swa = hp->rope_freq_scale;

    const model_arch *ar = hp->arch;
    if (hp->arch && hp->arch->attn_temperature) /* Ministral 3: floors of the original context */
        hp->attn_temp_floor = (float)hp->n_ctx_orig_yarn;
    if (ar && ar->swa_period && (!ar->swa_n_layer || hp->n_layer == ar->swa_n_layer)) {
        hp->swa_window = hp_get_int(&r, "attention.sliding_window", ar->swa_window_required, ar->swa_window_default, 0,
                                    INT32_MAX, NULL);
        if (ar->swa_chunked && hp->swa_window > 0) /* any window but 0 is the loader's own size (0: refused) */
            hp->swa_window = ar->swa_window_default;
        if (ar->swa_window_fixed && hp->swa_window > 0)
            hp->swa_window = ar->swa_window_fixed;
        if (hp->swa_window > 0 && ar->swa_chunked) {
            hp->swa_chunked = true;
            hp->attn_temp_scale = ar->attn_temp_fixed_scale;
            hp->attn_temp_floor = (float)ar->attn_temp_fixed_floor;
            hp->attn_temp_offset = ar->attn_temp_fixed_offset;
            hp->attn_temp_nope_only = true;
        }
        if (hp->swa_window > 0) {
            hp->swa_period = ar->swa_period;
            hp_swa_pattern(&r, hp);
            const bool global = ar->swa_rope == MODEL_SWA_ROPE_GLOBAL || ar->swa_rope == MODEL_SWA_ROPE_SAME;
            const bool unscaled = ar->swa_rope == MODEL_SWA_ROPE_UNSCALED || ar->swa_rope == MODEL_SWA_ROPE_BASE_UNSCALED;
            const float base = hp_get_float(&r, "rope.freq_base_swa",
                                            global || ar->swa_rope == MODEL_SWA_ROPE_BASE_UNSCALED ? hp->rope_base
                                                                                                 : 10000.0f, NULL);
            hp->rope_base_swa = ar->swa_rope == MODEL_SWA_ROPE_UNSCALED || ar->swa_rope == MODEL_SWA_ROPE_SAME
                                    ? hp->rope_base
                                    : base;
            hp->rope_freq_scale_swa = global ? hp->rope_freq_scale : 1.0f;
            hp->yarn_swa_off = unscaled;
        }
    }
    if (ar && ar->rope_pattern_key)
        hp_rope_pattern(&r, hp);
    hp_swiglu_clamp(&r, hp);
    if (ar && ar->attn_value_scale_key) { /* llama.cpp's mimo2 loader keeps it only where it is not 1 */
        const float vs = hp_get_float(&r, "attention.value_scale", 0.0f, NULL);
        hp->attn_value_scale = vs == 1.0f ? 0.0f : vs;
    }
    hp->qk_l2_norm = ar && ar->qk_l2_norm && hp->n_expert != ar->qk_l2_norm_off_experts;
    hp->attn_gate_heads = ar && ar->attn_gate_per_head;
    if (ar && ar->shexp_expert_wide && hp->n_expert > 0)
        hp->n_ff_shexp = hp->n_ff_exp;
    if (ar && ar->final_softcap)
        hp->final_softcap = hp_get_float(&r, "final_logit_softcapping", ar->final_softcap_default, NULL);
    if (ar && ar->attn_softcap_default > 0.0f)
        hp->attn_softcap = hp_get_float(&r, "attn_logit_softcapping", ar->attn_softcap_default, NULL);
    if (ar) { /* llama.cpp applies either where its value is > 0 (so not where it is NaN) */
        const bool alibi_depth = !ar->alibi_n_layer || hp->n_layer == ar->alibi_n_layer;
        const float alibi = ar->alibi_key     ? hp_get_float(&r, "attention.max_alibi_bias", 0.0f, NULL)
                            : alibi_depth ? ar->alibi_max_bias
                                          : 0.0f;
        bool clamp_absent = false;
        const float clamp = ar->clamp_kqv_key ? hp_get_float(&r, "attention.clamp_kqv", 0.0f, &clamp_absent) : 0.0f;
        if (clamp_absent && ar->clamp_kqv_key == MODEL_NEED_REQUIRED)
            require_key(&r, "attention.clamp_kqv", "clamps q, k and v");
        hp->alibi_max_bias = alibi > 0.0f ? alibi : 0.0f;
        hp->clamp_kqv = clamp > 0.0f ? clamp : 0.0f;
        if (ar->act == MODEL_ACT_XIELU)
            hp_xielu_params(&r, hp);
    }
    if (ar && ar->embd_scale_sqrt && hp->n_embd > 0)
        hp->embd_scale = sqrtf((float)hp->n_embd);
    if (ar && ar->attn_scale_embd_layers && hp->n_layer == ar->attn_scale_embd_layers && per_head > 0)
        hp->attn_scale = 1.0f / sqrtf((float)per_head);
    else if (ar && (ar->attn_scale_one || ar->attention_free)) /* (a state-space model's: never used) */
        hp->attn_scale = 1.0f;
    else if (ar && ar->attn_scale_inv_dim && hp->head_dim_k > 0) /* Jais's muP scale */
        hp->attn_scale = 1.0f / (float)hp->head_dim_k;
    else if (hp->head_dim_k > 0)
        hp->attn_scale = 1.0f / sqrtf((float)hp->head_dim_k);
    if (ar && ar->mla == MODEL_MLA_DEEPSEEK2) {
        /* llama.cpp's deepseek2 graph: the magnitude YaRN's rotation takes out of q and k put back into the scores
         * squared, with DeepSeek's own multiplier, over a head's key length after decompression */
        const float ln_factor = logf(1.0f / hp->rope_freq_scale);
        const float mscale = hp->yarn_attn_factor * (1.0f + 0.1f * ln_factor) * (1.0f + 0.1f * hp->yarn_log_mul * ln_factor);
        const int64_t k_mla = hp->head_dim_k_mla ? hp->head_dim_k_mla : hp->head_dim_k;
        if (k_mla > 0)
            hp->attn_scale = mscale * mscale / sqrtf((float)k_mla);
    }
    if (ar && ar->logit_scale_mul) { /* the logits times logit_scale: Cohere's absent or 0 none, Talkie's required */
        bool absent = false;
        const float logit = hp_get_float(&r, "logit_scale", 0.0f, &absent);
        if (absent && ar->logit_scale_mul == MODEL_NEED_REQUIRED)
            require_key(&r, "logit_scale", "scales its logits by it");
        hp->logit_scale = logit != 0.0f || ar->logit_scale_mul == MODEL_NEED_REQUIRED ? logit : 1.0f;
    }
    /* Grok's loader: each read, Grok-1's own where the file has none */
    if (ar && ar->embd_scale_default > 0.0f)
        hp->embd_scale = hp_get_float(&r, "embedding_scale", ar->embd_scale_default, NULL);
    if (ar && ar->logit_scale_default > 0.0f)
        hp->logit_scale = hp_get_float(&r, "logit_scale", ar->logit_scale_default, NULL);
    if (ar && ar->attn_out_scale_default > 0.0f) { /* (a cap of 0 is refused by check()) */
        const float out = hp_get_float(&r, "attention.output_scale", ar->attn_out_scale_default, NULL);
        hp->attn_softcap_in = hp->attn_softcap > 0.0f ? out / hp->attn_softcap : 0.0f;
    }
    if (ar && ar->multipliers) { /* llama.cpp's granite loader: 0 (absent) leaves each one out; logit_scale required */
        const bool mini = ar->multipliers_minicpm; /* its loader's defaults, its graph granite's */
        const bool fixed = ar->multipliers_minicpm == MODEL_MINICPM_SCALES_FIXED; /* MiniCPM3's graph: no key read */
        const float d_embd = mini ? 12.0f : 0.0f, d_res = mini && hp->n_layer > 0 ? 1.4f / sqrtf((float)hp->n_layer) : 0.0f;
        const float d_logit = mini && hp->n_embd > 0 ? 256.0f / (float)hp->n_embd : 0.0f;
        const float embd = fixed ? d_embd : hp_get_float(&r, "embedding_scale", d_embd, NULL),
                    res = fixed ? d_res : hp_get_float(&r, "residual_scale", d_res, NULL),
                    attn = mini ? 0.0f : hp_get_float(&r, "attention.scale", 0.0f, NULL);
        hp->embd_scale = embd != 0.0f ? embd : 1.0f;
        hp->residual_scale = res != 0.0f ? res : 1.0f;
        hp->attn_scale = attn != 0.0f ? attn : hp->attn_scale;
        bool absent = false; /* get_float sets it only when the key is absent */
        /* MiniCPM3's graph multiplies by 256 / embedding_length, where minicpm's default divides by it */
        const float logit = fixed ? (float)hp->n_embd / 256.0f : hp_get_float(&r, "logit_scale", d_logit, &absent);
        hp->logit_scale = (absent && !mini) || logit == 0.0f ? 0.0f : 1.0f / logit; /* 0: refused by check() */
        hp->logit_scale_first = fixed;
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
