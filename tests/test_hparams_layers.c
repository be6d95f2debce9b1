/*
 * What the hyperparameter reader says of each layer where a family's loader reads it its own way: Hunyuan-A13B's
 * expert widths, MiniCPM's multipliers, StarCoder2's and StableLM's LayerNorms and rotation, GPT-NeoX's parallel
 * residual, layers of shapes of their own (Gemma 4's sliding layers), Nanbeige's looped blocks, Arctic's dense block
 * beside its experts and Granite's iSWA keys. The hybrids' layers: test_hparams_hybrids.
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

/* Hunyuan-A13B as llama.cpp's hunyuan-moe loader sizes its experts: feed_forward_length wide, whatever
 * expert_feed_forward_length says; the shared expert expert_shared_feed_forward_length wide; renormalised softmax. */
Test(arch, hunyuan_moe_experts_are_feed_forward_length_wide)
{
    kv_spec kvs[] = { { "general.architecture", 's', "hunyuan-moe" },
                      { "hunyuan-moe.embedding_length", 'u', "128" },
                      { "hunyuan-moe.block_count", 'u', "2" },
                      { "hunyuan-moe.attention.head_count", 'u', "4" },
                      { "hunyuan-moe.feed_forward_length", 'u', "96" },
                      { "hunyuan-moe.expert_feed_forward_length", 'u', "64" },
                      { "hunyuan-moe.expert_shared_feed_forward_length", 'u', "80" },
                      { "hunyuan-moe.expert_count", 'u', "8" },
                      { "hunyuan-moe.expert_used_count", 'u', "2" },
                      { "hunyuan-moe.attention.layer_norm_rms_epsilon", 'f', "0.00001" } };
    tbuf b;
    model_hparams hp;
    model_error e;
    gguf_file *f = hparams_file_with(kvs, N(kvs), &b);
    /* no tensors: refused for the router llama.cpp looks for, the keys read before */
    cr_assert_eq(model_hparams_read(f, &hp, &e), MODEL_E_MALFORMED, "%s", e.message);
    cr_expect_str_eq(e.subject, "hunyuan-moe.expert_count");
    cr_expect(hp.n_ff_exp == 96 && hp.n_ff_shexp == 80, "experts %lld wide, the shared one %lld", (long long)hp.n_ff_exp,
              (long long)hp.n_ff_shexp);
    cr_expect(hp.moe_renormalise && hp.moe_gating == MODEL_MOE_SOFTMAX);
    cr_expect_eq(model_role_need_at(&hp, MODEL_ROLE_FFN_GATE_INP_SHEXP, 0), MODEL_NEED_ABSENT,
                 "its shared expert has no gate");
    gguf_close(f);
    free(b.p);
}

/* MiniCPM as llama.cpp's minicpm loader reads it: granite's multipliers where the file has them, else its own defaults
 * (embedding x12, residual x1.4 / sqrt(block_count), logits / (256 / embedding_length)); attention.scale not read. */
Test(arch, minicpm_multipliers_default_as_its_loader_defaults_them)
{
    kv_spec kvs[] = { { "general.architecture", 's', "minicpm" },
                      { "minicpm.embedding_length", 'u', "128" },
                      { "minicpm.block_count", 'u', "4" },
                      { "minicpm.attention.head_count", 'u', "4" },
                      { "minicpm.feed_forward_length", 'u', "256" },
                      { "minicpm.attention.layer_norm_rms_epsilon", 'f', "0.00001" },
                      { "minicpm.attention.scale", 'f', "0.5" },
                      { "minicpm.embedding_scale", 'f', "10" },
                      { "minicpm.residual_scale", 'f', "0.25" },
                      { "minicpm.logit_scale", 'f', "4" } };
    tbuf b;
    model_hparams hp;
    model_error e;
    gguf_file *f = hparams_file_with(kvs, 6, &b); /* without the multipliers */
    cr_assert_eq(model_hparams_read(f, &hp, &e), MODEL_OK, "%s", e.message);
    cr_expect(hp.embd_scale == 12.0f && hp.residual_scale == 1.4f / 2.0f && hp.logit_scale == 0.5f,
              "defaults: embedding %g, residual %g, logits x%g", hp.embd_scale, hp.residual_scale, hp.logit_scale);
    cr_expect_float_eq(hp.attn_scale, 1.0f / sqrtf(32.0f), 1e-7f);
    gguf_close(f);
    free(b.p);
    f = hparams_file_with(kvs, N(kvs), &b); /* with them, and an attention.scale its loader does not read */
    cr_assert_eq(model_hparams_read(f, &hp, &e), MODEL_OK, "%s", e.message);
    cr_expect(hp.embd_scale == 10.0f && hp.residual_scale == 0.25f && hp.logit_scale == 0.25f,
              "the file's: embedding %g, residual %g, logits x%g", hp.embd_scale, hp.residual_scale, hp.logit_scale);
    cr_expect_float_eq(hp.attn_scale, 1.0f / sqrtf(32.0f), 1e-7f);
    gguf_close(f);
    free(b.p);
}

