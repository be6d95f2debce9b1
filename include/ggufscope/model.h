/*
 * model.h — what a model is, as data: the tensor roles with their shapes (model_roles.h), one entry per architecture
 * (model_arch.h: which roles it needs, what its forward pass does), and here the one hyperparameter reader with
 * llama.cpp's keys, defaults and ranges, what they say of each layer, and the memory llama.cpp allocates for them.
 * engine/, audit/ and gguf-quantize read models through it; gguf/ below it knows the file format only.
 */
#ifndef GGUFSCOPE_MODEL_H
#define GGUFSCOPE_MODEL_H

#include "gguf.h"
#include "model_arch.h"

#include "export.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Hyperparameters from "<arch>.*" metadata with llama.cpp's defaults where a
 * key is absent: the one reader engine/ and audit/ share. */
typedef struct model_hparams {
    const model_arch *arch;       /* NULL: no general.architecture, or one not in the table */
    char arch_name[64];          /* general.architecture as stored (cut to 63 bytes), "" when absent */
    /* 0 where unknown (absent without a default, or unreadable: then the status says why) */
    int64_t n_embd, n_layer, n_head, n_head_kv, head_dim_k, head_dim_v, n_ff, n_ctx_train, n_rot;
    int64_t n_vocab;             /* entries of tokenizer.ggml.tokens, 0 without a vocabulary */
    int64_t vocab_size;          /* <arch>.vocab_size, 0 when absent */
    int64_t n_expert, n_expert_used; /* expert_count, expert_used_count: 0 when absent (a dense model) */
    int64_t n_ff_exp, n_ff_shexp;    /* one expert's and the shared expert's widths (0 in a dense model) */
    /* How the router weighs its choice (model_arch's moe_* fields, or the file's keys its moe_keys name):
     * moe_scale multiplies the chosen experts' weights (1: none) */
    model_moe_gating moe_gating;
    bool moe_renormalise;
    float moe_scale;
    int64_t moe_gating_func;     /* expert_gating_func as the file says it (0: absent) */
    int64_t n_expert_groups;     /* expert_group_count (0: absent) */
    int64_t n_moe_layer_step;    /* interleave_moe_layer_step where the family reads it (-1: absent), else 0 */
    int64_t n_layer_dense_lead;  /* leading_dense_block_count: the first layers have a dense feed-forward block */
    int64_t n_layer_nextn;       /* nextn_predict_layers: the last blocks (of n_layer) predict further tokens, and
                                  * generation does not run them */
    /* num_loops (model_arch.layer_loops; 1 elsewhere): the generating blocks run this many times over, each pass
     * with a cache of its own (model_hparams_layers_run); skip_loop_final_norm: no final norm between passes */
    int64_t n_loops;
    bool skip_loop_final_norm;
    int64_t file_type;           /* general.file_type, -1 when absent */
    float eps;                   /* the norms' epsilon */
    bool norm_layer;             /* every norm a LayerNorm (model_arch.norm_layer, norm_rms_by_key) */
    float rope_base, rope_freq_scale;         /* global (full-attention) layers; scale = 1 / linear factor */
    model_rope_scaling rope_scaling;
    /* YaRN as llama.cpp's context sets it up (src/llama-context.cpp): ext_factor 1 with YaRN, else 0; attn_factor
     * its magnitude correction (rope.scaling.attn_factor, times get_mscale(factor) / (1 + 0.1 ln factor) with
     * YaRN); beta_fast/slow 32 and 1; n_ctx_orig rope.scaling.original_context_length, or context_length */
    float yarn_ext_factor, yarn_attn_factor, yarn_beta_fast, yarn_beta_slow;
    int64_t n_ctx_orig_yarn;
    float rope_base_swa, rope_freq_scale_swa; /* sliding-window layers */
    bool yarn_swa_off;                        /* sliding-window layers rotate without YaRN (ext 0, magnitude 1) */
    /* attn_gate is a gate per head (n_head rows), not per value: Step-3.5's everywhere; Laguna's in the layers whose
     * tensor is that wide (model_hparams_layer sets it per layer from the file) */
    bool attn_gate_heads;
    int64_t swa_window;          /* sliding-window layers mask keys this many positions back or more (0: none) */
    uint32_t swa_period;         /* see model_arch (0 with swa_layers: the layers are listed) */
    const gguf_value *swa_layers; /* attention.sliding_window_pattern as an array of bools, or NULL */
    const gguf_value *rope_layers; /* attention.rope_pattern (model_arch.rope_pattern_key): an array of bools, or NULL */
    float final_softcap;         /* 0: none */
    float attn_softcap;          /* attention scores' soft-cap; 0: none */
    /* > 0: the unscaled scores' factor inside the soft-cap, attn_softcap * tanh(q.k * it) (Grok's
     * attention.output_scale / attn_logit_softcapping); 0: the scaled scores over attn_softcap */
    float attn_softcap_in;
    float alibi_max_bias;        /* ALiBi's max_bias (kern_alibi_slope); 0: none */
    float clamp_kqv;             /* q, k and v clamped to [-it, it] (attention.clamp_kqv); 0: none */
    float attn_value_scale;      /* the attention block's output times it after attn_output (attention.value_scale); 0: none */
    const gguf_value *heads_layers; /* attention.head_count per layer (model_arch.blocks_by_width), or NULL */
    float attn_scale;            /* multiplies q.k */
    float embd_scale;            /* multiplies the token embeddings (1: none) */
    float residual_scale;        /* multiplies each block's output before the residual add (1: none) */
    float logit_scale;           /* multiplies the logits (1: none): granite's 1 / logit_scale */
    bool logit_scale_first;      /* ... by multiplying the final norm's output before the output product (MiniCPM3's
                                  * graph: model_arch.multipliers_minicpm FIXED) */
    /* latent attention (model_arch.mla): the compressions' ranks (q 0: none), a head's key and value length as the
     * attention computes them after decompression (key_length_mla, value_length_mla: 0 when absent, in which case
     * key_length and value_length are those and the keys' decompression is whole) */
    int64_t n_lora_q, n_lora_kv, head_dim_k_mla, head_dim_v_mla;
    int64_t n_group_used;        /* expert_group_used_count: groups of experts a token chooses from (0: absent) */
    float yarn_log_mul;          /* rope.scaling.yarn_log_multiplier (DeepSeek's: / 0.1, its mscale_all_dim; 0: absent) */
    /* the attention temperature: log(floor((pos + offset) / floor) + 1) * scale + 1 on each query (scale 0: none), on
     * the layers without positions alone where nope_only (Llama 4's); floor is Ministral 3's original context */
    float attn_temp_scale, attn_temp_floor, attn_temp_offset;
    bool attn_temp_nope_only;
    bool swa_chunked;            /* the window's layers attend within chunks of it (model_arch.swa_chunked) */
    bool qk_l2_norm;             /* q and k RMS-normed without gains after rotation (model_arch.qk_l2_norm) */
    model_mrope mrope;           /* the file's multi-axis rotary form (model_arch.mrope), NONE when it has none */
    int64_t rope_sections[4];    /* rope.dimension_sections: pairs of each head per time, height, width, extra axis */
    int64_t n_deepstack_layers;  /* Qwen3-VL: layers that add an image's deeper features (none for text) */
    /* gated delta net (model_arch.delta_net): ssm.conv_kernel, ssm.inner_size, ssm.state_size, ssm.time_step_rank (value
     * heads), ssm.group_count (key heads); full_attention_interval; attention.recurrent_layers as an array of bools, or
     * NULL. Mamba-2 (model_arch.mamba2) reads the same keys: ssm_n_v_heads its heads, ssm_n_k_heads its groups of B and
     * C. */
    int64_t ssm_d_conv, ssm_d_inner, ssm_d_state, ssm_n_v_heads, ssm_n_k_heads, full_attn_interval;
    /* Mamba-1 (model_arch.mamba1): ssm.time_step_rank is dt's rank (its heads, ssm_n_v_heads, are its channels, one
     * group: ssm_n_k_heads 0 as no key says otherwise); ssm.dt_b_c_rms: dt, B and C RMS-normed without gains
     * (Falcon-Mamba) */
    int64_t ssm_dt_rank;
    bool ssm_dt_b_c_rms;
    const gguf_value *recurrent_layers;
    const gguf_file *file; /* the file read (model_arch.moe_where_router asks it which layers have a router) */
    /* a short convolution's taps (model_arch.shortconv: shortconv.l_cache), and attention.head_count_kv where it is an
     * array of one count per layer (0: a recurrent layer; n_head_kv is then the attention layers' count), or NULL */
    int64_t shortconv_l_cache;
    const gguf_value *kv_heads_layers;
    /* a sliding-window layer's key and value lengths and rotated width (attention.key_length_swa, value_length_swa,
     * rope.dimension_count_swa, read for every architecture as llama.cpp's loader does; the full layers' where
     * absent); attention.shared_kv_layers (the last layers reuse earlier layers' caches: Gemma 4 E2B / E4B) and
     * embedding_length_per_layer_input (per-layer embeddings), 0 where absent */
    int64_t head_dim_k_swa, head_dim_v_swa, n_rot_swa, n_kv_shared, n_embd_per_layer;
    /* xIELU's alpha_n, alpha_p, beta and eps (MODEL_ACT_XIELU: xielu.alpha_n ...), each one value for every layer or
     * an array of one per layer (xielu_layers[k], else NULL) as the file has them; model_hparams_layer gives a
     * layer's */
    float xielu[4];
    const gguf_value *xielu_layers[4];
    /* the experts' SwiGLU limit (swiglu_clamp_exp where model_arch.swiglu_clamp_key: one for every layer, or one per
     * layer in swiglu_clamp_exp_layers, which model_hparams_layer resolves; at most 1e-6: no clamp) */
    float swiglu_clamp_exp;
    const gguf_value *swiglu_clamp_exp_layers;
    /* the shared expert's (and a dense block's) limit: swiglu_clamp_shexp where model_arch.swiglu_clamp_shexp_key, as
     * swiglu_clamp_exp */
    float swiglu_clamp_shexp;
    const gguf_value *swiglu_clamp_shexp_layers;
    /* Nemotron 3 Super's experts' latent width (moe_latent_size, read where model_arch.single_block; 0: none) */
    int64_t moe_latent_size;
    /* no layer rotates: rope.scaling.finetuned false where model_arch.rope_finetuned_switch, or a depth other than
     * model_arch.rope_n_layer */
    bool rope_off;
    /* the attention and the feed-forward block side by side: model_arch.parallel_ffn, or the file's
     * use_parallel_residual where model_arch.parallel_residual_key */
    bool parallel;
    /* feed_forward_length where it is an array of one width per layer (n_ff is then the widest), or NULL; the first
     * layer that reuses an earlier layer's keys and values (n_layer - n_kv_shared) */
    const gguf_value *ff_layers;
    int64_t n_layer_kv;
    /* Where values came from, for reports. */
    bool eps_defaulted, rope_base_defaulted, head_dim_from_key_length, n_rot_from_key;
} model_hparams;

