/*
 * Architectures as data, the families with mixture-of-experts members, and their dense siblings: AFM (arcee),
 * Hunyuan and Tencent Hy3, gpt-oss, GLM-4 and ChatGLM, MiniMax-M2, OLMoE, DBRX, Snowflake Arctic, ERNIE 4.5, Ling 1
 * and 2, dots.llm1, DeepSeek-MoE, DeepSeek-V2/V3, Mistral 4, and the latent attention of MiniCPM3 and PLM: one entry
 * per architecture (model/arch.c joins the families' tables).
 * The facts are those of llama.cpp's src/models/<arch>.cpp and src/llama-arch.cpp.
 */
#include "arch_table.h"

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
    .mla = MODEL_MLA_DEEPSEEK2

/* Hunyuan's dense layers (llama.cpp's hunyuan-dense and hunyuan_vl share them and their loader) */
#define HUNYUAN_DENSE_LAYERS                                                                                  \
    .need = { DENSE_DECODER_ROLES, [MODEL_ROLE_ATTN_Q_NORM] = R, [MODEL_ROLE_ATTN_K_NORM] = R,                 \
              [MODEL_ROLE_ATTN_Q_BIAS] = O, [MODEL_ROLE_ATTN_K_BIAS] = O, [MODEL_ROLE_ATTN_V_BIAS] = O },        \
    .rope_neox = true, .act = MODEL_ACT_SILU, .qk_norm_after_rope = true, .rope_base_alpha = true,              \
    .expert_count_one_dense = true

