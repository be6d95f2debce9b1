/* Files the tools write appear whole or not at all. */
#ifndef GGUFSCOPE_TOOLS_ATOMIC_H
#define GGUFSCOPE_TOOLS_ATOMIC_H

#include <stddef.h>
#include <stdio.h>

/* Writes the file's content; returns 0 on success. */
typedef int (*atomic_body_fn)(void *user, FILE *fp);

/* Writes path atomically: body fills a temporary file beside it, which is
 * flushed, fsynced and renamed over path (over a link's target when path is a
 * symbolic link). On failure path is untouched, the temporary file removed,
 * and err holds a message. Returns 0 or -1. Refused before anything is written
 * when path is an input the tool registered with output_guard (under any name)
 * or a directory; an existing pipe or device (/dev/stdout) is written in place. */
int atomic_write(const char *path, atomic_body_fn body, void *user, char *err, size_t err_len);

#endif