typedef enum model_status {
    MODEL_OK = 0,
    MODEL_E_MALFORMED,   /* a key missing, of the wrong type or out of range; heads that cannot be shaped; what
                          * llama.cpp's loader refuses: the file's fault */
    MODEL_E_UNSUPPORTED, /* an architecture not in the table, or a feature of it not run yet */
} model_status;

typedef struct model_error {
    model_status code;
    uint64_t offset;      /* where the key starts in the file (0: absent, left to its default) */
    char subject[GGUF_ERROR_SUBJECT_SIZE];    /* the key */
    char message[GGUF_ERROR_MESSAGE_SIZE];
} model_error;

/* Reads every hyperparameter it can, then checks them as llama.cpp's loader does (and for values after which
 * every output is NaN or a constant); returns MODEL_OK or the first problem with err filled, the fields read
 * before and after it still set. An architecture not in the table is MODEL_E_UNSUPPORTED, its generic keys
 * still read under its name (hp->arch NULL): the audit checks shapes with them. */
GGUFSCOPE_API model_status model_hparams_read(const gguf_file *f, model_hparams *hp, model_error *err);
/* Whether layer il uses the sliding window. */
GGUFSCOPE_API bool model_hparams_layer_is_swa(const model_hparams *hp, int64_t il);
/* Whether layer il rotates q and k (false on an architecture's NoPE layers: model_arch.no_rope_period). */
GGUFSCOPE_API bool model_hparams_layer_rotates(const model_hparams *hp, int64_t il);
/* Whether layer il is a recurrent one (a gated delta net's, a short convolution's, a Mamba-2 mixer's); il < 0: whether
 * any layer may be. */
