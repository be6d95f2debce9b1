/*
 * gguf-run's backend options as a user runs them: --compare (two backends, or exact against llama.cpp's
 * numerics) names the injected fault and the first divergence, --spot-check fails a run and names rows,
 * --backend cuda without a GPU and unknown faults or backends exit 2, and --numerics ggml gives llama.cpp's
 * logits on the quantized file itself.
 */
#include "kern.h"
#include "golden.h"
#include "suite_helpers.h"
#include "testutil.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char tmp_dir[64];
static void setup(void) { cr_assert(tmp_dir_make(tmp_dir, "run_backends")); }
static void teardown(void) { cr_assert(tmp_dir_remove(tmp_dir)); }
TestSuite(run_backends, .init = setup, .fini = teardown, .timeout = 480); /* generous: a loaded 2-core CI machine */

Test(run_backends, compare_json_names_the_injected_fault)
{
    char *p = run_fixture(tmp_dir, "cmp.gguf", NULL);
    int st;
    cJSON *j = run_json(p, "-p 'hello there' -n 4 --compare cpu,cpu", &st);
    cr_assert_eq(st, 0, "identical backends must agree");
    cJSON *c = cJSON_GetObjectItem(j, "compare");
    cr_assert(cJSON_IsTrue(cJSON_GetObjectItem(c, "agree")));
    cr_assert(cJSON_IsNull(cJSON_GetObjectItem(c, "first_divergence")));
    cr_assert_eq(cJSON_GetObjectItem(c, "decode_steps")->valueint, 4);
    /* the embeddings + 2 layers x 10 ops + result_norm + logits */
    cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItem(c, "points")), 23);
    cJSON_Delete(j);

    j = run_json(p, "-p 'hello there' -n 4 --compare cpu,cpu --debug-fault rope-mode", &st);
    cr_assert_eq(st, 1, "a divergence exits 1");
    c = cJSON_GetObjectItem(j, "compare");
    cJSON *f = cJSON_GetObjectItem(c, "first_divergence");
    cr_assert_eq(cJSON_GetObjectItem(f, "layer")->valueint, 0);
    cr_assert_str_eq(cJSON_GetObjectItem(f, "op")->valuestring, "q");
    cr_assert_eq(cJSON_GetObjectItem(f, "pos")->valueint, 1);
    cr_assert_str_eq(cJSON_GetObjectItem(f, "phase")->valuestring, "prompt");
    cr_assert(cJSON_GetObjectItem(cJSON_GetObjectItem(f, "b_stats"), "rms"));
    cr_assert_str_eq(cJSON_GetObjectItem(c, "b")->valuestring, "cpu+rope-mode");
    cJSON_Delete(j);
    free(p);
}

Test(run_backends, compare_text_report_names_layer_and_op)
{
    char *p = need_model("tiny-qwen2-f32.gguf");
    char args[8192];
    int st;
    snprintf(args, sizeof args, "'%s' -p 'Once upon a time' -n 3 --compare cpu,cpu --debug-fault rope-mode", p);
    char *out = run_tool("gguf-run", args, &st);
    cr_assert_eq(st, 1);
    cr_assert(strstr(out, "DIVERGE: first beyond 1e-03 at layer 0, q, position 1 (prompt)"), "%s", out);
    cr_assert(strstr(out, "cpu+rope-mode"), "%s", out);
    free(out);
    free(p);
}

Test(run_backends, spot_check_fails_the_run_and_names_rows)
{
    char *p = need_model("tiny-llama-f32.gguf");
    int st;
    cJSON *j = run_json(p, "-p 'Hello' -n 4 --spot-check --debug-fault lm-head-rows", &st);
    cr_assert_eq(st, 1, "wrong logits in places must fail the run");
    cJSON *sp = cJSON_GetObjectItem(j, "spot_check");
    cr_assert(sp);
    cr_assert_gt(cJSON_GetObjectItem(sp, "mismatches")->valueint, 0);
    const cJSON *r;
    cJSON_ArrayForEach(r, cJSON_GetObjectItem(sp, "bad_rows")) cr_assert_eq(r->valueint % 7, 3, "row %d", r->valueint);
    cJSON_Delete(j);
    j = run_json(p, "-p 'Hello' -n 4 --spot-check=16", &st);
    cr_assert_eq(st, 0);
    sp = cJSON_GetObjectItem(j, "spot_check");
    cr_assert_eq(cJSON_GetObjectItem(sp, "mismatches")->valueint, 0);
    cr_assert_eq(cJSON_GetObjectItem(sp, "rows")->valueint, 16 * cJSON_GetObjectItem(sp, "passes")->valueint);
    cJSON_Delete(j);
    free(p);
}

