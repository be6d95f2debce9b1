/*
 * The one hyperparameter reader (model/hparams.c, model/hparams_check.c): llama.cpp's defaults, the
 * sliding-window pattern and its overrides, each family's keys read where its loader reads them, and refusals
 * that name the key. The experts' keys: test_hparams_experts.
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

Test(arch, llama_cpp_s_defaults_fill_absent_keys)
{
    const kv_spec kvs[] = { { "general.architecture", 's', "llama" }, { "llama.embedding_length", 'u', "256" },
                            { "llama.block_count", 'u', "4" },        { "llama.attention.head_count", 'u', "8" },
                            { "llama.feed_forward_length", 'u', "512" } };
    tbuf b;
    gguf_file *f = hparams_file_with(kvs, N(kvs), &b);
    model_hparams hp;
    model_error e;
    cr_assert_eq(model_hparams_read(f, &hp, &e), MODEL_OK, "%s", e.message);
    cr_assert_eq(hp.arch, model_arch_find("llama", 5));
    cr_assert_eq(hp.n_head_kv, 8, "head_count_kv defaults to head_count");
    cr_assert_eq(hp.head_dim_k, 32, "key_length defaults to n_embd / n_head");
    cr_assert_eq(hp.head_dim_v, 32);
    cr_assert_eq(hp.n_rot, 32, "rope.dimension_count defaults to the head dim");
    cr_assert_float_eq(hp.eps, 1e-5f, 0);
    cr_assert_float_eq(hp.rope_base, 10000.0f, 0);
    cr_assert(hp.eps_defaulted && hp.rope_base_defaulted && !hp.head_dim_from_key_length && !hp.n_rot_from_key);
    cr_assert_eq(hp.swa_window, 0);
    cr_assert_not(model_hparams_layer_is_swa(&hp, 0));
    cr_assert_float_eq(hp.attn_scale, 1.0f / sqrtf(32.0f), 0);
    cr_assert_float_eq(hp.embd_scale, 1.0f, 0);
    cr_assert_eq(hp.file_type, -1);
    cr_assert_eq(model_hparams_dim(&hp, MODEL_DIM_KV_K), 256);
    gguf_close(f);
    free(b.p);
}

/* gemma3: sliding window on 5 of every 6 layers by default, with rope base 10000 there; a period or a
 * per-layer list in attention.sliding_window_pattern overrides it; embeddings scaled by sqrt(n_embd);
 * q.k scaled by 1/sqrt(key_length), except the 62-layer (27B) model's 1/sqrt(n_embd / n_head). */
