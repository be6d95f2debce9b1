/*
 * Which tensors of a quantization cost its KL-divergence. Two steps:
 *  1. candidates, cheaply: the base model runs the first chunk with a probe that keeps the inputs of every weight
 *     product (attn_norm's output for q/k/v, attention's for attn_output, ffn_norm's for gate/up, the activation's
 *     for ffn_down, the final norm's for the output), every 8th position; each quantized tensor's product error on
 *     those real activations, |X (Wq - Wbase)^T| / |X Wbase^T|, ranks the tensors (the token embedding by the error
 *     of the rows the chunk looks up);
 *  2. confirmation: each of the 4N highest (16 at least) is put back to the base's weights in the quantized model
 *     (engine_model_replace_weight), the KLD measured again on the attribution chunks, and the tensor put back as it
 *     was; the N that recover the most are named, then restored together.
 * The report gives each one's bytes at Q8_0 beside its type now, so a recipe can spend bytes where they recover
 * the most, and the llama-quantize --tensor-type overrides that would do it.
 */
#include "fidelity.h"
#include "json_doc.h"
#include "json_line.h"
#include "quant.h"

#include <cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { STRIDE = 8 };  /* every 8th position's activations kept for the product errors */

/* The inputs the base's products met on the first chunk: per layer and op, rows t % STRIDE == 0. */
typedef struct captured {
    int n_layer, rows;
    float *in[ENGINE_OP_COUNT];  /* (n_layer + 1) x rows x width, NULL for ops not kept */
    int width[ENGINE_OP_COUNT];
    bool failed;
} captured;

static bool kept_op(engine_op op)
{
    return op == ENGINE_OP_ATTN_NORM || op == ENGINE_OP_ATTN || op == ENGINE_OP_FFN_NORM || op == ENGINE_OP_FFN_ACT ||
           op == ENGINE_OP_RESULT_NORM;
}

static void on_values(void *user, engine_op op, int layer, int pos0, int T, int n, const float *x)
{
    captured *c = user;
    if (!kept_op(op) || c->failed)
        return;
    if (!c->in[op]) {
        c->width[op] = n;
        c->in[op] = calloc((size_t)(c->n_layer + 1) * c->rows * n, sizeof(float));
        if (!c->in[op]) {
            c->failed = true;
            return;
        }
    }
    for (int t = 0; t < T; t++) {
        const int pos = pos0 + t;
        if (pos % STRIDE || pos / STRIDE >= c->rows || n != c->width[op])
            continue;
        memcpy(c->in[op] + ((size_t)layer * c->rows + pos / STRIDE) * n, x + (size_t)t * n, (size_t)n * sizeof(float));
    }
}

typedef struct candidate {
    const gguf_tensor *q, *base;
    double err;          /* product error on the captured activations */
    double kld;          /* KLD with it restored (measured candidates) */
    bool measured;
} candidate;

/* The op whose output a tensor of this role multiplies. */
static int input_op(model_role r)
{
    switch (r) {
    case MODEL_ROLE_ATTN_Q: case MODEL_ROLE_ATTN_K: case MODEL_ROLE_ATTN_V: return ENGINE_OP_ATTN_NORM;
    case MODEL_ROLE_ATTN_OUT: return ENGINE_OP_ATTN;
    case MODEL_ROLE_FFN_GATE: case MODEL_ROLE_FFN_UP: return ENGINE_OP_FFN_NORM;
    case MODEL_ROLE_FFN_DOWN: return ENGINE_OP_FFN_ACT;
    case MODEL_ROLE_OUTPUT: return ENGINE_OP_RESULT_NORM;
    default: return -1;
    }
}

/* |X (Wq - Wb)^T|^2 / |X Wb^T|^2 over the captured rows X (rows x n); for the embedding, the looked-up rows' error. */
static double product_error(const candidate *c, const float *x, int rows, const int32_t *tokens, int n_tokens)
{
    const int64_t n = (int64_t)c->q->ne[0], out = (int64_t)(c->q->n_elements / (uint64_t)n);
    float *wq = malloc((size_t)n * sizeof *wq), *wb = malloc((size_t)n * sizeof *wb);
    double num = 0, den = 0;
    const uint64_t rq = c->q->size / (uint64_t)out, rb = c->base->size / (uint64_t)out;
    for (int64_t j = 0; wq && wb && j < out; j++) {
        bool used = x != NULL;
        for (int t = 0; !used && t < n_tokens; t++)
            used = tokens[t] == j;
        if (!used)
            continue;
        quant_dequantize_row(c->q->type, c->q->data + j * rq, wq, n);
        quant_dequantize_row(c->base->type, c->base->data + j * rb, wb, n);
        if (!x) { /* an embedding row */
            for (int64_t i = 0; i < n; i++) {
                num += ((double)wq[i] - wb[i]) * ((double)wq[i] - wb[i]);
                den += (double)wb[i] * wb[i];
            }
            continue;
        }
        for (int r = 0; r < rows; r++) {
            const float *xr = x + (size_t)r * n;
            double d = 0, y = 0;
            for (int64_t i = 0; i < n; i++) {
                d += (double)xr[i] * ((double)wq[i] - wb[i]);
                y += (double)xr[i] * wb[i];
            }
            num += d * d;
            den += y * y;
        }
    }
    free(wq), free(wb);
    return den > 0 ? sqrt(num / den) : 0;
}

