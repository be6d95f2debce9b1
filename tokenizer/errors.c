/* The tokenizer's error record and the names of its statuses. */
#include "internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

tok_status tok_fail(tok_error *err, tok_status code, uint64_t offset, const char *subject, const char *fmt, ...)
{
    if (err) {
        err->code = code;
        err->offset = offset;
        va_list ap;
        va_start(ap, fmt);
        gguf_error_textv(err->subject, err->message, subject, fmt, ap);
        va_end(ap);
    }
    return code;
}

const char *tok_status_name(tok_status s)
{
    static const char *const names[] = { "TOK_OK", "TOK_E_MALFORMED", "TOK_E_UNSUPPORTED", "TOK_E_INPUT",
                                         "TOK_E_NOMEM" };
    return (unsigned)s < sizeof names / sizeof names[0] ? names[s] : "TOK_E_UNKNOWN";
}
