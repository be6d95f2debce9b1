/*
 * The engine's hyperparameters: model/'s reader (llama.cpp's keys, defaults, ranges and checks), turned into the
 * ints and kernel settings the forward pass uses.
 */
#include "internal.h"
#include "rope_yarn.h"

#include <stdio.h>
#include <string.h>

const char *engine_supported_archs(void)
{
    return model_arch_names();
}

/* model/'s activation, as the kernels name it; *squared: an ungated block's row is act(x) * x, not act(x) alone
 * (relu(x)^2 as relu(x) * x: kern.h's RELU with the row as gate and up) */
static kern_act kern_act_of(model_act a, bool *squared)
{
    static const kern_act acts[] = { [MODEL_ACT_SILU] = KERN_ACT_SILU, [MODEL_ACT_GELU_TANH] = KERN_ACT_GELU_TANH,
                                     [MODEL_ACT_SWIGLU_OAI] = KERN_ACT_SWIGLU_OAI, [MODEL_ACT_RELU_SQR] = KERN_ACT_RELU,
                                     [MODEL_ACT_XIELU] = KERN_ACT_NONE /* its own op: engine_hparams.act_xielu */,
                                     [MODEL_ACT_RELU] = KERN_ACT_RELU };
    static const bool squares[] = { [MODEL_ACT_RELU_SQR] = true };
    *squared = (size_t)a < sizeof squares / sizeof squares[0] && squares[a];
    return acts[a];
}

