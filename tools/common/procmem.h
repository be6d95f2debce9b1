/* This process's memory as the kernel counts it (Linux /proc/self/status). */
#ifndef GGUFSCOPE_TOOLS_PROCMEM_H
#define GGUFSCOPE_TOOLS_PROCMEM_H

#include <stdint.h>

/* Resident anonymous (private) memory now, in bytes: what a run costs beyond
 * the mapped file. 0 when unknown. */
uint64_t procmem_private_bytes(void);
/* Peak resident memory (file pages included), in bytes; 0 when unknown. */
uint64_t procmem_peak_bytes(void);

#endif
