/*
 * The layer-by-layer record of a run: per layer and position the residual
 * stream's statistics (llama.cpp's l_out-N and result_norm), and per
 * generated token the candidates it beat, their margin and the entropy.
 */
#include "internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct engine_trace {
    int n_layer;
    int32_t n_vocab;
    int n_pos, cap_pos;
    kern_row_stats *rows;    /* (cap_pos, n_layer + 1) */
    kern_row_stats *ffn_rows; /* (cap_pos, n_layer): the feed-forward blocks' outputs where a model's probe shows them */
    engine_step *steps;
    size_t n_steps, cap_steps;
    float *prev;             /* the previous step's logits */
    bool have_prev;
    /* engine_trace_keep_values: the residual itself after each layer and the final norm, for the first keep_pos
     * positions: (n_layer + 1, keep_pos, n_embd) */
    float *values;
    int keep_pos, n_embd;
    float *op_values[ENGINE_OP_COUNT]; /* engine_trace_keep_op: (n_layer, keep_pos, op_width) */
    int op_width[ENGINE_OP_COUNT];
    bool any_op;
};

engine_trace *engine_trace_create(int n_layer, int32_t n_vocab)
{
    engine_trace *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->n_layer = n_layer;
    t->n_vocab = n_vocab;
    t->prev = malloc((size_t)n_vocab * sizeof(float));
    if (!t->prev) {
        free(t);
        return NULL;
    }
    return t;
}

void engine_trace_free(engine_trace *t)
{
    if (t) {
        free(t->rows);
        free(t->ffn_rows);
        free(t->values);
        for (int op = 0; op < ENGINE_OP_COUNT; op++)
            free(t->op_values[op]);
        free(t->steps);
        free(t->prev);
        free(t);
    }
}

static bool reserve_pos(engine_trace *t, int n)
{
    if (n <= t->cap_pos)
        return true;
    int cap = t->cap_pos ? t->cap_pos : 64;
    while (cap < n)
        cap *= 2;
    const size_t width = (size_t)t->n_layer + 1;
    kern_row_stats *p = realloc(t->rows, (size_t)cap * width * sizeof *p);
    if (!p)
        return false;
    t->rows = p;
    kern_row_stats *f = realloc(t->ffn_rows, (size_t)cap * width * sizeof *f);
    if (!f)
        return false;
    t->ffn_rows = f;
    /* Unrecorded entries stay NaN so readers can tell. */
    for (size_t i = (size_t)t->cap_pos * width; i < (size_t)cap * width; i++)
        p[i] = f[i] = (kern_row_stats){ .rms = NAN, .mean = NAN, .min = NAN, .max = NAN, .max_abs = NAN };
    t->cap_pos = cap;
    return true;
}

static void on_op(void *user, engine_op op, int layer, int pos0, int T, const kern_row_stats *rows)
{
    engine_trace *t = user;
    if ((op != ENGINE_OP_LAYER_OUT && op != ENGINE_OP_RESULT_NORM && op != ENGINE_OP_FFN_OUT) || layer < 0 ||
        layer > t->n_layer || !reserve_pos(t, pos0 + T))
        return;
    kern_row_stats *table = op == ENGINE_OP_FFN_OUT ? t->ffn_rows : t->rows;
    for (int i = 0; i < T; i++)
        table[(size_t)(pos0 + i) * (t->n_layer + 1) + layer] = rows[i];
    if (pos0 + T > t->n_pos)
        t->n_pos = pos0 + T;
}

/* The layers an op runs in: the embeddings enter layer 0 only. */
static int op_layers(const engine_trace *t, engine_op op)
{
    return op == ENGINE_OP_EMBD ? 1 : t->n_layer;
}

static void on_values(void *user, engine_op op, int layer, int pos0, int T, int n, const float *x)
{
    engine_trace *t = user;
    if (layer < 0 || layer > t->n_layer || pos0 >= t->keep_pos)
        return;
    const int rows = pos0 + T <= t->keep_pos ? T : t->keep_pos - pos0;
    if (op == ENGINE_OP_LAYER_OUT || op == ENGINE_OP_RESULT_NORM) {
        if (n == t->n_embd)
            memcpy(t->values + ((size_t)layer * t->keep_pos + (size_t)pos0) * (size_t)n, x,
                   (size_t)rows * n * sizeof *x);
        return;
    }
    if (op < ENGINE_OP_COUNT && t->op_values[op] && n == t->op_width[op] && layer < op_layers(t, op))
        memcpy(t->op_values[op] + ((size_t)layer * t->keep_pos + (size_t)pos0) * (size_t)n, x,
               (size_t)rows * n * sizeof *x);
}

engine_probe engine_trace_probe(engine_trace *t)
{
    return (engine_probe){ .on_op = on_op, .on_values = t->values ? on_values : NULL, .user = t,
                           .all_ops = t->any_op };
}