Test(run_backends, cuda_without_a_gpu_exits_2_and_says_why)
{
    char why[512];
    kern_backend *b = kern_cuda_create(0, why, sizeof why);
    if (b) {
        b->destroy(b);
        cr_skip_test("this machine has a GPU");
    }
    char *p = run_fixture(tmp_dir, "nogpu.gguf", NULL);
    char args[1024];
    int st;
    snprintf(args, sizeof args, "'%s' -p hi -n 2 --backend cuda 2>&1", p);
    char *out = run_tool("gguf-run", args, &st);
    cr_assert_eq(st, 2);
    cr_assert(strstr(out, "--backend cuda: ") && strstr(out, "CUDA"), "%s", out);
    free(out);
    snprintf(args, sizeof args, "'%s' -p hi --compare cpu,cuda 2>&1", p);
    out = run_tool("gguf-run", args, &st);
    cr_assert_eq(st, 2);
    cr_assert(strstr(out, "--compare cpu,cuda: "), "%s", out);
    free(out);
    free(p);
}

Test(run_backends, unknown_fault_and_backend_exit_2)
{
    char *p = run_fixture(tmp_dir, "badopt.gguf", NULL);
    char args[1024];
    int st;
    snprintf(args, sizeof args, "'%s' -p hi --debug-fault nope 2>&1", p);
    char *out = run_tool("gguf-run", args, &st);
    cr_assert_eq(st, 2);
    cr_assert(strstr(out, "rope-mode"), "the known faults should be listed: %s", out);
    free(out);
    snprintf(args, sizeof args, "'%s' -p hi --compare cpu,tpu 2>&1", p);
    out = run_tool("gguf-run", args, &st);
    cr_assert_eq(st, 2);
    cr_assert(strstr(out, "unknown backend 'tpu'"), "%s", out);
    free(out);
    free(p);
}

/* --numerics ggml gives llama.cpp's logits on the quantized file itself (stories260K-q8_0mix: Q8_0 with
 * Q4_0/Q4_K-style mixes, whose golden it reproduces bit for bit today), where exact numerics gives the
 * -deq twin's; each is 1 % from the other golden. */
Test(run_backends, numerics_ggml_gives_llama_cpps_logits_on_the_file_itself)
{
    char *m = need_model("stories260K-q8_0mix.gguf");
    cJSON *g = need_golden("stories260K-q8_0mix.p0");
    cJSON_Delete(need_golden("stories260K-q8_0mix-deq.p0"));
    const char *prompt = cJSON_GetObjectItem(g, "prompt")->valuestring;
    char npy[128], extra[1024];
    snprintf(npy, sizeof npy, "%s/logits.npy", tmp_dir);
    const char *modes[] = { "ggml", "exact" };
    double own[2], deq[2];
    for (int i = 0; i < 2; i++) {
        snprintf(extra, sizeof extra, "-p '%s' -n 1 --numerics %s --logits-out '%s'", prompt, modes[i], npy);
        int st;
        cJSON *j = run_json(m, extra, &st);
        cr_assert_eq(st, 0);
        cr_assert_str_eq(cJSON_GetObjectItem(j, "backend")->valuestring, i == 0 ? "cpu:ggml" : "cpu");
        cJSON_Delete(j);
        own[i] = logits_vs_golden(npy, "stories260K-q8_0mix.p0");
        deq[i] = logits_vs_golden(npy, "stories260K-q8_0mix-deq.p0");
    }
    cr_assert_lt(own[0], 1e-4, "ggml numerics: %.3g from llama.cpp's logits on the file", own[0]);
    cr_assert_lt(deq[1], 5e-4, "exact numerics: %.3g from the -deq golden", deq[1]);
    cr_assert_gt(own[1], 1e-3, "exact numerics should not land on the rounded golden (%.3g)", own[1]);
    cr_assert_gt(deq[0], 1e-3, "ggml numerics should not land on the -deq golden (%.3g)", deq[0]);
    cJSON_Delete(g);
    free(m);
}

