/*
 * The tensors bound in parts, each part a weight of its own that the forward pass reads alone: an experts' 3-D tensor
 * as each expert's matrix (and their biases' rows), latent attention's attn_k_b and attn_v_b as each head's matrix, a
 * fused attn_qkv (and its bias) as q, k and v, a fused ffn_up as the gate and up; and Talkie's q gains, one a head, laid
 * out as the rows the norm reads. model.c binds the rest.
 */
#include "internal.h"
#include "quant.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The n views of t already made in views[0..n) bound into weights[0..n); `part` names one in a failure. */
static engine_status bind_views(engine_model *m, const gguf_tensor *t, int n, gguf_tensor *views, kern_weight *weights,
                                const char *part, engine_error *err)
{
    for (int e = 0; e < n; e++) {
        kern_weight *w = &weights[e];
        w->t = &views[e];
        kern_status ks = m->be->bind(m->be, w);
        if (ks != KERN_OK) {
            w->t = NULL;
            return engine_fail(err, ks == KERN_E_UNSUPPORTED ? ENGINE_E_MODEL : ENGINE_E_BACKEND, t->info_offset,
                               t->name, "binding %s %d of '%s' (%s) on %s failed: %s", part, e, t->name,
                               gguf_type_traits_of(t->type)->name, m->be->name, kern_status_name(ks));
        }
    }
    return ENGINE_OK;
}

/* The n parts of t bound one by one into views[0..n) and weights[0..n): each a row of it (rows: an expert's bias)
 * or a matrix of its outermost axis (an expert's, a head's); `part` names one in a failure ("expert", "head"). */
static engine_status bind_parts(engine_model *m, const gguf_tensor *t, int n, bool rows, gguf_tensor *views,
                                kern_weight *weights, const char *part, engine_error *err)
{
    for (int e = 0; e < n; e++)
        views[e] = rows ? gguf_tensor_rows(t, (uint64_t)e, 1) : gguf_tensor_slice(t, (uint64_t)e);
    return bind_views(m, t, n, views, weights, part, err);
}

/* Each expert of layer il's gate, up and down tensors bound as a matrix, and its row of each of their biases
 * (gpt-oss) as a vector: a token's forward pass reads only the rows of the experts its router picks. */
engine_status engine_bind_experts(engine_model *m, int il, engine_error *err)
{
    engine_layer *L = &m->layers[il];
    const int n = m->hp.n_expert;
    static const model_role roles[ENGINE_EXPERT_PARTS] = {
        [ENGINE_EXPERT_GATE] = MODEL_ROLE_FFN_GATE_EXPS, [ENGINE_EXPERT_UP] = MODEL_ROLE_FFN_UP_EXPS,
        [ENGINE_EXPERT_DOWN] = MODEL_ROLE_FFN_DOWN_EXPS, [ENGINE_EXPERT_GATE_BIAS] = MODEL_ROLE_FFN_GATE_EXPS_BIAS,
        [ENGINE_EXPERT_UP_BIAS] = MODEL_ROLE_FFN_UP_EXPS_BIAS, [ENGINE_EXPERT_DOWN_BIAS] = MODEL_ROLE_FFN_DOWN_EXPS_BIAS,
    };
    const gguf_tensor *gate_up = L->w[MODEL_ROLE_FFN_GATE_UP_EXPS].t; /* Gemma 4: each expert's gate rows, then up */
    if (gate_up && (L->w[MODEL_ROLE_FFN_GATE_EXPS].t || L->w[MODEL_ROLE_FFN_UP_EXPS].t))
        return engine_fail(err, ENGINE_E_MODEL, gate_up->info_offset, gate_up->name,
                           "layer %d has both '%s' and separate experts' gate and up tensors", il, gate_up->name);
    /* experts without a gate (Nemotron-H's: relu(up)^2) where the architecture has none */
    const bool gated = model_role_need_at(&m->hp.g, MODEL_ROLE_FFN_GATE_EXPS, il) != MODEL_NEED_ABSENT;
    if (!gate_up && ((gated && !L->w[MODEL_ROLE_FFN_GATE_EXPS].t) || !L->w[MODEL_ROLE_FFN_UP_EXPS].t)) {
        char name[64];
        snprintf(name, sizeof name, "blk.%d.ffn_gate_up_exps.weight", il);
        return engine_fail(err, ENGINE_E_MODEL, 0, name, "layer %d has neither '%s' nor the experts' gate and up "
                           "tensors apart: a %s model needs one or the other", il, name, m->hp.arch);
    }
    for (int k = 0; k < ENGINE_EXPERT_PARTS; k++) {
        const gguf_tensor *t = L->w[roles[k]].t;
        L->experts[k] = NULL;
        const size_t at = ((size_t)il * ENGINE_EXPERT_PARTS + (size_t)k) * (size_t)n;
        if (gate_up && (k == ENGINE_EXPERT_GATE || k == ENGINE_EXPERT_UP)) { /* the half of each expert's rows */
            const uint64_t F = (uint64_t)m->hp.n_ff_exp;
            for (int e = 0; e < n; e++) {
                const gguf_tensor expert = gguf_tensor_slice(gate_up, (uint64_t)e);
                m->expert_views[at + (size_t)e] = gguf_tensor_rows(&expert, k == ENGINE_EXPERT_UP ? F : 0, F);
            }
            engine_status s = bind_views(m, gate_up, n, &m->expert_views[at], &m->expert_weights[at], "expert", err);
            if (s)
                return s;
            L->experts[k] = &m->expert_weights[at];
            continue;
        }
        if (!t)
            continue; /* biases the file does not have */
        engine_status s = bind_parts(m, t, n, model_role_info_of(roles[k])->expert_rows, &m->expert_views[at],
                                     &m->expert_weights[at], "expert", err);
        if (s)
            return s;
        L->experts[k] = &m->expert_weights[at];
    }
    return ENGINE_OK;
}

