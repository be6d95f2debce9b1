/* gguf-fidelity: is this quantization faithful to its source? llama-perplexity's KL-divergence statistics for one
 * or more quantized files against their base, both run in this one process chunk by chunk (no logits file). */
#include "args.h"
#include "atomic.h"
#include "format.h"
#include "kld.h"
#include "logits_file.h"
#include "output_guard.h"
#include "procmem.h"
#include "progress.h"
#include "read_file.h"
#include "tool.h"

#include "engine.h"
#include "fidelity.h"

#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const usage =
    "usage: gguf-fidelity BASE QUANT [QUANT...] -f TEXT [options]\n"
    "  BASE                  the model the quantizations were made from (an F32/F16/BF16 file, or any file\n"
    "                        taken as the reference)\n"
    "  QUANT                 quantizations of it (up to 8): the same vocabulary\n"
    "  -f, --file TEXT       the text to evaluate on (tokenized with the base's BOS rule, as llama-perplexity)\n"
    "  -c, --ctx-size N      tokens per chunk (default 512); positions N/2 .. N-2 of each are scored\n"
    "  --chunks N            at most N chunks (default: all the text holds)\n"
    "  -t, --threads N       CPU threads (default: all cores)\n"
    "  --numerics exact|ggml exact (default): weights decoded exactly, activations in f32; ggml: as llama.cpp's\n"
    "                        CPU backend computes (its figures then hold to llama-perplexity's)\n"
    "  --kl-divergence-base F  also write the base's log-probabilities as llama-perplexity does (its\n"
    "                        --kl-divergence-base file: llama-perplexity --kl-divergence reads it)\n"
    "  --base-logits F       take the base from such a file (made by llama-perplexity or by this tool)\n"
    "                        instead of running BASE: then every positional file is a QUANT\n"
    "  --provenance          also say whether each QUANT's bytes are what the quantizer makes of BASE: every\n"
    "                        tensor of a type ours writes as ggml's reference quantizers do (F16, BF16, Q8_0,\n"
    "                        Q4_0, Q4_K, Q6_K) quantized again and compared block by block (without -f: only\n"
    "                        this); exit 1 when a tensor differs\n"
    "  --attribute[=N]       name the N tensors (default 3) that cost each QUANT the most KLD: candidates ranked\n"
    "                        by their products' error on the base's activations, the first 4N each restored to\n"
    "                        the base's weights and the KLD measured again; the N that recover the most, their\n"
    "                        bytes at Q8_0, and llama-quantize --tensor-type overrides for them\n"
    "  --attribute-chunks N  chunks the attribution measures on (default 2)\n"
    "  --restore T1,T2,...   put these tensors back to BASE's weights in every QUANT before measuring\n"
    "  --plot F.svg          draw the attribution: product error per layer and tensor role, the measured\n"
    "                        tensors' KLD recovered (later QUANTs: F-2.svg, F-3.svg ...)\n"
    "  --json                JSON Lines on stdout: one line per chunk and model, one summary per model\n"
    "  -q, --quiet           no per-chunk lines\n"
    "  --version             print the version and exit\n"
    "exit status: 0 measured, 1 a model file has a problem, 2 trouble (usage, I/O, vocabularies that differ,\n"
    "a text too short)\n";


