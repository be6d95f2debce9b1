/*
 * The compute buffer llama.cpp reserves, replayed: its prompt graph for the worst-case batch (a ubatch of T
 * tokens, every row an output, a full cache) written node by node as llama.cpp's builders write it
 * (the files of src/models and llama-graph.cpp, as vendored by llama-cpp-python 0.3.36), and its graph allocator
 * (ggml/src/ggml-alloc.c) run over it. The buffer is the allocator's high-water mark, holes included: the
 * tensors alive at the peak are not enough, since a freed tensor's bytes are reused only by a tensor that fits
 * in them (on a tiny model the two-row hole the attention leaves is what a 3-row-wide gate cannot use).
 *
 * The allocator (ggml_gallocr_alloc_graph_impl with ggml_dyn_tallocr, one chunk): the graph's inputs are placed
 * first, in the order the graph meets them (inp_embd too, reserved for callers that pass embeddings: it has no
 * reader, so it is never freed); then each node in order takes the bytes of a source it may overwrite (an op
 * ggml_op_can_inplace lists, a source of the same layout that nothing else reads, not a view, not an output) or
 * the best-fitting free block (the smallest that fits, the last block growing the buffer when none does), and a
 * source is freed when its last reader ran (a view's base when its last view's readers ran). Blocks are 32-byte
 * aligned (the CPU buffer's alignment) and merged with their free neighbours.
 *
 * scripts/llama-alloc-trace.sh prints llama.cpp's own run of this on a file; tests/test_memory.c holds the
 * replay to the buffers llama.cpp printed for every shared, real and synthetic-architecture file.
 */
#include "memory_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* MAX_NODES: a header may claim 65536 layers of 65536 experts each; real graphs have a few thousand nodes (a
 * 94-layer mixture of 8 experts per token about 7000), so a graph past this is not built (the estimate fails). */
enum { ALIGN = 32, MAX_SRC = 4, MAX_NODES = 1 << 20 };

/* Tensor shapes that matter to in-place reuse (ggml_are_same_layout): a node may take a source's bytes only
 * when both are of one of these with the same size. */
typedef enum layout {
    LY_ROWS,   /* token rows of any width, as a matrix */
    LY_HEADS,  /* q or k split into heads (after a reshape) */
    LY_SCORES, /* attention scores of every head */
    LY_ROUTE,  /* the router's logits */
    LY_CHOSEN, /* the chosen experts' weights of each token */
    LY_TOKEN,  /* one value per token */
    LY_EXPERT, /* the chosen experts' outputs of each token (3-D) */
    LY_OTHER,  /* never reused */
} layout;

typedef struct tensor {
    uint64_t bytes, offset;
    int view_of;     /* the base tensor of a view, -1 for none */
    layout ly;
    int children, views;
    bool allocated, input, output;
} tensor;

typedef struct node {
    int out;         /* the tensor it writes, -1 for one outside the buffer (the KV cache's rows) */
    int src[MAX_SRC];
    int n_src;
    bool inplace;    /* ggml_op_can_inplace of its op */
} node;

typedef struct block {
    uint64_t offset, size;
} block;

typedef struct graph {
    tensor *t;
    node *n;
    int nt, nn, cap_t, cap_n;
    block *free;     /* the allocator's free blocks by offset; the last one is the buffer's open end */
    int n_free, cap_free;
    uint64_t high;   /* the high-water mark */
    bool failed;     /* out of memory: the replay gives 0 */
} graph;

static bool grow(void **p, int *cap, int need, size_t size)
{
    if (need <= *cap)
        return true;
    int c = *cap ? *cap * 2 : 64;
    while (c < need)
        c *= 2;
    void *q = realloc(*p, (size_t)c * size);
    if (!q)
        return false;
    *p = q, *cap = c;
    return true;
}

static int new_tensor(graph *g, uint64_t bytes, layout ly, int view_of)
{
    if (g->failed || !grow((void **)&g->t, &g->cap_t, g->nt + 1, sizeof *g->t)) {
        g->failed = true;
        return -1;
    }
    g->t[g->nt] = (tensor){ .bytes = bytes, .ly = ly, .view_of = view_of };
    return g->nt++;
}