/* StarCoder2 as llama.cpp's starcoder2 loader reads it: the LayerNorms' epsilon from attention.layer_norm_epsilon (not
 * the RMSNorm key: without its own, the default, reported as such); the norms' biases, the output projection's and
 * the ungated block's required, q, k and v's optional (create_tensor_qkv), no ffn_gate. */
Test(arch, starcoder2_layers_are_layernorms_with_biases)
{
    kv_spec kvs[] = { { "general.architecture", 's', "starcoder2" },
                      { "starcoder2.embedding_length", 'u', "128" },
                      { "starcoder2.block_count", 'u', "2" },
                      { "starcoder2.attention.head_count", 'u', "4" },
                      { "starcoder2.attention.head_count_kv", 'u', "2" },
                      { "starcoder2.feed_forward_length", 'u', "256" },
                      { "starcoder2.attention.layer_norm_epsilon", 'f', "0.00001" } };
    tbuf b;
    model_hparams hp;
    model_error e;
    gguf_file *f = hparams_file_with(kvs, N(kvs), &b);
    cr_assert_eq(model_hparams_read(f, &hp, &e), MODEL_OK, "%s", e.message);
    cr_expect(hp.arch->norm_layer && hp.arch->rope_neox && hp.arch->act == MODEL_ACT_GELU_TANH);
    cr_expect_float_eq(hp.eps, 1e-5f, 1e-12f);
    static const model_role required[] = { MODEL_ROLE_OUTPUT_NORM_BIAS, MODEL_ROLE_ATTN_NORM_BIAS,
                                           MODEL_ROLE_ATTN_OUT_BIAS,     MODEL_ROLE_FFN_NORM_BIAS,
                                           MODEL_ROLE_FFN_UP_BIAS,       MODEL_ROLE_FFN_DOWN_BIAS };
    for (size_t i = 0; i < N(required); i++)
        cr_expect_eq(model_role_need(&hp, required[i]), MODEL_NEED_REQUIRED, "%s",
                     model_role_info_of(required[i])->name);
    cr_expect_eq(model_role_need(&hp, MODEL_ROLE_ATTN_Q_BIAS), MODEL_NEED_OPTIONAL);
    cr_expect_eq(model_role_need(&hp, MODEL_ROLE_FFN_GATE), MODEL_NEED_ABSENT);
    gguf_close(f);
    free(b.p);
    kvs[6] = (kv_spec){ "starcoder2.attention.layer_norm_rms_epsilon", 'f', "0.001" };
    f = hparams_file_with(kvs, N(kvs), &b);
    cr_assert_eq(model_hparams_read(f, &hp, &e), MODEL_OK, "%s", e.message);
    cr_expect(hp.eps_defaulted && hp.eps == 1e-5f, "the RMSNorm key is not a LayerNorm's: %g", (double)hp.eps);
    gguf_close(f);
    free(b.p);
}

/* StableLM as llama.cpp's stablelm loader reads it: part of each head rotating (rope.dimension_count: a quarter in
 * StableLM 2), LayerNorms with biases, SwiGLU, an output projection of its own required; no ffn_norm (its 12B's
 * parallel residual) is refused by that tensor's name. */
Test(arch, stablelm_rotates_part_of_each_head)
{
    kv_spec kvs[] = { { "general.architecture", 's', "stablelm" },
                      { "stablelm.embedding_length", 'u', "128" },
                      { "stablelm.block_count", 'u', "2" },
                      { "stablelm.attention.head_count", 'u', "4" },
                      { "stablelm.feed_forward_length", 'u', "256" },
                      { "stablelm.rope.dimension_count", 'u', "8" },
                      { "stablelm.attention.layer_norm_epsilon", 'f', "0.00001" } };
    tbuf b;
    model_hparams hp;
    model_error e;
    gguf_file *f = hparams_file_with(kvs, N(kvs), &b);
    cr_assert_eq(model_hparams_read(f, &hp, &e), MODEL_OK, "%s", e.message);
    cr_expect(hp.n_rot == 8 && hp.head_dim_k == 32 && hp.arch->norm_layer && hp.arch->act == MODEL_ACT_SILU,
              "%lld of %lld rotate", (long long)hp.n_rot, (long long)hp.head_dim_k);
    cr_expect_eq(model_role_need(&hp, MODEL_ROLE_OUTPUT), MODEL_NEED_REQUIRED);
    cr_expect_eq(model_role_need(&hp, MODEL_ROLE_FFN_NORM), MODEL_NEED_REQUIRED);
    cr_expect_eq(model_role_need(&hp, MODEL_ROLE_FFN_NORM_BIAS), MODEL_NEED_REQUIRED);
    cr_expect_eq(model_role_need(&hp, MODEL_ROLE_ATTN_OUT_BIAS), MODEL_NEED_ABSENT, "its output projection has none");
    gguf_close(f);
    free(b.p);
}

/* GPT-NeoX's layers are parallel or not as its file's use_parallel_residual says (llama.cpp's gptneox loader reads the
 * key; its converter writes true unless the config says otherwise); Cohere's, Phi-2's and Falcon's always are. */
