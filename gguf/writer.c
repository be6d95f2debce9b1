/*
 * Building a GGUF file from keys and tensors. The writer lays the tensors out
 * in the order they were added, each at an aligned offset, which is the layout
 * llama.cpp expects. Files are written atomically: a temporary file in the
 * same directory, fsync, rename over the target, fsync of the directory.
 */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct wkv {
    char *key;
    gguf_wvalue value;
    const gguf_value *copied; /* a value read from a file, written byte for byte instead of value */
} wkv;

typedef struct wtensor {
    char *name;
    uint32_t type, n_dims;
    uint64_t ne[GGUF_MAX_DIMS];
    uint64_t size, offset;
    const void *data;
    gguf_fill_fn fill;
    void *user;
} wtensor;

struct gguf_writer {
    uint32_t version, alignment;
    wkv *kvs;
    size_t n_kv, cap_kv;
    wtensor *tensors;
    size_t n_tensors, cap_tensors;
    uint64_t data_bytes;   /* running size of the data section, aligned */
};

gguf_writer *gguf_writer_create(uint32_t version)
{
    if (version != 2 && version != 3)
        return NULL;
    gguf_writer *w = calloc(1, sizeof *w);
    if (w) {
        w->version = version;
        w->alignment = GGUF_ALIGNMENT_DEFAULT;
    }
    return w;
}

void gguf_writer_free(gguf_writer *w)
{
    if (!w)
        return;
    for (size_t i = 0; i < w->n_kv; i++)
        free(w->kvs[i].key);
    for (size_t i = 0; i < w->n_tensors; i++)
        free(w->tensors[i].name);
    free(w->kvs);
    free(w->tensors);
    free(w);
}

gguf_status gguf_writer_add(gguf_writer *w, const char *key, const gguf_wvalue *value, gguf_error *err)
{
    if (!w || !key || !value || !*key)
        return gguf_fail(err, GGUF_E_INVALID_ARG, 0, key ? key : "", "gguf_writer_add: missing or empty key");
    if ((unsigned)value->type >= GGUF_VT_COUNT)
        return gguf_fail(err, GGUF_E_VALUE_TYPE, 0, key, "key '%s': invalid value type %u", key, value->type);
    for (size_t i = 0; i < w->n_kv; i++)
        if (strcmp(w->kvs[i].key, key) == 0)
            return gguf_fail(err, GGUF_E_DUPLICATE_KEY, 0, key, "key '%s' added twice", key);
    if (strcmp(key, "general.alignment") == 0) {
        uint64_t a = value->v.u64;
        if (value->type != GGUF_VT_UINT32 || a == 0 || (a & (a - 1)) || w->n_tensors)
            return gguf_fail(err, GGUF_E_ALIGNMENT, 0, key,
                             "general.alignment must be a u32 power of two, set before any tensor");
        w->alignment = (uint32_t)a;
    }
    if (!gguf_reserve((void **)&w->kvs, &w->cap_kv, w->n_kv + 1, sizeof *w->kvs))
        return gguf_fail(err, GGUF_E_NOMEM, 0, key, "out of memory");
    char *k = strdup(key);
    if (!k)
        return gguf_fail(err, GGUF_E_NOMEM, 0, key, "out of memory");
    w->kvs[w->n_kv++] = (wkv){ k, *value, NULL };
    return GGUF_OK;
}

gguf_status gguf_writer_add_copy(gguf_writer *w, const char *key, const gguf_value *value, gguf_error *err)
{
    if (!value)
        return gguf_fail(err, GGUF_E_INVALID_ARG, 0, key ? key : "", "gguf_writer_add_copy: missing value");
    /* the checks (key, duplicates, general.alignment) are gguf_writer_add's; only the type and the scalar matter */
    const gguf_wvalue shape = { .type = value->type, .v.u64 = value->v.u64 };
    gguf_status st = gguf_writer_add(w, key, &shape, err);
    if (!st)
        w->kvs[w->n_kv - 1].copied = value;
    return st;
}

gguf_status gguf_writer_add_u32(gguf_writer *w, const char *key, uint32_t v, gguf_error *err)
{
    gguf_wvalue val = { .type = GGUF_VT_UINT32, .v.u64 = v };
    return gguf_writer_add(w, key, &val, err);
}