GGUFSCOPE_API bool model_hparams_layer_is_recurrent(const model_hparams *hp, int64_t il);
/* Whether layer il keeps a recurrent state: a recurrent layer, or one with a Mamba-2 mixer beside its attention
 * (model_arch.mixer_beside); il < 0: whether any layer may. */
GGUFSCOPE_API bool model_hparams_layer_has_state(const model_hparams *hp, int64_t il);
/* Whether layer il has key/value heads: attention.head_count_kv's entry for it above 0 (one count: whether it is). */
GGUFSCOPE_API bool model_hparams_layer_has_kv_heads(const model_hparams *hp, int64_t il);
/* Whether layer il has an attention block (or a single block's mixer) and a feed-forward block: both in most
 * models; one of the two in Nemotron-H's (model_arch.single_block); DeciLM's as its counts say (blocks_by_width: heads
 * for the attention, a width for the feed-forward block). il < 0: whether any layer has one. */
GGUFSCOPE_API bool model_hparams_layer_has_attention(const model_hparams *hp, int64_t il);
GGUFSCOPE_API bool model_hparams_layer_has_ffn(const model_hparams *hp, int64_t il);
/* Whether layer il is a feed-forward block alone (model_arch.single_block: its feed_forward_length entry above 0). */
GGUFSCOPE_API bool model_hparams_layer_is_ffn_only(const model_hparams *hp, int64_t il);
/* The layer whose keys and values layer il attends to: il itself, or for Gemma 4's last attention.shared_kv_layers
 * layers the last of the layers before them with a cache of the same kind (llama.cpp's layer_reuse_cb: the one before
 * the last for a sliding layer, the last for a full one). */
