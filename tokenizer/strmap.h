/* A read-mostly hash map from byte strings (not copied: views that outlive
 * the map) to int32 values; open addressing, FNV-1a. For token text -> id
 * and merge pair -> rank. */
#ifndef GGUFSCOPE_TOKENIZER_STRMAP_H
#define GGUFSCOPE_TOKENIZER_STRMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct strmap_slot {
    const char *key;
    uint32_t len;
    int32_t value;
} strmap_slot;

typedef struct strmap {
    strmap_slot *slots;
    size_t cap;  /* power of two, at least twice the entries */
} strmap;

/* Room for n entries; false when out of memory. */
bool strmap_init(strmap *m, size_t n);
void strmap_free(strmap *m);
/* Adds key -> value unless key is present (the first value wins, as
 * llama.cpp's bpe_ranks keeps a merge's first rank; a token text twice
 * is refused before it gets here). */
void strmap_put(strmap *m, const char *key, size_t len, int32_t value);
/* The value of key, or -1. */
int32_t strmap_get(const strmap *m, const char *key, size_t len);

#endif
