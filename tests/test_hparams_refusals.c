/*
 * Keys a family's loader requires or refuses (model/hparams.c, model/hparams_check.c): each refusal names its key,
 * and the keys a loader reads only where present leave the model as llama.cpp's defaults do.
 */
#include "gguf.h"
#include "model.h"
#include "hparams_files.h"
#include "testutil.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ERNIE 4.5's loader requires interleave_moe_layer_step and makes experts for every layer past the dense ones, so it
 * runs step 1 only: absent is the file's fault, 2 not run here, each named by its key. */
Test(arch, ernie_s_interleave_step_is_required_and_one)
{
    kv_spec kvs[] = { { "general.architecture", 's', "ernie4_5-moe" }, { "ernie4_5-moe.embedding_length", 'u', "256" },
                      { "ernie4_5-moe.block_count", 'u', "2" },       { "ernie4_5-moe.attention.head_count", 'u', "4" },
                      { "ernie4_5-moe.expert_count", 'u', "8" },      { "ernie4_5-moe.expert_used_count", 'u', "2" },
                      { "ernie4_5-moe.interleave_moe_layer_step", 'u', "2" } };
    static const struct {
        size_t n;
        model_status want;
    } cases[] = { { N(kvs) - 1, MODEL_E_MALFORMED }, { N(kvs), MODEL_E_UNSUPPORTED } };
    for (size_t i = 0; i < N(cases); i++) {
        tbuf b;
        model_hparams hp;
        model_error e;
        gguf_file *f = hparams_file_with(kvs, cases[i].n, &b);
        cr_assert_eq(model_hparams_read(f, &hp, &e), cases[i].want, "%s", e.message);
        cr_assert_str_eq(e.subject, "ernie4_5-moe.interleave_moe_layer_step");
        gguf_close(f);
        free(b.p);
    }
}

/* dots1's loader sizes attn_k and attn_v as attn_q: a file with grouped heads is one llama.cpp refuses, named by key. */
Test(arch, dots1_refuses_grouped_heads)
{
    kv_spec kvs[] = { { "general.architecture", 's', "dots1" }, { "dots1.embedding_length", 'u', "256" },
                      { "dots1.block_count", 'u', "2" },        { "dots1.attention.head_count", 'u', "4" },
                      { "dots1.attention.head_count_kv", 'u', "2" } };
    tbuf b;
    model_hparams hp;
    model_error e;
    gguf_file *f = hparams_file_with(kvs, N(kvs), &b);
    cr_assert_eq(model_hparams_read(f, &hp, &e), MODEL_E_MALFORMED);
    cr_assert_str_eq(e.subject, "dots1.attention.head_count_kv");
    cr_assert(strstr(e.message, "grouped heads"), "%s", e.message);
    gguf_close(f);
    free(b.p);
}

/* attention.clamp_kqv: DBRX's loader requires it (a file without it is refused, named by the key), MPT's and OLMo's
 * read it where present; 0 clamps nothing, as llama.cpp's build_qkv clamps only above 0. DBRX has no dense block, so
 * a file without experts is refused too. */
