/*
 * SentencePiece-style tokenization as llama.cpp does it for "llama"
 * vocabularies (llm_tokenizer_spm): spaces become U+2581, a leading one is
 * added, characters merge pairwise by the best-scoring token the pair spells,
 * and what never became a token falls back to <0xXX> byte tokens.
 */
#include "bigram.h"
#include "vocab.h"

#include <stdlib.h>
#include <string.h>

static bool propose(void *user, tok_queue *q, const tok_symbol *sym, int left, int right)
{
    const tok_vocab *v = user;
    size_t n = sym[left].n + sym[right].n;
    int32_t id = strmap_get(&v->by_text, sym[left].text, n);  /* symbols are contiguous in the text */
    if (id < 0)
        return true;
    return tok_queue_push(q, (tok_bigram){ .left = left, .right = right, .priority = v->score[id], .size = n });
}

static bool push_bytes(const tok_vocab *v, const char *s, size_t n, tok_out *out)
{
    for (size_t i = 0; i < n; i++) {
        int32_t id = v->byte_token[(uint8_t)s[i]];
        if (id < 0)
            id = strmap_get(&v->by_text, s + i, 1);
        if (id < 0)
            id = v->unk;
        if (id >= 0 && !tok_out_push(out, id))
            return false;
    }
    return true;
}

bool spm_tokenize(const tok_vocab *v, const char *text, size_t len, bool space_prefix, tok_out *out)
{
    /* " " -> U+2581 (3 bytes), after an optional leading space. */
    size_t spaces = space_prefix ? 1 : 0;
    for (size_t i = 0; i < len; i++)
        spaces += text[i] == ' ';
    size_t n = len + 2 * spaces + (space_prefix ? 1 : 0);
    char *esc = malloc(n + 1), *p = esc;
    if (!esc)
        return false;
    for (size_t i = 0; i < len + (space_prefix ? 1 : 0); i++) {
        char c = space_prefix ? (i == 0 ? ' ' : text[i - 1]) : text[i];
        if (c == ' ') {
            memcpy(p, "\xe2\x96\x81", 3);
            p += 3;
        } else {
            *p++ = c;
        }
    }
    n = (size_t)(p - esc);
    tok_symbol *sym;
    int ns = tok_symbols_utf8(esc, n, &sym);
    bool ok = ns >= 0 && tok_merge_all(sym, ns, propose, (void *)v);
    for (int i = 0; ok && ns > 0 && i != -1; i = sym[i].next) {
        int32_t id = strmap_get(&v->by_text, sym[i].text, sym[i].n);
        ok = id >= 0 ? tok_out_push(out, id) : push_bytes(v, sym[i].text, sym[i].n, out);
    }
    if (ns >= 0)
        free(sym);
    free(esc);
    return ok;
}
