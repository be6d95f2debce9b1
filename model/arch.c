/*
 * The architectures as data: one entry per architecture saying which roles (model/roles.c) it needs and what its
 * forward pass does, in one table per family (model/arch_*.c), joined here in one list; what a role's need is in a
 * given file and layer. The required/optional split, the rope mode, the activation and the defaults are those of
 * llama.cpp's src/models/<arch>.cpp and src/llama-arch.cpp.
 */
#include "arch_table.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* the families' tables in the order model_arch_at (and the names' list) goes through them */
static const struct {
    const model_arch *archs;
    const size_t *count;
} tables[] = {
    { model_archs_llama, &model_archs_llama_count },
    { model_archs_qwen, &model_archs_qwen_count },
    { model_archs_recurrent, &model_archs_recurrent_count },
    { model_archs_layernorm, &model_archs_layernorm_count },
    { model_archs_moe, &model_archs_moe_count },
    { model_archs_moe_window, &model_archs_moe_window_count },
    { model_archs_dense, &model_archs_dense_count },
    { model_archs_gemma, &model_archs_gemma_count },
};

model_need model_role_need(const model_hparams *hp, model_role r)
{
    return model_role_need_at(hp, r, -1);
}

model_need model_role_need_at(const model_hparams *hp, model_role r, int64_t il)
{
    if (!hp->arch || (unsigned)r >= MODEL_ROLE_COUNT)
        return MODEL_NEED_ABSENT;
    const model_ffn_form form = model_role_info_of(r)->form;
    const bool moe = model_hparams_layer_has_experts(hp, il);
    if ((form == MODEL_FFN_DENSE && moe && !hp->arch->moe_dense_beside && !hp->arch->moe_dense_mean &&
         !hp->arch->moe_dense_residual) ||
        (form == MODEL_FFN_MOE && !moe))
        return MODEL_NEED_ABSENT;
    const model_attn_form af = model_role_info_of(r)->attn_form;
    if (hp->arch->mla && af != MODEL_ATTN_ANY) { /* the form of latent attention the file's keys say */
        const bool lora = hp->n_lora_q > 0, split = hp->head_dim_k_mla > 0;
        const bool in_form = af == MODEL_ATTN_Q_DIRECT ? !lora : af == MODEL_ATTN_Q_LORA ? lora
                             : af == MODEL_ATTN_KV_B_WHOLE ? !split : split;
        if (!in_form)
            return MODEL_NEED_ABSENT;
    }
    if (model_role_info_of(r)->per_layer_input && hp->n_embd_per_layer <= 0) /* Gemma 4's, in E2B / E4B files only */
        return MODEL_NEED_ABSENT;
    /* a layer that reads an earlier layer's cache makes no keys or values: llama.cpp's gemma4 loader takes them
     * where the file has them (TENSOR_NOT_REQUIRED) and its graph does not read them */
    if ((r == MODEL_ROLE_ATTN_K || r == MODEL_ROLE_ATTN_V || r == MODEL_ROLE_ATTN_K_NORM) && il >= 0 &&
        model_hparams_layer_kv_source(hp, il) != il && hp->arch->need[r] != MODEL_NEED_ABSENT)
        return MODEL_NEED_OPTIONAL;
    const model_block block = model_role_info_of(r)->block;
    if (hp->arch->blocks_by_width && il >= 0 && block != MODEL_BLOCK_ANY) { /* DeciLM: the blocks its counts give */
        const bool attends = model_hparams_layer_has_attention(hp, il);
        if ((block == MODEL_BLOCK_ATTENTION && !attends) ||
            (block == MODEL_BLOCK_QKV && (!attends || !model_hparams_layer_has_kv_heads(hp, il))) ||
            (block == MODEL_BLOCK_FFN && !model_hparams_layer_has_ffn(hp, il)))
            return MODEL_NEED_ABSENT;
    }
    if ((r == MODEL_ROLE_ATTN_Q_NORM || r == MODEL_ROLE_ATTN_K_NORM) && hp->arch->qk_norm_from_layers)
        return hp->n_layer >= hp->arch->qk_norm_from_layers ? MODEL_NEED_REQUIRED : MODEL_NEED_ABSENT;
    if (!hp->arch->delta_net && !hp->arch->shortconv && !hp->arch->mamba2 && !hp->arch->mamba1)
        return (model_need)hp->arch->need[r];
    /* a hybrid's layer needs its kind's roles; any layer (il < 0), any kind's */
    const model_need attn = (model_need)hp->arch->need[r], recr = (model_need)hp->arch->need_recurrent[r];
    const model_need ffn = hp->arch->single_block ? (model_need)hp->arch->need_ffn[r] : MODEL_NEED_ABSENT;
    if (il < 0 || !model_role_info_of(r)->per_layer) {
        const model_need most = attn > recr ? attn : recr;
        return most > ffn ? most : ffn;
    }
    if (model_hparams_layer_is_recurrent(hp, il))
        return recr;
    return model_hparams_layer_is_ffn_only(hp, il) ? ffn : attn;
}

size_t model_arch_count(void)
{
    size_t n = 0;
    for (size_t t = 0; t < sizeof tables / sizeof tables[0]; t++)
        n += *tables[t].count;
    return n;
}

const model_arch *model_arch_at(size_t i)
{
    for (size_t t = 0; t < sizeof tables / sizeof tables[0]; i -= *tables[t].count, t++)
        if (i < *tables[t].count)
            return &tables[t].archs[i];
    return NULL;
}

const model_arch *model_arch_find(const char *name, size_t len)
{
    for (size_t i = 0; name && i < model_arch_count(); i++) {
        const model_arch *a = model_arch_at(i);
        if (strlen(a->name) == len && memcmp(a->name, name, len) == 0)
            return a;
    }
    return NULL;
}

static char arch_names[2048];

static void list_arch_names(void)
{
    size_t at = 0;
    for (size_t i = 0; i < model_arch_count(); i++)
        at += (size_t)snprintf(arch_names + at, sizeof arch_names - at, "%s%s", i ? ", " : "", model_arch_at(i)->name);
}

const char *model_arch_names(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, list_arch_names);
    return arch_names;
}
