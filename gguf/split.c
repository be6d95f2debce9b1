/* A model split by llama.cpp's gguf-split opened as one: given the first shard (PREFIX-00001-of-0000N.gguf),
 * the others are opened and their tensors joined to the first's, as llama.cpp's loader does
 * (src/llama-model-loader.cpp): the metadata is the first shard's, every shard carries split.no (u16, from 0),
 * split.count (u16) and split.tensors.count (i32, the total), and no tensor name may repeat across shards. */
#include "file.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The key as an integer in [0, max]; -1 when absent, -2 when of another type or out of range. */
static int64_t split_key(const gguf_file *f, const char *key, int64_t max)
{
    if (!gguf_find_kv(f, key))
        return -1;
    int64_t v;
    return gguf_get_int(f, key, 0, max, &v, NULL) == GGUF_OK ? v : -2;
}

/* PREFIX from ".../PREFIX-00001-of-00003.gguf" (as llama_split_prefix), into prefix; false when the name
 * is not a first shard's of count shards. */
static bool split_prefix(const char *path, int64_t count, char *prefix, size_t len)
{
    char tail[64];
    snprintf(tail, sizeof tail, "-%05d-of-%05d.gguf", 1, (int)count);
    size_t n = strlen(path), t = strlen(tail);
    if (n <= t || strcmp(path + n - t, tail) != 0 || n - t >= len)
        return false;
    memcpy(prefix, path, n - t);
    prefix[n - t] = '\0';
    return true;
}

/* Where key starts in the file (0 when absent): the offset a split error names. */
static uint64_t key_offset(const gguf_file *f, const char *key)
{
    const gguf_kv *kv = gguf_find_kv(f, key);
    return kv ? kv->offset : 0;
}

/* Opens the shard named name into *out (a path, or a URL through the caller's opener). */
typedef gguf_status (*shard_open_fn)(void *user, const char *name, gguf_file **out, gguf_error *err);

static gguf_status open_local_shard(void *user, const char *name, gguf_file **out, gguf_error *err)
{
    (void)user;
    return gguf_open_one(name, false, out, err);
}

typedef struct io_opener {
    gguf_io_opener fn;
    void *user;
} io_opener;

static gguf_status open_io_shard(void *user, const char *name, gguf_file **out, gguf_error *err)
{
    const io_opener *o = user;
    const gguf_io *io = NULL;
    gguf_status s = o->fn(o->user, name, &io, err);
    return s != GGUF_OK ? s : gguf_open_io(io, out, err);
}