Test(arch, gptneox_parallel_residual_is_the_files_word)
{
    kv_spec kvs[] = { { "general.architecture", 's', "gptneox" },
                      { "gptneox.embedding_length", 'u', "128" },
                      { "gptneox.block_count", 'u', "2" },
                      { "gptneox.attention.head_count", 'u', "4" },
                      { "gptneox.feed_forward_length", 'u', "256" },
                      { "gptneox.attention.layer_norm_epsilon", 'f', "0.00001" },
                      { "gptneox.use_parallel_residual", 'B', "0" } };
    tbuf b;
    model_hparams hp;
    model_error e;
    for (int with = 0; with < 3; with++) { /* the key false, true, absent */
        kvs[6].value = with == 1 ? "1" : "0";
        gguf_file *f = hparams_file_with(kvs, with == 2 ? N(kvs) - 1 : N(kvs), &b);
        cr_assert_eq(model_hparams_read(f, &hp, &e), MODEL_OK, "%s", e.message);
        cr_expect_eq(hp.parallel, with != 0, "use_parallel_residual %s: parallel %d",
                     with == 2 ? "absent" : kvs[6].value, hp.parallel);
        cr_expect(hp.n_head_kv == 4 && hp.arch->parallel_residual_key && !hp.arch->parallel_ffn);
        gguf_close(f);
        free(b.p);
    }
    static const char *const always[] = { "phi2", "falcon", "command-r" };
    for (size_t i = 0; i < N(always); i++)
        cr_expect(model_arch_find(always[i], strlen(always[i]))->parallel_ffn, "%s", always[i]);
}

/* Gemma 4 as llama.cpp's loader reads it (src/llama-model.cpp's generic keys, src/models/gemma4.cpp): the sliding layers'
 * own key and value lengths and rotated width (attention.key_length_swa, value_length_swa, rope.dimension_count_swa),
 * attention.head_count_kv and feed_forward_length one per layer (get_key_or_arr), each layer's role shapes from them;
 * q.k unscaled. A count that does not divide the heads, or a sliding layer's value length apart from its key length,
 * refused naming the key; E2B / E4B's last layers read the caches of the last sliding and full layers before them
 * (llama.cpp's layer_reuse_cb), which must be there, and their per-layer input roles are the file's only with
 * embedding_length_per_layer_input. */
