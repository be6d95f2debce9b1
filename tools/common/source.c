/* Local paths and URLs as one kind of file argument (source.h). */
#include "source.h"

#include <fnmatch.h>
#include <stdio.h>
#include <string.h>

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
    return gguf_open_io(&s->io, &s->f, err);
}

void source_close(source *s)
{
    gguf_close(s->f);
    http_close(s->http);
    s->f = NULL;
    s->http = NULL;
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
    char got[32], of[32];
    gguf_format_size(http_bytes_received(s->http), got, sizeof got);
    gguf_format_size(s->io.size, of, sizeof of);
    fprintf(stderr, "%s: read %s of %s (%llu bytes, %u request%s) from %s\n", tool, got, of,
            (unsigned long long)http_bytes_received(s->http), http_requests(s->http), http_requests(s->http) == 1 ? "" : "s", s->label);
}
