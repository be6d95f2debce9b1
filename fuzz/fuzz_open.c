/* libFuzzer target: open a GGUF image from memory and walk every key,
 * array element and tensor, touching the first and last data byte; and open the same bytes through a reader
 * callback (gguf_open_io, as a remote file is read), which must give the same verdict and, tensor by tensor
 * fetched, the same bytes. */
#include "gguf.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef struct image {
    const uint8_t *p;
    size_t n;
} image;

static gguf_status read_image(void *user, uint64_t offset, void *buf, size_t n, gguf_error *err)
{
    const image *im = user;
    if (offset > im->n || n > im->n - offset)
        __builtin_trap(); /* gguf_open_io reads only inside the file */
    memcpy(buf, im->p + offset, n);
    (void)err;
    return GGUF_OK;
}

/* The io path against the memory path's verdict m (its file mf when it opened). */
static void check_io(const uint8_t *data, size_t size, gguf_status m, const gguf_file *mf)
{
    image im = { data, size };
    gguf_io io = { read_image, &im, size };
    gguf_file *f = NULL;
    gguf_error err;
    gguf_status s = gguf_open_io(&io, &f, &err);
    if ((s == GGUF_OK) != (m == GGUF_OK) || (s != GGUF_OK && size && s != m))
        __builtin_trap();
    if (s != GGUF_OK)
        return;
    if (gguf_tensor_count(f) != gguf_tensor_count(mf) || gguf_io_bytes_read(f) > size)
        __builtin_trap();
    for (size_t i = 0; i < gguf_tensor_count(f); i++) {
        if (gguf_io_fetch_tensor(f, i, &err) != GGUF_OK)
            __builtin_trap();
        const gguf_tensor *a = gguf_tensor_at(f, i), *b = gguf_tensor_at(mf, i);
        if (a->size != b->size || memcmp(a->data, b->data, a->size) != 0)
            __builtin_trap();
    }
    gguf_close(f);
}

static volatile uint64_t sink;

static void walk_value(const gguf_value *v)
{
    if (v->type == GGUF_VT_STRING && v->v.str.len)
        sink += (unsigned char)v->v.str.ptr[v->v.str.len - 1];
    if (v->type != GGUF_VT_ARRAY)
        return;
    for (uint64_t i = 0; i < v->count; i++) {
        if (v->elem_type == GGUF_VT_STRING) {
            if (v->v.strs[i].len)
                sink += (unsigned char)v->v.strs[i].ptr[v->v.strs[i].len - 1];
        } else if (v->elem_type == GGUF_VT_ARRAY) {
            walk_value(&v->v.items[i]);
        } else {
            gguf_value e;
            if (gguf_array_scalar(v, i, &e) == GGUF_OK)
                sink += e.v.u64;
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    gguf_file *f = NULL;
    gguf_error err;
    gguf_status m = gguf_open_memory(data, size, &f, &err);
    check_io(data, size, m, f);
    if (m != GGUF_OK)
        return 0;
    for (size_t i = 0; i < gguf_kv_count(f); i++) {
        const gguf_kv *kv = gguf_kv_at(f, i);
        walk_value(&kv->value);
        if (gguf_find_kv(f, kv->key) != kv)
            __builtin_trap(); /* the index must find every key it holds */
    }
    for (size_t i = 0; i < gguf_tensor_count(f); i++) {
        const gguf_tensor *t = gguf_tensor_at(f, i);
        if (gguf_tensor_by_name(f, t->name) != t || !t->data)
            __builtin_trap();
        sink += t->data[0] + t->data[t->size - 1];
    }
    for (size_t i = 0; i < gguf_warning_count(f); i++)
        sink += gguf_warning_at(f, i)->offset;
    gguf_close(f);
    return 0;
}
