/* gguf-run's command line: the usage text, llama.cpp's option names where the meaning is the same, and the checks
 * that need every option read (a backend's numerics, what --tokens-from needs). */
#include "args.h"
#include "color.h"
#include "read_file.h"
#include "run.h"
#include "tool.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* In parts: C99 promises string literals of 4095 bytes, no more. */
static const char *const usage[] = {
    "usage: gguf-run MODEL -p TEXT [options]      (or -m MODEL; options as --opt V or --opt=V)\n"
    "  -m, --model FILE      the model (a positional MODEL works too)\n"
    "  -p, --prompt TEXT     the prompt (tokenized with the model's own BOS rule)\n"
    "  -f, --file FILE       the prompt read from FILE\n"
    "  --chat                the prompt is one user message: formatted with the model's chat template\n"
    "                        (tokenizer.chat_template, recognized as llama.cpp does), the assistant's turn\n"
    "                        opened; generation stops at the end-of-turn token\n"
    "  --chat-template NAME  --chat with this format: chatml, llama3, gemma, llama2, mistral-v1, mistral-v3,\n"
    "                        mistral-v3-tekken, mistral-v7, phi3, zephyr, granite, gpt-oss, ...\n"
    "  --special             special-token text in the prompt (<|im_start|>) becomes that token\n"
    "  -n, --n-predict N     tokens to generate (default 64)\n"
    "  --temp T              temperature, 0 to 100 (default 0: greedy)\n"
    "  --top-k K --top-p P --min-p P   sampling filters (off by default; P from 0 to 1)\n"
    "  -s, --seed S          sampler seed (default 0)\n"
    "  -t, --threads N       CPU threads (default: all cores)\n"
    "  -c, --ctx-size N      context size (default: prompt + N, at most the model's)\n"
    "  --backend cpu|cuda    where to compute (default cpu)\n"
    "  --numerics exact|ggml exact (default): weights decoded exactly, activations in f32, as llama.cpp on\n"
    "                        f32 weights; ggml: activations rounded as llama.cpp's CPU backend rounds them\n"
    "                        for each weight type (Q8_0/Q8_1/Q8_K blocks, f16, bf16) with integer dot\n"
    "                        products, as llama.cpp on the file itself (the backend cpu:ggml)\n"
    "  --compare A,B         run backends A and B (cpu, cpu:ggml, cuda) on the prompt and -n greedy steps and\n"
    "                        compare every op of every layer value by value; an op beyond --tolerance is\n"
    "                        re-derived from each side's own inputs, in its own numerics (explained when\n"
    "                        both match: ~); exit 1 naming the first divergence and the side that is wrong\n"
    "  --tolerance X         --compare, --against: relative difference that counts as a divergence (default 1e-3)\n"
    "  --spot-check[=N]      recompute N lm_head rows (default 64) on the CPU from the file after every forward\n"
    "                        pass and exit 1 naming rows that differ (on by default with --backend cuda and\n"
    "                        with --smoke)\n"
    "  --no-spot-check       turn that off\n"
    "  --debug-fault NAME    break one op on purpose in the run's backend (--compare: in B) to see that the\n"
    "                        checks find it, the seed reports' bugs: rope-mode, lm-head-rows, stuck-embedding,\n"
    "                        no-qkv-bias, lm-head-transposed, q4k-scales, kv-pos, gqa-map, norm-skip,\n"
    "                        residual-twice, attn-scale, padding-logits, conv-state (README: the bug zoo)\n"
    ,
    "  --against F.json      hold our trace to another engine's (llama.cpp's goldens' schema, docs/TRACE.md) on\n"
    "                        the same tokens: name the first layer and position where theirs departs beyond\n"
    "                        --tolerance, then the grid; exit 0 agree, 1 departs, 2 their tokens differ\n"
    "                        (gemma: 3e-3 unless --tolerance says, see docs/TRACE.md); their layer ids as ours\n"
    "                        (0.., \"result_norm\") or transformers' hidden_states as they come; an off-by-one\n"
    "                        in them is recognised and said\n"
    "  --against-logits F.npy  also hold our prompt logits to theirs ((n_prompt, n_vocab), a leading batch axis\n"
    "                        of 1 dropped; float16, bfloat16, float32 or float64, numpy.save)\n"
    "  --tokens-from         with --against: run their prompt_tokens as they are (when the tokenizers differ)\n"
    "  --against DUMP        (an .npz, a .safetensors file or a folder of .npy) their hidden states whole, held\n"
    "                        element by element: l_out-N / layer.N / N and result_norm (llama.cpp's per-op\n"
    "                        names too, inp_embd the embeddings), or transformers' hidden_states (stacked,\n"
    "                        or hidden_states.K; entry 0 the embeddings); a batch axis of 1 dropped\n"
    "  --trace-full F        write ours whole (l_out-N, result_norm) as F.npz or F.safetensors\n"
    "  --trace-full-ops      with --trace-full: every op too, under llama.cpp's names (inp_embd or inp_scaled,\n"
    "                        attn_norm-N, Qcur-N, Kcur-N, Vcur-N, kqv_out-N, attn_out-N, ffn_norm-N, ffn_out-N)\n"
    "  --plot F.svg          the residual's RMS after every layer across the prompt positions as a picture\n"
    "                        (with --against: theirs dashed, the first departure ringed)\n"
    "  --tokenize            print the prompt's token ids as JSON and exit\n"
    "  --logits-out F.npy    write the logits of every prompt position (n_prompt x n_vocab, f32)\n"
    "  --trace[=F.json]      per layer and position the residual's statistics, per token the top-5\n"
    "                        candidates: a table on stdout, or JSON in F\n"
    "  --smoke               judge the output: exit 1 with the diagnosis when it looks broken\n"
    "  --json                one JSON document on stdout instead of streamed text\n"
    "  --dry-run             load the model, say the memory the run would hold (ours, and llama.cpp's CPU buffers\n"
    "                        for the same -c), and stop\n"
    "  -q, --quiet           no start-up report and no closing summary (--smoke's verdict still prints)\n"
    "  --color[=WHEN]        colour the verdict: auto (on a terminal, unless NO_COLOR is set), always, never\n"
    "  --version             print the version and exit\n"
    "exit status: 0 OK, 1 the model has a problem (malformed, bad tensors, failed --smoke), 2 trouble (usage, I/O,\n"
    "an architecture or tokenizer it does not run, a file that changed while being read)\n",
    NULL,
};

