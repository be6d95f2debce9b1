/* Whole small input files (read_file.h). */
#include "read_file.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *read_file_text(const char *path, size_t max, size_t *len, char *why, size_t why_len)
{
    FILE *fp = fopen(path, "rb");
    if (!fp) {
        snprintf(why, why_len, "cannot read '%s': %s", path, strerror(errno));
        return NULL;
    }
    size_t cap = 1 << 16, n = 0, got;
    char *buf = malloc(cap + 1);
    while (buf && (got = fread(buf + n, 1, cap - n, fp)) > 0)
        if ((n += got) == cap) {
            char *bigger = cap < max ? realloc(buf, 2 * cap + 1) : NULL;
            if (!bigger) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = bigger;
            cap *= 2;
        }
    const int failed = !buf || ferror(fp);
    fclose(fp);
    if (failed) {
        free(buf);
        snprintf(why, why_len, "cannot read '%s' whole (an I/O error, or larger than %zu bytes)", path, max);
        return NULL;
    }
    buf[n] = '\0';
    *len = n;
    return buf;
}