Test(arch, gemma3_sliding_window_pattern_and_scales)
{
    kv_spec kvs[] = { { "general.architecture", 's', "gemma3" },  { "gemma3.embedding_length", 'u', "640" },
                      { "gemma3.block_count", 'u', "8" },          { "gemma3.attention.head_count", 'u', "4" },
                      { "gemma3.attention.key_length", 'u', "256" }, { "gemma3.rope.freq_base", 'f', "1000000" },
                      { "gemma3.attention.value_length", 'u', "256" }, /* as the converter writes both */
                      { "gemma3.attention.sliding_window", 'u', "512" },
                      { "gemma3.final_logit_softcapping", 'f', "30" },
                      { "gemma3.feed_forward_length", 'u', "2048" },
                      { "gemma3.attention.sliding_window_pattern", 'u', "3" } };
    tbuf b;
    gguf_file *f = hparams_file_with(kvs, N(kvs) - 1, &b); /* first without the pattern key */
    model_hparams hp;
    model_error e;
    cr_assert_eq(model_hparams_read(f, &hp, &e), MODEL_OK, "%s", e.message);
    const bool want6[8] = { 1, 1, 1, 1, 1, 0, 1, 1 };
    for (int il = 0; il < 8; il++)
        cr_assert_eq(model_hparams_layer_is_swa(&hp, il), want6[il], "layer %d", il);
    cr_assert_eq(hp.swa_window, 512);
    cr_assert_float_eq(hp.rope_base_swa, 10000.0f, 0, "llama.cpp's default for sliding layers");
    cr_assert_float_eq(hp.rope_base, 1e6f, 0);
    cr_assert_float_eq(hp.embd_scale, sqrtf(640.0f), 0);
    cr_assert_float_eq(hp.attn_scale, 1.0f / 16.0f, 0);
    cr_assert_float_eq(hp.final_softcap, 30.0f, 0);
    gguf_close(f);
    free(b.p);

    f = hparams_file_with(kvs, N(kvs), &b); /* period 3: layers 2 and 5 are global */
    cr_assert_eq(model_hparams_read(f, &hp, &e), MODEL_OK, "%s", e.message);
    for (int il = 0; il < 8; il++)
        cr_assert_eq(model_hparams_layer_is_swa(&hp, il), il % 3 < 2, "layer %d", il);
    gguf_close(f);
    free(b.p);

    kvs[N(kvs) - 1] = (kv_spec){ "gemma3.attention.sliding_window_pattern", 'b', "1,0,0,1,1,1,1,0" };
    f = hparams_file_with(kvs, N(kvs), &b);
    cr_assert_eq(model_hparams_read(f, &hp, &e), MODEL_OK, "%s", e.message);
    const bool listed[8] = { 1, 0, 0, 1, 1, 1, 1, 0 };
    for (int il = 0; il < 8; il++)
        cr_assert_eq(model_hparams_layer_is_swa(&hp, il), listed[il], "layer %d", il);
    gguf_close(f);
    free(b.p);

    kvs[N(kvs) - 1] = (kv_spec){ "gemma3.attention.sliding_window_pattern", 'b', "1,0,1" };
    f = hparams_file_with(kvs, N(kvs), &b);
    cr_assert_neq(model_hparams_read(f, &hp, &e), MODEL_OK, "3 flags for 8 layers");
    cr_assert_str_eq(e.subject, "gemma3.attention.sliding_window_pattern");
    cr_assert(strstr(e.message, "3 layers") && strstr(e.message, "8"), "%s", e.message);
    gguf_close(f);
    free(b.p);

    kvs[2] = (kv_spec){ "gemma3.block_count", 'u', "62" };
    f = hparams_file_with(kvs, 10, &b); /* without the pattern */
    cr_assert_eq(model_hparams_read(f, &hp, &e), MODEL_OK, "%s", e.message);
    cr_assert_float_eq(hp.attn_scale, 1.0f / sqrtf(160.0f), 0, "27B: 1/sqrt(n_embd / n_head)");
    gguf_close(f);
    free(b.p);
}

/* Bad keys are named; everything else is still read (the audit sees all it can). */
Test(arch, bad_keys_are_named_and_the_rest_still_read)
{
    const kv_spec kvs[] = { { "general.architecture", 's', "qwen3" },        { "qwen3.embedding_length", 's', "256" },
                            { "qwen3.block_count", 'u', "3000000000" },      { "qwen3.attention.head_count", 'u', "4" },
                            { "qwen3.attention.layer_norm_rms_epsilon", 'u', "1" } };
    tbuf b;
    gguf_file *f = hparams_file_with(kvs, N(kvs), &b);
    model_hparams hp;
    model_error e;
    cr_assert_eq(model_hparams_read(f, &hp, &e), MODEL_E_MALFORMED);
    cr_assert_str_eq(e.subject, "qwen3.embedding_length", "the first problem: %s", e.message);
    cr_assert_neq(e.offset, 0);
    cr_assert_eq(hp.n_embd, 0);
    cr_assert_eq(hp.n_layer, 0, "2^31 and more layers are out of range");
    cr_assert_eq(hp.n_head, 4, "read past the problems");
    gguf_close(f);
    free(b.p);

    const kv_spec missing[] = { { "general.architecture", 's', "qwen3" }, { "qwen3.block_count", 'u', "2" } };
    f = hparams_file_with(missing, N(missing), &b);
    cr_assert_eq(model_hparams_read(f, &hp, &e), MODEL_E_MALFORMED);
    cr_assert_str_eq(e.subject, "qwen3.embedding_length");
    cr_assert(strstr(e.message, "incomplete"), "%s", e.message);
    gguf_close(f);
    free(b.p);

    const kv_spec other[] = { { "general.architecture", 's', "rwkv6" }, { "rwkv6.embedding_length", 'u', "64" },
                              { "rwkv6.block_count", 'u', "2" }, { "rwkv6.attention.head_count", 'u', "1" } };
    f = hparams_file_with(other, N(other), &b);
    cr_assert_eq(model_hparams_read(f, &hp, &e), MODEL_E_UNSUPPORTED, "an undescribed architecture: not run");
    cr_assert_null(hp.arch);
    cr_assert_str_eq(hp.arch_name, "rwkv6");
    cr_assert_eq(hp.n_embd, 64);
    gguf_close(f);
    free(b.p);
}

