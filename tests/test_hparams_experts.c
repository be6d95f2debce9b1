/*
 * The hyperparameter reader on experts: their widths and counts as llama.cpp's loaders default them, each family's
 * routing keys read where its loader reads them (and no others), and the groups of experts DeepSeek-V3 chooses within;
 * refusals that name the key.
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


/* Experts' widths as llama.cpp's loaders default them: expert_feed_forward_length, else feed_forward_length /
 * expert_used_count (qwen2moe, qwen3moe) or feed_forward_length itself (Mixtral's llama); the shared expert's
 * expert_shared_feed_forward_length, else feed_forward_length. An architecture that is only ever a mixture of
 * experts without expert_count is refused naming the key. */
Test(arch, expert_widths_and_counts)
{
    kv_spec kvs[] = { { "general.architecture", 's', "qwen3moe" }, { "qwen3moe.embedding_length", 'u', "256" },
                      { "qwen3moe.block_count", 'u', "2" },            { "qwen3moe.attention.head_count", 'u', "4" },
                      { "qwen3moe.feed_forward_length", 'u', "512" },  { "qwen3moe.expert_count", 'u', "8" },
                      { "qwen3moe.expert_used_count", 'u', "2" },      { "qwen3moe.expert_feed_forward_length", 'u', "96" } };
    tbuf b;
    model_hparams hp;
    model_error e;
    gguf_file *f = hparams_file_with(kvs, N(kvs) - 1, &b);
    model_hparams_read(f, &hp, &e); /* refused for want of expert tensors: the widths are read all the same */
    cr_assert_str_eq(e.subject, "qwen3moe.expert_count");
    cr_assert(strstr(e.message, "no expert tensors"), "%s", e.message);
    cr_assert_eq(hp.n_ff_exp, 256, "feed_forward_length / expert_used_count");
    cr_assert_eq(model_hparams_dim(&hp, MODEL_DIM_EXPERT), 8);
    gguf_close(f);
    free(b.p);

    f = hparams_file_with(kvs, N(kvs), &b);
    model_hparams_read(f, &hp, &e);
    cr_assert_eq(hp.n_ff_exp, 96, "the key when present");
    cr_assert_eq(model_hparams_dim(&hp, MODEL_DIM_FF_EXP), 96);
    gguf_close(f);
    free(b.p);

    f = hparams_file_with(kvs, 5, &b); /* no expert_count */
    cr_assert_eq(model_hparams_read(f, &hp, &e), MODEL_E_MALFORMED);
    cr_assert_str_eq(e.subject, "qwen3moe.expert_count");
    cr_assert(strstr(e.message, "needs key"), "%s", e.message);
    gguf_close(f);
    free(b.p);

    kv_spec mixtral[] = { { "general.architecture", 's', "llama" },   { "llama.embedding_length", 'u', "256" },
                          { "llama.block_count", 'u', "2" },           { "llama.attention.head_count", 'u', "4" },
                          { "llama.feed_forward_length", 'u', "384" }, { "llama.expert_count", 'u', "4" },
                          { "llama.expert_used_count", 'u', "2" } };
    f = hparams_file_with(mixtral, N(mixtral), &b);
    model_hparams_read(f, &hp, &e);
    cr_assert_eq(hp.n_ff_exp, 384, "Mixtral's experts are feed_forward_length wide");
    gguf_close(f);
    free(b.p);
}

/* glm4moe reads its routing from the file as llama.cpp's loader does (src/models/glm4-moe.cpp): expert_gating_func
 * (sigmoid when absent or 0), expert_weights_norm, expert_weights_scale, expert_shared_count shared experts of
 * expert_feed_forward_length, leading_dense_block_count dense layers first, nextn_predict_layers blocks not run;
 * the gating functions llama.cpp knows and we do not run are refused by name, those it does not know as malformed. */
