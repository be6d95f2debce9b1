/*
 * engine.h — a model = hyperparameters + weights + tokenizer; the forward
 * pass over a backend (kernels/kern.h); sampling; traces; the smoke verdict.
 *
 * Supported architectures: those model/arch.c describes (llama, qwen2, qwen3,
 * gemma3); the forward pass branches on their feature flags, never on a name.
 * The math follows llama.cpp's graphs for them and is held to llama.cpp's
 * outputs by the tests (../shared/golden). Weights stay
 * in the file's mapping in their own types; activations and the KV cache are
 * f32. Nothing here prints or exits: every call returns a status and fills an
 * engine_error.
 */
#ifndef GGUFSCOPE_ENGINE_H
#define GGUFSCOPE_ENGINE_H

#include "gguf.h"
#include "kern.h"
#include "model.h"
#include "tokenizer.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum engine_status {
    ENGINE_OK = 0,
    ENGINE_E_ARCH,       /* an architecture, or a feature of one, this engine does not run */
    ENGINE_E_MODEL,      /* a key or tensor is missing or does not fit the hyperparameters */
    ENGINE_E_INPUT,      /* bad argument: token id out of range, empty prompt, context full */
    ENGINE_E_NOMEM,
    ENGINE_E_BACKEND,    /* the backend failed (see the message) */
} engine_status;

typedef struct engine_error {
    engine_status code;
    uint64_t offset;      /* byte offset in the file the problem concerns (0: none) */
    char subject[GGUF_ERROR_SUBJECT_SIZE];    /* key or tensor name */
    char message[GGUF_ERROR_MESSAGE_SIZE];
} engine_error;

const char *engine_status_name(engine_status s);
/* Whether an error is the file's fault (malformed: a tool exits 1) rather than trouble or something this
 * engine does not support (exit 2). */
bool engine_status_is_file_fault(engine_status s);

/* ---- hyperparameters ----------------------------------------------------- */

