/* gguf-run's JSON outputs: the --json document (report, tokens, trace, verdict) and --trace=F's file in the goldens'
 * schema, which --against reads. */
#include "atomic.h"
#include "format.h"
#include "json_doc.h"
#include "json_line.h"
#include "run.h"

#include <cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

cJSON *run_json_number(double v)
{
    return isfinite(v) ? cJSON_CreateNumber(v) : cJSON_CreateNull();
}

static void add_piece(cJSON *obj, const char *key, const tok_vocab *v, int32_t id)
{
    char buf[256];
    size_t n = tok_piece(v, id, buf, sizeof buf);
    char *s = utf8_sanitize(buf, n < sizeof buf ? n : sizeof buf);
    cJSON_AddStringToObject(obj, key, s ? s : "");
    free(s);
}

/* One traced output (layer il, or the final norm after the last) over positions [0, n_pos): the first n_stats of
 * rms, mean, min, max, max_abs, each an array over the positions (null where not recorded). */
static cJSON *layer_json(const engine_trace *t, int il, int n_pos, int n_stats)
{
    static const char *const names[5] = { "rms", "mean", "min", "max", "max_abs" };
    cJSON *L = cJSON_CreateObject();
    if (il == engine_trace_layers(t) - 1)
        cJSON_AddStringToObject(L, "layer", "result_norm");
    else
        cJSON_AddNumberToObject(L, "layer", il);
    for (int k = 0; k < n_stats; k++) {
        cJSON *a = cJSON_AddArrayToObject(L, names[k]);
        for (int p = 0; p < n_pos; p++) {
            const kern_row_stats *s = engine_trace_at(t, il, p);
            float vals[5] = { s ? s->rms : NAN, s ? s->mean : NAN, s ? s->min : NAN, s ? s->max : NAN,
                              s ? s->max_abs : NAN };
            cJSON_AddItemToArray(a, run_json_number(vals[k]));
        }
    }
    return L;
}

static cJSON *trace_json(const run_result *r)
{
    const engine_trace *t = r->trace;
    cJSON *doc = cJSON_CreateObject(), *layers = cJSON_AddArrayToObject(doc, "layers");
    cJSON_AddNumberToObject(doc, "n_positions", engine_trace_positions(t));
    for (int il = 0; il < engine_trace_layers(t); il++)
        cJSON_AddItemToArray(layers, layer_json(t, il, engine_trace_positions(t), 5));
    cJSON *steps = cJSON_AddArrayToObject(doc, "steps");
    for (size_t i = 0; i < engine_trace_n_steps(t); i++) {
        const engine_step *s = engine_trace_step_at(t, i);
        cJSON *S = cJSON_CreateObject(), *top = cJSON_AddArrayToObject(S, "top");
        cJSON_AddNumberToObject(S, "pos", s->pos);
        cJSON_AddNumberToObject(S, "token", s->token);
        for (int k = 0; k < 5 && s->top_id[k] >= 0; k++) {
            cJSON *c = cJSON_CreateObject();
            cJSON_AddNumberToObject(c, "id", s->top_id[k]);
            cJSON_AddItemToObject(c, "logit", run_json_number(s->top_logit[k]));
            add_piece(c, "piece", r->vocab, s->top_id[k]);
            cJSON_AddItemToArray(top, c);
        }
        cJSON_AddItemToObject(S, "margin", run_json_number(s->margin));
        cJSON_AddItemToObject(S, "entropy", run_json_number(s->entropy));
        cJSON_AddItemToObject(S, "change", run_json_number(s->change));
        cJSON_AddItemToArray(steps, S);
    }
    return doc;
}

/* The smoke verdict as the shared verdict (docs/JSON.md): "ok" is whether generation looked healthy; its
 * findings are errors under --smoke (they fail the run) and warnings otherwise. */
static void verdict_json(cJSON *doc, const run_result *r)
{
    const engine_verdict *v = &r->verdict;
    char line[sizeof v->summary + 48];
    cJSON *findings = json_doc_verdict(doc, r->exit_status, run_verdict_line(r, line, sizeof line));
    cJSON_AddBoolToObject(cJSON_GetObjectItem(doc, "verdict"), "ok", v->ok);
    for (int i = 0; i < v->n_findings; i++)
        json_doc_finding(findings, r->o->smoke ? "error" : "warning", engine_symptom_name(v->findings[i].symptom),
                         NULL, NULL, v->findings[i].message, "healthy generation (docs: the smoke rules)",
                         "the engine or the weights misbehave in the way the code names");
    for (int i = 0; i < v->n_notes; i++)
        json_doc_finding(findings, "info",
                         engine_note_name(v->notes[i].symptom),
                         NULL, NULL, v->notes[i].message, "healthy generation (docs: the smoke rules)",
                         "odd-looking, but what a healthy model does too: not counted against the run");
}

