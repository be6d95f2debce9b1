/*
 * The architectures as data: one entry per architecture saying which roles (model/roles.c) it needs and what its
 * forward pass does. The required/optional split, the rope mode, the activation and the defaults are those of
 * llama.cpp's src/models/<arch>.cpp and src/llama-arch.cpp.
 */
#include "model.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


enum { R = MODEL_NEED_REQUIRED, O = MODEL_NEED_OPTIONAL };

/* The roles every decoder here has: embeddings, final norm, and per layer a pre-norm attention block and the
 * norm before its feed-forward block; a dense one's feed-forward block is gated. */
#define TIED_GLOBAL_ROLES [MODEL_ROLE_TOKEN_EMBD] = R, [MODEL_ROLE_OUTPUT_NORM] = R
#define GLOBAL_ROLES TIED_GLOBAL_ROLES, [MODEL_ROLE_OUTPUT] = O
#define ATTENTION_ROLES                                                                                       \
    [MODEL_ROLE_ATTN_NORM] = R, [MODEL_ROLE_ATTN_Q] = R, [MODEL_ROLE_ATTN_K] = R, [MODEL_ROLE_ATTN_V] = R,      \
    [MODEL_ROLE_ATTN_OUT] = R, [MODEL_ROLE_FFN_NORM] = R
#define DENSE_FFN_ROLES [MODEL_ROLE_FFN_GATE] = R, [MODEL_ROLE_FFN_UP] = R, [MODEL_ROLE_FFN_DOWN] = R
#define DECODER_ROLES GLOBAL_ROLES, ATTENTION_ROLES
#define DENSE_DECODER_ROLES DECODER_ROLES, DENSE_FFN_ROLES

/* A file of the architecture with expert_count > 0 has these in place of ffn_gate/up/down (model_role_need). */
#define EXPERT_ROLES                                                                                          \
    [MODEL_ROLE_FFN_GATE_INP] = R, [MODEL_ROLE_FFN_GATE_EXPS] = R, [MODEL_ROLE_FFN_UP_EXPS] = R,               \
    [MODEL_ROLE_FFN_DOWN_EXPS] = R
#define SHARED_EXPERT_ROLES                                                                                   \
    [MODEL_ROLE_FFN_GATE_INP_SHEXP] = R, [MODEL_ROLE_FFN_GATE_SHEXP] = R, [MODEL_ROLE_FFN_UP_SHEXP] = R,       \
    [MODEL_ROLE_FFN_DOWN_SHEXP] = R

/* qwen2's, qwen3's and qwen3moe's layers, which the text decoders of their vision-language models keep */
#define QWEN2_LAYERS                                                                                          \
    .need = { DENSE_DECODER_ROLES, [MODEL_ROLE_ATTN_Q_BIAS] = R, [MODEL_ROLE_ATTN_K_BIAS] = R,                 \
              [MODEL_ROLE_ATTN_V_BIAS] = R },                                                                  \
    .rope_neox = true, .act = MODEL_ACT_SILU
#define QWEN3_LAYERS                                                                                          \
    .need = { DENSE_DECODER_ROLES, [MODEL_ROLE_ATTN_Q_NORM] = R, [MODEL_ROLE_ATTN_K_NORM] = R },               \
    .rope_neox = true, .act = MODEL_ACT_SILU
#define QWEN3MOE_LAYERS                                                                                       \
    .need = { DECODER_ROLES, EXPERT_ROLES, [MODEL_ROLE_ATTN_Q_NORM] = R, [MODEL_ROLE_ATTN_K_NORM] = R },        \
    .rope_neox = true, .act = MODEL_ACT_SILU, .moe = true, .moe_renormalise = true, .moe_ff_split = true

/* Qwen3.5's two kinds of layer (model_arch.delta_net): the attention layers' roles, the gated delta nets'; both have
 * the input norm and post_attention_norm (the feed-forward block's input) */
#define QWEN35_ATTENTION_ROLES                                                                                \
    GLOBAL_ROLES, [MODEL_ROLE_ATTN_NORM] = R, [MODEL_ROLE_ATTN_POST_NORM] = R, [MODEL_ROLE_ATTN_Q] = R,          \
    [MODEL_ROLE_ATTN_K] = R, [MODEL_ROLE_ATTN_V] = R, [MODEL_ROLE_ATTN_OUT] = R, [MODEL_ROLE_ATTN_Q_NORM] = R,    \
    [MODEL_ROLE_ATTN_K_NORM] = R
#define QWEN35_RECURRENT_ROLES                                                                                \
    [MODEL_ROLE_ATTN_NORM] = R, [MODEL_ROLE_ATTN_POST_NORM] = R, [MODEL_ROLE_ATTN_QKV] = R,                     \
    [MODEL_ROLE_ATTN_GATE] = R, [MODEL_ROLE_SSM_CONV1D] = R, [MODEL_ROLE_SSM_DT] = R, [MODEL_ROLE_SSM_A] = R,    \
    [MODEL_ROLE_SSM_BETA] = R, [MODEL_ROLE_SSM_ALPHA] = R, [MODEL_ROLE_SSM_NORM] = R, [MODEL_ROLE_SSM_OUT] = R
#define QWEN35_LAYERS                                                                                         \
    .rope_neox = true, .act = MODEL_ACT_SILU, .ffn_norm_is_post_attention = true, .mrope = MODEL_MROPE_INTERLEAVED, \
    .mrope_partial = true, .delta_net = true, .attn_out_gated = true, .quantize = true

/* Cohere's layers (command-r, cohere2): the output always the token embedding, LayerNorms, the attention and the
 * feed-forward block side by side, logits times logit_scale */
#define COHERE_LAYERS                                                                                         \
    .need = { TIED_GLOBAL_ROLES, [MODEL_ROLE_ATTN_NORM] = R, [MODEL_ROLE_ATTN_Q] = R, [MODEL_ROLE_ATTN_K] = R,  \
              [MODEL_ROLE_ATTN_V] = R, [MODEL_ROLE_ATTN_Q_BIAS] = O, [MODEL_ROLE_ATTN_K_BIAS] = O,             \
              [MODEL_ROLE_ATTN_V_BIAS] = O, [MODEL_ROLE_ATTN_OUT] = R, DENSE_FFN_ROLES },                       \
    .act = MODEL_ACT_SILU, .norm_layer = true, .parallel_ffn = true, .logit_scale_mul = true

/* deepseek2's latent attention and routing, which mistral4 shares */
#define DEEPSEEK2_LAYERS                                                                                      \
    .need = { GLOBAL_ROLES, [MODEL_ROLE_ATTN_NORM] = R, [MODEL_ROLE_ATTN_Q] = R, [MODEL_ROLE_ATTN_Q_A] = R,     \
              [MODEL_ROLE_ATTN_Q_A_NORM] = R, [MODEL_ROLE_ATTN_Q_B] = R, [MODEL_ROLE_ATTN_KV_A_MQA] = R,          \
              [MODEL_ROLE_ATTN_KV_A_NORM] = R, [MODEL_ROLE_ATTN_KV_B] = R, [MODEL_ROLE_ATTN_K_B] = R,              \
              [MODEL_ROLE_ATTN_V_B] = R, [MODEL_ROLE_ATTN_OUT] = R, [MODEL_ROLE_FFN_NORM] = R, DENSE_FFN_ROLES,    \
              EXPERT_ROLES, [MODEL_ROLE_FFN_EXP_PROBS_B] = O, [MODEL_ROLE_FFN_GATE_SHEXP] = R,                     \
              [MODEL_ROLE_FFN_UP_SHEXP] = R, [MODEL_ROLE_FFN_DOWN_SHEXP] = R },                                   \
    .act = MODEL_ACT_SILU, .moe = true,                                                                        \
    .moe_keys = MODEL_MOE_KEY_GATING | MODEL_MOE_KEY_NORM | MODEL_MOE_KEY_SCALE | MODEL_MOE_KEY_SHARED |         \
                MODEL_MOE_KEY_DENSE_LEAD,                                                                      \
    .mla = true

/* A Mamba-2 mixer's roles (llama.cpp's build_mamba2_layer) after its attn_norm. The convolution's bias is required:
 * the nemotron_h and granitehybrid loaders take a file without it and the graph then adds the missing tensor (a crash
 * in llama-cpp-python 0.3.36's). */
#define MAMBA2_MIXER_ROLES                                                                                    \
    [MODEL_ROLE_SSM_IN] = R, [MODEL_ROLE_SSM_CONV1D] = R, [MODEL_ROLE_SSM_CONV1D_BIAS] = R, [MODEL_ROLE_SSM_DT] = R, \
    [MODEL_ROLE_SSM_A] = R, [MODEL_ROLE_SSM_D] = R, [MODEL_ROLE_SSM_OUT] = R
#define MAMBA2_ROLES [MODEL_ROLE_ATTN_NORM] = R, MAMBA2_MIXER_ROLES, [MODEL_ROLE_SSM_NORM] = R

/* A Mamba-1 mixer's roles (llama.cpp's build_mamba_layer) after its attn_norm */
#define MAMBA1_ROLES                                                                                          \
    [MODEL_ROLE_ATTN_NORM] = R, [MODEL_ROLE_SSM_IN] = R, [MODEL_ROLE_SSM_CONV1D] = R,                           \
    [MODEL_ROLE_SSM_CONV1D_BIAS] = R, [MODEL_ROLE_SSM_X] = R, [MODEL_ROLE_SSM_DT_PROJ] = R, [MODEL_ROLE_SSM_DT] = R, \
    [MODEL_ROLE_SSM_A] = R, [MODEL_ROLE_SSM_D] = R, [MODEL_ROLE_SSM_OUT] = R

