/*
 * gguf-inspect --memory against the buffers llama.cpp's CPU build printed for the same files, contexts, cache
 * types and flash-attention settings (tests/data/llama_cpp_memory.tsv, made by scripts/llama-memory-reference.sh):
 * every shared model, the two real ones, the four quantized mixtures, the eight synthetic architectures
 * (written at test time by synth_arch.py) and the held-out Olmo 3 shape (heldout_arch.py: its iSWA cache) and
 * Gemma 4's (layers of two shapes: each kind's cache, V padded to the widest without flash attention; E2B's shared caches),
 * and the hybrids' (nemotron_h, nemotron_h_moe, granitehybrid's Mamba-2 mixers, lfm2 and lfm2moe's short
 * convolutions, qwen35, qwen35moe and qwen3next's gated delta nets: a KV cache for the attention layers alone, the
 * recurrent states, their graphs' state reads where the builders expand them; falcon-h1's mixer beside the attention in
 * every layer: both), at contexts 512, 4096 and the model's maximum.
 *
 * Also several sequences (one cache stream each) and odd batch sizes (tests/data/llama_cpp_memory_streams.tsv).
 * Held to: every buffer (the weights mapped and repacked, the KV cache, the recurrent states, the output buffer and the
 * compute buffer, which model/memory_compute.c replays from llama.cpp's graph and allocator, holes and all) to
 * llama.cpp's printed figure (its two decimals of MiB), and so every total.
 */
#include "golden.h"
#include "model.h"
#include "testutil.h"

#include <cJSON.h>
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char tmp_dir[64];
static void setup(void) { cr_assert(tmp_dir_make(tmp_dir, "memory")); }
static void teardown(void) { cr_assert(tmp_dir_remove(tmp_dir)); }
TestSuite(memory, .init = setup, .fini = teardown, .timeout = 300);

enum { B_MAPPED, B_REPACK, B_KV, B_RS, B_OUTPUT, B_COMPUTE, B_COUNT };
static const char *const buffer_names[B_COUNT] = { "CPU_Mapped", "CPU_REPACK", "KV", "RS", "output", "compute" };

typedef struct row {
    char file[96], ctk[8], fa[8];
    long ctx, np, ub, b;
    double mib[B_COUNT]; /* llama.cpp prints the KV cache of an iSWA model as two buffers: summed */
    int printed[B_COUNT]; /* how many figures each sum is of */
} row;

/* The rows of llama_cpp_memory.tsv (file ctx ctk fa buffer MiB, one sequence and llama.cpp's default batches) and
 * of llama_cpp_memory_streams.tsv (np, ub and b between fa and the buffer), from *n on. */
static size_t read_rows(const char *path, bool streams, row *rows, size_t n, size_t cap)
{
    FILE *fp = fopen(path, "r");
    cr_assert(fp, "%s is missing", path);
    char line[512];
    while (fgets(line, sizeof line, fp)) {
        if (line[0] == '#')
            continue;
        char file[96], ctk[8], fa[8], buf[16];
        long ctx, np = 1, ub = 512, b = 2048;
        double mib;
        if (streams)
            cr_assert_eq(sscanf(line, "%95s %ld %7s %7s %ld %ld %ld %15s %lf", file, &ctx, ctk, fa, &np, &ub, &b, buf,
                                &mib), 9, "bad line: %s", line);
        else
            cr_assert_eq(sscanf(line, "%95s %ld %7s %7s %15s %lf", file, &ctx, ctk, fa, buf, &mib), 6,
                         "bad line: %s", line);
        if (n == 0 || strcmp(rows[n - 1].file, file) || rows[n - 1].ctx != ctx || strcmp(rows[n - 1].ctk, ctk) ||
            strcmp(rows[n - 1].fa, fa) || rows[n - 1].np != np || rows[n - 1].ub != ub || rows[n - 1].b != b) {
            cr_assert_lt(n, cap);
            memset(&rows[n], 0, sizeof rows[n]);
            snprintf(rows[n].file, sizeof rows[n].file, "%s", file);
            snprintf(rows[n].ctk, sizeof rows[n].ctk, "%s", ctk);
            snprintf(rows[n].fa, sizeof rows[n].fa, "%s", fa);
            rows[n].np = np, rows[n].ub = ub, rows[n].b = b;
            rows[n++].ctx = ctx;
        }
        for (int b = 0; b < B_COUNT; b++)
            if (strcmp(buf, buffer_names[b]) == 0) {
                rows[n - 1].mib[b] += mib;
                rows[n - 1].printed[b]++;
            }
    }
    fclose(fp);
    return n;
}

