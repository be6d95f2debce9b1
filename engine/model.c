/*
 * Binding a file's tensors to the roles its architecture's entry lists
 * (model/arch.c), with every shape checked against the hyperparameters before
 * anything runs. Tensor names: llama.cpp's (token_embd, blk.N.attn_q, ..., output).
 */
#include "internal.h"
#include "act_xielu.h"
#include "quant.h"

#include <math.h>
#include <stdio.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* Finds `name`, checks its shape against the role's (model/arch.c) and binds it;
 * an absent tensor is an error only when the architecture requires the role. */
static engine_status bind(engine_model *m, kern_weight *w, const char *name, model_role role, int il,
                          const model_hparams *dims, engine_error *err)
{
    const gguf_tensor *t = gguf_tensor_by_name(m->f, name);
    const model_role_info *ri = model_role_info_of(role);
    memset(w, 0, sizeof *w);
    if (!t) {
        if (model_role_need_at(&m->hp.g, role, il) != MODEL_NEED_REQUIRED)
            return ENGINE_OK;
        return engine_fail(err, ENGINE_E_MODEL, 0, name, "tensor '%s' (%s) is missing: a %s model needs it", name,
                           ri->what, m->hp.arch);
    }
    int64_t ne[3];
    model_role_shape_at(dims, ri, il, ne);
    const int64_t ne0 = ne[0], ne1 = ne[1], ne2 = ne[2];
    bool ok = ri->ne1 == MODEL_DIM_NONE ? t->n_elements == (uint64_t)ne0
                                       : t->ne[0] == (uint64_t)ne0 && t->ne[1] == (uint64_t)ne1 &&
                                             t->ne[2] == (uint64_t)ne2 && t->ne[3] == 1;
    if (!ok) {
        char want[200];
        if (ri->ne2 != MODEL_DIM_NONE)
            snprintf(want, sizeof want, "[%lld, %lld, %lld] (%s, %s, %s)", (long long)ne0, (long long)ne1,
                     (long long)ne2, model_dim_name(ri->ne0), model_dim_name(ri->ne1), model_dim_name(ri->ne2));
        else if (ri->ne1 != MODEL_DIM_NONE && !(ri->norm && ne1 == 1)) /* (a norm's one row of gains: a vector) */
            snprintf(want, sizeof want, "[%lld, %lld] (%s, %s)", (long long)ne0, (long long)ne1,
                     model_dim_name(ri->ne0), model_dim_name(ri->ne1));
        else
            snprintf(want, sizeof want, "[%lld] (%s)", (long long)ne0, model_dim_name(ri->ne0));
        return engine_fail(err, ENGINE_E_MODEL, t->info_offset, name,
                           "tensor '%s' has shape [%llu, %llu, %llu, %llu], the hyperparameters of this %s model "
                           "need %s", name, (unsigned long long)t->ne[0], (unsigned long long)t->ne[1],
                           (unsigned long long)t->ne[2], (unsigned long long)t->ne[3], m->hp.arch, want);
    }
    if (!t->data) /* only from gguf_open_partial */
        return engine_fail(err, ENGINE_E_MODEL, t->info_offset, name,
                           "tensor '%s' is not all in the file: the file is truncated", name);
    w->t = t;
    if (ri->ne2 != MODEL_DIM_NONE || ri->expert_rows || (role == MODEL_ROLE_ATTN_QKV && !m->hp.delta_net) ||
        role == MODEL_ROLE_ATTN_QKV_BIAS || (role == MODEL_ROLE_FFN_UP && m->hp.desc->gate_up_fused) ||
        (role == MODEL_ROLE_FFN_UP_SHEXP && m->hp.desc->shexp_gate_up_fused))
        return ENGINE_OK; /* an experts' or a fused tensor: its parts are bound (model_parts.c) */
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

/* Layer il's vector of n values (role r) that the host reads: decoded once into *out (NULL where the file has none).
 * The selection bias (exp_probs_b) of the routing; Gemma 4's experts' output scales and router's input gains. */
static engine_status load_host_vector(engine_model *m, int il, model_role r, int n, float **out, engine_error *err)
{
    const gguf_tensor *t = m->layers[il].w[r].t;
    if (!t)
        return ENGINE_OK;
    *out = malloc((size_t)n * sizeof(float));
    if (!*out)
        return engine_fail(err, ENGINE_E_NOMEM, 0, "", "out of memory");
    if (quant_dequantize_row(t->type, t->data, *out, n) != QUANT_OK)
        return engine_fail(err, ENGINE_E_MODEL, t->info_offset, t->name, "tensor '%s' (%s) cannot be decoded",
                           t->name, gguf_type_traits_of(t->type)->name);
    return ENGINE_OK;
}

/* Layer il's output scale (layer_output_scale: one value), which the forward pass multiplies by on the host's word:
 * decoded once into L->out_scale (1 without: Gemma 4's factor on the layer's output), or L->embd_skip_scale (Talkie's
 * weight of the normed embeddings added to it: model_arch.embd_skip). */
static engine_status load_out_scale(engine_model *m, int il, engine_error *err)
{
    engine_layer *L = &m->layers[il];
    const gguf_tensor *t = L->w[MODEL_ROLE_LAYER_OUT_SCALE].t;
    float *into = m->hp.desc->embd_skip ? &L->embd_skip_scale : &L->out_scale;
    L->out_scale = 1.0f;
    L->embd_skip_scale = 0.0f;
    if (t && quant_dequantize_row(t->type, t->data, into, 1) != QUANT_OK)
        return engine_fail(err, ENGINE_E_MODEL, t->info_offset, t->name, "tensor '%s' (%s) cannot be decoded",
                           t->name, gguf_type_traits_of(t->type)->name);
    if (!isfinite(*into))
        return engine_fail(err, ENGINE_E_MODEL, t->info_offset, t->name, "tensor '%s' is %g: a layer's output scale "
                           "must be a finite number", t->name, (double)*into);
    return ENGINE_OK;
}

/* The optional parts of layer il that come in pairs: q's norm and k's (MPT's qk_ln has both or neither; a layer reading
 * an earlier layer's cache has no keys to norm), and a norm's bias with its gains. AWQ's activation scales
 * (ffn.act.scales: the activation divided by them) are not run here: refused by name rather than run without. */
static engine_status check_optional_parts(const engine_model *m, int il, engine_error *err)
{
    const engine_layer *L = &m->layers[il];
    const kern_weight *w = L->w;
    const gguf_tensor *awq = w[MODEL_ROLE_FFN_ACT_SCALES].t;
    if (awq)
        return engine_fail(err, ENGINE_E_ARCH, awq->info_offset, awq->name, "tensor '%s' holds AWQ activation scales "
                           "(the feed-forward activation divided by them): gguf-run does not run them", awq->name);
    const gguf_tensor *q = w[MODEL_ROLE_ATTN_Q_NORM].t, *k = w[MODEL_ROLE_ATTN_K_NORM].t;
    if (L->kv_src == il && !q != !k && !m->hp.desc->q_norm_head_gain) /* (Talkie's k has no gains) */
        return engine_fail(err, ENGINE_E_MODEL, (q ? q : k)->info_offset, (q ? q : k)->name,
                           "layer %d has '%s' without its %s norm: q and k are normed together", il, (q ? q : k)->name,
                           q ? "key" : "query");
    static const model_role pairs[2][2] = { { MODEL_ROLE_ATTN_Q_NORM_BIAS, MODEL_ROLE_ATTN_Q_NORM },
                                            { MODEL_ROLE_ATTN_K_NORM_BIAS, MODEL_ROLE_ATTN_K_NORM } };
    for (int i = 0; i < 2; i++)
        if (w[pairs[i][0]].t && !w[pairs[i][1]].t)
            return engine_fail(err, ENGINE_E_MODEL, w[pairs[i][0]].t->info_offset, w[pairs[i][0]].t->name,
                               "layer %d has '%s' without the norm's gains (%s)", il, w[pairs[i][0]].t->name,
                               model_role_info_of(pairs[i][1])->name);
    return ENGINE_OK;
}

static engine_status bind_layer(engine_model *m, int il, const model_hparams *dims, engine_error *err)
{
    engine_layer *L = &m->layers[il];
    model_hparams shape;
    model_hparams_layer(dims, il, &shape);
    L->n_head = (int)shape.n_head;
    L->n_kv_head = (int)shape.n_head_kv;
    L->head_dim = (int)shape.head_dim_k;
    L->v_dim = (int)shape.head_dim_v;
    L->n_ff = (int)shape.n_ff;
    if (m->hp.act_xielu)
        L->xielu = kern_xielu_of(shape.xielu[0], shape.xielu[1], shape.xielu[2], shape.xielu[3]);
    L->expert_clamp = shape.swiglu_clamp_exp > 1e-6f ? shape.swiglu_clamp_exp : 0.0f; /* llama.cpp's eps */
    L->shexp_clamp = shape.swiglu_clamp_shexp > 1e-6f ? shape.swiglu_clamp_shexp : 0.0f;
    L->kv_src = (int)model_hparams_layer_kv_source(dims, il);
    for (int r = MODEL_ROLE_FIRST_LAYER_ROLE; r < MODEL_ROLE_COUNT; r++) {
        if (!model_role_info_of((model_role)r)->per_layer ||
            model_role_need_at(&m->hp.g, (model_role)r, il) == MODEL_NEED_ABSENT)
            continue;
        char name[96];
        snprintf(name, sizeof name, "blk.%d.%s", il, model_role_name(m->hp.desc, (model_role)r));
        engine_status s = bind(m, &L->w[r], name, (model_role)r, il, dims, err);
        if (s)
            return s;
    }
    const kern_weight *w = L->w;
    L->gate_heads = w[MODEL_ROLE_ATTN_GATE].t && shape.attn_gate_heads;
    L->has_bias = w[MODEL_ROLE_ATTN_Q_BIAS].t && w[MODEL_ROLE_ATTN_K_BIAS].t && w[MODEL_ROLE_ATTN_V_BIAS].t;
    if (!L->has_bias && (w[MODEL_ROLE_ATTN_Q_BIAS].t || w[MODEL_ROLE_ATTN_K_BIAS].t || w[MODEL_ROLE_ATTN_V_BIAS].t))
        return engine_fail(err, ENGINE_E_MODEL, 0, "", "layer %d has only some of the q/k/v biases", il);
    engine_status s = check_optional_parts(m, il, err);
    if (s)
        return s;
    L->swa = model_hparams_layer_is_swa(&m->hp.g, il);
    L->no_rope = !model_hparams_layer_rotates(&m->hp.g, il);
    if (model_hparams_layer_has_state(&m->hp.g, il)) { /* one more than the nearest layer before with a state */
        int before = 0;
        for (int j = il - 1; j >= 0 && !before; j--)
            before = m->layers[j].state;
        L->state = before + 1;
        L->recurrent = model_hparams_layer_is_recurrent(&m->hp.g, il) ? L->state : 0;
    }
    L->ffn = model_hparams_layer_has_ffn(&m->hp.g, il);
    L->mixer = model_hparams_layer_has_attention(&m->hp.g, il);
    L->linear = L->mixer && m->hp.desc->blocks_by_width && !model_hparams_layer_has_kv_heads(&m->hp.g, il);
    if (L->linear)
        L->n_kv_head = 0; /* no keys or values to keep */
    if (m->hp.desc->single_block && !L->mixer) { /* Nemotron-H's feed-forward layer: its one norm (attn_norm) is the
                                                 * block's input norm */
        L->w[MODEL_ROLE_FFN_NORM] = L->w[MODEL_ROLE_ATTN_NORM];
        L->w[MODEL_ROLE_ATTN_NORM] = (kern_weight){ 0 };
    }
    const model_role ffn_norm_from = m->hp.desc->ffn_norm_from; /* gpt-oss's post_attention_norm, DBRX's
                                                                  * attn_output_norm: the feed-forward input norm */
    if (ffn_norm_from) {
        L->w[MODEL_ROLE_FFN_NORM] = L->w[ffn_norm_from];
        L->w[ffn_norm_from] = (kern_weight){ 0 };
    }
    const model_role post_from = m->hp.desc->attn_post_norm_from, post_or = m->hp.desc->ffn_post_norm_or;
    if (post_from) { /* Grok's attn_output_norm: the attention's post norm */
        L->w[MODEL_ROLE_ATTN_POST_NORM] = L->w[post_from];
        L->w[post_from] = (kern_weight){ 0 };
    }
    if (post_or && L->w[post_or].t) { /* Grok-1's layer_output_norm: the feed-forward block's post norm */
        L->w[MODEL_ROLE_FFN_POST_NORM] = L->w[post_or];
        L->w[post_or] = (kern_weight){ 0 };
    } else if (post_or && !L->w[MODEL_ROLE_FFN_POST_NORM].t) {
        char name[96];
        snprintf(name, sizeof name, "blk.%d.%s", il, model_role_info_of(MODEL_ROLE_FFN_POST_NORM)->name);
        return engine_fail(err, ENGINE_E_MODEL, 0, name,
                           "tensor '%s' is not in the file, nor blk.%d.%s in its place: a %s model norms the "
                           "feed-forward block's output (llama.cpp requires one)", name, il,
                           model_role_info_of(post_or)->name, m->hp.arch);
    }
    const kern_weight *sinks = &L->w[MODEL_ROLE_ATTN_SINKS];
    if (sinks->t && sinks->t->type != GGUF_TENSOR_F32) /* llama.cpp's soft_max_ext asserts F32 sinks */
        return engine_fail(err, ENGINE_E_MODEL, sinks->t->info_offset, sinks->t->name,
                           "tensor '%s' is %s: attention sinks must be F32 (llama.cpp asserts it)", sinks->t->name,
                           gguf_type_traits_of(sinks->t->type)->name);
    if (L->recurrent && m->hp.delta_net && !(w[MODEL_ROLE_ATTN_QKV].t && w[MODEL_ROLE_ATTN_GATE].t) &&
        !w[MODEL_ROLE_SSM_IN].t) {
        char name[64];
        snprintf(name, sizeof name, "blk.%d.attn_qkv.weight", il);
        return engine_fail(err, ENGINE_E_MODEL, 0, name,
                           "layer %d has neither attn_qkv and attn_gate nor ssm_in: a %s model's delta net needs q, k, "
                           "v and z from one or the other", il, m->hp.arch);
    }
    if ((s = load_out_scale(m, il, err)) || (s = engine_bind_q_head_gains(m, il, err)))
        return s;
    s = m->hp.mla ? (m->hp.mla_split ? engine_bind_heads(m, il, err) : ENGINE_OK)
                      : L->recurrent || !L->mixer || L->linear ? ENGINE_OK /* a delta net's attn_qkv is one product */
                                     : engine_bind_fused(m, il, err);
    if (s)
        return s;
    if (!L->w[MODEL_ROLE_FFN_GATE_INP].t) /* a dense model, or a mixture's leading dense layer */
        return engine_load_weight_scales(m, il, err);
    engine_layer *Lm = &m->layers[il];
    if ((s = load_host_vector(m, il, MODEL_ROLE_FFN_EXP_PROBS_B, m->hp.n_expert, &Lm->select_bias, err)) ||
        (s = load_host_vector(m, il, MODEL_ROLE_FFN_DOWN_EXPS_SCALE, m->hp.n_expert, &Lm->down_scale, err)) ||
        (s = load_host_vector(m, il, MODEL_ROLE_FFN_GATE_INP_SCALE, m->hp.n_embd, &Lm->router_scale, err)))
        return s;
    if ((s = engine_bind_experts(m, il, err)))
        return s;
    return engine_load_weight_scales(m, il, err);
}

/* A looped model's later passes (engine_hparams.n_block): each layer past the blocks a copy of its block's binding,
 * the weights shared, its cache its own. */
static void share_blocks(engine_model *m)
{
    for (int il = m->hp.n_block; il < m->hp.n_layer; il++) {
        const int block = (int)model_hparams_layer_block(&m->hp.g, il);
        m->layers[il] = m->layers[block];
        m->layers[il].kv_src = il - block + m->layers[block].kv_src;
        /* without the per-tensor scales: llama.cpp's loader copies the blocks first, then looks for each layer's
         * blk.N.W.scale, which the file has only for its own blocks (Nanbeige's later passes run unscaled there) */
        for (int r = 0; r < MODEL_ROLE_COUNT; r++)
            m->layers[il].w[r].scaled = false;
    }
}

/* Whether name is a tensor of the trailing multi-token prediction blocks (nextn_predict_layers: blk.N.* with N from
 * the generating layers' count to block_count), which llama.cpp loads and generation does not run. */
static bool prediction_block_tensor(const engine_model *m, const char *name)
{
    char *end;
    if (strncmp(name, "blk.", 4) != 0 || name[4] < '0' || name[4] > '9')
        return false;
    const long long l = strtoll(name + 4, &end, 10);
    return *end == '.' && l >= m->hp.n_block && l < m->hp.g.n_layer;
}


/* Every tensor of the file must be one the architecture reads: llama.cpp refuses
 * a file with tensors it does not load ("wrong number of tensors"), and a file
 * whose tensors say another architecture is one an engine would run wrong. */
static engine_status check_no_stray_tensors(const engine_model *m, engine_error *err)
{
    for (size_t i = 0; i < gguf_tensor_count(m->f); i++) {
        const gguf_tensor *t = gguf_tensor_at(m->f, i);
        int64_t layer;
        model_role r = model_role_of_name(t->name, &layer);
        if (r != MODEL_ROLE_COUNT && model_role_need_at(&m->hp.g, r, layer) != MODEL_NEED_ABSENT &&
            layer < m->hp.n_block)
            continue;
        const size_t len = strlen(t->name);
        const bool scale_name = (len > 6 && !strcmp(t->name + len - 6, ".scale")) ||
                                (len > 12 && !strcmp(t->name + len - 12, ".input_scale"));
        /* llama.cpp's loaders skip a prediction block's weights unless multi-token prediction is asked for (load_mtp,
         * off by default), so the generic pass makes no scale beside them: one in the file is a tensor not loaded */
        if (prediction_block_tensor(m, t->name) && scale_name)
            return engine_fail(err, ENGINE_E_MODEL, t->info_offset, t->name,
                               "tensor '%s' is a per-tensor scale in a prediction block, whose weights llama.cpp's %s "
                               "loader skips unless asked for multi-token prediction: llama.cpp would refuse this file "
                               "(wrong number of tensors)", t->name, m->hp.arch);
        if (prediction_block_tensor(m, t->name))
            continue;
        const engine_scale_kind scale = engine_weight_scale_of(m, t);
        if (scale == ENGINE_SCALE_RUN || scale == ENGINE_SCALE_UNREAD)
            continue;
        if (scale == ENGINE_SCALE_NOT_RUN)
            return engine_fail(err, ENGINE_E_ARCH, t->info_offset, t->name,
                               "tensor '%s' is a per-tensor scale, which llama.cpp's loader takes beside that weight "
                               "in any architecture and a %s graph may multiply its products by; gguf-run does not "
                               "run it yet", t->name, m->hp.arch);
        return engine_fail(err, ENGINE_E_MODEL, t->info_offset, t->name,
                           "tensor '%s' is not part of a %s model%s: llama.cpp would refuse this file (wrong number "
                           "of tensors)", t->name, m->hp.arch,
                           r != MODEL_ROLE_COUNT && layer >= m->hp.n_block ? " of this block_count" : "");
    }
    return ENGINE_OK;
}

/* The weights outside the layers some architectures have, each with its role: Gemma 4 E2B / E4B's per-layer inputs,
 * the final norm's bias (StarCoder2), the logits' (phi2), learned positions (GPT-2), the embeddings' norm (BLOOM). */
static const struct {
    size_t slot; /* offsetof(engine_model, ...) */
    model_role role;
} optional_globals[] = {
    { offsetof(engine_model, ple_embd), MODEL_ROLE_PER_LAYER_TOKEN_EMBD },
    { offsetof(engine_model, ple_proj), MODEL_ROLE_PER_LAYER_MODEL_PROJ },
    { offsetof(engine_model, ple_norm), MODEL_ROLE_PER_LAYER_PROJ_NORM },
    { offsetof(engine_model, output_norm_b), MODEL_ROLE_OUTPUT_NORM_BIAS },
    { offsetof(engine_model, output_b), MODEL_ROLE_OUTPUT_BIAS },
    { offsetof(engine_model, pos_embd), MODEL_ROLE_POS_EMBD },
    { offsetof(engine_model, embd_norm), MODEL_ROLE_TOKEN_EMBD_NORM },
    { offsetof(engine_model, embd_norm_b), MODEL_ROLE_TOKEN_EMBD_NORM_BIAS },
};
enum { N_OPTIONAL_GLOBALS = sizeof optional_globals / sizeof optional_globals[0], N_GLOBALS = 3 + N_OPTIONAL_GLOBALS };

/* Global weight i of N_GLOBALS: the token embedding, the final norm, the output, then optional_globals' */
static kern_weight *global_slot(engine_model *m, size_t i)
{
    kern_weight *always[3] = { &m->tok_embd, &m->output_norm, &m->output };
    return i < 3 ? always[i] : (kern_weight *)((char *)m + optional_globals[i - 3].slot);
}

static void unbind_all(engine_model *m)
{
    for (size_t i = 0; i < N_GLOBALS; i++) {
        kern_weight *g = global_slot(m, i);
        if (g->t && !(g == &m->output && m->hp.tied_output))
            m->be->unbind(m->be, g);
    }
    for (int il = 0; m->layers && il < m->hp.n_block; il++) { /* (a looped model's later layers share them) */
        kern_weight *w = m->layers[il].w;
        for (int r = 0; r < MODEL_ROLE_COUNT; r++)
            if (w[r].t && model_role_info_of((model_role)r)->ne2 == MODEL_DIM_NONE &&
                !model_role_info_of((model_role)r)->expert_rows)
                m->be->unbind(m->be, &w[r]);
    }
    const size_t n_experts =
        m->expert_weights ? (size_t)m->hp.n_layer * ENGINE_EXPERT_PARTS * (size_t)m->hp.n_expert : 0;
    for (size_t i = 0; i < n_experts; i++)
        if (m->expert_weights[i].t)
            m->be->unbind(m->be, &m->expert_weights[i]);
    const size_t n_heads = m->head_weights ? (size_t)m->hp.n_layer * 2 * (size_t)m->hp.n_head : 0;
    for (size_t i = 0; i < n_heads; i++)
        if (m->head_weights[i].t)
            m->be->unbind(m->be, &m->head_weights[i]);
}

void engine_model_free(engine_model *m)
{
    if (!m)
        return;
    unbind_all(m);
    for (int il = 0; m->layers && il < m->hp.n_block; il++)
        free(m->layers[il].select_bias), free(m->layers[il].down_scale), free(m->layers[il].router_scale),
            free(m->layers[il].q_gain_rows);
    free(m->layers);
    free(m->expert_views);
    free(m->expert_weights);
    free(m->head_views);
    free(m->head_weights);
    free(m->freq_factors);
    free(m->rope_long);
    free(m->rope_short);
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
    const gguf_tensor *embd = gguf_tensor_by_name(f, "token_embd.weight");
    if (!embd) {
        s = gguf_tensor_count(f) == 0
                ? engine_fail(err, ENGINE_E_MODEL, 0, "token_embd.weight",
                              "the file holds no tensors (a vocabulary-only file, as llama.cpp's ggml-vocab-*.gguf): "
                              "it can tokenize but has no weights to run")
                : engine_fail(err, ENGINE_E_MODEL, 0, "token_embd.weight", "tensor 'token_embd.weight' is missing");
        goto fail;
    }
    if (embd->ne[1] > INT32_MAX || embd->ne[1] < 1) {
        s = engine_fail(err, ENGINE_E_MODEL, embd->info_offset, "token_embd.weight",
                        "tensor 'token_embd.weight' has %llu rows: not a vocabulary an engine can index",
                        (unsigned long long)embd->ne[1]);
        goto fail;
    }
    hp->n_vocab = (int)embd->ne[1];
    /* shapes are checked in the embedding's rows and the n_ff in use */
    model_hparams dims = hp->g;
    dims.n_vocab = hp->n_vocab;
    dims.n_ff = hp->n_ff;
    m->layers = calloc((size_t)hp->n_layer, sizeof *m->layers);
    if (hp->n_expert > 0) {
        const size_t n = (size_t)hp->n_layer * ENGINE_EXPERT_PARTS * (size_t)hp->n_expert;
        m->expert_views = calloc(n, sizeof *m->expert_views);
        m->expert_weights = calloc(n, sizeof *m->expert_weights);
    }
    if (hp->mla_split) {
        const size_t n = (size_t)hp->n_layer * 2 * (size_t)hp->n_head;
        m->head_views = calloc(n, sizeof *m->head_views);
        m->head_weights = calloc(n, sizeof *m->head_weights);
    }
    if (!m->layers || (hp->n_expert > 0 && (!m->expert_views || !m->expert_weights)) ||
        (hp->mla_split && (!m->head_views || !m->head_weights))) {
        s = engine_fail(err, ENGINE_E_NOMEM, 0, "", "out of memory");
        goto fail;
    }
    /* LFM2's converter names the final norm token_embd_norm */
    const model_role final_norm = hp->desc->final_norm_embd_named ? MODEL_ROLE_TOKEN_EMBD_NORM : MODEL_ROLE_OUTPUT_NORM;
    if ((s = bind(m, &m->tok_embd, "token_embd.weight", MODEL_ROLE_TOKEN_EMBD, -1, &dims, err)) ||
        (s = bind(m, &m->output_norm, model_role_info_of(final_norm)->name, final_norm, -1, &dims, err)) ||
        (s = bind(m, &m->output, "output.weight", MODEL_ROLE_OUTPUT, -1, &dims, err)))
        goto fail;
    for (size_t k = 0; k < N_OPTIONAL_GLOBALS; k++) {
        const model_role r = optional_globals[k].role;
        /* token_embd_norm is the embeddings' norm where the architecture says so, else (LFM2) the final norm */
        if (r == MODEL_ROLE_TOKEN_EMBD_NORM && !hp->desc->embd_norm)
            continue;
        if (model_role_need(&hp->g, r) != MODEL_NEED_ABSENT &&
            (s = bind(m, global_slot(m, 3 + k), model_role_info_of(r)->name, r, -1, &dims, err)))
            goto fail;
    }
    if (!m->output.t) {
        hp->tied_output = true;
        m->output = m->tok_embd;
    }
    for (int il = 0; il < hp->n_block; il++)
        if ((s = bind_layer(m, il, &dims, err)))
            goto fail;
    share_blocks(m);
    /* after the binding: a misnamed tensor is reported as the missing one first */
    if ((s = check_no_stray_tensors(m, err)) || (s = engine_load_output_scale(m, err)))
        goto fail;
    int first_attn = 0; /* a hybrid's first layer may be recurrent: the attention's facts from an attention layer */
    while (first_attn < hp->n_layer - 1 && m->layers[first_attn].recurrent)
        first_attn++;
    const kern_weight *w0 = m->layers[first_attn].w;
    hp->qkv_bias = m->layers[first_attn].has_bias;
    hp->qk_norm = w0[MODEL_ROLE_ATTN_Q_NORM].t && w0[MODEL_ROLE_ATTN_K_NORM].t;
    hp->post_norms = w0[MODEL_ROLE_ATTN_POST_NORM].t && w0[MODEL_ROLE_FFN_POST_NORM].t;
    if ((s = engine_load_rope_factors(m, err)))
        goto fail;
    hp->rope.freq_factors = hp->rope_swa.freq_factors = m->freq_factors ? m->freq_factors : m->rope_short;
    if (hp->desc->rope_freqs_full_only) /* Gemma 4: the sliding-window layers rotate without them */
        hp->rope_swa.freq_factors = NULL;
    hp->freq_factors = m->freq_factors || m->rope_long || m->rope_short;
    *out = m;
    return ENGINE_OK;
fail:
    engine_model_free(m);
    return s;
}

engine_layer_kinds engine_model_layer_kinds(const engine_model *m)
{
    engine_layer_kinds k = { 0 };
    for (int il = 0; il < m->hp.n_layer; il++) {
        const engine_layer *L = &m->layers[il];
        k.dense_layers += !L->w[MODEL_ROLE_FFN_GATE_INP].t && m->hp.n_expert > 0 && L->ffn; /* not a mixer alone */
        k.shared_experts |= L->w[MODEL_ROLE_FFN_UP_SHEXP].t != NULL;
        k.shared_gate |= L->w[MODEL_ROLE_FFN_GATE_INP_SHEXP].t != NULL;
        k.selection_bias |= L->select_bias != NULL;
        k.expert_biases |= L->experts[ENGINE_EXPERT_GATE_BIAS] != NULL;
        k.dense_beside |= m->hp.desc->moe_dense_mean && L->w[MODEL_ROLE_FFN_GATE_INP].t && L->w[MODEL_ROLE_FFN_UP].t;
    }
    return k;
}

void engine_model_release_weights(engine_model *m, bool on)
{
    m->release_weights = on;
}

engine_status engine_model_replace_weight(engine_model *m, const gguf_tensor *t, engine_error *err)
{
    /* the slot bound whole to a tensor of that name (the file's, or one put there before): a fused tensor's parts
     * are views of it (in split[]), the experts' tensors and biases are held but bound expert by expert */
    const gguf_tensor *own = gguf_tensor_by_name(m->f, t->name);
    kern_weight *slot = NULL;
    for (size_t i = 0; i < N_GLOBALS && own && !slot; i++)
        if (global_slot(m, i)->t && !strcmp(global_slot(m, i)->t->name, t->name))
            slot = global_slot(m, i);
    for (int il = 0; il < m->hp.n_block && own && !slot; il++) {
        engine_layer *L = &m->layers[il];
        for (int r = 0; r < MODEL_ROLE_COUNT && !slot; r++) {
            const model_role_info *ri = model_role_info_of((model_role)r);
            const gguf_tensor *b = L->w[r].t;
            const bool view = b >= L->split && b < L->split + sizeof L->split / sizeof L->split[0];
            if (b && !view && !strcmp(b->name, t->name) && ri->ne2 == MODEL_DIM_NONE && !ri->expert_rows)
                slot = &L->w[r];
        }
    }
    if (!slot)
        return engine_fail(err, ENGINE_E_INPUT, 0, t->name,
                           "tensor '%s' is not one this model binds whole (absent, fused, or an experts' tensor)",
                           t->name);
    if (own->n_dims != t->n_dims || memcmp(own->ne, t->ne, sizeof own->ne))
        return engine_fail(err, ENGINE_E_INPUT, t->info_offset, t->name,
                           "tensor '%s' has another shape than the one it replaces", t->name);
    kern_weight fresh = { .t = t };
    kern_status ks = m->be->bind(m->be, &fresh);
    if (ks != KERN_OK)
        return engine_fail(err, ks == KERN_E_UNSUPPORTED ? ENGINE_E_MODEL : ENGINE_E_BACKEND, t->info_offset, t->name,
                           "binding '%s' (%s) on %s failed: %s", t->name, gguf_type_traits_of(t->type)->name,
                           m->be->name, kern_status_name(ks));
    const bool tied = m->hp.tied_output && slot == &m->tok_embd;
    m->be->unbind(m->be, slot);
    *slot = fresh;
    if (tied)
        m->output = fresh;
    share_blocks(m);
    return ENGINE_OK;
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
    /* a token reads one row of each table (its embedding, its position's), the rest whole */
    uint64_t total = m->tok_embd.t->size / m->tok_embd.t->ne[1] + m->output.t->size +
                     (m->output_norm.t ? m->output_norm.t->size : 0) +
                     (m->output_norm_b.t ? m->output_norm_b.t->size : 0) + (m->output_b.t ? m->output_b.t->size : 0) +
                     (m->pos_embd.t ? m->pos_embd.t->size / m->pos_embd.t->ne[1] : 0);
    for (int il = 0; il < m->hp.n_layer; il++) {
        const kern_weight *w = m->layers[il].w;
        for (int r = 0; r < MODEL_ROLE_COUNT; r++) {
            if (!w[r].t)
                continue;
            /* of the experts' tensors and biases, only the experts a token is routed to (every head's of a tensor
             * per head) */
            const model_role_info *ri = model_role_info_of((model_role)r);
            const uint64_t experts = ri->expert_rows ? w[r].t->ne[1] : ri->ne2 == MODEL_DIM_EXPERT ? w[r].t->ne[2] : 1;
            total += w[r].t->size / experts * (experts > 1 ? (uint64_t)m->hp.n_expert_used : 1);
        }
    }
    return total;
}

uint64_t engine_model_layer_products_per_token(const engine_model *m)
{
    uint64_t total = 0;
    for (int il = 0; il < m->hp.n_layer; il++) {
        const kern_weight *w = m->layers[il].w;
        for (int r = 0; r < MODEL_ROLE_COUNT; r++)
            /* a matrix; gains and biases are vectors (the experts' biases a vector per expert) */
            if (w[r].t && w[r].t->n_dims >= 2 && w[r].t->ne[1] > 1 && !model_role_info_of((model_role)r)->expert_rows)
                total += w[r].t->ne[0] * w[r].t->ne[1] *
                         (model_role_info_of((model_role)r)->ne2 == MODEL_DIM_EXPERT ? (uint64_t)m->hp.n_expert_used
                                                                                     : w[r].t->ne[2]);
    }
    return total;
}
