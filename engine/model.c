/*
 * Binding a file's tensors to the roles of the llama/qwen2 graph, with every
 * shape checked against the hyperparameters before anything runs.
 * Tensor names: llama.cpp's (token_embd, blk.N.attn_q, ..., output).
 */
#include "internal.h"
#include "quant.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Finds `name`, checks it is (ne0, ne1) (ne1 = 0 for a vector) and binds it. */
static engine_status bind(engine_model *m, kern_weight *w, const char *name, int64_t ne0, int64_t ne1, bool required,
                          engine_error *err)
{
    const gguf_tensor *t = gguf_find_tensor(m->f, name);
    memset(w, 0, sizeof *w);
    if (!t) {
        if (!required)
            return ENGINE_OK;
        return engine_fail(err, ENGINE_E_MODEL, 0, name, "tensor '%s' is missing: a %s model needs it", name,
                           m->hp.arch);
    }
    bool ok = ne1 == 0 ? t->n_elements == (uint64_t)ne0
                       : t->ne[0] == (uint64_t)ne0 && t->ne[1] == (uint64_t)ne1 && t->ne[2] == 1 && t->ne[3] == 1;
    if (!ok) {
        char want[64];
        if (ne1)
            snprintf(want, sizeof want, "[%lld, %lld]", (long long)ne0, (long long)ne1);
        else
            snprintf(want, sizeof want, "[%lld]", (long long)ne0);
        return engine_fail(err, ENGINE_E_MODEL, t->info_offset, name,
                           "tensor '%s' has shape [%llu, %llu, %llu, %llu], the hyperparameters need %s", name,
                           (unsigned long long)t->ne[0], (unsigned long long)t->ne[1], (unsigned long long)t->ne[2],
                           (unsigned long long)t->ne[3], want);
    }
    w->t = t;
    kern_status ks = m->be->bind(m->be, w);
    if (ks == KERN_E_UNSUPPORTED)
        return engine_fail(err, ENGINE_E_MODEL, t->info_offset, name,
                           "tensor '%s' is %s, which the %s backend cannot compute with", name,
                           gguf_type_traits_of(t->type)->name, m->be->name);
    if (ks != KERN_OK)
        return engine_fail(err, ENGINE_E_BACKEND, t->info_offset, name, "binding '%s' on %s failed: %s", name,
                           m->be->name, kern_status_name(ks));
    return ENGINE_OK;
}

static engine_status bind_layer(engine_model *m, int il, engine_error *err)
{
    const engine_hparams *hp = &m->hp;
    kern_weight *w = m->layers[il].w;
    const int64_t E = hp->n_embd, q_dim = (int64_t)hp->n_head * hp->head_dim,
                  kv_dim = (int64_t)hp->n_kv_head * hp->head_dim;
    char n[LW_COUNT][96];
    static const char *const suffix[LW_COUNT] = { "attn_norm.weight", "attn_q.weight", "attn_k.weight", "attn_v.weight",
                               "attn_output.weight", "ffn_norm.weight", "ffn_gate.weight", "ffn_up.weight",
                               "ffn_down.weight", "attn_q.bias", "attn_k.bias", "attn_v.bias" };
    for (int i = 0; i < LW_COUNT; i++)
        snprintf(n[i], sizeof n[i], "blk.%d.%s", il, suffix[i]);
    const int64_t F = hp->n_ff;
    bool qwen = !strcmp(hp->arch, "qwen2");
    /* (ne0, ne1) of each; ne1 = 0 for vectors. Biases are required for qwen2 only. */
    const int64_t shape[LW_COUNT][2] = { { E, 0 },     { E, q_dim }, { E, kv_dim }, { E, kv_dim },
                                         { q_dim, E }, { E, 0 },     { E, F },      { E, F },
                                         { F, E },     { q_dim, 0 }, { kv_dim, 0 }, { kv_dim, 0 } };
    for (int i = 0; i < LW_COUNT; i++) {
        bool required = i < LW_BQ || qwen;
        engine_status s = bind(m, &w[i], n[i], shape[i][0], shape[i][1], required, err);
        if (s)
            return s;
    }
    m->layers[il].has_bias = w[LW_BQ].t && w[LW_BK].t && w[LW_BV].t;
    if (!m->layers[il].has_bias && (w[LW_BQ].t || w[LW_BK].t || w[LW_BV].t))
        return engine_fail(err, ENGINE_E_MODEL, 0, n[9], "layer %d has only some of the q/k/v biases", il);
    return ENGINE_OK;
}

