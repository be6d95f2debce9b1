/*
 * Two backends, the same tokens, every op compared value by value.
 *
 * Both contexts run the prompt in chunks, then greedy decode steps (the token
 * chosen from side A's logits, fed to both, so the sides never drift apart
 * by choice). For each chunk side A runs first and its activations after
 * every op are kept in host memory; then side B runs and each of its
 * activations is compared with A's as it appears, so memory stays at one
 * chunk's activations. Prompt chunks exercise a backend's many-token paths
 * (GEMM, causal attention), decode steps its one-token paths (matrix-vector
 * kernels, recorded graphs): the two are reported apart.
 *
 * Attention is the one op whose output can move much more than its inputs:
 * softmax turns an absolute difference in the scores into a relative one in
 * the weights, and the scores grow with |q| |k| (deep random-weight layers
 * reach scores of tens: the 1.1B shape's q and k 1e-4 apart put its attention
 * 1.4e-3 apart, CPU against CUDA, with the logits 1e-4 apart). So a row of
 * attention beyond the tolerance is first re-derived on the host, in double,
 * from each side's own q and its own history of k and v rows (as the probes
 * saw them, not as the cache holds them: a cache written at the wrong place is
 * an attention fault): when both sides equal that within the tolerance, the
 * difference came in with the inputs and the row is not a divergence. What
 * such a row differs by then travels on through the later ops (o-proj, the
 * residual, the next layers); a later row beyond the tolerance by no more
 * than ENGINE_CMP_INHERITED times the largest explained difference so far is counted as
 * explained too, until a row goes beyond the tolerance unexplained (what
 * comes after a divergence is its consequence). A planted bug moves values
 * by 1e-1 and more, far past that.
 *
 * RMSNorm can do the same with its per-channel gains: max |a - b| / max |a|
 * is not kept by a diagonal scaling, and a model whose gains and activations
 * both have outlier channels (gemma-3's post-norms) turns its input's 7e-4
 * into 1.4e-3 (the real gemma-3-270m, CPU against CUDA on an H200). A norm row
 * beyond the tolerance is re-derived the same way, in double from each side's
 * own input row (the op before it: attn_out, ffn_out, the previous layer's
 * output) and the model's gains, and explained when both sides equal theirs.
 *
 * And the gated activation, where llama.cpp's GELU goes through a table of f16
 * inputs (gemma-3): an input a hair apart on the two sides can round to the
 * neighbouring f16 and move that value by 2^-11 of itself; 1e-5 of noise in the
 * products before it put the real gemma-3's ffn_act 1e-3 apart. A row beyond
 * the tolerance is re-derived from each side's own ffn_norm row: gate and up by
 * the model's weights and the smooth activation, all in double. The table's
 * rounding stays within 2^-11 of each value, so a correct side lands within
 * the tolerance; wrong weights or a wrong activation do not.
 */
#include "internal.h"
#include "quant.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { OPS_PER_LAYER = ENGINE_OP_LAYER_OUT + 1 };

typedef struct side_a {
    float **vals;             /* per point: (T, n) of the chunk */
    size_t *cap;
    kern_row_stats **stats;   /* per point: (T) */
    size_t *stats_cap;
} side_a;

/* Each side's k and v rows at every position, per layer, for re-deriving attention (NULL when they would
 * take more than ATTN_HISTORY_MAX bytes: then attention rows are judged by the tolerance alone). */
enum { ATTN_HISTORY_MAX = 256 << 20 };
typedef struct attn_history {
    float *kv[2][2];          /* [side][0: k, 1: v]: (n_layer, n_pos, kv_dim) */
    float *qb;                /* side B's q rows of the chunk: (chunk, q_dim) */
    double *p;                /* scores of one head: (n_pos) */
    double *ref;              /* one row of exact attention: (q_dim) */
    float *ref_f;
    int n_pos, kv_dim, q_dim;
} attn_history;

/* Side B's latest rows of the ops whose output a re-derived norm or gated activation reads (side A keeps every op
 * of the chunk anyway), and room for one row's gains and its exact output. */
enum { IN_ATTN_OUT, IN_FFN_OUT, IN_LAYER_OUT, IN_FFN_NORM, INPUTS_KEPT };
typedef struct op_inputs {
    float *b_in[INPUTS_KEPT];  /* (chunk, n_embd) each */
    int b_T[INPUTS_KEPT];      /* rows held: 0 until B has produced that op in this run */
    float *gains, *ref;        /* (n_embd) */
    float *glu_ref;            /* (n_ff): one row of the re-derived activation */
} op_inputs;

