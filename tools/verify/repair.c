/* --repair-from URL: a damaged download mended by re-reading only the tensors whose digests do not match the
 * manifest (or that a truncated file lacks) from a server holding the same file, into a copy written atomically
 * beside it, which is then held to the manifest itself. */
#include "atomic.h"
#include "output_guard.h"
#include "source.h"
#include "verify.h"

#include <stdlib.h>
#include <string.h>

typedef struct repair {
    const verify_result *r;
    source *remote;
    bool *bad;                   /* (n_tensors) to re-read */
    size_t n_bad;
    uint64_t bad_bytes;
    uint64_t header_bytes;       /* read to check the server's file is this one */
    char why[GGUF_ERROR_MESSAGE_SIZE];
} repair;

/* The remote file must be the local one's layout: every tensor at the same offset, of the same type and shape. */
static bool same_layout(const gguf_file *a, const gguf_file *b, uint64_t a_size, char *why, size_t n)
{
    if (gguf_data_offset(a) != gguf_data_offset(b) || gguf_tensor_count(a) != gguf_tensor_count(b) ||
        gguf_file_size(b) != a_size) {
        snprintf(why, n, "it is not the same file: data at %llu, %zu tensors, %llu bytes there; here %llu, %zu, %llu",
                 (unsigned long long)gguf_data_offset(b), gguf_tensor_count(b), (unsigned long long)gguf_file_size(b),
                 (unsigned long long)gguf_data_offset(a), gguf_tensor_count(a), (unsigned long long)a_size);
        return false;
    }
    for (size_t i = 0; i < gguf_tensor_count(a); i++) {
        const gguf_tensor *x = gguf_tensor_at(a, i), *y = gguf_tensor_at(b, i);
        if (strcmp(x->name, y->name) || x->type != y->type || x->offset != y->offset || x->size != y->size ||
            memcmp(x->ne, y->ne, sizeof x->ne)) {
            snprintf(why, n, "it is not the same file: tensor %zu is '%.100s' there, '%.100s' here (or its type, "
                     "shape or offset differ)", i, y->name, x->name);
            return false;
        }
    }
    return true;
}

/* The local bytes, zeros where a truncated file ends early, then each bad tensor's bytes from the server. */
static int write_repaired(void *user, FILE *fp)
{
    repair *p = user;
    const gguf_file *f = p->r->f;
    const uint64_t have = gguf_file_size(f), want = have + p->r->missing_bytes;
    if (fwrite(gguf_file_bytes(f), 1, (size_t)have, fp) != have)
        return -1;
    static const uint8_t zeros[4096];
    for (uint64_t at = have; at < want;) {
        size_t k = want - at < sizeof zeros ? (size_t)(want - at) : sizeof zeros;
        if (fwrite(zeros, 1, k, fp) != k)
            return -1;
        at += k;
    }
    for (size_t i = 0; i < gguf_tensor_count(f); i++) {
        if (!p->bad[i])
            continue;
        gguf_error e = { 0 };
        if (gguf_io_fetch_tensor(p->remote->f, i, &e) != GGUF_OK) {
            snprintf(p->why, sizeof p->why, "%s", e.message);
            return -1;
        }
        const gguf_tensor *t = gguf_tensor_at(p->remote->f, i);
        if (fseeko(fp, (off_t)(gguf_data_offset(f) + t->offset), SEEK_SET) != 0 ||
            fwrite(t->data, 1, (size_t)t->size, fp) != t->size)
            return -1;
    }
    return 0;
}