typedef struct engine_hparams {
    char arch[64];          /* general.architecture */
    const model_arch *desc;  /* its description (model/arch.c): roles and feature flags */
    int n_embd, n_layer, n_head, n_kv_head, head_dim, n_ff, n_vocab, n_ctx_train;
    /* the file's generating blocks; n_layer, the layers a token runs through, is more in a looped model (Nanbeige's
     * num_loops: run layer il reads block il % n_block's weights, and keeps a cache of its own) */
    int n_block;
    int v_dim;              /* a head's value row in the cache: head_dim, but in latent attention */
    bool norm_layer;        /* every norm a LayerNorm (model_hparams.norm_layer), else RMSNorms */
    /* the widest over the layers (engine_layer has each one's): a head's key and value rows, a position's keys or
     * values in a layer's cache */
    int head_dim_max, v_dim_max, kv_max;
    int n_ple;              /* Gemma 4 E2B / E4B's per-layer input width (embedding_length_per_layer_input; 0: none) */
    /* Latent attention (DeepSeek-V2/V3: model_arch.mla): the query's and the keys' and values' compression ranks
     * (n_lora_q 0: the query straight from the input), a head's key and value lengths after decompression and the
     * key's part without rotation; split: the decompression per head (attn_k_b, attn_v_b: the cache holds the
     * compressed row and its rotary key, one head for all) rather than whole (attn_kv_b: a head's own keys and
     * values in the cache) */
    bool mla, mla_split;
    int n_lora_q, n_lora_kv, k_mla, v_mla, qk_nope;
    /* A gated delta net's layers (Qwen3.5: model_arch.delta_net): the convolution's taps, the key and value heads, a
     * head's length, the convolved channels (2 dn_hk dn_d + dn_hv dn_d); the recurrent layers' count. attn_out_gated:
     * the attention layers' q rows carry a gate per head (model_arch.attn_out_gated). */
    bool delta_net, attn_out_gated, dn_grouped; /* dn_grouped: model_arch.dn_heads_grouped */
    bool attn_gate_proj; /* the attention's output gated by a product of its own (model_arch.attn_gate_proj) */
    kern_act attn_gate_act; /* that gate's activation, and Step-3.5's per head: sigmoid, or Laguna's softplus */
    int dn_conv, dn_hk, dn_hv, dn_d, dn_channels, n_recurrent;
    /* LFM2's short convolution layers (model_arch.shortconv): dn_conv taps over dn_channels = n_embd, n_recurrent of
     * them; no delta rule state */
    bool shortconv;
    /* Mamba-2's layers (model_arch.mamba2: Nemotron-H): dn_conv taps over dn_channels = m2_inner + 2 dn_hk dn_d (x, B,
     * C), dn_hv heads of m2_inner / dn_hv, dn_hk groups of B and C, dn_d state values per row */
    bool mamba2;
    int m2_inner;
    /* Mamba-1's layers (model_arch.mamba1): Mamba-2's fields with a head per channel (dn_hv = m2_inner channels, one
     * group, dn_channels = m2_inner convolved), dt of rank m1_dt_rank widened to every channel, dt, B and C RMS-normed
     * without gains where m1_dt_b_c_rms (Falcon-Mamba) */
    bool mamba1, m1_dt_b_c_rms;
    int m1_dt_rank;
    float eps;              /* RMSNorm epsilon */
    kern_rope rope;         /* full-attention layers: n_rot, neox, base, freq_scale (freq_factors bound with the
                             * weights) */
    kern_rope rope_swa;     /* sliding-window layers (their own base, no scaling) */
    int swa_window;         /* sliding-window layers mask keys this many positions back or more (0: none) */
    kern_act act;           /* the FFN gate's activation */
    bool act_squared;       /* a block without a gate: act(x Wup) * (x Wup) (relu^2), else act(x Wup) alone */
    bool act_xielu;         /* a block without a gate: xIELU(x Wup) with each layer's parameters (engine_layer.xielu) */
    float attn_scale;       /* multiplies q.k (1/sqrt(head_dim) unless the architecture says otherwise) */
    float embd_scale;       /* multiplies the token embeddings (gemma: sqrt(n_embd); granite: embedding_scale) */
    float residual_scale;   /* multiplies each block's output before its residual add (granite; 1: none) */
    float logit_scale;      /* multiplies the logits before any soft-capping (granite: 1 / logit_scale; 1: none) */
    bool qk_norm_full;      /* the q and k norms span whole rows, not each head (olmo2) */
    float final_softcap;    /* logits = c * tanh(logits / c) when > 0 */
    bool tied_output;       /* no output.weight: logits use token_embd */
    bool qkv_bias;          /* attn_{q,k,v}.bias present */
    bool qk_norm;           /* per-head RMSNorm of q and k before rotary */
    bool post_norms;        /* RMSNorm of the attention and FFN outputs before each residual add */
    /* A mixture of experts (n_expert > 0): softmax over the router's logits, the top n_expert_used experts, whose
     * probabilities are renormalised to sum 1 when moe_renormalise; a shared expert where the file has one. */
    int n_expert, n_expert_used, n_ff_exp, n_ff_shexp;
    bool moe_renormalise;
    float moe_scale;             /* multiplies the chosen experts' weights (1: none) */
    model_moe_gating moe_gating; /* softmax then top k, top k then softmax (gpt-oss), or sigmoids (glm4moe) */
    /* Where each choice came from, for the start-up report. */
    bool eps_defaulted, base_defaulted, head_dim_from_key_length, n_rot_from_key, freq_factors;
    model_hparams g;         /* everything model/'s reader found */
} engine_hparams;

/* Reads and checks the hyperparameters of a supported architecture. */
engine_status engine_hparams_read(const gguf_file *f, engine_hparams *hp, engine_error *err);
/* "llama, qwen2, qwen3, gemma3": for messages. */
const char *engine_supported_archs(void);

/* ---- model and context --------------------------------------------------- */

typedef struct engine_model engine_model;

