/*
 * What the hyperparameter reader says of a hybrid's layers and their keys: Qwen3.5's and Qwen3-Next's gated delta nets,
 * LFM2's short convolutions, the Mamba-2 and Mamba-1 mixers of Nemotron-H, Falcon-H1, Granite 4.0-H, Jamba and the
 * mixer-only files, and which of their layers carry experts.
 */
#include "gguf.h"
#include "golden.h"
#include "hparams_files.h"
#include "model.h"
#include "testutil.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Qwen3.5 as llama.cpp's qwen35 loader reads it: the ssm.* sizes required; every full_attention_interval-th layer
 * attends (default 4), the others are gated delta nets, or attention.recurrent_layers says which; each layer needs
 * its own kind's roles (both kinds' for the file as a whole), q rows twice as wide for the gates, the convolved
 * channels 2 key heads' + the values; a part of each head rotating by sections. The sizes llama.cpp's reshapes assume
 * (inner = state x value heads, value heads a multiple of key heads) refused naming the key. */
Test(arch, qwen35_keys_are_read_as_its_loader_reads_them)
{
    kv_spec kvs[] = { { "general.architecture", 's', "qwen35" },          { "qwen35.embedding_length", 'u', "256" },
                      { "qwen35.block_count", 'u', "8" },                 { "qwen35.attention.head_count", 'u', "4" },
                      { "qwen35.attention.head_count_kv", 'u', "2" },     { "qwen35.attention.key_length", 'u', "64" },
                      { "qwen35.feed_forward_length", 'u', "512" },       { "qwen35.rope.dimension_count", 'u', "32" },
                      { "qwen35.rope.dimension_sections", 'u', "4" },     { "qwen35.ssm.conv_kernel", 'u', "4" },
                      { "qwen35.ssm.inner_size", 'u', "128" },            { "qwen35.ssm.state_size", 'u', "32" },
                      { "qwen35.ssm.time_step_rank", 'u', "4" },          { "qwen35.ssm.group_count", 'u', "2" } };
    tbuf b;
    model_hparams hp;
    model_error e;
    gguf_file *f = hparams_file_with(kvs, N(kvs), &b);
    cr_assert_eq(model_hparams_read(f, &hp, &e), MODEL_OK, "%s", e.message);
    cr_assert(hp.ssm_d_conv == 4 && hp.ssm_d_inner == 128 && hp.ssm_d_state == 32 && hp.ssm_n_v_heads == 4 &&
              hp.ssm_n_k_heads == 2 && hp.full_attn_interval == 4);
    cr_assert(model_hparams_layer_is_recurrent(&hp, 0) && model_hparams_layer_is_recurrent(&hp, 2) &&
              !model_hparams_layer_is_recurrent(&hp, 3) && model_hparams_layer_is_recurrent(&hp, 4) &&
              !model_hparams_layer_is_recurrent(&hp, 7));
    cr_assert_eq(model_role_need_at(&hp, MODEL_ROLE_ATTN_Q, 0), MODEL_NEED_ABSENT);
    cr_assert_eq(model_role_need_at(&hp, MODEL_ROLE_ATTN_Q, 3), MODEL_NEED_REQUIRED);
    cr_assert_eq(model_role_need_at(&hp, MODEL_ROLE_SSM_CONV1D, 0), MODEL_NEED_REQUIRED);
    cr_assert_eq(model_role_need_at(&hp, MODEL_ROLE_SSM_CONV1D, 3), MODEL_NEED_ABSENT);
    cr_assert_eq(model_role_need_at(&hp, MODEL_ROLE_ATTN_POST_NORM, 0), MODEL_NEED_REQUIRED, "both kinds have it");
    cr_assert_eq(model_role_need(&hp, MODEL_ROLE_ATTN_Q), MODEL_NEED_REQUIRED, "the file as a whole: either kind's");
    cr_assert_eq(model_role_need(&hp, MODEL_ROLE_SSM_OUT), MODEL_NEED_REQUIRED);
    cr_assert_eq(model_hparams_dim(&hp, MODEL_DIM_Q), 2 * 4 * 64, "each head's query and its gate");
    cr_assert_eq(model_hparams_dim(&hp, MODEL_DIM_QKV), 2 * 2 * 32 + 128, "q and k of each key head, then v");
    cr_assert_eq(model_hparams_dim(&hp, MODEL_DIM_SSM_HEADS), 4);
    gguf_close(f);
    free(b.p);

    kv_spec listed[N(kvs) + 1];
    memcpy(listed, kvs, sizeof kvs);
    listed[N(kvs)] = (kv_spec){ "qwen35.attention.recurrent_layers", 'b', "1,1,0,0,1,1,1,0" };
    f = hparams_file_with(listed, N(listed), &b);
    cr_assert_eq(model_hparams_read(f, &hp, &e), MODEL_OK, "%s", e.message);
    cr_assert(model_hparams_layer_is_recurrent(&hp, 1) && !model_hparams_layer_is_recurrent(&hp, 2) &&
              model_hparams_layer_is_recurrent(&hp, 6) && !model_hparams_layer_is_recurrent(&hp, 7), "the file's list");
    gguf_close(f);
    free(b.p);
    hparams_refused_naming(listed, N(listed), N(kvs), "1,0", "qwen35.attention.recurrent_layers");
    listed[N(kvs)] = (kv_spec){ "qwen35.full_attention_interval", 'u', "2" };
    f = hparams_file_with(listed, N(listed), &b);
    cr_assert_eq(model_hparams_read(f, &hp, &e), MODEL_OK, "%s", e.message);
    cr_assert(model_hparams_layer_is_recurrent(&hp, 0) && !model_hparams_layer_is_recurrent(&hp, 1) &&
              model_hparams_layer_is_recurrent(&hp, 6) && !model_hparams_layer_is_recurrent(&hp, 7));
    gguf_close(f);
    free(b.p);

    listed[N(kvs)] = (kv_spec){ "qwen35.nextn_predict_layers", 'u', "1" }; /* 6 layers and a prediction block */
    listed[2].value = "7";
    f = hparams_file_with(listed, N(listed), &b);
    cr_assert_eq(model_hparams_read(f, &hp, &e), MODEL_OK, "%s", e.message);
    cr_assert(model_hparams_layer_is_recurrent(&hp, 5) && !model_hparams_layer_is_recurrent(&hp, 6),
              "the prediction block attends, as llama.cpp's loader flags it");
    gguf_close(f);
    free(b.p);

    hparams_refused_naming(kvs, N(kvs), 10, "100", "qwen35.ssm.inner_size");
    hparams_refused_naming(kvs, N(kvs), 13, "3", "qwen35.ssm.group_count");
    f = hparams_file_with(kvs, N(kvs) - 1, &b); /* no ssm.group_count */
    cr_assert_eq(model_hparams_read(f, &hp, &e), MODEL_E_MALFORMED);
    cr_assert_str_eq(e.subject, "qwen35.ssm.group_count");
    gguf_close(f);
    free(b.p);
}

