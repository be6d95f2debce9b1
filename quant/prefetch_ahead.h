/* Private to quant/'s x86 fused dots: prefetching a row's weights ahead of the block being multiplied. */
#ifndef GGUFSCOPE_QUANT_PREFETCH_AHEAD_H
#define GGUFSCOPE_QUANT_PREFETCH_AHEAD_H

#include <stdint.h>

/*
 * The fused one-token dots prefetch their weights ahead of use. Measured first for the AVX-512 dots on this
 * project's Zen 4 runner (2 threads, rows from L3/memory, the two prefetch choices run in turn in one process,
 * medians of 25 rounds):
 *  - rows up to 4096 values: non-temporal, 2048 bytes ahead; this left the
 *    rates of 2048-value rows unchanged or better than any other choice tried
 *    (none, T0, T1, 1-12 KiB);
 *  - longer rows: the rearranged x (4 bytes per value) fills most of the
 *    32 KiB L1, so lines prefetched into L1 evict it; prefetching into L2
 *    (T1) 8192 bytes ahead instead was 5632-value rows' best: Q4_K +11%,
 *    Q6_K +35% over the non-temporal prefetch, while for 2048-value rows it
 *    was 5% worse.
 * A prefetch past the end of the tensor is harmless: prefetches never fault.
 */
enum { LONG_ROW = 4096, NEAR_AHEAD = 2048, FAR_AHEAD = 8192 };

/* The prefetches are written as asm: GCC 12 at -O2/-O3 dropped _mm_prefetch(.., _MM_HINT_T1) from the long-row
 * branch below, leaving that branch empty (seen in the object code). */
static inline void prefetch_t1(const char *p)
{
    __asm__ volatile("prefetcht1 %0" : : "m"(*p));
}

static inline void prefetch_nta(const char *p)
{
    __asm__ volatile("prefetchnta %0" : : "m"(*p));
}

/* Every 64-byte line of the block of `bytes` that lies ahead of b, for a row of n values. */
static inline void prefetch_block_ahead(const uint8_t *b, int bytes, int64_t n)
{
    if (n > LONG_ROW) {
        for (int off = 0; off < bytes; off += 64)
            prefetch_t1((const char *)b + FAR_AHEAD + off);
    } else {
        for (int off = 0; off < bytes; off += 64)
            prefetch_nta((const char *)b + NEAR_AHEAD + off);
    }
}

/* A GEMV's rows ahead (act_dot_*.c): the rows `groups` groups after the group it multiplies side by side, whose
 * short rows the hardware prefetchers do not follow as streams (without this, 16 rows side by side ran at a third
 * of one row at a time from memory), a share of a group's bytes at each of the product's `steps` steps. */
typedef struct rows_ahead {
    const char *next;
    uint64_t share;  /* bytes a step, whole lines */
} rows_ahead;

static inline rows_ahead rows_ahead_start(const void *w, uint64_t group_bytes, int groups, int64_t steps)
{
    return (rows_ahead){ (const char *)w + (uint64_t)groups * group_bytes,
                         (group_bytes / (uint64_t)steps + 63) / 64 * 64 };
}

/* This step's share, and on to the next. */
static inline void rows_ahead_step(rows_ahead *a)
{
    for (uint64_t off = 0; off < a->share; off += 64)
        prefetch_t1(a->next + off);
    a->next += a->share;
}

#endif