/* deepseek2's keys as llama.cpp's loader reads and asserts them: q_lora_rank required but in the "lite" shapes it
 * knows by their layer count (which take the query straight from the input whatever the key says), key_length_mla
 * and value_length_mla together, the split form's cache sizes (key kv_lora_rank + rope, value kv_lora_rank, one
 * key/value head), the groups of experts; and the scores' scale YaRN and DeepSeek's yarn_log_multiplier make. Each
 * refusal names its key. */
Test(arch, latent_attention_keys_are_read_and_checked_as_llama_cpp_does)
{
    kv_spec kvs[] = { { "general.architecture", 's', "deepseek2" },     { "deepseek2.embedding_length", 'u', "256" },
                      { "deepseek2.block_count", 'u', "5" },            { "deepseek2.attention.head_count", 'u', "4" },
                      { "deepseek2.attention.head_count_kv", 'u', "1" }, { "deepseek2.attention.key_length", 'u', "80" },
                      { "deepseek2.attention.value_length", 'u', "64" }, { "deepseek2.rope.dimension_count", 'u', "16" },
                      { "deepseek2.attention.kv_lora_rank", 'u', "64" }, { "deepseek2.feed_forward_length", 'u', "384" },
                      { "deepseek2.attention.key_length_mla", 'u', "48" },
                      { "deepseek2.attention.value_length_mla", 'u', "24" },
                      { "deepseek2.rope.scaling.type", 's', "yarn" },   { "deepseek2.rope.scaling.factor", 'f', "40" },
                      { "deepseek2.rope.scaling.yarn_log_multiplier", 'f', "0.1" },
                      { "deepseek2.attention.q_lora_rank", 'u', "96" } };
    tbuf b;
    model_hparams hp;
    model_error e;
    gguf_file *f = hparams_file_with(kvs, N(kvs), &b);
    cr_assert_eq(model_hparams_read(f, &hp, &e), MODEL_OK, "%s", e.message);
    cr_assert_eq(hp.n_lora_q, 96);
    cr_assert_eq(hp.n_lora_kv, 64);
    cr_assert_eq(hp.head_dim_k_mla, 48);
    cr_assert_eq(model_hparams_dim(&hp, MODEL_DIM_Q), 4 * 48, "q is decompressed to a head's 48 values");
    cr_assert_eq(model_hparams_dim(&hp, MODEL_DIM_KV_A), 64 + 16);
    cr_assert_eq(model_hparams_dim(&hp, MODEL_DIM_QK_NOPE), 32);
    const double mscale = 1.0 + 0.1 * log(40.0); /* llama.cpp's deepseek2 graph: mscale^2 / sqrt(key_length_mla) */
    cr_assert_float_eq(hp.attn_scale, mscale * mscale / sqrt(48.0), 1e-6);
    cr_assert_float_eq(hp.yarn_attn_factor, 1.0 / mscale, 1e-6, "the rotation's magnitude taken out of q and k");
    gguf_close(f);
    free(b.p);

    f = hparams_file_with(kvs, N(kvs) - 1, &b); /* no q_lora_rank in a shape llama.cpp does not call lite */
    cr_assert_eq(model_hparams_read(f, &hp, &e), MODEL_E_MALFORMED);
    cr_assert_str_eq(e.subject, "deepseek2.attention.q_lora_rank");
    gguf_close(f);
    free(b.p);
    kvs[2].value = "27"; /* DeepSeek-V2-Lite's 27 layers: the query straight from the input, the key not read */
    f = hparams_file_with(kvs, N(kvs), &b);
    cr_assert_eq(model_hparams_read(f, &hp, &e), MODEL_OK, "%s", e.message);
    cr_assert_eq(hp.n_lora_q, 0);
    cr_assert_eq(model_role_need(&hp, MODEL_ROLE_ATTN_Q), MODEL_NEED_REQUIRED);
    gguf_close(f);
    free(b.p);
    kvs[2].value = "5";

    static const struct {
        size_t at;
        const char *value, *subject;
    } bad[] = {
        { 5, "96", "deepseek2.attention.key_length" },      /* not kv_lora_rank + rope */
        { 6, "48", "deepseek2.attention.value_length" },    /* not kv_lora_rank */
        { 4, "4", "deepseek2.attention.head_count_kv" },    /* the split form's cache has one head */
        { 10, "16", "deepseek2.attention.key_length_mla" }, /* no key part without rotation */
    };
    for (size_t i = 0; i < N(bad); i++)
        hparams_refused_naming(kvs, N(kvs), bad[i].at, bad[i].value, bad[i].subject);
    kv_spec half[N(kvs)];
    memcpy(half, kvs, sizeof kvs);
    half[11] = half[N(kvs) - 1]; /* key_length_mla without value_length_mla */
    f = hparams_file_with(half, N(kvs) - 1, &b);
    cr_assert_eq(model_hparams_read(f, &hp, &e), MODEL_E_MALFORMED);
    cr_assert_str_eq(e.subject, "deepseek2.attention.value_length_mla");
    gguf_close(f);
    free(b.p);
}

