/*
 * Learned absolute positions (GPT-2, StarCoder: position_embd.weight, a row per position added to the token
 * embeddings): the table's shape is context_length rows, a context can be no longer than the table, and a prompt run
 * in batches or token by token (each batch adding the rows of its own positions) gives the logits of the whole
 * prompt at once, the same after a rewind. Agreement with llama.cpp is test_engine_arch's held-out goldens. And what
 * gguf-verify says of the positions and windows llama.cpp gives a file: none at an unusual depth (Baichuan), a crash
 * without a window (AFMoE).
 */
#include "engine_goldens.h"
#include "hparams_files.h"
#include "golden.h"
#include "suite_helpers.h"
#include "testutil.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

Test(positions, the_table_is_context_length_rows_and_every_layer_attends_without_rotation)
{
    const model_arch *a = model_arch_find("gpt2", 4);
    cr_assert_not_null(a);
    model_hparams hp = { .arch = a, .n_embd = 128, .n_ctx_train = 256, .n_layer = 4 };
    cr_expect_eq(model_role_need(&hp, MODEL_ROLE_POS_EMBD), MODEL_NEED_REQUIRED);
    const model_role_info *ri = model_role_info_of(MODEL_ROLE_POS_EMBD);
    cr_expect_str_eq(ri->name, "position_embd.weight");
    cr_expect_eq(model_hparams_dim(&hp, ri->ne0), 128);
    cr_expect_eq(model_hparams_dim(&hp, ri->ne1), 256, "one row per position the model was trained on");
    cr_expect_str_eq(model_dim_name(ri->ne1), "context_length");
    for (int64_t il = 0; il < hp.n_layer; il++)
        cr_expect(!model_hparams_layer_rotates(&hp, il), "layer %lld rotates", (long long)il);
    cr_expect_eq(model_role_need(&hp, MODEL_ROLE_POS_EMBD), model_role_need(&(model_hparams){
                     .arch = model_arch_find("starcoder", 9) }, MODEL_ROLE_POS_EMBD), "starcoder: the same graph");
    cr_expect_eq(model_role_need(&(model_hparams){ .arch = model_arch_find("llama", 5) }, MODEL_ROLE_POS_EMBD),
                 MODEL_NEED_ABSENT);
}

Test(positions, a_context_is_no_longer_than_the_table_and_batches_add_their_own_rows, .timeout = 120)
{
    char dir[128], path[256], why[200];
    if (access(venv_python(), X_OK) != 0)
        cr_skip_test("build/venv not found: the held-out files cannot be written");
    cr_assert(tmp_dir_make(dir, "positions"));
    enum { T = 11 };
    const int32_t prompt[T] = { 5, 17, 300, 42, 9, 600, 77, 8, 123, 400, 5 };
    snprintf(path, sizeof path, "%s/heldout-gpt2.gguf", dir);
    cr_assert(heldout_arch_write("heldout-gpt2", path, why), "%s", why);
    for (int numerics = 0; numerics < 2; numerics++) {
        golden_model l;
        golden_model_open(path, numerics ? KERN_NUMERICS_GGML : KERN_NUMERICS_EXACT, &l);
        engine_ctx *c = NULL;
        engine_error e;
        cr_assert_eq(engine_ctx_create(l.m, 257, 16, &c, &e), ENGINE_E_INPUT, "257 positions of a table of 256");
        cr_assert(strstr(e.message, "position_embd.weight") && strstr(e.message, "256"), "%s", e.message);
        const int nv = engine_model_hparams(l.m)->n_vocab;
        float *whole = malloc((size_t)T * nv * sizeof(float));
        cr_assert(whole);
        engine_ctx *one, *threes, *alone;
        cr_assert_eq(engine_ctx_create(l.m, 256, 16, &one, &e), ENGINE_OK, "%s", e.message);
        cr_assert_eq(engine_ctx_create(l.m, 256, 3, &threes, &e), ENGINE_OK, "%s", e.message);
        cr_assert_eq(engine_ctx_create(l.m, 256, 1, &alone, &e), ENGINE_OK, "%s", e.message);
        cr_assert_eq(engine_forward(one, prompt, T, true, whole, NULL, &e), ENGINE_OK, "%s", e.message);
        /* within the goldens' 5e-4 of max |logit|: GELU's f16 table turns the products' other summation order in
         * another batch size into a neighbouring f16 value now and then; a batch adding another batch's rows (the
         * table's rows have twice the embeddings' spread) moves every logit by far more */
        const char *const how = numerics ? "ggml numerics" : "exact numerics";
        char what[96];
        snprintf(what, sizeof what, "%s, batches of 3", how);
        assert_logits_match(threes, nv, prompt, T, whole, 5e-4, what);
        snprintf(what, sizeof what, "%s, token by token", how);
        assert_logits_match(alone, nv, prompt, T, whole, 5e-4, what);
        /* back to position 4, then the rest again: rows 4.. added once more, not rows 11.. */
        cr_assert_eq(engine_ctx_rewind(alone, 4, &e), ENGINE_OK, "%s", e.message);
        snprintf(what, sizeof what, "%s, after a rewind to 4", how);
        assert_logits_match(alone, nv, prompt + 4, T - 4, whole + (size_t)4 * nv, 5e-4, what);
        free(whole);
        engine_ctx_free(one), engine_ctx_free(threes), engine_ctx_free(alone);
        golden_model_close(&l);
    }
    cr_assert(tmp_dir_remove(dir));
}

