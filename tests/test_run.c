/*
 * gguf-run as a user runs it: stories260K generates llama.cpp's text, the
 * outputs (--json, --tokenize, --logits-out, --trace) agree with the goldens,
 * --smoke passes the healthy model and names what is wrong with copies broken
 * here, and bad models or options are clear errors with the right exit status.
 */
#include "golden.h"
#include "model.h"
#include "suite_helpers.h"
#include "testutil.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char tmp_dir[64];
static void setup(void) { cr_assert(tmp_dir_make(tmp_dir, "run")); }
static void teardown(void) { cr_assert(tmp_dir_remove(tmp_dir)); }
TestSuite(run, .init = setup, .fini = teardown, .timeout = 480); /* generous: a loaded 2-core CI machine */

static void assert_ints(const cJSON *got, const cJSON *want, const char *what)
{
    cr_assert_eq(cJSON_GetArraySize(got), cJSON_GetArraySize(want), "%s: %d ids, golden %d", what,
                 cJSON_GetArraySize(got), cJSON_GetArraySize(want));
    for (int i = 0; i < cJSON_GetArraySize(want); i++)
        cr_assert_eq(cJSON_GetArrayItem(got, i)->valueint, cJSON_GetArrayItem(want, i)->valueint, "%s: id %d", what,
                     i);
}

Test(run, stories260k_json_is_llama_cpp_s_generation)
{
    char *m = need_model("stories260K.gguf");
    cJSON *g = need_golden("stories260K.p1");
    int st;
    cJSON *j = run_json(m, "-p 'Lily and Tom went to the park' -n 64", &st);
    cr_assert_eq(st, 0);
    assert_ints(cJSON_GetObjectItem(j, "prompt_tokens"), cJSON_GetObjectItem(g, "prompt_tokens"), "prompt");
    assert_ints(cJSON_GetObjectItem(j, "tokens"), cJSON_GetObjectItem(g, "greedy_tokens"), "greedy");
    cr_assert_str_eq(cJSON_GetObjectItem(j, "text")->valuestring, cJSON_GetObjectItem(g, "greedy_text")->valuestring);
    const cJSON *v = cJSON_GetObjectItem(j, "verdict");
    cr_assert(cJSON_IsTrue(cJSON_GetObjectItem(v, "ok")), "%s", cJSON_GetObjectItem(v, "summary")->valuestring);
    const cJSON *t = cJSON_GetObjectItem(j, "timings");
    cr_assert_gt(cJSON_GetObjectItem(t, "gen_tokens_per_second")->valuedouble, 0);
    cr_assert_gt(cJSON_GetObjectItem(t, "weight_bytes_per_token")->valuedouble, 1e6, "stories260K reads ~1 MB/token");
    cJSON_Delete(j);
    cJSON_Delete(g);
    free(m);
}

Test(run, tokenize_prints_the_prompt_ids)
{
    char *m = need_model("tiny-qwen2-f32.gguf");
    cJSON *g = need_golden("tiny-qwen2-f32.p0");
    char args[1024];
    int st;
    snprintf(args, sizeof args, "'%s' --tokenize -p 'Once upon a time'", m);
    char *out = run_tool("gguf-run", args, &st);
    cJSON *j = cJSON_Parse(out);
    cr_assert_eq(st, 0);
    assert_ints(cJSON_GetObjectItem(j, "tokens"), cJSON_GetObjectItem(g, "prompt_tokens"), "tokenize");
    cJSON_Delete(j);
    cJSON_Delete(g);
    free(out);
    free(m);
}

