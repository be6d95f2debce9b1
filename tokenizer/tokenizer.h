/*
 * tokenizer.h — a model's vocabulary and what is done with it: SentencePiece and byte-level BPE tokenizers with
 * llama.cpp's pre-tokenizers, special tokens, text of a token, and chat prompts in the families llama.cpp's
 * built-in detection names. Everything is read from the file's tokenizer.ggml.* keys (gguf/ below); nothing
 * here prints or exits.
 */
#ifndef GGUFSCOPE_TOKENIZER_H
#define GGUFSCOPE_TOKENIZER_H

#include "gguf.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum tok_status {
    TOK_OK = 0,
    TOK_E_MALFORMED,    /* no usable vocabulary in the file (missing, inconsistent or broken keys): its fault */
    TOK_E_UNSUPPORTED,  /* a tokenizer or pre-tokenizer this layer does not implement */
    TOK_E_INPUT,        /* bad argument: a chat family it cannot format */
    TOK_E_NOMEM,
} tok_status;

typedef struct tok_error {
    tok_status code;
    uint64_t offset;      /* byte offset in the file the problem concerns (0: none) */
    char subject[GGUF_ERROR_SUBJECT_SIZE];    /* the key */
    char message[GGUF_ERROR_MESSAGE_SIZE];
} tok_error;

const char *tok_status_name(tok_status s);

/* ---- vocabulary and tokenizer ------------------------------------------- */

typedef struct tok_vocab tok_vocab;

typedef enum tok_type {
    TOK_TYPE_UNDEFINED = 0, TOK_TYPE_NORMAL = 1, TOK_TYPE_UNKNOWN = 2, TOK_TYPE_CONTROL = 3,
    TOK_TYPE_USER_DEFINED = 4, TOK_TYPE_UNUSED = 5, TOK_TYPE_BYTE = 6,
} tok_type;

/* Reads tokenizer.ggml.* : "llama" (SentencePiece) or "gpt2" (byte-level BPE). */
tok_status tok_vocab_load(const gguf_file *f, tok_vocab **out, tok_error *err);
void tok_vocab_free(tok_vocab *v);
int32_t tok_vocab_size(const tok_vocab *v);
const char *tok_vocab_model(const tok_vocab *v);  /* "llama" or "gpt2" */
const char *tok_vocab_pre(const tok_vocab *v);    /* pre-tokenizer in use ("qwen2", "default", ...) */
int32_t tok_vocab_bos(const tok_vocab *v);        /* -1: none */
int32_t tok_vocab_eos(const tok_vocab *v);
bool tok_vocab_add_bos(const tok_vocab *v);
bool tok_vocab_is_eog(const tok_vocab *v, int32_t id);  /* EOS, EOT, EOM, ... */
tok_type tok_vocab_type(const tok_vocab *v, int32_t id);
/* The token's stored text: a view into the mapping, len bytes, NOT NUL-terminated (any bytes);
 * { NULL, 0 } when out of range. */
gguf_str tok_vocab_text(const tok_vocab *v, int32_t id);
/* Number of real tokens: ids past it are padding ([PAD...], unused). */
int32_t tok_vocab_n_real(const tok_vocab *v);
/* Whether llama.cpp makes a token of this text end generation whatever its type ("<|im_end|>", "</s>", ...). */
bool tok_is_eog_text(const char *text, size_t len);
/* The i-th tokenizer.ggml.pre name the byte-level BPE tokenizer splits as llama.cpp does (and llama.cpp accepts), or
 * NULL past the last. */
const char *tok_pretok_name(size_t i);
/* The token whose stored text is text[0..len), or -1. */
int32_t tok_vocab_id_of(const tok_vocab *v, const char *text, size_t len);
/* The id llama.cpp uses for a special-token key (tokenizer.ggml.eos_token_id, ...) when the file's value is
 * past the vocabulary: its default for the tokenizer model ("llama" or "gpt2"), -1 for none. What the vocabulary
 * here uses too. */
int32_t tok_special_default(const char *tokenizer_model, const char *key, int32_t n_vocab);

/* Tokenizes len bytes of text, with BOS when add_special and the vocabulary
 * asks for it. User-defined tokens' text always becomes those tokens; control
 * tokens' text (<|im_start|>, <start_of_turn>) only when parse_special: a chat
 * prompt, or --special. *out is malloc'd. */
tok_status tok_tokenize(const tok_vocab *v, const char *text, size_t len, bool add_special, bool parse_special,
                              int32_t **out, size_t *n_out, tok_error *err);
/* Whether SentencePiece adds a space before the text (tokenizer.ggml.add_space_prefix). */
bool tok_vocab_adds_space_prefix(const tok_vocab *v);
/* The bytes token id stands for in generated text (control tokens: none).
 * Writes up to cap bytes; returns the full length. */
size_t tok_piece(const tok_vocab *v, int32_t id, char *buf, size_t cap);

/* ---- chat prompts ------------------------------------------------------------ */

/* The family of a chat template (tokenizer.chat_template, len bytes), as
 * llama.cpp's built-in detection names it ("chatml", "llama3", "gemma", ...),
 * or NULL when no rule matches. A template that is itself a family name names it. */
const char *tok_chat_detect(const char *tmpl, size_t len);
/* The text that ends a turn in that family's prompts ("<|im_end|>", "<end_of_turn>", "</s>"), or NULL when not
 * known here. */
const char *tok_chat_end_of_turn(const char *family);
/* Whether gguf-run can format that family (llama.cpp knows more than it formats). */
bool tok_chat_formats(const char *family);
/* The families that can be formatted, for messages. */
const char *tok_chat_families(void);
/* One user message (len bytes) as the family writes it, with the assistant's
 * turn opened, as llama.cpp's llm_chat_apply_template does; *out is malloc'd.
 * Tokenize the result with parse_special so that its markers become the
 * special tokens. TOK_E_INPUT for a family it cannot format. */
tok_status tok_chat_format(const char *family, const char *message, size_t len, char **out, tok_error *err);

/* ---- chat template safety ---------------------------------------------------- */

typedef enum tok_template_severity {
    TOK_TEMPLATE_NOTE,     /* text a trained template adds by design: a default system prompt, tool instructions */
    TOK_TEMPLATE_INJECTED, /* words in the conversation no message supplied, a branch on a message's words */
    TOK_TEMPLATE_CODE,     /* a path to the renderer's internals: Python attributes, gadgets, unbounded work */
} tok_template_severity;

typedef struct tok_template_issue {
    int line;                      /* 1-based, in the template */
    tok_template_severity severity;
    const char *code;              /* "template-dunder", "template-injected-text", ... */
    char excerpt[96];              /* the construct, printable ASCII, cut short */
} tok_template_issue;

/* Reads a chat template without running it (template_scan.c says what it looks for); fills up to cap issues in
 * template order and returns how many it found in all. */
size_t tok_template_scan(const char *tmpl, size_t len, tok_template_issue *out, size_t cap);

#endif