/* rope.dimension_sections as llama.cpp reads it: required by qwen2vl (and the Qwen3-VL families), 4 counts (or one for
 * all four), each section of pairs fitting the head, at least one of the first three, and the whole head rotating
 * (qwen2vl's graph asserts n_rot == head size); glm4moe reads it where present and rotates by sections when the first
 * two are above 0 (llama.cpp's use_mrope). Each refusal names its key. */
Test(arch, rotary_sections_are_read_and_checked_as_llama_cpp_does)
{
    kv_spec kvs[] = { { "general.architecture", 's', "qwen2vl" },     { "qwen2vl.embedding_length", 'u', "256" },
                      { "qwen2vl.block_count", 'u', "2" },            { "qwen2vl.attention.head_count", 'u', "4" },
                      { "qwen2vl.feed_forward_length", 'u', "512" },  { "qwen2vl.rope.dimension_sections", 'u', "8" } };
    tbuf b;
    model_hparams hp;
    model_error e;
    gguf_file *f = hparams_file_with(kvs, N(kvs), &b); /* one value for all four sections: 4 x 8 = 32 pairs of 64 values */
    cr_assert_eq(model_hparams_read(f, &hp, &e), MODEL_OK, "%s", e.message);
    cr_assert_eq(hp.mrope, MODEL_MROPE_SECTIONS);
    for (int i = 0; i < 4; i++)
        cr_assert_eq(hp.rope_sections[i], 8);
    gguf_close(f);
    free(b.p);
    f = hparams_file_with(kvs, N(kvs) - 1, &b);
    cr_assert_eq(model_hparams_read(f, &hp, &e), MODEL_E_MALFORMED, "no sections");
    cr_assert_str_eq(e.subject, "qwen2vl.rope.dimension_sections");
    gguf_close(f);
    free(b.p);
    hparams_refused_naming(kvs, N(kvs), 5, "17", "qwen2vl.rope.dimension_sections"); /* 68 pairs: past the head */
    kv_spec part[N(kvs) + 1];
    memcpy(part, kvs, sizeof kvs);
    part[N(kvs)] = (kv_spec){ "qwen2vl.rope.dimension_count", 'u', "32" }; /* half the head rotating */
    hparams_refused_naming(part, N(part), N(kvs), "32", "qwen2vl.rope.dimension_count");

    kv_spec glm[] = { { "general.architecture", 's', "glm4moe" },      { "glm4moe.embedding_length", 'u', "256" },
                      { "glm4moe.block_count", 'u', "2" },             { "glm4moe.attention.head_count", 'u', "4" },
                      { "glm4moe.feed_forward_length", 'u', "512" },   { "glm4moe.rope.dimension_sections", 'u', "0" } };
    f = hparams_file_with(glm, N(glm), &b);
    model_hparams_read(f, &hp, &e); /* refused for want of experts: the sections are read all the same */
    cr_assert_eq(hp.mrope, MODEL_MROPE_NONE, "sections of 0: llama.cpp's use_mrope is false");
    gguf_close(f);
    free(b.p);
    glm[5].value = "8";
    f = hparams_file_with(glm, N(glm), &b);
    model_hparams_read(f, &hp, &e);
    cr_assert_eq(hp.mrope, MODEL_MROPE_SECTIONS, "GLM-4.5V's text decoder rotates by sections");
    gguf_close(f);
    free(b.p);
}

