/*
 * The smoke verdict: does this generation look like a working model?
 * Each symptom is judged against the run's own evidence, not fixed magnitudes
 * (Qwen2.5's residual RMS grows 17 -> 85 across layers and that is healthy), and
 * only evidence a healthy model cannot produce fails the run; what healthy models
 * also do is a note:
 *   - NaN/Inf anywhere in the traced hidden states or the logits;
 *   - the generation ends in one token or a cycle of up to 16 repeated over at
 *     least max(8, min(32, n/2)) tokens: a failure when one token is chosen
 *     surely while the logits barely move (the model does not see what it
 *     generates), a note otherwise (greedy decoding of trained models loops
 *     too: SmolLM2 after "Chapter 1" prints '0' forever, gemma-3-270m after
 *     "no" as well; random-weight models loop on near-ties);
 *   - a padding/unused token was generated (judged by its output row);
 *   - hidden-state RMS: a layer that multiplies or divides the residual's RMS
 *     by more than 64 (median over every position but the first: trained
 *     models put massive activations on the first token, 150x at SmolLM2's
 *     layer 11), a generated position whose RMS at some layer is more than 8x
 *     above or below every prompt position there, or an all-zero residual;
 *   - logits that change by less than 1e-4 of their size for 3 steps in a row
 *     (the model is not reading its input: the seed-000 symptom);
 *   - the lm_head spot check, when it ran, found rows the file does not give.
 */
#include "internal.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *engine_symptom_name(engine_symptom s)
{
    static const char *const names[ENGINE_SYM_COUNT] = { "nonfinite", "repetition", "padding_token",
                                                         "hidden_rms", "flat_logits", "lm_head_rows" };
    return (unsigned)s < ENGINE_SYM_COUNT ? names[s] : "?";
}

__attribute__((format(printf, 3, 4))) static void add(engine_verdict *v, engine_symptom s, const char *fmt, ...)
{
    for (int i = 0; i < v->n_findings; i++)
        if (v->findings[i].symptom == s)
            return;
    engine_finding *f = &v->findings[v->n_findings++];
    f->symptom = s;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(f->message, sizeof f->message, fmt, ap);
    va_end(ap);
}

/* An observation that does not fail the run: what a healthy model also does. */
__attribute__((format(printf, 3, 4))) static void note(engine_verdict *v, engine_symptom s, const char *fmt, ...)
{
    for (int i = 0; i < v->n_notes; i++)
        if (v->notes[i].symptom == s)
            return;
    engine_finding *f = &v->notes[v->n_notes++];
    f->symptom = s;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(f->message, sizeof f->message, fmt, ap);
    va_end(ap);
}

static const char *layer_name(const engine_trace *t, int il, char *buf, size_t n)
{
    if (il == engine_trace_layers(t) - 1)
        snprintf(buf, n, "the final norm");
    else
        snprintf(buf, n, "layer %d", il);
    return buf;
}

static void judge_nonfinite(const engine_trace *t, engine_verdict *v)
{
    char ln[32];
    for (int p = 0; p < engine_trace_positions(t); p++)
        for (int il = 0; il < engine_trace_layers(t); il++) {
            const kern_row_stats *r = engine_trace_at(t, il, p);
            if (r->n_nan || r->n_inf) {
                add(v, ENGINE_SYM_NONFINITE, "%u NaN and %u Inf values in the hidden state after %s at position %d "
                                             "(the first layer where they appear there)",
                    r->n_nan, r->n_inf, layer_name(t, il, ln, sizeof ln), p);
                return;
            }
        }
    for (size_t i = 0; i < engine_trace_n_steps(t); i++) {
        const engine_step *s = engine_trace_step_at(t, i);
        if (s->n_nonfinite) {
            add(v, ENGINE_SYM_NONFINITE, "%u NaN/Inf logits at generation step %zu (position %d)", s->n_nonfinite,
                i, s->pos);
            return;
        }
    }
}

static int cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

/* The median of one of the steps' measures over generation steps [from, to) (the last 64); NAN when none. */
static double median_step(const engine_trace *t, size_t from, size_t to, bool change)
{
    float m[64];
    size_t k = 0;
    if (to > engine_trace_n_steps(t))
        to = engine_trace_n_steps(t);
    if (to > from + 64)
        from = to - 64;
    for (size_t i = from; i < to; i++) {
        const engine_step *s = engine_trace_step_at(t, i);
        const float x = change ? s->change : s->margin;
        if (isfinite(x))
            m[k++] = x;
    }
    if (!k)
        return NAN;
    qsort(m, k, sizeof *m, cmp_float);
    return m[k / 2];
}

