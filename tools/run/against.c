/* gguf-run --against THEIRS.json: another engine's trace, in the schema of llama.cpp's goldens
 * (../shared/golden/README.md; docs/TRACE.md), held to ours on the same tokens. Their layer ids are read as they
 * come (ours, 0 to n_layer - 1 and "result_norm"; or transformers' hidden_states, 0 the embeddings to n_layer
 * after the final norm), an off-by-one in them is recognised and said, and the first layer and prompt position
 * where theirs departs beyond the tolerance is named with both sides' numbers, then the whole grid; the final
 * verdict line's word matches the exit status. */
#include "json_line.h"
#include "read_file.h"
#include "run.h"

#include <cJSON.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int run_against_load(run_opts *o, char *why, size_t why_len)
{
    /* a dump of whole tensors rather than a trace: an .npz, a .safetensors file or a folder */
    const size_t plen = strlen(o->against);
    struct stat st;
    if ((plen > 4 && !strcmp(o->against + plen - 4, ".npz")) ||
        (plen > 12 && !strcmp(o->against + plen - 12, ".safetensors")) ||
        (stat(o->against, &st) == 0 && S_ISDIR(st.st_mode))) {
        o->against_full = o->against;
        o->against = NULL;
        if (!o->prompt) {
            snprintf(why, why_len, "'%s' holds tensors, not their prompt: give it with -p", o->against_full);
            return 2;
        }
        if (!o->n_predict_given)
            o->n_predict = 0;
        return 0;
    }
    size_t len;
    char *text = read_file_text(o->against, (size_t)1 << 30, &len, why, why_len);
    if (!text)
        return 2;
    o->against_doc = cJSON_Parse(text);
    free(text);
    if (!o->against_doc) {
        snprintf(why, why_len, "'%s' is not JSON", o->against);
        return 2;
    }
    const cJSON *d = o->against_doc, *prompt = cJSON_GetObjectItem(d, "prompt"),
                *tokens = cJSON_GetObjectItem(d, "prompt_tokens"), *trace = cJSON_GetObjectItem(d, "prompt_trace");
    if (!cJSON_IsArray(tokens) || !cJSON_IsArray(trace)) {
        snprintf(why, why_len, "'%s' has no prompt_tokens and prompt_trace arrays (docs/TRACE.md gives the schema)",
                 o->against);
        return 2;
    }
    if (!o->prompt && !o->tokens_from_against) {
        if (!cJSON_IsString(prompt)) {
            snprintf(why, why_len, "'%s' has no prompt: give it with -p, or run their tokens with --tokens-from",
                     o->against);
            return 2;
        }
        o->prompt = prompt->valuestring;
    }
    const cJSON *greedy = cJSON_GetObjectItem(d, "greedy_tokens");
    if (!o->n_predict_given)
        o->n_predict = cJSON_IsArray(greedy) ? cJSON_GetArraySize(greedy) : 0;
    return 0;
}

int run_against_their_tokens(const run_opts *o, int32_t **ids, size_t *n, int n_vocab, char *why, size_t why_len)
{
    const cJSON *tokens = cJSON_GetObjectItem(o->against_doc, "prompt_tokens");
    const int count = cJSON_GetArraySize(tokens);
    if (count < 1) {
        snprintf(why, why_len, "'%s' has no prompt tokens", o->against);
        return 2;
    }
    *ids = malloc((size_t)count * sizeof **ids);
    if (!*ids) {
        snprintf(why, why_len, "out of memory");
        return 2;
    }
    for (int i = 0; i < count; i++) {
        const cJSON *t = cJSON_GetArrayItem(tokens, i);
        if (!cJSON_IsNumber(t) || t->valuedouble != (double)(int32_t)t->valuedouble || t->valueint < 0 ||
            t->valueint >= n_vocab) {
            snprintf(why, why_len, "'%s': prompt token %d is not an id of this model's vocabulary (0..%d)",
                     o->against, i, n_vocab - 1);
            free(*ids);
            *ids = NULL;
            return 2;
        }
        (*ids)[i] = t->valueint;
    }
    *n = (size_t)count;
    return 0;
}

