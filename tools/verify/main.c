/* gguf-verify: is this file intact and are its weights sane? */
#include "args.h"
#include "atomic.h"
#include "color.h"
#include "json_doc.h"
#include "format.h"
#include "output_guard.h"
#include "sigbus.h"
#include "source.h"
#include "tool.h"
#include "progress.h"
#include "verify.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "usage: gguf-verify FILE|URL... [options] (several files: one report each, JSON Lines with --json;\n"
    "                                          the exit status is the worst one's)\n"
    "  --manifest M        check tensor digests against a llama-gguf-hash manifest (by tensor name)\n"
    "  --sha256 HEX        check the whole file's sha256 (as Hugging Face shows it)\n"
    "  --write-manifest[=F] print a manifest (llama-gguf-hash --all lines) and exit; =F writes F\n"
    "                      atomically and goes on to verify\n"
    "  --repair-from URL   with --manifest: re-read the tensors that do not match it (or a truncated file\n"
    "                      lacks) from URL, the same file on a server, into a copy (--repair-to FILE, default\n"
    "                      FILE.repaired.gguf), written atomically and checked against the manifest\n"
    "  --uuid              add llama-gguf-hash's UUIDv5 line (alone: print it and exit)\n"
    "  --hashes LIST       digests to compute: xxh64,sha1,sha256,crc32\n"
    "  --no-audit          integrity only: skip the statistical audit of the weights\n"
    "  --strict            warnings fail the file too (exit 1), as a CI gate may want; without it only errors do\n"
    "  -t, --threads N     threads for hashing and the audit (default: all)\n"
    "  --json              one JSON document per file, one line each\n"
    "  --color[=WHEN]      colour the verdict: auto (on a terminal, unless NO_COLOR is set), always, never\n"
    "  --version           print the version and exit\n"
    "a URL (http:// or https://) is read by range requests: its header and one-dimensional tensors (norms,\n"
    "biases) are checked, the matrices are not read (the report says how much was not checked)\n"
    "exit status: 0 OK (notes and warnings only), 1 the model has a problem (llama.cpp would refuse it, corrupt, odd weights),\n"
    "2 cannot check (usage, I/O, a file that changed while being read)\n";

static bool parse_hashes(const char *list, unsigned *out)
{
    char buf[128];
    snprintf(buf, sizeof buf, "%s", list);
    *out = 0;
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        int k = gguf_hash_kind_from_name(tok);
        if (k < 0)
            return false;
        *out |= GGUF_HASH_BIT(k);
    }
    return *out != 0;
}

enum {
    OPT_MANIFEST = 256, OPT_SHA256, OPT_WRITE_MANIFEST, OPT_UUID, OPT_HASHES, OPT_NO_AUDIT, OPT_JSON, OPT_VERSION,
    OPT_COLOR, OPT_STRICT, OPT_REPAIR_FROM, OPT_REPAIR_TO,
};

static const struct option long_options[] = {
    { "manifest", required_argument, NULL, OPT_MANIFEST },
    { "sha256", required_argument, NULL, OPT_SHA256 },
    { "write-manifest", optional_argument, NULL, OPT_WRITE_MANIFEST },
    { "uuid", no_argument, NULL, OPT_UUID },
    { "hashes", required_argument, NULL, OPT_HASHES },
    { "no-audit", no_argument, NULL, OPT_NO_AUDIT },
    { "threads", required_argument, NULL, 't' },
    { "json", no_argument, NULL, OPT_JSON },
    { "help", no_argument, NULL, 'h' },
    { "version", no_argument, NULL, OPT_VERSION },
    { "color", optional_argument, NULL, OPT_COLOR },
    { "strict", no_argument, NULL, OPT_STRICT },
    { "repair-from", required_argument, NULL, OPT_REPAIR_FROM },
    { "repair-to", required_argument, NULL, OPT_REPAIR_TO },
    { NULL, 0, NULL, 0 },
};

