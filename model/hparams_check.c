/*
 * The hyperparameters a forward pass cannot run with, refused naming the key and where it starts.
 */
#include "model.h"
#include "model_internal.h"

#include <math.h>
#include <stdio.h>

/* Where a key starts (0 when the file leaves it to its default): the offset a message names. */
static uint64_t key_offset(const gguf_file *f, const char *key)
{
    const gguf_kv *kv = gguf_find_kv(f, key);
    return kv ? kv->offset : 0;
}

/* What llama.cpp's loader refuses or asserts on, and what makes every output NaN or a constant, for an
 * architecture in the table (src/llama-model.cpp load_hparams; src/models/<arch>.cpp load_arch_tensors). */
model_status model_hparams_check(const gguf_file *f, const model_hparams *hp, model_error *err)
{
    char key[160];
    const char *arch = hp->arch_name;
    if (hp->arch->no_gqa && hp->n_head_kv != hp->n_head) {
        snprintf(key, sizeof key, "%s.attention.head_count_kv", arch);
        return model_fail(err, MODEL_E_MALFORMED, key_offset(f, key), key,
                    "key '%s' is %lld, head_count %lld: llama.cpp's %s loader sizes attn_k and attn_v as attn_q and "
                    "refuses grouped heads", key, (long long)hp->n_head_kv, (long long)hp->n_head, arch);
    }
    if (hp->arch->swa_chunked && hp->swa_window == 0) {
        snprintf(key, sizeof key, "%s.attention.sliding_window", arch);
        return model_fail(err, MODEL_E_MALFORMED, key_offset(f, key), key,
                    "key '%s' is 0: llama.cpp's %s loader then turns off the chunks and the attention temperature, "
                    "and its graph stops on an assertion (f_attn_temp_scale != 0) at the layer without positions",
                    key, arch);
    }
    if (hp->n_layer_nextn > 0 && hp->n_layer_nextn >= hp->n_layer) {
        snprintf(key, sizeof key, "%s.nextn_predict_layers", arch);
        return model_fail(err, MODEL_E_UNSUPPORTED, key_offset(f, key), key,
                    "key '%s' is %lld of %lld blocks: a file of multi-token prediction blocks alone has no "
                    "layers to generate with", key, (long long)hp->n_layer_nextn, (long long)hp->n_layer);
    }
    if (hp->moe_latent_size > 0) {
        snprintf(key, sizeof key, "%s.moe_latent_size", arch);
        return model_fail(err, MODEL_E_UNSUPPORTED, key_offset(f, key), key,
                          "experts over a latent width of %lld (key '%s': Nemotron 3 Super's ffn_latent_down and "
                          "ffn_latent_up) are not run yet", (long long)hp->moe_latent_size, key);
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
        if (hp->n_moe_layer_step > 1 && !hp->arch->moe_step_layers)
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
        char router[64]; /* the first layer with experts: after the leading dense ones, on the interleave step */
        int64_t first = 0;
        while (first < hp->n_layer && !model_hparams_layer_has_experts(hp, first))
            first++;
        snprintf(router, sizeof router, "blk.%lld.ffn_gate_inp.weight", (long long)first);
        if (first < hp->n_layer && !gguf_tensor_by_name(f, router))
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
    } else if (hp->arch->moe_step_layers) { /* llama.cpp's llama4 loader: "model cannot have zero experts" */
        snprintf(key, sizeof key, "%s.expert_count", arch);
        return model_fail(err, MODEL_E_MALFORMED, key_offset(f, key), key,
                    "a %s model needs key '%s' > 0; llama.cpp's loader refuses one without experts", arch, key);
    } else if (hp->arch->need[MODEL_ROLE_FFN_GATE_INP] && !hp->arch->need[MODEL_ROLE_FFN_GATE]) {
        /* an architecture that is only ever a mixture of experts */
        snprintf(key, sizeof key, "%s.expert_count", arch);
        return model_fail(err, MODEL_E_MALFORMED, key_offset(f, key), key,
                    "a %s model needs key '%s' > 0 (it has no dense feed-forward block); llama.cpp refuses it", arch,
                    key);
    }
    /* llama.cpp sizes ffn_gate (n_embd, n_ff) by it and refuses the file; a state-space model has neither */
    if (hp->n_expert == 0 && hp->n_ff <= 0 && !hp->arch->attention_free) {
        snprintf(key, sizeof key, "%s.feed_forward_length", arch);
        return model_fail(err, MODEL_E_MALFORMED, key_offset(f, key), key,
                    "key '%s' is %s: llama.cpp sizes the feed-forward tensors by it and refuses the file", key,
                    gguf_find_kv(f, key) ? "0" : "missing");
    }
    if (hp->head_dim_k == 0 && !hp->arch->attention_free) {
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
    /* each layer's heads (a sliding window's own lengths) */
    for (int64_t il = 0; il < hp->n_layer && !hp->arch->attention_free; il++) {
        model_hparams l;
        model_hparams_layer(hp, il, &l);
        /* DeciLM's attending layers: q rows of one width here (OpenELM's widths differ, as its entry says) */
        if (hp->heads_layers && l.n_head != hp->n_head && !hp->arch->heads_by_layer) {
            snprintf(key, sizeof key, "%s.attention.head_count", arch);
            return model_fail(err, MODEL_E_UNSUPPORTED, key_offset(f, key), key,
                        "layer %lld has %lld heads where another has %lld (key '%s'): gguf-run runs one count",
                        (long long)il, (long long)l.n_head, (long long)hp->n_head, key);
        }
        if (hp->arch->blocks_by_width && model_hparams_layer_has_attention(hp, il) &&
            !model_hparams_layer_has_ffn(hp, il)) {
            /* llama.cpp's deci graph goes on to the next layer before adding such a layer's attention, which DeciLM
             * adds: the two engines would part */
            snprintf(key, sizeof key, "%s.feed_forward_length", arch);
            return model_fail(err, MODEL_E_UNSUPPORTED, key_offset(f, key), key,
                        "layer %lld attends but has no feed-forward block (key '%s' 0): llama.cpp's deci graph skips "
                        "that layer's attention output where DeciLM adds it; gguf-run runs neither", (long long)il,
                        key);
        }
        const bool swa = model_hparams_layer_is_swa(hp, il) && (hp->head_dim_k_swa || hp->head_dim_v_swa);
        if (l.n_head_kv && l.n_head % l.n_head_kv) { /* (0: DeciLM's layer without keys and values) */
            snprintf(key, sizeof key, "%s.attention.head_count_kv", arch);
            return model_fail(err, MODEL_E_MALFORMED, key_offset(f, key), key,
                        "%lld query heads cannot share %lld key/value heads (key '%s'%s) evenly",
                        (long long)l.n_head, (long long)l.n_head_kv, key, hp->kv_heads_layers ? ", a layer's" : "");
        }
        if (l.head_dim_v != l.head_dim_k && !hp->arch->mla && !hp->arch->value_length_own) {
            snprintf(key, sizeof key, "%s.attention.value_length%s", arch, swa ? "_swa" : "");
            return model_fail(err, MODEL_E_MALFORMED, key_offset(f, key), key,
                        "value length %lld (key '%s') differs from key length %lld: not supported",
                        (long long)l.head_dim_v, key, (long long)l.head_dim_k);
        }
        if (l.n_rot > l.head_dim_k || l.n_rot % 2) {
            snprintf(key, sizeof key, "%s.rope.dimension_count%s", arch, swa ? "_swa" : "");
            return model_fail(err, MODEL_E_MALFORMED, key_offset(f, key), key,
                        "rotary dimensions %lld (key '%s') do not fit a head of %lld", (long long)l.n_rot, key,
                        (long long)l.head_dim_k);
        }
    }
    if (hp->n_kv_shared > 0) { /* llama.cpp's gemma4 cache asserts two layers before, the last two of each kind */
        const int64_t from = hp->n_layer_kv;
        if (from < 2 || !model_hparams_layer_is_swa(hp, from - 2) || model_hparams_layer_is_swa(hp, from - 1)) {
            snprintf(key, sizeof key, "%s.attention.shared_kv_layers", arch);
            return model_fail(err, MODEL_E_MALFORMED, key_offset(f, key), key,
                              "key '%s' is %lld of %lld layers: the layers before the shared ones must end with a "
                              "sliding-window layer then a full one, whose caches the shared layers read (llama.cpp "
                              "asserts it)", key, (long long)hp->n_kv_shared, (long long)hp->n_layer);
        }
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
        const bool whole = hp->arch->mrope_optional || hp->arch->mrope_partial || hp->n_rot == hp->head_dim_k;
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
    if (hp->arch->shortconv && hp->swa_window > 0) {
        snprintf(key, sizeof key, "%s.attention.sliding_window", arch);
        return model_fail(err, MODEL_E_UNSUPPORTED, key_offset(f, key), key,
                          "a %s model's attention layers within a window of %lld (key '%s') are not run yet", arch,
                          (long long)hp->swa_window, key);
    }
    if (hp->arch->delta_net) { /* the shapes llama.cpp's qwen35 loader makes and its graph asserts */
        const int64_t kd = hp->ssm_n_k_heads, vd = hp->ssm_n_v_heads;
        const char *bad = hp->ssm_d_inner != hp->ssm_d_state * vd ? "ssm.inner_size"
                          : vd % kd                                ? "ssm.group_count"
                                                                   : NULL;
        if (bad) {
            snprintf(key, sizeof key, "%s.%s", arch, bad);
            return model_fail(err, MODEL_E_MALFORMED, key_offset(f, key), key,
                              "the delta net's sizes do not fit (key '%s'): ssm.inner_size %lld must be ssm.state_size "
                              "%lld x ssm.time_step_rank %lld (the value heads), and the value heads a multiple of "
                              "ssm.group_count %lld (the key heads)", key, (long long)hp->ssm_d_inner,
                              (long long)hp->ssm_d_state, (long long)vd, (long long)kd);
        }
    }
    if (hp->arch->ssm_inner_embd_ratio && hp->ssm_d_inner != hp->arch->ssm_inner_embd_ratio * hp->n_embd) {
        snprintf(key, sizeof key, "%s.ssm.inner_size", arch);
        return model_fail(err, MODEL_E_MALFORMED, key_offset(f, key), key,
                          "key '%s' is %lld: llama.cpp's %s loader asserts it is %d x embedding_length (%lld)", key,
                          (long long)hp->ssm_d_inner, arch, hp->arch->ssm_inner_embd_ratio, (long long)hp->n_embd);
    }
    if (hp->arch->mamba2) { /* what llama.cpp's mamba2 layer and ggml_ssm_scan assert */
        const int64_t heads = hp->ssm_n_v_heads, groups = hp->ssm_n_k_heads;
        const char *bad = hp->ssm_d_inner % heads ? "ssm.time_step_rank" : heads % groups ? "ssm.group_count" : NULL;
        if (bad) {
            snprintf(key, sizeof key, "%s.%s", arch, bad);
            return model_fail(err, MODEL_E_MALFORMED, key_offset(f, key), key,
                              "Mamba-2's sizes do not fit (key '%s'): ssm.inner_size %lld must be a multiple of "
                              "ssm.time_step_rank %lld (the heads), and the heads a multiple of ssm.group_count %lld",
                              key, (long long)hp->ssm_d_inner, (long long)heads, (long long)groups);
        }
    }
    /* llama.cpp takes these as they come; out of these ranges every output is NaN or a constant (an infinite
     * epsilon or soft-cap, a scaling factor whose inverse overflows), so the file is refused, naming the key */
    const struct {
        const char *suffix;
        double value, max; /* finite, above 0 (at 0 too where zero_ok), below max */
        bool zero_ok;
        const char *range;
    } ranged[] = {
        { hp->norm_layer ? "attention.layer_norm_epsilon" : "attention.layer_norm_rms_epsilon", hp->eps, 1.0, false,
          "a small positive number (under 1: an epsilon is added to a mean square, not in place of it)" },
        { "rope.freq_base", hp->rope_base, HUGE_VAL, false, "a finite positive number" },
        { "rope.freq_base_swa", hp->rope_base_swa, HUGE_VAL, false, "a finite positive number" },
        /* the factor as the forward pass sees it: the inverse of its position scale (0 or infinite when the
         * factor's inverse overflows or vanishes in float) */
        { "rope.scaling.factor", 1.0 / hp->rope_freq_scale, HUGE_VAL, false,
          "a positive number whose inverse (the position scale) is finite and above 0" },
        { "final_logit_softcapping", hp->final_softcap, HUGE_VAL, true, "a finite positive number, or 0 (none)" },
        /* Grok's graph divides attention.output_scale by it: no 0 there */
        { "attn_logit_softcapping", hp->attn_softcap, HUGE_VAL, !hp->arch->attn_out_scale_default,
          hp->arch->attn_out_scale_default ? "a finite positive number (a grok model's scores are capped by it)"
                                           : "a finite positive number, or 0 (none)" },
        { "attention.output_scale", hp->attn_softcap_in, HUGE_VAL, !hp->arch->attn_out_scale_default,
          "a number whose quotient by attn_logit_softcapping is finite and positive" },
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
