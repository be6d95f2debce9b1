/* Formatting shared by the tools: metadata values, counts, errors, UTF-8 for JSON. */
#ifndef GGUFSCOPE_TOOLS_FORMAT_H
#define GGUFSCOPE_TOOLS_FORMAT_H

#include "gguf.h"

#include <stdio.h>

/* Prints v for humans. Arrays show at most max_items elements (0: all),
 * strings at most max_chars bytes (0: all), each cut one saying how long it is. */
void fmt_value(FILE *out, const gguf_value *v, uint64_t max_items, uint64_t max_chars);

/* Prints a string with control bytes escaped (\n, \t, \xNN). */
void fmt_escaped(FILE *out, const char *s, uint64_t len);

/* "1.10 B", "260.1 K", "42" */
void fmt_count(uint64_t n, char *buf, size_t len);

/* A NUL-terminated, valid UTF-8 copy of s (invalid bytes and NULs become
 * U+FFFD), for JSON libraries that take C strings. Caller frees. */
char *utf8_sanitize(const char *s, uint64_t len);

/* The string value of key, or NULL when absent or not a string (into buf). */
const char *meta_string(const gguf_file *f, const char *key, char *buf, size_t len);

/* Prints "prog: path: byte N: message" to stderr and returns the exit status
 * for it: 2 for trouble (I/O, memory, usage), 1 when the file itself is bad. */
int report_error(const char *prog, const char *path, const gguf_error *err);

#endif
