/* Opening a file (read-only mmap) or a memory buffer, and closing it. */
#include "file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static gguf_status finish_open(gguf_file *f, gguf_file **out, gguf_error *err)
{
    gguf_status s = gguf_parse(f, err);
    if (s != GGUF_OK) {
        gguf_close(f);
        return s;
    }
    *out = f;
    return GGUF_OK;
}

gguf_status gguf_open_memory(const void *data, size_t size, gguf_file **out, gguf_error *err)
{
    if (!out || (!data && size))
        return gguf_fail(err, GGUF_E_INVALID_ARG, 0, "", "gguf_open_memory: NULL argument");
    *out = NULL;
    gguf_file *f = calloc(1, sizeof *f);
    if (!f)
        return gguf_fail(err, GGUF_E_NOMEM, 0, "", "out of memory");
    static const uint8_t empty[1];
    f->bytes = size ? data : empty;
    f->size = size;
    return finish_open(f, out, err);
}

gguf_status gguf_open_one(const char *path, bool partial, gguf_file **out, gguf_error *err)
{
    if (!path || !out)
        return gguf_fail(err, GGUF_E_INVALID_ARG, 0, "", "gguf_open: NULL argument");
    *out = NULL;
    /* O_NONBLOCK: a FIFO named as the model must be refused below, not wait forever for a writer */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return gguf_fail(err, GGUF_E_IO, 0, "", "cannot open '%s': %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        return gguf_fail(err, GGUF_E_IO, 0, "", "cannot stat '%s': %s", path, strerror(e));
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return gguf_fail(err, GGUF_E_IO, 0, "", "'%s' is not a regular file", path);
    }
    gguf_file *f = calloc(1, sizeof *f);
    if (!f) {
        close(fd);
        return gguf_fail(err, GGUF_E_NOMEM, 0, "", "out of memory");
    }
    static const uint8_t empty[1];
    f->bytes = empty;
    f->size = (uint64_t)st.st_size;
    f->has_identity = true;
    f->allow_partial = partial;
    f->dev = (uint64_t)st.st_dev;
    f->ino = (uint64_t)st.st_ino;
    if (st.st_size > 0) {
        if ((uint64_t)st.st_size > SIZE_MAX) {
            close(fd);
            free(f);
            return gguf_fail(err, GGUF_E_IO, 0, "", "'%s' is too large to map on this system", path);
        }
        void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (m == MAP_FAILED) {
            int e = errno;
            close(fd);
            free(f);
            return gguf_fail(err, GGUF_E_IO, 0, "", "cannot map '%s': %s", path, strerror(e));
        }
        f->map = m;
        f->map_len = (size_t)st.st_size;
        f->bytes = m;
        gguf_mappings_add(m, f->map_len, path);
    }
    close(fd); /* the mapping keeps the file alive */
    return finish_open(f, out, err);
}

static gguf_status open_model(const char *path, bool partial, gguf_file **out, gguf_error *err)
{
    gguf_status s = gguf_open_one(path, partial, out, err);
    if (s != GGUF_OK)
        return s;
    (*out)->n_own_tensors = (*out)->n_tensors;
    s = gguf_split_attach(*out, path, err);
    if (s != GGUF_OK) {
        gguf_close(*out);
        *out = NULL;
    }
    return s;
}

gguf_status gguf_open(const char *path, gguf_file **out, gguf_error *err)
{
    return open_model(path, false, out, err);
}

gguf_status gguf_open_partial(const char *path, gguf_file **out, gguf_error *err)
{
    return open_model(path, true, out, err);
}

uint64_t gguf_missing_bytes(const gguf_file *f, gguf_error *why)
{
    if (f->missing_bytes && why)
        *why = f->truncation;
    return f->missing_bytes;
}

void gguf_close(gguf_file *f)
{
    if (!f)
        return;
    for (size_t i = 1; i < f->n_shards; i++)
        gguf_close(f->shards[i]);
    if (f->map) {
        gguf_mappings_remove(f->map);
        munmap(f->map, f->map_len);
    }
    gguf_arena_free(&f->arena);
    free(f);
}
