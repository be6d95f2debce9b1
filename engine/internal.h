/* Private to engine/: the error helper and the structures the files share. */
#ifndef GGUFSCOPE_ENGINE_INTERNAL_H
#define GGUFSCOPE_ENGINE_INTERNAL_H

#include "engine.h"

#include <math.h>


/* Fills err (when not NULL) and returns code. */
__attribute__((format(printf, 5, 6))) engine_status engine_fail(engine_error *err, engine_status code,
                                                                uint64_t offset, const char *subject,
                                                                const char *fmt, ...);

/* SplitMix64 (Steele, Lea, Flood): the next 64 random bits of state *x. */
uint64_t engine_splitmix64(uint64_t *x);

/* One block's weights, indexed by model_role (the per-layer roles; the global
 * roles' slots stay empty): t == NULL for a role this file does not have. */
typedef struct engine_layer {
    kern_weight w[MODEL_ROLE_COUNT];
    bool has_bias;           /* attn_{q,k,v}.bias */
    bool swa;                /* attends within the sliding window, with rope_swa */
    bool no_rope;            /* attends without rotary positions (NoPE: SmolLM3's every fourth layer) */
    int recurrent;           /* a recurrent layer: 1 + its index among them (its state's); 0: attention */
    int state;               /* 1 + the index of its recurrent state among the layers that keep one (a recurrent
                              * layer's, or Falcon-H1's mixer beside its attention: model_arch.mixer_beside); 0: none */
    /* what the layer runs after its input norm: a mixer (attention or recurrent) and a feed-forward block, or one of
     * them (model_arch.single_block: a feed-forward layer's norm is bound as its ffn_norm; DeciLM's: either, both or
     * none); linear: DeciLM's "linear attention", attn_output of the normed input alone (no heads, no cache) */
    bool mixer, ffn, linear;
    /* a mixture of experts, n_expert each: gate, up and down of each expert (ENGINE_EXPERT_GATE..DOWN), then their
     * biases where the file has them (ENGINE_EXPERT_GATE_BIAS..; NULL without) */
    kern_weight *experts[6];
    float *select_bias;      /* (n_expert) exp_probs_b on the host, for the routing; NULL without one */
    float *down_scale;       /* (n_expert) each expert's output scale on the host (Gemma 4); NULL without */
    float *router_scale;     /* (n_embd) the router's input gains on the host (Gemma 4's ffn_gate_inp.scale), or NULL */
    gguf_tensor split[10];   /* q, k, v of a fused attn_qkv; gate, up of a fused ffn_up: the rows of each; q's, k's
                              * and v's values of a fused attn_qkv.bias; gate, up of a fused ffn_up_shexp */
    /* latent attention split per head: each head's matrix of attn_k_b (heads[0]) and attn_v_b (heads[1]), n_head
     * each; NULL otherwise */
    kern_weight *heads[2];
    /* the layer's own shape (model_hparams_layer: a sliding-window layer's head lengths, a count of key/value heads or
     * a feed-forward width per layer), and the factor its output is multiplied by (Gemma 4's layer_output_scale; 1:
     * none) */
    int n_head, n_kv_head, head_dim, v_dim, n_ff; /* (OpenELM's head counts differ by layer) */
    float out_scale;
    float embd_skip_scale;   /* its layer_output_scale where that weighs the normed embeddings added (Talkie's), else 0 */
    /* Talkie's q gains (one per head, model_arch.q_norm_head_gain) as the rows the norm reads, each head's gain
     * head_dim times: w[MODEL_ROLE_ATTN_Q_NORM] is bound to this view of q_gain_rows (n_head, head_dim) */
    gguf_tensor q_gain_view;
    float *q_gain_rows;
    kern_xielu xielu;        /* its xIELU's parameters as ggml_xielu takes them (engine_hparams.act_xielu: Apertus) */
    bool gate_heads;         /* its attn_gate is a gate per head (Step-3.5's, Laguna's narrow ones), not per value */
    float expert_clamp;      /* its experts' SwiGLU limit (swiglu_clamp_exp above 1e-6: Maple's), else 0 */
    float shexp_clamp;       /* its shared expert's and dense block's (swiglu_clamp_shexp: Step-3.5's), else 0 */
    int kv_src;              /* the layer whose keys and values it attends to: il, or an earlier one (Gemma 4 E2B) */
} engine_layer;

