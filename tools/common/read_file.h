/* Whole small files the tools take as input (a manifest, a prompt, another engine's trace). */
#ifndef GGUFSCOPE_TOOLS_READ_FILE_H
#define GGUFSCOPE_TOOLS_READ_FILE_H

#include <stddef.h>

/* The text of path (a file, a pipe or a device; read until its end), NUL-terminated, *len its bytes, malloc'd.
 * NULL with the reason in why ("cannot read 'P': …", "'P' is larger than …", "'P' holds a NUL byte at byte N")
 * when it cannot be read whole, passes max bytes (found after max + 1 bytes, not at the end), or is not text
 * (a NUL byte: every reader after would take the text to end there). */
char *read_file_text(const char *path, size_t max, size_t *len, char *why, size_t why_len);
/* The same for a binary file: any bytes (a NUL after them all the same). */
unsigned char *read_file_bytes(const char *path, size_t max, size_t *len, char *why, size_t why_len);

#endif