typedef struct cmp_state {
    engine_comparison *r;
    const engine_model *m;
    side_a a;
    attn_history h;
    op_inputs nh;
    int n_layer;
    bool decoding;
    long long seq;            /* comparisons so far, in execution order */
    float explained;          /* the largest attention difference its inputs explained so far (0: none) */
    bool diverged;            /* a row went beyond the tolerance unexplained: from then on nothing is explained
                               * (what follows a real divergence is its consequence, not its excuse) */
    kern_row_stats *b_stats;  /* side B's statistics of the point being compared (T) */
    engine_status failed;
} cmp_state;

static int point_index(int n_layer, engine_op op, int layer)
{
    if (op == ENGINE_OP_RESULT_NORM)
        return n_layer * OPS_PER_LAYER;
    if (op == ENGINE_OP_COUNT)
        return n_layer * OPS_PER_LAYER + 1;  /* the logits */
    return layer * OPS_PER_LAYER + (int)op;
}

static bool grow(void **p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return true;
    void *q = realloc(*p, need * elem);
    if (!q)
        return false;
    *p = q;
    *cap = need;
    return true;
}

/* max |a - b| / max |a| over one row; NaN on one side only counts as infinite. */
static float row_rel(const float *a, const float *b, int n)
{
    float dmax = 0.0f, amax = 0.0f;
    for (int i = 0; i < n; i++) {
        const bool na = isnan(a[i]), nb = isnan(b[i]);
        if (na || nb) {
            if (na != nb)
                return INFINITY;
            continue;
        }
        if (a[i] == b[i])
            continue;  /* equal infinities too */
        float d = fabsf(a[i] - b[i]);
        dmax = d > dmax || isnan(d) ? d : dmax;
    }
    for (int i = 0; i < n; i++)
        if (isfinite(a[i]) && fabsf(a[i]) > amax)
            amax = fabsf(a[i]);
    if (dmax == 0.0f)
        return 0.0f;
    return amax > 0.0f ? dmax / amax : INFINITY;
}

/* The residual's RMS after a layer (or the final norm's) for one side, kept for pictures. */
static void keep_rms(cmp_state *s, int side, engine_op op, int layer, int pos0, int T, const kern_row_stats *rows)
{
    engine_comparison *r = s->r;
    if ((op != ENGINE_OP_LAYER_OUT && op != ENGINE_OP_RESULT_NORM) || !r->rms[side])
        return;
    const int il = op == ENGINE_OP_RESULT_NORM ? s->n_layer : layer;
    for (int t = 0; t < T && pos0 + t < r->rms_stride; t++)
        r->rms[side][(size_t)il * (size_t)r->rms_stride + (size_t)(pos0 + t)] = rows[t].rms;
}

static void on_stats_a(void *user, engine_op op, int layer, int pos0, int T, const kern_row_stats *rows)
{
    cmp_state *s = user;
    keep_rms(s, 0, op, layer, pos0, T, rows);
    int k = point_index(s->n_layer, op, layer);
    if (!grow((void **)&s->a.stats[k], &s->a.stats_cap[k], (size_t)T, sizeof(kern_row_stats))) {
        s->failed = ENGINE_E_NOMEM;
        return;
    }
    memcpy(s->a.stats[k], rows, (size_t)T * sizeof *rows);
}

/* K and V rows into a side's history; B's q rows of the chunk aside. */
static void keep_history(cmp_state *s, int side, engine_op op, int layer, int pos0, int T, int n, const float *x)
{
    attn_history *h = &s->h;
    if (!h->kv[0][0])
        return;
    if ((op == ENGINE_OP_K || op == ENGINE_OP_V) && n == h->kv_dim && pos0 + T <= h->n_pos)
        memcpy(h->kv[side][op == ENGINE_OP_V] + ((size_t)layer * h->n_pos + (size_t)pos0) * (size_t)n, x,
               (size_t)T * n * sizeof(float));
    else if (op == ENGINE_OP_Q && side == 1 && n == h->q_dim)
        memcpy(h->qb, x, (size_t)T * n * sizeof(float));
}

