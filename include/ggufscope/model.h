/*
 * model.h — what a model is, as data: the tensor roles with their shapes, one entry per architecture (which
 * roles it needs, what its forward pass does), and the one hyperparameter reader with llama.cpp's keys,
 * defaults and ranges. engine/, audit/ and gguf-quantize read models through it; gguf/ below it knows the file
 * format only.
 */
#ifndef GGUFSCOPE_MODEL_H
#define GGUFSCOPE_MODEL_H

#include "gguf.h"

#include "export.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- architectures ------------------------------------------------------ */

/* What each architecture's file holds and what its forward pass does, as data
 * (gguf-py's constants.py keeps the tensor names the same way; the shapes,
 * defaults and flags are llama.cpp's, src/models/<arch>.cpp). engine/, audit/
 * and gguf-quantize read these entries; none of them compares names. Adding
 * an architecture whose ops exist is one entry in model/arch.c: docs/ARCHITECTURES.md. */

/* A size a tensor's shape is written in. */
typedef enum model_dim {
    MODEL_DIM_NONE,      /* a vector has no second dimension */
    MODEL_DIM_EMBD,      /* embedding_length */
    MODEL_DIM_VOCAB,     /* tokens in the vocabulary */
    MODEL_DIM_FF,        /* feed_forward_length */
    MODEL_DIM_Q,         /* head_count x key_length (x key_length_mla: latent attention; twice that where each head's
                          * query is followed by its output gate: model_arch.attn_out_gated) */
    MODEL_DIM_KV_K,      /* head_count_kv x key_length */
    MODEL_DIM_KV_V,      /* head_count_kv x value_length */
    MODEL_DIM_Q_V,       /* head_count x value_length (the attention output's input; x value_length_mla) */
    MODEL_DIM_QK_NORM_Q, /* q's norm: key_length (per head), or head_count x key_length (qk_norm_full) */
    MODEL_DIM_QK_NORM_K, /* k's norm: key_length, or head_count_kv x key_length */
    MODEL_DIM_QK_NORM_ROWS_Q, MODEL_DIM_QK_NORM_ROWS_K, /* their rows: 1, or one per head (qk_norm_from_layers) */
    MODEL_DIM_QKV,       /* a fused q/k/v projection's rows: (head_count + 2 head_count_kv) x key_length; in a gated
                          * delta net 2 ssm.group_count x ssm.state_size + ssm.inner_size */
    MODEL_DIM_FF_UP,     /* ffn_up's rows: feed_forward_length, twice that where gate and up are fused */
    MODEL_DIM_ROT_HALF,  /* rope.dimension_count / 2: rope_freqs */
    MODEL_DIM_EXPERT,    /* expert_count */
    MODEL_DIM_FF_EXP,    /* one expert's feed-forward width */
    MODEL_DIM_FF_SHEXP,  /* the shared expert's feed-forward width */
    MODEL_DIM_HEAD,      /* head_count: one value per query head (attention sinks) */
    /* latent attention (DeepSeek-V2/V3): the ranks of the query's and the keys' and values' compressions, the
     * compressed row with its rotary part, the decompression's rows (per head: the keys' part without rotation and
     * the values), a head's key part without rotation, a head's value length */
    MODEL_DIM_Q_LORA, MODEL_DIM_KV_LORA, MODEL_DIM_KV_A, MODEL_DIM_KV_B, MODEL_DIM_QK_NOPE, MODEL_DIM_V_MLA,
    /* gated delta net (Qwen3.5): the short convolution's taps (ssm.conv_kernel), the values' width (ssm.inner_size), a
     * head's key and value length (ssm.state_size), the value heads (ssm.time_step_rank) */
    MODEL_DIM_SSM_CONV, MODEL_DIM_SSM_INNER, MODEL_DIM_SSM_STATE, MODEL_DIM_SSM_HEADS,
    /* Qwen3-Next's fused projections: q, k, v and z of each key head together (2 ssm.group_count x ssm.state_size +
     * 2 ssm.inner_size), beta and alpha of each key head's value heads together (2 ssm.time_step_rank) */
    MODEL_DIM_SSM_QKVZ, MODEL_DIM_SSM_BA,
    /* LFM2's short convolution: its taps (shortconv.l_cache), and its input projection's rows (3 embedding_length: B,
     * C and x) */
    MODEL_DIM_SHORTCONV, MODEL_DIM_EMBD3,
    MODEL_DIM_ONE,       /* a single value (Gemma 4's layer_output_scale) */
    MODEL_DIM_CTX_TRAIN, /* context_length: a learned position table's rows */
    /* Gemma 4's per-layer token embeddings: embedding_length_per_layer_input, and that times block_count */
    MODEL_DIM_PLE, MODEL_DIM_PLE_ALL,
    MODEL_DIM_FF_EXP2,   /* twice an expert's width: its gate and up rows fused (ffn_gate_up_exps) */
    /* a recurrent layer's ssm_a and ssm_d (one value per head: a delta net's (heads), Mamba-2's (1, heads)) and its
     * output norm's gains (a delta net's one head's (ssm.state_size), Mamba-2's one row per group (ssm.inner_size /
     * ssm.group_count, ssm.group_count)) */
    MODEL_DIM_SSM_A, MODEL_DIM_SSM_A_ROWS, MODEL_DIM_SSM_NORM, MODEL_DIM_SSM_NORM_ROWS,
    /* Mamba-1's: dt's rank (ssm.time_step_rank), ssm_x's rows (that + 2 ssm.state_size: dt, B, C), and D's shape (one
     * value per channel; Mamba-2's (1, heads), a head's each) */
    MODEL_DIM_SSM_DT_RANK, MODEL_DIM_SSM_X, MODEL_DIM_SSM_D, MODEL_DIM_SSM_D_ROWS,
    MODEL_DIM_COUNT
} model_dim;