static int add_node(graph *g, int out, const int *src, int n_src, bool inplace)
{
    if (g->failed || g->nn >= MAX_NODES || !grow((void **)&g->n, &g->cap_n, g->nn + 1, sizeof *g->n)) {
        g->failed = true;
        return -1;
    }
    node *nd = &g->n[g->nn++];
    *nd = (node){ .out = out, .inplace = inplace };
    for (int i = 0; i < n_src; i++)
        if (src[i] >= 0)
            nd->src[nd->n_src++] = src[i];
    return out;
}

/* A graph input of `bytes` (a leaf: placed before every node). */
static int input(graph *g, uint64_t bytes)
{
    int t = new_tensor(g, bytes, LY_OTHER, -1);
    if (t >= 0)
        g->t[t].input = true;
    return t;
}

/* A node writing a new tensor of `bytes` from up to three sources (-1: none, or a weight outside the buffer). */
static int op(graph *g, uint64_t bytes, layout ly, bool inplace, int a, int b, int c)
{
    const int src[3] = { a, b, c };
    int t = new_tensor(g, bytes, ly, -1);
    return t < 0 ? -1 : add_node(g, t, src, 3, inplace);
}

/* A view of src (reshape, view, permute): a node that allocates nothing, counted against src's base. */
static int view(graph *g, int src)
{
    if (src < 0)
        return -1;
    const int base = g->t[src].view_of >= 0 ? g->t[src].view_of : src;
    int t = new_tensor(g, 0, LY_OTHER, base);
    return t < 0 ? -1 : add_node(g, t, &src, 1, false);
}

/* The bytes t holds, or its base holds for a view. */
static uint64_t bytes_of(const graph *g, int t)
{
    return t < 0 ? 0 : g->t[t].view_of >= 0 ? g->t[g->t[t].view_of].bytes : g->t[t].bytes;
}

/* A node writing outside the buffer (a row store into the KV cache). */
static void store(graph *g, int a, int b)
{
    const int src[2] = { a, b };
    add_node(g, -1, src, 2, false);
}

/* ---- ggml_dyn_tallocr: best fit among the free blocks but the last, else the last (the open end) ---- */

static uint64_t aligned(uint64_t x)
{
    return (x + ALIGN - 1) / ALIGN * ALIGN;
}

static uint64_t take(graph *g, uint64_t size)
{
    size = aligned(size);
    int best = -1;
    uint64_t best_size = UINT64_MAX;
    for (int i = 0; i < g->n_free - 1; i++)
        if (g->free[i].size >= size && g->free[i].size <= best_size)
            best = i, best_size = g->free[i].size;
    if (best < 0)
        best = g->n_free - 1;
    block *b = &g->free[best];
    const uint64_t at = b->offset;
    b->offset += size, b->size -= size;
    if (b->size == 0) {
        memmove(b, b + 1, (size_t)(g->n_free - best - 1) * sizeof *b);
        g->n_free--;
    }
    if (at + size > g->high)
        g->high = at + size;
    return at;
}

static void give_back(graph *g, uint64_t at, uint64_t size)
{
    size = aligned(size);
    for (int i = 0; i < g->n_free; i++) {
        block *b = &g->free[i];
        if (b->offset + b->size == at) { /* after block i: grown, then merged with the next when they touch */
            b->size += size;
            if (i + 1 < g->n_free && b->offset + b->size == g->free[i + 1].offset) {
                b->size += g->free[i + 1].size;
                memmove(b + 1, b + 2, (size_t)(g->n_free - i - 2) * sizeof *b);
                g->n_free--;
            }
            return;
        }
        if (at + size == b->offset) { /* before block i: the same with the previous one */
            b->offset = at, b->size += size;
            if (i > 0 && g->free[i - 1].offset + g->free[i - 1].size == b->offset) {
                g->free[i - 1].size += b->size;
                memmove(b, b + 1, (size_t)(g->n_free - i - 1) * sizeof *b);
                g->n_free--;
            }
            return;
        }
    }
    if (!grow((void **)&g->free, &g->cap_free, g->n_free + 1, sizeof *g->free)) {
        g->failed = true;
        return;
    }
    int i = 0;
    while (i < g->n_free && g->free[i].offset < at)
        i++;
    memmove(&g->free[i + 1], &g->free[i], (size_t)(g->n_free - i) * sizeof *g->free);
    g->free[i] = (block){ at, size };
    g->n_free++;
}