Test(run, logits_out_and_trace_file_match_the_golden)
{
    char *m = need_model("tiny-qwen2-f32.gguf");
    cJSON *g = need_golden("tiny-qwen2-f32.p0");
    char npy[128], tr[128], extra[512];
    snprintf(npy, sizeof npy, "%s/logits.npy", tmp_dir);
    snprintf(tr, sizeof tr, "%s/trace.json", tmp_dir);
    snprintf(extra, sizeof extra, "-p 'Once upon a time' -n 4 --logits-out '%s' --trace='%s'", npy, tr);
    int st;
    cJSON *j = run_json(m, extra, &st);
    cr_assert_eq(st, 0);
    cr_assert_lt(logits_vs_golden(npy, "tiny-qwen2-f32.p0"), 5e-4);

    tbuf tb = read_whole_file(tr);
    cJSON *trace = cJSON_ParseWithLength((const char *)tb.p, tb.len);
    cr_assert(trace, "trace file is not JSON");
    const cJSON *gl, *ol = cJSON_GetObjectItem(trace, "layers");
    int k = 0;
    cJSON_ArrayForEach(gl, cJSON_GetObjectItem(g, "prompt_trace"))
    {
        const cJSON *L = cJSON_GetArrayItem(ol, k++);
        cr_assert(L);
        const cJSON *grms = cJSON_GetObjectItem(gl, "rms"), *orms = cJSON_GetObjectItem(L, "rms");
        for (int p = 0; p < cJSON_GetArraySize(grms); p++) {
            double a = cJSON_GetArrayItem(grms, p)->valuedouble, b = cJSON_GetArrayItem(orms, p)->valuedouble;
            cr_assert_lt(fabs(a - b) / a, 1e-3, "layer %d pos %d: %g vs %g", k - 1, p, b, a);
        }
    }
    cr_assert_str_eq(cJSON_GetObjectItem(cJSON_GetArrayItem(ol, k - 1), "layer")->valuestring, "result_norm");
    const cJSON *steps = cJSON_GetObjectItem(trace, "steps");
    cr_assert_eq(cJSON_GetArraySize(steps), 4);
    const cJSON *s0 = cJSON_GetArrayItem(steps, 0);
    cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItem(s0, "top")), 5);
    cr_assert_geq(cJSON_GetObjectItem(s0, "margin")->valuedouble, 0);
    cr_assert_eq(cJSON_GetObjectItem(s0, "token")->valueint,
                 cJSON_GetArrayItem(cJSON_GetObjectItem(g, "greedy_tokens"), 0)->valueint);
    cJSON_Delete(trace);
    tbuf_free(&tb);
    cJSON_Delete(j);
    cJSON_Delete(g);
    free(m);
}

Test(run, trace_table_on_the_terminal)
{
    char *m = need_model("stories260K.gguf");
    char args[1024];
    int st;
    snprintf(args, sizeof args, "'%s' -q -p 'Once upon a time' -n 3 --trace", m);
    char *out = run_tool("gguf-run", args, &st);
    cr_assert_eq(st, 0);
    cr_assert(strstr(out, "layer   pos  token"), "%s", out);
    /* 5 layers + the final norm, for 5 prompt + 2 fed-back positions */
    int rows = 0;
    for (const char *p = out; (p = strstr(p, "\n norm ")); p++)
        rows++;
    cr_assert_eq(rows, 7, "%s", out);
    cr_assert(strstr(out, "top-5"), "%s", out);
    free(out);
    free(m);
}

/* A copy of stories260K with `tensor`'s f32 values changed by fn. */
static char *broken_copy(const char *name, const char *tensor, void (*fn)(float *v, uint64_t n))
{
    char *m = need_model("stories260K.gguf");
    tbuf b = read_whole_file(m);
    gguf_file *f;
    gguf_error ge;
    cr_assert_eq(gguf_open_memory(b.p, b.len, &f, &ge), GGUF_OK);
    const gguf_tensor *t = gguf_tensor_by_name(f, tensor);
    cr_assert(t && t->type == GGUF_TENSOR_F32);
    uint64_t at = gguf_data_offset(f) + t->offset, n = t->n_elements;
    gguf_close(f);
    float *v = malloc(n * sizeof(float));
    memcpy(v, b.p + at, n * sizeof(float));
    fn(v, n);
    memcpy(b.p + at, v, n * sizeof(float));
    free(v);
    free(m);
    return run_write_tmp(tmp_dir, name, &b);
}

static void one_nan(float *v, uint64_t n) { (void)n; v[3] = NAN; }
static void zero_all(float *v, uint64_t n) { memset(v, 0, n * sizeof(float)); }
static void times_1e4(float *v, uint64_t n) { for (uint64_t i = 0; i < n; i++) v[i] *= 1e4f; }

/* The verdict's finding (or note) with this code. */
static const cJSON *verdict_item(const cJSON *doc, const char *code)
{
    const cJSON *f;
    cJSON_ArrayForEach(f, cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "verdict"), "findings"))
    {
        if (!strcmp(cJSON_GetObjectItem(f, "code")->valuestring, code))
            return f;
    }
    return NULL;
}

static const cJSON *smoke_finding(const char *path, const char *symptom, int *status, cJSON **doc)
{
    *doc = run_json(path, "-p 'Once upon a time' -n 24 --smoke", status);
    return verdict_item(*doc, symptom);
}