/* Every tensor role any architecture here has; per-layer roles are named blk.N.<name>. */
typedef enum model_role {
    MODEL_ROLE_TOKEN_EMBD, MODEL_ROLE_OUTPUT_NORM, MODEL_ROLE_OUTPUT, MODEL_ROLE_ROPE_FREQS,
    /* LongRoPE (phi3's 128k files): frequency divisors for contexts past rope.scaling.original_context_length, and
     * for those within it */
    MODEL_ROLE_ROPE_FACTORS_LONG, MODEL_ROLE_ROPE_FACTORS_SHORT,
    MODEL_ROLE_TOKEN_EMBD_NORM, /* the final norm under the name LFM2's converter gives it */
    /* Gemma 4 E2B / E4B's per-layer inputs: a second embedding table (each token's rows for every layer), the
     * projection of the embeddings that joins them, that projection's norm gains */
    MODEL_ROLE_PER_LAYER_TOKEN_EMBD, MODEL_ROLE_PER_LAYER_MODEL_PROJ, MODEL_ROLE_PER_LAYER_PROJ_NORM,
    MODEL_ROLE_OUTPUT_NORM_BIAS, /* the final LayerNorm's bias (StarCoder2) */
    MODEL_ROLE_OUTPUT_BIAS,      /* the logits' bias (phi2) */
    MODEL_ROLE_POS_EMBD,         /* learned absolute positions, one row per position (GPT-2, StarCoder) */
    MODEL_ROLE_TOKEN_EMBD_NORM_BIAS, /* the bias of BLOOM's LayerNorm of the embeddings */
    MODEL_ROLE_FIRST_LAYER_ROLE,
    MODEL_ROLE_ATTN_NORM = MODEL_ROLE_FIRST_LAYER_ROLE, MODEL_ROLE_ATTN_Q, MODEL_ROLE_ATTN_K, MODEL_ROLE_ATTN_V,
    MODEL_ROLE_ATTN_Q_BIAS, MODEL_ROLE_ATTN_K_BIAS, MODEL_ROLE_ATTN_V_BIAS, MODEL_ROLE_ATTN_Q_NORM,
    MODEL_ROLE_ATTN_K_NORM, MODEL_ROLE_ATTN_OUT, MODEL_ROLE_ATTN_POST_NORM, MODEL_ROLE_FFN_NORM, MODEL_ROLE_FFN_GATE,
    MODEL_ROLE_FFN_UP, MODEL_ROLE_FFN_DOWN, MODEL_ROLE_FFN_POST_NORM,
    /* mixture of experts: the router, the experts' 3-D tensors (experts outermost), the shared expert */
    MODEL_ROLE_FFN_GATE_INP, MODEL_ROLE_FFN_GATE_EXPS, MODEL_ROLE_FFN_UP_EXPS, MODEL_ROLE_FFN_DOWN_EXPS,
    MODEL_ROLE_FFN_GATE_INP_SHEXP, MODEL_ROLE_FFN_GATE_SHEXP, MODEL_ROLE_FFN_UP_SHEXP, MODEL_ROLE_FFN_DOWN_SHEXP,
    MODEL_ROLE_ATTN_QKV,   /* q, k and v in one matrix, rows in that order (phi3) */
    /* gpt-oss: the attention output's bias, one attention-sink logit per head, the router's bias and one bias per
     * expert for its gate, up and down projections (row e of each is expert e's) */
    MODEL_ROLE_ATTN_OUT_BIAS, MODEL_ROLE_ATTN_SINKS, MODEL_ROLE_FFN_GATE_INP_BIAS, MODEL_ROLE_FFN_GATE_EXPS_BIAS,
    MODEL_ROLE_FFN_UP_EXPS_BIAS, MODEL_ROLE_FFN_DOWN_EXPS_BIAS,
    /* a bias added to the router's scores for choosing the experts only (DeepSeek-V3's e_score_correction_bias;
     * glm4moe) */
    MODEL_ROLE_FFN_EXP_PROBS_B,
    /* latent attention (DeepSeek-V2/V3, Kimi K2, GLM-4.7-Flash): the query's compression, its norm and its
     * decompression; the keys' and values' compression with the shared rotary key, its norm; their decompression
     * whole (older files) or split per head into the keys' (absorbed into the query) and the values' */
    MODEL_ROLE_ATTN_Q_A, MODEL_ROLE_ATTN_Q_A_NORM, MODEL_ROLE_ATTN_Q_B, MODEL_ROLE_ATTN_KV_A_MQA,
    MODEL_ROLE_ATTN_KV_A_NORM, MODEL_ROLE_ATTN_KV_B, MODEL_ROLE_ATTN_K_B, MODEL_ROLE_ATTN_V_B,
    /* a gated delta net's layer (Qwen3.5): q, k and v come from attn_qkv, its output's gate from attn_gate; the short
     * convolution's taps, the decay's bias and rate (ssm_a: -exp(A_log)), the write strength's and the decay's
     * projections, the output's norm gains and projection */
    MODEL_ROLE_ATTN_GATE, MODEL_ROLE_SSM_CONV1D, MODEL_ROLE_SSM_DT, MODEL_ROLE_SSM_A, MODEL_ROLE_SSM_BETA,
    MODEL_ROLE_SSM_ALPHA, MODEL_ROLE_SSM_NORM, MODEL_ROLE_SSM_OUT,
    /* Qwen3-Next's: q, k, v and z in one projection, each key head's rows together (older files, in place of attn_qkv
     * and attn_gate); beta and alpha in one, each key head's value heads together */
    MODEL_ROLE_SSM_IN, MODEL_ROLE_SSM_BA,
    /* LFM2: a short convolution layer's input projection (B, C, x), taps and output projection */
    MODEL_ROLE_SHORTCONV_IN, MODEL_ROLE_SHORTCONV_CONV, MODEL_ROLE_SHORTCONV_OUT,
    /* Gemma 4: one factor the layer's output is multiplied by; a layer's gate over its per-layer input, the
     * projection back to the embedding and its norm gains (E2B / E4B) */
    MODEL_ROLE_LAYER_OUT_SCALE, MODEL_ROLE_PER_LAYER_INP_GATE, MODEL_ROLE_PER_LAYER_PROJ, MODEL_ROLE_PER_LAYER_POST_NORM,
    /* Gemma 4 26B-A4B's mixture beside its dense block: each expert's gate and up rows in one tensor, the router's input
     * gains, each expert's output scale, the experts' input norm, the dense block's and the experts' output norms */
    MODEL_ROLE_FFN_GATE_UP_EXPS, MODEL_ROLE_FFN_GATE_INP_SCALE, MODEL_ROLE_FFN_DOWN_EXPS_SCALE, MODEL_ROLE_FFN_PRE_NORM_2,
    MODEL_ROLE_FFN_POST_NORM_1, MODEL_ROLE_FFN_POST_NORM_2,
    /* Mamba-2 (Nemotron-H): the skip connection's factor per head (D) and the convolution's bias */
    MODEL_ROLE_SSM_D, MODEL_ROLE_SSM_CONV1D_BIAS,
    /* Mamba-1: the projection of the convolved x to dt, B and C, and dt's widening to every channel; Jamba's gains of
     * dt's, B's and C's RMSNorms */
    MODEL_ROLE_SSM_X, MODEL_ROLE_SSM_DT_PROJ, MODEL_ROLE_SSM_DT_NORM, MODEL_ROLE_SSM_B_NORM, MODEL_ROLE_SSM_C_NORM,
    /* the LayerNorms' biases and the ungated feed-forward block's (StarCoder2: x W + b everywhere) */
    MODEL_ROLE_ATTN_NORM_BIAS, MODEL_ROLE_FFN_NORM_BIAS, MODEL_ROLE_FFN_UP_BIAS, MODEL_ROLE_FFN_DOWN_BIAS,
    /* a fused attn_qkv's bias, q's, k's and v's in that order (phi2's older files) */
    MODEL_ROLE_ATTN_QKV_BIAS,
    /* Falcon-40B's attention's own LayerNorm (attn_norm then the feed-forward block's alone) */
    MODEL_ROLE_ATTN_NORM_2, MODEL_ROLE_ATTN_NORM_2_BIAS,
    /* the biases of q's and k's LayerNorms over whole rows (MPT's qk_ln) */
    MODEL_ROLE_ATTN_Q_NORM_BIAS, MODEL_ROLE_ATTN_K_NORM_BIAS,
    /* AWQ's activation scales the feed-forward block's activation is divided by (MPT's ffn.act.scales) */
    MODEL_ROLE_FFN_ACT_SCALES,
    /* DBRX's norm between the attention and the experts, under the name its converter gives it (norm_2) */
    MODEL_ROLE_ATTN_OUT_NORM,
    MODEL_ROLE_COUNT
} model_role;

