/* gguf-inspect: what is in this GGUF file? Argument parsing and dispatch. */
#include "args.h"
#include "format.h"
#include "json_doc.h"
#include "output_guard.h"
#include "sigbus.h"
#include "source.h"
#include "tool.h"
#include "inspect.h"

#include <fnmatch.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char usage[] =
    "usage: gguf-inspect FILE|URL... [options] (several files: one after another, one JSON line each;\n"
    "                                          the exit status is the worst one's)\n"
    "  --json             one JSON document (metadata arrays in full)\n"
    "  --full             do not cut long arrays and strings\n"
    "  --key KEY          print one metadata value raw (arrays: one element per line)\n"
    "  --tensors GLOB     only tensors whose name matches GLOB (e.g. 'blk.0.*')\n"
    "  --metadata-only    summary and metadata, no tensor table\n"
    "  --tensors-only     tensor table only\n"
    "  --values NAME      dequantized values of a tensor [--rows A:B] [--cols A:B] (default 8 x 8)\n"
    "  --dump NAME --out FILE.npy   the whole tensor as a numpy f32 array (rows outermost)\n"
    "  --raw NAME         the first blocks decoded field by field [--blocks N] (default 2)\n"
    "  --stats[=GLOB]     statistics of every (matching) tensor's dequantized values and block scales\n"
    "  --diff OTHER       compare with OTHER tensor by tensor and key by key (also: --diff A B);\n"
    "                     exit 0 identical, 1 different\n"
    "  --memory           the buffers llama.cpp's CPU build allocates for this file (weights mapped and\n"
    "                     repacked, KV cache, output, compute), with llama.cpp's options:\n"
    "                     -c N (0: the model's context), -b N, -ub N, -ctk/-ctv TYPE, -fa on|off|auto,\n"
    "                     -np N, --no-repack, --no-mmap\n"
    "  --fit BYTES        with --memory: the largest context whose total fits (8G, 512MiB, ...)\n"
    "  --version          print the version and exit\n"
    "a URL (http:// or https://) is read by range requests: the header for a listing, --key and --memory; the\n"
    "tensors an option reads besides (HF_TOKEN, when set, is sent as a bearer token)\n"
    "exit status: 0 file read, 1 the file is malformed, 2 usage or I/O trouble (a file that changed while read)\n";

bool inspect_tensor_selected(const inspect_opts *o, const char *name)
{
    return !o->glob || fnmatch(o->glob, name, 0) == 0;
}

enum {
    OPT_JSON = 256, OPT_FULL, OPT_METADATA_ONLY, OPT_TENSORS_ONLY, OPT_KEY, OPT_TENSORS, OPT_VALUES, OPT_ROWS,
    OPT_COLS, OPT_DUMP, OPT_OUT, OPT_RAW, OPT_BLOCKS, OPT_STATS, OPT_DIFF, OPT_VERSION, OPT_MEMORY, OPT_UBATCH,
    OPT_CTK, OPT_CTV, OPT_FA, OPT_PARALLEL, OPT_NO_REPACK, OPT_NO_MMAP, OPT_FIT,
};

/* llama.cpp's multi-letter short options (common/arg.cpp) */
static const char *const llama_aliases[][2] = {
    { "-ub", "--ubatch-size" }, { "-ctk", "--cache-type-k" }, { "-ctv", "--cache-type-v" },
    { "-fa", "--flash-attn" },  { "-np", "--parallel" },      { "-nr", "--no-repack" },
};

static const struct option long_options[] = {
    { "json", no_argument, NULL, OPT_JSON },           { "full", no_argument, NULL, OPT_FULL },
    { "metadata-only", no_argument, NULL, OPT_METADATA_ONLY },
    { "tensors-only", no_argument, NULL, OPT_TENSORS_ONLY },
    { "key", required_argument, NULL, OPT_KEY },       { "tensors", required_argument, NULL, OPT_TENSORS },
    { "values", required_argument, NULL, OPT_VALUES }, { "rows", required_argument, NULL, OPT_ROWS },
    { "cols", required_argument, NULL, OPT_COLS },     { "dump", required_argument, NULL, OPT_DUMP },
    { "out", required_argument, NULL, OPT_OUT },       { "raw", required_argument, NULL, OPT_RAW },
    { "blocks", required_argument, NULL, OPT_BLOCKS }, { "stats", optional_argument, NULL, OPT_STATS },
    { "diff", no_argument, NULL, OPT_DIFF },           { "help", no_argument, NULL, 'h' },
    { "version", no_argument, NULL, OPT_VERSION },     { "memory", no_argument, NULL, OPT_MEMORY },
    { "ctx-size", required_argument, NULL, 'c' },      { "batch-size", required_argument, NULL, 'b' },
    { "ubatch-size", required_argument, NULL, OPT_UBATCH }, { "cache-type-k", required_argument, NULL, OPT_CTK },
    { "cache-type-v", required_argument, NULL, OPT_CTV }, { "flash-attn", required_argument, NULL, OPT_FA },
    { "parallel", required_argument, NULL, OPT_PARALLEL }, { "no-repack", no_argument, NULL, OPT_NO_REPACK },
    { "no-mmap", no_argument, NULL, OPT_NO_MMAP },     { "fit", required_argument, NULL, OPT_FIT },
    { NULL, 0, NULL, 0 },
};

