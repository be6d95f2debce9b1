/*
 * The CPU backend's buffers (KV cache, activations): zeroed host memory, the large ones in 2 MiB pages.
 *
 * A KV cache row of one layer is n_kv_head x head_dim floats, 4 KiB for the Qwen3-0.6B shape, so attention
 * reads its key and value rows a page apart: in 4 KiB pages every row was a new TLB entry. Buffers of 2 MiB
 * and more are mapped here 2 MiB aligned and marked MADV_HUGEPAGE (transparent huge pages are often "madvise"
 * only, as on the machine of docs/BENCHMARKS.md), so the kernel backs them with 2 MiB pages where it can.
 * They are faulted in here, at allocation, as llama.cpp commits its KV cache when it creates a context (it clears
 * the buffer, llama-kv-cache.cpp): faulted in lazily instead, a first decode step that touched one position of
 * each layer had the kernel zero a whole 2 MiB page for it, and prompts paid their page faults as they ran
 * (clear_page_erms 3.5 % of a Qwen3-0.6B-shape pp512).
 */
#include "cpu.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
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
        const size_t len = (bytes + HEADER + 63) / 64 * 64;
        unsigned char *base = aligned_alloc(64, len);
        if (!base)
            return NULL;
        memset(base, 0, len);
        *(buffer_header *)base = (buffer_header){ base, 0 };
        return base + HEADER;
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
    bool populated = false;
#ifdef MADV_POPULATE_WRITE
    /* Linux 5.14 on; before it EINVAL, and the pages are touched instead. Out of memory (ENOMEM), they are left
     * to fault in as they are used, as calloc's would be. */
    populated = madvise(p, bytes, MADV_POPULATE_WRITE) == 0 || errno != EINVAL;
#endif
    for (size_t i = 0; !populated && i < bytes; i += 4096)
        ((volatile unsigned char *)p)[i] = 0;
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
