/*
 * The tensor roles every architecture here is made of, as data: each one's name (llama.cpp's: gguf-py constants.py,
 * TENSOR_NAMES), shape in the hyperparameters' sizes, and which feed-forward or attention form it belongs to. The
 * architectures that need them are model/arch.c.
 */
#include "model.h"

#include <stdlib.h>
#include <string.h>

static const model_role_info roles[MODEL_ROLE_COUNT] = {
    [MODEL_ROLE_TOKEN_EMBD] = { "token_embd.weight", false, MODEL_DIM_EMBD, MODEL_DIM_VOCAB, false,
      "token embedding", MODEL_DIM_NONE, .form = MODEL_FFN_ANY },
    [MODEL_ROLE_OUTPUT_NORM] = { "output_norm.weight", false, MODEL_DIM_EMBD, MODEL_DIM_NONE, true,
      "final norm gains", MODEL_DIM_NONE, .form = MODEL_FFN_ANY },
    [MODEL_ROLE_OUTPUT] = { "output.weight", false, MODEL_DIM_EMBD, MODEL_DIM_VOCAB, false,
      "output projection (lm_head)", MODEL_DIM_NONE, .form = MODEL_FFN_ANY },
    [MODEL_ROLE_ROPE_FREQS] = { "rope_freqs.weight", false, MODEL_DIM_ROT_HALF, MODEL_DIM_NONE, false,
                               "rotary frequency divisors (Llama 3.1 scaling)", MODEL_DIM_NONE, .form = MODEL_FFN_ANY },
    [MODEL_ROLE_ROPE_FACTORS_LONG] = { "rope_factors_long.weight", false, MODEL_DIM_ROT_HALF, MODEL_DIM_NONE, false,
                                       "LongRoPE frequency divisors past the original context", MODEL_DIM_NONE,
                                       .form = MODEL_FFN_ANY },
    [MODEL_ROLE_ROPE_FACTORS_SHORT] = { "rope_factors_short.weight", false, MODEL_DIM_ROT_HALF, MODEL_DIM_NONE, false,
                                        "LongRoPE frequency divisors within the original context", MODEL_DIM_NONE,
                                        .form = MODEL_FFN_ANY },
    [MODEL_ROLE_ATTN_NORM] = { "attn_norm.weight", true, MODEL_DIM_EMBD, MODEL_DIM_NONE, true,
      "attention input norm gains", MODEL_DIM_NONE, .form = MODEL_FFN_ANY },
    [MODEL_ROLE_ATTN_Q] = { "attn_q.weight", true, MODEL_DIM_EMBD, MODEL_DIM_Q, false,
      "attention query projection", MODEL_DIM_NONE, .form = MODEL_FFN_ANY, .attn_form = MODEL_ATTN_Q_DIRECT },
    [MODEL_ROLE_ATTN_K] = { "attn_k.weight", true, MODEL_DIM_EMBD, MODEL_DIM_KV_K, false,
      "attention key projection", MODEL_DIM_NONE, .form = MODEL_FFN_ANY },
    [MODEL_ROLE_ATTN_V] = { "attn_v.weight", true, MODEL_DIM_EMBD, MODEL_DIM_KV_V, false,
      "attention value projection", MODEL_DIM_NONE, .form = MODEL_FFN_ANY },
    [MODEL_ROLE_ATTN_Q_BIAS] = { "attn_q.bias", true, MODEL_DIM_Q, MODEL_DIM_NONE, false,
      "attention query bias", MODEL_DIM_NONE, .form = MODEL_FFN_ANY },
    [MODEL_ROLE_ATTN_K_BIAS] = { "attn_k.bias", true, MODEL_DIM_KV_K, MODEL_DIM_NONE, false,
      "attention key bias", MODEL_DIM_NONE, .form = MODEL_FFN_ANY },
    [MODEL_ROLE_ATTN_V_BIAS] = { "attn_v.bias", true, MODEL_DIM_KV_V, MODEL_DIM_NONE, false,
      "attention value bias", MODEL_DIM_NONE, .form = MODEL_FFN_ANY },
    [MODEL_ROLE_ATTN_Q_NORM] = { "attn_q_norm.weight", true, MODEL_DIM_QK_NORM_Q, MODEL_DIM_QK_NORM_ROWS_Q, true,
                                "query norm gains", MODEL_DIM_NONE, .form = MODEL_FFN_ANY },
    [MODEL_ROLE_ATTN_K_NORM] = { "attn_k_norm.weight", true, MODEL_DIM_QK_NORM_K, MODEL_DIM_QK_NORM_ROWS_K, true,
                                "key norm gains", MODEL_DIM_NONE, .form = MODEL_FFN_ANY },
    [MODEL_ROLE_ATTN_OUT] = { "attn_output.weight", true, MODEL_DIM_Q_V, MODEL_DIM_EMBD, false,
      "attention output projection", MODEL_DIM_NONE, .form = MODEL_FFN_ANY },
    [MODEL_ROLE_ATTN_POST_NORM] = { "post_attention_norm.weight", true, MODEL_DIM_EMBD, MODEL_DIM_NONE, true,
                                   "attention output norm gains", MODEL_DIM_NONE, .form = MODEL_FFN_ANY },
    [MODEL_ROLE_FFN_NORM] = { "ffn_norm.weight", true, MODEL_DIM_EMBD, MODEL_DIM_NONE, true,
      "feed-forward input norm gains", MODEL_DIM_NONE, .form = MODEL_FFN_ANY, .bare = "ffn_norm" },
    [MODEL_ROLE_FFN_GATE] = { "ffn_gate.weight", true, MODEL_DIM_EMBD, MODEL_DIM_FF, false,
      "feed-forward gate projection", .form = MODEL_FFN_DENSE },
    [MODEL_ROLE_FFN_UP] = { "ffn_up.weight", true, MODEL_DIM_EMBD, MODEL_DIM_FF_UP, false,
                            "feed-forward up projection", .form = MODEL_FFN_DENSE },
    [MODEL_ROLE_FFN_DOWN] = { "ffn_down.weight", true, MODEL_DIM_FF, MODEL_DIM_EMBD, false,
      "feed-forward down projection", .form = MODEL_FFN_DENSE },
    [MODEL_ROLE_FFN_POST_NORM] = { "post_ffw_norm.weight", true, MODEL_DIM_EMBD, MODEL_DIM_NONE, true,
                                  "feed-forward output norm gains", MODEL_DIM_NONE, .form = MODEL_FFN_ANY },
    [MODEL_ROLE_FFN_GATE_INP] = { "ffn_gate_inp.weight", true, MODEL_DIM_EMBD, MODEL_DIM_EXPERT, false,
                                 "expert router", .form = MODEL_FFN_MOE },
    [MODEL_ROLE_FFN_GATE_EXPS] = { "ffn_gate_exps.weight", true, MODEL_DIM_EMBD, MODEL_DIM_FF_EXP, false,
                                  "experts' gate projections", MODEL_DIM_EXPERT, .form = MODEL_FFN_MOE },
    [MODEL_ROLE_FFN_UP_EXPS] = { "ffn_up_exps.weight", true, MODEL_DIM_EMBD, MODEL_DIM_FF_EXP, false,
                                "experts' up projections", MODEL_DIM_EXPERT, .form = MODEL_FFN_MOE },
    [MODEL_ROLE_FFN_DOWN_EXPS] = { "ffn_down_exps.weight", true, MODEL_DIM_FF_EXP, MODEL_DIM_EMBD, false,
                                  "experts' down projections", MODEL_DIM_EXPERT, .form = MODEL_FFN_MOE },
    [MODEL_ROLE_FFN_GATE_INP_SHEXP] = { "ffn_gate_inp_shexp.weight", true, MODEL_DIM_EMBD, MODEL_DIM_NONE, false,
                                       "shared expert's gate (a sigmoid of its dot product)", .form = MODEL_FFN_MOE },
    [MODEL_ROLE_FFN_GATE_SHEXP] = { "ffn_gate_shexp.weight", true, MODEL_DIM_EMBD, MODEL_DIM_FF_SHEXP, false,
                                   "shared expert's gate projection", .form = MODEL_FFN_MOE },
    [MODEL_ROLE_FFN_UP_SHEXP] = { "ffn_up_shexp.weight", true, MODEL_DIM_EMBD, MODEL_DIM_FF_SHEXP, false,
                                 "shared expert's up projection", .form = MODEL_FFN_MOE },
    [MODEL_ROLE_FFN_DOWN_SHEXP] = { "ffn_down_shexp.weight", true, MODEL_DIM_FF_SHEXP, MODEL_DIM_EMBD, false,
                                   "shared expert's down projection", .form = MODEL_FFN_MOE },
    [MODEL_ROLE_ATTN_QKV] = { "attn_qkv.weight", true, MODEL_DIM_EMBD, MODEL_DIM_QKV, false,
                             "fused query, key and value projections", MODEL_DIM_NONE, .form = MODEL_FFN_ANY },
    [MODEL_ROLE_ATTN_OUT_BIAS] = { "attn_output.bias", true, MODEL_DIM_EMBD, MODEL_DIM_NONE, false,
                                  "attention output bias", MODEL_DIM_NONE, .form = MODEL_FFN_ANY },
    [MODEL_ROLE_ATTN_SINKS] = { "attn_sinks.weight", true, MODEL_DIM_HEAD, MODEL_DIM_NONE, false,
                               "attention sinks (a logit per head that takes part in the softmax)", MODEL_DIM_NONE,
                               .form = MODEL_FFN_ANY },
    [MODEL_ROLE_FFN_GATE_INP_BIAS] = { "ffn_gate_inp.bias", true, MODEL_DIM_EXPERT, MODEL_DIM_NONE, false,
                                      "expert router bias", .form = MODEL_FFN_MOE },
    [MODEL_ROLE_FFN_GATE_EXPS_BIAS] = { "ffn_gate_exps.bias", true, MODEL_DIM_FF_EXP, MODEL_DIM_EXPERT, false,
                                       "experts' gate biases", .form = MODEL_FFN_MOE, .expert_rows = true },
    [MODEL_ROLE_FFN_UP_EXPS_BIAS] = { "ffn_up_exps.bias", true, MODEL_DIM_FF_EXP, MODEL_DIM_EXPERT, false,
                                     "experts' up biases", .form = MODEL_FFN_MOE, .expert_rows = true },
    [MODEL_ROLE_FFN_DOWN_EXPS_BIAS] = { "ffn_down_exps.bias", true, MODEL_DIM_EMBD, MODEL_DIM_EXPERT, false,
                                       "experts' down biases", .form = MODEL_FFN_MOE, .expert_rows = true },
    [MODEL_ROLE_FFN_EXP_PROBS_B] = { "exp_probs_b.bias", true, MODEL_DIM_EXPERT, MODEL_DIM_NONE, false,
                                    "experts' selection bias (added to the router's scores for the choice only)",
                                    .form = MODEL_FFN_MOE },
    [MODEL_ROLE_ATTN_Q_A] = { "attn_q_a.weight", true, MODEL_DIM_EMBD, MODEL_DIM_Q_LORA, false,
                             "query compression", MODEL_DIM_NONE, .form = MODEL_FFN_ANY, .attn_form = MODEL_ATTN_Q_LORA },
    [MODEL_ROLE_ATTN_Q_A_NORM] = { "attn_q_a_norm.weight", true, MODEL_DIM_Q_LORA, MODEL_DIM_NONE, true,
                                  "query compression norm gains", MODEL_DIM_NONE, .form = MODEL_FFN_ANY,
                                  .attn_form = MODEL_ATTN_Q_LORA },
    [MODEL_ROLE_ATTN_Q_B] = { "attn_q_b.weight", true, MODEL_DIM_Q_LORA, MODEL_DIM_Q, false,
                             "query decompression", MODEL_DIM_NONE, .form = MODEL_FFN_ANY, .attn_form = MODEL_ATTN_Q_LORA },
    [MODEL_ROLE_ATTN_KV_A_MQA] = { "attn_kv_a_mqa.weight", true, MODEL_DIM_EMBD, MODEL_DIM_KV_A, false,
                                  "key/value compression and the rotary key all heads share", MODEL_DIM_NONE,
                                  .form = MODEL_FFN_ANY },
    [MODEL_ROLE_ATTN_KV_A_NORM] = { "attn_kv_a_norm.weight", true, MODEL_DIM_KV_LORA, MODEL_DIM_NONE, true,
                                   "key/value compression norm gains", MODEL_DIM_NONE, .form = MODEL_FFN_ANY },
    [MODEL_ROLE_ATTN_KV_B] = { "attn_kv_b.weight", true, MODEL_DIM_KV_LORA, MODEL_DIM_KV_B, false,
                              "keys' and values' decompression", MODEL_DIM_NONE, .form = MODEL_FFN_ANY,
                              .attn_form = MODEL_ATTN_KV_B_WHOLE },
    [MODEL_ROLE_ATTN_K_B] = { "attn_k_b.weight", true, MODEL_DIM_QK_NOPE, MODEL_DIM_KV_LORA, false,
                             "keys' decompression per head (absorbed into the query)", MODEL_DIM_HEAD,
                             .form = MODEL_FFN_ANY, .attn_form = MODEL_ATTN_KV_B_SPLIT },
    [MODEL_ROLE_ATTN_V_B] = { "attn_v_b.weight", true, MODEL_DIM_KV_LORA, MODEL_DIM_V_MLA, false,
                             "values' decompression per head", MODEL_DIM_HEAD, .form = MODEL_FFN_ANY,
                             .attn_form = MODEL_ATTN_KV_B_SPLIT },
    [MODEL_ROLE_PER_LAYER_TOKEN_EMBD] = { "per_layer_token_embd.weight", false, MODEL_DIM_PLE_ALL, MODEL_DIM_VOCAB, false,
                                         "per-layer token embeddings (every layer's row of each token)",
                                         MODEL_DIM_NONE, .form = MODEL_FFN_ANY, .per_layer_input = true },
    [MODEL_ROLE_PER_LAYER_MODEL_PROJ] = { "per_layer_model_proj.weight", false, MODEL_DIM_EMBD, MODEL_DIM_PLE_ALL,
                                         false, "projection of the embeddings into the per-layer inputs",
                                         MODEL_DIM_NONE, .form = MODEL_FFN_ANY, .per_layer_input = true },
    [MODEL_ROLE_PER_LAYER_PROJ_NORM] = { "per_layer_proj_norm.weight", false, MODEL_DIM_PLE, MODEL_DIM_NONE, true,
                                        "per-layer input projection's norm gains", MODEL_DIM_NONE,
                                        .form = MODEL_FFN_ANY, .per_layer_input = true },
    [MODEL_ROLE_PER_LAYER_INP_GATE] = { "inp_gate.weight", true, MODEL_DIM_EMBD, MODEL_DIM_PLE, false,
                                       "gate over the layer's per-layer input", MODEL_DIM_NONE, .form = MODEL_FFN_ANY,
                                       .per_layer_input = true },
    [MODEL_ROLE_PER_LAYER_PROJ] = { "proj.weight", true, MODEL_DIM_PLE, MODEL_DIM_EMBD, false,
                                   "per-layer input's projection back to the embedding", MODEL_DIM_NONE,
                                   .form = MODEL_FFN_ANY, .per_layer_input = true },
    [MODEL_ROLE_PER_LAYER_POST_NORM] = { "post_norm.weight", true, MODEL_DIM_EMBD, MODEL_DIM_NONE, true,
                                        "per-layer input's output norm gains", MODEL_DIM_NONE, .form = MODEL_FFN_ANY,
                                        .per_layer_input = true },
    [MODEL_ROLE_FFN_GATE_UP_EXPS] = { "ffn_gate_up_exps.weight", true, MODEL_DIM_EMBD, MODEL_DIM_FF_EXP2, false,
                                     "experts' gate and up projections, each expert's gate rows then its up rows",
                                     MODEL_DIM_EXPERT, .form = MODEL_FFN_MOE },
    [MODEL_ROLE_FFN_GATE_INP_SCALE] = { "ffn_gate_inp.scale", true, MODEL_DIM_EMBD, MODEL_DIM_NONE, false,
                                       "expert router's input gains", MODEL_DIM_NONE, .form = MODEL_FFN_MOE },
    [MODEL_ROLE_FFN_DOWN_EXPS_SCALE] = { "ffn_down_exps.scale", true, MODEL_DIM_EXPERT, MODEL_DIM_NONE, false,
                                        "experts' output scales (one per expert)", MODEL_DIM_NONE,
                                        .form = MODEL_FFN_MOE },
    [MODEL_ROLE_FFN_PRE_NORM_2] = { "pre_ffw_norm_2.weight", true, MODEL_DIM_EMBD, MODEL_DIM_NONE, true,
                                   "experts' input norm gains", MODEL_DIM_NONE, .form = MODEL_FFN_MOE },
    [MODEL_ROLE_FFN_POST_NORM_1] = { "post_ffw_norm_1.weight", true, MODEL_DIM_EMBD, MODEL_DIM_NONE, true,
                                    "dense block's output norm gains (beside the experts)", MODEL_DIM_NONE,
                                    .form = MODEL_FFN_MOE },
    [MODEL_ROLE_FFN_POST_NORM_2] = { "post_ffw_norm_2.weight", true, MODEL_DIM_EMBD, MODEL_DIM_NONE, true,
                                    "experts' output norm gains", MODEL_DIM_NONE, .form = MODEL_FFN_MOE },
    [MODEL_ROLE_LAYER_OUT_SCALE] = { "layer_output_scale.weight", true, MODEL_DIM_ONE, MODEL_DIM_NONE, false,
                                    "the layer output's scale", MODEL_DIM_NONE, .form = MODEL_FFN_ANY },
    [MODEL_ROLE_ATTN_GATE] = { "attn_gate.weight", true, MODEL_DIM_EMBD, MODEL_DIM_SSM_INNER, false,
                              "delta net's output gate projection (z)", MODEL_DIM_NONE, .form = MODEL_FFN_ANY },
    [MODEL_ROLE_SSM_CONV1D] = { "ssm_conv1d.weight", true, MODEL_DIM_SSM_CONV, MODEL_DIM_QKV, false,
                               "recurrent layer's short convolution taps (per channel: q, k, v; Mamba-2's x, B, C)", MODEL_DIM_NONE,
                               .form = MODEL_FFN_ANY },
    [MODEL_ROLE_SSM_DT] = { "ssm_dt.bias", true, MODEL_DIM_SSM_HEADS, MODEL_DIM_NONE, false,
                           "recurrent layer's decay bias (per head)", MODEL_DIM_NONE, .form = MODEL_FFN_ANY },
    [MODEL_ROLE_SSM_A] = { "ssm_a", true, MODEL_DIM_SSM_A, MODEL_DIM_SSM_A_ROWS, false,
                          "recurrent layer's decay rate -exp(A_log) (per head)", MODEL_DIM_NONE, .form = MODEL_FFN_ANY },
    [MODEL_ROLE_SSM_BETA] = { "ssm_beta.weight", true, MODEL_DIM_EMBD, MODEL_DIM_SSM_HEADS, false,
                             "delta net's write strength projection (beta)", MODEL_DIM_NONE, .form = MODEL_FFN_ANY },
    [MODEL_ROLE_SSM_ALPHA] = { "ssm_alpha.weight", true, MODEL_DIM_EMBD, MODEL_DIM_SSM_HEADS, false,
                              "delta net's decay projection (alpha)", MODEL_DIM_NONE, .form = MODEL_FFN_ANY },
    [MODEL_ROLE_SSM_NORM] = { "ssm_norm.weight", true, MODEL_DIM_SSM_NORM, MODEL_DIM_SSM_NORM_ROWS, true,
                             "recurrent layer's output norm gains (per head, or per group)", MODEL_DIM_NONE,
                             .form = MODEL_FFN_ANY },
    [MODEL_ROLE_SSM_OUT] = { "ssm_out.weight", true, MODEL_DIM_SSM_INNER, MODEL_DIM_EMBD, false,
                            "recurrent layer's output projection", MODEL_DIM_NONE, .form = MODEL_FFN_ANY },
    [MODEL_ROLE_SSM_IN] = { "ssm_in.weight", true, MODEL_DIM_EMBD, MODEL_DIM_SSM_QKVZ, false,
                           "recurrent layer's input projection (Qwen3-Next's q, k, v, z of each key head together; Mamba-2's z, x, B, C, dt)", MODEL_DIM_NONE,
                           .form = MODEL_FFN_ANY },
    [MODEL_ROLE_SSM_BA] = { "ssm_ba.weight", true, MODEL_DIM_EMBD, MODEL_DIM_SSM_BA, false,
                           "delta net's beta and alpha projection (each key head's value heads together)",
                           MODEL_DIM_NONE, .form = MODEL_FFN_ANY },
    [MODEL_ROLE_TOKEN_EMBD_NORM] = { "token_embd_norm.weight", false, MODEL_DIM_EMBD, MODEL_DIM_NONE, true,
                                    "final norm gains (LFM2's name for them)", MODEL_DIM_NONE, .form = MODEL_FFN_ANY },
    [MODEL_ROLE_SHORTCONV_IN] = { "shortconv.in_proj.weight", true, MODEL_DIM_EMBD, MODEL_DIM_EMBD3, false,
                                 "short convolution's input projection (B, C, x)", MODEL_DIM_NONE,
                                 .form = MODEL_FFN_ANY },
    [MODEL_ROLE_SHORTCONV_CONV] = { "shortconv.conv.weight", true, MODEL_DIM_SHORTCONV, MODEL_DIM_EMBD, false,
                                   "short convolution's taps (per channel)", MODEL_DIM_NONE, .form = MODEL_FFN_ANY },
    [MODEL_ROLE_SHORTCONV_OUT] = { "shortconv.out_proj.weight", true, MODEL_DIM_EMBD, MODEL_DIM_EMBD, false,
                                  "short convolution's output projection", MODEL_DIM_NONE, .form = MODEL_FFN_ANY },
    [MODEL_ROLE_SSM_D] = { "ssm_d", true, MODEL_DIM_SSM_A, MODEL_DIM_SSM_A_ROWS, false,
                          "Mamba-2's skip factor D (per head)", MODEL_DIM_NONE, .form = MODEL_FFN_ANY },
    [MODEL_ROLE_SSM_CONV1D_BIAS] = { "ssm_conv1d.bias", true, MODEL_DIM_QKV, MODEL_DIM_NONE, false,
                                    "Mamba-2's convolution bias (per channel of x, B, C)", MODEL_DIM_NONE,
                                    .form = MODEL_FFN_ANY },
};

const model_role_info *model_role_info_of(model_role r)
{
    return (unsigned)r < MODEL_ROLE_COUNT ? &roles[r] : NULL;
}

model_role model_role_of_name(const char *name, int64_t *layer)
{
    *layer = -1;
    const char *role = name;
    if (strncmp(name, "blk.", 4) == 0) {
        char *end;
        long long l = strtoll(name + 4, &end, 10);
        if (end == name + 4 || *end != '.' || l < 0 || name[4] == '-' || name[4] == '+')
            return MODEL_ROLE_COUNT;
        *layer = l;
        role = end + 1;
    }
    for (int r = 0; r < MODEL_ROLE_COUNT; r++)
        if (roles[r].per_layer == (*layer >= 0) &&
            (strcmp(roles[r].name, role) == 0 || (roles[r].bare && strcmp(roles[r].bare, role) == 0)))
            return (model_role)r;
    *layer = -1;
    return MODEL_ROLE_COUNT;
}

const char *model_role_name(const model_arch *a, model_role r)
{
    const model_role_info *ri = model_role_info_of(r);
    if (!ri)
        return "?";
    return a && a->ffn_norm_bare && r == MODEL_ROLE_FFN_NORM ? ri->bare : ri->name;
}
