/*
 * A mixture of experts' routing of one token, as llama.cpp's build_moe_ffn does it (src/llama-graph.cpp):
 *  - softmax gating: probabilities by softmax over the router's logits (ggml_soft_max: exp(x - max) in float,
 *    their sum in double), the n_used most probable experts, their probabilities as weights;
 *  - softmax-weight gating (gpt-oss): the n_used largest logits, then the softmax of those n_used as weights;
 *  - sigmoid gating (glm4moe, DeepSeek-V3): each logit's sigmoid (ggml's 1 / (1 + e^-x)); the experts chosen by
 *    the sigmoids plus the layer's selection bias where it has one (exp_probs_b), weighed by the sigmoids alone;
 *    Llama 4 chooses by the logits and weighs by their sigmoids (the weight then scales the expert's input);
 * within the best groups of experts where the file groups them (keep_best_groups);
 * then, where the family does so, the weights renormalised to sum 1 (the sum clamped at 2^-14, f16's smallest
 * normal), and scaled by expert_weights_scale.
 */
#include "internal.h"

#include <math.h>

/* x[0..n) <- softmax(x) as ggml_soft_max computes it */
static void softmax(float *x, int n)
{
    float max = -INFINITY;
    for (int e = 0; e < n; e++)
        max = x[e] > max ? x[e] : max;
    double sum = 0.0;
    for (int e = 0; e < n; e++) {
        x[e] = expf(x[e] - max);
        sum += x[e];
    }
    const float inv = (float)(1.0 / sum);
    for (int e = 0; e < n; e++)
        x[e] *= inv;
}

/* DeepSeek-V3's group-limited choice as llama.cpp makes it: the experts cut into expert_group_count groups of
 * consecutive ids, each group scored by the sum of its two largest scores, the expert_group_used_count best groups
 * kept (ties to the lower group) and every other expert's score made -inf. */
static void keep_best_groups(const engine_hparams *hp, float *select)
{
    enum { GROUPS_MAX = MODEL_EXPERTS_MAX };
    const int groups = (int)hp->g.n_expert_groups, per = hp->n_expert / groups, used = (int)hp->g.n_group_used;
    float score[GROUPS_MAX];
    bool kept[GROUPS_MAX] = { false };
    for (int g = 0; g < groups; g++) {
        float a = -INFINITY, b = -INFINITY; /* the group's largest and second largest */
        for (int e = g * per; e < (g + 1) * per; e++) {
            const float v = select[e];
            if (v > a)
                b = a, a = v;
            else if (v > b)
                b = v;
        }
        score[g] = per > 1 ? a + b : a;
    }
    for (int k = 0; k < used; k++) {
        int best = -1;
        for (int g = 0; g < groups; g++)
            if (!kept[g] && (best < 0 || score[g] > score[best]))
                best = g;
        kept[best] = true;
    }
    for (int e = 0; e < groups * per; e++)
        if (!kept[e / per])
            select[e] = -INFINITY;
}

void engine_route(const engine_hparams *hp, const float *select_bias, const float *logits, float *probs, int *ids,
                  float *weights)
{
    const int n_expert = hp->n_expert, n_used = hp->n_expert_used;
    float *select = probs + n_expert; /* what the choice ranks: probs, plus the selection bias where there is one */
    for (int e = 0; e < n_expert; e++)
        probs[e] = logits[e];
    if (hp->moe_gating == MODEL_MOE_SOFTMAX)
        softmax(probs, n_expert);
    else if (hp->moe_gating == MODEL_MOE_SIGMOID)
        for (int e = 0; e < n_expert; e++)
            probs[e] = 1.0f / (1.0f + expf(-probs[e]));
    /* Llama 4 ranks the logits themselves (the sigmoid only weighs the chosen: llama.cpp's build_moe_ffn), which
     * differs from ranking their sigmoids where those round to the same float */
    const bool on_logits = hp->desc && hp->desc->moe_weight_before;
    for (int e = 0; e < n_expert; e++)
        select[e] = on_logits ? logits[e] : select_bias ? probs[e] + select_bias[e] : probs[e];
    if (hp->g.n_expert_groups > 1)
        keep_best_groups(hp, select);
    /* the n_used largest, ties to the lower index; a NaN is never chosen over a number */
    for (int k = 0; k < n_used; k++) {
        int best = -1;
        for (int e = 0; e < n_expert; e++) {
            bool taken = false;
            for (int j = 0; j < k; j++)
                taken |= ids[j] == e;
            if (!taken && (best < 0 || select[e] > select[best] || (isnan(select[best]) && !isnan(select[e]))))
                best = e;
        }
        ids[k] = best;
        weights[k] = probs[best];
    }
    if (hp->moe_gating == MODEL_MOE_SOFTMAX_WEIGHT)
        softmax(weights, n_used);
    if (hp->moe_renormalise) { /* ggml_sum_rows: the sum in double, rounded once */
        double sum = 0.0;
        for (int k = 0; k < n_used; k++)
            sum += weights[k];
        float total = (float)sum;
        total = total < 6.103515625e-5f ? 6.103515625e-5f : total;
        for (int k = 0; k < n_used; k++)
            weights[k] /= total;
    }
    if (hp->moe_scale != 1.0f)
        for (int k = 0; k < n_used; k++)
            weights[k] *= hp->moe_scale;
}
