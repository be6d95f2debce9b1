/*
 * What a chat template (tokenizer.chat_template, Jinja) could do to whoever renders it, found without running
 * it. Engines render these templates with Jinja; a template that reaches Python internals through attribute
 * access is server-side template injection (the class of CVE-2024-34359, llama-cpp-python rendering GGUF
 * templates with an unsandboxed Jinja), and a template can also put words in the conversation that no message
 * supplied. The scanner reads the template's tags ({{ }}, {% %}) as tokens and its text as what is emitted:
 *   - code paths (errors): an attribute or string starting with "__" (__class__, __globals__, __init__), the
 *     attr filter, Jinja's and Flask's gadget globals (cycler, joiner, lipsum, self, config, request, url_for,
 *     get_flashed_messages), a name spelt from underscores ('_' ~ '_'), a range or a literal past 100000;
 *   - injected instructions (warnings): a sentence (four words or more, markup aside) that instructs the
 *     model ("you", "always", "do not", ...) emitted unconditionally (at the top or under for loops alone),
 *     and a branch on the words (two or more) of a message's content;
 *   - any other sentence (notes): under an if or in a macro (a default system prompt when there is none, tool
 *     or thinking instructions when asked for: what trained templates do), or a header ("Cutting Knowledge
 *     Date: ...").
 */
#include "internal.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

enum { BIG_LITERAL = 100000, SENTENCE_WORDS = 4, DEPTH_MAX = 64 };

typedef struct scan {
    const char *t;
    size_t len;
    tok_template_issue *out;
    size_t cap, n;
    /* the conditions of the enclosing if/elif/else blocks and for loops: "system" or "tools" in one makes a
     * sentence a default, not an injection */
    bool defaulted[DEPTH_MAX];
    int depth;
    size_t piece_first; /* the first issue of the current tag or text: one issue of a kind in each */
} scan;

static int line_of(const scan *s, size_t at)
{
    int line = 1;
    for (size_t i = 0; i < at && i < s->len; i++)
        line += s->t[i] == '\n';
    return line;
}

static void add(scan *s, size_t at, tok_template_severity sev, const char *code, const char *p, size_t n)
{
    for (size_t i = s->piece_first; i < s->n && i < s->cap; i++)
        if (s->out[i].code == code)
            return;
    if (s->n < s->cap) {
        tok_template_issue *x = &s->out[s->n];
        x->line = line_of(s, at);
        x->severity = sev;
        x->code = code;
        gguf_excerpt(p, n, x->excerpt, sizeof x->excerpt);
    }
    s->n++;
}

/* Whether [p, p+n) holds a sentence: SENTENCE_WORDS words of two letters or more outside markup (<...>, [...],
 * {...}) and escapes (\n). */
static bool is_sentence(const char *p, size_t n)
{
    int words = 0, depth = 0;
    size_t run = 0;
    for (size_t i = 0; i <= n; i++) {
        const char c = i < n ? p[i] : ' ';
        if (c == '<' || c == '[' || c == '{')
            depth++;
        else if ((c == '>' || c == ']' || c == '}') && depth > 0)
            depth--;
        if (c == '\\' && i + 1 < n) { /* an escape like \n ends a word */
            words += run >= 2;
            run = 0;
            i++;
            continue;
        }
        if (depth == 0 && isalpha((unsigned char)c))
            run++;
        else {
            words += run >= 2 && depth == 0;
            run = 0;
        }
    }
    return words >= SENTENCE_WORDS;
}

/* Whether a sentence instructs the model (addresses it, or orders): "You are...", "Always answer...", "Do not
 * reveal..."; a date header or a tool list does not. */
static bool instructs(const char *p, size_t n)
{
    static const char *const words[] = { "you", "your", "must", "always", "never", "ignore", "should", "do not",
                                         "don't", "follow", "respond", "answer", "reply", "pretend", "act as" };
    for (size_t w = 0; w < sizeof words / sizeof *words; w++) {
        const size_t k = strlen(words[w]);
        for (size_t i = 0; i + k <= n; i++)
            if (strncasecmp(p + i, words[w], k) == 0 && (i == 0 || !isalpha((unsigned char)p[i - 1])) &&
                (i + k == n || !isalpha((unsigned char)p[i + k])))
                return true;
    }
    return false;
}

