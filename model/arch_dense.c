/*
 * Architectures as data, other dense families: Cohere's (Command R, Command A; and its MoE), Phi-3, Granite and
 * MiniCPM's multipliers, OLMo 2, EXAONE, PLaMo 3: one entry per architecture (model/arch.c joins the families' tables).
 * The facts are those of llama.cpp's src/models/<arch>.cpp and src/llama-arch.cpp.
 */
#include "arch_table.h"

/* Cohere's layers (command-r, cohere2): the output always the token embedding, LayerNorms, the attention and the
 * feed-forward block side by side, logits times logit_scale */
#define COHERE_LAYERS                                                                                         \
    .need = { TIED_GLOBAL_ROLES, [MODEL_ROLE_ATTN_NORM] = R, [MODEL_ROLE_ATTN_Q] = R, [MODEL_ROLE_ATTN_K] = R,  \
              [MODEL_ROLE_ATTN_V] = R, [MODEL_ROLE_ATTN_Q_BIAS] = O, [MODEL_ROLE_ATTN_K_BIAS] = O,             \
              [MODEL_ROLE_ATTN_V_BIAS] = O, [MODEL_ROLE_ATTN_OUT] = R, DENSE_FFN_ROLES },                       \
    .act = MODEL_ACT_SILU, .norm_layer = true, .parallel_ffn = true, .logit_scale_mul = MODEL_NEED_OPTIONAL

