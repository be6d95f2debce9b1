/*
 * A mixture of experts' routing of one token, as llama.cpp's build_moe_ffn does it with softmax gating
 * (src/llama-graph.cpp): probabilities by softmax over the router's logits (ggml_soft_max: exp(x - max) in float,
 * their sum in double), the n_used most probable experts, and their probabilities as weights, renormalised to sum
 * 1 (the sum clamped at 2^-14, f16's smallest normal) where the family does so.
 */
#include "internal.h"

#include <math.h>

void engine_route(const float *logits, int n_expert, int n_used, bool renormalise, float *probs, int *ids,
                  float *weights)
{
    float max = -INFINITY;
    for (int e = 0; e < n_expert; e++)
        max = logits[e] > max ? logits[e] : max;
    double sum = 0.0;
    for (int e = 0; e < n_expert; e++) {
        probs[e] = expf(logits[e] - max);
        sum += probs[e];
    }
    const float inv = (float)(1.0 / sum);
    for (int e = 0; e < n_expert; e++)
        probs[e] *= inv;
    /* the n_used largest, ties to the lower index; a NaN probability is never chosen over a number */
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
    if (!renormalise)
        return;
    float total = 0.0f;
    for (int k = 0; k < n_used; k++)
        total += weights[k];
    total = total < 6.103515625e-5f ? 6.103515625e-5f : total;
    for (int k = 0; k < n_used; k++)
        weights[k] /= total;
}
