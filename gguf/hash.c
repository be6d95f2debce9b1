/* Digests of tensor data, of the whole model and of the whole file.
 *
 * The mapping is read once, in windows: every requested digest ("job") takes
 * the window in turn, the jobs of a window spread over threads. Both threads
 * read the same window at about the same time, so it comes from memory once
 * and from the shared cache for the second reader; memory use is a few
 * hashing states whatever the file size.
 *
 * Model lines and the UUID follow llama-gguf-hash (examples/gguf-hash in
 * llama.cpp): every tensor's data bytes in tensor-info order, xxh64 seed 0,
 * UUIDv5 = SHA-1 of the llama.cpp namespace followed by that data. */
#include "file.h"

#include <errno.h>
#include <omp.h>
#include <stdio.h>
#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <xxhash.h>
#include <zlib.h>

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22 /* Linux 5.14; older kernels answer EINVAL, which is harmless */
#endif

#define WINDOW_BYTES (4u << 20)

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

/* ---- jobs over windows --------------------------------------------------- */

typedef enum job_type { JOB_FILE, JOB_MODEL, JOB_TENSORS, JOB_PREFETCH } job_type;

typedef struct job {
    job_type type;
    stream st;
    size_t cursor;           /* JOB_MODEL/JOB_TENSORS: next position in the offset order */
} job;

typedef struct plan {
    const gguf_file *f;
    const uint32_t *order;   /* tensor indices by data offset */
    gguf_hashes *out;
} plan;

/* Feeds the tensor bytes inside [a, b) of the file to the job, tensor by
 * tensor in offset order; a per-tensor job closes each tensor it finishes. */
static void run_tensor_bytes(const plan *p, job *j, uint64_t a, uint64_t b)
{
    const gguf_file *f = p->f;
    size_t k = j->cursor;
    while (k < f->n_tensors) {
        const gguf_tensor *t = &f->tensors[p->order[k]];
        uint64_t ts = f->data_offset + t->offset, te = ts + t->size;
        if (ts >= b)
            break;
        uint64_t lo = ts > a ? ts : a, hi = te < b ? te : b;
        if (lo < hi)
            stream_update(&j->st, f->bytes + lo, (size_t)(hi - lo));
        if (te > b)
            break;
        if (j->type == JOB_TENSORS)
            stream_final(&j->st, &p->out->tensor[p->order[k]][j->st.kind]);
        k++;
    }
    j->cursor = k;
}

static void run_job(const plan *p, job *j, uint64_t a, uint64_t b, uint64_t next_end)
{
    switch (j->type) {
    case JOB_FILE: stream_update(&j->st, p->f->bytes + a, (size_t)(b - a)); break;
    case JOB_MODEL:
    case JOB_TENSORS: run_tensor_bytes(p, j, a, b); break;
    case JOB_PREFETCH:
        /* Map the next window's pages in one call instead of a fault per 64 KiB. */
        if (p->f->map && next_end > b) {
            uintptr_t base = (uintptr_t)p->f->bytes + b, page = 4096;
            uintptr_t lo = base & ~(page - 1), hi = (uintptr_t)p->f->bytes + next_end;
            madvise((void *)lo, hi - lo, MADV_POPULATE_READ);
        }
        break;
    }
}

/* Cost per byte, heaviest first, so dynamic scheduling balances the window. */
static int job_weight(const job *j)
{
    if (j->type == JOB_PREFETCH)
        return 0;
    static const int w[GGUF_HASH_KIND_COUNT] = { 1, 8, 10, 3 };
    return w[j->st.kind];
}

static int by_weight(const void *x, const void *y)
{
    return job_weight(y) - job_weight(x);
}

static int by_data_offset_of(const gguf_file *f, uint32_t a, uint32_t b)
{
    uint64_t x = f->tensors[a].offset, y = f->tensors[b].offset;
    return x < y ? -1 : x > y ? 1 : 0;
}

/* Insertion-free ordering: most files are already in offset order. */
static void sort_by_offset(const gguf_file *f, uint32_t *order)
{
    for (size_t i = 0; i < f->n_tensors; i++)
        order[i] = (uint32_t)i;
    for (size_t i = 1; i < f->n_tensors; i++) {
        if (by_data_offset_of(f, order[i - 1], order[i]) <= 0)
            continue;
        /* out of order: a plain insertion step (rare; such files also carry a warning) */
        uint32_t v = order[i];
        size_t k = i;
        while (k > 0 && by_data_offset_of(f, order[k - 1], v) > 0) {
            order[k] = order[k - 1];
            k--;
        }
        order[k] = v;
    }
}

static bool add_job(job *jobs, size_t *n, job_type type, gguf_hash_kind kind, bool uuid)
{
    job *j = &jobs[(*n)++];
    memset(j, 0, sizeof *j);
    j->type = type;
    return type == JOB_PREFETCH || stream_init(&j->st, kind, uuid);
}

