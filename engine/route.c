/*
 * A mixture of experts' routing of one token, as llama.cpp's build_moe_ffn does it (src/llama-graph.cpp):
 *  - softmax gating: probabilities by softmax over the router's logits (ggml_soft_max: exp(x - max) in float,
 *    their sum in double), the n_used most probable experts, their probabilities as weights;
 *  - softmax-weight gating (gpt-oss): the n_used largest logits, then the softmax of those n_used as weights;
 * then, where the family does so, the weights renormalised to sum 1 (the sum clamped at 2^-14, f16's smallest
 * normal).
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

void engine_route(const float *logits, int n_expert, int n_used, model_moe_gating gating, bool renormalise,
                  float *probs, int *ids, float *weights)
{
    for (int e = 0; e < n_expert; e++)
        probs[e] = logits[e];
    if (gating == MODEL_MOE_SOFTMAX)
        softmax(probs, n_expert);
    /* the n_used largest, ties to the lower index; a NaN is never chosen over a number */
    for (int k = 0; k < n_used; k++) {
        int best = -1;
        for (int e = 0; e < n_expert; e++) {
            bool taken = false;
            for (int j = 0; j < k; j++)
                taken |= ids[j] == e;
            if (!taken && (best < 0 || probs[e] > probs[best] || (isnan(probs[best]) && !isnan(probs[e]))))
                best = e;
        }
        ids[k] = best;
        weights[k] = probs[best];
    }
    if (gating == MODEL_MOE_SOFTMAX_WEIGHT)
        softmax(weights, n_used);
    if (!renormalise)
        return;
    float total = 0.0f;
    for (int k = 0; k < n_used; k++)
        total += weights[k];
    total = total < 6.103515625e-5f ? 6.103515625e-5f : total;
    for (int k = 0; k < n_used; k++)
        weights[k] /= total;
}
