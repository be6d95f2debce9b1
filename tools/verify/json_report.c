/* gguf-verify --json: the same content as the text report, for machines. */
#include "format.h"
#include "json_doc.h"
#include "json_line.h"
#include "json_stream.h"
#include "stats_json.h"
#include "verify.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

static cJSON *finding_json(const audit_finding *x)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "severity", audit_severity_name(x->severity));
    cJSON_AddStringToObject(o, "code", x->code);
    json_add_text(o, "tensor", x->tensor);
    if (x->layer >= 0)
        cJSON_AddNumberToObject(o, "layer", x->layer);
    else
        cJSON_AddNullToObject(o, "layer");
    json_add_text(o, "measured", x->measured);
    json_add_text(o, "expected", x->expected);
    json_add_text(o, "meaning", x->meaning);
    return o;
}

static cJSON *structure_json(const verify_result *r)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddBoolToObject(o, "readable", r->f != NULL);
    if (!r->f) {
        cJSON_AddStringToObject(o, "error", gguf_status_name(r->open_err.code));
        cJSON_AddNumberToObject(o, "offset", (double)r->open_err.offset);
        json_add_text(o, "message", r->open_err.message);
        return o;
    }
    const gguf_coverage *c = &r->cov;
    cJSON_AddNumberToObject(o, "version", gguf_version(r->f));
    cJSON_AddNumberToObject(o, "tensors", (double)gguf_tensor_count(r->f));
    cJSON_AddNumberToObject(o, "file_size", (double)gguf_file_size(r->f));
    cJSON_AddNumberToObject(o, "data_offset", (double)c->data_offset);
    cJSON_AddNumberToObject(o, "data_bytes", (double)c->data_bytes);
    cJSON_AddNumberToObject(o, "tensor_bytes", (double)c->tensor_bytes);
    cJSON_AddNumberToObject(o, "padding_bytes", (double)c->padding_bytes);
    cJSON_AddNumberToObject(o, "padding_nonzero", (double)c->padding_nonzero);
    cJSON_AddNumberToObject(o, "gap_bytes", (double)c->gap_bytes);
    cJSON_AddNumberToObject(o, "trailing_bytes", (double)c->trailing_bytes);
    cJSON_AddNumberToObject(o, "missing_bytes", (double)c->missing_bytes);
    cJSON_AddNumberToObject(o, "complete_tensors", (double)c->complete_tensors);
    cJSON_AddNumberToObject(o, "partial_tensors", (double)c->partial_tensors);
    cJSON_AddNumberToObject(o, "appended_gguf_offset", (double)c->appended_gguf_offset);
    return o;
}

/* The file's digests (model, uuid), before the per-tensor ones. */
static cJSON *digests_head_json(const verify_result *r)
{
    cJSON *o = cJSON_CreateObject();
    char hex[65];
    if (r->hashed) {
        cJSON *model = cJSON_AddObjectToObject(o, "model");
        for (int k = 0; k < GGUF_HASH_KIND_COUNT; k++)
            if (r->hashes.model[k].len) {
                gguf_digest_hex(&r->hashes.model[k], hex);
                cJSON_AddStringToObject(model, gguf_hash_kind_name((gguf_hash_kind)k), hex);
            }
        if (r->hashes.has_uuid) {
            gguf_uuid_format(r->hashes.uuid, hex);
            cJSON_AddStringToObject(o, "uuid", hex);
        }
    }
    return o;
}

static cJSON *tensor_digests_json(const verify_result *r, size_t i)
{
    char hex[65];
    cJSON *t = cJSON_CreateObject();
    for (int k = 0; t && k < GGUF_HASH_KIND_COUNT; k++)
        if (r->hashes.tensor[i][k].len) {
            gguf_digest_hex(&r->hashes.tensor[i][k], hex);
            cJSON_AddStringToObject(t, gguf_hash_kind_name((gguf_hash_kind)k), hex);
        }
    return t;
}

/* What follows the per-tensor digests: the bytes read, --sha256's and --manifest's results. */
static cJSON *digests_tail_json(const verify_result *r)
{
    cJSON *o = cJSON_CreateObject();
    char hex[65];
    if (r->hashed) {
        cJSON_AddNumberToObject(o, "bytes", (double)r->hashes.bytes_hashed);
        cJSON_AddNumberToObject(o, "seconds", r->hash_seconds);
    }
    if (r->sha256_checked) {
        gguf_digest_hex(&r->sha256, hex);
        cJSON *s = cJSON_AddObjectToObject(o, "file_sha256");
        cJSON_AddStringToObject(s, "actual", hex);
        json_add_text(s, "expected", r->o->sha256);
        cJSON_AddBoolToObject(s, "match", r->sha256_ok);
    }
    if (r->manifest_checked) {
        const gguf_check_report *c = &r->check;
        cJSON *m = cJSON_AddObjectToObject(o, "manifest");
        json_add_text(m, "path", r->o->manifest);
        json_add_text(m, "label", gguf_manifest_label(r->manifest));
        cJSON_AddNumberToObject(m, "tensors_matched", (double)c->n_tensors_checked);
        cJSON_AddNumberToObject(m, "ok", (double)c->n_ok);
        cJSON_AddNumberToObject(m, "mismatched", (double)c->n_mismatch);
        cJSON_AddNumberToObject(m, "missing", (double)c->n_missing);
        cJSON_AddNumberToObject(m, "extra", (double)c->n_extra);
        cJSON_AddNumberToObject(m, "incomplete", (double)c->n_incomplete);
    }
    return o;
}

