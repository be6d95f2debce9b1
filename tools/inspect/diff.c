/* gguf-inspect --diff A B: metadata keys added, removed and changed; tensors
 * identical in bytes or different, and by how much in value; and a reading of
 * the pattern (finetune, requantization, localized change). Exit status as
 * cmp: 0 identical, 1 different, 2 trouble. */
#include "audit.h"
#include "format.h"
#include "inspect.h"
#include "json_doc.h"
#include "json_line.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct tensor_diff {
    const gguf_tensor *a, *b;
    audit_diff d;
} tensor_diff;

typedef struct diff_summary {
    size_t kv_added, kv_removed, kv_changed;
    size_t only_a, only_b, identical, differ, type_changed, shape_changed, localized, nonfinite;
    double max_rel;
} diff_summary;

static bool same_shape(const gguf_tensor *a, const gguf_tensor *b)
{
    return a->n_dims == b->n_dims && memcmp(a->ne, b->ne, sizeof a->ne) == 0;
}

/* A reading of the pattern, for a human deciding what happened. */
static const char *reading(const diff_summary *s, size_t n_common)
{
    if (s->only_a || s->only_b || s->shape_changed)
        return "different models (tensors added, removed or reshaped)";
    if (s->differ == 0)
        return s->kv_added + s->kv_removed + s->kv_changed ? "same weights; only the metadata was edited"
                                                           : "identical";
    if (s->nonfinite)
        return "corruption: NaN/Inf appear where the other file has numbers";
    if (s->type_changed)
        return "a requantization: tensor types changed and the values moved by quantization noise";
    if (s->localized && s->differ * 5 <= n_common)
        return "a localized change: a few tensors differ in a few places (corruption or a deliberate edit)";
    if (s->differ * 2 >= n_common)
        return "a finetune or another checkpoint: most tensors moved a little, types unchanged";
    return "some tensors were replaced or retrained, the rest are byte-identical";
}

static int print_json(FILE *out, const gguf_file *fa, const gguf_file *fb, const tensor_diff *td, size_t n_td,
                      const diff_summary *s, const char *verdict, const inspect_opts *o, int exit_status)
{
    cJSON *root = json_doc_new("gguf-inspect", o->path);
    json_add_text(root, "other", o->other);
    cJSON *findings = json_doc_verdict(root, exit_status, verdict); /* "problem": the files differ, as cmp says */
    if (exit_status) {
        char measured[160];
        snprintf(measured, sizeof measured, "%zu tensors differ, %zu only in A, %zu only in B; %zu keys added, %zu "
                 "removed, %zu changed", s->differ, s->only_a, s->only_b, s->kv_added, s->kv_removed, s->kv_changed);
        json_doc_finding(findings, "info", "different", NULL, NULL, measured, "identical files", verdict);
    }
    cJSON *kv = cJSON_AddObjectToObject(root, "metadata");
    cJSON *added = cJSON_AddArrayToObject(kv, "added"), *removed = cJSON_AddArrayToObject(kv, "removed"),
          *changed = cJSON_AddArrayToObject(kv, "changed");
    for (size_t i = 0; i < gguf_kv_count(fb); i++)
        if (!gguf_find_kv(fa, gguf_kv_at(fb, i)->key))
            cJSON_AddItemToArray(added, json_text(gguf_kv_at(fb, i)->key, strlen(gguf_kv_at(fb, i)->key)));
    for (size_t i = 0; i < gguf_kv_count(fa); i++) {
        const gguf_kv *a = gguf_kv_at(fa, i), *b = gguf_find_kv(fb, a->key);
        if (!b)
            cJSON_AddItemToArray(removed, json_text(a->key, strlen(a->key)));
        else if (!gguf_value_equal(&a->value, &b->value))
            cJSON_AddItemToArray(changed, json_text(a->key, strlen(a->key)));
    }
    cJSON *tensors = cJSON_AddArrayToObject(root, "tensors");
    for (size_t i = 0; i < n_td; i++) {
        const tensor_diff *t = &td[i];
        cJSON *o = cJSON_CreateObject();
        json_add_text(o, "name", (t->a ? t->a : t->b)->name);
        cJSON_AddStringToObject(o, "status", !t->b ? "only_a" : !t->a ? "only_b" : t->d.bytes_equal ? "identical"
                                                                                                  : "different");
        if (t->a)
            cJSON_AddStringToObject(o, "type_a", gguf_type_traits_of(t->a->type)->name);
        if (t->b)
            cJSON_AddStringToObject(o, "type_b", gguf_type_traits_of(t->b->type)->name);
        if (t->a && t->b && !same_shape(t->a, t->b))
            cJSON_AddBoolToObject(o, "shape_changed", true);
        if (t->a && t->b && !t->d.bytes_equal && t->d.comparable) {
            cJSON_AddNumberToObject(o, "values_different", (double)t->d.n_different);
            cJSON_AddNumberToObject(o, "count", (double)t->d.count);
            cJSON_AddNumberToObject(o, "max_abs_diff", t->d.max_abs_diff);
            cJSON_AddNumberToObject(o, "max_abs_index", (double)t->d.max_abs_index);
            cJSON_AddNumberToObject(o, "rms_diff", t->d.rms_diff);
            cJSON_AddNumberToObject(o, "rel_rms", t->d.rel_rms);
            cJSON_AddNumberToObject(o, "nonfinite_a", (double)t->d.n_nonfinite_a);
            cJSON_AddNumberToObject(o, "nonfinite_b", (double)t->d.n_nonfinite_b);
        }
        cJSON_AddItemToArray(tensors, o);
    }
    cJSON *sum = cJSON_AddObjectToObject(root, "summary");
    cJSON_AddNumberToObject(sum, "identical", (double)s->identical);
    cJSON_AddNumberToObject(sum, "different", (double)s->differ);
    cJSON_AddNumberToObject(sum, "only_a", (double)s->only_a);
    cJSON_AddNumberToObject(sum, "only_b", (double)s->only_b);
    cJSON_AddNumberToObject(sum, "type_changed", (double)s->type_changed);
    cJSON_AddStringToObject(sum, "reading", verdict);
    return json_print_line(out, root) ? 2 : 0;
}

