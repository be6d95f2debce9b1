/*
 * The architectures past the dense four against llama.cpp: the mixture-of-experts files in ../shared/models/moe,
 * the synthetic presets of ../shared/tools/synth_arch.py written at test time (sha256-checked), and phi3's
 * LongRoPE (tests/data/golden), with the tolerances of test_engine (engine_goldens.h).
 */
#include "engine_goldens.h"
#include "golden.h"
#include "suite_helpers.h"
#include "testutil.h"
#include "quant.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The mixture-of-experts files in ../shared/models/moe (qwen3moe, qwen2moe with a shared expert, Mixtral's llama
 * with experts, gpt-oss with MXFP4 experts, biases and sinks): exact numerics against their -deq twins, and
 * --numerics ggml against llama.cpp's logits on the files themselves, held as the dense files are (7 in 8 positions
 * within 1e-4 where this CPU's build is the goldens', 3 in 4 on the AVX2 path). */
static const char *moe_dir(void)
{
    static char dir[4096];
    snprintf(dir, sizeof dir, "%s/moe", models_dir());
    return dir;
}

Test(engine_arch, mixtures_of_experts_match_llama_cpp)
{
    int checked = check_goldens_in(moe_dir(), KERN_NUMERICS_EXACT, NULL);
    if (!checked)
        cr_skip_test("no mixture-of-experts file with a golden in %s: skipped", moe_dir());
    cr_assert_eq(checked, 8, "qwen3moe, qwen2moe, mixtral, gpt-oss x p0, p1: %d checked", checked);
    outcome sum = { 0 };
    checked = check_goldens_in(moe_dir(), KERN_NUMERICS_GGML, &sum);
    cr_assert_eq(checked, 8);
    cr_log_info("ggml numerics, experts: %zu of %zu prompt positions within %.0e of llama.cpp's logits",
                sum.rows_within, sum.rows, GGML_LOGIT_TOL);
    /* These goldens come from an AVX-512 build of llama.cpp, and --numerics ggml takes the forms of this CPU's build
     * (test_engine's note): natively on AVX-512, 7 in 8 positions; on the AVX2 path (a CPU without AVX-512), whose Q8
     * block sums and e^x run in 8 lanes, measured 63 of 77: 3 in 4 there. */
    const bool goldens_build = strcmp(quant_simd_level(), "avx512") == 0;
    const size_t num = goldens_build ? 7 : 3, den = goldens_build ? 8 : 4;
    cr_assert_geq(sum.rows_within * den, sum.rows * num, "only %zu of %zu prompt positions within %.0e (SIMD %s)",
                  sum.rows_within, sum.rows, GGML_LOGIT_TOL, quant_simd_level());
}

/* The f32 files ../shared/tools/synth_arch.py writes (the architectures beyond the dense four), written here for
 * the architectures the engine runs (5 s each), checked to be the golden README's files by their sha256, and held
 * to their goldens (p0 and p1). */
Test(engine_arch, synthetic_architectures_match_llama_cpp, .timeout = 300)
{
    char dir[128];
    cr_assert(tmp_dir_make(dir, "synth-arch"));
    int checked = 0;
    const char *arch, *preset;
    for (size_t i = 0; (preset = synth_arch_preset(i, &arch)); i++) {
        char path[256], own[128], why[200];
        if (!model_arch_find(arch, strlen(arch))) {
            cr_log_info("%s: architecture %s is not run yet: not checked", preset, arch);
            continue;
        }
        snprintf(path, sizeof path, "%s/%s-f32.gguf", dir, preset);
        int w = synth_arch_write(preset, path, why);
        if (w == 0) {
            tmp_dir_remove(dir);
            cr_skip_test("../shared/tools/synth_arch.py or build/venv not found: skipped");
        }
        cr_assert_eq(w, 1, "%s", why);
        for (int p = 0; p < 2; p++) {
            snprintf(own, sizeof own, "%s-f32.p%d", preset, p);
            outcome o = check_against(path, own, own, KERN_NUMERICS_EXACT);
            cr_log_info("%-16s p%d logits %.2e  trace %.2e  greedy %zu/%zu", preset, p, o.logit_rel, o.trace_rel,
                        o.greedy_compared, o.greedy_total);
            checked++;
        }
    }
    cr_assert(tmp_dir_remove(dir));
    cr_assert_eq(checked, 16, "the eight presets x p0, p1: %d checked", checked);
}