static void on_values_a(void *user, engine_op op, int layer, int pos0, int T, int n, const float *x)
{
    cmp_state *s = user;
    keep_history(s, 0, op, layer, pos0, T, n, x);
    int k = point_index(s->n_layer, op, layer);
    if (!grow((void **)&s->a.vals[k], &s->a.cap[k], (size_t)T * n, sizeof(float))) {
        s->failed = ENGINE_E_NOMEM;
        return;
    }
    memcpy(s->a.vals[k], x, (size_t)T * n * sizeof(float));
}

static void on_stats_b(void *user, engine_op op, int layer, int pos0, int T, const kern_row_stats *rows)
{
    cmp_state *s = user;
    keep_rms(s, 1, op, layer, pos0, T, rows);
    memcpy(s->b_stats, rows, (size_t)T * sizeof *rows);
}

/* The exact attention of one side's query row at position pos over its own k and v history, as the engine's
 * attention op defines it (grouped heads, the layer's scale and sliding window), in double. */
static void exact_attention(const cmp_state *s, int side, int layer, int pos, const float *q, float *out)
{
    const kern_attn a = engine_layer_attn(s->m, layer);
    const attn_history *h = &s->h;
    const int hd = a.head_dim, group = a.n_head / a.n_kv_head, n_keys = pos + 1;
    const int j0 = a.window > 0 && n_keys > a.window ? n_keys - a.window : 0;
    const float *kh = h->kv[side][0] + (size_t)layer * h->n_pos * h->kv_dim;
    const float *vh = h->kv[side][1] + (size_t)layer * h->n_pos * h->kv_dim;
    for (int head = 0; head < a.n_head; head++) {
        const int off = (head / group) * hd;
        double m = -INFINITY, l = 0.0;
        for (int j = j0; j < n_keys; j++) {
            double d = 0.0;
            for (int i = 0; i < hd; i++)
                d += (double)q[head * hd + i] * kh[(size_t)j * h->kv_dim + off + i];
            h->p[j] = d * a.scale;
            m = h->p[j] > m ? h->p[j] : m;
        }
        for (int j = j0; j < n_keys; j++)
            l += h->p[j] = exp(h->p[j] - m);
        for (int i = 0; i < hd; i++)
            h->ref[head * hd + i] = 0.0;
        for (int j = j0; j < n_keys; j++)
            for (int i = 0; i < hd; i++)
                h->ref[head * hd + i] += h->p[j] / l * vh[(size_t)j * h->kv_dim + off + i];
    }
    for (int i = 0; i < h->q_dim; i++)
        out[i] = (float)h->ref[i];
}

/* Whether an attention row's difference came in with its inputs: each side within the tolerance of the exact
 * attention of its own q, k and v. */
static bool attention_explained(cmp_state *s, int layer, int pos0, int t, const float *a_row, const float *b_row)
{
    attn_history *h = &s->h;
    const int qk = point_index(s->n_layer, ENGINE_OP_Q, layer);
    if (!h->kv[0][0] || pos0 + t >= h->n_pos || !s->a.vals[qk])
        return false;
    exact_attention(s, 0, layer, pos0 + t, s->a.vals[qk] + (size_t)t * h->q_dim, h->ref_f);
    if (!(row_rel(h->ref_f, a_row, h->q_dim) <= s->r->tol))
        return false;
    exact_attention(s, 1, layer, pos0 + t, h->qb + (size_t)t * h->q_dim, h->ref_f);
    return row_rel(h->ref_f, b_row, h->q_dim) <= s->r->tol;
}

/* A norm op's input: the op whose output it normalizes (INPUTS_KEPT: none traced, as for the first layer's
 * attn_norm, which reads the embeddings, and ffn_norm, which reads the residual in the middle of a layer), the
 * layer that op belongs to, and the gains. */