int run_against_tokens(const run_opts *o, const int32_t *ids, size_t n)
{
    const cJSON *tokens = cJSON_GetObjectItem(o->against_doc, "prompt_tokens");
    bool same = (size_t)cJSON_GetArraySize(tokens) == n;
    for (size_t i = 0; same && i < n; i++)
        same = cJSON_GetArrayItem(tokens, (int)i)->valueint == ids[i];
    if (same)
        return 0;
    fprintf(stderr, "gguf-run: --against %s: their prompt tokens differ from ours, so the traces cannot be "
                    "compared position by position:\n  theirs:", o->against);
    const cJSON *t;
    cJSON_ArrayForEach(t, tokens)
        fprintf(stderr, " %d", t->valueint);
    fprintf(stderr, "\n  ours:  ");
    for (size_t i = 0; i < n; i++)
        fprintf(stderr, " %d", ids[i]);
    fprintf(stderr, "\n(a tokenizer difference: check BOS, the pre-tokenizer, special tokens; gguf-run --tokenize "
                    "shows ours with their text; --tokens-from runs their tokens as they are)\n");
    return 2;
}

/* Their value of field k at position p of a layer object; NAN when absent. */
static double their(const cJSON *layer, const char *k, int p)
{
    const cJSON *a = cJSON_GetObjectItem(layer, k), *x = a ? cJSON_GetArrayItem(a, p) : NULL;
    return cJSON_IsNumber(x) ? x->valuedouble : NAN;
}

static const char *const stat_names[4] = { "rms", "mean", "min", "max" };

/* How far ours is from theirs at one position: the largest of the statistics' differences (those their trace
 * has), rms and mean relative to their RMS (the scale of the residual, so that a mean near 0 does not blow up),
 * min and max relative to their own size (at least the RMS): an extreme is one value, and in a model with outlier
 * channels (the real gemma-3-270m: a max of 166 over an RMS of 7.2) measuring it against the RMS magnified its
 * last digits 23 times, so that a correct engine departed from llama.cpp's golden at 4.5e-3 "of the RMS" where
 * its RMS was 1.8e-4 away and the max itself 2e-4. */
static double departure(const kern_row_stats *s, const cJSON *layer, int p, const char **worst)
{
    double ours[4] = { s->rms, s->mean, s->min, s->max }, rms = fabs(their(layer, "rms", p)), d = 0.0;
    if (!(rms > 0.0))
        rms = 1e-30;
    *worst = stat_names[0];
    for (int k = 0; k < 4; k++) {
        const double t = their(layer, stat_names[k], p), scale = k >= 2 && fabs(t) > rms ? fabs(t) : rms;
        if (isnan(t) && k > 0)
            continue; /* a statistic their trace does not have */
        double x = isfinite(t) && isfinite(ours[k]) ? fabs(ours[k] - t) / scale : isfinite(t) ? INFINITY : 0.0;
        if (x > d) {
            d = x;
            *worst = stat_names[k];
        }
    }
    return d;
}

/* Their trace's entries: each one's layer id (RESULT_NORM for "result_norm") and the entry of ours it is held
 * to (SKIP: not compared, as transformers' embeddings entry). */
enum { RESULT_NORM = -1, SKIP = -2 };

typedef struct entries {
    int n;
    const cJSON **layer;
    int *id;
    int *ours;     /* our trace index: 0..n_layer - 1, n_layer the final norm; SKIP */
} entries;

/* What one mapping of their entries onto ours gives. */
typedef struct outcome {
    int first_entry, first_il, first_pos, n_compared, n_departed;
    double first_d;
    const char *first_what;
} outcome;

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

void run_mark_massive(const run_opts *o, const double *rms, int n_pos, bool *massive)
{
    if (o->massive_tolerance <= 0.0f || n_pos < 3)
        return;
    double *s = malloc((size_t)n_pos * sizeof *s);
    if (!s)
        return;
    memcpy(s, rms, (size_t)n_pos * sizeof *s);
    qsort(s, (size_t)n_pos, sizeof *s, cmp_double);
    const double median = s[n_pos / 2];
    free(s);
    for (int p = 0; p < n_pos; p++)
        if (rms[p] > 4.0 * median) {
            massive[p] = true;
            if (p + 1 < n_pos)
                massive[p + 1] = true; /* the position after one carries its effect */
        }
}

/* The positions carrying massive activations in any of their entries (run_mark_massive), or NULL: none marked. */
static bool *massive_positions(const run_opts *o, const entries *e, int n_pos)
{
    if (o->massive_tolerance <= 0.0f)
        return NULL;
    bool *massive = calloc((size_t)n_pos + 1, sizeof *massive);
    double *rms = malloc(((size_t)n_pos + 1) * sizeof *rms);
    for (int i = 0; massive && rms && i < e->n; i++) {
        for (int p = 0; p < n_pos; p++)
            rms[p] = fabs(their(e->layer[i], "rms", p));
        run_mark_massive(o, rms, n_pos, massive);
    }
    free(rms);
    return massive;
}