static void print_text_metadata(FILE *out, const gguf_file *fa, const gguf_file *fb, const diff_summary *s)
{
    fprintf(out, "metadata: %zu added, %zu removed, %zu changed\n", s->kv_added, s->kv_removed, s->kv_changed);
    for (size_t i = 0; i < gguf_kv_count(fa); i++) {
        const gguf_kv *a = gguf_kv_at(fa, i), *b = gguf_find_kv(fb, a->key);
        if (!b) {
            fprintf(out, "  - %s = ", a->key);
            fmt_value(out, &a->value, 6, 60);
            fputc('\n', out);
        } else if (!gguf_value_equal(&a->value, &b->value)) {
            fprintf(out, "  ~ %s: ", a->key);
            fmt_value(out, &a->value, 6, 60);
            fputs(" -> ", out);
            fmt_value(out, &b->value, 6, 60);
            fputc('\n', out);
        }
    }
    for (size_t i = 0; i < gguf_kv_count(fb); i++)
        if (!gguf_find_kv(fa, gguf_kv_at(fb, i)->key)) {
            fprintf(out, "  + %s = ", gguf_kv_at(fb, i)->key);
            fmt_value(out, &gguf_kv_at(fb, i)->value, 6, 60);
            fputc('\n', out);
        }
}

