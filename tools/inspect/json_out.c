/* gguf-inspect --json: the same content as one JSON document: its head built with cJSON, the metadata and
 * tensors streamed (json_stream.h). */
#include "format.h"
#include "json_doc.h"
#include "json_line.h"
#include "json_stream.h"
#include "inspect.h"

#include <cjson/cJSON.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* Integers go out as raw number text: doubles would round 64-bit values. */
static cJSON *json_int(bool is_signed, uint64_t u, int64_t i)
{
    char buf[32];
    if (is_signed)
        snprintf(buf, sizeof buf, "%" PRId64, i);
    else
        snprintf(buf, sizeof buf, "%" PRIu64, u);
    return cJSON_CreateRaw(buf);
}

static cJSON *json_string(gguf_str s)
{
    return json_text(s.ptr, (size_t)s.len);
}

static cJSON *json_scalar(const gguf_value *v)
{
    switch (v->type) {
    case GGUF_VT_INT8: case GGUF_VT_INT16: case GGUF_VT_INT32: case GGUF_VT_INT64:
        return json_int(true, 0, v->v.i64);
    case GGUF_VT_FLOAT32: case GGUF_VT_FLOAT64:
        return cJSON_CreateNumber(v->v.f64); /* NaN/Inf become null, as JSON has no such numbers */
    case GGUF_VT_BOOL:
        return cJSON_CreateBool(v->v.b);
    case GGUF_VT_STRING:
        return json_string(v->v.str);
    default:
        return json_int(false, v->v.u64, 0);
    }
}

/* A metadata value written element by element: an array of 64 M values costs one value's memory. */
static void stream_value(json_stream *js, const gguf_value *v)
{
    if (v->type != GGUF_VT_ARRAY) {
        json_stream_value(js, json_scalar(v));
        return;
    }
    json_stream_open(js, '[');
    for (uint64_t i = 0; i < v->count && !js->failed; i++) {
        if (v->elem_type == GGUF_VT_STRING) {
            json_stream_value(js, json_string(v->v.strs[i]));
            continue;
        }
        if (v->elem_type == GGUF_VT_ARRAY) {
            stream_value(js, &v->v.items[i]);
            continue;
        }
        gguf_value e;
        gguf_array_scalar(v, i, &e);
        switch (e.type) { /* integers as text directly: the common large arrays (token types, ids) */
        case GGUF_VT_INT8: case GGUF_VT_INT16: case GGUF_VT_INT32: case GGUF_VT_INT64:
            json_stream_int(js, e.v.i64);
            break;
        case GGUF_VT_UINT8: case GGUF_VT_UINT16: case GGUF_VT_UINT32: case GGUF_VT_UINT64:
            json_stream_uint(js, e.v.u64);
            break;
        default: json_stream_value(js, json_scalar(&e));
        }
    }
    json_stream_close(js, ']');
}

static cJSON *tensor_json(const gguf_file *f, const gguf_tensor *t)
{
    cJSON *jt = cJSON_CreateObject(), *shape = cJSON_CreateArray();
    bool ok = jt && shape && cJSON_AddItemToObject(jt, "name", json_text(t->name, strlen(t->name))) &&
              cJSON_AddItemToObject(jt, "type", cJSON_CreateString(gguf_type_traits_of(t->type)->name)) &&
              cJSON_AddItemToObject(jt, "shape", shape);
    if (!ok)
        cJSON_Delete(shape);
    for (uint32_t d = 0; ok && d < t->n_dims; d++)
        ok = cJSON_AddItemToArray(shape, json_int(false, t->ne[d], 0));
    ok = ok && cJSON_AddItemToObject(jt, "offset", json_int(false, t->offset, 0)) &&
         cJSON_AddItemToObject(jt, "size", json_int(false, t->size, 0));
    if (ok && inspect_tensor_bytes_present(f, t) != t->size) /* a truncated file: the bytes of it that are there */
        ok = cJSON_AddItemToObject(jt, "complete", cJSON_CreateFalse()) &&
             cJSON_AddItemToObject(jt, "bytes_present", json_int(false, inspect_tensor_bytes_present(f, t), 0));
    if (!ok) {
        cJSON_Delete(jt);
        return NULL;
    }
    return jt;
}