/* Each head's matrix of layer il's attn_k_b and attn_v_b bound (latent attention split per head): the query's
 * absorption and the attention output's decompression multiply head by head. */
engine_status engine_bind_heads(engine_model *m, int il, engine_error *err)
{
    engine_layer *L = &m->layers[il];
    const int n = m->hp.n_head;
    static const model_role roles[2] = { MODEL_ROLE_ATTN_K_B, MODEL_ROLE_ATTN_V_B };
    for (int k = 0; k < 2; k++) {
        const size_t at = ((size_t)il * 2 + (size_t)k) * (size_t)n;
        engine_status s = bind_parts(m, L->w[roles[k]].t, n, false, &m->head_views[at], &m->head_weights[at], "head",
                                     err);
        if (s)
            return s;
        L->heads[k] = &m->head_weights[at];
    }
    return ENGINE_OK;
}

/* Binds the rows of a fused tensor as the role it holds; the fused tensor itself is never bound. */
static engine_status bind_part(engine_model *m, engine_layer *L, int part, const gguf_tensor *fused, uint64_t r0,
                               uint64_t n, model_role as, engine_error *err)
{
    L->split[part] = gguf_tensor_rows(fused, r0, n);
    kern_weight *w = &L->w[as];
    w->t = &L->split[part];
    kern_status ks = m->be->bind(m->be, w);
    if (ks == KERN_OK)
        return ENGINE_OK;
    w->t = NULL;
    return engine_fail(err, ks == KERN_E_UNSUPPORTED ? ENGINE_E_MODEL : ENGINE_E_BACKEND, fused->info_offset,
                       fused->name, "binding the %s rows of '%s' (%s) on %s failed: %s",
                       model_role_info_of(as)->name, fused->name, gguf_type_traits_of(fused->type)->name,
                       m->be->name, kern_status_name(ks));
}

/* Values e0 .. e0 + n of a vector of a float type (a fused bias's part), as a tensor of their own. */
static gguf_tensor vector_part(const gguf_tensor *t, uint64_t e0, uint64_t n)
{
    gguf_tensor v = *t;
    const uint64_t size = gguf_type_traits_of(t->type)->type_size;
    v.ne[0] = n;
    v.size = n * size;
    v.n_elements = n;
    v.offset = t->offset + e0 * size;
    v.data = t->data ? t->data + e0 * size : NULL;
    return v;
}

