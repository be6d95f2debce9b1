/*
 * DeciLM's pruned layers (llama.cpp's deci: Llama-3.1-Nemotron-51B, Llama-3.3-Nemotron-Super-49B, -Ultra-253B): each
 * layer's head_count, head_count_kv and feed_forward_length say which blocks it has, and so which tensors it needs;
 * the audit does not miss the tensors of a layer that has none; a layer that attends without a feed-forward block is
 * refused, since llama.cpp's graph drops its attention there; --compare runs every kind. Agreement with llama.cpp is
 * test_engine_arch's held-out goldens (heldout-deci, heldout-deci-b).
 */
#include "gguf.h"
#include "golden.h"
#include "hparams_files.h"
#include "model.h"
#include "testutil.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static kv_spec deci_keys[] = {
    { "general.architecture", 's', "deci" },           { "deci.embedding_length", 'u', "128" },
    { "deci.block_count", 'u', "5" },                  { "deci.attention.head_count", 'i', "8,8,0,0,8" },
    { "deci.attention.head_count_kv", 'i', "2,0,0,0,4" }, { "deci.feed_forward_length", 'i', "256,384,512,0,320" },
    { "deci.attention.key_length", 'u', "16" },        { "deci.attention.value_length", 'u', "16" },
    { "deci.attention.layer_norm_rms_epsilon", 'f', "1e-5" },
};

/* Layer 0 attends (2 key/value heads), 1 is a linear attention, 2 a feed-forward block alone, 3 neither, 4 attends
 * (4 key/value heads): the roles each needs, the shapes its counts give. */
Test(pruned_layers, each_layer_needs_the_blocks_its_counts_give)
{
    tbuf b;
    model_hparams hp;
    model_error e;
    gguf_file *f = hparams_file_with(deci_keys, N(deci_keys), &b);
    cr_assert_eq(model_hparams_read(f, &hp, &e), MODEL_OK, "%s", e.message);
    cr_assert_eq(hp.n_head, 8, "the attending layers' count");
    cr_assert_eq(hp.n_ff, 512, "the widest block");
    static const struct {
        bool attention, kv, ffn;
        int64_t n_head_kv, n_ff;
    } layers[5] = { { true, true, true, 2, 256 }, { true, false, true, 0, 384 }, { false, false, true, 0, 512 },
                    { false, false, false, 0, 0 }, { true, true, true, 4, 320 } };
    for (int il = 0; il < 5; il++) {
        const bool at = layers[il].attention, kv = layers[il].kv, ffn = layers[il].ffn;
        cr_expect_eq(model_hparams_layer_has_attention(&hp, il), at, "layer %d", il);
        cr_expect_eq(model_hparams_layer_has_ffn(&hp, il), ffn, "layer %d", il);
        cr_expect_eq(model_role_need_at(&hp, MODEL_ROLE_ATTN_NORM, il), at ? MODEL_NEED_REQUIRED : MODEL_NEED_ABSENT,
                     "layer %d: attn_norm", il);
        cr_expect_eq(model_role_need_at(&hp, MODEL_ROLE_ATTN_OUT, il), at ? MODEL_NEED_REQUIRED : MODEL_NEED_ABSENT,
                     "layer %d: attn_output (the linear attention's too)", il);
        cr_expect_eq(model_role_need_at(&hp, MODEL_ROLE_ATTN_K, il), kv ? MODEL_NEED_REQUIRED : MODEL_NEED_ABSENT,
                     "layer %d: attn_k", il);
        cr_expect_eq(model_role_need_at(&hp, MODEL_ROLE_FFN_DOWN, il), ffn ? MODEL_NEED_REQUIRED : MODEL_NEED_ABSENT,
                     "layer %d: ffn_down", il);
        cr_expect_eq(model_role_need_at(&hp, MODEL_ROLE_FFN_NORM, il), ffn ? MODEL_NEED_REQUIRED : MODEL_NEED_ABSENT,
                     "layer %d: ffn_norm", il);
        model_hparams l;
        model_hparams_layer(&hp, il, &l);
        cr_expect_eq(l.n_head_kv, layers[il].n_head_kv, "layer %d", il);
        cr_expect_eq(l.n_ff, layers[il].n_ff, "layer %d", il);
        int64_t ne[3];
        if (kv) {
            cr_assert(model_role_shape_at(&hp, model_role_info_of(MODEL_ROLE_ATTN_K), il, ne));
            cr_expect_eq(ne[1], layers[il].n_head_kv * 16, "layer %d: attn_k's rows", il);
        }
    }
    cr_expect_eq(model_role_need(&hp, MODEL_ROLE_ATTN_Q), MODEL_NEED_REQUIRED, "the file as a whole");
    cr_expect_eq(model_role_need_at(&(model_hparams){ .arch = model_arch_find("llama", 5), .n_layer = 5 },
                                    MODEL_ROLE_ATTN_NORM, 3),
                 MODEL_NEED_REQUIRED, "llama's layers are whole");
    gguf_close(f);
    free(b.p);
}