static int parse_args(int argc, char **argv, opts *o)
{
    memset(o, 0, sizeof *o);
    o->n_ctx = 512;
    o->chunks = -1;
    o->attribute_chunks = 2;
    enum { OPT_CHUNKS = 256, OPT_NUMERICS, OPT_KL_BASE, OPT_BASE_LOGITS, OPT_JSON, OPT_VERSION, OPT_PROVENANCE,
           OPT_ATTRIBUTE, OPT_ATTRIBUTE_CHUNKS, OPT_RESTORE, OPT_PLOT };
    static const struct option longs[] = {
        { "file", required_argument, 0, 'f' },          { "ctx-size", required_argument, 0, 'c' },
        { "threads", required_argument, 0, 't' },       { "chunks", required_argument, 0, OPT_CHUNKS },
        { "numerics", required_argument, 0, OPT_NUMERICS }, { "kl-divergence-base", required_argument, 0, OPT_KL_BASE },
        { "base-logits", required_argument, 0, OPT_BASE_LOGITS }, { "json", no_argument, 0, OPT_JSON },
        { "quiet", no_argument, 0, 'q' },               { "help", no_argument, 0, 'h' },
        { "version", no_argument, 0, OPT_VERSION },     { "provenance", no_argument, 0, OPT_PROVENANCE },
        { "attribute", optional_argument, 0, OPT_ATTRIBUTE }, { "attribute-chunks", required_argument, 0, OPT_ATTRIBUTE_CHUNKS },
        { "restore", required_argument, 0, OPT_RESTORE }, { "plot", required_argument, 0, OPT_PLOT },
        { 0, 0, 0, 0 },
    };
    const char *prog = "gguf-fidelity";
    long long v;
    int c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":f:c:t:qh", longs, NULL)) != -1) {
        switch (c) {
        case 'f': o->text_path = optarg; break;
        case 'c':
            if (!arg_int(prog, arg_flag(argv), optarg, 4, 1 << 20, &v))
                return 2;
            o->n_ctx = (int)v;
            o->ctx_given = true;
            break;
        case 't':
            if (!arg_int(prog, arg_flag(argv), optarg, 1, 1024, &v))
                return 2;
            o->n_threads = (int)v;
            break;
        case OPT_CHUNKS:
            if (!arg_int(prog, arg_flag(argv), optarg, 1, 1 << 30, &v))
                return 2;
            o->chunks = (int)v;
            break;
        case OPT_NUMERICS:
            if (!kern_numerics_parse(optarg, &o->numerics)) {
                fprintf(stderr, "gguf-fidelity: --numerics takes exact or ggml, got '%s'\n", optarg);
                return 2;
            }
            break;
        case OPT_KL_BASE: o->kl_base_out = optarg; break;
        case OPT_PLOT: o->plot = optarg; break;
        case OPT_BASE_LOGITS: o->base_logits = optarg; break;
        case OPT_JSON: o->json = true; break;
        case OPT_PROVENANCE: o->provenance = true; break;
        case OPT_ATTRIBUTE:
            o->attribute = 3;
            if (optarg && !arg_int(prog, "--attribute", optarg, 1, 64, &v))
                return 2;
            o->attribute = optarg ? (int)v : 3;
            break;
        case OPT_ATTRIBUTE_CHUNKS:
            if (!arg_int(prog, arg_flag(argv), optarg, 1, 1 << 20, &v))
                return 2;
            o->attribute_chunks = (int)v;
            break;
        case OPT_RESTORE:
            for (char *save = NULL, *name = strtok_r(optarg, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
                if (o->n_restore == MAX_RESTORE) {
                    fprintf(stderr, "gguf-fidelity: --restore: at most %d tensors\n", MAX_RESTORE);
                    return 2;
                }
                o->restore[o->n_restore++] = name;
            }
            break;
        case 'q': o->quiet = true; break;
        case 'h': fputs(usage, stdout); tool_exit(0);
        case OPT_VERSION: arg_print_version(prog); tool_exit(0);
        default: return arg_getopt_error(prog, c, argv);
        }
    }
    int first = optind;
    if (!o->base_logits) {
        if (first >= argc) {
            fprintf(stderr, "gguf-fidelity: no BASE model given\n%s", usage);
            return 2;
        }
        o->base = argv[first++];
    }
    for (; first < argc; first++) {
        if (o->n_quants == MAX_QUANTS) {
            fprintf(stderr, "gguf-fidelity: at most %d quantized files per run\n", MAX_QUANTS);
            return 2;
        }
        o->quants[o->n_quants++] = argv[first];
    }
    if (!o->n_quants) {
        fprintf(stderr, "gguf-fidelity: no QUANT model given: what should be held to the base?\n%s", usage);
        return 2;
    }
    if (!o->text_path && !o->base_logits && !o->provenance) {
        fprintf(stderr, "gguf-fidelity: -f TEXT is needed (the text to evaluate on)\n");
        return 2;
    }
    if ((o->provenance || o->attribute || o->n_restore) && o->base_logits) {
        fprintf(stderr, "gguf-fidelity: --provenance, --attribute and --restore need the BASE model itself, not "
                        "--base-logits\n");
        return 2;
    }
    if (o->base_logits && o->kl_base_out) {
        fprintf(stderr, "gguf-fidelity: --base-logits and --kl-divergence-base: the base is read, not run\n");
        return 2;
    }
    if (o->plot && !o->attribute) {
        fprintf(stderr, "gguf-fidelity: --plot draws the attribution: give --attribute too\n");
        return 2;
    }
    if (!o->n_threads)
        o->n_threads = (int)sysconf(_SC_NPROCESSORS_ONLN);
    return 0;
}