struct engine_model {
    const gguf_file *f;
    kern_backend *be;
    engine_hparams hp;
    kern_weight tok_embd, output_norm, output;
    kern_weight output_norm_b; /* the final LayerNorm's bias (StarCoder2; t NULL: none) */
    kern_weight output_b;      /* the logits' bias (phi2; t NULL: none) */
    kern_weight ple_embd, ple_proj, ple_norm; /* Gemma 4's per-layer inputs' table, projection, norm (t NULL: none) */
    kern_weight pos_embd;  /* learned positions, a row per position (GPT-2; t NULL: none) */
    kern_weight embd_norm, embd_norm_b; /* BLOOM's LayerNorm of the embeddings, its bias (t NULL: none) */
    engine_layer *layers;  /* (n_layer) */
    gguf_tensor *expert_views;    /* (n_layer, 6, n_expert) each expert of the 3-D tensors as a matrix and of the
                                   * experts' biases as a row, or NULL */
    kern_weight *expert_weights;  /* the same, bound */
    gguf_tensor *head_views;      /* (n_layer, 2, n_head) each head of attn_k_b and attn_v_b as a matrix, or NULL */
    kern_weight *head_weights;    /* the same, bound */
    float *freq_factors;   /* (n_rot / 2) from rope_freqs.weight, or NULL */
    float *rope_long, *rope_short; /* (n_rot / 2) LongRoPE divisors (phi3 128k), or NULL */
    bool release_weights;  /* engine_model_release_weights */
};

/* The experts' parts of a layer (engine_layer.experts), each a role of model/arch.c. */
enum { ENGINE_EXPERT_GATE, ENGINE_EXPERT_UP, ENGINE_EXPERT_DOWN, ENGINE_EXPERT_GATE_BIAS, ENGINE_EXPERT_UP_BIAS,
       ENGINE_EXPERT_DOWN_BIAS, ENGINE_EXPERT_PARTS };

/* The norm that reads layer il's input: its attn_norm, or a feed-forward layer's own (engine_layer.mixer false). */
static inline const kern_weight *engine_layer_input_norm(const engine_model *m, int il)
{
    const engine_layer *L = &m->layers[il];
    return &L->w[L->mixer ? MODEL_ROLE_ATTN_NORM : MODEL_ROLE_FFN_NORM];
}

/* SiLU(gate) * up into out (n values, rows of F) by backend b under llama.cpp's SwiGLU limit (swiglu_clamp_exp /
 * _shexp above 1e-6; 0: none): up within +-limit, then the gate at most the limit before its SiLU (ggml_swiglu_clamp:
 * Maple's experts) or, silu_first (model_arch.swiglu_clamp_silu_first: build_moe_ffn's and build_ffn's other form,
 * Step-3.5's), SiLU(gate) at most the limit, as gate times its sigmoid; then their product. gate and up are scratch.
 * The forward pass and --compare's re-derivation both run it. (A NaN the clamp meets becomes the limit, where ggml's
 * keeps it: the ops before it, traced, show it.) */
static inline kern_status engine_limited_swiglu(kern_backend *b, float limit, bool silu_first, float *gate, float *up,
                                                size_t n, size_t F, float *out)
{
    kern_status ks = KERN_OK;
    if (limit > 0.0f)
        ks = b->clamp(b, up, n, -limit, limit);
    if (!ks && limit > 0.0f && !silu_first)
        ks = b->clamp(b, gate, n, -INFINITY, limit);
    if (!ks && (limit <= 0.0f || !silu_first))
        return b->glu(b, KERN_ACT_SILU, gate, up, n, F, out);
    if (!ks)
        ks = b->glu(b, KERN_ACT_SIGMOID, gate, gate, n, F, gate);
    if (!ks)
        ks = b->clamp(b, gate, n, -INFINITY, limit);
    return ks ? ks : b->glu(b, KERN_ACT_NONE, gate, up, n, F, out);
}

/* What a per-tensor scale (engine/weight_scales.c) is to this engine: not one; one the forward pass applies; one
 * llama.cpp's graph for the family leaves unread (so do we); one it may apply that is not run here yet. */
typedef enum engine_scale_kind {
    ENGINE_SCALE_NONE, ENGINE_SCALE_RUN, ENGINE_SCALE_UNREAD, ENGINE_SCALE_NOT_RUN
} engine_scale_kind;
engine_scale_kind engine_weight_scale_of(const engine_model *m, const gguf_tensor *t);
/* Layer il's scales that the forward pass applies, onto the weights whose products they multiply (after the layer's
 * experts are bound) */
engine_status engine_load_weight_scales(engine_model *m, int il, engine_error *err);
/* The logits' per-tensor scale (output.scale) where the forward pass applies it, onto the output weight */
engine_status engine_load_output_scale(engine_model *m, engine_error *err);