Test(arch, gemma4_layers_have_shapes_of_their_own)
{
    kv_spec kvs[] = { { "general.architecture", 's', "gemma4" },          { "gemma4.embedding_length", 'u', "256" },
                      { "gemma4.block_count", 'u', "4" },                 { "gemma4.attention.head_count", 'u', "8" },
                      { "gemma4.attention.head_count_kv", 'i', "4,4,4,2" }, { "gemma4.feed_forward_length", 'i', "512,512,1024,1024" },
                      { "gemma4.attention.key_length", 'u', "128" },      { "gemma4.attention.value_length", 'u', "128" },
                      { "gemma4.attention.key_length_swa", 'u', "64" },   { "gemma4.attention.value_length_swa", 'u', "64" },
                      { "gemma4.rope.dimension_count_swa", 'u', "32" },   { "gemma4.attention.sliding_window", 'u', "512" },
                      { "gemma4.attention.sliding_window_pattern", 'b', "1,1,1,0" },
                      { "gemma4.attention.shared_kv_layers", 'u', "0" } };
    tbuf b;
    model_hparams hp, l;
    model_error e;
    gguf_file *f = hparams_file_with(kvs, N(kvs), &b);
    cr_assert_eq(model_hparams_read(f, &hp, &e), MODEL_OK, "%s", e.message);
    cr_assert_eq(hp.n_head_kv, 4, "the widest layer's count");
    cr_assert_eq(hp.n_ff, 1024, "the widest layer's width");
    cr_assert_float_eq(hp.attn_scale, 1.0f, 0, "gemma4 scales q.k by 1");
    model_hparams_layer(&hp, 0, &l); /* sliding */
    cr_assert(l.head_dim_k == 64 && l.head_dim_v == 64 && l.n_rot == 32 && l.n_head_kv == 4 && l.n_ff == 512);
    model_hparams_layer(&hp, 2, &l); /* sliding, twice as wide a feed-forward block */
    cr_assert_eq(l.n_ff, 1024);
    model_hparams_layer(&hp, 3, &l); /* full */
    cr_assert(l.head_dim_k == 128 && l.n_rot == 128 && l.n_head_kv == 2 && l.n_ff == 1024);
    int64_t ne[3];
    cr_assert(model_role_shape_at(&hp, model_role_info_of(MODEL_ROLE_ATTN_K), 0, ne));
    cr_assert(ne[0] == 256 && ne[1] == 4 * 64, "sliding attn_k: [%lld, %lld]", (long long)ne[0], (long long)ne[1]);
    cr_assert(model_role_shape_at(&hp, model_role_info_of(MODEL_ROLE_ATTN_K), 3, ne));
    cr_assert(ne[0] == 256 && ne[1] == 2 * 128, "full attn_k: [%lld, %lld]", (long long)ne[0], (long long)ne[1]);
    cr_assert(model_role_shape_at(&hp, model_role_info_of(MODEL_ROLE_FFN_DOWN), 1, ne));
    cr_assert(ne[0] == 512 && ne[1] == 256);
    cr_assert(model_role_shape_at(&hp, model_role_info_of(MODEL_ROLE_ROPE_FREQS), -1, ne));
    cr_assert_eq(ne[0], 64, "rope_freqs: the full layers' pairs");
    cr_assert_eq(model_role_need_at(&hp, MODEL_ROLE_ATTN_V, 3), MODEL_NEED_OPTIONAL, "values from the keys");
    gguf_close(f);
    free(b.p);
    hparams_refused_naming(kvs, N(kvs), 4, "4,4,3,2", "gemma4.attention.head_count_kv");
    hparams_refused_naming(kvs, N(kvs), 4, "4,4,2", "gemma4.attention.head_count_kv");
    hparams_refused_naming(kvs, N(kvs), 9, "48", "gemma4.attention.value_length_swa");
    hparams_refused_naming(kvs, N(kvs), 10, "96", "gemma4.rope.dimension_count_swa");
    /* E2B / E4B: the last two layers read the caches of the sliding and the full layer before them */
    kvs[N(kvs) - 1] = (kv_spec){ "gemma4.attention.shared_kv_layers", 'u', "1" };
    kv_spec e2b[N(kvs) + 1];
    memcpy(e2b, kvs, sizeof kvs);
    e2b[N(kvs)] = (kv_spec){ "gemma4.embedding_length_per_layer_input", 'u', "32" };
    e2b[12] = (kv_spec){ "gemma4.attention.sliding_window_pattern", 'b', "1,0,1,0" };
    e2b[N(kvs) - 1].value = "2";
    f = hparams_file_with(e2b, N(e2b), &b);
    cr_assert_eq(model_hparams_read(f, &hp, &e), MODEL_OK, "%s", e.message);
    const int64_t src[4] = { 0, 1, 0, 1 };
    for (int il = 0; il < 4; il++)
        cr_assert_eq(model_hparams_layer_kv_source(&hp, il), src[il], "layer %d", il);
    cr_assert_eq(model_role_need_at(&hp, MODEL_ROLE_ATTN_K, 2), MODEL_NEED_OPTIONAL, "a shared layer makes no keys");
    cr_assert_eq(model_role_need_at(&hp, MODEL_ROLE_ATTN_K, 1), MODEL_NEED_REQUIRED);
    cr_assert_eq(model_role_need(&hp, MODEL_ROLE_PER_LAYER_TOKEN_EMBD), MODEL_NEED_REQUIRED);
    cr_assert_not(model_role_shape_at(&hp, model_role_info_of(MODEL_ROLE_PER_LAYER_TOKEN_EMBD), -1, ne),
                  "no vocabulary here");
    cr_assert_eq(ne[0], 4 * 32, "every layer's 32 per token");
    cr_assert(model_role_shape_at(&hp, model_role_info_of(MODEL_ROLE_PER_LAYER_INP_GATE), 1, ne));
    cr_assert(ne[0] == 256 && ne[1] == 32);
    gguf_close(f);
    free(b.p);
    /* the layers before the shared ones must end with a sliding and a full one (llama.cpp asserts it) */
    hparams_refused_naming(e2b, N(e2b), N(kvs) - 1, "3", "gemma4.attention.shared_kv_layers");
    e2b[12].value = "1,1,0,0";
    hparams_refused_naming(e2b, N(e2b), N(kvs) - 1, "2", "gemma4.attention.shared_kv_layers");
    kvs[N(kvs) - 1] = (kv_spec){ "gemma4.attention.shared_kv_layers", 'u', "0" };
    f = hparams_file_with(kvs, N(kvs), &b); /* without per-layer inputs their roles are not the file's */
    cr_assert_eq(model_hparams_read(f, &hp, &e), MODEL_OK, "%s", e.message);
    cr_assert_eq(model_role_need(&hp, MODEL_ROLE_PER_LAYER_PROJ), MODEL_NEED_ABSENT);
    cr_assert_eq(model_hparams_layer_kv_source(&hp, 3), 3);
    gguf_close(f);
    free(b.p);
}

/* Nanbeige's loops as llama.cpp's nanbeige loader reads them: num_loops (1 where absent) runs the blocks that many
 * times over, layer il reading block il % blocks; the final norm between passes, not after the last, unless
 * skip_loop_final_norm; a count of 0, or one past llama.cpp's 512 layers in all, is refused (its loader asserts both). */