GGUFSCOPE_API int64_t model_hparams_layer_kv_source(const model_hparams *hp, int64_t il);
/* The layers a token runs through: the generating blocks (block_count less nextn_predict_layers) times num_loops;
 * layer il of them reads block il % blocks' weights (model_hparams_layer_block). */
GGUFSCOPE_API int64_t model_hparams_layers_run(const model_hparams *hp);
GGUFSCOPE_API int64_t model_hparams_layer_block(const model_hparams *hp, int64_t il);
/* Whether run layer il ends a pass of a looped model but the last, its output then normed by the final norm
 * (llama.cpp's nanbeige graph: loop_norm), unless skip_loop_final_norm. */
GGUFSCOPE_API bool model_hparams_layer_ends_loop(const model_hparams *hp, int64_t il);
/* Whether layer il has experts (a mixture's, past its leading dense layers and on its interleave step); il < 0: whether
 * any layer does. */
GGUFSCOPE_API bool model_hparams_layer_has_experts(const model_hparams *hp, int64_t il);
/* The value of a shape dimension (0: unknown). */
GGUFSCOPE_API int64_t model_hparams_dim(const model_hparams *hp, model_dim d);
/* hp as layer il sees it: its key/value heads and feed-forward width (the entries of attention.head_count_kv and
 * feed_forward_length where they list layers), and on a sliding-window layer the
 * window's head lengths and rotated width (model_hparams.head_dim_k_swa ..); hp itself for il < 0. */
GGUFSCOPE_API void model_hparams_layer(const model_hparams *hp, int64_t il, model_hparams *out);
/* The shape role ri's tensor has under these hyperparameters, GGUF order (1 for a dimension the role does not have);
 * false when one of them is unknown (0). */
GGUFSCOPE_API bool model_role_shape(const model_hparams *hp, const model_role_info *ri, int64_t ne[3]);
/* The same for a per-layer role's tensor in layer il (model_hparams_layer's view; il < 0: model_role_shape's). */
GGUFSCOPE_API bool model_role_shape_at(const model_hparams *hp, const model_role_info *ri, int64_t il, int64_t ne[3]);
/* What a dimension is, in words ("embedding_length"). */
GGUFSCOPE_API const char *model_dim_name(model_dim d);
/* How much a file of these hyperparameters needs role r: its architecture's need, ABSENT for the dense feed-forward
 * roles when the file has experts and for the experts' roles when it has none (MODEL_NEED_ABSENT without an
 * architecture). */
