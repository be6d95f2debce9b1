/* Digests of tensor data, of the whole model and of the whole file.
 *
 * Streaming from the mapping in 1 MiB chunks: memory use is a few hashing
 * states per thread whatever the file size.
 *
 * Model lines and the UUID follow llama-gguf-hash (examples/gguf-hash in
 * llama.cpp): every tensor's data bytes in tensor-info order, xxh64 seed 0,
 * UUIDv5 = SHA-1 of the llama.cpp namespace followed by that data. */
#include "file.h"

#include <errno.h>
#include <fcntl.h>
#include <omp.h>
#include <stdio.h>
#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>
#include <zlib.h>

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22 /* Linux 5.14; older kernels answer EINVAL, which is harmless */
#endif

#define CHUNK_BYTES (1u << 20)

/* uuid.uuid5(uuid.NAMESPACE_URL, 'en.wikipedia.org/wiki/Llama.cpp'), as llama-gguf-hash defines it. */
static const uint8_t uuid_namespace[16] = { 0xef, 0x00, 0x12, 0x06, 0xda, 0xdc, 0x5f, 0x6d,
                                            0xa1, 0x5f, 0x33, 0x59, 0xe5, 0x77, 0xd4, 0xe5 };

static const char *const kind_names[GGUF_HASH_KIND_COUNT] = { "xxh64", "sha1", "sha256", "crc32" };

const char *gguf_hash_kind_name(gguf_hash_kind k)
{
    return (unsigned)k < GGUF_HASH_KIND_COUNT ? kind_names[k] : "?";
}

int gguf_hash_kind_from_name(const char *name)
{
    for (int k = 0; k < GGUF_HASH_KIND_COUNT; k++)
        if (strcmp(name, kind_names[k]) == 0)
            return k;
    return -1;
}

void gguf_digest_hex(const gguf_digest *d, char *out)
{
    static const char hex[] = "0123456789abcdef";
    for (unsigned i = 0; i < d->len; i++) {
        out[2 * i] = hex[d->bytes[i] >> 4];
        out[2 * i + 1] = hex[d->bytes[i] & 15];
    }
    out[2 * d->len] = '\0';
}

void gguf_uuid_format(const uint8_t u[16], char *out)
{
    static const char hex[] = "0123456789abcdef";
    size_t o = 0;
    for (int i = 0; i < 16; i++) {
        if (i == 4 || i == 6 || i == 8 || i == 10)
            out[o++] = '-';
        out[o++] = hex[u[i] >> 4];
        out[o++] = hex[u[i] & 15];
    }
    out[o] = '\0';
}

/* ---- one running digest -------------------------------------------------- */

typedef struct stream {
    gguf_hash_kind kind;
    bool uuid;               /* a SHA-1 seeded with the UUID namespace */
    XXH64_state_t *xxh;
    EVP_MD_CTX *md;
    uLong crc;
} stream;

static bool stream_reset(stream *st)
{
    switch (st->kind) {
    case GGUF_HASH_XXH64: return XXH64_reset(st->xxh, 0) != XXH_ERROR;
    case GGUF_HASH_SHA1:
        if (!EVP_DigestInit_ex(st->md, EVP_sha1(), NULL))
            return false;
        return !st->uuid || EVP_DigestUpdate(st->md, uuid_namespace, sizeof uuid_namespace);
    case GGUF_HASH_SHA256: return EVP_DigestInit_ex(st->md, EVP_sha256(), NULL);
    case GGUF_HASH_CRC32: st->crc = crc32_z(0L, Z_NULL, 0); return true;
    default: return false;
    }
}

static bool stream_init(stream *st, gguf_hash_kind kind, bool uuid)
{
    memset(st, 0, sizeof *st);
    st->kind = kind;
    st->uuid = uuid;
    if (kind == GGUF_HASH_XXH64 && !(st->xxh = XXH64_createState()))
        return false;
    if ((kind == GGUF_HASH_SHA1 || kind == GGUF_HASH_SHA256) && !(st->md = EVP_MD_CTX_new()))
        return false;
    return stream_reset(st);
}

