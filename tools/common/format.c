#include "format.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

void fmt_escaped(FILE *out, const char *s, uint64_t len)
{
    for (uint64_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '\n')
            fputs("\\n", out);
        else if (c == '\t')
            fputs("\\t", out);
        else if (c == '\\')
            fputs("\\\\", out);
        else if (c == '"')
            fputs("\\\"", out);
        else if (c < 0x20 || c == 0x7f)
            fprintf(out, "\\x%02x", c);
        else
            fputc(c, out);
    }
}

static void fmt_string(FILE *out, gguf_str s, uint64_t max_chars)
{
    fputc('"', out);
    if (max_chars && s.len > max_chars) {
        /* cut on a UTF-8 boundary so the terminal shows no broken character */
        uint64_t n = max_chars;
        while (n > 0 && ((unsigned char)s.ptr[n] & 0xc0) == 0x80)
            n--;
        fmt_escaped(out, s.ptr, n);
        fprintf(out, "\"… (%" PRIu64 " bytes)", s.len);
        return;
    }
    fmt_escaped(out, s.ptr, s.len);
    fputc('"', out);
}

static void fmt_scalar(FILE *out, const gguf_value *v)
{
    switch (v->type) {
    case GGUF_VT_INT8: case GGUF_VT_INT16: case GGUF_VT_INT32: case GGUF_VT_INT64:
        fprintf(out, "%" PRId64, v->v.i64);
        break;
    case GGUF_VT_FLOAT32:
        fprintf(out, "%.9g", v->v.f64);
        break;
    case GGUF_VT_FLOAT64:
        fprintf(out, "%.17g", v->v.f64);
        break;
    case GGUF_VT_BOOL:
        fputs(v->v.b ? "true" : "false", out);
        break;
    default:
        fprintf(out, "%" PRIu64, v->v.u64);
        break;
    }
}

void fmt_value(FILE *out, const gguf_value *v, uint64_t max_items, uint64_t max_chars)
{
    if (v->type == GGUF_VT_STRING) {
        fmt_string(out, v->v.str, max_chars);
        return;
    }
    if (v->type != GGUF_VT_ARRAY) {
        fmt_scalar(out, v);
        return;
    }
    uint64_t shown = max_items && v->count > max_items ? max_items : v->count;
    if (max_items && v->count > max_items)
        fprintf(out, "[%" PRIu64 " × %s] ", v->count, gguf_value_type_name(v->elem_type));
    fputc('[', out);
    for (uint64_t i = 0; i < shown; i++) {
        if (i)
            fputs(", ", out);
        if (v->elem_type == GGUF_VT_STRING) {
            fmt_string(out, v->v.strs[i], max_chars ? 40 : 0);
        } else if (v->elem_type == GGUF_VT_ARRAY) {
            fmt_value(out, &v->v.items[i], max_items, max_chars);
        } else {
            gguf_value e;
            gguf_array_scalar(v, i, &e);
            fmt_scalar(out, &e);
        }
    }
    fputs(shown < v->count ? ", …]" : "]", out);
}

void fmt_count(uint64_t n, char *buf, size_t len)
{
    if (n >= 1000000000ull)
        snprintf(buf, len, "%.2f B", (double)n / 1e9);
    else if (n >= 1000000ull)
        snprintf(buf, len, "%.2f M", (double)n / 1e6);
    else if (n >= 1000ull)
        snprintf(buf, len, "%.1f K", (double)n / 1e3);
    else
        snprintf(buf, len, "%" PRIu64, n);
}

/* Length of the valid UTF-8 sequence at s (1-4), or 0 if invalid. */
static int utf8_seq(const unsigned char *s, uint64_t left)
{
    unsigned char c = s[0];
    int n = c < 0x80 ? 1 : (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3 : (c & 0xf8) == 0xf0 ? 4 : 0;
    if (n == 0 || (uint64_t)n > left)
        return 0;
    for (int k = 1; k < n; k++)
        if ((s[k] & 0xc0) != 0x80)
            return 0;
    uint32_t cp = n == 1 ? c : n == 2 ? (c & 0x1fu) : n == 3 ? (c & 0x0fu) : (c & 0x07u);
    for (int k = 1; k < n; k++)
        cp = cp << 6 | (s[k] & 0x3fu);
    static const uint32_t min_cp[5] = { 0, 0, 0x80, 0x800, 0x10000 };
    if (cp < min_cp[n] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
        return 0; /* overlong, out of range or a surrogate */
    return n;
}

char *utf8_sanitize(const char *s, uint64_t len)
{
    if (len > (SIZE_MAX - 1) / 3)
        return NULL;
    char *out = malloc((size_t)len * 3 + 1), *o = out;
    if (!out)
        return NULL;
    const unsigned char *p = (const unsigned char *)s;
    for (uint64_t i = 0; i < len;) {
        int n = p[i] ? utf8_seq(p + i, len - i) : 0;
        if (n == 0) {
            memcpy(o, "\xef\xbf\xbd", 3);
            o += 3;
            i++;
        } else {
            memcpy(o, p + i, (size_t)n);
            o += n;
            i += (uint64_t)n;
        }
    }
    *o = '\0';
    return out;
}

const char *meta_string(const gguf_file *f, const char *key, char *buf, size_t len)
{
    const gguf_kv *kv = gguf_find_kv(f, key);
    if (!kv || kv->value.type != GGUF_VT_STRING || len == 0)
        return NULL;
    uint64_t n = kv->value.v.str.len < len - 1 ? kv->value.v.str.len : len - 1;
    memcpy(buf, kv->value.v.str.ptr, (size_t)n);
    buf[n] = '\0';
    return buf;
}

int report_error(const char *prog, const char *path, const gguf_error *err)
{
    bool trouble = err->code == GGUF_E_IO || err->code == GGUF_E_NOMEM || err->code == GGUF_E_INVALID_ARG;
    if (trouble)
        fprintf(stderr, "%s: %s\n", prog, err->message);
    else
        fprintf(stderr, "%s: %s: error at byte %" PRIu64 ": %s [%s]\n", prog, path, err->offset, err->message,
                gguf_status_name(err->code));
    return trouble ? 2 : 1;
}
