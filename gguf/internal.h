/* Private helpers shared by the gguf/ sources: an arena, a name index and error filling. */
#ifndef GGUFSCOPE_GGUF_INTERNAL_H
#define GGUFSCOPE_GGUF_INTERNAL_H

#include "gguf.h"

#include <stdarg.h>

/* ---- arena: many small allocations freed together ---- */
typedef struct gguf_arena_chunk gguf_arena_chunk;
typedef struct gguf_arena {
    gguf_arena_chunk *head;
} gguf_arena;

/* Returns zeroed memory aligned for any object, or NULL (n may be 0). */
void *gguf_arena_alloc(gguf_arena *a, size_t n);
/* Array allocation with overflow check: NULL when count * size overflows. */
void *gguf_arena_array(gguf_arena *a, uint64_t count, size_t size);
char *gguf_arena_strndup(gguf_arena *a, const char *s, size_t n);
void gguf_arena_free(gguf_arena *a);

/* ---- name index: open addressing over caller-owned NUL-terminated names ---- */
typedef struct gguf_index {
    uint32_t *slots;     /* entry + 1, 0 = empty */
    size_t mask;
} gguf_index;

/* Sizes the index for n names. Returns false when out of memory. */
bool gguf_index_init(gguf_index *ix, gguf_arena *a, size_t n);
/* Inserts entry `id` named names[id]; returns the id already holding that name, or -1. */
long gguf_index_insert(gguf_index *ix, const char *const *names, size_t stride, uint32_t id);
/* Finds the id of name, or -1. names is read with stride bytes between entries. */
long gguf_index_find(const gguf_index *ix, const void *names, size_t stride, const char *name);

/* ---- errors: gguf_fail is public (gguf.h) ---- */

/* ---- checked arithmetic ---- */
static inline bool gguf_add_ok(uint64_t a, uint64_t b, uint64_t *r) { return !__builtin_add_overflow(a, b, r); }
static inline bool gguf_mul_ok(uint64_t a, uint64_t b, uint64_t *r) { return !__builtin_mul_overflow(a, b, r); }
/* Rounds x up to a multiple of the power of two a; false on overflow. */
static inline bool gguf_align_up(uint64_t x, uint64_t a, uint64_t *r)
{
    uint64_t t;
    if (!gguf_add_ok(x, a - 1, &t))
        return false;
    *r = t & ~(a - 1);
    return true;
}

/* Decodes one little-endian scalar of value type `type` at b. */
void gguf_decode_scalar(const uint8_t *b, uint32_t type, gguf_value *out);

/* Bytes of a tensor of this type and shape; false on overflow or bad shape. */
bool gguf_tensor_nbytes(uint32_t type, const uint64_t ne[GGUF_MAX_DIMS], uint64_t *out);


/* The registry gguf_mapping_lookup reads (mappings.c). */
void gguf_mappings_add(const void *base, size_t len, const char *path);
void gguf_mappings_remove(const void *base);

#endif