/* Phi-3's 128k files rotate with LongRoPE divisors: tiny-phi3 rewritten with them by tests/py/phi3_longrope.py (the
 * gguf package), original context 128 (a context past it: the long divisors, and the converter's attention factor)
 * and 4096 (the short ones), held to llama.cpp's goldens for them (made here by ../shared/tools/golden.c against the
 * llama.cpp this project benchmarks with, and kept in tests/data/golden/: they differ from plain phi3's by 59 % and
 * 15 % of max |logit|, so a file read without its divisors fails). The first one's Q4_K_M (gguf-quantize's bytes,
 * llama-quantize's) runs bit for bit as llama.cpp's logits under its numerics: phi3's graph scales q before the
 * attention and the scores by 1 (model_arch.q_prescaled), which rounds otherwise than scaling the scores (1/sqrt(96)
 * is no power of two): without it 1.8e-7 of max |logit| apart. */
Test(engine_arch, phi3_longrope_matches_llama_cpp, .timeout = 300)
{
    char dir[128], base[256], why[200];
    cr_assert(tmp_dir_make(dir, "longrope"));
    snprintf(base, sizeof base, "%s/tiny-phi3-f32.gguf", dir);
    int w = synth_arch_write("tiny-phi3", base, why);
    if (w == 0) {
        tmp_dir_remove(dir);
        cr_skip_test("../shared/tools/synth_arch.py or build/venv not found: skipped");
    }
    cr_assert_eq(w, 1, "%s", why);
    static const struct { int orig; const char *sha256; } files[] = {
        { 128, "40a173511bb325e001836bbe85fbe1b95cf202a11a74cd97c1bfafc332970236" },
        { 4096, "f6eefc6d6375784a76e8847d59a42d296e8858d34f0acfb07988c593c0b13fe6" },
    };
    cr_assert_eq(setenv("GGUFSCOPE_GOLDEN", "tests/data/golden", 1), 0); /* this test's process only */
    for (size_t i = 0; i < 2; i++) {
        char path[256], cmd[1024], own[96];
        snprintf(path, sizeof path, "%s/tiny-phi3-longrope%d-f32.gguf", dir, files[i].orig);
        snprintf(cmd, sizeof cmd, "'%s' tests/py/phi3_longrope.py '%s' '%s' %d 2>&1", venv_python(), base, path,
                 files[i].orig);
        int st;
        char *out = run_capture(cmd, &st);
        cr_assert_eq(st, 0, "%s", out);
        free(out);
        assert_sha256(path, files[i].sha256, "the LongRoPE file is not the one the goldens were made from");
        for (int p = 0; p < 2; p++) {
            snprintf(own, sizeof own, "tiny-phi3-longrope%d-f32.p%d", files[i].orig, p);
            outcome o = check_against(path, own, own, KERN_NUMERICS_EXACT);
            cr_log_info("%s logits %.2e  trace %.2e  greedy %zu/%zu", own, o.logit_rel, o.trace_rel,
                        o.greedy_compared, o.greedy_total);
        }
        if (files[i].orig != 128)
            continue;
        char q[256], args[600];
        snprintf(q, sizeof q, "%s/tiny-phi3-longrope128-q4_k_m.gguf", dir);
        snprintf(args, sizeof args, "'%s' '%s' Q4_K_M 2>&1", path, q);
        free(run_tool("gguf-quantize", args, &st));
        cr_assert_eq(st, 0, "gguf-quantize %s", args);
        assert_sha256(q, "39888e674c8cf07c1e3b9b72ea1a76a94ef00ad61ba116fed3cb5e99a0f3bf5b",
                      "not llama-quantize's bytes");
        for (int p = 0; p < 2; p++) {
            snprintf(own, sizeof own, "tiny-phi3-longrope128-q4_k_m.p%d", p);
            const outcome o = check_against(q, own, own, KERN_NUMERICS_GGML);
            cr_expect_eq(o.logit_rel, 0.0, "%s: %.3g of max |logit| from llama.cpp's logits", own, o.logit_rel);
        }
    }
    cr_assert(tmp_dir_remove(dir));
}