/* -f FILE: the prompt's bytes (kept for the whole run). */
static char *prompt_file_text;

static bool read_prompt_file(const char *path, run_opts *o)
{
    char why[600];
    size_t len;
    /* 64 MiB: ten times the text of the largest context a model has (1 M tokens of a few bytes each) */
    char *text = read_file_text(path, (size_t)64 << 20, &len, why, sizeof why);
    if (!text) {
        fprintf(stderr, "gguf-run: -f: %s\n", why);
        return false;
    }
    free(prompt_file_text);
    prompt_file_text = text;
    o->prompt = text;
    o->prompt_file = path;
    return true;
}

enum {
    OPT_TEMP = 256, OPT_TOP_K, OPT_TOP_P, OPT_MIN_P, OPT_BACKEND, OPT_COMPARE, OPT_TOLERANCE, OPT_SPOT_CHECK,
    OPT_NO_SPOT_CHECK, OPT_DEBUG_FAULT, OPT_LOGITS_OUT, OPT_TRACE, OPT_TOKENIZE, OPT_SMOKE, OPT_JSON, OPT_CHAT,
    OPT_CHAT_TEMPLATE, OPT_SPECIAL, OPT_VERSION, OPT_COLOR, OPT_AGAINST, OPT_PLOT, OPT_AGAINST_LOGITS, OPT_TOKENS_FROM,
    OPT_TRACE_FULL, OPT_TRACE_FULL_OPS,
    OPT_NUMERICS, OPT_DRY_RUN,
};

