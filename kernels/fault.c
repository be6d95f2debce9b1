/*
 * A backend with one deliberate bug, for proving that backend comparisons
 * and the lm_head spot check find what they claim to find. Every op goes to
 * the wrapped backend; the faulty one is bent after (or before) it runs, on
 * whatever memory that backend uses (through its own to_host/from_host).
 */
#include "kern.h"

#include <stdlib.h>
#include <string.h>

typedef enum fault_kind { FAULT_ROPE_MODE, FAULT_LM_HEAD_ROWS } fault_kind;

static const char *const fault_name[] = { "rope-mode", "lm-head-rows" };

typedef struct fault_ctx {
    kern_backend *in;
    fault_kind kind;
} fault_ctx;

static kern_backend *inner(kern_backend *b)
{
    return ((fault_ctx *)b->ctx)->in;
}

static fault_kind kind_of(const kern_backend *b)
{
    return ((const fault_ctx *)b->ctx)->kind;
}

static void f_destroy(kern_backend *b)
{
    inner(b)->destroy(inner(b));
    free(b->ctx);
    free(b);
}

static void f_set_threads(kern_backend *b, int n) { inner(b)->set_threads(inner(b), n); }
static float *f_alloc(kern_backend *b, size_t n) { return inner(b)->alloc(inner(b), n); }
static void f_free(kern_backend *b, float *p) { inner(b)->free(inner(b), p); }
static kern_status f_to_host(kern_backend *b, float *d, const float *s, size_t n) { return inner(b)->to_host(inner(b), d, s, n); }
static kern_status f_from_host(kern_backend *b, float *d, const float *s, size_t n) { return inner(b)->from_host(inner(b), d, s, n); }
static kern_status f_bind(kern_backend *b, kern_weight *w) { return inner(b)->bind(inner(b), w); }
static void f_unbind(kern_backend *b, kern_weight *w) { inner(b)->unbind(inner(b), w); }

static kern_status f_embed(kern_backend *b, const kern_weight *w, const int32_t *tokens, int T, float *out)
{
    return inner(b)->embed(inner(b), w, tokens, T, out);
}

static kern_status f_rmsnorm(kern_backend *b, const kern_weight *w, const float *x, int T, int n, float eps, float *out)
{
    return inner(b)->rmsnorm(inner(b), w, x, T, n, eps, out);
}

static kern_status f_attention(kern_backend *b, const float *q, const float *k, const float *v, int T, int pos0,
                               const kern_attn *a, float *out)
{
    return inner(b)->attention(inner(b), q, k, v, T, pos0, a, out);
}

static kern_status f_glu(kern_backend *b, gguf_act act, const float *gate, const float *up, size_t n, float *out)
{
    return inner(b)->glu(inner(b), act, gate, up, n, out);
}

static kern_status f_scale(kern_backend *b, float *x, size_t n, float s) { return inner(b)->scale(inner(b), x, n, s); }
static kern_status f_softcap(kern_backend *b, float *x, size_t n, float cap)
{
    return inner(b)->softcap(inner(b), x, n, cap);
}

static kern_status f_add(kern_backend *b, float *x, const float *y, size_t n) { return inner(b)->add(inner(b), x, y, n); }

static kern_status f_row_stats(kern_backend *b, const float *x, int T, int n, kern_row_stats *out)
{
    return inner(b)->row_stats(inner(b), x, T, n, out);
}

static kern_status f_argmax(kern_backend *b, const float *x, int n, int32_t *out)
{
    return inner(b)->argmax(inner(b), x, n, out);
}

static kern_status f_top_k(kern_backend *b, const float *x, int n, int k, int32_t *ids, float *vals)
{
    return inner(b)->top_k(inner(b), x, n, k, ids, vals);
}

static const char *f_last_error(const kern_backend *b)
{
    const kern_backend *in = ((const fault_ctx *)b->ctx)->in;
    return in->last_error(in);
}

static kern_status f_rope(kern_backend *b, float *x, int T, int n_head, int head_dim, int pos0, const kern_rope *r)
{
    kern_rope bent = *r;
    if (kind_of(b) == FAULT_ROPE_MODE)
        bent.neox = !r->neox;
    return inner(b)->rope(inner(b), x, T, n_head, head_dim, pos0, &bent);
}

/* The lm_head is the only matmul by the output (or tied embedding) matrix. */
static bool is_lm_head(const kern_weight *w)
{
    return w->t && (!strcmp(w->t->name, "output.weight") || !strcmp(w->t->name, "token_embd.weight"));
}

static kern_status f_matmul(kern_backend *b, const kern_weight *w, const kern_weight *bias, const float *x, int T,
                            float *y)
{
    kern_backend *in = inner(b);
    kern_status s = in->matmul(in, w, bias, x, T, y);
    if (s || kind_of(b) != FAULT_LM_HEAD_ROWS || !is_lm_head(w))
        return s;
    const size_t N = (size_t)w->t->ne[1], n = (size_t)T * N;
    float *h = malloc(n * sizeof *h);
    if (!h)
        return KERN_E_NOMEM;
    if (!(s = in->to_host(in, h, y, n))) {
        for (int t = 0; t < T; t++)
            for (size_t r = 3; r + 1 < N; r += 7)
                h[(size_t)t * N + r] = h[(size_t)t * N + r + 1];
        s = in->from_host(in, y, h, n);
    }
    free(h);
    return s;
}

const char *kern_fault_names(void)
{
    return "rope-mode, lm-head-rows";
}

kern_backend *kern_fault_wrap(kern_backend *in, const char *fault)
{
    int kind = -1;
    for (int i = 0; i < (int)(sizeof fault_name / sizeof fault_name[0]); i++)
        if (fault && !strcmp(fault, fault_name[i]))
            kind = i;
    kern_backend *b = kind < 0 ? NULL : calloc(1, sizeof *b);
    fault_ctx *c = b ? calloc(1, sizeof *c) : NULL;
    if (!c) {
        free(b);
        in->destroy(in);
        return NULL;
    }
    *c = (fault_ctx){ .in = in, .kind = (fault_kind)kind };
    /* No step_begin/step_end: a fault that reads results back cannot be recorded into a device graph. */
    *b = (kern_backend){
        .name = in->name, .ctx = c, .destroy = f_destroy, .set_threads = f_set_threads, .alloc = f_alloc,
        .free = f_free, .to_host = f_to_host, .from_host = f_from_host, .bind = f_bind, .unbind = f_unbind,
        .embed = f_embed, .matmul = f_matmul, .rmsnorm = f_rmsnorm, .rope = f_rope, .attention = f_attention,
        .glu = f_glu, .scale = f_scale, .softcap = f_softcap, .add = f_add, .row_stats = f_row_stats,
        .argmax = f_argmax, .top_k = f_top_k, .last_error = f_last_error,
    };
    return b;
}
