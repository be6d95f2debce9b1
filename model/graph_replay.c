/*
 * ggml's graph allocator replayed (ggml/src/ggml-alloc.c as vendored by llama-cpp-python 0.3.36:
 * ggml_gallocr_alloc_graph_impl with ggml_dyn_tallocr, one chunk) over a graph built with graph_replay.h: the
 * graph's inputs are placed first, in the order made; then each node in order takes the bytes of a source it may
 * overwrite (an op ggml_op_can_inplace lists, a source of the same layout that nothing else reads, not a view, not
 * an output) or the best-fitting free block (the smallest that fits, the last block growing the buffer when none
 * does), and a source is freed when its last reader ran (a view's base when its last view's readers ran). Blocks
 * are 32-byte aligned (the CPU buffer's alignment) and merged with their free neighbours. The buffer is the
 * high-water mark, holes included.
 */
#include "graph_replay.h"

#include <stdlib.h>
#include <string.h>

/* MAX_NODES: a header may claim 65536 layers of 65536 experts each; real graphs have a few thousand nodes (a
 * 94-layer mixture of 8 experts per token about 7000), so a graph past this is not built (the estimate fails). */
enum { ALIGN = 32, MAX_SRC = 6, MAX_NODES = 1 << 20 };

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

struct graph {
    tensor *t;
    node *n;
    int nt, nn, cap_t, cap_n;
    int insert_at;   /* where add_node puts the next node, -1: at the end */
    block *free;     /* the allocator's free blocks by offset; the last one is the buffer's open end */
    int n_free, cap_free;
    uint64_t high;   /* the high-water mark */
    bool failed;     /* out of memory or past MAX_NODES: the replay gives 0 */
};

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
    int at = g->nn++;
    if (g->insert_at >= 0 && g->insert_at < at) {
        memmove(&g->n[g->insert_at + 1], &g->n[g->insert_at], (size_t)(at - g->insert_at) * sizeof *g->n);
        at = g->insert_at++;
    }
    node *nd = &g->n[at];
    *nd = (node){ .out = out, .inplace = inplace };
    for (int i = 0; i < n_src; i++)
        if (src[i] >= 0)
            nd->src[nd->n_src++] = src[i];
    return out;
}

int graph_input(graph *g, uint64_t bytes)
{
    int t = new_tensor(g, bytes, LY_OTHER, -1);
    if (t >= 0)
        g->t[t].input = true;
    return t;
}

int graph_op(graph *g, uint64_t bytes, layout ly, bool inplace, int a, int b, int c)
{
    const int src[3] = { a, b, c };
    return graph_op_n(g, bytes, ly, inplace, src, 3);
}

int graph_op_n(graph *g, uint64_t bytes, layout ly, bool inplace, const int *src, int n_src)
{
    if (n_src > MAX_SRC) {
        g->failed = true;
        return -1;
    }
    int t = new_tensor(g, bytes, ly, -1);
    return t < 0 ? -1 : add_node(g, t, src, n_src, inplace);
}

int graph_view(graph *g, int src)
{
    if (src < 0)
        return -1;
    const int base = g->t[src].view_of >= 0 ? g->t[src].view_of : src;
    int t = new_tensor(g, 0, LY_OTHER, base);
    return t < 0 ? -1 : add_node(g, t, &src, 1, false);
}

int graph_view_written(graph *g, int src, int a, int b)
{
    if (src < 0)
        return -1;
    const int base = g->t[src].view_of >= 0 ? g->t[src].view_of : src;
    const int srcs[3] = { a, b, src };
    int t = new_tensor(g, 0, LY_OTHER, base);
    return t < 0 ? -1 : add_node(g, t, srcs, 3, false);
}

int graph_position(const graph *g)
{
    return g->nn;
}

void graph_insert_at(graph *g, int pos)
{
    g->insert_at = pos >= 0 && pos <= g->nn ? pos : -1;
}

uint64_t graph_bytes(const graph *g, int t)
{
    return t < 0 ? 0 : g->t[t].view_of >= 0 ? g->t[g->t[t].view_of].bytes : g->t[t].bytes;
}

void graph_store(graph *g, int a, int b)
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

uint64_t graph_replay(graph *g)
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

graph *graph_new(void)
{
    graph *g = calloc(1, sizeof(graph));
    if (g)
        g->insert_at = -1;
    return g;
}

void graph_free(graph *g)
{
    if (!g)
        return;
    free(g->t), free(g->n), free(g->free);
    free(g);
}

bool graph_failed(const graph *g)
{
    return g->failed;
}

void graph_output(graph *g, int t)
{
    if (t >= 0)
        g->t[t].output = true;
}
