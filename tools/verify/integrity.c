/* Integrity: structure, data-section coverage, digests, the Hugging Face
 * sha256 and manifests, as findings beside the audit's. */
#include "progress.h"
#include "read_file.h"
#include "verify.h"

#include <ctype.h>
#include <errno.h>
#include <strings.h>
#include <stdlib.h>
#include <string.h>

#define FSET AUDIT_FSET

static void warnings_to_findings(verify_result *r)
{
    for (size_t i = 0; i < gguf_warning_count(r->f); i++) {
        const gguf_warning *w = gguf_warning_at(r->f, i);
        static const char *const codes[] = { "gap", "reordered", "long-name" };
        audit_finding *x = audit_findings_add(&r->integrity, AUDIT_WARNING, codes[w->kind], w->subject);
        if (!x)
            return;
        FSET(x->measured, "at byte %llu", (unsigned long long)w->offset);
        FSET(x->expected, "the layout llama.cpp writes and reads");
        FSET(x->meaning, "%s", w->message);
    }
}

/* A truncated download: how much is there, which tensors are whole, and what to do. */
static void truncation_finding(verify_result *r)
{
    const gguf_coverage *c = &r->cov;
    audit_finding *x = audit_findings_add(&r->integrity, AUDIT_ERROR, "truncated", r->open_err.subject);
    if (!x)
        return;
    const uint64_t need = r->file_size + r->missing_bytes;
    const size_t n = gguf_tensor_count(r->f), absent = n - c->complete_tensors - c->partial_tensors;
    char have[32], needed[32], missing[32];
    gguf_format_size(r->file_size, have, sizeof have);
    gguf_format_size(need, needed, sizeof needed);
    gguf_format_size(r->missing_bytes, missing, sizeof missing);
    FSET(x->measured, "the file is %s (%llu bytes) of the %s its tensor table needs: %s missing (%.1f %%); "
                      "%zu of %zu tensors complete, %zu cut short (%llu bytes of it present), %zu absent",
         have, (unsigned long long)r->file_size, needed, missing, 100.0 * (double)r->missing_bytes / (double)need,
         c->complete_tensors, n, c->partial_tensors, (unsigned long long)c->partial_bytes, absent);
    FSET(x->expected, "%llu bytes", (unsigned long long)need);
    FSET(x->meaning, "an incomplete download or copy (the first missing tensor is '%.200s'); llama.cpp refuses "
                     "it. Resume the download (huggingface-cli download resumes; curl -C -; wget -c) and verify "
                     "again%s", r->open_err.subject,
         r->o->manifest ? "" : "; a manifest (--manifest) says whether the tensors present are intact");
}

static void coverage_findings(verify_result *r)
{
    const gguf_coverage *c = &r->cov;
    audit_finding *x;
    if (c->appended_gguf_offset && (x = audit_findings_add(&r->integrity, AUDIT_ERROR, "appended-file", NULL))) {
        FSET(x->measured, "a second GGUF header at byte %llu, where this file's data ends: %llu more bytes%s",
             (unsigned long long)c->appended_gguf_offset, (unsigned long long)(r->file_size - c->appended_gguf_offset),
             c->appended_is_copy ? ", a copy of the file's own first bytes" : ", another file");
        FSET(x->expected, "the file ends at byte %llu", (unsigned long long)c->appended_gguf_offset);
        FSET(x->meaning, "%s; the model's own bytes may be intact (its tensors' digests tell). "
                         "'truncate -s %llu FILE' cuts it back",
             c->appended_is_copy ? "a download resumed from the start appended the file to itself"
                                 : "another GGUF file was appended to this one",
             (unsigned long long)c->appended_gguf_offset);
    } else if (c->trailing_bytes && (x = audit_findings_add(&r->integrity, AUDIT_WARNING, "trailing-bytes", NULL))) {
        FSET(x->measured, "%llu bytes from byte %llu to the end of the file belong to no tensor",
             (unsigned long long)c->trailing_bytes, (unsigned long long)c->trailing_offset);
        FSET(x->expected, "the file ends with the last tensor's data and its alignment padding");
        FSET(x->meaning, "something was appended, or the file was concatenated or partially overwritten; the "
                         "tensors themselves may still be intact (check a manifest)");
    }
    if (c->padding_nonzero && (x = audit_findings_add(&r->integrity, AUDIT_WARNING, "padding-nonzero", NULL))) {
        FSET(x->measured, "%llu of %llu alignment padding bytes are not zero", (unsigned long long)c->padding_nonzero,
             (unsigned long long)c->padding_bytes);
        FSET(x->expected, "zero padding, as ggml and gguf-py write it");
        FSET(x->meaning, "bytes changed after the file was written, or tensor offsets point at shifted data");
    }
}

