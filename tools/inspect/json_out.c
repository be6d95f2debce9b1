/* gguf-inspect --json: the same content as one JSON document, built with cJSON. */
#include "format.h"
#include "json_doc.h"
#include "json_line.h"
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

static cJSON *json_value(const gguf_value *v)
{
    if (v->type != GGUF_VT_ARRAY)
        return json_scalar(v);
    cJSON *arr = cJSON_CreateArray();
    for (uint64_t i = 0; arr && i < v->count; i++) {
        cJSON *item;
        if (v->elem_type == GGUF_VT_STRING)
            item = json_string(v->v.strs[i]);
        else if (v->elem_type == GGUF_VT_ARRAY)
            item = json_value(&v->v.items[i]);
        else {
            gguf_value e;
            gguf_array_scalar(v, i, &e);
            item = json_scalar(&e);
        }
        if (!item || !cJSON_AddItemToArray(arr, item)) {
            cJSON_Delete(item);
            cJSON_Delete(arr);
            return NULL;
        }
    }
    return arr;
}

static bool add(cJSON *obj, const char *key, cJSON *item)
{
    if (!item)
        return false;
    if (!cJSON_AddItemToObject(obj, key, item)) {
        cJSON_Delete(item);
        return false;
    }
    return true;
}

static bool add_tensors(cJSON *root, const gguf_file *f, const inspect_opts *o)
{
    cJSON *list = cJSON_CreateArray();
    if (!add(root, "tensors", list))
        return false;
    for (size_t i = 0; i < gguf_tensor_count(f); i++) {
        const gguf_tensor *t = gguf_tensor_at(f, i);
        if (!inspect_tensor_selected(o, t->name))
            continue;
        cJSON *jt = cJSON_CreateObject(), *shape = cJSON_CreateArray();
        bool ok = jt && shape && cJSON_AddItemToArray(list, jt);
        ok = ok && add(jt, "name", json_text(t->name, strlen(t->name))) &&
             add(jt, "type", cJSON_CreateString(gguf_type_traits_of(t->type)->name)) && add(jt, "shape", shape);
        for (uint32_t d = 0; ok && d < t->n_dims; d++)
            ok = cJSON_AddItemToArray(shape, json_int(false, t->ne[d], 0));
        ok = ok && add(jt, "offset", json_int(false, t->offset, 0)) && add(jt, "size", json_int(false, t->size, 0));
        if (!ok)
            return false;
    }
    return true;
}

int inspect_print_json(FILE *out, const gguf_file *f, const inspect_opts *o)
{
    cJSON *root = json_doc_new("gguf-inspect", o->path);
    cJSON *findings = root ? json_doc_verdict(root, 0, gguf_warning_count(f) ? "read, with warnings" : "read") : NULL;
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
    bool ok = root && findings && add(root, "gguf_version", json_int(false, gguf_version(f), 0)) &&
              add(root, "alignment", json_int(false, gguf_alignment(f), 0)) &&
              add(root, "data_offset", json_int(false, gguf_data_offset(f), 0)) &&
              add(root, "file_size", json_int(false, gguf_file_size(f), 0));
    if (ok && !o->tensors_only) {
        cJSON *meta = cJSON_CreateObject();
        ok = add(root, "metadata", meta);
        for (size_t i = 0; ok && i < gguf_kv_count(f); i++)
            ok = json_add_named(meta, gguf_kv_at(f, i)->key, strlen(gguf_kv_at(f, i)->key), json_value(&gguf_kv_at(f, i)->value));
    }
    if (ok && !o->metadata_only)
        ok = add_tensors(root, f, o);
    cJSON *warnings = ok ? cJSON_CreateArray() : NULL;
    ok = ok && add(root, "warnings", warnings);
    for (size_t i = 0; ok && i < gguf_warning_count(f); i++)
        ok = cJSON_AddItemToArray(warnings, json_text(gguf_warning_at(f, i)->message, strlen(gguf_warning_at(f, i)->message)));
    if (!ok) {
        cJSON_Delete(root);
        root = NULL;
    }
    if (json_print_line(out, root)) {
        fprintf(stderr, "gguf-inspect: out of memory building the JSON document\n");
        return 2;
    }
    return 0;
}
