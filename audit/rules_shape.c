/* Shapes against the hyperparameters, layers and roles present and absent,
 * vocabulary rows. Expected shapes and required roles come from the
 * architectures' descriptions (model/arch.c: llama.cpp's create_tensor per
 * architecture) in GGUF order: ne[0] is the input width of a matrix. */
#include "rules.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void check_shape(const gguf_tensor *t, const audit_hparams *hp, const model_role_info *ri, int64_t layer,
                        findings *fs)
{
    const model_hparams *g = &hp->g;
    const char *arch = g->arch_name[0] ? g->arch_name : "this model";
    int64_t ne[3];
    if (!model_role_shape_at(g, ri, layer < g->n_layer ? layer : -1, ne)) /* the layer's own heads (Gemma 4) */
        return; /* a hyperparameter is unknown: nothing to hold the shape to */
    const int64_t e0 = ne[0], e1 = ne[1], e2 = ne[2];
    bool ok = (int64_t)t->ne[0] == e0 && (int64_t)t->ne[1] == e1 && (int64_t)t->ne[2] == e2 && t->ne[3] == 1;
    if (ok)
        return;
    bool rows_only = ri->ne1 == MODEL_DIM_VOCAB && (int64_t)t->ne[0] == e0;
    audit_finding *x = finding_add(fs, AUDIT_ERROR, rows_only ? "vocab-rows" : "shape", t->name);
    if (!x)
        return;
    FSET(x->measured, "shape [%llu, %llu, %llu, %llu]", (unsigned long long)t->ne[0], (unsigned long long)t->ne[1],
         (unsigned long long)t->ne[2], (unsigned long long)t->ne[3]);
    if (ri->ne2 != MODEL_DIM_NONE)
        FSET(x->expected, "[%lld, %lld, %lld] (%s, %s, %s of %s)", (long long)e0, (long long)e1, (long long)e2,
             model_dim_name(ri->ne0), model_dim_name(ri->ne1), model_dim_name(ri->ne2), arch);
    else if (ri->ne1 == MODEL_DIM_NONE || (ri->norm && e1 == 1)) /* a norm's one row of gains (not one per head) */
        FSET(x->expected, "[%lld] (%s of %s)", (long long)e0, model_dim_name(ri->ne0), arch);
    else
        FSET(x->expected, "[%lld, %lld] (%s, %s of %s)", (long long)e0, (long long)e1, model_dim_name(ri->ne0),
             model_dim_name(ri->ne1), arch);
    if (rows_only)
        FSET(x->meaning, "%llu rows for %lld tokens cannot both be right: llama.cpp refuses the file; an engine "
                         "that trusts the vocabulary reads past the matrix, one that trusts the matrix samples "
                         "ids that have no text", (unsigned long long)t->ne[1], (long long)e1);
    else
        FSET(x->meaning, "the tensor and the hyperparameters cannot both be right: llama.cpp refuses the file, "
                         "and an engine that sizes buffers from the metadata reads past or short of this tensor");
}

/* Every tensor whose name is a role model/arch.c knows is held to that role's
 * shape: the global ones (embedding, output, final norm) in any architecture,
 * the per-layer ones in the architectures described there (elsewhere the same
 * names may mean other shapes). */
static void shape_rules(const gguf_file *f, const audit_hparams *hp, findings *fs)
{
    for (size_t i = 0; i < gguf_tensor_count(f); i++) {
        const gguf_tensor *t = gguf_tensor_at(f, i);
        int64_t layer;
        model_role r = model_role_of_name(t->name, &layer);
        if (r == MODEL_ROLE_COUNT)
            continue;
        const model_role_info *ri = model_role_info_of(r);
        if (ri->per_layer ? hp->g.arch != NULL : r != MODEL_ROLE_ROPE_FREQS || hp->g.arch != NULL)
            check_shape(t, hp, ri, layer, fs);
    }
    const model_hparams *g = &hp->g;
    if (g->n_head > 0 && g->n_head_kv > 0 && g->n_head % g->n_head_kv != 0) {
        audit_finding *x = finding_add(fs, AUDIT_ERROR, "gqa-ratio", NULL);
        if (x) {
            FSET(x->measured, "head_count %lld, head_count_kv %lld", (long long)g->n_head, (long long)g->n_head_kv);
            FSET(x->expected, "head_count a multiple of head_count_kv");
            FSET(x->meaning, "query heads cannot be shared evenly among key/value heads: the metadata is wrong");
        }
    }
}

/* The roles a described architecture requires (model/arch.c), each present
 * once (global) or in every layer: what llama.cpp's loader insists on and the
 * engine refuses a file without. One finding per role, however many layers. */
