/* llama-perplexity's base-logits file, read and written (logits_file.h has its layout). */
#include "logits_file.h"
#include "kld.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

bool logits_file_open(logits_file *lf, const char *path, char *why, size_t why_len)
{
    memset(lf, 0, sizeof *lf);
    lf->fp = fopen(path, "rb");
    if (!lf->fp) {
        snprintf(why, why_len, "cannot open '%s'", path);
        return false;
    }
    char magic[8];
    struct stat st;
    if (fread(magic, 1, 8, lf->fp) != 8 || memcmp(magic, "_logits_", 8) != 0) {
        snprintf(why, why_len, "'%s' is not a llama-perplexity logits file (it does not start with \"_logits_\")",
                 path);
        return false;
    }
    if (fread(&lf->n_ctx, 4, 1, lf->fp) != 1 || fread(&lf->n_vocab, 4, 1, lf->fp) != 1 ||
        fread(&lf->n_chunk, 4, 1, lf->fp) != 1) {
        snprintf(why, why_len, "'%s' ends inside its header (byte 8 to 20)", path);
        return false;
    }
    if (lf->n_ctx < 4 || lf->n_ctx > (1u << 24) || lf->n_vocab < 1 || lf->n_vocab > (1 << 28) || lf->n_chunk < 1) {
        snprintf(why, why_len, "'%s' byte 8: context %u, vocabulary %d, chunks %d: not numbers such a file holds",
                 path, lf->n_ctx, lf->n_vocab, lf->n_chunk);
        return false;
    }
    lf->row_u16 = kld_row_u16(lf->n_vocab);
    const uint64_t n_tok = (uint64_t)lf->n_chunk * lf->n_ctx; /* below 2^55 */
    uint64_t rows_u16, need;
    const bool huge = __builtin_mul_overflow((uint64_t)lf->n_chunk * (uint64_t)logits_file_scored((int)lf->n_ctx),
                                             (uint64_t)lf->row_u16, &rows_u16) ||
                      __builtin_mul_overflow(rows_u16, 2, &need) || __builtin_add_overflow(need, 20 + 4 * n_tok, &need);
    if (huge || (fstat(fileno(lf->fp), &st) == 0 && S_ISREG(st.st_mode) && (uint64_t)st.st_size < need)) {
        char size[64] = "more than 2^64";
        if (!huge)
            snprintf(size, sizeof size, "%llu (the file has %llu)", (unsigned long long)need,
                     (unsigned long long)st.st_size);
        snprintf(why, why_len, "'%s': its header (%d chunks of %u tokens, %d-token vocabulary) says %s bytes: it is "
                 "truncated", path, lf->n_chunk, lf->n_ctx, lf->n_vocab, size);
        return false;
    }
    lf->tokens = malloc(n_tok * sizeof *lf->tokens);
    if (!lf->tokens || fread(lf->tokens, 4, n_tok, lf->fp) != n_tok) {
        snprintf(why, why_len, lf->tokens ? "'%s' ends inside its tokens" : "out of memory reading '%s'", path);
        return false;
    }
    for (uint64_t i = 0; i < n_tok; i++)
        if (lf->tokens[i] < 0 || lf->tokens[i] >= lf->n_vocab) {
            snprintf(why, why_len, "'%s' byte %llu: token %d is outside its %d-token vocabulary", path,
                     (unsigned long long)(20 + 4 * i), lf->tokens[i], lf->n_vocab);
            return false;
        }
    return true;
}

bool logits_file_read_chunk(logits_file *lf, uint16_t *rows, char *why, size_t why_len)
{
    const size_t n = (size_t)logits_file_scored((int)lf->n_ctx) * lf->row_u16;
    if (fread(rows, 2, n, lf->fp) != n) {
        snprintf(why, why_len, "the logits file ends inside chunk %d", lf->chunks_done + 1);
        return false;
    }
    lf->chunks_done++;
    return true;
}

bool logits_file_write_header(FILE *fp, uint32_t n_ctx, int32_t n_vocab, int32_t n_chunk, const int32_t *tokens)
{
    return fwrite("_logits_", 1, 8, fp) == 8 && fwrite(&n_ctx, 4, 1, fp) == 1 && fwrite(&n_vocab, 4, 1, fp) == 1 &&
           fwrite(&n_chunk, 4, 1, fp) == 1 &&
           fwrite(tokens, 4, (size_t)n_chunk * n_ctx, fp) == (size_t)n_chunk * n_ctx;
}

bool logits_file_write_chunk(FILE *fp, const uint16_t *rows, int n_ctx, int32_t n_vocab)
{
    const size_t n = (size_t)logits_file_scored(n_ctx) * kld_row_u16(n_vocab);
    return fwrite(rows, 2, n, fp) == n;
}

void logits_file_close(logits_file *lf)
{
    if (lf->fp)
        fclose(lf->fp);
    free(lf->tokens);
    memset(lf, 0, sizeof *lf);
}
