/*
 * model_arch.h — one entry per architecture, as data: which roles it needs and what its forward pass does (the
 * activation, the rotary embedding, windows, experts, latent attention, the families' own facts), and the lookup of an
 * entry by name. Part of model.h (which includes it).
 */
#ifndef GGUFSCOPE_MODEL_ARCH_H
#define GGUFSCOPE_MODEL_ARCH_H

#include "model_roles.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- architectures ------------------------------------------------------ */

/* What each architecture's file holds and what its forward pass does, as data
 * (gguf-py's constants.py keeps the tensor names the same way; the shapes,
 * defaults and flags are llama.cpp's, src/models/<arch>.cpp). engine/, audit/
 * and gguf-quantize read these entries; none of them compares names. Adding
 * an architecture whose ops exist is one entry in model/arch.c: docs/ARCHITECTURES.md. */

/* The most experts llama.cpp loads (LLAMA_MAX_EXPERTS, src/llama-hparams.h): a file with more is refused. */
enum { MODEL_EXPERTS_MAX = 1024 };

typedef enum model_need { MODEL_NEED_ABSENT = 0, MODEL_NEED_OPTIONAL, MODEL_NEED_REQUIRED } model_need;
/* The FFN's gated activation: SiLU(gate) * up, tanh-GELU(gate) * up, or gpt-oss's clamped form
 * (gate' = min(gate, 7), up' = clamp(up, -7, 7), gate' * sigmoid(1.702 gate') * (up' + 1): ggml_swiglu_oai); or, in a
 * block without a gate, relu(up)^2 (Nemotron-H: llama.cpp's LLM_FFN_RELU_SQR), or xIELU(up) with each layer's
 * parameters (Apertus: the global keys xielu.alpha_n, .alpha_p, .beta, .eps; kernels/act_xielu.h); RELU: relu(gate) *
 * up (SmallThinker's experts: llama.cpp's LLM_FFN_RELU with a gate, ggml_reglu). */
typedef enum model_act {
    MODEL_ACT_SILU, MODEL_ACT_GELU_TANH, MODEL_ACT_SWIGLU_OAI, MODEL_ACT_RELU_SQR, MODEL_ACT_XIELU, MODEL_ACT_RELU
} model_act;

/* How a mixture of experts weighs the experts its router picks (llama.cpp's expert_gating_func):
 * SOFTMAX: softmax over all the router's logits, the top k of those probabilities;
 * SOFTMAX_WEIGHT: the top k logits, then a softmax over those k (gpt-oss);
 * SIGMOID: each logit's sigmoid, the top k of those (plus the selection bias where the file has one), their
 *   sigmoids as weights (glm4moe, DeepSeek-V3). */
typedef enum model_moe_gating { MODEL_MOE_SOFTMAX, MODEL_MOE_SOFTMAX_WEIGHT, MODEL_MOE_SIGMOID } model_moe_gating;

/* Routing keys a family's llama.cpp loader reads (glm4moe all of them, MiniMax-M2 the gating function):
 * expert_gating_func (moe_gating when absent or 0), expert_weights_norm (renormalise), expert_weights_scale (the
 * chosen weights' factor), expert_shared_count (shared experts of expert_feed_forward_length each, ungated),
 * leading_dense_block_count (that many dense layers first), interleave_moe_layer_step (required: every that
 * many-th layer has experts; ERNIE 4.5's loader makes experts for every layer past the dense ones, so 1 is the step
 * it runs), SHARED_WIDTH: expert_shared_feed_forward_length is one shared expert's width in place of
 * expert_feed_forward_length (bailingmoe2). (nextn_predict_layers and expert_group_count its loader reads for every
 * family.) SHARED_REQUIRED: with SHARED, the loader requires expert_shared_count (afmoe). FF_EXP_LAYERS: the loader
 * reads expert_feed_forward_length as one width or one per layer (get_key_or_arr) and sizes every layer's experts by
 * layer 0's (afmoe, exaone-moe). SHARED_TOTAL: with SHARED, expert_shared_feed_forward_length where present is the
 * shared experts' whole width (cohere2moe; expert_shared_count experts' width without it). */
