/*
 * What the hyperparameters say of one layer (sliding window, rotary) and of each dimension a tensor role is sized by.
 */
#include "model.h"
#include "model_internal.h"

#include <stdio.h>

bool model_hparams_layer_is_swa(const model_hparams *hp, int64_t il)
{
    if (hp->swa_window <= 0 || il < 0)
        return false;
    if (hp->swa_layers) {
        gguf_value v;
        return gguf_array_scalar(hp->swa_layers, (uint64_t)il, &v) == GGUF_OK && v.v.b;
    }
    /* llama.cpp's set_swa_pattern: period 0 makes every layer sliding; dense first, the first of each period is full */
    if (hp->swa_period == 0)
        return true;
    const uint32_t phase = (uint32_t)(il % hp->swa_period);
    return hp->arch && hp->arch->swa_dense_first ? phase != 0 : phase < hp->swa_period - 1;
}

bool model_hparams_layer_rotates(const model_hparams *hp, int64_t il)
{
    if (hp->rope_off)
        return false;
    gguf_value v;
    if (hp->rope_layers && il >= 0 && gguf_array_scalar(hp->rope_layers, (uint64_t)il, &v) == GGUF_OK)
        return v.v.b; /* (Granite's attention.rope_pattern: false is a layer without positions) */
    if (hp->arch && hp->arch->rope_swa_only && hp->swa_window > 0) /* (Cohere2 MoE's dense first layers rotate too) */
        return model_hparams_layer_is_swa(hp, il) || (hp->arch->rope_dense_lead && il < hp->n_layer_dense_lead);
    const uint32_t period = hp->arch ? hp->arch->no_rope_period : 0;
    if (period == 0 || (hp->arch->no_rope_window_only && hp->swa_window <= 0))
        return true;
    return hp->arch->no_rope_first ? il % period != 0 : (il + 1) % period != 0;
}

bool model_hparams_layer_is_recurrent(const model_hparams *hp, int64_t il)
{
    if (!hp->arch || !(hp->arch->delta_net || hp->arch->shortconv || hp->arch->mamba2 || hp->arch->mamba1))
        return false;
    if (hp->arch->mamba2 || hp->arch->mamba1) { /* llama.cpp's granitehybrid loader: no key/value heads;
                                                 * nemotron_h's: no feed-forward width either (its layers are one
                                                 * block); falcon-h1's attend as well; mamba's and mamba2's all recur */
        if (il < 0)
            return !hp->arch->mixer_beside;
        return il < hp->n_layer - hp->n_layer_nextn && !model_hparams_layer_is_ffn_only(hp, il) &&
               !model_hparams_layer_has_kv_heads(hp, il);
    }
    if (hp->arch->shortconv) /* llama.cpp's lfm2 loader: a layer without key/value heads is a convolution */
        return il < 0 ? hp->kv_heads_layers != NULL : !model_hparams_layer_has_kv_heads(hp, il);
    if (il < 0)
        return true;
    if (il >= hp->n_layer - hp->n_layer_nextn) /* the multi-token prediction blocks attend (llama.cpp's is_recr) */
        return false;
    if (hp->recurrent_layers) {
        gguf_value v;
        return gguf_array_scalar(hp->recurrent_layers, (uint64_t)il, &v) == GGUF_OK && v.v.b;
    }
    /* llama.cpp's qwen35 loader: every full_attention_interval-th layer attends, the others recur */
    return hp->full_attn_interval > 0 && (il + 1) % hp->full_attn_interval != 0;
}

bool model_hparams_layer_has_state(const model_hparams *hp, int64_t il)
{
    if (hp->arch && hp->arch->mixer_beside) /* Falcon-H1: every layer's mixer beside its attention */
        return il < hp->n_layer - hp->n_layer_nextn;
    return model_hparams_layer_is_recurrent(hp, il);
}

bool model_hparams_layer_has_kv_heads(const model_hparams *hp, int64_t il)
{
    gguf_value v;
    int64_t n = 1;
    if (il < 0 || !hp->kv_heads_layers)
        return hp->n_head_kv > 0;
    return gguf_array_scalar(hp->kv_heads_layers, (uint64_t)il, &v) == GGUF_OK && model_value_integer(&v, &n) && n > 0;
}

bool model_hparams_layer_is_ffn_only(const model_hparams *hp, int64_t il)
{
    if (!hp->arch || !hp->arch->single_block || il < 0)
        return false;
    model_hparams l;
    model_hparams_layer(hp, il, &l);
    return l.n_ff > 0;
}