Test(run, smoke_passes_the_healthy_model)
{
    char *m = need_model("stories260K.gguf");
    int st;
    cJSON *j = run_json(m, "-p 'Once upon a time' -n 64 --smoke", &st);
    cr_assert_eq(st, 0, "%s", cJSON_PrintUnformatted(cJSON_GetObjectItem(j, "verdict")));
    cJSON_Delete(j);
    free(m);
}

Test(run, smoke_names_nan_weights_with_their_layer)
{
    char *p = broken_copy("nan.gguf", "blk.2.ffn_down.weight", one_nan);
    int st;
    cJSON *j;
    const cJSON *f = smoke_finding(p, "nonfinite", &st, &j);
    cr_assert_eq(st, 1);
    cr_assert(f && strstr(cJSON_GetObjectItem(f, "measured")->valuestring, "after layer 2"), "%s",
              cJSON_PrintUnformatted(j));
    cJSON_Delete(j);
    free(p);
}

Test(run, smoke_names_output_that_ignores_its_input)
{
    char *p = broken_copy("zero-embd.gguf", "token_embd.weight", zero_all);
    int st;
    cJSON *j;
    const cJSON *f = smoke_finding(p, "flat_logits", &st, &j);
    cr_assert_eq(st, 1);
    cr_assert(f, "%s", cJSON_PrintUnformatted(j));
    /* one token forever, every logit equal: a loop of ties, reported (a note: the flat logits are the finding) */
    cr_assert(verdict_item(j, "repetition") || verdict_item(j, "greedy_loop"), "one token forever");
    cJSON_Delete(j);
    free(p);
}

Test(run, smoke_names_a_layer_that_blows_up_the_residual)
{
    char *p = broken_copy("loud.gguf", "blk.1.ffn_down.weight", times_1e4);
    int st;
    cJSON *j;
    const cJSON *f = smoke_finding(p, "hidden_rms", &st, &j);
    cr_assert_eq(st, 1);
    cr_assert(f && strstr(cJSON_GetObjectItem(f, "measured")->valuestring, "layer 1 multiplies"), "%s",
              cJSON_PrintUnformatted(j));
    cJSON_Delete(j);
    free(p);
}

/* The fixture model our writer makes (the demo's fallback) runs end to end. */
Test(run, writer_made_fixture_runs)
{
    char *p = run_fixture(tmp_dir, "fixture.gguf", NULL);
    int st;
    cJSON *j = run_json(p, "-p 'hello' -n 8", &st);
    cr_assert_eq(st, 0);
    cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItem(j, "tokens")), 8);
    cJSON_Delete(j);
    free(p);
}

static void rename_arch(tbuf *b)
{
    uint64_t at = kv_value_offset(b, "general.architecture");
    cr_assert_eq(memcmp(b->p + at + 8, "llama", 5), 0);
    memcpy(b->p + at + 8, "rwkv6", 5);
}

static void rename_tensor(tbuf *b)
{
    uint64_t at = tensor_info_offset(b, "blk.1.ffn_up.weight");
    cr_assert_eq(memcmp(b->p + at + 8, "blk.1.ffn_up.weight", 19), 0);
    b->p[at + 8 + 11] = 'q';  /* ffn_uq */
}

Test(run, unsupported_architecture_lists_the_supported_ones)
{
    char *p = run_fixture(tmp_dir, "rwkv6.gguf", rename_arch);
    char args[512];
    int st;
    snprintf(args, sizeof args, "'%s' -p hi 2>&1", p);
    char *out = run_tool("gguf-run", args, &st);
    cr_assert_eq(st, 2);
    cr_assert(strstr(out, "'rwkv6' is not supported") && strstr(out, model_arch_names()), "%s", out);
    free(out);
    free(p);
}

Test(run, missing_tensor_is_named_and_the_model_blamed)
{
    char *p = run_fixture(tmp_dir, "missing.gguf", rename_tensor);
    char args[512];
    int st;
    snprintf(args, sizeof args, "'%s' -p hi 2>&1", p);
    char *out = run_tool("gguf-run", args, &st);
    cr_assert_eq(st, 1);
    cr_assert(strstr(out, "blk.1.ffn_up.weight") && strstr(out, "missing"), "%s", out);
    free(out);
    free(p);
}

/* A copy of a shared model with bytes of its header patched by fn, in the test's directory. */
static char *patched_copy(const char *model, const char *name, void (*fn)(tbuf *b))
{
    char *m = need_model(model);
    tbuf b = read_whole_file(m);
    fn(&b);
    free(m);
    return run_write_tmp(tmp_dir, name, &b);
}

static void drop_k_norm(tbuf *b)
{
    uint64_t at = tensor_info_offset(b, "blk.1.attn_k_norm.weight");
    memcpy(b->p + at + 8, "blk.1.attn_k_nrrm.weight", 24);
}

