/* gguf-run --against DUMP (an .npz, a .safetensors file or a folder of .npy): another engine's hidden states
 * whole, held to ours element by element, which sees what per-row statistics cannot (two channels swapped, one
 * block of weights read with the wrong scale); and --trace-full, ours written the same way. Array names, as
 * engines write them: llama.cpp's cb_eval names (l_out-N, result_norm, and per op: attn_norm-N, Qcur-N, Kcur-N,
 * Vcur-N, kqv_out-N, attn_out-N, ffn_norm-N, ffn_out-N), layer.N / layers.N / N, and transformers' hidden_states
 * (stacked, or hidden_states.K / hidden_states_K: K = 0 the embeddings, K our layer K - 1, the last after the final
 * norm). A batch axis of 1 is dropped. With per-op names the first differing op of a layer is named. */
#include "run.h"
#include "tensor_dump.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One of their arrays as (n_pos, width) rows, held to our op in layer il (LAYER_OUT: 0..n_layer-1; RESULT_NORM). */
typedef struct their_rows {
    const char *name;
    const float *x;
    int il;
    engine_op op;
    int width;
    float rounding;     /* their type's relative step (float16, bfloat16), allowed on top of the tolerance */
    float scale;        /* theirs times this is ours: llama.cpp's inp_embd before the model's embedding scale */
} their_rows;

/* llama.cpp's cb_eval names of the ops (src/models/llama.cpp and the others: "attn_norm", "Qcur" after rotary,
 * "kqv_out" the attention before its output projection, "attn_out" after it, ...), with a layer suffix "-N". */
static const struct {
    const char *prefix;
    engine_op op;
} op_names[] = {
    { "attn_norm-", ENGINE_OP_ATTN_NORM }, { "Qcur-", ENGINE_OP_Q },         { "Kcur-", ENGINE_OP_K },
    { "Vcur-", ENGINE_OP_V },              { "kqv_out-", ENGINE_OP_ATTN },   { "attn_out-", ENGINE_OP_ATTN_OUT },
    { "ffn_norm-", ENGINE_OP_FFN_NORM },   { "ffn_out-", ENGINE_OP_FFN_OUT }, { "l_out-", ENGINE_OP_LAYER_OUT },
};

static int op_width(const engine_hparams *hp, engine_op op)
{
    switch (op) {
    case ENGINE_OP_Q:
    case ENGINE_OP_ATTN: return hp->n_head * hp->head_dim;
    case ENGINE_OP_K:
    case ENGINE_OP_V: return hp->n_kv_head * hp->head_dim;
    default: return hp->n_embd;
    }
}

/* Names without a layer: the embeddings (llama.cpp's inp_embd is the lookup before gemma's and granite's scale,
 * cb'd apart as inp_scaled: src/models/gemma3.cpp) and the final norm. */
static const struct {
    const char *name;
    engine_op op;
    bool unscaled;
} whole_names[] = {
    { "inp_embd", ENGINE_OP_EMBD, true },
    { "inp_scaled", ENGINE_OP_EMBD, false },
    { "result_norm", ENGINE_OP_RESULT_NORM, false },
};

/* "PREFIX<digits>" -> the number; -1 otherwise. */
static long numbered(const char *name, const char *prefix)
{
    const size_t n = strlen(prefix);
    if (strncmp(name, prefix, n) || !name[n])
        return -1;
    char *end;
    const long v = strtol(name + n, &end, 10);
    return *end || v < 0 || name[n] == '+' || name[n] == '-' ? -1 : v;
}

/* Where array a belongs among ours: its number *k (-1 for names without one), *op, *hf (numbered as transformers'
 * hidden_states) and *unscaled (the embeddings before the model's scale); false when its name is none of the
 * conventions. */