/* What gguf-verify says of the positions and windows llama.cpp gives a file, by the key, each file sound (exit 0):
 * Baichuan's loader types the model by its depth, and a pruned Baichuan of 3 layers gets no positions (none is said of
 * the 7B's 32, rotary, or the 13B's 40, ALiBi); llama.cpp's afmoe graph always asks for a sliding-window cache and
 * segfaults on a file without a window (measured: llama-completion exits 139), and nothing is said of one with it;
 * llama.cpp's plm graph aborts on any PLM file with flash attention on (measured: llama-completion -fa on, and -fa auto,
 * which turns it on, abort in ggml_set_rows; -fa off runs), and nothing is said of MiniCPM3's, the same attention
 * handed over in three dimensions; a Phi-3.5-MoE file gets a note that llama.cpp's phimoe graph is not the model's
 * training math (RMSNorms for LayerNorms, softmax for sparsemixer routing: HF's PhiMoE), a BitNet file one that its
 * bitnet graph gates with SiLU where BitNet b1.58 2B-4T was trained with relu^2 (HF's BitNet). */
Test(positions, gguf_verify_warns_where_llama_cpp_gives_no_positions_or_crashes, .timeout = 180)
{
    static const struct {
        const char *name, *finding, *says[3]; /* the finding's tag, or NULL for none; what it says */
    } cases[] = {
        { "heldout-baichuan-c", "[no-positions]",
          { "baichuan.block_count", "3 layers in a baichuan model", "32 layers (rotary positions) or 40 (ALiBi)" } },
        { "heldout-baichuan", NULL, { NULL } },
        { "heldout-baichuan-b", NULL, { NULL } },
        { "heldout-afmoe-nowin", "[llama-cpp-aborts]", { "afmoe.attention.sliding_window", "build_attn_inp_kv_iswa" } },
        { "heldout-afmoe", NULL, { NULL } },
        { "heldout-plm", "[llama-cpp-aborts]", { "general.architecture", "-fa off", "ggml_set_rows" } },
        { "heldout-minicpm3", NULL, { NULL } },
        { "heldout-phimoe", "[llama-cpp-departs]", { "general.architecture", "LayerNorms", "sparsemixer" } },
        { "heldout-bitnet", "[llama-cpp-departs]", { "general.architecture", "squared-ReLU", "gate with SiLU" } },
    };
    static const char *const tags[] = { "[no-positions]", "[llama-cpp-aborts]", "[llama-cpp-departs]" };
    char dir[128], path[256], why[200], args[512];
    if (access(venv_python(), X_OK) != 0)
        cr_skip_test("build/venv not found: the held-out files cannot be written");
    cr_assert(tmp_dir_make(dir, "positions-verify"));
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        snprintf(path, sizeof path, "%s/%s.gguf", dir, cases[i].name);
        cr_assert(heldout_arch_write(cases[i].name, path, why), "%s", why);
        snprintf(args, sizeof args, "'%s' 2>&1", path);
        int st;
        char *out = run_tool("gguf-verify", args, &st);
        cr_expect_eq(st, 0, "%s: %s", cases[i].name, out);
        for (size_t k = 0; k < sizeof tags / sizeof tags[0]; k++) {
            const bool want = cases[i].finding && !strcmp(cases[i].finding, tags[k]);
            cr_expect_eq(strstr(out, tags[k]) != NULL, want, "%s: %s %s: %s", cases[i].name, tags[k],
                         want ? "missing" : "said", out);
        }
        for (size_t k = 0; k < 3 && cases[i].says[k]; k++)
            cr_expect(strstr(out, cases[i].says[k]), "%s: no '%s' in %s", cases[i].name, cases[i].says[k], out);
        free(out);
        remove(path);
    }
    cr_assert(tmp_dir_remove(dir));
}

