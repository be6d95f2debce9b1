/* audit_model: the rules in order, findings sorted by severity, and the
 * per-role summary across layers. */
#include "rules.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *audit_severity_name(audit_severity s)
{
    switch (s) {
    case AUDIT_ERROR: return "error";
    case AUDIT_WARNING: return "warning";
    default: return "info";
    }
}

static audit_code_count *code_count(audit_findings *l, const char *code)
{
    for (size_t i = 0; i < l->n_counts; i++)
        if (!strncmp(l->counts[i].code, code, sizeof l->counts[i].code - 1))
            return &l->counts[i];
    audit_code_count *c = realloc(l->counts, (l->n_counts + 1) * sizeof *c);
    if (!c)
        return NULL;
    l->counts = c;
    c = &l->counts[l->n_counts++];
    memset(c, 0, sizeof *c);
    FSET(c->code, "%s", code);
    return c;
}

audit_finding *audit_findings_add(audit_findings *l, audit_severity sev, const char *code, const char *tensor)
{
    audit_code_count *cc = code_count(l, code);
    if (!cc) {
        l->failed = true;
        return NULL;
    }
    if (cc->kept >= AUDIT_SAME_CODE_MAX) {
        cc->dropped++;
        cc->worst = sev > cc->worst ? sev : cc->worst;
        FSET(cc->last_tensor, "%s", tensor ? tensor : "");
        memset(&l->spill, 0, sizeof l->spill);
        l->spill.layer = -1;
        return &l->spill;
    }
    cc->kept++;
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 32;
        audit_finding *v = realloc(l->v, cap * sizeof *v);
        if (!v) {
            l->failed = true;
            return NULL;
        }
        l->v = v;
        l->cap = cap;
    }
    audit_finding *x = &l->v[l->n++];
    memset(x, 0, sizeof *x);
    x->severity = sev;
    x->layer = -1;
    FSET(x->code, "%s", code);
    if (tensor)
        FSET(x->tensor, "%s", tensor);
    return x;
}

void audit_findings_close(audit_findings *l)
{
    size_t n_counts = l->n_counts;
    audit_code_count *counts = l->counts;
    l->counts = NULL;
    l->n_counts = 0;
    for (size_t i = 0; i < n_counts; i++) {
        const audit_code_count *c = &counts[i];
        if (!c->dropped)
            continue;
        /* the summary must not count against the cap it reports */
        audit_finding *x = audit_findings_add(l, c->worst, c->code, NULL);
        if (!x)
            break;
        FSET(x->measured, "and %zu more '%s' findings like the %zu above (the last: %s)", c->dropped, c->code,
             c->kept, c->last_tensor[0] ? c->last_tensor : "the model");
        FSET(x->expected, "at most %d findings of one kind are listed", AUDIT_SAME_CODE_MAX);
        FSET(x->meaning, "the same problem repeats across the file; the ones listed show its nature");
    }
    free(counts);
    free(l->counts);
    l->counts = NULL;
    l->n_counts = 0;
}

