/* The private layout of an opened file, shared by the reader and the accessors. */
#ifndef GGUFSCOPE_GGUF_FILE_H
#define GGUFSCOPE_GGUF_FILE_H

#include "internal.h"

#define GGUF_MAX_STORED_WARNINGS 100

struct gguf_file {
    gguf_arena arena;
    const uint8_t *bytes;   /* the whole file */
    uint64_t size;
    void *map;              /* mmap'd region to unmap, or NULL for memory/empty files */
    size_t map_len;
    bool has_identity;      /* opened from a path: the device and inode it had (what no output may replace) */
    uint64_t dev, ino;

    uint32_t version;
    uint32_t alignment;
    uint64_t data_offset;
    bool allow_partial;     /* gguf_open_partial: a data section that ends early is recorded, not refused */
    uint64_t missing_bytes; /* what the tensors need past the end of the file: 0 for a whole file */
    gguf_error truncation;  /* what gguf_open says of a file missing bytes */

    gguf_kv *kvs;           /* (n_kv) in file order */
    size_t n_kv;
    gguf_index kv_index;

    gguf_tensor *tensors;   /* (n_tensors) in info order */
    size_t n_tensors;
    gguf_index tensor_index;

    gguf_warning *warnings; /* (n_warnings), at most GGUF_MAX_STORED_WARNINGS */
    size_t n_warnings;

    /* a split model: the other shards (shards[0] unused), whose tensors follow this file's own in tensors[] */
    gguf_file **shards;
    const char **shard_paths;
    size_t n_shards;        /* 0: a file on its own */
    size_t n_own_tensors;   /* tensors of this file (all of tensors[] unless split) */
    /* gguf_open_io: the reader, and the bytes read through it into map (a sparse mapping of the file's size) */
    const gguf_io *io;
    uint64_t io_bytes;
};

/* Opens one file, split or not, without looking for shards (split.c's shards themselves); partial: as
 * gguf_open_partial. */
gguf_status gguf_open_one(const char *path, bool partial, gguf_file **out, gguf_error *err);

/* The error for a file whose first bytes are not GGUF's magic: what the bytes are instead (an LFS pointer,
 * a web page, an archive, another model format), with what to do (foreign.c). */
gguf_status gguf_foreign_file(const uint8_t *bytes, uint64_t size, gguf_error *err);
/* After the first shard is parsed: opens and joins the others (split.c). */
gguf_status gguf_split_attach(gguf_file *f, const char *path, gguf_error *err);

/* Parses and validates f->bytes[0, f->size); fills everything else. */
gguf_status gguf_parse(gguf_file *f, gguf_error *err);

/* Tensor-info stage of gguf_parse: reads n_tensors infos starting at *pos
 * and validates the data layout against the file size. */
gguf_status gguf_parse_tensors(gguf_file *f, uint64_t *pos, uint64_t n_tensors, gguf_error *err);

/* Appends a warning (dropped silently past the stored maximum). */
void gguf_add_warning(gguf_file *f, gguf_warning_kind kind, uint64_t offset, const char *subject,
                      const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* ---- bounds-checked little-endian reading ---- */
typedef struct gguf_cursor {
    const uint8_t *p;
    uint64_t size;
    uint64_t pos;
} gguf_cursor;

static inline uint64_t gguf_cursor_left(const gguf_cursor *c) { return c->size - c->pos; }

bool gguf_read_u32(gguf_cursor *c, uint32_t *v);
bool gguf_read_u64(gguf_cursor *c, uint64_t *v);
/* Reads a length-prefixed string as a view; on failure *len_out holds the length read (or 0). */
gguf_status gguf_read_str(gguf_cursor *c, gguf_str *out, uint64_t *len_out);

/* Reads a key or tensor name at `at` (known to the user as `what`), rejects
 * empty names (with empty_code) and NULs, and copies it NUL-terminated. */
gguf_status gguf_read_name(gguf_file *f, gguf_cursor *c, uint64_t at, const char *what,
                           gguf_status empty_code, const char **out, gguf_error *err);

#endif
