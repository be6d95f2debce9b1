#include "atomic.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int atomic_write(const char *path, atomic_body_fn body, void *user, char *err, size_t err_len)
{
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp.XXXXXX", path);
    int fd = mkstemp(tmp);
    if (fd < 0) {
        snprintf(err, err_len, "cannot create a temporary file beside '%s': %s", path, strerror(errno));
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
    if (!ok || rename(tmp, path) != 0) {
        int e = errno ? errno : EIO;
        unlink(tmp);
        snprintf(err, err_len, "cannot write '%s': %s", path, strerror(e));
        return -1;
    }
    return 0;
}