bool engine_trace_keep_values(engine_trace *t, int n_pos, int n_embd)
{
    free(t->values);
    t->values = n_pos > 0 && n_embd > 0 ? calloc((size_t)(t->n_layer + 1) * (size_t)n_pos * (size_t)n_embd,
                                                 sizeof *t->values)
                                        : NULL;
    t->keep_pos = t->values ? n_pos : 0;
    t->n_embd = n_embd;
    return t->values != NULL;
}

bool engine_trace_keep_op(engine_trace *t, engine_op op, int width)
{
    if (!t->values || op >= ENGINE_OP_COUNT || op == ENGINE_OP_LAYER_OUT || op == ENGINE_OP_RESULT_NORM || width < 1)
        return false;
    free(t->op_values[op]);
    t->op_values[op] = calloc((size_t)op_layers(t, op) * (size_t)t->keep_pos * (size_t)width, sizeof(float));
    t->op_width[op] = width;
    t->any_op |= t->op_values[op] != NULL;
    return t->op_values[op] != NULL;
}

const float *engine_trace_op_values(const engine_trace *t, engine_op op, int il)
{
    if (op == ENGINE_OP_LAYER_OUT || op == ENGINE_OP_RESULT_NORM)
        return engine_trace_values(t, il);
    return op < ENGINE_OP_COUNT && t->op_values[op] && il >= 0 && il < op_layers(t, op)
               ? t->op_values[op] + (size_t)il * t->keep_pos * (size_t)t->op_width[op]
               : NULL;
}

const float *engine_trace_values(const engine_trace *t, int il)
{
    return t->values && il >= 0 && il <= t->n_layer ? t->values + (size_t)il * t->keep_pos * (size_t)t->n_embd
                                                     : NULL;
}

bool engine_trace_step(engine_trace *t, int pos, int32_t token, const float *logits)
{
    if (!gguf_reserve((void **)&t->steps, &t->cap_steps, t->n_steps + 1, sizeof *t->steps))
        return false;
    engine_step *s = &t->steps[t->n_steps++];
    memset(s, 0, sizeof *s);
    s->pos = pos;
    s->token = token;
    for (int k = 0; k < 5; k++) {
        s->top_id[k] = -1;
        s->top_logit[k] = -INFINITY;
    }
    float mx = -INFINITY, max_abs = 0.0f, max_diff = 0.0f;
    for (int32_t i = 0; i < t->n_vocab; i++) {
        float l = logits[i];
        if (!isfinite(l)) {
            s->n_nonfinite++;
            continue;
        }
        mx = l > mx ? l : mx;
        max_abs = fabsf(l) > max_abs ? fabsf(l) : max_abs;
        if (t->have_prev && isfinite(t->prev[i]))
            max_diff = fabsf(l - t->prev[i]) > max_diff ? fabsf(l - t->prev[i]) : max_diff;
        if (l > s->top_logit[4]) {
            int k = 4;
            while (k > 0 && l > s->top_logit[k - 1]) {
                s->top_logit[k] = s->top_logit[k - 1];
                s->top_id[k] = s->top_id[k - 1];
                k--;
            }
            s->top_logit[k] = l;
            s->top_id[k] = i;
        }
    }
    s->margin = s->top_logit[0] - s->top_logit[1];
    double z = 0.0, zl = 0.0;
    for (int32_t i = 0; i < t->n_vocab; i++)
        if (isfinite(logits[i])) {
            double e = exp((double)logits[i] - mx);
            z += e;
            zl += e * ((double)logits[i] - mx);
        }
    s->entropy = z > 0.0 ? (float)(log(z) - zl / z) : NAN;
    s->change = t->have_prev ? (max_abs > 0.0f ? max_diff / max_abs : 0.0f) : NAN;
    memcpy(t->prev, logits, (size_t)t->n_vocab * sizeof(float));
    t->have_prev = true;
    return true;
}

int engine_trace_layers(const engine_trace *t) { return t->n_layer + 1; }
int engine_trace_positions(const engine_trace *t) { return t->n_pos; }
size_t engine_trace_n_steps(const engine_trace *t) { return t->n_steps; }

const kern_row_stats *engine_trace_at(const engine_trace *t, int il, int pos)
{
    if (il < 0 || il > t->n_layer || pos < 0 || pos >= t->n_pos)
        return NULL;
    return &t->rows[(size_t)pos * (t->n_layer + 1) + il];
}

const kern_row_stats *engine_trace_l_out_at(const engine_trace *t, const engine_hparams *hp, int il, int pos)
{
    if (il < hp->n_layer && hp->desc->l_out_is_ffn_out)
        return il < 0 || pos < 0 || pos >= t->n_pos ? NULL : &t->ffn_rows[(size_t)pos * (t->n_layer + 1) + il];
    return engine_trace_at(t, il, pos);
}

const engine_step *engine_trace_step_at(const engine_trace *t, size_t i)
{
    return i < t->n_steps ? &t->steps[i] : NULL;
}