/* Nemotron-H's mixers: attention (q/k/v and output biases optional) and Mamba-2 */
#define NEMOTRON_H_MIXERS                                                                                     \
    .need = { GLOBAL_ROLES, [MODEL_ROLE_ATTN_NORM] = R, [MODEL_ROLE_ATTN_Q] = R, [MODEL_ROLE_ATTN_K] = R,        \
              [MODEL_ROLE_ATTN_V] = R, [MODEL_ROLE_ATTN_Q_BIAS] = O, [MODEL_ROLE_ATTN_K_BIAS] = O,               \
              [MODEL_ROLE_ATTN_V_BIAS] = O, [MODEL_ROLE_ATTN_OUT] = R, [MODEL_ROLE_ATTN_OUT_BIAS] = O },          \
    .need_recurrent = { MAMBA2_ROLES },                                                                       \
    .act = MODEL_ACT_RELU_SQR, .no_rope_period = 1, .single_block = true, .mamba2 = true, .eps_either_key = true, \
    .l_out_is_ffn_out = true, .quantize = true

static const model_arch archs[] = {
    {
        .name = "llama",
        .families = "Llama 1/2/3, Mistral 7B, Mixtral, SmolLM, TinyLlama, llama2.c",
        /* q/k/v biases and rope_freqs are optional in llama.cpp's llama loader; Mixtral is llama with experts */
        .need = { DENSE_DECODER_ROLES, EXPERT_ROLES, [MODEL_ROLE_ROPE_FREQS] = O, [MODEL_ROLE_ATTN_Q_BIAS] = O,
                  [MODEL_ROLE_ATTN_K_BIAS] = O, [MODEL_ROLE_ATTN_V_BIAS] = O },
        .rope_neox = false,
        .act = MODEL_ACT_SILU,
        .quantize = true,
        .moe = true,
        .moe_renormalise = true,
    },
    {
        .name = "llama4",
        .families = "Llama 4 (Scout 17B-16E, Maverick 17B-128E)",
        /* llama.cpp's llama4 loader and graph: llama's layers (q/k/v biases optional there, rope_freqs optional), no
         * rotary positions on every fourth layer, which alone see all positions: the other three attend within chunks
         * of 8192 (iSWA) and norm q and k without gains after rotating them (but with 128 experts); the layers on the
         * interleave step have experts: one chosen by the sigmoid of its logit, that weight scaling the expert's input,
         * and an ungated shared expert as wide; the layers without positions take a temperature past 8192 positions */
        .need = { GLOBAL_ROLES, [MODEL_ROLE_ROPE_FREQS] = O, ATTENTION_ROLES, [MODEL_ROLE_ATTN_Q_BIAS] = O,
                  [MODEL_ROLE_ATTN_K_BIAS] = O, [MODEL_ROLE_ATTN_V_BIAS] = O, DENSE_FFN_ROLES, EXPERT_ROLES,
                  [MODEL_ROLE_FFN_GATE_SHEXP] = R, [MODEL_ROLE_FFN_UP_SHEXP] = R, [MODEL_ROLE_FFN_DOWN_SHEXP] = R },
        .act = MODEL_ACT_SILU,
        .moe = true,
        .moe_gating = MODEL_MOE_SIGMOID,
        .moe_keys = MODEL_MOE_KEY_STEP,
        .moe_weight_before = true,
        .moe_step_layers = true,
        .shexp_expert_wide = true,
        .no_rope_period = 4,
        .swa_period = 4,
        .swa_window_default = 8192,
        .swa_rope = MODEL_SWA_ROPE_GLOBAL,
        .swa_chunked = true,
        .qk_l2_norm = true,
        .qk_l2_norm_off_experts = 128,
        .attn_temp_fixed_scale = 0.1f,
        .attn_temp_fixed_floor = 8192,
        .attn_temp_fixed_offset = 1.0f,
        .quantize = true,
    },
    {
        .name = "mistral3",
        .families = "Mistral Small 3.1/3.2, Magistral, Devstral, Ministral 3 (text)",
        /* llama.cpp's mistral3: llama's layers (q/k/v biases optional; the attention output's bias where present;
         * rope_freqs optional; experts where expert_count > 0, softmax renormalised), the file's YaRN betas and log
         * multiplier, and Ministral 3's attention temperature (attention.temperature_scale, over floors of the
         * original context) */
        .need = { DENSE_DECODER_ROLES, EXPERT_ROLES, [MODEL_ROLE_ROPE_FREQS] = O, [MODEL_ROLE_ATTN_Q_BIAS] = O,
                  [MODEL_ROLE_ATTN_K_BIAS] = O, [MODEL_ROLE_ATTN_V_BIAS] = O, [MODEL_ROLE_ATTN_OUT_BIAS] = O },
        .act = MODEL_ACT_SILU,
        .moe = true,
        .moe_renormalise = true,
        .yarn_keys = MODEL_YARN_KEY_BETAS | MODEL_YARN_KEY_LOG_MUL,
        .attn_temperature = true,
        .quantize = true,
    },
    {
        .name = "internlm2",
        .families = "InternLM2, InternLM2.5",
        /* llama.cpp's internlm2: llama's layers with an output projection of its own (required there), q/k/v biases
         * where the file has them, NORM rotary */
        .need = { TIED_GLOBAL_ROLES, [MODEL_ROLE_OUTPUT] = R, ATTENTION_ROLES, DENSE_FFN_ROLES,
                  [MODEL_ROLE_ATTN_Q_BIAS] = O, [MODEL_ROLE_ATTN_K_BIAS] = O, [MODEL_ROLE_ATTN_V_BIAS] = O },
        .act = MODEL_ACT_SILU,
        .quantize = true,
    },
    {
        .name = "smollm3",
        .families = "SmolLM3",
        /* llama.cpp's smollm3: llama's layers (q/k/v biases optional there) with no rotary positions on every fourth
         * layer (its loader fixes n_no_rope_layer_step at 4) */
        .need = { DENSE_DECODER_ROLES, [MODEL_ROLE_ATTN_Q_BIAS] = O, [MODEL_ROLE_ATTN_K_BIAS] = O,
                  [MODEL_ROLE_ATTN_V_BIAS] = O },
        .act = MODEL_ACT_SILU,
        .no_rope_period = 4,
        .quantize = true,
    },
    {
        .name = "seed_oss",
        .families = "Seed-OSS (36B)",
        /* llama.cpp's seed-oss: q/k/v (biases optional there), NEOX rotary, post_attention_norm as the feed-forward
         * block's input norm (as glm4moe's and gpt-oss's) */
        .need = { GLOBAL_ROLES, [MODEL_ROLE_ATTN_NORM] = R, [MODEL_ROLE_ATTN_Q] = R, [MODEL_ROLE_ATTN_K] = R,
                  [MODEL_ROLE_ATTN_V] = R, [MODEL_ROLE_ATTN_Q_BIAS] = O, [MODEL_ROLE_ATTN_K_BIAS] = O,
                  [MODEL_ROLE_ATTN_V_BIAS] = O, [MODEL_ROLE_ATTN_OUT] = R, [MODEL_ROLE_ATTN_POST_NORM] = R,
                  DENSE_FFN_ROLES },
        .rope_neox = true,
        .act = MODEL_ACT_SILU,
        .ffn_norm_is_post_attention = true,
        .quantize = true,
    },
    {
        .name = "qwen2",
        .families = "Qwen2, Qwen2.5",
        QWEN2_LAYERS,
        .quantize = true,
        .norm_gains = "real Qwen2.5 files have a final norm with mean ~7",
    },
    {
        .name = "qwen3",
        .families = "Qwen3 (dense)",
        QWEN3_LAYERS,
        .quantize = true,
    },
    {
        .name = "qwen2moe",
        .families = "Qwen1.5-MoE, Qwen2-MoE (57B-A14B)",
        /* routed experts whose weights are not renormalised, plus a shared expert gated by a sigmoid */
        .need = { DECODER_ROLES, EXPERT_ROLES, SHARED_EXPERT_ROLES, [MODEL_ROLE_ATTN_Q_BIAS] = R,
                  [MODEL_ROLE_ATTN_K_BIAS] = R, [MODEL_ROLE_ATTN_V_BIAS] = R },
        .rope_neox = true,
        .act = MODEL_ACT_SILU,
        .moe = true,
        .moe_ff_split = true,
        .quantize = true,
    },
    {
        .name = "qwen3moe",
        .families = "Qwen3-MoE (30B-A3B, 235B-A22B)",
        QWEN3MOE_LAYERS,
        .quantize = true,
    },
    /* The Qwen vision-language models' text decoders (llama.cpp's qwen2vl, qwen3vl and qwen3vlmoe): qwen2's, qwen3's
     * and qwen3moe's, rotated by sections (M-RoPE; interleaved in Qwen3-VL) of which a text token's positions leave
     * the extra section's pairs unrotated; Qwen3-VL's deepstack layers add an image's features, zeros for text */
    {
        .name = "qwen2vl",
        .families = "Qwen2-VL, Qwen2.5-VL (text)",
        QWEN2_LAYERS,
        .mrope = MODEL_MROPE_SECTIONS,
        .quantize = true,
    },
    {
        .name = "qwen3vl",
        .families = "Qwen3-VL (2B to 32B, text)",
        QWEN3_LAYERS,
        .mrope = MODEL_MROPE_INTERLEAVED,
        .quantize = true,
    },
    {
        .name = "qwen3vlmoe",
        .families = "Qwen3-VL-MoE (30B-A3B, 235B-A22B, text)",
        QWEN3MOE_LAYERS,
        .mrope = MODEL_MROPE_INTERLEAVED,
        .quantize = true,
    },
    /* Qwen3.5 (llama.cpp's qwen35 and qwen35moe): three gated delta net layers to one of attention (full_attention_
     * interval 4). The attention layers: q rows holding each head's query and its output gate, per-head q/k norms,
     * interleaved multi-axis rotation of rope.dimension_count of each head, the output times sigmoid(gate). The delta
     * net layers: q, k, v through a short causal convolution and SiLU, a recurrent state per value head decayed by
     * exp(softplus(alpha + dt) * a) and written with strength sigmoid(beta) (delta-net-base.cpp), the output RMS-normed
     * per head times SiLU(z). post_attention_norm is the feed-forward block's input norm. */
    {
        .name = "qwen35",
        .families = "Qwen3.5, Qwen3.6 (dense: 0.8B to 27B)",
        .need = { QWEN35_ATTENTION_ROLES, DENSE_FFN_ROLES },
        .need_recurrent = { QWEN35_RECURRENT_ROLES, DENSE_FFN_ROLES },
        QWEN35_LAYERS,
    },
    {
        .name = "qwen35moe",
        .families = "Qwen3.5-MoE, Qwen3.6-MoE (35B-A3B, 122B-A10B, 397B-A17B)",
        /* qwen2moe's feed-forward block: softmax over the experts, the top k renormalised, a shared expert gated by
         * the sigmoid of its own product */
        .need = { QWEN35_ATTENTION_ROLES, EXPERT_ROLES, SHARED_EXPERT_ROLES },
        .need_recurrent = { QWEN35_RECURRENT_ROLES, EXPERT_ROLES, SHARED_EXPERT_ROLES },
        QWEN35_LAYERS,
        .moe = true,
        .moe_renormalise = true,
        .moe_ff_split = true,
    },
    {
        .name = "qwen3next",
        .families = "Qwen3-Next (80B-A3B)",
        /* Qwen3.5's layers before Qwen3.5 (llama.cpp's qwen3next): experts always, NEOX rotation of a part of each head
         * without sections, beta and alpha in one projection (ssm_ba) and older files' q, k, v and z in another
         * (ssm_in, in place of attn_qkv and attn_gate), each key head's rows together; a key head's value heads
         * next to each other (dn_heads_grouped) */
        .need = { QWEN35_ATTENTION_ROLES, EXPERT_ROLES, SHARED_EXPERT_ROLES },
        .need_recurrent = { [MODEL_ROLE_ATTN_NORM] = R, [MODEL_ROLE_ATTN_POST_NORM] = R, [MODEL_ROLE_ATTN_QKV] = O,
                            [MODEL_ROLE_ATTN_GATE] = O, [MODEL_ROLE_SSM_IN] = O, [MODEL_ROLE_SSM_CONV1D] = R,
                            [MODEL_ROLE_SSM_DT] = R, [MODEL_ROLE_SSM_A] = R, [MODEL_ROLE_SSM_BA] = R,
                            [MODEL_ROLE_SSM_NORM] = R, [MODEL_ROLE_SSM_OUT] = R, EXPERT_ROLES, SHARED_EXPERT_ROLES },
        .rope_neox = true,
        .act = MODEL_ACT_SILU,
        .ffn_norm_is_post_attention = true,
        .delta_net = true,
        .attn_out_gated = true,
        .dn_heads_grouped = true,
        .moe = true,
        .moe_renormalise = true,
        .moe_ff_split = true,
        .quantize = true,
    },
    {
        .name = "lfm2",
        .families = "LFM2, LFM2.5 (Liquid: 350M to 2.6B)",
        /* llama.cpp's lfm2: the layers whose head_count_kv entry is 0 are short convolutions (B, C, x from one
         * projection, y = C * conv(B * x)), the others attention with per-head q/k norms and NEOX rotation; the final
         * norm is named token_embd_norm; the output projection optional (the token embedding) */
        .need = { [MODEL_ROLE_TOKEN_EMBD] = R, [MODEL_ROLE_TOKEN_EMBD_NORM] = R, [MODEL_ROLE_OUTPUT] = O,
                  ATTENTION_ROLES, [MODEL_ROLE_ATTN_Q_NORM] = R, [MODEL_ROLE_ATTN_K_NORM] = R, DENSE_FFN_ROLES },
        .need_recurrent = { [MODEL_ROLE_ATTN_NORM] = R, [MODEL_ROLE_SHORTCONV_IN] = R, [MODEL_ROLE_SHORTCONV_CONV] = R,
                            [MODEL_ROLE_SHORTCONV_OUT] = R, [MODEL_ROLE_FFN_NORM] = R, DENSE_FFN_ROLES },
        .rope_neox = true,
        .act = MODEL_ACT_SILU,
        .shortconv = true,
        .final_norm_embd_named = true,
        .quantize = true,
    },
    {
        .name = "lfm2moe",
        .families = "LFM2-MoE (8B-A1B, 24B-A2B)",
        /* lfm2's layers (llama.cpp's lfm2moe shares its graph) with experts past leading_dense_block_count: the router's
         * selection bias required, expert_gating_func required (sigmoid in the released files), the chosen weights
         * renormalised */
        .need = { [MODEL_ROLE_TOKEN_EMBD] = R, [MODEL_ROLE_TOKEN_EMBD_NORM] = R, [MODEL_ROLE_OUTPUT] = O,
                  ATTENTION_ROLES, [MODEL_ROLE_ATTN_Q_NORM] = R, [MODEL_ROLE_ATTN_K_NORM] = R, DENSE_FFN_ROLES,
                  EXPERT_ROLES, [MODEL_ROLE_FFN_EXP_PROBS_B] = R },
        .need_recurrent = { [MODEL_ROLE_ATTN_NORM] = R, [MODEL_ROLE_SHORTCONV_IN] = R, [MODEL_ROLE_SHORTCONV_CONV] = R,
                            [MODEL_ROLE_SHORTCONV_OUT] = R, [MODEL_ROLE_FFN_NORM] = R, DENSE_FFN_ROLES, EXPERT_ROLES,
                            [MODEL_ROLE_FFN_EXP_PROBS_B] = R },
        .rope_neox = true,
        .act = MODEL_ACT_SILU,
        .shortconv = true,
        .final_norm_embd_named = true,
        .moe = true,
        .moe_renormalise = true,
        .moe_keys = MODEL_MOE_KEY_GATING | MODEL_MOE_KEY_GATING_REQUIRED | MODEL_MOE_KEY_DENSE_LEAD,
        .quantize = true,
    },
    /* NVIDIA's Nemotron-H (llama.cpp's nemotron_h): every layer one block after its attn_norm, added to the residual
     * stream. A Mamba-2 mixer where the layer's attention.head_count_kv and feed_forward_length entries are both 0: z,
     * x, B, C and dt from ssm_in; x, B, C through a short causal convolution with its bias and SiLU; a state per head
     * (head_dim x ssm.state_size) decayed by exp(softplus(dt + dt_bias) A), written with x dt B, read by C, plus D x;
     * times SiLU(z), RMS-normed per group of B and C, ssm_out. Attention without positions where head_count_kv is above
     * 0; else a feed-forward block without a gate: relu(x Wup)^2 Wdown. */
    {
        .name = "nemotron_h",
        .families = "Nemotron-H (8B, 47B, 56B), Nemotron Nano 2 (9B, 12B)",
        NEMOTRON_H_MIXERS,
        .need_ffn = { [MODEL_ROLE_ATTN_NORM] = R, [MODEL_ROLE_FFN_UP] = R, [MODEL_ROLE_FFN_DOWN] = R },
    },
    /* Nemotron 3 Nano (llama.cpp's nemotron_h_moe: nemotron_h's graph): the feed-forward layers are experts without a
     * gate (relu(x Wup)^2 Wdown each), chosen by sigmoids plus a selection bias (exp_probs_b), renormalised where
     * expert_weights_norm says, scaled by expert_weights_scale, beside an ungated shared expert of
     * expert_shared_feed_forward_length. Nemotron 3 Super's latent projections (ffn_latent_down / up) are not run. */
    {
        .name = "nemotron_h_moe",
        .families = "Nemotron 3 Nano (30B-A3B)",
        NEMOTRON_H_MIXERS,
        .need_ffn = { [MODEL_ROLE_ATTN_NORM] = R, [MODEL_ROLE_FFN_GATE_INP] = R, [MODEL_ROLE_FFN_EXP_PROBS_B] = R,
                      [MODEL_ROLE_FFN_UP_EXPS] = R, [MODEL_ROLE_FFN_DOWN_EXPS] = R, [MODEL_ROLE_FFN_UP_SHEXP] = R,
                      [MODEL_ROLE_FFN_DOWN_SHEXP] = R },
        .moe = true,
        .moe_gating = MODEL_MOE_SIGMOID,
        .moe_keys = MODEL_MOE_KEY_NORM | MODEL_MOE_KEY_SCALE,
    },
    /* IBM's Granite 4.0-H (llama.cpp's granitehybrid): granite's layers (its multipliers, logit_scale optional; a
     * feed-forward block after each, dense, or experts by softmax renormalised each feed_forward_length wide with a
     * shared expert of expert_shared_feed_forward_length) where the layers whose head_count_kv entry is 0 are Mamba-2
     * mixers (nemotron_h's: the convolution's bias required for the same reason); the hybrids write
     * rope.scaling.finetuned false, which leaves the attention layers without positions */
    {
        .name = "granitehybrid",
        .families = "IBM Granite 4.0-H (Micro, Tiny, Small)",
        .need = { DENSE_DECODER_ROLES, EXPERT_ROLES, [MODEL_ROLE_ATTN_OUT_BIAS] = O, [MODEL_ROLE_FFN_GATE_SHEXP] = O,
                  [MODEL_ROLE_FFN_UP_SHEXP] = O, [MODEL_ROLE_FFN_DOWN_SHEXP] = O },
        .need_recurrent = { MAMBA2_ROLES, [MODEL_ROLE_FFN_NORM] = R, DENSE_FFN_ROLES, EXPERT_ROLES,
                            [MODEL_ROLE_FFN_GATE_SHEXP] = O, [MODEL_ROLE_FFN_UP_SHEXP] = O,
                            [MODEL_ROLE_FFN_DOWN_SHEXP] = O },
        .act = MODEL_ACT_SILU,
        .multipliers = true,
        .logit_scale_optional = true,
        .mamba2 = true,
        .rope_finetuned_switch = true,
        .ssm_inner_embd_ratio = 2,
        .moe = true,
        .moe_renormalise = true,
        .quantize = true,
    },
    {
        .name = "falcon-h1",
        .families = "TII Falcon-H1 (0.5B to 34B)",
        /* llama.cpp's falcon-h1: every layer's attention and Mamba-2 mixer side by side on attn_norm(x), both added to
         * x, then ffn_norm (blk.N.ffn_norm: no .weight) and SwiGLU; the mixer's width its own (mamba_d_ssm), its
         * grouped norm where the model has mamba_rms_norm; NEOX rotation; the converter folds the multipliers (mup)
         * into the weights */
        .need = { DENSE_DECODER_ROLES, MAMBA2_MIXER_ROLES, [MODEL_ROLE_SSM_NORM] = O, [MODEL_ROLE_ATTN_OUT_BIAS] = O },
        .rope_neox = true,
        .act = MODEL_ACT_SILU,
        .mamba2 = true,
        .mixer_beside = true,
        .ffn_norm_bare = true,
        .quantize = true,
    },
    /* Mamba-2 alone (llama.cpp's mamba2: src/models/mamba.cpp's graph): every layer x + a Mamba-2 mixer on attn_norm(x),
     * its grouped norm required; no attention (the converter writes head_count 0) and no feed-forward block */
    {
        .name = "mamba2",
        .families = "Mamba-2 (Mamba-Codestral 7B, state-spaces mamba2 130m to 2.7b)",
        .need = { GLOBAL_ROLES },
        .need_recurrent = { MAMBA2_ROLES },
        .single_block = true,
        .mamba2 = true,
        .attention_free = true,
        .quantize = true,
    },
    /* Mamba-1 (llama.cpp's mamba: state-spaces mamba, Falcon-Mamba): every layer x + a Mamba-1 mixer on attn_norm(x);
     * its loader asserts an expansion of 2 (ssm.inner_size = 2 x embedding_length) */
    /* AI21's Jamba (llama.cpp's jamba): the layers whose head_count_kv entry is 0 are Mamba-1 mixers with gains on dt's,
     * B's and C's norms, the others attention without positions; each followed by ffn_norm and a SwiGLU block, or
     * experts (softmax, not renormalised, no scale: its loader reads none) where the file has the layer's router;
     * both residual adds read the residual first */
    {
        .name = "jamba",
        .families = "AI21 Jamba (v0.1, 1.5 / 1.6 Mini and Large, Reasoning 3B)",
        .need = { GLOBAL_ROLES, ATTENTION_ROLES, DENSE_FFN_ROLES, EXPERT_ROLES },
        .need_recurrent = { MAMBA1_ROLES, [MODEL_ROLE_SSM_DT_NORM] = R, [MODEL_ROLE_SSM_B_NORM] = R,
                            [MODEL_ROLE_SSM_C_NORM] = R, [MODEL_ROLE_FFN_NORM] = R, DENSE_FFN_ROLES, EXPERT_ROLES },
        .act = MODEL_ACT_SILU,
        .no_rope_period = 1,
        .mamba1 = true,
        .ssm_inner_embd_ratio = 2,
        .moe = true,
        .moe_where_router = true,
        .quantize = true,
    },
    {
        .name = "mamba",
        .families = "Mamba (state-spaces mamba 130m to 2.8b), Falcon-Mamba 7B",
        .need = { GLOBAL_ROLES },
        .need_recurrent = { MAMBA1_ROLES },
        .single_block = true,
        .mamba1 = true,
        .attention_free = true,
        .ssm_inner_embd_ratio = 2,
        .quantize = true,
    },
    {
        .name = "starcoder2",
        .families = "StarCoder2 (3B, 7B, 15B)",
        /* llama.cpp's starcoder2: LayerNorms with biases (attention.layer_norm_epsilon), biases on every projection
         * (q, k and v optional as create_tensor_qkv makes them), NEOX rotation of whole heads, an ungated feed-forward
         * block GELU(x Wup + b) Wdown + b; the output the token embedding where the file has none */
        .need = { DECODER_ROLES, [MODEL_ROLE_OUTPUT_NORM_BIAS] = R, [MODEL_ROLE_ATTN_NORM_BIAS] = R,
                  [MODEL_ROLE_ATTN_Q_BIAS] = O, [MODEL_ROLE_ATTN_K_BIAS] = O, [MODEL_ROLE_ATTN_V_BIAS] = O,
                  [MODEL_ROLE_ATTN_OUT_BIAS] = R, [MODEL_ROLE_FFN_NORM_BIAS] = R, [MODEL_ROLE_FFN_UP] = R,
                  [MODEL_ROLE_FFN_UP_BIAS] = R, [MODEL_ROLE_FFN_DOWN] = R, [MODEL_ROLE_FFN_DOWN_BIAS] = R },
        .rope_neox = true,
        .act = MODEL_ACT_GELU_TANH,
        .norm_layer = true,
        .quantize = true,
    },
    {
        .name = "stablelm",
        .families = "StableLM 2 (1.6B), StableLM 3B 4E1T, Zephyr 3B, StableCode 3B",
        /* llama.cpp's stablelm: LayerNorms with biases, q/k/v biases optional (StableLM 2 has them), part of each head
         * rotating in NEOX pairs (rope.dimension_count), SwiGLU, an output projection of its own. Its 12B's parallel
         * residual (no ffn_norm; per-head q/k LayerNorms) is another order of adds, refused by ffn_norm's name. */
        .need = { TIED_GLOBAL_ROLES, [MODEL_ROLE_OUTPUT] = R, ATTENTION_ROLES, DENSE_FFN_ROLES,
                  [MODEL_ROLE_OUTPUT_NORM_BIAS] = R,
                  [MODEL_ROLE_ATTN_NORM_BIAS] = R, [MODEL_ROLE_ATTN_Q_BIAS] = O, [MODEL_ROLE_ATTN_K_BIAS] = O,
                  [MODEL_ROLE_ATTN_V_BIAS] = O, [MODEL_ROLE_FFN_NORM_BIAS] = R },
        .rope_neox = true,
        .act = MODEL_ACT_SILU,
        .norm_layer = true,
        .quantize = true,
    },
    {
        .name = "phi2",
        .families = "Phi-1, Phi-1.5, Phi-2",
        /* llama.cpp's phi2: a LayerNorm with bias before the attention and the feed-forward block side by side, summed
         * before the residual ((attention + ffn) + x), q, k and v with biases (separate, or fused in attn_qkv with its
         * bias in older files), part of each head rotating in NEOX pairs, q scaled before the scores, GELU without a
         * gate with biases, the final LayerNorm with bias, the logits with a bias of their own */
        .need = { TIED_GLOBAL_ROLES, [MODEL_ROLE_OUTPUT] = R, [MODEL_ROLE_OUTPUT_BIAS] = R,
                  [MODEL_ROLE_OUTPUT_NORM_BIAS] = R, [MODEL_ROLE_ATTN_NORM] = R, [MODEL_ROLE_ATTN_NORM_BIAS] = R,
                  [MODEL_ROLE_ATTN_QKV] = O, [MODEL_ROLE_ATTN_QKV_BIAS] = O, [MODEL_ROLE_ATTN_Q] = O,
                  [MODEL_ROLE_ATTN_K] = O, [MODEL_ROLE_ATTN_V] = O, [MODEL_ROLE_ATTN_Q_BIAS] = O,
                  [MODEL_ROLE_ATTN_K_BIAS] = O, [MODEL_ROLE_ATTN_V_BIAS] = O, [MODEL_ROLE_ATTN_OUT] = R,
                  [MODEL_ROLE_ATTN_OUT_BIAS] = R, [MODEL_ROLE_FFN_UP] = R, [MODEL_ROLE_FFN_UP_BIAS] = R,
                  [MODEL_ROLE_FFN_DOWN] = R, [MODEL_ROLE_FFN_DOWN_BIAS] = R },
        .rope_neox = true,
        .act = MODEL_ACT_GELU_TANH,
        .norm_layer = true,
        .parallel_ffn = true,
        .parallel_blocks_summed = true,
        .quantize = true,
    },
    {
        .name = "falcon",
        .families = "Falcon 7B, 40B, 180B (the first Falcons; Falcon 3 is llama)",
        /* llama.cpp's falcon: phi2's parallel layer without biases but the LayerNorms': the attention and an ungated GELU
         * block on one norm, summed before the residual; q, k and v fused in attn_qkv (its converter regroups them,
         * one kv head for the 7B), whole heads rotating in NEOX pairs; the 40B and 180B give the attention a norm of its
         * own (attn_norm_2), attn_norm being the feed-forward block's */
        .need = { GLOBAL_ROLES, [MODEL_ROLE_OUTPUT_NORM_BIAS] = R, [MODEL_ROLE_ATTN_NORM] = R,
                  [MODEL_ROLE_ATTN_NORM_BIAS] = R, [MODEL_ROLE_ATTN_NORM_2] = O, [MODEL_ROLE_ATTN_NORM_2_BIAS] = O,
                  [MODEL_ROLE_ATTN_QKV] = R, [MODEL_ROLE_ATTN_OUT] = R, [MODEL_ROLE_FFN_UP] = R,
                  [MODEL_ROLE_FFN_DOWN] = R },
        .rope_neox = true,
        .act = MODEL_ACT_GELU_TANH,
        .norm_layer = true,
        .parallel_ffn = true,
        .parallel_blocks_summed = true,
        .quantize = true,
        .quantize_falcon_rules = true,
    },
    {
        .name = "gptneox",
        .families = "GPT-NeoX-20B, Pythia, Dolly v2, RedPajama-INCITE",
        /* llama.cpp's gptneox: LayerNorms with biases, q, k and v fused in attn_qkv with its bias (its converter regroups
         * each head's rows as all q's, then k's, then v's), biases on every product, part of each head rotating in NEOX
         * pairs, an ungated GELU block; use_parallel_residual: x + attention(attn_norm(x)) + ffn(ffn_norm(x)), in
         * Cohere's order of adds, else one block after the other */
        .need = { TIED_GLOBAL_ROLES, [MODEL_ROLE_OUTPUT] = R, [MODEL_ROLE_OUTPUT_NORM_BIAS] = R,
                  [MODEL_ROLE_ATTN_NORM] = R, [MODEL_ROLE_ATTN_NORM_BIAS] = R, [MODEL_ROLE_ATTN_QKV] = R,
                  [MODEL_ROLE_ATTN_QKV_BIAS] = R, [MODEL_ROLE_ATTN_OUT] = R, [MODEL_ROLE_ATTN_OUT_BIAS] = R,
                  [MODEL_ROLE_FFN_NORM] = R, [MODEL_ROLE_FFN_NORM_BIAS] = R, [MODEL_ROLE_FFN_UP] = R,
                  [MODEL_ROLE_FFN_UP_BIAS] = R, [MODEL_ROLE_FFN_DOWN] = R, [MODEL_ROLE_FFN_DOWN_BIAS] = R },
        .rope_neox = true,
        .act = MODEL_ACT_GELU_TANH,
        .norm_layer = true,
        .parallel_residual_key = true,
        .quantize = true,
    },
    {
        .name = "arcee",
        .families = "Arcee AFM-4.5B",
        /* llama.cpp's arcee: llama's layers (its converter is LlamaModel's: NORM rotation, rope_freqs optional) with an
         * ungated feed-forward block, relu(x Wup)^2 Wdown */
        .need = { DECODER_ROLES, [MODEL_ROLE_FFN_UP] = R, [MODEL_ROLE_FFN_DOWN] = R, [MODEL_ROLE_ROPE_FREQS] = O,
                  [MODEL_ROLE_ATTN_Q_BIAS] = O, [MODEL_ROLE_ATTN_K_BIAS] = O, [MODEL_ROLE_ATTN_V_BIAS] = O },
        .act = MODEL_ACT_RELU_SQR,
        .quantize = true,
    },
    {
        .name = "hunyuan-dense",
        .families = "Hunyuan dense (0.5B to 7B)",
        /* llama.cpp's hunyuan-dense (hunyuan-vl's graph): llama's layers with q/k/v biases optional, NEOX rotation, the
         * per-head q/k RMSNorms after it, the base scaled by rope.scaling.alpha; an expert_count of 1 is dense */
        .need = { DENSE_DECODER_ROLES, [MODEL_ROLE_ATTN_Q_NORM] = R, [MODEL_ROLE_ATTN_K_NORM] = R,
                  [MODEL_ROLE_ATTN_Q_BIAS] = O, [MODEL_ROLE_ATTN_K_BIAS] = O, [MODEL_ROLE_ATTN_V_BIAS] = O },
        .rope_neox = true,
        .act = MODEL_ACT_SILU,
        .qk_norm_after_rope = true,
        .rope_base_alpha = true,
        .expert_count_one_dense = true,
        .quantize = true,
    },
    {
        .name = "hunyuan-moe",
        .families = "Hunyuan-A13B",
        /* llama.cpp's hunyuan-moe: hunyuan-dense's attention (q/k/v biases optional, the per-head q/k RMSNorms after the
         * NEOX rotation; the converter scales the base by alpha itself, so the loader reads no alpha), then experts
         * chosen by softmax and renormalised, each feed_forward_length wide, beside an ungated shared expert always
         * added (expert_shared_feed_forward_length wide, feed_forward_length by default) */
        .need = { DECODER_ROLES, EXPERT_ROLES, [MODEL_ROLE_ATTN_Q_NORM] = R, [MODEL_ROLE_ATTN_K_NORM] = R,
                  [MODEL_ROLE_ATTN_Q_BIAS] = O, [MODEL_ROLE_ATTN_K_BIAS] = O, [MODEL_ROLE_ATTN_V_BIAS] = O,
                  [MODEL_ROLE_FFN_GATE_SHEXP] = R, [MODEL_ROLE_FFN_UP_SHEXP] = R, [MODEL_ROLE_FFN_DOWN_SHEXP] = R },
        .rope_neox = true,
        .act = MODEL_ACT_SILU,
        .qk_norm_after_rope = true,
        .moe = true,
        .moe_renormalise = true,
        .moe_experts_ff_wide = true,
        .quantize = true,
    },
    {
        .name = "gpt-oss",
        .families = "OpenAI gpt-oss (20b, 120b)",
        /* llama.cpp's openai-moe loader (src/models/openai-moe.cpp): biases on q/k/v/o, the router and every expert,
         * a sink per head, post_attention_norm before the experts; every other layer slides with the global rope
         * (YaRN in the released files); the top k router logits are softmaxed (SOFTMAX_WEIGHT) */
        .need = { TIED_GLOBAL_ROLES, [MODEL_ROLE_OUTPUT] = R, [MODEL_ROLE_ATTN_NORM] = R, [MODEL_ROLE_ATTN_Q] = R,
                  [MODEL_ROLE_ATTN_K] = R, [MODEL_ROLE_ATTN_V] = R, [MODEL_ROLE_ATTN_OUT] = R,
                  [MODEL_ROLE_ATTN_Q_BIAS] = R, [MODEL_ROLE_ATTN_K_BIAS] = R, [MODEL_ROLE_ATTN_V_BIAS] = R,
                  [MODEL_ROLE_ATTN_OUT_BIAS] = R, [MODEL_ROLE_ATTN_SINKS] = R, [MODEL_ROLE_ATTN_POST_NORM] = R,
                  EXPERT_ROLES, [MODEL_ROLE_FFN_GATE_INP_BIAS] = R, [MODEL_ROLE_FFN_GATE_EXPS_BIAS] = R,
                  [MODEL_ROLE_FFN_UP_EXPS_BIAS] = R, [MODEL_ROLE_FFN_DOWN_EXPS_BIAS] = R },
        .rope_neox = true,
        .act = MODEL_ACT_SWIGLU_OAI,
        .swa_period = 2,
        .swa_rope = MODEL_SWA_ROPE_GLOBAL,
        .moe = true,
        .moe_gating = MODEL_MOE_SOFTMAX_WEIGHT,
        .ffn_norm_is_post_attention = true,
        .quantize = true,
    },
    {
        .name = "glm4",
        .families = "GLM-4-0414 (9B, 32B), GLM-Z1",
        /* llama.cpp's glm4: q/k/v (biases where the file has them), NORM rotary of the first rope.dimension_count
         * values of each head, a norm after the attention and after the feed-forward block as well as before each,
         * gate and up fused in ffn_up (as phi3's); multi-axis sections where the file has them (GLM-4.1V) */
        .need = { GLOBAL_ROLES, ATTENTION_ROLES, [MODEL_ROLE_ATTN_Q_BIAS] = O, [MODEL_ROLE_ATTN_K_BIAS] = O,
                  [MODEL_ROLE_ATTN_V_BIAS] = O, [MODEL_ROLE_ATTN_POST_NORM] = R, [MODEL_ROLE_FFN_UP] = R,
                  [MODEL_ROLE_FFN_DOWN] = R, [MODEL_ROLE_FFN_POST_NORM] = R },
        .act = MODEL_ACT_SILU,
        .gate_up_fused = true,
        .mrope = MODEL_MROPE_SECTIONS,
        .mrope_optional = true,
        .quantize = true,
    },
    {
        .name = "glm4moe",
        .families = "GLM-4.5, GLM-4.5-Air, GLM-4.6",
        /* llama.cpp's glm4-moe loader and graph: q/k/v biases (optional there), per-head q/k norms in some files,
         * post_attention_norm before the feed-forward block as gpt-oss's, the first leading_dense_block_count layers
         * dense, the rest experts chosen by sigmoid scores plus exp_probs_b, their weights renormalised and scaled,
         * and ungated shared experts; the trailing nextn (multi-token prediction) blocks are not run */
        .need = { GLOBAL_ROLES, [MODEL_ROLE_ATTN_NORM] = R, [MODEL_ROLE_ATTN_Q] = R, [MODEL_ROLE_ATTN_K] = R,
                  [MODEL_ROLE_ATTN_V] = R, [MODEL_ROLE_ATTN_Q_BIAS] = O, [MODEL_ROLE_ATTN_K_BIAS] = O,
                  [MODEL_ROLE_ATTN_V_BIAS] = O, [MODEL_ROLE_ATTN_Q_NORM] = O, [MODEL_ROLE_ATTN_K_NORM] = O,
                  [MODEL_ROLE_ATTN_OUT] = R, [MODEL_ROLE_ATTN_POST_NORM] = R, DENSE_FFN_ROLES, EXPERT_ROLES,
                  [MODEL_ROLE_FFN_EXP_PROBS_B] = R, [MODEL_ROLE_FFN_GATE_SHEXP] = O, [MODEL_ROLE_FFN_UP_SHEXP] = O,
                  [MODEL_ROLE_FFN_DOWN_SHEXP] = O },
        .rope_neox = true,
        .act = MODEL_ACT_SILU,
        .moe = true,
        .moe_gating = MODEL_MOE_SIGMOID,
        .moe_keys = MODEL_MOE_KEY_GATING | MODEL_MOE_KEY_NORM | MODEL_MOE_KEY_SCALE | MODEL_MOE_KEY_SHARED |
                    MODEL_MOE_KEY_DENSE_LEAD,
        .ffn_norm_is_post_attention = true,
        .mrope = MODEL_MROPE_SECTIONS, /* GLM-4.5V's text decoder, where the file has sections */
        .mrope_optional = true,
        .quantize = true,
    },
    {
        .name = "minimax-m2",
        .families = "MiniMax-M2",
        /* llama.cpp's minimax-m2 loader and graph: q and k normed over their whole rows, experts chosen by sigmoid
         * scores plus exp_probs_b, their weights always renormalised (norm_w true), only expert_gating_func read */
        .need = { TIED_GLOBAL_ROLES, [MODEL_ROLE_OUTPUT] = R, ATTENTION_ROLES, [MODEL_ROLE_ATTN_Q_NORM] = R,
                  [MODEL_ROLE_ATTN_K_NORM] = R, EXPERT_ROLES, [MODEL_ROLE_FFN_EXP_PROBS_B] = R },
        .rope_neox = true,
        .act = MODEL_ACT_SILU,
        .qk_norm_full = true,
        .moe = true,
        .moe_gating = MODEL_MOE_SIGMOID,
        .moe_renormalise = true,
        .moe_keys = MODEL_MOE_KEY_GATING,
        .quantize = true,
    },
    {
        .name = "olmoe",
        .families = "OLMoE",
        /* llama.cpp's olmoe loader and graph: q and k normed over their whole rows, softmax routing, the chosen
         * weights not renormalised */
        .need = { TIED_GLOBAL_ROLES, [MODEL_ROLE_OUTPUT] = R, ATTENTION_ROLES, [MODEL_ROLE_ATTN_Q_NORM] = R,
                  [MODEL_ROLE_ATTN_K_NORM] = R, EXPERT_ROLES },
        .rope_neox = true,
        .act = MODEL_ACT_SILU,
        .qk_norm_full = true,
        .moe = true,
        .quantize = true,
    },
    {
        .name = "ernie4_5",
        .families = "ERNIE 4.5 (0.3B dense)",
        /* llama.cpp's ernie4-5 loader and graph without experts: llama's layers, NORM rotary; attn_output.bias is
         * loaded there but never added, so a file with one is refused here rather than run otherwise */
        .need = { GLOBAL_ROLES, ATTENTION_ROLES, DENSE_FFN_ROLES, [MODEL_ROLE_ATTN_Q_BIAS] = O,
                  [MODEL_ROLE_ATTN_K_BIAS] = O, [MODEL_ROLE_ATTN_V_BIAS] = O },
        .act = MODEL_ACT_SILU,
        .quantize = true,
    },
    {
        .name = "ernie4_5-moe",
        .families = "ERNIE 4.5 (21B-A3B, 300B-A47B)",
        /* llama.cpp's ernie4-5 loader and ernie4-5-moe graph: NORM rotary, dense first layers, experts chosen by
         * softmax plus exp_probs_b where the file has it, always renormalised, a shared expert of
         * expert_shared_feed_forward_length where the file has one; attn_output.bias is loaded there but never
         * added, so a file with one is refused here rather than run otherwise */
        .need = { GLOBAL_ROLES, ATTENTION_ROLES, DENSE_FFN_ROLES, EXPERT_ROLES, [MODEL_ROLE_FFN_EXP_PROBS_B] = O,
                  [MODEL_ROLE_FFN_GATE_SHEXP] = O, [MODEL_ROLE_FFN_UP_SHEXP] = O, [MODEL_ROLE_FFN_DOWN_SHEXP] = O },
        .act = MODEL_ACT_SILU,
        .moe = true,
        .moe_renormalise = true,
        .moe_keys = MODEL_MOE_KEY_DENSE_LEAD | MODEL_MOE_KEY_STEP,
        .quantize = true,
    },
    {
        .name = "bailingmoe2",
        .families = "Ling 2.0, Ring 2.0 (mini, flash)",
        /* llama.cpp's bailingmoe2 loader and graph: q, k and v in one attn_qkv, per-head q/k norms, the attention
         * output's bias where the file has one, dense first layers, experts chosen by the file's gating function plus
         * exp_probs_b where present, the file's renormalisation and scale, expert_shared_count shared experts of
         * expert_shared_feed_forward_length (or an expert's width) each, ungated; prediction blocks not run */
        .need = { GLOBAL_ROLES, [MODEL_ROLE_ATTN_NORM] = R, [MODEL_ROLE_ATTN_QKV] = R, [MODEL_ROLE_ATTN_Q_NORM] = R,
                  [MODEL_ROLE_ATTN_K_NORM] = R, [MODEL_ROLE_ATTN_OUT] = R, [MODEL_ROLE_ATTN_OUT_BIAS] = O,
                  [MODEL_ROLE_FFN_NORM] = R, DENSE_FFN_ROLES, EXPERT_ROLES, [MODEL_ROLE_FFN_EXP_PROBS_B] = O,
                  [MODEL_ROLE_FFN_GATE_SHEXP] = R, [MODEL_ROLE_FFN_UP_SHEXP] = R, [MODEL_ROLE_FFN_DOWN_SHEXP] = R },
        .rope_neox = true,
        .act = MODEL_ACT_SILU,
        .moe = true,
        .moe_gating = MODEL_MOE_SIGMOID,
        .moe_keys = MODEL_MOE_KEY_GATING | MODEL_MOE_KEY_NORM | MODEL_MOE_KEY_SCALE | MODEL_MOE_KEY_SHARED |
                    MODEL_MOE_KEY_DENSE_LEAD | MODEL_MOE_KEY_SHARED_WIDTH,
        .quantize = true,
    },
    {
        .name = "dots1",
        .families = "dots.llm1",
        /* llama.cpp's dots1 loader and graph: per-head q/k norms, dense first layers, experts chosen by the file's
         * gating function plus exp_probs_b where present, the file's renormalisation and scale, expert_shared_count
         * ungated shared experts; k and v as wide as q (no grouped heads) */
        .need = { TIED_GLOBAL_ROLES, [MODEL_ROLE_OUTPUT] = R, ATTENTION_ROLES, [MODEL_ROLE_ATTN_Q_NORM] = R,
                  [MODEL_ROLE_ATTN_K_NORM] = R, DENSE_FFN_ROLES, EXPERT_ROLES, [MODEL_ROLE_FFN_EXP_PROBS_B] = O,
                  [MODEL_ROLE_FFN_GATE_SHEXP] = R, [MODEL_ROLE_FFN_UP_SHEXP] = R, [MODEL_ROLE_FFN_DOWN_SHEXP] = R },
        .rope_neox = true,
        .act = MODEL_ACT_SILU,
        .moe = true,
        .moe_gating = MODEL_MOE_SIGMOID,
        .moe_keys = MODEL_MOE_KEY_GATING | MODEL_MOE_KEY_NORM | MODEL_MOE_KEY_SCALE | MODEL_MOE_KEY_SHARED |
                    MODEL_MOE_KEY_DENSE_LEAD,
        .no_gqa = true,
        .quantize = true,
    },
    {
        .name = "deepseek2",
        .families = "DeepSeek-V2, V2-Lite, V2.5, V3, R1; Kimi K2; GLM-4.7-Flash; Moonlight",
        /* llama.cpp's deepseek2 loader and graph: latent attention (the query through its compression where
         * q_lora_rank > 0, keys and values from one compressed row plus a rotary key all heads share, decompressed
         * whole or, split per head, absorbed into the query and applied to the attention's output), NORM rotary of
         * each head's last rope.dimension_count values, YaRN with DeepSeek's magnitude in the scores; dense first
         * layers, experts chosen by the file's gating function (softmax without one) plus exp_probs_b where present,
         * within groups where expert_group_count > 1, the file's renormalisation and scale, expert_shared_count
         * ungated shared experts an expert wide each; prediction blocks not run */
        DEEPSEEK2_LAYERS,
        .yarn_keys = MODEL_YARN_KEY_LOG_MUL_TENTHS | MODEL_YARN_KEY_MSCALE_OWN,
        .quantize = true,
    },
    {
        .name = "mistral4",
        .families = "Mistral 4 (text)",
        /* llama.cpp's mistral4 is its deepseek2 loader and graph under another name (src/models/models.h); only the
         * context's YaRN magnitude differs, which names deepseek2 alone */
        DEEPSEEK2_LAYERS,
        .yarn_keys = MODEL_YARN_KEY_LOG_MUL_TENTHS,
        .quantize = true,
    },
    {
        .name = "command-r",
        .families = "Command R (35B), Command R+ (104B), Aya 23, Aya Expanse",
        /* llama.cpp's command-r: LayerNorms, the attention and the feed-forward block side by side on one norm, the
         * output projection always the token embedding, logits times logit_scale; NORM rotary; in files of 64 layers
         * (Command R+) each head of q and k LayerNormed with gains of its own before the rotation */
        COHERE_LAYERS,
        .qk_norm_from_layers = 64,
        .quantize = true,
    },
    {
        .name = "cohere2",
        .families = "Command R7B, Command A",
        /* llama.cpp's cohere2: command-r's parallel block and LayerNorms; three layers in four slide (a window of
         * attention.sliding_window) and alone rotate, the fourth attends to all without positions */
        COHERE_LAYERS,
        .swa_period = 4,
        .swa_rope = MODEL_SWA_ROPE_SAME,
        .rope_swa_only = true,
        .quantize = true,
    },
    {
        .name = "phi3",
        .families = "Phi-3, Phi-3.5, Phi-4 (dense)",
        /* llama.cpp's phi3 loader takes q/k/v fused (attn_qkv) or apart, and gate and up fused in ffn_up; the 128k
         * files' LongRoPE divisors, long past rope.scaling.original_context_length, short within it */
        .need = { GLOBAL_ROLES, [MODEL_ROLE_ROPE_FACTORS_LONG] = O, [MODEL_ROLE_ROPE_FACTORS_SHORT] = O,
                  [MODEL_ROLE_ATTN_NORM] = R, [MODEL_ROLE_ATTN_Q] = O, [MODEL_ROLE_ATTN_K] = O,
                  [MODEL_ROLE_ATTN_V] = O, [MODEL_ROLE_ATTN_QKV] = O, [MODEL_ROLE_ATTN_OUT] = R,
                  [MODEL_ROLE_FFN_NORM] = R, [MODEL_ROLE_FFN_UP] = R, [MODEL_ROLE_FFN_DOWN] = R },
        .rope_neox = true,
        .act = MODEL_ACT_SILU,
        .gate_up_fused = true,
        .quantize = true,
    },
    {
        .name = "granite",
        .families = "IBM Granite 3.x (dense)",
        /* llama.cpp's granite loader takes experts too, which gguf-py lists for granitemoe alone */
        .need = { DENSE_DECODER_ROLES, [MODEL_ROLE_ATTN_OUT_BIAS] = O },
        .act = MODEL_ACT_SILU,
        .multipliers = true,
        .quantize = true,
    },
    {
        .name = "minicpm",
        .families = "MiniCPM 1B / 2B, MiniCPM4 (dense)",
        /* llama.cpp's minicpm loader over granite's graph: llama's layers (LlamaModel's q/k permutation), the
         * attention output's and the feed-forward block's biases optional, rope_freqs or LongRoPE's pair optional,
         * granite's multipliers with its own defaults */
        .need = { DENSE_DECODER_ROLES, [MODEL_ROLE_ATTN_OUT_BIAS] = O, [MODEL_ROLE_ATTN_Q_BIAS] = O,
                  [MODEL_ROLE_ATTN_K_BIAS] = O, [MODEL_ROLE_ATTN_V_BIAS] = O, [MODEL_ROLE_ROPE_FREQS] = O,
                  [MODEL_ROLE_ROPE_FACTORS_LONG] = O, [MODEL_ROLE_ROPE_FACTORS_SHORT] = O },
        .act = MODEL_ACT_SILU,
        .multipliers = true,
        .multipliers_minicpm = true,
        .quantize = true,
    },
    {
        .name = "granitemoe",
        .families = "IBM Granite 3.x MoE (1B-A400M, 3B-A800M)",
        /* llama.cpp's granite-moe loader, granite's graph (src/models/granite.cpp): the attention output's bias where
         * the file has one, experts by expert_count (softmax, renormalised, each feed_forward_length wide), a shared
         * expert of expert_shared_feed_forward_length where the file has one */
        .need = { DECODER_ROLES, EXPERT_ROLES, [MODEL_ROLE_ATTN_OUT_BIAS] = O, [MODEL_ROLE_FFN_GATE_SHEXP] = O,
                  [MODEL_ROLE_FFN_UP_SHEXP] = O, [MODEL_ROLE_FFN_DOWN_SHEXP] = O },
        .act = MODEL_ACT_SILU,
        .multipliers = true,
        .moe = true,
        .moe_renormalise = true,
        .quantize = true,
    },
    {
        .name = "olmo2",
        .families = "OLMo 2",
        /* no norm before the blocks: each block's output is normalized (post-norms), q and k over their whole rows */
        .need = { GLOBAL_ROLES, [MODEL_ROLE_ATTN_Q] = R, [MODEL_ROLE_ATTN_K] = R, [MODEL_ROLE_ATTN_V] = R,
                  [MODEL_ROLE_ATTN_OUT] = R, [MODEL_ROLE_ATTN_Q_NORM] = R, [MODEL_ROLE_ATTN_K_NORM] = R,
                  [MODEL_ROLE_ATTN_POST_NORM] = R, [MODEL_ROLE_FFN_GATE] = R, [MODEL_ROLE_FFN_UP] = R,
                  [MODEL_ROLE_FFN_DOWN] = R, [MODEL_ROLE_FFN_POST_NORM] = R },
        .rope_neox = true,
        .act = MODEL_ACT_SILU,
        .qk_norm_full = true,
        /* Olmo 3 (written as olmo2): with attention.sliding_window, three layers in four slide (or as
         * sliding_window_pattern lists them), rotating with the global base and no scaling while the full layers
         * take the file's YaRN (llama.cpp's olmo2 loader and graph) */
        .swa_period = 4,
        .swa_rope = MODEL_SWA_ROPE_UNSCALED,
        .quantize = true,
    },
    {
        .name = "exaone",
        .families = "EXAONE 3.0, 3.5, Deep",
        /* llama.cpp's exaone: llama's layers (q/k/v biases where the file has them, Llama 3's rope_freqs where
         * present) with NEOX rotary */
        .need = { DENSE_DECODER_ROLES, [MODEL_ROLE_ROPE_FREQS] = O, [MODEL_ROLE_ATTN_Q_BIAS] = O,
                  [MODEL_ROLE_ATTN_K_BIAS] = O, [MODEL_ROLE_ATTN_V_BIAS] = O },
        .rope_neox = true,
        .act = MODEL_ACT_SILU,
        .quantize = true,
    },
    {
        .name = "exaone4",
        .families = "EXAONE 4.0 (1.2B, 32B)",
        /* llama.cpp's exaone4: olmo2's norms after the blocks and none before, per-head q/k norms, Llama 3's rope_freqs
         * where present, NEOX rotary; in a 64-layer file (the 32B) the sliding window (4096 by default) on three layers
         * in four, which alone rotate: the others attend without positions */
        .need = { GLOBAL_ROLES, [MODEL_ROLE_ROPE_FREQS] = O, [MODEL_ROLE_ATTN_Q] = R, [MODEL_ROLE_ATTN_K] = R,
                  [MODEL_ROLE_ATTN_V] = R, [MODEL_ROLE_ATTN_Q_NORM] = R, [MODEL_ROLE_ATTN_K_NORM] = R,
                  [MODEL_ROLE_ATTN_OUT] = R, [MODEL_ROLE_ATTN_POST_NORM] = R, DENSE_FFN_ROLES,
                  [MODEL_ROLE_FFN_POST_NORM] = R },
        .rope_neox = true,
        .act = MODEL_ACT_SILU,
        .swa_period = 4,
        .swa_window_default = 4096,
        .swa_rope = MODEL_SWA_ROPE_GLOBAL,
        .swa_n_layer = 64,
        .rope_swa_only = true,
        .quantize = true,
    },
    {
        .name = "gemma",
        .families = "Gemma 1, CodeGemma",
        /* llama.cpp's gemma: embeddings scaled by sqrt(n_embd), tanh-GELU, NEOX rotary, q scaled by 1/sqrt(key_length)
         * before its product; its output projection is always the token embedding */
        .need = { TIED_GLOBAL_ROLES, ATTENTION_ROLES, DENSE_FFN_ROLES },
        .rope_neox = true,
        .act = MODEL_ACT_GELU_TANH,
        .embd_scale_sqrt = true,
        .norm_gains = "gemma stores its norm gains with the +1 of its (1 + w) scaling folded in",
        .quantize = true,
    },
    {
        .name = "gemma2",
        .families = "Gemma 2",
        /* its output projection is always the token embedding */
        .need = { TIED_GLOBAL_ROLES, ATTENTION_ROLES, DENSE_FFN_ROLES, [MODEL_ROLE_ATTN_POST_NORM] = R,
                  [MODEL_ROLE_FFN_POST_NORM] = R },
        .rope_neox = true,
        .act = MODEL_ACT_GELU_TANH,
        .embd_scale_sqrt = true,
        /* llama.cpp's gemma2 loader: every other layer slides (window 4096 unless the file says), with the global
         * rope; attention and final soft-capping at 50 and 30 unless the file says; the 27B (46 layers) scales q.k
         * by 1/sqrt(n_embd / n_head) */
        .swa_period = 2,
        .swa_window_default = 4096,
        .swa_rope = MODEL_SWA_ROPE_GLOBAL,
        .final_softcap = true,
        .final_softcap_default = 30.0f,
        .attn_softcap_default = 50.0f,
        .attn_scale_embd_layers = 46,
        .norm_gains = "gemma stores its norm gains with the +1 of its (1 + w) scaling folded in",
        .quantize = true,
    },
    {
        .name = "gemma3",
        .families = "Gemma 3 (text)",
        .need = { DENSE_DECODER_ROLES, [MODEL_ROLE_ATTN_Q_NORM] = R, [MODEL_ROLE_ATTN_K_NORM] = R,
                  [MODEL_ROLE_ATTN_POST_NORM] = R, [MODEL_ROLE_FFN_POST_NORM] = R },
        .rope_neox = true,
        .act = MODEL_ACT_GELU_TANH,
        .embd_scale_sqrt = true,
        .swa_period = 6,
        .final_softcap = true,
        .attn_scale_embd_layers = 62,
        .quantize = true,
        /* gemma scales by (1 + w); convert_hf_to_gguf.py stores 1 + w */
        .norm_gains = "gemma stores its norm gains with the +1 of its (1 + w) scaling folded in: means of 2-40 and "
                      "a final norm peaking in the hundreds are gemma-3-270m's trained values",
    },
    {
        .name = "gemma4",
        .families = "Gemma 4 (text: 31B, E2B, E4B, 26B-A4B)",
        /* llama.cpp's gemma4: gemma3's layers with the sliding-window layers' own head lengths and rotated width
         * (attention.key_length_swa, rope.dimension_count_swa) and key/value heads per layer; full layers rotate
         * "proportionally" through rope_freqs, may take their values from the key projection (no attn_v), every v
         * is RMS-normed without gains, q.k is not scaled, and a layer's output may be scaled */
        .need = { GLOBAL_ROLES, DENSE_FFN_ROLES, [MODEL_ROLE_ROPE_FREQS] = R, [MODEL_ROLE_ATTN_NORM] = R,
                  [MODEL_ROLE_ATTN_Q] = R, [MODEL_ROLE_ATTN_K] = R, [MODEL_ROLE_ATTN_V] = O,
                  [MODEL_ROLE_ATTN_OUT] = R, [MODEL_ROLE_FFN_NORM] = R, [MODEL_ROLE_ATTN_Q_NORM] = R, [MODEL_ROLE_ATTN_K_NORM] = R,
                  [MODEL_ROLE_ATTN_POST_NORM] = R, [MODEL_ROLE_FFN_POST_NORM] = R,
                  [MODEL_ROLE_LAYER_OUT_SCALE] = O, [MODEL_ROLE_PER_LAYER_TOKEN_EMBD] = R,
                  [MODEL_ROLE_PER_LAYER_MODEL_PROJ] = R, [MODEL_ROLE_PER_LAYER_PROJ_NORM] = R,
                  [MODEL_ROLE_PER_LAYER_INP_GATE] = R, [MODEL_ROLE_PER_LAYER_PROJ] = R,
                  [MODEL_ROLE_PER_LAYER_POST_NORM] = R, [MODEL_ROLE_FFN_GATE_INP] = R,
                  [MODEL_ROLE_FFN_GATE_UP_EXPS] = R, /* (its converter fuses them; gguf-py lists them no other way) */
                  [MODEL_ROLE_FFN_DOWN_EXPS] = R, [MODEL_ROLE_FFN_GATE_INP_SCALE] = R,
                  [MODEL_ROLE_FFN_DOWN_EXPS_SCALE] = O, [MODEL_ROLE_FFN_PRE_NORM_2] = R,
                  [MODEL_ROLE_FFN_POST_NORM_1] = R, [MODEL_ROLE_FFN_POST_NORM_2] = R },
        .rope_neox = true,
        .act = MODEL_ACT_GELU_TANH,
        .embd_scale_sqrt = true,
        .swa_period = 6,
        .swa_rope = MODEL_SWA_ROPE_OWN_BASE,
        .final_softcap = true,
        .rope_freqs_full_only = true,
        .v_from_k = true,
        .v_norm = true,
        .attn_scale_one = true,
        .quantize = true,
        /* 26B-A4B: softmax routing, renormalised (llama.cpp's gemma4 build_moe_ffn call) */
        .moe = true,
        .moe_renormalise = true,
        .moe_gating = MODEL_MOE_SOFTMAX,
        .moe_dense_beside = true,
    },
};