Test(arch, glm4moe_routing_keys)
{
    kv_spec kvs[] = { { "general.architecture", 's', "glm4moe" },       { "glm4moe.embedding_length", 'u', "256" },
                      { "glm4moe.block_count", 'u', "5" },              { "glm4moe.attention.head_count", 'u', "4" },
                      { "glm4moe.feed_forward_length", 'u', "384" },    { "glm4moe.expert_count", 'u', "8" },
                      { "glm4moe.expert_used_count", 'u', "3" },        { "glm4moe.expert_feed_forward_length", 'u', "96" },
                      { "glm4moe.expert_shared_count", 'u', "2" },      { "glm4moe.leading_dense_block_count", 'u', "1" },
                      { "glm4moe.nextn_predict_layers", 'u', "1" },     { "glm4moe.expert_weights_scale", 'f', "2.5" },
                      { "glm4moe.expert_weights_norm", 'B', "1" },      { "glm4moe.expert_gating_func", 'u', "2" } };
    tbuf b;
    model_hparams hp;
    model_error e;
    gguf_file *f = hparams_file_with(kvs, N(kvs), &b);
    model_hparams_read(f, &hp, &e); /* refused for want of blk.1's router: the keys are read all the same */
    cr_assert_str_eq(e.subject, "glm4moe.expert_count");
    cr_assert(strstr(e.message, "blk.1.ffn_gate_inp.weight"), "the first layer with experts: %s", e.message);
    cr_assert_eq(hp.moe_gating, MODEL_MOE_SIGMOID);
    cr_assert(hp.moe_renormalise);
    cr_assert_float_eq(hp.moe_scale, 2.5f, 0.0f);
    cr_assert_eq(hp.n_ff_shexp, 192, "two shared experts of 96");
    cr_assert_eq(hp.n_layer_dense_lead, 1);
    cr_assert_eq(hp.n_layer_nextn, 1);
    /* the leading dense layer needs the dense block, the rest (and the file as a whole) the experts */
    cr_assert_eq(model_role_need_at(&hp, MODEL_ROLE_FFN_GATE, 0), MODEL_NEED_REQUIRED);
    cr_assert_eq(model_role_need_at(&hp, MODEL_ROLE_FFN_GATE_INP, 0), MODEL_NEED_ABSENT);
    cr_assert_eq(model_role_need_at(&hp, MODEL_ROLE_FFN_GATE, 1), MODEL_NEED_ABSENT);
    cr_assert_eq(model_role_need_at(&hp, MODEL_ROLE_FFN_EXP_PROBS_B, 1), MODEL_NEED_REQUIRED);
    cr_assert_eq(model_role_need(&hp, MODEL_ROLE_FFN_GATE_EXPS), MODEL_NEED_REQUIRED);
    gguf_close(f);
    free(b.p);

    f = hparams_file_with(kvs, N(kvs) - 3, &b); /* no scale, no norm, no gating function: sigmoid, as is, unscaled */
    model_hparams_read(f, &hp, &e);
    cr_assert_eq(hp.moe_gating, MODEL_MOE_SIGMOID);
    cr_assert_not(hp.moe_renormalise);
    cr_assert_float_eq(hp.moe_scale, 1.0f, 0.0f);
    gguf_close(f);
    free(b.p);

    static const struct {
        const char *func;
        model_status want;
    } refused[] = { { "4", MODEL_E_UNSUPPORTED }, { "9", MODEL_E_MALFORMED } };
    for (size_t i = 0; i < N(refused); i++) {
        kvs[N(kvs) - 1].value = refused[i].func;
        f = hparams_file_with(kvs, N(kvs), &b);
        cr_assert_eq(model_hparams_read(f, &hp, &e), refused[i].want, "expert_gating_func %s", refused[i].func);
        cr_assert_str_eq(e.subject, "glm4moe.expert_gating_func");
        gguf_close(f);
        free(b.p);
    }
}

/* Each family reads the routing keys its llama.cpp loader reads, no others: MiniMax-M2's graph always renormalises
 * (norm_w true in src/models/minimax-m2.cpp) and its loader reads no expert_weights_norm or expert_weights_scale, so
 * a file that sets them routes as one that does not; OLMoE's reads no gating function. */