/* The repaired copy against the manifest: 0 when every digest matches, 1 when not, 2 when it cannot be read. */
static int check_copy(const verify_result *r, const char *path, size_t *n_ok, size_t *n_items)
{
    gguf_file *g = NULL;
    gguf_error e = { 0 };
    if (gguf_open(path, &g, &e) != GGUF_OK) {
        fprintf(stderr, "gguf-verify: the repaired copy %s: %s\n", path, e.message);
        return 2;
    }
    unsigned tk, mk;
    bool uuid;
    gguf_manifest_needs(r->manifest, &tk, &mk, &uuid);
    gguf_hash_request req = { tk, mk, uuid, false, r->o->threads, NULL, NULL };
    gguf_hashes h;
    gguf_check_report c = { 0 };
    int rc = 2;
    if (gguf_hash_file(g, &req, &h, &e) == GGUF_OK) {
        if (gguf_manifest_check(r->manifest, g, &h, &c, &e) == GGUF_OK) {
            *n_ok = c.n_ok;
            *n_items = c.n_items;
            rc = c.n_mismatch || c.n_missing || c.n_incomplete ? 1 : 0;
            gguf_check_report_free(&c);
        }
        gguf_hashes_free(&h);
    }
    if (rc == 2)
        fprintf(stderr, "gguf-verify: the repaired copy %s: %s\n", path, e.message);
    gguf_close(g);
    return rc;
}

int verify_repair(verify_result *r, const char *url, const char *out, FILE *report)
{
    if (!r->f || !r->manifest_checked) {
        fprintf(stderr, "gguf-verify: --repair-from needs a file whose tensors were checked against --manifest\n");
        return 2;
    }
    size_t n = gguf_tensor_count(r->f);
    repair p = { .r = r, .bad = calloc(n ? n : 1, sizeof *p.bad) };
    if (!p.bad)
        return 2;
    for (size_t i = 0; i < r->check.n_items; i++) {
        const gguf_check_item *it = &r->check.items[i];
        const gguf_tensor *t = it->tensor ? gguf_tensor_by_name(r->f, it->tensor) : NULL;
        if (!t || (it->state != GGUF_CHECK_MISMATCH && it->state != GGUF_CHECK_INCOMPLETE))
            continue;
        size_t k = (size_t)(t - gguf_tensor_at(r->f, 0));
        if (!p.bad[k]) {
            p.bad[k] = true;
            p.n_bad++;
            p.bad_bytes += t->size;
        }
    }
    if (p.n_bad == 0) {
        fprintf(report, "repair     nothing to repair: every tensor matches the manifest\n");
        free(p.bad);
        return 0;
    }
    static source remote;
    gguf_error e = { 0 };
    int rc = 2;
    if (source_open(&remote, url, false, &e) != GGUF_OK || !remote.http)
        fprintf(stderr, "gguf-verify: %s: %s\n", remote.label, remote.http || e.message[0] ? e.message
                                                                                          : "not an http(s) URL");
    else if (!same_layout(r->f, remote.f, gguf_file_size(r->f) + r->missing_bytes, p.why, sizeof p.why))
        fprintf(stderr, "gguf-verify: %s: %s\n", remote.label, p.why);
    else {
        p.remote = &remote;
        p.header_bytes = http_bytes_received(remote.http);
        char why[600] = "";
        if (atomic_write(out, write_repaired, &p, why, sizeof why) != 0)
            fprintf(stderr, "gguf-verify: %s: %s\n", out, p.why[0] ? p.why : why);
        else {
            size_t ok = 0, items = 0;
            rc = check_copy(r, out, &ok, &items);
            char sz[32];
            gguf_format_size(p.bad_bytes, sz, sizeof sz);
            fprintf(report, "repair     %zu tensor%s (%s) re-read from %s: %llu bytes of tensors and %llu of header "
                    "in %u requests, written to %s: %s\n", p.n_bad, p.n_bad == 1 ? "" : "s", sz, remote.label,
                    (unsigned long long)(http_bytes_received(remote.http) - p.header_bytes),
                    (unsigned long long)p.header_bytes, http_requests(remote.http), out,
                    rc == 0 ? "it matches the manifest" : rc == 1 ? "it STILL DOES NOT MATCH the manifest (the "
                                                                    "server's file is damaged too?)"
                                                                  : "it could not be checked");
            (void)ok, (void)items;
        }
    }
    source_close(&remote);
    free(p.bad);
    return rc;
}