static const char *kind_name(int kind) { return kind < 0 ? "uuid" : gguf_hash_kind_name((gguf_hash_kind)kind); }

/* Appends "kind hex" to a finding's text field, comma-separated. */
static void append(char *field, size_t cap, int kind, const char *hex)
{
    size_t used = strlen(field);
    snprintf(field + used, cap - used, "%s%s %s", used ? ", " : "", kind_name(kind), hex[0] ? hex : "(not computed)");
}

/* One finding per tensor (and one for the model lines), listing every kind that differs. */
static void manifest_findings(verify_result *r)
{
    const gguf_check_report *c = &r->check;
    audit_finding *last = NULL;
    const char *last_tensor = NULL;
    for (size_t i = 0; i < c->n_items; i++) {
        const gguf_check_item *it = &c->items[i];
        const char *tensor = it->tensor ? it->tensor : "";
        audit_finding *x;
        if (it->state == GGUF_CHECK_MISMATCH) {
            if (last && last_tensor && strcmp(last_tensor, tensor) == 0 && strcmp(last->code, "checksum-mismatch") == 0)
                x = last;
            else if ((x = audit_findings_add(&r->integrity, AUDIT_ERROR, "checksum-mismatch", tensor)))
                FSET(x->meaning, "%s", it->tensor ? "this tensor's bytes differ from the ones the manifest was "
                                                    "made from: corrupted, requantized or a different file"
                                                  : "the tensor data as a whole differs from the manifest's model");
            if (!x)
                return;
            append(x->measured, sizeof x->measured, it->kind, it->actual);
            append(x->expected, sizeof x->expected, it->kind, it->expected);
            last = x;
            last_tensor = tensor;
        } else if (it->state == GGUF_CHECK_MISSING) {
            if (last && last_tensor && strcmp(last_tensor, tensor) == 0 && strcmp(last->code, "tensor-missing") == 0)
                continue; /* the same tensor's other lines */
            if (!(x = audit_findings_add(&r->integrity, AUDIT_ERROR, "tensor-missing", tensor)))
                return;
            FSET(x->measured, "not in the file");
            FSET(x->expected, "a tensor named '%s' (the manifest lists it)", tensor);
            FSET(x->meaning, "the file lacks a tensor the manifest's model had: an incomplete or different model");
            last = x;
            last_tensor = tensor;
        } else if (it->state == GGUF_CHECK_EXTRA &&
                   (x = audit_findings_add(&r->integrity, AUDIT_WARNING, "tensor-extra", tensor))) {
            FSET(x->measured, "in the file, not in the manifest");
            FSET(x->expected, "only the manifest's tensors");
            FSET(x->meaning, "the file has a tensor the manifest's model did not: a different model or a "
                             "manifest of another file");
            last = x;
            last_tensor = tensor;
        }
    }
}

/* A truncated file checked against a manifest: whether what arrived is intact, so that a resumed download can
 * be trusted. */
static void present_tensors_finding(verify_result *r)
{
    const gguf_check_report *c = &r->check;
    size_t intact = 0, bad = 0, incomplete = 0;
    const char *last = NULL;
    for (size_t i = 0; i < c->n_items; i++) { /* a tensor's lines are adjacent in a manifest */
        const gguf_check_item *it = &c->items[i];
        if (!it->tensor || (last && strcmp(last, it->tensor) == 0))
            continue;
        last = it->tensor;
        size_t j = i;
        gguf_check_state worst = GGUF_CHECK_OK;
        for (; j < c->n_items && c->items[j].tensor && strcmp(c->items[j].tensor, it->tensor) == 0; j++)
            if (c->items[j].state != GGUF_CHECK_OK)
                worst = c->items[j].state;
        intact += worst == GGUF_CHECK_OK;
        bad += worst == GGUF_CHECK_MISMATCH;
        incomplete += worst == GGUF_CHECK_INCOMPLETE;
    }
    audit_finding *x = audit_findings_add(&r->integrity, AUDIT_INFO, "present-tensors", NULL);
    if (!x)
        return;
    FSET(x->measured, "%zu of the %zu complete tensors the manifest lists match it, %zu differ; %zu not all in the "
                      "file (not checked)", intact, intact + bad, bad, incomplete);
    FSET(x->expected, "every complete tensor intact");
    FSET(x->meaning, "%s", bad ? "some bytes that arrived are wrong: download the file again from the start"
                               : "what arrived is intact: resuming the download is safe");
}

static bool valid_sha256_text(const char *s)
{
    if (strlen(s) != 64)
        return false;
    for (int i = 0; i < 64; i++)
        if (!isxdigit((unsigned char)s[i]))
            return false;
    return true;
}

