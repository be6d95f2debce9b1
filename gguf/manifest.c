/* Manifests in llama-gguf-hash's format, written and checked.
 *
 * llama-gguf-hash (examples/gguf-hash in llama.cpp) prints one line per
 * tensor and kind, printf("%-8s  %s  %s:%s\n", kind, hex, file, tensor), then
 * the model lines "%-8s  %s  %s\n" with the file name alone, then "uuid". Its
 * checker matches lines by the literal "file:tensor" string, so a renamed file
 * fails every line; ours matches tensors by name and says what differs. */
#include "file.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define UUID_KIND (-1)

/* ---- writing ----------------------------------------------------------- */

typedef struct sbuf {
    char *p;
    size_t len, cap;
    bool failed;
} sbuf;

__attribute__((format(printf, 2, 3))) static void sb_printf(sbuf *b, const char *fmt, ...)
{
    if (b->failed)
        return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(b->p ? b->p + b->len : NULL, b->p ? b->cap - b->len : 0, fmt, ap);
        va_end(ap);
        if (n < 0) {
            b->failed = true;
            return;
        }
        if (b->p && b->len + (size_t)n < b->cap) {
            b->len += (size_t)n;
            return;
        }
        size_t cap = (b->cap ? b->cap * 2 : 4096) + (size_t)n;
        char *q = realloc(b->p, cap);
        if (!q) {
            b->failed = true;
            return;
        }
        b->p = q;
        b->cap = cap;
    }
}

static void line(sbuf *b, const char *kind, const char *hex, const char *label, const char *tensor)
{
    if (tensor)
        sb_printf(b, "%-8s  %s  %s:%s\n", kind, hex, label, tensor);
    else
        sb_printf(b, "%-8s  %s  %s\n", kind, hex, label);
}

char *gguf_manifest_format(const gguf_file *f, const gguf_hashes *h, unsigned kinds, bool uuid, const char *label)
{
    sbuf b = { 0 };
    char hex[65];
    sb_printf(&b, "%s", "");
    for (size_t i = 0; i < f->n_tensors && i < h->n_tensors; i++)
        for (int k = 0; k < GGUF_HASH_KIND_COUNT; k++)
            if ((kinds & GGUF_HASH_BIT(k)) && h->tensor[i][k].len) {
                gguf_digest_hex(&h->tensor[i][k], hex);
                line(&b, gguf_hash_kind_name((gguf_hash_kind)k), hex, label, f->tensors[i].name);
            }
    for (int k = 0; k < GGUF_HASH_KIND_COUNT; k++)
        if ((kinds & GGUF_HASH_BIT(k)) && h->model[k].len) {
            gguf_digest_hex(&h->model[k], hex);
            line(&b, gguf_hash_kind_name((gguf_hash_kind)k), hex, label, NULL);
        }
    if (uuid && h->has_uuid) {
        gguf_uuid_format(h->uuid, hex);
        line(&b, "uuid", hex, label, NULL);
    }
    if (b.failed) {
        free(b.p);
        return NULL;
    }
    return b.p;
}

/* ---- parsing ------------------------------------------------------------ */

typedef struct entry {
    int kind;              /* gguf_hash_kind or UUID_KIND */
    char hex[65];          /* lowercase */
    char *name;            /* "file:tensor" or "file" as written */
    const char *tensor;    /* into name, after the label and ':'; NULL for a model line */
    size_t line;
} entry;

struct gguf_manifest {
    entry *entries;
    size_t n, cap;
    size_t skipped;
    char *label;
};

static size_t hex_len_of(int kind)
{
    static const size_t len[GGUF_HASH_KIND_COUNT] = { 16, 40, 64, 8 };
    return kind == UUID_KIND ? 36 : len[kind];
}

static bool valid_digest_text(int kind, const char *s, size_t n)
{
    if (n != hex_len_of(kind))
        return false;
    for (size_t i = 0; i < n; i++) {
        bool dash = kind == UUID_KIND && (i == 8 || i == 13 || i == 18 || i == 23);
        if (dash ? s[i] != '-' : !isxdigit((unsigned char)s[i]))
            return false;
    }
    return true;
}

static const char *skip_space(const char *p, const char *end)
{
    while (p < end && (*p == ' ' || *p == '\t'))
        p++;
    return p;
}

static const char *skip_word(const char *p, const char *end)
{
    while (p < end && *p != ' ' && *p != '\t')
        p++;
    return p;
}

