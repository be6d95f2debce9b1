/*
 * PLaMo 2's tokenizer ("plamo2" vocabularies: PLaMo 2 and PLaMo 3 files) as llama.cpp's llm_tokenizer_plamo2
 * computes it (src/llama-vocab.cpp): the cheapest split of the text's code points into vocabulary entries, an entry
 * costing -round(score x 1e4), a code point no entry covers costing 1e7 and spelled by its UTF-8 bytes' <0xXX>
 * tokens. Among splits of equal cost at a position the longest entry wins, and a code point goes to its bytes only
 * where that is strictly cheaper than every entry there. Entries whose score rounds to -2e7 or lower (or is not
 * finite) are never chosen. A leading U+FEFF is dropped; a byte that starts no valid UTF-8 sequence is a code point of
 * its own, spelled by its byte token.
 *
 * llama.cpp finds the entries at a position by walking a table of the entries' suffixes from the end of the text,
 * the state at each position the longest suffix of an entry that the text there begins with; an entry scored exactly
 * -1e7 (the converter's [PADn] fillers, -1000) reads as the end of a table row and stops that walk. Where it stops
 * it, the state there is empty: the position gets no entry (its code point goes to bytes) and the positions before
 * it only entries that end short of it. That is kept here: plamo2_state follows the same walk.
 *
 * The entries are the vocabulary's texts but its byte tokens (each text once: tok_vocab_load refuses a text twice),
 * kept sorted by their bytes, so that the entries a position's text begins with are found by narrowing
 * one range of that list byte after byte, and sorted by their reversed bytes, for the suffixes.
 */
#include "bigram.h"
#include "vocab.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { PLAMO2_INVALID = -20000000, PLAMO2_UNKNOWN = -10000000 };

static int by_text(const void *a, const void *b, void *vocab)
{
    const tok_vocab *v = vocab;
    const gguf_str *s = &v->text[*(const int32_t *)a], *t = &v->text[*(const int32_t *)b];
    const size_t n = s->len < t->len ? s->len : t->len;
    const int c = n ? memcmp(s->ptr, t->ptr, n) : 0;
    return c ? c : (s->len > t->len) - (s->len < t->len);
}

/* a's bytes against b's, both read from their ends */
static int rev_cmp(const char *a, size_t na, const char *b, size_t nb)
{
    for (size_t k = 0; k < na && k < nb; k++) {
        const unsigned char x = (unsigned char)a[na - 1 - k], y = (unsigned char)b[nb - 1 - k];
        if (x != y)
            return x < y ? -1 : 1;
    }
    return na < nb ? -1 : na > nb;
}

static int by_reversed_text(const void *a, const void *b, void *vocab)
{
    const tok_vocab *v = vocab;
    const gguf_str *s = &v->text[*(const int32_t *)a], *t = &v->text[*(const int32_t *)b];
    return rev_cmp(s->ptr, s->len, t->ptr, t->len);
}

/* Whether some entry ends with s: the first entry, in reversed order, not below s reversed */
static bool is_entry_suffix(const tok_vocab *v, const char *s, size_t n)
{
    int32_t a = 0, b = v->n_plamo_entries;
    while (a < b) {
        const int32_t mid = a + (b - a) / 2;
        const gguf_str *t = &v->text[v->plamo_rev[mid]];
        if (rev_cmp(t->ptr, t->len, s, n) < 0)
            a = mid + 1;
        else
            b = mid;
    }
    if (a == v->n_plamo_entries)
        return false;
    const gguf_str *t = &v->text[v->plamo_rev[a]];
    return t->len >= n && !memcmp(t->ptr + t->len - n, s, n);
}

/* A score as llama.cpp's table holds it: round(score x 1e4), PLAMO2_INVALID where that is not a number (kept in
 * int32's range: a score beyond it means the same as its end) */
static int32_t table_score(float score)
{
    if (!isfinite(score))
        return PLAMO2_INVALID;
    const double s = round((double)score * 1e4);
    return s <= INT32_MIN ? INT32_MIN : s >= INT32_MAX ? INT32_MAX : (int32_t)s;
}

