/* llama-perplexity's base-logits file (its --kl-divergence-base output, its --kl-divergence input): "_logits_",
 * u32 n_ctx, i32 n_vocab, i32 n_chunk, the n_chunk x n_ctx evaluated tokens (i32), then per chunk the stored
 * log-probabilities (kld.h) of its positions n_ctx / 2 .. n_ctx - 2, kld_row_u16(n_vocab) u16 each. */
#ifndef GGUFSCOPE_TOOLS_FIDELITY_LOGITS_FILE_H
#define GGUFSCOPE_TOOLS_FIDELITY_LOGITS_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef struct logits_file {
    FILE *fp;
    uint32_t n_ctx;
    int32_t n_vocab, n_chunk;
    int32_t *tokens;  /* n_chunk x n_ctx (reading) */
    size_t row_u16;   /* kld_row_u16(n_vocab) */
    int chunks_done;
} logits_file;

/* Positions scored per chunk: n_ctx / 2 .. n_ctx - 2. */
static inline int logits_file_scored(int n_ctx)
{
    return n_ctx - 1 - n_ctx / 2;
}

/* Opens path and reads its header and tokens: false with why when it is not such a file, is truncated, or its
 * numbers cannot be (a context below 4, a vocabulary or a chunk count out of range, fewer bytes than they say). */
bool logits_file_open(logits_file *lf, const char *path, char *why, size_t why_len);
/* The next chunk's rows (logits_file_scored(n_ctx) x row_u16 values) into rows. */
bool logits_file_read_chunk(logits_file *lf, uint16_t *rows, char *why, size_t why_len);
/* Writes the header and tokens to fp (the file stays the caller's). */
bool logits_file_write_header(FILE *fp, uint32_t n_ctx, int32_t n_vocab, int32_t n_chunk, const int32_t *tokens);
bool logits_file_write_chunk(FILE *fp, const uint16_t *rows, int n_ctx, int32_t n_vocab);
void logits_file_close(logits_file *lf);

#endif