/* Which feed-forward form a role belongs to: a file with <arch>.expert_count > 0 has the experts' roles in place
 * of the dense ones (llama.cpp's loaders branch on n_expert the same way). */
typedef enum model_ffn_form { MODEL_FFN_ANY = 0, MODEL_FFN_DENSE, MODEL_FFN_MOE } model_ffn_form;

/* Multi-axis rotary positions (Qwen2-VL's M-RoPE, Qwen3-VL's interleaved form): rope.dimension_sections cuts each
 * head's rotating pairs into time, height, width and extra sections; a text token's position is its index in the
 * first three and 0 in the extra one (llama.cpp's llm_graph_input_pos), so text rotates as NEOX but for the pairs of
 * the extra section, which keep position 0. */
typedef enum model_mrope { MODEL_MROPE_NONE = 0, MODEL_MROPE_SECTIONS, MODEL_MROPE_INTERLEAVED } model_mrope;

/* Which form of latent attention a role belongs to (an architecture with mla): the query straight from the input
 * (q_lora_rank 0) or through its compression, and the keys' and values' decompression whole (no key_length_mla) or
 * split per head; llama.cpp's deepseek2 loader picks the same way. */
typedef enum model_attn_form {
    MODEL_ATTN_ANY = 0, MODEL_ATTN_Q_DIRECT, MODEL_ATTN_Q_LORA, MODEL_ATTN_KV_B_WHOLE, MODEL_ATTN_KV_B_SPLIT
} model_attn_form;

/* The blocks of a layer that DeciLM's layers each may lack (model_arch.blocks_by_width): the attention's norm and
 * output product; its q, k and v; the feed-forward block. ANY: a role of none of these. */
typedef enum model_block { MODEL_BLOCK_ANY, MODEL_BLOCK_ATTENTION, MODEL_BLOCK_QKV, MODEL_BLOCK_FFN } model_block;

typedef struct model_role_info {
    const char *name;     /* "token_embd.weight"; per layer without the "blk.N." prefix: "attn_q.weight" */
    bool per_layer;
    model_dim ne0, ne1;    /* shape in GGUF order (ne0: a matrix's input width); ne1 NONE for a vector */
    bool norm;            /* a normalization's gains */
    const char *what;     /* a few words: "attention query projection" */
    model_dim ne2;        /* the experts' axis of a 3-D tensor; NONE otherwise */
    model_ffn_form form;
    bool expert_rows;     /* one row per expert (ne1 = expert_count): the experts' biases */
    model_attn_form attn_form;
    bool per_layer_input;  /* a role of Gemma 4's per-layer inputs: in a file with embedding_length_per_layer_input
                            * > 0 only */
    model_block block;     /* the block it belongs to, where a layer may lack that block (model_arch.blocks_by_width) */
    const char *bare;      /* the name without its suffix, where a converter writes it so (Falcon-H1's ffn_norm:
                            * model_arch.ffn_norm_bare); NULL: none */
} model_role_info;

GGUFSCOPE_API const model_role_info *model_role_info_of(model_role r);
/* The role a tensor name plays ("blk.3.attn_q.weight" -> MODEL_ROLE_ATTN_Q, *layer 3; "output.weight" ->
 * MODEL_ROLE_OUTPUT, *layer -1); MODEL_ROLE_COUNT when no architecture here has it. */
GGUFSCOPE_API model_role model_role_of_name(const char *name, int64_t *layer);

/* The most experts llama.cpp loads (LLAMA_MAX_EXPERTS, src/llama-hparams.h): a file with more is refused. */
enum { MODEL_EXPERTS_MAX = 1024 };

typedef enum model_need { MODEL_NEED_ABSENT = 0, MODEL_NEED_OPTIONAL, MODEL_NEED_REQUIRED } model_need;
/* The FFN's gated activation: SiLU(gate) * up, tanh-GELU(gate) * up, or gpt-oss's clamped form
 * (gate' = min(gate, 7), up' = clamp(up, -7, 7), gate' * sigmoid(1.702 gate') * (up' + 1): ggml_swiglu_oai); or, in a
 * block without a gate, relu(up)^2 (Nemotron-H: llama.cpp's LLM_FFN_RELU_SQR), or xIELU(up) with each layer's
 * parameters (Apertus: the global keys xielu.alpha_n, .alpha_p, .beta, .eps; kernels/act_xielu.h). */
typedef enum model_act {
    MODEL_ACT_SILU, MODEL_ACT_GELU_TANH, MODEL_ACT_SWIGLU_OAI, MODEL_ACT_RELU_SQR, MODEL_ACT_XIELU
} model_act;

/* How a mixture of experts weighs the experts its router picks (llama.cpp's expert_gating_func):
 * SOFTMAX: softmax over all the router's logits, the top k of those probabilities;
 * SOFTMAX_WEIGHT: the top k logits, then a softmax over those k (gpt-oss);
 * SIGMOID: each logit's sigmoid, the top k of those (plus the selection bias where the file has one), their
 *   sigmoids as weights (glm4moe, DeepSeek-V3). */
typedef enum model_moe_gating { MODEL_MOE_SOFTMAX, MODEL_MOE_SOFTMAX_WEIGHT, MODEL_MOE_SIGMOID } model_moe_gating;

/* Routing keys a family's llama.cpp loader reads (glm4moe all of them, MiniMax-M2 the gating function):
 * expert_gating_func (moe_gating when absent or 0), expert_weights_norm (renormalise), expert_weights_scale (the
 * chosen weights' factor), expert_shared_count (shared experts of expert_feed_forward_length each, ungated),
 * leading_dense_block_count (that many dense layers first), interleave_moe_layer_step (required: every that
 * many-th layer has experts; ERNIE 4.5's loader makes experts for every layer past the dense ones, so 1 is the step
 * it runs), SHARED_WIDTH: expert_shared_feed_forward_length is one shared expert's width in place of
 * expert_feed_forward_length (bailingmoe2). (nextn_predict_layers and expert_group_count its loader reads for every
 * family.) */
typedef enum model_moe_key {
    MODEL_MOE_KEY_GATING = 1, MODEL_MOE_KEY_NORM = 2, MODEL_MOE_KEY_SCALE = 4, MODEL_MOE_KEY_SHARED = 8,
    MODEL_MOE_KEY_DENSE_LEAD = 16, MODEL_MOE_KEY_STEP = 32, MODEL_MOE_KEY_SHARED_WIDTH = 64,
    MODEL_MOE_KEY_GATING_REQUIRED = 128 /* with GATING: the loader requires expert_gating_func (lfm2moe) */
} model_moe_key;