Test(arch, each_family_reads_only_its_loader_s_routing_keys)
{
    static const struct {
        const char *arch;
        model_moe_gating gating;
        bool renormalise;
    } want[] = { { "minimax-m2", MODEL_MOE_SIGMOID, true }, { "olmoe", MODEL_MOE_SOFTMAX, false } };
    for (size_t i = 0; i < N(want); i++) {
        char k[6][64];
        const char *const suffix[6] = { "embedding_length", "block_count", "attention.head_count", "expert_count",
                                        "expert_used_count", "expert_weights_norm" };
        for (int j = 0; j < 6; j++)
            snprintf(k[j], sizeof k[j], "%s.%s", want[i].arch, suffix[j]);
        char scale[64], gating[64];
        snprintf(scale, sizeof scale, "%s.expert_weights_scale", want[i].arch);
        snprintf(gating, sizeof gating, "%s.expert_gating_func", want[i].arch);
        kv_spec kvs[] = { { "general.architecture", 's', want[i].arch }, { k[0], 'u', "256" }, { k[1], 'u', "2" },
                          { k[2], 'u', "4" }, { k[3], 'u', "8" }, { k[4], 'u', "2" }, { k[5], 'B', want[i].renormalise ? "0" : "1" },
                          { scale, 'f', "2.5" }, { gating, 'u', want[i].gating == MODEL_MOE_SIGMOID ? "2" : "3" } };
        tbuf b;
        model_hparams hp;
        model_error e;
        gguf_file *f = hparams_file_with(kvs, N(kvs), &b);
        model_hparams_read(f, &hp, &e); /* refused for want of expert tensors: the keys are read all the same */
        cr_assert_eq(hp.moe_gating, want[i].gating, "%s", want[i].arch);
        cr_assert_eq(hp.moe_renormalise, want[i].renormalise, "%s", want[i].arch);
        cr_assert_float_eq(hp.moe_scale, 1.0f, 0.0f, "%s: expert_weights_scale is not its loader's key", want[i].arch);
        gguf_close(f);
        free(b.p);
    }
}

/* Experts chosen within groups (DeepSeek-V3): llama.cpp asserts that the groups cut the experts evenly, that fewer
 * groups than experts are used and at least one; each refusal names its key. */
Test(arch, groups_of_experts_are_checked_as_llama_cpp_asserts)
{
    kv_spec kvs[] = { { "general.architecture", 's', "qwen3moe" }, { "qwen3moe.embedding_length", 'u', "256" },
                      { "qwen3moe.block_count", 'u', "2" },         { "qwen3moe.attention.head_count", 'u', "4" },
                      { "qwen3moe.expert_count", 'u', "8" },        { "qwen3moe.expert_used_count", 'u', "2" },
                      { "qwen3moe.expert_group_count", 'u', "4" },  { "qwen3moe.expert_group_used_count", 'u', "2" } };
    static const struct {
        size_t at;
        const char *value, *subject;
    } bad[] = { { 6, "3", "qwen3moe.expert_group_count" },      { 6, "8", "qwen3moe.expert_group_count" },
                { 7, "0", "qwen3moe.expert_group_used_count" }, { 7, "4", "qwen3moe.expert_group_used_count" } };
    tbuf b;
    model_hparams hp;
    model_error e;
    gguf_file *f = hparams_file_with(kvs, N(kvs), &b);
    model_hparams_read(f, &hp, &e); /* refused for want of expert tensors, after the groups were found sound */
    cr_assert_str_eq(e.subject, "qwen3moe.expert_count", "%s", e.message);
    cr_assert_eq(hp.n_expert_groups, 4);
    cr_assert_eq(hp.n_group_used, 2);
    gguf_close(f);
    free(b.p);
    for (size_t i = 0; i < N(bad); i++)
        hparams_refused_naming(kvs, N(kvs), bad[i].at, bad[i].value, bad[i].subject);
}
