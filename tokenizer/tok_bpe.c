/*
 * Byte-level BPE as llama.cpp does it for "gpt2" vocabularies
 * (llm_tokenizer_bpe_session): pre-tokenize into words with the
 * vocabulary's regexes, map every byte of a word to GPT-2's printable code
 * point, merge adjacent symbols by lowest merge rank, and look the results up.
 * Gemma 4's SentencePiece-style BPE (vocab.spm_style) runs the same merges over
 * the text's own UTF-8 with spaces as U+2581, a symbol without a token falling
 * back to its bytes' <0xXX> tokens.
 */
#include "bigram.h"
#include "vocab.h"

#include <stdlib.h>
#include <string.h>

/* GPT-2's bytes_to_unicode: printable Latin-1 bytes stand for themselves, the
 * other 68 take the code points 256, 257, ... in byte order. */
static bool printable(int b)
{
    return (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || b >= 0xae;
}

void bpe_byte_tables(uint16_t byte_cp[256], int16_t cp_byte[BPE_CP_END])
{
    uint16_t next = 256;
    for (int i = 0; i < BPE_CP_END; i++)
        cp_byte[i] = -1;
    for (int b = 0; b < 256; b++) {
        byte_cp[b] = printable(b) ? (uint16_t)b : next++;
        cp_byte[byte_cp[b]] = (int16_t)b;
    }
}

static size_t put_utf8(uint32_t cp, char *out)
{
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    out[0] = (char)(0xc0 | (cp >> 6));
    out[1] = (char)(0x80 | (cp & 0x3f));
    return 2;  /* GPT-2 code points are below 0x800 */
}

typedef struct bpe_job {
    const tok_vocab *v;
    const char *text;
    tok_out *out;
    char *buf;     /* byte-encoded word (2 bytes per input byte at most) */
    char *pair;    /* "left right" lookup key */
    size_t cap;
} bpe_job;

static bool propose(void *user, tok_queue *q, const tok_symbol *sym, int left, int right)
{
    bpe_job *j = user;
    size_t a = sym[left].n, b = sym[right].n;
    memcpy(j->pair, sym[left].text, a);
    j->pair[a] = ' ';
    memcpy(j->pair + a + 1, sym[right].text, b);
    int32_t rank = strmap_get(&j->v->merge_rank, j->pair, a + b + 1);
    if (rank < 0)
        return true;
    return tok_queue_push(q, (tok_bigram){ .left = left, .right = right, .priority = -(double)rank, .size = a + b });
}

static bool grow(bpe_job *j, size_t need)
{
    if (need <= j->cap)
        return true;
    char *b = realloc(j->buf, need), *p = realloc(j->pair, need + 1);
    if (b)
        j->buf = b;
    if (p)
        j->pair = p;
    if (!b || !p)
        return false;
    j->cap = need;
    return true;
}

static bool word(void *user, size_t start, size_t len)
{
    bpe_job *j = user;
    const tok_vocab *v = j->v;
    if (!grow(j, 2 * len + 1))
        return false;
    size_t n = 0;
    if (v->spm_style) {
        memcpy(j->buf, j->text + start, len);
        n = len;
        /* llama.cpp's fix for Gemma 4 (its PR 21343): a run of line breaks is one token where the vocabulary has it */
        int32_t id = strspn(j->buf, "\n") >= n ? strmap_get(&v->by_text, j->buf, n) : -1;
        if (id >= 0)
            return tok_out_push(j->out, id);
    } else {
        for (size_t i = 0; i < len; i++)
            n += put_utf8(v->byte_cp[(uint8_t)j->text[start + i]], j->buf + n);
    }
    if (v->ignore_merges) {
        int32_t id = strmap_get(&v->by_text, j->buf, n);
        if (id >= 0)
            return tok_out_push(j->out, id);
    }
    tok_symbol *sym;
    int ns = tok_symbols_utf8(j->buf, n, &sym);
    bool ok = ns >= 0 && tok_merge_all(sym, ns, propose, j);
    for (int i = 0; ok && ns > 0 && i != -1; i = sym[i].next) {
        int32_t id = strmap_get(&v->by_text, sym[i].text, sym[i].n);
        if (id >= 0) {
            ok = tok_out_push(j->out, id);
            continue;
        }
        /* llama.cpp's fallback: each byte of the symbol as a one-byte token (SentencePiece-style: its <0xXX> token),
         * when one exists. */
        for (size_t k = 0; ok && k < sym[i].n; k++) {
            int32_t b = v->spm_style ? v->byte_token[(uint8_t)sym[i].text[k]] : strmap_get(&v->by_text, sym[i].text + k, 1);
            if (b >= 0)
                ok = tok_out_push(j->out, b);
        }
    }
    if (ns >= 0)
        free(sym);
    return ok;
}

/* text with every space as U+2581 (llama_escape_whitespace), into *out (malloc'd; *n its length); false when out of
 * memory. */
static bool escape_spaces(const char *text, size_t len, char **out, size_t *n)
{
    size_t spaces = 0;
    for (size_t i = 0; i < len; i++)
        spaces += text[i] == ' ';
    char *e = malloc(len + 2 * spaces + 1);
    if (!e)
        return false;
    size_t at = 0;
    for (size_t i = 0; i < len; i++) {
        if (text[i] == ' ') {
            memcpy(e + at, "\xe2\x96\x81", 3);
            at += 3;
        } else {
            e[at++] = text[i];
        }
    }
    *out = e;
    *n = at;
    return true;
}

bool bpe_tokenize(const tok_vocab *v, const char *text, size_t len, tok_out *out)
{
    char *escaped = NULL;
    if (v->spm_style && !escape_spaces(text, len, &escaped, &len))
        return false;
    bpe_job j = { .v = v, .text = escaped ? escaped : text, .out = out };
    bool ok = pretok_split(v->pretok, j.text, len, word, &j);
    free(j.buf);
    free(j.pair);
    free(escaped);
    return ok;
}