/* layer il's entry of a per-layer count (-1: none listed) */
static int64_t layer_count(const gguf_value *layers, int64_t il)
{
    gguf_value v;
    int64_t n;
    return layers && gguf_array_scalar(layers, (uint64_t)il, &v) == GGUF_OK && model_value_integer(&v, &n) ? n : -1;
}

bool model_hparams_layer_has_attention(const model_hparams *hp, int64_t il)
{
    if (hp->arch && hp->arch->single_block && il >= 0)
        return !model_hparams_layer_is_ffn_only(hp, il);
    return !(hp->arch && hp->arch->blocks_by_width && il >= 0) || layer_count(hp->heads_layers, il) != 0;
}

bool model_hparams_layer_has_ffn(const model_hparams *hp, int64_t il)
{
    if (hp->arch && hp->arch->single_block && il >= 0)
        return model_hparams_layer_is_ffn_only(hp, il);
    return !(hp->arch && hp->arch->blocks_by_width && il >= 0) || layer_count(hp->ff_layers, il) != 0;
}

int64_t model_hparams_layer_kv_source(const model_hparams *hp, int64_t il)
{
    if (hp->n_kv_shared <= 0 || il < hp->n_layer_kv)
        return il;
    return hp->n_layer_kv - (model_hparams_layer_is_swa(hp, il) ? 2 : 1);
}

int64_t model_hparams_layers_run(const model_hparams *hp)
{
    return (hp->n_layer - hp->n_layer_nextn) * (hp->n_loops > 1 ? hp->n_loops : 1);
}

int64_t model_hparams_layer_block(const model_hparams *hp, int64_t il)
{
    const int64_t blocks = hp->n_layer - hp->n_layer_nextn;
    return hp->n_loops > 1 && blocks > 0 && il >= 0 ? il % blocks : il;
}

bool model_hparams_layer_ends_loop(const model_hparams *hp, int64_t il)
{
    const int64_t blocks = hp->n_layer - hp->n_layer_nextn;
    return hp->n_loops > 1 && !hp->skip_loop_final_norm && blocks > 0 && (il + 1) % blocks == 0 &&
           il + 1 < model_hparams_layers_run(hp);
}

