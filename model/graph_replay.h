/* Private to model/: a graph of tensors as ggml's graph allocator sees them (sizes, sources, views, which ops may
 * overwrite a source), built node by node, and ggml-alloc's placement replayed over it (graph_replay.c). The
 * compute buffer's estimate (memory_compute.c) writes llama.cpp's graphs with it. */
#ifndef GGUFSCOPE_MODEL_GRAPH_REPLAY_H
#define GGUFSCOPE_MODEL_GRAPH_REPLAY_H

#include <stdbool.h>
#include <stdint.h>

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

typedef struct graph graph;

/* An empty graph, NULL when out of memory; graph_free releases it. */
graph *graph_new(void);
void graph_free(graph *g);

/* Tensors are ints (-1: none, or a weight outside the buffer; every builder passes -1 on after a failure, which
 * graph_replay then reports). */
/* A graph input of `bytes` (a leaf: placed before every node, in the order made). */
int graph_input(graph *g, uint64_t bytes);
/* A node writing a new tensor of `bytes` and layout ly from up to three sources; inplace: its op is one
 * ggml_op_can_inplace lists. */
int graph_op(graph *g, uint64_t bytes, layout ly, bool inplace, int a, int b, int c);
/* The same from the n_src sources in src (at most 6: ggml_gated_delta_net's q, k, v, gate, beta and state). */
int graph_op_n(graph *g, uint64_t bytes, layout ly, bool inplace, const int *src, int n_src);
/* A view of src (reshape, view, permute): a node that allocates nothing, counted against src's base. */
int graph_view(graph *g, int src);
/* A view of src that a node writes, reading a and b too (ggml_set_rows into a tensor of the graph: the experts' group
 * mask). */
int graph_view_written(graph *g, int src, int a, int b);
/* A node writing outside the buffer (a row store into the KV cache). */
void graph_store(graph *g, int a, int b);
/* Where the next node goes: a position graph_insert_at may return to. */
int graph_position(const graph *g);
/* Nodes built from now on go in at position pos, in the order built, ahead of the nodes already there (-1: after
 * every node again). ggml orders a graph by the builder's expand calls: a node expanded early (llama.cpp's reads of a
 * recurrent layer's states) runs before the nodes built earlier that only a later node pulls in. */
void graph_insert_at(graph *g, int pos);
/* The bytes t holds, or its base holds for a view. */
uint64_t graph_bytes(const graph *g, int t);
/* Whether building failed (out of memory, or past the node limit): nothing more is built. */
bool graph_failed(const graph *g);
/* Marks t a graph output: never freed, never overwritten. */
void graph_output(graph *g, int t);
/* ggml_gallocr_alloc_graph_impl over the graph: the buffer's high-water mark, 0 when the graph was not built
 * (out of memory, or past its node limit). */
uint64_t graph_replay(graph *g);

#endif