static gguf_status attach(gguf_file *f, const char *path, shard_open_fn open_shard, void *user, gguf_error *err)
{
    int64_t count = split_key(f, "split.count", 65535), no = split_key(f, "split.no", 65535);
    if (count == -1 || count == 1)
        return GGUF_OK; /* one file */
    if (count < 0 || no < 0) {
        const char *key = count < 0 ? "split.count" : "split.no";
        return gguf_fail(err, GGUF_E_SPLIT, key_offset(f, key), key,
                         "split model: %s is missing or not a count from 0 to 65535", key);
    }
    if (count == 0)
        return gguf_fail(err, GGUF_E_SPLIT, key_offset(f, "split.count"), "split.count",
                         "split model: split.count is 0");
    if (no != 0)
        return gguf_fail(err, GGUF_E_SPLIT, key_offset(f, "split.no"), "split.no",
                         "split model: this is shard %lld of %lld; open the first one (…-00001-of-%05lld.gguf), "
                         "which holds the metadata, as llama.cpp does", (long long)no + 1, (long long)count,
                         (long long)count);
    char prefix[4096];
    if (!split_prefix(path, count, prefix, sizeof prefix))
        return gguf_fail(err, GGUF_E_SPLIT, key_offset(f, "split.count"), "split.count",
                         "split model of %lld shards, but the name '%s' is not llama.cpp's PREFIX-00001-of-%05lld.gguf, "
                         "so the other shards cannot be found", (long long)count, path, (long long)count);
    f->shards = gguf_arena_array(&f->arena, (uint64_t)count, sizeof *f->shards);
    f->shard_paths = gguf_arena_array(&f->arena, (uint64_t)count, sizeof *f->shard_paths);
    if (!f->shards || !f->shard_paths)
        return gguf_fail(err, GGUF_E_NOMEM, 0, "", "out of memory");
    f->n_shards = (size_t)count;
    f->shard_paths[0] = gguf_arena_strndup(&f->arena, path, strlen(path));
    uint64_t total = f->n_tensors;
    for (int64_t i = 1; i < count; i++) {
        char shard[4200];
        snprintf(shard, sizeof shard, "%s-%05d-of-%05d.gguf", prefix, (int)i + 1, (int)count);
        f->shard_paths[i] = gguf_arena_strndup(&f->arena, shard, strlen(shard));
        gguf_error e;
        gguf_status s = open_shard(user, shard, &f->shards[i], &e);
        if (s == GGUF_E_IO)
            return gguf_fail(err, GGUF_E_SPLIT, 0, shard, "split model: shard %lld of %lld is missing: %s",
                             (long long)i + 1, (long long)count, e.message);
        if (s != GGUF_OK)
            return gguf_fail(err, s, e.offset, e.subject[0] ? e.subject : shard, "split model: shard '%s': %s", shard,
                             e.message);
        const gguf_file *g = f->shards[i];
        int64_t gno = split_key(g, "split.no", 65535), gcount = split_key(g, "split.count", 65535);
        if (gno != i)
            return gguf_fail(err, GGUF_E_SPLIT, 0, shard,
                             "split model: shard '%s': its split.no is %lld where shard %lld was expected", shard,
                             (long long)gno, (long long)i);
        if (gcount != count)
            return gguf_fail(err, GGUF_E_SPLIT, 0, shard,
                             "split model: shard '%s': it belongs to a split of %lld shards, the first to one of %lld",
                             shard, (long long)gcount, (long long)count);
        total += g->n_tensors;
    }
    int64_t want = split_key(f, "split.tensors.count", INT32_MAX);
    if (want >= 0 && (uint64_t)want != total)
        return gguf_fail(err, GGUF_E_SPLIT, key_offset(f, "split.tensors.count"), "split.tensors.count",
                         "split model: split.tensors.count says %lld tensors, the %lld shards hold %llu",
                         (long long)want, (long long)count, (unsigned long long)total);
    /* one tensor table and index over every shard, the first shard's tensors first */
    gguf_tensor *all = gguf_arena_array(&f->arena, total + 1, sizeof *all);
    if (!all)
        return gguf_fail(err, GGUF_E_NOMEM, 0, "", "out of memory");
    memcpy(all, f->tensors, f->n_tensors * sizeof *all);
    size_t n = f->n_tensors;
    f->n_own_tensors = f->n_tensors;
    for (size_t i = 1; i < f->n_shards; i++)
        for (size_t k = 0; k < f->shards[i]->n_tensors; k++) {
            all[n] = f->shards[i]->tensors[k];
            all[n++].shard = (uint32_t)i;
        }
    f->tensors = all;
    f->n_tensors = n;
    if (!gguf_index_init(&f->tensor_index, &f->arena, n))
        return gguf_fail(err, GGUF_E_NOMEM, 0, "", "out of memory");
    for (size_t i = 0; i < n; i++) {
        long prev = gguf_index_insert(&f->tensor_index, &f->tensors[0].name, sizeof *f->tensors, (uint32_t)i);
        if (prev >= 0)
            return gguf_fail(err, GGUF_E_DUPLICATE_NAME, all[i].info_offset, all[i].name,
                             "split model: tensor '%s' is in shard %u and again in shard %u (%s)", all[i].name,
                             all[prev].shard + 1, all[i].shard + 1, f->shard_paths[all[i].shard]);
    }
    return GGUF_OK;
}

gguf_status gguf_split_attach(gguf_file *f, const char *path, gguf_error *err)
{
    return attach(f, path, open_local_shard, NULL, err);
}

gguf_status gguf_open_io_split(const gguf_io *io, const char *name, gguf_io_opener opener, void *user,
                               gguf_file **out, gguf_error *err)
{
    gguf_status s = gguf_open_io(io, out, err);
    if (s != GGUF_OK)
        return s;
    (*out)->n_own_tensors = (*out)->n_tensors;
    io_opener o = { opener, user };
    s = attach(*out, name, open_io_shard, &o, err);
    if (s != GGUF_OK) {
        gguf_close(*out);
        *out = NULL;
    }
    return s;
}

size_t gguf_shard_count(const gguf_file *f)
{
    return f->n_shards ? f->n_shards : 1;
}

bool gguf_shard_identity(const gguf_file *f, size_t i, uint64_t *dev, uint64_t *ino)
{
    const gguf_file *g = i == 0 ? f : i < f->n_shards ? f->shards[i] : NULL;
    if (!g || !g->has_identity)
        return false;
    *dev = g->dev;
    *ino = g->ino;
    return true;
}

const char *gguf_shard_path(const gguf_file *f, size_t i)
{
    return i < f->n_shards ? f->shard_paths[i] : NULL;
}
