/*
 * The smoke verdict never fails a healthy model: every shared model and the two real trained ones, greedy, 24
 * tokens after each of 53 prompts (tests/data/smoke_prompts.txt: 50 of one to eight tokens, words, code, numbers,
 * other scripts, and three of 150-200 tokens). Trained models loop under greedy decoding and put massive
 * activations on their first tokens; random-weight models loop on near-ties: none of it is a failure. The rules
 * still fail what a broken engine does (test_generate's synthetic traces, test_run's broken copies).
 */
#include "engine.h"
#include "kern.h"
#include "suite_helpers.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { PROMPTS_MAX = 64, N_PREDICT = 24 };

typedef struct sweep {
    int runs, failures;
    char first[1024];  /* the first failures, for the message */
} sweep;

static int read_prompts(char **lines)
{
    tbuf b = read_whole_file("tests/data/smoke_prompts.txt");
    cr_assert(b.p, "tests/data/smoke_prompts.txt unreadable");
    int n = 0;
    for (char *s = (char *)b.p, *end = s + b.len; s < end && n < PROMPTS_MAX;) {
        char *nl = memchr(s, '\n', (size_t)(end - s));
        size_t len = nl ? (size_t)(nl - s) : (size_t)(end - s);
        if (len) {
            lines[n] = malloc(len + 1);
            memcpy(lines[n], s, len);
            lines[n++][len] = 0;
        }
        s += len + 1;
    }
    tbuf_free(&b);
    return n;
}

/* Every prompt through the model at path; false when the engine does not run the file (not a model). */
static bool sweep_model(const char *path, char **prompts, int n_prompts, sweep *sw)
{
    gguf_file *f;
    gguf_error ge;
    engine_error e;
    tok_error te;
    tok_vocab *v;
    engine_model *m;
    cr_assert_eq(gguf_open(path, &f, &ge), GGUF_OK, "%s: %s", path, ge.message);
    kern_backend *cpu = kern_cpu_create(2);
    if (engine_model_load(f, cpu, &m, &e) != ENGINE_OK) {
        cpu->destroy(cpu);
        gguf_close(f);
        return false;
    }
    cr_assert_eq(tok_vocab_load(f, &v, &te), TOK_OK, "%s: %s", path, te.message);
    const engine_hparams *hp = engine_model_hparams(m);
    for (int i = 0; i < n_prompts; i++) {
        int32_t *ids;
        size_t n;
        cr_assert_eq(tok_tokenize(v, prompts[i], strlen(prompts[i]), true, false, &ids, &n, &te), TOK_OK);
        engine_ctx *c;
        cr_assert_eq(engine_ctx_create(m, (int)n + N_PREDICT + 1, 64, &c, &e), ENGINE_OK, "%s", e.message);
        engine_trace *t = engine_trace_create(hp->n_layer, hp->n_vocab);
        engine_gen_params gp = { .n_predict = N_PREDICT, .sampler = engine_sampler_default(),
                                 .spot_rows = ENGINE_SPOT_ROWS };
        engine_gen_result g;
        cr_assert_eq(engine_generate(c, v, ids, n, &gp, t, NULL, NULL, &g, &e), ENGINE_OK, "%s", e.message);
        engine_verdict verdict;
        engine_smoke_judge(t, v, m, &g.spot, (int)n, g.tokens, g.n_tokens, &verdict);
        sw->runs++;
        if (!verdict.ok) {
            const size_t at = strlen(sw->first);
            if (sw->failures++ < 3)
                snprintf(sw->first + at, sizeof sw->first - at, "\n%s, prompt %d: %s", strrchr(path, '/') + 1,
                         i + 1, verdict.findings[0].message);
        }
        engine_gen_result_free(&g);
        engine_trace_free(t);
        engine_ctx_free(c);
        free(ids);
    }
    tok_vocab_free(v);
    engine_model_free(m);
    cpu->destroy(cpu);
    gguf_close(f);
    return true;
}

static void free_prompts(char **p, int n)
{
    for (int i = 0; i < n; i++)
        free(p[i]);
}

Test(smoke_sweep, every_shared_model_passes_every_prompt)
{
    char *prompts[PROMPTS_MAX];
    const int n_prompts = read_prompts(prompts);
    cr_assert_geq(n_prompts, 50);
    DIR *d = opendir(models_dir());
    if (!d)
        cr_skip_test("%s not found: skipped", models_dir());
    sweep sw = { 0 };
    int models = 0;
    for (struct dirent *de; (de = readdir(d));) {
        const size_t len = strlen(de->d_name);
        if (len < 5 || strcmp(de->d_name + len - 5, ".gguf"))
            continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", models_dir(), de->d_name);
        models += sweep_model(path, prompts, n_prompts, &sw);
    }
    closedir(d);
    free_prompts(prompts, n_prompts);
    cr_assert_geq(models, 20, "the shared models the engine runs: %d", models);
    cr_assert_eq(sw.failures, 0, "%d of %d runs failed the smoke verdict:%s", sw.failures, sw.runs, sw.first);
}

Test(smoke_sweep, the_real_trained_models_pass_every_prompt)
{
    const char *names[] = { "SmolLM2-135M-Instruct.Q4_1.gguf", "gemma-3-270m-q4_k_m.gguf" };
    char *prompts[PROMPTS_MAX];
    const int n_prompts = read_prompts(prompts);
    sweep sw = { 0 };
    int models = 0;
    for (int i = 0; i < 2; i++) {
        char *path = model_path(names[i]);
        if (!path)
            continue;
        cr_assert(sweep_model(path, prompts, n_prompts, &sw), "%s does not run", names[i]);
        models++;
        free(path);
    }
    free_prompts(prompts, n_prompts);
    if (!models)
        cr_skip_test("the real models are not fetched (make models): skipped");
    cr_assert_eq(sw.failures, 0, "%d of %d runs failed the smoke verdict:%s", sw.failures, sw.runs, sw.first);
}
