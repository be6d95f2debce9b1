/* Hostile models: the fixture model (our writer) with its metadata, tokenizer arrays, names
 * or strings made hostile, one class per case (zero, huge, negative and float-typed counts,
 * head counts that do not divide, arrays of different lengths, 1 MB tokens, bad merges,
 * out-of-range special ids, escape bytes in every kind of string, amplification). They seed
 * the model and tokenizer fuzz targets and drive the tools' hostile-file tests. */
#ifndef GGUFSCOPE_HOSTILE_MODEL_H
#define GGUFSCOPE_HOSTILE_MODEL_H

#include "gguf.h"

#include <stdbool.h>
#include <stddef.h>

typedef enum hostile_base {
    HOSTILE_SPM,       /* the fixture model: llama, SentencePiece vocabulary */
    HOSTILE_BPE,       /* the same weights with a byte-level BPE vocabulary and merges */
    HOSTILE_VOCAB_SPM, /* metadata only (no tensors): what the tokenizer targets read */
    HOSTILE_VOCAB_BPE,
    HOSTILE_GEMMA3,    /* the fixture model in gemma3's shape (sliding window, soft-capping), SentencePiece */
} hostile_base;

typedef struct hostile_case_info {
    const char *name;  /* a file-name-safe tag: "head-count-zero" */
    hostile_base base;
    bool healthy;      /* a well-formed model (a seed, or a string class the engine may accept) */
} hostile_case_info;

size_t hostile_case_count(void);
const hostile_case_info *hostile_case_at(size_t i);

/* Writes case i into a malloc'd buffer the caller frees. */
gguf_status hostile_write_buffer(size_t i, uint8_t **buf, size_t *len, gguf_error *err);

/* The control bytes the string classes carry (ESC [ 2 J, BEL, CR, C1 CSI 0x9b, invalid UTF-8),
 * for tests that look for them in output. */
extern const char HOSTILE_ESCAPES[];

#endif