static void print_text_tensors(FILE *out, const tensor_diff *td, size_t n_td, const diff_summary *s)
{
    fprintf(out, "tensors: %zu identical, %zu different, %zu only in A, %zu only in B\n", s->identical, s->differ,
            s->only_a, s->only_b);
    size_t width = 4;
    for (size_t i = 0; i < n_td; i++)
        width = strlen((td[i].a ? td[i].a : td[i].b)->name) > width ? strlen((td[i].a ? td[i].a : td[i].b)->name)
                                                                     : width;
    bool header = false;
    for (size_t i = 0; i < n_td; i++) {
        const tensor_diff *t = &td[i];
        if (t->a && t->b && t->d.bytes_equal)
            continue;
        if (!header) {
            fprintf(out, "  %-*s  %-13s %12s %11s %11s %10s\n", (int)width, "name", "type A->B", "values diff",
                    "max |diff|", "RMS diff", "relative");
            header = true;
        }
        const char *name = (t->a ? t->a : t->b)->name;
        if (!t->b || !t->a) {
            fprintf(out, "  %-*s  only in %s\n", (int)width, name, t->a ? "A" : "B");
            continue;
        }
        char types[40];
        snprintf(types, sizeof types, "%s->%s", gguf_type_traits_of(t->a->type)->name,
                 gguf_type_traits_of(t->b->type)->name);
        if (!t->d.comparable) {
            fprintf(out, "  %-*s  %-13s %s\n", (int)width, name, types,
                    same_shape(t->a, t->b) ? "(values not decodable)" : "(shapes differ)");
            continue;
        }
        char cnt[48];
        snprintf(cnt, sizeof cnt, "%.3g%%", 100.0 * (double)t->d.n_different / (double)t->d.count);
        fprintf(out, "  %-*s  %-13s %12s %11.4g %11.4g %10.3g%s%s\n", (int)width, name, types, cnt, t->d.max_abs_diff,
                t->d.rms_diff, t->d.rel_rms, t->d.n_nonfinite_a != t->d.n_nonfinite_b ? "  NaN/Inf differ" : "",
                same_shape(t->a, t->b) ? "" : "  shapes differ");
    }
}

int inspect_print_diff(FILE *out, const gguf_file *fa, const gguf_file *fb, const inspect_opts *o)
{
    size_t na = gguf_tensor_count(fa), nb = gguf_tensor_count(fb), n_td = 0, n_common = 0;
    tensor_diff *td = calloc(na + nb + 1, sizeof *td);
    if (!td)
        return 2;
    diff_summary s = { 0 };
    for (size_t i = 0; i < gguf_kv_count(fb); i++)
        s.kv_added += gguf_find_kv(fa, gguf_kv_at(fb, i)->key) == NULL;
    for (size_t i = 0; i < gguf_kv_count(fa); i++) {
        const gguf_kv *a = gguf_kv_at(fa, i), *b = gguf_find_kv(fb, a->key);
        s.kv_removed += !b;
        s.kv_changed += b && !gguf_value_equal(&a->value, &b->value);
    }
    for (size_t i = 0; i < na; i++) {
        tensor_diff *t = &td[n_td++];
        t->a = gguf_tensor_at(fa, i);
        t->b = gguf_tensor_by_name(fb, t->a->name);
        if (!t->b) {
            s.only_a++;
            continue;
        }
        n_common++;
        if (audit_compare_tensors(t->a, t->b, 0, &t->d) != AUDIT_OK) {
            free(td);
            return 2;
        }
        if (t->d.bytes_equal) {
            s.identical++;
            continue;
        }
        s.differ++;
        s.type_changed += t->a->type != t->b->type;
        s.shape_changed += !same_shape(t->a, t->b);
        s.nonfinite += t->d.n_nonfinite_a != t->d.n_nonfinite_b;
        /* under 1% of the values (or a handful) moved: a patch, not a retraining */
        s.localized += t->d.comparable && (t->d.n_different * 100 < t->d.count || t->d.n_different <= 16);
        s.max_rel = fmax(s.max_rel, t->d.rel_rms);
    }
    for (size_t i = 0; i < nb; i++)
        if (!gguf_tensor_by_name(fa, gguf_tensor_at(fb, i)->name)) {
            td[n_td++].b = gguf_tensor_at(fb, i);
            s.only_b++;
        }
    const char *verdict = reading(&s, n_common);
    int rc = 0, differ = s.differ || s.only_a || s.only_b || s.kv_added || s.kv_removed || s.kv_changed;
    if (o->json) {
        rc = print_json(out, fa, fb, td, n_td, &s, verdict, o, differ ? 1 : 0);
    } else {
        fprintf(out, "A: %s\nB: %s\n", o->path, o->other);
        print_text_metadata(out, fa, fb, &s);
        print_text_tensors(out, td, n_td, &s);
        fprintf(out, "reading: %s\n", verdict);
    }
    free(td);
    if (rc)
        return rc;
    return differ ? 1 : 0;
}
