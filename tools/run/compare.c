/* gguf-run --compare A,B: the same tokens on two backends, every op compared. */
#include "format.h"
#include "json_doc.h"
#include "json_line.h"
#include "run.h"

#include <cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { COMPARE_CHUNK = 32 };  /* prompt positions per lock-step chunk: past 8, so GEMM paths run */

static void side_label(const run_opts *o, int side, char *buf, size_t n)
{
    snprintf(buf, n, "%s%s%s", o->compare[side], side == 1 && o->fault ? "+" : "", side == 1 && o->fault ? o->fault : "");
}

static void print_stats(FILE *out, const char *who, const kern_row_stats *s)
{
    fprintf(out, "    %-22s rms %-11.5g mean %-11.4g min %-11.4g max %-11.4g max|x| %-11.4g nan %u inf %u\n", who,
            s->rms, s->mean, s->min, s->max, s->max_abs, s->n_nan, s->n_inf);
}

static void point_name(const engine_comparison *r, const engine_cmp_point *p, char *buf, size_t n)
{
    if (p->layer < r->n_layer)
        snprintf(buf, n, "layer %d, %s", p->layer, engine_op_name(p->op));
    else
        snprintf(buf, n, "%s", engine_op_name(p->op));
}

/* One value in a column `width` wide (at least 9): '!' beyond the tolerance, '~' beyond it with every such row
 * explained by the op's own inputs. */
static void cell_w(FILE *out, float v, float tol, bool explained, int width)
{
    if (v < 0)
        fprintf(out, " %*s", width, "-");
    else
        fprintf(out, " %*.1e%s", width - 1, v, v <= tol ? " " : explained ? "~" : "!");
}

static bool all_explained(const engine_cmp_point *p)
{
    return p->first_seq < 0 && p->rel_explained >= 0.0f;
}

/* Beyond the tolerance, and only where the op's own inputs explain it. */
static bool explained_beyond(const engine_comparison *r, const engine_cmp_point *p)
{
    return all_explained(p) && p->rel_worst > r->tol;
}

/* How many points are explained_beyond: re-derived from each side's own inputs, and carried (some rows of the
 * op could not be re-derived and stayed within ENGINE_CMP_INHERITED times what was explained before them). */
static int count_explained(const engine_comparison *r, int *carried)
{
    int derived = 0;
    *carried = 0;
    for (int k = 0; k < r->n_points; k++)
        if (explained_beyond(r, &r->points[k]))
            *(r->points[k].carried ? carried : &derived) += 1;
    return derived;
}

/* 1 when the backends depart, or agree on NaN or Inf (a model that cannot be used either way). */
static int compare_exit_status(const engine_comparison *r)
{
    return r->first_bad >= 0 || r->first_nonfinite >= 0 ? 1 : 0;
}

static int column_width(engine_op op)
{
    int n = (int)strlen(engine_op_name(op));
    return n > 9 ? n : 9;
}

/* Where a side is cpu:ggml, the re-derivation follows its numerics: said once. */
static const char *numerics_note(const run_opts *o)
{
    for (int side = 0; side < 2; side++)
        if (!strcmp(o->compare[side], "cpu:ggml"))
            return " (cpu:ggml's with its activations rounded as llama.cpp rounds them)";
    return "";
}