/* One line; returns false with err filled when it is malformed. */
static gguf_status parse_line(gguf_manifest *m, const char *p, const char *end, size_t lineno, gguf_error *err)
{
    while (end > p && (end[-1] == '\r' || end[-1] == ' ' || end[-1] == '\t'))
        end--;
    p = skip_space(p, end);
    if (p == end)
        return GGUF_OK;
    const char *kw = p, *kw_end = skip_word(p, end);
    char kind_name[16] = "";
    if ((size_t)(kw_end - kw) < sizeof kind_name)
        memcpy(kind_name, kw, (size_t)(kw_end - kw));
    bool is_uuid = strcmp(kind_name, "uuid") == 0;
    int kind = is_uuid ? UUID_KIND : gguf_hash_kind_from_name(kind_name);
    if (!is_uuid && kind < 0) {
        m->skipped++;
        return GGUF_OK;
    }
    const char *hx = skip_space(kw_end, end), *hx_end = skip_word(hx, end);
    const char *name = skip_space(hx_end, end);
    if (name == end || !valid_digest_text(kind, hx, (size_t)(hx_end - hx)))
        return gguf_fail(err, GGUF_E_INVALID_ARG, lineno, "",
                         "manifest line %zu is not '<%s> <%zu hex digits> <file>[:<tensor>]'", lineno, kind_name,
                         hex_len_of(kind));
    /* A line copied from a check run ("<name>  -  Ok") names the same thing. */
    const char *dash = NULL;
    for (const char *q = name; q + 4 < end; q++)
        if (memcmp(q, "  -  ", 5) == 0)
            dash = q;
    if (dash)
        end = dash;
    if (m->n == m->cap) {
        size_t cap = m->cap ? m->cap * 2 : 64;
        entry *e = realloc(m->entries, cap * sizeof *e);
        if (!e)
            return gguf_fail(err, GGUF_E_NOMEM, lineno, "", "out of memory reading the manifest");
        m->entries = e;
        m->cap = cap;
    }
    entry *e = &m->entries[m->n];
    memset(e, 0, sizeof *e);
    e->kind = kind;
    e->line = lineno;
    for (size_t i = 0; i < (size_t)(hx_end - hx); i++)
        e->hex[i] = (char)tolower((unsigned char)hx[i]);
    e->name = strndup(name, (size_t)(end - name));
    if (!e->name)
        return gguf_fail(err, GGUF_E_NOMEM, lineno, "", "out of memory reading the manifest");
    m->n++;
    return GGUF_OK;
}

/* The label is the name of the model lines: the one name that others extend
 * with ":tensor" (the first in file order when several do). Without model
 * lines, each name splits at its last ':'. Names go into a hash index, so a
 * manifest of a million lines is read in linear time. */
static gguf_status split_names(gguf_manifest *m)
{
    gguf_arena arena = { 0 };
    gguf_index ix;
    if (!gguf_index_init(&ix, &arena, m->n)) {
        gguf_arena_free(&arena);
        return GGUF_E_NOMEM;
    }
    for (size_t i = 0; i < m->n; i++)
        gguf_index_insert(&ix, (const char *const *)&m->entries[0].name, sizeof *m->entries, (uint32_t)i);
    size_t first = m->n; /* the earliest line whose name another extends */
    char *prefix = NULL;
    size_t prefix_cap = 0;
    for (size_t j = 0; j < m->n; j++) {
        const char *name = m->entries[j].name;
        for (const char *colon = strchr(name, ':'); colon; colon = strchr(colon + 1, ':')) {
            size_t len = (size_t)(colon - name);
            if (len + 1 > prefix_cap) {
                char *p = realloc(prefix, len + 1);
                if (!p) {
                    free(prefix);
                    gguf_arena_free(&arena);
                    return GGUF_E_NOMEM;
                }
                prefix = p;
                prefix_cap = len + 1;
            }
            memcpy(prefix, name, len);
            prefix[len] = '\0';
            long i = gguf_index_find(&ix, &m->entries[0].name, sizeof *m->entries, prefix);
            if (i >= 0 && (size_t)i < first)
                first = (size_t)i;
        }
    }
    free(prefix);
    gguf_arena_free(&arena);
    const char *label = first < m->n ? m->entries[first].name : NULL;
    bool only_model_lines = !label;
    if (!label && m->n > 0) {
        /* all lines are model lines, or all are tensor lines of one file */
        only_model_lines = strchr(m->entries[0].name, ':') == NULL;
        for (size_t i = 0; i < m->n; i++)
            if (strcmp(m->entries[i].name, m->entries[0].name) != 0)
                only_model_lines = false;
        if (only_model_lines)
            label = m->entries[0].name;
    }
    size_t label_len = label ? strlen(label) : 0;
    m->label = strdup(label ? label : "");
    if (!m->label)
        return GGUF_E_NOMEM;
    for (size_t i = 0; i < m->n; i++) {
        entry *e = &m->entries[i];
        if (label && strcmp(e->name, label) == 0)
            e->tensor = NULL;
        else if (label && strncmp(e->name, label, label_len) == 0 && e->name[label_len] == ':')
            e->tensor = e->name + label_len + 1;
        else {
            const char *colon = strrchr(e->name, ':');
            e->tensor = colon ? colon + 1 : NULL;
        }
    }
    return GGUF_OK;
}

