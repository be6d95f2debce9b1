/* What a file that does not start with GGUF's magic is instead. Most such "models" are failed downloads: a
 * git LFS pointer from a clone without git-lfs, a web page (a 'blob' URL, a gated model, an expired link), a
 * server's JSON or XML error, an empty file; or another format: an archive, safetensors, a pickle. Each gets
 * its name and what to do, instead of four bytes in hex. Text quoted from the file is cut short and reduced to
 * printable ASCII: it is untrusted. */
#include "file.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

enum { SNIFF_BYTES = 4096, QUOTE_CHARS = 80 };

/* The first occurrence of needle (ASCII, any case) in [p, p+n), or NULL. */
static const uint8_t *find_nocase(const uint8_t *p, size_t n, const char *needle)
{
    const size_t k = strlen(needle);
    for (size_t i = 0; i + k <= n; i++)
        if (strncasecmp((const char *)p + i, needle, k) == 0)
            return p + i;
    return NULL;
}

/* The text between <tag> and </tag> (any case) in [p, p+n), quoted; false when absent. */
static bool element_text(const uint8_t *p, size_t n, const char *tag, char out[QUOTE_CHARS + 4])
{
    char open[32], close[32];
    snprintf(open, sizeof open, "<%s", tag);
    snprintf(close, sizeof close, "</%s>", tag);
    const uint8_t *a = find_nocase(p, n, open);
    if (!a)
        return false;
    const uint8_t *gt = memchr(a, '>', (size_t)(p + n - a));
    if (!gt)
        return false;
    const uint8_t *b = find_nocase(gt + 1, (size_t)(p + n - gt - 1), close);
    gguf_excerpt(gt + 1, b ? (size_t)(b - gt - 1) : (size_t)(p + n - gt - 1), out, QUOTE_CHARS + 4);
    return out[0] != 0;
}

/* The value of "size <n>" and "oid sha256:<hex>" in an LFS pointer (https://git-lfs.com/spec/v1). */
static gguf_status lfs_pointer(const uint8_t *p, size_t n, uint64_t size, gguf_error *err)
{
    unsigned long long bytes = 0;
    char oid[QUOTE_CHARS + 4] = "", sz[32] = "?";
    const uint8_t *s = find_nocase(p, n, "\nsize ");
    if (s) { /* the digits within the n bytes (no sscanf: the buffer has no terminating NUL) */
        const uint8_t *d = s + 6;
        int digits = 0;
        while (d < p + n && isdigit(*d) && digits < 19)
            bytes = bytes * 10 + (unsigned)(*d++ - '0'), digits++;
        if (digits)
            gguf_format_size(bytes, sz, sizeof sz);
    }
    const uint8_t *o = find_nocase(p, n, "\noid sha256:");
    if (o) {
        const uint8_t *hex = o + 12, *end = hex;
        while (end < p + n && isxdigit(*end) && end - hex < 64)
            end++;
        gguf_excerpt(hex, (size_t)(end - hex), oid, sizeof oid);
    }
    return gguf_fail(err, GGUF_E_LFS_POINTER, 0, "",
                     "this is a git LFS pointer (%llu bytes of text), not the model: the repository was cloned "
                     "without git-lfs, so the model itself (%s, sha256 %s) was never downloaded. In the clone run "
                     "'git lfs install && git lfs pull', or download the file alone "
                     "('huggingface-cli download REPO FILE', or its 'resolve' URL)",
                     (unsigned long long)size, sz, oid[0] ? oid : "?");
}

static gguf_status web_page(const char *kind, const char *what, gguf_error *err)
{
    return gguf_fail(err, GGUF_E_WEB_PAGE, 0, "",
                     "this is %s (%s), not a model: the download saved a server's page in place of the file. "
                     "Usual causes: a 'blob' URL instead of 'resolve', a gated or private model fetched without "
                     "a token, an expired link, a misspelt file name. Download it again "
                     "('huggingface-cli download REPO FILE') and check its size and sha256",
                     kind, what);
}

/* A server's JSON error: the "error" or "message" member's text when there is one. */
static gguf_status json_page(const uint8_t *p, size_t n, gguf_error *err)
{
    char what[QUOTE_CHARS + 32] = "", text[QUOTE_CHARS + 4];
    static const char *const members[] = { "\"error\"", "\"message\"", "\"detail\"" };
    for (size_t m = 0; m < sizeof members / sizeof *members && !what[0]; m++) {
        const uint8_t *k = find_nocase(p, n, members[m]);
        if (!k)
            continue;
        const uint8_t *q = memchr(k + strlen(members[m]), '"', (size_t)(p + n - k - strlen(members[m])));
        if (!q)
            continue;
        const uint8_t *e = memchr(q + 1, '"', (size_t)(p + n - q - 1));
        gguf_excerpt(q + 1, e ? (size_t)(e - q - 1) : (size_t)(p + n - q - 1), text, sizeof text);
        snprintf(what, sizeof what, "%.*s: \"%s\"", (int)(strlen(members[m]) - 2), members[m] + 1, text);
    }
    if (!what[0]) {
        gguf_excerpt(p, n, text, sizeof text);
        snprintf(what, sizeof what, "it begins \"%s\"", text);
    }
    return web_page("a JSON document", what, err);
}

