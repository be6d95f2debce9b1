/*
 * The architectures' descriptions (model/arch.c): tensor names against gguf-py's
 * own lists, each role's form as the file's keys and tensors pick it.
 */
#include "gguf.h"
#include "model.h"
#include "testutil.h"

#include <cJSON.h>
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

Test(arch, names_and_roles_round_trip)
{
    cr_assert_str_eq(model_arch_names(),
                     "llama, llama4, mistral3, internlm2, smollm3, seed_oss, deci, xverse, pangu-embedded, bitnet, "
                     "openelm, baichuan, refact, plamo, nanbeige, maincoder, apertus, qwen, qwen2, qwen3, qwen2moe, "
                     "qwen3moe, qwen2vl, qwen3vl, qwen3vlmoe, qwen35, qwen35moe, qwen3next, lfm2, lfm2moe, nemotron_h, "
                     "nemotron_h_moe, granitehybrid, falcon-h1, mamba2, jamba, mamba, starcoder2, jais2, codeshell, "
                     "jais, gpt2, starcoder, bloom, mpt, olmo, orion, nemotron, stablelm, phi2, falcon, gptneox, "
                     "arcee, hunyuan-dense, hunyuan_vl, hunyuan-moe, hy_v3, gpt-oss, glm4, chatglm, glm4moe, "
                     "minimax-m2, olmoe, dbrx, arctic, grok, ernie4_5, ernie4_5-moe, bailingmoe, bailingmoe2, "
                     "exaone-moe, afmoe, mellum, smallthinker, phimoe, dots1, deepseek, deepseek2, mistral4, minicpm3, "
                     "plm, mimo2, maple, step35, laguna, spark2_5, command-r, cohere2, cohere2moe, phi3, granite, "
                     "minicpm, granitemoe, granite_swa, olmo2, exaone, exaone4, plamo3, talkie, gemma, gemma2, gemma3, "
                     "gemma4");
    cr_assert_eq(model_arch_count(), 103);
    cr_assert_null(model_arch_find("llam", 4), "a prefix is not a name");
    cr_assert_null(model_arch_find("llama2", 6));
    cr_assert_null(model_arch_find(NULL, 0));
    cr_assert_not_null(model_arch_find("gemma3", 6));
    for (int r = 0; r < MODEL_ROLE_COUNT; r++) {
        const model_role_info *ri = model_role_info_of((model_role)r);
        char name[128];
        snprintf(name, sizeof name, ri->per_layer ? "blk.17.%s" : "%s", ri->name);
        int64_t layer;
        cr_assert_eq(model_role_of_name(name, &layer), (model_role)r, "%s", name);
        cr_assert_eq(layer, ri->per_layer ? 17 : -1);
        cr_assert(ri->what && ri->what[0]);
        if (ri->bare) { /* the bare name is the same role: Falcon-H1's blk.N.ffn_norm */
            snprintf(name, sizeof name, "blk.17.%s", ri->bare);
            cr_assert_eq(model_role_of_name(name, &layer), (model_role)r, "%s", name);
        }
    }
    const model_arch *falcon = model_arch_find("falcon-h1", 9);
    cr_assert(falcon);
    cr_assert_str_eq(model_role_name(falcon, MODEL_ROLE_FFN_NORM), "ffn_norm", "its converter's name, no .weight");
    cr_assert_str_eq(model_role_name(model_arch_find("llama", 5), MODEL_ROLE_FFN_NORM), "ffn_norm.weight");
    cr_assert_str_eq(model_role_name(falcon, MODEL_ROLE_ATTN_NORM), "attn_norm.weight");
    cr_assert_str_eq(model_role_name(falcon, MODEL_ROLE_FFN_EXP_PROBS_B), "exp_probs_b.bias");
    const model_arch *hy = model_arch_find("hy_v3", 5);
    cr_assert(hy);
    cr_assert_str_eq(model_role_name(hy, MODEL_ROLE_FFN_EXP_PROBS_B), "exp_probs_b", "its loader's name, no .bias");
    cr_assert_str_eq(model_role_name(hy, MODEL_ROLE_FFN_NORM), "ffn_norm.weight");
    cr_assert_str_eq(model_role_name(model_arch_find("glm4moe", 7), MODEL_ROLE_FFN_EXP_PROBS_B), "exp_probs_b.bias");
    const model_arch *plamo3 = model_arch_find("plamo3", 6);
    cr_assert(plamo3);
    cr_assert_str_eq(model_role_name(plamo3, MODEL_ROLE_ATTN_POST_NORM), "post_attention_norm", "no .weight");
    cr_assert_str_eq(model_role_name(plamo3, MODEL_ROLE_FFN_POST_NORM), "post_ffw_norm", "no .weight");
    cr_assert_str_eq(model_role_name(model_arch_find("gemma2", 6), MODEL_ROLE_FFN_POST_NORM), "post_ffw_norm.weight");
    int64_t layer;
    const char *not_roles[] = { "blk.x.attn_q.weight", "blk.-1.attn_q.weight", "blk.3.attn_qkvz.weight",
                                "attn_q.weight", "blk.3.token_embd.weight", "blk.3", "" };
    for (size_t i = 0; i < sizeof not_roles / sizeof not_roles[0]; i++) {
        cr_assert_eq(model_role_of_name(not_roles[i], &layer), MODEL_ROLE_COUNT, "%s", not_roles[i]);
        cr_assert_eq(layer, -1);
    }
    /* every architecture here is a decoder: these roles are always required (q, k and v, or the fused attn_qkv:
     * phi3); its feed-forward block is dense (gate and up fused: phi3), or experts where it is a mixture (or either,
     * by expert_count: llama) */
    const model_role always[] = { MODEL_ROLE_TOKEN_EMBD, MODEL_ROLE_ATTN_OUT };
    const model_role dense[] = { MODEL_ROLE_FFN_GATE, MODEL_ROLE_FFN_UP, MODEL_ROLE_FFN_DOWN },
                     experts[] = { MODEL_ROLE_FFN_GATE_INP, MODEL_ROLE_FFN_GATE_EXPS, MODEL_ROLE_FFN_UP_EXPS,
                                   MODEL_ROLE_FFN_DOWN_EXPS };
    /* ... but the state-space models (Mamba): every layer a mixer after its norm, nothing of attention or a
     * feed-forward block anywhere */
    const model_role neither[] = { MODEL_ROLE_ATTN_Q, MODEL_ROLE_ATTN_K, MODEL_ROLE_ATTN_V, MODEL_ROLE_ATTN_QKV,
                                   MODEL_ROLE_ATTN_OUT, MODEL_ROLE_FFN_NORM, MODEL_ROLE_FFN_GATE, MODEL_ROLE_FFN_UP,
                                   MODEL_ROLE_FFN_DOWN, MODEL_ROLE_FFN_GATE_INP, MODEL_ROLE_FFN_DOWN_EXPS };
    for (size_t a = 0; a < model_arch_count(); a++) {
        const model_arch *ar = model_arch_at(a);
        if (ar->attention_free) {
            cr_assert(ar->need[MODEL_ROLE_TOKEN_EMBD] == MODEL_NEED_REQUIRED &&
                          ar->need[MODEL_ROLE_OUTPUT_NORM] == MODEL_NEED_REQUIRED &&
                          ar->need_recurrent[MODEL_ROLE_ATTN_NORM] == MODEL_NEED_REQUIRED &&
                          ar->need_recurrent[MODEL_ROLE_SSM_IN] == MODEL_NEED_REQUIRED &&
                          ar->need_recurrent[MODEL_ROLE_SSM_OUT] == MODEL_NEED_REQUIRED && ar->single_block && !ar->moe,
                      "%s", ar->name);
            for (size_t k = 0; k < sizeof neither / sizeof neither[0]; k++)
                cr_assert(ar->need[neither[k]] == MODEL_NEED_ABSENT &&
                              ar->need_recurrent[neither[k]] == MODEL_NEED_ABSENT &&
                              ar->need_ffn[neither[k]] == MODEL_NEED_ABSENT,
                          "%s: %s", ar->name, model_role_info_of(neither[k])->name);
            continue;
        }
        for (size_t k = 0; k < sizeof always / sizeof always[0]; k++)
            cr_assert_eq(ar->need[always[k]], MODEL_NEED_REQUIRED, "%s: %s", ar->name,
                         model_role_info_of(always[k])->name);
        /* the final norm, under LFM2's name for it there; the other name absent but where it is the embeddings' norm
         * (BLOOM's); none at all where the norms have no gains (OLMo's) */
        const model_role final_norm = ar->final_norm_embd_named ? MODEL_ROLE_TOKEN_EMBD_NORM : MODEL_ROLE_OUTPUT_NORM;
        const model_role other = (model_role)(MODEL_ROLE_OUTPUT_NORM + MODEL_ROLE_TOKEN_EMBD_NORM - final_norm);
        const model_need want = ar->norms_without_gains ? MODEL_NEED_ABSENT : MODEL_NEED_REQUIRED;
        cr_assert(ar->need[final_norm] == want &&
                      (ar->need[other] == MODEL_NEED_ABSENT || (ar->embd_norm && other == MODEL_ROLE_TOKEN_EMBD_NORM)),
                  "%s: one final norm", ar->name);
        cr_assert(!ar->embd_norm || !ar->final_norm_embd_named, "%s: token_embd_norm is one norm or the other",
                  ar->name);
        /* a hybrid's other kind of layer: its input norm, its own block, the same feed-forward block */
        const bool mamba_hybrid = (ar->mamba2 || ar->mamba1) && !ar->single_block && !ar->mixer_beside;
        cr_assert(!(ar->delta_net || ar->shortconv || mamba_hybrid) ||
                      (ar->need_recurrent[MODEL_ROLE_ATTN_NORM] == MODEL_NEED_REQUIRED &&
                       ar->need_recurrent[MODEL_ROLE_ATTN_Q] == MODEL_NEED_ABSENT &&
                       ar->need_recurrent[MODEL_ROLE_FFN_DOWN] == ar->need[MODEL_ROLE_FFN_DOWN] &&
                       ar->need_recurrent[MODEL_ROLE_FFN_DOWN_EXPS] == ar->need[MODEL_ROLE_FFN_DOWN_EXPS]),
                  "%s", ar->name);
        /* a mixer beside every layer's attention (Falcon-H1): both blocks' roles in every layer, no other kind */
        cr_assert(!ar->mixer_beside ||
                      (ar->mamba2 && ar->need[MODEL_ROLE_ATTN_Q] == MODEL_NEED_REQUIRED &&
                       ar->need[MODEL_ROLE_SSM_IN] == MODEL_NEED_REQUIRED &&
                       ar->need_recurrent[MODEL_ROLE_ATTN_NORM] == MODEL_NEED_ABSENT),
                  "%s", ar->name);
        /* q, k and v apart, or fused where the family may fuse them (phi3), or only fused (bailingmoe2); v optional
         * where a layer's keys may serve as its values (Gemma 4) */
        static const model_need qkv_apart[3] = { [MODEL_NEED_ABSENT] = MODEL_NEED_REQUIRED,
                                                 [MODEL_NEED_OPTIONAL] = MODEL_NEED_OPTIONAL,
                                                 [MODEL_NEED_REQUIRED] = MODEL_NEED_ABSENT };
        for (int r = MODEL_ROLE_ATTN_Q; r <= MODEL_ROLE_ATTN_V && !ar->mla; r++)
            cr_assert_eq(ar->need[r], r == MODEL_ROLE_ATTN_V && ar->v_from_k ? MODEL_NEED_OPTIONAL
                                                                             : qkv_apart[ar->need[MODEL_ROLE_ATTN_QKV]],
                         "%s", ar->name);
        /* or latent attention: keys and values from one compressed row, no attn_k or attn_v */
        cr_assert(!ar->mla || (ar->need[MODEL_ROLE_ATTN_KV_A_MQA] == MODEL_NEED_REQUIRED &&
                               ar->need[MODEL_ROLE_ATTN_K] == MODEL_NEED_ABSENT &&
                               ar->need[MODEL_ROLE_ATTN_V] == MODEL_NEED_ABSENT), "%s", ar->name);
        /* one block a layer (Nemotron-H): the feed-forward layers' roles apart, neither mixer's in them, no
         * feed-forward block in the mixers' */
        const uint8_t *ffn = ar->single_block ? ar->need_ffn : ar->need;
        cr_assert(!ar->single_block ||
                      (ar->need_ffn[MODEL_ROLE_ATTN_NORM] == MODEL_NEED_REQUIRED &&
                       ar->need_ffn[MODEL_ROLE_ATTN_Q] == MODEL_NEED_ABSENT &&
                       ar->need_ffn[MODEL_ROLE_SSM_IN] == MODEL_NEED_ABSENT &&
                       ar->need[MODEL_ROLE_FFN_DOWN] == MODEL_NEED_ABSENT &&
                       ar->need_recurrent[MODEL_ROLE_FFN_DOWN] == MODEL_NEED_ABSENT &&
                       ar->need_recurrent[MODEL_ROLE_ATTN_Q] == MODEL_NEED_ABSENT &&
                       ar->need_recurrent[MODEL_ROLE_ATTN_NORM] == MODEL_NEED_REQUIRED),
                  "%s", ar->name);
        const bool has_dense = ffn[MODEL_ROLE_FFN_DOWN] != MODEL_NEED_ABSENT;
        cr_assert(has_dense || ar->moe, "%s has neither a dense feed-forward block nor experts", ar->name);
        /* a block without a gate: phi3's fused into ffn_up, or one whose activation stands alone (relu^2, StarCoder2's
         * GELU: kern_act_alone) */
        const bool ungated = ffn[MODEL_ROLE_FFN_GATE] == MODEL_NEED_ABSENT;
        cr_assert(!has_dense || !ungated || ar->gate_up_fused || ar->act == MODEL_ACT_RELU_SQR ||
                      ar->act == MODEL_ACT_GELU_TANH || ar->act == MODEL_ACT_XIELU, "%s: no gate, and %d needs one", ar->name, ar->act);
        /* (Grok's dense block beside its experts is where the file has it: Grok-2's, not Grok-1's) */
        for (size_t k = 0; k < 3; k++)
            cr_assert_eq(ffn[dense[k]],
                         !has_dense || (dense[k] == MODEL_ROLE_FFN_GATE && ungated) ? MODEL_NEED_ABSENT
                         : ar->moe_dense_mean                                       ? MODEL_NEED_OPTIONAL
                                                                                    : MODEL_NEED_REQUIRED,
                         "%s: %s", ar->name, model_role_info_of(dense[k])->name);
        /* a norm before each block, or after it (olmo2's post-norms only), or one without gains and so without a
         * tensor (OLMo's LayerNorms, Talkie's RMSNorms), then nothing of the block norms' */
        cr_assert(ar->need[MODEL_ROLE_ATTN_NORM] == MODEL_NEED_REQUIRED ||
                      ar->need[MODEL_ROLE_ATTN_POST_NORM] == MODEL_NEED_REQUIRED ||
                      (ar->norms_without_gains &&
                       ar->need[MODEL_ROLE_ATTN_NORM] == MODEL_NEED_ABSENT &&
                       ar->need[MODEL_ROLE_FFN_NORM] == MODEL_NEED_ABSENT),
                  "%s", ar->name);
        /* the feed-forward input norm under another role's name (gpt-oss's post_attention_norm, DBRX's
         * attn_output_norm) is that role's tensor, with no ffn_norm beside it */
        if (ar->ffn_norm_from)
            cr_assert(ar->need[ar->ffn_norm_from] == MODEL_NEED_REQUIRED &&
                          ar->need[MODEL_ROLE_FFN_NORM] == MODEL_NEED_ABSENT,
                      "%s", ar->name);
        /* the experts' gate and up apart, or fused (Gemma 4's ffn_gate_up_exps), or either (granite_swa's loader takes
         * the one or the two), or up alone (relu^2: Nemotron 3 Nano) */
        const bool fused_experts = ffn[MODEL_ROLE_FFN_GATE_UP_EXPS] == MODEL_NEED_REQUIRED;
        const bool either = ffn[MODEL_ROLE_FFN_GATE_UP_EXPS] == MODEL_NEED_OPTIONAL;
        for (size_t k = 0; k < 4; k++) {
            const bool apart = experts[k] == MODEL_ROLE_FFN_GATE_EXPS || experts[k] == MODEL_ROLE_FFN_UP_EXPS;
            const bool ungated = experts[k] == MODEL_ROLE_FFN_GATE_EXPS && ar->act == MODEL_ACT_RELU_SQR;
            cr_assert_eq(ffn[experts[k]], !ar->moe || (apart && fused_experts) || ungated ? MODEL_NEED_ABSENT
                                          : apart && either                              ? MODEL_NEED_OPTIONAL
                                                                                         : MODEL_NEED_REQUIRED,
                         "%s", ar->name);
        }
    }
}