int inspect_print_json(FILE *out, const gguf_file *f, const inspect_opts *o)
{
    cJSON *root = json_doc_new("gguf-inspect", o->path);
    gguf_error why;
    const uint64_t missing = gguf_missing_bytes(f, &why);
    cJSON *findings = root ? json_doc_verdict(root, missing ? 1 : 0,
                                              missing                  ? "truncated: some tensor data is missing"
                                              : gguf_warning_count(f) ? "read, with warnings"
                                                                      : "read")
                           : NULL;
    if (findings && missing)
        json_doc_finding(findings, "error", gguf_status_name(why.code), "tensor", why.subject, why.message,
                         "every tensor's bytes in the file", "an incomplete download: resume it");
    for (size_t i = 0; findings && i < gguf_warning_count(f); i++) { /* the reader's warnings are the findings */
        char at[32];
        snprintf(at, sizeof at, "byte %llu", (unsigned long long)gguf_warning_at(f, i)->offset);
        json_doc_finding(findings, "warning", "reader-warning", "tensor", gguf_warning_at(f, i)->subject,
                         gguf_warning_at(f, i)->message, "a file every reader reads the same way", at);
    }
    if (root && gguf_shard_count(f) > 1) { /* a split model, opened whole */
        cJSON *shards = cJSON_AddArrayToObject(root, "shards");
        for (size_t i = 0; i < gguf_shard_count(f); i++)
            cJSON_AddItemToArray(shards, json_text(gguf_shard_path(f, i), strlen(gguf_shard_path(f, i))));
    }
    if (root) {
        cJSON_AddItemToObject(root, "gguf_version", json_int(false, gguf_version(f), 0));
        cJSON_AddItemToObject(root, "alignment", json_int(false, gguf_alignment(f), 0));
        cJSON_AddItemToObject(root, "data_offset", json_int(false, gguf_data_offset(f), 0));
        cJSON_AddItemToObject(root, "file_size", json_int(false, gguf_file_size(f), 0));
        if (missing)
            cJSON_AddItemToObject(root, "missing_bytes", json_int(false, missing, 0));
    }
    /* the rest, as large as the file makes it, is streamed */
    json_stream js;
    json_stream_begin(&js, out, root);
    if (!o->tensors_only) {
        json_stream_key(&js, "metadata", 8);
        json_stream_open(&js, '{');
        for (size_t i = 0; i < gguf_kv_count(f) && !js.failed; i++) {
            const gguf_kv *kv = gguf_kv_at(f, i);
            json_stream_key(&js, kv->key, strlen(kv->key));
            stream_value(&js, &kv->value);
        }
        json_stream_close(&js, '}');
    }
    if (!o->metadata_only) {
        json_stream_key(&js, "tensors", 7);
        json_stream_open(&js, '[');
        for (size_t i = 0; i < gguf_tensor_count(f) && !js.failed; i++)
            if (inspect_tensor_selected(o, gguf_tensor_at(f, i)->name))
                json_stream_value(&js, tensor_json(f, gguf_tensor_at(f, i)));
        json_stream_close(&js, ']');
    }
    json_stream_key(&js, "warnings", 8);
    json_stream_open(&js, '[');
    for (size_t i = 0; i < gguf_warning_count(f); i++)
        json_stream_value(&js, json_text(gguf_warning_at(f, i)->message, strlen(gguf_warning_at(f, i)->message)));
    json_stream_close(&js, ']');
    if (json_stream_end(&js)) {
        fprintf(stderr, "gguf-inspect: the JSON document could not be written whole (out of memory or output)\n");
        return 2;
    }
    return missing ? 1 : 0;
}