/* An NVFP4 file as NVIDIA's FP4 conversions lay them out (tests/py/nvfp4_arch.py: llama's layers, every matrix in
 * NVFP4 with its per-tensor second scale as W.scale; llama-quantize does not write the type): under --numerics ggml
 * llama.cpp's logits on it bit for bit (its Q8_0 activations, the x86 order of ggml_vec_dot_nvfp4_q8_0), and in exact
 * numerics its -deq twin's (every tensor dequantized by the gguf package, scales kept) within the golden tolerance;
 * and an NVFP4 output with its scale beside it. */
Test(engine_arch, an_nvfp4_file_matches_llama_cpp, .timeout = 300)
{
    char dir[128], path[256], why[200];
    if (access(venv_python(), X_OK) != 0)
        cr_skip_test("build/venv not found: skipped");
    cr_assert(tmp_dir_make(dir, "nvfp4"));
    snprintf(path, sizeof path, "%s/heldout-nvfp4.gguf", dir);
    cr_assert(heldout_arch_write("heldout-nvfp4", path, why), "%s", why);
    assert_sha256(path, "b73245f634fd8c42f62b004d219c8dcd988814ff0c1e4a3c4128fb99d5eec417",
                  "not the file the goldens were made from");
    cr_assert_eq(setenv("GGUFSCOPE_GOLDEN", "tests/data/golden", 1), 0); /* this test's process only */
    for (int p = 0; p < 2; p++) {
        char own[64], deq[64];
        snprintf(own, sizeof own, "heldout-nvfp4.p%d", p);
        snprintf(deq, sizeof deq, "heldout-nvfp4-deq.p%d", p);
        const outcome g = check_against(path, own, own, KERN_NUMERICS_GGML);
        cr_expect_eq(g.logit_rel, 0.0, "%s: %.3g of max |logit| from llama.cpp's logits", own, g.logit_rel);
        const outcome e = check_against(path, own, deq, KERN_NUMERICS_EXACT);
        cr_log_info("%s exact numerics against its -deq twin: logits %.2e, greedy %zu/%zu", own, e.logit_rel,
                    e.greedy_compared, e.greedy_total);
    }
    /* llama's layers with output.weight's second scale as output.scale, which llama.cpp's loader takes beside an NVFP4
     * output and its graph multiplies the logits by (a positive factor: the greedy tokens alone would not show it) */
    snprintf(path, sizeof path, "%s/heldout-nvfp4-out.gguf", dir);
    cr_assert(heldout_arch_write("heldout-nvfp4-out", path, why), "%s", why);
    assert_sha256(path, "77fd756763b4a7a874a3b5d3bba2377298c4f47ba5ebec22539d00106973c320",
                  "not the file the goldens were made from");
    for (int p = 0; p < 2; p++) {
        char own[64];
        snprintf(own, sizeof own, "heldout-nvfp4-out.p%d", p);
        const outcome g = check_against(path, own, own, KERN_NUMERICS_GGML);
        cr_expect_eq(g.logit_rel, 0.0, "%s: %.3g of max |logit| from llama.cpp's logits", own, g.logit_rel);
    }
    cr_assert(tmp_dir_remove(dir));
}

/* Held-out shapes (tests/py/heldout_arch.py: other expert counts, experts used, widths, windows, layer counts and
 * seeds than the presets', and families of their own), written at test time and held to llama.cpp's goldens of them
 * (made here by ../shared/tools/golden.c, kept in tests/data/golden/), so the engine does not rest on the presets'
 * numbers. tests/data/heldout_goldens.tsv lists them and says what each covers: every f32 file in exact numerics
 * (its sha256 first: the file the goldens were made from), and those quantized by our gguf-quantize (the bytes
 * llama-quantize writes: its files' sha256) in llama.cpp's numerics to its logits on them, as the shared MoE files
 * are (the first position within 1e-4, 7 in 8 of all). One test: the engine's threads take both cores. */