static int norm_input(const cmp_state *s, engine_op op, int layer, int *in_layer, const kern_weight **gains)
{
    const engine_model *m = s->m;
    switch (op) {
    case ENGINE_OP_ATTN_POST_NORM:
        *in_layer = layer, *gains = &m->layers[layer].w[GGUF_ROLE_ATTN_POST_NORM];
        return IN_ATTN_OUT;
    case ENGINE_OP_FFN_POST_NORM:
        *in_layer = layer, *gains = &m->layers[layer].w[GGUF_ROLE_FFN_POST_NORM];
        return IN_FFN_OUT;
    case ENGINE_OP_ATTN_NORM:
        if (layer == 0)
            return INPUTS_KEPT;
        *in_layer = layer - 1, *gains = &m->layers[layer].w[GGUF_ROLE_ATTN_NORM];
        return IN_LAYER_OUT;
    case ENGINE_OP_RESULT_NORM:
        *in_layer = s->n_layer - 1, *gains = &m->output_norm;
        return IN_LAYER_OUT;
    default: return INPUTS_KEPT;
    }
}

static const engine_op kept_input_ops[INPUTS_KEPT] = { ENGINE_OP_ATTN_OUT, ENGINE_OP_FFN_OUT, ENGINE_OP_LAYER_OUT,
                                                        ENGINE_OP_FFN_NORM };

/* x / sqrt(mean(x^2) + eps) * g, as the engine's RMSNorm defines it, in double. */
static void exact_norm(const float *x, const float *g, int n, float eps, float *out)
{
    double ss = 0.0;
    for (int i = 0; i < n; i++)
        ss += (double)x[i] * x[i];
    const double scale = 1.0 / sqrt(ss / n + (double)eps);
    for (int i = 0; i < n; i++)
        out[i] = (float)(x[i] * scale * g[i]);
}

/* Whether a norm row's difference came in with its input: each side within the tolerance of the exact norm of
 * its own input row. */
static bool norm_explained(cmp_state *s, engine_op op, int layer, int T, int t, int n, const float *a_row,
                           const float *b_row)
{
    op_inputs *nh = &s->nh;
    int in_layer = 0;
    const kern_weight *g = NULL;
    const int which = norm_input(s, op, layer, &in_layer, &g);
    if (which == INPUTS_KEPT || !nh->gains || n != s->m->hp.n_embd || nh->b_T[which] != T || !g->t)
        return false;
    const float *a_in = s->a.vals[point_index(s->n_layer, kept_input_ops[which], in_layer)];
    if (!a_in || quant_dequantize_row(g->t->type, g->t->data, nh->gains, n) != QUANT_OK)
        return false;
    exact_norm(a_in + (size_t)t * n, nh->gains, n, s->m->hp.eps, nh->ref);
    if (!(row_rel(nh->ref, a_row, n) <= s->r->tol))
        return false;
    exact_norm(nh->b_in[which] + (size_t)t * n, nh->gains, n, s->m->hp.eps, nh->ref);
    return row_rel(nh->ref, b_row, n) <= s->r->tol;
}

/* act(gate) * up of one ffn_norm row h, in double: gate and up by the layer's weights (decoded row by row into
 * row, n_embd floats), the activation smooth (tanh-GELU or SiLU), into out (n_ff). False when a weight cannot be
 * decoded on the host. */
static bool exact_glu(const cmp_state *s, int layer, const float *h, float *row, float *out)
{
    const engine_hparams *hp = &s->m->hp;
    const kern_weight *w = s->m->layers[layer].w;
    const gguf_tensor *mats[2] = { w[GGUF_ROLE_FFN_GATE].t, w[GGUF_ROLE_FFN_UP].t };
    if (!mats[0] || !mats[1])
        return false;
    for (int j = 0; j < hp->n_ff; j++) {
        double gate_up[2];
        for (int i = 0; i < 2; i++) {
            const gguf_tensor *t = mats[i];
            if (quant_dequantize_row(t->type, t->data + (size_t)j * (t->size / t->ne[1]), row, hp->n_embd) != QUANT_OK)
                return false;
            double d = 0.0;
            for (int k = 0; k < hp->n_embd; k++)
                d += (double)row[k] * h[k];
            gate_up[i] = d;
        }
        const double g = gate_up[0], c = 0.7978845608028654; /* sqrt(2 / pi) */
        const double act = hp->act == GGUF_ACT_SILU ? g / (1.0 + exp(-g))
                                                    : 0.5 * g * (1.0 + tanh(c * g * (1.0 + 0.044715 * g * g)));
        out[j] = (float)(act * gate_up[1]);
    }
    return true;
}

/* Whether an ffn_act row's difference came in with its input: each side within the tolerance of exact_glu of its
 * own ffn_norm row. */
