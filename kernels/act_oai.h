/*
 * gpt-oss's gated activation, one formula for every backend: ggml_swiglu_oai (ggml-cpu/ops.cpp) with llama.cpp's
 * constants (src/llama-graph.cpp, LLM_FFN_SWIGLU_OAI_MOE: alpha 1.702, limit 7):
 *   g' = min(g, 7), u' = clamp(u, -7, 7), out = g' / (1 + e^(-1.702 g')) * (u' + 1)
 * The comparisons are std::min's and std::clamp's, so a NaN gate or up stays NaN (fminf would drop it).
 */
#ifndef GGUFSCOPE_ACT_OAI_H
#define GGUFSCOPE_ACT_OAI_H

#include <math.h>

#ifdef __CUDACC__
#define ACT_OAI_FN __host__ __device__ static inline
#else
#define ACT_OAI_FN static inline
#endif

#define ACT_OAI_ALPHA 1.702f
#define ACT_OAI_LIMIT 7.0f

ACT_OAI_FN float act_oai_gate(float g)
{
    return ACT_OAI_LIMIT < g ? ACT_OAI_LIMIT : g;
}

ACT_OAI_FN float act_oai_up(float u)
{
    return u < -ACT_OAI_LIMIT ? -ACT_OAI_LIMIT : ACT_OAI_LIMIT < u ? ACT_OAI_LIMIT : u;
}

/* in f32 as ggml computes it */
ACT_OAI_FN float act_oai(float g, float u)
{
    const float x = act_oai_gate(g);
    return x / (1.0f + expf(ACT_OAI_ALPHA * -x)) * (act_oai_up(u) + 1.0f);
}

/* in double, rounded once by the caller: the reference backend's */
ACT_OAI_FN double act_oai_double(float g, float u)
{
    const double x = act_oai_gate(g);
    return x / (1.0 + exp((double)ACT_OAI_ALPHA * -x)) * ((double)act_oai_up(u) + 1.0);
}

#endif