enum { HELDOUT_MAX = 512 };
typedef struct heldout_line {
    char name[64], type[16], suffix[16], sha256[65];
    bool quantized;
} heldout_line;

static size_t heldout_lines(heldout_line *out, size_t cap)
{
    FILE *fp = fopen("tests/data/heldout_goldens.tsv", "r");
    cr_assert(fp, "tests/data/heldout_goldens.tsv is missing");
    char line[512], kind[8];
    size_t n = 0;
    while (fgets(line, sizeof line, fp)) {
        if (line[0] == '#' || line[0] == '\n')
            continue;
        cr_assert_lt(n, cap, "more than %zu lines", cap);
        heldout_line *h = &out[n++];
        memset(h, 0, sizeof *h);
        cr_assert_eq(sscanf(line, "%7s", kind), 1, "bad line: %s", line);
        h->quantized = strcmp(kind, "quant") == 0;
        const int got = h->quantized ? sscanf(line, "%*s %63s %15s %15s %64s", h->name, h->type, h->suffix, h->sha256)
                                     : sscanf(line, "%*s %63s %64s", h->name, h->sha256);
        cr_assert(got == (h->quantized ? 4 : 2) && strlen(h->sha256) == 64, "bad line: %s", line);
    }
    fclose(fp);
    return n;
}

Test(engine_arch, held_out_shapes_match_llama_cpp, .timeout = 900)
{
    static heldout_line lines[HELDOUT_MAX];
    const size_t n = heldout_lines(lines, HELDOUT_MAX);
    char ref[1024], dir[128];
    snprintf(ref, sizeof ref, "%s/../tools/synth_arch.py", models_dir());
    if (access(ref, R_OK) != 0 || access(venv_python(), X_OK) != 0)
        cr_skip_test("%s or build/venv not found: skipped", ref);
    cr_assert(tmp_dir_make(dir, "heldout"));
    cr_assert_eq(setenv("GGUFSCOPE_GOLDEN", "tests/data/golden", 1), 0); /* this test's process only */
    outcome sum = { 0 };
    size_t f32_files = 0, quantized = 0;
    for (size_t i = 0; i < n; i++) {
        const heldout_line *h = &lines[i];
        f32_files += !h->quantized, quantized += h->quantized;
        char f32[320], path[320], args[1024], own[128], why[200];
        snprintf(f32, sizeof f32, "%.127s/%.63s-f32.gguf", dir, h->name);
        if (access(f32, R_OK) != 0)
            cr_assert(heldout_arch_write(h->name, f32, why), "%s", why);
        if (!h->quantized) {
            assert_sha256(f32, h->sha256, "not the file the goldens were made from");
            for (int p = 0; p < 2; p++) {
                snprintf(own, sizeof own, "%.63s-f32.p%d", h->name, p);
                const outcome o = check_against(f32, own, own, KERN_NUMERICS_EXACT);
                cr_log_info("%-18s p%d logits %.2e  trace %.2e  greedy %zu/%zu", h->name, p, o.logit_rel,
                            o.trace_rel, o.greedy_compared, o.greedy_total);
            }
            continue;
        }
        snprintf(path, sizeof path, "%.127s/%.63s-%.15s.gguf", dir, h->name, h->suffix);
        snprintf(args, sizeof args, "'%s' '%s' %.15s 2>&1", f32, path, h->type);
        int st;
        free(run_tool("gguf-quantize", args, &st));
        cr_assert_eq(st, 0, "gguf-quantize %s", args);
        assert_sha256(path, h->sha256, "not llama-quantize's bytes");
        for (int p = 0; p < 2; p++) {
            snprintf(own, sizeof own, "%.63s-%.15s.p%d", h->name, h->suffix, p);
            const outcome o = check_against(path, own, own, KERN_NUMERICS_GGML);
            cr_log_info("%-28s ggml numerics: %zu of %zu positions within %.0e (first %.2e)", own, o.rows_within,
                        o.rows, GGML_LOGIT_TOL, o.first_rel);
            cr_expect_leq(o.first_rel, GGML_LOGIT_TOL, "%s: the first position %.3g apart", own, o.first_rel);
            sum.rows_within += o.rows_within, sum.rows += o.rows;
        }
        unlink(path);
    }
    /* the table is whole: a line lost from it would drop its file silently */
    cr_assert_geq(f32_files, 168, "%zu f32 files listed", f32_files);
    cr_assert_geq(quantized, 131, "%zu quantized files listed", quantized);
    cr_assert_geq(sum.rows_within * 8, sum.rows * 7, "only %zu of %zu prompt positions within %.0e", sum.rows_within,
                  sum.rows, GGML_LOGIT_TOL);
    cr_assert(tmp_dir_remove(dir));
}

