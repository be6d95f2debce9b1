/* gguf-run: does the model work end to end? Generate, trace, judge. */
#include "format.h"
#include "sigbus.h"
#include "term_guard.h"
#include "json_line.h"
#include "npy.h"
#include "procmem.h"
#include "quant.h"
#include "run.h"

#include <cJSON.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char usage[] =
    "usage: gguf-run MODEL -p TEXT [options]\n"
    "  -p, --prompt TEXT     the prompt (tokenized with the model's own BOS rule)\n"
    "  --chat                the prompt is one user message: formatted with the model's chat template\n"
    "                        (tokenizer.chat_template, recognized as llama.cpp does), the assistant's turn\n"
    "                        opened; generation stops at the end-of-turn token\n"
    "  --chat-template NAME  --chat with this format: chatml, llama3, gemma, llama2, mistral-v1, mistral-v3,\n"
    "                        mistral-v3-tekken, mistral-v7, phi3, zephyr, ...\n"
    "  --special             special-token text in the prompt (<|im_start|>) becomes that token\n"
    "  -n N                  tokens to generate (default 64)\n"
    "  --temp T              temperature (default 0: greedy)\n"
    "  --top-k K --top-p P --min-p P   sampling filters (off by default)\n"
    "  --seed S              sampler seed (default 0)\n"
    "  --threads N           CPU threads (default: all cores)\n"
    "  --ctx N               context size (default: prompt + N, at most the model's)\n"
    "  --backend cpu|cuda    where to compute (default cpu)\n"
    "  --compare A,B         run backends A and B (cpu, cuda) on the prompt and -n greedy steps and compare\n"
    "                        every op of every layer value by value; exit 1 naming the first divergence\n"
    "  --tolerance X         --compare: relative difference that counts as a divergence (default 1e-3)\n"
    "  --spot-check[=N]      recompute N lm_head rows (default 64) on the CPU from the file after every forward\n"
    "                        pass and exit 1 naming rows that differ (on by default with --backend cuda)\n"
    "  --no-spot-check       turn that off\n"
    "  --debug-fault NAME    break one op on purpose in the run's backend (--compare: in B) to see that the\n"
    "                        checks find it: rope-mode, lm-head-rows\n"
    "  --tokenize            print the prompt's token ids as JSON and exit\n"
    "  --logits-out F.npy    write the logits of every prompt position (n_prompt x n_vocab, f32)\n"
    "  --trace[=F.json]      per layer and position the residual's statistics, per token the top-5\n"
    "                        candidates: a table on stdout, or JSON in F\n"
    "  --smoke               judge the output: exit 1 with the diagnosis when it looks broken\n"
    "  --json                one JSON document on stdout instead of streamed text\n"
    "  -q, --quiet           no start-up report\n"
    "exit status: 0 OK, 1 the model has a problem (malformed, bad tensors, failed --smoke), 2 trouble (usage, I/O,\n"
    "an architecture or tokenizer it does not run, a file that changed while being read)\n";

static bool parse_int(const char *s, int min, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *end || end == s || v < min || v > 1 << 30)
        return false;
    *out = (int)v;
    return true;
}

static bool parse_float(const char *s, float *out)
{
    char *end;
    *out = strtof(s, &end);
    return *end == 0 && end != s;
}