/* Position p's departure and tolerance: the four statistics against the tolerance, or at a massive-activation
 * position (gemma) the RMS alone against the looser one. */
static double judged(const run_opts *o, const bool *massive, const kern_row_stats *s, const cJSON *layer, int p,
                     const char **what, double *tol)
{
    if (massive && massive[p]) {
        const double t = fabs(their(layer, "rms", p));
        *what = "rms";
        *tol = fmax(o->tolerance, o->massive_tolerance);
        return fabs(s->rms - t) / (t > 0.0 ? t : 1e-30);
    }
    *tol = o->tolerance;
    return departure(s, layer, p, what);
}

static outcome evaluate(const entries *e, const int *ours, const run_opts *o, const run_result *r)
{
    outcome out = { .first_entry = -1, .first_il = -1, .first_pos = -1, .first_what = "rms" };
    const int n_pos = (int)r->n_prompt;
    bool *massive = massive_positions(o, e, n_pos);
    for (int i = 0; i < e->n; i++) {
        const int il = ours[i];
        if (il == SKIP)
            continue;
        for (int p = 0; p < n_pos; p++) {
            const kern_row_stats *s = engine_trace_l_out_at(r->trace, engine_model_hparams(r->model), il, p);
            if (!s || !isfinite(their(e->layer[i], "rms", p)))
                continue;
            const char *what;
            double tol;
            const double d = judged(o, massive, s, e->layer[i], p, &what, &tol);
            out.n_compared++;
            if (d <= tol)
                continue;
            out.n_departed++;
            if (out.first_il < 0 || il < out.first_il || (il == out.first_il && p < out.first_pos)) {
                out.first_entry = i, out.first_il = il, out.first_pos = p, out.first_d = d, out.first_what = what;
            }
        }
    }
    free(massive);
    return out;
}

/* Reads their entries' layer ids; 2 with the reason when one is neither a layer number nor "result_norm". */
static int read_entries(const run_opts *o, entries *e, int n_layer, char *why, size_t why_len)
{
    const cJSON *trace = cJSON_GetObjectItem(o->against_doc, "prompt_trace");
    e->n = cJSON_GetArraySize(trace);
    e->layer = calloc((size_t)e->n + 1, sizeof *e->layer);
    e->id = calloc((size_t)e->n + 1, sizeof *e->id);
    e->ours = calloc((size_t)e->n + 1, sizeof *e->ours);
    if (!e->layer || !e->id || !e->ours) {
        snprintf(why, why_len, "out of memory");
        return 2;
    }
    for (int i = 0; i < e->n; i++) {
        const cJSON *layer = cJSON_GetArrayItem(trace, i), *l = cJSON_GetObjectItem(layer, "layer");
        e->layer[i] = layer;
        if (cJSON_IsString(l) && !strcmp(l->valuestring, "result_norm")) {
            e->id[i] = RESULT_NORM;
        } else if (cJSON_IsNumber(l) && l->valuedouble == (double)(int)l->valuedouble && l->valueint >= 0 &&
                   l->valueint <= n_layer) {
            e->id[i] = l->valueint;
        } else {
            char shown[64] = "(none)";
            if (cJSON_IsString(l)) { /* shown quoted, printable ASCII only, cut at 40 bytes */
                size_t k = 0;
                shown[k++] = '"';
                for (const char *c = l->valuestring; *c && k < 41; c++)
                    shown[k++] = *c >= 0x20 && *c < 0x7f ? *c : '?';
                shown[k++] = '"';
                shown[k] = '\0';
            } else if (cJSON_IsNumber(l))
                snprintf(shown, sizeof shown, "%g", l->valuedouble);
            snprintf(why, why_len, "their prompt_trace entry %d has layer id %s: this model has layers 0 to %d and "
                     "\"result_norm\" (transformers' hidden_states as they come: 0 to %d)", i, shown, n_layer - 1,
                     n_layer);
            return 2;
        }
        if (!cJSON_IsArray(cJSON_GetObjectItem(layer, "rms"))) {
            snprintf(why, why_len, "their prompt_trace entry %d (layer %d) has no rms array: rms is the one "
                     "statistic every trace must hold (docs/TRACE.md)", i, e->id[i]);
            return 2;
        }
    }
    return 0;
}

