/*
 * Per-tensor scales: llama.cpp's loader, after each family's own tensors, takes for any architecture (its generic
 * pass in src/llama-model.cpp: "load optional per-tensor/per-expert .scale tensors", NVFP4's second scales)
 * blk.N.W.scale and blk.N.W.input_scale, one value each (one per expert for the experts' tensors), beside each of the
 * weights below where the layer has it; a family's graph multiplies some of those products by their scales
 * (build_lora_mm; model_arch.weight_scales says which) and reads no input scale.
 */
#include "internal.h"
#include "quant.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Each weight the loader takes a scale beside: the model_arch.weight_scales bits of the graphs that apply it (any of
 * them; 0: none here reads it), and the weights whose products it multiplies: a fused tensor's parts (q, k, v of
 * attn_qkv; the gate rows of an ffn_up or ffn_up_shexp that holds them, where the entry fuses them; MODEL_ROLE_TOKEN_EMBD:
 * none), or each expert's part (expert: ENGINE_EXPERT_*, one scale per expert; -1: not an experts' tensor). In a gated
 * delta net's layer the net's own products (dn: its weight's own role, whole) take MODEL_SCALES_DN's bit instead. */
static const struct {
    const char *name;
    unsigned bit;
    model_role onto[3];
    int expert;
    model_role dn;
} scaled_weights[] = {
    { "attn_q", MODEL_SCALES_QKV, { MODEL_ROLE_ATTN_Q }, -1, 0 },
    { "attn_k", MODEL_SCALES_QKV, { MODEL_ROLE_ATTN_K }, -1, 0 },
    { "attn_v", MODEL_SCALES_QKV, { MODEL_ROLE_ATTN_V }, -1, 0 },
    { "attn_qkv", MODEL_SCALES_QKV, { MODEL_ROLE_ATTN_Q, MODEL_ROLE_ATTN_K, MODEL_ROLE_ATTN_V }, -1, MODEL_ROLE_ATTN_QKV },
    { "attn_output", MODEL_SCALES_OUT, { MODEL_ROLE_ATTN_OUT }, -1, 0 },
    { "attn_gate", 0, { 0 }, -1, MODEL_ROLE_ATTN_GATE },
    { "ffn_gate", MODEL_SCALES_FFN, { MODEL_ROLE_FFN_GATE }, -1, 0 },
    { "ffn_up", MODEL_SCALES_FFN, { MODEL_ROLE_FFN_UP, MODEL_ROLE_FFN_GATE }, -1, 0 },
    { "ffn_down", MODEL_SCALES_FFN | MODEL_SCALES_FFN_DOWN, { MODEL_ROLE_FFN_DOWN }, -1, 0 },
    { "ffn_gate_shexp", MODEL_SCALES_SHEXP, { MODEL_ROLE_FFN_GATE_SHEXP }, -1, 0 },
    { "ffn_down_shexp", MODEL_SCALES_SHEXP, { MODEL_ROLE_FFN_DOWN_SHEXP }, -1, 0 },
    { "ffn_up_shexp", MODEL_SCALES_SHEXP, { MODEL_ROLE_FFN_UP_SHEXP, MODEL_ROLE_FFN_GATE_SHEXP }, -1, 0 },
    { "ffn_gate_exps", MODEL_SCALES_EXPS, { 0 }, ENGINE_EXPERT_GATE, 0 },
    { "ffn_down_exps", MODEL_SCALES_EXPS, { 0 }, ENGINE_EXPERT_DOWN, 0 },
    { "ffn_up_exps", MODEL_SCALES_EXPS, { 0 }, ENGINE_EXPERT_UP, 0 },
    { "ssm_in", MODEL_SCALES_SSM, { MODEL_ROLE_SSM_IN }, -1, MODEL_ROLE_SSM_IN },
    { "ssm_out", MODEL_SCALES_SSM, { MODEL_ROLE_SSM_OUT }, -1, MODEL_ROLE_SSM_OUT },
    { "ssm_alpha", 0, { 0 }, -1, MODEL_ROLE_SSM_ALPHA },
    { "ssm_beta", 0, { 0 }, -1, MODEL_ROLE_SSM_BETA },
};
enum { N_SCALED_WEIGHTS = sizeof scaled_weights / sizeof scaled_weights[0] };

/* Whether row w of the table is, in layer L, a gated delta net's own product */
static bool delta_net_product(const engine_model *m, const engine_layer *L, size_t w)
{
    return L->recurrent && m->hp.delta_net && scaled_weights[w].dn;
}

/* output.scale and output.input_scale: loaded only beside an NVFP4 output.weight of its own (a tied NVFP4 output with
 * them stops llama.cpp's loader on an assertion; beside another type they are tensors it does not load) */
static engine_scale_kind output_scale_of(const engine_model *m, const gguf_tensor *t)
{
    const bool input = !strcmp(t->name, "output.input_scale");
    const gguf_tensor *o = gguf_tensor_by_name(m->f, "output.weight");
    if ((!input && strcmp(t->name, "output.scale") != 0) || !o || o->type != GGUF_TENSOR_NVFP4 ||
        t->n_elements != 1 || t->ne[0] != 1)
        return ENGINE_SCALE_NONE;
    const unsigned read = m->hp.desc->weight_scales;
    if (!(read & MODEL_SCALES_READ))
        return ENGINE_SCALE_NOT_RUN;
    return input || !(read & MODEL_SCALES_OUTPUT) ? ENGINE_SCALE_UNREAD : ENGINE_SCALE_RUN;
}

engine_scale_kind engine_weight_scale_of(const engine_model *m, const gguf_tensor *t)
{
    static const char *const suffixes[] = { ".scale", ".input_scale" };
    char *end;
    if (!strncmp(t->name, "output.", 7))
        return output_scale_of(m, t);
    if (strncmp(t->name, "blk.", 4) != 0 || t->name[4] < '0' || t->name[4] > '9')
        return ENGINE_SCALE_NONE;
    int64_t layer;
    const model_role role = model_role_of_name(t->name, &layer);
    if (role != MODEL_ROLE_COUNT && model_role_need_at(&m->hp.g, role, layer) != MODEL_NEED_ABSENT)
        return ENGINE_SCALE_NONE; /* a role of the entry's own: Gemma 4's ffn_down_exps.scale, each expert's output's */
    const long long l = strtoll(t->name + 4, &end, 10);
    if (*end != '.' || l >= m->hp.n_block)
        return ENGINE_SCALE_NONE;
    for (size_t w = 0; w < N_SCALED_WEIGHTS; w++)
        for (size_t k = 0; k < 2; k++) {
            char name[128], weight[128];
            snprintf(name, sizeof name, "blk.%lld.%s%s", l, scaled_weights[w].name, suffixes[k]);
            snprintf(weight, sizeof weight, "blk.%lld.%s.weight", l, scaled_weights[w].name);
            if (strcmp(name, t->name) != 0 || !gguf_tensor_by_name(m->f, weight))
                continue;
            const uint64_t n = strstr(name, "_exps") ? (uint64_t)m->hp.n_expert : 1;
            if (t->n_elements != n || t->ne[0] != n) /* llama.cpp's shape, else its loader refuses the file */
                return ENGINE_SCALE_NONE;
            const engine_layer *L = &m->layers[l];
            const bool dn = delta_net_product(m, L, w);
            const unsigned read = m->hp.desc->weight_scales, bit = dn ? MODEL_SCALES_DN : scaled_weights[w].bit;
            if (!(read & MODEL_SCALES_READ))
                return ENGINE_SCALE_NOT_RUN;
            /* (DeciLM's "linear attention" layers: their output product without its scale, as its graph has it) */
            if (k == 1 || !(read & bit) || (bit == MODEL_SCALES_OUT && L->linear))
                return ENGINE_SCALE_UNREAD;
            const bool runs = dn || scaled_weights[w].onto[0] || scaled_weights[w].expert >= 0;
            /* a delta net's own where the layer is one, a mixer's where the layer keeps a Mamba state (Falcon-H1's
             * beside its attention too), the attention's where it attends, the feed-forward blocks' where it has one
             * (Nemotron-H's layers are one or the other) */
            const bool ffn = bit & (MODEL_SCALES_FFN | MODEL_SCALES_FFN_DOWN | MODEL_SCALES_EXPS | MODEL_SCALES_SHEXP);
            const bool here = dn                      ? true
                              : bit == MODEL_SCALES_SSM ? L->state != 0 && (m->hp.mamba2 || m->hp.mamba1)
                              : ffn                   ? L->ffn
                                                      : L->mixer && !L->recurrent;
            return runs && here ? ENGINE_SCALE_RUN : ENGINE_SCALE_NOT_RUN;
        }
    return ENGINE_SCALE_NONE;
}

/* A scale's n values (one, or one per expert) decoded into v. */
static engine_status read_scale(const gguf_tensor *t, int n, float *v, engine_error *err)
{
    if (!t->data) /* only from gguf_open_partial */
        return engine_fail(err, ENGINE_E_MODEL, t->info_offset, t->name,
                           "tensor '%s' is not all in the file: the file is truncated", t->name);
    if (quant_dequantize_row(t->type, t->data, v, n) != QUANT_OK)
        return engine_fail(err, ENGINE_E_MODEL, t->info_offset, t->name, "tensor '%s' (a per-tensor scale) is %s, "
                           "not values gguf-run can read", t->name, gguf_type_traits_of(t->type)->name);
    return ENGINE_OK;
}

engine_status engine_load_output_scale(engine_model *m, engine_error *err)
{
    const gguf_tensor *t = gguf_tensor_by_name(m->f, "output.scale");
    if (!t || engine_weight_scale_of(m, t) != ENGINE_SCALE_RUN)
        return ENGINE_OK;
    m->output.scaled = true;
    return read_scale(t, 1, &m->output.scale, err);
}

/* Layer il's per-tensor scales that the forward pass applies (ENGINE_SCALE_RUN), onto the weights whose products they
 * multiply (after the experts are bound: their views take one each); a fused ffn_up's (ffn_up_shexp's) scale onto its
 * gate rows too, where the entry fuses them. */
engine_status engine_load_weight_scales(engine_model *m, int il, engine_error *err)
{
    engine_layer *L = &m->layers[il];
    for (size_t w = 0; w < N_SCALED_WEIGHTS; w++) {
        char name[128];
        snprintf(name, sizeof name, "blk.%d.%s.scale", il, scaled_weights[w].name);
        const gguf_tensor *t = gguf_tensor_by_name(m->f, name);
        if (!t || engine_weight_scale_of(m, t) != ENGINE_SCALE_RUN)
            continue;
        const int part = scaled_weights[w].expert, n = part >= 0 ? m->hp.n_expert : 1;
        float *v = malloc((size_t)n * sizeof(float));
        if (!v)
            return engine_fail(err, ENGINE_E_NOMEM, 0, "", "out of memory");
        const engine_status s = read_scale(t, n, v, err);
        if (s) {
            free(v);
            return s;
        }
        for (int e = 0; e < n && part >= 0 && L->experts[part]; e++) {
            L->experts[part][e].scaled = true;
            L->experts[part][e].scale = v[e];
        }
        const bool dn = delta_net_product(m, L, w);
        const model_role first = dn ? scaled_weights[w].dn : scaled_weights[w].onto[0];
        const bool fused = dn                                 ? false
                           : first == MODEL_ROLE_FFN_UP        ? m->hp.desc->gate_up_fused
                           : first == MODEL_ROLE_FFN_UP_SHEXP ? m->hp.desc->shexp_gate_up_fused
                                                              : true;
        for (int k = 0; k < 3 && (k ? scaled_weights[w].onto[k] : first) && (k == 0 || fused); k++) {
            const model_role r = k ? scaled_weights[w].onto[k] : first;
            L->w[r].scaled = true;
            L->w[r].scale = v[0];
        }
        free(v);
    }
    return ENGINE_OK;
}

/* The weight a scale's name stands beside (blk.N.W.scale: W), appended to list (comma-separated) where not there yet */
static void note_weight(char *list, size_t cap, const char *name)
{
    const char *w = strncmp(name, "blk.", 4) ? name : strchr(name + 4, '.');
    if (!w)
        return;
    w += *w == '.';
    const char *dot = strchr(w, '.');
    char weight[64];
    snprintf(weight, sizeof weight, "%.*s", (int)(dot ? dot - w : (ptrdiff_t)strlen(w)), w);
    for (const char *at = list; (at = strstr(at, weight)); at += strlen(weight))
        if ((at == list || at[-1] == ' ') && (at[strlen(weight)] == ',' || !at[strlen(weight)]))
            return;
    const size_t len = strlen(list);
    snprintf(list + len, cap - len, "%s%s", len ? ", " : "", weight);
}

engine_scale_summary engine_model_scales(const engine_model *m)
{
    engine_scale_summary s = { 0 };
    for (size_t i = 0; i < gguf_tensor_count(m->f); i++) {
        const gguf_tensor *t = gguf_tensor_at(m->f, i);
        const engine_scale_kind k = engine_weight_scale_of(m, t);
        if (k != ENGINE_SCALE_RUN && k != ENGINE_SCALE_UNREAD)
            continue;
        const bool input = strstr(t->name, ".input_scale") != NULL;
        s.applied += k == ENGINE_SCALE_RUN;
        s.unread += k == ENGINE_SCALE_UNREAD;
        s.inputs += input;
        if (!input)
            note_weight(k == ENGINE_SCALE_RUN ? s.applied_on : s.unread_on,
                        k == ENGINE_SCALE_RUN ? sizeof s.applied_on : sizeof s.unread_on, t->name);
    }
    s.output_scale = m->output.scaled ? m->output.scale : 0.0f;
    return s;
}
