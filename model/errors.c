/* model/'s errors: one filled the way every function of the layer fills it. */
#include "model.h"
#include "model_internal.h"

#include <stdarg.h>

model_status model_fail(model_error *err, model_status code, uint64_t offset, const char *subject, const char *fmt,
                        ...)
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