bool model_hparams_layer_has_experts(const model_hparams *hp, int64_t il)
{
    if (hp->n_expert <= 0)
        return false;
    if (il < 0)
        return true;
    if (hp->arch && hp->arch->single_block && !model_hparams_layer_is_ffn_only(hp, il)) /* a mixer layer */
        return false;
    if (hp->arch && hp->arch->moe_where_router) { /* Jamba: where the router is */
        char name[64];
        snprintf(name, sizeof name, "blk.%lld.%s", (long long)il, model_role_info_of(MODEL_ROLE_FFN_GATE_INP)->name);
        return hp->file && gguf_tensor_by_name(hp->file, name) != NULL;
    }
    const int64_t step = hp->arch && hp->arch->moe_step_layers ? hp->n_moe_layer_step : 1;
    return il >= hp->n_layer_dense_lead && (step <= 1 || (il + 1) % step == 0);
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
    case MODEL_DIM_Q: return hp->n_head * k_mla * (hp->arch && hp->arch->attn_out_gated ? 2 : 1);
    case MODEL_DIM_KV_K: return hp->n_head_kv * hp->head_dim_k;
    case MODEL_DIM_KV_V: return hp->n_head_kv * hp->head_dim_v;
    case MODEL_DIM_Q_V: return hp->n_head * v_mla;
    case MODEL_DIM_QK_NORM_Q: /* (Talkie's one gain per head: {1, head_count}) */
        if (hp->arch && hp->arch->q_norm_head_gain)
            return 1;
        return hp->arch && hp->arch->qk_norm_full ? hp->n_head * hp->head_dim_k : hp->head_dim_k;
    case MODEL_DIM_QK_NORM_K:
        return hp->arch && hp->arch->qk_norm_full ? hp->n_head_kv * hp->head_dim_k : hp->head_dim_k;
    case MODEL_DIM_QK_NORM_ROWS_Q:
        return hp->arch && (hp->arch->qk_norm_from_layers || hp->arch->q_norm_head_gain) ? hp->n_head : 1;
    case MODEL_DIM_QK_NORM_ROWS_K: return hp->arch && hp->arch->qk_norm_from_layers ? hp->n_head_kv : 1;
    case MODEL_DIM_QKV:
        /* the delta net's q, k (a key head's each) and v, or Mamba-2's x, B and C (a group's each), convolved together */
        if (hp->arch && (hp->arch->delta_net || hp->arch->mamba2 || hp->arch->mamba1))
            return 2 * hp->ssm_n_k_heads * hp->ssm_d_state + hp->ssm_d_inner;
        /* llama.cpp's create_tensor_qkv: q and k key_length wide a head, v value_length */
        return (hp->n_head + hp->n_head_kv) * hp->head_dim_k + hp->n_head_kv * hp->head_dim_v;
    case MODEL_DIM_FF_UP: return hp->arch && hp->arch->gate_up_fused ? 2 * hp->n_ff : hp->n_ff;
    case MODEL_DIM_ROT_HALF: /* Step-3.5's one tensor for layers of two widths: the wider's (ggml reads its start) */
        return (hp->arch && hp->arch->rope_full_half && hp->n_rot_swa > hp->n_rot ? hp->n_rot_swa : hp->n_rot) / 2;
    case MODEL_DIM_EXPERT: return hp->n_expert;
    case MODEL_DIM_FF_EXP: return hp->n_ff_exp;
    case MODEL_DIM_FF_SHEXP: return hp->n_ff_shexp;
    case MODEL_DIM_FF_SHEXP_UP: return hp->arch && hp->arch->shexp_gate_up_fused ? 2 * hp->n_ff_shexp : hp->n_ff_shexp;
    case MODEL_DIM_HEAD: return hp->n_head;
    case MODEL_DIM_Q_LORA: return hp->n_lora_q;
    case MODEL_DIM_KV_LORA: return hp->n_lora_kv;
    case MODEL_DIM_KV_A: return hp->n_lora_kv > 0 ? hp->n_lora_kv + hp->n_rot : 0;
    case MODEL_DIM_KV_B: return k_mla > hp->n_rot ? hp->n_head * (k_mla - hp->n_rot + v_mla) : 0;
    case MODEL_DIM_QK_NOPE: return k_mla > hp->n_rot ? k_mla - hp->n_rot : 0;
    case MODEL_DIM_V_MLA: return v_mla;
    case MODEL_DIM_SSM_CONV: return hp->ssm_d_conv;
    case MODEL_DIM_SSM_INNER: return hp->ssm_d_inner;
    case MODEL_DIM_GATE: /* Step-3.5's gate per head (Laguna's where its layer's is), AFMoE's per value, or a Mamba
                          * mixer's z */
        return hp->attn_gate_heads                  ? hp->n_head
               : hp->arch && hp->arch->attn_gate_proj ? hp->n_head * hp->head_dim_v
                                                      : hp->ssm_d_inner;
    case MODEL_DIM_SSM_STATE: return hp->ssm_d_state;
    case MODEL_DIM_SSM_HEADS: return hp->ssm_n_v_heads;
    case MODEL_DIM_SSM_QKVZ: /* Mamba-2's z, x, B, C and dt (llama.cpp's d_in_proj) */
        return 2 * hp->ssm_n_k_heads * hp->ssm_d_state + 2 * hp->ssm_d_inner +
               (hp->arch && hp->arch->mamba2 ? hp->ssm_n_v_heads : 0);
    case MODEL_DIM_SSM_BA: return 2 * hp->ssm_n_v_heads;
    case MODEL_DIM_SHORTCONV: return hp->shortconv_l_cache;
    case MODEL_DIM_EMBD3: return 3 * hp->n_embd;
    case MODEL_DIM_ONE: return 1;
    case MODEL_DIM_CTX_TRAIN: return hp->n_ctx_train;
    case MODEL_DIM_PLE: return hp->n_embd_per_layer;
    case MODEL_DIM_PLE_ALL: return hp->n_embd_per_layer * hp->n_layer;
    case MODEL_DIM_FF_EXP2: return 2 * hp->n_ff_exp;
    case MODEL_DIM_SSM_A: /* a rate per head; Mamba-1's (state_size, channels): one per state value */
        return hp->arch && hp->arch->mamba2 ? 1 : hp->arch && hp->arch->mamba1 ? hp->ssm_d_state : hp->ssm_n_v_heads;
    case MODEL_DIM_SSM_A_ROWS: return hp->arch && (hp->arch->mamba2 || hp->arch->mamba1) ? hp->ssm_n_v_heads : 1;
    case MODEL_DIM_SSM_D: return hp->arch && hp->arch->mamba2 ? 1 : hp->ssm_n_v_heads;
    case MODEL_DIM_SSM_D_ROWS: return hp->arch && hp->arch->mamba2 ? hp->ssm_n_v_heads : 1;
    case MODEL_DIM_SSM_DT_RANK: return hp->ssm_dt_rank;
    case MODEL_DIM_SSM_X: return hp->ssm_dt_rank + 2 * hp->ssm_d_state;
    case MODEL_DIM_SSM_NORM:
        if (!hp->arch || !hp->arch->mamba2)
            return hp->ssm_d_state;
        return hp->ssm_n_k_heads > 0 && hp->ssm_d_inner % hp->ssm_n_k_heads == 0 ? hp->ssm_d_inner / hp->ssm_n_k_heads : 0;
    case MODEL_DIM_SSM_NORM_ROWS: return hp->arch && hp->arch->mamba2 ? hp->ssm_n_k_heads : 1;
    default: return 0;
    }
}