static void print_text(FILE *out, const run_opts *o, const engine_comparison *r)
{
    char a[64], b[64];
    side_label(o, 0, a, sizeof a);
    side_label(o, 1, b, sizeof b);
    fprintf(out, "compare    %s vs %s: %d prompt positions (in chunks of %d), %d greedy decode steps; tolerance %.0e\n",
            a, b, r->n_prompt, COMPARE_CHUNK, r->n_decode, r->tol);
    fprintf(out, "largest relative difference per op, max |a - b| / max |a| over rows (! beyond the tolerance)\n");
    int carried, explained = count_explained(r, &carried);
    /* ops this model never runs (the post-norms of models without them) get no column */
    bool shown[ENGINE_OP_LAYER_OUT + 1] = { 0 };
    for (int op = 0; op <= ENGINE_OP_LAYER_OUT; op++)
        for (int il = 0; il < r->n_layer && !shown[op]; il++)
            shown[op] = r->points[il * (ENGINE_OP_LAYER_OUT + 1) + op].worst_pos >= 0 || op == ENGINE_OP_LAYER_OUT;
    fprintf(out, "layer");
    for (int op = 0; op <= ENGINE_OP_LAYER_OUT; op++)
        if (shown[op])
            fprintf(out, " %*s", column_width((engine_op)op), engine_op_name((engine_op)op));
    fprintf(out, "\n");
    for (int il = 0; il < r->n_layer; il++) {
        fprintf(out, "%5d", il);
        for (int op = 0; op <= ENGINE_OP_LAYER_OUT; op++)
            if (shown[op]) {
                const engine_cmp_point *p = &r->points[il * (ENGINE_OP_LAYER_OUT + 1) + op];
                cell_w(out, p->rel_worst, r->tol, all_explained(p), column_width((engine_op)op));
            }
        fprintf(out, "\n");
    }
    const engine_cmp_point *rn = &r->points[r->n_points - 2], *lg = &r->points[r->n_points - 1];
    fprintf(out, "result_norm");
    cell_w(out, rn->rel_worst, r->tol, all_explained(rn), 9);
    fprintf(out, "    logits (prompt / decode)");
    cell_w(out, lg->rel_prompt, r->tol, all_explained(lg), 9);
    cell_w(out, lg->rel_decode, r->tol, all_explained(lg), 9);
    fprintf(out, "\n");
    if (r->n_tokens)
        fprintf(out, "greedy     %d decode steps fed %s's choice; %s's own choice differed at %d of them%s\n", r->n_tokens,
                a, b, r->greedy_disagree, r->greedy_disagree ? "" : " (none)");
    if (explained)
        fprintf(out, "explained  ~: %d op%s beyond %.0e, each side within it of the op re-derived from its own "
                     "inputs%s: the difference came in with the inputs\n",
                explained, explained == 1 ? "" : "s", r->tol, numerics_note(o));
    if (carried)
        fprintf(out, "explained  ~: %d op%s beyond %.0e that could not be re-derived, by no more than %g times the "
                     "differences explained before them: carried from those\n", carried, carried == 1 ? "" : "s",
                r->tol, ENGINE_CMP_INHERITED);
    explained += carried;
    if (r->first_bad < 0 && r->first_nonfinite >= 0) {
        char name[96];
        point_name(r, &r->points[r->first_nonfinite], name, sizeof name);
        fprintf(out, "verdict    NON-FINITE: %s and %s agree, but both compute NaN or Inf from %s, position %d, on: "
                     "the model (or something both backends share) is broken; gguf-verify the file\n",
                a, b, name, r->first_nonfinite_pos);
        return;
    }
    if (r->first_bad < 0) {
        fprintf(out, "verdict    %s and %s agree within %.0e on every op of every layer and on the logits%s\n", a, b,
                r->tol, explained ? ", or differ only as their inputs do (~)" : "");
        return;
    }
    const engine_cmp_point *p = &r->points[r->first_bad];
    char name[96];
    point_name(r, p, name, sizeof name);
    fprintf(out, "verdict    DIVERGE: first beyond %.0e at %s, position %d (%s): relative difference %.3g\n", r->tol, name,
            p->first_pos, p->first_pos < r->n_prompt ? "prompt" : "decode step", p->first_rel);
    print_stats(out, a, &p->first_a);
    print_stats(out, b, &p->first_b);
    fprintf(out, "    (prompt rows: %s; decode rows: %s)\n", p->rel_prompt > r->tol ? "beyond" : "within",
            p->rel_decode < 0 ? "none compared" : p->rel_decode > r->tol ? "beyond" : "within");
    if (p->first_self[0] >= 0.0f)
        fprintf(out, "    re-derived from each side's own inputs: %s %.2g%s, %s %.2g%s\n", a, p->first_self[0],
                p->first_self[0] > r->tol ? " (beyond: computes this op wrongly)" : "", b, p->first_self[1],
                p->first_self[1] > r->tol ? " (beyond: computes this op wrongly)" : "");
}

static cJSON *stats_json(const kern_row_stats *s)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddItemToObject(o, "rms", run_json_number(s->rms));
    cJSON_AddItemToObject(o, "mean", run_json_number(s->mean));
    cJSON_AddItemToObject(o, "min", run_json_number(s->min));
    cJSON_AddItemToObject(o, "max", run_json_number(s->max));
    cJSON_AddItemToObject(o, "max_abs", run_json_number(s->max_abs));
    cJSON_AddNumberToObject(o, "n_nan", s->n_nan);
    cJSON_AddNumberToObject(o, "n_inf", s->n_inf);
    return o;
}