static int parse_args(int argc, char **argv, run_opts *o)
{
    *o = (run_opts){ .n_predict = 64, .backend = "cpu", .sampler = engine_sampler_default(), .tolerance = 1e-3f,
                     .spot_rows = -1 };
    static char pair[2][16];
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *next = i + 1 < argc ? argv[i + 1] : NULL;
        bool ok = true;
        if ((!strcmp(a, "-p") || !strcmp(a, "--prompt")) && next)
            o->prompt = argv[++i];
        else if (!strcmp(a, "-n") && next)
            ok = parse_int(argv[++i], 0, &o->n_predict);
        else if (!strcmp(a, "--temp") && next)
            ok = parse_float(argv[++i], &o->sampler.temp);
        else if (!strcmp(a, "--top-k") && next)
            ok = parse_int(argv[++i], 0, &o->sampler.top_k);
        else if (!strcmp(a, "--top-p") && next)
            ok = parse_float(argv[++i], &o->sampler.top_p);
        else if (!strcmp(a, "--min-p") && next)
            ok = parse_float(argv[++i], &o->sampler.min_p);
        else if (!strcmp(a, "--seed") && next) {
            char *end;
            o->sampler.seed = strtoull(argv[++i], &end, 10);
            ok = *end == 0;
        } else if (!strcmp(a, "--threads") && next)
            ok = parse_int(argv[++i], 1, &o->n_threads);
        else if (!strcmp(a, "--ctx") && next)
            ok = parse_int(argv[++i], 1, &o->n_ctx);
        else if (!strcmp(a, "--backend") && next)
            o->backend = argv[++i];
        else if (!strcmp(a, "--compare") && next) {
            const char *v = argv[++i], *comma = strchr(v, ',');
            ok = comma && comma - v < 16 && strlen(comma + 1) < 16;
            if (ok) {
                snprintf(pair[0], sizeof pair[0], "%.*s", (int)(comma - v), v);
                snprintf(pair[1], sizeof pair[1], "%s", comma + 1);
                o->compare[0] = pair[0];
                o->compare[1] = pair[1];
            }
        } else if (!strcmp(a, "--tolerance") && next)
            ok = parse_float(argv[++i], &o->tolerance) && o->tolerance > 0.0f;
        else if (!strcmp(a, "--spot-check"))
            o->spot_rows = ENGINE_SPOT_ROWS;
        else if (!strncmp(a, "--spot-check=", 13))
            ok = parse_int(a + 13, 2, &o->spot_rows);
        else if (!strcmp(a, "--no-spot-check"))
            o->spot_rows = 0;
        else if (!strcmp(a, "--debug-fault") && next)
            o->fault = argv[++i];
        else if (!strcmp(a, "--logits-out") && next)
            o->logits_out = argv[++i];
        else if (!strcmp(a, "--trace"))
            o->trace = true;
        else if (!strncmp(a, "--trace=", 8) && a[8]) {
            o->trace = true;
            o->trace_file = a + 8;
        } else if (!strcmp(a, "--tokenize"))
            o->tokenize = true;
        else if (!strcmp(a, "--smoke"))
            o->smoke = true;
        else if (!strcmp(a, "--json"))
            o->json = true;
        else if (!strcmp(a, "--chat"))
            o->chat = true;
        else if (!strcmp(a, "--chat-template") && next) {
            o->chat = true;
            o->chat_template = argv[++i];
            ok = engine_chat_formats(o->chat_template);
        } else if (!strcmp(a, "--special"))
            o->special = true;
        else if (!strcmp(a, "-q") || !strcmp(a, "--quiet"))
            o->quiet = true;
        else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            fputs(usage, stdout);
            exit(0);
        } else if (a[0] != '-' && !o->model)
            o->model = a;
        else {
            fprintf(stderr, "gguf-run: unknown or incomplete option '%s'\n%s", a, usage);
            return 2;
        }
        if (!ok && !strcmp(a, "--chat-template")) {
            fprintf(stderr, "gguf-run: --chat-template '%s' is not a format gguf-run writes (%s)\n", argv[i],
                    engine_chat_families());
            return 2;
        }
        if (!ok) {
            fprintf(stderr, "gguf-run: bad value for %s: '%s'\n", a, argv[i]);
            return 2;
        }
    }
    if (!o->model || !o->prompt) {
        fprintf(stderr, "gguf-run: %s\n%s", o->model ? "no prompt (-p TEXT)" : "no model file", usage);
        return 2;
    }
    const char *names[3] = { o->backend, o->compare[0], o->compare[1] };
    for (int i = 0; i < 3; i++)
        if (names[i] && strcmp(names[i], "cpu") && strcmp(names[i], "cuda")) {
            fprintf(stderr, "gguf-run: unknown backend '%s' (cpu, cuda)\n", names[i]);
            return 2;
        }
    if (o->spot_rows < 0)
        o->spot_rows = !strcmp(o->backend, "cuda") ? ENGINE_SPOT_ROWS : 0;
    return 0;
}

/* Exit status for an engine error: the file's fault (1) or trouble (2). */
static int engine_error_exit(const char *path, const engine_error *e)
{
    if (e->offset)
        fprintf(stderr, "gguf-run: %s: byte %llu: %s\n", path, (unsigned long long)e->offset, e->message);
    else
        fprintf(stderr, "gguf-run: %s: %s\n", path, e->message);
    return engine_status_is_file_fault(e->code) ? 1 : 2;
}

