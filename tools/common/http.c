/* Range requests over libcurl for gguf_open_io (http.h). Every response is held to what was asked: a 206 whose
 * Content-Range is the range requested, of the size and ETag / Last-Modified the first response gave; anything
 * else is named (an HTTP error, a server that ignores ranges, a body cut short, a file that changed). */
#include "http.h"

#include <curl/curl.h>
#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define FIRST_READ (64u << 10)
#define MAX_REDIRECTS 10L

struct http_file {
    CURL *curl;
    struct curl_slist *headers;
    char *url;
    char label[512];
    uint64_t size;
    uint8_t *first;            /* the first response's body: the file's first first_len bytes */
    size_t first_len;
    char etag[256], modified[128];
    uint64_t received;
    unsigned requests;
    char curl_error[CURL_ERROR_SIZE];
};

/* What one response said. */
typedef struct response {
    uint8_t *buf;
    size_t cap, got;
    bool overflow;             /* more body than cap: a server sending more than the range asked */
    char range[128], etag[256], modified[128];
} response;

bool http_is_url(const char *arg)
{
    return arg && (strncasecmp(arg, "http://", 7) == 0 || strncasecmp(arg, "https://", 8) == 0);
}

/* scheme://host/path without user:password@ and without ?query or #fragment (tokens travel there) */
static void make_label(const char *url, char *out, size_t cap)
{
    const char *scheme_end = strstr(url, "://");
    const char *host = scheme_end ? scheme_end + 3 : url;
    const char *slash = strchr(host, '/');
    const char *at = strchr(host, '@');
    if (at && (!slash || at < slash))
        host = at + 1;
    size_t n = strcspn(host, "?#");
    snprintf(out, cap, "%.*s%.*s", scheme_end ? (int)(scheme_end + 3 - url) : 0, url, (int)n, host);
    for (char *p = out; *p; p++) /* a label reaches the terminal: nothing that is not printable */
        if (!isprint((unsigned char)*p))
            *p = '?';
}

static size_t on_body(char *data, size_t size, size_t nmemb, void *user)
{
    response *r = user;
    size_t n = size * nmemb;
    size_t room = r->cap - r->got;
    if (n > room) {
        memcpy(r->buf + r->got, data, room);
        r->got += room;
        r->overflow = true;
        return 0; /* stops the transfer */
    }
    memcpy(r->buf + r->got, data, n);
    r->got += n;
    return n;
}

/* header "Name: value" into out when its name is name */
static void take_header(const char *line, size_t len, const char *name, char *out, size_t cap)
{
    size_t nl = strlen(name);
    if (len <= nl || strncasecmp(line, name, nl) != 0 || line[nl] != ':')
        return;
    const char *v = line + nl + 1;
    size_t vl = len - nl - 1;
    while (vl && (*v == ' ' || *v == '\t'))
        v++, vl--;
    while (vl && (v[vl - 1] == '\r' || v[vl - 1] == '\n' || v[vl - 1] == ' '))
        vl--;
    snprintf(out, cap, "%.*s", (int)(vl < cap ? vl : cap - 1), v);
}

static size_t on_header(char *line, size_t size, size_t nmemb, void *user)
{
    response *r = user;
    size_t n = size * nmemb;
    if (n >= 5 && strncmp(line, "HTTP/", 5) == 0) { /* a new response (after a redirect): forget the last one's */
        r->range[0] = r->etag[0] = r->modified[0] = '\0';
        return n;
    }
    take_header(line, n, "content-range", r->range, sizeof r->range);
    take_header(line, n, "etag", r->etag, sizeof r->etag);
    take_header(line, n, "last-modified", r->modified, sizeof r->modified);
    return n;
}

