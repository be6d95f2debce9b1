/*
 * What the comparison of two backends (compare.c) and the re-derivation of their ops (compare_derive.c) share:
 * both sides' rows of every op of the chunk being compared, each side's history of keys and values, and the
 * host backends that re-derive an op from a side's own inputs.
 */
#ifndef GGUFSCOPE_ENGINE_COMPARE_INTERNAL_H
#define GGUFSCOPE_ENGINE_COMPARE_INTERNAL_H

#include "internal.h"

enum { OPS_PER_LAYER = ENGINE_OP_LAYER_OUT + 1 };

/* One side's rows of every op of the chunk: per point (cmp_point_index), (T, n) values and T rows' statistics. */
typedef struct side_rows {
    float **vals;
    size_t *cap;
    int *n;                   /* values per row; 0 until the side has produced that op in this run */
    kern_row_stats **stats;
    size_t *stats_cap;
} side_rows;

/* Each side's k and v rows at every position, per layer, for re-deriving attention (NULL when they would take more
 * than CMP_HISTORY_MAX bytes: then attention rows are judged by the tolerance alone). */
enum { CMP_HISTORY_MAX = 256 << 20 };
typedef struct attn_history {
    float *kv[2][2];          /* [side][0: k, 1: v]: per layer (n_pos, its keys' or values' width) at il n_pos kv_dim */
    /* [side]: a recurrent layer's inputs (a gated delta net's, a short convolution's), its attn_norm rows (n_layer,
     * n_pos, n_embd), from which its block is replayed from the start (its state holds every position before); NULL
     * without such layers */
    float *norm[2];
    int n_pos, kv_dim;
} attn_history;

/* Host backends and room for re-deriving one op of both sides (all the chunk's rows). */
typedef struct cmp_deriving {
    kern_numerics numerics[2];      /* each side's */
    kern_backend *be[2];            /* host backends by numerics: [EXACT] the reference (kern_ref_create), every op's
                                     * definition for both sides (a GGML side's activations rounded first for its
                                     * products); a side's own rotates */
    float *out[2];                  /* (T, n): each side's re-derived rows */
    float *in, *gate, *up;          /* scratch: an op's input rows, the gated activation's two products */
    float *own_product;             /* scratch: a GGML side's gate or up product by that numerics' own host kernel */
    uint8_t *act;                   /* one activation row in its rounded type */
    float *act_f;                   /* (T, n) activation rows as rounded */
    size_t cap_out[2], cap_in, cap_gate, cap_up, cap_act, cap_act_f, cap_own_product;
} cmp_deriving;

typedef struct cmp_state {
    engine_comparison *r;
    const engine_model *m;
    side_rows rows[2];
    attn_history h;
    cmp_deriving d;
    const int32_t *toks;      /* the chunk's tokens (their embeddings start the first layer's residual) */
    int n_layer;
    bool decoding;
    long long seq;            /* comparisons so far, in execution order */
    float explained;          /* the largest difference of rows explained so far (0: none) */
    bool diverged;            /* a row went beyond the tolerance unexplained: from then on nothing is explained
                               * (what follows a real divergence is its consequence, not its excuse) */
    engine_status failed;
} cmp_state;

int cmp_point_index(int n_layer, engine_op op, int layer);
/* A side's rows of one op in this chunk, or NULL when that side has not produced them (n: values per row). */
const float *cmp_side_rows(const cmp_state *s, int side, engine_op op, int layer, int n);
/* Grows *p to hold need elements of elem bytes (contents kept); false when memory runs out. */
bool cmp_grow(void **p, size_t *cap, size_t need, size_t elem);
/* n floats into *p (growing it), or NULL. */
static inline float *cmp_room(float **p, size_t *cap, size_t n)
{
    return cmp_grow((void **)p, cap, n ? n : 1, sizeof(float)) ? *p : NULL;
}
/* max |a - b| / max |a| over one row; NaN on one side only counts as infinite. */
float cmp_row_rel(const float *a, const float *b, int n);

/* Re-derives the T rows (n values each) of one op at positions pos0.. on both sides, each from its own inputs as
 * traced in this chunk and in its own numerics, into s->d.out[0] and s->d.out[1]. False when the op cannot be
 * re-derived (an input not traced, memory, a weight the host cannot decode): then the rows are judged by the
 * tolerance alone. */
bool cmp_derive(cmp_state *s, engine_op op, int layer, int pos0, int T, int n);
/* y (T, rows of w) = x (T, n) @ w^T (+ bias) as the op defines it, in the side's numerics (compare_derive.c). */
bool cmp_product(cmp_state *s, int side, const kern_weight *w, const kern_weight *bias, const float *x, int T, int n,
                 float *y);
/* out = a + s b (+ s c), n values each, added in double (compare_derive.c). */
bool cmp_add_rows(const float *a, const float *b, const float *c, float s, size_t n, float *out);
/* A recurrent layer's mixer output before its output product (a delta net's, a short convolution's, Mamba-1's or
 * Mamba-2's) on the chunk's T rows at pos0, and Falcon-H1's block output (its attention's output product plus its
 * mixer's), re-derived from one side's own rows (compare_recurrent.c). */
bool cmp_derive_mixer(cmp_state *s, int side, int il, int pos0, int T, float *out);
bool cmp_derive_beside(cmp_state *s, int side, int il, int pos0, int T, int q_dim, float *out);
/* The residual entering layer il on one side (scratch: room for T rows), compare_derive.c. */
const float *cmp_residual_in(cmp_state *s, int side, int il, int pos0, int T, float *scratch);
/* The feed-forward block re-derived from one side's own rows (compare_ffn.c): a dense block's gated activation (T
 * rows of its width), a mixture of experts' output (T rows of n_embd). */
bool cmp_derive_glu(cmp_state *s, int side, int il, int T, float *out);
bool cmp_derive_experts(cmp_state *s, int side, int il, int pos0, int T, float *out);
void cmp_deriving_free(cmp_deriving *d);

#endif