/* The shared mixtures (qwen3moe, qwen2moe with a shared expert, Mixtral, gpt-oss with biases and MXFP4 experts). */
static const char *const moe_files[] = { "tiny-qwen3moe-q4_k_m.gguf", "tiny-qwen2moe-q4_k_m.gguf",
                                         "tiny-mixtral-q4_k_m.gguf", "tiny-gptoss-mxfp4.gguf" };
enum { MOE_FILES = sizeof moe_files / sizeof moe_files[0] };

/* The path of moe_files[f] into path, or the test skipped where it is missing. */
static void moe_file_or_skip(size_t f, char *path, size_t size)
{
    snprintf(path, size, "%s/%s", moe_dir(), moe_files[f]);
    if (access(path, R_OK) != 0)
        cr_skip_test("%s not found: skipped", path);
}

/* The CPU backend's matmul and matmul_each, and the products of layer 0's experts (calls and rows) through the
 * counting wrappers. */
typedef kern_status (*matmul_fn)(kern_backend *, const kern_weight *, const kern_weight *, const float *, int, float *);
typedef kern_status (*matmul_each_fn)(kern_backend *, int, const kern_weight *const[], const kern_weight *const[],
                                      const float *, int, float *const[]);
static matmul_fn real_matmul;
static matmul_each_fn real_matmul_each;
static int expert_calls, expert_rows;

static void count_expert_product(const kern_weight *w, int T)
{
    if (!strncmp(w->t->name, "blk.0.ffn_down_exps", 19)) {
        expert_calls++;
        expert_rows += T;
    }
}

static kern_status counting_matmul(kern_backend *b, const kern_weight *w, const kern_weight *bias, const float *x,
                                   int T, float *y)
{
    count_expert_product(w, T);
    return real_matmul(b, w, bias, x, T, y);
}

static kern_status counting_matmul_each(kern_backend *b, int n, const kern_weight *const ws[],
                                        const kern_weight *const bs[], const float *x, int T, float *const ys[])
{
    count_expert_product(ws[0], T);
    return real_matmul_each(b, n, ws, bs, x, T, ys);
}

/* A prompt's tokens go through each expert together (one product per expert chosen, over the tokens that chose
 * it) in both numerics: in llama.cpp's through matmul_each, which keeps mul_mat_id's one order per row (held bit
 * for bit in test_kernels); token by token in a batch of one. In exact numerics the logits of the grouped batch are
 * the token-by-token ones to rounding (llama.cpp's numerics pick the other products' kernels by the batch's size,
 * so there the held-out goldens check the grouped path). On every shared mixture. */