static cJSON *point_json(const engine_comparison *r, const engine_cmp_point *p)
{
    cJSON *o = cJSON_CreateObject();
    if (p->layer < r->n_layer)
        cJSON_AddNumberToObject(o, "layer", p->layer);
    else
        cJSON_AddNullToObject(o, "layer");
    cJSON_AddStringToObject(o, "op", engine_op_name(p->op));
    cJSON_AddItemToObject(o, "rel_prompt", p->rel_prompt < 0 ? cJSON_CreateNull() : run_json_number(p->rel_prompt));
    cJSON_AddItemToObject(o, "rel_decode", p->rel_decode < 0 ? cJSON_CreateNull() : run_json_number(p->rel_decode));
    cJSON_AddItemToObject(o, "rel", run_json_number(p->rel_worst));
    cJSON_AddNumberToObject(o, "worst_pos", p->worst_pos);
    /* beyond the tolerance only where the op's own inputs explain it (the op re-derived on the host) */
    cJSON_AddBoolToObject(o, "explained", explained_beyond(r, p));
    /* each side's largest difference from the op re-derived from its own inputs (null: never re-derived) */
    cJSON *self = cJSON_AddArrayToObject(o, "rederived");
    for (int side = 0; side < 2; side++)
        cJSON_AddItemToArray(self, p->self_worst[side] < 0 ? cJSON_CreateNull() : run_json_number(p->self_worst[side]));
    return o;
}

static int print_json(FILE *out, const run_opts *o, const engine_comparison *r)
{
    char a[64], b[64];
    side_label(o, 0, a, sizeof a);
    side_label(o, 1, b, sizeof b);
    cJSON *doc = json_doc_new("gguf-run", o->model);
    char summary[400], nonfinite_at[96] = "";
    if (r->first_nonfinite >= 0)
        point_name(r, &r->points[r->first_nonfinite], nonfinite_at, sizeof nonfinite_at);
    if (r->first_bad >= 0)
        snprintf(summary, sizeof summary, "%s and %s depart at layer %d, %s", a, b, r->points[r->first_bad].layer,
                 engine_op_name(r->points[r->first_bad].op));
    else if (r->first_nonfinite >= 0)
        snprintf(summary, sizeof summary, "%s and %s agree, but both compute NaN or Inf from %s on", a, b,
                 nonfinite_at);
    else
        snprintf(summary, sizeof summary, "%s and %s agree within %g at every op", a, b, r->tol);
    cJSON *findings = json_doc_verdict(doc, compare_exit_status(r), summary);
    if (r->first_nonfinite >= 0) {
        char measured[160];
        snprintf(measured, sizeof measured, "NaN or Inf at %s, position %d", nonfinite_at, r->first_nonfinite_pos);
        json_doc_finding(findings, "error", "nonfinite", NULL, NULL, measured, "finite activations and logits",
                         "NaN or Inf in the activations: the logits are garbage and generation repeats one token, "
                         "on both backends (the file, or something both share): gguf-verify the file");
    }
    int carried, explained = count_explained(r, &carried);
    explained += carried;
    if (explained) {
        char measured[96], expected[64];
        snprintf(measured, sizeof measured, "%d op%s beyond %g (\"explained\" points)", explained,
                 explained == 1 ? "" : "s", r->tol);
        snprintf(expected, sizeof expected, "at most %g, unless the inputs explain it", r->tol);
        json_doc_finding(findings, "info", "explained-by-inputs", NULL, NULL, measured, expected,
                         "each side equals the op re-derived on the host from its own inputs (in its own "
                         "numerics): the difference came in with the inputs (softmax, per-channel gains, llama.cpp's "
                         "rounded activations), no backend fault");
    }
    if (r->first_bad >= 0) {
        const engine_cmp_point *p = &r->points[r->first_bad];
        char measured[160], expected[64];
        snprintf(measured, sizeof measured, "relative difference %.3g at position %d (%s)", p->first_rel,
                 p->first_pos, p->first_pos < r->n_prompt ? "prompt" : "decode");
        snprintf(expected, sizeof expected, "at most %g", r->tol);
        char meaning[320];
        const bool wrong[2] = { p->first_self[0] > r->tol, p->first_self[1] > r->tol };
        if (wrong[0] && wrong[1])
            snprintf(meaning, sizeof meaning, "%s and %s both compute this op wrongly: their own inputs give other "
                     "results (rederived_at_first)", a, b);
        else if (wrong[0] || wrong[1])
            snprintf(meaning, sizeof meaning, "%s computes this op wrongly: its own inputs give another result "
                     "(rederived_at_first)", wrong[0] ? a : b);
        else
            snprintf(meaning, sizeof meaning, "the two backends compute this op differently: the first place to look");
        json_doc_finding(findings, "error", "divergence", NULL, NULL, measured, expected, meaning);
    }
    cJSON *c = cJSON_AddObjectToObject(doc, "compare");
    cJSON_AddStringToObject(c, "a", a);
    cJSON_AddStringToObject(c, "b", b);
    cJSON_AddNumberToObject(c, "tolerance", r->tol);
    cJSON_AddNumberToObject(c, "prompt_positions", r->n_prompt);
    cJSON_AddNumberToObject(c, "decode_steps", r->n_decode);
    cJSON_AddItemToObject(c, "tokens", cJSON_CreateIntArray(r->tokens, r->n_tokens));
    cJSON_AddNumberToObject(c, "greedy_disagree", r->greedy_disagree);
    if (r->first_bad >= 0) {  /* at the first unexplained row, each side against its own re-derivation */
        cJSON *at = cJSON_AddArrayToObject(c, "rederived_at_first");
        for (int side = 0; side < 2; side++) {
            const float v = r->points[r->first_bad].first_self[side];
            cJSON_AddItemToArray(at, v < 0 ? cJSON_CreateNull() : run_json_number(v));
        }
    }
    cJSON *pts = cJSON_AddArrayToObject(c, "points");
    for (int k = 0; k < r->n_points; k++)
        if (r->points[k].worst_pos >= 0)  /* an op this model never runs (post-norms elsewhere than gemma) */
            cJSON_AddItemToArray(pts, point_json(r, &r->points[k]));
    if (r->first_bad >= 0) {
        const engine_cmp_point *p = &r->points[r->first_bad];
        cJSON *f = point_json(r, p);
        cJSON_AddNumberToObject(f, "pos", p->first_pos);
        cJSON_AddStringToObject(f, "phase", p->first_pos < r->n_prompt ? "prompt" : "decode");
        cJSON_AddItemToObject(f, "rel_first", run_json_number(p->first_rel));
        cJSON_AddItemToObject(f, "a_stats", stats_json(&p->first_a));
        cJSON_AddItemToObject(f, "b_stats", stats_json(&p->first_b));
        cJSON_AddItemToObject(c, "first_divergence", f);
    } else {
        cJSON_AddNullToObject(c, "first_divergence");
    }
    cJSON_AddBoolToObject(c, "agree", r->first_bad < 0);
    return json_print_line(out, doc);
}