static bool place(const char *name, long *k, engine_op *op, bool *hf, bool *unscaled)
{
    static const char *const ours[] = { "layer.", "layers.", "" };
    static const char *const theirs[] = { "hidden_states.", "hidden_states_" };
    *hf = *unscaled = false;
    *op = ENGINE_OP_LAYER_OUT;
    for (size_t i = 0; i < sizeof whole_names / sizeof whole_names[0]; i++)
        if (!strcmp(name, whole_names[i].name)) {
            *k = -1, *op = whole_names[i].op, *unscaled = whole_names[i].unscaled;
            return true;
        }
    for (size_t i = 0; i < sizeof theirs / sizeof theirs[0]; i++)
        if ((*k = numbered(name, theirs[i])) >= 0)
            return *hf = true;
    for (size_t i = 0; i < sizeof op_names / sizeof op_names[0]; i++)
        if ((*k = numbered(name, op_names[i].prefix)) >= 0) {
            *op = op_names[i].op;
            return true;
        }
    for (size_t i = 0; i < sizeof ours / sizeof ours[0]; i++)
        if ((*k = numbered(name, ours[i])) >= 0)
            return true;
    return false;
}

/* The rows of a: (n_pos, n_embd) after leading axes of 1 (or, stacked, (count, n_pos, n_embd)); n_embd is the
 * op's width (q, k, v may also come as (n_pos, heads, head_dim): the last two axes as one). */
static bool rows_of(const dump_array *a, int stacked, uint64_t n_pos, uint64_t n_embd, uint64_t *count)
{
    int lead = 0;
    while (lead < a->ndim - 2 - stacked && a->shape[lead] == 1)
        lead++;
    const int left = a->ndim - lead;
    *count = stacked ? a->shape[lead] : 1;
    if (stacked && left == 4 && a->shape[lead + 1] == 1) /* (count, 1, n, E): transformers' stack of (1, n, E) */
        return a->shape[lead + 2] == n_pos && a->shape[lead + 3] == n_embd;
    if (!stacked && left == 3) /* (n, heads, head_dim) */
        return a->shape[lead] == n_pos && a->shape[lead + 1] * a->shape[lead + 2] == n_embd;
    return left == 2 + stacked && a->shape[a->ndim - 2] == n_pos && a->shape[a->ndim - 1] == n_embd;
}

void run_against_full_prepare(run_opts *o, engine_trace *trace, const engine_hparams *hp)
{
    if (o->trace_full_ops) {
        engine_trace_keep_op(trace, ENGINE_OP_EMBD, hp->n_embd);
        for (size_t i = 0; i < sizeof op_names / sizeof op_names[0]; i++)
            engine_trace_keep_op(trace, op_names[i].op, op_width(hp, op_names[i].op));
    }
    if (!o->against_full)
        return;
    tensor_dump *d = malloc(sizeof *d);
    if (!d) {
        snprintf(o->against_dump_why, sizeof o->against_dump_why, "out of memory");
        return;
    }
    if (tensor_dump_read(o->against_full, d, o->against_dump_why, sizeof o->against_dump_why)) {
        free(d);
        return;
    }
    o->against_dump = d;
    for (size_t i = 0; i < d->n; i++) {
        long k;
        engine_op op;
        bool hf, unscaled;
        if (!strcmp(d->a[i].name, "hidden_states") || (place(d->a[i].name, &k, &op, &hf, &unscaled) && hf && !k))
            op = ENGINE_OP_EMBD; /* transformers' entry 0 */
        else if (!place(d->a[i].name, &k, &op, &hf, &unscaled))
            continue;
        if (op != ENGINE_OP_LAYER_OUT && op != ENGINE_OP_RESULT_NORM)
            engine_trace_keep_op(trace, op, op_width(hp, op));
    }
}

