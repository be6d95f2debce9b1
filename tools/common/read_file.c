/* Whole small input files (read_file.h). */
#include "read_file.h"

#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Opens path for reading without waiting on a FIFO that has no writer yet: that wait is left to the reads,
 * where a pipe the user set up (-f <(...)) delivers. Directories and sockets are refused. -1 with why. */
static int open_input(const char *path, char *why, size_t why_len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        snprintf(why, why_len, "cannot read '%s': %s", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    if (!S_ISREG(st.st_mode) && !S_ISFIFO(st.st_mode) && !S_ISCHR(st.st_mode)) {
        snprintf(why, why_len, "cannot read '%s': %s", path, S_ISDIR(st.st_mode) ? "it is a directory"
                                                                                  : "not a file, pipe or device");
        close(fd);
        return -1;
    }
    int flags = fcntl(fd, F_GETFL);
    if (flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0) {
        snprintf(why, why_len, "cannot read '%s': %s", path, strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}

static char *read_whole(const char *path, size_t max, bool text, size_t *len, char *why, size_t why_len)
{
    int fd = open_input(path, why, why_len);
    if (fd < 0)
        return NULL;
    /* up to max + 1 bytes are read: one past max says the input is too large without reading all of it */
    const size_t limit = max + 1;
    size_t cap = limit < ((size_t)1 << 16) ? limit : (size_t)1 << 16, n = 0;
    char *buf = malloc(cap + 1);
    const char *fail = buf ? NULL : "out of memory";
    while (!fail && n <= max) {
        if (n == cap) {
            size_t grow = cap * 2 < limit ? cap * 2 : limit;
            char *bigger = realloc(buf, grow + 1);
            if (!bigger) {
                fail = "out of memory";
                break;
            }
            buf = bigger;
            cap = grow;
        }
        ssize_t got = read(fd, buf + n, cap - n);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            fail = strerror(errno);
            break;
        }
        if (got == 0)
            break;
        /* text only: a NUL would silently end the text for everything that reads it after */
        const char *nul = text ? memchr(buf + n, '\0', (size_t)got) : NULL;
        if (nul) {
            snprintf(why, why_len, "'%s' holds a NUL byte at byte %zu: not text", path, (size_t)(nul - buf));
            free(buf);
            close(fd);
            return NULL;
        }
        n += (size_t)got;
    }
    if (!fail && n > max)
        fail = "too large";
    close(fd);
    if (fail) {
        if (!strcmp(fail, "too large"))
            snprintf(why, why_len, "'%s' is larger than %zu bytes, more than this input can be", path, max);
        else
            snprintf(why, why_len, "cannot read '%s': %s", path, fail);
        free(buf);
        return NULL;
    }
    buf[n] = '\0';
    *len = n;
    return buf;
}

char *read_file_text(const char *path, size_t max, size_t *len, char *why, size_t why_len)
{
    return read_whole(path, max, true, len, why, why_len);
}

unsigned char *read_file_bytes(const char *path, size_t max, size_t *len, char *why, size_t why_len)
{
    return (unsigned char *)read_whole(path, max, false, len, why, why_len);
}