static bool enclosed_by_default(const scan *s)
{
    for (int i = 0; i < s->depth && i < DEPTH_MAX; i++)
        if (s->defaulted[i])
            return true;
    return false;
}

static void emitted(scan *s, size_t at, const char *p, size_t n)
{
    if (!is_sentence(p, n))
        return;
    /* the line where its words begin: past leading whitespace, markers and escapes */
    for (size_t i = 0, depth = 0; i < n; i++) {
        if (p[i] == '<' || p[i] == '[')
            depth++;
        else if ((p[i] == '>' || p[i] == ']') && depth)
            depth--;
        else if (p[i] == '\\' && i + 1 < n)
            i++;
        else if (!depth && isalpha((unsigned char)p[i])) {
            at += i;
            p += i;
            n -= i;
            break;
        }
    }
    if (enclosed_by_default(s) || !instructs(p, n))
        add(s, at, TOK_TEMPLATE_NOTE, "template-default-text", p, n);
    else
        add(s, at, TOK_TEMPLATE_INJECTED, "template-injected-text", p, n);
}

static bool word_is(const char *p, size_t n, const char *w) { return strlen(w) == n && memcmp(p, w, n) == 0; }

static bool contains(const char *p, size_t n, const char *needle)
{
    const size_t k = strlen(needle);
    for (size_t i = 0; i + k <= n; i++)
        if (memcmp(p + i, needle, k) == 0)
            return true;
    return false;
}

