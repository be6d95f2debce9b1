/* gguf-inspect: what is in this GGUF file? Argument parsing and dispatch. */
#include "format.h"
#include "sigbus.h"
#include "term_guard.h"
#include "inspect.h"

#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "usage: gguf-inspect FILE [options]\n"
    "  --json             one JSON document (metadata arrays in full)\n"
    "  --full             do not cut long arrays and strings\n"
    "  --key KEY          print one metadata value raw (arrays: one element per line)\n"
    "  --tensors GLOB     only tensors whose name matches GLOB (e.g. 'blk.0.*')\n"
    "  --metadata-only    summary and metadata, no tensor table\n"
    "  --tensors-only     tensor table only\n"
    "  --values NAME      dequantized values of a tensor [--rows A:B] [--cols A:B] (default 8 x 8)\n"
    "  --dump NAME --out FILE.npy   the whole tensor as a numpy f32 array (rows outermost)\n"
    "  --raw NAME         the first blocks decoded field by field [--blocks N] (default 2)\n"
    "  --stats [GLOB]     statistics of every (matching) tensor's dequantized values and block scales\n"
    "  --diff OTHER       compare with OTHER tensor by tensor and key by key (also: --diff A B);\n"
    "                     exit 0 identical, 1 different\n"
    "exit status: 0 file read, 1 the file is malformed, 2 usage or I/O trouble (a file that changed while read)\n";

bool inspect_tensor_selected(const inspect_opts *o, const char *name)
{
    return !o->glob || fnmatch(o->glob, name, 0) == 0;
}

static int parse_args(int argc, char **argv, inspect_opts *o)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        bool has_next = i + 1 < argc;
        if (strcmp(a, "--json") == 0)
            o->json = true;
        else if (strcmp(a, "--full") == 0)
            o->full = true;
        else if (strcmp(a, "--metadata-only") == 0)
            o->metadata_only = true;
        else if (strcmp(a, "--tensors-only") == 0)
            o->tensors_only = true;
        else if (strcmp(a, "--key") == 0 && has_next)
            o->key = argv[++i];
        else if (strcmp(a, "--tensors") == 0 && has_next)
            o->glob = argv[++i];
        else if (strcmp(a, "--values") == 0 && has_next)
            o->values = argv[++i];
        else if (strcmp(a, "--rows") == 0 && has_next)
            o->rows = argv[++i];
        else if (strcmp(a, "--cols") == 0 && has_next)
            o->cols = argv[++i];
        else if (strcmp(a, "--dump") == 0 && has_next)
            o->dump = argv[++i];
        else if (strcmp(a, "--out") == 0 && has_next)
            o->out = argv[++i];
        else if (strcmp(a, "--raw") == 0 && has_next)
            o->raw = argv[++i];
        else if (strcmp(a, "--blocks") == 0 && has_next)
            o->blocks = strtoull(argv[++i], NULL, 10);
        else if (strcmp(a, "--stats") == 0) {
            o->stats = true;
            if (o->path && has_next && argv[i + 1][0] != '-')
                o->glob = argv[++i];
        } else if (strcmp(a, "--diff") == 0)
            o->diff = true;
        else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            fputs(usage, stdout);
            return 0;
        } else if (a[0] == '-' && a[1] != '\0') {
            fprintf(stderr, "gguf-inspect: unknown or incomplete option '%s'\n%s", a, usage);
            return 2;
        } else if (!o->path)
            o->path = a;
        else if (o->diff && !o->other)
            o->other = a;
        else {
            fprintf(stderr, "gguf-inspect: more than one file given ('%s')\n%s", a, usage);
            return 2;
        }
    }
    if (!o->path) {
        fputs(usage, stderr);
        return 2;
    }
    if (o->diff && !o->other) {
        fprintf(stderr, "gguf-inspect: --diff needs two files (gguf-inspect A --diff B)\n");
        return 2;
    }
    if (o->dump && !o->out) {
        fprintf(stderr, "gguf-inspect: --dump needs --out FILE.npy\n");
        return 2;
    }
    if (o->metadata_only && o->tensors_only) {
        fprintf(stderr, "gguf-inspect: --metadata-only and --tensors-only exclude each other\n");
        return 2;
    }
    return -1;
}

int main(int argc, char **argv)
{
    term_guard_install(); /* nothing from the file reaches the terminal as a command */
    sigbus_guard_install("gguf-inspect"); /* a file that shrinks while read: a message and exit 2 */
    inspect_opts o = { .blocks = 2 };
    int rc = parse_args(argc, argv, &o);
    if (rc >= 0)
        return rc;
    gguf_file *f = NULL;
    gguf_error err = { 0 };
    if (gguf_open(o.path, &f, &err) != GGUF_OK)
        return report_error("gguf-inspect", o.path, &err);
    if (o.diff) {
        gguf_file *g = NULL;
        if (gguf_open(o.other, &g, &err) != GGUF_OK) {
            gguf_close(f);
            int bad = report_error("gguf-inspect", o.other, &err);
            return bad == 1 ? 2 : bad; /* a malformed B cannot be compared: trouble, as cmp says */
        }
        rc = inspect_print_diff(stdout, f, g, &o);
        gguf_close(g);
    } else if (o.stats)
        rc = inspect_print_stats(stdout, f, &o);
    else if (o.key)
        rc = inspect_print_key(stdout, f, &o);
    else if (o.values)
        rc = inspect_print_values(stdout, f, &o);
    else if (o.dump)
        rc = inspect_dump_npy(f, &o);
    else if (o.raw)
        rc = inspect_print_raw(stdout, f, &o);
    else if (o.json)
        rc = inspect_print_json(stdout, f, &o);
    else {
        inspect_print_text(stdout, f, &o);
        rc = 0;
    }
    gguf_close(f);
    if (fflush(stdout) != 0)
        return 2;
    return rc;
}
