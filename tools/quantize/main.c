/* gguf-quantize: write a quantized copy of an F32/F16/BF16 llama or qwen2 model, byte for byte what
 * llama-quantize writes for it without an importance matrix. */
#include "args.h"
#include "format.h"
#include "output_guard.h"
#include "tool.h"
#include "model_rules.h"
#include "quant.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "usage: gguf-quantize IN.gguf OUT.gguf TYPE [options]\n"
    "  TYPE                Q2_K, Q3_K_S, Q3_K_M, Q3_K_L, Q4_K_S, Q4_K_M, Q5_K_S, Q5_K_M, Q6_K, Q8_0, Q4_0, Q5_0, IQ4_NL,\n"
    "                      IQ4_XS, MXFP4_MOE, TQ1_0 or TQ2_0 (llama.cpp's mixes, without an importance matrix: Q4_K_M and\n"
    "                      Q5_K_M keep attn_v and ffn_down of some layers in Q6_K, Q4_K_S the first ones in Q5_K, Q3_K_M\n"
    "                      and Q3_K_L attn_v and ffn_down in Q4_K / Q5_K, each the output in Q6_K; MXFP4_MOE puts the\n"
    "                      experts in MXFP4, the rest in Q8_0; TQ1_0 and TQ2_0, BitNet's ternary types, keep the output\n"
    "                      in Q6_K and untied embeddings in Q4_K, rows not a multiple of 256 in Q4_0)\n"
    "  --tensor-type NAME=TYPE  llama-quantize's override: TYPE for the tensors whose name the regular expression\n"
    "                      NAME matches (repeatable; the first match wins; e.g. 'blk\\.12\\.attn_v\\.weight=q8_0',\n"
    "                      as gguf-fidelity --attribute suggests)\n"
    "  -t, --threads N     threads (default: all)\n"
    "  --allow-requantize  take quantized weights as they are (decoded, then quantized again), as llama-quantize's\n"
    "                      --allow-requantize (an NVFP4 or Q8_0 download made into Q4_K_M: its rounding on theirs)\n"
    "  --dry-run           print the plan (each tensor's type) and write nothing\n"
    "  --version           print the version and exit\n"
    "OUT is written atomically (a temporary file beside it, then a rename); IN is never written.\n"
    "exit status: 0 written, 2 trouble (usage, I/O, a model or tensor this quantizer does not handle)\n";

static void print_plan(const quantize_plan_entry *plan, size_t n, bool each)
{
    uint64_t in_bytes = 0, out_bytes = 0, count[GGUF_TENSOR_COUNT] = { 0 };
    for (size_t i = 0; i < n; i++) {
        const gguf_tensor *t = plan[i].src;
        const gguf_type_traits *tt = gguf_type_traits_of(plan[i].type);
        const uint64_t bytes = t->n_elements / tt->block_size * tt->type_size;
        in_bytes += t->size;
        out_bytes += bytes;
        if (plan[i].type < GGUF_TENSOR_COUNT)
            count[plan[i].type]++;
        if (each)
            fprintf(stderr, "%-32s %-6s -> %-6s %10.2f MiB\n", t->name, gguf_type_traits_of(t->type)->name, tt->name,
                    bytes / 1048576.0);
    }
    fprintf(stderr, "tensors   ");
    for (uint32_t ty = 0; ty < GGUF_TENSOR_COUNT; ty++)
        if (count[ty])
            fprintf(stderr, " %llu %s", (unsigned long long)count[ty], gguf_type_traits_of(ty)->name);
    fprintf(stderr, "\nsize       %.1f MiB -> %.1f MiB of tensor data\n", in_bytes / 1048576.0, out_bytes / 1048576.0);
}

/* --tensor-type's overrides, freed by main whatever tool_main returns */
static quantize_overrides *ov;