static void model_free(model *md)
{
    engine_ctx_free(md->c);
    engine_model_free(md->m);
    if (md->be)
        md->be->destroy(md->be);
    tok_vocab_free(md->v);
    gguf_close(md->f);
    kld_free(&md->acc);
}

int fid_trouble(int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "gguf-fidelity: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    return status;
}

/* Opens a model and its vocabulary (weights later, in model_load). */
static int model_open(model *md, const char *path)
{
    memset(md, 0, sizeof *md);
    md->path = path;
    gguf_error ge;
    if (gguf_open(path, &md->f, &ge) != GGUF_OK)
        return report_error("gguf-fidelity", path, &ge);
    output_guard_protect_model(md->f, path);
    tok_error te;
    if (tok_vocab_load(md->f, &md->v, &te))
        return fid_trouble(te.code == TOK_E_MALFORMED ? 1 : 2, "%s: %s", path, te.message);
    return 0;
}

/* Whether every tensor is F32: then llama.cpp's CPU backend rounds none of the activations its products read, and
 * --numerics ggml differs from exact only in the order of f32 sums (1e-7 of a logit), while exact's products run
 * twice as fast on a prompt. */
static bool all_f32(const gguf_file *f)
{
    for (uint64_t i = 0; i < gguf_tensor_count(f); i++)
        if (gguf_tensor_at(f, i)->type != GGUF_TENSOR_F32)
            return false;
    return true;
}

static int model_load(model *md, const opts *o, int max_batch)
{
    engine_error e;
    md->be = kern_cpu_create_numerics(o->n_threads, all_f32(md->f) ? KERN_NUMERICS_EXACT : o->numerics);
    if (!md->be)
        return fid_trouble(2, "out of memory");
    if (engine_model_load(md->f, md->be, &md->m, &e) || engine_ctx_create(md->m, o->n_ctx, max_batch, &md->c, &e))
        return fid_trouble(engine_status_is_file_fault(e.code) ? 1 : 2, "%s: %s", md->path, e.message);
    if (engine_model_hparams(md->m)->n_vocab < tok_vocab_size(md->v))
        return fid_trouble(1, "%s: %d embedding rows for a %d-token vocabulary", md->path,
                       engine_model_hparams(md->m)->n_vocab, tok_vocab_size(md->v));
    /* the models take turns chunk by chunk: each one's weights leave the resident set layer by layer as its pass
     * goes, so the process holds about one layer of one model (the page cache keeps them for the next pass) */
    engine_model_release_weights(md->m, true);
    return 0;
}

int fid_run_chunk(model *md, const int32_t *chunk, int n_ctx, float *logits)
{
    engine_error e;
    const int first = n_ctx / 2;
    const double t0 = monotonic_seconds();
    /* the first half without logits: only positions n_ctx / 2 .. are scored, and the output product of the others
     * would be a fifth of a small model's work */
    if (engine_ctx_rewind(md->c, 0, &e) || engine_forward(md->c, chunk, first, false, NULL, NULL, &e) ||
        engine_forward(md->c, chunk + first, n_ctx - first, true, logits, NULL, &e))
        return fid_trouble(2, "%s: %s", md->path, e.message);
    md->seconds += monotonic_seconds() - t0;
    return 0;
}


