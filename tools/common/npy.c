/* .npy v1.0: "\x93NUMPY", 1, 0, u16 header length, a Python dict literal
 * padded with spaces and ending in '\n' so the data starts 64-byte aligned,
 * then the raw little-endian data (numpy/lib/format.py documents it). */
#include "npy.h"
#include "atomic.h"

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

static float half_to_float(uint16_t h)
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
    case NPY_F16: return half_to_float((uint16_t)(p[0] | p[1] << 8));
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

float *npy_read_floats(const char *path, uint64_t shape[NPY_MAX_DIMS], int *ndim, char *err, size_t err_len)
{
    FILE *fp = fopen(path, "rb");
    if (!fp) {
        snprintf(err, err_len, "cannot read '%s': %s", path, strerror(errno));
        return NULL;
    }
    unsigned char pre[12];
    float *data = NULL;
    char *header = NULL;
    unsigned char *raw = NULL;
    size_t n = fread(pre, 1, sizeof pre, fp);
    if (n < 10 || memcmp(pre, "\x93NUMPY", 6) != 0 || (pre[6] != 1 && pre[6] != 2)) {
        snprintf(err, err_len, "'%s' is not a .npy file", path);
        goto done;
    }
    /* version 1: a u16 header length after the version; 2 and 3: a u32 */
    const size_t skip = pre[6] == 1 ? 10 : 12;
    const size_t hlen = pre[6] == 1 ? (size_t)pre[8] | (size_t)pre[9] << 8
                                    : (size_t)pre[8] | (size_t)pre[9] << 8 | (size_t)pre[10] << 16 | (size_t)pre[11] << 24;
    header = hlen < (1u << 20) ? malloc(hlen + 1) : NULL;
    if (!header || fseek(fp, (long)skip, SEEK_SET) != 0 || fread(header, 1, hlen, fp) != hlen) {
        snprintf(err, err_len, "'%s': its header cannot be read", path);
        goto done;
    }
    header[hlen] = '\0';
    for (size_t i = 0; i < hlen; i++) /* the header is shown in messages: printable ASCII only */
        header[i] = header[i] >= 0x20 && header[i] < 0x7f ? header[i] : '?';
    size_t esize = 0;
    const npy_elem e = elem_of(header, &esize);
    const char *sh = strstr(header, "'shape': (");
    if (e == NPY_OTHER || !strstr(header, "'fortran_order': False") || !sh) {
        snprintf(err, err_len, "'%s' is not a little-endian float array (f16, bf16, f32 or f64) in C order: %.200s",
                 path, header);
        goto done;
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
                     path, NPY_MAX_DIMS, header);
            goto done;
        }
        shape[d++] = v;
        total *= v;
        q = end;
        while (*q == ',' || *q == ' ')
            q++;
    }
    if (d == 0) {
        snprintf(err, err_len, "'%s' holds a scalar, not an array", path);
        goto done;
    }
    raw = malloc(total * esize);
    data = raw ? malloc(total * sizeof *data) : NULL;
    if (!data || fread(raw, esize, total, fp) != total) {
        free(data);
        data = NULL;
        snprintf(err, err_len, "'%s': %llu values announced, fewer present (or out of memory)", path,
                 (unsigned long long)total);
        goto done;
    }
    for (uint64_t i = 0; i < total; i++)
        data[i] = elem_to_float(raw + i * esize, e);
    *ndim = d;
done:
    free(raw);
    free(header);
    fclose(fp);
    return data;
}