static void stream_update(stream *st, const uint8_t *p, size_t n)
{
    switch (st->kind) {
    case GGUF_HASH_XXH64: XXH64_update(st->xxh, p, n); break;
    case GGUF_HASH_SHA1:
    case GGUF_HASH_SHA256: EVP_DigestUpdate(st->md, p, n); break;
    case GGUF_HASH_CRC32: st->crc = crc32_z(st->crc, p, n); break;
    default: break;
    }
}

/* Writes the digest and starts the stream again. */
static void stream_final(stream *st, gguf_digest *d)
{
    memset(d, 0, sizeof *d);
    if (st->kind == GGUF_HASH_XXH64 || st->kind == GGUF_HASH_CRC32) {
        uint64_t v = st->kind == GGUF_HASH_XXH64 ? XXH64_digest(st->xxh) : (uint64_t)st->crc;
        d->len = st->kind == GGUF_HASH_XXH64 ? 8 : 4;
        for (unsigned i = 0; i < d->len; i++)
            d->bytes[i] = (uint8_t)(v >> (8 * (d->len - 1 - i)));
    } else {
        unsigned len = 0;
        EVP_DigestFinal_ex(st->md, d->bytes, &len);
        d->len = (uint8_t)len;
    }
    stream_reset(st);
}

static void stream_free(stream *st)
{
    if (st->xxh)
        XXH64_freeState(st->xxh);
    if (st->md)
        EVP_MD_CTX_free(st->md);
}

/* ---- tasks ------------------------------------------------------------------ */

/* A model or file digest is one sequential stream over everything; a tensor's
 * digests are independent of every other tensor's. So the work is a pool of
 * tasks: the sequential streams (longest, taken first) and one task per tensor
 * (largest first), spread over threads dynamically. A tensor task reads each
 * chunk from memory once and runs every requested digest over it while it is
 * in cache. */
typedef enum task_type { TASK_MODEL, TASK_FILE, TASK_TENSOR } task_type;

typedef struct task {
    task_type type;
    stream st;               /* TASK_MODEL, TASK_FILE */
    size_t tensor;           /* TASK_TENSOR */
    uint64_t bytes;
} task;

typedef struct pool {
    const gguf_file *f;
    gguf_hashes *out;
    unsigned tensor_kinds;
    stream *per_thread;      /* (threads, kind): the tensor digests each thread runs */
    const gguf_hash_request *req;
    uint64_t done, total;    /* bytes read by all tasks, of the total they will read */
    uint64_t shown;          /* the bytes they cover: the data section, or the file for its sha256 */
} pool;

/* Maps a chunk's pages in one call instead of a fault per 64 KiB. */
static void populate(const gguf_file *f, const uint8_t *p, size_t n)
{
    if (!f->map || n == 0)
        return;
    uintptr_t page = 4096, lo = (uintptr_t)p & ~(page - 1), hi = (uintptr_t)p + n;
    madvise((void *)lo, hi - lo, MADV_POPULATE_READ);
}

static void progressed(pool *pl, uint64_t n)
{
    uint64_t done;
#pragma omp atomic capture
    done = pl->done += n;
    /* Several digests may read the same bytes (a model digest and per-tensor ones); the caller is told
     * how far through the file that is, in the file's bytes, not the work's. */
    if (pl->req->progress && omp_get_thread_num() == 0)
        pl->req->progress(pl->req->progress_user, (uint64_t)((double)done / (double)pl->total * (double)pl->shown),
                          pl->shown);
}

static void feed(pool *pl, stream *st, const uint8_t *p, uint64_t n)
{
    for (uint64_t at = 0; at < n; at += CHUNK_BYTES) {
        size_t len = n - at < CHUNK_BYTES ? (size_t)(n - at) : CHUNK_BYTES;
        populate(pl->f, p + at, len);
        stream_update(st, p + at, len);
        progressed(pl, len);
    }
}

