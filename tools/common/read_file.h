/* Whole small files the tools take as input (a manifest, a prompt, another engine's trace). */
#ifndef GGUFSCOPE_TOOLS_READ_FILE_H
#define GGUFSCOPE_TOOLS_READ_FILE_H

#include <stddef.h>

/* The bytes of path, NUL-terminated (a NUL inside is kept; *len counts every byte), malloc'd. NULL with the
 * reason in why ("cannot read 'P': …", "'P' is larger than …") when it cannot be read whole or passes max bytes. */
char *read_file_text(const char *path, size_t max, size_t *len, char *why, size_t why_len);

#endif