/* Layer il's attention: grouped heads, the model's scale, and the sliding window on the layers that have one. */
static inline kern_attn engine_layer_attn(const engine_model *m, int il)
{
    const engine_hparams *hp = &m->hp;
    const engine_layer *L = &m->layers[il];
    return (kern_attn){ .n_head = L->n_head, .n_kv_head = L->n_kv_head, .head_dim = L->head_dim, .v_dim = L->v_dim,
                        .scale = hp->attn_scale, .window = m->layers[il].swa ? hp->swa_window : 0,
                        .chunked = hp->g.swa_chunked,
                        .softcap = hp->g.attn_softcap, .softcap_in = hp->g.attn_softcap_in,
                        .alibi_max_bias = hp->g.alibi_max_bias,
                        .sinks = m->layers[il].w[MODEL_ROLE_ATTN_SINKS].t ? &m->layers[il].w[MODEL_ROLE_ATTN_SINKS]
                                                                          : NULL };
}

/* The attention temperature of a query at position pos in a layer (rotating or not) (Ministral 3's on every layer,
 * Llama 4's on those without positions), as llama.cpp's llm_graph_input_attn_temp computes it:
 * log(floor((pos + offset) / floor) + 1) * scale + 1, the floor's argument in f32, the rest in double, rounded to f32;
 * 1 without a temperature. */
static inline float engine_attn_temperature(const engine_hparams *hp, bool no_rope, int pos)
{
    const float scale = hp->g.attn_temp_scale;
    if (scale == 0.0f || (hp->g.attn_temp_nope_only && !no_rope))
        return 1.0f;
    return (float)(log(floorf(((float)pos + hp->g.attn_temp_offset) / hp->g.attn_temp_floor) + 1.0) * scale + 1.0);
}

/* One token's experts (route.c) from its router logits (n_expert), as hp says to weigh them, with a layer's selection
 * bias (n_expert, or NULL): probs (2 n_expert) is scratch, ids and weights (n_expert_used) the experts chosen, most
 * probable first, and what their outputs are multiplied by. */
void engine_route(const engine_hparams *hp, const float *select_bias, const float *logits, float *probs, int *ids,
                  float *weights);

/* The widest of q's rows per head: the attention's query and output (head_dim, v_dim), latent attention's query
 * before absorption and its output after decompression (k_mla, v_mla). */
static inline size_t engine_q_width(const engine_hparams *hp)
{
    const int w[] = { hp->head_dim_max, hp->v_dim_max, hp->mla ? hp->k_mla : 0, hp->mla ? hp->v_mla : 0 };
    int widest = 0;
    for (size_t i = 0; i < sizeof w / sizeof w[0]; i++)
        widest = w[i] > widest ? w[i] : widest;
    return (size_t)widest;
}

/* Floats a token's gated delta net or gated attention keeps in the context's dn rows (delta_net.c), 0 without. */
size_t engine_dn_width(const engine_hparams *hp);
/* The context's dn buffer cut into n regions of max_batch rows each, widths[i] floats a row (regions NULL, c NULL: only
 * the sum of the widths, which it returns; delta_net.c). */
size_t engine_dn_regions(const engine_ctx *c, const size_t *widths, int n, float **regions);
/* Floats a token's Mamba-2 mixer keeps in the context's dn rows (mamba2.c). */
size_t engine_mamba2_width(const engine_hparams *hp);
/* ... and its Mamba-1 mixer (mamba1.c). */
size_t engine_mamba1_width(const engine_hparams *hp);
/* Floats of the recurrent states: every recurrent layer's convolution inputs and delta rule state (delta_net.c). */
size_t engine_dn_state_floats(const engine_hparams *hp, size_t *conv);
/* A delta net's inputs out of Qwen3-Next's fused projections (delta_net.c), by be's copy_rows: each row of qkvz (T,
 * 2 dn_hk dn_d + 2 dn_hv dn_d: per key head its q, k, its value heads' v, then their z) into mixed (q, k, v) and z;
 * each of ba (T, 2 dn_hv: per key head its value heads' beta, then their alpha) into beta and alpha. Either source may
 * be NULL (nothing of it unpacked). */
kern_status engine_dn_unpack(kern_backend *be, const engine_hparams *hp, const float *qkvz, const float *ba, int T,
                             float *mixed, float *z, float *beta, float *alpha);
/* Zeroes every recurrent layer's state: a context that starts over (delta_net.c). */
engine_status engine_dn_reset(engine_ctx *c, engine_error *err);
/* The model's rotary frequency divisors, loaded once (engine/rope_factors.c). */
engine_status engine_load_rope_factors(engine_model *m, engine_error *err);
/* Layer il's tensors bound in parts (engine/model_parts.c): each expert of its experts' tensors, each head of latent
 * attention's attn_k_b and attn_v_b, the q, k, v (gate, up) rows of a fused attn_qkv (ffn_up). */