/* Binds every weight of f to backend b (both must outlive the model). */
engine_status engine_model_load(const gguf_file *f, kern_backend *b, engine_model **out, engine_error *err);
void engine_model_free(engine_model *m);
const engine_hparams *engine_model_hparams(const engine_model *m);
/* Binds t in place of the model's tensor of the same name and shape (another type allowed: a quantized tensor
 * restored to its base's precision); t must outlive the model. A tensor bound in parts (fused, experts') is refused
 * (ENGINE_E_INPUT). The next forward pass uses it. */
engine_status engine_model_replace_weight(engine_model *m, const gguf_tensor *t, engine_error *err);
/* on: after each layer of a forward pass its weights' pages in the file's mapping go back to the page cache (the
 * output's and the embeddings' after the logits), so the process holds about one layer's weights at a time and
 * every pass faults them in again from the cache: for a tool that runs two models in one process. */
void engine_model_release_weights(engine_model *m, bool on);
kern_backend *engine_model_backend(const engine_model *m);
/* What a mixture of experts' layers hold, as bound, for reports. */
typedef struct engine_layer_kinds {
    int dense_layers;      /* layers with a dense feed-forward block (a mixture's leading ones) */
    bool shared_experts, shared_gate, selection_bias, expert_biases;
    bool dense_beside;     /* experts with a dense block beside them, the sum scaled (Grok-2's) */
} engine_layer_kinds;
engine_layer_kinds engine_model_layer_kinds(const engine_model *m);
/* The file's per-tensor scales (blk.N.W.scale and .input_scale, output.scale), for reports: how many the forward pass
 * applies and how many it leaves unread as the family's llama.cpp graph does (input scales among them), the weights
 * each kind stands beside (comma-separated, each once), and the logits' factor (output.scale; 0: none applied). */
typedef struct engine_scale_summary {
    int applied, unread, inputs;
    char applied_on[160], unread_on[160];
    float output_scale;
} engine_scale_summary;
engine_scale_summary engine_model_scales(const engine_model *m);
/* Bytes of weights one token's forward pass reads (every matrix once, one embedding row). */
uint64_t engine_model_bytes_per_token(const engine_model *m);
/* The rotary frequency divisors a context of n_ctx positions uses (Llama 3.1's rope_freqs, or LongRoPE's long or
 * short ones as llama.cpp picks them), NULL for none; *what (when not NULL) says which, for reports. */
const float *engine_rope_factors_for(const engine_model *m, int n_ctx, const char **what);
/* Multiply-adds of the layers' matrix products per token (every layer's weight matrices once; the output matrix,
 * which a prompt multiplies for its last token only, and attention's scores are left out). */
uint64_t engine_model_layer_products_per_token(const engine_model *m);

/* What a probe sees: per-row statistics of one activation after one op. */
typedef enum engine_op {
    ENGINE_OP_EMBD,         /* the residual entering layer 0: the token embeddings as the model scales them (layer 0
                             * only; llama.cpp's inp_embd, or inp_scaled where the model scales them) */
    ENGINE_OP_ATTN_NORM, ENGINE_OP_Q, ENGINE_OP_K, ENGINE_OP_V, ENGINE_OP_ATTN, ENGINE_OP_ATTN_OUT,
    ENGINE_OP_ATTN_POST_NORM, /* models with post-norms only (gemma): the normalized attention output */
    ENGINE_OP_FFN_NORM, ENGINE_OP_FFN_ACT, ENGINE_OP_FFN_OUT,
    ENGINE_OP_FFN_POST_NORM,  /* models with post-norms only */
    ENGINE_OP_LAYER_OUT,    /* the residual stream after the layer (llama.cpp's l_out) */
    ENGINE_OP_RESULT_NORM,  /* the final norm's output (layer = n_layer) */
    ENGINE_OP_COUNT
} engine_op;
const char *engine_op_name(engine_op op);  /* ENGINE_OP_COUNT: "logits" */

