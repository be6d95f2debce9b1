/* .npy v1.0: "\x93NUMPY", 1, 0, u16 header length, a Python dict literal
 * padded with spaces and ending in '\n' so the data starts 64-byte aligned,
 * then the raw little-endian data (numpy/lib/format.py documents it). */
#include "npy.h"
#include "atomic.h"

#include <stdbool.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

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
