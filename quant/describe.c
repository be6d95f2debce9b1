/* A quantized block decoded field by field, as text, for engine authors
 * checking their own block decoding (gguf-inspect --raw). */
#include "blocks.h"

#include <stdarg.h>
#include <stdio.h>

typedef struct text {
    char *p;
    size_t cap, len;
} text;

__attribute__((format(printf, 2, 3))) static void put(text *t, const char *fmt, ...)
{
    if (t->len >= t->cap)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(t->p + t->len, t->cap - t->len, fmt, ap);
    va_end(ap);
    if (n > 0)
        t->len += (size_t)n < t->cap - t->len ? (size_t)n : t->cap - t->len - 1;
}

static void f16_field(text *t, const char *name, const uint8_t *p)
{
    uint16_t h = rd16(p);
    put(t, "  %-8s = %.9g (f16 0x%04x)\n", name, quant_f16_to_f32(h), h);
}

static void bytes_field(text *t, const char *name, const uint8_t *p, int n, bool as_signed, bool hex)
{
    put(t, "  %-8s = [", name);
    for (int i = 0; i < n; i++) {
        if (hex)
            put(t, "%s%02x", i ? " " : "", p[i]);
        else
            put(t, i ? ", %d" : "%d", as_signed ? (int)(int8_t)p[i] : (int)p[i]);
    }
    put(t, "]\n");
}

/* Nibbles in element order: low nibbles are elements 0-15, high nibbles 16-31 (ggml's Q4_0 layout). */
static void nibbles_field(text *t, const char *name, const uint8_t *qs, int n_bytes)
{
    put(t, "  %-8s = [", name);
    for (int i = 0; i < 2 * n_bytes; i++)
        put(t, i ? ", %d" : "%d", i < n_bytes ? qs[i] & 0xf : qs[i - n_bytes] >> 4);
    put(t, "]   (element order: low nibbles, then high)\n");
}

static void kq_scales_field(text *t, const uint8_t *scales)
{
    put(t, "  %-8s = [", "sc,m");
    for (int j = 0; j < 8; j++) {
        uint8_t sc, m;
        kq_scale_min(j, scales, &sc, &m);
        put(t, j ? ", %u/%u" : "%u/%u", sc, m);
    }
    put(t, "]   (6-bit scale/min per 32 values, unpacked from 12 bytes)\n");
}

size_t quant_describe_block(uint32_t type, const uint8_t *b, char *out, size_t cap)
{
    text t = { out, cap, 0 };
    if (cap == 0)
        return 0;
    out[0] = '\0';
    switch (type) {
    case GGML_TYPE_Q4_0: f16_field(&t, "d", b); nibbles_field(&t, "q (-8)", b + 2, 16); break;
    case GGML_TYPE_Q4_1: f16_field(&t, "d", b); f16_field(&t, "m", b + 2); nibbles_field(&t, "q", b + 4, 16); break;
    case GGML_TYPE_Q5_0:
        f16_field(&t, "d", b); put(&t, "  %-8s = 0x%08x (5th bit of element j = bit j)\n", "qh", rd32(b + 2));
        nibbles_field(&t, "q low", b + 6, 16); break;
    case GGML_TYPE_Q5_1:
        f16_field(&t, "d", b); f16_field(&t, "m", b + 2);
        put(&t, "  %-8s = 0x%08x (5th bit of element j = bit j)\n", "qh", rd32(b + 4));
        nibbles_field(&t, "q low", b + 8, 16); break;
    case GGML_TYPE_Q8_0: f16_field(&t, "d", b); bytes_field(&t, "qs", b + 2, 32, true, false); break;
    case GGML_TYPE_IQ4_NL: f16_field(&t, "d", b); nibbles_field(&t, "idx", b + 2, 16); break;
    case GGML_TYPE_MXFP4:
        put(&t, "  %-8s = %u (scale 2^%d)\n", "e", b[0], (int)b[0] - 127);
        nibbles_field(&t, "idx", b + 1, 16); break;
    case GGML_TYPE_Q2_K:
        f16_field(&t, "d", b + 80); f16_field(&t, "dmin", b + 82);
        bytes_field(&t, "scales", b, 16, false, true);
        put(&t, "           (per 16 values: low nibble = scale, high nibble = min)\n");
        bytes_field(&t, "qs", b + 16, 64, false, true); break;
    case GGML_TYPE_Q3_K:
        f16_field(&t, "d", b + 108); bytes_field(&t, "scales", b + 96, 12, false, true);
        bytes_field(&t, "hmask", b, 32, false, true); bytes_field(&t, "qs", b + 32, 64, false, true); break;
    case GGML_TYPE_Q4_K:
        f16_field(&t, "d", b); f16_field(&t, "dmin", b + 2); kq_scales_field(&t, b + 4);
        bytes_field(&t, "qs", b + 16, 128, false, true); break;
    case GGML_TYPE_Q5_K:
        f16_field(&t, "d", b); f16_field(&t, "dmin", b + 2); kq_scales_field(&t, b + 4);
        bytes_field(&t, "qh", b + 16, 32, false, true); bytes_field(&t, "qs", b + 48, 128, false, true); break;
    case GGML_TYPE_Q6_K:
        f16_field(&t, "d", b + 208); bytes_field(&t, "scales", b + 192, 16, true, false);
        bytes_field(&t, "ql", b, 128, false, true); bytes_field(&t, "qh", b + 128, 64, false, true); break;
    case GGML_TYPE_IQ4_XS:
        f16_field(&t, "d", b); put(&t, "  %-8s = 0x%04x\n", "scales_h", rd16(b + 2));
        bytes_field(&t, "scales_l", b + 4, 4, false, true); bytes_field(&t, "qs", b + 8, 128, false, true); break;
    default: {
        const gguf_type_traits *tt = gguf_type_traits_of(type);
        if (tt->state != GGUF_TYPE_OK || tt->block_size == 1) {
            put(&t, "  (%s has no block structure to decode)\n", tt->name);
            break;
        }
        put(&t, "  (no field-by-field view for %s yet; raw bytes)\n", tt->name);
        bytes_field(&t, "bytes", b, (int)tt->type_size, false, true);
    }
    }
    return t.len;
}