typedef struct engine_probe {
    /* Called after `op` of `layer` for rows pos0 .. pos0 + T - 1 (either may be NULL). */
    void (*on_op)(void *user, engine_op op, int layer, int pos0, int T, const kern_row_stats *rows);
    /* The activation itself, (T, n) copied to host memory: for comparing backends value by value. */
    void (*on_values)(void *user, engine_op op, int layer, int pos0, int T, int n, const float *x);
    void *user;
    bool all_ops;  /* false: only LAYER_OUT and RESULT_NORM */
} engine_probe;

typedef struct engine_ctx engine_ctx;

/* A KV cache for n_ctx positions; prompts are run max_batch tokens at a time. */
engine_status engine_ctx_create(engine_model *m, int n_ctx, int max_batch, engine_ctx **out, engine_error *err);
void engine_ctx_free(engine_ctx *c);
int engine_ctx_pos(const engine_ctx *c);   /* positions filled so far */
/* Forgets positions pos and after (0 <= pos <= engine_ctx_pos): the next tokens run at pos, over the cache the
 * first pos positions left (llama.cpp's llama_memory_seq_rm for one sequence). The memory stays committed, so a
 * rerun does not fault the cache's pages in again. ENGINE_E_INPUT when pos is outside that range. */
engine_status engine_ctx_rewind(engine_ctx *c, int pos, engine_error *err);
int engine_ctx_size(const engine_ctx *c);
uint64_t engine_ctx_bytes(const engine_ctx *c);  /* KV cache + activations */
/* What engine_ctx_create(m, n_ctx, max_batch) allocates, without allocating it: the K and V caches (each one buffer
 * of n_layer x n_ctx rows of kv_row_bytes: the pages of positions never reached are not touched) and the
 * activations, each a buffer of rows (a batch's, or the logits' scratch) of row_bytes. */
enum { ENGINE_CTX_ACT_BUFFERS = 16 };
typedef struct engine_ctx_memory {
    uint64_t kv_bytes, kv_bytes_per_position;
    uint64_t state_bytes;               /* recurrent layers' states (a gated delta net's), whatever the context */
    int n_layer, n_ctx, max_batch;
    uint64_t kv_row_bytes, v_row_bytes; /* a K cache row, a V cache row (shorter in latent attention) */
    uint64_t activation_bytes;
    struct {
        uint64_t rows, row_bytes;
        bool batch_rows;          /* one row per token of a batch (the logits' scratch is always used whole) */
    } act[ENGINE_CTX_ACT_BUFFERS];
    int n_act;
} engine_ctx_memory;
engine_status engine_ctx_estimate(const engine_model *m, int n_ctx, int max_batch, engine_ctx_memory *out,
                                  engine_error *err);

/* Runs tokens[0..T) at the next positions. logits (host memory): the logits
 * of every row (T, n_vocab) when all_logits, else of the last row (n_vocab);
 * NULL for none. probe may be NULL. */
engine_status engine_forward(engine_ctx *c, const int32_t *tokens, int T, bool all_logits, float *logits,
                             const engine_probe *probe, engine_error *err);

/* As engine_forward, but only the greedy choice after the last token comes
 * back (*next, ties to the lowest id): the logits stay on the backend. */
engine_status engine_forward_argmax(engine_ctx *c, const int32_t *tokens, int T, int32_t *next,
                                    const engine_probe *probe, engine_error *err);
/* As engine_forward, but only the k (1..KERN_TOP_K_MAX) largest logits of the
 * last token come back, largest first (ids[i] = -1 past the non-NaN ones). */
engine_status engine_forward_top_k(engine_ctx *c, const int32_t *tokens, int T, int k, int32_t *ids, float *vals,
                                   const engine_probe *probe, engine_error *err);

/* ---- sampling ------------------------------------------------------------ */

typedef struct engine_sampler_params {
    float temp;     /* <= 0: greedy (argmax) */
    int top_k;      /* <= 0: off */
    float top_p;    /* >= 1: off */
    float min_p;    /* <= 0: off */
    uint64_t seed;
} engine_sampler_params;