static gguf_status markup_page(const uint8_t *p, size_t n, gguf_error *err)
{
    char text[QUOTE_CHARS + 4], what[QUOTE_CHARS + 32];
    if (find_nocase(p, n < 64 ? n : 64, "<?xml") && !find_nocase(p, n, "<html")) {
        /* an object store's error: <Error><Code>AccessDenied</Code><Message>...</Message></Error> */
        if (element_text(p, n, "Code", text))
            snprintf(what, sizeof what, "error code \"%s\"", text);
        else
            gguf_excerpt(p, n, text, sizeof text), snprintf(what, sizeof what, "it begins \"%s\"", text);
        return web_page("an XML document", what, err);
    }
    if (element_text(p, n, "title", text))
        snprintf(what, sizeof what, "titled \"%s\"", text);
    else
        gguf_excerpt(p, n, text, sizeof text), snprintf(what, sizeof what, "it begins \"%s\"", text);
    return web_page("an HTML page", what, err);
}

typedef struct signature {
    const char *magic;
    size_t len, at;
    const char *name, *advice;
} signature;

/* Formats people mistake for (or wrap around) a GGUF file. */
static const signature signatures[] = {
    { "\x1f\x8b", 2, 0, "a gzip-compressed file", "decompress it first (gunzip), then check what it holds" },
    { "PK\x03\x04", 4, 0, "a zip archive (PyTorch .bin and .pt checkpoints are zip archives too)",
      "unzip it if it is an archive of the model; a PyTorch checkpoint is converted to GGUF with llama.cpp's "
      "convert_hf_to_gguf.py" },
    { "\xfd" "7zXZ\x00", 6, 0, "an xz-compressed file", "decompress it first (unxz)" },
    { "\x28\xb5\x2f\xfd", 4, 0, "a zstd-compressed file", "decompress it first (unzstd)" },
    { "BZh", 3, 0, "a bzip2-compressed file", "decompress it first (bunzip2)" },
    { "7z\xbc\xaf\x27\x1c", 6, 0, "a 7-Zip archive", "extract it first (7z x)" },
    { "ustar", 5, 257, "a tar archive", "extract it first (tar -xf), then check the .gguf inside" },
    { "\x80\x02", 2, 0, "a Python pickle (an old PyTorch checkpoint)",
      "convert the model to GGUF with llama.cpp's convert_hf_to_gguf.py; never unpickle untrusted files" },
    { "\x80\x04", 2, 0, "a Python pickle (an old PyTorch checkpoint)",
      "convert the model to GGUF with llama.cpp's convert_hf_to_gguf.py; never unpickle untrusted files" },
};

/* safetensors: an 8-byte little-endian header length, then a JSON object of that many bytes. */
static bool is_safetensors(const uint8_t *p, uint64_t size)
{
    if (size < 10 || p[8] != '{')
        return false;
    uint64_t len = 0;
    for (int i = 7; i >= 0; i--)
        len = len << 8 | p[i];
    return len >= 2 && len <= size - 8;
}

gguf_status gguf_foreign_file(const uint8_t *bytes, uint64_t size, gguf_error *err)
{
    if (size == 0)
        return gguf_fail(err, GGUF_E_EMPTY_FILE, 0, "",
                         "the file is empty (0 bytes): the download or copy never wrote anything; download it again");
    const size_t n = size < SNIFF_BYTES ? (size_t)size : SNIFF_BYTES;
    for (size_t i = 0; i < sizeof signatures / sizeof *signatures; i++) {
        const signature *s = &signatures[i];
        if (size >= s->at + s->len && memcmp(bytes + s->at, s->magic, s->len) == 0)
            return gguf_fail(err, GGUF_E_FOREIGN_FORMAT, 0, "", "this is %s, not a GGUF file: %s", s->name,
                             s->advice);
    }
    if (is_safetensors(bytes, size))
        return gguf_fail(err, GGUF_E_FOREIGN_FORMAT, 0, "",
                         "this is a safetensors file, not GGUF: convert the model with llama.cpp's "
                         "convert_hf_to_gguf.py (or download the repository's .gguf files)");
    size_t lead = 0; /* a UTF-8 byte-order mark and whitespace before a text document */
    if (n >= 3 && memcmp(bytes, "\xef\xbb\xbf", 3) == 0)
        lead = 3;
    while (lead < n && isspace(bytes[lead]))
        lead++;
    const uint8_t *p = bytes + lead;
    const size_t left = n - lead;
    if (left >= 24 && memcmp(p, "version https://git-lfs.", 24) == 0)
        return lfs_pointer(p, left, size, err);
    if (left && p[0] == '<')
        return markup_page(p, left, err);
    if (left && (p[0] == '{' || p[0] == '['))
        return json_page(p, left, err);
    char shown[4 * 4 + 1] = "";
    for (uint64_t i = 0; i < 4 && i < size; i++)
        snprintf(shown + 4 * i, 5, "\\x%02x", bytes[i]);
    const bool legacy = size >= 4 && (memcmp(bytes, "tjgg", 4) == 0 || memcmp(bytes, "lmgg", 4) == 0 ||
                                      memcmp(bytes, "fmgg", 4) == 0);
    return gguf_fail(err, GGUF_E_BAD_MAGIC, 0, "", "not a GGUF file: it starts with %s, expected \"GGUF\"%s", shown,
                     legacy ? " (this is a pre-GGUF GGML/GGJT file: convert it with llama.cpp)" : "");
}