static void required_roles_rule(const gguf_file *f, const audit_hparams *hp, findings *fs)
{
    const model_arch *a = hp->g.arch;
    const int64_t L = hp->g.n_layer;
    if (!a || gguf_tensor_count(f) == 0)
        return; /* not described, or a vocabulary-only file */
    for (int r = 0; r < MODEL_ROLE_COUNT; r++) {
        if (model_role_need(&hp->g, (model_role)r) != MODEL_NEED_REQUIRED)
            continue;
        const model_role_info *ri = model_role_info_of((model_role)r);
        if (!ri->per_layer) {
            if (gguf_tensor_by_name(f, ri->name))
                continue;
            audit_finding *x = finding_add(fs, AUDIT_ERROR, "missing-tensor", ri->name);
            if (x) {
                FSET(x->measured, "absent");
                FSET(x->expected, "a %s model has %s (%s)", a->name, ri->name, ri->what);
                FSET(x->meaning, "llama.cpp would refuse this file: it cannot be run without its %s", ri->what);
            }
            continue;
        }
        if (L <= 0)
            continue;
        int64_t missing = 0, first = -1;
        char name[128];
        for (int64_t l = 0; l < L; l++) {
            if (model_role_need_at(&hp->g, (model_role)r, l) != MODEL_NEED_REQUIRED)
                continue; /* a mixture's leading dense layers have no experts */
            snprintf(name, sizeof name, "blk.%lld.%s", (long long)l, model_role_name(a, (model_role)r));
            if (!gguf_tensor_by_name(f, name) && missing++ == 0)
                first = l;
        }
        if (!missing)
            continue;
        audit_finding *x = finding_add(fs, AUDIT_ERROR, "missing-tensor", NULL);
        if (!x)
            continue;
        x->layer = missing == 1 ? (int)first : -1;
        const char *own = model_role_name(a, (model_role)r);
        if (missing == 1)
            FSET(x->tensor, "blk.%lld.%s", (long long)first, own);
        else
            FSET(x->tensor, "blk.*.%s", own);
        FSET(x->measured, "absent in %lld of %lld layers (the first: layer %lld)", (long long)missing, (long long)L,
             (long long)first);
        FSET(x->expected, "every layer of a %s model has %s (%s)", a->name, own, ri->what);
        FSET(x->meaning, "llama.cpp would refuse this file; an engine that does not check runs those layers "
                         "without their %s", ri->what);
    }
}

/* The feed-forward form layer l has: dense among a mixture's leading dense layers (leading_dense_block_count), or
 * where it has a dense ffn_down and no router (Llama 4 interleaves such layers); experts where it has a router. */
static model_ffn_form layer_form(const gguf_file *f, const audit_hparams *hp, int64_t l)
{
    char name[64];
    snprintf(name, sizeof name, "blk.%lld.ffn_gate_inp.weight", (long long)l);
    const bool router = gguf_tensor_by_name(f, name);
    snprintf(name, sizeof name, "blk.%lld.ffn_down.weight", (long long)l);
    if (l < hp->g.n_layer_dense_lead || (!router && gguf_tensor_by_name(f, name)))
        return MODEL_FFN_DENSE;
    return router ? MODEL_FFN_MOE : MODEL_FFN_ANY;
}

/* Whether a role of feed-forward form `form` belongs in layer l: not the experts' roles in a dense layer, nor the
 * dense ones in a layer with experts. */
static bool role_fits_layer(const gguf_file *f, const audit_hparams *hp, model_ffn_form form, int64_t l)
{
    const model_ffn_form lf = form == MODEL_FFN_ANY ? MODEL_FFN_ANY : layer_form(f, hp, l);
    return form == MODEL_FFN_ANY || lf == MODEL_FFN_ANY || lf == form;
}

static void missing_tensor(findings *fs, const audit_hparams *hp, int64_t layer, const char *role, size_t present)
{
    audit_finding *x = finding_add(fs, AUDIT_ERROR, "missing-tensor", NULL);
    if (!x)
        return;
    x->layer = (int)layer;
    FSET(x->tensor, "blk.%lld.%s", (long long)layer, role);
    FSET(x->measured, "absent; %s is present in %zu of %lld layers", role, present, (long long)hp->g.n_layer);
    FSET(x->expected, "every layer has %s", role);
    FSET(x->meaning, "llama.cpp refuses the file; an engine that does not check reads another layer's weights or "
                     "garbage for this layer");
}

/* Whether a layer without this role is a form of its architecture: Gemma 4's full layers take their values from the
 * key projection (attention_k_eq_v), so attn_v is in the sliding layers alone (llama.cpp loads it as optional);
 * MiMo-V2's sinks and Step-3.5's head gates are where a layer has them (model_arch.role_by_layer). */
static bool layer_may_lack(const audit_hparams *hp, model_role role)
{
    const model_arch *a = hp->g.arch;
    return a && ((role == MODEL_ROLE_ATTN_V && a->v_from_k) || (a->role_by_layer && role == a->role_by_layer));
}

/* Layers past block_count, layers with no tensor, and roles present in most
 * layers but absent in some. Works on tensors grouped by role, so its cost
 * follows the tensors, not block_count (which comes from the file). */