Test(arch, dbrx_requires_clamp_kqv_and_experts)
{
    kv_spec kvs[] = { { "general.architecture", 's', "dbrx" },         { "dbrx.embedding_length", 'u', "128" },
                      { "dbrx.block_count", 'u', "2" },                 { "dbrx.attention.head_count", 'u', "8" },
                      { "dbrx.attention.head_count_kv", 'u', "2" },     { "dbrx.feed_forward_length", 'u', "96" },
                      { "dbrx.attention.layer_norm_epsilon", 'f', "1e-5" }, { "dbrx.expert_used_count", 'u', "3" },
                      { "dbrx.expert_count", 'u', "8" },               { "dbrx.attention.clamp_kqv", 'f', "8" } };
    const size_t n = N(kvs);
    tbuf b;
    model_hparams hp;
    model_error e;
    gguf_file *f = hparams_file_with(kvs, n, &b);
    model_hparams_read(f, &hp, &e); /* refused for want of blk.0's router: the keys are read all the same */
    cr_expect_str_eq(e.subject, "dbrx.expert_count");
    cr_expect(strstr(e.message, "blk.0.ffn_gate_inp.weight"), "%s", e.message);
    cr_expect_float_eq(hp.clamp_kqv, 8.0f, 0.0f);
    cr_expect_eq(hp.n_ff_exp, 96, "the experts are feed_forward_length wide");
    cr_expect_eq(hp.arch->ffn_norm_from, MODEL_ROLE_ATTN_OUT_NORM);
    cr_expect_eq(model_role_need(&hp, MODEL_ROLE_ATTN_OUT_NORM), MODEL_NEED_REQUIRED);
    cr_expect_eq(model_role_need(&hp, MODEL_ROLE_FFN_NORM), MODEL_NEED_ABSENT);
    gguf_close(f);
    free(b.p);

    f = hparams_file_with(kvs, n - 1, &b); /* no clamp_kqv */
    cr_assert_eq(model_hparams_read(f, &hp, &e), MODEL_E_MALFORMED);
    cr_expect_str_eq(e.subject, "dbrx.attention.clamp_kqv");
    cr_expect(strstr(e.message, "llama.cpp requires it"), "%s", e.message);
    gguf_close(f);
    free(b.p);

    kvs[n - 1].value = "0";
    f = hparams_file_with(kvs, n, &b);
    model_hparams_read(f, &hp, &e);
    cr_expect_str_eq(e.subject, "dbrx.expert_count", "the key is there: only the tensors are missing");
    cr_expect_float_eq(hp.clamp_kqv, 0.0f, 0.0f, "0 clamps nothing");
    gguf_close(f);
    free(b.p);

    kvs[n - 2].value = "0"; /* expert_count 0 */
    kvs[n - 3].value = "0";
    f = hparams_file_with(kvs, n, &b);
    cr_assert_eq(model_hparams_read(f, &hp, &e), MODEL_E_MALFORMED);
    cr_expect_str_eq(e.subject, "dbrx.expert_count");
    cr_expect(strstr(e.message, "no dense feed-forward block"), "%s", e.message);
    gguf_close(f);
    free(b.p);

    kv_spec mpt[] = { { "general.architecture", 's', "mpt" },     { "mpt.embedding_length", 'u', "128" },
                      { "mpt.block_count", 'u', "2" },             { "mpt.attention.head_count", 'u', "8" },
                      { "mpt.feed_forward_length", 'u', "512" },
                      { "mpt.attention.layer_norm_epsilon", 'f', "1e-5" } };
    f = hparams_file_with(mpt, N(mpt), &b);
    cr_assert_eq(model_hparams_read(f, &hp, &e), MODEL_OK, "%s", e.message);
    cr_expect_float_eq(hp.clamp_kqv, 0.0f, 0.0f, "MPT's clamp_kqv is optional");
    gguf_close(f);
    free(b.p);
}

/* Ling 1.x's loader (src/models/bailingmoe.cpp) reads expert_weights_norm, expert_weights_scale and expert_shared_count
 * (shared experts an expert wide each) but no gating function (softmax), and reads leading_dense_block_count without
 * using it: every layer has experts, so a file that sets it is routed as one that does not. */
