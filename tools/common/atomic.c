#include "atomic.h"
#include "output_guard.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* An existing pipe or device (/dev/stdout): written in place, as a shell redirection would. */
static int write_stream(const char *path, atomic_body_fn body, void *user, char *err, size_t err_len)
{
    FILE *fp = fopen(path, "wb");
    if (!fp) {
        snprintf(err, err_len, "cannot write '%s': %s", path, strerror(errno));
        return -1;
    }
    errno = 0;
    bool ok = body(user, fp) == 0 && fflush(fp) == 0;
    int e = errno ? errno : EIO;
    ok = (fclose(fp) == 0) && ok;
    if (!ok) {
        snprintf(err, err_len, "cannot write '%s': %s", path, strerror(e));
        return -1;
    }
    return 0;
}

int atomic_write(const char *path, atomic_body_fn body, void *user, char *err, size_t err_len)
{
    output_target t;
    if (!output_guard_check(path, &t, err, err_len))
        return -1;
    if (t.stream)
        return write_stream(t.path, body, user, err, err_len);
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp.XXXXXX", t.path);
    int fd = mkstemp(tmp);
    if (fd < 0) {
        snprintf(err, err_len, "cannot create a temporary file beside '%s': %s", t.path, strerror(errno));
        return -1;
    }
    fchmod(fd, 0644);
    FILE *fp = fdopen(fd, "wb");
    errno = 0;
    bool ok = fp && body(user, fp) == 0 && fflush(fp) == 0 && fsync(fd) == 0;
    if (fp)
        ok = (fclose(fp) == 0) && ok;
    else
        close(fd);
    if (!ok || rename(tmp, t.path) != 0) {
        int e = errno ? errno : EIO;
        unlink(tmp);
        snprintf(err, err_len, "cannot write '%s': %s", path, strerror(e));
        return -1;
    }
    return 0;
}