/* ggml_gallocr_allocate_node: a source's bytes where the node may overwrite them, else a block. */
static void place(graph *g, const node *nd)
{
    tensor *t = &g->t[nd->out];
    if (t->allocated || t->view_of >= 0)
        return;
    t->allocated = true;
    for (int i = 0; nd->inplace && i < nd->n_src; i++) {
        tensor *p = &g->t[nd->src[i]];
        if (!p->allocated || p->view_of >= 0 || p->output || p->ly != t->ly || p->bytes != t->bytes ||
            p->children != 1 || p->views != 0)
            continue;
        t->offset = p->offset;
        p->allocated = false; /* its bytes are the node's now */
        return;
    }
    t->offset = take(g, t->bytes);
}

static void release(graph *g, tensor *t)
{
    if (t->output || !t->allocated)
        return;
    give_back(g, t->offset, t->bytes);
    t->allocated = false;
}

/* ggml_gallocr_alloc_graph_impl over the graph; the high-water mark. */
static uint64_t replay(graph *g)
{
    if (g->failed || !grow((void **)&g->free, &g->cap_free, 1, sizeof *g->free))
        return 0;
    g->free[0] = (block){ 0, UINT64_MAX / 2 };
    g->n_free = 1;
    for (int i = 0; i < g->nt; i++)
        if (g->t[i].input) {
            g->t[i].allocated = true;
            g->t[i].offset = take(g, g->t[i].bytes);
        }
    for (int i = 0; i < g->nn; i++) {
        const node *nd = &g->n[i];
        if (nd->out >= 0 && g->t[nd->out].view_of >= 0)
            g->t[g->t[nd->out].view_of].views++;
        for (int j = 0; j < nd->n_src; j++)
            g->t[nd->src[j]].children++;
    }
    for (int i = 0; i < g->nn && !g->failed; i++) {
        const node *nd = &g->n[i];
        if (nd->out >= 0)
            place(g, nd);
        for (int j = 0; j < nd->n_src; j++) {
            tensor *p = &g->t[nd->src[j]];
            if (--p->children != 0 || p->views != 0)
                continue;
            if (p->view_of >= 0) {
                tensor *base = &g->t[p->view_of];
                if (--base->views == 0 && base->children == 0)
                    release(g, base);
            } else {
                release(g, p);
            }
        }
    }
    return g->failed ? 0 : g->high;
}

/* ---- the graph llama.cpp builds ---- */

/* What differs between llama.cpp's builders beyond the tensors a file has. */
typedef struct builder_facts {
    const char *arch;
    bool k_before_v;         /* its q, k, v in that order (else q, v, k: llama-graph's build_attn order) */
    bool q_scaled;           /* q scaled after the rotation (gemma's query_pre_attn_scalar, phi3's 1/sqrt(d)) */
    bool residual_first;     /* the FFN's residual add reads the residual first (phi3) */
    bool rows_after_layers;  /* the output rows picked after the last layer, not inside it (gpt-oss) */
} builder_facts;

static const builder_facts facts[] = {
    { "llama", false, false, false, false },   { "qwen2", false, false, false, false },
    { "qwen3", false, false, false, false },   { "qwen2moe", false, false, false, false },
    { "qwen3moe", false, false, false, false }, { "gpt-oss", true, false, false, true },
    { "phi3", false, true, true, false },      { "granite", false, false, false, false },
    { "olmo2", false, false, false, false },   { "gemma2", true, true, false, false },
    { "gemma3", true, true, false, false },
};

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
    cache_inputs cache[2]; /* full, sliding-window */
    /* a quantized K (V) cache's Hadamard rotation (llama-kv-cache.cpp's attn_rot_k / attn_rot_v): its side, 0 for
     * none, and each cache's input holding it once made */
    uint64_t k_rot_n, v_rot_n;
    int k_rot[2], v_rot[2];
} build;

static bool has(const build *b, model_role r)
{
    char name[96];
    snprintf(name, sizeof name, "blk.0.%s", model_role_info_of(r)->name);
    return gguf_tensor_by_name(b->f, name) != NULL;
}

static uint64_t rows(const build *b, uint64_t width)
{
    return width * b->n_rows * sizeof(float);
}

