/* Split models written in llama.cpp's gguf-split layout (tools/gguf-split: every shard carries split.no (u16, from
 * 0), split.count (u16) and split.tensors.count (i32, the total); only the first has the metadata; names
 * PREFIX-00001-of-0000N.gguf), for the split and remote tests. */
#ifndef GGUFSCOPE_TEST_SPLIT_WRITER_H
#define GGUFSCOPE_TEST_SPLIT_WRITER_H

#include <stdbool.h>
#include <stddef.h>

typedef enum split_fault { SPLIT_FAULT_NONE, SPLIT_FAULT_COUNT, SPLIT_FAULT_DUPLICATE, SPLIT_FAULT_NO } split_fault;

/* Writes the tensors of the GGUF file whole into n shards of prefix; shard `bad` (an index) gets the fault: a
 * split.count one too many, the first tensor again, or a split.no one too many. False (why filled) on failure. */
bool split_write(const char *whole, const char *prefix, int n, split_fault what, int bad, char *why, size_t why_len);

#endif
