/*
 * Architectures as data, the families with LayerNorms and biases: StarCoder2, GPT-2 and StarCoder (learned
 * positions), BLOOM and MPT (ALiBi), OLMo (no gains), Nemotron (Minitron), StableLM, Phi-2, Falcon, GPT-NeoX: one
 * entry per architecture (model/arch.c joins the families' tables). The facts are those of llama.cpp's
 * src/models/<arch>.cpp and src/llama-arch.cpp.
 */
#include "arch_table.h"

/* GPT-2's layers (gpt2, and starcoder, whose converter writes one key/value head) */
#define GPT2_LAYERS                                                                                           \
    .need = { GLOBAL_ROLES, [MODEL_ROLE_POS_EMBD] = R, [MODEL_ROLE_OUTPUT_NORM_BIAS] = R,                     \
              [MODEL_ROLE_ATTN_NORM] = R, [MODEL_ROLE_ATTN_NORM_BIAS] = R, [MODEL_ROLE_ATTN_QKV] = R,            \
              [MODEL_ROLE_ATTN_QKV_BIAS] = R, [MODEL_ROLE_ATTN_OUT] = R, [MODEL_ROLE_ATTN_OUT_BIAS] = R,         \
              [MODEL_ROLE_FFN_NORM] = R, [MODEL_ROLE_FFN_NORM_BIAS] = R, [MODEL_ROLE_FFN_UP] = R,                \
              [MODEL_ROLE_FFN_UP_BIAS] = R, [MODEL_ROLE_FFN_DOWN] = R, [MODEL_ROLE_FFN_DOWN_BIAS] = R },         \
    .act = MODEL_ACT_GELU_TANH, .norm_layer = true, .no_rope_period = 1, .quantize = true