engine_status engine_bind_experts(engine_model *m, int il, engine_error *err);
engine_status engine_bind_heads(engine_model *m, int il, engine_error *err);
engine_status engine_bind_fused(engine_model *m, int il, engine_error *err);
/* Talkie's attn_q_norm ({1, n_head}) bound as n_head rows of head_dim gains in the file's tensor's place */
engine_status engine_bind_q_head_gains(engine_model *m, int il, engine_error *err);

/* Floats a token's latent attention keeps in the context's mla rows (mla.c), 0 without latent attention. */
size_t engine_mla_width(const engine_hparams *hp);

enum { LOGIT_ROWS = 8 };  /* logits are produced this many rows at a time: (8, n_vocab) of scratch */

/* Rows of logits scratch: LOGIT_ROWS, or where the backend wants parts of at least m rows (split_rows_min),
 * 2m - 1, so that a batch of m rows or more is always cut into parts of m to 2m - 1 (engine_logit_part). */
static inline int engine_logit_rows(const kern_backend *be)
{
    return be->split_rows_min > 0 && 2 * be->split_rows_min - 1 > LOGIT_ROWS ? 2 * be->split_rows_min - 1 : LOGIT_ROWS;
}

/* Rows of the next part of logits when `left` rows remain */
static inline int engine_logit_part(const kern_backend *be, int left)
{
    const int cap = engine_logit_rows(be);
    return left <= cap ? left : be->split_rows_min > 0 ? be->split_rows_min : cap;
}

struct engine_ctx {
    engine_model *m;
    kern_backend *be;
    int n_ctx, max_batch, pos;
    float *k_cache, *v_cache;     /* per layer (n_ctx, its n_kv_head * head_dim or v_dim), at k_off[il], v_off[il] */
    size_t *k_off, *v_off;        /* (n_layer) */
    float *x, *h, *q, *att, *o;   /* (max_batch, n_embd, or q's widest: engine_q_width) */
    float *mla;                   /* (max_batch, engine_mla_width) latent attention's rows (mla.c), or NULL */
    /* gated delta nets (delta_net.c): each recurrent layer's convolution inputs (dn_conv - 1, dn_channels) and state
     * (dn_hv, dn_d, dn_d); the batch's rows (max_batch, engine_dn_width); NULL without */
    float *dn_conv_state, *dn_state, *dn;
    float *gate, *up;             /* (max_batch, widest of n_ff, n_ff_exp, n_ff_shexp, n_ple) */
    float *ple, *ple_tmp;         /* (max_batch, n_layer, n_ple) Gemma 4's per-layer inputs, or NULL */
    float *moe_beside;            /* (3, max_batch, n_embd) Gemma 4's experts' input, router's input, experts' output;
                                   * (max_batch, n_embd) the layer's input, SmallThinker's router's (Arctic's experts',
                                   * normed there in place); Talkie's normed embeddings (model_arch.embd_skip) */
    float *router_in_host;        /* (max_batch, n_embd) the router's input on the host (Gemma 4), or NULL */
    float *router;                /* (max_batch, n_expert): the router's logits, then the shared expert's gate */
    float *moe_tmp;               /* (max_batch, n_embd): one expert's or the shared expert's output */
    float *router_host;           /* (max_batch, n_expert + 1), host */
    float *route_probs, *route_weights; /* (n_expert), (n_expert_used): one token's routing, host */
    int *route_ids;               /* (n_expert_used), host */
    /* grouped experts (exact numerics, batches of several tokens), host: the batch's rows, one expert's rows gathered,
     * every token's chosen experts and weights and each one's output, the slots (token * k + j) an expert serves */
    float *moe_in_host, *moe_stage_host, *moe_weights_host, *moe_out_host;
    int *moe_ids_host, *moe_slots_host;
    float *logits;                /* (engine_logit_rows, n_vocab) */
    kern_row_stats *stats;        /* (max_batch), host */
    float *probe_host;            /* activations copied for a probe's on_values, host */
    size_t probe_cap;
    int last_T;                   /* rows of the last batch: its final-norm rows are in h */
    bool recording;               /* between the backend's step_begin and step_end */
    /* Replayable decode steps (a backend with step_replay): the step's new key and value rows before store_rows
     * puts them in the cache at the step's position, (n_kv_head * head_dim) each; the step's top ids and values in
     * host memory of the context's own, where a replay delivers them; this context's part of the steps' keys. */
    float *k_step, *v_step;
    int32_t step_ids[KERN_TOP_K_MAX];
    float step_vals[KERN_TOP_K_MAX];
    uint64_t step_key;
    uint64_t bytes;
};

#endif
