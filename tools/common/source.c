/* Local paths and URLs as one kind of file argument (source.h). */
#include "source.h"

#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct remote_shard {
    http_file *http;
    gguf_io io;
};

/* gguf_io_opener: the other shards of a remote split model, each its own connection, kept in the source */
/* The shard's URL: the URL as given with its "-00001-of-0000N.gguf" replaced by the name's own (the name is made from
 * the label, which has no credentials, so that no message carries them). */
static bool shard_url(const source *s, const char *name, char *out, size_t cap)
{
    enum { TAIL = 20 }; /* "-00002-of-00003.gguf" */
    const size_t n = strlen(name), q = strcspn(s->arg, "?#");
    if (n < TAIL || q < TAIL || q + n + 1 > cap)
        return false;
    snprintf(out, cap, "%.*s%s%s", (int)(q - TAIL), s->arg, name + n - TAIL, s->arg + q);
    return true;
}

static gguf_status open_shard(void *user, const char *name, const gguf_io **io, gguf_error *err)
{
    source *s = user;
    char url[4096];
    if (!shard_url(s, name, url, sizeof url))
        return gguf_fail(err, GGUF_E_SPLIT, 0, "", "split model: no URL for the shard %s", name);
    remote_shard **grown = realloc(s->shards, (s->n_shards + 1) * sizeof *grown);
    remote_shard *r = calloc(1, sizeof *r);
    if (grown)
        s->shards = grown;
    if (!grown || !r) {
        free(r);
        return gguf_fail(err, GGUF_E_NOMEM, 0, "", "out of memory");
    }
    gguf_status st = http_open(url, &r->http, &r->io, err);
    if (st != GGUF_OK) {
        free(r);
        return st;
    }
    s->shards[s->n_shards++] = r;
    *io = &r->io;
    return GGUF_OK;
}

static uint64_t received(const source *s)
{
    uint64_t n = http_bytes_received(s->http);
    for (size_t i = 0; i < s->n_shards; i++)
        n += http_bytes_received(s->shards[i]->http);
    return n;
}

static unsigned requests(const source *s)
{
    unsigned n = http_requests(s->http);
    for (size_t i = 0; i < s->n_shards; i++)
        n += http_requests(s->shards[i]->http);
    return n;
}

gguf_status source_open(source *s, const char *arg, bool partial, gguf_error *err)
{
    memset(s, 0, sizeof *s);
    snprintf(s->label, sizeof s->label, "%s", arg);
    if (!http_is_url(arg))
        return (partial ? gguf_open_partial : gguf_open)(arg, &s->f, err);
    gguf_status st = http_open(arg, &s->http, &s->io, err);
    if (st != GGUF_OK)
        return st;
    snprintf(s->label, sizeof s->label, "%s", http_label(s->http));
    s->arg = arg;
    return gguf_open_io_split(&s->io, s->label, open_shard, s, &s->f, err);
}

void source_close(source *s)
{
    gguf_close(s->f);
    http_close(s->http);
    for (size_t i = 0; i < s->n_shards; i++) {
        http_close(s->shards[i]->http);
        free(s->shards[i]);
    }
    free(s->shards);
    s->f = NULL;
    s->http = NULL;
    s->shards = NULL;
    s->n_shards = 0;
}

gguf_status source_fetch(source *s, const char *glob, gguf_error *err)
{
    if (!s->http)
        return GGUF_OK;
    for (size_t i = 0; i < gguf_tensor_count(s->f); i++) {
        if (glob && fnmatch(glob, gguf_tensor_at(s->f, i)->name, 0) != 0)
            continue;
        gguf_status st = gguf_io_fetch_tensor(s->f, i, err);
        if (st != GGUF_OK)
            return st;
    }
    return GGUF_OK;
}

void source_report(const char *tool, const source *s)
{
    if (!s->http)
        return;
    char got[32], of[32], parts[48] = "";
    uint64_t size = s->io.size;
    for (size_t i = 0; i < s->n_shards; i++)
        size += s->shards[i]->io.size;
    gguf_format_size(received(s), got, sizeof got);
    gguf_format_size(size, of, sizeof of);
    if (s->n_shards)
        snprintf(parts, sizeof parts, " over %zu shards", s->n_shards + 1);
    fprintf(stderr, "%s: read %s of %s%s (%llu bytes, %u request%s) from %s\n", tool, got, of, parts,
            (unsigned long long)received(s), requests(s), requests(s) == 1 ? "" : "s", s->label);
}