/* The YaRN keys a family's loader reads (model_yarn_key): mistral3's reads the betas and yarn_log_multiplier as written,
 * llama's neither (llama.cpp's context keeps 32 and 1); with yarn_log_multiplier 1 the rotation's magnitude is
 * get_mscale(16, 1) / get_mscale(16, 1) = 1 (llama.cpp's context, then the 1 + 0.1 ln 16 that ggml multiplies in
 * cancelled: attn_factor 1 / (1 + 0.1 ln 16)), without it get_mscale(16, 1) cancelled to 1. And mistral3 reads the
 * attention temperature. */
Test(arch, yarn_keys_and_the_attention_temperature_are_read_where_the_loader_reads_them)
{
    static const char *const archs[2] = { "mistral3", "llama" };
    for (int a = 0; a < 2; a++) {
        char k[9][96];
        const char *const suffix[9] = { "embedding_length", "block_count", "attention.head_count", "rope.scaling.type",
                                        "rope.scaling.factor", "rope.scaling.yarn_beta_fast",
                                        "rope.scaling.yarn_beta_slow", "rope.scaling.yarn_log_multiplier",
                                        "attention.temperature_scale" };
        for (int j = 0; j < 9; j++)
            snprintf(k[j], sizeof k[j], "%s.%s", archs[a], suffix[j]);
        kv_spec kvs[] = { { "general.architecture", 's', archs[a] }, { k[0], 'u', "256" }, { k[1], 'u', "2" },
                          { k[2], 'u', "4" }, { k[3], 's', "yarn" }, { k[4], 'f', "16" }, { k[5], 'f', "16" },
                          { k[6], 'f', "2" }, { k[7], 'f', "1" }, { k[8], 'f', "0.1" } };
        tbuf b;
        model_hparams hp;
        model_error e;
        gguf_file *f = hparams_file_with(kvs, N(kvs), &b);
        model_hparams_read(f, &hp, &e);
        const bool reads = a == 0;
        cr_assert_float_eq(hp.yarn_beta_fast, reads ? 16.0f : 32.0f, 0.0f, "%s", archs[a]);
        cr_assert_float_eq(hp.yarn_beta_slow, reads ? 2.0f : 1.0f, 0.0f, "%s", archs[a]);
        cr_assert_float_eq(hp.attn_temp_scale, reads ? 0.1f : 0.0f, 1e-9, "%s", archs[a]);
        const double cancel = 1.0 / (1.0 + 0.1 * log(16.0));
        cr_assert_float_eq(hp.yarn_attn_factor, reads ? cancel : 1.0, 1e-6, "%s", archs[a]);
        gguf_close(f);
        free(b.p);
    }
}

/* Llama 4 as llama.cpp's llama4 loader reads it: interleave_moe_layer_step required and picking the layers with
 * experts ((il + 1) % step == 0: the first router looked for is layer 1's), chunks of 8192 on three layers in four
 * whatever attention.sliding_window says (0 refused: llama.cpp's graph then stops on an assertion), every fourth layer
 * without positions and with the temperature (0.1, floors of 8192, offset 1), q/k normed without gains but with 128
 * experts, the shared expert as wide as an expert. */