engine_sampler_params engine_sampler_default(void);  /* greedy */

typedef struct engine_sampler engine_sampler;
engine_sampler *engine_sampler_create(const engine_sampler_params *p, int32_t n_vocab);
void engine_sampler_free(engine_sampler *s);
/* Picks a token from logits (n_vocab). Ties in argmax go to the lowest id. */
int32_t engine_sample(engine_sampler *s, const float *logits);
/* The same choice from only the k largest logits (ids/vals largest first,
 * as engine_forward_top_k gives them), when the sampler's top_k is k: the
 * rest of the vocabulary cannot be chosen then anyway. */
int32_t engine_sample_top(engine_sampler *s, const int32_t *ids, const float *vals, int k);
int32_t engine_argmax(const float *logits, int32_t n);

/* ---- traces --------------------------------------------------------------- */

/* What one generated token looked like when it was chosen. */
typedef struct engine_step {
    int pos;                 /* position whose logits chose it */
    int32_t token;
    int32_t top_id[5];
    float top_logit[5];
    float margin;            /* top-1 minus top-2 logit */
    float entropy;           /* of softmax(logits), nats */
    float change;            /* max |logits - previous step's| / max |logits| (NAN on the first step) */
    uint32_t n_nonfinite;    /* NaN/Inf logits */
} engine_step;

typedef struct engine_trace engine_trace;

engine_trace *engine_trace_create(int n_layer, int32_t n_vocab);
void engine_trace_free(engine_trace *t);
/* A probe that records the residual after every layer and the final norm. */
engine_probe engine_trace_probe(engine_trace *t);
/* Records the logits that chose `token` at position pos. */
bool engine_trace_step(engine_trace *t, int pos, int32_t token, const float *logits);
/* Keeps the residual itself after each layer (and the final norm's output) for positions 0 .. n_pos - 1, not only
 * its statistics: (n_layer + 1) x n_pos x n_embd floats. False when out of memory. Call before the run. */
bool engine_trace_keep_values(engine_trace *t, int n_pos, int n_embd);
/* Layer il's kept values (il = n_layer: the final norm's), n_pos x n_embd; NULL when not kept. */
const float *engine_trace_values(const engine_trace *t, int il);
/* Keeps op's output too, in every layer, for the positions engine_trace_keep_values keeps (rows of width values);
 * the run then probes every op. False when out of memory or called before engine_trace_keep_values. */
bool engine_trace_keep_op(engine_trace *t, engine_op op, int width);
/* Op's kept values in layer il (LAYER_OUT and RESULT_NORM: engine_trace_values), n_pos x width; NULL when none. */
const float *engine_trace_op_values(const engine_trace *t, engine_op op, int il);
int engine_trace_layers(const engine_trace *t);      /* n_layer + 1 (the last is result_norm) */
int engine_trace_positions(const engine_trace *t);
/* Statistics of layer il (n_layer: the final norm) at position pos, NULL when not recorded. */
const kern_row_stats *engine_trace_at(const engine_trace *t, int il, int pos);
/* What llama.cpp's graph for hp's architecture calls l_out-il (or result_norm: il = n_layer) at position pos: the
 * residual after the layer (engine_trace_at), or where model_arch.l_out_is_ffn_out says so the feed-forward block's
 * output before its residual add (NaN statistics in a layer without one); NULL when not recorded. */
const kern_row_stats *engine_trace_l_out_at(const engine_trace *t, const engine_hparams *hp, int il, int pos);
size_t engine_trace_n_steps(const engine_trace *t);
const engine_step *engine_trace_step_at(const engine_trace *t, size_t i);

/* ---- comparing two backends -------------------------------------------------------- */