/* A cache type llama.cpp accepts for -ctk/-ctv (common/arg.cpp's kv_cache_types). */
static bool cache_type(const char *flag, const char *v, uint32_t *out)
{
    static const char *const ok[] = { "f32", "f16", "bf16", "q8_0", "q4_0", "q4_1", "iq4_nl", "q5_0", "q5_1" };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++)
        if (strcmp(v, ok[i]) == 0) {
            *out = (uint32_t)gguf_type_from_name(v);
            return true;
        }
    fprintf(stderr, "gguf-inspect: %s needs one of f32, f16, bf16, q8_0, q4_0, q4_1, iq4_nl, q5_0, q5_1; got '%s'\n",
            flag, v);
    return false;
}

/* Fills o and the files (argv[*first..*last)); returns -1 to go on, else the exit status. */
static int parse_args(int argc, char **argv, inspect_opts *o, int *first, int *last)
{
    int c;
    long long n;
    opterr = 0;
    arg_llama_aliases(argc, argv, llama_aliases, sizeof llama_aliases / sizeof llama_aliases[0]);
    while ((c = getopt_long(argc, argv, ":hc:b:", long_options, NULL)) != -1) {
        switch (c) {
        case OPT_MEMORY: o->memory = true; break;
        case 'c':
        case 'b':
        case OPT_UBATCH:
        case OPT_PARALLEL:
            if (!arg_int("gguf-inspect", arg_flag(argv), optarg, c == 'c' ? 0 : 1, 1 << 30, &n))
                return 2;
            *(c == 'c' ? &o->mem.n_ctx : c == 'b' ? &o->mem.n_batch : c == OPT_UBATCH ? &o->mem.n_ubatch
                                                                                       : &o->mem.n_seq) = n;
            break;
        case OPT_CTK:
        case OPT_CTV:
            if (!cache_type(arg_flag(argv), optarg, c == OPT_CTK ? &o->mem.type_k : &o->mem.type_v))
                return 2;
            break;
        case OPT_FA:
            if (strcmp(optarg, "on") && strcmp(optarg, "off") && strcmp(optarg, "auto")) {
                fprintf(stderr, "gguf-inspect: %s needs on, off or auto, got '%s'\n", arg_flag(argv), optarg);
                return 2;
            }
            o->mem.flash_attn = optarg[1] == 'n' ? 1 : optarg[1] == 'f' ? 0 : -1;
            break;
        case OPT_NO_REPACK: o->mem.no_repack = true; break;
        case OPT_NO_MMAP: o->mem.no_mmap = true; break;
        case OPT_FIT:
            if (!arg_bytes("gguf-inspect", arg_flag(argv), optarg, &o->fit))
                return 2;
            o->fit_set = true;
            break;
        case OPT_JSON: o->json = true; break;
        case OPT_FULL: o->full = true; break;
        case OPT_METADATA_ONLY: o->metadata_only = true; break;
        case OPT_TENSORS_ONLY: o->tensors_only = true; break;
        case OPT_KEY: o->key = optarg; break;
        case OPT_TENSORS: o->glob = optarg; break;
        case OPT_VALUES: o->values = optarg; break;
        case OPT_ROWS: o->rows = optarg; break;
        case OPT_COLS: o->cols = optarg; break;
        case OPT_DUMP: o->dump = optarg; break;
        case OPT_OUT: o->out = optarg; break;
        case OPT_RAW: o->raw = optarg; break;
        case OPT_BLOCKS:
            if (!arg_int("gguf-inspect", arg_flag(argv), optarg, 1, 1 << 20, &n))
                return 2;
            o->blocks = (uint64_t)n;
            break;
        case OPT_STATS:
            o->stats = true;
            if (optarg && optarg[0])
                o->glob = optarg;
            break;
        case OPT_DIFF: o->diff = true; break;
        case 'h': fputs(usage, stdout); return 0;
        case OPT_VERSION: arg_print_version("gguf-inspect"); return 0;
        default: return arg_getopt_error("gguf-inspect", c, argv);
        }
    }
    *first = optind;
    *last = argc;
    /* the older "FILE --stats GLOB": a second word that is no file is the glob */
    if (o->stats && !o->glob && argc - optind == 2 && access(argv[optind + 1], F_OK) != 0) {
        o->glob = argv[optind + 1];
        *last = argc - 1;
    }
    int n_files = *last - *first;
    if (n_files == 0) {
        fprintf(stderr, "gguf-inspect: no file given (see gguf-inspect --help)\n");
        return 2;
    }
    if (o->diff) {
        if (n_files != 2) {
            fprintf(stderr, "gguf-inspect: --diff compares two files (gguf-inspect A --diff B), %d given\n", n_files);
            return 2;
        }
        o->other = argv[*first + 1];
        *last = *first + 1;
    } else if (n_files > 1 && (o->dump || o->out)) {
        fprintf(stderr, "gguf-inspect: --dump writes one file's tensor (%d files given)\n", n_files);
        return 2;
    }
    if (o->dump && !o->out) {
        fprintf(stderr, "gguf-inspect: --dump needs --out FILE.npy\n");
        return 2;
    }
    if (o->fit_set && !o->memory) {
        fprintf(stderr, "gguf-inspect: --fit answers with --memory (gguf-inspect FILE --memory --fit 8G)\n");
        return 2;
    }
    if (o->metadata_only && o->tensors_only) {
        fprintf(stderr, "gguf-inspect: --metadata-only and --tensors-only exclude each other\n");
        return 2;
    }
    return -1;
}