/* The longest cycles greedy decoding of a healthy model falls into are a sentence or two long: gemma-3-270m's
 * is 14 tokens after 20 of text (as llama.cpp decodes it too). */
enum { CYCLE_MAX = 16 };
/* While a trained model loops it still reads its context, and its logits move: the two real models' 25 loops over
 * 53 prompts moved them by a median 0.08 to 0.93 of their size a step, each token winning by a median 0.9 logits
 * or more. stories260K fed a stuck embedding loops with its logits moving 4e-3 a step, as sure of each token (1.6
 * logits). A random-weight model's loops are near-ties (0.01 logits) whose logits barely move either: noise, not a
 * frozen model. So a loop fails the run when it is confident and frozen. (docs/gguf-run.md: the calibration.) */
static const double LOOP_STUCK_CHANGE = 1e-2;
static const double LOOP_TIE_MARGIN = 0.25;

static void judge_repetition(const engine_trace *t, const tok_vocab *voc, const int32_t *tok, size_t n,
                             engine_verdict *v)
{
    if (n && tok_vocab_is_eog(voc, tok[n - 1]))
        n--;
    size_t need = n / 2 < 32 ? n / 2 : 32;
    need = need < 8 ? 8 : need;
    if (n < need)
        return;
    for (size_t p = 1; p <= CYCLE_MAX && p < n; p++) {
        size_t run = 0;
        while (run + p < n && tok[n - 1 - run] == tok[n - 1 - run - p])
            run++;
        size_t covered = run + p;
        if (covered < need || covered < 2 * p) /* a cycle must come round at least twice */
            continue;
        char cyc[200] = "";
        size_t at = 0;
        for (size_t i = 0; i < p && at < sizeof cyc; i++) {
            const gguf_str txt = tok_vocab_text(voc, tok[n - p + i]);
            at += (size_t)snprintf(cyc + at, sizeof cyc - at, "%s%d '%.*s'", i ? ", " : "", tok[n - p + i],
                                   txt.ptr ? (int)(txt.len < 20 ? txt.len : 20) : 1, txt.ptr ? txt.ptr : "?");
        }
        const size_t start = n - covered;
        /* step i's change compares it with step i - 1: the loop's own steps start one later */
        const double margin = median_step(t, start, n, false), moved = median_step(t, start + 1, n, true);
        char what[400];
        if (p == 1)
            snprintf(what, sizeof what, "token %s repeated %zu times at the end of %zu generated tokens", cyc,
                     covered, n);
        else
            snprintf(what, sizeof what, "a cycle of %zu tokens [%s] repeated over the last %zu of %zu tokens (from "
                     "token %zu)", p, cyc, covered, n, start);
        const bool sure = isfinite(margin) && margin >= LOOP_TIE_MARGIN;
        /* frozen is judged on one token repeated: a longer cycle's consecutive steps peak on different tokens, so
         * its logits move by construction (the trace keeps no logits a cycle apart to compare) */
        if (p == 1 && sure && isfinite(moved) && moved < LOOP_STUCK_CHANGE)
            add(v, ENGINE_SYM_REPETITION,
                "%s, each token winning by a median %.2f logits while the logits move by a median %.2g of their size "
                "a step (a trained model's loop moves them by %.0e or more): the model is sure and frozen, as when "
                "the tokens it generates do not reach it", what, margin, moved, LOOP_STUCK_CHANGE);
        else if (sure)
            note(v, ENGINE_SYM_REPETITION,
                 "greedy loop: %s, each token winning by a median %.2f logits while the logits still move (%.2g of "
                 "their size a step): greedy decoding's trap, which trained models fall into too; sample (--temp) to "
                 "leave it", what, margin, moved);
        else
            note(v, ENGINE_SYM_REPETITION,
                 "greedy loop of near-ties: %s, each token winning by a median %.2f logits: what a model without "
                 "training (random weights) does; a trained model's choices are surer", what, margin);
        return;
    }
}

static bool is_padding(const tok_vocab *voc, int32_t id)
{
    if (id < 0 || id >= tok_vocab_size(voc) || tok_vocab_type(voc, id) == TOK_TYPE_UNUSED)
        return true;
    const gguf_str s = tok_vocab_text(voc, id);
    return (s.len >= 4 && !memcmp(s.ptr, "[PAD", 4)) || (s.len == 5 && !memcmp(s.ptr, "<pad>", 5));
}

/* An output row under this fraction of a real row's RMS is empty: the model never meant it to win. */
static const double EMPTY_ROW = 0.1;