/* Qwen3-Next as llama.cpp's qwen3next loader reads it: Qwen3.5's delta net keys, no rotary sections (NEOX), a key head's
 * value heads next to each other; beta and alpha in one ssm_ba (required), q, k, v and z from attn_qkv and attn_gate
 * or from one ssm_in (each optional: the engine asks for one form or the other); experts always ("cannot have zero
 * experts"). */
Test(arch, qwen3next_keys_are_read_as_its_loader_reads_them)
{
    kv_spec kvs[] = { { "general.architecture", 's', "qwen3next" },       { "qwen3next.embedding_length", 'u', "256" },
                      { "qwen3next.block_count", 'u', "4" },              { "qwen3next.attention.head_count", 'u', "4" },
                      { "qwen3next.attention.key_length", 'u', "64" },    { "qwen3next.feed_forward_length", 'u', "512" },
                      { "qwen3next.rope.dimension_count", 'u', "16" },    { "qwen3next.ssm.conv_kernel", 'u', "4" },
                      { "qwen3next.ssm.inner_size", 'u', "192" },         { "qwen3next.ssm.state_size", 'u', "32" },
                      { "qwen3next.ssm.time_step_rank", 'u', "6" },       { "qwen3next.ssm.group_count", 'u', "2" },
                      { "qwen3next.expert_used_count", 'u', "2" },        { "qwen3next.expert_count", 'u', "8" } };
    tbuf b;
    model_hparams hp;
    model_error e;
    gguf_file *f = hparams_file_with(kvs, N(kvs), &b);
    model_hparams_read(f, &hp, &e); /* a header without tensors: the keys are read all the same */
    cr_assert_eq(hp.mrope, MODEL_MROPE_NONE, "no sections: NEOX");
    cr_assert(hp.arch->dn_heads_grouped && !model_role_need_at(&hp, MODEL_ROLE_SSM_BETA, 0));
    cr_assert_eq(model_role_need_at(&hp, MODEL_ROLE_SSM_BA, 0), MODEL_NEED_REQUIRED);
    cr_assert_eq(model_role_need_at(&hp, MODEL_ROLE_SSM_IN, 0), MODEL_NEED_OPTIONAL);
    cr_assert_eq(model_role_need_at(&hp, MODEL_ROLE_ATTN_QKV, 0), MODEL_NEED_OPTIONAL);
    cr_assert_eq(model_role_need_at(&hp, MODEL_ROLE_SSM_IN, 3), MODEL_NEED_ABSENT, "layer 3 attends");
    cr_assert_eq(model_hparams_dim(&hp, MODEL_DIM_SSM_QKVZ), 2 * 2 * 32 + 2 * 192);
    cr_assert_eq(model_hparams_dim(&hp, MODEL_DIM_SSM_BA), 12);
    gguf_close(f);
    free(b.p);
    f = hparams_file_with(kvs, N(kvs) - 2, &b); /* no experts */
    cr_assert_eq(model_hparams_read(f, &hp, &e), MODEL_E_MALFORMED);
    cr_assert_str_eq(e.subject, "qwen3next.expert_count");
    gguf_close(f);
    free(b.p);
}

/* LFM2 as llama.cpp's lfm2 loader reads it: attention.head_count_kv one count per layer, 0 marking a short convolution
 * (its roles in place of the attention's), the attention layers' count the engine's; shortconv.l_cache required; a
 * list of the wrong length or with two different counts refused naming the key; a window refused as not run yet. */
