/* gguf-inspect's human output: summary, metadata, tensor table, warnings. */
#include "format.h"
#include "inspect.h"

#include <inttypes.h>
#include <string.h>

#define ARRAY_ITEMS 8     /* elements of a long array shown without --full */
#define STRING_CHARS 120  /* bytes of a long string shown without --full */

static const char *arch_of(const gguf_file *f, char *buf, size_t n)
{
    return meta_string(f, "general.architecture", buf, n);
}

/* A hyperparameter "<arch>.<suffix>" as an integer, or -1. */
static int64_t arch_int(const gguf_file *f, const char *suffix)
{
    char arch[64], key[160];
    if (!arch_of(f, arch, sizeof arch))
        return -1;
    snprintf(key, sizeof key, "%s.%s", arch, suffix);
    int64_t v;
    return gguf_get_int(f, key, 0, INT64_MAX, &v, NULL) == GGUF_OK ? v : -1;
}

static void print_summary(FILE *out, const gguf_file *f, const inspect_opts *o)
{
    char buf[256], size[32], arch[64];
    uint64_t params = 0, bytes_by_type[GGUF_TENSOR_COUNT] = { 0 }, count_by_type[GGUF_TENSOR_COUNT] = { 0 };
    for (size_t i = 0; i < gguf_tensor_count(f); i++) {
        const gguf_tensor *t = gguf_tensor_at(f, i);
        params += t->n_elements;
        bytes_by_type[t->type] += t->size;
        count_by_type[t->type]++;
    }
    gguf_format_size(gguf_file_size(f), size, sizeof size);
    fprintf(out, "%-16s %s (%s, %" PRIu64 " bytes)\n", "file", o->path, size, gguf_file_size(f));
    fprintf(out, "%-16s %u\n", "version", gguf_version(f));
    fprintf(out, "%-16s %s\n", "architecture", arch_of(f, arch, sizeof arch) ? arch : "(not set)");
    fprintf(out, "%-16s %s\n", "name", meta_string(f, "general.name", buf, sizeof buf) ? buf : "(not set)");
    fmt_count(params, buf, sizeof buf);
    fprintf(out, "%-16s %s (%" PRIu64 ")\n", "parameters", buf, params);
    fprintf(out, "%-16s %zu\n", "tensors", gguf_tensor_count(f));
    const uint64_t missing = gguf_missing_bytes(f, NULL);
    if (missing) {
        size_t complete = 0;
        for (size_t i = 0; i < gguf_tensor_count(f); i++)
            complete += gguf_tensor_at(f, i)->data != NULL;
        gguf_format_size(missing, size, sizeof size);
        fprintf(out, "%-16s TRUNCATED: %s (%" PRIu64 " bytes) of tensor data missing; %zu of %zu tensors complete\n",
                "", size, missing, complete, gguf_tensor_count(f));
    }
    for (size_t i = 0; gguf_shard_count(f) > 1 && i < gguf_shard_count(f); i++) /* a split model, opened whole */
        fprintf(out, "%-16s %zu of %zu: %s\n", i ? "" : "shards", i + 1, gguf_shard_count(f), gguf_shard_path(f, i));
    bool first = true;
    for (int t = 0; t < GGUF_TENSOR_COUNT; t++) {
        if (!count_by_type[t])
            continue;
        gguf_format_size(bytes_by_type[t], size, sizeof size);
        fprintf(out, "%-16s %-8s %5" PRIu64 " tensors  %10s\n", first ? "bytes per type" : "",
                gguf_type_traits_of((uint32_t)t)->name, count_by_type[t], size);
        first = false;
    }
    fprintf(out, "%-16s %u\n", "alignment", gguf_alignment(f));
    fprintf(out, "%-16s %" PRIu64 "\n", "data offset", gguf_data_offset(f));
    int64_t ctx = arch_int(f, "context_length");
    if (ctx >= 0)
        fprintf(out, "%-16s %" PRId64 "\n", "context length", ctx);
    else
        fprintf(out, "%-16s (not set)\n", "context length");
    const gguf_kv *toks = gguf_find_kv(f, "tokenizer.ggml.tokens");
    int64_t vocab = toks && toks->value.type == GGUF_VT_ARRAY ? (int64_t)toks->value.count : arch_int(f, "vocab_size");
    char model[64], pre[64];
    const char *m = meta_string(f, "tokenizer.ggml.model", model, sizeof model);
    const char *kind = !m ? "no tokenizer" : strcmp(m, "llama") == 0 ? "SentencePiece"
                                          : strcmp(m, "gpt2") == 0    ? "GPT-2 byte-level BPE"
                                                                      : "other";
    if (vocab >= 0)
        fprintf(out, "%-16s %" PRId64 " tokens", "vocabulary", vocab);
    else
        fprintf(out, "%-16s (not set)", "vocabulary");
    fprintf(out, ", %s", kind);
    if (m)
        fprintf(out, " (tokenizer.ggml.model = %s", m);
    if (m && meta_string(f, "tokenizer.ggml.pre", pre, sizeof pre))
        fprintf(out, ", pre = %s", pre);
    fputs(m ? ")\n" : "\n", out);
}

