/*
 * The CPU backend's buffers (KV cache, activations): zeroed host memory, the large ones in 2 MiB pages.
 *
 * A KV cache row of one layer is n_kv_head x head_dim floats, 4 KiB for the Qwen3-0.6B shape, so attention
 * reads its key and value rows a page apart: in 4 KiB pages every row was a new TLB entry. Buffers of 2 MiB
 * and more are mapped here 2 MiB aligned and marked MADV_HUGEPAGE (transparent huge pages are often "madvise"
 * only, as on the machine of docs/BENCHMARKS.md), so the kernel backs them with 2 MiB pages where it can.
 * Pages are still faulted in as they are first touched, zeroed by the kernel, so a buffer commits only what is
 * used (a 2 MiB page at a time here): the logits rows and the activations sized for the largest batch mostly are
 * not. Faulting every page in at allocation (MADV_POPULATE_WRITE) measured 3 % more on a Qwen3-0.6B-shape pp512,
 * whose KV cache bench-run then no longer faulted in while timing, but it committed such unused rows too: 8 MiB
 * more private memory for gemma-3-270m's logits.
 */
#include "cpu.h"

#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>

enum { HUGE_PAGE = 2 << 20, HEADER = 64 };

/* Under AddressSanitizer every buffer comes from the heap, where it puts red zones around each: ASan does not
 * watch memory mapped here, and the suite's ASan run is there to catch a kernel writing past its buffer. */
#if defined(__SANITIZE_ADDRESS__)
#define MAP_LARGE_BUFFERS 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define MAP_LARGE_BUFFERS 0
#endif
#endif
#ifndef MAP_LARGE_BUFFERS
#define MAP_LARGE_BUFFERS 1
#endif

/* Just before each buffer: where its allocation starts, and its length when mapped (0: from the heap). */
typedef struct buffer_header {
    void *base;
    size_t mapped;
} buffer_header;
_Static_assert(sizeof(buffer_header) <= HEADER, "the header fits before a 64-byte-aligned buffer");

void *cpu_buffer_alloc(size_t bytes)
{
    if (bytes > SIZE_MAX - 2 * (size_t)HUGE_PAGE)
        return NULL;
    if (bytes < HUGE_PAGE || !MAP_LARGE_BUFFERS) {
        /* calloc, which leaves the fresh pages of a large block untouched (aligned_alloc and a memset committed
         * them all), then the first 64-byte boundary with room for the header before it */
        unsigned char *base = calloc(1, bytes + HEADER + 64);
        if (!base)
            return NULL;
        unsigned char *p = (unsigned char *)(((uintptr_t)base + HEADER + 63) & ~(uintptr_t)63);
        *(buffer_header *)(p - HEADER) = (buffer_header){ base, 0 };
        return p;
    }
    /* one extra huge page of address space for the alignment (untouched, so never committed) */
    const size_t len = bytes + HUGE_PAGE;
    void *base = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (base == MAP_FAILED)
        return NULL;
    unsigned char *p = (unsigned char *)(((uintptr_t)base + HEADER + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1));
#ifdef MADV_HUGEPAGE
    (void)madvise(p, bytes, MADV_HUGEPAGE); /* advice: without it the buffer works in small pages */
#endif
    *(buffer_header *)(p - HEADER) = (buffer_header){ base, len };
    return p;
}

void cpu_buffer_free(void *p)
{
    if (!p)
        return;
    const buffer_header h = *(const buffer_header *)((unsigned char *)p - HEADER);
    if (h.mapped)
        munmap(h.base, h.mapped);
    else
        free(h.base);
}