/* Rotary scaling (rope.scaling.type): none, linear (positions times freq_scale), or YaRN (per frequency a blend of
 * the interpolated and the original angle, and a magnitude correction). */
typedef enum model_rope_scaling { MODEL_ROPE_SCALING_NONE, MODEL_ROPE_SCALING_LINEAR, MODEL_ROPE_SCALING_YARN }
    model_rope_scaling;

/* The rotary embedding of sliding-window layers (llama.cpp's loaders and graphs):
 * OWN_BASE: rope.freq_base_swa (default 10000) with no scaling (gemma3);
 * GLOBAL: the global rope, base and scaling alike, with rope.freq_base_swa's base where the file has one (gemma2,
 *   gpt-oss);
 * UNSCALED: the global base with no scaling of any kind, YaRN's magnitude included; rope.freq_base_swa is read by
 *   llama.cpp's loader but its graph rotates with the global base (olmo2's Olmo 3 files);
 * SAME: the global rope exactly, base and scaling; rope.freq_base_swa is read by the loader, its graph does not use
 *   it (cohere2). */
typedef enum model_swa_rope { MODEL_SWA_ROPE_OWN_BASE, MODEL_SWA_ROPE_GLOBAL, MODEL_SWA_ROPE_UNSCALED, MODEL_SWA_ROPE_SAME }
    model_swa_rope;