/* The positions, an input the graph meets at the first rotation (after the K rotation matrix where there is one:
 * ggml visits a product's matrix before its other source). */
static int positions(build *b, bool swa)
{
    if (b->k_rot_n && b->k_rot[swa] < 0)
        b->k_rot[swa] = input(b->g, b->k_rot_n * b->k_rot_n * sizeof(float));
    if (b->pos < 0)
        b->pos = input(b->g, 4 * b->T);
    return b->pos;
}

/* x times a Hadamard rotation (llama_mul_mat_hadamard: views of x, their product with the matrix, a view). */
static int rotated(build *b, int x, int *rot, uint64_t n)
{
    if (!n)
        return x;
    if (*rot < 0)
        *rot = input(b->g, n * n * sizeof(float));
    const int v = view(b->g, x);
    return view(b->g, op(b->g, bytes_of(b->g, v), LY_OTHER, false, *rot, v, -1));
}

/* RMSNorm then its gains: the norm in place where x has no other reader. */
static int norm(build *b, int x, layout ly)
{
    const uint64_t bytes = bytes_of(b->g, x);
    return op(b->g, bytes, ly, true, op(b->g, bytes, ly, true, x, -1, -1), -1, -1);
}

static cache_inputs *cache_of(build *b, bool swa)
{
    cache_inputs *c = &b->cache[swa];
    if (c->mask < 0) {
        const bool fa = b->m->flash_attn;
        const uint64_t v_width = (uint64_t)(b->hp->n_head_kv * b->hp->head_dim_v);
        c->k_idxs = input(b->g, 8 * b->T);
        c->v_idxs = input(b->g, 8 * b->T * (fa ? 1 : v_width)); /* without flash attention V is stored transposed */
        c->mask = input(b->g, c->cells * b->T * (fa ? 2 : 4));
    }
    return c;
}

/* q or k of layer il from its input h: the product (plus bias), its norm (per head, or over the whole row:
 * olmo2), the rotation; q scaled where the builder scales it. */
static int q_or_k(build *b, int h, uint64_t width, bool is_q, int fused, bool swa)
{
    graph *g = b->g;
    const uint64_t bytes = rows(b, width);
    if (fused >= 0) { /* phi3: a view of the fused product, rotated into a new tensor */
        int r = op(g, bytes, LY_HEADS, true, view(g, fused), positions(b, swa), -1);
        r = is_q && b->bf->q_scaled ? op(g, bytes, LY_HEADS, true, r, -1, -1) : r;
        return rotated(b, r, &b->k_rot[swa], b->k_rot_n);
    }
    int x = op(g, bytes, LY_ROWS, false, h, -1, -1);
    if (has(b, is_q ? MODEL_ROLE_ATTN_Q_BIAS : MODEL_ROLE_ATTN_K_BIAS))
        x = op(g, bytes, LY_ROWS, true, x, -1, -1);
    int r;
    if (has(b, is_q ? MODEL_ROLE_ATTN_Q_NORM : MODEL_ROLE_ATTN_K_NORM) && b->hp->arch->qk_norm_full)
        r = view(g, norm(b, x, LY_ROWS));
    else if (has(b, is_q ? MODEL_ROLE_ATTN_Q_NORM : MODEL_ROLE_ATTN_K_NORM))
        r = norm(b, view(g, x), LY_HEADS);
    else
        r = view(g, x);
    r = op(g, bytes, LY_HEADS, true, r, positions(b, swa), -1);
    r = is_q && b->bf->q_scaled ? op(g, bytes, LY_HEADS, true, r, -1, -1) : r;
    return rotated(b, r, &b->k_rot[swa], b->k_rot_n);
}

/* Layer il's attention from h: q, k, v in the builder's order, their rows stored into the cache, attention
 * (flash, or the scores of every head), the output product (plus bias). */
