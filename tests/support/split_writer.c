/* Writing split models (split_writer.h). */
#include "split_writer.h"
#include "gguf.h"
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>

static gguf_status write_shard(const gguf_file *f, const char *prefix, int s, int n, split_fault what, int bad,
                               gguf_error *err)
{
    const size_t count = gguf_tensor_count(f), per = (count + (size_t)n - 1) / (size_t)n;
    gguf_writer *w = gguf_writer_create(3);
    gguf_status st = w ? GGUF_OK : GGUF_E_NOMEM;
    for (size_t i = 0; s == 0 && !st && i < gguf_kv_count(f); i++)
        st = gguf_writer_add_copy(w, gguf_kv_at(f, i)->key, &gguf_kv_at(f, i)->value, err);
    gguf_wvalue no = { .type = GGUF_VT_UINT16, .v.u64 = (uint64_t)s + (what == SPLIT_FAULT_NO && s == bad) };
    gguf_wvalue cnt = { .type = GGUF_VT_UINT16, .v.u64 = (uint64_t)n + (what == SPLIT_FAULT_COUNT && s == bad) };
    gguf_wvalue total = { .type = GGUF_VT_INT32, .v.i64 = (int64_t)count + (what == SPLIT_FAULT_DUPLICATE) };
    if (!st)
        st = gguf_writer_add(w, "split.no", &no, err);
    if (!st)
        st = gguf_writer_add(w, "split.count", &cnt, err);
    if (!st)
        st = gguf_writer_add(w, "split.tensors.count", &total, err);
    for (size_t i = (size_t)s * per; !st && i < count && i < ((size_t)s + 1) * per; i++) {
        const gguf_tensor *t = gguf_tensor_at(f, i);
        st = gguf_writer_add_tensor(w, t->name, t->type, t->n_dims, t->ne, t->data, err);
    }
    if (!st && what == SPLIT_FAULT_DUPLICATE && s == bad) { /* the first tensor again, in another shard */
        const gguf_tensor *t = gguf_tensor_at(f, 0);
        st = gguf_writer_add_tensor(w, t->name, t->type, t->n_dims, t->ne, t->data, err);
    }
    char path[4200];
    snprintf(path, sizeof path, "%s-%05d-of-%05d.gguf", prefix, s + 1, n);
    if (!st)
        st = gguf_writer_write_file(w, path, err);
    gguf_writer_free(w);
    return st;
}

bool split_write(const char *whole, const char *prefix, int n, split_fault what, int bad, char *why, size_t why_len)
{
    tbuf b = read_whole_file(whole);
    gguf_file *f = NULL;
    gguf_error err = { 0 };
    gguf_status st = b.p ? gguf_open_memory(b.p, b.len, &f, &err) : GGUF_E_IO;
    for (int s = 0; !st && s < n; s++)
        st = write_shard(f, prefix, s, n, what, bad, &err);
    if (st)
        snprintf(why, why_len, "%s: %s", whole, err.message[0] ? err.message : "unreadable");
    gguf_close(f);
    tbuf_free(&b);
    return st == GGUF_OK;
}
