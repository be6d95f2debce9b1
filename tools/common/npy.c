/* .npy v1.0: "\x93NUMPY", 1, 0, u16 header length, a Python dict literal
 * padded with spaces and ending in '\n' so the data starts 64-byte aligned,
 * then the raw little-endian data (numpy/lib/format.py documents it). */
#include "npy.h"
#include "atomic.h"
#include "read_file.h"

#include <errno.h>
#include <stdbool.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct npy_job {
    const char *header;
    int header_len;
    uint64_t total;
    npy_fill_fn fill;
    void *user;
    size_t chunk;
} npy_job;

static int write_body(void *user, FILE *fp)
{
    const npy_job *j = user;
    int len = j->header_len;
    uint8_t magic[10] = { 0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (uint8_t)(len & 0xff), (uint8_t)(len >> 8) };
    bool ok = fwrite(magic, 1, 10, fp) == 10 && fwrite(j->header, 1, (size_t)len, fp) == (size_t)len;
    float *buf = malloc(j->chunk * sizeof(float));
    ok = ok && buf;
    for (uint64_t at = 0; ok && at < j->total; at += j->chunk) {
        size_t n = j->total - at < j->chunk ? (size_t)(j->total - at) : j->chunk;
        ok = j->fill(j->user, at, buf, n) == 0 && fwrite(buf, sizeof(float), n, fp) == n;
    }
    free(buf);
    return ok ? 0 : -1;
}

int npy_write_f32(const char *path, const uint64_t *shape, int ndim, npy_fill_fn fill, void *user, size_t chunk,
                  char *err, size_t err_len)
{
    char header[512];
    int len = snprintf(header, sizeof header, "{'descr': '<f4', 'fortran_order': False, 'shape': (");
    uint64_t total = 1;
    for (int d = 0; d < ndim; d++) {
        len += snprintf(header + len, sizeof header - (size_t)len, "%" PRIu64 "%s", shape[d],
                        ndim == 1 ? "," : d + 1 < ndim ? ", " : "");
        total *= shape[d];
    }
    len += snprintf(header + len, sizeof header - (size_t)len, "), }");
    const int prefix = 10, padded = ((prefix + len + 1 + 63) / 64) * 64 - prefix;
    while (len < padded - 1)
        header[len++] = ' ';
    header[len++] = '\n';
    npy_job j = { header, len, total, fill, user, chunk };
    return atomic_write(path, write_body, &j, err, err_len);
}

/* The element types read, as numpy's header names them: f16, f32, f64 little-endian, and bfloat16 (ml_dtypes'
 * type saves as raw two-byte values, '<V2'). */
typedef enum npy_elem { NPY_F16, NPY_F32, NPY_F64, NPY_BF16, NPY_OTHER } npy_elem;

static npy_elem elem_of(const char *header, size_t *size)
{
    static const struct {
        const char *descr;
        npy_elem e;
        size_t size;
    } known[] = { { "'descr': '<f2'", NPY_F16, 2 }, { "'descr': '<f4'", NPY_F32, 4 }, { "'descr': '<f8'", NPY_F64, 8 },
                  { "'descr': '<V2'", NPY_BF16, 2 }, { "'descr': '|V2'", NPY_BF16, 2 },
                  { "'descr': 'bfloat16'", NPY_BF16, 2 } };
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        if (strstr(header, known[i].descr)) {
            *size = known[i].size;
            return known[i].e;
        }
    return NPY_OTHER;
}

float npy_half_to_float(uint16_t h)
{
    const uint32_t sign = (uint32_t)(h >> 15) << 31, exp = (h >> 10) & 0x1f, man = h & 0x3ff;
    float f;
    if (exp == 0) {
        f = (float)man * 5.9604644775390625e-8f; /* 2^-24: subnormals and zero */
        uint32_t b;
        memcpy(&b, &f, 4);
        b |= sign;
        memcpy(&f, &b, 4);
        return f;
    }
    const uint32_t b = sign | (exp == 31 ? 0x7f800000u | man << 13 : (exp + 112) << 23 | man << 13);
    memcpy(&f, &b, 4);
    return f;
}

static float elem_to_float(const unsigned char *p, npy_elem e)
{
    float f;
    switch (e) {
    case NPY_F16: return npy_half_to_float((uint16_t)(p[0] | p[1] << 8));
    case NPY_BF16: {
        const uint32_t b = (uint32_t)(p[0] | p[1] << 8) << 16;
        memcpy(&f, &b, 4);
        return f;
    }
    case NPY_F64: {
        double d;
        memcpy(&d, p, 8);
        return (float)d;
    }
    default: memcpy(&f, p, 4); return f;
    }
}

