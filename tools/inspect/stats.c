/* gguf-inspect --stats: the audit's statistics per tensor, as a table or JSON. */
#include "audit.h"
#include "format.h"
#include "inspect.h"
#include "json_doc.h"
#include "json_line.h"
#include "progress.h"
#include "stats_json.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

static void scales_text(const audit_stats *s, char *buf, size_t cap)
{
    buf[0] = '\0';
    size_t used = 0;
    for (int i = 0; i < s->n_scales && used < cap; i++) {
        const audit_scale_stats *c = &s->scale[i];
        uint64_t bad = c->n_nan + c->n_inf + c->n_huge + (c->never_negative ? c->n_negative : 0);
        used += (size_t)snprintf(buf + used, cap - used, "%s%s:%s", i ? " " : "", c->name,
                                 bad ? "BAD" : "ok");
    }
    if (!s->n_scales)
        snprintf(buf, cap, "-");
}

int inspect_print_stats(FILE *out, const gguf_file *f, const inspect_opts *o)
{
    size_t n = gguf_tensor_count(f), width = 4;
    for (size_t i = 0; i < n; i++)
        if (inspect_tensor_selected(o, gguf_tensor_at(f, i)->name) && strlen(gguf_tensor_at(f, i)->name) > width)
            width = strlen(gguf_tensor_at(f, i)->name);
    cJSON *arr = o->json ? cJSON_CreateArray() : NULL;
    if (!o->json)
        fprintf(out, "%-*s  %-7s %10s %5s %5s %7s %11s %11s %11s %11s %11s %11s  %s\n", (int)width, "name", "type",
                "count", "nan", "inf", "zeros%", "min", "max", "mean", "std", "rms", "max |x|", "scales");
    progress bar;
    progress_init_count(&bar, "statistics", "tensors");
    for (size_t i = 0; i < n; i++) {
        const gguf_tensor *t = gguf_tensor_at(f, i);
        if (!inspect_tensor_selected(o, t->name))
            continue;
        audit_stats s;
        if (audit_tensor_stats(t, 0, &s) != AUDIT_OK) {
            fprintf(stderr, "gguf-inspect: out of memory\n");
            cJSON_Delete(arr);
            return 2;
        }
        progress_update(&bar, i + 1, n);
        if (o->json) {
            cJSON_AddItemToArray(arr, stats_to_json(t, &s));
            continue;
        }
        const char *type = gguf_type_traits_of(t->type)->name;
        if (!s.supported) {
            fprintf(out, "%-*s  %-7s (not decoded: no dequantizer for this type)\n", (int)width, t->name, type);
            continue;
        }
        char sc[64], cnt[32];
        scales_text(&s, sc, sizeof sc);
        fmt_count(s.count, cnt, sizeof cnt);
        fprintf(out, "%-*s  %-7s %10s %5llu %5llu %7.2f %11.4g %11.4g %11.4g %11.4g %11.4g %11.4g  %s\n", (int)width,
                t->name, type, cnt, (unsigned long long)s.n_nan, (unsigned long long)(s.n_pinf + s.n_ninf),
                s.count ? 100.0 * (double)s.n_zero / (double)s.count : 0.0, s.min, s.max, s.mean, s.std, s.rms,
                s.max_abs, sc);
    }
    progress_end(&bar);
    if (o->json) { /* the shared envelope (docs/JSON.md), the statistics under "tensors"; one line each */
        cJSON *doc = json_doc_new("gguf-inspect", o->path);
        json_doc_verdict(doc, 0, "statistics of the selected tensors");
        cJSON_AddItemToObject(doc, "tensors", arr);
        if (json_print_line(out, doc))
            return 2;
    }
    return 0;
}
