/* Private to model/: the replay of llama.cpp's compute graph (memory_compute.c), the graph being built and the helpers
 * its builders share; the recurrent mixers' builders are memory_recurrent.c's. */
#ifndef GGUFSCOPE_MODEL_MEMORY_GRAPH_H
#define GGUFSCOPE_MODEL_MEMORY_GRAPH_H

#include "graph_replay.h"
#include "memory_internal.h"

#include <stdio.h>

/* What differs between llama.cpp's builders beyond the tensors a file has. */
typedef struct builder_facts {
    const char *arch;
    bool k_before_v;         /* its q, k, v in that order (else q, v, k: llama-graph's build_attn order) */
    bool residual_first;     /* the FFN's residual add reads the residual first (phi3) */
    bool rows_after_layers;  /* the output rows picked after the last layer, not inside it (gpt-oss) */
    bool rows_after_norm;    /* ... after the final norm (gemma4, nemotron_h) */
    bool residual_first_attn; /* the attention's (or mixer's) residual add reads the residual first too (lfm2) */
    bool shexp_sigmoid;      /* the shared expert's gate is ggml_sigmoid of its logit, not silu(x) / x (qwen35moe) */
    bool gdn_repeat;         /* q and k repeated to the value heads before the delta net, fused or not (qwen3next) */
    bool rows_after_residual; /* the last layer's rows picked from the attention's residual sum (falcon-h1) */
    bool parallel_ffn_first; /* a summed parallel layer adds ffn + attention, ggml meeting the ffn first (falcon, plamo) */
    bool layers_out_kept;    /* with rows_after_layers: the last layer's output, all its rows, is a graph output too
                              * (t_h_nextn, a draft head's input: step35's), never freed */
} builder_facts;

/* One KV cache's inputs (full-attention or sliding-window layers), made where a layer first reads them. */
typedef struct cache_inputs {
    int k_idxs, v_idxs, mask;
    uint64_t cells;
} cache_inputs;

typedef struct build {
    graph *g;
    const gguf_file *f;
    const model_hparams *hp;
    const model_memory *m;
    const builder_facts *bf;
    uint64_t T, E;
    /* the rows the tensors built next have: T, then the outputs' rows once the rows are picked (T rounded up to a
     * multiple of the sequences is the graph's batch; the outputs are the batch asked for) */
    uint64_t n_rows, n_out;
    int pos, out_ids;
    int attn_temp;         /* the attention temperature's input (a scale per token), made where q first reads it */
    cache_inputs cache[2]; /* full, sliding-window */
    /* a quantized K (V) cache's Hadamard rotation (llama-kv-cache.cpp's attn_rot_k / attn_rot_v): its side, 0 for
     * none, and each cache's input holding it once made */
    uint64_t k_rot_n[2], v_rot_n[2]; /* [full, sliding-window]: each cache's own head lengths (Gemma 4's differ) */
    int k_rot[2], v_rot[2];
    uint32_t type_k;       /* the K cache's type (latent attention's values are a view of it) */
    uint64_t streams;      /* cache streams: one per sequence */
    int64_t layer;         /* the layer being built */
    uint64_t v_padded;     /* model_memory_v_padded: the V rows' width without flash attention, 0 with it */
    /* the recurrent states' row indices (rs_s_copy: one per sequence) and its two views (the batch's sequences, the
     * others), made where the first recurrent layer reads them */
    int s_copy, s_copy_main, s_copy_extra;
    int q_gated;           /* the layer's q product where it holds the output's gate too (attn_out_gated) */
    /* the position after the last node the builder expanded itself (the embedding, an attention's core, the experts'
     * sum, a mixer's state stores): where a recurrent layer's state reads go, ahead of the nodes only a later product
     * pulls into ggml's graph */
    int expanded;
    int layer_in; /* the layer's input, which SmallThinker's router reads (model_arch.router_on_input); -1: none */
    int64_t layer_heads; /* the query heads of the layer being built (OpenELM's differ by layer) */
} build;

