/* A binary max-heap of bigrams and the merge loop over a symbol chain. */
#include "bigram.h"
#include "internal.h"

#include <stdlib.h>

static bool before(const tok_bigram *a, const tok_bigram *b)
{
    return a->priority > b->priority || (a->priority == b->priority && a->left < b->left);
}

bool tok_queue_push(tok_queue *q, tok_bigram b)
{
    if (!gguf_reserve((void **)&q->items, &q->cap, q->n + 1, sizeof *q->items))
        return false;
    size_t i = q->n++;
    while (i > 0 && before(&b, &q->items[(i - 1) / 2])) {
        q->items[i] = q->items[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    q->items[i] = b;
    return true;
}

bool tok_queue_pop(tok_queue *q, tok_bigram *out)
{
    if (!q->n)
        return false;
    *out = q->items[0];
    tok_bigram last = q->items[--q->n];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= q->n)
            break;
        if (c + 1 < q->n && before(&q->items[c + 1], &q->items[c]))
            c++;
        if (!before(&q->items[c], &last))
            break;
        q->items[i] = q->items[c];
        i = c;
    }
    if (q->n)
        q->items[i] = last;
    return true;
}

void tok_queue_free(tok_queue *q)
{
    free(q->items);
    *q = (tok_queue){ 0 };
}

size_t tok_utf8_len(unsigned char c)
{
    static const size_t lens[16] = { 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4 };
    return lens[c >> 4];
}

int tok_symbols_utf8(const char *text, size_t len, tok_symbol **out)
{
    *out = malloc((len ? len : 1) * sizeof **out);
    if (!*out)
        return -1;
    int n = 0;
    for (size_t off = 0; off < len;) {
        size_t c = tok_utf8_len((unsigned char)text[off]);
        if (c > len - off)
            c = len - off;
        (*out)[n] = (tok_symbol){ .text = text + off, .n = c, .prev = n - 1, .next = off + c == len ? -1 : n + 1 };
        off += c;
        n++;
    }
    return n;
}

bool tok_merge_all(tok_symbol *sym, int n, tok_propose_fn propose, void *user)
{
    tok_queue q = { 0 };
    bool ok = true;
    for (int i = 1; i < n && ok; i++)
        ok = propose(user, &q, sym, i - 1, i);
    tok_bigram b;
    while (ok && tok_queue_pop(&q, &b)) {
        tok_symbol *l = &sym[b.left], *r = &sym[b.right];
        if (l->n == 0 || r->n == 0 || l->n + r->n != b.size || l->next != b.right)
            continue;
        l->n += r->n;
        r->n = 0;
        l->next = r->next;
        if (r->next >= 0)
            sym[r->next].prev = b.left;
        if (l->prev >= 0)
            ok = propose(user, &q, sym, l->prev, b.left);
        if (ok && l->next >= 0)
            ok = propose(user, &q, sym, b.left, l->next);
    }
    tok_queue_free(&q);
    return ok;
}
