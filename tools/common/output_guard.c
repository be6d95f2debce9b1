/* The inputs no output may replace (output_guard.h). */
#include "output_guard.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

typedef struct input_id {
    dev_t dev;
    ino_t ino;
    char name[256]; /* for the message: the input as the user named it */
} input_id;

/* A tool reads a model (up to 65535 shards), a manifest, a trace or two; past the cap the oldest entries
 * stay and a newer input goes unprotected, which only a split of more shards than this can reach. */
enum { MAX_INPUTS = 1024 };
static input_id inputs[MAX_INPUTS];
static size_t n_inputs;

static void protect(dev_t dev, ino_t ino, const char *name)
{
    for (size_t i = 0; i < n_inputs; i++)
        if (inputs[i].dev == dev && inputs[i].ino == ino)
            return;
    if (n_inputs == MAX_INPUTS)
        return;
    inputs[n_inputs].dev = dev;
    inputs[n_inputs].ino = ino;
    snprintf(inputs[n_inputs].name, sizeof inputs[n_inputs].name, "%s", name);
    n_inputs++;
}

void output_guard_protect_path(const char *path)
{
    struct stat st;
    if (path && stat(path, &st) == 0)
        protect(st.st_dev, st.st_ino, path);
}

void output_guard_protect_model(const gguf_file *f, const char *path)
{
    size_t n = gguf_shard_count(f);
    for (size_t i = 0; i < n; i++) {
        uint64_t dev, ino;
        if (gguf_shard_identity(f, i, &dev, &ino))
            protect((dev_t)dev, (ino_t)ino, i > 0 && gguf_shard_path(f, i) ? gguf_shard_path(f, i) : path);
    }
}

bool output_guard_check(const char *out, output_target *t, char *why, size_t why_len)
{
    struct stat st;
    t->stream = false;
    if (snprintf(t->path, sizeof t->path, "%s", out) >= (int)sizeof t->path) {
        snprintf(why, why_len, "the output path is longer than %zu bytes", sizeof t->path - 1);
        return false;
    }
    if (stat(out, &st) != 0) {
        if (errno == ENOENT)
            return true; /* a new file (or a dangling link, replaced by the rename as any new name would be) */
        snprintf(why, why_len, "cannot check the output '%s': %s", out, strerror(errno));
        return false;
    }
    for (size_t i = 0; i < n_inputs; i++)
        if (inputs[i].dev == st.st_dev && inputs[i].ino == st.st_ino) {
            snprintf(why, why_len, "the output '%s' is the input '%s' (the same file%s); refusing to overwrite it: "
                                   "name another file", out, inputs[i].name,
                     strcmp(out, inputs[i].name) ? " under another name or through a link" : "");
            return false;
        }
    if (S_ISDIR(st.st_mode)) {
        snprintf(why, why_len, "the output '%s' is a directory", out);
        return false;
    }
    if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) {
        t->stream = true; /* /dev/stdout, /dev/null, a pipe: written into, never replaced */
        return true;
    }
    if (!S_ISREG(st.st_mode)) {
        snprintf(why, why_len, "the output '%s' is neither a regular file, a pipe nor a terminal", out);
        return false;
    }
    struct stat lst;
    if (lstat(out, &lst) == 0 && S_ISLNK(lst.st_mode)) {
        /* a link to a regular file: the file is replaced beside itself and the link keeps pointing at it */
        char real[PATH_MAX];
        if (!realpath(out, real) || snprintf(t->path, sizeof t->path, "%s", real) >= (int)sizeof t->path) {
            snprintf(why, why_len, "cannot resolve the link '%s': %s", out, strerror(errno));
            return false;
        }
    }
    return true;
}

bool output_guard_refuses(const char *tool, const char *flag, const char *out)
{
    if (!out || !strcmp(out, "-"))
        return false;
    output_target t;
    char why[4400];
    if (output_guard_check(out, &t, why, sizeof why))
        return false;
    fprintf(stderr, "%s: %s: %s\n", tool, flag, why);
    return true;
}