static void entries_free(entries *e)
{
    free(e->layer), free(e->id), free(e->ours);
}

/* Their entries onto ours: their ids as ours; transformers' hidden_states as they come (ids 0..n_layer: 0 the
 * embeddings, k the output of our layer k - 1, n_layer after the final norm); 1-based ids. Then, when that
 * departs, the off-by-ones a dump makes (embeddings counted as layer 0; hidden_states[1:], whose last entry is
 * after the final norm; one layer late): one that agrees everywhere is taken and said. *how: NULL, or what was
 * taken, for the report. */
static void map_entries(entries *e, int n_layer, const run_opts *o, const run_result *r, const char **how)
{
    int max_id = -1, min_id = n_layer + 1;
    bool has_result_norm = false;
    for (int i = 0; i < e->n; i++) {
        has_result_norm |= e->id[i] == RESULT_NORM;
        if (e->id[i] >= 0) {
            max_id = e->id[i] > max_id ? e->id[i] : max_id;
            min_id = e->id[i] < min_id ? e->id[i] : min_id;
        }
    }
    *how = NULL;
    int *alt = malloc(((size_t)e->n + 1) * sizeof *alt);
    if (!alt) {
        for (int i = 0; i < e->n; i++)
            e->ours[i] = e->id[i] == RESULT_NORM ? n_layer : e->id[i] < n_layer ? e->id[i] : SKIP;
        return;
    }
    if (max_id == n_layer && !has_result_norm) {
        /* one id past our last layer: transformers' numbering, from the embeddings (0) or from 1 */
        for (int i = 0; i < e->n; i++)
            e->ours[i] = e->id[i] == 0 ? SKIP : e->id[i] - 1;
        if (min_id == 0) {
            for (int i = 0; i < e->n; i++)
                e->ours[i] = e->id[i] == n_layer ? n_layer : e->ours[i];
            *how = "their ids 0..n_layer are transformers' hidden_states as they come: entry 0 the embeddings (not "
                   "compared), entry k our layer k - 1's output, the last entry after the final norm";
        } else {
            /* 1-based: their last entry is our last layer's output, or after the final norm: the closer one */
            for (int i = 0; i < e->n; i++)
                alt[i] = e->id[i] == n_layer ? n_layer : e->ours[i];
            const outcome plain = evaluate(e, e->ours, o, r), normed = evaluate(e, alt, o, r);
            if (normed.n_departed < plain.n_departed) {
                memcpy(e->ours, alt, (size_t)e->n * sizeof *alt);
                *how = "their ids count from 1, and their last entry is after the final norm (transformers' "
                       "hidden_states[1:]): entry k compared with our layer k - 1, the last with our final norm";
            } else {
                *how = "their ids count from 1: entry k compared with our layer k - 1";
            }
        }
        free(alt);
        return;
    }
    for (int i = 0; i < e->n; i++)
        e->ours[i] = e->id[i] == RESULT_NORM ? n_layer : e->id[i];
    const outcome plain = evaluate(e, e->ours, o, r);
    if (plain.n_departed == 0) {
        free(alt);
        return;
    }
    static const char *const says[3] = {
        "their layer k matches our layer k - 1 at every position: their entry 0 is the embeddings (transformers' "
        "hidden_states[0]), so their ids are one too high; compared that way",
        "their last layer matches our final norm, not our last layer's output: their last entry is after the "
        "final norm (transformers' hidden_states[-1]); compared that way",
        "their layer k matches our layer k + 1 at every position: their ids are one too low; compared that way",
    };
    for (int shift = 0; shift < 3; shift++) {
        for (int i = 0; i < e->n; i++) {
            const int id = e->id[i];
            if (id == RESULT_NORM)
                alt[i] = n_layer;
            else if (shift == 0)
                alt[i] = id == 0 ? SKIP : id - 1;
            else if (shift == 1)
                alt[i] = id == max_id && !has_result_norm ? n_layer : id;
            else
                alt[i] = id + 1 < n_layer ? id + 1 : !has_result_norm && id + 1 == n_layer ? n_layer : SKIP;
        }
        const outcome o2 = evaluate(e, alt, o, r);
        if (o2.n_departed == 0 && o2.n_compared > 0) {
            memcpy(e->ours, alt, (size_t)e->n * sizeof *alt);
            *how = says[shift];
            break;
        }
    }
    free(alt);
}

