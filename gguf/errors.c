/* Status names, error records and human sizes. */
#include "internal.h"

#include <stdio.h>
#include <string.h>

static const char *const status_names[GGUF_STATUS_COUNT] = {
    [GGUF_OK] = "GGUF_OK",
    [GGUF_E_IO] = "GGUF_E_IO",
    [GGUF_E_NOMEM] = "GGUF_E_NOMEM",
    [GGUF_E_INVALID_ARG] = "GGUF_E_INVALID_ARG",
    [GGUF_E_BAD_MAGIC] = "GGUF_E_BAD_MAGIC",
    [GGUF_E_BIG_ENDIAN] = "GGUF_E_BIG_ENDIAN",
    [GGUF_E_VERSION] = "GGUF_E_VERSION",
    [GGUF_E_TRUNCATED] = "GGUF_E_TRUNCATED",
    [GGUF_E_TENSOR_COUNT] = "GGUF_E_TENSOR_COUNT",
    [GGUF_E_KV_COUNT] = "GGUF_E_KV_COUNT",
    [GGUF_E_STRING_LENGTH] = "GGUF_E_STRING_LENGTH",
    [GGUF_E_VALUE_TYPE] = "GGUF_E_VALUE_TYPE",
    [GGUF_E_ARRAY_TYPE] = "GGUF_E_ARRAY_TYPE",
    [GGUF_E_ARRAY_COUNT] = "GGUF_E_ARRAY_COUNT",
    [GGUF_E_ARRAY_DEPTH] = "GGUF_E_ARRAY_DEPTH",
    [GGUF_E_EMPTY_KEY] = "GGUF_E_EMPTY_KEY",
    [GGUF_E_DUPLICATE_KEY] = "GGUF_E_DUPLICATE_KEY",
    [GGUF_E_EMPTY_NAME] = "GGUF_E_EMPTY_NAME",
    [GGUF_E_DUPLICATE_NAME] = "GGUF_E_DUPLICATE_NAME",
    [GGUF_E_NUL_IN_NAME] = "GGUF_E_NUL_IN_NAME",
    [GGUF_E_N_DIMS] = "GGUF_E_N_DIMS",
    [GGUF_E_ZERO_DIM] = "GGUF_E_ZERO_DIM",
    [GGUF_E_ELEMENT_OVERFLOW] = "GGUF_E_ELEMENT_OVERFLOW",
    [GGUF_E_SIZE_OVERFLOW] = "GGUF_E_SIZE_OVERFLOW",
    [GGUF_E_UNKNOWN_TYPE] = "GGUF_E_UNKNOWN_TYPE",
    [GGUF_E_REMOVED_TYPE] = "GGUF_E_REMOVED_TYPE",
    [GGUF_E_BLOCK_MULTIPLE] = "GGUF_E_BLOCK_MULTIPLE",
    [GGUF_E_MISALIGNED] = "GGUF_E_MISALIGNED",
    [GGUF_E_DATA_PAST_END] = "GGUF_E_DATA_PAST_END",
    [GGUF_E_OVERLAP] = "GGUF_E_OVERLAP",
    [GGUF_E_ALIGNMENT] = "GGUF_E_ALIGNMENT",
    [GGUF_E_KEY_NOT_FOUND] = "GGUF_E_KEY_NOT_FOUND",
    [GGUF_E_KEY_TYPE] = "GGUF_E_KEY_TYPE",
    [GGUF_E_TENSOR_NOT_FOUND] = "GGUF_E_TENSOR_NOT_FOUND",
    [GGUF_E_SPLIT] = "GGUF_E_SPLIT",
    [GGUF_E_EMPTY_FILE] = "GGUF_E_EMPTY_FILE",
    [GGUF_E_LFS_POINTER] = "GGUF_E_LFS_POINTER",
    [GGUF_E_WEB_PAGE] = "GGUF_E_WEB_PAGE",
    [GGUF_E_FOREIGN_FORMAT] = "GGUF_E_FOREIGN_FORMAT",
};

const char *gguf_status_name(gguf_status s)
{
    return (unsigned)s < GGUF_STATUS_COUNT ? status_names[s] : "GGUF_E_?";
}

gguf_status gguf_fail(gguf_error *err, gguf_status code, uint64_t offset, const char *subject,
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

void gguf_error_textv(char subject[GGUF_ERROR_SUBJECT_SIZE], char message[GGUF_ERROR_MESSAGE_SIZE], const char *subj,
                      const char *fmt, va_list ap)
{
    snprintf(subject, GGUF_ERROR_SUBJECT_SIZE, "%s", subj ? subj : "");
    vsnprintf(message, GGUF_ERROR_MESSAGE_SIZE, fmt, ap);
}

void gguf_format_size(uint64_t bytes, char *buf, size_t n)
{
    static const char *const units[] = { "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
    if (bytes < 1024) {
        snprintf(buf, n, "%llu B", (unsigned long long)bytes);
        return;
    }
    double v = (double)bytes / 1024.0;
    size_t u = 0;
    while (v >= 1024.0 && u + 1 < sizeof units / sizeof units[0]) {
        v /= 1024.0;
        u++;
    }
    snprintf(buf, n, v < 10 ? "%.2f %s" : v < 100 ? "%.1f %s" : "%.0f %s", v, units[u]);
}

bool gguf_tensor_nbytes(uint32_t type, const uint64_t ne[GGUF_MAX_DIMS], uint64_t *out)
{
    const gguf_type_traits *t = gguf_type_traits_of(type);
    if (t->state != GGUF_TYPE_OK || ne[0] % t->block_size != 0)
        return false;
    uint64_t n;
    if (!gguf_mul_ok(ne[0] / t->block_size, t->type_size, &n))
        return false;
    for (int d = 1; d < GGUF_MAX_DIMS; d++)
        if (!gguf_mul_ok(n, ne[d], &n))
            return false;
    *out = n;
    return true;
}

void gguf_excerpt(const void *p, size_t n, char *out, size_t cap)
{
    const unsigned char *b = p;
    size_t o = 0, i = 0;
    bool space = false;
    for (; i < n && o + 2 + 4 <= cap; i++) { /* room for a space and a character, then "..." and the NUL */
        if (b[i] == ' ' || (b[i] >= '\t' && b[i] <= '\r')) {
            space = o > 0;
            continue;
        }
        if (space)
            out[o++] = ' ';
        space = false;
        out[o++] = b[i] >= 0x20 && b[i] < 0x7f ? (char)b[i] : '?';
    }
    if (i < n)
        memcpy(out + o, "...", 3), o += 3;
    out[o] = 0;
}
