/* Shapes against the hyperparameters, layers present and absent, vocabulary
 * rows. Expected shapes are llama.cpp's (llama-model.cpp, create_tensor per
 * architecture) in GGUF order: ne[0] is the input width of a matrix. */
#include "rules.h"

#include <stdlib.h>
#include <string.h>

typedef enum dim { D_NONE, D_E, D_V, D_F, D_QK, D_KVK, D_KVV, D_QV } dim;

typedef struct shape_rule {
    const char *role;
    dim d0, d1;
} shape_rule;

/* Per-layer roles of the llama-like architectures (llama, qwen2, …). */
static const shape_rule layer_shapes[] = {
    { "attn_norm.weight", D_E, D_NONE },   { "ffn_norm.weight", D_E, D_NONE },
    { "attn_q.weight", D_E, D_QK },        { "attn_k.weight", D_E, D_KVK },
    { "attn_v.weight", D_E, D_KVV },       { "attn_output.weight", D_QV, D_E },
    { "attn_q.bias", D_QK, D_NONE },       { "attn_k.bias", D_KVK, D_NONE },
    { "attn_v.bias", D_KVV, D_NONE },      { "ffn_gate.weight", D_E, D_F },
    { "ffn_up.weight", D_E, D_F },         { "ffn_down.weight", D_F, D_E },
};

static const char *const llama_like[] = { "llama", "qwen2", "qwen3", "mistral", "granite", "smollm3" };

static bool is_llama_like(const char *arch)
{
    for (size_t i = 0; i < sizeof llama_like / sizeof llama_like[0]; i++)
        if (strcmp(arch, llama_like[i]) == 0)
            return true;
    return false;
}

static int64_t dim_value(const audit_hparams *hp, dim d)
{
    switch (d) {
    case D_E: return hp->n_embd;
    case D_V: return hp->n_tokens;
    case D_F: return hp->n_ff;
    case D_QK: return hp->n_head * hp->head_dim_k;
    case D_KVK: return hp->n_head_kv * hp->head_dim_k;
    case D_KVV: return hp->n_head_kv * hp->head_dim_v;
    case D_QV: return hp->n_head * hp->head_dim_v;
    default: return 0;
    }
}

static const char *dim_source(dim d)
{
    switch (d) {
    case D_E: return "embedding_length";
    case D_V: return "tokens in tokenizer.ggml.tokens";
    case D_F: return "feed_forward_length";
    case D_QK: return "head_count x key head dim";
    case D_KVK: return "head_count_kv x key head dim";
    case D_KVV: return "head_count_kv x value head dim";
    case D_QV: return "head_count x value head dim";
    default: return "";
    }
}

static void check_shape(const gguf_tensor *t, const audit_hparams *hp, dim d0, dim d1, findings *fs)
{
    int64_t e0 = dim_value(hp, d0), e1 = d1 == D_NONE ? 1 : dim_value(hp, d1);
    if (e0 <= 0 || e1 <= 0)
        return; /* a hyperparameter is unknown: nothing to hold the shape to */
    bool ok = (int64_t)t->ne[0] == e0 && (int64_t)t->ne[1] == e1 && t->ne[2] == 1 && t->ne[3] == 1;
    if (ok)
        return;
    bool rows_only = d1 == D_V && (int64_t)t->ne[0] == e0;
    audit_finding *x = finding_add(fs, AUDIT_ERROR, rows_only ? "vocab-rows" : "shape", t->name);
    if (!x)
        return;
    FSET(x->measured, "shape [%llu, %llu, %llu, %llu]", (unsigned long long)t->ne[0], (unsigned long long)t->ne[1],
         (unsigned long long)t->ne[2], (unsigned long long)t->ne[3]);
    if (d1 == D_NONE)
        FSET(x->expected, "[%lld] (%s of %s)", (long long)e0, dim_source(d0), hp->arch);
    else
        FSET(x->expected, "[%lld, %lld] (%s, %s of %s)", (long long)e0, (long long)e1, dim_source(d0),
             dim_source(d1), hp->arch);
    if (rows_only)
        FSET(x->meaning, "%llu rows for %lld tokens cannot both be right: llama.cpp refuses the file; an engine "
                         "that trusts the vocabulary reads past the matrix, one that trusts the matrix samples "
                         "ids that have no text", (unsigned long long)t->ne[1], (long long)e1);
    else
        FSET(x->meaning, "the tensor and the hyperparameters cannot both be right: llama.cpp refuses the file, "
                         "and an engine that sizes buffers from the metadata reads past or short of this tensor");
}