/* llama.cpp's names where the meaning is the same (-m, -p, -f, -n, -t, -c, -s, --temp, --top-k ...). */
static const struct option long_options[] = {
    { "model", required_argument, NULL, 'm' },       { "prompt", required_argument, NULL, 'p' },
    { "file", required_argument, NULL, 'f' },        { "n-predict", required_argument, NULL, 'n' },
    { "predict", required_argument, NULL, 'n' },     { "threads", required_argument, NULL, 't' },
    { "ctx-size", required_argument, NULL, 'c' },    { "ctx", required_argument, NULL, 'c' },
    { "seed", required_argument, NULL, 's' },        { "temp", required_argument, NULL, OPT_TEMP },
    { "top-k", required_argument, NULL, OPT_TOP_K }, { "top-p", required_argument, NULL, OPT_TOP_P },
    { "min-p", required_argument, NULL, OPT_MIN_P }, { "backend", required_argument, NULL, OPT_BACKEND },
    { "compare", required_argument, NULL, OPT_COMPARE },
    { "tolerance", required_argument, NULL, OPT_TOLERANCE },
    { "spot-check", optional_argument, NULL, OPT_SPOT_CHECK },
    { "no-spot-check", no_argument, NULL, OPT_NO_SPOT_CHECK },
    { "debug-fault", required_argument, NULL, OPT_DEBUG_FAULT },
    { "logits-out", required_argument, NULL, OPT_LOGITS_OUT }, { "trace", optional_argument, NULL, OPT_TRACE },
    { "tokenize", no_argument, NULL, OPT_TOKENIZE }, { "smoke", no_argument, NULL, OPT_SMOKE },
    { "json", no_argument, NULL, OPT_JSON },         { "chat", no_argument, NULL, OPT_CHAT },
    { "dry-run", no_argument, NULL, OPT_DRY_RUN },
    { "chat-template", required_argument, NULL, OPT_CHAT_TEMPLATE },
    { "special", no_argument, NULL, OPT_SPECIAL },   { "quiet", no_argument, NULL, 'q' },
    { "help", no_argument, NULL, 'h' },              { "version", no_argument, NULL, OPT_VERSION },
    { "color", optional_argument, NULL, OPT_COLOR }, { "against", required_argument, NULL, OPT_AGAINST },
    { "plot", required_argument, NULL, OPT_PLOT },   { "numerics", required_argument, NULL, OPT_NUMERICS },
    { "against-logits", required_argument, NULL, OPT_AGAINST_LOGITS },
    { "tokens-from", no_argument, NULL, OPT_TOKENS_FROM },
    { "trace-full", required_argument, NULL, OPT_TRACE_FULL },
    { "trace-full-ops", no_argument, NULL, OPT_TRACE_FULL_OPS },
    { NULL, 0, NULL, 0 },
};

/* One option's value into o; false (message printed) when it is out of range. */
static bool take_option(int c, char **argv, run_opts *o)
{
    static char pair[2][16];
    const char *flag = arg_flag(argv), *v = optarg;
    long long i;
    double d;
    switch (c) {
    case 'm': o->model = v; return true;
    case 'p': o->prompt = v; return true;
    case 'f': return read_prompt_file(v, o);
    case 'n':
        o->n_predict_given = true;
        return arg_int("gguf-run", flag, v, 0, 1 << 30, &i) && ((o->n_predict = (int)i), true);
    case 't': return arg_int("gguf-run", flag, v, 1, 4096, &i) && ((o->n_threads = (int)i), true);
    case 'c': return arg_int("gguf-run", flag, v, 1, 1 << 30, &i) && ((o->n_ctx = (int)i), true);
    case 's': return arg_u64("gguf-run", flag, v, &o->sampler.seed);
    case OPT_TEMP: return arg_float("gguf-run", flag, v, 0, 100, &d) && ((o->sampler.temp = (float)d), true);
    case OPT_TOP_K: return arg_int("gguf-run", flag, v, 0, 1 << 30, &i) && ((o->sampler.top_k = (int)i), true);
    case OPT_TOP_P: return arg_float("gguf-run", flag, v, 0, 1, &d) && ((o->sampler.top_p = (float)d), true);
    case OPT_MIN_P: return arg_float("gguf-run", flag, v, 0, 1, &d) && ((o->sampler.min_p = (float)d), true);
    case OPT_BACKEND: o->backend = v; return true;
    case OPT_COMPARE: {
        const char *comma = strchr(v, ',');
        if (!comma || comma - v >= 16 || strlen(comma + 1) >= 16) {
            fprintf(stderr, "gguf-run: %s needs two backends A,B (" RUN_BACKEND_NAMES "), got '%s'\n", flag, v);
            return false;
        }
        snprintf(pair[0], sizeof pair[0], "%.*s", (int)(comma - v), v);
        snprintf(pair[1], sizeof pair[1], "%s", comma + 1);
        o->compare[0] = pair[0];
        o->compare[1] = pair[1];
        return true;
    }
    case OPT_TOLERANCE:
        o->tolerance_given = true;
        return arg_float("gguf-run", flag, v, 1e-12, 1e6, &d) && ((o->tolerance = (float)d), true);
    case OPT_SPOT_CHECK:
        o->spot_rows = ENGINE_SPOT_ROWS;
        return !v || (arg_int("gguf-run", flag, v, 2, 1 << 30, &i) && ((o->spot_rows = (int)i), true));
    case OPT_NO_SPOT_CHECK: o->spot_rows = 0; return true;
    case OPT_DEBUG_FAULT: o->fault = v; return true;
    case OPT_LOGITS_OUT: o->logits_out = v; return true;
    case OPT_TRACE:
        o->trace = true;
        o->trace_file = v && v[0] ? v : NULL;
        return true;
    case OPT_TOKENIZE: o->tokenize = true; return true;
    case OPT_SMOKE: o->smoke = true; return true;
    case OPT_JSON: o->json = true; return true;
    case OPT_DRY_RUN: o->dry_run = true; return true;
    case OPT_CHAT: o->chat = true; return true;
    case OPT_CHAT_TEMPLATE:
        o->chat = true;
        o->chat_template = v;
        if (!tok_chat_formats(v)) {
            fprintf(stderr, "gguf-run: --chat-template '%s' is not a format gguf-run writes (%s)\n", v,
                    tok_chat_families());
            return false;
        }
        return true;
    case OPT_SPECIAL: o->special = true; return true;
    case OPT_AGAINST: o->against = v; return true;
    case OPT_PLOT: o->plot = v; return true;
    case OPT_NUMERICS:
        if (!kern_numerics_parse(v, &o->numerics)) {
            fprintf(stderr, "gguf-run: %s takes exact or ggml, got '%s'\n", flag, v);
            return false;
        }
        return true;
    case OPT_AGAINST_LOGITS: o->against_logits = v; return true;
    case OPT_TOKENS_FROM: o->tokens_from_against = true; return true;
    case OPT_TRACE_FULL: o->trace_full = v; return true;
    case OPT_TRACE_FULL_OPS: o->trace_full_ops = true; return true;
    case OPT_COLOR:
        if (!color_parse(v ? v : "always", &o->color)) {
            fprintf(stderr, "gguf-run: --color takes auto, always or never, got '%s'\n", v);
            return false;
        }
        return true;
    case 'q': o->quiet = true; return true;
    default: return false;
    }
}

