/* The engine's error record and the names of its statuses and probe ops. */
#include "internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

engine_status engine_fail(engine_error *err, engine_status code, uint64_t offset, const char *subject,
                          const char *fmt, ...)
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

bool engine_status_is_file_fault(engine_status s)
{
    return s == ENGINE_E_MODEL;
}

const char *engine_status_name(engine_status s)
{
    static const char *const names[] = { "ENGINE_OK", "ENGINE_E_ARCH", "ENGINE_E_MODEL",
                                         "ENGINE_E_INPUT", "ENGINE_E_NOMEM", "ENGINE_E_BACKEND" };
    return (unsigned)s < sizeof names / sizeof names[0] ? names[s] : "ENGINE_E_UNKNOWN";
}

const char *engine_op_name(engine_op op)
{
    static const char *const names[ENGINE_OP_COUNT] = {
        "inp_embd", "attn_norm", "q", "k", "v", "attn", "attn_out", "attn_post_norm", "ffn_norm", "ffn_act", "ffn_out",
        "ffn_post_norm", "l_out", "result_norm",
    };
    return (unsigned)op < ENGINE_OP_COUNT ? names[op] : op == ENGINE_OP_COUNT ? "logits" : "?";
}