typedef struct model_arch {
    const char *name;            /* general.architecture */
    const char *families;        /* the models that ship as it, for messages */
    uint8_t need[MODEL_ROLE_COUNT]; /* model_need of each role */
    bool rope_neox;              /* NEOX rotary (pairs i, i + n_rot/2) rather than NORM (2i, 2i + 1) */
    model_act act;                /* the FFN's gate activation: act(x Wgate) * (x Wup) */
    bool embd_scale_sqrt;        /* token embeddings scaled by sqrt(embedding_length) */
    /* Sliding-window attention, when attention.sliding_window > 0: layer il uses the window when
     * il % period < period - 1 (attention.sliding_window_pattern overrides the period, or lists the
     * layers), with the rope swa_rope says. */
    uint32_t swa_period;         /* 0: the architecture has no sliding window */
    bool final_softcap;          /* reads final_logit_softcapping: logits = c * tanh(logits / c) */
    float final_softcap_default; /* its value when the key is absent (0: none) */
    /* > 0: attention scores are soft-capped, s = c * tanh(s / c), c = attn_logit_softcapping or this (gemma2) */
    float attn_softcap_default;
    /* > 0: ALiBi with this max_bias, fixed by the loader (BLOOM's 8: llama.cpp's bloom loader reads no key) */
    float alibi_max_bias;
    /* the loader reads attention.max_alibi_bias (ALiBi where it is > 0: MPT's) */
    bool alibi_key;
    /* how the loader reads attention.clamp_kqv (q, k and v clamped to +-it after their products and biases where it
     * is > 0): not at all (ABSENT), where present (OPTIONAL: MPT's, OLMo's), or as a key it requires (DBRX's) */
    model_need clamp_kqv_key;
    /* DeciLM's (Llama-3.1-Nemotron 51B, Llama-3.3-Nemotron-Super-49B, -Ultra-253B: llama.cpp's deci): head_count,
     * head_count_kv and feed_forward_length list each layer's; a layer of 0 heads has no attention block, one of
     * heads but 0 key/value heads a "linear attention" (attn_output of its attn_norm alone), one of width 0 no
     * feed-forward block (model_hparams_layer_has_attention / _has_ffn) */
    bool blocks_by_width;
    /* OLMo's (llama.cpp's olmo): its LayerNorms have neither gains nor bias (attn_norm, ffn_norm and the final norm
     * are in no file: ggml_norm alone) */
    bool norms_without_gains;
    /* where not NULL: why llama.cpp aborts building the graph of a file of this architecture that has a tensor of role
     * llama_aborts_role in its layers (gguf-verify warns; gguf-run runs it) */
    const char *llama_aborts_why;
    model_role llama_aborts_role;
    /* BLOOM's token_embd_norm: a LayerNorm (with token_embd_norm.bias) of the embeddings before the first layer, not
     * the final norm LFM2's converter names so */
    bool embd_norm;
    uint32_t swa_window_default; /* attention.sliding_window when the key is absent (0: no window) */
    model_swa_rope swa_rope;     /* the sliding-window layers' rope */
    /* q.k is scaled by 1/sqrt(key_length), except in a model of this many layers, which scales by
     * 1/sqrt(embedding_length / head_count) (gemma 3 27B: gemma_pytorch's query_pre_attn_scalar). 0: none. */
    uint32_t attn_scale_embd_layers;
    bool quantize;               /* gguf-quantize knows llama-quantize's rules for it */
    /* llama-quantize's rules that name LLM_ARCH_FALCON (src/llama-quant.cpp): the output (or tied embedding) in Q8_0,
     * Q4_K_M's ffn_down in Q6_K in the first sixteenth of the layers, Q5_K in use_more_bits' layers, Q4_K in the others,
     * attn_output left to the file type */
    bool quantize_falcon_rules;
    const char *norm_gains;      /* what the family's trained norm gains look like, for the audit, or NULL */
    /* Mixture of experts (files with expert_count > 0): softmax over the router's logits, the top
     * expert_used_count experts, their probabilities renormalised to sum 1 when moe_renormalise (llama.cpp's
     * build_moe_ffn norm_w); without expert_feed_forward_length an expert is feed_forward_length wide, or that
     * divided by expert_used_count when moe_ff_split. */
    bool moe, moe_renormalise, moe_ff_split;
    model_moe_gating moe_gating;
    /* The routing keys its llama.cpp loader reads from the file (model_moe_key bits; the entry's fields where a key
     * is absent or not read). */
    uint8_t moe_keys;
    /* the role whose tensor is the norm before the feed-forward block, where the converter names that norm otherwise
     * (gpt-oss's post_attention_norm, which llama.cpp applies to the residual stream, not to the attention's output;
     * DBRX's attn_output_norm); 0: ffn_norm itself */
    model_role ffn_norm_from;
    bool qk_norm_full;           /* q/k norms over the whole q and k rows, not per head (olmo2) */
    bool gate_up_fused;          /* ffn_up holds the gate's rows, then the up rows (phi3) */
    bool no_gqa;                 /* its loader sizes attn_k and attn_v as attn_q: head_count_kv must be head_count */
    /* Multipliers read from the file (granite): embedding_scale on the embeddings, residual_scale on each block's
     * output before its residual add, attention.scale in place of 1/sqrt(key_length), logits / logit_scale. */
    bool multipliers;
    /* Latent attention (llama.cpp's deepseek2): q_lora_rank, kv_lora_rank, key_length_mla and value_length_mla read,
     * the roles of the file's form required (model_attn_form), values shorter than keys */
    bool mla;
    /* rope.dimension_sections read (required, or where mrope_optional the sections apply when the file has them with
     * the first two above 0: llama.cpp's use_mrope) */
    model_mrope mrope;
    bool mrope_optional;
    /* > 0: layer il attends without rotary positions (NoPE) when (il + 1) % no_rope_period == 0 (SmolLM3's every
     * fourth layer: llama.cpp's n_no_rope_layer_step, fixed by its loader) */
    uint32_t no_rope_period;
    /* YaRN keys its loader reads (model_yarn_key bits; llama.cpp's context defaults otherwise: betas 32 and 1) */
    uint8_t yarn_keys;
    /* reads attention.temperature_scale: q scaled per position by log(floor(pos / n_ctx_orig) + 1) * it + 1
     * (Llama 4's and Ministral 3's attention temperature) */
    bool attn_temperature;
    /* the sliding window only in files of this many layers (EXAONE 4's loader: its 32B's 64; 0: any) */
    uint32_t swa_n_layer;
    /* where the sliding window is on, its layers alone rotate: the others attend without positions (EXAONE 4) */
    bool rope_swa_only;
    /* Llama 4's (llama.cpp's llama4 loader and graph, build_moe_ffn's weight_before_ffn):
     * moe_weight_before: a chosen expert's weight scales its input, not its output;
     * moe_step_layers: interleave_moe_layer_step picks the layers with experts, (il + 1) % step == 0;
     * shexp_expert_wide: each layer with experts has one ungated shared expert as wide as an expert (no count key);
     * swa_chunked: the sliding-window layers attend within chunks of swa_window_default positions (a query at p sees
     *   p - p % window .. p: LLAMA_SWA_TYPE_CHUNKED) whatever attention.sliding_window says, unless it says 0, which
     *   is refused (llama.cpp's loader turns the chunks and the temperature off, and its graph then stops on an
     *   assertion when the last layer asks for the temperature);
     * qk_l2_norm: q and k RMS-normed without gains after their rotation on the layers that rotate, unless the file
     *   has qk_l2_norm_off_experts experts (Maverick's 128: use_kq_norm);
     * attn_temp_fixed_*: with the chunks on, the attention temperature of the layers without positions, from these
     *   constants rather than a key (scale, floor, offset: log(floor((pos + offset) / floor) + 1) * scale + 1). */
    bool moe_weight_before, moe_step_layers, shexp_expert_wide, swa_chunked, qk_l2_norm;
    /* Cohere's (llama.cpp's command-r and cohere2): norm_layer: every norm a LayerNorm (the mean taken out; no bias),
     *   its epsilon attention.layer_norm_epsilon; parallel_ffn: the feed-forward block reads the attention's input norm
     *   and the layer's output is (ffn + x) + attention; logit_scale_mul: logits times the file's logit_scale;
     *   qk_norm_from_layers: files of that many layers or more (Command R+) norm each head of q and k with gains of its
     *   own (attn_q_norm (key_length, head_count), attn_k_norm (key_length, head_count_kv): required there, absent
     *   in smaller files, as its loader makes them) */
    bool norm_layer, parallel_ffn, logit_scale_mul;
    /* phi2's and falcon's parallel layer: the two blocks' outputs summed first, then the residual: (attention + ffn)
     * + x */
    bool parallel_blocks_summed;
    /* GPT-NeoX's: the file's use_parallel_residual says whether its layers are parallel (Cohere's order of adds, the
     * feed-forward block on its own norm of x: ffn_norm) or one block after the other (model_hparams.parallel) */
    bool parallel_residual_key;
    uint32_t qk_norm_from_layers;
    uint32_t qk_l2_norm_off_experts;
    float attn_temp_fixed_scale, attn_temp_fixed_offset;
    uint32_t attn_temp_fixed_floor;
    /* Qwen3.5's (llama.cpp's qwen35 and delta-net-base): delta_net: the layers but every full_attention_interval-th
     *   (default 4; attention.recurrent_layers lists them where the file has it) are gated delta nets, whose roles are
     *   need_recurrent's (need: the attention layers'), with the ssm.* keys read;
     * attn_out_gated: attn_q's rows hold each head's query then its gate, the attention's output times sigmoid(gate);
     * mrope_partial: the rotary sections cover rope.dimension_count, a part of each head (no whole-head rotation);
     * dn_heads_grouped: value head h reads key head h / (value heads / key heads) (Qwen3-Next repeats each key head
     *   for its group; Qwen3.5's graph tiles them: h mod key heads). */
    bool delta_net, attn_out_gated, mrope_partial, dn_heads_grouped;
    /* LFM2's (llama.cpp's lfm2): shortconv: the layers whose attention.head_count_kv entry is 0 are short convolutions
     *   (y = C * conv(B * x) over shortconv.l_cache taps, kept across calls), their roles need_recurrent's, the others
     *   attention, within attention.sliding_window where the file has one; final_norm_embd_named: the final norm is
     *   the file's token_embd_norm */
    bool shortconv, final_norm_embd_named;
    /* Hunyuan's (llama.cpp's hunyuan-dense): qk_norm_after_rope: the per-head q/k RMSNorms (with gains) come after the
     *   rotation; rope_base_alpha: rope.scaling.alpha > 0 scales the base NTK-wise, base * alpha^(d / (d - 2)) for a
     *   head of d; expert_count_one_dense: an expert_count of 1 (or 0) is a dense model, as its loader makes it */
    bool qk_norm_after_rope, rope_base_alpha, expert_count_one_dense;
    uint8_t need_recurrent[MODEL_ROLE_COUNT];
    /* Gemma 4's (llama.cpp's gemma4): rope_freqs_full_only: rope_freqs divides the full-attention layers' frequencies
     *   alone (its "proportional" rotation: the pairs past the rotated part get 1e30, so they stay put); v_from_k: where
     *   a layer has no attn_v its values are the key projection's output (attention_k_eq_v), before k's norm;
     *   v_norm: each head of v RMS-normed without gains; attn_scale_one: q.k unscaled (the q norm does it) */
    bool rope_freqs_full_only, v_from_k, v_norm, attn_scale_one;
    /* Gemma 4 26B-A4B's layers with experts keep their dense block beside them (ffn_norm, the block, post_ffw_norm_1;
     * the experts on pre_ffw_norm_2's rows, post_ffw_norm_2; the two added, then post_ffw_norm), and route on the
     * layer's input RMS-normed without gains, times 1/sqrt(n_embd) and ffn_gate_inp.scale */
    bool moe_dense_beside;
    /* Nemotron-H's (llama.cpp's nemotron_h): single_block: each layer is one block after its attn_norm, a mixer or a
     *   feed-forward block (need_ffn's roles: the layers whose feed_forward_length entry is above 0), never both;
     * mamba2: the layers whose attention.head_count_kv and feed_forward_length entries are both 0 are Mamba-2 mixers
     *   (need_recurrent's roles; the ssm.* keys read), the other mixers attention;
     * eps_either_key: attention.layer_norm_rms_epsilon, else attention.layer_norm_epsilon (its loader's fallback) */
    bool single_block, mamba2, eps_either_key;
    /* Granite 4.0-H's (llama.cpp's granitehybrid): rope_finetuned_switch: rope.scaling.finetuned false (the hybrids')
     *   turns rotation off on every layer, true (or absent) leaves it on; logit_scale_optional: the multipliers'
     *   logit_scale may be absent (no scaling), where granite's loader requires it; ssm_inner_embd_ratio: its loader
     *   asserts ssm.inner_size = this x embedding_length (0: any) */
    bool rope_finetuned_switch, logit_scale_optional;
    uint8_t ssm_inner_embd_ratio;
    /* its llama.cpp graph names the feed-forward block's output (before the residual add) l_out, and a layer without
     * one nothing (nemotron_h's build_ffn_layer): what a trace of llama.cpp's l_out-N is held to */
    bool l_out_is_ffn_out;
    uint8_t need_ffn[MODEL_ROLE_COUNT];
    /* Falcon-H1's (llama.cpp's falcon-h1): mixer_beside: every layer runs its attention and a Mamba-2 mixer side by
     *   side on attn_norm(x) and adds both to x (the mixer's roles in need, beside the attention's; every layer keeps
     *   cache rows and a recurrent state); ffn_norm_bare: its feed-forward norm is blk.N.ffn_norm, without .weight (the
     *   converter maps pre_ff_layernorm.weight whole, to a name without a suffix; its loader asks for that name) */
    bool mixer_beside, ffn_norm_bare;
    /* Mamba-1's (llama.cpp's mamba): every layer's mixer is Mamba-1's (x and z from ssm_in; x convolved; dt, B, C from
     *   ssm_x, dt widened by ssm_dt; a state per channel of ssm.state_size values, each decayed at its own rate) */
    bool mamba1;
    /* the state-space models' (llama.cpp's mamba, mamba2): no layer attends; the converter writes attention.head_count
     * 0 ("unused, but seemingly required when loading"), which the loaders accept */
    bool attention_free;
    /* Jamba's (llama.cpp's jamba): a layer has experts where the file has its router (ffn_gate_inp, loaded where
     * present), a dense block elsewhere: the converter writes no key for which layers (expert_layer_period) */
    bool moe_where_router;
    /* Hunyuan-A13B's (llama.cpp's hunyuan-moe): its loader sizes the experts by feed_forward_length, whatever
     * expert_feed_forward_length says (its converter writes the two equal) */
    bool moe_experts_ff_wide;
    /* MiniCPM's (llama.cpp's minicpm, granite's graph): granite's multipliers where the file has them, else its loader's
     *   defaults (embedding x12, residual x1.4 / sqrt(block_count), logits / (256 / embedding_length)); attention.scale
     *   not read */
    bool multipliers_minicpm;
} model_arch;