/* The statistics their trace has, for the header ("rms, mean, min, max"; "rms only: no mean, min, max"). */
static void stats_compared(const entries *e, char *buf, size_t cap)
{
    bool has[4] = { true, true, true, true };
    for (int i = 0; i < e->n; i++)
        for (int k = 1; k < 4; k++)
            has[k] &= cJSON_IsArray(cJSON_GetObjectItem(e->layer[i], stat_names[k]));
    size_t at = (size_t)snprintf(buf, cap, "rms");
    for (int k = 1; k < 4; k++)
        if (has[k] && at < cap)
            at += (size_t)snprintf(buf + at, cap - at, ", %s", stat_names[k]);
    if (!has[1] || !has[2] || !has[3]) {
        at += (size_t)snprintf(buf + at, cap - at, " (theirs has no");
        for (int k = 1, first = 1; k < 4 && at < cap; k++)
            if (!has[k]) {
                at += (size_t)snprintf(buf + at, cap - at, "%s %s", first ? "" : ",", stat_names[k]);
                first = 0;
            }
        if (at < cap)
            snprintf(buf + at, cap - at, ")");
    }
}

static void entry_name(int il, int n_layer, char *buf, size_t cap)
{
    if (il == SKIP)
        snprintf(buf, cap, "embeddings");
    else if (il == n_layer)
        snprintf(buf, cap, "result_norm");
    else
        snprintf(buf, cap, "%d", il);
}

/* Their generated tokens against ours: how many were compared, and where they part (with our top-1 margin there,
 * for a near-tie). Returns the first index that departs without a near-tie, or -1. */
static int greedy_report(FILE *out, const run_opts *o, const run_result *r)
{
    const cJSON *greedy = cJSON_GetObjectItem(o->against_doc, "greedy_tokens");
    if (!cJSON_IsArray(greedy))
        return -1;
    const int theirs = cJSON_GetArraySize(greedy), ours = (int)r->gen.n_tokens;
    const int n = theirs < ours ? theirs : ours;
    if (o->n_predict == 0) {
        fprintf(out, "greedy     not compared (-n 0): theirs has %d generated tokens\n", theirs);
        return -1;
    }
    for (int i = 0; i < n; i++) {
        if (cJSON_GetArrayItem(greedy, i)->valueint == r->gen.tokens[i])
            continue;
        const engine_step *s = (size_t)i < engine_trace_n_steps(r->trace) ? engine_trace_step_at(r->trace, (size_t)i)
                                                                          : NULL;
        const bool tie = s && s->margin < 1e-3f * fabsf(s->top_logit[0]);
        fprintf(out, "greedy     theirs departs at generated token %d of the %d compared: theirs %d, ours %d (our "
                     "top-1 margin there %.3g logits: %s)\n", i, n, cJSON_GetArrayItem(greedy, i)->valueint,
                r->gen.tokens[i], s ? s->margin : NAN, tie ? "a near-tie, both can be right" : "no near-tie: one "
                                                                                              "engine is wrong");
        return tie ? -1 : i;
    }
    if (n == theirs && n == ours)
        fprintf(out, "greedy     the %d generated tokens agree\n", n);
    else
        fprintf(out, "greedy     %d of their %d generated tokens compared (we generated %d): they agree\n", n, theirs,
                ours);
    return -1;
}