void fid_chunk_tokens(const job *j, int i, int32_t *chunk)
{
    memcpy(chunk, j->tokens + (size_t)i * j->o->n_ctx, (size_t)j->o->n_ctx * sizeof *chunk);
    if (j->add_bos)
        chunk[0] = j->bos; /* llama-perplexity: each chunk starts with BOS where the vocabulary adds one */
}

/* Every chunk: the base's log-probabilities (run, or read from the file), written to out when given, then every
 * quantization's logits held to them. */
static int evaluate(job *j, FILE *out)
{
    const opts *o = j->o;
    const int n_ctx = o->n_ctx, first = n_ctx / 2, scored = logits_file_scored(n_ctx), V = j->n_vocab;
    const size_t row = kld_row_u16(V);
    float *logits = malloc((size_t)(n_ctx - first) * V * sizeof *logits);
    uint16_t *rows = malloc((size_t)scored * row * sizeof *rows);
    int32_t *chunk = malloc((size_t)n_ctx * sizeof *chunk);
    int rc = 0;
    char why[600];
    if (!logits || !rows || !chunk) {
        rc = fid_trouble(2, "out of memory for a chunk of %d positions of %d logits", n_ctx, V);
        goto done;
    }
    if (out && !logits_file_write_header(out, (uint32_t)n_ctx, V, j->n_chunk, j->tokens)) {
        rc = fid_trouble(2, "--kl-divergence-base: writing failed");
        goto done;
    }
    const double t0 = monotonic_seconds();
    if (!o->json && !o->quiet)
        printf("chunk model                              PPL               ln(PPL(Q)/PPL(base))          KL Divergence"
               "              Δp RMS            Same top p\n");
    for (int i = 0; i < j->n_chunk && !rc; i++) {
        const int32_t *toks = j->tokens + (size_t)i * n_ctx;
        fid_chunk_tokens(j, i, chunk);
        if (j->base_file) {
            if (!logits_file_read_chunk(j->base_file, rows, why, sizeof why)) {
                rc = fid_trouble(2, "--base-logits: %s", why);
                break;
            }
        } else {
            if ((rc = fid_run_chunk(j->base, chunk, n_ctx, logits)))
                break;
            kld_store_rows(logits, V, toks + first + 1, scored, rows, o->n_threads);
            if (out && !logits_file_write_chunk(out, rows, n_ctx, V)) {
                rc = fid_trouble(2, "--kl-divergence-base: writing failed");
                break;
            }
        }
        for (int q = 0; q < o->n_quants && !rc; q++) {
            model *md = &j->quants[q];
            if ((rc = fid_run_chunk(md, chunk, n_ctx, logits)))
                break;
            if (!kld_add_rows(&md->acc, logits, V, rows, toks + first + 1, scored, o->n_threads))
                rc = fid_trouble(2, "out of memory");
            fid_print_chunk(j, i, md);
        }
        if (i == 0 && !o->json && !o->quiet) {
            char eta[32];
            progress_eta(monotonic_seconds() - t0, 1, (uint64_t)j->n_chunk, eta, sizeof eta);
            fprintf(stderr, "gguf-fidelity: %.2f seconds a chunk for %d model%s; %s\n", monotonic_seconds() - t0,
                    o->n_quants + !j->base_file, o->n_quants + !j->base_file > 1 ? "s" : "", eta);
        }
    }
done:
    free(logits), free(rows), free(chunk);
    j->status = rc;
    return rc ? -1 : 0;
}

static int write_base_then_evaluate(void *user, FILE *fp)
{
    return evaluate(user, fp);
}

/* The text's tokens as llama-perplexity takes them (BOS first where the vocabulary adds one). */
static int tokenize_text(const model *md, const char *text, size_t len, int32_t **ids, size_t *n)
{
    tok_error te;
    if (tok_tokenize(md->v, text, len, true, false, ids, n, &te))
        return fid_trouble(te.code == TOK_E_MALFORMED ? 1 : 2, "%s: %s", md->path, te.message);
    return 0;
}

