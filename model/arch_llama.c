/*
 * Architectures as data, llama and the families built on its layer: Llama 1-4, Mistral 3, InternLM2, SmolLM3, Seed-OSS,
 * DeciLM (the Nemotron 51B, 49B and 253B, its layers pruned), XVERSE, Nanbeige (looped layers), Maincoder, Apertus
 * (xIELU without a gate): one entry per architecture (model/arch.c joins the families' tables). The facts are those of
 * llama.cpp's src/models/<arch>.cpp and src/llama-arch.cpp.
 */
#include "arch_table.h"

const model_arch model_archs_llama[] = {
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
        /* llama.cpp's llama graph: build_qkv, wo_s, the dense block's three, the experts' */
        .weight_scales = MODEL_SCALES_READ | MODEL_SCALES_QKV | MODEL_SCALES_OUT | MODEL_SCALES_FFN | MODEL_SCALES_EXPS |
                         MODEL_SCALES_OUTPUT,
        .quantize_70b_layers = 80,
        .quantize_70b_gqa_only = true,
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
        .weight_scales = MODEL_SCALES_READ | MODEL_SCALES_QKV | MODEL_SCALES_OUT | MODEL_SCALES_OUTPUT,
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
        .weight_scales = MODEL_SCALES_READ | MODEL_SCALES_QKV | MODEL_SCALES_OUT | MODEL_SCALES_FFN | MODEL_SCALES_EXPS |
                         MODEL_SCALES_OUTPUT,
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
        .weight_scales = MODEL_SCALES_READ | MODEL_SCALES_QKV | MODEL_SCALES_OUT | MODEL_SCALES_OUTPUT,
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
        .weight_scales = MODEL_SCALES_READ | MODEL_SCALES_QKV | MODEL_SCALES_OUT | MODEL_SCALES_OUTPUT,
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
        .ffn_norm_from = MODEL_ROLE_ATTN_POST_NORM,
        .quantize = true,
        .weight_scales = MODEL_SCALES_READ | MODEL_SCALES_QKV | MODEL_SCALES_OUT | MODEL_SCALES_OUTPUT,
    },
    {
        .name = "deci",
        .families = "Llama-3.1-Nemotron-51B, Llama-3.3-Nemotron-Super-49B, Llama-3.1-Nemotron-Ultra-253B, DeciLM",
        /* llama.cpp's deci: llama's layers pruned per layer by their counts (model_arch.blocks_by_width): no attention
         * block where head_count is 0, attn_output of the normed input alone where head_count_kv is 0 ("linear
         * attention"), no feed-forward block where feed_forward_length is 0; q, k and v apart (the converter writes no
         * attn_qkv, and gguf-py lists none for deci), their biases, the attention output's and the feed-forward
         * block's optional; rope_freqs optional (Llama 3.1's) */
        .need = { DENSE_DECODER_ROLES, [MODEL_ROLE_ROPE_FREQS] = O, [MODEL_ROLE_ATTN_Q_BIAS] = O,
                  [MODEL_ROLE_ATTN_K_BIAS] = O, [MODEL_ROLE_ATTN_V_BIAS] = O, [MODEL_ROLE_ATTN_OUT_BIAS] = O,
                  [MODEL_ROLE_FFN_GATE_BIAS] = O, [MODEL_ROLE_FFN_UP_BIAS] = O, [MODEL_ROLE_FFN_DOWN_BIAS] = O },
        .act = MODEL_ACT_SILU,
        .blocks_by_width = true,
        .quantize = true,
        /* llama.cpp's deci graph: build_qkv and wo_s (not its linear attention's), its feed-forward block unscaled */
        .weight_scales = MODEL_SCALES_READ | MODEL_SCALES_QKV | MODEL_SCALES_OUT | MODEL_SCALES_OUTPUT,
        .quantize_70b_layers = 80,
    },
    {
        .name = "xverse",
        .families = "XVERSE (7B, 13B, 65B)",
        /* llama.cpp's xverse: llama's layers (q/k/v biases optional there: create_tensor_qkv), NORM rotation, an output
         * projection of its own (required by its loader) */
        .need = { TIED_GLOBAL_ROLES, [MODEL_ROLE_OUTPUT] = R, ATTENTION_ROLES, DENSE_FFN_ROLES,
                  [MODEL_ROLE_ATTN_Q_BIAS] = O, [MODEL_ROLE_ATTN_K_BIAS] = O, [MODEL_ROLE_ATTN_V_BIAS] = O },
        .act = MODEL_ACT_SILU,
        .quantize = true,
        .weight_scales = MODEL_SCALES_READ | MODEL_SCALES_QKV | MODEL_SCALES_OUT | MODEL_SCALES_OUTPUT,
    },
    {
        .name = "pangu-embedded",
        .families = "openPangu-Embedded (1B, 7B)",
        /* llama.cpp's pangu-embedded: llama's layers with NEOX rotary (its converter is TextModel's: q and k
         * unpermuted), q/k/v biases optional (create_tensor_qkv), the attention output's bias required; no rope_freqs
         * (its graph rotates without factors, and the converter writes none) */
        .need = { DENSE_DECODER_ROLES, [MODEL_ROLE_ATTN_OUT_BIAS] = R, [MODEL_ROLE_ATTN_Q_BIAS] = O,
                  [MODEL_ROLE_ATTN_K_BIAS] = O, [MODEL_ROLE_ATTN_V_BIAS] = O },
        .rope_neox = true,
        .act = MODEL_ACT_SILU,
        .quantize = true,
        .weight_scales = MODEL_SCALES_READ | MODEL_SCALES_QKV | MODEL_SCALES_OUT | MODEL_SCALES_OUTPUT,
    },
    {
        .name = "bitnet",
        .families = "BitNet b1.58 (2B-4T, 3B)",
        /* llama.cpp's bitnet: llama's layers with NEOX rotary (its converter is TextModel's, the weights ternary in
         * F32, TQ1_0 or TQ2_0 after llama-quantize), an RMSNorm of the attention's output before attn_output
         * (attn_sub_norm) and of the gated SiLU activation before ffn_down (ffn_sub_norm); the logits from
         * token_embd, no output projection; the per-tensor scales its loader takes where present (attn_q.scale and
         * the like: its converter writes none) multiply q, k, v, the output and the three feed-forward products */
        .need = { TIED_GLOBAL_ROLES, ATTENTION_ROLES, DENSE_FFN_ROLES, [MODEL_ROLE_ATTN_SUB_NORM] = R,
                  [MODEL_ROLE_FFN_SUB_NORM] = R },
        .rope_neox = true,
        .act = MODEL_ACT_SILU,
        /* HF transformers' BitNet (bitnet-b1.58-2B-4T's config: hidden_act relu2) gates with relu^2; llama.cpp's bitnet
         * graph with SiLU (ggml-org/llama.cpp#25885 measured wikitext-2 perplexity 99.8 against 17.1) */
        .llama_departs_from_training = "BitNet b1.58 2B-4T was trained with a squared-ReLU gate in its feed-forward "
                                       "block (its config's hidden_act relu2); llama.cpp's bitnet graph, and gguf-run "
                                       "as it, gate with SiLU (wikitext-2 perplexity 99.8 against 17.1 with relu^2, "
                                       "as reported on llama.cpp's tracker)",
        .quantize = true,
        .weight_scales = MODEL_SCALES_READ | MODEL_SCALES_QKV | MODEL_SCALES_OUT | MODEL_SCALES_FFN,
    },
    {
        .name = "openelm",
        .families = "OpenELM (270M, 450M, 1.1B, 3B)",
        /* llama.cpp's openelm: every layer its own head count, key/value head count and feed-forward width (the
         * converter writes each as a list), q, k and v in one attn_qkv (q's heads, then k's, then v's), per-head
         * RMSNorms of q and k before the NEOX rotation, the logits from token_embd */
        .need = { TIED_GLOBAL_ROLES, [MODEL_ROLE_ATTN_NORM] = R, [MODEL_ROLE_ATTN_QKV] = R, [MODEL_ROLE_ATTN_Q_NORM] = R,
                  [MODEL_ROLE_ATTN_K_NORM] = R, [MODEL_ROLE_ATTN_OUT] = R, [MODEL_ROLE_FFN_NORM] = R, DENSE_FFN_ROLES },
        .rope_neox = true,
        .act = MODEL_ACT_SILU,
        .heads_by_layer = true,
        .quantize = true,
        /* llama.cpp's openelm graph: wo_s alone (its fused q/k/v product and feed-forward block unscaled) */
        .weight_scales = MODEL_SCALES_READ | MODEL_SCALES_OUT | MODEL_SCALES_OUTPUT,
    },
    {
        .name = "baichuan",
        .families = "Baichuan (7B, 13B), Baichuan 2 (7B, 13B; Base, Chat)",
        /* llama.cpp's baichuan: llama's layers (q, k and v apart, as its converter splits W_pack; their biases optional
         * there: create_tensor_qkv), an output projection of its own (required by its loader). Its positions follow the
         * depth its loader types the model by: a NORM rotation in a file of 32 layers (the 7B's), ALiBi with max_bias 8
         * and no rotation in one of 40 (the 13B's), neither at any other depth */
        .need = { TIED_GLOBAL_ROLES, [MODEL_ROLE_OUTPUT] = R, ATTENTION_ROLES, DENSE_FFN_ROLES,
                  [MODEL_ROLE_ATTN_Q_BIAS] = O, [MODEL_ROLE_ATTN_K_BIAS] = O, [MODEL_ROLE_ATTN_V_BIAS] = O },
        .act = MODEL_ACT_SILU,
        .rope_n_layer = 32,
        .alibi_n_layer = 40,
        .alibi_max_bias = 8.0f,
        .quantize = true,
        .weight_scales = MODEL_SCALES_READ | MODEL_SCALES_QKV | MODEL_SCALES_OUT | MODEL_SCALES_OUTPUT,
    },
    {
        .name = "refact",
        .families = "Refact-1.6B (base, fim)",
        /* llama.cpp's refact: llama's layers without rotation, ALiBi with max_bias 8 (fixed by its loader) in its
         * place; q, k and v apart as the converter splits q and kv (their biases optional there: create_tensor_qkv;
         * the biases of the attention output and the feed-forward block its loader takes, its graph never adds, and
         * its converter never writes: not run here), one key/value head as the converter writes, the output the
         * token embedding where the file has none */
        .need = { DENSE_DECODER_ROLES, [MODEL_ROLE_ATTN_Q_BIAS] = O, [MODEL_ROLE_ATTN_K_BIAS] = O,
                  [MODEL_ROLE_ATTN_V_BIAS] = O },
        .act = MODEL_ACT_SILU,
        .no_rope_period = 1,
        .alibi_max_bias = 8.0f,
        .quantize = true,
        .weight_scales = MODEL_SCALES_READ | MODEL_SCALES_QKV | MODEL_SCALES_OUT | MODEL_SCALES_OUTPUT,
    },
    {
        .name = "plamo",
        .families = "PLaMo-13B (base, instruct; PLaMo 2 is another architecture)",
        /* llama.cpp's plamo: RMSNorm before the attention and the feed-forward block side by side on the same norm (no
         * ffn_norm), their outputs summed, then the residual: (ffn + attention) + x (phi2's parallel_blocks_summed);
         * NEOX rotation of whole heads, q, k and v apart (their biases optional there: create_tensor_qkv; the converter
         * regroups q's heads for ggml's grouping of key/value heads), SwiGLU, an output projection of its own */
        .need = { TIED_GLOBAL_ROLES, [MODEL_ROLE_OUTPUT] = R, [MODEL_ROLE_ATTN_NORM] = R, [MODEL_ROLE_ATTN_Q] = R,
                  [MODEL_ROLE_ATTN_K] = R, [MODEL_ROLE_ATTN_V] = R, [MODEL_ROLE_ATTN_Q_BIAS] = O,
                  [MODEL_ROLE_ATTN_K_BIAS] = O, [MODEL_ROLE_ATTN_V_BIAS] = O, [MODEL_ROLE_ATTN_OUT] = R,
                  DENSE_FFN_ROLES },
        .rope_neox = true,
        .act = MODEL_ACT_SILU,
        .parallel_ffn = true,
        .parallel_blocks_summed = true,
        .quantize = true,
        .weight_scales = MODEL_SCALES_READ | MODEL_SCALES_QKV | MODEL_SCALES_OUT | MODEL_SCALES_OUTPUT,
    },
    {
        .name = "nanbeige",
        .families = "Nanbeige 4.x (looped layers)",
        /* llama.cpp's nanbeige: llama's layers (q/k/v biases and rope_freqs optional, NORM rotation: the converter
         * undoes HF's permutation), run num_loops times over with their weights shared, each pass's layers with caches
         * of their own, the final norm between passes unless skip_loop_final_norm (layer_loops) */
        .need = { DENSE_DECODER_ROLES, [MODEL_ROLE_ROPE_FREQS] = O, [MODEL_ROLE_ATTN_Q_BIAS] = O,
                  [MODEL_ROLE_ATTN_K_BIAS] = O, [MODEL_ROLE_ATTN_V_BIAS] = O },
        .act = MODEL_ACT_SILU,
        .layer_loops = true,
        .quantize = true,
        /* (its graph multiplies q, k, v, the output and the feed-forward products by their scales in the first pass;
         * the later passes' layers, copies made before llama.cpp's loader looks for scales, have none: not run here) */
        /* llama.cpp's nanbeige graph: build_qkv, wo_s, build_ffn; its later passes' layers have no scales (the loader
         * looks for blk.N.W.scale past the file's blocks): they run unscaled */
        .weight_scales = MODEL_SCALES_READ | MODEL_SCALES_QKV | MODEL_SCALES_OUT | MODEL_SCALES_FFN |
                         MODEL_SCALES_OUTPUT,
    },
    {
        .name = "maincoder",
        .families = "Maincoder (1B)",
        /* llama.cpp's maincoder: llama's layers with per-head q/k RMSNorms after the NORM rotation (as Hunyuan's
         * dense graph applies them), q/k/v biases optional, the output the token embedding where the file has none */
        .need = { DENSE_DECODER_ROLES, [MODEL_ROLE_ATTN_Q_NORM] = R, [MODEL_ROLE_ATTN_K_NORM] = R,
                  [MODEL_ROLE_ATTN_Q_BIAS] = O, [MODEL_ROLE_ATTN_K_BIAS] = O, [MODEL_ROLE_ATTN_V_BIAS] = O },
        .act = MODEL_ACT_SILU,
        .qk_norm_after_rope = true,
        .quantize = true,
        .weight_scales = MODEL_SCALES_READ | MODEL_SCALES_QKV | MODEL_SCALES_OUT | MODEL_SCALES_OUTPUT,
    },
    {
        .name = "apertus",
        .families = "Apertus (8B, 70B)",
        /* llama.cpp's apertus: llama's attention (q/k/v biases and the attention output's optional there) with per-head
         * q/k RMSNorms before the NEOX rotation (their biases are loaded and never added: a file with one is refused
         * here rather than run otherwise), rope_freqs optional (Llama 3.1's); a block without a gate, xIELU(x Wup)
         * Wdown with each layer's parameters (kernels/act_xielu.h); an output projection of its own */
        .need = { TIED_GLOBAL_ROLES, [MODEL_ROLE_OUTPUT] = R, ATTENTION_ROLES, [MODEL_ROLE_ROPE_FREQS] = O,
                  [MODEL_ROLE_ATTN_Q_BIAS] = O, [MODEL_ROLE_ATTN_K_BIAS] = O, [MODEL_ROLE_ATTN_V_BIAS] = O,
                  [MODEL_ROLE_ATTN_OUT_BIAS] = O, [MODEL_ROLE_ATTN_Q_NORM] = R, [MODEL_ROLE_ATTN_K_NORM] = R,
                  [MODEL_ROLE_FFN_UP] = R, [MODEL_ROLE_FFN_DOWN] = R },
        .rope_neox = true,
        .act = MODEL_ACT_XIELU,
        .quantize = true,
        .weight_scales = MODEL_SCALES_READ | MODEL_SCALES_QKV | MODEL_SCALES_OUT | MODEL_SCALES_OUTPUT,
    },
};
const size_t model_archs_llama_count = sizeof model_archs_llama / sizeof model_archs_llama[0];