Test(arch, lfm2_keys_are_read_as_its_loader_reads_them)
{
    kv_spec kvs[] = { { "general.architecture", 's', "lfm2" },      { "lfm2.embedding_length", 'u', "256" },
                      { "lfm2.block_count", 'u', "4" },             { "lfm2.attention.head_count", 'u', "4" },
                      { "lfm2.feed_forward_length", 'u', "512" },   { "lfm2.shortconv.l_cache", 'u', "3" },
                      { "lfm2.attention.head_count_kv", 'i', "0,0,2,0" } };
    tbuf b;
    model_hparams hp;
    model_error e;
    gguf_file *f = hparams_file_with(kvs, N(kvs), &b);
    cr_assert_eq(model_hparams_read(f, &hp, &e), MODEL_OK, "%s", e.message);
    cr_assert_eq(hp.n_head_kv, 2);
    cr_assert_eq(hp.shortconv_l_cache, 3);
    cr_assert(model_hparams_layer_is_recurrent(&hp, 0) && !model_hparams_layer_is_recurrent(&hp, 2) &&
              model_hparams_layer_is_recurrent(&hp, 3));
    cr_assert_eq(model_role_need_at(&hp, MODEL_ROLE_SHORTCONV_CONV, 0), MODEL_NEED_REQUIRED);
    cr_assert_eq(model_role_need_at(&hp, MODEL_ROLE_ATTN_Q, 0), MODEL_NEED_ABSENT);
    cr_assert_eq(model_role_need_at(&hp, MODEL_ROLE_ATTN_K_NORM, 2), MODEL_NEED_REQUIRED);
    cr_assert_eq(model_role_need(&hp, MODEL_ROLE_TOKEN_EMBD_NORM), MODEL_NEED_REQUIRED, "the final norm's name");
    cr_assert_eq(model_role_need(&hp, MODEL_ROLE_OUTPUT_NORM), MODEL_NEED_ABSENT);
    cr_assert_eq(model_hparams_dim(&hp, MODEL_DIM_EMBD3), 768);
    gguf_close(f);
    free(b.p);
    hparams_refused_naming(kvs, N(kvs), 6, "0,0,2", "lfm2.attention.head_count_kv");
    hparams_refused_naming(kvs, N(kvs), 6, "0,4,2,0", "lfm2.attention.head_count_kv");
    f = hparams_file_with(kvs, N(kvs) - 2, &b); /* no l_cache, no list */
    cr_assert_eq(model_hparams_read(f, &hp, &e), MODEL_E_MALFORMED);
    cr_assert_str_eq(e.subject, "lfm2.shortconv.l_cache");
    gguf_close(f);
    free(b.p);
    kv_spec swa[N(kvs) + 1];
    memcpy(swa, kvs, sizeof kvs);
    swa[N(kvs)] = (kv_spec){ "lfm2.attention.sliding_window", 'u', "512" };
    f = hparams_file_with(swa, N(swa), &b);
    cr_assert_eq(model_hparams_read(f, &hp, &e), MODEL_E_UNSUPPORTED);
    cr_assert_str_eq(e.subject, "lfm2.attention.sliding_window");
    gguf_close(f);
    free(b.p);
}

/* Nemotron-H as llama.cpp's nemotron_h loader reads it: a layer whose attention.head_count_kv and feed_forward_length
 * entries are both 0 a Mamba-2 mixer (its ssm_* roles), one with key/value heads attention, one with a width a
 * feed-forward block without a gate (ffn_up and ffn_down under its attn_norm, nothing of attention); the Mamba-2 roles'
 * shapes from the ssm.* keys (ssm_a and ssm_d one per head as (1, heads), the norm's gains one row per group, the
 * convolution over x, B and C); the epsilon from attention.layer_norm_epsilon where the RMS key is absent. Sizes that
 * do not divide (llama.cpp's asserts) refused naming the key. */