gguf_status gguf_hash_file(const gguf_file *f, const gguf_hash_request *req, gguf_hashes *out, gguf_error *err)
{
    memset(out, 0, sizeof *out);
    if (!f || !req)
        return gguf_fail(err, GGUF_E_INVALID_ARG, 0, "", "gguf_hash_file: no file or request");
    out->n_tensors = f->n_tensors;
    uint32_t *order = malloc((f->n_tensors + 1) * sizeof *order);
    out->tensor = calloc(f->n_tensors + 1, sizeof *out->tensor);
    job jobs[3 * GGUF_HASH_KIND_COUNT + 3];
    size_t n_jobs = 0;
    bool ok = order && out->tensor;
    if (ok)
        sort_by_offset(f, order);
    bool in_info_order = true;
    for (size_t i = 0; ok && i < f->n_tensors; i++)
        in_info_order &= order[i] == i;

    for (int k = 0; ok && k < GGUF_HASH_KIND_COUNT; k++) {
        if (req->tensor_kinds & GGUF_HASH_BIT(k))
            ok = add_job(jobs, &n_jobs, JOB_TENSORS, (gguf_hash_kind)k, false);
        if (ok && (req->model_kinds & GGUF_HASH_BIT(k)))
            ok = add_job(jobs, &n_jobs, JOB_MODEL, (gguf_hash_kind)k, false);
    }
    if (ok && req->uuid)
        ok = add_job(jobs, &n_jobs, JOB_MODEL, GGUF_HASH_SHA1, true);
    if (ok && req->file_sha256)
        ok = add_job(jobs, &n_jobs, JOB_FILE, GGUF_HASH_SHA256, false);
    if (ok)
        ok = add_job(jobs, &n_jobs, JOB_PREFETCH, GGUF_HASH_XXH64, false);
    if (!ok) {
        for (size_t i = 0; i < n_jobs; i++)
            stream_free(&jobs[i].st);
        free(order);
        gguf_hashes_free(out);
        return gguf_fail(err, GGUF_E_NOMEM, 0, "", "out of memory for hashing states");
    }
    qsort(jobs, n_jobs, sizeof *jobs, by_weight);

    /* The model digests need info order; a file whose data is in another
     * order (rare, and llama.cpp refuses it) gets them in a second pass. */
    size_t n_window_jobs = 0;
    job *window_jobs[sizeof jobs / sizeof *jobs], *late_jobs[sizeof jobs / sizeof *jobs];
    size_t n_late = 0;
    for (size_t i = 0; i < n_jobs; i++) {
        if (jobs[i].type == JOB_MODEL && !in_info_order)
            late_jobs[n_late++] = &jobs[i];
        else
            window_jobs[n_window_jobs++] = &jobs[i];
    }

    uint64_t start = req->file_sha256 ? 0 : f->data_offset, end = f->size;
    if (!req->file_sha256) {
        end = f->data_offset;
        for (size_t i = 0; i < f->n_tensors; i++)
            if (f->data_offset + f->tensors[i].offset + f->tensors[i].size > end)
                end = f->data_offset + f->tensors[i].offset + f->tensors[i].size;
    }
    out->bytes_hashed = end - start;
    if (f->map)
        madvise(f->map, f->map_len, MADV_SEQUENTIAL);

    plan p = { f, order, out };
    uint64_t n_windows = (end - start + WINDOW_BYTES - 1) / WINDOW_BYTES;
    int nt = req->n_threads > 0 ? req->n_threads : omp_get_max_threads();
    if (n_windows <= 1)
        nt = 1;
#pragma omp parallel num_threads(nt)
    for (uint64_t w = 0; w < n_windows; w++) {
        uint64_t a = start + w * WINDOW_BYTES;
        uint64_t b = end - a > WINDOW_BYTES ? a + WINDOW_BYTES : end;
        uint64_t next_end = end - b > WINDOW_BYTES ? b + WINDOW_BYTES : end;
#pragma omp for schedule(dynamic, 1)
        for (size_t i = 0; i < n_window_jobs; i++)
            run_job(&p, window_jobs[i], a, b, next_end);
#pragma omp master
        if (req->progress)
            req->progress(req->progress_user, b - start, end - start);
    }

#pragma omp parallel for schedule(dynamic, 1) num_threads(nt)
    for (size_t i = 0; i < n_late; i++)
        for (size_t t = 0; t < f->n_tensors; t++)
            stream_update(&late_jobs[i]->st, f->tensors[t].data, (size_t)f->tensors[t].size);

    for (size_t i = 0; i < n_jobs; i++) {
        job *j = &jobs[i];
        if (j->type == JOB_MODEL && j->st.uuid) {
            gguf_digest d;
            stream_final(&j->st, &d);
            memcpy(out->uuid, d.bytes, 16);
            out->uuid[6] = (uint8_t)((out->uuid[6] & 0x0f) | 0x50); /* version 5 */
            out->uuid[8] = (uint8_t)((out->uuid[8] & 0x3f) | 0x80); /* RFC 9562 variant */
            out->has_uuid = true;
        } else if (j->type == JOB_MODEL) {
            stream_final(&j->st, &out->model[j->st.kind]);
        } else if (j->type == JOB_FILE) {
            stream_final(&j->st, &out->file_sha256);
        }
        if (j->type != JOB_PREFETCH)
            stream_free(&j->st);
    }
    free(order);
    return GGUF_OK;
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
    FILE *fp = fopen(path, "rb");
    if (!fp)
        return gguf_fail(err, GGUF_E_IO, 0, "", "cannot open '%s': %s", path, strerror(errno));
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