static int print_tokens_json(const run_opts *o, const engine_vocab *v, const int32_t *ids, size_t n)
{
    cJSON *doc = cJSON_CreateObject(), *arr = cJSON_AddArrayToObject(doc, "tokens"),
          *pieces = cJSON_AddArrayToObject(doc, "pieces");
    json_add_text(doc, "prompt", o->prompt);
    for (size_t i = 0; i < n; i++) {
        cJSON_AddItemToArray(arr, cJSON_CreateNumber(ids[i]));
        const gguf_str t = engine_vocab_text(v, ids[i]);
        char *s = utf8_sanitize(t.ptr ? t.ptr : "", t.len);
        cJSON_AddItemToArray(pieces, cJSON_CreateString(s));
        free(s);
    }
    return json_print_line(stdout, doc) ? 2 : 0;
}

typedef struct stream {
    const engine_vocab *v;
    bool echo;
    char *text;
    size_t len, cap;
} stream;

static void on_token(void *user, int32_t id)
{
    stream *s = user;
    size_t n = engine_token_piece(s->v, id, NULL, 0);
    if (s->len + n + 1 > s->cap) {
        size_t cap = (s->len + n + 1) * 2;
        char *p = realloc(s->text, cap);
        if (!p)
            return;
        s->text = p;
        s->cap = cap;
    }
    engine_token_piece(s->v, id, s->text + s->len, n);
    if (s->echo) {
        fwrite(s->text + s->len, 1, n, stdout);
        fflush(stdout);
    }
    s->len += n;
}

typedef struct logits_src {
    const float *p;
} logits_src;

static int fill_logits(void *user, uint64_t at, float *dst, size_t count)
{
    memcpy(dst, ((logits_src *)user)->p + at, count * sizeof(float));
    return 0;
}