Test(arch, nemotron_h_layers_are_read_as_its_loader_reads_them)
{
    kv_spec kvs[] = { { "general.architecture", 's', "nemotron_h" },
                      { "nemotron_h.embedding_length", 'u', "128" },
                      { "nemotron_h.block_count", 'u', "4" },
                      { "nemotron_h.attention.head_count", 'u', "4" },
                      { "nemotron_h.attention.head_count_kv", 'i', "0,0,2,0" },
                      { "nemotron_h.feed_forward_length", 'i', "0,256,0,0" },
                      { "nemotron_h.ssm.conv_kernel", 'u', "4" },
                      { "nemotron_h.ssm.inner_size", 'u', "128" },
                      { "nemotron_h.ssm.state_size", 'u', "16" },
                      { "nemotron_h.ssm.time_step_rank", 'u', "8" },
                      { "nemotron_h.ssm.group_count", 'u', "2" },
                      { "nemotron_h.attention.layer_norm_epsilon", 'f', "0.00001" } };
    tbuf b;
    model_hparams hp;
    model_error e;
    gguf_file *f = hparams_file_with(kvs, N(kvs), &b);
    cr_assert_eq(model_hparams_read(f, &hp, &e), MODEL_OK, "%s", e.message);
    cr_assert(!hp.eps_defaulted && fabsf(hp.eps - 1e-5f) < 1e-12f, "the LayerNorm key's epsilon");
    cr_assert(model_hparams_layer_is_recurrent(&hp, 0) && !model_hparams_layer_is_recurrent(&hp, 1) &&
              !model_hparams_layer_is_recurrent(&hp, 2) && model_hparams_layer_is_recurrent(&hp, 3));
    cr_assert(model_hparams_layer_is_ffn_only(&hp, 1) && !model_hparams_layer_is_ffn_only(&hp, 2));
    static const struct {
        model_role r;
        int layer;
        model_need need;
    } needs[] = { { MODEL_ROLE_SSM_IN, 0, MODEL_NEED_REQUIRED },   { MODEL_ROLE_SSM_D, 3, MODEL_NEED_REQUIRED },
                  { MODEL_ROLE_SSM_CONV1D_BIAS, 0, MODEL_NEED_REQUIRED }, { MODEL_ROLE_FFN_UP, 0, MODEL_NEED_ABSENT },
                  { MODEL_ROLE_FFN_UP, 1, MODEL_NEED_REQUIRED },   { MODEL_ROLE_FFN_GATE, 1, MODEL_NEED_ABSENT },
                  { MODEL_ROLE_ATTN_NORM, 1, MODEL_NEED_REQUIRED }, { MODEL_ROLE_ATTN_Q, 1, MODEL_NEED_ABSENT },
                  { MODEL_ROLE_FFN_NORM, 1, MODEL_NEED_ABSENT },   { MODEL_ROLE_ATTN_Q, 2, MODEL_NEED_REQUIRED },
                  { MODEL_ROLE_FFN_DOWN, 2, MODEL_NEED_ABSENT },   { MODEL_ROLE_SSM_IN, 2, MODEL_NEED_ABSENT } };
    for (size_t i = 0; i < N(needs); i++)
        cr_expect_eq(model_role_need_at(&hp, needs[i].r, needs[i].layer), needs[i].need, "%s in layer %d",
                     model_role_info_of(needs[i].r)->name, needs[i].layer);
    static const struct {
        model_role r;
        int64_t ne0, ne1;
    } shapes[] = { { MODEL_ROLE_SSM_IN, 128, 2 * 128 + 2 * 2 * 16 + 8 }, { MODEL_ROLE_SSM_CONV1D, 4, 128 + 2 * 2 * 16 },
                   { MODEL_ROLE_SSM_CONV1D_BIAS, 128 + 2 * 2 * 16, 1 }, { MODEL_ROLE_SSM_A, 1, 8 },
                   { MODEL_ROLE_SSM_D, 1, 8 }, { MODEL_ROLE_SSM_DT, 8, 1 }, { MODEL_ROLE_SSM_NORM, 64, 2 },
                   { MODEL_ROLE_SSM_OUT, 128, 128 } };
    for (size_t i = 0; i < N(shapes); i++) {
        int64_t ne[3];
        cr_assert(model_role_shape_at(&hp, model_role_info_of(shapes[i].r), 0, ne));
        cr_expect(ne[0] == shapes[i].ne0 && ne[1] == shapes[i].ne1, "%s: %lld x %lld, want %lld x %lld",
                  model_role_info_of(shapes[i].r)->name, (long long)ne[0], (long long)ne[1], (long long)shapes[i].ne0,
                  (long long)shapes[i].ne1);
    }
    gguf_close(f);
    free(b.p);
    hparams_refused_naming(kvs, N(kvs), 9, "6", "nemotron_h.ssm.time_step_rank"); /* 128 in heads of 6 */
    hparams_refused_naming(kvs, N(kvs), 10, "3", "nemotron_h.ssm.group_count");   /* 8 heads in 3 groups */
    hparams_refused_naming(kvs, N(kvs), 4, "0,2,4,0", "nemotron_h.attention.head_count_kv");
}

/* Falcon-H1 as llama.cpp's falcon-h1 loader reads it: every layer attends and keeps a Mamba-2 mixer beside its
 * attention (both blocks' roles required in every layer, a recurrent state in every layer, none of them a recurrent layer
 * in place of attention), the mixer's own width (ssm.inner_size 192 beside an embedding of 128), its grouped norm
 * optional, the feed-forward norm named blk.N.ffn_norm; a layer without key/value heads refused by name. */