static void judge_padding(const tok_vocab *voc, const engine_model *m, const int32_t *tok, size_t n,
                          engine_verdict *v)
{
    for (size_t i = 0; i < n; i++)
        if (is_padding(voc, tok[i])) {
            const gguf_str txt = tok_vocab_text(voc, tok[i]);
            double w = m ? engine_model_output_row_weight(m, tok[i], tok_vocab_n_real(voc)) : NAN;
            char what[160];
            snprintf(what, sizeof what, "generated token %zu is id %d (%s%.*s%s), a padding/unused entry", i, tok[i],
                     txt.ptr ? "'" : "", txt.ptr ? (int)(txt.len < 40 ? txt.len : 40) : 18,
                     txt.ptr ? txt.ptr : "no tokenizer entry", txt.ptr ? "'" : "");
            if (isfinite(w) && w >= EMPTY_ROW)
                note(v, ENGINE_SYM_PADDING,
                     "%s, but its output row weighs %.2g of a real row's median RMS (an empty row weighs under %.1f): "
                     "the model itself ranks it, as random-weight models do, so a correct engine picks it too",
                     what, w, EMPTY_ROW);
            else if (isfinite(w))
                add(v, ENGINE_SYM_PADDING,
                    "%s whose output row is empty (%.2g of a real row's median RMS, under %.1f): a correct engine "
                    "cannot rank it first; one reading the wrong lm_head rows, or sampling past the real "
                    "vocabulary (ids below %d), does", what, w, EMPTY_ROW, tok_vocab_n_real(voc));
            else
                add(v, ENGINE_SYM_PADDING, "%s (the vocabulary's real tokens end at id %d)", what, tok_vocab_n_real(voc) - 1);
            return;
        }
}


/* A layer's factor on the residual's RMS needs this many positions besides the first (the attention sink, whose
 * massive activation is a trained model's normal): with fewer, one delimiter's own jump could be the median. */
enum { RMS_POSITIONS_MIN = 3 };

static void judge_rms(const engine_trace *t, int n_prompt, engine_verdict *v)
{
    const int n_pos = engine_trace_positions(t), n_l = engine_trace_layers(t);
    const int p0 = n_prompt > 1 ? 1 : n_prompt;  /* the prompt's positions after the sink */
    char ln[32];
    /* every traced position but the first, prompt and generated alike: a broken layer rescales them all */
    float *ratio = malloc((size_t)(n_pos > 0 ? n_pos : 1) * sizeof(float));
    if (n_pos - 1 < RMS_POSITIONS_MIN)
        note(v, ENGINE_SYM_RMS,
             "a layer's effect on the hidden-state RMS was not judged: %d position%s after the first (the attention "
             "sink), %d needed; a longer prompt or -n gives them", n_pos > 1 ? n_pos - 1 : 0,
             n_pos == 2 ? "" : "s", RMS_POSITIONS_MIN);
    for (int il = 1; ratio && n_pos - 1 >= RMS_POSITIONS_MIN && il < n_l - 1; il++) {
        int k = 0;
        for (int p = 1; p < n_pos; p++) {
            float a = engine_trace_at(t, il - 1, p)->rms, b = engine_trace_at(t, il, p)->rms;
            if (a > 0.0f && isfinite(a) && isfinite(b))
                ratio[k++] = b / a;
        }
        if (k < RMS_POSITIONS_MIN)
            continue;
        qsort(ratio, (size_t)k, sizeof *ratio, cmp_float);
        /* of an even count's two middle values, the one nearer 1 */
        const float lower = ratio[(k - 1) / 2], upper = ratio[k / 2];
        if (lower > 64.0f || upper < 1.0f / 64.0f) {
            add(v, ENGINE_SYM_RMS,
                "layer %d %s the hidden-state RMS %.3gx (median over %d positions after the first): residual blocks "
                "add to the stream, they do not rescale it like this",
                il, lower > 64.0f ? "multiplies" : "divides", lower > 64.0f ? lower : 1.0f / upper, k);
            break;
        }
    }
    free(ratio);
    for (int p = 0; p < n_pos; p++)
        for (int il = 0; il < n_l - 1; il++) {
            const kern_row_stats *r = engine_trace_at(t, il, p);
            if (r->rms == 0.0f && r->max_abs == 0.0f) {
                add(v, ENGINE_SYM_RMS, "the hidden state after layer %d at position %d is all zeros", il, p);
                p = n_pos;
                break;
            }
        }
    if (n_prompt < 1)
        return;
    for (int il = 0; il < n_l; il++) {
        /* The ceiling includes position 0: trained models put massive activations (RMS 10-100x the rest) on the
         * first token and on some later ones (SmolLM2 from layer 2, gemma from layer 0), so a generated token
         * may reach what position 0 shows; the floor leaves it out as the attention sink it is (and is not
         * judged when the prompt is the sink alone). */
        float lo = INFINITY, hi = 0.0f;
        for (int p = 0; p < n_prompt && p < n_pos; p++) {
            float r = engine_trace_at(t, il, p)->rms;
            if (isfinite(r) && p >= p0)
                lo = r < lo ? r : lo;
            if (isfinite(r))
                hi = r > hi ? r : hi;
        }
        if (!(hi > 0.0f))
            continue;
        for (int p = n_prompt; p < n_pos; p++) {
            float r = engine_trace_at(t, il, p)->rms;
            if (isfinite(r) && (r > 8.0f * hi || (isfinite(lo) && r < lo / 8.0f))) {
                add(v, ENGINE_SYM_RMS,
                    "after %s the hidden-state RMS at generated position %d is %.4g, while the prompt's positions "
                    "span %.4g .. %.4g there",
                    layer_name(t, il, ln, sizeof ln), p, r, lo, hi);
                return;
            }
        }
    }
}