static cJSON *role_json(const audit_role_summary *s)
{
    cJSON *o = cJSON_CreateObject();
    json_add_text(o, "role", s->role);
    cJSON_AddNumberToObject(o, "layers", s->n_layers);
    cJSON_AddStringToObject(o, "types", s->types);
    cJSON_AddNumberToObject(o, "rms_min", s->rms_min);
    cJSON_AddNumberToObject(o, "rms_median", s->rms_median);
    cJSON_AddNumberToObject(o, "rms_max", s->rms_max);
    cJSON_AddNumberToObject(o, "mean_median", s->mean_median);
    cJSON_AddNumberToObject(o, "max_abs_max", s->max_abs_max);
    cJSON_AddNumberToObject(o, "findings", s->n_findings);
    cJSON_AddNumberToObject(o, "measured", s->n_measured);
    return o;
}

int verify_print_json(FILE *out, const verify_result *r)
{
    cJSON *root = json_doc_new("gguf-verify", r->o->path);
    char summary[sizeof r->trouble + 64];
    snprintf(summary, sizeof summary, "%s%s%s", verify_verdict_name(r), r->trouble[0] ? ": " : "", r->trouble);
    cJSON *findings = json_doc_verdict(root, (int)r->verdict, summary);
    if (r->trouble[0])
        json_add_text(root, "trouble", r->trouble);
    cJSON_AddItemToObject(root, "structure", structure_json(r));
    if (r->remote) {
        cJSON *rem = cJSON_AddObjectToObject(root, "remote");
        cJSON_AddNumberToObject(rem, "tensors_read", (double)r->remote_fetched);
        cJSON_AddNumberToObject(rem, "tensors_not_read", (double)r->remote_unread);
        cJSON_AddNumberToObject(rem, "bytes_not_read", (double)r->remote_unread_bytes);
    }
    for (int sev = AUDIT_ERROR; sev >= AUDIT_INFO; sev--) {
        for (size_t i = 0; i < r->integrity.n; i++)
            if ((int)r->integrity.v[i].severity == sev)
                cJSON_AddItemToArray(findings, finding_json(&r->integrity.v[i]));
        for (size_t i = 0; r->audited && i < r->audit.n_findings; i++)
            if ((int)r->audit.findings[i].severity == sev)
                cJSON_AddItemToArray(findings, finding_json(&r->audit.findings[i]));
    }
    /* the per-tensor parts, as long as the file has tensors, are streamed */
    json_stream js;
    json_stream_begin(&js, out, root);
    json_stream_key(&js, "digests", 7);
    json_stream_open(&js, '{');
    json_stream_members(&js, digests_head_json(r));
    if (r->hashed) {
        json_stream_key(&js, "tensors", 7);
        json_stream_open(&js, '{');
        for (size_t i = 0; i < r->hashes.n_tensors && !js.failed; i++) {
            const char *name = gguf_tensor_at(r->f, i)->name;
            json_stream_key(&js, name, strlen(name));
            json_stream_value(&js, tensor_digests_json(r, i));
        }
        json_stream_close(&js, '}');
    }
    json_stream_members(&js, digests_tail_json(r));
    json_stream_close(&js, '}');
    if (r->audited) {
        json_stream_key(&js, "roles", 5);
        json_stream_open(&js, '[');
        size_t shown = r->audit.n_roles < VERIFY_ROLES_SHOWN ? r->audit.n_roles : VERIFY_ROLES_SHOWN;
        for (size_t i = 0; i < shown && !js.failed; i++)
            json_stream_value(&js, role_json(&r->audit.roles[i]));
        json_stream_close(&js, ']');
        if (shown < r->audit.n_roles) {
            json_stream_key(&js, "roles_not_shown", 15);
            json_stream_uint(&js, r->audit.n_roles - shown);
        }
        json_stream_key(&js, "tensors", 7);
        json_stream_open(&js, '[');
        for (size_t i = 0; i < gguf_tensor_count(r->f) && !js.failed; i++)
            json_stream_value(&js, stats_to_json(gguf_tensor_at(r->f, i), &r->stats[i]));
        json_stream_close(&js, ']');
        cJSON *tail = cJSON_CreateObject();
        cJSON_AddNumberToObject(tail, "audit_seconds", r->audit_seconds);
        json_stream_members(&js, tail);
    }
    return json_stream_end(&js) ? 2 : 0; /* one line per file: JSON Lines when several are checked */
}