Test(engine_arch, a_batch_goes_through_each_expert_once)
{
    int32_t prompt[16];
    for (int i = 0; i < 16; i++)
        prompt[i] = 1 + (i * 37) % 200;
    for (size_t f = 0; f < MOE_FILES; f++) {
        char path[4200];
        moe_file_or_skip(f, path, sizeof path);
        for (int numerics = 0; numerics < 2; numerics++) {
            golden_model l;
            golden_model_open(path, numerics ? KERN_NUMERICS_GGML : KERN_NUMERICS_EXACT, &l);
            const engine_hparams *hp = engine_model_hparams(l.m);
            const int nv = hp->n_vocab, k = hp->n_expert_used;
            float *grouped = malloc((size_t)16 * nv * sizeof(float)), *single = malloc((size_t)16 * nv * sizeof(float));
            cr_assert(grouped && single);
            real_matmul = l.be->matmul;
            real_matmul_each = l.be->matmul_each;
            l.be->matmul = counting_matmul;
            l.be->matmul_each = counting_matmul_each;
            for (int batch = 16; batch >= 1; batch -= 15) {
                engine_ctx *c;
                engine_error e;
                expert_calls = expert_rows = 0;
                cr_assert_eq(engine_ctx_create(l.m, 32, batch, &c, &e), ENGINE_OK, "%s", e.message);
                cr_assert_eq(engine_forward(c, prompt, 16, true, batch > 1 ? grouped : single, NULL, &e), ENGINE_OK,
                             "%s", e.message);
                engine_ctx_free(c);
                cr_assert_eq(expert_rows, 16 * k, "%s: %d rows through layer 0's experts", moe_files[f], expert_rows);
                if (batch > 1)
                    cr_assert_leq(expert_calls, hp->n_expert, "%s (%s): %d products for %d experts", moe_files[f],
                                  numerics ? "ggml" : "exact", expert_calls, hp->n_expert);
                else
                    cr_assert_eq(expert_calls, 16 * k, "%s (%s, batch %d): %d products, one per token and choice",
                                 moe_files[f], numerics ? "ggml" : "exact", batch, expert_calls);
            }
            l.be->matmul = real_matmul;
            l.be->matmul_each = real_matmul_each;
            float scale = 0.0f, worst = 0.0f;
            for (size_t v = 0; v < (size_t)16 * nv; v++) {
                scale = fmaxf(scale, fabsf(single[v]));
                worst = fmaxf(worst, fabsf(grouped[v] - single[v]));
            }
            cr_log_info("%s %s: the batch's logits %.2e of max |logit| from token by token's", moe_files[f],
                        numerics ? "ggml" : "exact", worst / scale);
            /* (llama.cpp's numerics pick their kernels by the batch's size elsewhere: only exact ones compare) */
            if (!numerics)
                cr_assert(scale > 0.0f && worst <= 5e-5f * scale, "%s: %g apart of max %g", moe_files[f], worst, scale);
            free(grouped), free(single);
            golden_model_close(&l);
        }
    }
}


/* The CPU backend's matmul_many_x, and its calls with layer 0's down experts through the counting wrapper. */
typedef kern_status (*matmul_many_x_fn)(kern_backend *, int, const kern_weight *const[], const kern_weight *const[],
                                        const float *const[], int, float *const[]);
static matmul_many_x_fn real_matmul_many_x;
static int down_together_calls, down_together_weights;

static kern_status counting_matmul_many_x(kern_backend *b, int n, const kern_weight *const ws[],
                                          const kern_weight *const bs[], const float *const xs[], int T,
                                          float *const ys[])
{
    if (!strncmp(ws[0]->t->name, "blk.0.ffn_down_exps", 19)) {
        down_together_calls++;
        down_together_weights += n;
    }
    return real_matmul_many_x(b, n, ws, bs, xs, T, ys);
}

/* A decode step's chosen experts go through the layer together (their gate and up products as one product, their
 * down products as one: matmul_many_x) where the batch buffers hold their rows, one at a time in a context of
 * batch 1; the logits of 12 greedy steps are the same bits either way, in both numerics, on every shared mixture
 * (shared expert, biases, MXFP4 experts). */
