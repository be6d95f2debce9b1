/* Private to model/: what the architecture tables (model/arch_*.c, one file per family) share: the need values and
 * the role sets most decoders have. model/arch.c joins the tables in one list. */
#ifndef GGUFSCOPE_MODEL_ARCH_TABLE_H
#define GGUFSCOPE_MODEL_ARCH_TABLE_H

#include "model.h"

#include <stddef.h>

enum { R = MODEL_NEED_REQUIRED, O = MODEL_NEED_OPTIONAL };

/* The roles every decoder here has: embeddings, final norm, and per layer a pre-norm attention block and the
 * norm before its feed-forward block; a dense one's feed-forward block is gated. */
#define TIED_GLOBAL_ROLES [MODEL_ROLE_TOKEN_EMBD] = R, [MODEL_ROLE_OUTPUT_NORM] = R
#define GLOBAL_ROLES TIED_GLOBAL_ROLES, [MODEL_ROLE_OUTPUT] = O
#define ATTENTION_ROLES                                                                                       \
    [MODEL_ROLE_ATTN_NORM] = R, [MODEL_ROLE_ATTN_Q] = R, [MODEL_ROLE_ATTN_K] = R, [MODEL_ROLE_ATTN_V] = R,      \
    [MODEL_ROLE_ATTN_OUT] = R, [MODEL_ROLE_FFN_NORM] = R
#define DENSE_FFN_ROLES [MODEL_ROLE_FFN_GATE] = R, [MODEL_ROLE_FFN_UP] = R, [MODEL_ROLE_FFN_DOWN] = R
#define DECODER_ROLES GLOBAL_ROLES, ATTENTION_ROLES
#define DENSE_DECODER_ROLES DECODER_ROLES, DENSE_FFN_ROLES

/* A file of the architecture with expert_count > 0 has these in place of ffn_gate/up/down (model_role_need). */
#define EXPERT_ROLES                                                                                          \
    [MODEL_ROLE_FFN_GATE_INP] = R, [MODEL_ROLE_FFN_GATE_EXPS] = R, [MODEL_ROLE_FFN_UP_EXPS] = R,               \
    [MODEL_ROLE_FFN_DOWN_EXPS] = R
#define SHARED_EXPERT_ROLES                                                                                   \
    [MODEL_ROLE_FFN_GATE_INP_SHEXP] = R, [MODEL_ROLE_FFN_GATE_SHEXP] = R, [MODEL_ROLE_FFN_UP_SHEXP] = R,       \
    [MODEL_ROLE_FFN_DOWN_SHEXP] = R

extern const model_arch model_archs_llama[];
extern const size_t model_archs_llama_count;
extern const model_arch model_archs_qwen[];
extern const size_t model_archs_qwen_count;
extern const model_arch model_archs_recurrent[];
extern const size_t model_archs_recurrent_count;
extern const model_arch model_archs_layernorm[];
extern const size_t model_archs_layernorm_count;
extern const model_arch model_archs_moe[];
extern const size_t model_archs_moe_count;
extern const model_arch model_archs_moe_window[];
extern const size_t model_archs_moe_window_count;
extern const model_arch model_archs_dense[];
extern const size_t model_archs_dense_count;
extern const model_arch model_archs_gemma[];
extern const size_t model_archs_gemma_count;

#endif
