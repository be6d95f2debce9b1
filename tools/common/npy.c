/* .npy v1.0: "\x93NUMPY", 1, 0, u16 header length, a Python dict literal
 * padded with spaces and ending in '\n' so the data starts 64-byte aligned,
 * then the raw little-endian data (numpy/lib/format.py documents it). */
#include "npy.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int fail(char *err, size_t n, const char *what, const char *path)
{
    snprintf(err, n, "%s '%s': %s", what, path, strerror(errno));
    return -1;
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

    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp.XXXXXX", path);
    int fd = mkstemp(tmp);
    if (fd < 0)
        return fail(err, err_len, "cannot create a temporary file beside", path);
    fchmod(fd, 0644);
    FILE *fp = fdopen(fd, "wb");
    uint8_t magic[10] = { 0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (uint8_t)(len & 0xff), (uint8_t)(len >> 8) };
    bool ok = fp && fwrite(magic, 1, 10, fp) == 10 && fwrite(header, 1, (size_t)len, fp) == (size_t)len;
    float *buf = malloc(chunk * sizeof(float));
    for (uint64_t at = 0; ok && buf && at < total; at += chunk) {
        size_t n = total - at < chunk ? (size_t)(total - at) : chunk;
        ok = fill(user, at, buf, n) == 0 && fwrite(buf, sizeof(float), n, fp) == n;
    }
    ok = ok && buf && fflush(fp) == 0 && fsync(fd) == 0;
    free(buf);
    if (fp)
        ok = (fclose(fp) == 0) && ok;
    if (!ok || rename(tmp, path) != 0) {
        int e = errno;
        unlink(tmp);
        errno = e ? e : EIO;
        return fail(err, err_len, "cannot write", path);
    }
    return 0;
}