gguf_status gguf_writer_add_f32(gguf_writer *w, const char *key, float v, gguf_error *err)
{
    gguf_wvalue val = { .type = GGUF_VT_FLOAT32, .v.f64 = v };
    return gguf_writer_add(w, key, &val, err);
}

gguf_status gguf_writer_add_str(gguf_writer *w, const char *key, const char *v, gguf_error *err)
{
    gguf_wvalue val = { .type = GGUF_VT_STRING, .v.str = v };
    return gguf_writer_add(w, key, &val, err);
}

static gguf_status add_tensor(gguf_writer *w, const char *name, uint32_t type, uint32_t n_dims,
                              const uint64_t *ne, const void *data, gguf_fill_fn fill, void *user,
                              gguf_error *err)
{
    if (!w || !name || !*name || !ne)
        return gguf_fail(err, GGUF_E_INVALID_ARG, 0, name ? name : "", "add_tensor: missing or empty name");
    if (n_dims == 0 || n_dims > GGUF_MAX_DIMS)
        return gguf_fail(err, GGUF_E_N_DIMS, 0, name, "tensor '%s': %u dimensions", name, n_dims);
    for (size_t i = 0; i < w->n_tensors; i++)
        if (strcmp(w->tensors[i].name, name) == 0)
            return gguf_fail(err, GGUF_E_DUPLICATE_NAME, 0, name, "tensor '%s' added twice", name);
    wtensor t = { .type = type, .n_dims = n_dims, .data = data, .fill = fill, .user = user };
    for (uint32_t d = 0; d < GGUF_MAX_DIMS; d++) {
        t.ne[d] = d < n_dims ? ne[d] : 1;
        if (t.ne[d] == 0)
            return gguf_fail(err, GGUF_E_ZERO_DIM, 0, name, "tensor '%s': dimension %u is 0", name, d);
    }
    const gguf_type_traits *tt = gguf_type_traits_of(type);
    if (tt->state != GGUF_TYPE_OK)
        return gguf_fail(err, GGUF_E_UNKNOWN_TYPE, 0, name, "tensor '%s': type %u cannot be written", name, type);
    if (t.ne[0] % tt->block_size)
        return gguf_fail(err, GGUF_E_BLOCK_MULTIPLE, 0, name, "tensor '%s': %llu is not a multiple of %u", name,
                         (unsigned long long)t.ne[0], tt->block_size);
    uint64_t end;
    if (!gguf_tensor_nbytes(type, t.ne, &t.size) || !gguf_add_ok(w->data_bytes, t.size, &end) ||
        !gguf_align_up(end, w->alignment, &end))
        return gguf_fail(err, GGUF_E_SIZE_OVERFLOW, 0, name, "tensor '%s' is too large", name);
    t.offset = w->data_bytes;
    if (!gguf_reserve((void **)&w->tensors, &w->cap_tensors, w->n_tensors + 1, sizeof *w->tensors) ||
        !(t.name = strdup(name)))
        return gguf_fail(err, GGUF_E_NOMEM, 0, name, "out of memory");
    w->tensors[w->n_tensors++] = t;
    w->data_bytes = end;
    return GGUF_OK;
}

gguf_status gguf_writer_add_tensor(gguf_writer *w, const char *name, uint32_t type, uint32_t n_dims,
                                   const uint64_t *ne, const void *data, gguf_error *err)
{
    if (!data)
        return gguf_fail(err, GGUF_E_INVALID_ARG, 0, name ? name : "", "add_tensor: NULL data");
    return add_tensor(w, name, type, n_dims, ne, data, NULL, NULL, err);
}

gguf_status gguf_writer_add_tensor_fill(gguf_writer *w, const char *name, uint32_t type, uint32_t n_dims,
                                        const uint64_t *ne, gguf_fill_fn fill, void *user, gguf_error *err)
{
    if (!fill)
        return gguf_fail(err, GGUF_E_INVALID_ARG, 0, name ? name : "", "add_tensor_fill: NULL callback");
    return add_tensor(w, name, type, n_dims, ne, NULL, fill, user, err);
}

/* ---- serialisation: one sink abstraction serves files and buffers ---- */