void model_hparams_layer(const model_hparams *hp, int64_t il, model_hparams *out)
{
    *out = *hp;
    if (il < 0)
        return;
    gguf_value v;
    int64_t n;
    /* a count per layer (LFM2's 0 marks a convolution, which has no heads to shape: the attention's count stays) */
    if (hp->kv_heads_layers && gguf_array_scalar(hp->kv_heads_layers, (uint64_t)il, &v) == GGUF_OK &&
        model_value_integer(&v, &n) && (n > 0 || (hp->arch && hp->arch->blocks_by_width)))
        out->n_head_kv = n; /* DeciLM's 0: a layer with no keys or values to keep */
    if (hp->ff_layers && gguf_array_scalar(hp->ff_layers, (uint64_t)il, &v) == GGUF_OK && model_value_integer(&v, &n))
        out->n_ff = n;
    if (hp->heads_layers && gguf_array_scalar(hp->heads_layers, (uint64_t)il, &v) == GGUF_OK &&
        model_value_integer(&v, &n) && n > 0) /* DeciLM's 0 marks a layer without attention: no heads to shape */
        out->n_head = n;
    for (int k = 0; k < 4; k++) /* xIELU's parameters, where the file lists one per layer */
        if (hp->xielu_layers[k] && gguf_array_scalar(hp->xielu_layers[k], (uint64_t)il, &v) == GGUF_OK)
            model_value_float(&v, &out->xielu[k]);
    if (hp->swiglu_clamp_exp_layers && gguf_array_scalar(hp->swiglu_clamp_exp_layers, (uint64_t)il, &v) == GGUF_OK)
        model_value_float(&v, &out->swiglu_clamp_exp); /* the experts' SwiGLU limit, one per layer */
    if (hp->swiglu_clamp_shexp_layers && gguf_array_scalar(hp->swiglu_clamp_shexp_layers, (uint64_t)il, &v) == GGUF_OK)
        model_value_float(&v, &out->swiglu_clamp_shexp);
    if (model_hparams_layer_is_swa(hp, il)) {
        out->head_dim_k = hp->head_dim_k_swa ? hp->head_dim_k_swa : hp->head_dim_k;
        out->head_dim_v = hp->head_dim_v_swa ? hp->head_dim_v_swa : hp->head_dim_v;
        out->n_rot = hp->n_rot_swa ? hp->n_rot_swa : hp->n_rot;
    }
    if (hp->arch && hp->arch->attn_gate_either && hp->file) { /* Laguna: the gate's width says which, as llama.cpp's
                                                              * laguna loader reads it from the tensor */
        char name[96];
        snprintf(name, sizeof name, "blk.%lld.%s", (long long)il, model_role_name(hp->arch, MODEL_ROLE_ATTN_GATE));
        const gguf_tensor *t = gguf_tensor_by_name(hp->file, name);
        out->attn_gate_heads = t && (int64_t)t->ne[1] == out->n_head && out->head_dim_v > 1;
    }
}