Test(arch, falcon_h1_layers_hold_attention_and_a_mixer)
{
    kv_spec kvs[] = { { "general.architecture", 's', "falcon-h1" },
                      { "falcon-h1.embedding_length", 'u', "128" },
                      { "falcon-h1.block_count", 'u', "3" },
                      { "falcon-h1.attention.head_count", 'u', "4" },
                      { "falcon-h1.attention.head_count_kv", 'u', "2" },
                      { "falcon-h1.feed_forward_length", 'u', "256" },
                      { "falcon-h1.ssm.conv_kernel", 'u', "4" },
                      { "falcon-h1.ssm.inner_size", 'u', "192" },
                      { "falcon-h1.ssm.state_size", 'u', "16" },
                      { "falcon-h1.ssm.time_step_rank", 'u', "8" },
                      { "falcon-h1.ssm.group_count", 'u', "1" },
                      { "falcon-h1.attention.layer_norm_rms_epsilon", 'f', "0.00001" } };
    tbuf b;
    model_hparams hp;
    model_error e;
    gguf_file *f = hparams_file_with(kvs, N(kvs), &b);
    cr_assert_eq(model_hparams_read(f, &hp, &e), MODEL_OK, "%s", e.message);
    for (int il = 0; il < 3; il++)
        cr_expect(!model_hparams_layer_is_recurrent(&hp, il) && model_hparams_layer_has_state(&hp, il) &&
                      model_hparams_layer_has_kv_heads(&hp, il), "layer %d", il);
    cr_expect(!model_hparams_layer_is_recurrent(&hp, -1) && model_hparams_layer_has_state(&hp, -1));
    static const struct {
        model_role r;
        model_need need;
    } needs[] = { { MODEL_ROLE_ATTN_Q, MODEL_NEED_REQUIRED },      { MODEL_ROLE_SSM_IN, MODEL_NEED_REQUIRED },
                  { MODEL_ROLE_SSM_CONV1D_BIAS, MODEL_NEED_REQUIRED }, { MODEL_ROLE_SSM_NORM, MODEL_NEED_OPTIONAL },
                  { MODEL_ROLE_FFN_NORM, MODEL_NEED_REQUIRED },   { MODEL_ROLE_FFN_GATE, MODEL_NEED_REQUIRED } };
    for (size_t i = 0; i < N(needs); i++)
        for (int il = 0; il < 3; il++)
            cr_expect_eq(model_role_need_at(&hp, needs[i].r, il), needs[i].need, "%s in layer %d",
                         model_role_info_of(needs[i].r)->name, il);
    cr_expect_str_eq(model_role_name(hp.arch, MODEL_ROLE_FFN_NORM), "ffn_norm");
    int64_t ne[3];
    cr_assert(model_role_shape_at(&hp, model_role_info_of(MODEL_ROLE_SSM_IN), 0, ne));
    cr_expect(ne[0] == 128 && ne[1] == 2 * 192 + 2 * 16 + 8, "ssm_in %lld x %lld", (long long)ne[0], (long long)ne[1]);
    cr_assert(model_role_shape_at(&hp, model_role_info_of(MODEL_ROLE_SSM_OUT), 0, ne));
    cr_expect(ne[0] == 192 && ne[1] == 128, "ssm_out %lld x %lld", (long long)ne[0], (long long)ne[1]);
    gguf_close(f);
    free(b.p);
    hparams_refused_naming(kvs, N(kvs), 9, "7", "falcon-h1.ssm.time_step_rank"); /* 192 in heads of 7 */
    hparams_refused_naming(kvs, N(kvs), 4, "0", "falcon-h1.attention.head_count_kv"); /* every layer attends */
}

/* Mamba-2 alone as llama.cpp's mamba2 loader reads what its converter writes: attention.head_count 0 and
 * feed_forward_length 0 taken (no layer attends, none has a feed-forward block), every layer a Mamba-2 mixer needing
 * its grouped norm, no attention role anywhere; an attending architecture's head_count 0 is still refused by name. */
Test(arch, mamba2_layers_are_mixers_alone)
{
    kv_spec kvs[] = { { "general.architecture", 's', "mamba2" },
                      { "mamba2.context_length", 'u', "1048576" },
                      { "mamba2.embedding_length", 'u', "128" },
                      { "mamba2.feed_forward_length", 'u', "0" },
                      { "mamba2.attention.head_count", 'u', "0" },
                      { "mamba2.block_count", 'u', "3" },
                      { "mamba2.ssm.conv_kernel", 'u', "4" },
                      { "mamba2.ssm.inner_size", 'u', "256" },
                      { "mamba2.ssm.state_size", 'u', "32" },
                      { "mamba2.ssm.time_step_rank", 'u', "8" },
                      { "mamba2.ssm.group_count", 'u', "2" },
                      { "mamba2.attention.layer_norm_rms_epsilon", 'f', "0.00001" } };
    tbuf b;
    model_hparams hp;
    model_error e;
    gguf_file *f = hparams_file_with(kvs, N(kvs), &b);
    cr_assert_eq(model_hparams_read(f, &hp, &e), MODEL_OK, "%s", e.message);
    for (int il = 0; il < 3; il++)
        cr_expect(model_hparams_layer_is_recurrent(&hp, il) && model_hparams_layer_has_state(&hp, il) &&
                      !model_hparams_layer_has_kv_heads(&hp, il), "layer %d", il);
    static const struct {
        model_role r;
        model_need need;
    } needs[] = { { MODEL_ROLE_ATTN_NORM, MODEL_NEED_REQUIRED }, { MODEL_ROLE_SSM_IN, MODEL_NEED_REQUIRED },
                  { MODEL_ROLE_SSM_NORM, MODEL_NEED_REQUIRED },  { MODEL_ROLE_ATTN_Q, MODEL_NEED_ABSENT },
                  { MODEL_ROLE_FFN_NORM, MODEL_NEED_ABSENT },    { MODEL_ROLE_FFN_DOWN, MODEL_NEED_ABSENT } };
    for (size_t i = 0; i < N(needs); i++)
        for (int il = 0; il < 3; il++)
            cr_expect_eq(model_role_need_at(&hp, needs[i].r, il), needs[i].need, "%s in layer %d",
                         model_role_info_of(needs[i].r)->name, il);
    int64_t ne[3];
    cr_assert(model_role_shape_at(&hp, model_role_info_of(MODEL_ROLE_SSM_IN), 0, ne));
    cr_expect(ne[0] == 128 && ne[1] == 2 * 256 + 2 * 2 * 32 + 8, "ssm_in %lld x %lld", (long long)ne[0],
              (long long)ne[1]);
    gguf_close(f);
    free(b.p);
    hparams_refused_naming(kvs, N(kvs), 9, "7", "mamba2.ssm.time_step_rank"); /* 256 in heads of 7 */
    kv_spec attends[] = { { "general.architecture", 's', "llama" },
                          { "llama.embedding_length", 'u', "128" },
                          { "llama.feed_forward_length", 'u', "256" },
                          { "llama.attention.head_count", 'u', "4" },
                          { "llama.block_count", 'u', "2" } };
    hparams_refused_naming(attends, N(attends), 3, "0", "llama.attention.head_count");
}

