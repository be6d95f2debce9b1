/* Strings from a file as text: UTF-8 sequences, the code points that display as nothing, and names. */
#include "gguf.h"

size_t gguf_utf8_next(const char *str, size_t len, uint32_t *cp)
{
    const unsigned char *s = (const unsigned char *)str;
    if (len == 0)
        return 0;
    const unsigned c = s[0];
    const size_t n = c < 0x80 ? 1 : c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3
                   : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
    if (n == 0 || n > len)
        return 0;
    uint32_t v = n == 1 ? c : n == 2 ? c & 0x1fu : n == 3 ? c & 0x0fu : c & 0x07u;
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        v = v << 6 | (s[i] & 0x3fu);
    }
    /* RFC 3629: no overlong form, no surrogate, nothing past U+10FFFF */
    if ((n == 3 && (v < 0x800 || (v >= 0xd800 && v <= 0xdfff))) || (n == 4 && (v < 0x10000 || v > 0x10ffff)))
        return 0;
    *cp = v;
    return n;
}

bool gguf_codepoint_invisible(uint32_t cp, bool joiners)
{
    if (cp == 0x200c || cp == 0x200d)
        return joiners;
    return cp == 0x00ad || cp == 0x034f || cp == 0x061c || cp == 0x180e || cp == 0x200b ||
           (cp >= 0x200e && cp <= 0x200f) || (cp >= 0x2028 && cp <= 0x202e) || (cp >= 0x2060 && cp <= 0x2064) ||
           (cp >= 0x2066 && cp <= 0x2069) || cp == 0xfeff || (cp >= 0xe0000 && cp <= 0xe007f);
}

bool gguf_is_identifier(const char *s, size_t len)
{
    if (len == 0 || len > 64)
        return false;
    for (size_t i = 0; i < len; i++) {
        const char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' ||
              c == '.'))
            return false;
    }
    return true;
}