Test(arch, llama4_keys_are_read_as_its_loader_reads_them)
{
    kv_spec kvs[] = { { "general.architecture", 's', "llama4" },          { "llama4.embedding_length", 'u', "256" },
                      { "llama4.block_count", 'u', "8" },                 { "llama4.attention.head_count", 'u', "4" },
                      { "llama4.feed_forward_length", 'u', "512" },       { "llama4.expert_count", 'u', "16" },
                      { "llama4.expert_used_count", 'u', "1" },           { "llama4.expert_feed_forward_length", 'u', "96" },
                      { "llama4.attention.sliding_window", 'u', "4096" }, { "llama4.interleave_moe_layer_step", 'u', "2" } };
    tbuf b;
    model_hparams hp;
    model_error e;
    gguf_file *f = hparams_file_with(kvs, N(kvs), &b);
    cr_assert_eq(model_hparams_read(f, &hp, &e), MODEL_E_MALFORMED); /* a header without tensors: read all the same */
    cr_assert(strstr(e.message, "blk.1.ffn_gate_inp.weight"), "the first layer with experts is layer 1: %s", e.message);
    cr_assert(!model_hparams_layer_has_experts(&hp, 0) && model_hparams_layer_has_experts(&hp, 1) &&
              !model_hparams_layer_has_experts(&hp, 2) && model_hparams_layer_has_experts(&hp, 7));
    cr_assert_eq(model_role_need_at(&hp, MODEL_ROLE_FFN_GATE_INP, 0), MODEL_NEED_ABSENT);
    cr_assert_eq(model_role_need_at(&hp, MODEL_ROLE_FFN_GATE, 0), MODEL_NEED_REQUIRED);
    cr_assert_eq(model_role_need_at(&hp, MODEL_ROLE_FFN_UP_SHEXP, 1), MODEL_NEED_REQUIRED);
    cr_assert_eq(hp.n_ff_shexp, 96, "the shared expert is an expert wide");
    cr_assert_eq(hp.swa_window, 8192, "the file's window is not read: chunks of 8192");
    cr_assert(hp.swa_chunked && hp.qk_l2_norm && hp.attn_temp_nope_only);
    cr_assert(model_hparams_layer_is_swa(&hp, 2) && !model_hparams_layer_is_swa(&hp, 3));
    cr_assert(model_hparams_layer_rotates(&hp, 2) && !model_hparams_layer_rotates(&hp, 3) &&
              !model_hparams_layer_rotates(&hp, 7));
    cr_assert_float_eq(hp.attn_temp_scale, 0.1f, 0);
    cr_assert_float_eq(hp.attn_temp_floor, 8192.0f, 0);
    cr_assert_float_eq(hp.attn_temp_offset, 1.0f, 0);
    gguf_close(f);
    free(b.p);

    kvs[5].value = "128"; /* Maverick: no q/k norm */
    f = hparams_file_with(kvs, N(kvs), &b);
    model_hparams_read(f, &hp, &e);
    cr_assert_not(hp.qk_l2_norm);
    gguf_close(f);
    free(b.p);
    kvs[5].value = "16";

    hparams_refused_naming(kvs, N(kvs), 8, "0", "llama4.attention.sliding_window");
    f = hparams_file_with(kvs, N(kvs) - 1, &b); /* no interleave step */
    cr_assert_eq(model_hparams_read(f, &hp, &e), MODEL_E_MALFORMED);
    cr_assert_str_eq(e.subject, "llama4.interleave_moe_layer_step");
    gguf_close(f);
    free(b.p);
    hparams_refused_naming(kvs, N(kvs), 5, "0", "llama4.expert_count"); /* llama.cpp's loader: no zero experts */
}

/* Cohere's keys as llama.cpp's command-r and cohere2 loaders read them: the LayerNorm's epsilon from
 * attention.layer_norm_epsilon (the RMS key not read), logits times logit_scale, cohere2's window on three layers in four
 * which alone rotate with the global base (rope.freq_base_swa read, not used); Command R+'s 64 layers with q and k
 * norms of their own gains per head (required there, absent below 64 layers, as the loader makes them). */