/* One op of one layer (or the final norm: layer n_layer; or the logits: op ENGINE_OP_COUNT). */
typedef struct engine_cmp_point {
    engine_op op;
    int layer;
    /* Relative difference of a row: max |a - b| / max |a|. The largest over the
     * prompt's rows and over the decode steps' (-1: none seen), and overall. */
    float rel_prompt, rel_decode, rel_worst;
    int worst_pos;                  /* where the largest was (-1: never compared) */
    kern_row_stats a, b;            /* both sides' statistics there */
    long long first_seq;            /* execution order of the first row beyond the tolerance that its
                                     * inputs do not explain (-1: none) */
    float rel_explained;            /* the largest difference of rows beyond the tolerance that the op's own
                                     * inputs explain (each side equals, within the tolerance, the op re-derived
                                     * on the host from its own inputs in its own numerics); -1: none */
    float self_worst[2];            /* over the rows re-derived, each side's largest difference from its own
                                     * re-derivation (-1: none re-derived): how closely each side computes the op */
    bool carried;                   /* some of those could not be re-derived and count as carried from the
                                     * explained differences before them (ENGINE_CMP_INHERITED) */
    int first_pos;
    float first_rel;
    float first_self[2];            /* at the first unexplained row, each side against its own re-derivation
                                     * (-1: not re-derived): the side beyond the tolerance computes the op wrongly */
    kern_row_stats first_a, first_b;
} engine_cmp_point;

/* A row beyond the tolerance of an op that cannot be re-derived (engine/compare.c) counts as carried from the
 * explained rows before it when it differs by no more than this many times the largest explained difference. */
#define ENGINE_CMP_INHERITED 10.0f

typedef struct engine_comparison {
    float tol;
    int n_layer, n_points;
    engine_cmp_point *points;       /* in execution order: layer 0's ops, ..., result_norm, logits; an op
                                     * the model does not run (post-norms without them) keeps worst_pos -1 */
    int first_bad;                  /* the point that first went beyond tol in execution order (-1: none) */
    int n_prompt, n_decode;         /* positions compared in each phase */
    int32_t *tokens;                /* the decode steps' tokens (side A's greedy choices) */
    int n_tokens;
    int greedy_disagree;            /* steps where side B's greedy choice differed */
    int first_disagree_step;        /* -1: none */
    int first_nonfinite;            /* the first point whose rows hold NaN or Inf on either side (-1: none), */
    int first_nonfinite_pos;        /* and the position: two backends agreeing on NaN still fail the model */
    /* Each side's residual RMS after every layer and the final norm, per position, for pictures:
     * rms[side][il * rms_stride + pos], il in 0..n_layer (n_layer: the final norm); NAN where not run. */
    float *rms[2];
    int rms_stride;
} engine_comparison;

/* Runs the prompt (in chunks of `chunk` positions) and n_decode greedy steps
 * on two fresh contexts of the same model on two backends, comparing every
 * op's activations and the logits value by value. */
engine_status engine_compare(engine_ctx *a, engine_ctx *b, const int32_t *prompt, size_t n_prompt, int n_decode,
                             int chunk, float tol, engine_comparison *out, engine_error *err);
void engine_comparison_free(engine_comparison *r);

/* ---- the lm_head spot check ---------------------------------------------------- */

/* What spot checks found, accumulated over forward passes (zero it first). */
typedef struct engine_spot {
    int checks;              /* forward passes checked */
    int rows;                /* vocabulary rows recomputed in all */
    int mismatches;          /* of them, rows whose logit differs by more than the tolerance */
    int32_t bad_rows[16];    /* the first distinct mismatching rows */
    int n_bad;
    int first_pos;           /* position of the first mismatch (-1: none) */
    int32_t first_row;
    float first_backend, first_reference;  /* that row's logit: the backend's, the CPU's recomputation */
    float max_rel;           /* largest |backend - CPU| / max |logits| seen */
} engine_spot;

enum { ENGINE_SPOT_ROWS = 64 };   /* rows per check: the first, the last, 62 random */
#define ENGINE_SPOT_TOL 1e-2f      /* of max |logits|: far above rounding (1e-4 with f16 GEMM inputs), far below a wrong row */

