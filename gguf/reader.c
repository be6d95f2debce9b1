/*
 * Parsing the GGUF header and metadata. Every read is checked against the
 * bytes left; every count is checked against what those bytes could possibly
 * hold before anything is allocated.
 *
 * Layout (GGUF v2/v3, little-endian; ggml/docs/gguf.md):
 *
 *   +--------+---------+-----------+-------+------------------+--------------------+-----+------+
 *   | "GGUF" | u32 ver | u64 n_ten | u64 n_kv | n_kv key/values | n_ten tensor infos | pad | data |
 *   +--------+---------+-----------+-------+------------------+--------------------+-----+------+
 *   key/value:   u64 len, key bytes, u32 value type, value
 *   string:      u64 len, bytes (no NUL)
 *   array:       u32 element type, u64 count, count elements
 */
#include "file.h"

#include <stdio.h>
#include <string.h>

bool gguf_read_u32(gguf_cursor *c, uint32_t *v)
{
    if (gguf_cursor_left(c) < 4)
        return false;
    const uint8_t *b = c->p + c->pos;
    *v = (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
    c->pos += 4;
    return true;
}

bool gguf_read_u64(gguf_cursor *c, uint64_t *v)
{
    if (gguf_cursor_left(c) < 8)
        return false;
    const uint8_t *b = c->p + c->pos;
    uint64_t x = 0;
    for (int i = 7; i >= 0; i--) /* little-endian */
        x = x << 8 | b[i];
    *v = x;
    c->pos += 8;
    return true;
}

gguf_status gguf_read_str(gguf_cursor *c, gguf_str *out, uint64_t *len_out)
{
    uint64_t len = 0;
    *len_out = 0;
    if (!gguf_read_u64(c, &len))
        return GGUF_E_TRUNCATED;
    *len_out = len;
    if (len > gguf_cursor_left(c))
        return GGUF_E_STRING_LENGTH;
    out->ptr = (const char *)c->p + c->pos;
    out->len = len;
    c->pos += len;
    return GGUF_OK;
}

gguf_status gguf_read_name(gguf_file *f, gguf_cursor *c, uint64_t at, const char *what,
                           gguf_status empty_code, const char **out, gguf_error *err)
{
    gguf_str name;
    uint64_t len;
    gguf_status s = gguf_read_str(c, &name, &len);
    if (s == GGUF_E_STRING_LENGTH)
        return gguf_fail(err, s, at, what, "%s: name length %llu runs past the end of the file (%llu bytes left)",
                         what, (unsigned long long)len, (unsigned long long)gguf_cursor_left(c));
    if (s != GGUF_OK)
        return gguf_fail(err, s, at, what, "%s starts %llu bytes before the end of the file: the header is truncated",
                         what, (unsigned long long)(gguf_cursor_left(c) + (c->pos - at)));
    if (name.len == 0)
        return gguf_fail(err, empty_code, at, what, "%s has an empty name", what);
    if (memchr(name.ptr, 0, name.len))
        return gguf_fail(err, GGUF_E_NUL_IN_NAME, at, what, "%s has a NUL byte in its name", what);
    *out = gguf_arena_strndup(&f->arena, name.ptr, name.len);
    if (!*out)
        return gguf_fail(err, GGUF_E_NOMEM, at, what, "out of memory");
    return GGUF_OK;
}

void gguf_add_warning(gguf_file *f, gguf_warning_kind kind, uint64_t offset, const char *subject,
                      const char *fmt, ...)
{
    if (f->n_warnings >= GGUF_MAX_STORED_WARNINGS)
        return;
    if (!f->warnings) {
        f->warnings = gguf_arena_array(&f->arena, GGUF_MAX_STORED_WARNINGS, sizeof *f->warnings);
        if (!f->warnings)
            return;
    }
    gguf_warning *w = &f->warnings[f->n_warnings++];
    w->kind = kind;
    w->offset = offset;
    snprintf(w->subject, sizeof w->subject, "%s", subject);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(w->message, sizeof w->message, fmt, ap);
    va_end(ap);
}

/* The least number of file bytes one array element of type et can occupy. */
static uint64_t min_elem_bytes(uint32_t et)
{
    if (et == GGUF_VT_STRING)
        return 8;
    if (et == GGUF_VT_ARRAY)
        return 4 + 8;
    return gguf_value_type_size(et);
}

static gguf_status parse_value(gguf_file *f, gguf_cursor *c, uint32_t type, int depth,
                               const char *key, gguf_value *out, gguf_error *err);

static gguf_status parse_scalar(gguf_cursor *c, uint32_t type, gguf_value *out)
{
    size_t n = gguf_value_type_size(type);
    if (gguf_cursor_left(c) < n)
        return GGUF_E_TRUNCATED;
    gguf_decode_scalar(c->p + c->pos, type, out);
    c->pos += n;
    return GGUF_OK;
}

static gguf_status parse_array(gguf_file *f, gguf_cursor *c, int depth, const char *key,
                               gguf_value *out, gguf_error *err)
{
    uint64_t at = c->pos;
    uint32_t et;
    uint64_t count;
    if (!gguf_read_u32(c, &et) || !gguf_read_u64(c, &count))
        return gguf_fail(err, GGUF_E_TRUNCATED, at, key,
                         "key '%s': the array header runs past the end of the file (truncated file?)", key);
    if (et >= GGUF_VT_COUNT)
        return gguf_fail(err, GGUF_E_ARRAY_TYPE, at, key,
                         "key '%s' is an array of element type %u, which GGUF does not define (valid: 0-12)",
                         key, et);
    uint64_t left = gguf_cursor_left(c);
    if (count > left / min_elem_bytes(et))
        return gguf_fail(err, GGUF_E_ARRAY_COUNT, at + 4, key,
                         "key '%s' claims %llu %s elements, but only %llu bytes remain in the file",
                         key, (unsigned long long)count, gguf_value_type_name(et), (unsigned long long)left);
    out->type = GGUF_VT_ARRAY;
    out->elem_type = (gguf_value_type)et;
    out->count = count;
    if (et == GGUF_VT_STRING) {
        gguf_str *strs = gguf_arena_array(&f->arena, count, sizeof *strs);
        if (!strs && count)
            return gguf_fail(err, GGUF_E_NOMEM, at, key, "out of memory reading key '%s'", key);
        for (uint64_t i = 0; i < count; i++) {
            uint64_t sat = c->pos, len;
            gguf_status s = gguf_read_str(c, &strs[i], &len);
            if (s != GGUF_OK)
                return gguf_fail(err, s, sat, key,
                                 "key '%s': string %llu of %llu has length %llu, past the end of the file "
                                 "(%llu bytes left)", key, (unsigned long long)i, (unsigned long long)count,
                                 (unsigned long long)len, (unsigned long long)gguf_cursor_left(c));
        }
        out->v.strs = strs;
    } else if (et == GGUF_VT_ARRAY) {
        if (depth + 1 >= GGUF_MAX_ARRAY_DEPTH)
            return gguf_fail(err, GGUF_E_ARRAY_DEPTH, at, key,
                             "key '%s' nests arrays deeper than %d levels", key, GGUF_MAX_ARRAY_DEPTH);
        gguf_value *items = gguf_arena_array(&f->arena, count, sizeof *items);
        if (!items && count)
            return gguf_fail(err, GGUF_E_NOMEM, at, key, "out of memory reading key '%s'", key);
        for (uint64_t i = 0; i < count; i++) {
            gguf_status s = parse_value(f, c, GGUF_VT_ARRAY, depth + 1, key, &items[i], err);
            if (s != GGUF_OK)
                return s;
        }
        out->v.items = items;
    } else {
        out->v.raw = c->p + c->pos;
        c->pos += count * gguf_value_type_size(et); /* bounded by the count check above */
    }
    return GGUF_OK;
}

static gguf_status parse_value(gguf_file *f, gguf_cursor *c, uint32_t type, int depth,
                               const char *key, gguf_value *out, gguf_error *err)
{
    uint64_t at = c->pos;
    if (type == GGUF_VT_ARRAY)
        return parse_array(f, c, depth, key, out, err);
    if (type == GGUF_VT_STRING) {
        uint64_t len;
        gguf_status s = gguf_read_str(c, &out->v.str, &len);
        out->type = GGUF_VT_STRING;
        if (s == GGUF_E_STRING_LENGTH)
            return gguf_fail(err, s, at, key,
                             "key '%s': string length %llu runs past the end of the file (%llu bytes left)",
                             key, (unsigned long long)len, (unsigned long long)gguf_cursor_left(c));
        if (s != GGUF_OK)
            return gguf_fail(err, s, at, key, "key '%s': the value runs past the end of the file", key);
        return GGUF_OK;
    }
    if (parse_scalar(c, type, out) != GGUF_OK)
        return gguf_fail(err, GGUF_E_TRUNCATED, at, key,
                         "key '%s': the %s value runs past the end of the file", key, gguf_value_type_name(type));
    return GGUF_OK;
}

static gguf_status parse_kv(gguf_file *f, gguf_cursor *c, size_t i, gguf_error *err)
{
    gguf_kv *kv = &f->kvs[i];
    kv->offset = c->pos;
    /* before its name is read, a key is known by its index and the key before it */
    char what[320];
    if (i > 0)
        snprintf(what, sizeof what, "key #%zu (after '%.256s')", i, f->kvs[i - 1].key);
    else
        snprintf(what, sizeof what, "key #%zu", i);
    gguf_status s = gguf_read_name(f, c, kv->offset, what, GGUF_E_EMPTY_KEY, &kv->key, err);
    if (s != GGUF_OK)
        return s;
    long prev = gguf_index_insert(&f->kv_index, &f->kvs[0].key, sizeof *f->kvs, (uint32_t)i);
    if (prev >= 0)
        return gguf_fail(err, GGUF_E_DUPLICATE_KEY, kv->offset, kv->key,
                         "key '%s' appears twice (first at byte %llu): readers disagree on which value wins",
                         kv->key, (unsigned long long)f->kvs[prev].offset);
    uint64_t tat = c->pos;
    uint32_t type;
    if (!gguf_read_u32(c, &type))
        return gguf_fail(err, GGUF_E_TRUNCATED, tat, kv->key,
                         "key '%s': its type runs past the end of the file", kv->key);
    if (type >= GGUF_VT_COUNT)
        return gguf_fail(err, GGUF_E_VALUE_TYPE, tat, kv->key,
                         "key '%s' has value type %u, which GGUF does not define (valid: 0-12)", kv->key, type);
    return parse_value(f, c, type, 0, kv->key, &kv->value, err);
}

static gguf_status check_alignment(gguf_file *f, gguf_error *err)
{
    f->alignment = GGUF_ALIGNMENT_DEFAULT;
    long i = gguf_index_find(&f->kv_index, &f->kvs[0].key, sizeof *f->kvs, "general.alignment");
    if (i < 0)
        return GGUF_OK;
    const gguf_kv *kv = &f->kvs[i];
    if (kv->value.type != GGUF_VT_UINT32)
        return gguf_fail(err, GGUF_E_ALIGNMENT, kv->offset, kv->key,
                         "key 'general.alignment' is a %s, expected u32", gguf_value_type_name(kv->value.type));
    uint64_t a = kv->value.v.u64;
    if (a == 0 || (a & (a - 1)) != 0)
        return gguf_fail(err, GGUF_E_ALIGNMENT, kv->offset, kv->key,
                         "general.alignment is %llu; it must be a non-zero power of two",
                         (unsigned long long)a);
    f->alignment = (uint32_t)a;
    return GGUF_OK;
}

static gguf_status check_magic_version(gguf_file *f, gguf_cursor *c, gguf_error *err)
{
    static const char magic[4] = { 'G', 'G', 'U', 'F' };
    if (f->size < 4 || memcmp(f->bytes, magic, 4) != 0) {
        if (f->size && f->size < 4 && memcmp(f->bytes, magic, f->size) == 0)
            return gguf_fail(err, GGUF_E_TRUNCATED, 0, "",
                             "the file is %llu bytes long: too short to hold a GGUF header (truncated file?)",
                             (unsigned long long)f->size);
        return gguf_foreign_file(f->bytes, f->size, err);
    }
    c->pos = 4;
    uint32_t v;
    if (!gguf_read_u32(c, &v))
        return gguf_fail(err, GGUF_E_TRUNCATED, 4, "", "the file ends inside the version field (truncated file?)");
    f->version = v;
    uint32_t swapped = __builtin_bswap32(v);
    if ((v & 0xffffu) == 0 && swapped >= 1 && swapped <= 3)
        return gguf_fail(err, GGUF_E_BIG_ENDIAN, 4, "",
                         "this is a big-endian (byte-swapped) GGUF v%u file; ggufscope reads little-endian "
                         "files only (convert it, or use a little-endian copy)", swapped);
    if (v == 1)
        return gguf_fail(err, GGUF_E_VERSION, 4, "",
                         "GGUF version 1 found; supported versions are 2 and 3 (version 1 used 32-bit counts "
                         "and is obsolete: re-convert the model with a current llama.cpp)");
    if (v != 2 && v != 3)
        return gguf_fail(err, GGUF_E_VERSION, 4, "",
                         "GGUF version %u found; supported versions are 2 and 3", v);
    return GGUF_OK;
}

gguf_status gguf_parse(gguf_file *f, gguf_error *err)
{
    gguf_cursor c = { f->bytes, f->size, 0 };
    gguf_status s = check_magic_version(f, &c, err);
    if (s != GGUF_OK)
        return s;
    uint64_t n_tensors, n_kv;
    if (!gguf_read_u64(&c, &n_tensors) || !gguf_read_u64(&c, &n_kv))
        return gguf_fail(err, GGUF_E_TRUNCATED, c.pos, "",
                         "the file ends inside the header's counts (%llu bytes long; truncated file?)",
                         (unsigned long long)f->size);
    /* Smallest possible records: a tensor info is a 1-byte name (8+1), one dim
     * (4+8), a type (4) and an offset (8); a key/value is a 1-byte key (8+1), a
     * type (4) and a 1-byte value. */
    const uint64_t min_tensor = 8 + 1 + 4 + 8 + 4 + 8, min_kv = 8 + 1 + 4 + 1;
    uint64_t left = gguf_cursor_left(&c);
    if (n_tensors > left / min_tensor || n_tensors > UINT32_MAX - 1)
        return gguf_fail(err, GGUF_E_TENSOR_COUNT, 8, "",
                         "the header claims %llu tensors, but the %llu bytes after it could describe at most %llu",
                         (unsigned long long)n_tensors, (unsigned long long)left,
                         (unsigned long long)(left / min_tensor));
    if (n_kv > left / min_kv || n_kv > UINT32_MAX - 1)
        return gguf_fail(err, GGUF_E_KV_COUNT, 16, "",
                         "the header claims %llu metadata keys, but the %llu bytes after it could hold at most %llu",
                         (unsigned long long)n_kv, (unsigned long long)left, (unsigned long long)(left / min_kv));
    f->n_kv = (size_t)n_kv;
    f->kvs = gguf_arena_array(&f->arena, n_kv, sizeof *f->kvs);
    if ((!f->kvs && n_kv) || !gguf_index_init(&f->kv_index, &f->arena, f->n_kv))
        return gguf_fail(err, GGUF_E_NOMEM, 16, "", "out of memory for %llu keys", (unsigned long long)n_kv);
    for (size_t i = 0; i < f->n_kv; i++) {
        s = parse_kv(f, &c, i, err);
        if (s != GGUF_OK)
            return s;
    }
    s = check_alignment(f, err);
    if (s != GGUF_OK)
        return s;
    uint64_t pos = c.pos;
    return gguf_parse_tensors(f, &pos, n_tensors, err);
}