static bool is_byte_text(const gguf_str *t, int *byte)
{
    static const char hex[] = "0123456789abcdef";
    if (t->len != 6 || memcmp(t->ptr, "<0x", 3) || t->ptr[5] != '>')
        return false;
    int b = 0;
    for (int i = 3; i < 5; i++) {
        const char *h = memchr(hex, t->ptr[i] | 0x20, 16);
        if (!h || !t->ptr[i])
            return false;
        b = b * 16 + (int)(h - hex);
    }
    *byte = b;
    return true;
}

tok_status plamo2_index(tok_vocab *v, uint64_t tokens_offset, tok_error *err)
{
    for (int b = 0; b < 256; b++)
        v->byte_token[b] = -1;
    v->plamo_entries = malloc((size_t)(v->n ? v->n : 1) * sizeof *v->plamo_entries);
    v->plamo_rev = malloc((size_t)(v->n ? v->n : 1) * sizeof *v->plamo_rev);
    if (!v->plamo_entries || !v->plamo_rev)
        return tok_fail(err, TOK_E_NOMEM, 0, "", "out of memory");
    int32_t m = 0;
    for (int32_t i = 0; i < v->n; i++) {
        int byte;
        if (v->type[i] == TOK_TYPE_BYTE) {
            if (is_byte_text(&v->text[i], &byte))
                v->byte_token[byte] = i; /* the last such token, as llama.cpp's bytes_ */
            continue;
        }
        v->plamo_entries[m++] = i;
    }
    for (int b = 0; b < 256; b++)
        if (v->byte_token[b] < 0)
            return tok_fail(err, TOK_E_MALFORMED, tokens_offset, "tokenizer.ggml.tokens",
                            "the plamo2 vocabulary has no byte token <0x%02X> (of type BYTE): its tokenizer spells "
                            "what no entry covers in the 256 byte tokens, and llama.cpp refuses such a vocabulary",
                            b);
    qsort_r(v->plamo_entries, (size_t)m, sizeof *v->plamo_entries, by_text, v);
    v->n_plamo_entries = m;
    memcpy(v->plamo_rev, v->plamo_entries, (size_t)m * sizeof *v->plamo_rev);
    qsort_r(v->plamo_rev, (size_t)m, sizeof *v->plamo_rev, by_reversed_text, v);
    return TOK_OK;
}

/* Within entries [*lo, *hi), which share their first d bytes, those whose byte d is c (the shorter ones, the
 * d-byte text itself, sort first). */
static void narrow(const tok_vocab *v, int32_t *lo, int32_t *hi, size_t d, unsigned char c)
{
    int32_t a = *lo, b = *hi;
    while (a < b) { /* the first entry whose byte d is c or more */
        const int32_t mid = a + (b - a) / 2;
        const gguf_str *t = &v->text[v->plamo_entries[mid]];
        if (t->len <= d || (unsigned char)t->ptr[d] < c)
            a = mid + 1;
        else
            b = mid;
    }
    int32_t e = a;
    b = *hi;
    while (e < b) { /* the first entry whose byte d is above c */
        const int32_t mid = e + (b - e) / 2;
        if ((unsigned char)v->text[v->plamo_entries[mid]].ptr[d] <= c)
            e = mid + 1;
        else
            b = mid;
    }
    *lo = a;
    *hi = e;
}

/* The code points' byte offsets: a valid UTF-8 sequence, or a byte alone */
static size_t *unit_offsets(const char *text, size_t len, size_t *n)
{
    size_t *off = malloc((len + 1) * sizeof *off), k = 0;
    if (!off)
        return NULL;
    for (size_t i = 0; i < len;) {
        const unsigned char *s = (const unsigned char *)text + i;
        size_t u = tok_utf8_len(s[0]);
        if (u > len - i)
            u = 1;
        for (size_t j = 1; j < u; j++)
            if ((s[j] & 0xc0) != 0x80)
                u = 1;
        off[k++] = i;
        i += u;
    }
    off[k] = len;
    *n = k;
    return off;
}

typedef struct plamo2_step {
    int64_t cost;
    int32_t id;      /* the entry chosen here, -1: the code point's bytes */
    uint32_t units;  /* the code points it covers */
    uint32_t state;  /* the code points of llama.cpp's walk state here */
} plamo2_step;

/* The entries the text at byte at begins with (found[d]: the one d bytes long, or -1, for d up to the return value:
 * past it no entry begins so) */