bool model_role_shape_at(const model_hparams *hp, const model_role_info *ri, int64_t il, int64_t ne[3])
{
    if (il < 0 || !ri->per_layer)
        return model_role_shape(hp, ri, ne);
    model_hparams layer;
    model_hparams_layer(hp, il, &layer);
    return model_role_shape(&layer, ri, ne);
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
        [MODEL_DIM_FF] = "feed_forward_length", [MODEL_DIM_Q] = "head_count x key_length (x2 with gates)",
        [MODEL_DIM_KV_K] = "head_count_kv x key_length", [MODEL_DIM_KV_V] = "head_count_kv x value_length",
        [MODEL_DIM_Q_V] = "head_count x value_length", [MODEL_DIM_QK_NORM_Q] = "key_length (or head_count x key_length)",
        [MODEL_DIM_QK_NORM_K] = "key_length (or head_count_kv x key_length)",
        [MODEL_DIM_QK_NORM_ROWS_Q] = "1 (head_count with each head's own gains)",
        [MODEL_DIM_QK_NORM_ROWS_K] = "1 (head_count_kv with each head's own gains)",
        [MODEL_DIM_QKV] = ("(head_count + head_count_kv) x key_length + head_count_kv x value_length (a delta net's or "
                           "Mamba-2's: 2 ssm.group_count x ssm.state_size + ssm.inner_size)"),
        [MODEL_DIM_FF_UP] = "feed_forward_length (x2 with the gate fused in)",
        [MODEL_DIM_ROT_HALF] = "rope.dimension_count / 2", [MODEL_DIM_EXPERT] = "expert_count",
        [MODEL_DIM_FF_EXP] = "expert_feed_forward_length", [MODEL_DIM_FF_SHEXP] = "expert_shared_feed_forward_length",
        [MODEL_DIM_HEAD] = "head_count", [MODEL_DIM_Q_LORA] = "q_lora_rank", [MODEL_DIM_KV_LORA] = "kv_lora_rank",
        [MODEL_DIM_KV_A] = "kv_lora_rank + rope.dimension_count",
        [MODEL_DIM_KV_B] = "head_count x (key_length_mla - rope.dimension_count + value_length_mla)",
        [MODEL_DIM_QK_NOPE] = "key_length_mla - rope.dimension_count", [MODEL_DIM_V_MLA] = "value_length_mla",
        [MODEL_DIM_SSM_CONV] = "ssm.conv_kernel", [MODEL_DIM_SSM_INNER] = "ssm.inner_size",
        [MODEL_DIM_SSM_STATE] = "ssm.state_size",
        [MODEL_DIM_SSM_HEADS] = "ssm.time_step_rank (Mamba-1: ssm.inner_size)",
        [MODEL_DIM_SSM_QKVZ] = "2 ssm.group_count x ssm.state_size + 2 ssm.inner_size (Mamba-2: + ssm.time_step_rank)",
        [MODEL_DIM_SSM_BA] = "2 ssm.time_step_rank", [MODEL_DIM_SHORTCONV] = "shortconv.l_cache",
        [MODEL_DIM_EMBD3] = "3 x embedding_length", [MODEL_DIM_ONE] = "1",
        [MODEL_DIM_CTX_TRAIN] = "context_length", [MODEL_DIM_PLE] = "embedding_length_per_layer_input",
        [MODEL_DIM_PLE_ALL] = "embedding_length_per_layer_input x block_count",
        [MODEL_DIM_FF_EXP2] = "2 x expert_feed_forward_length",
        [MODEL_DIM_SSM_A] = "ssm.time_step_rank (Mamba-2: 1; Mamba-1: ssm.state_size)",
        [MODEL_DIM_SSM_A_ROWS] = "1 (Mamba-2: ssm.time_step_rank; Mamba-1: ssm.inner_size)",
        [MODEL_DIM_SSM_NORM] = "ssm.state_size (Mamba-2: ssm.inner_size / ssm.group_count)",
        [MODEL_DIM_SSM_NORM_ROWS] = "1 (Mamba-2: ssm.group_count)",
        [MODEL_DIM_SSM_DT_RANK] = "ssm.time_step_rank", [MODEL_DIM_SSM_X] = "ssm.time_step_rank + 2 ssm.state_size",
        [MODEL_DIM_SSM_D] = "ssm.inner_size (Mamba-2: 1)", [MODEL_DIM_SSM_D_ROWS] = "1 (Mamba-2: ssm.time_step_rank)",
        [MODEL_DIM_GATE] = "ssm.inner_size (AFMoE: head_count x value_length; Step-3.5: head_count; Laguna: either)",
        [MODEL_DIM_FF_SHEXP_UP] = "expert_shared_feed_forward_length (x2 with the gate fused in)",
    };
    return (unsigned)d < MODEL_DIM_COUNT ? names[d] : "";
}