static void judge_flat(const engine_trace *t, engine_verdict *v)
{
    size_t run = 0;
    float worst = 0.0f;
    for (size_t i = 1; i < engine_trace_n_steps(t); i++) {
        float c = engine_trace_step_at(t, i)->change;
        if (isfinite(c) && c < 1e-4f) {
            worst = run ? (c > worst ? c : worst) : c;
            if (++run >= 3) {
                add(v, ENGINE_SYM_FLAT_LOGITS,
                    "the logits changed by at most %.2g of their magnitude over %zu consecutive steps (up to step "
                    "%zu): the output does not depend on the input",
                    worst, run + 1, i);
                return;
            }
        } else {
            run = 0;
        }
    }
}

static void judge_lm_head(const engine_spot *sp, engine_verdict *v)
{
    if (sp && sp->checks && sp->mismatches)
        add(v, ENGINE_SYM_LM_HEAD,
            "%d of %d lm_head rows recomputed on the CPU from the file's bytes give other logits (first: row %d at "
            "position %d, %.4g where the file gives %.4g): the logits are wrong in places, whatever the text looks like",
            sp->mismatches, sp->rows, sp->first_row, sp->first_pos, sp->first_backend, sp->first_reference);
}

/* The notes a symptom's rule can leave instead of a finding: their codes and what the summary line calls them. */
static const struct {
    const char *code, *phrase;
} note_kinds[ENGINE_SYM_COUNT] = {
    [ENGINE_SYM_REPETITION] = { "greedy_loop", "a greedy loop" },
    [ENGINE_SYM_PADDING] = { "padding_ranked_by_model", "a padding id the model ranks" },
    [ENGINE_SYM_RMS] = { "layers_not_judged", "too few positions to judge the layers" },
};

const char *engine_note_name(engine_symptom s)
{
    return (unsigned)s < ENGINE_SYM_COUNT && note_kinds[s].code ? note_kinds[s].code : "?";
}

static const char *note_phrase(engine_symptom s)
{
    return (unsigned)s < ENGINE_SYM_COUNT && note_kinds[s].phrase ? note_kinds[s].phrase : "?";
}

void engine_smoke_judge(const engine_trace *t, const tok_vocab *voc, const engine_model *m, const engine_spot *spot,
                        int n_prompt, const int32_t *tokens, size_t n_tokens, engine_verdict *out)
{
    memset(out, 0, sizeof *out);
    judge_nonfinite(t, out);
    judge_repetition(t, voc, tokens, n_tokens, out);
    judge_padding(voc, m, tokens, n_tokens, out);
    judge_rms(t, n_prompt, out);
    judge_flat(t, out);
    judge_lm_head(spot, out);
    out->ok = out->n_findings == 0;
    if (out->ok) {
        if (out->n_notes)
            snprintf(out->summary, sizeof out->summary, "OK: %zu tokens, no NaN/Inf, hidden states and logits "
                     "behave; %d note%s (%s%s%s)", n_tokens, out->n_notes, out->n_notes == 1 ? "" : "s",
                     note_phrase(out->notes[0].symptom), out->n_notes > 1 ? ", " : "",
                     out->n_notes > 1 ? note_phrase(out->notes[1].symptom) : "");
        else
            snprintf(out->summary, sizeof out->summary, "OK: %zu tokens, no NaN/Inf, no repetition, no padding "
                     "tokens, hidden states and logits behave", n_tokens);
    } else {
        size_t at = (size_t)snprintf(out->summary, sizeof out->summary, "FAIL:");
        for (int i = 0; i < out->n_findings && at < sizeof out->summary; i++)
            at += (size_t)snprintf(out->summary + at, sizeof out->summary - at, "%s %s", i ? "," : "",
                                   engine_symptom_name(out->findings[i].symptom));
    }
}