Test(run_backends, numerics_options_are_checked)
{
    char *m = need_model("stories260K.gguf");
    char args[4096];
    int st;
    snprintf(args, sizeof args, "'%s' -p hi -n 1 --numerics fast 2>&1", m);
    char *out = run_tool("gguf-run", args, &st);
    cr_assert_eq(st, 2);
    cr_assert(out && strstr(out, "--numerics takes exact or ggml, got 'fast'"), "%s", out);
    free(out);
    snprintf(args, sizeof args, "'%s' -p hi -n 1 --backend cuda --numerics ggml 2>&1", m);
    out = run_tool("gguf-run", args, &st);
    cr_assert_eq(st, 2);
    cr_assert(out && strstr(out, "--numerics ggml is the CPU backend's"), "%s", out);
    free(out);
    snprintf(args, sizeof args, "'%s' -p hi -n 1 --compare cpu,cpu:fast 2>&1", m);
    out = run_tool("gguf-run", args, &st);
    cr_assert_eq(st, 2);
    cr_assert(out && strstr(out, "unknown backend 'cpu:fast'"), "%s", out);
    free(out);
    free(m);
}

/* --compare cpu,cpu:ggml: llama.cpp's rounding moves every op from layer 0's q on by more than the tolerance (the
 * table shows how far), and each side equals every op re-derived on the host from its own inputs, cpu:ggml's with
 * its activations rounded as llama.cpp rounds them: explained, exit 0. A fault on the cpu:ggml side is still named
 * where it bites, and the side that computes the op wrongly is said. */
Test(run_backends, compare_exact_with_ggml_numerics)
{
    char *m = need_model("tiny-qwen2-q4_0.gguf");
    int st;
    cJSON *j = run_json(m, "-p 'Hello world' -n 2 --compare cpu,cpu:ggml", &st);
    cr_assert_eq(st, 0, "the rounding of llama.cpp's numerics is no divergence");
    cJSON *c = cJSON_GetObjectItem(j, "compare"), *pt;
    int beyond = 0;
    cJSON_ArrayForEach(pt, cJSON_GetObjectItem(c, "points"))
    {
        const double rel = cJSON_GetObjectItem(pt, "rel")->valuedouble;
        const char *op = cJSON_GetObjectItem(pt, "op")->valuestring;
        cJSON *self = cJSON_GetObjectItem(pt, "rederived");
        if (rel > 1e-3) {
            beyond++;
            cr_assert(cJSON_IsTrue(cJSON_GetObjectItem(pt, "explained")), "%s beyond the tolerance unexplained", op);
            for (int side = 0; side < 2; side++)
                cr_assert_leq(cJSON_GetArrayItem(self, side)->valuedouble, 1e-5,
                              "side %d's %s is %g from its own re-derivation", side, op,
                              cJSON_GetArrayItem(self, side)->valuedouble);
        }
        if (!strcmp(op, "logits"))
            cr_assert_gt(rel, 1e-3, "the logits differ by only %g: nothing to explain", rel);
    }
    cr_assert_gt(beyond, 20, "only %d ops beyond the tolerance", beyond);
    cJSON_Delete(j);

    /* q without its bias on the cpu:ggml side: named at layer 0's q, and that side as the one computing it wrongly */
    j = run_json(m, "-p 'Hello world' -n 2 --compare cpu,cpu:ggml --debug-fault no-qkv-bias", &st);
    cr_assert_eq(st, 1, "a divergence exits 1");
    c = cJSON_GetObjectItem(j, "compare");
    cJSON *f = cJSON_GetObjectItem(c, "first_divergence"), *at = cJSON_GetObjectItem(c, "rederived_at_first");
    cr_assert_eq(cJSON_GetObjectItem(f, "layer")->valueint, 0);
    cr_assert_str_eq(cJSON_GetObjectItem(f, "op")->valuestring, "q");
    cr_assert_leq(cJSON_GetArrayItem(at, 0)->valuedouble, 1e-5, "cpu's q is right");
    cr_assert_gt(cJSON_GetArrayItem(at, 1)->valuedouble, 1e-3, "cpu:ggml's q lacks its bias");
    cJSON_Delete(j);
    /* the text says which side */
    char args[4096];
    snprintf(args, sizeof args, "'%s' -p 'Hello world' -n 2 -q --compare cpu,cpu:ggml --debug-fault no-qkv-bias", m);
    char *out = run_tool("gguf-run", args, &st);
    cr_assert_eq(st, 1);
    cr_assert(out && strstr(out, "cpu:ggml+no-qkv-bias") && strstr(out, "(beyond: computes this op wrongly)"), "%s",
              out);
    free(out);
    free(m);
}