/* Fills o and the list of files (argv[*first..argc)); returns -1 to go on, else the exit status. */
static int parse_args(int argc, char **argv, verify_opts *o, int *first)
{
    int c;
    long long n;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":t:h", long_options, NULL)) != -1) {
        switch (c) {
        case OPT_MANIFEST: o->manifest = optarg; break;
        case OPT_SHA256: o->sha256 = optarg; break;
        case OPT_WRITE_MANIFEST: o->write_manifest = optarg && optarg[0] ? optarg : "-"; break;
        case OPT_UUID: o->uuid = true; break;
        case OPT_REPAIR_FROM: o->repair_from = optarg; break;
        case OPT_REPAIR_TO: o->repair_to = optarg; break;
        case OPT_HASHES:
            if (!parse_hashes(optarg, &o->hashes)) {
                fprintf(stderr, "gguf-verify: --hashes takes a list of xxh64, sha1, sha256, crc32, got '%s'\n",
                        optarg);
                return 2;
            }
            break;
        case OPT_NO_AUDIT: o->no_audit = true; break;
        case OPT_STRICT: o->strict = true; break;
        case OPT_JSON: o->json = true; break;
        case 't':
            if (!arg_int("gguf-verify", arg_flag(argv), optarg, 1, 4096, &n))
                return 2;
            o->threads = (int)n;
            break;
        case 'h': fputs(usage, stdout); return 0;
        case OPT_VERSION: arg_print_version("gguf-verify"); return 0;
        case OPT_COLOR:
            if (!color_parse(optarg ? optarg : "always", &o->color)) {
                fprintf(stderr, "gguf-verify: --color takes auto, always or never, got '%s'\n", optarg);
                return 2;
            }
            break;
        default: return arg_getopt_error("gguf-verify", c, argv);
        }
    }
    *first = optind;
    if (optind == argc) {
        fprintf(stderr, "gguf-verify: no file given (see gguf-verify --help)\n");
        return 2;
    }
    if ((o->repair_from || o->repair_to) && !o->manifest) {
        fprintf(stderr, "gguf-verify: --repair-from needs --manifest: the digests say which tensors to re-read\n");
        return 2;
    }
    if (o->repair_to && !o->repair_from) {
        fprintf(stderr, "gguf-verify: --repair-to names the copy --repair-from writes\n");
        return 2;
    }
    bool one_file = o->manifest || o->sha256 || (o->write_manifest && strcmp(o->write_manifest, "-") != 0);
    if (one_file && argc - optind > 1) {
        fprintf(stderr, "gguf-verify: --manifest, --sha256 and --write-manifest=F check one file (%d given)\n",
                argc - optind);
        return 2;
    }
    return -1;
}

static int write_text(void *user, FILE *fp)
{
    const char *s = user;
    return fputs(s, fp) < 0 ? -1 : 0;
}

/* The digests a manifest carries: --hashes, else llama-gguf-hash --all's (none for --uuid alone). */
static unsigned manifest_kinds(const verify_opts *o)
{
    return o->hashes ? o->hashes : o->write_manifest ? GGUF_HASH_LLAMA_ALL : 0;
}

/* The manifest lines of h, labelled with the path as given, to stdout or
 * (--write-manifest=F) atomically to F. Returns the exit status. */
static int emit_manifest(const verify_opts *o, const gguf_file *f, const gguf_hashes *h)
{
    char *text = gguf_manifest_format(f, h, manifest_kinds(o), o->uuid, o->path);
    if (!text) {
        fprintf(stderr, "gguf-verify: out of memory\n");
        return 2;
    }
    int rc = 0;
    if (!o->write_manifest || strcmp(o->write_manifest, "-") == 0) {
        fputs(text, stdout);
    } else {
        char why[600];
        if (atomic_write(o->write_manifest, write_text, text, why, sizeof why) != 0) {
            fprintf(stderr, "gguf-verify: %s\n", why);
            rc = 2;
        }
    }
    free(text);
    return rc;
}

/* llama-gguf-hash's job alone: hash, print the manifest. */
static int print_manifest_only(const verify_opts *o, gguf_file *f)
{
    unsigned kinds = manifest_kinds(o);
    progress bar;
    progress_init(&bar, "hashing");
    gguf_hash_request req = { kinds, kinds, o->uuid, false, o->threads, progress_update, &bar };
    gguf_hashes h;
    gguf_error err = { 0 };
    if (gguf_hash_file(f, &req, &h, &err) != GGUF_OK)
        return report_error("gguf-verify", o->path, &err);
    progress_end(&bar);
    int rc = emit_manifest(o, f, &h);
    gguf_hashes_free(&h);
    return rc;
}

