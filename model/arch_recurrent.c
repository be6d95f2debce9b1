/*
 * Architectures as data, the recurrent and hybrid families: LFM2's short convolutions, Mamba-1 and Mamba-2 mixers and
 * the hybrids built on them (Nemotron-H, Granite 4.0-H, Falcon-H1, Jamba): one entry per architecture (model/arch.c
 * joins the families' tables). The facts are those of llama.cpp's src/models/<arch>.cpp and src/llama-arch.cpp.
 */
#include "arch_table.h"

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

const model_arch model_archs_recurrent[] = {
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
        /* llama.cpp's lfm2 graph: build_qkv and wo_s; its dense block, experts and convolutions unscaled */
        .weight_scales = MODEL_SCALES_READ | MODEL_SCALES_QKV | MODEL_SCALES_OUT | MODEL_SCALES_OUTPUT,
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
        /* (lfm2's graph) */
        .weight_scales = MODEL_SCALES_READ | MODEL_SCALES_QKV | MODEL_SCALES_OUT | MODEL_SCALES_OUTPUT,
    },
    {
        .name = "nemotron_h",
        .families = "Nemotron-H (8B, 47B, 56B), Nemotron Nano 2 (9B, 12B)",
        NEMOTRON_H_MIXERS,
        .need_ffn = { [MODEL_ROLE_ATTN_NORM] = R, [MODEL_ROLE_FFN_UP] = R, [MODEL_ROLE_FFN_DOWN] = R },
        .weight_scales = MODEL_SCALES_READ | MODEL_SCALES_QKV | MODEL_SCALES_OUT | MODEL_SCALES_FFN | MODEL_SCALES_EXPS |
                         MODEL_SCALES_SHEXP | MODEL_SCALES_SSM | MODEL_SCALES_OUTPUT,
    },
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
        /* (nemotron_h's graph) */
        .weight_scales = MODEL_SCALES_READ | MODEL_SCALES_QKV | MODEL_SCALES_OUT | MODEL_SCALES_FFN | MODEL_SCALES_EXPS |
                         MODEL_SCALES_SHEXP | MODEL_SCALES_SSM | MODEL_SCALES_OUTPUT,
    },
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
        .weight_scales = MODEL_SCALES_READ | MODEL_SCALES_QKV | MODEL_SCALES_OUT | MODEL_SCALES_SSM |
                         MODEL_SCALES_OUTPUT,
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
        .roles_bare = { MODEL_ROLE_FFN_NORM },
        .quantize = true,
        .weight_scales = MODEL_SCALES_READ | MODEL_SCALES_QKV | MODEL_SCALES_OUT | MODEL_SCALES_SSM |
                         MODEL_SCALES_OUTPUT,
    },
    {
        .name = "mamba2",
        .families = "Mamba-2 (Mamba-Codestral 7B, state-spaces mamba2 130m to 2.7b)",
        .need = { GLOBAL_ROLES },
        .need_recurrent = { MAMBA2_ROLES },
        .single_block = true,
        .mamba2 = true,
        .attention_free = true,
        .quantize = true,
        .weight_scales = MODEL_SCALES_READ | MODEL_SCALES_SSM | MODEL_SCALES_OUTPUT,
    },
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
        .weight_scales = MODEL_SCALES_READ | MODEL_SCALES_QKV | MODEL_SCALES_OUT | MODEL_SCALES_SSM |
                         MODEL_SCALES_OUTPUT,
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
        .weight_scales = MODEL_SCALES_READ | MODEL_SCALES_SSM | MODEL_SCALES_OUTPUT,
    },
};
const size_t model_archs_recurrent_count = sizeof model_archs_recurrent / sizeof model_archs_recurrent[0];