typedef enum model_moe_key {
    MODEL_MOE_KEY_GATING = 1, MODEL_MOE_KEY_NORM = 2, MODEL_MOE_KEY_SCALE = 4, MODEL_MOE_KEY_SHARED = 8,
    MODEL_MOE_KEY_DENSE_LEAD = 16, MODEL_MOE_KEY_STEP = 32, MODEL_MOE_KEY_SHARED_WIDTH = 64,
    MODEL_MOE_KEY_GATING_REQUIRED = 128, /* with GATING: the loader requires expert_gating_func (lfm2moe) */
    MODEL_MOE_KEY_SHARED_REQUIRED = 256, MODEL_MOE_KEY_FF_EXP_LAYERS = 512, MODEL_MOE_KEY_SHARED_TOTAL = 1024,
    MODEL_MOE_KEY_DENSE_LEAD_REQUIRED = 2048 /* with DENSE_LEAD: the loader requires the key (laguna) */
} model_moe_key;

/* Rotary scaling (rope.scaling.type): none, linear (positions times freq_scale), or YaRN (per frequency a blend of
 * the interpolated and the original angle, and a magnitude correction). */
typedef enum model_rope_scaling { MODEL_ROPE_SCALING_NONE, MODEL_ROPE_SCALING_LINEAR, MODEL_ROPE_SCALING_YARN }
    model_rope_scaling;

/* The rotary embedding of sliding-window layers (llama.cpp's loaders and graphs):
 * OWN_BASE: rope.freq_base_swa (default 10000) with no scaling (gemma3);
 * GLOBAL: the global rope, base and scaling alike, with rope.freq_base_swa's base where the file has one (gemma2,
 *   gpt-oss);
 * UNSCALED: the global base with no scaling of any kind, YaRN's magnitude included; rope.freq_base_swa is read by
 *   llama.cpp's loader but its graph rotates with the global base (olmo2's Olmo 3 files);
 * SAME: the global rope exactly, base and scaling; rope.freq_base_swa is read by the loader, its graph does not use
 *   it (cohere2);
 * BASE_UNSCALED: rope.freq_base_swa (the global base where absent) with no scaling of any kind (laguna). */
typedef enum model_swa_rope {
    MODEL_SWA_ROPE_OWN_BASE, MODEL_SWA_ROPE_GLOBAL, MODEL_SWA_ROPE_UNSCALED, MODEL_SWA_ROPE_SAME,
    MODEL_SWA_ROPE_BASE_UNSCALED
} model_swa_rope;

/* model_arch.weight_scales: READ, its graph read for them; QKV, attn_q/k/v and attn_qkv (build_qkv); OUT, attn_output
 * (not DeciLM's "linear attention" product, which its graph leaves unscaled);
 * FFN, the dense block's ffn_gate, ffn_up and ffn_down; FFN_DOWN, its ffn_down alone (Talkie's graph passes no scale
 * for the gate and up); EXPS, the experts' (one per expert: each chosen expert's product times its own,
 * build_lora_mm_id); SHEXP, the shared expert's; SSM, a Mamba mixer's ssm_in and ssm_out (llama.cpp's mamba base
 * graph: every family with Mamba mixers); OUTPUT, the logits' product (output.scale, which the loader takes only where
 * output.weight is NVFP4: build_lora_mm(model.output, cur, model.output_s) in most graphs); DN, a gated delta net's own
 * products in its layers (attn_qkv and attn_gate, or Qwen3-Next's older ssm_in, and ssm_beta, ssm_alpha, ssm_out:
 * Qwen3.5's build_qkvz; Qwen3-Next's graph leaves them unscaled) */
enum {
    MODEL_SCALES_READ = 1, MODEL_SCALES_QKV = 2, MODEL_SCALES_OUT = 4, MODEL_SCALES_FFN = 8, MODEL_SCALES_EXPS = 16,
    MODEL_SCALES_SHEXP = 32, MODEL_SCALES_SSM = 64, MODEL_SCALES_FFN_DOWN = 128, MODEL_SCALES_OUTPUT = 256,
    MODEL_SCALES_DN = 512
};

/* How a MiniCPM family takes granite's multipliers (model_arch.multipliers_minicpm) */
typedef enum model_minicpm_scales {
    MODEL_MINICPM_SCALES_NONE = 0, MODEL_MINICPM_SCALES_KEYS_OR_DEFAULTS, MODEL_MINICPM_SCALES_FIXED
} model_minicpm_scales;