typedef struct sink {
    gguf_status (*put)(struct sink *s, const void *p, size_t n);
    uint64_t written;
    int fd;            /* file sink */
    uint8_t *buf;      /* buffer sink */
    gguf_error *err;
} sink;

static gguf_status put_fd(sink *s, const void *p, size_t n)
{
    const uint8_t *b = p;
    while (n) {
        ssize_t r = write(s->fd, b, n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return gguf_fail(s->err, GGUF_E_IO, s->written, "", "write failed: %s", strerror(errno));
        b += r;
        n -= (size_t)r;
        s->written += (uint64_t)r;
    }
    return GGUF_OK;
}

static gguf_status put_buf(sink *s, const void *p, size_t n)
{
    memcpy(s->buf + s->written, p, n);
    s->written += n;
    return GGUF_OK;
}

static gguf_status put_u32(sink *s, uint32_t v)
{
    uint8_t b[4] = { (uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24) };
    return s->put(s, b, 4);
}

static gguf_status put_u64(sink *s, uint64_t v)
{
    gguf_status st = put_u32(s, (uint32_t)v);
    return st ? st : put_u32(s, (uint32_t)(v >> 32));
}

static gguf_status put_str(sink *s, const char *str)
{
    size_t n = strlen(str);
    gguf_status st = put_u64(s, n);
    return st ? st : s->put(s, str, n);
}

static gguf_status put_scalar(sink *s, uint32_t type, const gguf_wvalue *v)
{
    uint8_t b[8];
    size_t n = gguf_value_type_size(type);
    uint64_t u = v->v.u64;
    if (type == GGUF_VT_FLOAT32) {
        float f = (float)v->v.f64;
        uint32_t w;
        memcpy(&w, &f, 4);
        u = w;
    } else if (type == GGUF_VT_FLOAT64) {
        memcpy(&u, &v->v.f64, 8);
    } else if (type == GGUF_VT_BOOL) {
        u = v->v.b ? 1 : 0;
    } else if (type == GGUF_VT_INT8 || type == GGUF_VT_INT16 || type == GGUF_VT_INT32 || type == GGUF_VT_INT64) {
        u = (uint64_t)v->v.i64;
    }
    for (size_t i = 0; i < n; i++)
        b[i] = (uint8_t)(u >> (8 * i));
    return s->put(s, b, n);
}

/* Reads element i of a host-layout scalar array into a wvalue. */
static gguf_wvalue host_elem(uint32_t et, const void *elems, uint64_t i)
{
    gguf_wvalue v = { .type = (gguf_value_type)et };
    const uint8_t *p = (const uint8_t *)elems + i * gguf_value_type_size(et);
    switch (et) {
    case GGUF_VT_UINT8: v.v.u64 = *p; break;
    case GGUF_VT_INT8: v.v.i64 = *(const int8_t *)p; break;
    case GGUF_VT_UINT16: { uint16_t x; memcpy(&x, p, 2); v.v.u64 = x; break; }
    case GGUF_VT_INT16: { int16_t x; memcpy(&x, p, 2); v.v.i64 = x; break; }
    case GGUF_VT_UINT32: { uint32_t x; memcpy(&x, p, 4); v.v.u64 = x; break; }
    case GGUF_VT_INT32: { int32_t x; memcpy(&x, p, 4); v.v.i64 = x; break; }
    case GGUF_VT_FLOAT32: { float x; memcpy(&x, p, 4); v.v.f64 = x; break; }
    case GGUF_VT_BOOL: v.v.b = *p != 0; break;
    case GGUF_VT_UINT64: memcpy(&v.v.u64, p, 8); break;
    case GGUF_VT_INT64: memcpy(&v.v.i64, p, 8); break;
    case GGUF_VT_FLOAT64: memcpy(&v.v.f64, p, 8); break;
    default: break;
    }
    return v;
}

static gguf_status put_value(sink *s, const gguf_wvalue *v, int depth)
{
    if (v->type == GGUF_VT_STRING)
        return put_str(s, v->v.str ? v->v.str : "");
    if (v->type != GGUF_VT_ARRAY)
        return put_scalar(s, v->type, v);
    if (depth >= GGUF_MAX_ARRAY_DEPTH)
        return gguf_fail(s->err, GGUF_E_ARRAY_DEPTH, s->written, "", "arrays nested too deep");
    gguf_status st = put_u32(s, v->elem_type);
    if (!st)
        st = put_u64(s, v->count);
    for (uint64_t i = 0; !st && i < v->count; i++) {
        if (v->elem_type == GGUF_VT_STRING)
            st = put_str(s, v->v.strs[i]);
        else if (v->elem_type == GGUF_VT_ARRAY)
            st = put_value(s, &v->v.items[i], depth + 1);
        else {
            gguf_wvalue e = host_elem(v->elem_type, v->v.elems, i);
            st = put_scalar(s, v->elem_type, &e);
        }
    }
    return st;
}

/* A value as the reader holds it: strings by length (any bytes), scalar arrays as their raw little-endian bytes. */
static gguf_status put_copied(sink *s, const gguf_value *v, int depth)
{
    if (v->type == GGUF_VT_STRING) {
        gguf_status st = put_u64(s, v->v.str.len);
        return st ? st : s->put(s, v->v.str.ptr, (size_t)v->v.str.len);
    }
    if (v->type != GGUF_VT_ARRAY) {
        const gguf_wvalue w = { .type = v->type, .v.u64 = v->v.u64 };
        return put_scalar(s, v->type, &w);
    }
    if (depth >= GGUF_MAX_ARRAY_DEPTH)
        return gguf_fail(s->err, GGUF_E_ARRAY_DEPTH, s->written, "", "arrays nested too deep");
    gguf_status st = put_u32(s, v->elem_type);
    if (!st)
        st = put_u64(s, v->count);
    if (st)
        return st;
    if (v->elem_type == GGUF_VT_STRING || v->elem_type == GGUF_VT_ARRAY) {
        for (uint64_t i = 0; !st && i < v->count; i++) {
            const gguf_value e = v->elem_type == GGUF_VT_STRING
                                     ? (gguf_value){ .type = GGUF_VT_STRING, .v.str = v->v.strs[i] }
                                     : v->v.items[i];
            st = put_copied(s, &e, depth + 1);
        }
        return st;
    }
    return s->put(s, v->v.raw, (size_t)(v->count * gguf_value_type_size(v->elem_type)));
}

static gguf_status put_zeros(sink *s, uint64_t n)
{
    static const uint8_t zeros[256];
    while (n) {
        size_t k = n < sizeof zeros ? (size_t)n : sizeof zeros;
        gguf_status st = s->put(s, zeros, k);
        if (st)
            return st;
        n -= k;
    }
    return GGUF_OK;
}

static gguf_status put_tensor_data(sink *s, const wtensor *t)
{
    if (t->data)
        return s->put(s, t->data, (size_t)t->size);
    uint8_t chunk[1 << 16];
    for (uint64_t at = 0; at < t->size;) {
        size_t n = t->size - at < sizeof chunk ? (size_t)(t->size - at) : sizeof chunk;
        gguf_status st = t->fill(t->user, chunk, at, n);
        if (st)
            return gguf_fail(s->err, st, s->written, t->name, "tensor '%s': fill callback failed", t->name);
        st = s->put(s, chunk, n);
        if (st)
            return st;
        at += n;
    }
    return GGUF_OK;
}

static gguf_status serialise(gguf_writer *w, sink *s)
{
    gguf_status st = s->put(s, GGUF_MAGIC_BYTES, 4);
    if (!st) st = put_u32(s, w->version);
    if (!st) st = put_u64(s, w->n_tensors);
    if (!st) st = put_u64(s, w->n_kv);
    for (size_t i = 0; !st && i < w->n_kv; i++) {
        st = put_str(s, w->kvs[i].key);
        if (!st) st = put_u32(s, w->kvs[i].value.type);
        if (!st) st = w->kvs[i].copied ? put_copied(s, w->kvs[i].copied, 0) : put_value(s, &w->kvs[i].value, 0);
    }
    for (size_t i = 0; !st && i < w->n_tensors; i++) {
        const wtensor *t = &w->tensors[i];
        st = put_str(s, t->name);
        if (!st) st = put_u32(s, t->n_dims);
        for (uint32_t d = 0; !st && d < t->n_dims; d++)
            st = put_u64(s, t->ne[d]);
        if (!st) st = put_u32(s, t->type);
        if (!st) st = put_u64(s, t->offset);
    }
    uint64_t data_start = 0;
    if (!st && w->n_tensors) {
        gguf_align_up(s->written, w->alignment, &data_start);
        st = put_zeros(s, data_start - s->written);
    }
    for (size_t i = 0; !st && i < w->n_tensors; i++) {
        const wtensor *t = &w->tensors[i];
        st = put_zeros(s, data_start + t->offset - s->written);
        if (!st)
            st = put_tensor_data(s, t);
    }
    if (!st && w->n_tensors)
        st = put_zeros(s, data_start + w->data_bytes - s->written);
    return st;
}

/* A sink that only counts. */
static gguf_status put_count(sink *s, const void *p, size_t n)
{
    (void)p;
    s->written += n;
    return GGUF_OK;
}

uint64_t gguf_writer_size(const gguf_writer *w)
{
    /* Counting never calls fill callbacks for data: only sizes matter. */
    gguf_writer copy = *w;
    sink s = { .put = put_count };
    wtensor *ts = malloc((w->n_tensors ? w->n_tensors : 1) * sizeof *ts);
    if (!ts)
        return 0;
    static const uint8_t any;
    for (size_t i = 0; i < w->n_tensors; i++) {
        ts[i] = w->tensors[i];
        ts[i].data = &any;
        ts[i].fill = NULL;
    }
    copy.tensors = ts;
    serialise(&copy, &s);
    free(ts);
    return s.written;
}

gguf_status gguf_writer_write_buffer(gguf_writer *w, uint8_t **out, size_t *len, gguf_error *err)
{
    if (!w || !out || !len)
        return gguf_fail(err, GGUF_E_INVALID_ARG, 0, "", "write_buffer: NULL argument");
    uint64_t size = gguf_writer_size(w);
    if (size > SIZE_MAX)
        return gguf_fail(err, GGUF_E_NOMEM, 0, "", "file too large for memory");
    sink s = { .put = put_buf, .buf = malloc(size ? (size_t)size : 1), .err = err };
    if (!s.buf)
        return gguf_fail(err, GGUF_E_NOMEM, 0, "", "out of memory for a %llu-byte file", (unsigned long long)size);
    gguf_status st = serialise(w, &s);
    if (st) {
        free(s.buf);
        return st;
    }
    *out = s.buf;
    *len = (size_t)s.written;
    return GGUF_OK;
}

gguf_status gguf_writer_write_file(gguf_writer *w, const char *path, gguf_error *err)
{
    if (!w || !path)
        return gguf_fail(err, GGUF_E_INVALID_ARG, 0, "", "write_file: NULL argument");
    size_t n = strlen(path);
    char *tmp = malloc(n + 16), *dir = strdup(path);
    if (!tmp || !dir) {
        free(tmp);
        free(dir);
        return gguf_fail(err, GGUF_E_NOMEM, 0, "", "out of memory");
    }
    snprintf(tmp, n + 16, "%s.tmp.XXXXXX", path);
    int fd = mkstemp(tmp);
    gguf_status st = GGUF_OK;
    if (fd < 0) {
        st = gguf_fail(err, GGUF_E_IO, 0, "", "cannot create a temporary file beside '%s': %s", path,
                       strerror(errno));
        goto done;
    }
    fchmod(fd, 0644);
    sink s = { .put = put_fd, .fd = fd, .err = err };
    st = serialise(w, &s);
    if (!st && fsync(fd) != 0)
        st = gguf_fail(err, GGUF_E_IO, 0, "", "fsync of '%s' failed: %s", tmp, strerror(errno));
    if (close(fd) != 0 && !st)
        st = gguf_fail(err, GGUF_E_IO, 0, "", "close of '%s' failed: %s", tmp, strerror(errno));
    if (!st && rename(tmp, path) != 0)
        st = gguf_fail(err, GGUF_E_IO, 0, "", "cannot rename '%s' to '%s': %s", tmp, path, strerror(errno));
    if (st) {
        unlink(tmp);
        goto done;
    }
    int dfd = open(dirname(dir), O_RDONLY | O_DIRECTORY);
    if (dfd >= 0) {
        fsync(dfd); /* makes the rename durable; failure here cannot lose the old file */
        close(dfd);
    }
done:
    free(tmp);
    free(dir);
    return st;
}