/* The file a row names: a shared model, a mixture, a real one, or a synthetic architecture written here. */
static char *find_file(const char *name)
{
    char path[512];
    if (snprintf(path, sizeof path, "%s/moe/%s", models_dir(), name) < (int)sizeof path && access(path, R_OK) == 0)
        return strdup(path);
    char *p = model_path(name);
    if (p)
        return p;
    char preset[64];
    size_t len = strlen(name);
    const bool synth = !strncmp(name, "tiny-", 5), heldout = !strncmp(name, "heldout-", 8);
    if (!(synth || heldout) || len < 10 || strcmp(name + len - 9, "-f32.gguf") != 0)
        return NULL;
    snprintf(preset, sizeof preset, "%.*s", (int)(len - 9), name);
    if (snprintf(path, sizeof path, "%s/%s", tmp_dir, name) >= (int)sizeof path)
        return NULL;
    if (access(path, R_OK) == 0)
        return strdup(path);
    char why[200] = "";
    if (heldout) /* test_engine_arch checks the held-out shapes' sha256 */
        return heldout_arch_write(preset, path, why) ? strdup(path) : NULL;
    int w = synth_arch_write(preset, path, why);
    cr_assert_geq(w, 0, "%s: %s", preset, why);
    return w == 1 ? strdup(path) : NULL;
}

static double mib(uint64_t b)
{
    return (double)b / (1024.0 * 1024.0);
}

Test(memory, buffers_match_llama_cpp, .timeout = 1200)
{
    static row rows[2048];
    const size_t cap = sizeof rows / sizeof rows[0];
    size_t n = read_rows("tests/data/llama_cpp_memory.tsv", false, rows, 0, cap), checked = 0, files_missing = 0;
    n = read_rows("tests/data/llama_cpp_memory_streams.tsv", true, rows, n, cap);
    double worst_compute = 0;
    for (size_t i = 0; i < n; i++) {
        const row *r = &rows[i];
        char *path = find_file(r->file);
        if (!path) {
            files_missing++;
            continue;
        }
        gguf_file *f = NULL;
        gguf_error e;
        cr_assert_eq(gguf_open(path, &f, &e), GGUF_OK, "%s: %s", path, e.message);
        model_hparams hp;
        model_error me;
        cr_assert_eq(model_hparams_read(f, &hp, &me), MODEL_OK, "%s: %s", path, me.message);
        model_memory_params p = model_memory_params_default();
        p.cpu_avx2 = p.cpu_avx512 = true; /* the CPU the reference ran on, whatever this one is */
        p.n_ctx = r->ctx;
        p.type_k = p.type_v = (uint32_t)gguf_type_from_name(r->ctk);
        p.flash_attn = strcmp(r->fa, "off") == 0 ? 0 : -1;
        p.n_seq = r->np, p.n_ubatch = r->ub, p.n_batch = r->b;
        model_memory m;
        cr_assert_eq(model_memory_estimate(f, &hp, &p, &m, &me), MODEL_OK, "%s: %s", path, me.message);
        const double ours[B_COUNT] = { mib(m.weights_mapped), mib(m.weights_repacked), mib(m.kv_bytes),
                                       mib(m.recurrent), mib(m.output), mib(m.compute) };
        /* printed with two decimals: each figure is within 0.005 MiB of what llama.cpp allocated, a sum of two (an
         * iSWA cache's) within 0.01 (the weights' also within 0.1 %: alignment the printout does not show) */
        for (int b = B_MAPPED; b <= B_COMPUTE; b++)
            cr_expect_leq(fabs(ours[b] - r->mib[b]),
                          0.0051 * (r->printed[b] > 1 ? r->printed[b] : 1) + (b == B_COMPUTE ? 0.0 : 0.001 * r->mib[b]),
                          "%s -c %ld -ctk %s -fa %s -np %ld -ub %ld -b %ld: %s %.4f MiB, llama.cpp %.2f", r->file,
                          r->ctx, r->ctk, r->fa, r->np, r->ub, r->b, buffer_names[b], ours[b], r->mib[b]);
        worst_compute = fmax(worst_compute, fabs(ours[B_COMPUTE] - r->mib[B_COMPUTE]) / r->mib[B_COMPUTE]);
        checked++;
        gguf_close(f);
        free(path);
    }
    cr_assert_gt(checked, 0, "none of the files in tests/data/llama_cpp_memory.tsv is here");
    cr_log_info("memory: %zu settings checked (%zu skipped: file absent); the compute buffer %.2f %% from llama.cpp's "
                "at worst", checked, files_missing, 100 * worst_compute);
}