/* GET bytes [from, from + r->cap) into r; returns the HTTP status, or -1 with err filled (a transfer failure). */
static long get_range(http_file *h, uint64_t from, response *r, gguf_error *err)
{
    char range[64];
    snprintf(range, sizeof range, "%" PRIu64 "-%" PRIu64, from, from + r->cap - 1);
    curl_easy_setopt(h->curl, CURLOPT_RANGE, range);
    curl_easy_setopt(h->curl, CURLOPT_WRITEDATA, r);
    curl_easy_setopt(h->curl, CURLOPT_HEADERDATA, r);
    h->curl_error[0] = '\0';
    h->requests++;
    CURLcode c = curl_easy_perform(h->curl);
    h->received += r->got;
    long code = 0;
    curl_easy_getinfo(h->curl, CURLINFO_RESPONSE_CODE, &code);
    if (c == CURLE_OK || (c == CURLE_WRITE_ERROR && r->overflow))
        return code;
    if (c == CURLE_TOO_MANY_REDIRECTS)
        gguf_fail(err, GGUF_E_IO, from, "", "%s: more than %ld redirects (a redirect loop?)", h->label, MAX_REDIRECTS);
    else if (c == CURLE_PARTIAL_FILE)
        gguf_fail(err, GGUF_E_IO, from, "", "%s: the transfer of bytes %s was cut short after %zu bytes", h->label,
                  range, r->got);
    else
        gguf_fail(err, GGUF_E_IO, from, "", "%s: %s%s%s", h->label, curl_easy_strerror(c),
                  h->curl_error[0] ? ": " : "", h->curl_error);
    return -1;
}

static gguf_status http_status_error(const http_file *h, long code, uint64_t from, gguf_error *err)
{
    const char *what = code == 404 ? " (not found)" : code == 401 || code == 403 ? " (not allowed: a private or "
                                                                                  "gated file needs HF_TOKEN)"
                     : code == 416 ? " (range not satisfiable)" : "";
    return gguf_fail(err, GGUF_E_IO, from, "", "%s: HTTP %ld%s", h->label, code, what);
}

/* the server's file is still the one first seen */
static gguf_status same_file(const http_file *h, const response *r, uint64_t from, gguf_error *err)
{
    if ((h->etag[0] && strcmp(h->etag, r->etag) != 0) || (h->modified[0] && strcmp(h->modified, r->modified) != 0))
        return gguf_fail(err, GGUF_E_IO, from, "", "%s changed while it was read (ETag %s, then %s; Last-Modified %s, "
                         "then %s): read it again", h->label, h->etag[0] ? h->etag : "-", r->etag[0] ? r->etag : "-",
                         h->modified[0] ? h->modified : "-", r->modified[0] ? r->modified : "-");
    return GGUF_OK;
}

static gguf_status io_read(void *user, uint64_t offset, void *buf, size_t n, gguf_error *err)
{
    http_file *h = user;
    if (offset + n <= h->first_len) {
        memcpy(buf, h->first + offset, n);
        return GGUF_OK;
    }
    response r = { .buf = buf, .cap = n };
    long code = get_range(h, offset, &r, err);
    if (code < 0)
        return GGUF_E_IO;
    if (code == 200)
        return gguf_fail(err, GGUF_E_IO, offset, "", "%s: the server ignored a range request (HTTP 200, the whole "
                         "file) after honouring the first: a proxy in between?", h->label);
    if (code != 206)
        return http_status_error(h, code, offset, err);
    uint64_t a = 0, b = 0, total = 0;
    if (sscanf(r.range, "bytes %" SCNu64 "-%" SCNu64 "/%" SCNu64, &a, &b, &total) != 3 || total != h->size)
        return gguf_fail(err, GGUF_E_IO, offset, "", "%s changed while it was read: %llu bytes at first, now "
                         "Content-Range '%s'", h->label, (unsigned long long)h->size, r.range);
    gguf_status s = same_file(h, &r, offset, err);
    if (s != GGUF_OK)
        return s;
    if (a != offset || b != offset + n - 1 || r.got != n)
        return gguf_fail(err, GGUF_E_IO, offset, "", "%s: asked for bytes %llu-%llu, got %zu bytes of %s", h->label,
                         (unsigned long long)offset, (unsigned long long)(offset + n - 1), r.got, r.range);
    return GGUF_OK;
}