/* A file's roles follow its expert_count: a llama with experts (Mixtral) needs the router and experts in place of
 * the dense block; without, the dense block; and the per-file need is what the architecture lists otherwise. */
Test(arch, expert_count_picks_the_feed_forward_form)
{
    model_hparams hp = { .arch = model_arch_find("llama", 5) };
    cr_assert_eq(model_role_need(&hp, MODEL_ROLE_FFN_GATE), MODEL_NEED_REQUIRED);
    cr_assert_eq(model_role_need(&hp, MODEL_ROLE_FFN_GATE_INP), MODEL_NEED_ABSENT);
    cr_assert_eq(model_role_need(&hp, MODEL_ROLE_ATTN_Q_BIAS), MODEL_NEED_OPTIONAL);
    hp.n_expert = 8;
    cr_assert_eq(model_role_need(&hp, MODEL_ROLE_FFN_GATE), MODEL_NEED_ABSENT);
    cr_assert_eq(model_role_need(&hp, MODEL_ROLE_FFN_DOWN_EXPS), MODEL_NEED_REQUIRED);
    cr_assert_eq(model_role_need(&hp, MODEL_ROLE_FFN_GATE_SHEXP), MODEL_NEED_ABSENT, "Mixtral has no shared expert");
    cr_assert_eq(model_role_need(&hp, MODEL_ROLE_ATTN_NORM), MODEL_NEED_REQUIRED);
    hp.arch = model_arch_find("qwen2moe", 8);
    cr_assert_eq(model_role_need(&hp, MODEL_ROLE_FFN_UP_SHEXP), MODEL_NEED_REQUIRED);
    hp.arch = NULL;
    cr_assert_eq(model_role_need(&hp, MODEL_ROLE_ATTN_NORM), MODEL_NEED_ABSENT);
}

