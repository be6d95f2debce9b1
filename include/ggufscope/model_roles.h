/*
 * model_roles.h — the tensor roles every architecture draws on, with the sizes their shapes are written in, and how a
 * tensor's name maps to its role. Part of model.h (which includes it): model_arch.h's entries say which roles each
 * architecture needs.
 */
#ifndef GGUFSCOPE_MODEL_ROLES_H
#define GGUFSCOPE_MODEL_ROLES_H

#include "gguf.h"

#include "export.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

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
    MODEL_DIM_QK_NORM_Q, /* q's norm: key_length (per head), or head_count x key_length (qk_norm_full), or 1 (one
                          * gain per head: q_norm_head_gain) */
    MODEL_DIM_QK_NORM_K, /* k's norm: key_length, or head_count_kv x key_length */
    MODEL_DIM_QK_NORM_ROWS_Q, MODEL_DIM_QK_NORM_ROWS_K, /* their rows: 1, or one per head (qk_norm_from_layers,
                                                         * q_norm_head_gain) */
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
    /* attn_gate's rows: the delta net's z (ssm.inner_size), or the attention output's gates where they are a product of
     * their own (model_arch.attn_gate_proj: head_count x value_length) */
    MODEL_DIM_GATE,
    /* ffn_up_shexp's rows: the shared expert's width, twice that where its gate and up are fused
     * (model_arch.shexp_gate_up_fused) */
    MODEL_DIM_FF_SHEXP_UP,
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
    /* the gated feed-forward block's gate bias (Jais: x Wgate + b as its up and down products have theirs) */
    MODEL_ROLE_FFN_GATE_BIAS,
    /* Grok-1's norm after the feed-forward block, under the name its converter gives it (rms_norm_3) */
    MODEL_ROLE_LAYER_OUT_NORM,
    /* BitNet's RMSNorms inside the blocks: of the attention's output before attn_output, of the gated activation
     * before ffn_down */
    MODEL_ROLE_ATTN_SUB_NORM, MODEL_ROLE_FFN_SUB_NORM,
    /* Arctic's norm of the layer's input before its experts (post_attention_layernorm in its checkpoints: the experts
     * read the layer's input, not the attention's residual) */
    MODEL_ROLE_FFN_NORM_EXPS,
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

/* Latent attention as a family's loader and graph have it. DEEPSEEK2 (llama.cpp's deepseek2): q_lora_rank (but in
 * the lite shapes it knows by depth), kv_lora_rank, key_length_mla and value_length_mla read; the decompression whole
 * or split per head as the keys say; the scores scaled with YaRN's magnitude squared. WHOLE (llama.cpp's minicpm3 and
 * plm): kv_lora_rank read, q_lora_rank where the family has the query's compression (attn_q_a required), the
 * decompression always whole (one key/value head per query head), the scores by 1/sqrt(key_length) alone. */
typedef enum model_mla { MODEL_MLA_NONE = 0, MODEL_MLA_DEEPSEEK2, MODEL_MLA_WHOLE } model_mla;

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
    const char *bare;      /* the name without its suffix, where a converter writes it so (Falcon-H1's ffn_norm, Hy3's
                            * exp_probs_b: model_arch.roles_bare); NULL: none */
} model_role_info;

GGUFSCOPE_API const model_role_info *model_role_info_of(model_role r);
/* The role a tensor name plays ("blk.3.attn_q.weight" -> MODEL_ROLE_ATTN_Q, *layer 3; "output.weight" ->
 * MODEL_ROLE_OUTPUT, *layer -1); MODEL_ROLE_COUNT when no architecture here has it. */
GGUFSCOPE_API model_role model_role_of_name(const char *name, int64_t *layer);

#ifdef __cplusplus
}
#endif

#endif
