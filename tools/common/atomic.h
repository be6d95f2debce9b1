/* Files the tools write appear whole or not at all. */
#ifndef GGUFSCOPE_TOOLS_ATOMIC_H
#define GGUFSCOPE_TOOLS_ATOMIC_H

#include <stddef.h>
#include <stdio.h>

/* Writes the file's content; returns 0 on success. */
typedef int (*atomic_body_fn)(void *user, FILE *fp);

/* Writes path atomically: body fills a temporary file beside it, which is
 * flushed, fsynced and renamed over path. On failure path is untouched, the
 * temporary file removed, and err holds a message. Returns 0 or -1. */
int atomic_write(const char *path, atomic_body_fn body, void *user, char *err, size_t err_len);

#endif
