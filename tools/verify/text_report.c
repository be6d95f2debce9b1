/* The human report: verdict first, then what was checked, the findings by
 * severity, and a per-role table across layers. */
#include "color.h"
#include "format.h"
#include "verify.h"

#include <string.h>

static void print_finding(FILE *out, const audit_finding *x)
{
    fprintf(out, "  %-7s %s%s[%s]\n", audit_severity_name(x->severity), x->tensor, x->tensor[0] ? "  " : "", x->code);
    fprintf(out, "          measured  %s\n", x->measured);
    fprintf(out, "          expected  %s\n", x->expected);
    fprintf(out, "          meaning   %s\n", x->meaning);
}

static void print_findings(FILE *out, const verify_result *r, audit_severity sev, const char *title)
{
    size_t n = verify_count(r, sev);
    if (n == 0)
        return;
    fprintf(out, "\n%s (%zu)\n", title, n);
    for (size_t i = 0; i < r->integrity.n; i++)
        if (r->integrity.v[i].severity == sev)
            print_finding(out, &r->integrity.v[i]);
    for (size_t i = 0; r->audited && i < r->audit.n_findings; i++)
        if (r->audit.findings[i].severity == sev)
            print_finding(out, &r->audit.findings[i]);
}

static void print_structure(FILE *out, const verify_result *r)
{
    if (!r->f) {
        fprintf(out, "structure  unreadable: byte %llu: %s\n", (unsigned long long)r->open_err.offset,
                r->open_err.message);
        return;
    }
    const gguf_coverage *c = &r->cov;
    char data[32];
    gguf_format_size(c->tensor_bytes, data, sizeof data);
    bool all = c->gap_bytes == 0 && c->trailing_bytes == 0;
    fprintf(out, "structure  GGUF v%u, %zu tensors, %s of tensor data; %s\n", gguf_version(r->f),
            gguf_tensor_count(r->f), data,
            all ? "every byte of the data section belongs to a tensor or its padding"
                : "some bytes of the data section belong to no tensor");
    fprintf(out, "           data section %llu B = tensors %llu + padding %llu + gaps %llu + trailing %llu\n",
            (unsigned long long)c->data_bytes, (unsigned long long)c->tensor_bytes,
            (unsigned long long)c->padding_bytes, (unsigned long long)c->gap_bytes,
            (unsigned long long)c->trailing_bytes);
}

static void print_digests(FILE *out, const verify_result *r)
{
    char hex[65];
    if (r->hashed) {
        const char *lead = "digests  ";
        for (int k = 0; k < GGUF_HASH_KIND_COUNT; k++)
            if (r->hashes.model[k].len) {
                gguf_digest_hex(&r->hashes.model[k], hex);
                fprintf(out, "%s  %-6s of all tensor data  %s\n", lead, gguf_hash_kind_name((gguf_hash_kind)k), hex);
                lead = "         ";
            }
        if (r->hashes.has_uuid) {
            gguf_uuid_format(r->hashes.uuid, hex);
            fprintf(out, "           uuid (llama-gguf-hash)     %s\n", hex);
        }
        char sz[32];
        gguf_format_size(r->hashes.bytes_hashed, sz, sizeof sz);
        fprintf(out, "%s  %s read in %.3f s (%.2f GB/s)\n", lead, sz, r->hash_seconds,
                r->hash_seconds > 0 ? (double)r->hashes.bytes_hashed / r->hash_seconds / 1e9 : 0.0);
    }
    if (r->sha256_checked) {
        gguf_digest_hex(&r->sha256, hex);
        fprintf(out, "sha256     %s  %s\n", hex, r->sha256_ok ? "matches --sha256" : "DOES NOT MATCH --sha256");
    }
    if (r->manifest_checked) {
        const gguf_check_report *c = &r->check;
        fprintf(out, "manifest   %s: %zu tensors matched by name; %zu digests OK, %zu mismatched, %zu missing, "
                     "%zu extra tensors\n",
                r->o->manifest, c->n_tensors_checked, c->n_ok, c->n_mismatch, c->n_missing, c->n_extra);
        if (c->n_incomplete)
            fprintf(out, "           %zu digests not checked: their bytes are not all in the file\n", c->n_incomplete);
        if (gguf_manifest_skipped_lines(r->manifest))
            fprintf(out, "           (%zu lines of other kinds skipped)\n", gguf_manifest_skipped_lines(r->manifest));
    }
}

