/*
 * The smoke verdict: does this generation look like a working model?
 * Each symptom is judged against the run's own evidence, not fixed magnitudes
 * (Qwen2.5's residual RMS grows 17 -> 85 across layers and that is healthy):
 *   - NaN/Inf anywhere in the traced hidden states or the logits;
 *   - the generation ends in one token or a cycle of up to 4 tokens repeated
 *     over at least max(8, min(32, n/2)) tokens;
 *   - a padding/unused token was generated;
 *   - hidden-state RMS: a layer that multiplies or divides the residual's RMS
 *     by more than 64 (median over prompt positions, position 0 left out as
 *     the usual attention sink), a generated position whose RMS at some layer
 *     is more than 8x above or below every prompt position there, or an
 *     all-zero residual;
 *   - logits that change by less than 1e-4 of their size for 3 steps in a row
 *     (the model is not reading its input: the seed-000 symptom).
 */
#include "vocab.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *engine_symptom_name(engine_symptom s)
{
    static const char *const names[ENGINE_SYM_COUNT] = { "nonfinite", "repetition", "padding_token",
                                                         "hidden_rms", "flat_logits" };
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

static void judge_repetition(const engine_vocab *voc, const int32_t *tok, size_t n, engine_verdict *v)
{
    if (n && engine_vocab_is_eog(voc, tok[n - 1]))
        n--;
    size_t need = n / 2 < 32 ? n / 2 : 32;
    need = need < 8 ? 8 : need;
    if (n < need)
        return;
    for (size_t p = 1; p <= 4 && p < n; p++) {
        size_t run = 0;
        while (run + p < n && tok[n - 1 - run] == tok[n - 1 - run - p])
            run++;
        size_t covered = run + p;
        if (covered < need)
            continue;
        char cyc[160] = "";
        size_t at = 0;
        for (size_t i = 0; i < p; i++) {
            const gguf_str txt = engine_vocab_text(voc, tok[n - p + i]);
            at += (size_t)snprintf(cyc + at, sizeof cyc - at, "%s%d '%.*s'", i ? ", " : "", tok[n - p + i],
                                   txt.ptr ? (int)(txt.len < 20 ? txt.len : 20) : 1, txt.ptr ? txt.ptr : "?");
            if (at >= sizeof cyc)
                break;
        }
        if (p == 1)
            add(v, ENGINE_SYM_REPETITION, "token %s repeated %zu times at the end of %zu generated tokens", cyc,
                covered, n);
        else
            add(v, ENGINE_SYM_REPETITION, "a cycle of %zu tokens [%s] repeated over the last %zu of %zu tokens", p,
                cyc, covered, n);
        return;
    }
}

static bool is_padding(const engine_vocab *voc, int32_t id)
{
    if (id < 0 || id >= voc->n || voc->type[id] == ENGINE_TOK_UNUSED)
        return true;
    const gguf_str *s = &voc->text[id];
    return (s->len >= 4 && !memcmp(s->ptr, "[PAD", 4)) || (s->len == 5 && !memcmp(s->ptr, "<pad>", 5));
}

static void judge_padding(const engine_vocab *voc, const int32_t *tok, size_t n, engine_verdict *v)
{
    for (size_t i = 0; i < n; i++)
        if (is_padding(voc, tok[i])) {
            const gguf_str txt = engine_vocab_text(voc, tok[i]);
            add(v, ENGINE_SYM_PADDING,
                "generated token %zu is id %d (%s%.*s%s), a padding/unused entry (the vocabulary's real tokens "
                "end at id %d)",
                i, tok[i], txt.ptr ? "'" : "", txt.ptr ? (int)(txt.len < 40 ? txt.len : 40) : 18,
                txt.ptr ? txt.ptr : "no tokenizer entry", txt.ptr ? "'" : "", voc->n_real - 1);
            return;
        }
}

static int cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

static void judge_rms(const engine_trace *t, int n_prompt, engine_verdict *v)
{
    const int n_pos = engine_trace_positions(t), n_l = engine_trace_layers(t);
    const int p0 = n_prompt > 2 ? 1 : 0;  /* leave the attention-sink position out when there are others */
    char ln[32];
    float *ratio = malloc((size_t)(n_prompt > 0 ? n_prompt : 1) * sizeof(float));
    for (int il = 1; ratio && il < n_l - 1; il++) {
        int k = 0;
        for (int p = p0; p < n_prompt && p < n_pos; p++) {
            float a = engine_trace_at(t, il - 1, p)->rms, b = engine_trace_at(t, il, p)->rms;
            if (a > 0.0f && isfinite(a) && isfinite(b))
                ratio[k++] = b / a;
        }
        if (!k)
            continue;
        qsort(ratio, (size_t)k, sizeof *ratio, cmp_float);
        float med = ratio[k / 2];
        if (med > 64.0f || med < 1.0f / 64.0f) {
            add(v, ENGINE_SYM_RMS,
                "layer %d %s the hidden-state RMS %.3gx (median over %d prompt positions): residual blocks add to "
                "the stream, they do not rescale it like this",
                il, med > 1.0f ? "multiplies" : "divides", med > 1.0f ? med : 1.0f / med, k);
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
    if (n_prompt - p0 < 1)
        return;
    for (int il = 0; il < n_l; il++) {
        /* The ceiling includes position 0: trained models put massive activations (RMS 10-100x the rest) on the
         * first token and on some later ones (SmolLM2 from layer 2, gemma from layer 0), so a generated token
         * may reach what position 0 shows; the floor leaves it out as the attention sink it is. */
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
            if (isfinite(r) && (r > 8.0f * hi || r < lo / 8.0f)) {
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

void engine_smoke_judge(const engine_trace *t, const engine_vocab *voc, int n_prompt, const int32_t *tokens,
                        size_t n_tokens, engine_verdict *out)
{
    memset(out, 0, sizeof *out);
    judge_nonfinite(t, out);
    judge_repetition(voc, tokens, n_tokens, out);
    judge_padding(voc, tokens, n_tokens, out);
    judge_rms(t, n_prompt, out);
    judge_flat(t, out);
    out->ok = out->n_findings == 0;
    if (out->ok) {
        snprintf(out->summary, sizeof out->summary, "OK: %zu tokens, no NaN/Inf, no repetition, no padding tokens, "
                                                    "hidden states and logits behave", n_tokens);
    } else {
        size_t at = (size_t)snprintf(out->summary, sizeof out->summary, "FAIL:");
        for (int i = 0; i < out->n_findings && at < sizeof out->summary; i++)
            at += (size_t)snprintf(out->summary + at, sizeof out->summary - at, "%s %s", i ? "," : "",
                                   engine_symptom_name(out->findings[i].symptom));
    }
}
