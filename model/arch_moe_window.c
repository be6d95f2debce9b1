/*
 * Architectures as data, the models whose sliding window sits on the layers the file lists and whose experts or
 * attention have a limit or a gate of their own: Xiaomi MiMo-V2, deepgrove Maple, StepFun Step-3.5, poolside Laguna,
 * Spark X2.5. One entry per architecture (model/arch.c joins the families' tables); the facts are those of llama.cpp's
 * src/models/<arch>.cpp and src/llama-arch.cpp.
 */
#include "arch_table.h"

const model_arch model_archs_moe_window[] = {
    {
        .name = "mimo2",
        .families = "Xiaomi MiMo-V2 (V2-Flash, V2.5, V2.5-Pro)",
        /* llama.cpp's mimo2: q/k/v apart or fused (the values value_length wide), optional biases and per-head sinks,
         * NEOX rotation of rope.dimension_count, the sliding window (a key it requires) on the layers
         * sliding_window_pattern lists (required: one bool per layer) with rope.freq_base_swa's base (10000 where absent)
         * and no scaling, key/value heads per layer; the attention's output times attention.value_scale; a dense block
         * where a layer has no router, elsewhere experts chosen by sigmoid scores plus exp_probs_b where present,
         * renormalised; the trailing nextn (multi-token prediction) blocks are not run */
        .need = { TIED_GLOBAL_ROLES, [MODEL_ROLE_OUTPUT] = R, [MODEL_ROLE_ATTN_NORM] = R, [MODEL_ROLE_ATTN_QKV] = O,
                  [MODEL_ROLE_ATTN_QKV_BIAS] = O, [MODEL_ROLE_ATTN_Q] = O, [MODEL_ROLE_ATTN_K] = O,
                  [MODEL_ROLE_ATTN_V] = O, [MODEL_ROLE_ATTN_Q_BIAS] = O, [MODEL_ROLE_ATTN_K_BIAS] = O,
                  [MODEL_ROLE_ATTN_V_BIAS] = O, [MODEL_ROLE_ATTN_OUT] = R, [MODEL_ROLE_ATTN_SINKS] = O,
                  [MODEL_ROLE_FFN_NORM] = R, DENSE_FFN_ROLES, EXPERT_ROLES, [MODEL_ROLE_FFN_EXP_PROBS_B] = O },
        .rope_neox = true,
        .act = MODEL_ACT_SILU,
        .swa_period = 4, /* never used: the file lists the layers */
        .swa_window_required = true,
        .swa_pattern_required = true,
        .swa_rope = MODEL_SWA_ROPE_OWN_BASE,
        .attn_value_scale_key = true,
        .value_length_own = true,
        .role_by_layer = MODEL_ROLE_ATTN_SINKS,
        .moe = true,
        .moe_gating = MODEL_MOE_SIGMOID,
        .moe_renormalise = true,
        .moe_keys = MODEL_MOE_KEY_FF_EXP_LAYERS,
        .moe_where_router = true,
        .quantize = true,
        /* llama.cpp's mimo2 graph: wo_s alone (q/k/v, dense blocks and experts unscaled) */
        .weight_scales = MODEL_SCALES_READ | MODEL_SCALES_OUT | MODEL_SCALES_OUTPUT,
    },
    {
        .name = "maple",
        .families = "deepgrove Maple (maple-preview)",
        /* llama.cpp's maple: q/k/v apart (optional biases: its create_tensor_qkv; the fused attn_qkv it also takes no
         * converter writes), per-head q/k RMSNorms, the sliding window (a key it requires) on the layers
         * sliding_window_pattern lists (required: one bool per layer), which alone rotate (NEOX, rope.freq_base_swa's
         * base where present, the global scaling); the others attend without positions; experts on every layer,
         * softmax renormalised, their SwiGLU limited by swiglu_clamp_exp (required; the converter's 7.0) as
         * ggml_swiglu_clamp: SiLU(min(gate, it)) * clamp(up, -it, it) */
        .need = { TIED_GLOBAL_ROLES, [MODEL_ROLE_OUTPUT] = R, ATTENTION_ROLES, [MODEL_ROLE_ATTN_Q_BIAS] = O,
                  [MODEL_ROLE_ATTN_K_BIAS] = O, [MODEL_ROLE_ATTN_V_BIAS] = O, [MODEL_ROLE_ATTN_Q_NORM] = R,
                  [MODEL_ROLE_ATTN_K_NORM] = R, EXPERT_ROLES },
        .rope_neox = true,
        .act = MODEL_ACT_SILU,
        .swa_period = 4, /* never used: the file lists the layers */
        .swa_window_required = true,
        .swa_pattern_required = true,
        .swa_rope = MODEL_SWA_ROPE_GLOBAL,
        .rope_swa_only = true,
        .moe = true,
        .moe_renormalise = true,
        .moe_keys = MODEL_MOE_KEY_FF_EXP_LAYERS,
        .swiglu_clamp_key = MODEL_NEED_REQUIRED,
        .quantize = true,
        .weight_scales = MODEL_SCALES_READ | MODEL_SCALES_QKV | MODEL_SCALES_OUT | MODEL_SCALES_OUTPUT,
    },
    {
        .name = "step35",
        .families = "StepFun Step-3.5 (Step-3.5-Flash)",
        /* llama.cpp's step35: head counts and key/value heads per layer (the sliding layers' own), q/k/v apart or fused,
         * optional per-head q/k RMSNorms, NEOX rotation of the whole head on the sliding layers (rope.freq_base_swa's
         * base, 10000 where absent, no scaling) and of half of it on the full ones (the global rope, rope_freqs there
         * alone), the sliding window (a key it requires) on the layers sliding_window_pattern lists (required), a head-wise
         * gate on the attention's output where a layer has attn_gate; a dense block where a layer has no router, else
         * experts by the file's gating function (sigmoid where it has none) plus exp_probs_b where present, its
         * renormalisation and scale, beside an ungated shared expert of expert_shared_feed_forward_length; the SwiGLUs
         * limited by swiglu_clamp_exp and swiglu_clamp_shexp where present (SiLU(gate) at most the limit); the trailing
         * nextn (multi-token prediction) blocks are not run */
        .need = { TIED_GLOBAL_ROLES, [MODEL_ROLE_OUTPUT] = R, [MODEL_ROLE_ROPE_FREQS] = O, [MODEL_ROLE_ATTN_NORM] = R,
                  [MODEL_ROLE_ATTN_QKV] = O, [MODEL_ROLE_ATTN_QKV_BIAS] = O, [MODEL_ROLE_ATTN_Q] = O,
                  [MODEL_ROLE_ATTN_K] = O, [MODEL_ROLE_ATTN_V] = O, [MODEL_ROLE_ATTN_Q_BIAS] = O,
                  [MODEL_ROLE_ATTN_K_BIAS] = O, [MODEL_ROLE_ATTN_V_BIAS] = O, [MODEL_ROLE_ATTN_Q_NORM] = O,
                  [MODEL_ROLE_ATTN_K_NORM] = O, [MODEL_ROLE_ATTN_GATE] = O, [MODEL_ROLE_ATTN_OUT] = R,
                  [MODEL_ROLE_FFN_NORM] = R, DENSE_FFN_ROLES, EXPERT_ROLES, [MODEL_ROLE_FFN_EXP_PROBS_B] = O,
                  [MODEL_ROLE_FFN_GATE_SHEXP] = R, [MODEL_ROLE_FFN_UP_SHEXP] = R, [MODEL_ROLE_FFN_DOWN_SHEXP] = R },
        .rope_neox = true,
        .act = MODEL_ACT_SILU,
        .heads_by_layer = true,
        .swa_period = 4, /* never used: the file lists the layers */
        .swa_window_required = true,
        .swa_pattern_required = true,
        .swa_rope = MODEL_SWA_ROPE_OWN_BASE,
        .rope_freqs_full_only = true,
        .rope_full_half = true,
        .attn_gate_per_head = true,
        .role_by_layer = MODEL_ROLE_ATTN_GATE, /* a layer's gate where it has one */
        .moe = true,
        .moe_gating = MODEL_MOE_SIGMOID,
        .moe_keys = MODEL_MOE_KEY_GATING | MODEL_MOE_KEY_NORM | MODEL_MOE_KEY_SCALE | MODEL_MOE_KEY_FF_EXP_LAYERS,
        .moe_where_router = true,
        .swiglu_clamp_key = MODEL_NEED_OPTIONAL,
        .swiglu_clamp_shexp_key = MODEL_NEED_OPTIONAL,
        .swiglu_clamp_silu_first = true,
        .quantize = true,
        .weight_scales = MODEL_SCALES_READ | MODEL_SCALES_QKV | MODEL_SCALES_OUT | MODEL_SCALES_OUTPUT,
    },
    {
        .name = "laguna",
        .families = "poolside Laguna (XS.2, S.2, M.1)",
        /* llama.cpp's laguna: head counts (and key/value heads) per layer, q/k/v with optional biases (its
         * create_tensor_qkv would take them fused too, which gguf-py lists no name for and no converter writes),
         * per-head q/k RMSNorms before the NEOX rotation; the attention's output times softplus(x Wgate) before the
         * output product, attn_gate a gate per head or per value as each layer's tensor is wide; where
         * attention.sliding_window > 0 the window on three layers in four, the first of each four full (or as
         * sliding_window_pattern says), the sliding layers rotating rope.dimension_count_swa of the head with
         * rope.freq_base_swa's base (the global one where absent) and no scaling, the full ones with the global rope
         * (YaRN in the released files); the first leading_dense_block_count (a key it requires) layers dense, the rest
         * experts chosen by the file's gating function (sigmoid where absent) plus exp_probs_b, their renormalisation
         * and scale, beside one ungated shared expert always added (expert_shared_feed_forward_length wide, or
         * expert_shared_count experts' width, one where the key is absent); output.weight optional (tied) */
        .need = { DECODER_ROLES, [MODEL_ROLE_ATTN_Q_BIAS] = O, [MODEL_ROLE_ATTN_K_BIAS] = O,
                  [MODEL_ROLE_ATTN_V_BIAS] = O, [MODEL_ROLE_ATTN_Q_NORM] = R, [MODEL_ROLE_ATTN_K_NORM] = R,
                  [MODEL_ROLE_ATTN_GATE] = R, DENSE_FFN_ROLES, EXPERT_ROLES,
                  [MODEL_ROLE_FFN_EXP_PROBS_B] = R, [MODEL_ROLE_FFN_GATE_SHEXP] = R, [MODEL_ROLE_FFN_UP_SHEXP] = R,
                  [MODEL_ROLE_FFN_DOWN_SHEXP] = R },
        .rope_neox = true,
        .act = MODEL_ACT_SILU,
        .heads_by_layer = true,
        .swa_period = 4,
        .swa_dense_first = true,
        .swa_rope = MODEL_SWA_ROPE_BASE_UNSCALED,
        .attn_gate_proj = true,
        .attn_gate_either = true,
        .attn_gate_softplus = true,
        .moe = true,
        .moe_gating = MODEL_MOE_SIGMOID,
        .moe_keys = MODEL_MOE_KEY_GATING | MODEL_MOE_KEY_NORM | MODEL_MOE_KEY_SCALE | MODEL_MOE_KEY_SHARED |
                    MODEL_MOE_KEY_SHARED_TOTAL | MODEL_MOE_KEY_DENSE_LEAD | MODEL_MOE_KEY_DENSE_LEAD_REQUIRED |
                    MODEL_MOE_KEY_FF_EXP_LAYERS,
        .shexp_count_default = 1,
        .quantize = true,
        /* llama.cpp's laguna graph: build_qkv and wo_s; its gate's, dense blocks' and shared expert's scales unread */
        .weight_scales = MODEL_SCALES_READ | MODEL_SCALES_QKV | MODEL_SCALES_OUT,
    },
    {
        .name = "spark2_5",
        .families = "Spark X2.5 (XHToken, 1.7B)",
        /* llama.cpp's spark2_5: a dense model; q/k/v fused (its converter's; the loader's create_tensor_qkv would take
         * them apart too, which gguf-py lists no names for and no converter writes), NEOX rotation of
         * rope.dimension_count on the full layers and rope.dimension_count_swa on the sliding ones, the sliding window
         * (a key it requires) on the layers sliding_window_pattern lists (required) with the global rope
         * (rope.freq_base_swa's base where present), a head-wise gate on the attention's output in every layer, a
         * GeGLU block (ggml's GELU; the checkpoint's is the exact one) */
        .need = { TIED_GLOBAL_ROLES, [MODEL_ROLE_OUTPUT] = O, [MODEL_ROLE_ATTN_NORM] = R, [MODEL_ROLE_ATTN_QKV] = R,
                  [MODEL_ROLE_ATTN_QKV_BIAS] = O, [MODEL_ROLE_ATTN_GATE] = R, [MODEL_ROLE_ATTN_OUT] = R,
                  [MODEL_ROLE_FFN_NORM] = R, DENSE_FFN_ROLES },
        .rope_neox = true,
        .act = MODEL_ACT_GELU_TANH,
        .swa_period = 4, /* never used: the file lists the layers */
        .swa_window_required = true,
        .swa_pattern_required = true,
        .swa_rope = MODEL_SWA_ROPE_GLOBAL,
        .attn_gate_per_head = true,
        .quantize = true,
        .weight_scales = MODEL_SCALES_READ | MODEL_SCALES_QKV | MODEL_SCALES_OUT,
    },
};
const size_t model_archs_moe_window_count = sizeof model_archs_moe_window / sizeof model_archs_moe_window[0];