/* Mamba-1 as llama.cpp's mamba loader reads it: time_step_rank is dt's rank (not heads: a head per channel), no group
 * key, dt_b_c_rms read (Falcon-Mamba's); every layer a Mamba-1 mixer with ssm_x and ssm_dt's projection, A one rate
 * per channel and state value, D one per channel; an expansion other than 2 refused as its loader refuses it. */
Test(arch, mamba_layers_are_mamba1_mixers)
{
    kv_spec kvs[] = { { "general.architecture", 's', "mamba" },
                      { "mamba.context_length", 'u', "1048576" },
                      { "mamba.embedding_length", 'u', "96" },
                      { "mamba.feed_forward_length", 'u', "0" },
                      { "mamba.attention.head_count", 'u', "0" },
                      { "mamba.block_count", 'u', "2" },
                      { "mamba.ssm.conv_kernel", 'u', "4" },
                      { "mamba.ssm.inner_size", 'u', "192" },
                      { "mamba.ssm.state_size", 'u', "16" },
                      { "mamba.ssm.time_step_rank", 'u', "6" },
                      { "mamba.attention.layer_norm_rms_epsilon", 'f', "0.00001" },
                      { "mamba.ssm.dt_b_c_rms", 'B', "1" } };
    tbuf b;
    model_hparams hp;
    model_error e;
    gguf_file *f = hparams_file_with(kvs, N(kvs), &b);
    cr_assert_eq(model_hparams_read(f, &hp, &e), MODEL_OK, "%s", e.message);
    cr_expect(hp.ssm_dt_rank == 6 && hp.ssm_n_v_heads == 192 && hp.ssm_n_k_heads == 0 && hp.ssm_dt_b_c_rms);
    for (int il = 0; il < 2; il++)
        cr_expect(model_hparams_layer_is_recurrent(&hp, il) && !model_hparams_layer_has_kv_heads(&hp, il), "layer %d",
                  il);
    static const struct {
        model_role r;
        int64_t ne0, ne1; /* the shape llama.cpp's loader asks for */
    } shapes[] = { { MODEL_ROLE_SSM_IN, 96, 384 },       { MODEL_ROLE_SSM_CONV1D, 4, 192 },
                   { MODEL_ROLE_SSM_CONV1D_BIAS, 192, 1 }, { MODEL_ROLE_SSM_X, 192, 6 + 2 * 16 },
                   { MODEL_ROLE_SSM_DT_PROJ, 6, 192 },   { MODEL_ROLE_SSM_DT, 192, 1 },
                   { MODEL_ROLE_SSM_A, 16, 192 },        { MODEL_ROLE_SSM_D, 192, 1 },
                   { MODEL_ROLE_SSM_OUT, 192, 96 } };
    for (size_t i = 0; i < N(shapes); i++) {
        int64_t ne[3];
        cr_expect_eq(model_role_need_at(&hp, shapes[i].r, 1), MODEL_NEED_REQUIRED, "%s",
                     model_role_info_of(shapes[i].r)->name);
        cr_assert(model_role_shape_at(&hp, model_role_info_of(shapes[i].r), 1, ne));
        cr_expect(ne[0] == shapes[i].ne0 && ne[1] == shapes[i].ne1, "%s: %lld x %lld",
                  model_role_info_of(shapes[i].r)->name, (long long)ne[0], (long long)ne[1]);
    }
    cr_expect_eq(model_role_need_at(&hp, MODEL_ROLE_SSM_NORM, 0), MODEL_NEED_ABSENT);
    gguf_close(f);
    free(b.p);
    hparams_refused_naming(kvs, N(kvs), 7, "256", "mamba.ssm.inner_size"); /* not 2 x 96 */
}

/* Jamba as llama.cpp's jamba loader reads its held-out file (tests/py/jamba_arch.py, written here): the layers whose
 * head_count_kv entry is 0 are Mamba-1 mixers with gains on their dt, B and C norms, the others attention; a layer has
 * experts where the file has its router (ffn_gate_inp: no key says which), a dense block elsewhere; a file whose
 * router is missing from a layer needs that layer's dense block instead. */