static void unbind_all(engine_model *m)
{
    kern_weight *globals[] = { &m->tok_embd, &m->output_norm, &m->output };
    for (size_t i = 0; i < 3; i++)
        if (globals[i]->t && !(i == 2 && m->hp.tied_output))
            m->be->unbind(m->be, globals[i]);
    for (int il = 0; m->layers && il < m->hp.n_layer; il++) {
        kern_weight *w = m->layers[il].w;
        for (int i = 0; i < LW_COUNT; i++)
            if (w[i].t)
                m->be->unbind(m->be, &w[i]);
    }
}

void engine_model_free(engine_model *m)
{
    if (!m)
        return;
    unbind_all(m);
    free(m->layers);
    free(m->freq_factors);
    free(m);
}

engine_status engine_model_load(const gguf_file *f, kern_backend *b, engine_model **out, engine_error *err)
{
    *out = NULL;
    engine_model *m = calloc(1, sizeof *m);
    if (!m)
        return engine_fail(err, ENGINE_E_NOMEM, 0, "", "out of memory");
    m->f = f;
    m->be = b;
    engine_status s = engine_hparams_read(f, &m->hp, err);
    if (s)
        goto fail;
    engine_hparams *hp = &m->hp;
    const gguf_tensor *embd = gguf_find_tensor(f, "token_embd.weight");
    if (!embd) {
        s = engine_fail(err, ENGINE_E_MODEL, 0, "token_embd.weight", "tensor 'token_embd.weight' is missing");
        goto fail;
    }
    hp->n_vocab = (int)embd->ne[1];
    const gguf_tensor *gate0 = gguf_find_tensor(f, "blk.0.ffn_gate.weight");
    if (hp->n_ff == 0 && gate0)
        hp->n_ff = (int)gate0->ne[1];
    m->layers = calloc((size_t)hp->n_layer, sizeof *m->layers);
    if (!m->layers) {
        s = engine_fail(err, ENGINE_E_NOMEM, 0, "", "out of memory");
        goto fail;
    }
    if ((s = bind(m, &m->tok_embd, "token_embd.weight", hp->n_embd, hp->n_vocab, true, err)) ||
        (s = bind(m, &m->output_norm, "output_norm.weight", hp->n_embd, 0, true, err)) ||
        (s = bind(m, &m->output, "output.weight", hp->n_embd, hp->n_vocab, false, err)))
        goto fail;
    if (!m->output.t) {
        hp->tied_output = true;
        m->output = m->tok_embd;
    }
    for (int il = 0; il < hp->n_layer; il++)
        if ((s = bind_layer(m, il, err)))
            goto fail;
    hp->qkv_bias = m->layers[0].has_bias;
    const gguf_tensor *ff = gguf_find_tensor(f, "rope_freqs.weight");
    if (ff) {
        int64_t half = hp->rope.n_rot / 2;
        m->freq_factors = malloc((size_t)half * sizeof(float));
        if (ff->n_elements != (uint64_t)half || !m->freq_factors ||
            quant_dequantize_row(ff->type, ff->data, m->freq_factors, half) != QUANT_OK) {
            s = engine_fail(err, ENGINE_E_MODEL, ff->info_offset, "rope_freqs.weight",
                            "rope_freqs.weight has %llu values, rotary needs %lld factors",
                            (unsigned long long)ff->n_elements, (long long)half);
            goto fail;
        }
        hp->rope.freq_factors = m->freq_factors;
        hp->freq_factors = true;
    }
    *out = m;
    return ENGINE_OK;
fail:
    engine_model_free(m);
    return s;
}

const engine_hparams *engine_model_hparams(const engine_model *m)
{
    return &m->hp;
}

kern_backend *engine_model_backend(const engine_model *m)
{
    return m->be;
}

uint64_t engine_model_bytes_per_token(const engine_model *m)
{
    uint64_t total = m->tok_embd.t->size / m->tok_embd.t->ne[1] + m->output.t->size + m->output_norm.t->size;
    for (int il = 0; il < m->hp.n_layer; il++) {
        const kern_weight *w = m->layers[il].w;
        for (int i = 0; i < LW_COUNT; i++)
            total += w[i].t ? w[i].t->size : 0;
    }
    return total;
}
