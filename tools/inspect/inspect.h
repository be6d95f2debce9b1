/* gguf-inspect: options and the two output formats. */
#ifndef GGUFSCOPE_INSPECT_H
#define GGUFSCOPE_INSPECT_H

#include "gguf.h"
#include "model.h"

#include <stdbool.h>
#include <stdio.h>

typedef struct inspect_opts {
    const char *path;
    bool json;
    bool full;            /* no cutting of long arrays and strings */
    bool metadata_only;
    bool tensors_only;
    const char *key;      /* --key: print one value raw */
    const char *glob;     /* --tensors: filter tensors by name */
    const char *values;   /* --values NAME: print dequantized values */
    const char *rows;     /* --rows A:B */
    const char *cols;     /* --cols A:B */
    const char *dump;     /* --dump NAME: write a .npy */
    const char *out;      /* --out FILE.npy */
    const char *raw;      /* --raw NAME: first blocks field by field */
    uint64_t blocks;      /* --blocks N (default 2) */
    bool stats;           /* --stats [GLOB]: statistics per tensor */
    bool diff;            /* --diff: compare path with other */
    const char *other;    /* the second file of --diff */
    bool memory;          /* --memory: llama.cpp's buffers for this file */
    model_memory_params mem; /* -c, -b, -ub, -ctk, -ctv, -fa, -np, --no-repack, --no-mmap */
    bool fit_set;         /* --fit BYTES: the largest context that fits */
    uint64_t fit;
} inspect_opts;

/* "A:B" within [0, limit) (either side may be empty; none given: the first def_count). */
bool inspect_parse_range(const char *s, uint64_t limit, uint64_t def_count, uint64_t *a, uint64_t *b);
int inspect_print_values(FILE *out, const gguf_file *f, const inspect_opts *o);
int inspect_dump_npy(const gguf_file *f, const inspect_opts *o);
int inspect_print_raw(FILE *out, const gguf_file *f, const inspect_opts *o);

/* --stats: the audit's statistics per (selected) tensor. Returns the exit status. */
int inspect_print_stats(FILE *out, const gguf_file *f, const inspect_opts *o);
/* --diff: returns 0 when identical, 1 when different, 2 on trouble. */
int inspect_print_diff(FILE *out, const gguf_file *a, const gguf_file *b, const inspect_opts *o);

/* The bytes of t a truncated file holds (t->size for a complete tensor). */
uint64_t inspect_tensor_bytes_present(const gguf_file *f, const gguf_tensor *t);

/* Whether tensor name passes the --tensors filter. */
bool inspect_tensor_selected(const inspect_opts *o, const char *name);

/* --memory [--fit]: returns 0, 1 (hyperparameters that give no shapes) or 2 (an architecture or cache type the
 * estimate does not know). */
int inspect_print_memory(FILE *out, const gguf_file *f, const inspect_opts *o);

/* Returns the exit status: 1 for a truncated file (listed all the same), else 0. */
int inspect_print_text(FILE *out, const gguf_file *f, const inspect_opts *o);
/* Returns 0, or 2 when the JSON document could not be built (out of memory). */
int inspect_print_json(FILE *out, const gguf_file *f, const inspect_opts *o);
/* Prints the value of o->key raw; returns the exit status. */
int inspect_print_key(FILE *out, const gguf_file *f, const inspect_opts *o);

#endif
