/* Command lines the way llama.cpp users type them: getopt_long's forms (-t 2, --threads 2, --threads=2),
 * values parsed strictly with their ranges, and one wording for every mistake. */
#ifndef GGUFSCOPE_TOOLS_ARGS_H
#define GGUFSCOPE_TOOLS_ARGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Each parser takes the whole string or nothing; on failure it prints
 * "PROG: FLAG needs an integer from MIN to MAX, got 'VAL'" (or the like) and returns false. */
bool arg_int(const char *prog, const char *flag, const char *val, long long min, long long max, long long *out);
bool arg_u64(const char *prog, const char *flag, const char *val, uint64_t *out);
bool arg_float(const char *prog, const char *flag, const char *val, double min, double max, double *out);

/* A size: "8G", "8GiB", "512M" (binary units) or plain bytes. */
bool arg_bytes(const char *prog, const char *flag, const char *val, uint64_t *out);
/* Rewrites llama.cpp's multi-letter short options in argv (pairs: {"-ctk", "--cache-type-k"}) to their long
 * forms, "-ctk=q8_0" included, so that getopt_long takes them as llama.cpp users type them. */
void arg_llama_aliases(int argc, char **argv, const char *const (*pairs)[2], size_t n);

/* The flag getopt_long just handled, as the user typed it ("-t", "--threads"), for messages. */
const char *arg_flag(char **argv);

/* For getopt_long's ':' (missing value) and '?' (unknown option): "PROG: --threads needs a value" or
 * "PROG: unknown option '--frobnicate'", then "(see PROG --help)". Returns 2, the exit status. */
int arg_getopt_error(const char *prog, int c, char **argv);

/* "0.1.0" */
const char *arg_version(void);
/* "PROG 0.1.0 (git 1a2b3c4)" on stdout. */
void arg_print_version(const char *prog);

#endif