/* The KLD of q on the attribution chunks against the base rows kept for them. */
static int measure(const job *j, model *q, const uint16_t *rows, float *logits, int32_t *chunk, int n_chunks,
                   double *kld)
{
    const int n_ctx = j->o->n_ctx, first = n_ctx / 2, scored = logits_file_scored(n_ctx), V = j->n_vocab;
    const size_t row = kld_row_u16(V);
    kld_acc acc = { 0 };
    int rc = 0;
    for (int i = 0; i < n_chunks && !rc; i++) {
        fid_chunk_tokens(j, i, chunk);
        const int32_t *toks = j->tokens + (size_t)i * n_ctx;
        if ((rc = fid_run_chunk(q, chunk, n_ctx, logits)))
            break;
        if (!kld_add_rows(&acc, logits, V, rows + (size_t)i * scored * row, toks + first + 1, scored,
                          j->o->n_threads))
            rc = fid_trouble(2, "out of memory");
    }
    *kld = acc.count ? acc.sum_kld / (double)acc.count : 0;
    kld_free(&acc);
    return rc;
}

static int replace(model *q, const gguf_tensor *t)
{
    engine_error e;
    if (engine_model_replace_weight(q->m, t, &e))
        return fid_trouble(2, "%s: %s", q->path, e.message);
    return 0;
}

static int by_err(const void *a, const void *b)
{
    const double x = ((const candidate *)a)->err, y = ((const candidate *)b)->err;
    return (x < y) - (x > y);
}

static int by_recovery(const void *a, const void *b)
{
    const candidate *x = a, *y = b;
    if (x->measured != y->measured)
        return x->measured ? -1 : 1;
    return (x->kld > y->kld) - (x->kld < y->kld);
}

/* bytes of t stored as Q8_0 (F16 where it is Q8_0 already or its rows do not divide into blocks of 32) */
static uint64_t upgraded_bytes(const gguf_tensor *t, uint32_t *type)
{
    *type = t->type == GGUF_TENSOR_Q8_0 || t->ne[0] % 32 ? GGUF_TENSOR_F16 : GGUF_TENSOR_Q8_0;
    const gguf_type_traits *tr = gguf_type_traits_of(*type);
    return t->n_elements / tr->block_size * tr->type_size;
}

/* "blk\.3\.ffn_down\.weight": a tensor name as the regular expression llama-quantize's --tensor-type matches */
static void name_pattern(const char *name, char *out, size_t cap)
{
    size_t at = 0;
    for (const char *p = name; *p && at + 3 < cap; p++) {
        if (*p == '.')
            out[at++] = '\\';
        out[at++] = *p;
    }
    out[at] = 0;
}

/* --plot's file for QUANT number q_index: F.svg for the first, F-2.svg ... after it. */
static void plot_path(const char *plot, int q_index, char *out, size_t cap)
{
    const char *ext = strrchr(plot, '.');
    if (!q_index)
        snprintf(out, cap, "%s", plot);
    else if (ext && !strchr(ext, '/'))
        snprintf(out, cap, "%.*s-%d%s", (int)(ext - plot), plot, q_index + 1, ext);
    else
        snprintf(out, cap, "%s-%d", plot, q_index + 1);
}

/* The candidates drawn (--plot). */
static int draw(const opts *o, const model *q, int q_index, const candidate *cands, int n_cand, int n_layer,
                double kld0)
{
    fid_score *s = calloc((size_t)n_cand + 1, sizeof *s);
    if (!s)
        return fid_trouble(2, "out of memory for the plot");
    for (int i = 0; i < n_cand; i++) {
        int64_t layer;
        model_role_of_name(cands[i].q->name, &layer);
        s[i] = (fid_score){ cands[i].q->name, layer >= 0 && layer < n_layer ? (int)layer : -1, cands[i].err,
                            kld0 - cands[i].kld, cands[i].measured };
    }
    char path[4096], why[600];
    plot_path(o->plot, q_index, path, sizeof path);
    const int rc = fid_write_plot(path, q->path, s, n_cand, n_layer, kld0, why, sizeof why)
                       ? fid_trouble(2, "--plot %s: %s", path, why)
                       : 0;
    free(s);
    return rc;
}

