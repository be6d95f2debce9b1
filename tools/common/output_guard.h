/* No output may replace an input: every file a tool reads is registered here by its device and inode, and
 * every path it is about to write is checked against them, through symbolic and hard links alike. */
#ifndef GGUFSCOPE_TOOLS_OUTPUT_GUARD_H
#define GGUFSCOPE_TOOLS_OUTPUT_GUARD_H

#include "gguf.h"

#include <stdbool.h>
#include <stddef.h>

/* Registers an input by path (a path that does not exist registers nothing). */
void output_guard_protect_path(const char *path);
/* Registers a model opened from path and every shard of a split one, as they were opened (the files mapped,
 * whatever their names are now). */
void output_guard_protect_model(const gguf_file *f, const char *path);

/* Where and how an output goes once checked. */
typedef struct output_target {
    char path[4096]; /* the file to replace: the output's own path, or a symbolic link's target */
    bool stream;     /* an existing FIFO or character device (/dev/stdout, /dev/null): written in place */
} output_target;

/* Checks an output path before anything is written: refused (false, a message in why) when it is an input or
 * a shard of one under any name, a directory, or another kind of file that cannot be replaced; else t says
 * where to write. A path that does not exist yet is fine. */
bool output_guard_check(const char *out, output_target *t, char *why, size_t why_len);

/* The check before a tool's work begins: true (the message printed as "TOOL: FLAG: ...") when out is refused.
 * NULL and "-" (standard output) pass. */
bool output_guard_refuses(const char *tool, const char *flag, const char *out);

#endif
