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

float *npy_read_f32_2d(const char *path, uint64_t *rows, uint64_t *cols, char *err, size_t err_len)
{
    FILE *fp = fopen(path, "rb");
    if (!fp) {
        snprintf(err, err_len, "cannot read '%s': %s", path, strerror(errno));
        return NULL;
    }
    unsigned char pre[12];
    float *data = NULL;
    char *header = NULL;
    size_t n = fread(pre, 1, sizeof pre, fp);
    if (n < 10 || memcmp(pre, "\x93NUMPY", 6) != 0 || (pre[6] != 1 && pre[6] != 2)) {
        snprintf(err, err_len, "'%s' is not a .npy file", path);
        goto done;
    }
    /* version 1: a u16 header length after the version; 2 and 3: a u32 */
    size_t skip = pre[6] == 1 ? 10 : 12, hlen = pre[6] == 1 ? (size_t)pre[8] | (size_t)pre[9] << 8
                                                            : (size_t)pre[8] | (size_t)pre[9] << 8 | (size_t)pre[10] << 16 |
                                                                  (size_t)pre[11] << 24;
    header = hlen < (1u << 20) ? malloc(hlen + 1) : NULL;
    if (!header || fseek(fp, (long)skip, SEEK_SET) != 0 || fread(header, 1, hlen, fp) != hlen) {
        snprintf(err, err_len, "'%s': its header cannot be read", path);
        goto done;
    }
    header[hlen] = '\0';
    unsigned long long r = 0, c = 0;
    const char *shape = strstr(header, "'shape':");
    if (!strstr(header, "'descr': '<f4'") || !strstr(header, "'fortran_order': False") || !shape ||
        sscanf(shape, "'shape': (%llu, %llu)", &r, &c) != 2 || r == 0 || c == 0 || r > (1ull << 32) ||
        c > (1ull << 32) || r * c > (1ull << 34)) {
        snprintf(err, err_len, "'%s' is not a 2-D little-endian float32 array in C order: %s", path, header);
        goto done;
    }
    data = malloc(r * c * sizeof *data);
    if (!data || fread(data, sizeof *data, r * c, fp) != r * c) {
        free(data);
        data = NULL;
        snprintf(err, err_len, "'%s': %llu x %llu values announced, fewer present (or out of memory)", path, r, c);
        goto done;
    }
    *rows = r;
    *cols = c;
done:
    free(header);
    fclose(fp);
    return data;
}
