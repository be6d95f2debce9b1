/* What looks odd but is normal, explained (severity info): tied embeddings,
 * a padded vocabulary, a file type that does not match the tensors, a final
 * norm with a large mean, tensors of types we cannot decode. */
#include "rules.h"

#include <string.h>

/* The mean above which a final norm is worth explaining (real Qwen2.5 files: ~7). */
#define FINAL_NORM_LARGE 3.0

static void tied_rule(const gguf_file *f, findings *fs)
{
    if (!gguf_tensor_by_name(f, "token_embd.weight") || gguf_tensor_by_name(f, "output.weight"))
        return;
    audit_finding *x = finding_add(fs, AUDIT_INFO, "tied-embeddings", "token_embd.weight");
    if (!x)
        return;
    FSET(x->measured, "no output.weight");
    FSET(x->expected, "normal for models trained with tied embeddings (Qwen2.5 0.5B-3B, Gemma, SmolLM)");
    FSET(x->meaning, "the token embedding is also the output projection: logits = final hidden state x "
                     "token_embd^T; an engine that looks for output.weight must fall back to it");
}

static void padding_rule(const gguf_file *f, const audit_hparams *hp, findings *fs)
{
    if (hp->n_padding_tokens <= 0)
        return;
    const gguf_tensor *emb = gguf_tensor_by_name(f, "token_embd.weight");
    audit_finding *x = finding_add(fs, AUDIT_INFO, "vocab-padding", NULL);
    if (!x)
        return;
    long long rows = emb ? (long long)emb->ne[1] : (long long)hp->g.n_vocab;
    FSET(x->measured, "%lld rows, %lld real tokens: the last %lld are unused padding entries", rows,
         (long long)(hp->g.n_vocab - hp->n_padding_tokens), (long long)hp->n_padding_tokens);
    FSET(x->expected, "normal: converters pad the vocabulary to the embedding rows (a multiple of 64 or 128)");
    FSET(x->meaning, "the tail is padding, never produced by training: an engine that samples one of those ids is "
                     "broken (wrong logits indexing, or NaN logits where argmax picks an arbitrary id)");
}

/* The ggml types a llama.cpp file type puts in the weight matrices. */
static bool in_family(const char *ftype, uint32_t type)
{
    const char *tn = gguf_type_traits_of(type)->name;
    size_t n = strlen(tn);
    bool k_type = n >= 2 && strcmp(tn + n - 2, "_K") == 0;
    if (strncmp(ftype, "IQ", 2) == 0)
        return strncmp(tn, "IQ", 2) == 0 || k_type;
    if (strstr(ftype, "_K"))
        return k_type;
    if (strncmp(ftype, "TQ", 2) == 0)
        return strncmp(tn, "TQ", 2) == 0;
    if (strcmp(ftype, "MXFP4_MOE") == 0)
        return true;
    return strcmp(ftype, tn) == 0;
}

static void file_type_rule(const gguf_file *f, const audit_hparams *hp, findings *fs)
{
    const char *ftype = audit_file_type_name(hp->g.file_type);
    if (!ftype)
        return;
    uint64_t by_type[GGUF_TENSOR_COUNT] = { 0 }, n_matrices = 0, n_other = 0;
    for (size_t i = 0; i < gguf_tensor_count(f); i++) {
        const gguf_tensor *t = gguf_tensor_at(f, i);
        /* the embedding and output matrices get their own types in every llama.cpp mix */
        if (audit_class_of(t) != AUDIT_CLASS_MATRIX || t->type >= GGUF_TENSOR_COUNT)
            continue;
        by_type[t->type]++;
        n_matrices++;
        n_other += !in_family(ftype, t->type);
    }
    if (n_other == 0)
        return;
    audit_finding *x = finding_add(fs, AUDIT_INFO, "file-type", NULL);
    if (!x)
        return;
    char mix[200] = "";
    for (int t = 0; t < GGUF_TENSOR_COUNT; t++)
        if (by_type[t]) {
            size_t used = strlen(mix);
            snprintf(mix + used, sizeof mix - used, "%s%llu %s", used ? ", " : "", (unsigned long long)by_type[t],
                     gguf_type_traits_of((uint32_t)t)->name);
        }
    FSET(x->measured, "general.file_type = %lld (%s); the %llu weight matrices are %s", (long long)hp->g.file_type,
         ftype, (unsigned long long)n_matrices, mix);
    FSET(x->expected, "mostly %s-family types; llama.cpp's quantizer falls back to other types where a row "
                      "length is not a multiple of the block size, and records the type that was requested",
         ftype);
    FSET(x->meaning, "not a defect: the file type is a label, each tensor's own type is what counts; an engine "
                     "that dequantizes by the file type instead of the tensor type decodes garbage");
}

static void final_norm_rule(const gguf_file *f, const audit_hparams *hp, const audit_stats *stats, findings *fs)
{
    const gguf_tensor *t = gguf_tensor_by_name(f, "output_norm.weight");
    if (!t || !stats)
        return;
    const audit_stats *s = &stats[t - gguf_tensor_at(f, 0)];
    if (!s->supported || s->mean < FINAL_NORM_LARGE)
        return;
    audit_finding *x = finding_add(fs, AUDIT_INFO, "final-norm-large", t->name);
    if (!x)
        return;
    const model_arch *a = hp->g.arch;
    FSET(x->measured, "mean %.4g (min %.4g, max %.4g)", s->mean, s->min, s->max);
    if (a && a->norm_gains)
        FSET(x->expected, "normal for %s: %s (no sibling layer to compare a final norm with)", a->name, a->norm_gains);
    else
        FSET(x->expected, "%s: no sibling layer to compare a final norm with; large means occur in trained models "
                          "(Qwen2.5: ~7)", hp->g.arch_name);
    FSET(x->meaning, "not a corruption: it scales the final hidden state before the output projection, so logits "
                     "are larger than the hidden-state RMS suggests");
}

static void unsupported_rule(const gguf_file *f, const audit_stats *stats, findings *fs)
{
    if (!stats)
        return;
    for (size_t i = 0; i < gguf_tensor_count(f); i++) {
        const gguf_tensor *t = gguf_tensor_at(f, i);
        if (stats[i].supported || !t->data) /* bytes not there: the caller says which were not read */
            continue;
        audit_finding *x = finding_add(fs, AUDIT_INFO, "not-audited", t->name);
        if (!x)
            return;
        FSET(x->measured, "type %s", gguf_type_traits_of(t->type)->name);
        FSET(x->expected, "a type quant/ decodes");
        FSET(x->meaning, "its values were not checked (its bytes are still hashed and its shape checked)");
    }
}

static void vocab_only_rule(const gguf_file *f, findings *fs)
{
    if (gguf_tensor_count(f) != 0)
        return;
    audit_finding *x = finding_add(fs, AUDIT_INFO, "no-tensors", NULL);
    if (!x)
        return;
    FSET(x->measured, "0 tensors, %zu metadata keys", gguf_kv_count(f));
    FSET(x->expected, "tensors in a model file; none in a vocabulary-only file (llama.cpp's ggml-vocab-*.gguf)");
    FSET(x->meaning, "nothing to run: this file can only be used for tokenization");
}

void rules_meta(const gguf_file *f, const audit_hparams *hp, const audit_stats *stats, findings *fs)
{
    vocab_only_rule(f, fs);
    tied_rule(f, fs);
    padding_rule(f, hp, fs);
    file_type_rule(f, hp, fs);
    final_norm_rule(f, hp, stats, fs);
    unsupported_rule(f, stats, fs);
}
