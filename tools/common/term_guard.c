/* Filtered stdout and stderr (see term_guard.h). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* fopencookie */
#endif
#include "term_guard.h"
#include "gguf.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct guard {
    int fd;
    unsigned char pending[4]; /* the start of a UTF-8 sequence cut by a write */
    size_t n_pending;
} guard;

static guard guards[2];
static FILE *raw_stderr;

static bool write_all(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return false;
        p += w;
        n -= (size_t)w;
    }
    return true;
}

/* Length of the UTF-8 sequence a lead byte starts (0: not a lead byte), as RFC 3629 allows. */
static size_t utf8_len(unsigned char c)
{
    return c < 0x80 ? 1 : c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
}

/* Whether s[0..n) (n = utf8_len(s[0]) > 1) is one well-formed sequence: continuation bytes,
 * no overlong form, no surrogate, nothing past U+10FFFF. */
static bool utf8_valid(const unsigned char *s, size_t n)
{
    for (size_t i = 1; i < n; i++)
        if ((s[i] & 0xc0) != 0x80)
            return false;
    if (n == 3)
        return !(s[0] == 0xe0 && s[1] < 0xa0) && !(s[0] == 0xed && s[1] >= 0xa0);
    if (n == 4)
        return !(s[0] == 0xf0 && s[1] < 0x90) && !(s[0] == 0xf4 && s[1] >= 0x90);
    return true;
}

/* A code point as \uXXXX (past U+FFFF: its UTF-16 surrogates, \uD8XX\uDCXX, as JSON writes it, so that the
 * escape keeps a JSON string valid and decodes to the same text). */
static size_t put_code_point(char *out, uint32_t cp)
{
    if (cp > 0xffff) {
        cp -= 0x10000;
        size_t n = put_code_point(out, 0xd800 + (cp >> 10));
        return n + put_code_point(out + n, 0xdc00 + (cp & 0x3ff));
    }
    return (size_t)sprintf(out, "\\u%04x", (unsigned)cp);
}

/* A control character as \u00XX, or a stray byte as \xNN. */
static size_t put_hex(char *out, bool code_point, unsigned v)
{
    static const char hex[] = "0123456789abcdef";
    size_t n = 0;
    out[n++] = '\\';
    if (code_point) {
        memcpy(out + n, "u00", 3);
        n += 3;
    } else
        out[n++] = 'x';
    out[n++] = hex[(v >> 4) & 15];
    out[n++] = hex[v & 15];
    return n;
}

/* Escapes the complete sequences of s[0..len) into out; returns how many input bytes it used
 * (fewer than len when s ends inside a sequence that may still be completed) in *used. */
static size_t escape_some(const unsigned char *s, size_t len, char *out, size_t *used, bool final)
{
    size_t o = 0, i = 0;
    uint32_t cp;
    while (i < len) {
        unsigned char c = s[i];
        size_t n = utf8_len(c);
        if (n > 1 && i + n > len && !final) {
            bool prefix_ok = true; /* a cut sequence: keep it only while it can still become valid */
            for (size_t k = i + 1; k < len; k++)
                prefix_ok &= (s[k] & 0xc0) == 0x80;
            if (prefix_ok)
                break;
        }
        if (n == 1) {
            if (c == '\n' || c == '\t' || (c >= 0x20 && c != 0x7f))
                out[o++] = (char)c;
            else
                o += put_hex(out + o, true, c);
            i++;
        } else if (n > 1 && i + n <= len && utf8_valid(s + i, n)) {
            if (n == 2 && c == 0xc2 && s[i + 1] < 0xa0) /* C1 controls U+0080..U+009F */
                o += put_hex(out + o, true, s[i + 1]);
            else if (gguf_utf8_next((const char *)s + i, n, &cp) && gguf_codepoint_invisible(cp, false))
                o += put_code_point(out + o, cp); /* bidi controls, zero-width spaces: shown, not obeyed */
            else {
                memcpy(out + o, s + i, n);
                o += n;
            }
            i += n;
        } else {
            o += put_hex(out + o, false, c);
            i++;
        }
    }
    *used = i;
    return o;
}

size_t term_guard_escape(const unsigned char *s, size_t len, char *out)
{
    size_t used;
    return escape_some(s, len, out, &used, true);
}

static ssize_t guard_write(void *cookie, const char *buf, size_t size)
{
    guard *g = cookie;
    size_t done = 0;
    while (done < size) {
        unsigned char in[4 + 1024];
        size_t take = size - done < 1024 ? size - done : 1024;
        memcpy(in, g->pending, g->n_pending);
        memcpy(in + g->n_pending, buf + done, take);
        size_t n_in = g->n_pending + take, used;
        char out[6 * sizeof in];
        size_t n_out = escape_some(in, n_in, out, &used, false);
        if (!write_all(g->fd, out, n_out))
            return done ? (ssize_t)done : -1;
        g->n_pending = n_in - used; /* at most 3: a cut sequence's start */
        memcpy(g->pending, in + used, g->n_pending);
        done += take;
    }
    return (ssize_t)size;
}

static int guard_close(void *cookie)
{
    guard *g = cookie;
    char out[6 * 4];
    size_t n = term_guard_escape(g->pending, g->n_pending, out);
    g->n_pending = 0;
    return write_all(g->fd, out, n) ? 0 : -1;
}

/* exit() flushes the streams but does not close them: a sequence cut at the very end is written here. */
static void flush_pending(void)
{
    fflush(stdout);
    fflush(stderr);
    for (int i = 0; i < 2; i++)
        guard_close(&guards[i]);
}

static FILE *wrap(guard *g, int fd, int mode)
{
    g->fd = fd;
    FILE *f = fopencookie(g, "w", (cookie_io_functions_t){ .write = guard_write, .close = guard_close });
    if (f)
        setvbuf(f, NULL, mode, BUFSIZ);
    return f;
}

void term_guard_install(void)
{
    if (raw_stderr)
        return;
    fflush(stdout);
    fflush(stderr);
    raw_stderr = stderr;
    FILE *out = wrap(&guards[0], STDOUT_FILENO, isatty(STDOUT_FILENO) ? _IOLBF : _IOFBF);
    FILE *err = wrap(&guards[1], STDERR_FILENO, _IONBF);
    if (out)
        stdout = out;
    if (err)
        stderr = err;
    atexit(flush_pending);
}

FILE *term_guard_raw_stderr(void)
{
    return raw_stderr ? raw_stderr : stderr;
}
