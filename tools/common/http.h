/* Files on an HTTP(S) server read by range requests (libcurl): a gguf_io for gguf_open_io, so that a remote
 * GGUF's header, memory estimate and cheapest weight checks need only the bytes they read. */
#ifndef GGUFSCOPE_TOOLS_HTTP_H
#define GGUFSCOPE_TOOLS_HTTP_H

#include "gguf.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct http_file http_file;

/* Whether a command-line file argument is a URL (http:// or https://). */
bool http_is_url(const char *arg);

/* Opens url (redirects followed, at most 10): one range request for its first 64 KiB learns its size and keeps
 * those bytes. Fills io (io->user is *out). GGUF_OK, or a status with err's message naming the URL without
 * credentials: GGUF_E_IO for what stops the reading (HTTP errors, a server that ignores range requests on a file
 * larger than one read, a transfer cut short, a redirect loop), GGUF_E_EMPTY_FILE for nothing there. A body that
 * is not GGUF at all (an HTML error page) opens, for the parser to name. Sends HF_TOKEN, when set, as a bearer
 * token; never prints it. */
gguf_status http_open(const char *url, http_file **out, gguf_io *io, gguf_error *err);
void http_close(http_file *h);
/* The URL as messages show it: no user, password or query string. */
const char *http_label(const http_file *h);
/* Bytes of bodies received and requests made so far. */
uint64_t http_bytes_received(const http_file *h);
unsigned http_requests(const http_file *h);

#endif