Test(arch, bailingmoe_reads_its_routing_keys_and_not_the_dense_count)
{
    kv_spec kvs[] = { { "general.architecture", 's', "bailingmoe" },
                      { "bailingmoe.embedding_length", 'u', "256" },
                      { "bailingmoe.block_count", 'u', "3" },
                      { "bailingmoe.attention.head_count", 'u', "4" },
                      { "bailingmoe.feed_forward_length", 'u', "384" },
                      { "bailingmoe.expert_count", 'u', "8" },
                      { "bailingmoe.expert_used_count", 'u', "2" },
                      { "bailingmoe.expert_feed_forward_length", 'u', "64" },
                      { "bailingmoe.expert_shared_count", 'u', "2" },
                      { "bailingmoe.expert_weights_norm", 'B', "1" },
                      { "bailingmoe.expert_weights_scale", 'f', "1.5" },
                      { "bailingmoe.expert_gating_func", 'u', "2" },
                      { "bailingmoe.leading_dense_block_count", 'u', "1" } };
    tbuf b;
    model_hparams hp;
    model_error e;
    gguf_file *f = hparams_file_with(kvs, N(kvs), &b);
    model_hparams_read(f, &hp, &e); /* refused for want of expert tensors: the keys are read all the same */
    cr_expect_str_eq(e.subject, "bailingmoe.expert_count");
    cr_expect(strstr(e.message, "blk.0.ffn_gate_inp.weight"), "the first layer has experts: %s", e.message);
    cr_expect_eq(hp.n_layer_dense_lead, 0, "leading_dense_block_count is not used");
    cr_expect_eq(model_role_need_at(&hp, MODEL_ROLE_FFN_GATE_EXPS, 0), MODEL_NEED_REQUIRED);
    cr_expect_eq(model_role_need_at(&hp, MODEL_ROLE_FFN_GATE, 0), MODEL_NEED_ABSENT);
    cr_expect_eq(hp.moe_gating, MODEL_MOE_SOFTMAX, "expert_gating_func is not its loader's key");
    cr_expect(hp.moe_renormalise);
    cr_expect_float_eq(hp.moe_scale, 1.5f, 0.0f);
    cr_expect_eq(hp.n_ff_shexp, 128, "two shared experts of 64");
    gguf_close(f);
    free(b.p);
}

/* Apertus's xIELU parameters as its loader reads them (get_key_or_arr, required): the keys have no architecture's
 * prefix (xielu.alpha_n ...), each one float for every layer or an array of one per layer (model_hparams_layer gives
 * each its own); a missing one, an array of another length or of other than floats is refused, named by its key. */
Test(arch, apertus_reads_xielu_parameters_per_layer_or_for_all)
{
    kv_spec kvs[] = { { "general.architecture", 's', "apertus" },
                      { "apertus.embedding_length", 'u', "128" },
                      { "apertus.block_count", 'u', "3" },
                      { "apertus.attention.head_count", 'u', "8" },
                      { "apertus.feed_forward_length", 'u', "384" },
                      { "apertus.attention.layer_norm_rms_epsilon", 'f', "1e-5" },
                      { "xielu.alpha_p", 'f', "0.75" },
                      { "xielu.beta", 'f', "0.5" },
                      { "xielu.eps", 'f', "-1e-6" },
                      { "xielu.alpha_n", 'F', "0.25,0.5,1.5" } };
    tbuf b;
    model_hparams hp, l2;
    model_error e;
    gguf_file *f = hparams_file_with(kvs, N(kvs), &b);
    cr_assert_eq(model_hparams_read(f, &hp, &e), MODEL_OK, "%s", e.message);
    cr_expect_float_eq(hp.xielu[1], 0.75f, 0.0f);
    cr_expect_float_eq(hp.xielu[2], 0.5f, 0.0f);
    cr_expect_float_eq(hp.xielu[3], -1e-6f, 0.0f);
    cr_expect_not_null(hp.xielu_layers[0]);
    cr_expect_null(hp.xielu_layers[1]);
    model_hparams_layer(&hp, 2, &l2);
    cr_expect_float_eq(l2.xielu[0], 1.5f, 0.0f, "layer 2's alpha_n is the array's third");
    cr_expect_float_eq(l2.xielu[1], 0.75f, 0.0f, "one value is every layer's");
    gguf_close(f);
    free(b.p);

    static const struct {
        const char *key;
        char kind;
        const char *value;
    } bad[] = { { "xielu.alpha_n", 'F', "0.25,0.5" }, { "xielu.alpha_n", 'i', "1,2,3" }, { "xielu.alpha_n", 'u', "1" } };
    for (size_t i = 0; i < N(bad); i++) {
        kvs[N(kvs) - 1] = (kv_spec){ bad[i].key, bad[i].kind, bad[i].value };
        f = hparams_file_with(kvs, N(kvs), &b);
        cr_expect_eq(model_hparams_read(f, &hp, &e), MODEL_E_MALFORMED, "%s %s", bad[i].key, bad[i].value);
        cr_expect_str_eq(e.subject, "xielu.alpha_n");
        gguf_close(f);
        free(b.p);
    }
    f = hparams_file_with(kvs, N(kvs) - 1, &b); /* no alpha_n */
    cr_expect_eq(model_hparams_read(f, &hp, &e), MODEL_E_MALFORMED);
    cr_expect_str_eq(e.subject, "xielu.alpha_n");
    cr_expect(strstr(e.message, "llama.cpp requires it"), "%s", e.message);
    gguf_close(f);
    free(b.p);
}