/* The name architecture a gives role r's tensor (without the "blk.N." prefix): the role's own, or its bare name where
 * a's converter writes that (model_arch.ffn_norm_bare); a NULL a: the role's own. */
GGUFSCOPE_API const char *model_role_name(const model_arch *a, model_role r);

/* The YaRN keys a family's loader reads: rope.scaling.yarn_beta_fast / _slow, rope.scaling.yarn_log_multiplier as
 * written, or divided by 0.1 (DeepSeek's converter writes 0.1 mscale_all_dim and llama.cpp's deepseek2 loader divides it
 * out). MSCALE_OWN: the context's magnitude ratio takes the multiplier as its own mscale too (llama.cpp's context
 * special-cases deepseek2 by name; mistral4, which shares its loader, keeps mscale 1). */
enum { MODEL_YARN_KEY_BETAS = 1, MODEL_YARN_KEY_LOG_MUL = 2, MODEL_YARN_KEY_LOG_MUL_TENTHS = 4, MODEL_YARN_KEY_MSCALE_OWN = 8 };

/* The entry for an architecture name (len bytes, not NUL-terminated), or NULL. */
GGUFSCOPE_API const model_arch *model_arch_find(const char *name, size_t len);
GGUFSCOPE_API size_t model_arch_count(void);
GGUFSCOPE_API const model_arch *model_arch_at(size_t i);
/* "llama, qwen2, qwen3, gemma3": for messages. */
GGUFSCOPE_API const char *model_arch_names(void);

/* Hyperparameters from "<arch>.*" metadata with llama.cpp's defaults where a
 * key is absent: the one reader engine/ and audit/ share. */
