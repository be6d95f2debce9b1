/*
 * Two backends, the same tokens, every op compared value by value.
 *
 * Both contexts run the prompt in chunks, then greedy decode steps (the token
 * chosen from side A's logits, fed to both, so the sides never drift apart
 * by choice). For each chunk side A runs first and its activations after
 * every op are kept in host memory; then side B runs, its rows kept too, and
 * each of its ops is compared with A's as it appears, so memory stays at one
 * chunk's activations of each side. Prompt chunks exercise a backend's
 * many-token paths (GEMM, causal attention), decode steps its one-token paths
 * (matrix-vector kernels, recorded graphs): the two are reported apart.
 *
 * Some ops move much more than their inputs: softmax turns an absolute
 * difference in the scores into a relative one in the weights (the 1.1B
 * shape's q and k 1e-4 apart put its attention 1.4e-3 apart, CPU against
 * CUDA); RMSNorm's per-channel gains do not keep max |a - b| / max |a| when
 * gains and activations have outlier channels (gemma-3's post-norms: 7e-4 in,
 * 1.4e-3 out); llama.cpp's GELU reads a table of f16 inputs, so a gate a hair
 * apart can round to the neighbouring f16. And a side in llama.cpp's numerics
 * (cpu:ggml) rounds the activations of every product, which moves every op by
 * percents. So a row beyond the tolerance is re-derived on the host from each
 * side's own inputs, in that side's numerics (compare_derive.c): when both
 * sides equal theirs within the tolerance, the difference came in with the
 * inputs and the row is explained, not a divergence. When one side does not,
 * the comparison says which. Where an op cannot be re-derived (memory, a
 * history too long to keep), a row beyond the tolerance by no more than
 * ENGINE_CMP_INHERITED times the largest explained difference so far is
 * counted as carried from it, until a row goes beyond the tolerance
 * unexplained (what comes after a divergence is its consequence).
 */
#include "compare_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int cmp_point_index(int n_layer, engine_op op, int layer)
{
    if (op == ENGINE_OP_RESULT_NORM)
        return n_layer * OPS_PER_LAYER;
    if (op == ENGINE_OP_COUNT)
        return n_layer * OPS_PER_LAYER + 1;  /* the logits */
    return layer * OPS_PER_LAYER + (int)op;
}

bool cmp_grow(void **p, size_t *cap, size_t need, size_t elem)
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

float cmp_row_rel(const float *a, const float *b, int n)
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

