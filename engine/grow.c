/* The growable arrays of engine/ (token lists, bigram heap, spans, steps). */
#include "internal.h"

#include <stdlib.h>

bool engine_reserve(void **items, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return true;
    size_t c = *cap ? *cap : 64;
    while (c < need)
        c *= 2;
    void *p = realloc(*items, c * elem);
    if (!p)
        return false;
    *items = p;
    *cap = c;
    return true;
}