int run_against_full(FILE *out, const run_opts *o, const run_result *r, run_against_result *res)
{
    const int n_layer = engine_trace_layers(r->trace) - 1, n_pos = (int)r->n_prompt;
    const engine_hparams *hp = engine_model_hparams(r->model);
    const int n_embd = hp->n_embd;
    char why[600];
    if (!o->against_dump) {
        fprintf(out, "full       CANNOT COMPARE: %s\n", o->against_dump_why);
        run_against_merge(res, 2, -1, -1, o->against_dump_why);
        return 2;
    }
    const tensor_dump d = *o->against_dump;
    their_rows *rows = calloc(d.n * (size_t)(n_layer + 2) + 1, sizeof *rows);
    size_t n_rows = 0;
    char skipped[300] = "";
    bool hf_seen = false, rounded = false, per_op = false; /* per_op: ops inside the layers too */
    for (size_t i = 0; rows && i < d.n; i++) {
        const dump_array *a = &d.a[i];
        uint64_t count;
        if (!strcmp(a->name, "hidden_states") && rows_of(a, 1, (uint64_t)n_pos, (uint64_t)n_embd, &count)) {
            /* transformers' stack: n_layer + 1 entries, the embeddings first, the last after the final norm */
            hf_seen = true;
            rounded |= a->rounding > 0.0f;
            for (uint64_t k = 0; k < count && k <= (uint64_t)n_layer; k++)
                rows[n_rows++] = (their_rows){ a->name, a->data + k * (uint64_t)n_pos * (uint64_t)n_embd,
                                               k == (uint64_t)n_layer ? n_layer : k ? (int)k - 1 : 0,
                                               k == (uint64_t)n_layer ? ENGINE_OP_RESULT_NORM
                                               : k                    ? ENGINE_OP_LAYER_OUT
                                                                      : ENGINE_OP_EMBD,
                                               n_embd, a->rounding, 1.0f };
            continue;
        }
        long k = -1;
        bool hf = false, unscaled = false;
        engine_op op = ENGINE_OP_LAYER_OUT;
        const bool named = place(a->name, &k, &op, &hf, &unscaled);
        if (hf && k == 0)
            op = ENGINE_OP_EMBD;
        const int width = op_width(hp, op);
        if (!named || !rows_of(a, 0, (uint64_t)n_pos, (uint64_t)width, &count) ||
            (k < 0 ? false : hf ? k > n_layer : k >= n_layer)) {
            if (strlen(skipped) + strlen(a->name) + 3 < sizeof skipped)
                snprintf(skipped + strlen(skipped), sizeof skipped - strlen(skipped), "%s%s", skipped[0] ? ", " : "",
                         a->name);
            continue;
        }
        hf_seen |= hf;
        const int il = op == ENGINE_OP_RESULT_NORM ? n_layer
                       : op == ENGINE_OP_EMBD      ? 0
                       : hf                        ? (k == n_layer ? n_layer : (int)k - 1)
                                                   : (int)k;
        if (il == n_layer)
            op = ENGINE_OP_RESULT_NORM;
        per_op |= op != ENGINE_OP_LAYER_OUT && op != ENGINE_OP_RESULT_NORM && op != ENGINE_OP_EMBD;
        rows[n_rows++] = (their_rows){ a->name, a->data, il, op, width, a->rounding,
                                       unscaled ? hp->embd_scale : 1.0f };
        rounded |= a->rounding > 0.0f;
    }
    fprintf(out, "full       %s: %zu arrays of %d x %d held element by element (max |ours - theirs| over their RMS, "
                 "per position), tolerance %g%s%s\n", o->against_full, n_rows, n_pos, n_embd, o->tolerance,
            o->massive_tolerance > 0.0f ? " (the RMS to 0.1 at massive activations)" : "",
            hf_seen ? "; numbered as transformers' hidden_states (0 the embeddings, the last after the final norm)"
                    : "");
    if (rounded)
        fprintf(out, "           theirs was stored as float16 or bfloat16: its rounding (2^-11 or 2^-8 of each value) "
                     "is allowed on top of the tolerance\n");
    if (skipped[0])
        fprintf(out, "           not compared (not a layer's residual of %d x %d, by name or shape): %s\n", n_pos,
                n_embd, skipped);
    /* the positions carrying massive activations in any of their residuals (gemma: held by their RMS alone) */
    bool *massive = o->massive_tolerance > 0.0f ? calloc((size_t)n_pos + 1, sizeof *massive) : NULL;
    double *row_rms = massive ? malloc(((size_t)n_pos + 1) * sizeof *row_rms) : NULL;
    for (size_t i = 0; row_rms && i < n_rows; i++) {
        if (rows[i].op != ENGINE_OP_LAYER_OUT && rows[i].op != ENGINE_OP_RESULT_NORM)
            continue; /* the embeddings, or an op inside a layer: no residual (and maybe another width) */
        for (int p = 0; p < n_pos; p++) {
            double ss = 0.0;
            for (int c = 0; c < n_embd; c++)
                ss += (double)rows[i].x[(size_t)p * n_embd + c] * rows[i].x[(size_t)p * n_embd + c];
            row_rms[p] = sqrt(ss / n_embd);
        }
        run_mark_massive(o, row_rms, n_pos, massive);
    }
    free(row_rms);
    int first_il = -1, first_pos = -1, first_ch = -1;
    engine_op first_op = ENGINE_OP_LAYER_OUT;
    double first_d = 0.0, first_ours = 0.0, first_theirs = 0.0;
    const char *first_name = NULL;
    fprintf(out, "  %-12s %-10s %10s %6s %8s\n", "layer", "op", "worst rel", "at pos", "channel");
    for (int il = 0; il <= n_layer; il++)
        for (int opi = 0; opi <= ENGINE_OP_RESULT_NORM; opi++)
        for (size_t i = 0; i < n_rows; i++) {
            if (rows[i].il != il || rows[i].op != (engine_op)opi)
                continue;
            const int w = rows[i].width;
            const float *ours = engine_trace_op_values(r->trace, rows[i].op, il);
            double worst = 0.0;
            int wpos = 0, wch = 0;
            bool departs = false;
            for (int p = 0; ours && p < n_pos; p++) {
                const bool loose = massive && massive[p];
                const double tol = loose ? fmax(o->tolerance, o->massive_tolerance) : o->tolerance;
                const float *a = ours + (size_t)p * w, *b = rows[i].x + (size_t)p * w;
                double ss = 0.0, mx = 0.0;
                int ch = 0;
                const double bs = rows[i].scale;
                for (int c = 0; c < w; c++) {
                    ss += bs * b[c] * bs * b[c];
                    const double diff = fmax(0.0, fabs(a[c] - bs * b[c]) - rows[i].rounding * fabs(bs * b[c]));
                    if (diff > mx || isnan(diff))
                        mx = isnan(diff) ? INFINITY : diff, ch = c;
                }
                double rel = mx / (sqrt(ss / w) > 0.0 ? sqrt(ss / w) : 1e-30);
                if (loose) { /* a massive-activation position (gemma): its RMS alone */
                    double so = 0.0;
                    for (int c = 0; c < w; c++)
                        so += (double)a[c] * a[c];
                    rel = fabs(sqrt(so / w) - sqrt(ss / w)) / (ss > 0.0 ? sqrt(ss / w) : 1e-30);
                }
                if (rel > worst)
                    worst = rel, wpos = p, wch = ch;
                if (rel > tol) {
                    departs = true;
                    if (first_il < 0 || il < first_il || (il == first_il && (opi < (int)first_op ||
                                                                            (opi == (int)first_op && p < first_pos)))) {
                        first_il = il, first_pos = p, first_ch = ch, first_d = rel, first_name = rows[i].name;
                        first_op = rows[i].op;
                        first_ours = a[ch], first_theirs = bs * b[ch];
                    }
                }
            }
            char name[24];
            snprintf(name, sizeof name, il == n_layer ? "result_norm" : "%d", il);
            fprintf(out, "  %-12s %-10s %10.3g %6d %8d%s\n", name, il == n_layer ? "" : engine_op_name(rows[i].op),
                    worst, wpos, wch, departs ? "  <- departs" : "");
        }
    free(rows);
    free(massive);
    if (!n_rows) {
        snprintf(why, sizeof why, "%s holds no layer's residual of %d positions x %d", o->against_full, n_pos, n_embd);
        fprintf(out, "full       CANNOT COMPARE: %s\n", why);
        run_against_merge(res, 2, -1, -1, why);
        return 2;
    }
    if (first_il < 0) {
        fprintf(out, "full       AGREE: every value of every layer compared within %g of its row's RMS\n",
                o->tolerance);
        return 0;
    }
    char where[48], summary[sizeof res->summary];
    if (first_il == n_layer)
        snprintf(where, sizeof where, "the final norm");
    else if (first_op == ENGINE_OP_EMBD)
        snprintf(where, sizeof where, "the token embeddings");
    else if (first_op == ENGINE_OP_LAYER_OUT && !per_op)
        snprintf(where, sizeof where, "layer %d", first_il);
    else
        snprintf(where, sizeof where, "layer %d, op %s", first_il, engine_op_name(first_op));
    fprintf(out, "full       DEPART: theirs departs first at %s, prompt position %d (token %d), channel %d ('%s'): "
                 "ours %.6g, theirs %.6g, %.3g of their RMS there\n",
            where, first_pos, r->prompt[first_pos], first_ch, first_name, first_ours, first_theirs, first_d);
    snprintf(summary, sizeof summary, "theirs departs first at %s, prompt position %d, channel %d (whole tensors)",
             where, first_pos, first_ch);
    run_against_merge(res, 1, first_il, first_pos, summary);
    return 1;
}

