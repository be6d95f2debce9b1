/*
 * MPT's options that llama.cpp's goldens cannot hold: its q/k LayerNorms (qk_ln), on which llama.cpp aborts building
 * the graph (mpt.cpp reshapes a view of the fused q/k/v product: GGML_ASSERT(ggml_is_contiguous) in
 * ggml_reshape_2d), are held to tests/py/mpt_reference.py, Hugging Face's MptModel in numpy float64 (which agrees with
 * llama.cpp's goldens of the files without them to 4.3e-4 of max |logit|); a layer's q norm without its k norm and
 * AWQ's activation scales are refused by name. The files llama.cpp runs are test_engine_arch's held-out goldens.
 */
#include "engine_goldens.h"
#include "golden.h"
#include "suite_helpers.h"
#include "testutil.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { T = 10 };
static const int32_t prompt[T] = { 522, 425, 503, 280, 115, 369, 296, 274, 266, 611 };

/* mpt_reference.py's prompt logits of the file at path (without q's and k's norms where `without`), T x nv. */
static float *numpy_logits(const char *dir, const char *path, bool without, uint64_t nv)
{
    char npy[256], cmd[2048];
    snprintf(npy, sizeof npy, "%s/reference%s.npy", dir, without ? "-without" : "");
    int n = snprintf(cmd, sizeof cmd, "'%s' tests/py/mpt_reference.py %s '%s' '%s'", venv_python(),
                     without ? "--without-qk-norm" : "", path, npy);
    for (int t = 0; t < T; t++)
        n += snprintf(cmd + n, sizeof cmd - (size_t)n, " %d", (int)prompt[t]);
    snprintf(cmd + n, sizeof cmd - (size_t)n, " 2>&1");
    int st;
    char *out = run_capture(cmd, &st);
    cr_assert_eq(st, 0, "mpt_reference.py: %s", out);
    free(out);
    uint64_t rows, cols;
    float *l = npy_read_f32(npy, &rows, &cols);
    cr_assert(l && rows == T && cols == nv, "%s: %llu x %llu", npy, (unsigned long long)rows, (unsigned long long)cols);
    return l;
}

/* max |a - b| / max |b| over n values */
static double rel_to(const float *a, const float *b, size_t n)
{
    double d = 0.0, m = 0.0;
    for (size_t i = 0; i < n; i++) {
        d = fmax(d, fabs((double)a[i] - b[i]));
        m = fmax(m, fabs((double)b[i]));
    }
    return d / m;
}

Test(mpt, q_and_k_layernorms_agree_with_the_numpy_reference, .timeout = 120)
{
    char dir[128], path[256], why[200];
    if (access(venv_python(), X_OK) != 0)
        cr_skip_test("build/venv not found: the held-out files cannot be written");
    cr_assert(tmp_dir_make(dir, "mpt"));
    snprintf(path, sizeof path, "%s/heldout-mpt-qkln.gguf", dir);
    cr_assert(heldout_arch_write("heldout-mpt-qkln", path, why), "%s", why);
    for (int numerics = 0; numerics < 2; numerics++) {
        golden_model l;
        cr_assert(golden_model_open(path, numerics ? KERN_NUMERICS_GGML : KERN_NUMERICS_EXACT, &l));
        const uint64_t nv = (uint64_t)engine_model_hparams(l.m)->n_vocab;
        engine_ctx *c = NULL;
        engine_error e;
        cr_assert_eq(engine_ctx_create(l.m, 64, 16, &c, &e), ENGINE_OK, "%s", e.message);
        float *ours = malloc((size_t)T * nv * sizeof(float));
        cr_assert(ours);
        cr_assert_eq(engine_forward(c, prompt, T, true, ours, NULL, &e), ENGINE_OK, "%s", e.message);
        float *ref = numpy_logits(dir, path, false, nv), *without = numpy_logits(dir, path, true, nv);
        /* the goldens' 5e-4 of max |logit| (llama.cpp's f16 GELU table against the reference's exact tanh-GELU:
         * 4.3e-4 on the files llama.cpp runs); an engine leaving the norms out departs by far more */
        const double rel = rel_to(ours, ref, (size_t)T * nv), apart = rel_to(without, ref, (size_t)T * nv);
        cr_log_info("%s numerics: ours %.2e of max |logit| from numpy's; without the q/k norms %.2e",
                    numerics ? "ggml" : "exact", rel, apart);
        cr_expect_leq(rel, 5e-4, "ours and numpy's MPT with q/k LayerNorms: %.3g of max |logit|", rel);
        cr_expect_gt(apart, 20 * 5e-4, "the q/k norms move the logits by only %.3g: the test would not tell", apart);
        free(ours), free(ref), free(without);
        engine_ctx_free(c);
        golden_model_close(&l);
    }
    /* gguf-verify: the file is sound (exit 0), and llama.cpp aborts on it: a warning saying why */
    char args[512];
    int st;
    snprintf(args, sizeof args, "'%s' 2>&1", path);
    char *out = run_tool("gguf-verify", args, &st);
    cr_expect_eq(st, 0, "%s", out);
    cr_expect(strstr(out, "[llama-cpp-aborts]") && strstr(out, "ggml_reshape_2d"), "%s", out);
    free(out);
    cr_assert(tmp_dir_remove(dir));
}

/* q's norm without k's (llama.cpp would norm k without gains, after aborting on the reshape anyway): a file problem;
 * AWQ's activation scales, which llama.cpp runs and gguf-run does not: a feature not run (exit 2, and gguf-verify's
 * not-runnable note rather than its "llama.cpp would refuse"). Each named with its tensor and byte offset. */
Test(mpt, a_q_norm_alone_and_awq_scales_are_refused_by_name, .timeout = 60)
{
    static const struct {
        const char *name, *says;
        int status;
    } cases[] = {
        { "heldout-mpt-q-only", "'blk.0.attn_q_norm.weight' without its key norm", 1 },
        { "heldout-mpt-awq", "'blk.0.ffn.act.scales' holds AWQ activation scales", 2 },
    };
    char dir[128], path[256], why[200];
    if (access(venv_python(), X_OK) != 0)
        cr_skip_test("build/venv not found: the held-out files cannot be written");
    cr_assert(tmp_dir_make(dir, "mpt"));
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        snprintf(path, sizeof path, "%s/%s.gguf", dir, cases[i].name);
        cr_assert(heldout_arch_write(cases[i].name, path, why), "%s", why);
        char args[512];
        snprintf(args, sizeof args, "'%s' -p hi -n 1 -q 2>&1", path);
        int st;
        char *out = run_tool("gguf-run", args, &st);
        cr_expect_eq(st, cases[i].status, "%s: %s", cases[i].name, out);
        cr_expect(strstr(out, cases[i].says) && strstr(out, "byte "), "%s: %s", cases[i].name, out);
        free(out);
        snprintf(args, sizeof args, "'%s' 2>&1", path);
        out = run_tool("gguf-verify", args, &st);
        cr_expect(strstr(out, cases[i].status == 1 ? "[refused]" : "[not-runnable]"), "%s: %s", cases[i].name, out);
        free(out);
    }
    cr_assert(tmp_dir_remove(dir));
}
