/* gguf-run --against THEIRS.json: another engine's trace, in the schema of llama.cpp's goldens
 * (../shared/golden/README.md; docs/TRACE.md), held to ours on the same tokens. It names the first layer and
 * prompt position where theirs departs beyond --tolerance with both sides' numbers, then the whole grid. */
#include "json_line.h"
#include "npy.h"
#include "read_file.h"
#include "run.h"

#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int run_against_load(run_opts *o, char *why, size_t why_len)
{
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
    if (!o->prompt) {
        if (!cJSON_IsString(prompt)) {
            snprintf(why, why_len, "'%s' has no prompt: give it with -p", o->against);
            return 2;
        }
        o->prompt = prompt->valuestring;
    }
    const cJSON *greedy = cJSON_GetObjectItem(d, "greedy_tokens");
    if (!o->n_predict_given)
        o->n_predict = cJSON_IsArray(greedy) ? cJSON_GetArraySize(greedy) : 0;
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
                    "shows ours with their text)\n");
    return 2;
}

/* Their value of field k at position p of a layer object; NAN when absent. */
static double their(const cJSON *layer, const char *k, int p)
{
    const cJSON *a = cJSON_GetObjectItem(layer, k), *x = a ? cJSON_GetArrayItem(a, p) : NULL;
    return cJSON_IsNumber(x) ? x->valuedouble : NAN;
}

/* How far ours is from theirs at one position: the largest of the four statistics' differences, rms and mean
 * relative to their RMS (the scale of the residual, so that a mean near 0 does not blow up), min and max
 * relative to their own size (at least the RMS): an extreme is one value, and in a model with outlier channels
 * (the real gemma-3-270m: a max of 166 over an RMS of 7.2) measuring it against the RMS magnified its last
 * digits 23 times, so that a correct engine departed from llama.cpp's golden at 4.5e-3 "of the RMS" where its
 * RMS was 1.8e-4 away and the max itself 2e-4. */
static double departure(const kern_row_stats *s, const cJSON *layer, int p, const char **worst)
{
    static const char *const names[4] = { "rms", "mean", "min", "max" };
    double ours[4] = { s->rms, s->mean, s->min, s->max }, rms = fabs(their(layer, "rms", p)), d = 0.0;
    if (!(rms > 0.0))
        rms = 1e-30;
    *worst = names[0];
    for (int k = 0; k < 4; k++) {
        const double t = their(layer, names[k], p), scale = k >= 2 && fabs(t) > rms ? fabs(t) : rms;
        double x = isfinite(t) && isfinite(ours[k]) ? fabs(ours[k] - t) / scale : isfinite(t) ? INFINITY : 0.0;
        if (x > d) {
            d = x;
            *worst = names[k];
        }
    }
    return d;
}

static int layer_index(const cJSON *layer, int n_layer)
{
    const cJSON *l = cJSON_GetObjectItem(layer, "layer");
    if (cJSON_IsNumber(l))
        return l->valueint >= 0 && l->valueint < n_layer ? l->valueint : -1;
    return cJSON_IsString(l) && !strcmp(l->valuestring, "result_norm") ? n_layer : -1;
}