int run_parse_args(int argc, char **argv, run_opts *o)
{
    *o = (run_opts){ .n_predict = 64, .backend = "cpu", .sampler = engine_sampler_default(), .tolerance = 1e-3f,
                     .spot_rows = -1 };
    int c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":m:p:f:n:t:c:s:qh", long_options, NULL)) != -1) {
        if (c == 'h') {
            for (const char *const *part = usage; *part; part++)
                fputs(*part, stdout);
            tool_exit(0);
        }
        if (c == OPT_VERSION) {
            arg_print_version("gguf-run");
            tool_exit(0);
        }
        if (c == '?' || c == ':')
            return arg_getopt_error("gguf-run", c, argv);
        if (!take_option(c, argv, o))
            return 2;
    }
    for (int i = optind; i < argc; i++) { /* MODEL, as -m gives it */
        if (o->model) {
            fprintf(stderr, "gguf-run: one model per run ('%s' and '%s' given)\n", o->model, argv[i]);
            return 2;
        }
        o->model = argv[i];
    }
    color_setup(o->json ? COLOR_NEVER : o->color);
    if (o->against) {
        char why[600];
        if (run_against_load(o, why, sizeof why)) {
            fprintf(stderr, "gguf-run: --against: %s\n", why);
            return 2;
        }
    }
    if (o->tokens_from_against && !o->against) {
        fprintf(stderr, "gguf-run: --tokens-from runs the prompt tokens of --against's trace: give --against F.json\n");
        return 2;
    }
    if (!o->model || (!o->prompt && !o->tokens_from_against)) {
        fprintf(stderr, "gguf-run: %s (see gguf-run --help)\n",
                o->model ? "no prompt (-p TEXT or -f FILE)" : "no model file (MODEL or -m MODEL)");
        return 2;
    }
    const char *names[3] = { o->backend, o->compare[0], o->compare[1] };
    for (int i = 0; i < 3; i++)
        if (names[i] && !run_backend_known(names[i])) {
            fprintf(stderr, "gguf-run: unknown backend '%s' (" RUN_BACKEND_NAMES ")\n", names[i]);
            return 2;
        }
    if (o->numerics == KERN_NUMERICS_GGML) {
        if (strcmp(o->backend, "cpu") != 0 && strcmp(o->backend, "cpu:ggml") != 0) {
            fprintf(stderr, "gguf-run: --numerics ggml is the CPU backend's (--backend cpu), not %s's\n", o->backend);
            return 2;
        }
        o->backend = "cpu:ggml";
    }
    /* on by default where the logits come from elsewhere than the CPU's own kernels, and as part of --smoke's
     * evidence: 64 rows a pass, a fraction of a percent of the lm_head */
    if (o->spot_rows < 0)
        o->spot_rows = !strcmp(o->backend, "cuda") || o->smoke ? ENGINE_SPOT_ROWS : 0;
    return 0;
}