Test(arch, nanbeige_loops_run_the_blocks_again)
{
    const char *loops[] = { "3", "3", NULL, "0", "129" };
    const char *skip[] = { "0", "1", "0", "0", "0" };
    for (int i = 0; i < 5; i++) {
        kv_spec kvs[] = { { "general.architecture", 's', "nanbeige" },
                          { "nanbeige.embedding_length", 'u', "64" },
                          { "nanbeige.block_count", 'u', "4" },
                          { "nanbeige.attention.head_count", 'u', "2" },
                          { "nanbeige.feed_forward_length", 'u', "128" },
                          { "nanbeige.attention.layer_norm_rms_epsilon", 'f', "0.000001" },
                          { "nanbeige.skip_loop_final_norm", 'B', skip[i] },
                          { "nanbeige.num_loops", 'u', loops[i] } };
        tbuf b;
        model_hparams hp;
        model_error e;
        gguf_file *f = hparams_file_with(kvs, N(kvs) - (loops[i] ? 0 : 1), &b);
        const model_status s = model_hparams_read(f, &hp, &e);
        if (i >= 3) {
            cr_expect_neq(s, MODEL_OK, "num_loops %s is refused", loops[i]);
            cr_expect_str_eq(e.subject, "nanbeige.num_loops");
        } else {
            const int64_t n = loops[i] ? 3 : 1;
            cr_assert_eq(s, MODEL_OK, "%s", e.message);
            cr_expect_eq(hp.n_loops, n);
            cr_expect_eq(model_hparams_layers_run(&hp), 4 * n);
            cr_expect_eq(model_hparams_layer_block(&hp, 9), n == 3 ? 1 : 9);
            for (int64_t il = 0; il < 4 * n; il++)
                cr_expect_eq(model_hparams_layer_ends_loop(&hp, il), i == 0 && (il == 3 || il == 7),
                             "case %d: layer %lld", i, (long long)il);
        }
        gguf_close(f);
        free(b.p);
    }
}

/* Snowflake Arctic as llama.cpp's arctic loader sizes it: the dense block n_embd x n_embd in every layer, beside the
 * experts feed_forward_length wide (whatever expert_feed_forward_length says), the experts' own input norm required. */
Test(arch, arctic_keeps_a_dense_block_embedding_wide_beside_its_experts)
{
    kv_spec kvs[] = { { "general.architecture", 's', "arctic" },
                      { "arctic.embedding_length", 'u', "64" },
                      { "arctic.block_count", 'u', "2" },
                      { "arctic.attention.head_count", 'u', "2" },
                      { "arctic.feed_forward_length", 'u', "48" },
                      { "arctic.expert_feed_forward_length", 'u', "32" },
                      { "arctic.expert_count", 'u', "4" },
                      { "arctic.expert_used_count", 'u', "2" },
                      { "arctic.attention.layer_norm_rms_epsilon", 'f', "0.00001" } };
    tbuf b;
    model_hparams hp;
    model_error e;
    gguf_file *f = hparams_file_with(kvs, N(kvs), &b);
    model_hparams_read(f, &hp, &e); /* (refused or not for the tensors it lacks: the keys are read first) */
    cr_expect(hp.n_ff == 64 && hp.n_ff_exp == 48, "dense %lld wide, experts %lld", (long long)hp.n_ff,
              (long long)hp.n_ff_exp);
    cr_expect(hp.moe_renormalise && hp.moe_gating == MODEL_MOE_SOFTMAX && hp.moe_scale == 1.0f);
    const model_role both[] = { MODEL_ROLE_FFN_GATE, MODEL_ROLE_FFN_UP, MODEL_ROLE_FFN_DOWN, MODEL_ROLE_FFN_GATE_EXPS,
                                MODEL_ROLE_FFN_NORM_EXPS, MODEL_ROLE_FFN_GATE_INP };
    for (size_t i = 0; i < N(both); i++)
        cr_expect_eq(model_role_need_at(&hp, both[i], 1), MODEL_NEED_REQUIRED, "%s",
                     model_role_info_of(both[i])->name);
    gguf_close(f);
    free(b.p);
}

/* IBM Granite's iSWA files as llama.cpp's granite_swa loader reads them: attention.sliding_window required, the window
 * on the layers sliding_window_pattern marks, attention.rope_pattern's false layers without positions (one bool per
 * layer, else refused), experts feed_forward_length wide, the shared expert's ffn_up_shexp its gate and up rows. */
