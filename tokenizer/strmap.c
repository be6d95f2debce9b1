#include "strmap.h"

#include <stdlib.h>
#include <string.h>

static uint64_t fnv1a(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (uint8_t)s[i]) * 1099511628211ull;
    return h;
}

bool strmap_init(strmap *m, size_t n)
{
    size_t cap = 16;
    while (cap < 2 * n + 1)
        cap *= 2;
    m->slots = calloc(cap, sizeof *m->slots);
    m->cap = m->slots ? cap : 0;
    return m->slots != NULL;
}

void strmap_free(strmap *m)
{
    free(m->slots);
    m->slots = NULL;
    m->cap = 0;
}

static strmap_slot *find(const strmap *m, const char *key, size_t len)
{
    for (size_t i = fnv1a(key, len) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
        strmap_slot *s = &m->slots[i];
        if (!s->key || (s->len == len && !memcmp(s->key, key, len)))
            return s;
    }
}

void strmap_put(strmap *m, const char *key, size_t len, int32_t value)
{
    strmap_slot *s = find(m, key, len);
    if (!s->key)
        *s = (strmap_slot){ .key = key ? key : "", .len = (uint32_t)len, .value = value };
}

int32_t strmap_get(const strmap *m, const char *key, size_t len)
{
    if (!m->cap)
        return -1;
    const strmap_slot *s = find(m, key, len);
    return s->key ? s->value : -1;
}
