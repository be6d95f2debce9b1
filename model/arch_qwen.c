/*
 * Architectures as data, the Qwen families: Qwen2 and 3, their mixtures of experts, vision-language text decoders,
 * Qwen3.5 and Qwen3-Next with their gated delta nets: one entry per architecture (model/arch.c joins the families'
 * tables). The facts are those of llama.cpp's src/models/<arch>.cpp and src/llama-arch.cpp.
 */
#include "arch_table.h"

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
    .rope_neox = true, .act = MODEL_ACT_SILU, .ffn_norm_from = MODEL_ROLE_ATTN_POST_NORM, .mrope = MODEL_MROPE_INTERLEAVED, \
    .mrope_partial = true, .delta_net = true, .attn_out_gated = true, .quantize = true

const model_arch model_archs_qwen[] = {
    {
        .name = "qwen",
        .families = "Qwen (1): Qwen-1.8B, -7B, -14B, -72B and their Chat models (Qwen1.5 is qwen2)",
        /* llama.cpp's qwen: q, k and v in one attn_qkv with its bias (c_attn), every head its own (its loader sizes the
         * product n_embd x 3 n_embd), NEOX rotation, SwiGLU n_ff / 2 wide (model_arch.n_ff_halved), an output
         * projection of its own */
        .need = { TIED_GLOBAL_ROLES, [MODEL_ROLE_OUTPUT] = R, [MODEL_ROLE_ATTN_NORM] = R, [MODEL_ROLE_ATTN_QKV] = R,
                  [MODEL_ROLE_ATTN_QKV_BIAS] = R, [MODEL_ROLE_ATTN_OUT] = R, [MODEL_ROLE_FFN_NORM] = R,
                  DENSE_FFN_ROLES },
        .rope_neox = true,
        .act = MODEL_ACT_SILU,
        .no_gqa = true,
        .n_ff_halved = true,
        .quantize = true,
        .weight_scales = MODEL_SCALES_READ | MODEL_SCALES_QKV | MODEL_SCALES_OUT | MODEL_SCALES_OUTPUT,
    },
    {
        .name = "qwen2",
        .families = "Qwen2, Qwen2.5",
        QWEN2_LAYERS,
        .quantize = true,
        /* llama.cpp's qwen2 graph: build_qkv and wo_s; its feed-forward block's scales unread */
        .weight_scales = MODEL_SCALES_READ | MODEL_SCALES_QKV | MODEL_SCALES_OUT | MODEL_SCALES_OUTPUT,
        .norm_gains = "real Qwen2.5 files have a final norm with mean ~7",
        .quantize_70b_layers = 80,
    },
    {
        .name = "qwen3",
        .families = "Qwen3 (dense)",
        QWEN3_LAYERS,
        .quantize = true,
        /* llama.cpp's qwen3 graph: build_qkv, wo_s, the feed-forward block's three */
        .weight_scales = MODEL_SCALES_READ | MODEL_SCALES_QKV | MODEL_SCALES_OUT | MODEL_SCALES_FFN |
                         MODEL_SCALES_OUTPUT,
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
        .weight_scales = MODEL_SCALES_READ | MODEL_SCALES_QKV | MODEL_SCALES_OUT | MODEL_SCALES_OUTPUT,
    },
    {
        .name = "qwen3moe",
        .families = "Qwen3-MoE (30B-A3B, 235B-A22B)",
        QWEN3MOE_LAYERS,
        .quantize = true,
        .weight_scales = MODEL_SCALES_READ | MODEL_SCALES_QKV | MODEL_SCALES_OUT | MODEL_SCALES_EXPS |
                         MODEL_SCALES_OUTPUT,
    },
    {
        .name = "qwen2vl",
        .families = "Qwen2-VL, Qwen2.5-VL (text)",
        QWEN2_LAYERS,
        .mrope = MODEL_MROPE_SECTIONS,
        .quantize = true,
        .weight_scales = MODEL_SCALES_READ | MODEL_SCALES_QKV | MODEL_SCALES_OUT | MODEL_SCALES_OUTPUT,
    },
    {
        .name = "qwen3vl",
        .families = "Qwen3-VL (2B to 32B, text)",
        QWEN3_LAYERS,
        .mrope = MODEL_MROPE_INTERLEAVED,
        .quantize = true,
        .weight_scales = MODEL_SCALES_READ | MODEL_SCALES_QKV | MODEL_SCALES_OUT | MODEL_SCALES_OUTPUT,
    },
    {
        .name = "qwen3vlmoe",
        .families = "Qwen3-VL-MoE (30B-A3B, 235B-A22B, text)",
        QWEN3MOE_LAYERS,
        .mrope = MODEL_MROPE_INTERLEAVED,
        .quantize = true,
        .weight_scales = MODEL_SCALES_READ | MODEL_SCALES_QKV | MODEL_SCALES_OUT | MODEL_SCALES_OUTPUT,
    },
    {
        .name = "qwen35",
        .families = "Qwen3.5, Qwen3.6 (dense: 0.8B to 27B)",
        .need = { QWEN35_ATTENTION_ROLES, DENSE_FFN_ROLES },
        .need_recurrent = { QWEN35_RECURRENT_ROLES, DENSE_FFN_ROLES },
        QWEN35_LAYERS,
        /* llama.cpp's qwen35 graph: build_qkv, wo_s, build_ffn, and the delta net's attn_qkv, attn_gate, ssm_beta,
         * ssm_alpha and ssm_out (build_qkvz) */
        .weight_scales = MODEL_SCALES_READ | MODEL_SCALES_QKV | MODEL_SCALES_OUT | MODEL_SCALES_FFN | MODEL_SCALES_DN |
                         MODEL_SCALES_OUTPUT,
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
        /* llama.cpp's qwen35moe graph: build_qkv, wo_s, the experts and shared expert, and the delta net's products */
        .weight_scales = MODEL_SCALES_READ | MODEL_SCALES_QKV | MODEL_SCALES_OUT | MODEL_SCALES_EXPS |
                         MODEL_SCALES_SHEXP | MODEL_SCALES_DN | MODEL_SCALES_OUTPUT,
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
        .ffn_norm_from = MODEL_ROLE_ATTN_POST_NORM,
        .delta_net = true,
        .attn_out_gated = true,
        .dn_heads_grouped = true,
        .moe = true,
        .moe_renormalise = true,
        .moe_ff_split = true,
        .quantize = true,
        /* llama.cpp's qwen3next graph: build_qkv, wo_s, the experts and shared expert; the delta net's products and a
         * dense block unscaled */
        .weight_scales = MODEL_SCALES_READ | MODEL_SCALES_QKV | MODEL_SCALES_OUT | MODEL_SCALES_EXPS |
                         MODEL_SCALES_SHEXP | MODEL_SCALES_OUTPUT,
    },
};
const size_t model_archs_qwen_count = sizeof model_archs_qwen / sizeof model_archs_qwen[0];