static bool glu_explained(cmp_state *s, engine_op op, int layer, int T, int t, int n, const float *a_row,
                          const float *b_row)
{
    op_inputs *nh = &s->nh;
    if (op != ENGINE_OP_FFN_ACT || !nh->gains || !nh->glu_ref || n != s->m->hp.n_ff || nh->b_T[IN_FFN_NORM] != T)
        return false;
    const int E = s->m->hp.n_embd;
    const float *a_in = s->a.vals[point_index(s->n_layer, ENGINE_OP_FFN_NORM, layer)];
    if (!a_in || !exact_glu(s, layer, a_in + (size_t)t * E, nh->ref, nh->glu_ref) ||
        !(row_rel(nh->glu_ref, a_row, n) <= s->r->tol))
        return false;
    return exact_glu(s, layer, nh->b_in[IN_FFN_NORM] + (size_t)t * E, nh->ref, nh->glu_ref) &&
           row_rel(nh->glu_ref, b_row, n) <= s->r->tol;
}

static void compare_rows(cmp_state *s, int k, int pos0, int T, int n, const float *bx, const kern_row_stats *a_stats,
                         const kern_row_stats *b_stats)
{
    engine_cmp_point *p = &s->r->points[k];
    const float *ax = s->a.vals[k];
    for (int t = 0; t < T; t++) {
        float rel = row_rel(ax + (size_t)t * n, bx + (size_t)t * n, n);
        float *phase = s->decoding ? &p->rel_decode : &p->rel_prompt;
        if (rel > *phase || *phase < 0.0f)
            *phase = rel;
        if (rel > p->rel_worst || p->worst_pos < 0) {
            p->rel_worst = rel;
            p->worst_pos = pos0 + t;
            if (a_stats)
                p->a = a_stats[t];
            if (b_stats)
                p->b = b_stats[t];
        }
        bool explained = false;
        if (rel > s->r->tol && p->first_seq < 0 && !s->diverged) {
            const float *ar = ax + (size_t)t * n, *br = bx + (size_t)t * n;
            if ((p->op == ENGINE_OP_ATTN && n == s->h.q_dim && attention_explained(s, p->layer, pos0, t, ar, br)) ||
                norm_explained(s, p->op, p->layer, T, t, n, ar, br) ||
                glu_explained(s, p->op, p->layer, T, t, n, ar, br)) {
                explained = true;
                s->explained = rel > s->explained ? rel : s->explained;
            } else {
                explained = rel <= ENGINE_CMP_INHERITED * s->explained;
            }
        }
        if (explained) {
            p->rel_explained = rel > p->rel_explained ? rel : p->rel_explained;
        } else if (rel > s->r->tol && p->first_seq < 0) {
            s->diverged = true;
            p->first_seq = s->seq;
            p->first_pos = pos0 + t;
            p->first_rel = rel;
            if (a_stats)
                p->first_a = a_stats[t];
            if (b_stats)
                p->first_b = b_stats[t];
        }
    }
    s->seq++;
}

static void on_values_b(void *user, engine_op op, int layer, int pos0, int T, int n, const float *x)
{
    cmp_state *s = user;
    keep_history(s, 1, op, layer, pos0, T, n, x);
    for (int i = 0; i < INPUTS_KEPT; i++)
        if (op == kept_input_ops[i] && s->nh.gains && n == s->m->hp.n_embd) {
            memcpy(s->nh.b_in[i], x, (size_t)T * n * sizeof(float));
            s->nh.b_T[i] = T;
        }
    int k = point_index(s->n_layer, op, layer);
    if (!s->a.vals[k])
        return;
    compare_rows(s, k, pos0, T, n, x, s->a.stats[k], s->b_stats);
}

static void compare_logits(cmp_state *s, int pos0, int T, int nv, const float *la, const float *lb)
{
    int k = point_index(s->n_layer, ENGINE_OP_COUNT, 0);
    kern_row_stats *sa = s->a.stats[k], *sb = s->b_stats;
    for (int t = 0; t < T; t++) {
        /* Logits live on the host here: the backends' row_stats see only their own memory. */
        kern_stats_row(la + (size_t)t * nv, nv, &sa[t]);
        kern_stats_row(lb + (size_t)t * nv, nv, &sb[t]);
    }
    s->a.vals[k] = (float *)la;  /* borrowed for compare_rows */
    compare_rows(s, k, pos0, T, nv, lb, sa, sb);
    s->a.vals[k] = NULL;
}