int run_against_report(FILE *out, const run_opts *o, const run_result *r, int *mark_layer, int *mark_pos)
{
    const cJSON *trace = cJSON_GetObjectItem(o->against_doc, "prompt_trace");
    const int n_layer = engine_trace_layers(r->trace) - 1, n_pos = (int)r->n_prompt;
    int first_il = -1, first_pos = -1, n_compared = 0, n_departed = 0;
    const cJSON *first_layer = NULL;
    double first_d = 0.0;
    const char *first_what = "rms";
    fprintf(out, "against    %s: %d traced outputs (layers, final norm) at %d prompt positions, tolerance %g "
                 "(rms and mean relative to their RMS, min and max to their size)\n",
            o->against, cJSON_GetArraySize(trace), n_pos, o->tolerance);
    fprintf(out, "  %-12s %10s %6s %12s %12s\n", "layer", "worst rel", "at pos", "ours rms", "theirs rms");
    const cJSON *layer;
    cJSON_ArrayForEach(layer, trace)
    {
        int il = layer_index(layer, n_layer);
        if (il < 0)
            continue;
        double worst = 0.0;
        int worst_pos = 0, over = 0;
        for (int p = 0; p < n_pos; p++) {
            const kern_row_stats *s = engine_trace_at(r->trace, il, p);
            if (!s || !isfinite(their(layer, "rms", p)))
                continue;
            const char *what;
            double d = departure(s, layer, p, &what);
            n_compared++;
            if (d > o->tolerance) {
                over++;
                if (first_il < 0 || il < first_il || (il == first_il && p < first_pos)) {
                    first_il = il, first_pos = p, first_d = d, first_layer = layer, first_what = what;
                }
            }
            if (d > worst) {
                worst = d;
                worst_pos = p;
            }
        }
        n_departed += over;
        char name[24];
        snprintf(name, sizeof name, il == n_layer ? "result_norm" : "%d", il);
        const kern_row_stats *s = engine_trace_at(r->trace, il, worst_pos);
        fprintf(out, "  %-12s %10.3g %6d %12.6g %12.6g%s\n", name, worst, worst_pos, s ? s->rms : NAN,
                their(layer, "rms", worst_pos), over ? "  <- departs" : "");
    }
    /* the generated tokens, when theirs are given: the decode-only bugs (a stuck embedding, K/V at the wrong
     * position) leave the prompt alone and show here */
    const cJSON *greedy = cJSON_GetObjectItem(o->against_doc, "greedy_tokens");
    int greedy_at = -1;
    for (int i = 0; cJSON_IsArray(greedy) && i < cJSON_GetArraySize(greedy) && (size_t)i < r->gen.n_tokens; i++)
        if (cJSON_GetArrayItem(greedy, i)->valueint != r->gen.tokens[i]) {
            greedy_at = i;
            break;
        }
    if (greedy_at >= 0) {
        const engine_step *s = (size_t)greedy_at < engine_trace_n_steps(r->trace) ? engine_trace_step_at(r->trace, (size_t)greedy_at) : NULL;
        fprintf(out, "greedy     theirs departs at generated token %d: theirs %d, ours %d (our top-1 margin there %.3g "
                     "logits: %s)\n", greedy_at, cJSON_GetArrayItem(greedy, greedy_at)->valueint, r->gen.tokens[greedy_at],
                s ? s->margin : NAN, s && s->margin < 1e-3f * fabsf(s->top_logit[0]) ? "a near-tie, both can be right"
                                                                                  : "no near-tie: one engine is wrong");
    } else if (cJSON_IsArray(greedy))
        fprintf(out, "greedy     the %d generated tokens agree\n", cJSON_GetArraySize(greedy));
    bool greedy_departs = greedy_at >= 0 && (size_t)greedy_at < engine_trace_n_steps(r->trace) &&
                          !(engine_trace_step_at(r->trace, (size_t)greedy_at)->margin <
                            1e-3f * fabsf(engine_trace_step_at(r->trace, (size_t)greedy_at)->top_logit[0]));
    if (!n_compared) {
        fprintf(out, "verdict    CANNOT COMPARE: their trace holds no layer of this model\n");
        return 2;
    }
    /* with --against-logits the logits' line comes last and holds the verdict; this one says what the layers do */
    const char *head = o->against_logits ? "layers    " : "verdict   ";
    *mark_layer = first_il;
    *mark_pos = first_pos;
    if (first_il < 0 && greedy_departs) {
        fprintf(out, "%s DEPART: the prompt's layers agree within %g, the generated tokens do not from token "
                     "%d: look after the last layer (the lm_head, the sampler) and at the decode steps (a new token's "
                     "embedding, the KV cache, positions)\n",
                head, o->tolerance, greedy_at);
        return 1;
    }
    if (first_il < 0) {
        fprintf(out, "%s AGREE: every layer at every prompt position within %g\n", head, o->tolerance);
        return 0;
    }
    const kern_row_stats *s = engine_trace_at(r->trace, first_il, first_pos);
    char name[24];
    snprintf(name, sizeof name, first_il == n_layer ? "the final norm" : "layer %d", first_il);
    fprintf(out, "%s DEPART: theirs departs first at %s, prompt position %d (token %d): %s differs by %.3g "
                 "of their %s\n           ours   rms %.6g mean %.6g min %.6g max %.6g\n           theirs rms "
                 "%.6g mean %.6g min %.6g max %.6g\n           %d of %d layer-positions depart; %s\n",
            head, name, first_pos, r->prompt[first_pos], first_what, first_d,
            strcmp(first_what, "min") && strcmp(first_what, "max") ? "RMS" : "value (or RMS, the larger)", s->rms,
            s->mean, s->min, s->max,
            their(first_layer, "rms", first_pos), their(first_layer, "mean", first_pos),
            their(first_layer, "min", first_pos), their(first_layer, "max", first_pos), n_departed, n_compared,
            first_il == 0 ? "it departs from the first layer on: look at the embedding lookup and layer 0's ops"
            : first_il == n_layer ? "every layer agrees: look at the final norm"
                                  : "the layers before it agree: look at this layer's ops first");
    return 1;
}