typedef struct model_arch {
    const char *name;            /* general.architecture */
    const char *families;        /* the models that ship as it, for messages */
    uint8_t need[MODEL_ROLE_COUNT]; /* model_need of each role */
    bool rope_neox;              /* NEOX rotary (pairs i, i + n_rot/2) rather than NORM (2i, 2i + 1) */
    model_act act;                /* the FFN's gate activation: act(x Wgate) * (x Wup) */
    bool embd_scale_sqrt;        /* token embeddings scaled by sqrt(embedding_length) */
    /* Sliding-window attention, when attention.sliding_window > 0: layer il uses the window when
     * il % period < period - 1 (attention.sliding_window_pattern overrides the period, or lists the
     * layers), with the rope swa_rope says. */
    uint32_t swa_period;         /* 0: the architecture has no sliding window */
    bool final_softcap;          /* reads final_logit_softcapping: logits = c * tanh(logits / c) */
    float final_softcap_default; /* its value when the key is absent (0: none) */
    /* > 0: attention scores are soft-capped, s = c * tanh(s / c), c = attn_logit_softcapping or this (gemma2) */
    float attn_softcap_default;
    /* > 0: ALiBi with this max_bias, fixed by the loader (BLOOM's 8: llama.cpp's bloom loader reads no key) */
    float alibi_max_bias;
    /* the loader reads attention.max_alibi_bias (ALiBi where it is > 0: MPT's) */
    bool alibi_key;
    /* how the loader reads attention.clamp_kqv (q, k and v clamped to +-it after their products and biases where it
     * is > 0): not at all (ABSENT), where present (OPTIONAL: MPT's, OLMo's), or as a key it requires (DBRX's) */
    model_need clamp_kqv_key;
    /* DeciLM's (Llama-3.1-Nemotron 51B, Llama-3.3-Nemotron-Super-49B, -Ultra-253B: llama.cpp's deci): head_count,
     * head_count_kv and feed_forward_length list each layer's; a layer of 0 heads has no attention block, one of
     * heads but 0 key/value heads a "linear attention" (attn_output of its attn_norm alone), one of width 0 no
     * feed-forward block (model_hparams_layer_has_attention / _has_ffn) */
    bool blocks_by_width;
    /* OLMo's (llama.cpp's olmo): its LayerNorms have neither gains nor bias (attn_norm, ffn_norm and the final norm
     * are in no file: ggml_norm alone) */
    bool norms_without_gains;
    /* Talkie's (llama.cpp's talkie), whose norms are RMSNorms without gains (norms_without_gains, the final one too):
     * embd_skip: the embeddings RMS-normed (no gains) before the first layer, and each layer's output plus those normed
     *   embeddings times its layer_output_scale (one value: a skip from the input, not a factor on the output);
     * q_norm_head_gain: with qk_norm_after_rope, attn_q_norm holds one gain per head ({1, head_count}), and k is normed
     *   without gains (no attn_k_norm) */
    bool embd_skip, q_norm_head_gain;
    /* where not NULL: why llama.cpp aborts building the graph of a file of this architecture that has a tensor of role
     * llama_aborts_role in its layers (gguf-verify warns; gguf-run runs it) */
    const char *llama_aborts_why;
    model_role llama_aborts_role;
    /* where not NULL: why llama.cpp crashes building the graph of a file of this architecture without a sliding window
     * (attention.sliding_window absent or 0; gguf-verify warns, gguf-run runs it without one) */
    const char *llama_aborts_no_window;
    /* where not NULL: why llama.cpp aborts building the graph of every file of this architecture when flash attention
     * is on, as its default (-fa auto) makes it on the CPU (gguf-verify warns, gguf-run runs it) */
    const char *llama_aborts_flash_attn;
    /* where not NULL: how llama.cpp's graph for the architecture departs from the math the checkpoints were trained
     * with (gguf-verify notes it on every such file: an engine that follows the paper gives other outputs) */
    const char *llama_departs_from_training;
    /* BLOOM's token_embd_norm: a LayerNorm (with token_embd_norm.bias) of the embeddings before the first layer, not
     * the final norm LFM2's converter names so */
    bool embd_norm;
    uint32_t swa_window_default; /* attention.sliding_window when the key is absent (0: no window) */
    /* > 0: a file with attention.sliding_window > 0 slides over this many positions whatever it says (SmallThinker's
     * loader: 4096) */
    uint32_t swa_window_fixed;
    /* the period pattern's full layer comes first (llama.cpp's set_swa_pattern with dense_first: layer il slides
     * when il % period != 0), not last (SmallThinker's) */
    bool swa_dense_first;
    /* the router reads the layer's input, before its attention norm (SmallThinker's graph), not ffn_norm's output */
    bool router_on_input;
    model_swa_rope swa_rope;     /* the sliding-window layers' rope */
    /* q.k is scaled by 1/sqrt(key_length), except in a model of this many layers, which scales by
     * 1/sqrt(embedding_length / head_count) (gemma 3 27B: gemma_pytorch's query_pre_attn_scalar). 0: none. */
    uint32_t attn_scale_embd_layers;
    bool quantize;               /* gguf-quantize knows llama-quantize's rules for it */
    /* llama-quantize's rules that name LLM_ARCH_FALCON (src/llama-quant.cpp): the output (or tied embedding) in Q8_0,
     * Q4_K_M's ffn_down in Q6_K in the first sixteenth of the layers, Q5_K in use_more_bits' layers, Q4_K in the others,
     * attn_output left to the file type */
    bool quantize_falcon_rules;
    /* the depth llama.cpp's loader types a model of this family LLM_TYPE_70B at (llama, qwen2, olmo, deci: 80 layers;
     * jais2: 68), whose attn_v llama-quantize gives Q5_K where a mix gives it Q3_K or Q4_K; 0: none. gqa_only:
     * llama's loader's conditions, grouped key/value heads (the 80-layer LLaMA-1 65B has none) and not 8 experts
     * (typed by Mixtral's sizes) */
    uint32_t quantize_70b_layers;
    bool quantize_70b_gqa_only;
    const char *norm_gains;      /* what the family's trained norm gains look like, for the audit, or NULL */
    /* Mixture of experts (files with expert_count > 0): softmax over the router's logits, the top
     * expert_used_count experts, their probabilities renormalised to sum 1 when moe_renormalise (llama.cpp's
     * build_moe_ffn norm_w); without expert_feed_forward_length an expert is feed_forward_length wide, or that
     * divided by expert_used_count when moe_ff_split. */
    bool moe, moe_renormalise, moe_ff_split;
    model_moe_gating moe_gating;
    /* The routing keys its llama.cpp loader reads from the file (model_moe_key bits; the entry's fields where a key
     * is absent or not read). */
    uint16_t moe_keys;
    /* the role whose tensor is the norm before the feed-forward block, where the converter names that norm otherwise
     * (gpt-oss's post_attention_norm, which llama.cpp applies to the residual stream, not to the attention's output;
     * DBRX's attn_output_norm); 0: ffn_norm itself */
    model_role ffn_norm_from;
    bool qk_norm_full;           /* q/k norms over the whole q and k rows, not per head (olmo2) */
    bool gate_up_fused;          /* ffn_up holds the gate's rows, then the up rows (phi3) */
    bool no_gqa;                 /* its loader sizes attn_k and attn_v as attn_q: head_count_kv must be head_count */
    /* Multipliers read from the file (granite): embedding_scale on the embeddings, residual_scale on each block's
     * output before its residual add, attention.scale in place of 1/sqrt(key_length), logits / logit_scale. */
    bool multipliers;
    /* llama.cpp's graph scales q by the attention's scale before the attention, whose scores it then scales by 1
     * (phi2, phi3, phimoe, gemma, gemma2, gemma3): the same product, rounded where llama.cpp rounds it */
    bool q_prescaled;
    /* Latent attention (model_mla): its keys read, the roles of the file's form required (model_attn_form), values
     * shorter than keys */
    model_mla mla;
    /* rope.dimension_sections read (required, or where mrope_optional the sections apply when the file has them with
     * the first two above 0: llama.cpp's use_mrope) */
    model_mrope mrope;
    bool mrope_optional;
    /* > 0: layer il attends without rotary positions (NoPE) when (il + 1) % no_rope_period == 0 (SmolLM3's every
     * fourth layer: llama.cpp's n_no_rope_layer_step, fixed by its loader); no_rope_first: when il % no_rope_period ==
     * 0 instead, and no_rope_window_only: only in a file with a sliding window (SmallThinker's graph, whose loader
     * makes the step block_count without one) */
    uint32_t no_rope_period;
    bool no_rope_first, no_rope_window_only;
    /* YaRN keys its loader reads (model_yarn_key bits; llama.cpp's context defaults otherwise: betas 32 and 1) */
    uint8_t yarn_keys;
    /* reads attention.temperature_scale: q scaled per position by log(floor(pos / n_ctx_orig) + 1) * it + 1
     * (Llama 4's and Ministral 3's attention temperature) */
    bool attn_temperature;
    /* the sliding window only in files of this many layers (EXAONE 4's loader: its 32B's 64; 0: any) */
    uint32_t swa_n_layer;
    /* where the sliding window is on, its layers alone rotate: the others attend without positions (EXAONE 4) */
    bool rope_swa_only;
    /* Positions by depth, as llama.cpp's baichuan loader types a model by its layer count: q and k rotate only in a
     * file of rope_n_layer layers (Baichuan's 7B: 32), ALiBi (alibi_max_bias) applies only in one of alibi_n_layer (its
     * 13B: 40), and a file of any other depth attends without positions. 0: any depth. */
    uint32_t rope_n_layer, alibi_n_layer;
    /* feed_forward_length is twice the blocks' width (Qwen 1's: its converter writes HF's intermediate_size, w1's and
     * w2's rows together, and llama.cpp's qwen loader makes gate, up and down n_ff / 2 wide) */
    bool n_ff_halved;
    /* q.k scaled by 1/key_length rather than its square root (Jais: muP's attention scale; llama.cpp's jais graph) */
    bool attn_scale_inv_dim;
    /* attention.sliding_window is a key its loader requires (exaone-moe's: swa_window_default is then the window of no
     * file) */
    bool swa_window_required;
    /* one shared expert in each layer with experts, expert_shared_feed_forward_length wide or an expert's width where
     * the file has no such key, whatever expert_shared_count says (exaone-moe's loader) */
    bool shexp_one_key_wide;
    /* the attention's output times sigmoid(x Wgate), each value its own gate, before the output product, the gate a
     * product of its own (attn_gate, n_head x value_length wide) of the attention's input (AFMoE: llama.cpp's afmoe) */
    bool attn_gate_proj;
    /* Laguna's (llama.cpp's laguna) form of that gate: attn_gate_either: each layer's attn_gate a gate per value
     * (n_head x value_length rows) or per head (n_head rows: one for all the head's values), as its width says;
     * attn_gate_softplus: softplus(x Wgate) in place of the sigmoid */
    bool attn_gate_either, attn_gate_softplus;
    /* expert_shared_count where the file has none (Laguna's loader: 1; 0 elsewhere) */
    int shexp_count_default;
    /* the per-tensor scales (blk.N.W.scale, which llama.cpp's loader takes for every family) the family's llama.cpp
     * graph multiplies products by (model_weight_scale bits); 0: its graph not read for them yet (gguf-run refuses a
     * scaled file of it as not runnable). A read family's other scales are loaded and unread there, and here. */
    unsigned weight_scales;
    /* Llama 4's (llama.cpp's llama4 loader and graph, build_moe_ffn's weight_before_ffn):
     * moe_weight_before: a chosen expert's weight scales its input, not its output;
     * moe_step_layers: interleave_moe_layer_step picks the layers with experts, (il + 1) % step == 0;
     * shexp_expert_wide: each layer with experts has one ungated shared expert as wide as an expert (no count key);
     * swa_chunked: the sliding-window layers attend within chunks of swa_window_default positions (a query at p sees
     *   p - p % window .. p: LLAMA_SWA_TYPE_CHUNKED) whatever attention.sliding_window says, unless it says 0, which
     *   is refused (llama.cpp's loader turns the chunks and the temperature off, and its graph then stops on an
     *   assertion when the last layer asks for the temperature);
     * qk_l2_norm: q and k RMS-normed without gains after their rotation on the layers that rotate, unless the file
     *   has qk_l2_norm_off_experts experts (Maverick's 128: use_kq_norm);
     * attn_temp_fixed_*: with the chunks on, the attention temperature of the layers without positions, from these
     *   constants rather than a key (scale, floor, offset: log(floor((pos + offset) / floor) + 1) * scale + 1). */
    bool moe_weight_before, moe_step_layers, shexp_expert_wide, swa_chunked, qk_l2_norm;
    /* Cohere's (llama.cpp's command-r and cohere2): norm_layer: every norm a LayerNorm (the mean taken out; no bias),
     *   its epsilon attention.layer_norm_epsilon; parallel_ffn: the feed-forward block reads the attention's input norm
     *   and the layer's output is (ffn + x) + attention; logit_scale_mul: logits times the file's logit_scale (OPTIONAL:
     *   absent or 0 is none, Cohere's; REQUIRED: a key the loader requires, taken as it is, Talkie's);
     *   qk_norm_from_layers: files of that many layers or more (Command R+) norm each head of q and k with gains of its
     *   own (attn_q_norm (key_length, head_count), attn_k_norm (key_length, head_count_kv): required there, absent
     *   in smaller files, as its loader makes them) */
    bool norm_layer, parallel_ffn;
    model_need logit_scale_mul;
    /* Cohere2 MoE's (llama.cpp's cohere2moe): norm_rms_by_key: RMSNorms where the file has
     *   attention.layer_norm_rms_epsilon, else norm_layer's LayerNorms (its loader requires one of the two keys);
     * rope_dense_lead: with rope_swa_only, the leading_dense_block_count first layers rotate too;
     * shexp_mean: the routed experts' output and the shared experts' averaged, (moe + shared) / 2 */
    bool norm_rms_by_key, rope_dense_lead, shexp_mean;
    /* phi2's and falcon's parallel layer: the two blocks' outputs summed first, then the residual: (attention + ffn)
     * + x */
    bool parallel_blocks_summed;
    /* GPT-NeoX's: the file's use_parallel_residual says whether its layers are parallel (Cohere's order of adds, the
     * feed-forward block on its own norm of x: ffn_norm) or one block after the other (model_hparams.parallel) */
    bool parallel_residual_key;
    uint32_t qk_norm_from_layers;
    uint32_t qk_l2_norm_off_experts;
    float attn_temp_fixed_scale, attn_temp_fixed_offset;
    uint32_t attn_temp_fixed_floor;
    /* Qwen3.5's (llama.cpp's qwen35 and delta-net-base): delta_net: the layers but every full_attention_interval-th
     *   (default 4; attention.recurrent_layers lists them where the file has it) are gated delta nets, whose roles are
     *   need_recurrent's (need: the attention layers'), with the ssm.* keys read;
     * attn_out_gated: attn_q's rows hold each head's query then its gate, the attention's output times sigmoid(gate);
     * mrope_partial: the rotary sections cover rope.dimension_count, a part of each head (no whole-head rotation);
     * dn_heads_grouped: value head h reads key head h / (value heads / key heads) (Qwen3-Next repeats each key head
     *   for its group; Qwen3.5's graph tiles them: h mod key heads). */
    bool delta_net, attn_out_gated, mrope_partial, dn_heads_grouped;
    /* LFM2's (llama.cpp's lfm2): shortconv: the layers whose attention.head_count_kv entry is 0 are short convolutions
     *   (y = C * conv(B * x) over shortconv.l_cache taps, kept across calls), their roles need_recurrent's, the others
     *   attention, within attention.sliding_window where the file has one; final_norm_embd_named: the final norm is
     *   the file's token_embd_norm */
    bool shortconv, final_norm_embd_named;
    /* Hunyuan's (llama.cpp's hunyuan-dense): qk_norm_after_rope: the per-head q/k RMSNorms (with gains) come after the
     *   rotation; rope_base_alpha: rope.scaling.alpha > 0 scales the base NTK-wise, base * alpha^(d / (d - 2)) for a
     *   head of d; expert_count_one_dense: an expert_count of 1 (or 0) is a dense model, as its loader makes it */
    bool qk_norm_after_rope, rope_base_alpha, expert_count_one_dense;
    uint8_t need_recurrent[MODEL_ROLE_COUNT];
    /* Gemma 4's (llama.cpp's gemma4): rope_freqs_full_only: rope_freqs divides the full-attention layers' frequencies
     *   alone (its "proportional" rotation: the pairs past the rotated part get 1e30, so they stay put); v_from_k: where
     *   a layer has no attn_v its values are the key projection's output (attention_k_eq_v), before k's norm;
     *   v_norm: each head of v RMS-normed without gains; attn_scale_one: q.k unscaled (the q norm does it) */
    bool rope_freqs_full_only, v_from_k, v_norm, attn_scale_one;
    /* Gemma 4 26B-A4B's layers with experts keep their dense block beside them (ffn_norm, the block, post_ffw_norm_1;
     * the experts on pre_ffw_norm_2's rows, post_ffw_norm_2; the two added, then post_ffw_norm), and route on the
     * layer's input RMS-normed without gains, times 1/sqrt(n_embd) and ffn_gate_inp.scale */
    bool moe_dense_beside;
    /* Nemotron-H's (llama.cpp's nemotron_h): single_block: each layer is one block after its attn_norm, a mixer or a
     *   feed-forward block (need_ffn's roles: the layers whose feed_forward_length entry is above 0), never both;
     * mamba2: the layers whose attention.head_count_kv and feed_forward_length entries are both 0 are Mamba-2 mixers
     *   (need_recurrent's roles; the ssm.* keys read), the other mixers attention;
     * eps_either_key: attention.layer_norm_rms_epsilon, else attention.layer_norm_epsilon (its loader's fallback) */
    bool single_block, mamba2, eps_either_key;
    /* Granite 4.0-H's (llama.cpp's granitehybrid): rope_finetuned_switch: rope.scaling.finetuned false (the hybrids')
     *   turns rotation off on every layer, true (or absent) leaves it on; logit_scale_optional: the multipliers'
     *   logit_scale may be absent (no scaling), where granite's loader requires it; ssm_inner_embd_ratio: its loader
     *   asserts ssm.inner_size = this x embedding_length (0: any) */
    bool rope_finetuned_switch, logit_scale_optional;
    uint8_t ssm_inner_embd_ratio;
    /* its llama.cpp graph names the feed-forward block's output (before the residual add) l_out, and a layer without
     * one nothing (nemotron_h's build_ffn_layer): what a trace of llama.cpp's l_out-N is held to */
    bool l_out_is_ffn_out;
    uint8_t need_ffn[MODEL_ROLE_COUNT];
    /* Falcon-H1's (llama.cpp's falcon-h1): mixer_beside: every layer runs its attention and a Mamba-2 mixer side by
     *   side on attn_norm(x) and adds both to x (the mixer's roles in need, beside the attention's; every layer keeps
     *   cache rows and a recurrent state) */
    bool mixer_beside;
    /* the roles whose tensors its loader asks for by their bare names (model_role_info.bare, without .weight or .bias),
     * as its converter maps the checkpoint's name whole: Falcon-H1's ffn_norm, Hy3's exp_probs_b, PLaMo 3's post-norms;
     * the list ends at the first 0 (token_embd, which has no bare name) */
    model_role roles_bare[3];
    /* Mamba-1's (llama.cpp's mamba): every layer's mixer is Mamba-1's (x and z from ssm_in; x convolved; dt, B, C from
     *   ssm_x, dt widened by ssm_dt; a state per channel of ssm.state_size values, each decayed at its own rate) */
    bool mamba1;
    /* the state-space models' (llama.cpp's mamba, mamba2): no layer attends; the converter writes attention.head_count
     * 0 ("unused, but seemingly required when loading"), which the loaders accept */
    bool attention_free;
    /* Jamba's (llama.cpp's jamba): a layer has experts where the file has its router (ffn_gate_inp, loaded where
     * present), a dense block elsewhere: the converter writes no key for which layers (expert_layer_period) */
    bool moe_where_router;
    /* Hunyuan-A13B's (llama.cpp's hunyuan-moe): its loader sizes the experts by feed_forward_length, whatever
     * expert_feed_forward_length says (its converter writes the two equal) */
    bool moe_experts_ff_wide;
    /* MiniCPM's (llama.cpp's minicpm, granite's graph): granite's multipliers where the file has them, else its loader's
     *   defaults (embedding x12, residual x1.4 / sqrt(block_count), logits / (256 / embedding_length)); attention.scale
     *   not read. FIXED (MiniCPM3's graph): those three values whatever the file says, no key read, and the logit
     *   scale on the final norm's output before the output product (its lmhead_scaling), not on the logits */
    model_minicpm_scales multipliers_minicpm;
    /* Grok's (llama.cpp's grok): moe_dense_mean: the experts and, where the file has ffn_up, a dense block beside them
     * read the same ffn_norm output, their sum times sqrt(2)/2 (Grok-2's; Grok-1 has the experts alone);
     * attn_post_norm_from: the role whose tensor is the attention's post norm (attn_output_norm);
     * ffn_post_norm_or: a role whose tensor, where the file has it, is the feed-forward block's post norm (Grok-1's
     * layer_output_norm), post_ffw_norm (optional in the table) the one that must be there otherwise */
    bool moe_dense_mean;
    model_role attn_post_norm_from, ffn_post_norm_or;
    /* Grok's multipliers, each read from its key with this default where > 0: the embeddings' (embedding_scale), the
     * logits' (logit_scale, a product), and the scores' inside the soft-cap (attention.output_scale: q.k unscaled,
     * then c tanh(q.k * it / c), it / c one product as llama.cpp's graph rounds it) */
    float embd_scale_default, logit_scale_default, attn_out_scale_default;
    /* YaRN's beta_fast where the file has none (> 0; else llama.cpp's 32): Grok's loader's 8 */
    float yarn_beta_fast_default;
    /* llama.cpp's context turns flash attention off for every file of the architecture whatever -fa says (Grok's) */
    bool flash_attn_never;
    /* attention.head_count may list one count per layer, each layer's q and output products that many heads wide
     * (OpenELM's, with head_count_kv and feed_forward_length per layer too) */
    bool heads_by_layer;
    /* Snowflake Arctic's (llama.cpp's arctic): every layer keeps a dense block embedding_length wide (whatever
     * feed_forward_length says: that is the experts' width) on ffn_norm of the attention's residual, added to it; the
     * experts read ffn_norm_exps of the layer's input (before the attention) and their output is added last */
    bool moe_dense_residual;
    /* Nanbeige's (llama.cpp's nanbeige): num_loops read (default 1; at least 1, and block_count times it at most
     * llama.cpp's 512 layers): the blocks run that many times over, the weights shared, each pass's layers with caches
     * of their own, the final norm applied between passes unless skip_loop_final_norm */
    bool layer_loops;
    /* IBM Granite's iSWA files (llama.cpp's granite_swa): shexp_gate_up_fused: ffn_up_shexp holds the shared expert's
     * gate rows, then its up rows (its converter keeps shared_mlp.input_linear whole; the graph's LLM_FFN_SWIGLU);
     * rope_pattern_key: attention.rope_pattern lists per layer whether it rotates (false: NoPE), every layer where the
     * file has no such key */
    bool shexp_gate_up_fused, rope_pattern_key;
    /* Xiaomi MiMo-V2's (llama.cpp's mimo2): swa_pattern_required: attention.sliding_window_pattern must list the
     *   layers (its loader's get_arr without a default); attn_value_scale_key: attention.value_scale, where present and
     *   not 1, scales the attention block's output after its output product (the checkpoint scales v; the product is
     *   linear, and llama.cpp scales where this says); value_length_own: a head's values value_length wide whatever
     *   key_length is (other graphs assert the two equal); role_by_layer: a per-layer role its loader takes where a layer
     *   has it and its graph uses where present, so that a file with it in some layers only is one of its forms
     *   (MiMo-V2's sinks, on its checkpoints' sliding layers alone; Step-3.5's attn_gate; 0: none) */
    bool swa_pattern_required, attn_value_scale_key, value_length_own;
    model_role role_by_layer;
    /* how its loader reads swiglu_clamp_exp (one limit, or one per layer; a limit above 1e-6 clamps that layer's
     * experts' SwiGLU: gate' = min(gate, limit), up' = clamp(up, -limit, limit), SiLU(gate') * up', ggml_swiglu_clamp):
     * not at all, where present, or as a key it requires (Maple's) */
    model_need swiglu_clamp_key;
    /* StepFun Step-3.5's (llama.cpp's step35):
     * swiglu_clamp_silu_first: the limit bounds SiLU(gate) from above rather than the gate (build_moe_ffn's and
     *   build_ffn's other form: up within +-limit, min(SiLU(gate), limit) * up);
     * swiglu_clamp_shexp_key: swiglu_clamp_shexp (one limit, or one per layer) read where present, the limit of the
     *   shared expert and, as build_ffn applies it to every gated block of the layer, of a dense layer's block;
     * attn_gate_per_head: attn_gate (n_head rows, optional per layer) gives each head one gate, sigmoid(x Wgate), on
     *   all its output values;
     * rope_full_half: the full-attention layers rotate half of rope.dimension_count (the sliding ones all of it, or
     *   rope.dimension_count_swa), rope_freqs on the full layers alone */
    bool swiglu_clamp_silu_first, attn_gate_per_head, rope_full_half;
    model_need swiglu_clamp_shexp_key;
} model_arch;