audit_finding *finding_add(findings *fs, audit_severity sev, const char *code, const char *tensor)
{
    audit_finding *x = audit_findings_add(fs, sev, code, tensor);
    const char *role;
    if (x && tensor)
        x->layer = audit_layer_of(tensor, &role);
    return x;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

double median_of(double *v, size_t n)
{
    if (n == 0)
        return 0.0;
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Stable: errors, warnings, infos, each in the order the rules found them. */
static void sort_by_severity(findings *fs)
{
    if (fs->n == 0)
        return;
    audit_finding *tmp = malloc(fs->n * sizeof *tmp);
    if (!tmp)
        return;
    size_t k = 0;
    for (int s = AUDIT_ERROR; s >= AUDIT_INFO; s--)
        for (size_t i = 0; i < fs->n; i++)
            if ((int)fs->v[i].severity == s)
                tmp[k++] = fs->v[i];
    memcpy(fs->v, tmp, fs->n * sizeof *tmp);
    free(tmp);
}

static void add_type(char *types, size_t cap, uint32_t type)
{
    const char *name = gguf_type_traits_of(type)->name;
    size_t len = strlen(name);
    for (const char *p = types; (p = strstr(p, name)); p += len)
        if ((p == types || p[-1] == ',') && (p[len] == ',' || p[len] == '\0'))
            return;
    size_t used = strlen(types);
    snprintf(types + used, cap - used, "%s%s", used ? "," : "", name);
}

static int by_first_tensor(const void *a, const void *b)
{
    const audit_role_summary *x = a, *y = b;
    return x->first_tensor < y->first_tensor ? -1 : x->first_tensor > y->first_tensor;
}

/* Groups tensors by role (sorting, so 100 000 tensors stay fast) and
 * summarizes each group; roles appear in the order of their first tensor. */
static audit_status summarize_roles(const gguf_file *f, const audit_stats *stats, audit_report *r)
{
    size_t n = gguf_tensor_count(f);
    role_entry *k = role_entries_sorted(f);
    int *n_found = calloc(n + 1, sizeof *n_found);
    double *rms = malloc((n + 1) * sizeof *rms), *mean = malloc((n + 1) * sizeof *mean);
    r->roles = calloc(n + 1, sizeof *r->roles);
    if (!k || !n_found || !rms || !mean || !r->roles) {
        free(k), free(n_found), free(rms), free(mean);
        return AUDIT_E_NOMEM;
    }
    for (size_t i = 0; i < r->n_findings; i++) {
        const gguf_tensor *t = r->findings[i].tensor[0] ? gguf_tensor_by_name(f, r->findings[i].tensor) : NULL;
        if (t)
            n_found[t - gguf_tensor_at(f, 0)]++;
    }
    for (size_t g = 0; g < n;) {
        size_t e = role_group_end(k, n, g);
        audit_role_summary *s = &r->roles[r->n_roles++];
        snprintf(s->role, sizeof s->role, "%s", k[g].role);
        s->first_tensor = k[g].index;
        size_t m = 0;
        for (size_t j = g; j < e; j++) {
            size_t i = k[j].index;
            s->first_tensor = i < s->first_tensor ? i : s->first_tensor;
            s->n_layers += k[j].layer >= 0;
            s->n_findings += n_found[i];
            add_type(s->types, sizeof s->types, gguf_tensor_at(f, i)->type);
            if (!stats || !stats[i].supported)
                continue;
            s->max_abs_max = m == 0 || stats[i].max_abs > s->max_abs_max ? stats[i].max_abs : s->max_abs_max;
            s->rms_min = m == 0 || stats[i].rms < s->rms_min ? stats[i].rms : s->rms_min;
            s->rms_max = m == 0 || stats[i].rms > s->rms_max ? stats[i].rms : s->rms_max;
            rms[m] = stats[i].rms;
            mean[m] = stats[i].mean;
            m++;
        }
        s->n_measured = (int)m;
        s->rms_median = median_of(rms, m);
        s->mean_median = median_of(mean, m);
        g = e;
    }
    qsort(r->roles, r->n_roles, sizeof *r->roles, by_first_tensor);
    free(k), free(n_found), free(rms), free(mean);
    return AUDIT_OK;
}

audit_status audit_model(const gguf_file *f, const audit_stats *stats, audit_report *out)
{
    memset(out, 0, sizeof *out);
    if (!f)
        return AUDIT_E_INVALID_ARG;
    audit_read_hparams(f, &out->hp);
    findings fs = { 0 };
    rules_shape(f, &out->hp, &fs);
    rules_names(f, &out->hp, &fs);
    if (stats) {
        rules_values(f, &out->hp, stats, &fs);
        rules_siblings(f, stats, &fs);
        rules_experts(f, stats, &fs);
    }
    rules_meta(f, &out->hp, stats, &fs);
    audit_findings_close(&fs);
    if (fs.failed) {
        free(fs.v);
        return AUDIT_E_NOMEM;
    }
    sort_by_severity(&fs);
    out->findings = fs.v;
    out->n_findings = fs.n;
    for (size_t i = 0; i < fs.n; i++) {
        out->n_errors += fs.v[i].severity == AUDIT_ERROR;
        out->n_warnings += fs.v[i].severity == AUDIT_WARNING;
        out->n_infos += fs.v[i].severity == AUDIT_INFO;
    }
    if (summarize_roles(f, stats, out) != AUDIT_OK) {
        audit_report_free(out);
        return AUDIT_E_NOMEM;
    }
    return AUDIT_OK;
}

void audit_report_free(audit_report *r)
{
    if (!r)
        return;
    free(r->findings);
    free(r->roles);
    memset(r, 0, sizeof *r);
}