int fid_attribute(const job *j, model *q, int q_index)
{
    const opts *o = j->o;
    const int n_ctx = o->n_ctx, scored = logits_file_scored(n_ctx), V = j->n_vocab, first = n_ctx / 2;
    const int n_chunks = o->attribute_chunks < j->n_chunk ? o->attribute_chunks : j->n_chunk;
    const size_t row = kld_row_u16(V);
    const engine_hparams *hp = engine_model_hparams(j->base->m);
    captured cap = { .n_layer = hp->n_layer, .rows = (n_ctx + STRIDE - 1) / STRIDE };
    float *logits = malloc((size_t)n_ctx * V * sizeof *logits);
    uint16_t *rows = malloc((size_t)n_chunks * scored * row * sizeof *rows);
    int32_t *chunk = malloc((size_t)n_ctx * sizeof *chunk);
    candidate *cands = calloc(gguf_tensor_count(q->f) + 1, sizeof *cands);
    int rc = 0, n_cand = 0;
    if (!logits || !rows || !chunk || !cands) {
        rc = fid_trouble(2, "out of memory for the attribution");
        goto done;
    }
    /* the base: its rows on the attribution chunks, and its products' inputs on the first */
    for (int i = 0; i < n_chunks && !rc; i++) {
        fid_chunk_tokens(j, i, chunk);
        engine_error e;
        const engine_probe probe = { .on_values = on_values, .user = &cap, .all_ops = true };
        if (engine_ctx_rewind(j->base->c, 0, &e) ||
            engine_forward(j->base->c, chunk, n_ctx, true, logits, i == 0 ? &probe : NULL, &e)) {
            rc = fid_trouble(2, "%s: %s", j->base->path, e.message);
            break;
        }
        const int32_t *toks = j->tokens + (size_t)i * n_ctx;
        kld_store_rows(logits + (size_t)first * V, V, toks + first + 1, scored, rows + (size_t)i * scored * row,
                       o->n_threads);
    }
    if (rc || cap.failed) {
        rc = rc ? rc : fid_trouble(2, "out of memory keeping activations");
        goto done;
    }
    /* every tensor bound whole whose bytes differ in type from the base's, ranked by its product error */
    fid_chunk_tokens(j, 0, chunk);
    for (uint64_t i = 0; i < gguf_tensor_count(q->f); i++) {
        const gguf_tensor *t = gguf_tensor_at(q->f, i), *b = gguf_tensor_by_name(j->base->f, t->name);
        int64_t layer;
        const model_role r = model_role_of_name(t->name, &layer);
        const int op = input_op(r);
        if (!b || b->type == t->type || t->n_dims < 2 || (op < 0 && r != MODEL_ROLE_TOKEN_EMBD) ||
            b->n_elements != t->n_elements || (op >= 0 && !cap.in[op]) || layer > hp->n_layer)
            continue;
        candidate *c = &cands[n_cand++];
        c->q = t, c->base = b;
        const int at = op == ENGINE_OP_RESULT_NORM ? hp->n_layer : (int)layer;
        c->err = op < 0 ? product_error(c, NULL, 0, chunk, n_ctx)
                        : product_error(c, cap.in[op] + (size_t)at * cap.rows * cap.width[op], cap.rows, NULL, 0);
        if (op >= 0 && (int64_t)t->ne[0] != cap.width[op])
            n_cand--; /* a product whose input is not that op's output (a fused tensor) */
    }
    qsort(cands, (size_t)n_cand, sizeof *cands, by_err);
    double kld0;
    if ((rc = measure(j, q, rows, logits, chunk, n_chunks, &kld0)))
        goto done;
    /* 4N of them, at least 16: where the product errors are alike (a uniform quantization) the ranking says little */
    const int want = 4 * o->attribute > 16 ? 4 * o->attribute : 16;
    const int n_measure = want < n_cand ? want : n_cand;
    for (int i = 0; i < n_measure && !rc; i++) {
        candidate *c = &cands[i];
        if ((rc = replace(q, c->base)) || (rc = measure(j, q, rows, logits, chunk, n_chunks, &c->kld)) ||
            (rc = replace(q, c->q)))
            break;
        c->measured = true;
    }
    if (rc)
        goto done;
    qsort(cands, (size_t)n_measure, sizeof *cands, by_recovery);
    const int top = o->attribute < n_measure ? o->attribute : n_measure;
    double kld_top = kld0;
    for (int i = 0; i < top && !rc; i++)
        rc = replace(q, cands[i].base);
    if (!rc && top)
        rc = measure(j, q, rows, logits, chunk, n_chunks, &kld_top);
    for (int i = 0; i < top && !rc; i++)
        rc = replace(q, cands[i].q);
    if (!rc && o->plot)
        rc = draw(o, q, q_index, cands, n_cand, hp->n_layer, kld0);
    if (rc)
        goto done;
    if (o->json) {
        cJSON *d = json_doc_new("gguf-fidelity", q->path), *list = cJSON_CreateArray();
        char line[200];
        snprintf(line, sizeof line, "the %d tensors named, restored to the base's weights, recover %.1f%% of the KLD",
                 top, kld0 > 0 ? 100 * (kld0 - kld_top) / kld0 : 0.0);
        json_doc_verdict(d, 0, line);
        cJSON_AddStringToObject(d, "kind", "attribution");
        cJSON_AddNumberToObject(d, "chunks", n_chunks);
        cJSON_AddNumberToObject(d, "kld", kld0);
        cJSON_AddNumberToObject(d, "candidates", n_cand);
        cJSON_AddNumberToObject(d, "measured", n_measure);
        for (int i = 0; i < n_measure; i++) {
            cJSON *t = cJSON_CreateObject();
            uint32_t up;
            json_add_text(t, "name", cands[i].q->name);
            cJSON_AddStringToObject(t, "type", gguf_type_traits_of(cands[i].q->type)->name);
            cJSON_AddNumberToObject(t, "product_error", cands[i].err);
            cJSON_AddNumberToObject(t, "kld_restored", cands[i].kld);
            cJSON_AddNumberToObject(t, "kld_recovered", kld0 - cands[i].kld);
            cJSON_AddNumberToObject(t, "bytes", (double)cands[i].q->size);
            cJSON_AddNumberToObject(t, "bytes_upgraded", (double)upgraded_bytes(cands[i].q, &up));
            cJSON_AddStringToObject(t, "upgrade_type", gguf_type_traits_of(up)->name);
            cJSON_AddItemToArray(list, t);
        }
        cJSON_AddItemToObject(d, "tensors", list);
        cJSON_AddNumberToObject(d, "top", top);
        cJSON_AddNumberToObject(d, "kld_top_restored", kld_top);
        json_print_line(stdout, d);
        goto done;
    }
    printf("\nattribution %s: KLD %.6f on %d chunk%s; %d tensors ranked by their products' error on chunk 1's "
           "activations, the first %d each restored to the base's weights:\n", q->path, kld0, n_chunks,
           n_chunks > 1 ? "s" : "", n_cand, n_measure);
    printf("  %-28s %-7s %9s %12s %10s %9s %14s\n", "tensor", "type", "prod.err", "KLD restored", "recovered",
           "at Q8_0", "per extra MiB");
    for (int i = 0; i < n_measure; i++) {
        const candidate *c = &cands[i];
        uint32_t up;
        const double extra = (double)upgraded_bytes(c->q, &up) - (double)c->q->size;
        char per[32] = "-";
        if (extra > 0)
            snprintf(per, sizeof per, "%.3g", (kld0 - c->kld) / (extra / 1048576.0));
        printf("  %-28s %-7s %9.4f %12.6f %9.1f%% %+8.2fM %14s%s\n", c->q->name, gguf_type_traits_of(c->q->type)->name,
               c->err, c->kld, kld0 > 0 ? 100 * (kld0 - c->kld) / kld0 : 0.0, extra / 1048576.0, per,
               i < top ? "  <" : "");
    }
    printf("  the %d marked < restored together: KLD %.6f (recovers %.1f%%)\n", top, kld_top,
           kld0 > 0 ? 100 * (kld0 - kld_top) / kld0 : 0.0);
    printf("  llama-quantize and gguf-quantize overrides for them:");
    for (int i = 0; i < top; i++) {
        char pat[256];
        uint32_t up;
        upgraded_bytes(cands[i].q, &up);
        name_pattern(cands[i].q->name, pat, sizeof pat);
        char type[16];
        snprintf(type, sizeof type, "%s", gguf_type_traits_of(up)->name);
        for (char *p = type; *p; p++)
            *p = (char)(*p >= 'A' && *p <= 'Z' ? *p - 'A' + 'a' : *p);
        printf(" --tensor-type '%s=%s'", pat, type);
    }
    printf("\n");
done:
    for (int op = 0; op < ENGINE_OP_COUNT; op++)
        free(cap.in[op]);
    free(logits), free(rows), free(chunk), free(cands);
    return rc;
}
