/* libFuzzer target: open a GGUF image from memory and walk every key,
 * array element and tensor, touching the first and last data byte. */
#include "gguf.h"

#include <stddef.h>
#include <stdint.h>

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
    if (gguf_open_memory(data, size, &f, &err) != GGUF_OK)
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