typedef struct model_hparams {
    const model_arch *arch;       /* NULL: no general.architecture, or one not in the table */
    char arch_name[64];          /* general.architecture as stored (cut to 63 bytes), "" when absent */
    /* 0 where unknown (absent without a default, or unreadable: then the status says why) */
    int64_t n_embd, n_layer, n_head, n_head_kv, head_dim_k, head_dim_v, n_ff, n_ctx_train, n_rot;
    int64_t n_vocab;             /* entries of tokenizer.ggml.tokens, 0 without a vocabulary */
    int64_t vocab_size;          /* <arch>.vocab_size, 0 when absent */
    int64_t n_expert, n_expert_used; /* expert_count, expert_used_count: 0 when absent (a dense model) */
    int64_t n_ff_exp, n_ff_shexp;    /* one expert's and the shared expert's widths (0 in a dense model) */
    /* How the router weighs its choice (model_arch's moe_* fields, or the file's keys its moe_keys name):
     * moe_scale multiplies the chosen experts' weights (1: none) */
    model_moe_gating moe_gating;
    bool moe_renormalise;
    float moe_scale;
    int64_t moe_gating_func;     /* expert_gating_func as the file says it (0: absent) */
    int64_t n_expert_groups;     /* expert_group_count (0: absent) */
    int64_t n_moe_layer_step;    /* interleave_moe_layer_step where the family reads it (-1: absent), else 0 */
    int64_t n_layer_dense_lead;  /* leading_dense_block_count: the first layers have a dense feed-forward block */
    int64_t n_layer_nextn;       /* nextn_predict_layers: the last blocks (of n_layer) predict further tokens, and
                                  * generation does not run them */
    int64_t file_type;           /* general.file_type, -1 when absent */
    float eps;                   /* RMSNorm epsilon */
    float rope_base, rope_freq_scale;         /* global (full-attention) layers; scale = 1 / linear factor */
    model_rope_scaling rope_scaling;
    /* YaRN as llama.cpp's context sets it up (src/llama-context.cpp): ext_factor 1 with YaRN, else 0; attn_factor
     * its magnitude correction (rope.scaling.attn_factor, times get_mscale(factor) / (1 + 0.1 ln factor) with
     * YaRN); beta_fast/slow 32 and 1; n_ctx_orig rope.scaling.original_context_length, or context_length */
    float yarn_ext_factor, yarn_attn_factor, yarn_beta_fast, yarn_beta_slow;
    int64_t n_ctx_orig_yarn;
    float rope_base_swa, rope_freq_scale_swa; /* sliding-window layers */
    bool yarn_swa_off;                        /* sliding-window layers rotate without YaRN (ext 0, magnitude 1) */
    int64_t swa_window;          /* sliding-window layers mask keys this many positions back or more (0: none) */
    uint32_t swa_period;         /* see model_arch (0 with swa_layers: the layers are listed) */
    const gguf_value *swa_layers; /* attention.sliding_window_pattern as an array of bools, or NULL */
    float final_softcap;         /* 0: none */
    float attn_softcap;          /* attention scores' soft-cap; 0: none */
    float alibi_max_bias;        /* ALiBi's max_bias (kern_alibi_slope); 0: none */
    float clamp_kqv;             /* q, k and v clamped to [-it, it] (attention.clamp_kqv); 0: none */
    const gguf_value *heads_layers; /* attention.head_count per layer (model_arch.blocks_by_width), or NULL */
    float attn_scale;            /* multiplies q.k */
    float embd_scale;            /* multiplies the token embeddings (1: none) */
    float residual_scale;        /* multiplies each block's output before the residual add (1: none) */
    float logit_scale;           /* multiplies the logits (1: none): granite's 1 / logit_scale */
    /* latent attention (model_arch.mla): the compressions' ranks (q 0: none), a head's key and value length as the
     * attention computes them after decompression (key_length_mla, value_length_mla: 0 when absent, in which case
     * key_length and value_length are those and the keys' decompression is whole) */
    int64_t n_lora_q, n_lora_kv, head_dim_k_mla, head_dim_v_mla;
    int64_t n_group_used;        /* expert_group_used_count: groups of experts a token chooses from (0: absent) */
    float yarn_log_mul;          /* rope.scaling.yarn_log_multiplier (DeepSeek's: / 0.1, its mscale_all_dim; 0: absent) */
    /* the attention temperature: log(floor((pos + offset) / floor) + 1) * scale + 1 on each query (scale 0: none), on
     * the layers without positions alone where nope_only (Llama 4's); floor is Ministral 3's original context */
    float attn_temp_scale, attn_temp_floor, attn_temp_offset;
    bool attn_temp_nope_only;
    bool swa_chunked;            /* the window's layers attend within chunks of it (model_arch.swa_chunked) */
    bool qk_l2_norm;             /* q and k RMS-normed without gains after rotation (model_arch.qk_l2_norm) */
    model_mrope mrope;           /* the file's multi-axis rotary form (model_arch.mrope), NONE when it has none */
    int64_t rope_sections[4];    /* rope.dimension_sections: pairs of each head per time, height, width, extra axis */
    int64_t n_deepstack_layers;  /* Qwen3-VL: layers that add an image's deeper features (none for text) */
    /* gated delta net (model_arch.delta_net): ssm.conv_kernel, ssm.inner_size, ssm.state_size, ssm.time_step_rank (value
     * heads), ssm.group_count (key heads); full_attention_interval; attention.recurrent_layers as an array of bools, or
     * NULL. Mamba-2 (model_arch.mamba2) reads the same keys: ssm_n_v_heads its heads, ssm_n_k_heads its groups of B and
     * C. */
    int64_t ssm_d_conv, ssm_d_inner, ssm_d_state, ssm_n_v_heads, ssm_n_k_heads, full_attn_interval;
    /* Mamba-1 (model_arch.mamba1): ssm.time_step_rank is dt's rank (its heads, ssm_n_v_heads, are its channels, one
     * group: ssm_n_k_heads 0 as no key says otherwise); ssm.dt_b_c_rms: dt, B and C RMS-normed without gains
     * (Falcon-Mamba) */
    int64_t ssm_dt_rank;
    bool ssm_dt_b_c_rms;
    const gguf_value *recurrent_layers;
    const gguf_file *file; /* the file read (model_arch.moe_where_router asks it which layers have a router) */
    /* a short convolution's taps (model_arch.shortconv: shortconv.l_cache), and attention.head_count_kv where it is an
     * array of one count per layer (0: a recurrent layer; n_head_kv is then the attention layers' count), or NULL */
    int64_t shortconv_l_cache;
    const gguf_value *kv_heads_layers;
    /* a sliding-window layer's key and value lengths and rotated width (attention.key_length_swa, value_length_swa,
     * rope.dimension_count_swa, read for every architecture as llama.cpp's loader does; the full layers' where
     * absent); attention.shared_kv_layers (the last layers reuse earlier layers' caches: Gemma 4 E2B / E4B) and
     * embedding_length_per_layer_input (per-layer embeddings), 0 where absent */
    int64_t head_dim_k_swa, head_dim_v_swa, n_rot_swa, n_kv_shared, n_embd_per_layer;
    /* xIELU's alpha_n, alpha_p, beta and eps (MODEL_ACT_XIELU: xielu.alpha_n ...), each one value for every layer or
     * an array of one per layer (xielu_layers[k], else NULL) as the file has them; model_hparams_layer gives a
     * layer's */
    float xielu[4];
    const gguf_value *xielu_layers[4];
    /* Nemotron 3 Super's experts' latent width (moe_latent_size, read where model_arch.single_block; 0: none) */
    int64_t moe_latent_size;
    bool rope_off; /* no layer rotates: rope.scaling.finetuned false where model_arch.rope_finetuned_switch */
    /* the attention and the feed-forward block side by side: model_arch.parallel_ffn, or the file's
     * use_parallel_residual where model_arch.parallel_residual_key */
    bool parallel;
    /* feed_forward_length where it is an array of one width per layer (n_ff is then the widest), or NULL; the first
     * layer that reuses an earlier layer's keys and values (n_layer - n_kv_shared) */
    const gguf_value *ff_layers;
    int64_t n_layer_kv;
    /* Where values came from, for reports. */
    bool eps_defaulted, rope_base_defaulted, head_dim_from_key_length, n_rot_from_key;
} model_hparams;

typedef enum model_status {
    MODEL_OK = 0,
    MODEL_E_MALFORMED,   /* a key missing, of the wrong type or out of range; heads that cannot be shaped; what
                          * llama.cpp's loader refuses: the file's fault */
    MODEL_E_UNSUPPORTED, /* an architecture not in the table, or a feature of it not run yet */
} model_status;

typedef struct model_error {
    model_status code;
    uint64_t offset;      /* where the key starts in the file (0: absent, left to its default) */
    char subject[GGUF_ERROR_SUBJECT_SIZE];    /* the key */
    char message[GGUF_ERROR_MESSAGE_SIZE];
} model_error;

/* Reads every hyperparameter it can, then checks them as llama.cpp's loader does (and for values after which
 * every output is NaN or a constant); returns MODEL_OK or the first problem with err filled, the fields read
 * before and after it still set. An architecture not in the table is MODEL_E_UNSUPPORTED, its generic keys
 * still read under its name (hp->arch NULL): the audit checks shapes with them. */
GGUFSCOPE_API model_status model_hparams_read(const gguf_file *f, model_hparams *hp, model_error *err);
/* Whether layer il uses the sliding window. */
GGUFSCOPE_API bool model_hparams_layer_is_swa(const model_hparams *hp, int64_t il);
/* Whether layer il rotates q and k (false on an architecture's NoPE layers: model_arch.no_rope_period). */
GGUFSCOPE_API bool model_hparams_layer_rotates(const model_hparams *hp, int64_t il);
/* Whether layer il is a recurrent one (a gated delta net's, a short convolution's, a Mamba-2 mixer's); il < 0: whether
 * any layer may be. */
GGUFSCOPE_API bool model_hparams_layer_is_recurrent(const model_hparams *hp, int64_t il);
/* Whether layer il keeps a recurrent state: a recurrent layer, or one with a Mamba-2 mixer beside its attention
 * (model_arch.mixer_beside); il < 0: whether any layer may. */