float *npy_parse_floats(const unsigned char *buf, size_t len, const char *name, uint64_t shape[NPY_MAX_DIMS],
                        int *ndim, char *err, size_t err_len)
{
    if (len < 10 || memcmp(buf, "\x93NUMPY", 6) != 0 || (buf[6] != 1 && buf[6] != 2 && buf[6] != 3)) {
        snprintf(err, err_len, "'%s' is not a .npy array", name);
        return NULL;
    }
    /* version 1: a u16 header length after the version; 2 and 3: a u32 */
    const size_t skip = buf[6] == 1 ? 10 : 12;
    const size_t hlen = buf[6] == 1 || len < 12 ? (size_t)buf[8] | (size_t)buf[9] << 8
                                                : (size_t)buf[8] | (size_t)buf[9] << 8 | (size_t)buf[10] << 16 |
                                                      (size_t)buf[11] << 24;
    if (skip > len || hlen > len - skip || hlen >= (1u << 20)) {
        snprintf(err, err_len, "'%s': its header runs past its end", name);
        return NULL;
    }
    char header[(1u << 12) + 1];
    const size_t shown = hlen < sizeof header - 1 ? hlen : sizeof header - 1;
    for (size_t i = 0; i < shown; i++) /* the header is shown in messages: printable ASCII only */
        header[i] = buf[skip + i] >= 0x20 && buf[skip + i] < 0x7f ? (char)buf[skip + i] : '?';
    header[shown] = '\0';
    size_t esize = 0;
    const npy_elem e = elem_of(header, &esize);
    const char *sh = strstr(header, "'shape': (");
    if (e == NPY_OTHER || !strstr(header, "'fortran_order': False") || !sh) {
        snprintf(err, err_len, "'%s' is not a little-endian float array (f16, bf16, f32 or f64) in C order: %.200s",
                 name, header);
        return NULL;
    }
    /* the shape tuple: "(a, b, c)" or "(a,)" */
    const char *q = sh + strlen("'shape': (");
    uint64_t total = 1;
    int d = 0;
    while (*q && *q != ')') {
        char *end;
        unsigned long long v = strtoull(q, &end, 10);
        if (end == q || d == NPY_MAX_DIMS || v == 0 || v > (1ull << 34) || total > (1ull << 34) / v) {
            snprintf(err, err_len, "'%s': a shape of up to %d dimensions of at most 2^34 values in all is read: %.200s",
                     name, NPY_MAX_DIMS, header);
            return NULL;
        }
        shape[d++] = v;
        total *= v;
        q = end;
        while (*q == ',' || *q == ' ')
            q++;
    }
    if (d == 0) {
        snprintf(err, err_len, "'%s' holds a scalar, not an array", name);
        return NULL;
    }
    const unsigned char *raw = buf + skip + hlen;
    if (total > (len - skip - hlen) / esize) {
        snprintf(err, err_len, "'%s': %llu values announced, fewer present", name, (unsigned long long)total);
        return NULL;
    }
    float *data = malloc(total * sizeof *data);
    if (!data) {
        snprintf(err, err_len, "'%s': out of memory for %llu values", name, (unsigned long long)total);
        return NULL;
    }
    for (uint64_t i = 0; i < total; i++)
        data[i] = elem_to_float(raw + i * esize, e);
    *ndim = d;
    return data;
}

float npy_rounding(const unsigned char *buf, size_t len)
{
    char header[257];
    const size_t n = len > 10 + 256 ? 256 : len > 10 ? len - 10 : 0;
    for (size_t i = 0; i < n; i++)
        header[i] = buf[10 + i] >= 0x20 && buf[10 + i] < 0x7f ? (char)buf[10 + i] : '?';
    header[n] = '\0';
    size_t esize;
    const npy_elem e = elem_of(header, &esize);
    return e == NPY_F16 ? 0x1p-11f : e == NPY_BF16 ? 0x1p-8f : 0.0f;
}

float *npy_read_floats(const char *path, uint64_t shape[NPY_MAX_DIMS], int *ndim, char *err, size_t err_len)
{
    size_t len;
    unsigned char *buf = read_file_bytes(path, (size_t)1 << 36, &len, err, err_len);
    if (!buf)
        return NULL;
    float *data = npy_parse_floats(buf, len, path, shape, ndim, err, err_len);
    free(buf);
    return data;
}