static int attention(build *b, int il, int h)
{
    graph *g = b->g;
    const model_hparams *hp = b->hp;
    const uint64_t q_w = (uint64_t)(hp->n_head * hp->head_dim_k), k_w = (uint64_t)(hp->n_head_kv * hp->head_dim_k);
    const uint64_t v_w = (uint64_t)(hp->n_head_kv * hp->head_dim_v), o_w = (uint64_t)(hp->n_head * hp->head_dim_v);
    const bool swa = b->m->n_layer_swa > 0 && model_hparams_layer_is_swa(hp, il);
    int fused = -1, q, k = -1, v;
    if (has(b, MODEL_ROLE_ATTN_QKV))
        fused = op(g, rows(b, q_w + k_w + v_w), LY_ROWS, false, h, -1, -1);
    q = q_or_k(b, h, q_w, true, fused, swa);
    const bool bias_v = has(b, MODEL_ROLE_ATTN_V_BIAS);
    if (b->bf->k_before_v)
        k = q_or_k(b, h, k_w, false, fused, swa);
    if (fused >= 0) {
        v = view(g, fused);
    } else {
        v = op(g, rows(b, v_w), LY_ROWS, false, h, -1, -1);
        if (bias_v)
            v = op(g, rows(b, v_w), LY_ROWS, true, v, -1, -1);
        v = view(g, v);
    }
    v = rotated(b, v, &b->v_rot[swa], b->v_rot_n);
    if (!b->bf->k_before_v)
        k = q_or_k(b, h, k_w, false, fused, swa);
    cache_inputs *c = cache_of(b, swa);
    store(g, view(g, k), c->k_idxs);
    store(g, b->m->flash_attn ? view(g, v) : view(g, view(g, v)), c->v_idxs);
    const int qp = view(g, view(g, q));
    int att;
    if (b->m->flash_attn) {
        att = view(g, op(g, rows(b, o_w), LY_OTHER, false, qp, c->mask, -1));
        att = rotated(b, att, &b->v_rot[swa], b->v_rot_n); /* the rotation undone on the output */
    } else {
        const uint64_t scores = c->cells * b->T * (uint64_t)hp->n_head * sizeof(float);
        int kq = op(g, scores, LY_SCORES, false, qp, -1, -1);
        if (hp->attn_softcap > 0.0f) /* scale, tanh, scale */
            for (int i = 0; i < 3; i++)
                kq = op(g, scores, LY_SCORES, true, kq, -1, -1);
        kq = op(g, scores, LY_SCORES, true, kq, c->mask, -1);
        att = op(g, rows(b, o_w), LY_OTHER, false, view(g, op(g, rows(b, o_w), LY_OTHER, false, kq, -1, -1)), -1, -1);
    }
    int out = op(g, rows(b, (uint64_t)hp->n_embd), LY_ROWS, false, att, -1, -1);
    if (has(b, MODEL_ROLE_ATTN_OUT_BIAS))
        out = op(g, rows(b, (uint64_t)hp->n_embd), LY_ROWS, true, out, -1, -1);
    return out;
}

/* A token row picked by out_ids (every row: the worst case reserves them all), an input the graph meets last. */
static int pick_rows(build *b, int x)
{
    if (b->out_ids < 0)
        b->out_ids = input(b->g, 4 * b->n_out);
    return op(b->g, bytes_of(b->g, x) / b->T * b->n_out, LY_ROWS, false, x, b->out_ids, -1);
}

/* The routed experts of x (llama-graph's build_moe_ffn): router, choice, the experts' products, their weighted
 * sum; then qwen2moe's shared expert under its sigmoid gate. */