static void halve_q_norm(tbuf *b)
{
    uint64_t at = tensor_dim_offset(b, "blk.0.attn_q_norm.weight", 0);
    put_u64le(b->p + at, 48);
}

/* qwen3's per-head norms are required by its description: missing, the run names the tensor and what it
 * is; mis-shaped, the shape found and the one key_length needs. Both are the file's fault: exit 1. */
Test(run, qwen3_missing_or_misshaped_head_norm_is_named)
{
    char *p = patched_copy("tiny-qwen3-f32.gguf", "no-knorm.gguf", drop_k_norm);
    char args[512];
    int st;
    snprintf(args, sizeof args, "'%s' -p hi 2>&1", p);
    char *out = run_tool("gguf-run", args, &st);
    cr_assert_eq(st, 1, "%s", out);
    cr_assert(strstr(out, "blk.1.attn_k_norm.weight") && strstr(out, "missing") && strstr(out, "qwen3"), "%s", out);
    free(out);
    free(p);
    p = patched_copy("tiny-qwen3-f32.gguf", "half-qnorm.gguf", halve_q_norm);
    snprintf(args, sizeof args, "'%s' -p hi 2>&1", p);
    out = run_tool("gguf-run", args, &st);
    cr_assert_eq(st, 1, "%s", out);
    cr_assert(strstr(out, "blk.0.attn_q_norm.weight") && strstr(out, "[48, 1, 1, 1]") && strstr(out, "[96]") &&
                  strstr(out, "key_length"),
              "%s", out);
    free(out);
    free(p);
}

/* gemma-3-270m through gguf-run: llama.cpp's greedy text for p0 on the dequantized weights. */
Test(run, gemma3_generates_llama_cpp_s_text)
{
    char *m = model_path("gemma-3-270m-q4_k_m.gguf");
    if (!m)
        cr_skip_test("gemma-3-270m-q4_k_m.gguf not fetched (make models): skipped");
    cJSON *g = need_golden("gemma-3-270m-q4_k_m-deq.p0");
    int st;
    char extra[512];
    snprintf(extra, sizeof extra, "-p '%s' -n 24 --threads 2", cJSON_GetObjectItem(g, "prompt")->valuestring);
    cJSON *j = run_json(m, extra, &st);
    cr_assert_eq(st, 0);
    cr_assert_str_eq(cJSON_GetObjectItem(j, "arch")->valuestring, "gemma3");
    const cJSON *got = cJSON_GetObjectItem(j, "tokens"), *want = cJSON_GetObjectItem(g, "greedy_tokens");
    for (int i = 0; i < 24; i++)
        cr_assert_eq(cJSON_GetArrayItem(got, i)->valueint, cJSON_GetArrayItem(want, i)->valueint, "token %d", i);
    cJSON_Delete(j);
    cJSON_Delete(g);
    free(m);
}

/* Healthy trained models carry massive activations on a few tokens (position 0, and later ones such as a
 * generated ','): the smoke verdict must not take them for a broken residual. */
Test(run, smoke_passes_the_real_trained_models)
{
    const char *models[] = { "SmolLM2-135M-Instruct.Q4_1.gguf", "gemma-3-270m-q4_k_m.gguf" };
    int checked = 0;
    for (int i = 0; i < 2; i++) {
        char *m = model_path(models[i]);
        if (!m)
            continue;
        int st;
        cJSON *j = run_json(m, "-p 'The capital of France is' -n 40 --smoke --threads 2", &st);
        const cJSON *v = cJSON_GetObjectItem(j, "verdict");
        char *txt = cJSON_PrintUnformatted(v);
        cr_expect_eq(st, 0, "%s: %s", models[i], txt);
        free(txt);
        cJSON_Delete(j);
        free(m);
        checked++;
    }
    if (!checked)
        cr_skip_test("the real models are not fetched (make models): skipped");
}

Test(run, usage_errors_exit_2)
{
    char *m = need_model("stories260K.gguf");
    const char *cases[] = { "-p hi --backend cuda", "-p hi --backend tpu", "-p hi -n -3", "", "-p hi --ctx 2" };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char args[1024];
        int st;
        snprintf(args, sizeof args, "'%s' %s 2>&1", m, cases[i]);
        char *out = run_tool("gguf-run", args, &st);
        cr_assert_eq(st, 2, "'%s' exited %d: %s", cases[i], st, out);
        cr_assert(strstr(out, "gguf-run:"), "%s", out);
        free(out);
    }
    free(m);
}