Test(arch, granite_swa_reads_its_window_rope_pattern_and_fused_shared_expert)
{
    const char *rope[] = { "1,1,0,1", "1,0", NULL };
    for (int i = 0; i < 4; i++) {
        kv_spec kvs[] = { { "general.architecture", 's', "granite_swa" },
                          { "granite_swa.embedding_length", 'u', "64" },
                          { "granite_swa.block_count", 'u', "4" },
                          { "granite_swa.attention.head_count", 'u', "2" },
                          { "granite_swa.feed_forward_length", 'u', "48" },
                          { "granite_swa.expert_count", 'u', "4" },
                          { "granite_swa.expert_used_count", 'u', "2" },
                          { "granite_swa.expert_shared_feed_forward_length", 'u', "40" },
                          { "granite_swa.logit_scale", 'f', "8" },
                          { "granite_swa.attention.layer_norm_rms_epsilon", 'f', "0.00001" },
                          { "granite_swa.attention.sliding_window_pattern", 'b', "0,1,1,1" },
                          { "granite_swa.attention.rope_pattern", 'b', i < 3 && rope[i] ? rope[i] : "1,1,1,1" },
                          { "granite_swa.attention.sliding_window", 'u', "16" } };
        tbuf b;
        model_hparams hp;
        model_error e;
        /* case 2 leaves the rope pattern out, case 3 the window too */
        const size_t n = i < 2 ? N(kvs) : i == 2 ? N(kvs) - 1 : N(kvs) - 2;
        if (i >= 2)
            kvs[N(kvs) - 2] = kvs[N(kvs) - 1];
        gguf_file *f = hparams_file_with(kvs, n, &b);
        const model_status s = model_hparams_read(f, &hp, &e);
        if (i == 1 || i == 3) {
            cr_expect_neq(s, MODEL_OK, "case %d is refused", i);
            cr_expect_str_eq(e.subject, i == 1 ? "granite_swa.attention.rope_pattern"
                                               : "granite_swa.attention.sliding_window");
        } else {
            for (int64_t il = 0; il < 4; il++) {
                cr_expect_eq(model_hparams_layer_rotates(&hp, il), i == 2 || il != 2, "case %d layer %lld", i,
                             (long long)il);
                cr_expect_eq(model_hparams_layer_is_swa(&hp, il), il != 0);
            }
            int64_t ne[3];
            cr_expect(model_role_shape_at(&hp, model_role_info_of(MODEL_ROLE_FFN_UP_SHEXP), 1, ne) && ne[1] == 80,
                      "ffn_up_shexp holds 2 x 40 rows");
            cr_expect_eq(hp.n_ff_exp, 48, "experts feed_forward_length wide");
        }
        gguf_close(f);
        free(b.p);
    }
}

/* Xiaomi MiMo-V2's files as llama.cpp's mimo2 loader reads them: attention.sliding_window_pattern a key it requires,
 * as one bool per layer (a period is refused, and so is a file without it), the sliding layers' base
 * rope.freq_base_swa (10000 where absent) with no scaling, key/value heads per layer, values value_length wide apart
 * from key_length (other graphs assert the two equal), and attention.value_scale kept where it is not 1. */
Test(arch, mimo2_requires_its_pattern_and_reads_its_value_width_and_scale)
{
    const char *pattern[] = { "0,1,1,0", NULL, "0,1,1,0", "0,1,1,0" };
    const char *scale[] = { "0.707", "0.707", "1", "0.707" };
    for (int i = 0; i < 5; i++) {
        kv_spec kvs[] = { { "general.architecture", 's', "mimo2" },
                          { "mimo2.embedding_length", 'u', "64" },
                          { "mimo2.block_count", 'u', "4" },
                          { "mimo2.attention.head_count", 'u', "4" },
                          { "mimo2.attention.head_count_kv", 'i', "1,2,2,1" },
                          { "mimo2.attention.key_length", 'u', "32" },
                          { "mimo2.attention.value_length", 'u', "24" },
                          { "mimo2.feed_forward_length", 'u', "96" },
                          { "mimo2.expert_count", 'u', "4" },
                          { "mimo2.expert_used_count", 'u', "2" },
                          { "mimo2.expert_feed_forward_length", 'u', "48" },
                          { "mimo2.attention.layer_norm_rms_epsilon", 'f', "0.00001" },
                          { "mimo2.attention.sliding_window", 'u', "16" },
                          { "mimo2.attention.value_scale", 'f', i < 4 ? scale[i] : "0.707" },
                          { "mimo2.rope.freq_base_swa", 'f', "5000" },
                          /* case 1 leaves it out, case 4 makes it a period */
                          { "mimo2.attention.sliding_window_pattern", i == 4 ? 'u' : 'b',
                            i == 4 ? "2" : pattern[i] ? pattern[i] : "0,1,1,0" } };
        tbuf b;
        model_hparams hp;
        model_error e;
        /* case 1 without the pattern, case 3 without the sliding base */
        size_t n = i == 1 ? N(kvs) - 1 : N(kvs);
        if (i == 3) {
            kvs[N(kvs) - 2] = kvs[N(kvs) - 1];
            n = N(kvs) - 1;
        }
        gguf_file *f = hparams_file_with(kvs, n, &b);
        const model_status s = model_hparams_read(f, &hp, &e);
        if (i == 1 || i == 4) {
            cr_expect_neq(s, MODEL_OK, "case %d is refused", i);
            cr_expect_str_eq(e.subject, "mimo2.attention.sliding_window_pattern", "case %d", i);
        } else {
            cr_assert_eq(s, MODEL_OK, "case %d: %s", i, e.message);
            for (int64_t il = 0; il < 4; il++) {
                model_hparams l;
                model_hparams_layer(&hp, il, &l);
                const bool swa = il == 1 || il == 2;
                cr_expect_eq(model_hparams_layer_is_swa(&hp, il), swa, "case %d layer %lld", i, (long long)il);
                cr_expect_eq(l.n_head_kv, swa ? 2 : 1, "case %d layer %lld", i, (long long)il);
                cr_expect_eq(l.head_dim_k, 32);
                cr_expect_eq(l.head_dim_v, 24);
            }
            cr_expect_float_eq(hp.rope_base_swa, i == 3 ? 10000.0f : 5000.0f, 1e-3, "case %d", i);
            cr_expect_float_eq(hp.rope_freq_scale_swa, 1.0f, 1e-9);
            cr_expect_float_eq(hp.attn_value_scale, i == 2 ? 0.0f : 0.707f, 1e-7, "case %d: 1 is none", i);
            int64_t ne[3];
            cr_expect(model_role_shape_at(&hp, model_role_info_of(MODEL_ROLE_ATTN_OUT), 1, ne) && ne[0] == 4 * 24,
                      "attn_output reads 4 heads of 24 values");
        }
        gguf_close(f);
        free(b.p);
    }
}

