/*
 * Special tokens in text, as llama.cpp's tokenizer_st_partition finds them
 * (src/llama-vocab.cpp): before any tokenizer runs, the text is cut at every
 * occurrence of a special token's text, longest tokens first, each one only
 * in what earlier (longer) ones left as text. User-defined tokens (gemma's
 * "\n\n", whitespace runs, html tags) are always cut out; control tokens
 * (<|im_start|>, <start_of_turn>) only when special-token text is parsed, which
 * is what a chat prompt needs and what --special asks for.
 */
#include "internal.h"
#include "vocab.h"

#include <stdlib.h>
#include <string.h>

/* Longest text first; among equal lengths the lower id (llama.cpp's std::sort leaves that order open). */
static int by_length_desc(const void *a, const void *b, void *vocab)
{
    const tok_vocab *v = vocab;
    const int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    const uint64_t lx = v->text[x].len, ly = v->text[y].len;
    if (lx != ly)
        return lx > ly ? -1 : 1;
    return x < y ? -1 : x > y;
}

/* llama.cpp's cache_special_tokens: control, user-defined and unknown tokens (with some text to find). */
static bool is_special(const tok_vocab *v, int32_t i)
{
    const uint8_t t = v->type[i];
    return (t == TOK_TYPE_CONTROL || t == TOK_TYPE_USER_DEFINED || t == TOK_TYPE_UNKNOWN) && v->text[i].len;
}

bool special_tokens_index(tok_vocab *v)
{
    v->special = malloc((size_t)(v->n ? v->n : 1) * sizeof *v->special);
    if (!v->special)
        return false;
    v->n_special = 0;
    for (int32_t i = 0; i < v->n; i++)
        if (is_special(v, i))
            v->special[v->n_special++] = i;
    int32_t *fit = realloc(v->special, (size_t)(v->n_special ? v->n_special : 1) * sizeof *v->special);
    if (fit) /* a few thousand of gemma's 262144 tokens: give the rest back */
        v->special = fit;
    qsort_r(v->special, (size_t)v->n_special, sizeof *v->special, by_length_desc, v);
    return true;
}

static bool push(text_frag **f, size_t *n, size_t *cap, text_frag x)
{
    if (!gguf_reserve((void **)f, cap, *n + 1, sizeof **f))
        return false;
    (*f)[(*n)++] = x;
    return true;
}

bool special_partition(const tok_vocab *v, const char *text, size_t len, bool parse_special, text_frag **out,
                       size_t *n_out)
{
    text_frag *cur = NULL, *next = NULL;
    size_t n = 0, cap = 0, nn = 0, ncap = 0;
    bool ok = len == 0 || push(&cur, &n, &cap, (text_frag){ .id = -1, .off = 0, .len = len });
    for (int32_t k = 0; ok && k < v->n_special; k++) {
        const int32_t id = v->special[k];
        const uint8_t type = v->type[id];
        if (!parse_special && (type == TOK_TYPE_CONTROL || type == TOK_TYPE_UNKNOWN))
            continue;
        const gguf_str *s = &v->text[id];
        bool found = false;
        nn = 0;
        for (size_t i = 0; ok && i < n; i++) {
            if (cur[i].id >= 0) {
                ok = push(&next, &nn, &ncap, cur[i]);
                continue;
            }
            size_t at = cur[i].off, end = cur[i].off + cur[i].len;
            while (ok) {
                const char *m = end - at >= s->len ? memmem(text + at, end - at, s->ptr, s->len) : NULL;
                if (!m) {
                    if (at < end)
                        ok = push(&next, &nn, &ncap, (text_frag){ .id = -1, .off = at, .len = end - at });
                    break;
                }
                found = true;
                const size_t pos = (size_t)(m - text);
                if (pos > at)
                    ok = push(&next, &nn, &ncap, (text_frag){ .id = -1, .off = at, .len = pos - at });
                ok = ok && push(&next, &nn, &ncap, (text_frag){ .id = id, .off = pos, .len = s->len });
                at = pos + s->len;
            }
        }
        if (found) {  /* swap: the split list becomes the current one */
            text_frag *t = cur;
            size_t tc = cap;
            cur = next, n = nn, cap = ncap;
            next = t, ncap = tc;
        }
    }
    free(next);
    if (!ok) {
        free(cur);
        return false;
    }
    *out = cur;
    *n_out = n;
    return true;
}