int run_print_json(FILE *out, const run_result *r)
{
    const engine_gen_result *g = &r->gen;
    const engine_hparams *hp = engine_model_hparams(r->model);
    cJSON *doc = json_doc_new("gguf-run", r->o->model);
    verdict_json(doc, r);
    json_add_text(doc, "arch", hp->arch);
    cJSON_AddStringToObject(doc, "backend", r->o->backend);
    char *p = utf8_sanitize(r->o->prompt, strlen(r->o->prompt));
    cJSON_AddStringToObject(doc, "prompt", p ? p : "");
    free(p);
    cJSON_AddItemToObject(doc, "prompt_tokens", cJSON_CreateIntArray(r->prompt, (int)r->n_prompt));
    cJSON_AddItemToObject(doc, "tokens", cJSON_CreateIntArray(g->tokens, (int)g->n_tokens));
    cJSON_AddStringToObject(doc, "text", r->text ? r->text : "");
    cJSON_AddBoolToObject(doc, "stopped_at_eog", g->stopped_at_eog);
    cJSON *tm = cJSON_AddObjectToObject(doc, "timings");
    double pps, gps;
    run_rates(r, &pps, &gps);
    cJSON_AddNumberToObject(tm, "prompt_seconds", g->prompt_seconds);
    cJSON_AddNumberToObject(tm, "prompt_tokens_per_second", pps);
    cJSON_AddNumberToObject(tm, "gen_seconds", g->gen_seconds);
    cJSON_AddNumberToObject(tm, "gen_tokens_per_second", gps);
    cJSON_AddNumberToObject(tm, "weight_bytes_per_token", (double)r->bytes_per_token);
    cJSON_AddNumberToObject(tm, "gen_weight_gb_per_second", gps * r->bytes_per_token / 1e9);
    cJSON *mem = cJSON_AddObjectToObject(doc, "memory");
    cJSON_AddNumberToObject(mem, "private_bytes", (double)r->private_bytes);
    cJSON_AddNumberToObject(mem, "estimated_bytes", (double)r->expected_bytes);
    cJSON_AddNumberToObject(mem, "estimated_full_context_bytes", (double)r->expected_full_bytes);
    cJSON_AddNumberToObject(mem, "positions", r->positions);
    cJSON_AddNumberToObject(mem, "n_ctx", r->n_ctx);
    cJSON_AddNumberToObject(mem, "context_bytes", (double)r->ctx_bytes);
    if (g->spot.checks) {
        cJSON *sp = cJSON_AddObjectToObject(doc, "spot_check");
        cJSON_AddNumberToObject(sp, "passes", g->spot.checks);
        cJSON_AddNumberToObject(sp, "rows", g->spot.rows);
        cJSON_AddNumberToObject(sp, "mismatches", g->spot.mismatches);
        cJSON_AddItemToObject(sp, "bad_rows", cJSON_CreateIntArray(g->spot.bad_rows, g->spot.n_bad));
        cJSON_AddItemToObject(sp, "max_rel", run_json_number(g->spot.max_rel));
    }
    if (r->o->trace && !r->o->trace_file)
        cJSON_AddItemToObject(doc, "trace", trace_json(r));
    return json_print_line(out, doc);
}

static int write_doc(void *user, FILE *fp)
{
    return fputs((const char *)user, fp) < 0 || fputc('\n', fp) < 0 ? -1 : 0;
}

/* The goldens' schema (../shared/golden/README.md, docs/TRACE.md): what --against reads, so that two ggufscope
 * runs, or ours and another engine's, diff the same way. */
static void golden_fields(cJSON *doc, const run_result *r)
{
    const engine_trace *t = r->trace;
    const engine_hparams *hp = engine_model_hparams(r->model);
    json_add_text(doc, "prompt", r->o->prompt);
    cJSON_AddNumberToObject(doc, "n_vocab", hp->n_vocab);
    cJSON_AddNumberToObject(doc, "n_layer", hp->n_layer);
    cJSON *pt = cJSON_AddArrayToObject(doc, "prompt_trace");
    for (int il = 0; il < engine_trace_layers(t); il++)
        cJSON_AddItemToArray(pt, layer_json(t, il, (int)r->n_prompt, 4));
    cJSON *g = cJSON_AddArrayToObject(doc, "greedy_tokens"), *t1 = cJSON_AddArrayToObject(doc, "greedy_top1_logit"),
          *t2 = cJSON_AddArrayToObject(doc, "greedy_top2_logit");
    for (size_t i = 0; i < engine_trace_n_steps(t); i++) {
        const engine_step *s = engine_trace_step_at(t, i);
        cJSON_AddItemToArray(g, cJSON_CreateNumber(s->token));
        cJSON_AddItemToArray(t1, run_json_number(s->top_logit[0]));
        cJSON_AddItemToArray(t2, run_json_number(s->top_logit[1]));
    }
    cJSON_AddStringToObject(doc, "greedy_text", r->text ? r->text : "");
}

int run_write_trace_json(const char *path, const run_result *r, char *err, size_t err_len)
{
    cJSON *doc = trace_json(r);
    golden_fields(doc, r);
    json_add_text(doc, "file", r->o->model);
    cJSON_AddItemToObject(doc, "prompt_tokens", cJSON_CreateIntArray(r->prompt, (int)r->n_prompt));
    cJSON_AddItemToObject(doc, "tokens", cJSON_CreateIntArray(r->gen.tokens, (int)r->gen.n_tokens));
    char *s = cJSON_PrintUnformatted(doc);
    cJSON_Delete(doc);
    if (!s) {
        snprintf(err, err_len, "out of memory writing the trace");
        return -1;
    }
    int rc = atomic_write(path, write_doc, s, err, err_len);
    free(s);
    return rc;
}