/* --fit: the largest multiple of 256 whose total fits, so the budget of context C's total gives C and a byte less
 * gives less. */
Test(memory, fit_is_the_largest_context_within_the_budget)
{
    char *path = model_path("tiny-llama-f32.gguf");
    if (!path)
        cr_skip("tiny-llama-f32.gguf is not in the shared models");
    gguf_file *f = NULL;
    cr_assert_eq(gguf_open(path, &f, NULL), GGUF_OK);
    model_hparams hp;
    cr_assert_eq(model_hparams_read(f, &hp, NULL), MODEL_OK);
    model_memory_params p = model_memory_params_default();
    for (int64_t c = 256; c <= hp.n_ctx_train; c *= 2) {
        p.n_ctx = c;
        model_memory m;
        cr_assert_eq(model_memory_estimate(f, &hp, &p, &m, NULL), MODEL_OK);
        cr_expect_eq(model_memory_fit(f, &hp, &p, m.total), c, "budget %llu", (unsigned long long)m.total);
        cr_expect_lt(model_memory_fit(f, &hp, &p, m.total - 1), c);
    }
    cr_expect_eq(model_memory_fit(f, &hp, &p, 1024), 0, "1 KiB holds no context");
    gguf_close(f);
    free(path);
}

/* What a user types: llama.cpp's option spellings, the two outputs, and the mistakes. */
Test(memory, cli)
{
    char *path = model_path("tiny-llama-q4_0.gguf");
    if (!path)
        cr_skip("tiny-llama-q4_0.gguf is not in the shared models");
    char args[1024];
    int st;
    snprintf(args, sizeof args, "'%s' --memory -c 4096 -ctk q8_0 -ctv=q8_0 -fa on -ub 256", path);
    char *out = run_tool("gguf-inspect", args, &st);
    cr_assert_eq(st, 0, "%s", out);
    cr_expect(strstr(out, "-c 4096 -b 2048 -ub 256 -ctk q8_0 -ctv q8_0 -fa on"), "%s", out);
    /* 4 layers x 4096 cells x 128 K values in q8_0 (34 bytes per 32) and as many V: 4.25 MiB, llama.cpp's figure */
    cr_expect(strstr(out, "KV cache                 4.25 MiB"), "%s", out);
    free(out);
    snprintf(args, sizeof args, "'%s' --memory --json --fit 64MiB", path);
    out = run_tool("gguf-inspect", args, &st);
    cr_assert_eq(st, 0, "%s", out);
    cJSON *doc = cJSON_Parse(out);
    cr_assert(doc, "%s", out);
    const cJSON *mem = cJSON_GetObjectItem(doc, "memory"), *fit = cJSON_GetObjectItem(doc, "fit");
    cr_assert(mem && fit, "%s", out);
    cr_expect_eq(cJSON_GetObjectItem(mem, "n_ctx")->valuedouble, 2048, "-c 0 (default) is the model's 2048");
    cr_expect_eq(cJSON_GetObjectItem(fit, "budget")->valuedouble, 64.0 * 1024 * 1024);
    cr_expect_eq(cJSON_GetObjectItem(fit, "n_ctx")->valuedouble, 2048, "64 MiB holds all 2048 trained positions");
    cJSON_Delete(doc);
    free(out);
    /* weights 3.45 MiB, compute ~7 MiB, 2 KiB of cache per position: 12 MiB holds some positions, not all */
    snprintf(args, sizeof args, "'%s' --memory --fit 12M", path);
    out = run_tool("gguf-inspect", args, &st);
    long fit_ctx = 0;
    const char *fl = strstr(out, "fit: -c ");
    cr_assert(st == 0 && fl && sscanf(fl, "fit: -c %ld", &fit_ctx) == 1, "%s", out);
    cr_expect(fit_ctx > 0 && fit_ctx < 2048 && fit_ctx % 256 == 0, "%s", out);
    free(out);
    static const struct { const char *args, *says; } bad[] = {
        { "--memory -ctk q3_k", "needs one of f32, f16" },
        { "--memory -fa maybe", "needs on, off or auto" },
        { "--fit 1G", "--fit answers with --memory" },
        { "--memory --fit lots", "needs a size in bytes" },
        { "--memory -ctv q8_0 -fa off", "a quantized V cache needs flash attention" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        snprintf(args, sizeof args, "'%s' %s 2>&1", path, bad[i].args);
        out = run_tool("gguf-inspect", args, &st);
        cr_expect_eq(st, 2, "%s: %s", bad[i].args, out);
        cr_expect(strstr(out, bad[i].says), "%s: %s", bad[i].args, out);
        free(out);
    }
    free(path);
}

/* What llama-completion does with two held-out files that the buffer rows alone would not say: MiniCPM3's file trained
 * on 128 positions, at -c 0, makes batches of 128 in a cache padded to 256 (measured: compute 1.07 MiB, KV 0.66 MiB,
 * in tests/data/llama_cpp_memory.tsv); a PLM file with flash attention on aborts (measured: GGML_ASSERT in
 * ggml_set_rows), which the report says, and with it off runs (its rows in the same table). */
Test(memory, cli_says_the_batch_and_where_llama_cpp_aborts)
{
    if (access(venv_python(), X_OK) != 0)
        cr_skip("build/venv not found: the held-out files cannot be written");
    char *mini = find_file("heldout-minicpm3-f32.gguf"), *plm = find_file("heldout-plm-f32.gguf");
    cr_assert(mini && plm);
    char args[1024];
    int st;
    snprintf(args, sizeof args, "'%s' --memory -c 0", mini);
    char *out = run_tool("gguf-inspect", args, &st);
    cr_assert_eq(st, 0, "%s", out);
    cr_expect(strstr(out, "256 cells x 3 layers") && strstr(out, "a batch of 128 tokens"), "%s", out);
    cr_expect(!strstr(out, "llama.cpp aborts"), "%s", out);
    free(out);
    static const struct {
        const char *fa;
        bool aborts;
    } settings[] = { { "auto", true }, { "on", true }, { "off", false } };
    for (size_t i = 0; i < sizeof settings / sizeof settings[0]; i++) {
        snprintf(args, sizeof args, "'%s' --memory -c 512 -fa %s", plm, settings[i].fa);
        out = run_tool("gguf-inspect", args, &st);
        cr_assert_eq(st, 0, "%s", out);
        cr_expect_eq(strstr(out, "note: llama.cpp aborts making this context") != NULL, settings[i].aborts,
                     "-fa %s: %s", settings[i].fa, out);
        free(out);
    }
    free(mini);
    free(plm);
}

/* llama.cpp's context turns flash attention off for every grok file (measured with llama-completion on both held-out
 * files: "flash_attn is not compatible with Grok - forcing off"; -fa auto made the compute buffer of -fa off, 41.51 MiB
 * at -c 4096, and -ctk/-ctv q8_0 failed to make a context): the report says so, -fa on estimates what -fa off does,
 * and a quantized V cache is refused with the reason. */
Test(memory, grok_runs_without_flash_attention)
{
    if (access(venv_python(), X_OK) != 0)
        cr_skip("build/venv not found: the held-out files cannot be written");
    char *grok = find_file("heldout-grok-f32.gguf");
    cr_assert(grok);
    char args[1024];
    int st;
    char *outs[2];
    static const char *const fa[2] = { "on", "off" };
    for (int i = 0; i < 2; i++) {
        snprintf(args, sizeof args, "'%s' --memory -c 4096 -fa %s", grok, fa[i]);
        outs[i] = run_tool("gguf-inspect", args, &st);
        cr_assert_eq(st, 0, "%s", outs[i]);
        cr_expect(strstr(outs[i], "compute                 41.51 MiB"), "-fa %s: %s", fa[i], outs[i]);
        cr_expect_eq(strstr(outs[i], "llama.cpp turns flash attention off for every grok model") != NULL, i == 0,
                     "-fa %s: %s", fa[i], outs[i]);
    }
    free(outs[0]);
    free(outs[1]);
    snprintf(args, sizeof args, "'%s' --memory -c 4096 -ctk q8_0 -ctv q8_0 2>&1", grok);
    char *out = run_tool("gguf-inspect", args, &st);
    cr_expect_eq(st, 2, "%s", out);
    cr_expect(strstr(out, "which llama.cpp turns off for every grok model"), "%s", out);
    free(out);
    free(grok);
}

/* gguf-run's own use beside its estimate (the private memory measured with the model loaded, plus the pages its
 * context commits for the positions reached), on the real SmolLM2: a short prompt in a large context (the caches'
 * first pages of every layer) and a long prompt (most of them). Within 10 %. */
Test(memory, gguf_run_uses_what_it_estimates)
{
    if (getenv("ASAN_OPTIONS"))
        cr_skip("under AddressSanitizer the process's memory is its shadow's: nothing to hold an estimate to");
    char *path = model_path("SmolLM2-135M-Instruct.Q4_1.gguf");
    if (!path)
        cr_skip("the real SmolLM2 is not here (make models fetches it)");
    char prompt[256], args[1024];
    snprintf(prompt, sizeof prompt, "%s/prompt.txt", tmp_dir);
    FILE *fp = fopen(prompt, "w");
    cr_assert(fp);
    for (int i = 0; i < 80; i++) /* about 1500 tokens */
        fprintf(fp, "The %d-th line of a long prompt says where the river turns and why. ", i);
    fclose(fp);
    static const struct { const char *opts; } runs[] = { { "-p Hi -c 8192" }, { "-f PROMPT -c 2048" } };
    for (size_t i = 0; i < 2; i++) {
        char opts[512];
        snprintf(opts, sizeof opts, "%s", runs[i].opts);
        char *at = strstr(opts, "PROMPT");
        if (at) {
            char rest[256];
            snprintf(rest, sizeof rest, "%s", at + 6);
            snprintf(at, sizeof opts - (size_t)(at - opts), "'%s'%s", prompt, rest);
        }
        snprintf(args, sizeof args, "'%s' %s -n 4 -t 2 --json", path, opts);
        int st;
        char *out = run_tool("gguf-run", args, &st);
        cJSON *doc = cJSON_Parse(out);
        cr_assert(st == 0 && doc, "%s", out);
        const cJSON *mem = cJSON_GetObjectItem(doc, "memory");
        double used = cJSON_GetObjectItem(mem, "private_bytes")->valuedouble;
        double est = cJSON_GetObjectItem(mem, "estimated_bytes")->valuedouble;
        int positions = cJSON_GetObjectItem(mem, "positions")->valueint;
        cr_expect(fabs(used - est) <= 0.10 * est, "%s: %.1f MiB private, estimated %.1f MiB for %d positions", opts,
                  used / 1048576, est / 1048576, positions);
        cr_log_info("gguf-run %s: %.1f MiB private, estimated %.1f MiB for %d positions", opts, used / 1048576,
                    est / 1048576, positions);
        cJSON_Delete(doc);
        free(out);
    }
    /* --dry-run says both without running */
    snprintf(args, sizeof args, "'%s' -p Hi -c 4096 --dry-run 2>/dev/null", path);
    int st;
    char *out = run_tool("gguf-run", args, &st);
    cr_expect(st == 0 && strstr(out, "gguf-run   -c 4096:") && strstr(out, "KV cache                90.00 MiB"), "%s",
              out);
    free(out);
    free(path);
}

/* A hybrid's report says what its recurrent layers hold beside the attention layers' cache, in llama.cpp's figures at
 * -c 4096 (tests/data/llama_cpp_memory.tsv): Nemotron-H's three Mamba-2 mixers and one attention layer, Qwen3.5's four
 * gated delta nets, Qwen3-Next's older file (one q, k, v, z product), LFM2's short convolutions (taps, no scan); Mamba-2
 * and Falcon-Mamba (Mamba-1: a state per channel) keep no cache at all (llama.cpp prints no KV buffer). */
Test(memory, hybrids_report_their_recurrent_states)
{
    static const struct {
        const char *file, *kv, *states, *compute; /* each: the MiB figure, two spaces, what the report says of it */
    } cases[] = {
        { "heldout-nemotron_h-f32.gguf", "1.00 MiB  (4096 cells x 1 layers;",
          "0.03 MiB  (3 recurrent layers x 1 sequence: 576 conv values, 2048 state values each; f32)", "6.42 MiB" },
        { "heldout-qwen35-f32.gguf", "1.00 MiB  (4096 cells x 1 layers;",
          "0.02 MiB  (4 recurrent layers x 1 sequence: 384 conv values, 1024 state values each; f32)", "6.27 MiB" },
        { "heldout-qwen3next-legacy-f32.gguf", "1.00 MiB  (4096 cells x 1 layers;",
          "0.03 MiB  (3 recurrent layers x 1 sequence: 384 conv values, 2048 state values each; f32)", "5.92 MiB" },
        { "heldout-lfm2-f32.gguf", "2.00 MiB  (4096 cells x 2 layers;",
          "0.00 MiB  (4 recurrent layers x 1 sequence: 256 conv values each; f32)", "6.64 MiB" },
        { "heldout-mamba2-f32.gguf", "0.00 MiB  (none: no layer attends",
          "0.14 MiB  (4 recurrent layers x 1 sequence: 960 conv values, 8192 state values each; f32)", "3.65 MiB" },
        { "heldout-mamba-falcon-f32.gguf", "0.00 MiB  (none: no layer attends",
          "0.04 MiB  (4 recurrent layers x 1 sequence: 512 conv values, 2048 state values each; f32)", "3.26 MiB" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *path = find_file(cases[i].file);
        cr_assert(path, "%s was not written", cases[i].file);
        char args[1024], want[3][160];
        int st;
        snprintf(args, sizeof args, "'%s' --memory -c 4096", path);
        char *out = run_tool("gguf-inspect", args, &st);
        cr_assert_eq(st, 0, "%s", out);
        /* the report's columns: the buffer's name in 18, then its figure right-aligned in 10 */
        const char *names[3] = { "KV cache", "recurrent states", "compute" };
        const char *says[3] = { cases[i].kv, cases[i].states, cases[i].compute };
        for (int w = 0; w < 3; w++) {
            const int figure = (int)strcspn(says[w], " ");
            snprintf(want[w], sizeof want[w], "%-18s %*.*s%s", names[w], 10, figure, says[w], says[w] + figure);
            cr_expect(strstr(out, want[w]), "%s: \"%s\" is not in\n%s", cases[i].file, want[w], out);
        }
        free(out);
        free(path);
    }
}