Test(arch, jamba_layers_have_experts_where_the_file_has_their_router)
{
    char dir[128], path[256], why[200];
    if (access(venv_python(), X_OK) != 0)
        cr_skip_test("build/venv not found: heldout-jamba not written");
    cr_assert(tmp_dir_make(dir, "jamba"));
    snprintf(path, sizeof path, "%s/heldout-jamba.gguf", dir);
    cr_assert(heldout_arch_write("heldout-jamba", path, why), "%s", why);
    gguf_file *f = NULL;
    gguf_error ge;
    cr_assert_eq(gguf_open(path, &f, &ge), GGUF_OK, "%s", ge.message);
    model_hparams hp;
    model_error e;
    cr_assert_eq(model_hparams_read(f, &hp, &e), MODEL_OK, "%s", e.message);
    static const char attention[] = "..A...", experts[] = ".E.E.E"; /* as the writer's defaults lay them */
    for (int il = 0; il < 6; il++) {
        const bool attends = attention[il] == 'A', moe = experts[il] == 'E';
        cr_expect_eq(model_hparams_layer_is_recurrent(&hp, il), !attends, "layer %d", il);
        cr_expect_eq(model_hparams_layer_has_experts(&hp, il), moe, "layer %d", il);
        cr_expect_eq(model_role_need_at(&hp, MODEL_ROLE_FFN_GATE_INP, il), moe ? MODEL_NEED_REQUIRED : MODEL_NEED_ABSENT,
                     "layer %d", il);
        cr_expect_eq(model_role_need_at(&hp, MODEL_ROLE_FFN_GATE, il), moe ? MODEL_NEED_ABSENT : MODEL_NEED_REQUIRED,
                     "layer %d", il);
        cr_expect_eq(model_role_need_at(&hp, MODEL_ROLE_SSM_B_NORM, il), attends ? MODEL_NEED_ABSENT : MODEL_NEED_REQUIRED,
                     "layer %d", il);
        cr_expect_eq(model_role_need_at(&hp, MODEL_ROLE_ATTN_Q, il), attends ? MODEL_NEED_REQUIRED : MODEL_NEED_ABSENT,
                     "layer %d", il);
    }
    model_hparams none = hp; /* the same keys, no file to ask: every layer dense */
    none.file = NULL;
    cr_expect(!model_hparams_layer_has_experts(&none, 1));
    gguf_close(f);
    cr_assert(tmp_dir_remove(dir));
}

/* Nemotron 3 Nano (nemotron_h_moe): the feed-forward layers' experts have no gate, their router a selection bias, a
 * shared expert beside them; the mixer layers have no experts (the first layer with experts is the first
 * feed-forward one, where llama.cpp looks for the router); expert_weights_norm and expert_weights_scale read. */
Test(arch, nemotron_h_moe_experts_are_in_its_feed_forward_layers)
{
    kv_spec kvs[] = { { "general.architecture", 's', "nemotron_h_moe" },
                      { "nemotron_h_moe.embedding_length", 'u', "128" },
                      { "nemotron_h_moe.block_count", 'u', "3" },
                      { "nemotron_h_moe.attention.head_count", 'u', "4" },
                      { "nemotron_h_moe.attention.head_count_kv", 'i', "0,0,2" },
                      { "nemotron_h_moe.feed_forward_length", 'i', "0,64,0" },
                      { "nemotron_h_moe.ssm.conv_kernel", 'u', "4" },
                      { "nemotron_h_moe.ssm.inner_size", 'u', "128" },
                      { "nemotron_h_moe.ssm.state_size", 'u', "16" },
                      { "nemotron_h_moe.ssm.time_step_rank", 'u', "8" },
                      { "nemotron_h_moe.ssm.group_count", 'u', "2" },
                      { "nemotron_h_moe.expert_count", 'u', "8" },
                      { "nemotron_h_moe.expert_used_count", 'u', "3" },
                      { "nemotron_h_moe.expert_feed_forward_length", 'u', "64" },
                      { "nemotron_h_moe.expert_shared_feed_forward_length", 'u', "96" },
                      { "nemotron_h_moe.expert_weights_norm", 'B', "1" },
                      { "nemotron_h_moe.expert_weights_scale", 'f', "2.5" } };
    tbuf b;
    model_hparams hp;
    model_error e;
    gguf_file *f = hparams_file_with(kvs, N(kvs), &b);
    /* no tensors: refused for the router llama.cpp looks for in the first feed-forward layer, not in layer 0 */
    cr_assert_eq(model_hparams_read(f, &hp, &e), MODEL_E_MALFORMED);
    cr_assert(strstr(e.message, "blk.1.ffn_gate_inp.weight"), "%s", e.message);
    cr_assert(!model_hparams_layer_has_experts(&hp, 0) && model_hparams_layer_has_experts(&hp, 1) &&
              !model_hparams_layer_has_experts(&hp, 2));
    cr_assert(hp.moe_renormalise && hp.moe_scale == 2.5f && hp.moe_gating == MODEL_MOE_SIGMOID);
    cr_assert_eq(hp.n_ff_shexp, 96);
    gguf_close(f);
    free(b.p);
    /* Nemotron 3 Super's latent experts: refused as not run yet, naming the key */
    kv_spec latent[N(kvs) + 1];
    memcpy(latent, kvs, sizeof kvs);
    latent[N(kvs)] = (kv_spec){ "nemotron_h_moe.moe_latent_size", 'u', "64" };
    f = hparams_file_with(latent, N(latent), &b);
    cr_assert_eq(model_hparams_read(f, &hp, &e), MODEL_E_UNSUPPORTED);
    cr_assert_str_eq(e.subject, "nemotron_h_moe.moe_latent_size");
    gguf_close(f);
    free(b.p);
    f = hparams_file_with(kvs, N(kvs), &b);
    cr_assert_eq(model_hparams_read(f, &hp, &e), MODEL_E_MALFORMED);
    static const struct {
        model_role r;
        int layer;
        model_need need;
    } needs[] = { { MODEL_ROLE_FFN_UP_EXPS, 1, MODEL_NEED_REQUIRED },  { MODEL_ROLE_FFN_GATE_EXPS, 1, MODEL_NEED_ABSENT },
                  { MODEL_ROLE_FFN_EXP_PROBS_B, 1, MODEL_NEED_REQUIRED }, { MODEL_ROLE_FFN_UP_SHEXP, 1, MODEL_NEED_REQUIRED },
                  { MODEL_ROLE_FFN_GATE_SHEXP, 1, MODEL_NEED_ABSENT }, { MODEL_ROLE_FFN_UP, 1, MODEL_NEED_ABSENT },
                  { MODEL_ROLE_FFN_UP_EXPS, 0, MODEL_NEED_ABSENT },   { MODEL_ROLE_SSM_IN, 0, MODEL_NEED_REQUIRED },
                  { MODEL_ROLE_FFN_GATE_INP, 2, MODEL_NEED_ABSENT },  { MODEL_ROLE_ATTN_Q, 2, MODEL_NEED_REQUIRED } };
    for (size_t i = 0; i < N(needs); i++)
        cr_expect_eq(model_role_need_at(&hp, needs[i].r, needs[i].layer), needs[i].need, "%s in layer %d",
                     model_role_info_of(needs[i].r)->name, needs[i].layer);
    gguf_close(f);
    free(b.p);
}