Test(arch, cohere_keys_are_read_as_its_loaders_read_them)
{
    kv_spec kvs[] = { { "general.architecture", 's', "cohere2" },          { "cohere2.embedding_length", 'u', "256" },
                      { "cohere2.block_count", 'u', "8" },                 { "cohere2.attention.head_count", 'u', "4" },
                      { "cohere2.feed_forward_length", 'u', "512" },       { "cohere2.attention.layer_norm_epsilon", 'f', "0.001" },
                      { "cohere2.attention.layer_norm_rms_epsilon", 'f', "0.5" }, { "cohere2.logit_scale", 'f', "0.25" },
                      { "cohere2.attention.sliding_window", 'u', "4096" }, { "cohere2.rope.freq_base", 'f', "50000" },
                      { "cohere2.rope.freq_base_swa", 'f', "10000" } };
    tbuf b;
    model_hparams hp;
    model_error e;
    gguf_file *f = hparams_file_with(kvs, N(kvs), &b);
    cr_assert_eq(model_hparams_read(f, &hp, &e), MODEL_OK, "%s", e.message);
    cr_assert_float_eq(hp.eps, 0.001f, 0, "the LayerNorm's own key");
    cr_assert_float_eq(hp.logit_scale, 0.25f, 0, "logits times logit_scale");
    cr_assert_eq(hp.swa_window, 4096);
    cr_assert(model_hparams_layer_is_swa(&hp, 0) && !model_hparams_layer_is_swa(&hp, 3));
    cr_assert(model_hparams_layer_rotates(&hp, 2) && !model_hparams_layer_rotates(&hp, 3), "the window's layers alone");
    cr_assert_float_eq(hp.rope_base_swa, 50000.0f, 0, "the graph rotates with the global base");
    cr_assert_eq(model_role_need(&hp, MODEL_ROLE_OUTPUT), MODEL_NEED_ABSENT, "the output is the token embedding");
    gguf_close(f);
    free(b.p);

    kv_spec cr[] = { { "general.architecture", 's', "command-r" },     { "command-r.embedding_length", 'u', "256" },
                     { "command-r.block_count", 'u', "40" },           { "command-r.attention.head_count", 'u', "4" },
                     { "command-r.feed_forward_length", 'u', "512" } };
    f = hparams_file_with(cr, N(cr), &b);
    cr_assert_eq(model_hparams_read(f, &hp, &e), MODEL_OK, "%s", e.message);
    cr_assert_float_eq(hp.logit_scale, 1.0f, 0, "no logit_scale: none");
    cr_assert_eq(model_role_need_at(&hp, MODEL_ROLE_ATTN_Q_NORM, 0), MODEL_NEED_ABSENT, "40 layers: no q/k norms");
    gguf_close(f);
    free(b.p);
    cr[2].value = "64"; /* Command R+: each head of q and k LayerNormed with gains of its own */
    f = hparams_file_with(cr, N(cr), &b);
    cr_assert_eq(model_hparams_read(f, &hp, &e), MODEL_OK, "%s", e.message);
    cr_assert_eq(model_role_need_at(&hp, MODEL_ROLE_ATTN_Q_NORM, 0), MODEL_NEED_REQUIRED);
    cr_assert_eq(model_role_need_at(&hp, MODEL_ROLE_ATTN_K_NORM, 63), MODEL_NEED_REQUIRED);
    int64_t ne[3];
    cr_assert(model_role_shape(&hp, model_role_info_of(MODEL_ROLE_ATTN_Q_NORM), ne));
    cr_assert(ne[0] == 64 && ne[1] == 4 && ne[2] == 1, "(key_length, head_count): [%lld, %lld]", (long long)ne[0],
              (long long)ne[1]);
    gguf_close(f);
    free(b.p);
}

/* Hunyuan dense as llama.cpp's hunyuan-dense loader reads it: rope.scaling.alpha scales the base NTK-wise (base *
 * alpha^(d / (d - 2)) in f32 for a head of d), an expert_count of 1 is a dense model (its loader zeroes it), the q/k
 * norms come after the rotation (the entry's flag the engine and --memory follow). */