static bool run_audit(verify_result *r)
{
    size_t n = gguf_tensor_count(r->f);
    r->stats = calloc(n + 1, sizeof *r->stats);
    if (!r->stats) {
        snprintf(r->trouble, sizeof r->trouble, "out of memory");
        return false;
    }
    progress bar;
    progress_init(&bar, "auditing");
    double t0 = monotonic_seconds();
    if (audit_file_stats(r->f, r->o->threads, progress_update, &bar, r->stats) != AUDIT_OK ||
        audit_model(r->f, r->stats, &r->audit) != AUDIT_OK) {
        snprintf(r->trouble, sizeof r->trouble, "out of memory during the audit");
        return false;
    }
    r->audit_seconds = monotonic_seconds() - t0;
    progress_end(&bar);
    r->audited = true;
    return true;
}

size_t verify_count(const verify_result *r, audit_severity sev)
{
    size_t n = 0;
    for (size_t i = 0; i < r->integrity.n; i++)
        n += r->integrity.v[i].severity == sev;
    if (r->audited)
        n += sev == AUDIT_ERROR ? r->audit.n_errors : sev == AUDIT_WARNING ? r->audit.n_warnings : r->audit.n_infos;
    return n;
}

const char *verify_verdict_name(const verify_result *r)
{
    if (r->verdict == VERDICT_OK) /* warnings alone exit 0, but the verdict never reads OK next to one */
        return verify_count(r, AUDIT_WARNING) ? "WARNINGS" : "OK";
    return r->verdict == VERDICT_PROBLEMS ? "PROBLEMS" : "CANNOT CHECK";
}

static verdict decide(const verify_result *r)
{
    if (r->trouble[0])
        return VERDICT_CANNOT_CHECK;
    /* errors fail the file; warnings (odd but possibly healthy: an outlier layer, trailing bytes) only under
     * --strict, so that a healthy trained model exits 0 with its oddities listed */
    const audit_severity fails = r->o->strict ? AUDIT_WARNING : AUDIT_ERROR;
    for (size_t i = 0; i < r->integrity.n; i++)
        if (r->integrity.v[i].severity >= fails)
            return VERDICT_PROBLEMS;
    if (r->audited && (r->audit.n_errors || (r->o->strict && r->audit.n_warnings)))
        return VERDICT_PROBLEMS;
    return VERDICT_OK;
}

/* A remote file: its one-dimensional tensors (norm gains, biases), the cheap checks that catch a corrupted
 * download's most telling tensors; the matrices are left unread, and counted for the report. */
static gguf_status fetch_cheap_tensors(verify_result *r, gguf_error *err)
{
    for (size_t i = 0; i < gguf_tensor_count(r->f); i++) {
        const gguf_tensor *t = gguf_tensor_at(r->f, i);
        if (t->n_dims != 1) {
            r->remote_unread++;
            r->remote_unread_bytes += t->size;
            continue;
        }
        gguf_status s = gguf_io_fetch_tensor(r->f, i, err);
        if (s != GGUF_OK)
            return s;
        r->remote_fetched++;
    }
    return GGUF_OK;
}

/* --repair-from: the copy's name (FILE.repaired.gguf unless --repair-to), refused when it is an input. */
static int repair_file(verify_result *r, const verify_opts *o)
{
    char def[4096];
    const char *out = o->repair_to;
    if (!out) {
        size_t n = strlen(r->o->path);
        if (n > 5 && strcmp(r->o->path + n - 5, ".gguf") == 0)
            n -= 5;
        snprintf(def, sizeof def, "%.*s.repaired.gguf", (int)n, r->o->path);
        out = def;
    }
    if (output_guard_refuses("gguf-verify", "--repair-to", out))
        return 2;
    return verify_repair(r, o->repair_from, out, o->json ? stderr : stdout);
}