/* Recomputes n_rows rows of `logits` (the last position's, as the backend
 * produced them, host memory) on the CPU from the output matrix's bytes in
 * the file and the final norm's output: rows 0 and n_vocab - 1, then random
 * ones drawn from seed. Mismatches beyond tol * max |logits| go into acc. */
engine_status engine_spot_check(engine_ctx *c, const float *logits, int n_rows, uint64_t seed, float tol,
                                engine_spot *acc, engine_error *err);

/* ---- generation ------------------------------------------------------------ */

typedef struct engine_gen_params {
    int n_predict;               /* tokens to generate at most */
    engine_sampler_params sampler;
    float *prompt_logits;        /* (n_prompt, n_vocab) host memory to fill, or NULL */
    int spot_rows;               /* > 0: spot-check this many lm_head rows after every forward pass */
} engine_gen_params;

typedef struct engine_gen_result {
    int32_t *tokens;             /* generated ids (malloc'd) */
    size_t n_tokens;
    bool stopped_at_eog;
    double prompt_seconds, gen_seconds;  /* the prompt's forward pass; the generated tokens' */
    engine_spot spot;            /* when spot_rows > 0 */
} engine_gen_result;

typedef void (*engine_token_fn)(void *user, int32_t token);

/* Runs the prompt, then samples up to n_predict tokens (stopping after an
 * end-of-generation token), calling on_token for each as it is chosen.
 * trace may be NULL. */
engine_status engine_generate(engine_ctx *c, const tok_vocab *v, const int32_t *prompt, size_t n_prompt,
                              const engine_gen_params *p, engine_trace *trace, engine_token_fn on_token, void *user,
                              engine_gen_result *out, engine_error *err);
void engine_gen_result_free(engine_gen_result *r);

/* ---- the smoke verdict ------------------------------------------------------- */

typedef enum engine_symptom {
    ENGINE_SYM_NONFINITE,     /* NaN/Inf in hidden states or logits */
    ENGINE_SYM_REPETITION,    /* one token or a short cycle repeated */
    ENGINE_SYM_PADDING,       /* a padding/unused token was generated */
    ENGINE_SYM_RMS,           /* hidden-state RMS far outside what the prompt positions show */
    ENGINE_SYM_FLAT_LOGITS,   /* logits nearly identical from step to step */
    ENGINE_SYM_LM_HEAD,       /* the spot check found logits the file's lm_head rows do not give */
    ENGINE_SYM_COUNT
} engine_symptom;

typedef struct engine_finding {
    engine_symptom symptom;
    char message[512];        /* what was seen, with layer/position/token */
} engine_finding;

typedef struct engine_verdict {
    bool ok;
    int n_findings;
    engine_finding findings[ENGINE_SYM_COUNT];  /* at most one per symptom: the first seen */
    int n_notes;
    engine_finding notes[ENGINE_SYM_COUNT];     /* what looks odd but a healthy model does (a greedy loop) */
    char summary[160];
} engine_verdict;

const char *engine_symptom_name(engine_symptom s);
/* The code of the note a symptom's rule leaves when what it saw is what healthy models do too. */
const char *engine_note_name(engine_symptom s);
/* Judges a generation from its trace (layer statistics and steps) and tokens. m (may be NULL) lets the
 * padding rule weigh the output rows: a padding id is a failure only when its row is empty, as a trained
 * model's are (a correct engine cannot rank an empty row first), and a note otherwise. spot (may be NULL, or
 * with no checks) is the lm_head spot check's record of the same generation. */
void engine_smoke_judge(const engine_trace *t, const tok_vocab *v, const engine_model *m, const engine_spot *spot,
                        int n_prompt, const int32_t *tokens, size_t n_tokens, engine_verdict *out);
/* RMS of an output row over the median RMS of the real rows (ids below n_real); NAN when not decodable. */
double engine_model_output_row_weight(const engine_model *m, int32_t row, int32_t n_real);

#endif
