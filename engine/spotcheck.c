/*
 * The lm_head spot check: after a forward pass on any backend, a sample of
 * vocabulary rows (the first, the last and random ones) is recomputed on the
 * CPU from the file's own bytes and the final norm's output, in double, and
 * compared with the logits the backend produced. It catches the class of bug
 * where most logits are right and scattered rows are garbage (a wrong stride,
 * a bad tile, a transposed read), which a look at the top token may miss.
 */
#include "internal.h"
#include "quant.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void note_bad_row(engine_spot *acc, int32_t row)
{
    for (int i = 0; i < acc->n_bad; i++)
        if (acc->bad_rows[i] == row)
            return;
    if (acc->n_bad < (int)(sizeof acc->bad_rows / sizeof acc->bad_rows[0]))
        acc->bad_rows[acc->n_bad++] = row;
}

engine_status engine_spot_check(engine_ctx *c, const float *logits, int n_rows, uint64_t seed, float tol,
                                engine_spot *acc, engine_error *err)
{
    const engine_model *m = c->m;
    const gguf_tensor *t = m->output.t;
    const int E = m->hp.n_embd, nv = m->hp.n_vocab;
    if (c->last_T < 1)
        return engine_fail(err, ENGINE_E_INPUT, 0, "", "spot check before any forward pass");
    float *h = malloc((size_t)E * 2 * sizeof(float));
    if (!h)
        return engine_fail(err, ENGINE_E_NOMEM, 0, "", "out of memory");
    float *row = h + E;
    kern_status ks = c->be->to_host(c->be, h, c->h + (size_t)(c->last_T - 1) * E, (size_t)E);
    if (ks) {
        free(h);
        return engine_fail(err, ENGINE_E_BACKEND, 0, "", "%s backend: copy of the final norm failed: %s %s",
                           c->be->name, kern_status_name(ks), c->be->last_error(c->be));
    }
    float scale = 0.0f;
    for (int i = 0; i < nv; i++)
        scale = fabsf(logits[i]) > scale ? fabsf(logits[i]) : scale;
    if (!(scale > 0.0f) || !isfinite(scale))
        scale = 1.0f;  /* all-zero or non-finite logits: compare absolutely (NaN rows still differ) */
    const size_t row_bytes = t->size / t->ne[1];
    const gguf_tensor *bias = m->output_b.t; /* phi2's logits' bias, as the forward pass adds it */
    const size_t bias_size = bias ? gguf_type_traits_of(bias->type)->type_size : 0;
    float b = 0.0f;
    uint64_t state = seed ^ ((uint64_t)c->pos << 32);
    if (acc->checks == 0)
        acc->first_pos = -1;
    for (int k = 0; k < n_rows; k++) {
        int32_t r = k == 0 ? 0 : k == 1 ? nv - 1 : (int32_t)(engine_splitmix64(&state) % (uint64_t)nv);
        if (quant_dequantize_row(t->type, t->data + (size_t)r * row_bytes, row, E) != QUANT_OK) {
            free(h);
            return engine_fail(err, ENGINE_E_MODEL, t->info_offset, t->name, "row %d of '%s' cannot be decoded", r,
                               t->name);
        }
        if (bias && quant_dequantize_row(bias->type, bias->data + (size_t)r * bias_size, &b, 1) != QUANT_OK) {
            free(h);
            return engine_fail(err, ENGINE_E_MODEL, bias->info_offset, bias->name, "value %d of '%s' cannot be decoded",
                               r, bias->name);
        }
        double ref = b;
        for (int i = 0; i < E; i++)
            ref += (double)row[i] * h[i];
        if (!m->hp.g.logit_scale_first) /* (MiniCPM3's: h was scaled before the product) */
            ref *= m->hp.logit_scale; /* granite's logit scale, then the final soft-capping, as the forward pass does */
        const double cap = m->hp.final_softcap;
        if (cap > 0.0)
            ref = cap * tanh(ref / cap);
        float rel = (float)(fabs(ref - logits[r]) / scale);
        if (isnan(rel))
            rel = INFINITY;
        acc->rows++;
        if (rel > acc->max_rel)
            acc->max_rel = rel;
        if (rel > tol) {
            acc->mismatches++;
            note_bad_row(acc, r);
            if (acc->first_pos < 0) {
                acc->first_pos = c->pos - 1;
                acc->first_row = r;
                acc->first_backend = logits[r];
                acc->first_reference = (float)ref;
            }
        }
    }
    acc->checks++;
    free(h);
    return ENGINE_OK;
}
