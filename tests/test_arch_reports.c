/*
 * What the tools say of a file of an architecture past the dense four, beside its numbers: gguf-run's start-up report
 * of what the entry runs (a mixture's routing, latent attention, Talkie's norms and skips, Laguna's gates), and the
 * files llama.cpp refuses, refused by gguf-run and named by gguf-verify. The files are tests/py/heldout_arch.py's.
 */
#include "golden.h"
#include "suite_helpers.h"
#include "testutil.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* tool's output on path with opts (stderr too), its exit status in *st */
static char *run_on(const char *tool, const char *path, const char *opts, int *st)
{
    char args[4096 + 512];
    snprintf(args, sizeof args, "'%s' %s 2>&1", path, opts);
    return run_tool(tool, args, st);
}

/* gguf-run's start-up report says how each mixture routes, from what was bound and read: the gating, the selection
 * bias, renormalisation and scale, the shared expert and whether it has a gate, the dense first layers and the
 * prediction blocks not run (GLM-4.5's held-out file), and qwen2moe's gated shared expert. */
Test(arch_reports, the_report_says_how_a_mixture_routes, .timeout = 120)
{
    char dir[128], path[256], why[200];
    if (access(venv_python(), X_OK) != 0)
        cr_skip_test("build/venv not found: skipped");
    cr_assert(tmp_dir_make(dir, "report"));
    snprintf(path, sizeof path, "%s/glm4moe.gguf", dir);
    cr_assert(heldout_arch_write("heldout-glm4moe", path, why), "%s", why);
    int st;
    char *out = run_on("gguf-run", path, "-p hi -n 1", &st);
    cr_assert_eq(st, 0, "%s", out);
    static const char *const want[] = { "experts 8, 3 used per token (sigmoid, a selection bias, renormalised, scaled "
                                        "by 2.5), each 96 wide + a shared expert (96 wide); 1 dense layer first",
                                        "1 multi-token prediction block after them not run", "q/k/v biases: yes" };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        cr_expect(strstr(out, want[i]), "no '%s' in:\n%s", want[i], out);
    free(out);
    cr_assert(tmp_dir_remove(dir));
    char qwen2moe[4096 + 64];
    snprintf(qwen2moe, sizeof qwen2moe, "%s/moe/tiny-qwen2moe-q4_k_m.gguf", models_dir());
    if (access(qwen2moe, R_OK) != 0)
        cr_skip_test("%s not found: skipped", qwen2moe);
    out = run_on("gguf-run", qwen2moe, "-p hi -n 1", &st);
    cr_expect(strstr(out, "(softmax, not renormalised), each 128 wide + a shared expert with its gate (256 wide)"),
              "%s", out);
    free(out);
}

/* Laguna's attention gate is per head or per value as each layer's attn_gate is wide (llama.cpp's laguna loader reads
 * the width from the tensor): the held-out file's layers alternate, which the report counts; a layer whose gate is
 * neither width is refused by gguf-run and named by gguf-verify's shape rule, as llama.cpp's loader aborts on it. */
Test(arch_reports, a_laguna_gate_is_per_head_or_per_value_by_its_width, .timeout = 120)
{
    char dir[128], path[256], bad[256], why[200];
    if (access(venv_python(), X_OK) != 0)
        cr_skip_test("build/venv not found: skipped");
    cr_assert(tmp_dir_make(dir, "laguna"));
    snprintf(path, sizeof path, "%s/laguna.gguf", dir);
    snprintf(bad, sizeof bad, "%s/badgate.gguf", dir);
    cr_assert(heldout_arch_write("heldout-laguna", path, why), "%s", why);
    cr_assert(heldout_arch_write("heldout-laguna-badgate", bad, why), "%s", why);
    int st;
    char *out = run_on("gguf-run", path, "-p hi -n 1", &st);
    cr_assert_eq(st, 0, "%s", out);
    cr_expect(strstr(out, "output times softplus(x . attn_gate): a gate per head in 3 layers, per value in 2"), "%s",
              out);
    cr_expect(strstr(out, "(rope base 10000 there, unscaled, 32 dims rotating)"), "%s", out);
    free(out);
    out = run_on("gguf-run", bad, "-p hi -n 1", &st);
    cr_expect_eq(st, 1, "%s", out);
    cr_expect(strstr(out, "'blk.1.attn_gate.weight' has shape [128, 96, 1, 1]"), "%s", out);
    free(out);
    out = run_on("gguf-verify", bad, "", &st);
    cr_expect_eq(st, 1, "%s", out);
    cr_expect(strstr(out, "blk.1.attn_gate.weight") && strstr(out, "Laguna: either"), "%s", out);
    cr_expect(!strstr(out, "blk.0.attn_gate.weight") && !strstr(out, "blk.2.attn_gate.weight"),
              "the layers' own widths are no finding: %s", out);
    free(out);
    cr_assert(tmp_dir_remove(dir));
}

/* Talkie's report says what its graph runs beside llama's (norms without gains, q's gain per head after the rotation,
 * the embeddings' skip, the logits' scale), and a file without logit_scale is refused by both tools, naming the key,
 * as llama.cpp's loader requires it. */