model_need model_role_need(const model_hparams *hp, model_role r)
{
    return model_role_need_at(hp, r, -1);
}

model_need model_role_need_at(const model_hparams *hp, model_role r, int64_t il)
{
    if (!hp->arch || (unsigned)r >= MODEL_ROLE_COUNT)
        return MODEL_NEED_ABSENT;
    const model_ffn_form form = model_role_info_of(r)->form;
    const bool moe = model_hparams_layer_has_experts(hp, il);
    if ((form == MODEL_FFN_DENSE && moe && !hp->arch->moe_dense_beside) || (form == MODEL_FFN_MOE && !moe))
        return MODEL_NEED_ABSENT;
    const model_attn_form af = model_role_info_of(r)->attn_form;
    if (hp->arch->mla && af != MODEL_ATTN_ANY) { /* the form of latent attention the file's keys say */
        const bool lora = hp->n_lora_q > 0, split = hp->head_dim_k_mla > 0;
        const bool in_form = af == MODEL_ATTN_Q_DIRECT ? !lora : af == MODEL_ATTN_Q_LORA ? lora
                             : af == MODEL_ATTN_KV_B_WHOLE ? !split : split;
        if (!in_form)
            return MODEL_NEED_ABSENT;
    }
    if (model_role_info_of(r)->per_layer_input && hp->n_embd_per_layer <= 0) /* Gemma 4's, in E2B / E4B files only */
        return MODEL_NEED_ABSENT;
    /* a layer that reads an earlier layer's cache makes no keys or values: llama.cpp's gemma4 loader takes them
     * where the file has them (TENSOR_NOT_REQUIRED) and its graph does not read them */
    if ((r == MODEL_ROLE_ATTN_K || r == MODEL_ROLE_ATTN_V || r == MODEL_ROLE_ATTN_K_NORM) && il >= 0 &&
        model_hparams_layer_kv_source(hp, il) != il && hp->arch->need[r] != MODEL_NEED_ABSENT)
        return MODEL_NEED_OPTIONAL;
    if ((r == MODEL_ROLE_ATTN_Q_NORM || r == MODEL_ROLE_ATTN_K_NORM) && hp->arch->qk_norm_from_layers)
        return hp->n_layer >= hp->arch->qk_norm_from_layers ? MODEL_NEED_REQUIRED : MODEL_NEED_ABSENT;
    if (!hp->arch->delta_net && !hp->arch->shortconv && !hp->arch->mamba2 && !hp->arch->mamba1)
        return (model_need)hp->arch->need[r];
    /* a hybrid's layer needs its kind's roles; any layer (il < 0), any kind's */
    const model_need attn = (model_need)hp->arch->need[r], recr = (model_need)hp->arch->need_recurrent[r];
    const model_need ffn = hp->arch->single_block ? (model_need)hp->arch->need_ffn[r] : MODEL_NEED_ABSENT;
    if (il < 0 || !model_role_info_of(r)->per_layer) {
        const model_need most = attn > recr ? attn : recr;
        return most > ffn ? most : ffn;
    }
    if (model_hparams_layer_is_recurrent(hp, il))
        return recr;
    return model_hparams_layer_is_ffn_only(hp, il) ? ffn : attn;
}

const model_arch *model_arch_find(const char *name, size_t len)
{
    for (size_t i = 0; name && i < sizeof archs / sizeof archs[0]; i++)
        if (strlen(archs[i].name) == len && memcmp(archs[i].name, name, len) == 0)
            return &archs[i];
    return NULL;
}

size_t model_arch_count(void)
{
    return sizeof archs / sizeof archs[0];
}

const model_arch *model_arch_at(size_t i)
{
    return i < model_arch_count() ? &archs[i] : NULL;
}

static char arch_names[1024];

static void list_arch_names(void)
{
    size_t at = 0;
    for (size_t i = 0; i < model_arch_count(); i++)
        at += (size_t)snprintf(arch_names + at, sizeof arch_names - at, "%s%s", i ? ", " : "", archs[i].name);
}

const char *model_arch_names(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, list_arch_names);
    return arch_names;
}