void engine_comparison_free(engine_comparison *r)
{
    free(r->points);
    free(r->tokens);
    free(r->rms[0]);
    free(r->rms[1]);
    memset(r, 0, sizeof *r);
}

engine_status engine_compare(engine_ctx *ca, engine_ctx *cb, const int32_t *prompt, size_t n_prompt, int n_decode,
                             int chunk, float tol, engine_comparison *out, engine_error *err)
{
    memset(out, 0, sizeof *out);
    const engine_hparams *hp = &ca->m->hp;
    const int nv = hp->n_vocab, n_layer = hp->n_layer;
    if (cb->m->hp.n_vocab != nv || cb->m->hp.n_layer != n_layer || cb->m->hp.n_embd != hp->n_embd)
        return engine_fail(err, ENGINE_E_INPUT, 0, "", "the two sides of a comparison must be the same model");
    if (chunk < 1)
        chunk = 1;
    const int n_points = n_layer * OPS_PER_LAYER + 2;
    out->tol = tol;
    out->n_points = n_points;
    out->n_layer = n_layer;
    out->points = calloc((size_t)n_points, sizeof *out->points);
    out->tokens = calloc((size_t)(n_decode > 0 ? n_decode : 1), sizeof *out->tokens);
    out->first_bad = -1;
    out->first_disagree_step = -1;
    out->rms_stride = (int)n_prompt + (n_decode > 0 ? n_decode : 0);
    for (int side = 0; side < 2; side++) {
        size_t n = (size_t)(n_layer + 1) * (size_t)out->rms_stride;
        out->rms[side] = malloc((n ? n : 1) * sizeof(float));
        for (size_t i = 0; out->rms[side] && i < n; i++)
            out->rms[side][i] = NAN;
    }
    cmp_state s = { .r = out, .m = ca->m, .n_layer = n_layer };
    attn_history *h = &s.h;
    h->n_pos = out->rms_stride;
    h->kv_dim = hp->n_kv_head * hp->head_dim;
    h->q_dim = hp->n_head * hp->head_dim;
    const size_t hist = (size_t)n_layer * (size_t)h->n_pos * (size_t)h->kv_dim;
    if (hist * 4 * sizeof(float) <= ATTN_HISTORY_MAX) {
        bool ok = true;
        for (int side = 0; side < 2; side++)
            for (int kv = 0; kv < 2; kv++)
                ok &= (h->kv[side][kv] = calloc(hist ? hist : 1, sizeof(float))) != NULL;
        h->qb = malloc((size_t)chunk * h->q_dim * sizeof(float));
        h->p = malloc((size_t)(h->n_pos > 0 ? h->n_pos : 1) * sizeof(double));
        h->ref = malloc((size_t)h->q_dim * sizeof(double));
        h->ref_f = malloc((size_t)h->q_dim * sizeof(float));
        if (!ok || !h->qb || !h->p || !h->ref || !h->ref_f) {  /* judged by the tolerance alone, then */
            for (int side = 0; side < 2; side++)
                for (int kv = 0; kv < 2; kv++) {
                    free(h->kv[side][kv]);
                    h->kv[side][kv] = NULL;
                }
        }
    }
    op_inputs *nh = &s.nh;
    bool norms_ok = (nh->gains = malloc((size_t)hp->n_embd * sizeof(float))) != NULL &&
                    (nh->ref = malloc((size_t)hp->n_embd * sizeof(float))) != NULL &&
                    (nh->glu_ref = malloc((size_t)(hp->n_ff > 0 ? hp->n_ff : 1) * sizeof(float))) != NULL;
    for (int i = 0; i < INPUTS_KEPT; i++)
        norms_ok &= (nh->b_in[i] = malloc((size_t)chunk * hp->n_embd * sizeof(float))) != NULL;
    if (!norms_ok) {  /* judged by the tolerance alone, then */
        free(nh->gains);
        nh->gains = NULL;
    }
    s.a.vals = calloc((size_t)n_points, sizeof *s.a.vals);
    s.a.cap = calloc((size_t)n_points, sizeof *s.a.cap);
    s.a.stats = calloc((size_t)n_points, sizeof *s.a.stats);
    s.a.stats_cap = calloc((size_t)n_points, sizeof *s.a.stats_cap);
    s.b_stats = calloc((size_t)chunk, sizeof *s.b_stats);
    float *la = malloc((size_t)chunk * nv * sizeof(float)), *lb = malloc((size_t)chunk * nv * sizeof(float));
    engine_status st = ENGINE_OK;
    const int lk = point_index(n_layer, ENGINE_OP_COUNT, 0);
    if (!out->points || !out->tokens || !s.a.vals || !s.a.cap || !s.a.stats || !s.a.stats_cap || !s.b_stats || !la ||
        !lb || !grow((void **)&s.a.stats[lk], &s.a.stats_cap[lk], (size_t)chunk, sizeof(kern_row_stats))) {
        st = engine_fail(err, ENGINE_E_NOMEM, 0, "", "out of memory for the comparison");
        goto done;
    }
    for (int k = 0; k < n_points; k++) {
        engine_cmp_point *p = &out->points[k];
        p->op = k == n_points - 1 ? ENGINE_OP_COUNT : k == n_points - 2 ? ENGINE_OP_RESULT_NORM : (engine_op)(k % OPS_PER_LAYER);
        p->layer = k >= n_points - 2 ? n_layer : k / OPS_PER_LAYER;
        p->rel_prompt = p->rel_decode = -1.0f;
        p->worst_pos = -1;
        p->first_seq = -1;
        p->first_pos = -1;
        p->rel_explained = -1.0f;
    }
    engine_probe pa = { .on_op = on_stats_a, .on_values = on_values_a, .user = &s, .all_ops = true };
    engine_probe pb = { .on_op = on_stats_b, .on_values = on_values_b, .user = &s, .all_ops = true };
    const int total = (int)n_prompt + (n_decode > 0 ? n_decode : 0);
    int32_t tok = -1;
    for (int done = 0; done < total && st == ENGINE_OK;) {
        s.decoding = done >= (int)n_prompt;
        const int T = s.decoding ? 1 : ((int)n_prompt - done < chunk ? (int)n_prompt - done : chunk);
        const int32_t *toks = s.decoding ? &tok : prompt + done;
        const int pos0 = ca->pos;
        if ((st = engine_forward(ca, toks, T, true, la, &pa, err)) || (st = s.failed))
            break;
        if ((st = engine_forward(cb, toks, T, true, lb, &pb, err)))
            break;
        compare_logits(&s, pos0, T, nv, la, lb);
        done += T;
        if (s.decoding)
            out->n_decode++;
        else
            out->n_prompt += T;
        if (done >= total || ca->pos >= ca->n_ctx)
            break;
        if (done >= (int)n_prompt) {
            /* The next token: A's greedy choice, fed to both; B's own choice is only counted. */
            const float *ra = la + (size_t)(T - 1) * nv, *rb = lb + (size_t)(T - 1) * nv;
            tok = engine_argmax(ra, nv);
            int32_t tb = engine_argmax(rb, nv);
            if (tb != tok) {
                out->greedy_disagree++;
                if (out->first_disagree_step < 0)
                    out->first_disagree_step = out->n_tokens;
            }
            out->tokens[out->n_tokens++] = tok;
        }
    }
    if (st == ENGINE_OK && s.failed)
        st = engine_fail(err, s.failed, 0, "", "out of memory for the comparison");
    long long first = -1;
    for (int k = 0; k < n_points; k++)
        if (out->points[k].first_seq >= 0 && (first < 0 || out->points[k].first_seq < first)) {
            first = out->points[k].first_seq;
            out->first_bad = k;
        }
done:
    for (int side = 0; side < 2; side++)
        for (int kv = 0; kv < 2; kv++)
            free(s.h.kv[side][kv]);
    free(s.h.qb);
    free(s.h.p);
    free(s.h.ref);
    free(s.h.ref_f);
    free(s.nh.gains);
    free(s.nh.ref);
    free(s.nh.glu_ref);
    for (int i = 0; i < INPUTS_KEPT; i++)
        free(s.nh.b_in[i]);
    for (int k = 0; k < n_points && s.a.vals; k++) {
        free(s.a.vals[k]);
        free(s.a.stats[k]);
    }
    free(s.a.vals);
    free(s.a.cap);
    free(s.a.stats);
    free(s.a.stats_cap);
    free(s.b_stats);
    free(la);
    free(lb);
    if (st)
        engine_comparison_free(out);
    return st;
}
