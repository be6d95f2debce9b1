/*
 * Architectures as data, the Gemma families: Gemma 1-4: one entry per architecture (model/arch.c joins the families'
 * tables). The facts are those of llama.cpp's src/models/<arch>.cpp and src/llama-arch.cpp.
 */
#include "arch_table.h"

const model_arch model_archs_gemma[] = {
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
        .q_prescaled = true,
        .quantize = true,
        .weight_scales = MODEL_SCALES_READ | MODEL_SCALES_QKV | MODEL_SCALES_OUT | MODEL_SCALES_OUTPUT,
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
        .q_prescaled = true,
        .quantize = true,
        .weight_scales = MODEL_SCALES_READ | MODEL_SCALES_QKV | MODEL_SCALES_OUT | MODEL_SCALES_OUTPUT,
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
        .q_prescaled = true,
        .quantize = true,
        /* llama.cpp's gemma3 graph: build_qkv and wo_s; its feed-forward block's scales unread */
        .weight_scales = MODEL_SCALES_READ | MODEL_SCALES_QKV | MODEL_SCALES_OUT | MODEL_SCALES_OUTPUT,
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
        /* llama.cpp's gemma4 graph: q/k/v (the values that are k's product with k's scale), wo_s, both dense blocks,
         * the experts */
        .weight_scales = MODEL_SCALES_READ | MODEL_SCALES_QKV | MODEL_SCALES_OUT | MODEL_SCALES_FFN | MODEL_SCALES_EXPS |
                         MODEL_SCALES_OUTPUT,
    },
};
const size_t model_archs_gemma_count = sizeof model_archs_gemma / sizeof model_archs_gemma[0];