Test(arch, hunyuan_dense_keys_are_read_as_its_loader_reads_them)
{
    kv_spec kvs[] = { { "general.architecture", 's', "hunyuan-dense" },  { "hunyuan-dense.embedding_length", 'u', "256" },
                      { "hunyuan-dense.block_count", 'u', "2" },         { "hunyuan-dense.attention.head_count", 'u', "4" },
                      { "hunyuan-dense.feed_forward_length", 'u', "512" }, { "hunyuan-dense.rope.freq_base", 'f', "10000" },
                      { "hunyuan-dense.expert_count", 'u', "1" },        { "hunyuan-dense.expert_used_count", 'u', "1" },
                      { "hunyuan-dense.rope.scaling.alpha", 'f', "1000" } };
    tbuf b;
    model_hparams hp;
    model_error e;
    gguf_file *f = hparams_file_with(kvs, N(kvs), &b);
    cr_assert_eq(model_hparams_read(f, &hp, &e), MODEL_OK, "%s", e.message);
    cr_assert_eq(hp.n_expert, 0, "one expert: dense");
    cr_assert_float_eq(hp.rope_base, 10000.0f * powf(1000.0f, 64.0f / 62.0f), 0, "the NTK-scaled base");
    cr_assert(hp.arch->qk_norm_after_rope);
    gguf_close(f);
    free(b.p);
    f = hparams_file_with(kvs, N(kvs) - 1, &b); /* no alpha: the file's base */
    cr_assert_eq(model_hparams_read(f, &hp, &e), MODEL_OK, "%s", e.message);
    cr_assert_float_eq(hp.rope_base, 10000.0f, 0);
    gguf_close(f);
    free(b.p);
}

/* Baichuan's loader types the model by its depth and its graph gives positions by that type: a NORM rotation at 32
 * layers (the 7B's), ALiBi with max_bias 8 and no rotation at 40 (the 13B's), neither at any other depth; a
 * max_alibi_bias key is not read (its loader fixes 8). */
Test(arch, baichuan_s_positions_follow_its_depth)
{
    static const struct {
        const char *layers;
        bool rotates;
        float alibi;
    } cases[] = { { "32", true, 0.0f }, { "40", false, 8.0f }, { "3", false, 0.0f }, { "33", false, 0.0f } };
    for (size_t i = 0; i < N(cases); i++) {
        kv_spec kvs[] = { { "general.architecture", 's', "baichuan" },
                          { "baichuan.embedding_length", 'u', "80" },
                          { "baichuan.block_count", 'u', cases[i].layers },
                          { "baichuan.attention.head_count", 'u', "5" },
                          { "baichuan.feed_forward_length", 'u', "128" },
                          { "baichuan.attention.max_alibi_bias", 'f', "4" } };
        tbuf b;
        model_hparams hp;
        model_error e;
        gguf_file *f = hparams_file_with(kvs, N(kvs), &b);
        cr_assert_eq(model_hparams_read(f, &hp, &e), MODEL_OK, "%s", e.message);
        for (int64_t il = 0; il < hp.n_layer; il++)
            cr_assert_eq(model_hparams_layer_rotates(&hp, il), cases[i].rotates, "%s layers: layer %lld",
                         cases[i].layers, (long long)il);
        cr_expect_float_eq(hp.alibi_max_bias, cases[i].alibi, 0.0f, "%s layers", cases[i].layers);
        gguf_close(f);
        free(b.p);
    }
}

/* Qwen 1's converter writes HF's intermediate_size, w1's rows and w2's together, as feed_forward_length; llama.cpp's
 * qwen loader makes gate, up and down half that wide, and sizes the fused q/k/v for every head its own. */
Test(arch, qwen_s_feed_forward_width_is_half_its_key)
{
    kv_spec kvs[] = { { "general.architecture", 's', "qwen" },    { "qwen.embedding_length", 'u', "128" },
                      { "qwen.block_count", 'u', "2" },            { "qwen.attention.head_count", 'u', "4" },
                      { "qwen.feed_forward_length", 'u', "512" }, { "qwen.attention.head_count_kv", 'u', "2" } };
    for (size_t n = N(kvs) - 1; n <= N(kvs); n++) {
        tbuf b;
        model_hparams hp;
        model_error e;
        gguf_file *f = hparams_file_with(kvs, n, &b);
        const model_status st = model_hparams_read(f, &hp, &e);
        if (n < N(kvs)) {
            cr_assert_eq(st, MODEL_OK, "%s", e.message);
            cr_expect_eq(hp.n_ff, 256, "feed_forward_length 512: blocks 256 wide");
        } else {
            cr_assert_eq(st, MODEL_E_MALFORMED, "grouped heads: %s", e.message);
            cr_expect_str_eq(e.subject, "qwen.attention.head_count_kv");
        }
        gguf_close(f);
        free(b.p);
    }
}
