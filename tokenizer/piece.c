/*
 * Token id -> the bytes it stands for in generated text (llama.cpp's
 * token_to_piece with special tokens not rendered): SentencePiece pieces turn
 * U+2581 back into spaces and <0xXX> tokens into their byte (Gemma 4's BPE too); byte-level BPE
 * pieces map each code point back to its byte; PLaMo's are their text; control tokens print nothing.
 * Partial UTF-8 across byte tokens is the caller's to join.
 */
#include "bigram.h"
#include "vocab.h"

#include <stdlib.h>
#include <string.h>

static size_t put(char *buf, size_t cap, size_t at, const char *s, size_t n)
{
    if (at < cap)
        memcpy(buf + at, s, at + n <= cap ? n : cap - at);
    return at + n;
}

static uint32_t decode_cp(const unsigned char *s, size_t n, size_t *used)
{
    size_t k = tok_utf8_len(s[0]);
    if (k > n || k == 1) {
        *used = 1;
        return s[0];
    }
    uint32_t cp = s[0] & (0x7f >> k);
    for (size_t i = 1; i < k; i++)
        cp = (cp << 6) | (s[i] & 0x3f);
    *used = k;
    return cp;
}

size_t tok_piece(const tok_vocab *v, int32_t id, char *buf, size_t cap)
{
    if (id < 0 || id >= v->n)
        return 0;
    const gguf_str *t = &v->text[id];
    switch ((tok_type)v->type[id]) {
    case TOK_TYPE_CONTROL:
        return 0;
    case TOK_TYPE_USER_DEFINED:
        return put(buf, cap, 0, t->ptr, t->len);
    case TOK_TYPE_UNKNOWN:
        return put(buf, cap, 0, "\xe2\x96\x85", 3);  /* llama.cpp prints U+2585 for <unk> */
    case TOK_TYPE_BYTE:
        if (t->len == 6 && !memcmp(t->ptr, "<0x", 3)) {
            char hex[3] = { t->ptr[3], t->ptr[4], 0 };
            char b = (char)strtol(hex, NULL, 16);
            return put(buf, cap, 0, &b, 1);
        }
        break;
    default:
        break;
    }
    if (v->kind == VOCAB_PLAMO2) /* PLaMo's pieces are the text itself */
        return put(buf, cap, 0, t->ptr, t->len);
    size_t out = 0;
    if (v->kind == VOCAB_SPM || v->spm_style) { /* (Gemma 4's BPE pieces are SentencePiece's) */
        for (size_t i = 0; i < t->len;) {
            if (i + 3 <= t->len && !memcmp(t->ptr + i, "\xe2\x96\x81", 3)) {
                out = put(buf, cap, out, " ", 1);
                i += 3;
            } else {
                out = put(buf, cap, out, t->ptr + i, 1);
                i++;
            }
        }
        return out;
    }
    for (size_t i = 0; i < t->len;) {
        size_t used;
        uint32_t cp = decode_cp((const unsigned char *)t->ptr + i, t->len - i, &used);
        int b = cp < BPE_CP_END ? v->cp_byte[cp] : -1;
        if (b >= 0) {
            char c = (char)b;
            out = put(buf, cap, out, &c, 1);
        } else {
            out = put(buf, cap, out, t->ptr + i, used);
        }
        i += used;
    }
    return out;
}