static void print_metadata(FILE *out, const gguf_file *f, const inspect_opts *o)
{
    size_t width = 0;
    for (size_t i = 0; i < gguf_kv_count(f); i++) {
        size_t n = strlen(gguf_kv_at(f, i)->key);
        width = n > width ? n : width;
    }
    fprintf(out, "\nmetadata (%zu keys)\n", gguf_kv_count(f));
    for (size_t i = 0; i < gguf_kv_count(f); i++) {
        const gguf_kv *kv = gguf_kv_at(f, i);
        const char *tn = kv->value.type == GGUF_VT_ARRAY ? "array" : gguf_value_type_name(kv->value.type);
        fprintf(out, "  %-*s  %-6s  ", (int)width, kv->key, tn);
        fmt_value(out, &kv->value, o->full ? 0 : ARRAY_ITEMS, o->full ? 0 : STRING_CHARS);
        fputc('\n', out);
    }
}

static void shape_string(const gguf_tensor *t, char *buf, size_t n)
{
    size_t used = 0;
    buf[0] = '\0';
    for (uint32_t d = 0; d < t->n_dims && used < n; d++)
        used += (size_t)snprintf(buf + used, n - used, d ? " x %" PRIu64 : "%" PRIu64, t->ne[d]);
}

static void print_tensors(FILE *out, const gguf_file *f, const inspect_opts *o)
{
    size_t width = 4, shown = 0;
    for (size_t i = 0; i < gguf_tensor_count(f); i++) {
        const gguf_tensor *t = gguf_tensor_at(f, i);
        if (!inspect_tensor_selected(o, t->name))
            continue;
        size_t n = strlen(t->name);
        width = n > width ? n : width;
        shown++;
    }
    if (o->glob)
        fprintf(out, "\ntensors (%zu of %zu match '%s'; shape in GGUF order, ne0 first)\n", shown,
                gguf_tensor_count(f), o->glob);
    else
        fprintf(out, "\ntensors (%zu; shape in GGUF order, ne0 first)\n", gguf_tensor_count(f));
    fprintf(out, "  %-*s  %-8s  %-24s  %10s  %12s\n", (int)width, "name", "type", "shape", "size", "offset");
    for (size_t i = 0; i < gguf_tensor_count(f); i++) {
        const gguf_tensor *t = gguf_tensor_at(f, i);
        if (!inspect_tensor_selected(o, t->name))
            continue;
        char shape[96], size[32];
        shape_string(t, shape, sizeof shape);
        gguf_format_size(t->size, size, sizeof size);
        fprintf(out, "  %-*s  %-8s  %-24s  %10s  %12" PRIu64, (int)width, t->name,
                gguf_type_traits_of(t->type)->name, shape, size, t->offset);
        const uint64_t present = inspect_tensor_bytes_present(f, t);
        if (present != t->size && present)
            fprintf(out, "  INCOMPLETE: %" PRIu64 " of %" PRIu64 " bytes\n", present, t->size);
        else
            fputs(present == t->size ? "\n" : "  MISSING\n", out);
    }
}

uint64_t inspect_tensor_bytes_present(const gguf_file *f, const gguf_tensor *t)
{
    if (t->data || !gguf_missing_bytes(f, NULL)) /* a whole file (a remote one's tensors are there, not read) */
        return t->size;
    const uint64_t start = gguf_data_offset(f) + t->offset; /* incomplete tensors are the file's own */
    return gguf_file_size(f) > start ? gguf_file_size(f) - start : 0;
}

int inspect_print_text(FILE *out, const gguf_file *f, const inspect_opts *o)
{
    if (!o->tensors_only) {
        print_summary(out, f, o);
        print_metadata(out, f, o);
    }
    if (!o->metadata_only)
        print_tensors(out, f, o);
    if (gguf_warning_count(f))
        fprintf(out, "\nwarnings (%zu)\n", gguf_warning_count(f));
    for (size_t i = 0; i < gguf_warning_count(f); i++) {
        const gguf_warning *w = gguf_warning_at(f, i);
        fprintf(out, "  byte %" PRIu64 ": %s\n", w->offset, w->message);
    }
    return gguf_missing_bytes(f, NULL) ? 1 : 0;
}

/* Raw element or scalar, no quoting or cutting: what a shell script wants. */
static void print_raw(FILE *out, const gguf_value *v)
{
    if (v->type == GGUF_VT_STRING) {
        fwrite(v->v.str.ptr, 1, (size_t)v->v.str.len, out);
        fputc('\n', out);
    } else if (v->type == GGUF_VT_ARRAY && v->elem_type == GGUF_VT_STRING) {
        for (uint64_t i = 0; i < v->count; i++) {
            fwrite(v->v.strs[i].ptr, 1, (size_t)v->v.strs[i].len, out);
            fputc('\n', out);
        }
    } else if (v->type == GGUF_VT_ARRAY && v->elem_type != GGUF_VT_ARRAY) {
        for (uint64_t i = 0; i < v->count; i++) {
            gguf_value e;
            gguf_array_scalar(v, i, &e);
            fmt_value(out, &e, 0, 0);
            fputc('\n', out);
        }
    } else {
        fmt_value(out, v, 0, 0);
        fputc('\n', out);
    }
}

int inspect_print_key(FILE *out, const gguf_file *f, const inspect_opts *o)
{
    const gguf_kv *kv = gguf_find_kv(f, o->key);
    if (!kv) {
        fprintf(stderr, "gguf-inspect: %s: key '%s' is not in the file\n", o->path, o->key);
        return 2;
    }
    print_raw(out, &kv->value);
    return gguf_missing_bytes(f, NULL) ? 1 : 0;
}