/* Latent attention's roles follow the file's keys as llama.cpp's deepseek2 loader reads them: the query through its
 * compression where q_lora_rank > 0, else attn_q; the decompression split per head where key_length_mla is set, else
 * whole; the other form's tensors are not part of the file. */
Test(arch, latent_attention_roles_follow_the_file_s_form)
{
    model_hparams hp = { .arch = model_arch_find("deepseek2", 9), .n_expert = 8, .n_lora_q = 1536,
                         .head_dim_k_mla = 192 };
    cr_assert_eq(model_role_need(&hp, MODEL_ROLE_ATTN_Q_A), MODEL_NEED_REQUIRED);
    cr_assert_eq(model_role_need(&hp, MODEL_ROLE_ATTN_Q_B), MODEL_NEED_REQUIRED);
    cr_assert_eq(model_role_need(&hp, MODEL_ROLE_ATTN_Q), MODEL_NEED_ABSENT);
    cr_assert_eq(model_role_need(&hp, MODEL_ROLE_ATTN_K_B), MODEL_NEED_REQUIRED);
    cr_assert_eq(model_role_need(&hp, MODEL_ROLE_ATTN_V_B), MODEL_NEED_REQUIRED);
    cr_assert_eq(model_role_need(&hp, MODEL_ROLE_ATTN_KV_B), MODEL_NEED_ABSENT);
    cr_assert_eq(model_role_need(&hp, MODEL_ROLE_ATTN_KV_A_MQA), MODEL_NEED_REQUIRED);
    hp.n_lora_q = 0, hp.head_dim_k_mla = 0; /* DeepSeek-V2-Lite as converted before the split */
    cr_assert_eq(model_role_need(&hp, MODEL_ROLE_ATTN_Q), MODEL_NEED_REQUIRED);
    cr_assert_eq(model_role_need(&hp, MODEL_ROLE_ATTN_Q_A_NORM), MODEL_NEED_ABSENT);
    cr_assert_eq(model_role_need(&hp, MODEL_ROLE_ATTN_KV_B), MODEL_NEED_REQUIRED);
    cr_assert_eq(model_role_need(&hp, MODEL_ROLE_ATTN_K_B), MODEL_NEED_ABSENT);
    hp.arch = model_arch_find("llama", 5); /* the form matters to latent attention only */
    cr_assert_eq(model_role_need(&hp, MODEL_ROLE_ATTN_Q), MODEL_NEED_REQUIRED);
    cr_assert_eq(model_role_need(&hp, MODEL_ROLE_ATTN_KV_B), MODEL_NEED_ABSENT);
}

