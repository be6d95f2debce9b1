/* Memory: the reader's arena allocator and name index, and the growable array every layer uses. */
#include "internal.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

bool gguf_reserve(void **items, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return true;
    size_t c = *cap ? *cap : 16;
    while (c < need) {
        if (c > SIZE_MAX / 2)
            return false;
        c *= 2;
    }
    if (elem && c > SIZE_MAX / elem)
        return false;
    void *p = realloc(*items, c * elem);
    if (!p)
        return false;
    *items = p;
    *cap = c;
    return true;
}

struct gguf_arena_chunk {
    gguf_arena_chunk *next;
    size_t used, cap;
    _Alignas(max_align_t) unsigned char mem[];
};

#define ARENA_CHUNK (64u * 1024u)

void *gguf_arena_alloc(gguf_arena *a, size_t n)
{
    size_t need = (n + (_Alignof(max_align_t) - 1)) & ~(size_t)(_Alignof(max_align_t) - 1);
    if (need < n)
        return NULL;
    gguf_arena_chunk *c = a->head;
    if (!c || c->cap - c->used < need) {
        size_t cap = need > ARENA_CHUNK ? need : ARENA_CHUNK;
        if (cap > SIZE_MAX - sizeof *c)
            return NULL;
        c = malloc(sizeof *c + cap);
        if (!c)
            return NULL;
        c->used = 0;
        c->cap = cap;
        c->next = a->head;
        a->head = c;
    }
    void *p = c->mem + c->used;
    c->used += need;
    memset(p, 0, n);
    return p;
}

void *gguf_arena_array(gguf_arena *a, uint64_t count, size_t size)
{
    uint64_t total;
    if (!gguf_mul_ok(count, size, &total) || total > SIZE_MAX)
        return NULL;
    return gguf_arena_alloc(a, (size_t)total);
}

char *gguf_arena_strndup(gguf_arena *a, const char *s, size_t n)
{
    if (n == SIZE_MAX)
        return NULL;
    char *d = gguf_arena_alloc(a, n + 1);
    if (d) {
        memcpy(d, s, n);
        d[n] = '\0';
    }
    return d;
}

void gguf_arena_free(gguf_arena *a)
{
    gguf_arena_chunk *c = a->head;
    while (c) {
        gguf_arena_chunk *next = c->next;
        free(c);
        c = next;
    }
    a->head = NULL;
}

/* FNV-1a: names are short, a simple hash is enough with a half-empty table. */
static uint64_t hash_name(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

bool gguf_index_init(gguf_index *ix, gguf_arena *a, size_t n)
{
    size_t cap = 16;
    while (cap < n * 2) {
        if (cap > SIZE_MAX / 4)
            return false;
        cap *= 2;
    }
    ix->slots = gguf_arena_array(a, cap, sizeof *ix->slots);
    ix->mask = cap - 1;
    return ix->slots != NULL;
}

static const char *name_at(const void *names, size_t stride, uint32_t id)
{
    return *(const char *const *)((const unsigned char *)names + (size_t)id * stride);
}

long gguf_index_insert(gguf_index *ix, const char *const *names, size_t stride, uint32_t id)
{
    const char *name = name_at(names, stride, id);
    for (size_t i = hash_name(name) & ix->mask;; i = (i + 1) & ix->mask) {
        uint32_t s = ix->slots[i];
        if (s == 0) {
            ix->slots[i] = id + 1;
            return -1;
        }
        if (strcmp(name_at(names, stride, s - 1), name) == 0)
            return (long)(s - 1);
    }
}

long gguf_index_find(const gguf_index *ix, const void *names, size_t stride, const char *name)
{
    if (!ix->slots)
        return -1;
    for (size_t i = hash_name(name) & ix->mask;; i = (i + 1) & ix->mask) {
        uint32_t s = ix->slots[i];
        if (s == 0)
            return -1;
        if (strcmp(name_at(names, stride, s - 1), name) == 0)
            return (long)(s - 1);
    }
}