GGUFSCOPE_API bool model_hparams_layer_has_state(const model_hparams *hp, int64_t il);
/* Whether layer il has key/value heads: attention.head_count_kv's entry for it above 0 (one count: whether it is). */
GGUFSCOPE_API bool model_hparams_layer_has_kv_heads(const model_hparams *hp, int64_t il);
/* Whether layer il has an attention block (or a single block's mixer) and a feed-forward block: both in most
 * models; one of the two in Nemotron-H's (model_arch.single_block); DeciLM's as its counts say (blocks_by_width: heads
 * for the attention, a width for the feed-forward block). il < 0: whether any layer has one. */
GGUFSCOPE_API bool model_hparams_layer_has_attention(const model_hparams *hp, int64_t il);
GGUFSCOPE_API bool model_hparams_layer_has_ffn(const model_hparams *hp, int64_t il);
/* Whether layer il is a feed-forward block alone (model_arch.single_block: its feed_forward_length entry above 0). */
GGUFSCOPE_API bool model_hparams_layer_is_ffn_only(const model_hparams *hp, int64_t il);
/* The layer whose keys and values layer il attends to: il itself, or for Gemma 4's last attention.shared_kv_layers
 * layers the last of the layers before them with a cache of the same kind (llama.cpp's layer_reuse_cb: the one before
 * the last for a sliding layer, the last for a full one). */
GGUFSCOPE_API int64_t model_hparams_layer_kv_source(const model_hparams *hp, int64_t il);
/* Whether layer il has experts (a mixture's, past its leading dense layers and on its interleave step); il < 0: whether
 * any layer does. */
GGUFSCOPE_API bool model_hparams_layer_has_experts(const model_hparams *hp, int64_t il);
/* The value of a shape dimension (0: unknown). */
GGUFSCOPE_API int64_t model_hparams_dim(const model_hparams *hp, model_dim d);
/* hp as layer il sees it: its key/value heads and feed-forward width (the entries of attention.head_count_kv and
 * feed_forward_length where they list layers), and on a sliding-window layer the
 * window's head lengths and rotated width (model_hparams.head_dim_k_swa ..); hp itself for il < 0. */
GGUFSCOPE_API void model_hparams_layer(const model_hparams *hp, int64_t il, model_hparams *out);
/* The shape role ri's tensor has under these hyperparameters, GGUF order (1 for a dimension the role does not have);
 * false when one of them is unknown (0). */
GGUFSCOPE_API bool model_role_shape(const model_hparams *hp, const model_role_info *ri, int64_t ne[3]);
/* The same for a per-layer role's tensor in layer il (model_hparams_layer's view; il < 0: model_role_shape's). */
GGUFSCOPE_API bool model_role_shape_at(const model_hparams *hp, const model_role_info *ri, int64_t il, int64_t ne[3]);
/* What a dimension is, in words ("embedding_length"). */
GGUFSCOPE_API const char *model_dim_name(model_dim d);
/* How much a file of these hyperparameters needs role r: its architecture's need, ABSENT for the dense feed-forward
 * roles when the file has experts and for the experts' roles when it has none (MODEL_NEED_ABSENT without an
 * architecture). */
GGUFSCOPE_API model_need model_role_need(const model_hparams *hp, model_role r);
/* The same for layer il: a mixture of experts' leading dense layers (n_layer_dense_lead) need the dense roles in
 * place of the experts'. */
GGUFSCOPE_API model_need model_role_need_at(const model_hparams *hp, model_role r, int64_t il);

/* ---- memory: what llama.cpp allocates to run a file --------------------- */

/* The settings that decide it, with llama.cpp's option names and defaults (common/arg.cpp). */
typedef struct model_memory_params {
    int64_t n_ctx;            /* -c: 0 is the model's context_length */
    int64_t n_batch;          /* -b: 2048 */
    int64_t n_ubatch;         /* -ub: 512 */
    int64_t n_seq;            /* -np: 1 */
    uint32_t type_k, type_v;  /* -ctk / -ctv as GGUF type ids: F16 */
    int flash_attn;           /* -fa: -1 auto (on: the CPU backend supports it), 0 off, 1 on */
    bool no_repack;           /* --no-repack: no CPU_REPACK copies */
    bool no_mmap;             /* --no-mmap: weights read into an allocated buffer instead of mapped */
    bool cpu_avx2, cpu_avx512;/* the CPU llama.cpp's CPU backend runs on (model_memory_params_default: this one) */
} model_memory_params;

/* The defaults above, the CPU features those of the running machine. */
GGUFSCOPE_API model_memory_params model_memory_params_default(void);

/* The buffers llama.cpp's CPU build prints when it loads the file and makes a context ("CPU_Mapped model
 * buffer size", "CPU_REPACK model buffer size", "CPU KV buffer size", "CPU output buffer size", "CPU compute
 * buffer size"), each in bytes, and what decided them. */
typedef struct model_memory {
    uint64_t weights_mapped;    /* the file range the CPU's plain weights span (mmap), or their bytes (--no-mmap) */
    uint64_t weights_repacked;  /* the weights the CPU backend re-lays out for its kernels (a copy) */
    size_t n_repacked;          /* how many tensors */
    uint64_t weights_file;      /* all tensor data in the file */
    uint64_t kv_bytes;          /* K and V over all layers and streams */
    uint64_t kv_k, kv_v;
    int64_t kv_cells;           /* cells of a full-attention layer (n_ctx padded to 256) */
    int64_t kv_cells_swa;       /* cells of a sliding-window layer (0: none) */
    int64_t n_layer_full, n_layer_swa;
    /* the recurrent layers' states (llama_memory_recurrent's RS buffer: f32 rows, one per sequence): each layer's
     * convolution taps (state_conv values a row) and its scan state (state_scan values; 0 for a short convolution) */
    uint64_t recurrent;
    int64_t n_layer_recurrent, state_conv, state_scan;
    uint64_t output;            /* the logits buffer at context creation */
    uint64_t compute;           /* the graph's scratch for the worst-case batch */
    int64_t n_tokens;           /* that batch: min(n_ubatch, n_ctx) */
    bool flash_attn;
    int64_t n_ctx;              /* after padding */
    uint64_t total;             /* everything above that takes memory: mapped + repacked + KV + recurrent + output +
                                 * compute */
} model_memory;

/* Fills out for file f with hyperparameters hp. MODEL_E_UNSUPPORTED (err says why) for an architecture not in
 * the table or a cache type llama.cpp cannot hold. */
GGUFSCOPE_API model_status model_memory_estimate(const gguf_file *f, const model_hparams *hp,
                                                 const model_memory_params *p, model_memory *out, model_error *err);
/* The largest context (a multiple of 256, at most context_length) whose total fits in budget bytes, 0 when not
 * even 256 does. */
GGUFSCOPE_API int64_t model_memory_fit(const gguf_file *f, const model_hparams *hp, const model_memory_params *p,
                                       uint64_t budget);

#ifdef __cplusplus
}
#endif

#endif