/* Granite 4.0-H as llama.cpp's granitehybrid loader reads it: a layer without key/value heads is a Mamba-2 mixer
 * whatever its feed-forward width (each layer has its feed-forward block, dense or experts), rope.scaling.finetuned
 * false turns rotation off on every layer, logit_scale may be absent (no scaling), and ssm.inner_size must be twice
 * embedding_length (its loader asserts it), refused naming the key. */
Test(arch, granitehybrid_keys_are_read_as_its_loader_reads_them)
{
    kv_spec kvs[] = { { "general.architecture", 's', "granitehybrid" },
                      { "granitehybrid.embedding_length", 'u', "128" },
                      { "granitehybrid.block_count", 'u', "3" },
                      { "granitehybrid.attention.head_count", 'u', "4" },
                      { "granitehybrid.attention.head_count_kv", 'i', "0,2,0" },
                      { "granitehybrid.feed_forward_length", 'u', "256" },
                      { "granitehybrid.ssm.conv_kernel", 'u', "4" },
                      { "granitehybrid.ssm.inner_size", 'u', "256" },
                      { "granitehybrid.ssm.state_size", 'u', "16" },
                      { "granitehybrid.ssm.time_step_rank", 'u', "8" },
                      { "granitehybrid.ssm.group_count", 'u', "1" },
                      { "granitehybrid.rope.scaling.finetuned", 'B', "0" } };
    tbuf b;
    model_hparams hp;
    model_error e;
    gguf_file *f = hparams_file_with(kvs, N(kvs), &b);
    cr_assert_eq(model_hparams_read(f, &hp, &e), MODEL_OK, "%s", e.message);
    cr_assert(model_hparams_layer_is_recurrent(&hp, 0) && !model_hparams_layer_is_recurrent(&hp, 1) &&
              model_hparams_layer_is_recurrent(&hp, 2));
    cr_assert(hp.rope_off && !model_hparams_layer_rotates(&hp, 1), "rope.scaling.finetuned false: no rotation");
    cr_assert_eq(hp.logit_scale, 1.0f, "no logit_scale: no scaling");
    cr_assert_eq(model_role_need_at(&hp, MODEL_ROLE_FFN_GATE, 0), MODEL_NEED_REQUIRED, "a mixer's feed-forward block");
    cr_assert_eq(model_role_need_at(&hp, MODEL_ROLE_SSM_D, 0), MODEL_NEED_REQUIRED);
    cr_assert_eq(model_role_need_at(&hp, MODEL_ROLE_ATTN_Q, 0), MODEL_NEED_ABSENT);
    cr_assert_eq(model_role_need_at(&hp, MODEL_ROLE_ATTN_Q, 1), MODEL_NEED_REQUIRED);
    gguf_close(f);
    free(b.p);
    kvs[11].value = "1"; /* Bamba's: rotation on */
    f = hparams_file_with(kvs, N(kvs), &b);
    cr_assert_eq(model_hparams_read(f, &hp, &e), MODEL_OK, "%s", e.message);
    cr_assert(!hp.rope_off && model_hparams_layer_rotates(&hp, 1));
    gguf_close(f);
    free(b.p);
    hparams_refused_naming(kvs, N(kvs), 7, "192", "granitehybrid.ssm.inner_size");
}