int main(int argc, char **argv)
{
    term_guard_install(); /* nothing from the file reaches the terminal as a command */
    sigbus_guard_install("gguf-run"); /* a file that shrinks while read: a message and exit 2 */
    run_opts o;
    int rc = parse_args(argc, argv, &o);
    if (rc)
        return rc;
    gguf_file *f = NULL;
    gguf_error ge;
    if (gguf_open(o.model, &f, &ge) != GGUF_OK)
        return report_error("gguf-run", o.model, &ge);
    engine_error e;
    engine_vocab *v = NULL;
    engine_model *m = NULL;
    engine_ctx *c = NULL;
    engine_trace *trace = NULL;
    kern_backend *be = NULL;
    int32_t *ids = NULL;
    float *prompt_logits = NULL;
    stream st = { 0 };
    char *chat_text = NULL;
    run_result r = { .o = &o };
    rc = 2;
    if (engine_vocab_load(f, &v, &e)) {
        rc = engine_error_exit(o.model, &e);
        goto out;
    }
    const char *text = o.prompt, *family = NULL;
    if (o.chat && (rc = run_chat_prompt(&o, f, &chat_text, &family)))
        goto out;
    rc = 2;
    if (chat_text)
        text = chat_text;
    size_t n_ids;
    if (engine_tokenize(v, text, strlen(text), true, o.chat || o.special, &ids, &n_ids, &e)) {
        rc = engine_error_exit(o.model, &e);
        goto out;
    }
    if (o.tokenize) {
        rc = print_tokens_json(&o, v, ids, n_ids);
        goto out;
    }
    if (n_ids == 0) {
        fprintf(stderr, "gguf-run: the prompt gives no tokens (and the vocabulary adds no BOS)\n");
        goto out;
    }
    if (!o.n_threads)
        o.n_threads = (int)sysconf(_SC_NPROCESSORS_ONLN);
    engine_hparams hpr;
    if (engine_hparams_read(f, &hpr, &e)) {
        rc = engine_error_exit(o.model, &e);
        goto out;
    }
    int n_ctx = o.n_ctx ? o.n_ctx : (int)n_ids + o.n_predict;
    if (!o.n_ctx && n_ctx > hpr.n_ctx_train)
        n_ctx = hpr.n_ctx_train > (int)n_ids ? hpr.n_ctx_train : (int)n_ids;
    if (n_ctx < (int)n_ids) {
        fprintf(stderr, "gguf-run: the prompt has %zu tokens, more than the context of %d\n", n_ids, n_ctx);
        goto out;
    }
    if (o.compare[0]) {
        rc = run_compare(&o, f, ids, n_ids, n_ctx);
        goto out;
    }
    char why[512];
    be = run_backend_create(o.backend, o.n_threads, o.fault, why, sizeof why);
    if (!be) {
        fprintf(stderr, "gguf-run: --backend %s: %s\n", o.backend, why);
        goto out;
    }
    if (engine_model_load(f, be, &m, &e)) {
        rc = engine_error_exit(o.model, &e);
        goto out;
    }
    const engine_hparams *hp = engine_model_hparams(m);
    if (!o.quiet) {
        run_print_setup(stderr, f, m, v, &o, n_ctx);
        if (family) {
            fprintf(stderr, "chat       %s format (%s), %zu prompt tokens: \"", family,
                    o.chat_template ? "--chat-template" : "recognized in tokenizer.chat_template", n_ids);
            fmt_escaped(stderr, text, strlen(text));
            fprintf(stderr, "\"\n");
        }
    }
    if (engine_ctx_create(m, n_ctx, 256, &c, &e)) {
        rc = engine_error_exit(o.model, &e);
        goto out;
    }
    trace = engine_trace_create(hp->n_layer, hp->n_vocab);
    if (o.logits_out)
        prompt_logits = malloc(n_ids * (size_t)hp->n_vocab * sizeof(float));
    if (!trace || (o.logits_out && !prompt_logits)) {
        fprintf(stderr, "gguf-run: out of memory\n");
        goto out;
    }
    st = (stream){ .v = v, .echo = !o.json };
    engine_gen_params gp = { .n_predict = o.n_predict, .sampler = o.sampler, .prompt_logits = prompt_logits,
                             .spot_rows = o.spot_rows };
    if (engine_generate(c, v, ids, n_ids, &gp, trace, on_token, &st, &r.gen, &e)) {
        rc = engine_error_exit(o.model, &e);
        goto out;
    }
    if (!o.json)
        printf("\n");
    r.model = m;
    r.vocab = v;
    r.prompt = ids;
    r.n_prompt = n_ids;
    r.trace = trace;
    r.text = utf8_sanitize(st.text ? st.text : "", st.len);
    r.bytes_per_token = engine_model_bytes_per_token(m);
    r.ctx_bytes = engine_ctx_bytes(c);
    r.private_bytes = procmem_private_bytes();
    engine_smoke_judge(trace, v, (int)n_ids, r.gen.tokens, r.gen.n_tokens, &r.verdict);
    rc = 0;
    if (o.logits_out) {
        char msg[512];
        uint64_t shape[2] = { n_ids, (uint64_t)hp->n_vocab };
        logits_src src = { prompt_logits };
        if (npy_write_f32(o.logits_out, shape, 2, fill_logits, &src, (size_t)hp->n_vocab, msg, sizeof msg)) {
            fprintf(stderr, "gguf-run: %s\n", msg);
            rc = 2;
        }
    }
    if (o.trace && o.trace_file) {
        char msg[512];
        if (run_write_trace_json(o.trace_file, &r, msg, sizeof msg)) {
            fprintf(stderr, "gguf-run: %s\n", msg);
            rc = 2;
        }
    } else if (o.trace && !o.json) {
        run_print_trace(stdout, &r);
    }
    if (o.json && run_print_json(stdout, &r))
        rc = 2;
    if (!o.json)
        run_print_summary(stderr, &r);
    if (rc == 0 && o.smoke && !r.verdict.ok)
        rc = 1;
    if (rc == 0 && r.gen.spot.mismatches)
        rc = 1;  /* the backend's logits are wrong in places: nothing it generated can be trusted */
out:
    free(r.text);
    engine_gen_result_free(&r.gen);
    free(st.text);
    free(prompt_logits);
    free(ids);
    free(chat_text);
    engine_trace_free(trace);
    engine_ctx_free(c);
    engine_model_free(m);
    if (be)
        be->destroy(be);
    engine_vocab_free(v);
    gguf_close(f);
    return rc;
}