/* K-EXAONE's loader (llama.cpp's exaone-moe) requires attention.sliding_window and expert_gating_func, each refusal
 * named by its key; it makes one shared expert expert_shared_feed_forward_length wide whatever expert_shared_count
 * says (the converter writes the width of num_shared_experts experts and their count), an expert's width where the
 * file has no such key. */
Test(arch, exaone_moe_requires_its_window_and_gating_and_has_one_shared_expert)
{
    kv_spec kvs[] = { { "general.architecture", 's', "exaone-moe" },
                      { "exaone-moe.embedding_length", 'u', "128" },
                      { "exaone-moe.block_count", 'u', "4" },
                      { "exaone-moe.attention.head_count", 'u', "4" },
                      { "exaone-moe.feed_forward_length", 'u', "256" },
                      { "exaone-moe.expert_count", 'u', "6" },
                      { "exaone-moe.expert_used_count", 'u', "2" },
                      { "exaone-moe.expert_feed_forward_length", 'u', "48" },
                      { "exaone-moe.expert_shared_count", 'u', "2" },
                      { "exaone-moe.expert_gating_func", 'u', "2" },
                      { "exaone-moe.attention.sliding_window", 'u', "4" },
                      { "exaone-moe.expert_shared_feed_forward_length", 'u', "96" } };
    static const struct {
        size_t drop; /* the index of the key left out (N: none) */
        const char *subject;
        int64_t shared_width;
    } cases[] = { { N(kvs), NULL, 96 },
                  { N(kvs) - 1, NULL, 48 },
                  { N(kvs) - 2, "exaone-moe.attention.sliding_window", 0 },
                  { N(kvs) - 3, "exaone-moe.expert_gating_func", 0 } };
    for (size_t i = 0; i < N(cases); i++) {
        kv_spec some[N(kvs)];
        size_t n = 0;
        for (size_t k = 0; k < N(kvs); k++)
            if (k != cases[i].drop)
                some[n++] = kvs[k];
        tbuf b;
        model_hparams hp;
        model_error e;
        gguf_file *f = hparams_file_with(some, n, &b);
        const model_status st = model_hparams_read(f, &hp, &e);
        if (cases[i].subject) {
            cr_expect_eq(st, MODEL_E_MALFORMED, "without %s: %s", cases[i].subject, e.message);
            cr_expect_str_eq(e.subject, cases[i].subject);
        } else {
            /* (the file has no tensors: the keys are read, then the first layer's router is missed) */
            cr_expect_eq(hp.n_ff_shexp, cases[i].shared_width, "one shared expert of the key's width, or an expert's");
            cr_expect_eq(hp.swa_window, 4);
            cr_expect(model_hparams_layer_rotates(&hp, 0) && !model_hparams_layer_rotates(&hp, 3),
                      "the sliding-window layers alone rotate");
        }
        gguf_close(f);
        free(b.p);
    }
}