static void sha256_finding(verify_result *r)
{
    char hex[65];
    gguf_digest_hex(&r->sha256, hex);
    r->sha256_checked = true;
    r->sha256_ok = strcasecmp(hex, r->o->sha256) == 0;
    if (r->sha256_ok)
        return;
    audit_finding *x = audit_findings_add(&r->integrity, AUDIT_ERROR, "sha256-mismatch", NULL);
    if (!x)
        return;
    FSET(x->measured, "sha256 %s of %llu bytes", hex, (unsigned long long)r->file_size);
    FSET(x->expected, "sha256 %s (--sha256)", r->o->sha256);
    FSET(x->meaning, "this is not the published file: a truncated or corrupted download, or another file");
}

/* A file gguf_open refused can still be compared with its published sha256. */
static bool unopened(verify_result *r)
{
    audit_finding *x = audit_findings_add(&r->integrity, AUDIT_ERROR, "structure", r->open_err.subject);
    if (x) {
        FSET(x->measured, "at byte %llu: %s [%s]", (unsigned long long)r->open_err.offset, r->open_err.message,
             gguf_status_name(r->open_err.code));
        FSET(x->expected, "a well-formed GGUF file");
        FSET(x->meaning, "llama.cpp and every other reader refuse this file (or worse, read garbage): the file is "
                         "damaged, truncated or not GGUF");
    }
    if (r->o->sha256) {
        gguf_error err = { 0 };
        if (gguf_file_sha256_path(r->o->path, &r->sha256, &r->file_size, &err) != GGUF_OK) {
            snprintf(r->trouble, sizeof r->trouble, "%s", err.message);
            return false;
        }
        sha256_finding(r);
    }
    return true;
}

bool verify_integrity(verify_result *r, unsigned extra_kinds)
{
    const verify_opts *o = r->o;
    if (o->sha256 && !valid_sha256_text(o->sha256)) {
        snprintf(r->trouble, sizeof r->trouble, "--sha256 needs 64 hex digits, got '%s'", o->sha256);
        return false;
    }
    if (!r->f)
        return unopened(r);
    r->file_size = gguf_file_size(r->f);
    gguf_error err = { 0 };
    if (gguf_data_coverage(r->f, &r->cov, &err) != GGUF_OK) {
        snprintf(r->trouble, sizeof r->trouble, "%s", err.message);
        return false;
    }
    warnings_to_findings(r);
    coverage_findings(r);
    if (r->missing_bytes)
        truncation_finding(r);

    if (r->remote) /* digests need every byte: a remote file's checks are its header and what was fetched */
        return true;
    unsigned tk = (o->hashes ? o->hashes : GGUF_HASH_BIT(GGUF_HASH_XXH64)) | extra_kinds, mk = tk;
    bool uuid = o->uuid;
    if (o->manifest) {
        char *text;
        size_t len;
        char why[600];
        if (!(text = read_file_text(o->manifest, (size_t)1 << 30, &len, why, sizeof why))) {
            snprintf(r->trouble, sizeof r->trouble, "the manifest: %s", why);
            return false;
        }
        gguf_status s = gguf_manifest_parse(text, len, &r->manifest, &err);
        free(text);
        if (s != GGUF_OK) {
            snprintf(r->trouble, sizeof r->trouble, "%s: %s", o->manifest, err.message);
            return false;
        }
        unsigned mtk, mmk;
        bool mu;
        gguf_manifest_needs(r->manifest, &mtk, &mmk, &mu);
        tk |= mtk;
        mk |= mmk;
        uuid |= mu;
    }
    r->tensor_kinds = tk;
    r->model_kinds = mk;
    progress bar;
    progress_init(&bar, "hashing");
    gguf_hash_request req = { tk, mk, uuid, o->sha256 != NULL, o->threads, progress_update, &bar };
    double t0 = monotonic_seconds();
    if (gguf_hash_file(r->f, &req, &r->hashes, &err) != GGUF_OK) {
        snprintf(r->trouble, sizeof r->trouble, "%s", err.message);
        return false;
    }
    r->hash_seconds = monotonic_seconds() - t0;
    progress_end(&bar);
    r->hashed = true;
    if (o->sha256) {
        r->sha256 = r->hashes.file_sha256;
        sha256_finding(r);
    }
    if (r->manifest) {
        if (gguf_manifest_check(r->manifest, r->f, &r->hashes, &r->check, &err) != GGUF_OK) {
            snprintf(r->trouble, sizeof r->trouble, "%s", err.message);
            return false;
        }
        r->manifest_checked = true;
        manifest_findings(r);
        if (r->missing_bytes)
            present_tensors_finding(r);
    }
    return true;
}