static int tool_main(int argc, char **argv)
{
    const char *in = NULL, *out = NULL, *type = NULL;
    int threads = 0;
    bool dry_run = false;
    enum { OPT_DRY_RUN = 256, OPT_VERSION, OPT_TENSOR_TYPE, OPT_REQUANTIZE };
    char bad[600];
    static const struct option long_options[] = {
        { "threads", required_argument, NULL, 't' }, { "dry-run", no_argument, NULL, OPT_DRY_RUN },
        { "tensor-type", required_argument, NULL, OPT_TENSOR_TYPE },
        { "allow-requantize", no_argument, NULL, OPT_REQUANTIZE },
        { "help", no_argument, NULL, 'h' },          { "version", no_argument, NULL, OPT_VERSION },
        { NULL, 0, NULL, 0 },
    };
    int c;
    long long n_threads;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":t:h", long_options, NULL)) != -1) {
        switch (c) {
        case 't':
            if (!arg_int("gguf-quantize", arg_flag(argv), optarg, 1, 4096, &n_threads))
                return 2;
            threads = (int)n_threads;
            break;
        case OPT_DRY_RUN: dry_run = true; break;
        case OPT_TENSOR_TYPE:
            if (!quantize_overrides_add(&ov, optarg, bad, sizeof bad)) {
                fprintf(stderr, "gguf-quantize: %s\n", bad);
                return 2;
            }
            break;
        case OPT_REQUANTIZE:
            if (!quantize_overrides_allow_requantize(&ov)) {
                fprintf(stderr, "gguf-quantize: out of memory\n");
                return 2;
            }
            break;
        case 'h': fputs(usage, stdout); return 0;
        case OPT_VERSION: arg_print_version("gguf-quantize"); return 0;
        default: return arg_getopt_error("gguf-quantize", c, argv);
        }
    }
    if (argc - optind != 3) {
        fprintf(stderr, "gguf-quantize: needs IN.gguf OUT.gguf TYPE (%d words given; see gguf-quantize --help)\n",
                argc - optind);
        return 2;
    }
    in = argv[optind];
    out = argv[optind + 1];
    type = argv[optind + 2];
    quantize_ftype ftype;
    if (!quantize_ftype_parse(type, &ftype)) {
        fprintf(stderr, "gguf-quantize: unknown type '%s' (Q2_K, Q3_K_S, Q3_K_M, Q3_K_L, Q4_K_S, Q4_K_M, Q5_K_S, "
                        "Q5_K_M, Q6_K, Q8_0, Q4_0, Q5_0, IQ4_NL, IQ4_XS, MXFP4_MOE, TQ1_0, TQ2_0)\n", type);
        return 2;
    }
    gguf_file *f;
    gguf_error err = { 0 };
    if (gguf_open(in, &f, &err) != GGUF_OK) {
        report_error("gguf-quantize", in, &err);
        return 2; /* a file we cannot read is trouble here, whatever is wrong with it */
    }
    output_guard_protect_model(f, in); /* every shard too */
    output_target target;
    char why[4400];
    bool ok = output_guard_check(out, &target, why, sizeof why);
    if (ok && target.stream) {
        snprintf(why, sizeof why, "'%s' is a pipe or device: OUT is a file, written atomically", out);
        ok = false;
    }
    if (!ok) {
        fprintf(stderr, "gguf-quantize: %s\n", why);
        gguf_close(f);
        return 2;
    }
    quantize_plan_entry *plan;
    size_t n;
    gguf_status st = quantize_model_plan(f, ftype, ov, &plan, &n, &err);
    if (!st) {
        print_plan(plan, n, dry_run);
        free(plan);
        if (!dry_run)
            st = quantize_model_write(f, ftype, ov, target.path, threads, &err);
    }
    if (st)
        report_error("gguf-quantize", st == GGUF_E_IO ? out : in, &err);
    else if (!dry_run)
        fprintf(stderr, "wrote      %s (%s)\n", out, quantize_ftype_name(ftype));
    gguf_close(f);
    return st ? 2 : 0;
}

int main(int argc, char **argv)
{
    tool_start("gguf-quantize");
    int rc = tool_main(argc, argv);
    quantize_overrides_free(ov);
    return tool_finish(rc);
}