/* Trinity's and K-EXAONE's loaders (llama.cpp's afmoe, exaone-moe) read expert_feed_forward_length as one width or one
 * per layer (get_key_or_arr: as many as block_count) and size every layer's experts by layer 0's; afmoe's requires
 * expert_shared_count, named when absent. */
Test(arch, afmoe_and_exaone_moe_take_layer_0s_expert_width_and_afmoe_requires_its_shared_count)
{
    static const struct {
        const char *arch, *ff_exp; /* 'u' one width, 'i' a list */
        char kind;
        bool drop_shared;
        const char *subject; /* the refusal's key, or NULL: read, experts ff_exp_0 wide */
        int64_t ff_exp_0;
    } cases[] = {
        { "afmoe", "40", 'u', false, NULL, 40 },
        { "afmoe", "48,32,32,32", 'i', false, NULL, 48 },
        { "afmoe", "48,32,32", 'i', false, "afmoe.expert_feed_forward_length", 0 }, /* 3 of 4 layers */
        { "afmoe", "40", 'u', true, "afmoe.expert_shared_count", 0 },
        { "exaone-moe", "56,24,24,24", 'i', false, NULL, 56 },
        { "exaone-moe", "40", 'u', true, NULL, 40 }, /* exaone-moe's loader: optional */
    };
    for (size_t i = 0; i < N(cases); i++) {
        char key[8][96];
        const char *a = cases[i].arch;
        const char *suffix[] = { "embedding_length", "block_count", "attention.head_count", "feed_forward_length",
                                 "expert_count", "expert_used_count", "expert_feed_forward_length",
                                 "expert_shared_count" };
        for (size_t k = 0; k < 8; k++)
            snprintf(key[k], sizeof key[k], "%s.%s", a, suffix[k]);
        kv_spec kvs[] = { { "general.architecture", 's', a }, { key[0], 'u', "128" }, { key[1], 'u', "4" },
                          { key[2], 'u', "4" }, { key[3], 'u', "256" }, { key[4], 'u', "6" }, { key[5], 'u', "2" },
                          { key[6], cases[i].kind, cases[i].ff_exp }, { "exaone-moe.expert_gating_func", 'u', "2" },
                          { "exaone-moe.attention.sliding_window", 'u', "4" }, { key[7], 'u', "1" } };
        const size_t n = N(kvs) - (cases[i].drop_shared ? 1 : 0);
        tbuf b;
        model_hparams hp;
        model_error e;
        gguf_file *f = hparams_file_with(kvs, n, &b);
        const model_status st = model_hparams_read(f, &hp, &e);
        if (cases[i].subject) {
            cr_expect_neq(st, MODEL_OK, "%s %s", a, cases[i].ff_exp);
            cr_expect_str_eq(e.subject, cases[i].subject, "%s %s: %s", a, cases[i].ff_exp, e.message);
        } else {
            /* (the file has no tensors: the keys are read, then the first layer's router is missed) */
            cr_expect_eq(hp.n_ff_exp, cases[i].ff_exp_0, "%s %s: %s", a, cases[i].ff_exp, e.message);
        }
        gguf_close(f);
        free(b.p);
    }
}

/* Grok's loader: its multipliers each from its key or Grok-1's own (embeddings 78.38, logits 0.577, the scores 0.0884
 * inside a soft-cap of 30: the factor the attention multiplies by inside the tanh, q.k otherwise unscaled), YaRN's
 * beta_fast 8 and its ext/attn factor keys (the attn factor standing where the ext factor is 0); refused, each named
 * by its key: a cap of 0 (its graph divides by it), an output scale that is not a number, an ext factor that is not
 * finite, a magnitude that is not finite and positive where it stands. OpenELM's head counts by layer: a 0 among
 * them is refused (DeciLM's lists alone mark a layer without attention so). */