/* The tensors an option reads, fetched when the file is remote (a listing and --memory need none). */
static gguf_status fetch_needed(source *src, const inspect_opts *o, gguf_error *err)
{
    const char *one = o->values ? o->values : o->dump ? o->dump : o->raw;
    if (one)
        return gguf_tensor_by_name(src->f, one) ? source_fetch(src, one, err) : GGUF_OK;
    if (o->stats || o->diff)
        return source_fetch(src, o->stats ? o->glob : NULL, err);
    return GGUF_OK;
}

/* Inspects o->path as the options say; returns its exit status. */
static int inspect_file(const inspect_opts *op)
{
    inspect_opts o = *op;
    int rc;
    gguf_error err = { 0 };
    if (o.json)
        sigbus_guard_json(o.path);
    /* listing a truncated download shows what it holds and which tensors are complete; reading values needs
     * them all */
    const bool listing = !o.diff && !o.stats && !o.values && !o.dump && !o.raw;
    static source src; /* one file at a time; its label outlives the file for the messages */
    gguf_status st = source_open(&src, o.path, listing, &err);
    o.path = src.label; /* a URL is shown without its credentials */
    if (st == GGUF_OK)
        st = fetch_needed(&src, &o, &err);
    if (st != GGUF_OK) {
        source_report("gguf-inspect", &src);
        source_close(&src);
        int status = report_error("gguf-inspect", o.path, &err);
        if (o.json) /* the document says so too: every file given gets its line */
            json_doc_print_error("gguf-inspect", o.path, status, gguf_status_name(err.code), err.offset, err.subject,
                                 err.message);
        return status;
    }
    gguf_file *f = src.f;
    output_guard_protect_model(f, o.path);
    if (gguf_missing_bytes(f, &err)) /* said first, then listed */
        report_error("gguf-inspect", o.path, &err);
    if (o.dump && output_guard_refuses("gguf-inspect", "--out", o.out)) {
        source_close(&src);
        return 2;
    }
    if (o.diff) {
        static source other;
        if (source_open(&other, o.other, false, &err) != GGUF_OK ||
            source_fetch(&other, NULL, &err) != GGUF_OK) {
            source_close(&src);
            int bad = report_error("gguf-inspect", other.label, &err);
            source_close(&other);
            return bad == 1 ? 2 : bad; /* a malformed B cannot be compared: trouble, as cmp says */
        }
        rc = inspect_print_diff(stdout, f, other.f, &o);
        source_report("gguf-inspect", &other);
        source_close(&other);
    } else if (o.memory)
        rc = inspect_print_memory(stdout, f, &o);
    else if (o.stats)
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
    else
        rc = inspect_print_text(stdout, f, &o);
    source_report("gguf-inspect", &src);
    source_close(&src);
    return rc; /* an output that could not be written is tool_finish's to report */
}

static int tool_main(int argc, char **argv)
{
    inspect_opts o = { .blocks = 2, .mem = model_memory_params_default() };
    int first = 0, last = 0, rc = parse_args(argc, argv, &o, &first, &last);
    if (rc >= 0)
        return rc;
    /* several files: one after another (one JSON line each with --json); the exit status is the worst one's */
    int worst = 0;
    for (int i = first; i < last; i++) {
        o.path = argv[i];
        if (!o.json && !o.key && last - first > 1)
            printf("%s==> %s <==\n", i > first ? "\n" : "", argv[i]);
        rc = inspect_file(&o);
        worst = rc > worst ? rc : worst;
    }
    return worst;
}

int main(int argc, char **argv)
{
    tool_start("gguf-inspect");
    return tool_finish(tool_main(argc, argv));
}
