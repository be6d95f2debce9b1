/*
 * The engine's hyperparameters: gguf/'s shared reader (gguf_hparams_read,
 * llama.cpp's keys and defaults), then what the engine itself needs of them:
 * an architecture it has an entry for, sizes that fit an int, heads that
 * divide, and the rotary settings of full and sliding-window layers.
 */
#include "internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

const char *engine_supported_archs(void)
{
    return gguf_arch_names();
}

/* Where a key the checks below blame starts (0 when the file leaves it to its default). */
static uint64_t key_offset(const gguf_file *f, const char *key)
{
    const gguf_kv *kv = gguf_find_kv(f, key);
    return kv ? kv->offset : 0;
}

engine_status engine_hparams_read(const gguf_file *f, engine_hparams *hp, engine_error *err)
{
    memset(hp, 0, sizeof *hp);
    gguf_hparams *g = &hp->g;
    gguf_error ge;
    gguf_status gs = gguf_hparams_read(f, g, &ge);
    snprintf(hp->arch, sizeof hp->arch, "%s", g->arch_name);
    if (!g->arch_name[0] && gs != GGUF_OK)
        return engine_fail(err, ENGINE_E_MODEL, ge.offset, "general.architecture",
                           "%s; cannot tell the architecture (supported: %s)", ge.message, engine_supported_archs());
    if (!g->arch) {
        const gguf_kv *kv = gguf_find_kv(f, "general.architecture");
        if (!engine_is_identifier(kv->value.v.str.ptr, kv->value.v.str.len))
            return engine_fail(err, ENGINE_E_MODEL, kv->offset, "general.architecture",
                               "general.architecture '%s' is not an architecture's name (letters, digits, '_', '-', "
                               "'.'; supported: %s)", g->arch_name, engine_supported_archs());
        return engine_fail(err, ENGINE_E_ARCH, kv->offset, "general.architecture",
                           "architecture '%s' is not supported by gguf-run (supported: %s)", g->arch_name,
                           engine_supported_archs());
    }
    if (gs != GGUF_OK)
        return engine_fail(err, ENGINE_E_MODEL, ge.offset, ge.subject, "%s", ge.message);
    hp->desc = g->arch;
    /* the reader's ranges keep every size below 2^30, so they fit an int */
    hp->n_embd = (int)g->n_embd;
    hp->n_layer = (int)g->n_layer;
    hp->n_head = (int)g->n_head;
    hp->n_kv_head = (int)g->n_head_kv;
    hp->head_dim = (int)g->head_dim_k;
    hp->n_ff = (int)g->n_ff;
    hp->n_ctx_train = (int)g->n_ctx_train;
    hp->eps = g->eps;
    hp->eps_defaulted = g->eps_defaulted;
    hp->base_defaulted = g->rope_base_defaulted;
    hp->head_dim_from_key_length = g->head_dim_from_key_length;
    hp->n_rot_from_key = g->n_rot_from_key;
    hp->act = g->arch->act;
    hp->attn_scale = g->attn_scale;
    hp->embd_scale = g->embd_scale;
    hp->final_softcap = g->final_softcap;
    hp->swa_window = g->swa_window > 0 ? (int)g->swa_window : 0;
    hp->rope = (kern_rope){ .n_rot = (int)g->n_rot, .neox = g->arch->rope_neox, .base = g->rope_base,
                            .freq_scale = g->rope_freq_scale };
    hp->rope_swa = hp->rope;
    hp->rope_swa.base = g->rope_base_swa;
    hp->rope_swa.freq_scale = g->rope_freq_scale_swa;

    char key[160];
    if (g->n_expert > 0) { /* llama.cpp asserts 0 < expert_used_count <= expert_count, then reads the experts */
        const bool has_experts = gguf_find_tensor(f, "blk.0.ffn_gate_inp.weight") != NULL;
        snprintf(key, sizeof key, "%s.expert_count", hp->arch);
        if (!has_experts)
            return engine_fail(err, ENGINE_E_MODEL, key_offset(f, key), key,
                               "key '%s' says %lld experts, but the file has no expert tensors (llama.cpp looks for "
                               "blk.0.ffn_gate_inp.weight and refuses it)", key, (long long)g->n_expert);
        if (g->n_expert_used < 1 || g->n_expert_used > g->n_expert) {
            snprintf(key, sizeof key, "%s.expert_used_count", hp->arch);
            return engine_fail(err, ENGINE_E_MODEL, key_offset(f, key), key,
                               "key '%s' is %lld: it must be 1 to expert_count (%lld); llama.cpp stops on an assertion",
                               key, (long long)g->n_expert_used, (long long)g->n_expert);
        }
        return engine_fail(err, ENGINE_E_ARCH, key_offset(f, key), key,
                           "a mixture-of-experts %s (%lld experts, %lld used per token) is not run by gguf-run yet",
                           hp->arch, (long long)g->n_expert, (long long)g->n_expert_used);
    }
    if (hp->n_ff <= 0) { /* llama.cpp makes ffn_gate (n_embd, n_ff) from it and refuses the file's tensor */
        snprintf(key, sizeof key, "%s.feed_forward_length", hp->arch);
        return engine_fail(err, ENGINE_E_MODEL, key_offset(f, key), key,
                           "key '%s' is %s: llama.cpp sizes the feed-forward tensors by it and refuses the file", key,
                           gguf_find_kv(f, key) ? "0" : "missing");
    }
    if (hp->head_dim == 0) {
        snprintf(key, sizeof key, "%s.attention.head_count", hp->arch);
        return engine_fail(err, ENGINE_E_MODEL, key_offset(f, key), key,
                           "no attention.key_length, and %d heads (key '%s') do not divide embedding_length %d", hp->n_head, key,
                           hp->n_embd);
    }
    if ((int64_t)hp->n_head * hp->head_dim > (INT64_C(1) << 30)) { /* the forward pass indexes rows with int */
        snprintf(key, sizeof key, "%s.attention.head_count", hp->arch);
        return engine_fail(err, ENGINE_E_MODEL, key_offset(f, key), key,
                           "%d heads (key '%s') of %d values make query rows of more than 2^30 values", hp->n_head,
                           key, hp->head_dim);
    }
    if (hp->n_head % hp->n_kv_head) {
        snprintf(key, sizeof key, "%s.attention.head_count_kv", hp->arch);
        return engine_fail(err, ENGINE_E_MODEL, key_offset(f, key), key,
                           "%d query heads cannot share %d key/value heads (key '%s') evenly", hp->n_head,
                           hp->n_kv_head, key);
    }
    if (g->head_dim_v != g->head_dim_k) {
        snprintf(key, sizeof key, "%s.attention.value_length", hp->arch);
        return engine_fail(err, ENGINE_E_MODEL, key_offset(f, key), key, "value length %lld (key '%s') differs from key length %d: not supported",
                           (long long)g->head_dim_v, key, hp->head_dim);
    }
    if (hp->rope.n_rot > hp->head_dim || hp->rope.n_rot % 2) {
        snprintf(key, sizeof key, "%s.rope.dimension_count", hp->arch);
        return engine_fail(err, ENGINE_E_MODEL, key_offset(f, key), key, "rotary dimensions %d (key '%s') do not fit a head of %d",
                           hp->rope.n_rot, key, hp->head_dim);
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
        { "rope.freq_base", hp->rope.base, HUGE_VAL, false, "a finite positive number" },
        { "rope.freq_base_swa", hp->rope_swa.base, HUGE_VAL, false, "a finite positive number" },
        /* the factor as the forward pass sees it: the inverse of its position scale (0 or infinite when the
         * factor's inverse overflows or vanishes in float) */
        { "rope.scaling.factor", 1.0 / hp->rope.freq_scale, HUGE_VAL, false,
          "a positive number whose inverse (the position scale) is finite and above 0" },
        { "final_logit_softcapping", hp->final_softcap, HUGE_VAL, true, "a finite positive number, or 0 (none)" },
    };
    for (size_t i = 0; i < sizeof ranged / sizeof ranged[0]; i++) {
        const double v = ranged[i].value;
        if (isfinite(v) && (v > 0 || (ranged[i].zero_ok && v == 0)) && v < ranged[i].max)
            continue;
        snprintf(key, sizeof key, "%s.%s", hp->arch, ranged[i].suffix);
        const gguf_kv *kv = gguf_find_kv(f, key); /* the file's own number, as the message shows it */
        const bool raw = kv && (kv->value.type == GGUF_VT_FLOAT32 || kv->value.type == GGUF_VT_FLOAT64);
        return engine_fail(err, ENGINE_E_MODEL, key_offset(f, key), key, "key '%s' is %g: it must be %s", key,
                           raw ? kv->value.v.f64 : v, ranged[i].range);
    }
    return ENGINE_OK;
}