/* A fused attn_qkv.bias's q, k and v parts bound as the separate biases (views split[5..8)). */
static engine_status bind_fused_bias(engine_model *m, engine_layer *L, const gguf_tensor *b, uint64_t q, uint64_t kv,
                                     uint64_t v, engine_error *err)
{
    static const model_role as[3] = { MODEL_ROLE_ATTN_Q_BIAS, MODEL_ROLE_ATTN_K_BIAS, MODEL_ROLE_ATTN_V_BIAS };
    const uint64_t e0[3] = { 0, q, q + kv }, n[3] = { q, kv, v };
    if (gguf_type_traits_of(b->type)->block_size != 1)
        return engine_fail(err, ENGINE_E_MODEL, b->info_offset, b->name, "tensor '%s' is %s: a bias is a float vector",
                           b->name, gguf_type_traits_of(b->type)->name);
    for (int k = 0; k < 3; k++) {
        L->split[5 + k] = vector_part(b, e0[k], n[k]);
        L->w[as[k]].t = &L->split[5 + k];
        const kern_status ks = m->be->bind(m->be, &L->w[as[k]]);
        if (ks != KERN_OK) {
            L->w[as[k]].t = NULL;
            return engine_fail(err, ks == KERN_E_UNSUPPORTED ? ENGINE_E_MODEL : ENGINE_E_BACKEND, b->info_offset,
                               b->name, "binding the %s values of '%s' on %s failed: %s",
                               model_role_info_of(as[k])->name, b->name, m->be->name, kern_status_name(ks));
        }
    }
    return ENGINE_OK;
}

/* A fused attn_qkv's rows bound as attn_q, attn_k and attn_v (the values' rows value_length wide a head; its bias's
 * values as their biases, phi2's); a fused ffn_up's as ffn_gate and ffn_up (phi3: the gate's rows first, as ggml_swiglu
 * reads one fused row). Either way the forward pass sees separate matrices. */
engine_status engine_bind_fused(engine_model *m, int il, engine_error *err)
{
    engine_layer *L = &m->layers[il];
    const engine_hparams *hp = &m->hp;
    const uint64_t q = (uint64_t)L->n_head * L->head_dim, kv = (uint64_t)L->n_kv_head * L->head_dim,
                   v = (uint64_t)L->n_kv_head * L->v_dim, ff = (uint64_t)L->n_ff;
    const gguf_tensor *qkv = L->w[MODEL_ROLE_ATTN_QKV].t, *up = L->w[MODEL_ROLE_FFN_UP].t;
    const gguf_tensor *qkv_b = L->w[MODEL_ROLE_ATTN_QKV_BIAS].t;
    engine_status s = ENGINE_OK;
    if (qkv_b && (!qkv || L->has_bias))
        return engine_fail(err, ENGINE_E_MODEL, qkv_b->info_offset, qkv_b->name,
                           "layer %d has '%s' %s", il, qkv_b->name,
                           qkv ? "and separate q/k/v biases" : "without a fused attn_qkv.weight");
    if (qkv) {
        if (L->w[MODEL_ROLE_ATTN_Q].t || L->w[MODEL_ROLE_ATTN_K].t || L->w[MODEL_ROLE_ATTN_V].t)
            return engine_fail(err, ENGINE_E_MODEL, qkv->info_offset, qkv->name,
                               "layer %d has both '%s' and separate q/k/v projections", il, qkv->name);
        L->w[MODEL_ROLE_ATTN_QKV].t = NULL;
        L->w[MODEL_ROLE_ATTN_QKV_BIAS].t = NULL;
        if ((s = bind_part(m, L, 0, qkv, 0, q, MODEL_ROLE_ATTN_Q, err)) ||
            (s = bind_part(m, L, 1, qkv, q, kv, MODEL_ROLE_ATTN_K, err)) ||
            (s = bind_part(m, L, 2, qkv, q + kv, v, MODEL_ROLE_ATTN_V, err)) ||
            (qkv_b && (s = bind_fused_bias(m, L, qkv_b, q, kv, v, err))))
            return s;
        L->has_bias = qkv_b != NULL || L->has_bias;
    } else if (!L->w[MODEL_ROLE_ATTN_Q].t || !L->w[MODEL_ROLE_ATTN_K].t ||
               (!L->w[MODEL_ROLE_ATTN_V].t && !hp->desc->v_from_k)) {
        char name[64];
        snprintf(name, sizeof name, "blk.%d.attn_qkv.weight", il);
        return engine_fail(err, ENGINE_E_MODEL, 0, name,
                           "layer %d has neither 'attn_qkv.weight' nor all of attn_q, attn_k and attn_v: a %s model "
                           "needs one or the other", il, hp->arch);
    }
    if (up && hp->desc->gate_up_fused) {
        L->w[MODEL_ROLE_FFN_UP].t = NULL;
        if ((s = bind_part(m, L, 3, up, 0, ff, MODEL_ROLE_FFN_GATE, err)) ||
            (s = bind_part(m, L, 4, up, ff, ff, MODEL_ROLE_FFN_UP, err)))
            return s;
    }
    const gguf_tensor *up_shexp = L->w[MODEL_ROLE_FFN_UP_SHEXP].t;
    if (up_shexp && hp->desc->shexp_gate_up_fused) { /* Granite's: the shared expert's gate rows, then its up rows */
        const uint64_t fs = (uint64_t)hp->n_ff_shexp;
        L->w[MODEL_ROLE_FFN_UP_SHEXP].t = NULL;
        if ((s = bind_part(m, L, 8, up_shexp, 0, fs, MODEL_ROLE_FFN_GATE_SHEXP, err)) ||
            (s = bind_part(m, L, 9, up_shexp, fs, fs, MODEL_ROLE_FFN_UP_SHEXP, err)))
            return s;
    }
    return ENGINE_OK;
}