gguf_status gguf_manifest_parse(const char *text, size_t len, gguf_manifest **out, gguf_error *err)
{
    *out = NULL;
    gguf_manifest *m = calloc(1, sizeof *m);
    if (!m)
        return gguf_fail(err, GGUF_E_NOMEM, 0, "", "out of memory reading the manifest");
    const char *p = text, *end = text + len;
    size_t lineno = 0;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *le = nl ? nl : end;
        lineno++;
        gguf_status s = memchr(p, '\0', (size_t)(le - p))
                            ? gguf_fail(err, GGUF_E_INVALID_ARG, lineno, "", "manifest line %zu holds a NUL byte", lineno)
                            : parse_line(m, p, le, lineno, err);
        if (s != GGUF_OK) {
            gguf_manifest_free(m);
            return s;
        }
        p = nl ? nl + 1 : end;
    }
    if (m->n == 0) {
        gguf_manifest_free(m);
        return gguf_fail(err, GGUF_E_INVALID_ARG, 0, "",
                         "the manifest has no xxh64, sha1, sha256, crc32 or uuid line");
    }
    if (split_names(m) != GGUF_OK) {
        gguf_manifest_free(m);
        return gguf_fail(err, GGUF_E_NOMEM, 0, "", "out of memory reading the manifest");
    }
    *out = m;
    return GGUF_OK;
}

void gguf_manifest_free(gguf_manifest *m)
{
    if (!m)
        return;
    for (size_t i = 0; i < m->n; i++)
        free(m->entries[i].name);
    free(m->entries);
    free(m->label);
    free(m);
}

void gguf_manifest_needs(const gguf_manifest *m, unsigned *tensor_kinds, unsigned *model_kinds, bool *uuid)
{
    *tensor_kinds = *model_kinds = 0;
    *uuid = false;
    for (size_t i = 0; i < m->n; i++) {
        const entry *e = &m->entries[i];
        if (e->kind == UUID_KIND)
            *uuid = true;
        else if (e->tensor)
            *tensor_kinds |= GGUF_HASH_BIT(e->kind);
        else
            *model_kinds |= GGUF_HASH_BIT(e->kind);
    }
}

size_t gguf_manifest_skipped_lines(const gguf_manifest *m) { return m->skipped; }
const char *gguf_manifest_label(const gguf_manifest *m) { return m->label; }

/* ---- checking ------------------------------------------------------------ */

static void actual_of(const gguf_file *f, const gguf_hashes *h, const entry *e, const gguf_tensor **t, char *out)
{
    out[0] = '\0';
    *t = NULL;
    if (e->kind == UUID_KIND) {
        if (h->has_uuid)
            gguf_uuid_format(h->uuid, out);
        return;
    }
    if (!e->tensor) {
        if (h->model[e->kind].len)
            gguf_digest_hex(&h->model[e->kind], out);
        return;
    }
    *t = gguf_tensor_by_name(f, e->tensor);
    if (*t && h->tensor[*t - f->tensors][e->kind].len)
        gguf_digest_hex(&h->tensor[*t - f->tensors][e->kind], out);
}

gguf_status gguf_manifest_check(const gguf_manifest *m, const gguf_file *f, const gguf_hashes *h,
                                gguf_check_report *out, gguf_error *err)
{
    memset(out, 0, sizeof *out);
    bool *seen = calloc(f->n_tensors + 1, sizeof *seen);
    out->items = calloc(m->n + f->n_tensors + 1, sizeof *out->items);
    if (!seen || !out->items) {
        free(seen);
        gguf_check_report_free(out);
        return gguf_fail(err, GGUF_E_NOMEM, 0, "", "out of memory checking the manifest");
    }
    bool lists_tensors = false;
    for (size_t i = 0; i < m->n; i++) {
        const entry *e = &m->entries[i];
        gguf_check_item *it = &out->items[out->n_items++];
        const gguf_tensor *t;
        it->tensor = e->tensor;
        it->kind = e->kind;
        snprintf(it->expected, sizeof it->expected, "%s", e->hex);
        actual_of(f, h, e, &t, it->actual);
        if (e->tensor) {
            lists_tensors = true;
            if (t && !seen[t - f->tensors]) {
                seen[t - f->tensors] = true;
                out->n_tensors_checked++;
            }
        }
        if (e->tensor && !t)
            it->state = GGUF_CHECK_MISSING, out->n_missing++;
        else if (e->tensor ? !t->data : f->missing_bytes != 0)
            it->state = GGUF_CHECK_INCOMPLETE, out->n_incomplete++;
        else if (strcmp(it->expected, it->actual) == 0)
            it->state = GGUF_CHECK_OK, out->n_ok++;
        else
            it->state = GGUF_CHECK_MISMATCH, out->n_mismatch++;
    }
    for (size_t i = 0; lists_tensors && i < f->n_tensors; i++)
        if (!seen[i]) {
            gguf_check_item *it = &out->items[out->n_items++];
            it->tensor = f->tensors[i].name;
            it->kind = -1;
            it->state = GGUF_CHECK_EXTRA;
            out->n_extra++;
        }
    free(seen);
    return GGUF_OK;
}

void gguf_check_report_free(gguf_check_report *r)
{
    if (!r)
        return;
    free(r->items);
    r->items = NULL;
    r->n_items = 0;
}
