/* Accessors, lookups and typed getters over an opened file. */
#include "file.h"

#include <string.h>

uint32_t gguf_version(const gguf_file *f) { return f->version; }
uint32_t gguf_alignment(const gguf_file *f) { return f->alignment; }
uint64_t gguf_data_offset(const gguf_file *f) { return f->data_offset; }
uint64_t gguf_file_size(const gguf_file *f) { return f->size; }
const uint8_t *gguf_file_bytes(const gguf_file *f) { return f->bytes; }

size_t gguf_kv_count(const gguf_file *f) { return f->n_kv; }
const gguf_kv *gguf_kv_at(const gguf_file *f, size_t i) { return i < f->n_kv ? &f->kvs[i] : NULL; }

const gguf_kv *gguf_find_kv(const gguf_file *f, const char *key)
{
    if (!key || f->n_kv == 0)
        return NULL;
    long i = gguf_index_find(&f->kv_index, &f->kvs[0].key, sizeof *f->kvs, key);
    return i < 0 ? NULL : &f->kvs[i];
}

size_t gguf_tensor_count(const gguf_file *f) { return f->n_tensors; }
const gguf_tensor *gguf_tensor_at(const gguf_file *f, size_t i) { return i < f->n_tensors ? &f->tensors[i] : NULL; }

const gguf_tensor *gguf_tensor_by_name(const gguf_file *f, const char *name)
{
    if (!name || f->n_tensors == 0)
        return NULL;
    long i = gguf_index_find(&f->tensor_index, &f->tensors[0].name, sizeof *f->tensors, name);
    return i < 0 ? NULL : &f->tensors[i];
}

gguf_tensor gguf_tensor_slice(const gguf_tensor *t, uint64_t i)
{
    gguf_tensor v = *t;
    const uint32_t outer = t->n_dims - 1;
    v.ne[outer] = 1;
    v.n_dims = outer;
    v.size = t->size / t->ne[outer];
    v.n_elements = t->n_elements / t->ne[outer];
    v.offset = t->offset + i * v.size;
    v.data = t->data ? t->data + i * v.size : NULL;
    return v;
}

gguf_tensor gguf_tensor_rows(const gguf_tensor *t, uint64_t r0, uint64_t n)
{
    gguf_tensor v = *t;
    const uint64_t row_bytes = t->size / t->ne[1];
    v.ne[1] = n;
    v.size = n * row_bytes;
    v.n_elements = n * t->ne[0];
    v.offset = t->offset + r0 * row_bytes;
    v.data = t->data ? t->data + r0 * row_bytes : NULL;
    return v;
}

size_t gguf_warning_count(const gguf_file *f) { return f->n_warnings; }
const gguf_warning *gguf_warning_at(const gguf_file *f, size_t i) { return i < f->n_warnings ? &f->warnings[i] : NULL; }

void gguf_decode_scalar(const uint8_t *b, uint32_t type, gguf_value *out)
{
    size_t n = gguf_value_type_size(type);
    uint64_t u = 0;
    for (size_t k = 0; k < n; k++)
        u |= (uint64_t)b[k] << (8 * k);
    memset(out, 0, sizeof *out);
    out->type = (gguf_value_type)type;
    switch (type) {
    case GGUF_VT_INT8: out->v.i64 = (int8_t)u; break;
    case GGUF_VT_INT16: out->v.i64 = (int16_t)u; break;
    case GGUF_VT_INT32: out->v.i64 = (int32_t)u; break;
    case GGUF_VT_INT64: out->v.i64 = (int64_t)u; break;
    case GGUF_VT_FLOAT32: {
        uint32_t w = (uint32_t)u;
        float fl;
        memcpy(&fl, &w, 4);
        out->v.f64 = fl;
        break;
    }
    case GGUF_VT_FLOAT64: memcpy(&out->v.f64, &u, 8); break;
    case GGUF_VT_BOOL: out->v.b = u != 0; break;
    default: out->v.u64 = u; break;
    }
}

gguf_status gguf_array_scalar(const gguf_value *arr, uint64_t i, gguf_value *out)
{
    if (!arr || arr->type != GGUF_VT_ARRAY || i >= arr->count)
        return GGUF_E_INVALID_ARG;
    size_t n = gguf_value_type_size(arr->elem_type);
    if (n == 0)
        return GGUF_E_INVALID_ARG;
    gguf_decode_scalar(arr->v.raw + i * n, arr->elem_type, out);
    return GGUF_OK;
}

/* Finds key and checks its type; fills err with a sentence naming both types. */
static gguf_status typed(const gguf_file *f, const char *key, gguf_value_type want, const gguf_value **out,
                         gguf_error *err)
{
    const gguf_kv *kv = gguf_find_kv(f, key);
    if (!kv)
        return gguf_fail(err, GGUF_E_KEY_NOT_FOUND, 0, key, "key '%s' is not in the file", key);
    if (kv->value.type != want) {
        const char *got = gguf_value_type_name(kv->value.type);
        if (kv->value.type == GGUF_VT_STRING)
            got = "a string";
        else if (kv->value.type == GGUF_VT_ARRAY)
            got = "an array";
        return gguf_fail(err, GGUF_E_KEY_TYPE, kv->offset, key, "key '%s' is %s%s, expected %s", key,
                         kv->value.type == GGUF_VT_STRING || kv->value.type == GGUF_VT_ARRAY ? "" : "a ",
                         got, gguf_value_type_name(want));
    }
    *out = &kv->value;
    return GGUF_OK;
}

