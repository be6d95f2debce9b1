/* Handing a tensor's pages back: a tool that runs two models in one process (gguf-fidelity's base and its
 * quantization) keeps its resident set at what one layer needs when each layer's weights leave it once used. */
#include "file.h"

#include <sys/mman.h>
#include <unistd.h>

/* f's own mapping, or the shard's, that holds [p, p + len); NULL when none does or it is not a file's mapping (a
 * remote file's bytes live in anonymous memory, which dropping would zero). */
static const gguf_file *mapping_of(const gguf_file *f, const uint8_t *p, uint64_t len)
{
    for (size_t s = 0; s < (f->n_shards ? f->n_shards : 1); s++) {
        const gguf_file *g = s ? f->shards[s] : f;
        if (g && g->map && !g->io && p >= g->bytes && len <= g->size && (uint64_t)(p - g->bytes) <= g->size - len)
            return g;
    }
    return NULL;
}

void gguf_tensor_release(const gguf_file *f, const gguf_tensor *t)
{
    if (!f || !t || !t->data || !t->size || !mapping_of(f, t->data, t->size))
        return;
    /* only whole pages inside the tensor: a neighbour sharing a page keeps it */
    const uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE), lo = ((uintptr_t)t->data + page - 1) / page * page,
                    hi = ((uintptr_t)t->data + t->size) / page * page;
    /* the mapping is private and read-only, never written: dropped pages read back the file's bytes from the page
     * cache on their next use */
    if (hi > lo)
        (void)madvise((void *)lo, hi - lo, MADV_DONTNEED);
}
