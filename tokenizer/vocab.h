/* Private to tokenizer/: the vocabulary the tokenizers and detokenizer share. */
#ifndef GGUFSCOPE_TOKENIZER_VOCAB_H
#define GGUFSCOPE_TOKENIZER_VOCAB_H

#include "internal.h"
#include "strmap.h"

typedef enum vocab_kind { VOCAB_SPM, VOCAB_BPE, VOCAB_PLAMO2 } vocab_kind;

enum { BPE_CP_END = 324 };  /* GPT-2's byte code points are below 256 + 68 */

struct tok_vocab {
    vocab_kind kind;
    char pre[32];             /* tokenizer.ggml.pre as resolved ("default" when absent) */
    uint64_t pre_offset;      /* its key's byte offset (0: absent) */
    int32_t n;                /* tokens */
    const gguf_str *text;     /* (n) views into the mapping */
    float *score;             /* (n) SentencePiece scores (0 when absent) */
    uint8_t *type;            /* (n) tok_type */
    strmap by_text;           /* text -> id */
    strmap merge_rank;        /* "left right" -> rank (BPE) */
    int32_t bos, eos, eot, eom, unk;
    bool add_bos, add_eos, add_space_prefix, ignore_merges;
    bool spm_style;           /* BPE over U+2581 for spaces and the text's own UTF-8 (pretok_spm_style) */
    const char *model;        /* tokenizer.ggml.model: "llama", "gpt2", "gemma4" or "plamo2" */
    uint8_t *eog;             /* (n) end-of-generation flags */
    int32_t n_real;
    int32_t *special;         /* control, user-defined and unknown tokens, longest text first (special.c) */
    int32_t n_special;
    void *pretok;             /* BPE: compiled pre-tokenizer regexes */
    int byte_token[256];      /* SPM: <0xXX> ids (-1: none); PLaMo 2: the last <0xXX> of type BYTE */
    int32_t *plamo_entries;   /* PLaMo 2: the ids of its entries (not byte tokens), sorted by text (tok_plamo2.c) */
    int32_t *plamo_rev;       /* PLaMo 2: the same ids sorted by their texts read backwards */
    int32_t n_plamo_entries;
    uint16_t byte_cp[256];    /* BPE: GPT-2's code point for each byte */
    int16_t cp_byte[BPE_CP_END]; /* BPE: the byte each such code point stands for (-1: none) */
};

/* The types and end-of-generation flags llama.cpp's loader gives tokens after reading the file (vocab_rules.c). */
void vocab_apply_llama_rules(tok_vocab *v, const gguf_file *f);

/* Whether llama.cpp's loader ignores merges for words that are tokens (the llama3 names, tekken, glm4), and whether it
 * adds BOS by default (the llama3 names, tekken), for this tokenizer.ggml.pre (pretok.c). */
bool pretok_ignores_merges(const char *name);
bool pretok_adds_bos(const char *name);
/* Whether this tokenizer.ggml.pre is SentencePiece-style BPE (gemma4: pre_kind.spm_style in pretok.c). */
bool pretok_spm_style(const char *name);
/* BPE pre-tokenizer (pretok.c): compiles the regexes for v->pre. */
tok_status pretok_create(tok_vocab *v, tok_error *err);
void pretok_free(void *p);
/* Splits text into words as llama.cpp's unicode_regex_split does with the
 * same expressions: every match and every gap between matches is a word.
 * Calls word(user, start, len) in order; returns false on failure. */
bool pretok_split(const void *p, const char *text, size_t len, bool (*word)(void *user, size_t start, size_t len),
                  void *user);

/* Special tokens (special.c). A piece of the text to tokenize: raw text at
 * [off, off + len), or the special token id (id >= 0) that spells it. */
typedef struct text_frag {
    int32_t id;
    size_t off, len;
} text_frag;
/* Fills v->special; false when out of memory. */
bool special_tokens_index(tok_vocab *v);
/* Cuts text into raw pieces and special tokens as llama.cpp does: user-defined
 * tokens always, control tokens when parse_special. *out is malloc'd (NULL
 * and 0 pieces for empty text). False when out of memory. */
bool special_partition(const tok_vocab *v, const char *text, size_t len, bool parse_special, text_frag **out,
                       size_t *n_out);

/* Tokenizers: append ids to *out (a growable array). */
typedef struct tok_out {
    int32_t *ids;
    size_t n, cap;
} tok_out;
bool tok_out_push(tok_out *o, int32_t id);
/* space_prefix: a space goes before the text (the vocabulary adds one, and the piece starts the
 * prompt or follows a special token: llama.cpp's is_prev_special). */
bool spm_tokenize(const tok_vocab *v, const char *text, size_t len, bool space_prefix, tok_out *out);
bool bpe_tokenize(const tok_vocab *v, const char *text, size_t len, tok_out *out);
bool plamo2_tokenize(const tok_vocab *v, const char *text, size_t len, tok_out *out);
/* PLaMo 2's entries and byte tokens, indexed once per vocabulary (a refusal where a byte token is missing, at
 * tokens_offset: tokenizer.ggml.tokens' offset). */
tok_status plamo2_index(tok_vocab *v, uint64_t tokens_offset, tok_error *err);

/* GPT-2's byte <-> printable code point tables (byte-level BPE), filled once per vocabulary. */
void bpe_byte_tables(uint16_t byte_cp[256], int16_t cp_byte[BPE_CP_END]);

#endif