static int tool_main(int argc, char **argv)
{
    opts o;
    int rc = parse_args(argc, argv, &o);
    if (rc)
        return rc;
    model base = { 0 }, quants[MAX_QUANTS] = { { 0 } };
    logits_file lf = { 0 };
    char *text = NULL;
    int32_t *tokens = NULL;
    size_t n_tokens = 0, len = 0;
    char why[600];
    if (o.text_path)
        output_guard_protect_path(o.text_path);
    if (o.base_logits)
        output_guard_protect_path(o.base_logits);
    if (o.base && (rc = model_open(&base, o.base)))
        goto out;
    for (int q = 0; q < o.n_quants; q++)
        if ((rc = model_open(&quants[q], o.quants[q])))
            goto out;
    rc = 2;
    if (output_guard_refuses("gguf-fidelity", "--kl-divergence-base", o.kl_base_out) ||
        output_guard_refuses("gguf-fidelity", "--plot", o.plot))
        goto out;
    const model *ref = o.base ? &base : &quants[0]; /* whose vocabulary tokenizes */
    if (o.text_path) {
        if (!(text = read_file_text(o.text_path, (size_t)1 << 30, &len, why, sizeof why))) {
            rc = fid_trouble(2, "-f: %s", why);
            goto out;
        }
        if ((rc = tokenize_text(ref, text, len, &tokens, &n_tokens)))
            goto out;
        rc = 2;
    }
    /* every model must read the text as the same tokens: otherwise their distributions are over different things */
    for (int q = o.base ? 0 : 1; q < o.n_quants && text; q++) {
        int32_t *ids = NULL;
        size_t n = 0;
        if ((rc = tokenize_text(&quants[q], text, len, &ids, &n)))
            goto out;
        const bool same = n == n_tokens && !memcmp(ids, tokens, n * sizeof *ids) &&
                          tok_vocab_size(quants[q].v) == tok_vocab_size(ref->v);
        free(ids);
        if (!same) {
            rc = fid_trouble(2, "%s and %s tokenize the text differently (or their vocabularies differ in size): a "
                            "quantization of the same model keeps its vocabulary", ref->path, quants[q].path);
            goto out;
        }
    }
    if (o.provenance && !o.text_path) { /* provenance alone */
        int worst = 0;
        for (int q = 0; q < o.n_quants; q++) {
            const int p = fid_print_provenance(&o, &base, &quants[q]);
            worst = p > worst ? p : worst;
        }
        rc = worst;
        goto out;
    }
    int n_vocab = tok_vocab_size(ref->v), n_chunk;
    if (o.base_logits) {
        if (!logits_file_open(&lf, o.base_logits, why, sizeof why)) {
            rc = fid_trouble(2, "--base-logits: %s", why);
            goto out;
        }
        if (o.ctx_given && (int)lf.n_ctx != o.n_ctx)
            fprintf(stderr, "gguf-fidelity: %s was made with a context of %u: using it\n", o.base_logits, lf.n_ctx);
        o.n_ctx = (int)lf.n_ctx;
        if (lf.n_vocab != n_vocab) {
            rc = fid_trouble(2, "--base-logits: %s holds %d-token distributions, %s's vocabulary has %d", o.base_logits,
                         lf.n_vocab, ref->path, n_vocab);
            goto out;
        }
        n_chunk = o.chunks > 0 && o.chunks < lf.n_chunk ? o.chunks : lf.n_chunk;
        if (tokens && (n_tokens < (size_t)n_chunk * o.n_ctx ||
                       memcmp(tokens, lf.tokens, (size_t)n_chunk * o.n_ctx * sizeof *tokens)))
            fprintf(stderr, "gguf-fidelity: -f's tokens differ from those in %s: the file's are evaluated\n",
                    o.base_logits);
    } else {
        if (n_tokens < 2 * (size_t)o.n_ctx) {
            rc = fid_trouble(2, "%s: the text gives %zu tokens; a context of %d needs at least %d (as llama-perplexity)",
                         o.text_path, n_tokens, o.n_ctx, 2 * o.n_ctx);
            goto out;
        }
        n_chunk = (int)(n_tokens / (size_t)o.n_ctx);
        n_chunk = o.chunks > 0 && o.chunks < n_chunk ? o.chunks : n_chunk;
    }
    if ((o.base && (rc = model_load(&base, &o, o.n_ctx))))
        goto out;
    for (int q = 0; q < o.n_quants; q++)
        if ((rc = model_load(&quants[q], &o, o.n_ctx)))
            goto out;
    rc = 2;
    for (int q = 0; q < o.n_quants; q++)
        for (int r = 0; r < o.n_restore; r++) {
            const gguf_tensor *t = gguf_tensor_by_name(base.f, o.restore[r]);
            engine_error e;
            if (!t) {
                rc = fid_trouble(2, "--restore: %s has no tensor '%s'", base.path, o.restore[r]);
                goto out;
            }
            if (engine_model_replace_weight(quants[q].m, t, &e)) {
                rc = fid_trouble(2, "--restore: %s: %s", quants[q].path, e.message);
                goto out;
            }
        }
    if (engine_model_hparams(quants[0].m)->n_vocab != n_vocab)
        n_vocab = engine_model_hparams(quants[0].m)->n_vocab; /* padded vocabularies: the logits' width */
    for (int q = 0; q < o.n_quants; q++)
        if (engine_model_hparams(quants[q].m)->n_vocab != n_vocab ||
            (o.base && engine_model_hparams(base.m)->n_vocab != n_vocab)) {
            rc = fid_trouble(2, "%s has %d embedding rows, another model %d: not quantizations of one model",
                         quants[q].path, engine_model_hparams(quants[q].m)->n_vocab, n_vocab);
            goto out;
        }
    if (!o.json)
        fprintf(stderr, "gguf-fidelity: %d chunks of %d tokens (%d scored each), %s numerics, %d threads\n", n_chunk,
                o.n_ctx, logits_file_scored(o.n_ctx), o.numerics == KERN_NUMERICS_GGML ? "ggml" : "exact",
                o.n_threads);
    job j = { .o = &o, .base = o.base ? &base : NULL, .quants = quants, .base_file = o.base_logits ? &lf : NULL,
              .tokens = o.base_logits ? lf.tokens : tokens, .n_chunk = n_chunk, .n_vocab = n_vocab,
              .add_bos = tok_vocab_add_bos(ref->v), .bos = tok_vocab_bos(ref->v) };
    if (o.kl_base_out) {
        char err[600];
        if (atomic_write(o.kl_base_out, write_base_then_evaluate, &j, err, sizeof err) && !j.status) {
            rc = fid_trouble(2, "--kl-divergence-base: %s", err);
            goto out;
        }
    } else {
        evaluate(&j, NULL);
    }
    if ((rc = j.status))
        goto out;
    for (int q = 0; q < o.n_quants; q++)
        fid_print_summary(&j, &quants[q]);
    if (!o.json) {
        const uint64_t priv = procmem_private_bytes(), peak = procmem_peak_bytes();
        fprintf(stderr, "gguf-fidelity: %s%.1f s for the base; memory: %.0f MiB private (logits, caches, figures), "
                        "%.0f MiB peak resident with the weights (a layer at a time)\n",
                j.base ? "" : "(the base read from its file) ", j.base ? j.base->seconds : 0.0, priv / 1048576.0,
                peak / 1048576.0);
    }
    rc = 0;
    for (int q = 0; o.attribute && q < o.n_quants; q++)
        if ((rc = fid_attribute(&j, &quants[q], q)))
            goto out;
    for (int q = 0; o.provenance && q < o.n_quants; q++) {
        const int p = fid_print_provenance(&o, &base, &quants[q]);
        rc = p > rc ? p : rc;
    }
out:
    model_free(&base);
    for (int q = 0; q < o.n_quants; q++)
        model_free(&quants[q]);
    logits_file_close(&lf);
    free(tokens);
    free(text);
    return rc;
}

int main(int argc, char **argv)
{
    tool_start("gguf-fidelity");
    return tool_finish(tool_main(argc, argv));
}