int run_against_report(FILE *out, const run_opts *o, const run_result *r, run_against_result *res)
{
    const int n_layer = engine_trace_layers(r->trace) - 1, n_pos = (int)r->n_prompt;
    char why[400];
    entries e = { 0 };
    if (read_entries(o, &e, n_layer, why, sizeof why)) {
        fprintf(out, "layers     CANNOT COMPARE: %s\n", why);
        run_against_merge(res, 2, -1, -1, why);
        entries_free(&e);
        return res->layers_rc = 2;
    }
    const char *how;
    map_entries(&e, n_layer, o, r, &how);
    const outcome oc = evaluate(&e, e.ours, o, r);
    bool *massive = massive_positions(o, &e, n_pos);
    char compared[160];
    stats_compared(&e, compared, sizeof compared);
    fprintf(out, "against    %s: %d traced outputs at %d prompt positions, tolerance %g%s (rms and mean relative to "
                 "their RMS, min and max to their size); statistics compared: %s\n",
            o->against, e.n, n_pos, o->tolerance, o->tolerance_why ? o->tolerance_why : "", compared);
    if (how)
        fprintf(out, "indexing   %s\n", how);
    fprintf(out, "  %-12s %10s %6s %12s %12s\n", "layer", "worst rel", "at pos", "ours rms", "theirs rms");
    for (int i = 0; i < e.n; i++) {
        const int il = e.ours[i];
        char name[24];
        entry_name(il, n_layer, name, sizeof name);
        if (il == SKIP) {
            fprintf(out, "  %-12s %10s\n", name, "not compared");
            continue;
        }
        double worst = 0.0;
        int worst_pos = 0, over = 0;
        for (int p = 0; p < n_pos; p++) {
            const kern_row_stats *s = engine_trace_l_out_at(r->trace, engine_model_hparams(r->model), il, p);
            if (!s || !isfinite(their(e.layer[i], "rms", p)))
                continue;
            const char *what;
            double tol;
            const double d = judged(o, massive, s, e.layer[i], p, &what, &tol);
            over += d > tol;
            if (d > worst)
                worst = d, worst_pos = p;
        }
        const kern_row_stats *s = engine_trace_l_out_at(r->trace, engine_model_hparams(r->model), il, worst_pos);
        fprintf(out, "  %-12s %10.3g %6d %12.6g %12.6g%s\n", name, worst, worst_pos, s ? s->rms : NAN,
                their(e.layer[i], "rms", worst_pos), over ? "  <- departs" : "");
    }
    /* the generated tokens: the decode-only bugs (a stuck embedding, K/V at the wrong position) leave the prompt
     * alone and show here */
    const int greedy_at = greedy_report(out, o, r);
    const char *head = "layers    ";
    if (!oc.n_compared) {
        fprintf(out, "%s CANNOT COMPARE: their trace holds no layer of this model\n", head);
        run_against_merge(res, 2, -1, -1, "their trace holds no layer of this model");
        free(massive);
        entries_free(&e);
        return res->layers_rc = 2;
    }
    if (greedy_at >= 0) {
        char s[200];
        snprintf(s, sizeof s, "the prompt's layers agree, the generated tokens depart from token %d: look after the "
                 "last layer (the lm_head, the sampler) and at the decode steps (the KV cache, positions)", greedy_at);
        run_against_merge(res, 1, n_layer + 2, -1, s);
    }
    if (oc.first_il < 0) {
        fprintf(out, "%s AGREE: every layer at every prompt position within %g%s\n", head, o->tolerance,
                how ? " (their layers re-indexed: see indexing)" : "");
        free(massive);
        entries_free(&e);
        return res->layers_rc = greedy_at >= 0 ? 1 : 0;
    }
    const kern_row_stats *s = engine_trace_l_out_at(r->trace, engine_model_hparams(r->model), oc.first_il, oc.first_pos);
    const cJSON *L = e.layer[oc.first_entry];
    char name[24];
    snprintf(name, sizeof name, oc.first_il == n_layer ? "the final norm" : "layer %d", oc.first_il);
    fprintf(out, "%s DEPART: theirs departs first at %s, prompt position %d (token %d): %s differs by %.3g "
                 "of their %s\n           ours   rms %.6g mean %.6g min %.6g max %.6g\n           theirs rms "
                 "%.6g mean %.6g min %.6g max %.6g\n           %d of %d layer-positions depart; %s\n",
            head, name, oc.first_pos, r->prompt[oc.first_pos], oc.first_what, oc.first_d,
            strcmp(oc.first_what, "min") && strcmp(oc.first_what, "max") ? "RMS" : "value (or RMS, the larger)", s->rms,
            s->mean, s->min, s->max, their(L, "rms", oc.first_pos), their(L, "mean", oc.first_pos),
            their(L, "min", oc.first_pos), their(L, "max", oc.first_pos), oc.n_departed, oc.n_compared,
            oc.first_il == 0 ? "it departs from the first layer on: look at the embedding lookup and layer 0's ops"
            : oc.first_il == n_layer ? "every layer agrees: look at the final norm"
                                     : "the layers before it agree: look at this layer's ops first");
    char said[160];
    snprintf(said, sizeof said, "theirs departs first at %s, prompt position %d", name, oc.first_pos);
    run_against_merge(res, 1, oc.first_il, oc.first_pos, said);
    free(massive);
    entries_free(&e);
    return res->layers_rc = 1;
}