#define GETTER(fn, ctype, vt, expr)                                                     \
    gguf_status fn(const gguf_file *f, const char *key, ctype *out, gguf_error *err)     \
    {                                                                                     \
        const gguf_value *v = NULL;                                                       \
        gguf_status s = typed(f, key, vt, &v, err);                                       \
        if (s == GGUF_OK)                                                                 \
            *out = (expr);                                                                \
        return s;                                                                         \
    }

GETTER(gguf_get_u32, uint32_t, GGUF_VT_UINT32, (uint32_t)v->v.u64)
GETTER(gguf_get_u64, uint64_t, GGUF_VT_UINT64, v->v.u64)
GETTER(gguf_get_i32, int32_t, GGUF_VT_INT32, (int32_t)v->v.i64)
GETTER(gguf_get_f32, float, GGUF_VT_FLOAT32, (float)v->v.f64)
GETTER(gguf_get_bool, bool, GGUF_VT_BOOL, v->v.b)
GETTER(gguf_get_str, gguf_str, GGUF_VT_STRING, v->v.str)
GETTER(gguf_get_array, const gguf_value *, GGUF_VT_ARRAY, v)

gguf_status gguf_get_int(const gguf_file *f, const char *key, int64_t min, int64_t max, int64_t *out,
                         gguf_error *err)
{
    const gguf_kv *kv = gguf_find_kv(f, key);
    if (!kv)
        return gguf_fail(err, GGUF_E_KEY_NOT_FOUND, 0, key, "key '%s' is not in the file", key);
    const gguf_value *v = &kv->value;
    bool is_unsigned = v->type == GGUF_VT_UINT8 || v->type == GGUF_VT_UINT16 || v->type == GGUF_VT_UINT32 ||
                       v->type == GGUF_VT_UINT64;
    bool is_signed = v->type == GGUF_VT_INT8 || v->type == GGUF_VT_INT16 || v->type == GGUF_VT_INT32 ||
                     v->type == GGUF_VT_INT64;
    if (!is_unsigned && !is_signed)
        return gguf_fail(err, GGUF_E_KEY_TYPE, kv->offset, key, "key '%s' is %s, expected an integer", key,
                         gguf_value_type_name(v->type));
    bool fits = is_unsigned ? v->v.u64 <= (uint64_t)INT64_MAX && (int64_t)v->v.u64 >= min &&
                                  (int64_t)v->v.u64 <= max
                            : v->v.i64 >= min && v->v.i64 <= max;
    if (!fits)
        return gguf_fail(err, GGUF_E_KEY_TYPE, kv->offset, key, "key '%s' has value %s%llu, outside [%lld, %lld]",
                         key, is_signed && v->v.i64 < 0 ? "-" : "",
                         is_signed && v->v.i64 < 0 ? (unsigned long long)-(v->v.i64 + 1) + 1
                                                   : (unsigned long long)v->v.u64,
                         (long long)min, (long long)max);
    *out = is_unsigned ? (int64_t)v->v.u64 : v->v.i64;
    return GGUF_OK;
}

bool gguf_value_equal(const gguf_value *a, const gguf_value *b)
{
    if (a->type != b->type)
        return false;
    switch (a->type) {
    case GGUF_VT_STRING:
        return a->v.str.len == b->v.str.len && memcmp(a->v.str.ptr, b->v.str.ptr, a->v.str.len) == 0;
    case GGUF_VT_ARRAY:
        if (a->elem_type != b->elem_type || a->count != b->count)
            return false;
        if (a->elem_type == GGUF_VT_STRING) {
            for (uint64_t i = 0; i < a->count; i++)
                if (a->v.strs[i].len != b->v.strs[i].len ||
                    memcmp(a->v.strs[i].ptr, b->v.strs[i].ptr, a->v.strs[i].len) != 0)
                    return false;
            return true;
        }
        if (a->elem_type == GGUF_VT_ARRAY) {
            for (uint64_t i = 0; i < a->count; i++)
                if (!gguf_value_equal(&a->v.items[i], &b->v.items[i]))
                    return false;
            return true;
        }
        return a->count == 0 || memcmp(a->v.raw, b->v.raw, a->count * gguf_value_type_size(a->elem_type)) == 0;
    case GGUF_VT_FLOAT32:
    case GGUF_VT_FLOAT64:
        /* bitwise, so a NaN equals itself and -0 differs from 0, as bytes do */
        return memcmp(&a->v.f64, &b->v.f64, sizeof a->v.f64) == 0;
    case GGUF_VT_BOOL: return a->v.b == b->v.b;
    case GGUF_VT_INT8: case GGUF_VT_INT16: case GGUF_VT_INT32: case GGUF_VT_INT64: return a->v.i64 == b->v.i64;
    default: return a->v.u64 == b->v.u64;
    }
}
