/*
 * Learned absolute positions (GPT-2, StarCoder: position_embd.weight, a row per position added to the token
 * embeddings): the table's shape is context_length rows, a context can be no longer than the table, and a prompt run
 * in batches or token by token (each batch adding the rows of its own positions) gives the logits of the whole
 * prompt at once, the same after a rewind. Agreement with llama.cpp is test_engine_arch's held-out goldens.
 */
#include "engine_goldens.h"
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