/* The tokens of one tag [b, e): names, strings, numbers; `output` when it is {{ }} (its strings are emitted). */
static void scan_tag(scan *s, size_t b, size_t e, bool output)
{
    static const char *const gadgets[] = { "cycler", "joiner",  "lipsum",   "self",
                                           "config", "request", "url_for", "get_flashed_messages" };
    const char *t = s->t;
    /* the statement keyword, for the block stack */
    size_t k = b;
    while (k < e && (isspace((unsigned char)t[k]) || t[k] == '-' || t[k] == '+'))
        k++;
    size_t kw = k;
    while (k < e && (isalnum((unsigned char)t[k]) || t[k] == '_'))
        k++;
    const char *word = t + kw;
    const size_t wl = k - kw;
    if (!output) {
        const bool opens = word_is(word, wl, "if") || word_is(word, wl, "for") || word_is(word, wl, "macro") ||
                           word_is(word, wl, "call") || word_is(word, wl, "filter");
        /* text under an if or in a macro is chosen by the conversation or the caller's options (no system
         * message, tools, thinking): a default; text under for loops alone goes into every conversation */
        const bool cond = !word_is(word, wl, "for");
        if (opens) {
            if (s->depth < DEPTH_MAX)
                s->defaulted[s->depth] = cond;
            s->depth++;
        } else if ((word_is(word, wl, "elif") || word_is(word, wl, "else")) && s->depth > 0 &&
                   s->depth <= DEPTH_MAX) {
            s->defaulted[s->depth - 1] = s->defaulted[s->depth - 1] || cond; /* the else of "no system message" */
        } else if (wl > 3 && memcmp(word, "end", 3) == 0 && s->depth > 0) {
            s->depth--;
        }
        /* a branch on the words of a message: "if 'ignore previous' in message['content']"; single words are
         * structure ('text' in content, content.type == 'image') */
        const bool compares = contains(t + k, e - k, " in ") || contains(t + k, e - k, "startswith") ||
                              contains(t + k, e - k, "==") || contains(t + k, e - k, "endswith");
        if ((word_is(word, wl, "if") || word_is(word, wl, "elif")) && compares && contains(t + k, e - k, "content")) {
            for (size_t i = k; i < e; i++)
                if (t[i] == '\'' || t[i] == '"') {
                    const char q = t[i];
                    size_t j = i + 1;
                    while (j < e && t[j] != q)
                        j += t[j] == '\\' ? 2 : 1;
                    if (j > e)
                        j = e;
                    const size_t n = j - i - 1;
                    bool markup = n == 0 || t[i + 1] == '<' || t[i + 1] == '[';
                    bool letters = false, space = false;
                    for (size_t c = i + 1; c < j && !markup; c++) {
                        letters |= isalpha((unsigned char)t[c]) != 0;
                        space |= t[c] == ' ';
                    }
                    letters &= space;
                    if (!markup && letters) {
                        add(s, i, TOK_TEMPLATE_INJECTED, "template-branches-on-content", t + kw, e - kw);
                        break; /* one finding a condition */
                    }
                    i = j;
                }
        }
    }
    bool after_pipe = false;
    const bool raising = contains(t + b, e - b, "raise_exception"); /* an error message, not the conversation */
    for (size_t i = b; i < e;) {
        const char c = t[i];
        if (c == '\'' || c == '"') {
            size_t j = i + 1;
            while (j < e && t[j] != c)
                j += t[j] == '\\' ? 2 : 1;
            if (j > e)
                j = e;
            const char *str = t + i + 1;
            const size_t n = j - i - 1;
            bool only_underscores = n > 0;
            for (size_t q = 0; q < n; q++)
                only_underscores &= str[q] == '_';
            if (only_underscores) /* the whole expression shows the name being spelt */
                add(s, i, TOK_TEMPLATE_CODE, "template-built-name", t + b, e - b);
            else if (contains(str, n, "__"))
                add(s, i, TOK_TEMPLATE_CODE, "template-dunder", t + i, j + 1 - i);
            else if (output && !raising)
                emitted(s, i, str, n);
            i = j + 1;
            after_pipe = false;
            continue;
        }
        if (isalpha((unsigned char)c) || c == '_') {
            size_t j = i;
            while (j < e && (isalnum((unsigned char)t[j]) || t[j] == '_'))
                j++;
            const char *name = t + i;
            const size_t n = j - i;
            if (n > 2 && name[0] == '_' && name[1] == '_')
                add(s, i, TOK_TEMPLATE_CODE, "template-dunder", name, n);
            else if (after_pipe && word_is(name, n, "attr"))
                add(s, i, TOK_TEMPLATE_CODE, "template-attr-filter", t + b, e - b);
            else
                for (size_t g = 0; g < sizeof gadgets / sizeof *gadgets; g++)
                    if (word_is(name, n, gadgets[g]) && (i == b || t[i - 1] != '.')) {
                        add(s, i, TOK_TEMPLATE_CODE, "template-gadget", name, n);
                        break;
                    }
            i = j;
            after_pipe = false;
            continue;
        }
        if (isdigit((unsigned char)c)) {
            size_t j = i;
            double v = 0;
            while (j < e && isdigit((unsigned char)t[j]))
                v = v * 10 + (t[j++] - '0');
            if (v > BIG_LITERAL)
                add(s, i, TOK_TEMPLATE_CODE, "template-huge-literal", t + b, e - b);
            i = j;
            after_pipe = false;
            continue;
        }
        if (c == '|')
            after_pipe = true;
        else if (!isspace((unsigned char)c))
            after_pipe = false;
        i++;
    }
}

size_t tok_template_scan(const char *tmpl, size_t len, tok_template_issue *out, size_t cap)
{
    scan s = { .t = tmpl, .len = len, .out = out, .cap = cap };
    size_t text = 0; /* start of the literal text before the next tag */
    for (size_t i = 0; i + 1 < len;) {
        if (tmpl[i] != '{' || (tmpl[i + 1] != '{' && tmpl[i + 1] != '%' && tmpl[i + 1] != '#')) {
            i++;
            continue;
        }
        s.piece_first = s.n;
        if (i > text)
            emitted(&s, text, tmpl + text, i - text);
        s.piece_first = s.n;
        const char open = tmpl[i + 1], close = open == '{' ? '}' : open;
        size_t j = i + 2;
        while (j + 1 < len && !(tmpl[j] == close && tmpl[j + 1] == '}'))
            j++;
        if (open != '#')
            scan_tag(&s, i + 2, j < len ? j : len, open == '{');
        i = j + 2 <= len ? j + 2 : len;
        text = i;
    }
    s.piece_first = s.n;
    if (text < len)
        emitted(&s, text, tmpl + text, len - text);
    return s.n;
}