/* Talkie's q gains (model_arch.q_norm_head_gain: attn_q_norm {1, n_head}, which llama.cpp's ggml_mul broadcasts over
 * each head) as rows of head_dim values a head, so that the norm's gains (rows taken in turn) give each head its own;
 * attn_q_norm is bound to them in place of the file's tensor. */
engine_status engine_bind_q_head_gains(engine_model *m, int il, engine_error *err)
{
    engine_layer *L = &m->layers[il];
    kern_weight *w = &L->w[MODEL_ROLE_ATTN_Q_NORM];
    const gguf_tensor *t = w->t;
    if (!m->hp.desc->q_norm_head_gain || !t)
        return ENGINE_OK;
    const size_t H = (size_t)L->n_head, D = (size_t)L->head_dim;
    float *gains = malloc(H * sizeof *gains);
    L->q_gain_rows = malloc(H * D * sizeof *L->q_gain_rows);
    if (!gains || !L->q_gain_rows) {
        free(gains);
        return engine_fail(err, ENGINE_E_NOMEM, 0, "", "out of memory");
    }
    if (quant_dequantize_row(t->type, t->data, gains, (int64_t)H) != QUANT_OK) {
        free(gains);
        return engine_fail(err, ENGINE_E_MODEL, t->info_offset, t->name, "tensor '%s' (%s) cannot be decoded",
                           t->name, gguf_type_traits_of(t->type)->name);
    }
    for (size_t h = 0; h < H; h++)
        for (size_t d = 0; d < D; d++)
            L->q_gain_rows[h * D + d] = gains[h];
    free(gains);
    gguf_tensor *v = &L->q_gain_view;
    *v = *t; /* the file's name and offsets, for messages */
    v->type = GGUF_TENSOR_F32;
    v->n_dims = 2;
    v->ne[0] = D;
    v->ne[1] = H;
    v->n_elements = H * D;
    v->size = H * D * sizeof(float);
    v->data = (const uint8_t *)L->q_gain_rows;
    m->be->unbind(m->be, w);
    *w = (kern_weight){ .t = v };
    const kern_status ks = m->be->bind(m->be, w);
    if (ks != KERN_OK) {
        w->t = NULL;
        return engine_fail(err, ks == KERN_E_NOMEM ? ENGINE_E_NOMEM : ENGINE_E_BACKEND, t->info_offset, t->name,
                           "binding '%s' on %s failed: %s", t->name, m->be->name, kern_status_name(ks));
    }
    return ENGINE_OK;
}
