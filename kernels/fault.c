/*
 * A backend with one deliberate bug, for proving that backend comparisons, --against and the lm_head spot
 * check find what they claim to find. The faults are the engine bugs the seed reports describe (the "bug
 * zoo"). Every op goes to the wrapped backend; the faulty one is bent before or after it runs, on whatever
 * memory that backend uses (through its own to_host/from_host).
 */
#include "kern.h"
#include "quant.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum fault_kind {
    FAULT_ROPE_MODE, FAULT_LM_HEAD_ROWS, FAULT_STUCK_EMBEDDING, FAULT_NO_QKV_BIAS, FAULT_LM_HEAD_TRANSPOSED,
    FAULT_Q4K_SCALES, FAULT_KV_POS, FAULT_GQA_MAP, FAULT_NORM_SKIP, FAULT_RESIDUAL_TWICE, FAULT_ATTN_SCALE,
    FAULT_PADDING_LOGITS, FAULT_CONV_STATE, FAULT_COUNT
} fault_kind;

/* Name, and the bug in a sentence (the seed report's symptom is in the README's table). */
static const struct { const char *name, *bug; } faults[FAULT_COUNT] = {
    [FAULT_ROPE_MODE] = { "rope-mode", "rotary pairs in the other mode (NORM for NEOX and back)" },
    [FAULT_LM_HEAD_ROWS] = { "lm-head-rows", "some lm_head rows read from their neighbours" },
    [FAULT_STUCK_EMBEDDING] = { "stuck-embedding", "every decode step re-reads the prompt's first embedding row" },
    [FAULT_NO_QKV_BIAS] = { "no-qkv-bias", "the q/k/v biases are not added" },
    [FAULT_LM_HEAD_TRANSPOSED] = { "lm-head-transposed", "the lm_head read the wrong way round (rows reversed)" },
    [FAULT_Q4K_SCALES] = { "q4k-scales", "Q4_K's 6-bit scales unpacked without their high 2 bits" },
    [FAULT_KV_POS] = { "kv-pos", "decode writes K/V one position early (the new one is never written)" },
    [FAULT_GQA_MAP] = { "gqa-map", "query head h reads the key/value head of query head n_head-1-h" },
    [FAULT_NORM_SKIP] = { "norm-skip", "attn_norm's gains not applied" },
    [FAULT_RESIDUAL_TWICE] = { "residual-twice", "each residual add adds twice" },
    [FAULT_ATTN_SCALE] = { "attn-scale", "attention scores scaled by 1/d instead of 1/sqrt(d)" },
    [FAULT_PADDING_LOGITS] = { "padding-logits", "the last (padding) vocabulary row wins every step" },
    [FAULT_CONV_STATE] = { "conv-state", "a recurrent layer's short convolution (a delta net's, LFM2's, a Mamba-2 "
                                         "mixer's) forgets the inputs before each batch (its state cleared)" },
};