/* deepgrove Maple's experts' SwiGLU limit as llama.cpp's maple loader reads swiglu_clamp_exp (get_key_or_arr,
 * required): one limit for every layer, or one per layer (a list of another length refused), a file without it refused
 * naming it; model_hparams_layer gives each layer's. */
Test(arch, maple_reads_its_experts_swiglu_limit_by_layer_or_for_all)
{
    const char *limits[] = { "0.5,0,2,7", "0.8", "0.5,1", NULL };
    for (int i = 0; i < 4; i++) {
        kv_spec kvs[] = { { "general.architecture", 's', "maple" },
                          { "maple.embedding_length", 'u', "64" },
                          { "maple.block_count", 'u', "4" },
                          { "maple.attention.head_count", 'u', "2" },
                          { "maple.feed_forward_length", 'u', "48" },
                          { "maple.expert_count", 'u', "4" },
                          { "maple.expert_used_count", 'u', "2" },
                          { "maple.expert_feed_forward_length", 'u', "48" },
                          { "maple.attention.layer_norm_rms_epsilon", 'f', "0.00001" },
                          { "maple.attention.sliding_window", 'u', "16" },
                          { "maple.attention.sliding_window_pattern", 'b', "1,1,1,0" },
                          /* case 3 leaves it out */
                          { "maple.swiglu_clamp_exp", i == 1 ? 'f' : 'F', limits[i] ? limits[i] : "1" } };
        tbuf b;
        model_hparams hp;
        model_error e;
        gguf_file *f = hparams_file_with(kvs, i == 3 ? N(kvs) - 1 : N(kvs), &b);
        const model_status s = model_hparams_read(f, &hp, &e);
        if (i >= 2) {
            cr_expect_neq(s, MODEL_OK, "case %d is refused", i);
            cr_expect_str_eq(e.subject, "maple.swiglu_clamp_exp", "case %d", i);
        } else {
            /* (a file of keys alone: the check after the keys finds no expert tensors) */
            cr_assert(s == MODEL_OK || !strcmp(e.subject, "maple.expert_count"), "case %d: %s", i, e.message);
            const float want[2][4] = { { 0.5f, 0.0f, 2.0f, 7.0f }, { 0.8f, 0.8f, 0.8f, 0.8f } };
            for (int64_t il = 0; il < 4; il++) {
                model_hparams l;
                model_hparams_layer(&hp, il, &l);
                cr_expect_float_eq(l.swiglu_clamp_exp, want[i][il], 1e-7, "case %d layer %lld", i, (long long)il);
                cr_expect_eq(model_hparams_layer_rotates(&hp, il), il != 3, "the sliding layers alone rotate");
            }
        }
        gguf_close(f);
        free(b.p);
    }
}

/* StepFun Step-3.5's files as llama.cpp's step35 loader reads them: head counts per layer, the full layers rotating
 * half of rope.dimension_count and the sliding ones all of it (rope_freqs sized by the wider), attn_gate one row per
 * head, both SwiGLU limits by layer where present (absent: none), the expert gating function sigmoid where the file
 * has none. */
