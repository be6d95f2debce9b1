/* The symbol chain and the bigram queue both tokenizers merge with
 * (SentencePiece: best score first; BPE: lowest merge rank first; ties go
 * to the leftmost pair, as llama.cpp's llm_bigram comparators do). */
#ifndef GGUFSCOPE_TOKENIZER_BIGRAM_H
#define GGUFSCOPE_TOKENIZER_BIGRAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct tok_symbol {
    const char *text;
    size_t n;        /* 0 once merged into its left neighbour */
    int prev, next;  /* -1 at the ends */
} tok_symbol;

typedef struct tok_bigram {
    int left, right;
    double priority;  /* higher pops first */
    size_t size;      /* bytes of the merged text: a stale entry no longer matches */
} tok_bigram;

typedef struct tok_queue {
    tok_bigram *items;
    size_t n, cap;
} tok_queue;

bool tok_queue_push(tok_queue *q, tok_bigram b);
bool tok_queue_pop(tok_queue *q, tok_bigram *out);
void tok_queue_free(tok_queue *q);

/* Splits text into one symbol per UTF-8 character (a truncated sequence at the
 * end is one symbol). *out is malloc'd; returns the count, -1 when out of memory. */
int tok_symbols_utf8(const char *text, size_t len, tok_symbol **out);
/* Byte length of the UTF-8 sequence starting with lead byte c (1 for invalid leads). */
size_t tok_utf8_len(unsigned char c);

/* The merge loop: pops bigrams (pushed by `propose` for each adjacent pair)
 * and merges them while they are current. propose(user, q, sym, left, right)
 * pushes the pair when it may merge; returns false when out of memory. */
typedef bool (*tok_propose_fn)(void *user, tok_queue *q, const tok_symbol *sym, int left, int right);
bool tok_merge_all(tok_symbol *sym, int n, tok_propose_fn propose, void *user);

#endif
