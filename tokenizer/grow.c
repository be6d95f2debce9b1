/* The tokenizer's growable arrays (token lists, bigram heap, pre-tokenizer spans), its error record, and the
 * names of its statuses. */
#include "internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

bool tok_reserve(void **items, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return true;
    size_t c = *cap ? *cap : 64;
    while (c < need)
        c *= 2;
    void *p = realloc(*items, c * elem);
    if (!p)
        return false;
    *items = p;
    *cap = c;
    return true;
}

tok_status tok_fail(tok_error *err, tok_status code, uint64_t offset, const char *subject, const char *fmt, ...)
{
    if (err) {
        err->code = code;
        err->offset = offset;
        snprintf(err->subject, sizeof err->subject, "%s", subject ? subject : "");
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->message, sizeof err->message, fmt, ap);
        va_end(ap);
    }
    return code;
}

bool tok_is_identifier(const char *s, size_t len)
{
    if (len == 0 || len > 64)
        return false;
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' ||
              c == '.'))
            return false;
    }
    return true;
}

const char *tok_status_name(tok_status s)
{
    static const char *const names[] = { "TOK_OK", "TOK_E_MALFORMED", "TOK_E_UNSUPPORTED", "TOK_E_INPUT",
                                         "TOK_E_NOMEM" };
    return (unsigned)s < sizeof names / sizeof names[0] ? names[s] : "TOK_E_UNKNOWN";
}