/* whether the architecture requires any tensor in layer il */
static bool layer_requires_any(const model_hparams *g, int64_t il)
{
    for (int r = MODEL_ROLE_FIRST_LAYER_ROLE; r < MODEL_ROLE_COUNT; r++)
        if (model_role_info_of((model_role)r)->per_layer &&
            model_role_need_at(g, (model_role)r, il) == MODEL_NEED_REQUIRED)
            return true;
    return false;
}

static void layer_rules(const gguf_file *f, const audit_hparams *hp, findings *fs)
{
    size_t n = gguf_tensor_count(f);
    int64_t L = hp->g.n_layer;
    if (n == 0 || L <= 0 || L > 100000)
        return;
    role_entry *e = role_entries_sorted(f);
    int64_t *per_layer = calloc((size_t)L, sizeof *per_layer);
    if (!e || !per_layer) {
        free(e), free(per_layer);
        fs->failed = true;
        return;
    }
    bool any = false;
    for (size_t i = 0; i < n && e[i].layer >= 0; i++) {
        if (e[i].layer < L) {
            per_layer[e[i].layer]++;
            any = true;
            continue;
        }
        audit_finding *x = finding_add(fs, AUDIT_ERROR, "layer-out-of-range", gguf_tensor_at(f, e[i].index)->name);
        if (x) {
            FSET(x->measured, "layer %d", e[i].layer);
            FSET(x->expected, "layers 0-%lld (%s.block_count = %lld)", (long long)L - 1, hp->g.arch_name, (long long)L);
            FSET(x->meaning, "block_count and the tensors disagree: an engine that trusts block_count never runs "
                             "this layer, one that counts tensors runs past the metadata");
        }
    }
    for (int64_t l = 0; l < L && any; l++) {
        if (per_layer[l] || (hp->g.arch && !layer_requires_any(&hp->g, l)))
            continue; /* (DeciLM's layer of neither block has no tensors) */
        audit_finding *x = finding_add(fs, AUDIT_ERROR, "missing-layer", NULL);
        if (x) {
            x->layer = (int)l;
            FSET(x->tensor, "blk.%lld.*", (long long)l);
            FSET(x->measured, "no tensor of layer %lld", (long long)l);
            FSET(x->expected, "%lld layers (%s.block_count), each with its tensors", (long long)L, hp->g.arch_name);
            FSET(x->meaning, "llama.cpp refuses the file; an engine that does not check runs a layer with missing "
                             "(zero or stale) weights");
        }
    }
    for (size_t g = 0; g < n && e[g].layer >= 0;) {
        size_t end = role_group_end(e, n, g), present = 0;
        while (g + present < end && e[g + present].layer < L)
            present++; /* layers ascend within a group; those past L were reported above */
        /* a described architecture's required roles: required_roles_rule reports them */
        int64_t layer_of_role;
        model_role role = model_role_of_name(gguf_tensor_at(f, e[g].index)->name, &layer_of_role);
        const bool required = role != MODEL_ROLE_COUNT && model_role_need(&hp->g, role) == MODEL_NEED_REQUIRED;
        if (2 * (int64_t)present > L && !required) {
            const model_ffn_form form = role != MODEL_ROLE_COUNT ? model_role_info_of(role)->form : MODEL_FFN_ANY;
            size_t k = g;
            for (int64_t l = 0; l < L; l++) {
                if (k < g + present && e[k].layer == l)
                    k++;
                else if (per_layer[l] && role_fits_layer(f, hp, form, l) && !layer_may_lack(hp, role) &&
                         (role == MODEL_ROLE_COUNT || model_role_need_at(&hp->g, role, l) != MODEL_NEED_ABSENT))
                    missing_tensor(fs, hp, l, e[g].role, present); /* (a hybrid's roles belong to their kind's layers) */
            }
        }
        g = end;
    }
    free(e), free(per_layer);
}

static void vocab_rules(const audit_hparams *hp, findings *fs)
{
    if (hp->g.vocab_size && hp->g.n_vocab && hp->g.vocab_size != hp->g.n_vocab) {
        audit_finding *x = finding_add(fs, AUDIT_ERROR, "vocab-size", NULL);
        if (x) {
            FSET(x->measured, "%s.vocab_size = %lld, tokenizer.ggml.tokens has %lld entries", hp->g.arch_name,
                 (long long)hp->g.vocab_size, (long long)hp->g.n_vocab);
            FSET(x->expected, "the same number");
            FSET(x->meaning, "token ids past the shorter of the two have no text or no embedding: detokenizing "
                             "or embedding them reads out of bounds");
        }
    }
}

void rules_shape(const gguf_file *f, const audit_hparams *hp, findings *fs)
{
    shape_rules(f, hp, fs);
    required_roles_rule(f, hp, fs);
    layer_rules(f, hp, fs);
    vocab_rules(hp, fs);
}