Test(arch_reports, a_talkie_file_says_what_it_runs_and_needs_its_logit_scale, .timeout = 120)
{
    char dir[128], path[256], bad[256], why[200];
    if (access(venv_python(), X_OK) != 0)
        cr_skip_test("build/venv not found: skipped");
    cr_assert(tmp_dir_make(dir, "talkie"));
    snprintf(path, sizeof path, "%s/talkie.gguf", dir);
    snprintf(bad, sizeof bad, "%s/nologit.gguf", dir);
    cr_assert(heldout_arch_write("heldout-talkie-b", path, why), "%s", why);
    cr_assert(heldout_arch_write("heldout-talkie-nologit", bad, why), "%s", why);
    int st;
    char *out = run_on("gguf-run", path, "-p hi -n 1", &st);
    cr_assert_eq(st, 0, "%s", out);
    cr_expect(strstr(out, "norm       RMSNorm without gains eps 1e-05"), "%s", out);
    cr_expect(strstr(out, "q/k norms: per head after the rotation, q times one gain a head, k without gains"), "%s",
              out);
    cr_expect(strstr(out, "embeddings RMS-normed, each layer's output plus them times its layer_output_scale"), "%s",
              out);
    cr_expect(strstr(out, "logits times 1.7"), "%s", out);
    cr_expect(strstr(out, "scales     per-tensor: 2 applied (attn_output, ffn_down)\n"), "%s", out); /* layer 1's */
    free(out);
    out = run_on("gguf-run", bad, "-p hi -n 1", &st);
    cr_expect_eq(st, 1, "%s", out);
    cr_expect(strstr(out, "key 'talkie.logit_scale' is not in the file"), "%s", out);
    free(out);
    out = run_on("gguf-verify", bad, "", &st);
    cr_expect_eq(st, 1, "%s", out);
    cr_expect(strstr(out, "talkie.logit_scale"), "%s", out);
    free(out);
    cr_assert(tmp_dir_remove(dir));
}

/* The report says what latent attention ran: the query's compression, what the cache holds, a head's sizes, and
 * the scores' scale as llama.cpp's deepseek2 graph makes it with YaRN x40 and DeepSeek's yarn_log_multiplier of 1
 * (mscale = 1 + 0.1 ln 40, squared, over sqrt of the 48-value key); and the routing within groups. */
Test(arch_reports, the_report_says_what_latent_attention_runs, .timeout = 120)
{
    char dir[128], path[256], why[200], scale[64];
    if (access(venv_python(), X_OK) != 0)
        cr_skip_test("build/venv not found: skipped");
    cr_assert(tmp_dir_make(dir, "report"));
    snprintf(path, sizeof path, "%s/deepseek2.gguf", dir);
    cr_assert(heldout_arch_write("heldout-deepseek2", path, why), "%s", why);
    int st;
    char *out = run_on("gguf-run", path, "-p hi -n 1", &st);
    cr_assert_eq(st, 0, "%s", out);
    const double mscale = 1.0 + 0.1 * log(40.0);
    snprintf(scale, sizeof scale, "scores scaled by %g", (float)(mscale * mscale / sqrt(48.0)));
    const char *const want[] = { "latent (MLA): q through a compression of 96; keys and values from a compressed row "
                                 "of 64 and a rotary key of 16",
                                 "decompressed per head", "a head's key 48, value 24", scale,
                                 "(sigmoid, a selection bias, within the best 2 of 4 groups, renormalised, scaled by 2.5)",
                                 "16 of 48 dims rotate" };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        cr_expect(strstr(out, want[i]), "no '%s' in:\n%s", want[i], out);
    free(out);
    cr_assert(tmp_dir_remove(dir));
}

/* A per-tensor scale in a prediction block (MiMo-V2's here), whose weights llama.cpp's loaders skip unless multi-token
 * prediction is asked for, is a tensor it does not load, and llama.cpp refuses the file ("wrong number of tensors"):
 * gguf-run refuses it too, naming the tensor, and gguf-verify says so, where scales in the generating blocks run,
 * the report saying which it applies and which it leaves unread. */
Test(arch_reports, a_scale_in_a_skipped_prediction_block_is_refused, .timeout = 120)
{
    char dir[128], path[256], ok[256], why[200];
    if (access(venv_python(), X_OK) != 0)
        cr_skip_test("build/venv not found: skipped");
    cr_assert(tmp_dir_make(dir, "nextn"));
    snprintf(path, sizeof path, "%s/nextn.gguf", dir);
    snprintf(ok, sizeof ok, "%s/scaled.gguf", dir);
    cr_assert(heldout_arch_write("heldout-scaled-mimo2-nextn", path, why), "%s", why);
    cr_assert(heldout_arch_write("heldout-scaled-deci", ok, why), "%s", why);
    int st;
    char *out = run_on("gguf-run", path, "-p hi -n 1", &st);
    cr_expect_eq(st, 1, "%s", out);
    cr_expect(strstr(out, "tensor 'blk.4.attn_q.scale' is a per-tensor scale in a prediction block") &&
                  strstr(out, "llama.cpp would refuse this file"),
              "%s", out);
    free(out);
    out = run_on("gguf-verify", path, "", &st);
    cr_expect_eq(st, 1, "%s", out);
    cr_expect(strstr(out, "blk.4.attn_q.scale"), "%s", out);
    free(out);
    out = run_on("gguf-run", ok, "-p hi -n 1", &st);
    cr_expect_eq(st, 0, "%s", out);
    /* DeciLM's graph scales q, k, v and the output product, not its feed-forward block's nor its linear attention's */
    cr_expect(strstr(out, "scales     per-tensor: 12 applied (attn_q, attn_k, attn_v, attn_output); 16 left unread as "
                          "llama.cpp's deci graph leaves them (ffn_gate, ffn_down, ffn_up, attn_output)"),
              "%s", out);
    free(out);
    cr_assert(tmp_dir_remove(dir));
}