/* Whether the file has role r: in the layer being built (b->layer), or for the experts' roles in the first layer with
 * experts (after a mixture's leading dense layers). */
static inline bool has(const build *b, model_role r)
{
    char name[96];
    int64_t il = model_role_info_of(r)->form == MODEL_FFN_MOE ? 0 : b->layer;
    while (model_role_info_of(r)->form == MODEL_FFN_MOE && il + 1 < b->hp->n_layer &&
           !model_hparams_layer_has_experts(b->hp, il))
        il++;
    snprintf(name, sizeof name, "blk.%lld.%s", (long long)il, model_role_name(b->hp->arch, r));
    return gguf_tensor_by_name(b->f, name) != NULL;
}

static inline uint64_t rows(const build *b, uint64_t width)
{
    return width * b->n_rows * sizeof(float);
}

/* RMSNorm then its gains: the norm in place where x has no other reader (ggml-alloc's ggml_op_can_inplace: RMS_NORM
 * may reuse its source, a LayerNorm's NORM may not: Cohere's); OLMo's norm alone, without gains. */
static inline int norm_rows(build *b, int x, uint64_t bytes, layout ly)
{
    const bool inplace = !b->hp->norm_layer;
    const int n = graph_op(b->g, bytes, ly, inplace, x, -1, -1);
    return b->hp->arch->norms_without_gains ? n : graph_op(b->g, bytes, ly, true, n, -1, -1);
}

/* The same, then its bias added where the norm has one (build_norm's ggml_add: StarCoder2's LayerNorms) */
static inline int norm_rows_bias(build *b, int x, uint64_t bytes, layout ly, bool bias)
{
    const int y = norm_rows(b, x, bytes, ly);
    return bias ? graph_op(b->g, bytes, ly, true, y, -1, -1) : y;
}

static inline int norm(build *b, int x, layout ly)
{
    return norm_rows(b, x, graph_bytes(b->g, x), ly);
}

/* A token row picked by out_ids (every row: the worst case reserves them all), an input the graph meets last. */
static inline int pick_rows(build *b, int x)
{
    if (b->out_ids < 0)
        b->out_ids = graph_input(b->g, 4 * b->n_out);
    return graph_op(b->g, graph_bytes(b->g, x) / b->T * b->n_out, LY_ROWS, false, x, b->out_ids, -1);
}

/* Layer il's attention from h = attn_norm(x) (memory_attention.c): its core (q, k and v, the cache's stores, the
 * attention), the whole block (its output gate where the arch has one, the output product), the output product of a
 * core, latent attention, an attention layer with a mixer beside it (Falcon-H1); the side of a quantized cache's
 * rotation for one kind of layer (0: none). */
int build_attention_core(build *b, int il, int h);
int build_attention(build *b, int il, int h);
int build_out_projection(build *b, int att);
int build_latent_attention(build *b, int h);
int build_attention_and_mixer(build *b, int il, int x, int h);
uint64_t build_cache_rotation(const model_hparams *hp, uint32_t cache_type, bool swa, bool keys);

/* Layer il's feed-forward block of x (memory_ffn.c): dense or the routed experts as the layer has; its dense block
 * alone; the dense block and the experts side by side (Gemma 4). */
int build_feed_forward(build *b, int x, int64_t il);
int build_dense_feed_forward(build *b, int x, int64_t il);
int build_dense_and_experts(build *b, int x, int64_t il);

/* A recurrent layer's mixer on h = attn_norm(x), in ggml's order (memory_recurrent.c): Mamba-2's, Mamba-1's, a gated
 * delta net's, LFM2's short convolution. Each returns its output product. */
int mamba2_mixer(build *b, int h);
int mamba1_mixer(build *b, int h);
int delta_net_mixer(build *b, int h);
int shortconv_mixer(build *b, int h);

#endif