static int experts(build *b, int x)
{
    graph *g = b->g;
    const model_hparams *hp = b->hp;
    const uint64_t T = b->n_rows, f = sizeof(float), n_exp = (uint64_t)hp->n_expert, k = (uint64_t)hp->n_expert_used;
    const uint64_t ff = (uint64_t)hp->n_ff_exp, E = b->E;
    const bool bias = has(b, MODEL_ROLE_FFN_GATE_EXPS_BIAS), softmax_after = hp->arch->moe_gating != MODEL_MOE_SOFTMAX;
    int probs = op(g, n_exp * T * f, LY_ROUTE, false, x, -1, -1);
    if (!softmax_after || has(b, MODEL_ROLE_FFN_GATE_INP_BIAS)) /* the softmax, or the router's bias (gpt-oss) */
        probs = op(g, n_exp * T * f, LY_ROUTE, true, probs, -1, -1);
    const int probs_rows = view(g, probs);
    const int chosen = view(g, op(g, n_exp * T * 4, LY_OTHER, false, probs, -1, -1)); /* argsort, its top k */
    int w = op(g, k * T * f, LY_CHOSEN, false, probs_rows, chosen, -1);
    if (softmax_after) {
        w = view(g, op(g, k * T * f, LY_CHOSEN, true, view(g, w), -1, -1));
    } else if (hp->arch->moe_renormalise) {
        const int wv = view(g, w);
        const int sum = op(g, T * f, LY_TOKEN, true, op(g, T * f, LY_TOKEN, false, wv, -1, -1), -1, -1);
        w = view(g, op(g, k * T * f, LY_CHOSEN, true, wv, sum, -1));
    }
    const int in = view(g, x);
    int gate = op(g, ff * k * T * f, LY_EXPERT, false, in, chosen, -1);
    if (bias)
        gate = op(g, ff * k * T * f, LY_EXPERT, true, gate, chosen, -1);
    int up = op(g, ff * k * T * f, LY_EXPERT, false, in, chosen, -1);
    if (bias)
        up = op(g, ff * k * T * f, LY_EXPERT, true, up, chosen, -1);
    int down = op(g, E * k * T * f, LY_EXPERT, false, op(g, ff * k * T * f, LY_OTHER, false, gate, up, -1), chosen, -1);
    if (bias)
        down = op(g, E * k * T * f, LY_EXPERT, true, down, chosen, -1);
    const int weighted = op(g, E * k * T * f, LY_EXPERT, true, down, w, -1);
    int sum = k > 1 ? op(g, E * T * f, LY_ROWS, true, view(g, weighted), view(g, weighted), -1)
                    : op(g, E * T * f, LY_ROWS, false, view(g, weighted), -1, -1); /* one expert: a copy */
    for (uint64_t j = 2; j < k; j++)
        sum = op(g, E * T * f, LY_ROWS, true, sum, view(g, weighted), -1);
    if (!has(b, MODEL_ROLE_FFN_UP_SHEXP))
        return sum;
    const uint64_t fs = (uint64_t)hp->n_ff_shexp;
    const int sg = op(g, fs * T * f, LY_ROWS, false, x, -1, -1), su = op(g, fs * T * f, LY_ROWS, false, x, -1, -1);
    int shared = op(g, E * T * f, LY_ROWS, false, op(g, fs * T * f, LY_OTHER, false, sg, su, -1), -1, -1);
    const int logit = op(g, T * f, LY_TOKEN, false, x, -1, -1);
    const int gate_w = op(g, T * f, LY_TOKEN, true, op(g, T * f, LY_TOKEN, true, logit, -1, -1), logit, -1);
    shared = op(g, E * T * f, LY_ROWS, true, shared, gate_w, -1);
    return op(g, E * T * f, LY_ROWS, true, sum, shared, -1);
}

/* The feed-forward block of x: gated (gate and up, or phi3's one product holding both), or the experts. */
static int feed_forward(build *b, int x)
{
    graph *g = b->g;
    const model_hparams *hp = b->hp;
    if (hp->n_expert > 0)
        return experts(b, x);
    const uint64_t F = (uint64_t)hp->n_ff;
    int act;
    if (hp->arch->gate_up_fused) {
        act = op(g, rows(b, F), LY_OTHER, false, op(g, rows(b, 2 * F), LY_ROWS, false, x, -1, -1), -1, -1);
    } else {
        const int gate = op(g, rows(b, F), LY_ROWS, false, x, -1, -1), up = op(g, rows(b, F), LY_ROWS, false, x, -1, -1);
        act = op(g, rows(b, F), LY_OTHER, false, gate, up, -1);
    }
    return op(g, rows(b, (uint64_t)hp->n_embd), LY_ROWS, false, act, -1, -1);
}

/* Scaled in place where the model multiplies by s (granite's multipliers, gemma's embedding scale). */
static int scaled(build *b, int x, float s)
{
    return s != 1.0f ? op(b->g, bytes_of(b->g, x), LY_ROWS, true, x, -1, -1) : x;
}

/* The side of a quantized cache's rotation for heads of hd values (0: none): K's the largest power of two from 64
 * that divides hd, V's 64 (llama_kv_cache::build_input_k_rot / _v_rot), where hd is a multiple of 64. */