gguf_status http_open(const char *url, http_file **out, gguf_io *io, gguf_error *err)
{
    *out = NULL;
    static bool global;
    if (!global) {
        if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
            return gguf_fail(err, GGUF_E_IO, 0, "", "libcurl did not start");
        global = true;
    }
    http_file *h = calloc(1, sizeof *h);
    if (!h || !(h->url = strdup(url)) || !(h->first = malloc(FIRST_READ)) || !(h->curl = curl_easy_init())) {
        http_close(h);
        return gguf_fail(err, GGUF_E_NOMEM, 0, "", "out of memory");
    }
    make_label(url, h->label, sizeof h->label);
    curl_easy_setopt(h->curl, CURLOPT_URL, h->url);
    curl_easy_setopt(h->curl, CURLOPT_FOLLOWLOCATION, 1L);
    curl_easy_setopt(h->curl, CURLOPT_MAXREDIRS, MAX_REDIRECTS);
    curl_easy_setopt(h->curl, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(h->curl, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(h->curl, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(h->curl, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(h->curl, CURLOPT_ERRORBUFFER, h->curl_error);
    curl_easy_setopt(h->curl, CURLOPT_CONNECTTIMEOUT, 30L);
    /* a stalled server: under 1 KiB/s for 60 s ends the transfer rather than hanging */
    curl_easy_setopt(h->curl, CURLOPT_LOW_SPEED_LIMIT, 1024L);
    curl_easy_setopt(h->curl, CURLOPT_LOW_SPEED_TIME, 60L);
    curl_easy_setopt(h->curl, CURLOPT_USERAGENT, "ggufscope");
    curl_easy_setopt(h->curl, CURLOPT_NOSIGNAL, 1L);
    const char *token = getenv("HF_TOKEN");
    if (token && token[0]) {
        char auth[1024];
        snprintf(auth, sizeof auth, "Authorization: Bearer %s", token);
        h->headers = curl_slist_append(NULL, auth); /* curl drops it on a redirect to another host */
        curl_easy_setopt(h->curl, CURLOPT_HTTPHEADER, h->headers);
    }
    response r = { .buf = h->first, .cap = FIRST_READ };
    long code = get_range(h, 0, &r, err);
    gguf_status s = GGUF_OK;
    uint64_t a = 0, b = 0, total = 0;
    if (code < 0)
        s = GGUF_E_IO;
    else if (code == 206) {
        if (sscanf(r.range, "bytes %" SCNu64 "-%" SCNu64 "/%" SCNu64, &a, &b, &total) != 3 || a != 0 ||
            b + 1 != r.got || total < r.got)
            s = gguf_fail(err, GGUF_E_IO, 0, "", "%s: a partial response whose Content-Range '%s' is not the %zu "
                          "bytes it holds from byte 0", h->label, r.range, r.got);
        h->size = total;
    } else if (code == 200) {
        /* no range support: a body that fits one read is the whole file; a longer GGUF would have to be downloaded
         * whole; a longer body that is not GGUF (an error page) goes to the parser, which names it */
        if (r.overflow && r.got >= 4 && memcmp(r.buf, "GGUF", 4) == 0)
            s = gguf_fail(err, GGUF_E_IO, 0, "", "%s: the server ignores range requests (it sends the whole file), "
                          "so reading the header would download everything: download it instead", h->label);
        h->size = r.got;
    } else if (code == 416 && strcmp(r.range, "bytes */0") == 0)
        s = gguf_fail(err, GGUF_E_EMPTY_FILE, 0, "", "%s: the file is empty (0 bytes)", h->label);
    else
        s = http_status_error(h, code, 0, err);
    if (s != GGUF_OK) {
        http_close(h);
        return s;
    }
    h->first_len = r.got;
    snprintf(h->etag, sizeof h->etag, "%s", r.etag);
    snprintf(h->modified, sizeof h->modified, "%s", r.modified);
    *io = (gguf_io){ .read = io_read, .user = h, .size = h->size };
    *out = h;
    return GGUF_OK;
}

void http_close(http_file *h)
{
    if (!h)
        return;
    if (h->curl)
        curl_easy_cleanup(h->curl);
    curl_slist_free_all(h->headers);
    free(h->url);
    free(h->first);
    free(h);
}

const char *http_label(const http_file *h)
{
    return h->label;
}

uint64_t http_bytes_received(const http_file *h)
{
    return h ? h->received : 0;
}

unsigned http_requests(const http_file *h)
{
    return h ? h->requests : 0;
}