/* Verifies o->path: prints its report and returns its exit status. */
static int verify_file(const verify_opts *op)
{
    verify_opts o = *op;
    int rc = 0, repaired = -1;
    verify_result r = { .o = op };
    if (o.json)
        sigbus_guard_json(o.path);
    /* a truncated download opens, so that the report can say what is there and which tensors are intact */
    static source src; /* one file at a time; its label (a URL without credentials) outlives it */
    gguf_status s = source_open(&src, o.path, true, &r.open_err);
    o.path = src.label;
    r.o = &o;
    r.f = src.f;
    r.remote = src.http != NULL;
    if (r.remote && (o.manifest || o.sha256 || o.write_manifest || o.uuid)) {
        fprintf(stderr, "gguf-verify: %s: digests need every byte of the file: download it, then verify it\n", o.path);
        source_close(&src);
        return 2;
    }
    if (r.f && r.remote && fetch_cheap_tensors(&r, &r.open_err) != GGUF_OK) {
        s = r.open_err.code;
        source_report("gguf-verify", &src);
        source_close(&src);
        r.f = NULL;
    }
    if (r.f)
        r.missing_bytes = gguf_missing_bytes(r.f, &r.open_err);
    output_guard_protect_path(o.path);
    if (r.f)
        output_guard_protect_model(r.f, o.path);
    output_guard_protect_path(o.manifest);
    if (o.write_manifest && output_guard_refuses("gguf-verify", "--write-manifest", o.write_manifest)) {
        if (o.json)
            json_doc_print_error("gguf-verify", o.path, 2, "GGUF_E_IO", 0, "", "--write-manifest would replace an input");
        source_close(&src);
        return 2;
    }
    bool trouble = s == GGUF_E_IO || s == GGUF_E_NOMEM || s == GGUF_E_INVALID_ARG;
    if (s != GGUF_OK && (trouble || (o.write_manifest && strcmp(o.write_manifest, "-") == 0))) {
        source_report("gguf-verify", &src);
        source_close(&src);
        int status = report_error("gguf-verify", o.path, &r.open_err);
        if (o.json) /* the document says so too: every file given gets its line */
            json_doc_print_error("gguf-verify", o.path, 2, gguf_status_name(s), r.open_err.offset,
                                 r.open_err.subject, r.open_err.message);
        return status;
    }
    bool manifest_only = (o.write_manifest && strcmp(o.write_manifest, "-") == 0) ||
                         (o.uuid && !o.write_manifest && !o.manifest && !o.sha256 && !o.json);
    if (r.missing_bytes && (manifest_only || o.write_manifest)) { /* no manifest of an incomplete model */
        int status = report_error("gguf-verify", o.path, &r.open_err);
        source_close(&src);
        return status;
    }
    if (r.f && manifest_only) {
        rc = print_manifest_only(&o, r.f);
        source_close(&src);
        return rc;
    }
    /* --write-manifest=F: the manifest's digests come from the verification's one pass */
    bool checked = verify_integrity(&r, o.write_manifest ? manifest_kinds(&o) : 0);
    if (checked) {
        verify_engine_check(&r);
        verify_generation_check(&r);
    }
    audit_findings_close(&r.integrity);
    if (checked && r.hashed && o.write_manifest)
        rc = emit_manifest(&o, r.f, &r.hashes);
    if (rc == 0) {
        if (checked && r.f && !o.no_audit && !r.missing_bytes) /* a truncated file's weights are not all there */
            run_audit(&r);
        r.verdict = decide(&r);
        if (o.json)
            rc = verify_print_json(stdout, &r);
        else
            verify_print_text(stdout, &r);
        if (r.trouble[0])
            fprintf(stderr, "gguf-verify: %s: cannot check: %s\n", o.path, r.trouble);
        if (o.repair_from && !r.trouble[0] && !r.remote)
            repaired = repair_file(&r, &o);
    }
    gguf_manifest_free(r.manifest);
    gguf_check_report_free(&r.check);
    gguf_hashes_free(&r.hashes);
    audit_report_free(&r.audit);
    free(r.stats);
    free(r.integrity.v);
    source_report("gguf-verify", &src);
    source_close(&src);
    if (rc != 0)
        return 2;
    return repaired >= 0 ? repaired : (int)r.verdict;
}

static int tool_main(int argc, char **argv)
{
    verify_opts o = { 0 };
    int first = 0, rc = parse_args(argc, argv, &o, &first);
    if (rc >= 0)
        return rc;
    color_setup(o.json ? COLOR_NEVER : o.color);
    /* several files: one report after another (JSON Lines with --json), the exit status the worst one's */
    int worst = 0;
    for (int i = first; i < argc; i++) {
        o.path = argv[i];
        if (!o.json && i > first)
            fputc('\n', stdout);
        int status = verify_file(&o);
        worst = status > worst ? status : worst;
    }
    return worst;
}

int main(int argc, char **argv)
{
    tool_start("gguf-verify");
    return tool_finish(tool_main(argc, argv));
}
