/* Which file a mapped address belongs to, answerable from a signal handler.
 *
 * A file mapped by gguf_open that shrinks while it is read (truncated, or rewritten in place by a download
 * that restarted) makes the next read of a page past its new end raise SIGBUS. A tool's handler asks here
 * which file and which byte that was, to say so instead of dying silently. Slots are claimed and released
 * with atomics, and the lookup only reads them, so it is async-signal-safe. */
#include "internal.h"

#include <stdatomic.h>
#include <string.h>

enum { MAPPINGS_MAX = 64, SLOT_FREE = 0, SLOT_WRITING = 1, SLOT_LIVE = 2 };

typedef struct mapping_slot {
    _Atomic int state;
    const uint8_t *base;
    size_t len;
    char path[512];
} mapping_slot;

static mapping_slot slots[MAPPINGS_MAX];

void gguf_mappings_add(const void *base, size_t len, const char *path)
{
    for (int i = 0; i < MAPPINGS_MAX; i++) {
        int expected = SLOT_FREE;
        if (!atomic_compare_exchange_strong(&slots[i].state, &expected, SLOT_WRITING))
            continue;
        slots[i].base = base;
        slots[i].len = len;
        size_t n = strlen(path);
        if (n >= sizeof slots[i].path)
            n = sizeof slots[i].path - 1;
        memcpy(slots[i].path, path, n);
        slots[i].path[n] = '\0';
        atomic_store(&slots[i].state, SLOT_LIVE);
        return;
    }
    /* more than MAPPINGS_MAX files open at once: a fault in this one is reported without its name */
}

void gguf_mappings_remove(const void *base)
{
    for (int i = 0; i < MAPPINGS_MAX; i++)
        if (atomic_load(&slots[i].state) == SLOT_LIVE && slots[i].base == base) {
            atomic_store(&slots[i].state, SLOT_FREE);
            return;
        }
}

bool gguf_mapping_lookup(const void *addr, const char **path, uint64_t *offset)
{
    const uint8_t *a = addr;
    for (int i = 0; i < MAPPINGS_MAX; i++) {
        if (atomic_load(&slots[i].state) != SLOT_LIVE)
            continue;
        const uint8_t *b = slots[i].base;
        if (a >= b && (size_t)(a - b) < slots[i].len) {
            *path = slots[i].path;
            *offset = (uint64_t)(a - b);
            return true;
        }
    }
    return false;
}
