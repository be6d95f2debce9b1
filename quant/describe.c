/* A quantized block decoded field by field, as text, for engine authors
 * checking their own block decoding (gguf-inspect --raw). */
#include "blocks.h"

#include <stdarg.h>
#include <stdio.h>

typedef quant_text text;

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

/* One function a type with fields to show (type_table.c's rows name them). */
void quant_describe_q4_0(text *t, const uint8_t *b)
{
    f16_field(t, "d", b);
    nibbles_field(t, "q (-8)", b + 2, 16);
}

void quant_describe_q4_1(text *t, const uint8_t *b)
{
    f16_field(t, "d", b);
    f16_field(t, "m", b + 2);
    nibbles_field(t, "q", b + 4, 16);
}

void quant_describe_q5_0(text *t, const uint8_t *b)
{
    f16_field(t, "d", b);
    put(t, "  %-8s = 0x%08x (5th bit of element j = bit j)\n", "qh", rd32(b + 2));
    nibbles_field(t, "q low", b + 6, 16);
}

void quant_describe_q5_1(text *t, const uint8_t *b)
{
    f16_field(t, "d", b);
    f16_field(t, "m", b + 2);
    put(t, "  %-8s = 0x%08x (5th bit of element j = bit j)\n", "qh", rd32(b + 4));
    nibbles_field(t, "q low", b + 8, 16);
}

void quant_describe_q8_0(text *t, const uint8_t *b)
{
    f16_field(t, "d", b);
    bytes_field(t, "qs", b + 2, 32, true, false);
}

void quant_describe_iq4_nl(text *t, const uint8_t *b)
{
    f16_field(t, "d", b);
    nibbles_field(t, "idx", b + 2, 16);
}

void quant_describe_mxfp4(text *t, const uint8_t *b)
{
    put(t, "  %-8s = %u (scale 2^%d)\n", "e", b[0], (int)b[0] - 127);
    nibbles_field(t, "idx", b + 1, 16);
}

void quant_describe_nvfp4(text *t, const uint8_t *b)
{
    for (unsigned s = 0; s < 4; s++) {
        char name[16];
        snprintf(name, sizeof name, "d[%u]", s);
        put(t, "  %-8s = 0x%02x (ue4m3 %g)\n", name, b[s], 2.0 * quant_ue4m3_half(b[s]));
    }
    nibbles_field(t, "qs", b + 4, 32);
    put(t, "           (per 16 values: 8 bytes, low nibbles the first 8, high nibbles the next 8)\n");
}

void quant_describe_q2_k(text *t, const uint8_t *b)
{
    f16_field(t, "d", b + 80);
    f16_field(t, "dmin", b + 82);
    bytes_field(t, "scales", b, 16, false, true);
    put(t, "           (per 16 values: low nibble = scale, high nibble = min)\n");
    bytes_field(t, "qs", b + 16, 64, false, true);
}

void quant_describe_q3_k(text *t, const uint8_t *b)
{
    f16_field(t, "d", b + 108);
    bytes_field(t, "scales", b + 96, 12, false, true);
    bytes_field(t, "hmask", b, 32, false, true);
    bytes_field(t, "qs", b + 32, 64, false, true);
}

void quant_describe_q4_k(text *t, const uint8_t *b)
{
    f16_field(t, "d", b);
    f16_field(t, "dmin", b + 2);
    kq_scales_field(t, b + 4);
    bytes_field(t, "qs", b + 16, 128, false, true);
}

void quant_describe_q5_k(text *t, const uint8_t *b)
{
    f16_field(t, "d", b);
    f16_field(t, "dmin", b + 2);
    kq_scales_field(t, b + 4);
    bytes_field(t, "qh", b + 16, 32, false, true);
    bytes_field(t, "qs", b + 48, 128, false, true);
}

void quant_describe_q6_k(text *t, const uint8_t *b)
{
    f16_field(t, "d", b + 208);
    bytes_field(t, "scales", b + 192, 16, true, false);
    bytes_field(t, "ql", b, 128, false, true);
    bytes_field(t, "qh", b + 128, 64, false, true);
}

void quant_describe_iq4_xs(text *t, const uint8_t *b)
{
    f16_field(t, "d", b);
    put(t, "  %-8s = 0x%04x\n", "scales_h", rd16(b + 2));
    bytes_field(t, "scales_l", b + 4, 4, false, true);
    bytes_field(t, "qs", b + 8, 128, false, true);
}

size_t quant_describe_block(uint32_t type, const uint8_t *b, char *out, size_t cap)
{
    text t = { out, cap, 0 };
    if (cap == 0)
        return 0;
    out[0] = '\0';
    const quant_type_row *r = quant_type_row_of(type);
    const gguf_type_traits *tt = gguf_type_traits_of(type);
    if (r->describe)
        r->describe(&t, b);
    else if (tt->state != GGUF_TYPE_OK || tt->block_size == 1)
        put(&t, "  (%s has no block structure to decode)\n", tt->name);
    else {
        put(&t, "  (no field-by-field view for %s yet; raw bytes)\n", tt->name);
        bytes_field(&t, "bytes", b, (int)tt->type_size, false, true);
    }
    return t.len;
}