int run_write_trace_full(const char *path, const run_result *r, char *why, size_t why_len)
{
    const engine_hparams *hp = engine_model_hparams(r->model);
    const int n_layer = engine_trace_layers(r->trace) - 1, n_ops = (int)(sizeof op_names / sizeof op_names[0]);
    const size_t cap = (size_t)n_layer * (size_t)n_ops + 2;
    dump_array *a = calloc(cap, sizeof *a);
    char (*names)[32] = calloc(cap, sizeof *names);
    size_t n = 0;
    int rc = 2;
    if (!a || !names) {
        snprintf(why, why_len, "out of memory");
        goto done;
    }
    /* the embeddings when kept (as llama.cpp names them: inp_scaled after a scale), every kept op of every layer
     * (l_out-N always), then the final norm */
    const float *embd = engine_trace_op_values(r->trace, ENGINE_OP_EMBD, 0);
    if (embd) {
        snprintf(names[n], sizeof names[n], "%s", hp->embd_scale != 1.0f ? "inp_scaled" : "inp_embd");
        a[n] = (dump_array){ .name = names[n], .ndim = 2, .shape = { r->n_prompt, (uint64_t)hp->n_embd },
                             .data = (float *)embd };
        n++;
    }
    for (int il = 0; il < n_layer; il++)
        for (int i = 0; i < n_ops; i++) {
            const float *x = engine_trace_op_values(r->trace, op_names[i].op, il);
            if (!x && op_names[i].op != ENGINE_OP_LAYER_OUT)
                continue;
            if (!x) {
                snprintf(why, why_len, "the run kept no values of layer %d", il);
                goto done;
            }
            snprintf(names[n], sizeof names[n], "%s%d", op_names[i].prefix, il);
            a[n] = (dump_array){ .name = names[n], .ndim = 2,
                                 .shape = { r->n_prompt, (uint64_t)op_width(hp, op_names[i].op) }, .data = (float *)x };
            n++;
        }
    snprintf(names[n], sizeof names[n], "result_norm");
    a[n] = (dump_array){ .name = names[n], .ndim = 2, .shape = { r->n_prompt, (uint64_t)hp->n_embd },
                         .data = (float *)engine_trace_values(r->trace, n_layer) };
    if (!a[n++].data) {
        snprintf(why, why_len, "the run kept no values of the final norm");
        goto done;
    }
    rc = tensor_dump_write(path, a, n, why, why_len);
done:
    free(a), free(names);
    return rc;
}