Test(engine_arch, a_decode_steps_experts_together_are_one_at_a_time_bit_for_bit, .timeout = 120)
{
    for (size_t f = 0; f < MOE_FILES; f++) {
        char path[4200];
        moe_file_or_skip(f, path, sizeof path);
        for (int numerics = 0; numerics < 2; numerics++) {
            golden_model l;
            golden_model_open(path, numerics ? KERN_NUMERICS_GGML : KERN_NUMERICS_EXACT, &l);
            const engine_hparams *hp = engine_model_hparams(l.m);
            const int nv = hp->n_vocab, k = hp->n_expert_used;
            cr_assert_gt(k, 1, "%s: more than one expert a token, or nothing goes together", moe_files[f]);
            real_matmul_many_x = l.be->matmul_many_x;
            l.be->matmul_many_x = counting_matmul_many_x;
            engine_ctx *together, *alone;
            engine_error e;
            cr_assert_eq(engine_ctx_create(l.m, 32, 16, &together, &e), ENGINE_OK, "%s", e.message);
            cr_assert_eq(engine_ctx_create(l.m, 32, 1, &alone, &e), ENGINE_OK, "%s", e.message);
            float *a = malloc((size_t)nv * sizeof(float)), *b = malloc((size_t)nv * sizeof(float));
            cr_assert(a && b);
            int32_t tok = 1;
            down_together_calls = down_together_weights = 0;
            for (int step = 0; step < 12; step++) {
                cr_assert_eq(engine_forward(together, &tok, 1, false, a, NULL, &e), ENGINE_OK, "%s", e.message);
                const int calls = down_together_calls;
                cr_assert_eq(engine_forward(alone, &tok, 1, false, b, NULL, &e), ENGINE_OK, "%s", e.message);
                cr_assert_eq(down_together_calls, calls, "%s: batch 1 took its experts together", moe_files[f]);
                cr_assert_eq(memcmp(a, b, (size_t)nv * sizeof(float)), 0, "%s (%s), step %d: logits differ",
                             moe_files[f], numerics ? "ggml" : "exact", step);
                int best = 0;
                for (int v = 1; v < nv; v++)
                    best = a[v] > a[best] ? v : best;
                tok = best;
            }
            cr_assert_eq(down_together_calls, 12, "%s: %d products of layer 0's down experts together in 12 steps",
                         moe_files[f], down_together_calls);
            cr_assert_eq(down_together_weights, 12 * k, "%s: %d experts in them", moe_files[f], down_together_weights);
            l.be->matmul_many_x = real_matmul_many_x;
            free(a), free(b);
            engine_ctx_free(together);
            engine_ctx_free(alone);
            golden_model_close(&l);
        }
    }
}

/* Qwen's multi-axis rotation as llama.cpp runs it on text (a token's position on the time, height and width axes,
 * 0 on the extra one; ggml_mrope_cache_init picks each pair's axis): the pairs on the extra axis keep angle 0. Worked
 * out by hand from ggml's rule for the held-out files: qwen2vl's sections 6, 10, 10, 6 in turn over 32 pairs leave
 * pairs 26-31 on the extra axis; qwen3vl's interleaved 16, 14, 14, 0 over 48 pairs (sector = pair % 44) leave sector 43
 * alone (43 % 3 == 1, past the height's 3 x 14 = 42), pairs 44-47 wrapping to sectors 0-3. The logits barely show it
 * at short positions (these are the slowest pairs), so the table itself is held here. */
Test(engine_arch, multi_axis_rope_leaves_the_extra_axis_unrotated_for_text, .timeout = 120)
{
    char dir[128], path[256], why[200];
    if (access(venv_python(), X_OK) != 0)
        cr_skip_test("build/venv not found: skipped");
    cr_assert(tmp_dir_make(dir, "mrope"));
    static const struct {
        const char *name;
        int pairs, still_from, still_to; /* pairs [still_from, still_to] stay unrotated */
    } files[] = { { "heldout-qwen2vl", 32, 26, 31 }, { "heldout-qwen3vl", 48, 43, 43 } };
    for (size_t k = 0; k < sizeof files / sizeof files[0]; k++) {
        snprintf(path, sizeof path, "%s/%s.gguf", dir, files[k].name);
        cr_assert(heldout_arch_write(files[k].name, path, why), "%s", why);
        gguf_file *f;
        gguf_error ge;
        cr_assert_eq(gguf_open(path, &f, &ge), GGUF_OK, "%s", ge.message);
        kern_backend *be = kern_cpu_create(1);
        engine_model *m;
        engine_error err;
        cr_assert_eq(engine_model_load(f, be, &m, &err), ENGINE_OK, "%s", err.message);
        cr_assert_eq(engine_model_hparams(m)->rope.n_rot / 2, files[k].pairs);
        const char *what;
        const float *ff = engine_rope_factors_for(m, 64, &what);
        cr_assert(ff && what && strstr(what, "M-RoPE"), "%s: no text table of the sections", files[k].name);
        for (int i = 0; i < files[k].pairs; i++) {
            const bool still = i >= files[k].still_from && i <= files[k].still_to;
            cr_expect(still ? isinf(ff[i]) : ff[i] == 1.0f, "%s pair %d: divisor %g", files[k].name, i, ff[i]);
        }
        engine_model_free(m);
        be->destroy(be);
        gguf_close(f);
    }
    cr_assert(tmp_dir_remove(dir));
}