/* SmallThinker's loader (llama.cpp's smallthinker): a file with attention.sliding_window > 0 slides over 4096
 * positions whatever the key says, on every layer but the first of each four (set_swa_pattern's dense first, or the
 * file's pattern key), and those full layers attend without positions (il % n_no_rope_layer_step == 0, the step 4);
 * without a window every layer is full and rotates. */
Test(positions, smallthinker_windows_come_after_a_full_layer_that_has_no_positions)
{
    static const struct {
        const char *window, *pattern; /* NULL: the key absent */
        int64_t swa_window;
        const char *slides, *rotates; /* per layer of 6 */
    } cases[] = {
        { "64", NULL, 4096, "011101", "011101" },
        { "8192", NULL, 4096, "011101", "011101" },
        { "64", "3", 4096, "011011", "011101" }, /* the pattern's period, dense first; NoPE stays by fours */
        { NULL, NULL, 0, "000000", "111111" },
        { "0", NULL, 0, "000000", "111111" },
    };
    for (size_t i = 0; i < N(cases); i++) {
        kv_spec kvs[] = { { "general.architecture", 's', "smallthinker" },
                          { "smallthinker.embedding_length", 'u', "64" },
                          { "smallthinker.block_count", 'u', "6" },
                          { "smallthinker.attention.head_count", 'u', "2" },
                          { "smallthinker.feed_forward_length", 'u', "32" },
                          { "smallthinker.expert_count", 'u', "4" },
                          { "smallthinker.expert_used_count", 'u', "2" },
                          { "smallthinker.attention.sliding_window", 'u', cases[i].window },
                          { "smallthinker.attention.sliding_window_pattern", 'u', cases[i].pattern } };
        const size_t n = N(kvs) - (cases[i].pattern ? 0 : 1) - (cases[i].window ? 0 : 1);
        tbuf b;
        model_hparams hp;
        model_error e;
        gguf_file *f = hparams_file_with(kvs, n, &b);
        model_hparams_read(f, &hp, &e); /* (the file has no tensors: the keys are read, then a tensor is missed) */
        cr_expect_eq(hp.swa_window, cases[i].swa_window, "case %zu: %s", i, e.message);
        for (int il = 0; il < 6; il++) {
            cr_expect_eq(model_hparams_layer_is_swa(&hp, il), cases[i].slides[il] == '1', "case %zu, layer %d", i, il);
            cr_expect_eq(model_hparams_layer_rotates(&hp, il), cases[i].rotates[il] == '1', "case %zu, layer %d", i,
                         il);
        }
        gguf_close(f);
        free(b.p);
    }
}