Test(arch, grok_reads_its_multipliers_and_refuses_what_its_graph_cannot_run)
{
    kv_spec kvs[] = { { "general.architecture", 's', "grok" },        { "grok.embedding_length", 'u', "128" },
                      { "grok.block_count", 'u', "2" },                { "grok.attention.head_count", 'u', "4" },
                      { "grok.feed_forward_length", 'u', "256" },      { "grok.rope.scaling.type", 's', "yarn" },
                      { "grok.rope.scaling.factor", 'f', "4" },        { "grok.attn_logit_softcapping", 'f', "30" },
                      { "grok.attention.output_scale", 'f', "0.125" },
                      { "grok.rope.scaling.yarn_ext_factor", 'f', "1" },
                      { "grok.rope.scaling.yarn_attn_factor", 'f', "2" } };
    const size_t n = N(kvs);
    tbuf b;
    model_hparams hp;
    model_error e;
    gguf_file *f = hparams_file_with(kvs, 5, &b); /* Grok-1's defaults */
    model_hparams_read(f, &hp, &e);
    cr_expect_float_eq(hp.embd_scale, 78.38367176906169f, 0.0f);
    cr_expect_float_eq(hp.logit_scale, 0.5773502691896257f, 0.0f);
    cr_expect_float_eq(hp.attn_scale, 1.0f, 0.0f, "q.k unscaled before the cap");
    cr_expect_float_eq(hp.attn_softcap, 30.0f, 0.0f);
    cr_expect_float_eq(hp.attn_softcap_in, 0.08838834764831845f / 30.0f, 0.0f);
    cr_expect_float_eq(hp.yarn_beta_fast, 8.0f, 0.0f);
    gguf_close(f);
    free(b.p);
    f = hparams_file_with(kvs, n, &b); /* the file's own, the ext factor 1: the magnitude is YaRN's */
    model_hparams_read(f, &hp, &e);
    cr_expect_float_eq(hp.attn_softcap_in, 0.125f / 30.0f, 0.0f);
    cr_expect_float_eq(hp.yarn_ext_factor, 1.0f, 0.0f);
    cr_expect_float_eq(hp.yarn_attn_factor, 1.0f / (1.0f + 0.1f * logf(4.0f)) * (0.1f * logf(4.0f) + 1.0f), 0.0f);
    gguf_close(f);
    free(b.p);
    kvs[n - 2].value = "0"; /* ext factor 0: the loader's magnitude stands */
    f = hparams_file_with(kvs, n, &b);
    model_hparams_read(f, &hp, &e);
    cr_expect_float_eq(hp.yarn_ext_factor, 0.0f, 0.0f);
    cr_expect_float_eq(hp.yarn_attn_factor, 2.0f, 0.0f);
    gguf_close(f);
    free(b.p);
    hparams_refused_naming(kvs, n, n - 1, "inf", "grok.rope.scaling.yarn_attn_factor");
    kvs[n - 2].value = "1";
    hparams_refused_naming(kvs, n, n - 2, "nan", "grok.rope.scaling.yarn_ext_factor");
    hparams_refused_naming(kvs, n, n - 4, "0", "grok.attn_logit_softcapping");
    hparams_refused_naming(kvs, n, n - 3, "nan", "grok.attention.output_scale");

    kv_spec elm[] = { { "general.architecture", 's', "openelm" },     { "openelm.embedding_length", 'u', "128" },
                      { "openelm.block_count", 'u', "3" },             { "openelm.attention.key_length", 'u', "32" },
                      { "openelm.attention.value_length", 'u', "32" },
                      { "openelm.attention.head_count_kv", 'i', "1,1,1" },
                      { "openelm.attention.head_count", 'i', "2,3,4" } };
    f = hparams_file_with(elm, N(elm), &b);
    model_hparams_read(f, &hp, &e);
    model_hparams l;
    model_hparams_layer(&hp, 1, &l);
    cr_expect_eq(l.n_head, 3, "layer 1's own count");
    cr_expect_eq(hp.n_head, 4, "the widest, for the buffers");
    gguf_close(f);
    free(b.p);
    hparams_refused_naming(elm, N(elm), N(elm) - 1, "2,0,4", "openelm.attention.head_count");
}