static void run_task(pool *pl, task *t, int me)
{
    const gguf_file *f = pl->f;
    switch (t->type) {
    case TASK_MODEL:
        for (size_t i = 0; i < f->n_tensors; i++)
            feed(pl, &t->st, f->tensors[i].data, f->tensors[i].size);
        break;
    case TASK_FILE: feed(pl, &t->st, f->bytes, f->size); break;
    case TASK_TENSOR: {
        const gguf_tensor *x = &f->tensors[t->tensor];
        stream *mine = &pl->per_thread[(size_t)me * GGUF_HASH_KIND_COUNT];
        for (uint64_t at = 0; at < x->size; at += CHUNK_BYTES) {
            size_t len = x->size - at < CHUNK_BYTES ? (size_t)(x->size - at) : CHUNK_BYTES;
            populate(f, x->data + at, len);
            for (int k = 0; k < GGUF_HASH_KIND_COUNT; k++)
                if (pl->tensor_kinds & GGUF_HASH_BIT(k))
                    stream_update(&mine[k], x->data + at, len);
            progressed(pl, len);
        }
        for (int k = 0; k < GGUF_HASH_KIND_COUNT; k++)
            if (pl->tensor_kinds & GGUF_HASH_BIT(k))
                stream_final(&mine[k], &pl->out->tensor[t->tensor][k]);
        break;
    }
    }
}

static int by_bytes_desc(const void *x, const void *y)
{
    const task *a = x, *b = y;
    if (a->type != b->type)
        return a->type == TASK_TENSOR ? 1 : b->type == TASK_TENSOR ? -1 : 0;
    return a->bytes < b->bytes ? 1 : a->bytes > b->bytes ? -1 : (a->tensor > b->tensor) - (a->tensor < b->tensor);
}

gguf_status gguf_hash_file(const gguf_file *f, const gguf_hash_request *req, gguf_hashes *out, gguf_error *err)
{
    memset(out, 0, sizeof *out);
    if (!f || !req)
        return gguf_fail(err, GGUF_E_INVALID_ARG, 0, "", "gguf_hash_file: no file or request");
    int nt = req->n_threads > 0 ? req->n_threads : omp_get_max_threads();
    size_t max_tasks = GGUF_HASH_KIND_COUNT + 2 + (req->tensor_kinds ? f->n_tensors : 0);
    task *tasks = calloc(max_tasks, sizeof *tasks);
    stream *per_thread = calloc((size_t)nt * GGUF_HASH_KIND_COUNT, sizeof *per_thread);
    out->n_tensors = f->n_tensors;
    out->tensor = calloc(f->n_tensors + 1, sizeof *out->tensor);
    bool ok = tasks && per_thread && out->tensor;
    uint64_t data_bytes = 0;
    for (size_t i = 0; i < f->n_tensors; i++)
        data_bytes += f->tensors[i].data ? f->tensors[i].size : 0;
    /* a truncated file: the tensors that are whole get their digests; the model's, over all of them, none */
    const bool whole = f->missing_bytes == 0;

    size_t n = 0;
    for (int k = 0; ok && whole && k < GGUF_HASH_KIND_COUNT; k++)
        if (req->model_kinds & GGUF_HASH_BIT(k)) {
            tasks[n] = (task){ .type = TASK_MODEL, .bytes = data_bytes };
            ok = stream_init(&tasks[n++].st, (gguf_hash_kind)k, false);
        }
    if (ok && whole && req->uuid) {
        tasks[n] = (task){ .type = TASK_MODEL, .bytes = data_bytes };
        ok = stream_init(&tasks[n++].st, GGUF_HASH_SHA1, true);
    }
    if (ok && req->file_sha256) {
        tasks[n] = (task){ .type = TASK_FILE, .bytes = f->size };
        ok = stream_init(&tasks[n++].st, GGUF_HASH_SHA256, false);
    }
    for (size_t i = 0; ok && req->tensor_kinds && i < f->n_tensors; i++)
        if (f->tensors[i].data)
            tasks[n++] = (task){ .type = TASK_TENSOR, .tensor = i, .bytes = f->tensors[i].size };
    for (int t = 0; ok && req->tensor_kinds && t < nt; t++)
        for (int k = 0; ok && k < GGUF_HASH_KIND_COUNT; k++)
            if (req->tensor_kinds & GGUF_HASH_BIT(k))
                ok = stream_init(&per_thread[(size_t)t * GGUF_HASH_KIND_COUNT + k], (gguf_hash_kind)k, false);

    gguf_status status = GGUF_OK;
    if (ok) {
        qsort(tasks, n, sizeof *tasks, by_bytes_desc);
        pool pl = { f, out, req->tensor_kinds, per_thread, req, 0, 0, req->file_sha256 ? f->size : data_bytes };
        for (size_t i = 0; i < n; i++)
            pl.total += tasks[i].bytes;
        if (f->map)
            madvise(f->map, f->map_len, MADV_WILLNEED);
#pragma omp parallel num_threads(nt)
        {
            int me = omp_get_thread_num();
#pragma omp for schedule(dynamic, 1)
            for (size_t i = 0; i < n; i++)
                run_task(&pl, &tasks[i], me);
        }
        out->bytes_hashed = req->file_sha256 ? f->size : data_bytes;
        for (size_t i = 0; i < n; i++) {
            task *t = &tasks[i];
            if (t->type == TASK_MODEL && t->st.uuid) {
                gguf_digest d;
                stream_final(&t->st, &d);
                memcpy(out->uuid, d.bytes, 16);
                out->uuid[6] = (uint8_t)((out->uuid[6] & 0x0f) | 0x50); /* version 5 */
                out->uuid[8] = (uint8_t)((out->uuid[8] & 0x3f) | 0x80); /* RFC 9562 variant */
                out->has_uuid = true;
            } else if (t->type == TASK_MODEL) {
                stream_final(&t->st, &out->model[t->st.kind]);
            } else if (t->type == TASK_FILE) {
                stream_final(&t->st, &out->file_sha256);
            }
        }
    } else {
        status = gguf_fail(err, GGUF_E_NOMEM, 0, "", "out of memory for hashing states");
    }
    for (size_t i = 0; tasks && i < n; i++)
        stream_free(&tasks[i].st);
    for (size_t i = 0; per_thread && i < (size_t)nt * GGUF_HASH_KIND_COUNT; i++)
        stream_free(&per_thread[i]);
    free(tasks);
    free(per_thread);
    if (status != GGUF_OK)
        gguf_hashes_free(out);
    return status;
}