typedef struct fault_ctx {
    kern_backend *in;
    fault_kind kind;
    int32_t first_token; /* stuck-embedding: the first token embedded (-1: none yet) */
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

/* Every op of kern.h's list goes to the wrapped backend as it is (the faulty ones are set over these below). */
#define FORWARD(name, params, args)                                                                               \
    __attribute__((unused)) static kern_status fwd_##name(kern_backend *b, KERN_ARGS params)                      \
    {                                                                                                             \
        return inner(b)->name(inner(b), KERN_ARGS args);                                                          \
    }
KERN_OPS(FORWARD)
#undef FORWARD

static void f_set_threads(kern_backend *b, int n) { inner(b)->set_threads(inner(b), n); }
static float *f_alloc(kern_backend *b, size_t n) { return inner(b)->alloc(inner(b), n); }
static void f_free(kern_backend *b, float *p) { inner(b)->free(inner(b), p); }
static kern_status f_to_host(kern_backend *b, float *d, const float *s, size_t n) { return inner(b)->to_host(inner(b), d, s, n); }
static kern_status f_from_host(kern_backend *b, float *d, const float *s, size_t n) { return inner(b)->from_host(inner(b), d, s, n); }
static kern_status f_bind(kern_backend *b, kern_weight *w) { return inner(b)->bind(inner(b), w); }
static void f_unbind(kern_backend *b, kern_weight *w) { inner(b)->unbind(inner(b), w); }

/* Reads n floats of backend memory at src, lets bend change them on the host, and writes them back. */
static kern_status bend_rows(kern_backend *in, float *dst, size_t n, void (*bend)(float *, size_t, void *), void *user)
{
    float *h = malloc((n ? n : 1) * sizeof *h);
    if (!h)
        return KERN_E_NOMEM;
    kern_status s = in->to_host(in, h, dst, n);
    if (!s) {
        bend(h, n, user);
        s = in->from_host(in, dst, h, n);
    }
    free(h);
    return s;
}

static kern_status f_embed(kern_backend *b, const kern_weight *w, const int32_t *tokens, int T, float *out)
{
    fault_ctx *c = b->ctx;
    if (c->kind == FAULT_STUCK_EMBEDDING) {
        if (c->first_token < 0 && T > 0)
            c->first_token = tokens[0];
        if (T == 1) /* a decode step: the row it reads is stuck */
            return inner(b)->embed(inner(b), w, &c->first_token, 1, out);
    }
    return inner(b)->embed(inner(b), w, tokens, T, out);
}

static void divide_by_gains(float *h, size_t n, void *user)
{
    const kern_weight *w = user;
    const float *g = (const float *)w->t->data;
    const size_t width = (size_t)w->t->ne[0];
    for (size_t i = 0; i < n; i++)
        h[i] = g[i % width] != 0.0f ? h[i] / g[i % width] : h[i];
}

static kern_status f_rmsnorm(kern_backend *b, const kern_weight *w, const float *x, int T, int n, float eps, float *out)
{
    kern_status s = inner(b)->rmsnorm(inner(b), w, x, T, n, eps, out);
    if (s || kind_of(b) != FAULT_NORM_SKIP || !w->t || !strstr(w->t->name, ".attn_norm.weight") ||
        w->t->type != GGUF_TENSOR_F32)
        return s;
    return bend_rows(inner(b), out, (size_t)T * (size_t)n, divide_by_gains, (void *)w);
}

/* The same fault in a LayerNorm (StarCoder2's, Cohere's): the norm without its gains, its bias still added */
static kern_status f_layernorm(kern_backend *b, const kern_weight *w, const kern_weight *bias, const float *x, int T,
                               int n, float eps, float *out)
{
    const bool bent = kind_of(b) == FAULT_NORM_SKIP && w && w->t && strstr(w->t->name, ".attn_norm.weight");
    return inner(b)->layernorm(inner(b), bent ? NULL : w, bias, x, T, n, eps, out);
}

typedef struct heads {
    int T, n_head, head_dim;
} heads;

/* Reverses the order of the heads within each row: query head h becomes head n_head-1-h. */
static void reverse_heads(float *h, size_t n, void *user)
{
    const heads *g = user;
    (void)n;
    for (int t = 0; t < g->T; t++)
        for (int a = 0, z = g->n_head - 1; a < z; a++, z--)
            for (int d = 0; d < g->head_dim; d++) {
                float *x = h + ((size_t)t * g->n_head + (size_t)a) * g->head_dim + d;
                float *y = h + ((size_t)t * g->n_head + (size_t)z) * g->head_dim + d;
                float tmp = *x;
                *x = *y;
                *y = tmp;
            }
}

typedef struct kv_row {
    size_t from, to, width;
} kv_row;

/* The row decode should have written goes one position early; the right one stays empty. */
static void move_row(float *h, size_t n, void *user)
{
    const kv_row *r = user;
    (void)n;
    memcpy(h + r->to * r->width, h + r->from * r->width, r->width * sizeof *h);
    memset(h + r->from * r->width, 0, r->width * sizeof *h);
}

static kern_status f_attention(kern_backend *b, const float *q, const float *k, const float *v, int T, int pos0,
                               const kern_attn *a, float *out)
{
    kern_backend *in = inner(b);
    kern_attn bent = *a;
    kern_status s;
    switch (kind_of(b)) {
    case FAULT_ATTN_SCALE:
        bent.scale = a->scale / sqrtf((float)a->head_dim); /* 1/sqrt(d) becomes 1/d */
        return in->attention(in, q, k, v, T, pos0, &bent, out);
    case FAULT_KV_POS:
        if (T == 1 && pos0 > 0) { /* this step's K/V sit at pos0: the bug put them at pos0 - 1 */
            kv_row r = { (size_t)pos0, (size_t)pos0 - 1, (size_t)a->n_kv_head * (size_t)a->head_dim };
            kv_row rv = { r.from, r.to, (size_t)a->n_kv_head * (size_t)kern_attn_v_dim(a) };
            if ((s = bend_rows(in, (float *)k, (size_t)(pos0 + 1) * r.width, move_row, &r)) ||
                (s = bend_rows(in, (float *)v, (size_t)(pos0 + 1) * rv.width, move_row, &rv)))
                return s;
        }
        return in->attention(in, q, k, v, T, pos0, a, out);
    case FAULT_GQA_MAP: {
        /* without grouping (n_kv_head == n_head) the reversal still makes each head read another's keys */
        heads g = { T, a->n_head, a->head_dim };
        size_t n = (size_t)T * (size_t)a->n_head * (size_t)a->head_dim;
        if ((s = bend_rows(in, (float *)q, n, reverse_heads, &g)) || (s = in->attention(in, q, k, v, T, pos0, a, out)))
            return s;
        /* heads back in place (the query too: the caller's buffer is not ours to keep bent) */
        if ((s = bend_rows(in, (float *)q, n, reverse_heads, &g)))
            return s;
        heads go = { T, a->n_head, kern_attn_v_dim(a) };
        return bend_rows(in, out, (size_t)T * (size_t)a->n_head * (size_t)go.head_dim, reverse_heads, &go);
    }
    default:
        return in->attention(in, q, k, v, T, pos0, a, out);
    }
}

static void zero_rows(float *h, size_t n, void *user)
{
    (void)user;
    memset(h, 0, n * sizeof *h);
}

static kern_status f_ssm_conv(kern_backend *b, const kern_weight *w, const kern_weight *bias, const float *x, int T,
                              int n, int d_conv, bool silu, float *state, float *out)
{
    kern_backend *in = inner(b);
    kern_status s;
    if (kind_of(b) == FAULT_CONV_STATE && d_conv > 1 &&
        (s = bend_rows(in, state, (size_t)(d_conv - 1) * (size_t)n, zero_rows, NULL)))
        return s;
    return in->ssm_conv(in, w, bias, x, T, n, d_conv, silu, state, out);
}

static kern_status f_add(kern_backend *b, float *x, const float *y, size_t n)
{
    kern_status s = inner(b)->add(inner(b), x, y, n);
    if (s || kind_of(b) != FAULT_RESIDUAL_TWICE)
        return s;
    return inner(b)->add(inner(b), x, y, n);
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

typedef struct logit_rows {
    int T;
    size_t N;
    fault_kind kind;
} logit_rows;

static void bend_logits(float *h, size_t n, void *user)
{
    const logit_rows *g = user;
    (void)n;
    for (int t = 0; t < g->T; t++) {
        float *row = h + (size_t)t * g->N;
        if (g->kind == FAULT_LM_HEAD_ROWS) {
            for (size_t r = 3; r + 1 < g->N; r += 7)
                row[r] = row[r + 1];
        } else if (g->kind == FAULT_LM_HEAD_TRANSPOSED) {
            for (size_t a = 0, z = g->N - 1; a < z; a++, z--) {
                float tmp = row[a];
                row[a] = row[z];
                row[z] = tmp;
            }
        } else { /* padding-logits: the last row, padding in most vocabularies, wins */
            float top = row[0];
            for (size_t r = 1; r < g->N; r++)
                top = row[r] > top ? row[r] : top;
            row[g->N - 1] = top + 1.0f;
        }
    }
}

/* q4k-scales: x (T, ne0) @ W^T on the host, W's Q4_K blocks decoded after the high 2 bits of every 6-bit scale
 * and min were dropped: what a decoder that unpacks only the low bits computes (ggml's get_scale_min_k4 reads
 * the high bits of sub-blocks 4-7 from bytes 0-7's top bits). */
static kern_status q4k_wrong_scales(kern_backend *in, const kern_weight *w, const kern_weight *bias, const float *x,
                                    int T, float *y)
{
    const size_t K = (size_t)w->t->ne[0], N = (size_t)w->t->ne[1], block = 144, per_row = K / 256 * block;
    float *hx = malloc(K * (size_t)T * sizeof *hx), *hy = malloc(N * (size_t)T * sizeof *hy), *row = malloc(K * sizeof *row);
    uint8_t *bytes = malloc(per_row);
    kern_status s = hx && hy && row && bytes ? in->to_host(in, hx, x, K * (size_t)T) : KERN_E_NOMEM;
    for (size_t r = 0; !s && r < N; r++) {
        memcpy(bytes, w->t->data + r * per_row, per_row);
        for (size_t blk = 0; blk < per_row; blk += block)
            for (int j = 0; j < 8; j++)
                bytes[blk + 4 + j] &= 0x3f; /* scales[0..7]: their top 2 bits are the high bits of sub-blocks 4-7 */
        if (quant_dequantize_row(GGUF_TENSOR_Q4_K, bytes, row, (int64_t)K) != QUANT_OK) {
            s = KERN_E_UNSUPPORTED;
            break;
        }
        const float *bv = bias && bias->t ? (const float *)bias->t->data : NULL;
        for (int t = 0; t < T; t++) {
            double acc = bv ? bv[r] : 0.0;
            for (size_t i = 0; i < K; i++)
                acc += (double)row[i] * hx[(size_t)t * K + i];
            hy[(size_t)t * N + r] = (float)acc;
        }
    }
    if (!s)
        s = in->from_host(in, y, hy, N * (size_t)T);
    free(hx), free(hy), free(row), free(bytes);
    return s;
}

static kern_status f_matmul(kern_backend *b, const kern_weight *w, const kern_weight *bias, const float *x, int T,
                            float *y)
{
    kern_backend *in = inner(b);
    fault_kind k = kind_of(b);
    if (k == FAULT_NO_QKV_BIAS && bias)
        bias = NULL;
    if (k == FAULT_Q4K_SCALES && w->t && w->t->type == GGUF_TENSOR_Q4_K)
        return q4k_wrong_scales(in, w, bias, x, T, y);
    kern_status s = in->matmul(in, w, bias, x, T, y);
    if (s || !is_lm_head(w) || (k != FAULT_LM_HEAD_ROWS && k != FAULT_LM_HEAD_TRANSPOSED && k != FAULT_PADDING_LOGITS))
        return s;
    logit_rows g = { T, (size_t)w->t->ne[1], k };
    return bend_rows(in, y, (size_t)T * g.N, bend_logits, &g);
}

/* The coarse product goes through f_matmul weight by weight, so that a fault in a product (a bias left out, a
 * Q4_K decoder, the lm_head) is planted whichever path the engine takes. */
static kern_status f_matmul_many_x(kern_backend *b, int n, const kern_weight *const ws[],
                                   const kern_weight *const biases[], const float *const xs[], int T,
                                   float *const ys[])
{
    kern_status s = KERN_OK;
    for (int i = 0; i < n && !s; i++)
        s = f_matmul(b, ws[i], biases ? biases[i] : NULL, xs[i], T, ys[i]);
    return s;
}

static kern_status f_matmul_many(kern_backend *b, int n, const kern_weight *const ws[],
                                 const kern_weight *const biases[], const float *x, int T, float *const ys[])
{
    kern_status s = KERN_OK;
    for (int i = 0; i < n && !s; i++)
        s = f_matmul(b, ws[i], biases ? biases[i] : NULL, x, T, ys[i]);
    return s;
}

const char *kern_fault_names(void)
{
    static char names[512];
    if (!names[0])
        for (int i = 0; i < FAULT_COUNT; i++)
            snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", i ? ", " : "", faults[i].name);
    return names;
}

const char *kern_fault_bug(const char *fault)
{
    for (int i = 0; i < FAULT_COUNT; i++)
        if (fault && !strcmp(fault, faults[i].name))
            return faults[i].bug;
    return NULL;
}

kern_backend *kern_fault_wrap(kern_backend *in, const char *fault)
{
    int kind = -1;
    for (int i = 0; i < FAULT_COUNT; i++)
        if (fault && !strcmp(fault, faults[i].name))
            kind = i;
    kern_backend *b = kind < 0 ? NULL : calloc(1, sizeof *b);
    fault_ctx *c = b ? calloc(1, sizeof *c) : NULL;
    if (!c) {
        free(b);
        in->destroy(in);
        return NULL;
    }
    *c = (fault_ctx){ .in = in, .kind = (fault_kind)kind, .first_token = -1 };
    /* No step_begin/step_end: a fault that reads results back cannot be recorded into a device graph. */
    *b = (kern_backend){
        .name = in->name, .ctx = c, .split_rows_min = in->split_rows_min, .numerics = in->numerics,
        .destroy = f_destroy,
        .set_threads = f_set_threads, .alloc = f_alloc,
        .free = f_free, .to_host = f_to_host, .from_host = f_from_host, .bind = f_bind, .unbind = f_unbind,
        .last_error = f_last_error,
    };
#define FORWARD_SET(name, params, args) b->name = fwd_##name;
    KERN_OPS(FORWARD_SET)
#undef FORWARD_SET
    /* the ops a fault bends */
    b->embed = f_embed;
    b->matmul = f_matmul;
    b->matmul_many = in->matmul_many ? f_matmul_many : NULL;
    b->matmul_many_x = in->matmul_many_x ? f_matmul_many_x : NULL;
    b->rmsnorm = f_rmsnorm;
    b->layernorm = f_layernorm;
    b->rope = f_rope;
    b->attention = f_attention;
    b->add = f_add;
    b->ssm_conv = f_ssm_conv;
    return b;
}