GGUFSCOPE_API model_need model_role_need(const model_hparams *hp, model_role r);
/* The same for layer il: a mixture of experts' leading dense layers (n_layer_dense_lead) need the dense roles in
 * place of the experts'. */
GGUFSCOPE_API model_need model_role_need_at(const model_hparams *hp, model_role r, int64_t il);

/* ---- memory: what llama.cpp allocates to run a file --------------------- */

/* The settings that decide it, with llama.cpp's option names and defaults (common/arg.cpp). */
typedef struct model_memory_params {
    int64_t n_ctx;            /* -c: 0 is the model's context_length */
    int64_t n_batch;          /* -b: 2048 */
    int64_t n_ubatch;         /* -ub: 512 */
    int64_t n_seq;            /* -np: 1 */
    uint32_t type_k, type_v;  /* -ctk / -ctv as GGUF type ids: F16 */
    int flash_attn;           /* -fa: -1 auto (on: the CPU backend supports it), 0 off, 1 on */
    bool no_repack;           /* --no-repack: no CPU_REPACK copies */
    bool no_mmap;             /* --no-mmap: weights read into an allocated buffer instead of mapped */
    bool cpu_avx2, cpu_avx512;/* the CPU llama.cpp's CPU backend runs on (model_memory_params_default: this one) */
} model_memory_params;

/* The defaults above, the CPU features those of the running machine. */
GGUFSCOPE_API model_memory_params model_memory_params_default(void);

/* The buffers llama.cpp's CPU build prints when it loads the file and makes a context ("CPU_Mapped model
 * buffer size", "CPU_REPACK model buffer size", "CPU KV buffer size", "CPU output buffer size", "CPU compute
 * buffer size"), each in bytes, and what decided them. */
typedef struct model_memory {
    uint64_t weights_mapped;    /* the file range the CPU's plain weights span (mmap), or their bytes (--no-mmap) */
    uint64_t weights_repacked;  /* the weights the CPU backend re-lays out for its kernels (a copy) */
    size_t n_repacked;          /* how many tensors */
    uint64_t weights_file;      /* all tensor data in the file */
    uint64_t kv_bytes;          /* K and V over all layers and streams */
    uint64_t kv_k, kv_v;
    int64_t kv_cells;           /* cells of a full-attention layer (n_ctx padded to 256) */
    int64_t kv_cells_swa;       /* cells of a sliding-window layer (0: none) */
    int64_t n_layer_full, n_layer_swa;
    /* the recurrent layers' states (llama_memory_recurrent's RS buffer: f32 rows, one per sequence): each layer's
     * convolution taps (state_conv values a row) and its scan state (state_scan values; 0 for a short convolution) */
    uint64_t recurrent;
    int64_t n_layer_recurrent, state_conv, state_scan;
    uint64_t output;            /* the logits buffer at context creation */
    uint64_t compute;           /* the graph's scratch for the worst-case batch */
    int64_t n_tokens;           /* that batch: min(n_ubatch, n_ctx) */
    bool flash_attn;
    int64_t n_ctx;              /* after padding */
    uint64_t total;             /* everything above that takes memory: mapped + repacked + KV + recurrent + output +
                                 * compute */
} model_memory;

/* Fills out for file f with hyperparameters hp. MODEL_E_UNSUPPORTED (err says why) for an architecture not in
 * the table or a cache type llama.cpp cannot hold. */
GGUFSCOPE_API model_status model_memory_estimate(const gguf_file *f, const model_hparams *hp,
                                                 const model_memory_params *p, model_memory *out, model_error *err);
/* The largest context (a multiple of 256, at most context_length) whose total fits in budget bytes, 0 when not
 * even 256 does. */
GGUFSCOPE_API int64_t model_memory_fit(const gguf_file *f, const model_hparams *hp, const model_memory_params *p,
                                       uint64_t budget);

#ifdef __cplusplus
}
#endif

#endif