static void shape_rules(const gguf_file *f, const audit_hparams *hp, findings *fs)
{
    bool llama = is_llama_like(hp->arch);
    for (size_t i = 0; i < gguf_tensor_count(f); i++) {
        const gguf_tensor *t = gguf_tensor_at(f, i);
        const char *role;
        int layer = audit_layer_of(t->name, &role);
        if (layer < 0) {
            if (strcmp(role, "token_embd.weight") == 0 || strcmp(role, "output.weight") == 0)
                check_shape(t, hp, D_E, D_V, fs);
            else if (strcmp(role, "output_norm.weight") == 0)
                check_shape(t, hp, D_E, D_NONE, fs);
            continue;
        }
        for (size_t k = 0; llama && k < sizeof layer_shapes / sizeof layer_shapes[0]; k++)
            if (strcmp(role, layer_shapes[k].role) == 0)
                check_shape(t, hp, layer_shapes[k].d0, layer_shapes[k].d1, fs);
    }
    if (hp->n_head > 0 && hp->n_head_kv > 0 && hp->n_head % hp->n_head_kv != 0) {
        audit_finding *x = finding_add(fs, AUDIT_ERROR, "gqa-ratio", NULL);
        if (x) {
            FSET(x->measured, "head_count %lld, head_count_kv %lld", (long long)hp->n_head, (long long)hp->n_head_kv);
            FSET(x->expected, "head_count a multiple of head_count_kv");
            FSET(x->meaning, "query heads cannot be shared evenly among key/value heads: the metadata is wrong");
        }
    }
}

static void missing_tensor(findings *fs, const audit_hparams *hp, int64_t layer, const char *role, size_t present)
{
    audit_finding *x = finding_add(fs, AUDIT_ERROR, "missing-tensor", NULL);
    if (!x)
        return;
    x->layer = (int)layer;
    FSET(x->tensor, "blk.%lld.%s", (long long)layer, role);
    FSET(x->measured, "absent; %s is present in %zu of %lld layers", role, present, (long long)hp->n_layer);
    FSET(x->expected, "every layer has %s", role);
    FSET(x->meaning, "llama.cpp refuses the file; an engine that does not check reads another layer's weights or "
                     "garbage for this layer");
}

/* Layers past block_count, layers with no tensor, and roles present in most
 * layers but absent in some. Works on tensors grouped by role, so its cost
 * follows the tensors, not block_count (which comes from the file). */
static void layer_rules(const gguf_file *f, const audit_hparams *hp, findings *fs)
{
    size_t n = gguf_tensor_count(f);
    int64_t L = hp->n_layer;
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
            FSET(x->expected, "layers 0-%lld (%s.block_count = %lld)", (long long)L - 1, hp->arch, (long long)L);
            FSET(x->meaning, "block_count and the tensors disagree: an engine that trusts block_count never runs "
                             "this layer, one that counts tensors runs past the metadata");
        }
    }
    for (int64_t l = 0; l < L && any; l++) {
        if (per_layer[l])
            continue;
        audit_finding *x = finding_add(fs, AUDIT_ERROR, "missing-layer", NULL);
        if (x) {
            x->layer = (int)l;
            FSET(x->tensor, "blk.%lld.*", (long long)l);
            FSET(x->measured, "no tensor of layer %lld", (long long)l);
            FSET(x->expected, "%lld layers (%s.block_count), each with its tensors", (long long)L, hp->arch);
            FSET(x->meaning, "llama.cpp refuses the file; an engine that does not check runs a layer with missing "
                             "(zero or stale) weights");
        }
    }
    for (size_t g = 0; g < n && e[g].layer >= 0;) {
        size_t end = role_group_end(e, n, g), present = 0;
        while (g + present < end && e[g + present].layer < L)
            present++; /* layers ascend within a group; those past L were reported above */
        if (2 * (int64_t)present > L) {
            size_t k = g;
            for (int64_t l = 0; l < L; l++) {
                if (k < g + present && e[k].layer == l)
                    k++;
                else if (per_layer[l])
                    missing_tensor(fs, hp, l, e[g].role, present);
            }
        }
        g = end;
    }
    free(e), free(per_layer);
}

static void vocab_rules(const audit_hparams *hp, findings *fs)
{
    if (hp->vocab_size && hp->n_tokens && hp->vocab_size != hp->n_tokens) {
        audit_finding *x = finding_add(fs, AUDIT_ERROR, "vocab-size", NULL);
        if (x) {
            FSET(x->measured, "%s.vocab_size = %lld, tokenizer.ggml.tokens has %lld entries", hp->arch,
                 (long long)hp->vocab_size, (long long)hp->n_tokens);
            FSET(x->expected, "the same number");
            FSET(x->meaning, "token ids past the shorter of the two have no text or no embedding: detokenizing "
                             "or embedding them reads out of bounds");
        }
    }
}

void rules_shape(const gguf_file *f, const audit_hparams *hp, findings *fs)
{
    shape_rules(f, hp, fs);
    layer_rules(f, hp, fs);
    vocab_rules(hp, fs);
}