const model_arch model_archs_moe[] = {
    {
        .name = "arcee",
        .families = "Arcee AFM-4.5B",
        /* llama.cpp's arcee: llama's layers (its converter is LlamaModel's: NORM rotation, rope_freqs optional) with an
         * ungated feed-forward block, relu(x Wup)^2 Wdown */
        .need = { DECODER_ROLES, [MODEL_ROLE_FFN_UP] = R, [MODEL_ROLE_FFN_DOWN] = R, [MODEL_ROLE_ROPE_FREQS] = O,
                  [MODEL_ROLE_ATTN_Q_BIAS] = O, [MODEL_ROLE_ATTN_K_BIAS] = O, [MODEL_ROLE_ATTN_V_BIAS] = O },
        .act = MODEL_ACT_RELU_SQR,
        .quantize = true,
        .weight_scales = MODEL_SCALES_READ | MODEL_SCALES_QKV | MODEL_SCALES_OUT | MODEL_SCALES_OUTPUT,
    },
    {
        .name = "hunyuan-dense",
        .families = "Hunyuan dense (0.5B to 7B)",
        /* llama.cpp's hunyuan-dense (hunyuan-vl's graph): llama's layers with q/k/v biases optional, NEOX rotation, the
         * per-head q/k RMSNorms after it, the base scaled by rope.scaling.alpha; an expert_count of 1 is dense */
        HUNYUAN_DENSE_LAYERS,
        .quantize = true,
        .weight_scales = MODEL_SCALES_READ | MODEL_SCALES_QKV | MODEL_SCALES_OUT | MODEL_SCALES_OUTPUT,
    },
    {
        .name = "hunyuan_vl",
        .families = "HunyuanOCR (text)",
        /* llama.cpp's hunyuan_vl: hunyuan-dense's layers and loader, with XD-RoPE's rotary sections where the file has
         * them (rope.dimension_sections, four: M-RoPE's contiguous sections, a text token at its position in the first
         * three and at 0 in the fourth), NEOX rotation without */
        HUNYUAN_DENSE_LAYERS,
        .mrope = MODEL_MROPE_SECTIONS,
        .mrope_optional = true,
        .quantize = true,
        .weight_scales = MODEL_SCALES_READ | MODEL_SCALES_QKV | MODEL_SCALES_OUT | MODEL_SCALES_OUTPUT,
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
        .weight_scales = MODEL_SCALES_READ | MODEL_SCALES_QKV | MODEL_SCALES_OUT | MODEL_SCALES_OUTPUT,
    },
    {
        .name = "hy_v3",
        .families = "Tencent Hy3 (HY V3)",
        /* llama.cpp's hy_v3: q/k/v with optional biases (its create_tensor_qkv would take them fused too, which
         * gguf-py lists no name for and no converter writes), per-head q/k RMSNorms before the NEOX rotation of the
         * whole head; a dense block where a layer has no router, elsewhere experts chosen by sigmoid scores
         * (expert_gating_func where the file sets one) plus exp_probs_b where present (named without .bias), their
         * weights renormalised where expert_weights_norm says and scaled by expert_weights_scale, beside an ungated
         * shared expert always added (expert_shared_feed_forward_length wide, an expert's width by default); the
         * trailing nextn (multi-token prediction) blocks are not run */
        .need = { DECODER_ROLES, [MODEL_ROLE_ATTN_Q_BIAS] = O, [MODEL_ROLE_ATTN_K_BIAS] = O,
                  [MODEL_ROLE_ATTN_V_BIAS] = O, [MODEL_ROLE_ATTN_Q_NORM] = R, [MODEL_ROLE_ATTN_K_NORM] = R,
                  DENSE_FFN_ROLES, EXPERT_ROLES, [MODEL_ROLE_FFN_EXP_PROBS_B] = O, [MODEL_ROLE_FFN_GATE_SHEXP] = R,
                  [MODEL_ROLE_FFN_UP_SHEXP] = R, [MODEL_ROLE_FFN_DOWN_SHEXP] = R },
        .rope_neox = true,
        .act = MODEL_ACT_SILU,
        .moe = true,
        .moe_gating = MODEL_MOE_SIGMOID,
        .moe_keys = MODEL_MOE_KEY_GATING | MODEL_MOE_KEY_NORM | MODEL_MOE_KEY_SCALE | MODEL_MOE_KEY_FF_EXP_LAYERS,
        .moe_where_router = true,
        .moe_ff_split = true,
        .shexp_one_key_wide = true,
        .roles_bare = { MODEL_ROLE_FFN_EXP_PROBS_B },
        .quantize = true,
        .weight_scales = MODEL_SCALES_READ | MODEL_SCALES_QKV | MODEL_SCALES_OUT | MODEL_SCALES_FFN |
                         MODEL_SCALES_EXPS | MODEL_SCALES_SHEXP | MODEL_SCALES_OUTPUT,
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
        .ffn_norm_from = MODEL_ROLE_ATTN_POST_NORM,
        .quantize = true,
        .weight_scales = MODEL_SCALES_READ | MODEL_SCALES_QKV | MODEL_SCALES_OUT | MODEL_SCALES_OUTPUT,
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
        .weight_scales = MODEL_SCALES_READ | MODEL_SCALES_QKV | MODEL_SCALES_OUT | MODEL_SCALES_OUTPUT,
    },
    {
        .name = "chatglm",
        .families = "GLM-4-9B (chat, 1M), ChatGLM3-6B, GLM-Edge (GLM-4-0414 is glm4)",
        /* llama.cpp's chatglm: q, k and v in one attn_qkv with its bias as the converter writes query_key_value, or
         * apart (create_tensor_qkv takes either, their biases optional), NORM rotary of the first rope.dimension_count
         * values of each head, gate and up fused in ffn_up (dense_h_to_4h), no bias on the attention's output; the
         * output the token embedding where the file has none */
        .need = { GLOBAL_ROLES, [MODEL_ROLE_ATTN_NORM] = R, [MODEL_ROLE_ATTN_QKV] = O, [MODEL_ROLE_ATTN_QKV_BIAS] = O,
                  [MODEL_ROLE_ATTN_Q] = O, [MODEL_ROLE_ATTN_K] = O, [MODEL_ROLE_ATTN_V] = O,
                  [MODEL_ROLE_ATTN_Q_BIAS] = O, [MODEL_ROLE_ATTN_K_BIAS] = O, [MODEL_ROLE_ATTN_V_BIAS] = O,
                  [MODEL_ROLE_ATTN_OUT] = R, [MODEL_ROLE_FFN_NORM] = R, [MODEL_ROLE_FFN_UP] = R,
                  [MODEL_ROLE_FFN_DOWN] = R },
        .act = MODEL_ACT_SILU,
        .gate_up_fused = true,
        .quantize = true,
        .weight_scales = MODEL_SCALES_READ | MODEL_SCALES_QKV | MODEL_SCALES_OUT | MODEL_SCALES_OUTPUT,
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
        .ffn_norm_from = MODEL_ROLE_ATTN_POST_NORM,
        .mrope = MODEL_MROPE_SECTIONS, /* GLM-4.5V's text decoder, where the file has sections */
        .mrope_optional = true,
        .quantize = true,
        .weight_scales = MODEL_SCALES_READ | MODEL_SCALES_QKV | MODEL_SCALES_OUT | MODEL_SCALES_OUTPUT,
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
        .weight_scales = MODEL_SCALES_READ | MODEL_SCALES_QKV | MODEL_SCALES_OUT | MODEL_SCALES_OUTPUT,
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
        .weight_scales = MODEL_SCALES_READ | MODEL_SCALES_QKV | MODEL_SCALES_OUT | MODEL_SCALES_OUTPUT,
    },
    {
        .name = "dbrx",
        .families = "DBRX (Base, Instruct)",
        /* llama.cpp's dbrx loader and graph: LayerNorms without bias, q, k and v in one attn_qkv clamped to
         * +-attention.clamp_kqv (a key it requires), NEOX rotation of whole heads; the norm before the experts is
         * attn_output_norm (the converter's name for norm_2); experts feed_forward_length wide, chosen by softmax and
         * renormalised (moe_normalize_expert_weights' L1 norm), no scale read; an output projection of its own */
        .need = { TIED_GLOBAL_ROLES, [MODEL_ROLE_OUTPUT] = R, [MODEL_ROLE_ATTN_NORM] = R, [MODEL_ROLE_ATTN_QKV] = R,
                  [MODEL_ROLE_ATTN_OUT] = R, [MODEL_ROLE_ATTN_OUT_NORM] = R, EXPERT_ROLES },
        .rope_neox = true,
        .act = MODEL_ACT_SILU,
        .norm_layer = true,
        .clamp_kqv_key = MODEL_NEED_REQUIRED,
        .ffn_norm_from = MODEL_ROLE_ATTN_OUT_NORM,
        .moe = true,
        .moe_renormalise = true,
        .moe_experts_ff_wide = true,
        .quantize = true,
        .weight_scales = MODEL_SCALES_READ | MODEL_SCALES_QKV | MODEL_SCALES_OUT | MODEL_SCALES_OUTPUT,
    },
    {
        .name = "arctic",
        .families = "Snowflake Arctic (Base, Instruct)",
        /* llama.cpp's arctic loader and graph: llama's attention (q, k and v apart, their biases optional, NORM rotation
         * of whole heads, head_count x key_length = embedding_length), then a dense SwiGLU block embedding_length wide on
         * ffn_norm of the attention's residual, added to it, and beside it experts on ffn_norm_exps of the layer's
         * input (HF's parallel_attn_mlp_res: the experts read the pre-attention input), chosen by softmax and
         * renormalised, each feed_forward_length wide, no scale read; their output added last */
        .need = { DENSE_DECODER_ROLES, EXPERT_ROLES, [MODEL_ROLE_FFN_NORM_EXPS] = R, [MODEL_ROLE_ATTN_Q_BIAS] = O,
                  [MODEL_ROLE_ATTN_K_BIAS] = O, [MODEL_ROLE_ATTN_V_BIAS] = O },
        .act = MODEL_ACT_SILU,
        .moe = true,
        .moe_renormalise = true,
        .moe_experts_ff_wide = true,
        .moe_dense_residual = true,
        .quantize = true,
        .weight_scales = MODEL_SCALES_READ | MODEL_SCALES_QKV | MODEL_SCALES_OUT | MODEL_SCALES_OUTPUT,
    },
    {
        .name = "grok",
        .families = "Grok-1, Grok-2",
        /* llama.cpp's grok loader and graph: NEOX rotation (YaRN's keys read, beta_fast 8 by default), q.k unscaled
         * then soft-capped with attention.output_scale inside the tanh (30 and 1/sqrt(128) by default), flash attention
         * always off; attn_output_norm after the attention; tanh-GELU experts chosen by softmax and renormalised, each
         * expert_feed_forward_length wide (else feed_forward_length), a dense block beside them where the file has
         * one (Grok-2), the sum times sqrt(2)/2; post_ffw_norm after (Grok-1's layer_output_norm in its place where
         * the file has that); the embeddings, the logits and the scores multiplied by the file's scales or Grok-1's
         * (78.38, 0.577, 0.0884), the logits soft-capped where final_logit_softcapping says */
        .need = { GLOBAL_ROLES, ATTENTION_ROLES, [MODEL_ROLE_ATTN_OUT_NORM] = R, EXPERT_ROLES,
                  [MODEL_ROLE_FFN_GATE] = O, [MODEL_ROLE_FFN_UP] = O, [MODEL_ROLE_FFN_DOWN] = O,
                  [MODEL_ROLE_FFN_POST_NORM] = O, [MODEL_ROLE_LAYER_OUT_NORM] = O },
        .rope_neox = true,
        .act = MODEL_ACT_GELU_TANH,
        .moe = true,
        .moe_renormalise = true,
        .moe_keys = MODEL_MOE_KEY_FF_EXP_LAYERS,
        .moe_dense_mean = true,
        .attn_post_norm_from = MODEL_ROLE_ATTN_OUT_NORM,
        .ffn_post_norm_or = MODEL_ROLE_LAYER_OUT_NORM,
        .attn_scale_one = true,
        .attn_softcap_default = 30.0f,
        .attn_out_scale_default = 0.08838834764831845f,
        .embd_scale_default = 78.38367176906169f,
        .logit_scale_default = 0.5773502691896257f,
        .final_softcap = true,
        .yarn_keys = MODEL_YARN_KEY_BETAS | MODEL_YARN_KEY_EXT_ATTN,
        .yarn_beta_fast_default = 8.0f,
        .flash_attn_never = true,
        .quantize = true,
        .weight_scales = MODEL_SCALES_READ | MODEL_SCALES_QKV | MODEL_SCALES_OUT | MODEL_SCALES_OUTPUT,
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
        .weight_scales = MODEL_SCALES_READ | MODEL_SCALES_QKV | MODEL_SCALES_OUT | MODEL_SCALES_OUTPUT,
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
        .weight_scales = MODEL_SCALES_READ | MODEL_SCALES_QKV | MODEL_SCALES_OUT | MODEL_SCALES_OUTPUT,
    },
    {
        .name = "bailingmoe",
        .families = "Ling-lite, Ling-plus, Ling-Coder-lite (Ling 1.x; Ling 2.0 is bailingmoe2)",
        /* llama.cpp's bailingmoe loader and graph: q, k and v apart as the converter splits them (create_tensor_qkv
         * would take them fused too, a form gguf-py does not list for it and no converter writes), their biases
         * optional, NORM rotation, experts on every layer (leading_dense_block_count is read and not used), chosen by
         * softmax, renormalised and scaled as expert_weights_norm and _scale say, expert_shared_count shared experts
         * an expert wide each, always added (no gate of their own); an output projection of its own */
        .need = { TIED_GLOBAL_ROLES, [MODEL_ROLE_OUTPUT] = R, ATTENTION_ROLES, [MODEL_ROLE_ATTN_Q_BIAS] = O,
                  [MODEL_ROLE_ATTN_K_BIAS] = O, [MODEL_ROLE_ATTN_V_BIAS] = O, EXPERT_ROLES,
                  [MODEL_ROLE_FFN_GATE_SHEXP] = R, [MODEL_ROLE_FFN_UP_SHEXP] = R, [MODEL_ROLE_FFN_DOWN_SHEXP] = R },
        .act = MODEL_ACT_SILU,
        .moe = true,
        .moe_keys = MODEL_MOE_KEY_NORM | MODEL_MOE_KEY_SCALE | MODEL_MOE_KEY_SHARED,
        .quantize = true,
        .weight_scales = MODEL_SCALES_READ | MODEL_SCALES_QKV | MODEL_SCALES_OUT | MODEL_SCALES_OUTPUT,
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
        .weight_scales = MODEL_SCALES_READ | MODEL_SCALES_QKV | MODEL_SCALES_OUT | MODEL_SCALES_OUTPUT,
    },
    {
        .name = "exaone-moe",
        .families = "K-EXAONE (236B-A23B), EXAONE MoE",
        /* llama.cpp's exaone-moe: EXAONE 4's attention under pre-norms (per-head q/k norms, q/k/v biases optional
         * there, Llama 3's rope_freqs where present), the sliding window always on (its size a key the loader
         * requires, the layers by sliding_window_pattern, else three in four), where the sliding-window layers alone
         * rotate (NEOX) and the others attend without positions; the first leading_dense_block_count layers dense, the
         * rest experts chosen by the file's gating function (required) plus exp_probs_b where present, its
         * renormalisation and scale, beside one ungated shared expert of expert_shared_feed_forward_length; prediction
         * blocks not run */
        .need = { TIED_GLOBAL_ROLES, [MODEL_ROLE_OUTPUT] = R, [MODEL_ROLE_ROPE_FREQS] = O, ATTENTION_ROLES,
                  [MODEL_ROLE_ATTN_Q_BIAS] = O, [MODEL_ROLE_ATTN_K_BIAS] = O, [MODEL_ROLE_ATTN_V_BIAS] = O,
                  [MODEL_ROLE_ATTN_Q_NORM] = R, [MODEL_ROLE_ATTN_K_NORM] = R, DENSE_FFN_ROLES, EXPERT_ROLES,
                  [MODEL_ROLE_FFN_EXP_PROBS_B] = O, [MODEL_ROLE_FFN_GATE_SHEXP] = R, [MODEL_ROLE_FFN_UP_SHEXP] = R,
                  [MODEL_ROLE_FFN_DOWN_SHEXP] = R },
        .rope_neox = true,
        .act = MODEL_ACT_SILU,
        .moe = true,
        .moe_gating = MODEL_MOE_SIGMOID,
        .moe_keys = MODEL_MOE_KEY_GATING | MODEL_MOE_KEY_GATING_REQUIRED | MODEL_MOE_KEY_NORM | MODEL_MOE_KEY_SCALE |
                    MODEL_MOE_KEY_DENSE_LEAD | MODEL_MOE_KEY_FF_EXP_LAYERS,
        .shexp_one_key_wide = true,
        .swa_period = 4,
        .swa_window_default = 128,
        .swa_window_required = true,
        .swa_rope = MODEL_SWA_ROPE_GLOBAL,
        .rope_swa_only = true,
        .quantize = true,
        .weight_scales = MODEL_SCALES_READ | MODEL_SCALES_QKV | MODEL_SCALES_OUT | MODEL_SCALES_OUTPUT,
    },
    {
        .name = "afmoe",
        .families = "Arcee Trinity (Nano, Mini, Large: AFMoE)",
        /* llama.cpp's afmoe: the embeddings times sqrt(n_embd); per-head q/k norms, NEOX rotation but on every fourth
         * layer (NoPE: n_no_rope_layer_step's default 4), the sliding window where attention.sliding_window > 0 on three
         * layers in four (or as sliding_window_pattern marks) with the global rope (rope.freq_base_swa's base where
         * present); the attention's output times sigmoid(x Wgate) before the output product (attn_gate_proj), norms
         * after the attention and after the feed-forward block (post_attention_norm, post_ffw_norm) as well as before;
         * the first leading_dense_block_count layers dense, the rest experts chosen by the file's gating function
         * (sigmoid where absent) plus exp_probs_b, its renormalisation and scale, beside expert_shared_count ungated
         * shared experts of an expert's width; the output the token embedding where the file has none */
        .need = { GLOBAL_ROLES, ATTENTION_ROLES, [MODEL_ROLE_ATTN_Q_BIAS] = O, [MODEL_ROLE_ATTN_K_BIAS] = O,
                  [MODEL_ROLE_ATTN_V_BIAS] = O, [MODEL_ROLE_ATTN_Q_NORM] = R, [MODEL_ROLE_ATTN_K_NORM] = R,
                  [MODEL_ROLE_ATTN_GATE] = R, [MODEL_ROLE_ATTN_POST_NORM] = R, [MODEL_ROLE_FFN_POST_NORM] = R,
                  DENSE_FFN_ROLES, EXPERT_ROLES, [MODEL_ROLE_FFN_EXP_PROBS_B] = R, [MODEL_ROLE_FFN_GATE_SHEXP] = O,
                  [MODEL_ROLE_FFN_UP_SHEXP] = O, [MODEL_ROLE_FFN_DOWN_SHEXP] = O },
        .rope_neox = true,
        .act = MODEL_ACT_SILU,
        .embd_scale_sqrt = true,
        .no_rope_period = 4,
        .swa_period = 4,
        .swa_rope = MODEL_SWA_ROPE_GLOBAL,
        .attn_gate_proj = true,
        .llama_aborts_no_window = "its afmoe graph always asks for a sliding-window cache (build_attn_inp_kv_iswa), and "
                                  "without a window the context holds a plain one: a static_cast of the wrong type, a "
                                  "segmentation fault",
        .moe = true,
        .moe_gating = MODEL_MOE_SIGMOID,
        .moe_keys = MODEL_MOE_KEY_GATING | MODEL_MOE_KEY_NORM | MODEL_MOE_KEY_SCALE | MODEL_MOE_KEY_SHARED |
                    MODEL_MOE_KEY_SHARED_REQUIRED | MODEL_MOE_KEY_DENSE_LEAD | MODEL_MOE_KEY_FF_EXP_LAYERS,
        .quantize = true,
        .weight_scales = MODEL_SCALES_READ | MODEL_SCALES_QKV | MODEL_SCALES_OUT | MODEL_SCALES_OUTPUT,
    },
    {
        .name = "mellum",
        .families = "Mellum 2 (JetBrains, 12B-A2.5B)",
        /* llama.cpp's mellum: qwen3moe's layers (per-head q/k norms, softmax routing renormalised, experts
         * feed_forward_length / experts used wide where the file has no width of theirs, q/k/v biases optional there),
         * an output projection of its own; where attention.sliding_window > 0, the window on three layers in four (or
         * as sliding_window_pattern marks), those layers rotated with the global base and no scaling of any kind */
        .need = { TIED_GLOBAL_ROLES, [MODEL_ROLE_OUTPUT] = R, ATTENTION_ROLES, [MODEL_ROLE_ATTN_Q_BIAS] = O,
                  [MODEL_ROLE_ATTN_K_BIAS] = O, [MODEL_ROLE_ATTN_V_BIAS] = O, [MODEL_ROLE_ATTN_Q_NORM] = R,
                  [MODEL_ROLE_ATTN_K_NORM] = R, EXPERT_ROLES },
        .rope_neox = true,
        .act = MODEL_ACT_SILU,
        .moe = true,
        .moe_renormalise = true,
        .moe_ff_split = true,
        .swa_period = 4,
        .swa_rope = MODEL_SWA_ROPE_UNSCALED,
        .quantize = true,
        .weight_scales = MODEL_SCALES_READ | MODEL_SCALES_QKV | MODEL_SCALES_OUT | MODEL_SCALES_EXPS |
                         MODEL_SCALES_OUTPUT,
    },
    {
        .name = "smallthinker",
        .families = "SmallThinker-4B-A0.6B, SmallThinker-21B-A3B",
        /* llama.cpp's smallthinker: llama-like attention (q/k/v apart, optional biases; its loader would take them
         * fused too, which gguf-py does not list for it: no converter writes that), NEOX, experts only, their router
         * reading the layer's input before its attention norm, ReGLU experts (relu(gate) * up), chosen by the file's
         * gating function (softmax without one), renormalised; with attention.sliding_window > 0 a window of 4096
         * whatever the key says on every layer but the first of each four (dense first), which rotate, the full
         * ones attending without positions (n_no_rope_layer_step 4); output.weight optional (tied) */
        .need = { DECODER_ROLES, [MODEL_ROLE_ATTN_Q_BIAS] = O, [MODEL_ROLE_ATTN_K_BIAS] = O,
                  [MODEL_ROLE_ATTN_V_BIAS] = O, EXPERT_ROLES },
        .rope_neox = true,
        .act = MODEL_ACT_RELU,
        .moe = true,
        .moe_renormalise = true,
        .moe_keys = MODEL_MOE_KEY_GATING | MODEL_MOE_KEY_FF_EXP_LAYERS,
        .router_on_input = true,
        .swa_period = 4,
        .swa_dense_first = true,
        .swa_window_fixed = 4096,
        .swa_rope = MODEL_SWA_ROPE_GLOBAL,
        .no_rope_period = 4,
        .no_rope_first = true,
        .no_rope_window_only = true,
        .quantize = true,
        .weight_scales = MODEL_SCALES_READ | MODEL_SCALES_QKV | MODEL_SCALES_OUT | MODEL_SCALES_OUTPUT,
    },
    {
        .name = "phimoe",
        .families = "Phi-3.5-MoE",
        /* llama.cpp's phimoe loader over phi3's graph: RMSNorms with a bias added after the gains (attn_norm, ffn_norm,
         * output_norm: the checkpoint's LayerNorms, run as llama.cpp runs them), q/k/v apart or fused with optional
         * biases, the attention output's bias, NEOX rotation with LongRoPE's pair optional and no window (phi3's is
         * off in llama.cpp), experts by softmax over the router, the top expert_used_count renormalised (not HF's
         * sparsemixer), each feed_forward_length wide; output.weight and its bias required */
        .need = { TIED_GLOBAL_ROLES, [MODEL_ROLE_OUTPUT] = R, [MODEL_ROLE_OUTPUT_BIAS] = R,
                  [MODEL_ROLE_OUTPUT_NORM_BIAS] = R, [MODEL_ROLE_ROPE_FACTORS_LONG] = O,
                  [MODEL_ROLE_ROPE_FACTORS_SHORT] = O, [MODEL_ROLE_ATTN_NORM] = R, [MODEL_ROLE_ATTN_NORM_BIAS] = R,
                  [MODEL_ROLE_ATTN_Q] = O, [MODEL_ROLE_ATTN_K] = O, [MODEL_ROLE_ATTN_V] = O, [MODEL_ROLE_ATTN_QKV] = O,
                  [MODEL_ROLE_ATTN_Q_BIAS] = O, [MODEL_ROLE_ATTN_K_BIAS] = O, [MODEL_ROLE_ATTN_V_BIAS] = O,
                  [MODEL_ROLE_ATTN_QKV_BIAS] = O, [MODEL_ROLE_ATTN_OUT] = R, [MODEL_ROLE_ATTN_OUT_BIAS] = R,
                  [MODEL_ROLE_FFN_NORM] = R, [MODEL_ROLE_FFN_NORM_BIAS] = R, EXPERT_ROLES },
        .rope_neox = true,
        .act = MODEL_ACT_SILU,
        .moe = true,
        .moe_renormalise = true,
        .moe_experts_ff_wide = true,
        .llama_departs_from_training = "Phi-3.5-MoE was trained with LayerNorms (the mean taken out) and sparsemixer "
                                       "routing; llama.cpp, and gguf-run as it, normalise by RMSNorm plus the "
                                       "LayerNorm's bias and route by softmax, the top experts renormalised",
        .q_prescaled = true,
        .quantize = true,
        .weight_scales = MODEL_SCALES_READ | MODEL_SCALES_QKV | MODEL_SCALES_OUT | MODEL_SCALES_OUTPUT,
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
        .weight_scales = MODEL_SCALES_READ | MODEL_SCALES_QKV | MODEL_SCALES_OUT | MODEL_SCALES_OUTPUT,
    },
    {
        .name = "deepseek",
        .families = "DeepSeek-MoE 16B (DeepSeek's first mixture; V2 and later are deepseek2)",
        /* llama.cpp's deepseek loader and graph: llama's attention (q/k/v biases optional there: create_tensor_qkv),
         * NORM rotation of whole heads, leading_dense_block_count dense layers, then experts chosen by softmax, not
         * renormalised, scaled by expert_weights_scale where the file has one, beside expert_shared_count shared
         * experts an expert wide each, always added; the output the token embedding where the file has none */
        .need = { DENSE_DECODER_ROLES, [MODEL_ROLE_ATTN_Q_BIAS] = O, [MODEL_ROLE_ATTN_K_BIAS] = O,
                  [MODEL_ROLE_ATTN_V_BIAS] = O, EXPERT_ROLES, [MODEL_ROLE_FFN_GATE_SHEXP] = R,
                  [MODEL_ROLE_FFN_UP_SHEXP] = R, [MODEL_ROLE_FFN_DOWN_SHEXP] = R },
        .act = MODEL_ACT_SILU,
        .moe = true,
        .moe_keys = MODEL_MOE_KEY_SCALE | MODEL_MOE_KEY_SHARED | MODEL_MOE_KEY_DENSE_LEAD,
        .quantize = true,
        .weight_scales = MODEL_SCALES_READ | MODEL_SCALES_QKV | MODEL_SCALES_OUT | MODEL_SCALES_OUTPUT,
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
        .weight_scales = MODEL_SCALES_READ | MODEL_SCALES_OUT,
    },
    {
        .name = "mistral4",
        .families = "Mistral 4 (text)",
        /* llama.cpp's mistral4 is its deepseek2 loader and graph under another name (src/models/models.h); only the
         * context's YaRN magnitude differs, which names deepseek2 alone */
        DEEPSEEK2_LAYERS,
        .yarn_keys = MODEL_YARN_KEY_LOG_MUL_TENTHS,
        .quantize = true,
        .weight_scales = MODEL_SCALES_READ | MODEL_SCALES_OUT,
    },
    {
        .name = "minicpm3",
        .families = "MiniCPM3-4B",
        /* llama.cpp's minicpm3: latent attention decompressed whole (the query through its compression, one key/value
         * head per query head, a head's last rope.dimension_count values rotated NEOX, LongRoPE's pair optional),
         * scores by 1/sqrt(key_length); MiniCPM's multipliers fixed in its graph whatever the file says (embeddings
         * x12, each block's output x1.4/sqrt(block_count), the final norm's output x256/embedding_length); a SwiGLU
         * block */
        .need = { GLOBAL_ROLES, [MODEL_ROLE_ATTN_NORM] = R, [MODEL_ROLE_ATTN_Q_A] = R, [MODEL_ROLE_ATTN_Q_A_NORM] = R,
                  [MODEL_ROLE_ATTN_Q_B] = R, [MODEL_ROLE_ATTN_KV_A_MQA] = R, [MODEL_ROLE_ATTN_KV_A_NORM] = R,
                  [MODEL_ROLE_ATTN_KV_B] = R, [MODEL_ROLE_ATTN_OUT] = R, [MODEL_ROLE_FFN_NORM] = R, DENSE_FFN_ROLES,
                  [MODEL_ROLE_ROPE_FACTORS_LONG] = O, [MODEL_ROLE_ROPE_FACTORS_SHORT] = O },
        .rope_neox = true,
        .act = MODEL_ACT_SILU,
        .mla = MODEL_MLA_WHOLE,
        .multipliers = true,
        .multipliers_minicpm = MODEL_MINICPM_SCALES_FIXED,
        .quantize = true,
        .weight_scales = MODEL_SCALES_READ | MODEL_SCALES_OUT | MODEL_SCALES_OUTPUT,
    },
    {
        .name = "plm",
        .families = "PLM-1.8B",
        /* llama.cpp's plm: latent attention decompressed whole with the query straight from the input (NORM rotation
         * of a head's last rope.dimension_count values), scores by 1/sqrt(key_length); an ungated block,
         * relu(x Wup)^2 Wdown; the output always the token embeddings (its loader loads no output.weight) */
        .need = { TIED_GLOBAL_ROLES, [MODEL_ROLE_ATTN_NORM] = R, [MODEL_ROLE_ATTN_Q] = R,
                  [MODEL_ROLE_ATTN_KV_A_MQA] = R, [MODEL_ROLE_ATTN_KV_A_NORM] = R, [MODEL_ROLE_ATTN_KV_B] = R,
                  [MODEL_ROLE_ATTN_OUT] = R, [MODEL_ROLE_FFN_NORM] = R, [MODEL_ROLE_FFN_UP] = R,
                  [MODEL_ROLE_FFN_DOWN] = R },
        .act = MODEL_ACT_RELU_SQR,
        .mla = MODEL_MLA_WHOLE,
        .llama_aborts_flash_attn = "its plm graph hands the attention its values as one row of head_count x "
                                   "value_length per token, which the cache's untransposed copy (flash attention's) "
                                   "reads as one head per token: GGML_ASSERT(a->ne[0] == b->ne[0]) in ggml_set_rows; "
                                   "llama.cpp runs it with -fa off",
        .quantize = true,
        .weight_scales = MODEL_SCALES_READ | MODEL_SCALES_OUT | MODEL_SCALES_OUTPUT,
    },
};
const size_t model_archs_moe_count = sizeof model_archs_moe / sizeof model_archs_moe[0];
