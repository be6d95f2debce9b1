/* Opening a file through a reader callback (gguf_open_io): a remote file read by range requests. The file's bytes
 * live in a sparse anonymous mapping of its whole size, so that the parser and every accessor see offsets as in a
 * local file; only the header and the tensors fetched are ever written, the rest are untouched zero pages that
 * cost nothing. Tensor data stays NULL until fetched, so no tool mistakes those zeros for weights. */
#include "file.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define IO_FIRST_READ (64u << 10)
#define IO_HEADER_MAX (256ull << 20)

/* The statuses a header cut short by the end of the prefix gives: more bytes may parse. */
static bool needs_more(gguf_status s)
{
    return s == GGUF_E_TRUNCATED || s == GGUF_E_STRING_LENGTH || s == GGUF_E_ARRAY_COUNT || s == GGUF_E_KV_COUNT ||
           s == GGUF_E_TENSOR_COUNT;
}

static gguf_status io_read(gguf_file *f, uint8_t *base, uint64_t from, uint64_t to, gguf_error *err)
{
    gguf_status s = f->io->read(f->io->user, from, base + from, (size_t)(to - from), err);
    if (s == GGUF_OK)
        f->io_bytes += to - from;
    return s;
}

/* Parses f as a file of f->size bytes over base; on failure f's parse state is released for a retry. */
static gguf_status parse_as(gguf_file *f, uint8_t *base, uint64_t size, bool partial, gguf_error *err)
{
    f->bytes = base;
    f->size = size;
    f->allow_partial = partial;
    return gguf_parse(f, err);
}

static void reset_parse(gguf_file *f)
{
    gguf_file keep = *f;
    gguf_arena_free(&f->arena); /* everything the parse made lives in the arena */
    memset(f, 0, sizeof *f);
    f->io = keep.io;
    f->io_bytes = keep.io_bytes;
    f->map = keep.map;
    f->map_len = keep.map_len;
}

gguf_status gguf_open_io(const gguf_io *io, gguf_file **out, gguf_error *err)
{
    if (!io || !io->read || !out)
        return gguf_fail(err, GGUF_E_INVALID_ARG, 0, "", "gguf_open_io: NULL argument");
    *out = NULL;
    if (io->size == 0)
        return gguf_fail(err, GGUF_E_EMPTY_FILE, 0, "", "the file is empty (0 bytes)");
    if (io->size > SIZE_MAX / 2)
        return gguf_fail(err, GGUF_E_IO, 0, "", "a file of %llu bytes cannot be held on this system",
                         (unsigned long long)io->size);
    gguf_file *f = calloc(1, sizeof *f);
    if (!f)
        return gguf_fail(err, GGUF_E_NOMEM, 0, "", "out of memory");
    void *m = mmap(NULL, (size_t)io->size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED) {
        free(f);
        return gguf_fail(err, GGUF_E_NOMEM, 0, "", "cannot reserve %llu bytes of address space for the file",
                         (unsigned long long)io->size);
    }
    f->map = m;
    f->map_len = (size_t)io->size;
    f->io = io;
    uint8_t *base = m;
    /* read a prefix, growing by a quarter (at least 64 KiB) until the header parses within it; a prefix's data
     * section is cut short, so it is parsed as gguf_open_partial would */
    uint64_t have = 0, want = io->size < IO_FIRST_READ ? io->size : IO_FIRST_READ;
    gguf_status s;
    for (;;) {
        if ((s = io_read(f, base, have, want, err)) != GGUF_OK)
            break;
        have = want;
        s = parse_as(f, base, have, true, err);
        if (s == GGUF_OK || !needs_more(s) || have == io->size)
            break;
        reset_parse(f);
        if (have >= IO_HEADER_MAX) {
            s = gguf_fail(err, GGUF_E_IO, have, "", "the header runs past its first %llu bytes: too large to read "
                          "remotely (download the file)", (unsigned long long)have);
            break;
        }
        uint64_t step = have / 4 > IO_FIRST_READ ? have / 4 : IO_FIRST_READ;
        want = io->size - have < step ? io->size : have + step;
    }
    /* The header is all read (or a problem was met inside it): the verdict is gguf_open's on the whole file, from
     * the bytes read. Every check before the problem passed on the shorter prefix, so it stops at the same place,
     * and layout checks (past the end, overlaps) run on the file's real size. */
    if (s == GGUF_OK || (s != GGUF_E_IO && s != GGUF_E_NOMEM)) {
        reset_parse(f);
        s = parse_as(f, base, io->size, false, err);
    }
    if (s != GGUF_OK) {
        gguf_close(f);
        return s;
    }
    for (size_t i = 0; i < f->n_tensors; i++) {
        gguf_tensor *t = &f->tensors[i];
        /* a tensor inside the prefix already read is there; the others wait for gguf_io_fetch_tensor */
        if (f->data_offset + t->offset + t->size > have)
            t->data = NULL;
    }
    *out = f;
    return GGUF_OK;
}

gguf_status gguf_io_fetch_tensor(gguf_file *f, size_t i, gguf_error *err)
{
    if (!f || !f->io || i >= f->n_tensors)
        return gguf_fail(err, GGUF_E_INVALID_ARG, 0, "", "gguf_io_fetch_tensor: not a file opened through an io");
    gguf_tensor *t = &f->tensors[i];
    if (t->data)
        return GGUF_OK;
    gguf_file *g = t->shard ? f->shards[t->shard] : f; /* a split model's tensor is read from its own shard */
    if (!g->io)
        return gguf_fail(err, GGUF_E_INVALID_ARG, 0, t->name, "gguf_io_fetch_tensor: shard %u not opened through an io",
                         t->shard);
    uint64_t from = g->data_offset + t->offset;
    gguf_status s = io_read(g, g->map, from, from + t->size, err);
    if (s != GGUF_OK) {
        if (err)
            snprintf(err->subject, sizeof err->subject, "%s", t->name);
        return s;
    }
    t->data = (const uint8_t *)g->map + from;
    return GGUF_OK;
}

uint64_t gguf_io_bytes_read(const gguf_file *f)
{
    return f && f->io ? f->io_bytes : 0;
}

size_t gguf_tensors_absent(const gguf_file *f)
{
    size_t n = 0;
    for (size_t i = 0; f && i < f->n_tensors; i++)
        n += f->tensors[i].data == NULL;
    return n;
}