engine_status engine_hparams_read(const gguf_file *f, engine_hparams *hp, engine_error *err)
{
    memset(hp, 0, sizeof *hp);
    model_hparams *g = &hp->g;
    model_error me;
    model_status ms = model_hparams_read(f, g, &me);
    snprintf(hp->arch, sizeof hp->arch, "%s", g->arch_name);
    if (ms != MODEL_OK)
        return engine_fail(err, ms == MODEL_E_UNSUPPORTED ? ENGINE_E_ARCH : ENGINE_E_MODEL, me.offset, me.subject,
                           "%s", me.message);
    hp->desc = g->arch;
    if (g->parallel && g->n_head * g->head_dim_k < g->n_embd) /* parallel_block's rows in the attention's */
        return engine_fail(err, ENGINE_E_MODEL, 0, "", "%s: q rows of %lld values are narrower than n_embd %lld, which "
                           "llama.cpp's %s loader makes them", g->arch_name, (long long)(g->n_head * g->head_dim_k),
                           (long long)g->n_embd, g->arch_name);
    /* the reader's ranges and checks keep every size below 2^30, so they fit an int */
    hp->n_embd = (int)g->n_embd;
    hp->n_block = (int)(g->n_layer - g->n_layer_nextn); /* the prediction blocks after them are not run */
    hp->n_layer = (int)model_hparams_layers_run(g);
    hp->n_head = (int)g->n_head;
    hp->n_kv_head = (int)g->n_head_kv;
    hp->head_dim = (int)g->head_dim_k;
    hp->v_dim = (int)g->head_dim_v;
    hp->mla = g->arch->mla;
    hp->mla_split = g->head_dim_k_mla > 0;
    hp->n_lora_q = (int)g->n_lora_q;
    hp->n_lora_kv = (int)g->n_lora_kv;
    hp->k_mla = (int)(hp->mla_split ? g->head_dim_k_mla : g->head_dim_k);
    hp->v_mla = (int)(hp->mla_split ? g->head_dim_v_mla : g->head_dim_v);
    hp->qk_nope = hp->k_mla - (int)g->n_rot;
    hp->delta_net = g->arch->delta_net;
    hp->attn_out_gated = g->arch->attn_out_gated;
    hp->attn_gate_proj = g->arch->attn_gate_proj;
    hp->attn_gate_act = g->arch->attn_gate_softplus ? KERN_ACT_SOFTPLUS : KERN_ACT_SIGMOID;
    hp->dn_grouped = g->arch->dn_heads_grouped;
    hp->shortconv = g->arch->shortconv;
    if (hp->shortconv) {
        hp->dn_conv = (int)g->shortconv_l_cache;
        hp->dn_channels = (int)g->n_embd;
    }
    hp->mamba2 = g->arch->mamba2;
    if (hp->mamba2) {
        hp->dn_conv = (int)g->ssm_d_conv;
        hp->dn_hv = (int)g->ssm_n_v_heads;
        hp->dn_hk = (int)g->ssm_n_k_heads;
        hp->dn_d = (int)g->ssm_d_state;
        hp->m2_inner = (int)g->ssm_d_inner;
        hp->dn_channels = hp->m2_inner + 2 * hp->dn_hk * hp->dn_d;
    }
    hp->mamba1 = g->arch->mamba1;
    if (hp->mamba1) {
        hp->dn_conv = (int)g->ssm_d_conv;
        hp->m2_inner = hp->dn_hv = hp->dn_channels = (int)g->ssm_d_inner;
        hp->dn_hk = 1;
        hp->dn_d = (int)g->ssm_d_state;
        hp->m1_dt_rank = (int)g->ssm_dt_rank;
        hp->m1_dt_b_c_rms = g->ssm_dt_b_c_rms;
    }
    const bool recurrent_kinds = hp->shortconv || hp->delta_net || hp->mamba2 || hp->mamba1;
    for (int64_t il = 0; il < g->n_layer - g->n_layer_nextn && recurrent_kinds; il++)
        hp->n_recurrent += model_hparams_layer_has_state(g, il); /* the layers that keep a state */
    if (hp->delta_net) {
        hp->dn_conv = (int)g->ssm_d_conv;
        hp->dn_hk = (int)g->ssm_n_k_heads;
        hp->dn_hv = (int)g->ssm_n_v_heads;
        hp->dn_d = (int)g->ssm_d_state;
        hp->dn_channels = (2 * hp->dn_hk + hp->dn_hv) * hp->dn_d;
    }
    hp->n_ple = (int)g->n_embd_per_layer;
    hp->n_ff = (int)g->n_ff; /* the widest, where the file lists one per layer */
    for (int64_t il = 0; il < hp->n_block; il++) {
        model_hparams l;
        model_hparams_layer(g, il, &l);
        const int k = (int)(l.n_head_kv * l.head_dim_k), v = (int)(l.n_head_kv * l.head_dim_v);
        hp->head_dim_max = l.head_dim_k > hp->head_dim_max ? (int)l.head_dim_k : hp->head_dim_max;
        hp->v_dim_max = l.head_dim_v > hp->v_dim_max ? (int)l.head_dim_v : hp->v_dim_max;
        hp->kv_max = k > hp->kv_max ? k : hp->kv_max;
        hp->kv_max = v > hp->kv_max ? v : hp->kv_max;
    }
    hp->n_ctx_train = (int)g->n_ctx_train;
    hp->n_expert = (int)g->n_expert;
    hp->n_expert_used = (int)g->n_expert_used;
    hp->n_ff_exp = (int)g->n_ff_exp;
    hp->n_ff_shexp = (int)g->n_ff_shexp;
    hp->moe_renormalise = g->moe_renormalise;
    hp->moe_scale = g->moe_scale;
    hp->eps = g->eps;
    hp->norm_layer = g->norm_layer;
    hp->eps_defaulted = g->eps_defaulted;
    hp->base_defaulted = g->rope_base_defaulted;
    hp->head_dim_from_key_length = g->head_dim_from_key_length;
    hp->n_rot_from_key = g->n_rot_from_key;
    hp->act = kern_act_of(g->arch->act, &hp->act_squared);
    hp->act_xielu = g->arch->act == MODEL_ACT_XIELU;
    hp->attn_scale = g->attn_scale;
    hp->embd_scale = g->embd_scale;
    hp->residual_scale = g->residual_scale;
    hp->logit_scale = g->logit_scale;
    hp->qk_norm_full = g->arch->qk_norm_full;
    hp->final_softcap = g->final_softcap;
    hp->swa_window = g->swa_window > 0 ? (int)g->swa_window : 0;
    hp->moe_gating = g->moe_gating;
    hp->rope = (kern_rope){ .n_rot = (int)g->n_rot, .neox = g->arch->rope_neox, .base = g->rope_base,
                            .freq_scale = g->rope_freq_scale, .ext_factor = g->yarn_ext_factor,
                            .attn_factor = g->yarn_attn_factor };
    hp->rope_swa = hp->rope;
    hp->rope_swa.n_rot = (int)(g->n_rot_swa ? g->n_rot_swa : g->n_rot);
    hp->rope_swa.base = g->rope_base_swa;
    hp->rope_swa.freq_scale = g->rope_freq_scale_swa;
    if (g->yarn_swa_off) {
        hp->rope_swa.ext_factor = 0.0f;
        hp->rope_swa.attn_factor = 1.0f;
    }
    /* YaRN's ramp per rope: llama.cpp computes it from each layer's own base (ggml_rope_ext's freq_base) */
    kern_rope *ropes[2] = { &hp->rope, &hp->rope_swa };
    for (int i = 0; i < 2; i++)
        rope_yarn_corr_dims(ropes[i]->n_rot, (int)g->n_ctx_orig_yarn, ropes[i]->base, g->yarn_beta_fast,
                            g->yarn_beta_slow, &ropes[i]->corr_lo, &ropes[i]->corr_hi);
    return ENGINE_OK;
}