static uint64_t rotation(uint32_t cache_type, int64_t hd, bool largest)
{
    if (!gguf_type_traits_of(cache_type)->quantized || hd <= 0 || hd % 64)
        return 0;
    uint64_t n = 64;
    while (largest && hd % (int64_t)(2 * n) == 0)
        n *= 2;
    return n;
}

static uint64_t build_and_replay(const gguf_file *f, const model_hparams *hp, const model_memory_params *p,
                                 const model_memory *m, const builder_facts *bf)
{
    graph g = { 0 };
    const uint64_t seqs = (uint64_t)p->n_seq, T = ((uint64_t)m->n_tokens + seqs - 1) / seqs * seqs;
    build b = { .g = &g, .f = f, .hp = hp, .m = m, .bf = bf, .T = T, .n_rows = T, .n_out = (uint64_t)m->n_tokens,
                .out_ids = -1, .pos = -1,
                .k_rot_n = rotation(p->type_k, hp->head_dim_k, true), .v_rot_n = rotation(p->type_v, hp->head_dim_v, false),
                .k_rot = { -1, -1 }, .v_rot = { -1, -1 },
                .E = (uint64_t)hp->n_embd, .cache = { { -1, -1, -1, (uint64_t)m->kv_cells },
                                                      { -1, -1, -1, (uint64_t)m->kv_cells_swa } } };
    const uint64_t V = (uint64_t)(hp->n_vocab > 0 ? hp->n_vocab : hp->vocab_size);
    const int tokens = input(&g, 4 * b.T);
    input(&g, rows(&b, b.E)); /* inp_embd: no reader, never freed */
    int x = scaled(&b, op(&g, rows(&b, b.E), LY_ROWS, false, tokens, -1, -1), hp->embd_scale);
    for (int64_t il = 0; il < hp->n_layer && !g.failed; il++) {
        const bool last = il == hp->n_layer - 1 && !bf->rows_after_layers;
        int cur = attention(&b, (int)il, has(&b, MODEL_ROLE_ATTN_NORM) ? norm(&b, x, LY_ROWS) : x);
        if (last) {
            cur = pick_rows(&b, cur);
            b.n_rows = b.n_out;
        }
        if (has(&b, MODEL_ROLE_ATTN_POST_NORM) && !hp->arch->ffn_norm_is_post_attention)
            cur = norm(&b, cur, LY_ROWS);
        cur = scaled(&b, cur, hp->residual_scale);
        const int inp = op(&g, rows(&b, b.E), LY_ROWS, true, cur, last ? pick_rows(&b, x) : x, -1);
        const bool ffn_norm = has(&b, MODEL_ROLE_FFN_NORM) ||
                              (hp->arch->ffn_norm_is_post_attention && has(&b, MODEL_ROLE_ATTN_POST_NORM));
        int out = feed_forward(&b, ffn_norm ? norm(&b, inp, LY_ROWS) : inp);
        if (has(&b, MODEL_ROLE_FFN_POST_NORM))
            out = norm(&b, out, LY_ROWS);
        out = scaled(&b, out, hp->residual_scale);
        x = bf->residual_first ? op(&g, rows(&b, b.E), LY_ROWS, true, inp, out, -1)
                               : op(&g, rows(&b, b.E), LY_ROWS, true, out, inp, -1);
    }
    if (bf->rows_after_layers) {
        x = pick_rows(&b, x);
        b.n_rows = b.n_out;
    }
    int logits = op(&g, rows(&b, V), LY_ROWS, false, norm(&b, x, LY_ROWS), -1, -1);
    logits = scaled(&b, logits, hp->logit_scale);
    if (hp->final_softcap > 0.0f) /* scale, tanh, scale */
        for (int i = 0; i < 3; i++)
            logits = op(&g, rows(&b, V), LY_ROWS, true, logits, -1, -1);
    if (logits >= 0)
        g.t[logits].output = true;
    const uint64_t high = replay(&g);
    free(g.t), free(g.n), free(g.free);
    return high;
}

uint64_t model_memory_compute(const gguf_file *f, const model_hparams *hp, const model_memory_params *p,
                              const model_memory *m)
{
    for (size_t i = 0; hp->arch && i < sizeof facts / sizeof facts[0]; i++)
        if (!strcmp(facts[i].arch, hp->arch->name))
            return build_and_replay(f, hp, p, m, &facts[i]);
    return 0;
}