int run_against_logits(FILE *out, const run_opts *o, const float *ours, size_t n_prompt, int n_vocab)
{
    char why[600];
    uint64_t rows, cols;
    float *theirs = npy_read_f32_2d(o->against_logits, &rows, &cols, why, sizeof why);
    if (!theirs) {
        fprintf(stderr, "gguf-run: --against-logits: %s\n", why);
        return 2;
    }
    if (rows != n_prompt || cols != (uint64_t)n_vocab) {
        fprintf(stderr, "gguf-run: --against-logits: %s holds %llu x %llu logits, the prompt gives %zu x %d\n",
                o->against_logits, (unsigned long long)rows, (unsigned long long)cols, n_prompt, n_vocab);
        free(theirs);
        return 2;
    }
    /* per prompt position: max |ours - theirs| over max |theirs| (the goldens' measure), and the argmax */
    int first = -1, worst_row = 0;
    double worst = 0.0;
    size_t argmax_differ = 0;
    for (size_t i = 0; i < n_prompt; i++) {
        const float *a = ours + i * (size_t)n_vocab, *b = theirs + i * (size_t)n_vocab;
        double diff = 0.0, scale = 0.0;
        int32_t ia = 0, ib = 0;
        for (int k = 0; k < n_vocab; k++) {
            diff = fmax(diff, fabs((double)a[k] - b[k]));
            scale = fmax(scale, fabs((double)b[k]));
            ia = a[k] > a[ia] ? k : ia;
            ib = b[k] > b[ib] ? k : ib;
        }
        double rel = scale > 0.0 ? diff / scale : diff;
        argmax_differ += ia != ib;
        if (rel > worst)
            worst = rel, worst_row = (int)i;
        if (first < 0 && rel > o->tolerance)
            first = (int)i;
    }
    free(theirs);
    fprintf(out, "logits     %s: largest difference %.3g of max |logit| at prompt position %d; argmax differs at %zu of "
                 "%zu positions\n", o->against_logits, worst, worst_row, argmax_differ, n_prompt);
    if (first >= 0)
        fprintf(out, "verdict    DEPART: the logits depart first at prompt position %d (beyond %g of max |logit|)\n", first,
                o->tolerance);
    else
        fprintf(out, "verdict    the logits agree within %g of max |logit| at every prompt position\n", o->tolerance);
    return first >= 0 ? 1 : 0;
}