static size_t entries_at(const tok_vocab *v, const char *text, size_t len, size_t at, int32_t *found)
{
    int32_t lo = 0, hi = v->n_plamo_entries;
    size_t longest = 0;
    for (size_t d = 0; at + d < len && lo < hi; d++) {
        narrow(v, &lo, &hi, d, (unsigned char)text[at + d]);
        found[d + 1] = lo < hi && v->text[v->plamo_entries[lo]].len == d + 1 ? v->plamo_entries[lo] : -1;
        if (lo < hi)
            longest = d + 1;
    }
    return longest;
}

/* llama.cpp's walk state at unit i, in code points, from the one at i + 1 (next: its length, found_next and
 * longest_next the entries there): the longest of that state's prefixes r, longest first, for which the code point
 * at i followed by r ends an entry, that plus one; 0 where an entry r scored -1e7 comes first; past r = "" (the
 * code point alone ends an entry: 1) nothing */
static uint32_t plamo2_state(const tok_vocab *v, const char *text, const size_t *off, size_t i, uint32_t next,
                             const int32_t *found_next, size_t longest_next)
{
    for (uint32_t l = next; l > 0; l--) {
        if (is_entry_suffix(v, text + off[i], off[i + 1 + l] - off[i]))
            return l + 1;
        const size_t r = off[i + 1 + l] - off[i + 1];
        if (r <= longest_next && found_next[r] >= 0 && table_score(v->score[found_next[r]]) == PLAMO2_UNKNOWN)
            return 0;
    }
    return is_entry_suffix(v, text + off[i], off[i + 1] - off[i]) ? 1 : 0;
}

bool plamo2_tokenize(const tok_vocab *v, const char *text, size_t len, tok_out *out)
{
    if (len >= 3 && !memcmp(text, "\xef\xbb\xbf", 3)) { /* a byte-order mark first */
        text += 3;
        len -= 3;
    }
    size_t n;
    size_t *off = unit_offsets(text, len, &n);
    plamo2_step *best = off ? malloc((n + 1) * sizeof *best) : NULL;
    int32_t *found = best ? malloc((len + 1) * sizeof *found) : NULL;
    int32_t *found_next = found ? malloc((len + 1) * sizeof *found_next) : NULL;
    if (!found_next) {
        free(off);
        free(best);
        free(found);
        return false;
    }
    best[n] = (plamo2_step){ .cost = 0, .id = -1, .units = 0, .state = 0 };
    size_t longest_next = 0;
    for (size_t i = n; i-- > 0;) {
        const size_t longest = entries_at(v, text, len, off[i], found);
        const uint32_t state = plamo2_state(v, text, off, i, best[i + 1].state, found_next, longest_next);
        plamo2_step b = { .cost = INT64_MAX, .id = -1, .units = 1, .state = state };
        bool stop = false;
        for (size_t j = i + state; j > i && !stop; j--) { /* the state's prefixes, the longest first */
            const size_t bytes = off[j] - off[i];
            if (bytes > longest || found[bytes] < 0)
                continue;
            const int32_t id = found[bytes], score = table_score(v->score[id]);
            if (score <= PLAMO2_INVALID)
                continue;
            const int64_t c = best[j].cost - score;
            if (c < b.cost) {
                b.cost = c;
                b.id = id;
                b.units = (uint32_t)(j - i);
            }
            stop = score == PLAMO2_UNKNOWN;
        }
        if (!stop && best[i + 1].cost - PLAMO2_UNKNOWN < b.cost) {
            b.cost = best[i + 1].cost - PLAMO2_UNKNOWN;
            b.id = -1;
            b.units = 1;
        }
        best[i] = b;
        int32_t *t = found_next; /* this position's entries are the next one's "next" */
        found_next = found;
        found = t;
        longest_next = longest;
    }
    bool ok = true;
    for (size_t i = 0; ok && i < n; i += best[i].units) {
        if (best[i].id >= 0) {
            ok = tok_out_push(out, best[i].id);
            continue;
        }
        for (size_t k = off[i]; ok && k < off[i + 1]; k++)
            ok = tok_out_push(out, v->byte_token[(unsigned char)text[k]]);
    }
    free(found_next);
    free(found);
    free(best);
    free(off);
    return ok;
}