void gguf_hashes_free(gguf_hashes *h)
{
    if (!h)
        return;
    free(h->tensor);
    h->tensor = NULL;
}

gguf_status gguf_file_sha256_path(const char *path, gguf_digest *out, uint64_t *size, gguf_error *err)
{
    memset(out, 0, sizeof *out);
    *size = 0;
    /* without blocking, and regular files only: a FIFO would wait forever for a writer */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return gguf_fail(err, GGUF_E_IO, 0, "", "cannot open '%s': %s", path, strerror(errno));
    struct stat sb;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        close(fd);
        return gguf_fail(err, GGUF_E_IO, 0, "", "'%s' is not a regular file", path);
    }
    FILE *fp = fdopen(fd, "rb");
    if (!fp) {
        int e = errno;
        close(fd);
        return gguf_fail(err, GGUF_E_IO, 0, "", "cannot open '%s': %s", path, strerror(e));
    }
    stream st;
    uint8_t *buf = malloc(1u << 20);
    if (!buf || !stream_init(&st, GGUF_HASH_SHA256, false)) {
        free(buf);
        fclose(fp);
        return gguf_fail(err, GGUF_E_NOMEM, 0, "", "out of memory");
    }
    size_t n;
    while ((n = fread(buf, 1, 1u << 20, fp)) > 0) {
        stream_update(&st, buf, n);
        *size += n;
    }
    bool failed = ferror(fp) != 0;
    int saved = errno;
    fclose(fp);
    free(buf);
    if (!failed)
        stream_final(&st, out);
    stream_free(&st);
    if (failed)
        return gguf_fail(err, GGUF_E_IO, *size, "", "reading '%s' failed: %s", path, strerror(saved));
    return GGUF_OK;
}