static void print_roles(FILE *out, const verify_result *r)
{
    const audit_report *a = &r->audit;
    if (!r->audited || a->n_roles == 0)
        return;
    fprintf(out, "\nroles across layers\n");
    size_t shown = a->n_roles < VERIFY_ROLES_SHOWN ? a->n_roles : VERIFY_ROLES_SHOWN;
    /* columns as wide as the longest shown role and type list (post_attention_norm.weight, "Q4_K Q6_K Q8_0") */
    int rw = 22, tw = 11;
    for (size_t i = 0; i < shown; i++) {
        const int lr = (int)strlen(a->roles[i].role), lt = (int)strlen(a->roles[i].types);
        rw = lr > rw ? lr : rw;
        tw = lt > tw ? lt : tw;
    }
    fprintf(out, "  %-*s %6s  %-*s %10s %10s %10s %10s %10s %4s\n", rw, "role", "layers", tw, "types", "RMS min",
            "median", "max", "mean(med)", "max |x|", "finds");
    for (size_t i = 0; i < shown; i++) {
        const audit_role_summary *s = &a->roles[i];
        char layers[16];
        snprintf(layers, sizeof layers, s->n_layers ? "%d" : "-", s->n_layers);
        if (s->n_measured == 0) /* a type not decoded, or bytes not read (a remote file's matrices) */
            fprintf(out, "  %-*s %6s  %-*s %10s %10s %10s %10s %10s %4d\n", rw, s->role, layers, tw, s->types, "-", "-",
                    "-", "-", "-", s->n_findings);
        else
            fprintf(out, "  %-*s %6s  %-*s %10.4g %10.4g %10.4g %10.4g %10.4g %4d\n", rw, s->role, layers, tw, s->types,
                    s->rms_min, s->rms_median, s->rms_max, s->mean_median, s->max_abs_max, s->n_findings);
    }
    if (shown < a->n_roles)
        fprintf(out, "  ... and %zu more roles, not listed (each tensor's statistics: --json)\n", a->n_roles - shown);
}

void verify_print_text(FILE *out, const verify_result *r)
{
    size_t e = verify_count(r, AUDIT_ERROR), w = verify_count(r, AUDIT_WARNING), n = verify_count(r, AUDIT_INFO);
    fprintf(out, "gguf-verify %s\n", r->o->path);
    fputs("verdict    ", out);
    color_on(out, r->verdict == VERDICT_OK ? COLOR_GOOD : r->verdict == VERDICT_PROBLEMS ? COLOR_BAD : COLOR_UNSURE);
    if (r->verdict == VERDICT_CANNOT_CHECK)
        fprintf(out, "CANNOT CHECK: %s", r->trouble);
    else
        fprintf(out, "%s: %zu error%s, %zu warning%s, %zu note%s%s", verify_verdict_name(r), e, e == 1 ? "" : "s",
                w, w == 1 ? "" : "s", n, n == 1 ? "" : "s",
                r->audited ? (r->remote ? " (matrices not read: remote)" : "")
                : r->missing_bytes ? " (weights not audited: the file is truncated)"
                                : r->f ? " (weights not audited)" : "");
    color_off(out);
    fputc('\n', out);
    fputc('\n', out);
    print_structure(out, r);
    print_digests(out, r);
    if (r->remote) {
        char unread[32];
        gguf_format_size(r->remote_unread_bytes, unread, sizeof unread);
        fprintf(out, "remote     header and %zu one-dimensional tensors (norms, biases) read; not read, so not checked: "
                "%zu tensors' values (%s) and any digest: download the file for those\n", r->remote_fetched,
                r->remote_unread, unread);
    }
    if (r->audited) {
        uint64_t values = 0;
        for (size_t i = 0; i < gguf_tensor_count(r->f); i++)
            values += r->stats[i].count;
        char v[32];
        fmt_count(values, v, sizeof v);
        fprintf(out, "audit      %zu tensors, %s values decoded in %.3f s\n", gguf_tensor_count(r->f), v,
                r->audit_seconds);
    }
    print_findings(out, r, AUDIT_ERROR, "errors");
    print_findings(out, r, AUDIT_WARNING, "warnings");
    print_findings(out, r, AUDIT_INFO, "notes");
    print_roles(out, r);
}