Test(arch, step35_rotates_half_on_full_layers_and_reads_both_limits)
{
    for (int i = 0; i < 2; i++) {
        kv_spec kvs[] = { { "general.architecture", 's', "step35" },
                          { "step35.embedding_length", 'u', "64" },
                          { "step35.block_count", 'u', "4" },
                          { "step35.attention.head_count", 'i', "4,2,2,4" },
                          { "step35.attention.head_count_kv", 'i', "2,1,1,2" },
                          { "step35.attention.key_length", 'u', "32" },
                          { "step35.attention.value_length", 'u', "32" },
                          { "step35.rope.dimension_count", 'u', "32" },
                          { "step35.feed_forward_length", 'u', "96" },
                          { "step35.expert_count", 'u', "4" },
                          { "step35.expert_used_count", 'u', "2" },
                          { "step35.expert_feed_forward_length", 'u', "48" },
                          { "step35.attention.layer_norm_rms_epsilon", 'f', "0.00001" },
                          { "step35.attention.sliding_window", 'u', "16" },
                          { "step35.attention.sliding_window_pattern", 'b', "0,1,1,0" },
                          { "step35.swiglu_clamp_exp", 'F', "0,0.5,1,2" },
                          { "step35.swiglu_clamp_shexp", 'F', "0.25,0,1,0" } };
        tbuf b;
        model_hparams hp;
        model_error e;
        gguf_file *f = hparams_file_with(kvs, i == 0 ? N(kvs) : N(kvs) - 2, &b); /* case 1 without the limits */
        const model_status s = model_hparams_read(f, &hp, &e);
        /* (a file of keys alone: the check after the keys finds no expert tensors) */
        cr_assert(s == MODEL_OK || !strcmp(e.subject, "step35.expert_count"), "case %d: %s", i, e.message);
        const float exp_limit[4] = { 0.0f, 0.5f, 1.0f, 2.0f }, shexp_limit[4] = { 0.25f, 0.0f, 1.0f, 0.0f };
        for (int64_t il = 0; il < 4; il++) {
            model_hparams l;
            model_hparams_layer(&hp, il, &l);
            const bool swa = il == 1 || il == 2;
            cr_expect_eq(l.n_rot, swa ? 32 : 16, "layer %lld rotates %lld", (long long)il, (long long)l.n_rot);
            cr_expect_eq(l.n_head, swa ? 2 : 4);
            cr_expect_float_eq(l.swiglu_clamp_exp, i ? 0.0f : exp_limit[il], 1e-7, "case %d layer %lld", i,
                               (long long)il);
            cr_expect_float_eq(l.swiglu_clamp_shexp, i ? 0.0f : shexp_limit[il], 1e-7);
            int64_t ne[3];
            cr_expect(model_role_shape_at(&hp, model_role_info_of(MODEL_ROLE_ATTN_GATE), il, ne) && ne[1] == l.n_head,
                      "attn_gate: a row per head");
        }
        int64_t ne[3];
        cr_expect(model_role_shape(&hp, model_role_info_of(MODEL_ROLE_ROPE_FREQS), ne) && ne[0] == 16,
                  "rope_freqs: the sliding layers' 32 / 2");
        cr_expect_eq(hp.moe_gating, MODEL_MOE_SIGMOID);
        gguf_close(f);
        free(b.p);
    }
}

/* Cohere2 MoE's files as llama.cpp's cohere2moe loader reads them: LayerNorms on attention.layer_norm_epsilon, RMSNorms
 * where attention.layer_norm_rms_epsilon is there, neither refused; a window pattern of one flag per trunk layer where
 * block_count counts a prediction block too (its converter's), any other length refused; the sliding layers and the
 * leading dense ones rotate (keys alone: no expert tensors, so no experts). */
Test(arch, cohere2moe_norms_by_key_and_its_trunk_pattern)
{
    const char *norm_key[] = { "cohere2moe.attention.layer_norm_epsilon", "cohere2moe.attention.layer_norm_rms_epsilon",
                               "cohere2moe.no_such_epsilon", "cohere2moe.attention.layer_norm_epsilon" };
    for (int i = 0; i < 4; i++) {
        const kv_spec kvs[] = { { "general.architecture", 's', "cohere2moe" },
                                { "cohere2moe.embedding_length", 'u', "64" },
                                { "cohere2moe.block_count", 'u', "5" },
                                { "cohere2moe.nextn_predict_layers", 'u', "1" },
                                { "cohere2moe.attention.head_count", 'u', "4" },
                                { "cohere2moe.feed_forward_length", 'u', "128" },
                                { "cohere2moe.leading_dense_block_count", 'u', "1" },
                                { "cohere2moe.logit_scale", 'f', "0.5" },
                                { "cohere2moe.attention.sliding_window", 'u', "16" },
                                { norm_key[i], 'f', "0.00001" },
                                { "cohere2moe.attention.sliding_window_pattern", 'b', i == 3 ? "0,1,1" : "0,1,1,0" } };
        tbuf b;
        model_hparams hp;
        model_error e;
        gguf_file *f = hparams_file_with(kvs, N(kvs), &b);
        const model_status s = model_hparams_read(f, &hp, &e);
        if (i >= 2) {
            cr_expect_neq(s, MODEL_OK, "case %d is refused", i);
            cr_expect_str_eq(e.subject, i == 2 ? "cohere2moe.attention.layer_norm_epsilon"
                                               : "cohere2moe.attention.sliding_window_pattern", "case %d", i);
        } else {
            cr_assert_eq(s, MODEL_OK, "case %d: %s", i, e.message);
            cr_expect_eq(hp.norm_layer, i == 0, "case %d: LayerNorms on their key, RMSNorms on theirs", i);
            const bool rotates[5] = { true, true, true, false, false }; /* the dense layer 0, the sliding 1 and 2 */
            for (int64_t il = 0; il < 4; il++) {
                cr_expect_eq(model_hparams_layer_is_swa(&hp, il), il == 1 || il == 2, "layer %lld", (long long)il);
                cr_expect_eq(model_hparams_layer_rotates(&hp, il), rotates[il], "layer %lld", (long long)il);
            }
            cr_expect_not(model_hparams_layer_is_swa(&hp, 4), "the prediction block the pattern does not list");
        }
        gguf_close(f);
        free(b.p);
    }
}
