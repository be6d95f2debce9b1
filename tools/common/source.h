/* A file argument as the tools take it: a local path (mapped) or an http(s):// URL read by range requests (its
 * header, then only the tensors a task fetches). */
#ifndef GGUFSCOPE_TOOLS_SOURCE_H
#define GGUFSCOPE_TOOLS_SOURCE_H

#include "gguf.h"
#include "http.h"

#include <stdbool.h>

typedef struct remote_shard remote_shard;

typedef struct source {
    gguf_file *f;
    http_file *http;     /* NULL for a local file */
    gguf_io io;          /* f reads through it: a source is not moved while open */
    remote_shard **shards; /* a remote split model's other shards, each read through its own connection */
    size_t n_shards;
    const char *arg;     /* the URL as given (credentials included): the shards' URLs are made from it */
    char label[1024];    /* what messages call it: the path, or the URL without credentials (kept after close) */
} source;

/* Opens arg into s (gguf_open, or gguf_open_partial when partial; a URL through gguf_open_io_split: a split
 * model's other shards are the same URL with their numbers). On failure s->f is
 * NULL, err says why and s->label is still set for the message. */
gguf_status source_open(source *s, const char *arg, bool partial, gguf_error *err);
void source_close(source *s);
/* Fetches the tensors whose names match glob (NULL: all), a remote file's only; GGUF_OK for a local one. */
gguf_status source_fetch(source *s, const char *glob, gguf_error *err);
/* For a remote file, "TOOL: read N bytes of M (K requests) from URL" on stderr. */
void source_report(const char *tool, const source *s);

#endif