/* The name architecture a gives role r's tensor (without the "blk.N." prefix): the role's own, or its bare name where
 * a's loader asks for that (model_arch.roles_bare); a NULL a: the role's own. */
GGUFSCOPE_API const char *model_role_name(const model_arch *a, model_role r);

/* The YaRN keys a family's loader reads: rope.scaling.yarn_beta_fast / _slow, rope.scaling.yarn_log_multiplier as
 * written, or divided by 0.1 (DeepSeek's converter writes 0.1 mscale_all_dim and llama.cpp's deepseek2 loader divides it
 * out). MSCALE_OWN: the context's magnitude ratio takes the multiplier as its own mscale too (llama.cpp's context
 * special-cases deepseek2 by name; mistral4, which shares its loader, keeps mscale 1). */
enum {
    MODEL_YARN_KEY_BETAS = 1, MODEL_YARN_KEY_LOG_MUL = 2, MODEL_YARN_KEY_LOG_MUL_TENTHS = 4,
    MODEL_YARN_KEY_MSCALE_OWN = 8,
    /* rope.scaling.yarn_ext_factor (where the file has it, in place of 1 under YaRN and 0 otherwise) and, where that
     * factor is 0, rope.scaling.yarn_attn_factor as the magnitude (Grok's loader) */
    MODEL_YARN_KEY_EXT_ATTN = 16
};

/* The entry for an architecture name (len bytes, not NUL-terminated), or NULL. */
GGUFSCOPE_API const model_arch *model_arch_find(const char *name, size_t len);
GGUFSCOPE_API size_t model_arch_count(void);
GGUFSCOPE_API const model_arch *model_arch_at(size_t i);
/* "llama, qwen2, qwen3, gemma3": for messages. */
GGUFSCOPE_API const char *model_arch_names(void);

#ifdef __cplusplus
}
#endif

#endif