int run_compare(const run_opts *o, const gguf_file *f, const int32_t *ids, size_t n_ids, int n_ctx)
{
    kern_backend *be[2] = { NULL, NULL };
    engine_model *m[2] = { NULL, NULL };
    engine_ctx *c[2] = { NULL, NULL };
    engine_comparison r = { 0 };
    engine_error e;
    int rc = 2;
    for (int i = 0; i < 2; i++) {
        char why[512];
        be[i] = run_backend_create(o->compare[i], o->n_threads, i == 1 ? o->fault : NULL, why, sizeof why);
        if (!be[i]) {
            fprintf(stderr, "gguf-run: --compare %s,%s: %s\n", o->compare[0], o->compare[1], why);
            goto out;
        }
        if (engine_model_load(f, be[i], &m[i], &e) || engine_ctx_create(m[i], n_ctx, COMPARE_CHUNK, &c[i], &e)) {
            fprintf(stderr, "gguf-run: %s: %s backend: %s\n", o->model, o->compare[i], e.message);
            rc = engine_status_is_file_fault(e.code) ? 1 : 2;
            goto out;
        }
    }
    if (engine_compare(c[0], c[1], ids, n_ids, o->n_predict, COMPARE_CHUNK, o->tolerance, &r, &e)) {
        fprintf(stderr, "gguf-run: %s: comparison failed: %s\n", o->model, e.message);
        goto out;
    }
    if (o->json ? print_json(stdout, o, &r) : (print_text(stdout, o, &r), 0))
        goto out;
    if (o->plot) {
        char a[64], b[64], legend[160], why[512];
        side_label(o, 0, a, sizeof a);
        side_label(o, 1, b, sizeof b);
        snprintf(legend, sizeof legend, "%s solid, %s dashed", a, b);
        if (run_write_compare_plot(o->plot, &r, legend, why, sizeof why)) {
            fprintf(stderr, "gguf-run: --plot: %s\n", why);
            goto out;
        }
    }
    rc = compare_exit_status(&r);
out:
    engine_comparison_free(&r);
    for (int i = 0; i < 2; i++) {
        engine_ctx_free(c[i]);
        engine_model_free(m[i]);
        if (be[i])
            be[i]->destroy(be[i]);
    }
    return rc;
}