/* A recurrent layer's state carries every position before (Qwen3.5's gated delta nets, LFM2's short convolutions; both
 * numerics): a prompt run in batches of 3 gives the logits it gives in one batch (to the products' order of
 * summation), token by token too; the state goes back only to the start (a rewind elsewhere is refused, naming why),
 * and a rerun from the start gives the first run's logits bit for bit, so nothing of the first run is left in it. */
Test(engine_arch, a_recurrent_state_carries_across_batches_and_starts_over, .timeout = 120)
{
    char dir[128], path[256], why[200];
    if (access(venv_python(), X_OK) != 0)
        cr_skip_test("build/venv not found: the held-out files cannot be written");
    cr_assert(tmp_dir_make(dir, "recurrent"));
    enum { T = 10 };
    const int32_t prompt[T] = { 5, 17, 300, 42, 9, 600, 77, 8, 123, 400 };
    static const char *const files[] = { "heldout-qwen35", "heldout-lfm2" };
    for (int run = 0; run < 4; run++) {
        const int numerics = run % 2;
        snprintf(path, sizeof path, "%s/%s.gguf", dir, files[run / 2]);
        if (!numerics)
            cr_assert(heldout_arch_write(files[run / 2], path, why), "%s", why);
        golden_model l;
        golden_model_open(path, numerics ? KERN_NUMERICS_GGML : KERN_NUMERICS_EXACT, &l);
        const int nv = engine_model_hparams(l.m)->n_vocab;
        float *whole = malloc((size_t)T * nv * sizeof(float)), *again = malloc((size_t)T * nv * sizeof(float));
        cr_assert(whole && again);
        engine_ctx *one, *threes, *alone;
        engine_error e;
        cr_assert_eq(engine_ctx_create(l.m, 32, 16, &one, &e), ENGINE_OK, "%s", e.message);
        cr_assert_eq(engine_ctx_create(l.m, 32, 3, &threes, &e), ENGINE_OK, "%s", e.message);
        cr_assert_eq(engine_ctx_create(l.m, 32, 1, &alone, &e), ENGINE_OK, "%s", e.message);
        cr_assert_eq(engine_forward(one, prompt, T, true, whole, NULL, &e), ENGINE_OK, "%s", e.message);
        char what[96];
        snprintf(what, sizeof what, "%s, %s, batches of 3", files[run / 2], numerics ? "ggml" : "exact");
        assert_logits_match(threes, nv, prompt, T, whole, 1e-5, what);
        snprintf(what, sizeof what, "%s, %s, token by token", files[run / 2], numerics ? "ggml" : "exact");
        assert_logits_match(alone, nv, prompt, T, whole, 1e-5, what);
        cr_assert_eq(engine_ctx_rewind(one, 4, &e), ENGINE_E_INPUT, "a recurrent state cannot go back to position 4");
        cr_assert(strstr(e.message, "start over"), "%s", e.message);
        cr_assert_eq(engine_ctx_pos(one), T, "a refused rewind leaves the context as it was");
        cr_assert_eq(engine_ctx_rewind(one, 0, &e), ENGINE_OK, "%s", e.message);
        cr_assert_eq(engine_forward(one, prompt, T, true, again, NULL, &e), ENGINE_OK, "%s", e.message);
        cr_assert_eq(memcmp(whole, again, (size_t)T * nv * sizeof(float)), 0, "a rerun from the start differs");
        free(whole), free(again);
        engine_ctx_free(one), engine_ctx_free(threes), engine_ctx_free(alone);
        golden_model_close(&l);
    }
    cr_assert(tmp_dir_remove(dir));
}