/* Every tensor a description lets a file have is one gguf-py (llama.cpp's converter side) lists for
 * that architecture: the names come from llama.cpp, not from us (for an architecture newer than the pinned gguf,
 * from llama.cpp's own gguf-py as tests/data/gguf_py_tensors_newer.json records it). */
Test(arch, every_described_tensor_is_one_gguf_py_lists)
{
    char cmd[4096];
    char names[2048] = "";
    for (size_t a = 0; a < model_arch_count(); a++)
        snprintf(names + strlen(names), sizeof names - strlen(names), " %s", model_arch_at(a)->name);
    snprintf(cmd, sizeof cmd, "'%s' tests/py/arch_tensors.py%s 2>&1", venv_python(), names);
    int st;
    char *out = run_capture(cmd, &st);
    cr_assert_eq(st, 0, "arch_tensors.py failed (is build/venv set up?): %s", out);
    cJSON *j = cJSON_Parse(out);
    cr_assert(j, "%s", out);
    for (size_t a = 0; a < model_arch_count(); a++) {
        const model_arch *ar = model_arch_at(a);
        const cJSON *names = cJSON_GetObjectItem(j, ar->name);
        cr_assert(cJSON_IsArray(names), "gguf-py has no architecture '%s'", ar->name);
        for (int r = 0; r < MODEL_ROLE_COUNT; r++) {
            if (ar->need[r] == MODEL_NEED_ABSENT && ar->need_recurrent[r] == MODEL_NEED_ABSENT)
                continue;
            const model_role_info *ri = model_role_info_of((model_role)r);
            char base[128];
            snprintf(base, sizeof base, ri->per_layer ? "blk.{bid}.%s" : "%s", ri->name);
            /* gguf-py names the tensor, .weight / .bias / .scale are its parts (a delta net's ssm_a has neither) */
            char *dot = strrchr(base, '.');
            if (dot && (!strcmp(dot, ".weight") || !strcmp(dot, ".bias") || !strcmp(dot, ".scale")))
                *dot = '\0';
            /* MPT's AWQ scales: gguf-py names the tensor blk.{bid}.ffn, its converter writes ffn.act.scales */
            const size_t len = strlen(base), awq = strlen(".act.scales");
            if (len > awq && !strcmp(base + len - awq, ".act.scales"))
                base[len - awq] = '\0';
            /* lfm2moe's loader takes an output projection (TENSOR_NOT_REQUIRED, as lfm2's) that its converter never
             * writes, so gguf-py does not list it */
            if (!strcmp(ar->name, "lfm2moe") && r == MODEL_ROLE_OUTPUT)
                continue;
            bool found = false;
            const cJSON *n;
            cJSON_ArrayForEach(n, names) found |= strcmp(n->valuestring, base) == 0;
            cr_assert(found, "%s: gguf-py lists no '%s'", ar->name, base);
        }
    }
    cJSON_Delete(j);
    free(out);
}