const model_arch model_archs_layernorm[] = {
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
        .weight_scales = MODEL_SCALES_READ | MODEL_SCALES_QKV | MODEL_SCALES_OUT | MODEL_SCALES_OUTPUT,
    },
    {
        .name = "jais2",
        .families = "Jais 2 (8B, 70B; Base, Chat)",
        /* llama.cpp's jais2: StarCoder2's layers (LayerNorms with biases, biases on every product, q, k and v apart
         * with their biases optional there: create_tensor_qkv), NEOX rotation of whole heads, an ungated block
         * relu(x Wup + b)^2 Wdown + b (LLM_FFN_RELU_SQR), the output the token embedding where the file has none */
        .need = { DECODER_ROLES, [MODEL_ROLE_OUTPUT_NORM_BIAS] = R, [MODEL_ROLE_ATTN_NORM_BIAS] = R,
                  [MODEL_ROLE_ATTN_Q_BIAS] = O, [MODEL_ROLE_ATTN_K_BIAS] = O, [MODEL_ROLE_ATTN_V_BIAS] = O,
                  [MODEL_ROLE_ATTN_OUT_BIAS] = R, [MODEL_ROLE_FFN_NORM_BIAS] = R, [MODEL_ROLE_FFN_UP] = R,
                  [MODEL_ROLE_FFN_UP_BIAS] = R, [MODEL_ROLE_FFN_DOWN] = R, [MODEL_ROLE_FFN_DOWN_BIAS] = R },
        .rope_neox = true,
        .act = MODEL_ACT_RELU_SQR,
        .norm_layer = true,
        .quantize = true,
        .weight_scales = MODEL_SCALES_READ | MODEL_SCALES_QKV | MODEL_SCALES_OUT | MODEL_SCALES_OUTPUT,
        .quantize_70b_layers = 68,
    },
    {
        .name = "codeshell",
        .families = "CodeShell-7B (base, chat)",
        /* llama.cpp's codeshell: GPT-2's layers (LayerNorms with biases, biases on every product, an ungated GELU
         * block) with NEOX rotation of whole heads in place of learned positions, grouped key/value heads, q, k and v
         * fused in attn_qkv with its bias as the converter writes c_attn (its loader's create_tensor_qkv would take
         * them apart too; gguf-py lists no attn_q for codeshell and no converter writes one: refused by name), an
         * output projection of its own (required by its loader; the converter writes the token embedding too) */
        .need = { TIED_GLOBAL_ROLES, [MODEL_ROLE_OUTPUT] = R, [MODEL_ROLE_OUTPUT_NORM_BIAS] = R,
                  [MODEL_ROLE_ATTN_NORM] = R, [MODEL_ROLE_ATTN_NORM_BIAS] = R, [MODEL_ROLE_ATTN_QKV] = R,
                  [MODEL_ROLE_ATTN_QKV_BIAS] = O, [MODEL_ROLE_ATTN_OUT] = R, [MODEL_ROLE_ATTN_OUT_BIAS] = R,
                  [MODEL_ROLE_FFN_NORM] = R, [MODEL_ROLE_FFN_NORM_BIAS] = R, [MODEL_ROLE_FFN_UP] = R,
                  [MODEL_ROLE_FFN_UP_BIAS] = R, [MODEL_ROLE_FFN_DOWN] = R, [MODEL_ROLE_FFN_DOWN_BIAS] = R },
        .rope_neox = true,
        .act = MODEL_ACT_GELU_TANH,
        .norm_layer = true,
        .quantize = true,
        .weight_scales = MODEL_SCALES_READ | MODEL_SCALES_QKV | MODEL_SCALES_OUT | MODEL_SCALES_OUTPUT,
    },
    {
        .name = "jais",
        .families = "Jais (13B, 30B; -chat), Jais family (590M to 30B), Jais adapted (Llama 2 based: 7B to 70B)",
        /* llama.cpp's jais: GPT-2's LayerNorms with biases and q, k and v fused with their bias, no rotation (ALiBi
         * where attention.max_alibi_bias > 0: the converter recovers it from HF's slopes), q.k scaled by 1/key_length
         * (muP; the converter folds the embedding and output multipliers into those tensors), a SwiGLU block with
         * biases on gate, up and down, an output projection of its own */
        .need = { TIED_GLOBAL_ROLES, [MODEL_ROLE_OUTPUT] = R, [MODEL_ROLE_OUTPUT_NORM_BIAS] = R,
                  [MODEL_ROLE_ATTN_NORM] = R, [MODEL_ROLE_ATTN_NORM_BIAS] = R, [MODEL_ROLE_ATTN_QKV] = R,
                  [MODEL_ROLE_ATTN_QKV_BIAS] = R, [MODEL_ROLE_ATTN_OUT] = R, [MODEL_ROLE_ATTN_OUT_BIAS] = R,
                  [MODEL_ROLE_FFN_NORM] = R, [MODEL_ROLE_FFN_NORM_BIAS] = R, [MODEL_ROLE_FFN_GATE] = R,
                  [MODEL_ROLE_FFN_GATE_BIAS] = R, [MODEL_ROLE_FFN_UP] = R, [MODEL_ROLE_FFN_UP_BIAS] = R,
                  [MODEL_ROLE_FFN_DOWN] = R, [MODEL_ROLE_FFN_DOWN_BIAS] = R },
        .act = MODEL_ACT_SILU,
        .norm_layer = true,
        .no_rope_period = 1,
        .alibi_key = true,
        .attn_scale_inv_dim = true,
        .quantize = true,
        .weight_scales = MODEL_SCALES_READ | MODEL_SCALES_QKV | MODEL_SCALES_OUT | MODEL_SCALES_OUTPUT,
    },
    {
        .name = "gpt2",
        .families = "GPT-2 (124M to 1.5B), ruGPT-3 XL",
        /* llama.cpp's gpt2 and starcoder (one graph): learned absolute positions (position_embd rows added to the
         * token embeddings), no rotation, LayerNorms with biases, q, k and v fused in attn_qkv with its bias (as
         * they are, q then k then v), biases on every product, an ungated GELU block, the output the token
         * embedding where the file has none */
        GPT2_LAYERS,
        .weight_scales = MODEL_SCALES_READ | MODEL_SCALES_QKV | MODEL_SCALES_OUT | MODEL_SCALES_OUTPUT,
    },
    {
        .name = "starcoder",
        .families = "StarCoder, StarCoderBase, SantaCoder, WizardCoder (GPTBigCode: one key/value head)",
        GPT2_LAYERS,
        .weight_scales = MODEL_SCALES_READ | MODEL_SCALES_QKV | MODEL_SCALES_OUT | MODEL_SCALES_OUTPUT,
    },
    {
        .name = "bloom",
        .families = "BLOOM (560M to 176B), BLOOMZ",
        /* llama.cpp's bloom: GPT-2's layers with ALiBi in place of learned positions (max_bias 8, fixed by its loader)
         * and a LayerNorm with bias of the embeddings (token_embd_norm) before the first layer; q, k and v fused with
         * their bias (its converter regroups HF's per-head q, k, v rows as all q's, then k's, then v's) */
        .need = { GLOBAL_ROLES, [MODEL_ROLE_TOKEN_EMBD_NORM] = R, [MODEL_ROLE_TOKEN_EMBD_NORM_BIAS] = R,
                  [MODEL_ROLE_OUTPUT_NORM_BIAS] = R, [MODEL_ROLE_ATTN_NORM] = R, [MODEL_ROLE_ATTN_NORM_BIAS] = R,
                  [MODEL_ROLE_ATTN_QKV] = R, [MODEL_ROLE_ATTN_QKV_BIAS] = R, [MODEL_ROLE_ATTN_OUT] = R,
                  [MODEL_ROLE_ATTN_OUT_BIAS] = R, [MODEL_ROLE_FFN_NORM] = R, [MODEL_ROLE_FFN_NORM_BIAS] = R,
                  [MODEL_ROLE_FFN_UP] = R, [MODEL_ROLE_FFN_UP_BIAS] = R, [MODEL_ROLE_FFN_DOWN] = R,
                  [MODEL_ROLE_FFN_DOWN_BIAS] = R },
        .act = MODEL_ACT_GELU_TANH,
        .norm_layer = true,
        .no_rope_period = 1,
        .alibi_max_bias = 8.0f,
        .embd_norm = true,
        .quantize = true,
        .weight_scales = MODEL_SCALES_READ | MODEL_SCALES_QKV | MODEL_SCALES_OUT | MODEL_SCALES_OUTPUT,
    },
    {
        .name = "mpt",
        .families = "MPT (7B, 30B; -Instruct, -Chat, -StoryWriter), Replit Code, SEA-LION",
        /* llama.cpp's mpt: GPT-2's layers with every bias optional (MPT's no_bias files have none), ALiBi where
         * attention.max_alibi_bias > 0, learned positions where the file has them, q, k and v fused (attn_qkv) and
         * clamped to +-attention.clamp_kqv where it is > 0 (clip_qkv), then LayerNormed over whole rows with biases
         * where the file has q/k norms (qk_ln); no rotation, an ungated GELU block, the output the token embedding
         * where the file has none */
        .need = { GLOBAL_ROLES, [MODEL_ROLE_POS_EMBD] = O, [MODEL_ROLE_OUTPUT_NORM_BIAS] = O,
                  [MODEL_ROLE_ATTN_NORM] = R, [MODEL_ROLE_ATTN_NORM_BIAS] = O, [MODEL_ROLE_ATTN_QKV] = R,
                  [MODEL_ROLE_ATTN_QKV_BIAS] = O, [MODEL_ROLE_ATTN_Q_NORM] = O, [MODEL_ROLE_ATTN_Q_NORM_BIAS] = O,
                  [MODEL_ROLE_ATTN_K_NORM] = O, [MODEL_ROLE_ATTN_K_NORM_BIAS] = O, [MODEL_ROLE_ATTN_OUT] = R,
                  [MODEL_ROLE_ATTN_OUT_BIAS] = O, [MODEL_ROLE_FFN_NORM] = R, [MODEL_ROLE_FFN_NORM_BIAS] = O,
                  [MODEL_ROLE_FFN_UP] = R, [MODEL_ROLE_FFN_UP_BIAS] = O, [MODEL_ROLE_FFN_DOWN] = R,
                  [MODEL_ROLE_FFN_DOWN_BIAS] = O, [MODEL_ROLE_FFN_ACT_SCALES] = O },
        .act = MODEL_ACT_GELU_TANH,
        .norm_layer = true,
        .no_rope_period = 1,
        .alibi_key = true,
        .clamp_kqv_key = MODEL_NEED_OPTIONAL,
        .qk_norm_full = true,
        .quantize = true,
        .llama_aborts_why = "its mpt graph reshapes a view of the fused q/k/v product to norm q and k, and "
                            "ggml_reshape_2d asserts a contiguous tensor (GGML_ASSERT(ggml_is_contiguous(a)))",
        .llama_aborts_role = MODEL_ROLE_ATTN_Q_NORM,
        .weight_scales = MODEL_SCALES_READ | MODEL_SCALES_QKV | MODEL_SCALES_OUT | MODEL_SCALES_OUTPUT,
    },
    {
        .name = "olmo",
        .families = "OLMo 1B, 7B, 7B-0424 (OLMo 1 and 1.7; OLMo 2 is olmo2)",
        /* llama.cpp's olmo: LayerNorms without gains or bias before each block and at the end (no tensors), q, k and v
         * (their biases optional there), clamped to +-attention.clamp_kqv where it is > 0 (clip_qkv), NORM rotation of
         * whole heads, SwiGLU, the output the token embedding where the file has none */
        .need = { [MODEL_ROLE_TOKEN_EMBD] = R, [MODEL_ROLE_OUTPUT] = O, [MODEL_ROLE_ATTN_Q] = R,
                  [MODEL_ROLE_ATTN_K] = R, [MODEL_ROLE_ATTN_V] = R, [MODEL_ROLE_ATTN_Q_BIAS] = O,
                  [MODEL_ROLE_ATTN_K_BIAS] = O, [MODEL_ROLE_ATTN_V_BIAS] = O, [MODEL_ROLE_ATTN_OUT] = R,
                  DENSE_FFN_ROLES },
        .act = MODEL_ACT_SILU,
        .norm_layer = true,
        .norms_without_gains = true,
        .clamp_kqv_key = MODEL_NEED_OPTIONAL,
        .quantize = true,
        .weight_scales = MODEL_SCALES_READ | MODEL_SCALES_QKV | MODEL_SCALES_OUT | MODEL_SCALES_OUTPUT,
        .quantize_70b_layers = 80,
    },
    {
        .name = "orion",
        .families = "Orion-14B (Base, Chat, LongChat)",
        /* llama.cpp's orion: LayerNorms with gains and biases (its config's rms_norm_eps is a LayerNorm's), q, k and v
         * apart (their biases optional there: create_tensor_qkv), NEOX rotation of whole heads, SwiGLU, an output
         * projection of its own */
        .need = { TIED_GLOBAL_ROLES, [MODEL_ROLE_OUTPUT] = R, [MODEL_ROLE_OUTPUT_NORM_BIAS] = R, ATTENTION_ROLES,
                  [MODEL_ROLE_ATTN_NORM_BIAS] = R, [MODEL_ROLE_FFN_NORM_BIAS] = R, [MODEL_ROLE_ATTN_Q_BIAS] = O,
                  [MODEL_ROLE_ATTN_K_BIAS] = O, [MODEL_ROLE_ATTN_V_BIAS] = O, DENSE_FFN_ROLES },
        .rope_neox = true,
        .act = MODEL_ACT_SILU,
        .norm_layer = true,
        .quantize = true,
        .weight_scales = MODEL_SCALES_READ | MODEL_SCALES_QKV | MODEL_SCALES_OUT | MODEL_SCALES_OUTPUT,
    },
    {
        .name = "nemotron",
        .families = "Nemotron-4 Minitron (4B, 8B), Nemotron-Mini-4B-Instruct",
        /* llama.cpp's nemotron: LayerNorms with biases (the converter folds LayerNorm1P's +1 into the gains), q, k and v
         * apart, part of each head rotating in NEOX pairs, the attention output's bias optional, an ungated squared
         * ReLU block relu(x Wup + b)^2 Wdown + b (the biases optional), an output projection of its own */
        .need = { TIED_GLOBAL_ROLES, [MODEL_ROLE_OUTPUT] = R, [MODEL_ROLE_OUTPUT_NORM_BIAS] = R, ATTENTION_ROLES,
                  [MODEL_ROLE_ATTN_NORM_BIAS] = R, [MODEL_ROLE_ATTN_OUT_BIAS] = O, [MODEL_ROLE_FFN_NORM_BIAS] = R,
                  [MODEL_ROLE_FFN_UP] = R, [MODEL_ROLE_FFN_UP_BIAS] = O, [MODEL_ROLE_FFN_DOWN] = R,
                  [MODEL_ROLE_FFN_DOWN_BIAS] = O },
        .rope_neox = true,
        .act = MODEL_ACT_RELU_SQR,
        .norm_layer = true,
        .quantize = true,
        .weight_scales = MODEL_SCALES_READ | MODEL_SCALES_QKV | MODEL_SCALES_OUT | MODEL_SCALES_OUTPUT,
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
        .weight_scales = MODEL_SCALES_READ | MODEL_SCALES_QKV | MODEL_SCALES_OUT | MODEL_SCALES_OUTPUT,
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
        .q_prescaled = true,
        .quantize = true,
        .weight_scales = MODEL_SCALES_READ | MODEL_SCALES_QKV | MODEL_SCALES_OUT | MODEL_SCALES_OUTPUT,
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
        .weight_scales = MODEL_SCALES_READ | MODEL_SCALES_QKV | MODEL_SCALES_OUT | MODEL_SCALES_OUTPUT,
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
        .weight_scales = MODEL_SCALES_READ | MODEL_SCALES_QKV | MODEL_SCALES_OUT | MODEL_SCALES_OUTPUT,
    },
};
const size_t model_archs_layernorm_count = sizeof model_archs_layernorm / sizeof model_archs_layernorm[0];