const model_arch model_archs_dense[] = {
    {
        .name = "command-r",
        .families = "Command R (35B), Command R+ (104B), Aya 23, Aya Expanse",
        /* llama.cpp's command-r: LayerNorms, the attention and the feed-forward block side by side on one norm, the
         * output projection always the token embedding, logits times logit_scale; NORM rotary; in files of 64 layers
         * (Command R+) each head of q and k LayerNormed with gains of its own before the rotation */
        COHERE_LAYERS,
        .qk_norm_from_layers = 64,
        .quantize = true,
        .weight_scales = MODEL_SCALES_READ | MODEL_SCALES_QKV | MODEL_SCALES_OUT | MODEL_SCALES_OUTPUT,
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
        .weight_scales = MODEL_SCALES_READ | MODEL_SCALES_QKV | MODEL_SCALES_OUT | MODEL_SCALES_FFN |
                         MODEL_SCALES_OUTPUT,
    },
    {
        .name = "cohere2moe",
        .families = "Cohere2 MoE (30B-A3B)",
        /* llama.cpp's cohere2moe: cohere2's parallel block with LayerNorms (no bias), or RMSNorms where the file has
         * attention.layer_norm_rms_epsilon; q/k/v with optional biases; the window (a key it requires) on the layers
         * sliding_window_pattern lists (else three in four, the first of four full), which rotate (NORM, the global
         * rope on every layer), as do the leading_dense_block_count first layers, whose blocks are dense; elsewhere
         * experts chosen by sigmoid scores (expert_gating_func where the file sets one), renormalised where
         * expert_weights_norm says and scaled by expert_weights_scale, their gate and up fused or apart, and where
         * expert_shared_count > 0 ungated shared experts (expert_shared_feed_forward_length wide, or that many experts'
         * width), the two outputs averaged; logits times logit_scale; the trailing nextn blocks are not run */
        .need = { TIED_GLOBAL_ROLES, [MODEL_ROLE_OUTPUT] = O, [MODEL_ROLE_ATTN_NORM] = R, [MODEL_ROLE_ATTN_Q] = R,
                  [MODEL_ROLE_ATTN_K] = R, [MODEL_ROLE_ATTN_V] = R, [MODEL_ROLE_ATTN_Q_BIAS] = O,
                  [MODEL_ROLE_ATTN_K_BIAS] = O, [MODEL_ROLE_ATTN_V_BIAS] = O, [MODEL_ROLE_ATTN_OUT] = R,
                  DENSE_FFN_ROLES, [MODEL_ROLE_FFN_GATE_INP] = R, [MODEL_ROLE_FFN_GATE_EXPS] = O,
                  [MODEL_ROLE_FFN_UP_EXPS] = O, [MODEL_ROLE_FFN_GATE_UP_EXPS] = O, [MODEL_ROLE_FFN_DOWN_EXPS] = R,
                  [MODEL_ROLE_FFN_GATE_SHEXP] = O, [MODEL_ROLE_FFN_UP_SHEXP] = O, [MODEL_ROLE_FFN_DOWN_SHEXP] = O },
        .act = MODEL_ACT_SILU,
        .norm_layer = true,
        .norm_rms_by_key = true,
        .parallel_ffn = true,
        .logit_scale_mul = MODEL_NEED_OPTIONAL,
        .swa_period = 4,
        .swa_dense_first = true,
        .swa_window_required = true,
        .swa_rope = MODEL_SWA_ROPE_SAME,
        .rope_swa_only = true,
        .rope_dense_lead = true,
        .moe = true,
        .moe_gating = MODEL_MOE_SIGMOID,
        .moe_keys = MODEL_MOE_KEY_GATING | MODEL_MOE_KEY_NORM | MODEL_MOE_KEY_SCALE | MODEL_MOE_KEY_SHARED |
                    MODEL_MOE_KEY_SHARED_TOTAL | MODEL_MOE_KEY_DENSE_LEAD | MODEL_MOE_KEY_FF_EXP_LAYERS,
        .shexp_mean = true,
        .quantize = true,
        .weight_scales = MODEL_SCALES_READ | MODEL_SCALES_QKV | MODEL_SCALES_OUT | MODEL_SCALES_FFN |
                         MODEL_SCALES_EXPS | MODEL_SCALES_SHEXP,
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
        .q_prescaled = true,
        .quantize = true,
        .weight_scales = MODEL_SCALES_READ | MODEL_SCALES_QKV | MODEL_SCALES_OUT | MODEL_SCALES_OUTPUT,
    },
    {
        .name = "granite",
        .families = "IBM Granite 3.x (dense)",
        /* llama.cpp's granite loader takes experts too, which gguf-py lists for granitemoe alone */
        .need = { DENSE_DECODER_ROLES, [MODEL_ROLE_ATTN_OUT_BIAS] = O },
        .act = MODEL_ACT_SILU,
        .multipliers = true,
        .quantize = true,
        .weight_scales = MODEL_SCALES_READ | MODEL_SCALES_QKV | MODEL_SCALES_OUT | MODEL_SCALES_OUTPUT,
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
        .multipliers_minicpm = MODEL_MINICPM_SCALES_KEYS_OR_DEFAULTS,
        .quantize = true,
        .weight_scales = MODEL_SCALES_READ | MODEL_SCALES_QKV | MODEL_SCALES_OUT | MODEL_SCALES_OUTPUT,
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
        .weight_scales = MODEL_SCALES_READ | MODEL_SCALES_QKV | MODEL_SCALES_OUT | MODEL_SCALES_OUTPUT,
    },
    {
        .name = "granite_swa",
        .families = "IBM Granite with interleaved sliding windows (dense and MoE, GraniteSWA / GraniteMoeSWA)",
        /* llama.cpp's granite_swa: granite's multipliers (logit_scale required), q/k/v apart or fused with optional
         * biases, the attention output's bias optional, a sink per head in every layer, the sliding window on the
         * layers attention.sliding_window_pattern marks (the window a key it requires; the global rope on every layer),
         * attention.rope_pattern's layers without positions, rope_freqs optional; a dense SwiGLU block (its biases
         * optional), or experts feed_forward_length wide (gate and up fused or apart; softmax, renormalised) beside a
         * shared expert of expert_shared_feed_forward_length whose gate and up are one tensor */
        .need = { GLOBAL_ROLES, ATTENTION_ROLES, [MODEL_ROLE_ATTN_Q_BIAS] = O, [MODEL_ROLE_ATTN_K_BIAS] = O,
                  [MODEL_ROLE_ATTN_V_BIAS] = O, [MODEL_ROLE_ATTN_OUT_BIAS] = O, [MODEL_ROLE_ATTN_SINKS] = R,
                  [MODEL_ROLE_ROPE_FREQS] = O, DENSE_FFN_ROLES, [MODEL_ROLE_FFN_GATE_BIAS] = O,
                  [MODEL_ROLE_FFN_UP_BIAS] = O, [MODEL_ROLE_FFN_DOWN_BIAS] = O, [MODEL_ROLE_FFN_GATE_INP] = R,
                  [MODEL_ROLE_FFN_GATE_EXPS] = O, [MODEL_ROLE_FFN_UP_EXPS] = O, [MODEL_ROLE_FFN_GATE_UP_EXPS] = O,
                  [MODEL_ROLE_FFN_DOWN_EXPS] = R, [MODEL_ROLE_FFN_UP_SHEXP] = O, [MODEL_ROLE_FFN_DOWN_SHEXP] = O },
        .act = MODEL_ACT_SILU,
        .multipliers = true,
        .swa_period = 4,
        .swa_dense_first = true,
        .swa_window_required = true,
        .swa_rope = MODEL_SWA_ROPE_SAME,
        .rope_pattern_key = true,
        .moe = true,
        .moe_renormalise = true,
        .moe_experts_ff_wide = true,
        .shexp_gate_up_fused = true,
        .quantize = true,
        .weight_scales = MODEL_SCALES_READ | MODEL_SCALES_QKV | MODEL_SCALES_OUT | MODEL_SCALES_OUTPUT,
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
        .weight_scales = MODEL_SCALES_READ | MODEL_SCALES_QKV | MODEL_SCALES_OUT | MODEL_SCALES_OUTPUT,
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
        .weight_scales = MODEL_SCALES_READ | MODEL_SCALES_QKV | MODEL_SCALES_OUT | MODEL_SCALES_OUTPUT,
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
        .weight_scales = MODEL_SCALES_READ | MODEL_SCALES_QKV | MODEL_SCALES_OUT | MODEL_SCALES_OUTPUT,
    },
    {
        .name = "plamo3",
        .families = "PLaMo 3 (2B, 8B, 31B)",
        /* llama.cpp's plamo3: q/k/v fused in attn_qkv (values value_length wide), per-head q/k RMSNorms before the NEOX
         * rotation, norms before and after both blocks (the converter folds the checkpoint's offsets into the gains;
         * its post-norms carry no .weight: it maps post_mixer_norm.weight and post_mlp_norm.weight whole), gate and
         * up fused in ffn_up, heads, key/value heads and widths per layer; with attention.sliding_window > 0, the
         * window on seven layers in eight (or as sliding_window_pattern says), rotating with rope.freq_base_swa's
         * base (10000 where absent) and no scaling */
        .need = { TIED_GLOBAL_ROLES, [MODEL_ROLE_OUTPUT] = O, [MODEL_ROLE_ATTN_NORM] = R, [MODEL_ROLE_ATTN_QKV] = R,
                  [MODEL_ROLE_ATTN_Q_NORM] = R, [MODEL_ROLE_ATTN_K_NORM] = R, [MODEL_ROLE_ATTN_OUT] = R,
                  [MODEL_ROLE_ATTN_POST_NORM] = R, [MODEL_ROLE_FFN_NORM] = R, [MODEL_ROLE_FFN_UP] = R,
                  [MODEL_ROLE_FFN_DOWN] = R, [MODEL_ROLE_FFN_POST_NORM] = R },
        .rope_neox = true,
        .act = MODEL_ACT_SILU,
        .gate_up_fused = true,
        .value_length_own = true,
        .swa_period = 8,
        .swa_rope = MODEL_SWA_ROPE_OWN_BASE,
        .roles_bare = { MODEL_ROLE_ATTN_POST_NORM, MODEL_ROLE_FFN_POST_NORM },
        .quantize = true,
        .weight_scales = MODEL_SCALES_READ | MODEL_SCALES_OUT | MODEL_SCALES_OUTPUT,
    },
    {
        .name = "talkie",
        .families = "Talkie (talkie-1930 13B)",
        /* llama.cpp's talkie: every norm an RMSNorm without gains (none in the file: the embeddings', the two before
         * each layer's blocks, the final one), q/k/v as separate products (its create_tensor_qkv would take them fused
         * too, which gguf-py lists no name for and no converter writes), the NEOX rotation of the whole head, then
         * each head of q RMS-normed times its one gain (attn_q_norm {1, head_count}) and each head of k RMS-normed
         * without gains; a gated SiLU block; each layer's output plus the normed embeddings times its
         * layer_output_scale; output.weight required (never tied), the logits times logit_scale (required). Its
         * converter writes the checkpoint's attention and MLP gains as attn_output.scale and ffn_down.scale */
        .need = { [MODEL_ROLE_TOKEN_EMBD] = R, [MODEL_ROLE_OUTPUT] = R, [MODEL_ROLE_ATTN_Q] = R,
                  [MODEL_ROLE_ATTN_K] = R, [MODEL_ROLE_ATTN_V] = R, [MODEL_ROLE_ATTN_Q_NORM] = R,
                  [MODEL_ROLE_ATTN_OUT] = R, DENSE_FFN_ROLES, [MODEL_ROLE_LAYER_OUT_SCALE] = R },
        .rope_neox = true,
        .act = MODEL_ACT_SILU,
        .norms_without_gains = true,
        .embd_skip = true,
        .qk_norm_after_rope = true,
        .q_norm_head_gain = true,
        .logit_scale_mul = MODEL_NEED_REQUIRED,
        .quantize = true,
        /* its graph: build_qkv, wo_s and ffn_down_s (build_ffn's gate and up scales passed as none) */
        .weight_scales = MODEL_SCALES_READ | MODEL_SCALES_QKV | MODEL_SCALES_OUT | MODEL_SCALES_FFN_DOWN,
    },
};
const size_t model_archs_dense_count = sizeof model_archs_dense / sizeof model_archs_dense[0];