/* Heads that differ between attending layers, and a layer that attends without a feed-forward block: refused naming
 * the key (the second: llama.cpp's deci graph skips that layer's attention output, DeciLM adds it). */
Test(pruned_layers, what_gguf_run_does_not_run_is_refused_by_key)
{
    kv_spec kvs[N(deci_keys)];
    memcpy(kvs, deci_keys, sizeof kvs);
    kvs[3].value = "8,8,0,0,4";
    tbuf b;
    model_hparams hp;
    model_error e;
    gguf_file *f = hparams_file_with(kvs, N(kvs), &b);
    cr_expect_eq(model_hparams_read(f, &hp, &e), MODEL_E_UNSUPPORTED);
    cr_expect_str_eq(e.subject, "deci.attention.head_count");
    cr_expect(strstr(e.message, "layer 4 has 4 heads"), "%s", e.message);
    gguf_close(f);
    free(b.p);
    memcpy(kvs, deci_keys, sizeof kvs);
    kvs[5].value = "256,384,512,0,0";
    f = hparams_file_with(kvs, N(kvs), &b);
    cr_expect_eq(model_hparams_read(f, &hp, &e), MODEL_E_UNSUPPORTED);
    cr_expect_str_eq(e.subject, "deci.feed_forward_length");
    cr_expect(strstr(e.message, "layer 4 attends but has no feed-forward block"), "%s", e.message);
    gguf_close(f);
    free(b.p);
}

/* On a whole file: gguf-verify finds no layer missing where the counts give a layer no tensors (and says the refused
 * shape is not runnable, not broken); --compare cpu,cpu:ggml sees every layer's kind and agrees. */
Test(pruned_layers, verify_and_compare_on_whole_files, .timeout = 120)
{
    char dir[128], path[256], why[200], args[512];
    if (access(venv_python(), X_OK) != 0)
        cr_skip_test("build/venv not found: the held-out files cannot be written");
    cr_assert(tmp_dir_make(dir, "deci"));
    snprintf(path, sizeof path, "%s/heldout-deci.gguf", dir);
    cr_assert(heldout_arch_write("heldout-deci", path, why), "%s", why);
    int st;
    snprintf(args, sizeof args, "'%s' 2>&1", path);
    char *out = run_tool("gguf-verify", args, &st);
    cr_expect_eq(st, 0, "%s", out);
    cr_expect(!strstr(out, "missing-layer"), "%s", out);
    free(out);
    /* at 1e-6 the two numerics part on dozens of ops, the empty layer's output among them: each is re-derived from
     * its side's own inputs (the linear attention as the output product of attn_norm's rows, the empty layer as its
     * input), and none is taken for a fault */
    for (int tight = 0; tight < 2; tight++) {
        snprintf(args, sizeof args, "'%s' -p 'Once upon a time there was' -n 8 --compare cpu,cpu:ggml %s 2>&1", path,
                 tight ? "--tolerance 1e-6" : "");
        out = run_tool("gguf-run", args, &st);
        cr_expect_eq(st, 0, "%s", out);
        cr_expect(strstr(out, "agree within"), "%s", out);
        free(out);
    }
    snprintf(path, sizeof path, "%s/heldout-deci-attn-no-ffn.gguf", dir);
    cr_assert(heldout_arch_write("heldout-deci-attn-no-ffn", path, why), "%s", why);
    snprintf(args, sizeof args, "'%s' 2>&1", path);
    out = run_tool("gguf-verify", args, &st);
    cr_expect(strstr(out, "[not-runnable]") && !strstr(out, "[refused]"), "%s", out);
    free(out);
    cr_assert(tmp_dir_remove(dir));
}