const float *cmp_side_rows(const cmp_state *s, int side, engine_op op, int layer, int n)
{
    const int k = cmp_point_index(s->n_layer, op, layer);
    const side_rows *r = &s->rows[side];
    return r->n[k] == n ? r->vals[k] : NULL;
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

static void keep_stats(cmp_state *s, int side, engine_op op, int layer, int pos0, int T, const kern_row_stats *rows)
{
    keep_rms(s, side, op, layer, pos0, T, rows);
    side_rows *r = &s->rows[side];
    const int k = cmp_point_index(s->n_layer, op, layer);
    if (!cmp_grow((void **)&r->stats[k], &r->stats_cap[k], (size_t)T, sizeof(kern_row_stats))) {
        s->failed = ENGINE_E_NOMEM;
        return;
    }
    memcpy(r->stats[k], rows, (size_t)T * sizeof *rows);
}

static void on_stats_a(void *user, engine_op op, int layer, int pos0, int T, const kern_row_stats *rows)
{
    keep_stats(user, 0, op, layer, pos0, T, rows);
}

static void on_stats_b(void *user, engine_op op, int layer, int pos0, int T, const kern_row_stats *rows)
{
    keep_stats(user, 1, op, layer, pos0, T, rows);
}

/* K and V rows into a side's history. */
static void keep_history(cmp_state *s, int side, engine_op op, int layer, int pos0, int T, int n, const float *x)
{
    attn_history *h = &s->h;
    const engine_layer *L = layer >= 0 && layer < s->m->hp.n_layer ? &s->m->layers[layer] : NULL;
    if (h->kv[0][0] && L && (op == ENGINE_OP_K || op == ENGINE_OP_V) &&
        n == L->n_kv_head * (op == ENGINE_OP_K ? L->head_dim : L->v_dim) && pos0 + T <= h->n_pos)
        memcpy(h->kv[side][op == ENGINE_OP_V] + (size_t)layer * h->n_pos * h->kv_dim + (size_t)pos0 * (size_t)n, x,
               (size_t)T * n * sizeof(float));
    if (h->norm[0] && op == ENGINE_OP_ATTN_NORM && s->m->layers[layer].state && n == s->m->hp.n_embd &&
        pos0 + T <= h->n_pos)
        memcpy(h->norm[side] + ((size_t)layer * h->n_pos + (size_t)pos0) * (size_t)n, x, (size_t)T * n * sizeof(float));
}

/* A side's rows of one op kept for this chunk; false when memory runs out. */
static bool keep_values(cmp_state *s, int side, engine_op op, int layer, int pos0, int T, int n, const float *x)
{
    keep_history(s, side, op, layer, pos0, T, n, x);
    side_rows *r = &s->rows[side];
    const int k = cmp_point_index(s->n_layer, op, layer);
    r->n[k] = 0;
    if (!cmp_grow((void **)&r->vals[k], &r->cap[k], (size_t)T * n, sizeof(float))) {
        s->failed = ENGINE_E_NOMEM;
        return false;
    }
    memcpy(r->vals[k], x, (size_t)T * n * sizeof(float));
    r->n[k] = n;
    return true;
}

static void on_values_a(void *user, engine_op op, int layer, int pos0, int T, int n, const float *x)
{
    keep_values(user, 0, op, layer, pos0, T, n, x);
}

/* Each side's row t against its re-derivation (-1: none). */
static void self_rels(const cmp_state *s, bool derived, int t, int n, const float *const rows[2], float out[2])
{
    for (int side = 0; side < 2; side++)
        out[side] = derived ? cmp_row_rel(s->d.out[side] + (size_t)t * n, rows[side] + (size_t)t * n, n) : -1.0f;
}

static void compare_rows(cmp_state *s, int k, int pos0, int T, int n)
{
    engine_cmp_point *p = &s->r->points[k];
    const float *const rows[2] = { s->rows[0].vals[k], s->rows[1].vals[k] };
    const kern_row_stats *const stats[2] = { s->rows[0].stats[k], s->rows[1].stats[k] };
    const float tol = s->r->tol;
    int derived = -1;  /* not tried yet; then 0 or 1 */
    for (int t = 0; t < T; t++) {
        /* NaN on both sides agrees, and says nothing good about the model: the first such row is kept */
        for (int side = 0; side < 2 && s->r->first_nonfinite < 0; side++)
            if (stats[side] && stats[side][t].n_nan + stats[side][t].n_inf) {
                s->r->first_nonfinite = k;
                s->r->first_nonfinite_pos = pos0 + t;
            }
        const float rel = cmp_row_rel(rows[0] + (size_t)t * n, rows[1] + (size_t)t * n, n);
        float *phase = s->decoding ? &p->rel_decode : &p->rel_prompt;
        if (rel > *phase || *phase < 0.0f)
            *phase = rel;
        if (rel > p->rel_worst || p->worst_pos < 0) {
            p->rel_worst = rel;
            p->worst_pos = pos0 + t;
            if (stats[0])
                p->a = stats[0][t];
            if (stats[1])
                p->b = stats[1][t];
        }
        if (!(rel > tol) || p->first_seq >= 0)
            continue;
        float self[2] = { -1.0f, -1.0f };
        if (!s->diverged) {
            if (derived < 0)
                derived = cmp_derive(s, p->op, p->layer, pos0, T, n);
            self_rels(s, derived, t, n, rows, self);
            for (int side = 0; side < 2; side++)
                p->self_worst[side] = fmaxf(p->self_worst[side], self[side]);
            if (derived && self[0] <= tol && self[1] <= tol) {
                p->rel_explained = fmaxf(p->rel_explained, rel);
                s->explained = fmaxf(s->explained, rel);
                continue;
            }
            if (!derived && rel <= ENGINE_CMP_INHERITED * s->explained) {
                p->rel_explained = fmaxf(p->rel_explained, rel);
                p->carried = true;
                continue;
            }
        }
        s->diverged = true;
        p->first_seq = s->seq;
        p->first_pos = pos0 + t;
        p->first_rel = rel;
        p->first_self[0] = self[0];
        p->first_self[1] = self[1];
        if (stats[0])
            p->first_a = stats[0][t];
        if (stats[1])
            p->first_b = stats[1][t];
    }
    s->seq++;
}

static void on_values_b(void *user, engine_op op, int layer, int pos0, int T, int n, const float *x)
{
    cmp_state *s = user;
    const int k = cmp_point_index(s->n_layer, op, layer);
    if (keep_values(s, 1, op, layer, pos0, T, n, x) && s->rows[0].n[k] == n)
        compare_rows(s, k, pos0, T, n);
}

/* The logits of both sides, borrowed from the caller for compare_rows. */
static void compare_logits(cmp_state *s, int pos0, int T, int nv, float *const logits[2])
{
    const int k = cmp_point_index(s->n_layer, ENGINE_OP_COUNT, 0);
    for (int side = 0; side < 2; side++) {
        side_rows *r = &s->rows[side];
        if (!cmp_grow((void **)&r->stats[k], &r->stats_cap[k], (size_t)T, sizeof(kern_row_stats))) {
            s->failed = ENGINE_E_NOMEM;
            return;
        }
        /* Logits live on the host here: the backends' row_stats see only their own memory. */
        for (int t = 0; t < T; t++)
            kern_stats_row(logits[side] + (size_t)t * nv, nv, &r->stats[k][t]);
        r->vals[k] = logits[side];
        r->n[k] = nv;
    }
    compare_rows(s, k, pos0, T, nv);
    for (int side = 0; side < 2; side++) {
        s->rows[side].vals[k] = NULL;
        s->rows[side].n[k] = 0;
    }
}

void engine_comparison_free(engine_comparison *r)
{
    free(r->points);
    free(r->tokens);
    free(r->rms[0]);
    free(r->rms[1]);
    memset(r, 0, sizeof *r);
}

/* Room for a side's rows of every point; false when memory runs out. */
static bool side_rows_new(side_rows *r, int n_points)
{
    r->vals = calloc((size_t)n_points, sizeof *r->vals);
    r->cap = calloc((size_t)n_points, sizeof *r->cap);
    r->n = calloc((size_t)n_points, sizeof *r->n);
    r->stats = calloc((size_t)n_points, sizeof *r->stats);
    r->stats_cap = calloc((size_t)n_points, sizeof *r->stats_cap);
    return r->vals && r->cap && r->n && r->stats && r->stats_cap;
}

static void side_rows_free(side_rows *r, int n_points)
{
    for (int k = 0; k < n_points && r->vals && r->stats; k++) {
        free(r->vals[k]);
        free(r->stats[k]);
    }
    free(r->vals);
    free(r->cap);
    free(r->n);
    free(r->stats);
    free(r->stats_cap);
}

/* Each side's k and v history for re-deriving attention, when it fits CMP_HISTORY_MAX (else none: attention rows
 * are then judged by the tolerance alone). */
static void history_new(attn_history *h, const engine_hparams *hp, int n_pos)
{
    h->n_pos = n_pos;
    h->kv_dim = hp->kv_max; /* a layer's rows are its own width, at the widest layer's stride */
    if (hp->mla)
        return; /* latent attention's steps are not re-derived (compare_derive.c) */
    const size_t norms = (size_t)hp->n_layer * (size_t)n_pos * (size_t)hp->n_embd;
    for (int side = 0; side < 2 && hp->n_recurrent && norms * 2 * sizeof(float) <= CMP_HISTORY_MAX; side++)
        h->norm[side] = calloc(norms ? norms : 1, sizeof(float));
    if (!h->norm[0] || !h->norm[1]) { /* both or none */
        free(h->norm[0]), free(h->norm[1]);
        h->norm[0] = h->norm[1] = NULL;
    }
    const size_t hist = (size_t)hp->n_layer * (size_t)n_pos * (size_t)h->kv_dim;
    if (hist * 4 * sizeof(float) > CMP_HISTORY_MAX)
        return;
    bool ok = true;
    for (int side = 0; side < 2; side++)
        for (int kv = 0; kv < 2; kv++)
            ok &= (h->kv[side][kv] = calloc(hist ? hist : 1, sizeof(float))) != NULL;
    if (ok)
        return;
    for (int side = 0; side < 2; side++)
        for (int kv = 0; kv < 2; kv++) {
            free(h->kv[side][kv]);
            h->kv[side][kv] = NULL;
        }
}

static void history_free(attn_history *h)
{
    for (int side = 0; side < 2; side++) {
        for (int kv = 0; kv < 2; kv++)
            free(h->kv[side][kv]);
        free(h->norm[side]);
    }
}

/* The host backends that re-derive ops: the reference for every op's definition (its products are the exact CPU
 * backend's), and for a side in llama.cpp's numerics that CPU backend for its rotation (a NULL one, out of memory,
 * leaves the ops that need it judged by the tolerance alone). */
static void deriving_new(cmp_deriving *d, const kern_backend *a, const kern_backend *b)
{
    d->numerics[0] = a->numerics;
    d->numerics[1] = b->numerics;
    d->be[KERN_NUMERICS_EXACT] = kern_ref_create(0);
    if (a->numerics == KERN_NUMERICS_GGML || b->numerics == KERN_NUMERICS_GGML)
        d->be[KERN_NUMERICS_GGML] = kern_cpu_create_numerics(0, KERN_NUMERICS_GGML);
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
    out->first_nonfinite = -1;
    out->rms_stride = (int)n_prompt + (n_decode > 0 ? n_decode : 0);
    for (int side = 0; side < 2; side++) {
        size_t n = (size_t)(n_layer + 1) * (size_t)out->rms_stride;
        out->rms[side] = malloc((n ? n : 1) * sizeof(float));
        for (size_t i = 0; out->rms[side] && i < n; i++)
            out->rms[side][i] = NAN;
    }
    cmp_state s = { .r = out, .m = ca->m, .n_layer = n_layer };
    history_new(&s.h, hp, out->rms_stride);
    deriving_new(&s.d, ca->be, cb->be);
    bool rows_ok = side_rows_new(&s.rows[0], n_points);
    rows_ok &= side_rows_new(&s.rows[1], n_points);
    float *logits[2] = { malloc((size_t)chunk * nv * sizeof(float)), malloc((size_t)chunk * nv * sizeof(float)) };
    engine_status st = ENGINE_OK;
    if (!out->points || !out->tokens || !rows_ok || !logits[0] || !logits[1]) {
        st = engine_fail(err, ENGINE_E_NOMEM, 0, "", "out of memory for the comparison");
        goto done;
    }
    for (int k = 0; k < n_points; k++) {
        engine_cmp_point *p = &out->points[k];
        p->op = k == n_points - 1   ? ENGINE_OP_COUNT
                : k == n_points - 2 ? ENGINE_OP_RESULT_NORM
                                    : (engine_op)(k % OPS_PER_LAYER);
        p->layer = k >= n_points - 2 ? n_layer : k / OPS_PER_LAYER;
        p->rel_prompt = p->rel_decode = p->rel_worst = -1.0f; /* never compared */
        p->worst_pos = -1;
        p->first_seq = -1;
        p->first_pos = -1;
        p->rel_explained = -1.0f;
        p->first_self[0] = p->first_self[1] = p->self_worst[0] = p->self_worst[1] = -1.0f;
    }
    engine_probe pa = { .on_op = on_stats_a, .on_values = on_values_a, .user = &s, .all_ops = true };
    engine_probe pb = { .on_op = on_stats_b, .on_values = on_values_b, .user = &s, .all_ops = true };
    const int total = (int)n_prompt + (n_decode > 0 ? n_decode : 0);
    int32_t tok = -1;
    for (int done = 0; done < total && st == ENGINE_OK;) {
        s.decoding = done >= (int)n_prompt;
        const int T = s.decoding ? 1 : ((int)n_prompt - done < chunk ? (int)n_prompt - done : chunk);
        s.toks = s.decoding ? &tok : prompt + done;
        const int pos0 = ca->pos;
        for (int side = 0; side < 2; side++)  /* nothing of the last chunk is an input of this one */
            memset(s.rows[side].n, 0, (size_t)n_points * sizeof *s.rows[side].n);
        if ((st = engine_forward(ca, s.toks, T, true, logits[0], &pa, err)) || (st = s.failed))
            break;
        if ((st = engine_forward(cb, s.toks, T, true, logits[1], &pb, err)))
            break;
        compare_logits(&s, pos0, T, nv, logits);
        done += T;
        if (s.decoding)
            out->n_decode++;
        else
            out->n_prompt += T;
        if (done >= total || ca->pos >= ca->n_ctx)
            break;
        if (done >= (int)n_prompt) {
            /* The next token: A's greedy choice, fed to both; B's own choice is only counted. */
            const float *ra = logits[0] + (size_t)(T - 1) * nv, *rb = logits[1] + (size_t)(T - 1) * nv;
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
    history_free(&s.h);
    cmp_deriving_free(&s.d);
    side_rows_free(&s.rows[0], n_points);
    side_rows_free(&s.rows[1], n_points);
    free(logits[0]);
    free(logits[1]);
    if (st)
        engine_comparison_free(out);
    return st;
}
