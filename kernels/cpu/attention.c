/*
 * Causal multi-head attention over one layer's KV cache (f32), with grouped
 * query heads and an optional sliding window (a query at position p sees keys
 * p - window + 1 .. p: llama.cpp's LLAMA_SWA_TYPE_STANDARD mask). One task per
 * (token, head); scores in a per-thread buffer.
 *   q (T, n_head, d), K/V cache (pos0 + T, n_kv, d) -> out (T, n_head, d)
 */
#include "cpu.h"

#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

kern_status cpu_attention(kern_backend *b, const float *q, const float *k_cache, const float *v_cache, int T, int pos0,
                          const kern_attn *a, float *out)
{
    const int n_head = a->n_head, n_kv_head = a->n_kv_head, head_dim = a->head_dim;
    if (n_kv_head <= 0 || n_head % n_kv_head || a->window < 0)
        return KERN_E_SHAPE;
    const int group = n_head / n_kv_head, n_ctx = pos0 + T, kv_dim = n_kv_head * head_dim;
    const float scale = a->scale;
    int failed = 0;
    const bool wide = (double)T * n_head * n_ctx * head_dim >= 1 << 15;
#pragma omp parallel num_threads(cpu_threads(b)) if (wide)
    {
        float *score = malloc((size_t)n_ctx * sizeof(float));
        if (!score) {
#pragma omp atomic write
            failed = 1;
        }
#pragma omp for schedule(dynamic, 1) collapse(2)
        for (int t = 0; t < T; t++)
            for (int h = 0; h < n_head; h++) {
                if (!score)
                    continue;
                const float *qv = q + ((size_t)t * n_head + h) * head_dim;
                /* keys j0 .. n_keys - 1: everything before, or the last `window` positions */
                const int kh = h / group, n_keys = pos0 + t + 1;
                const int j0 = a->window > 0 && n_keys > a->window ? n_keys - a->window : 0;
                float mx = -INFINITY;
                for (int j = j0; j < n_keys; j++) {
                    score[j] = kern_dot_f32(qv, k_cache + (size_t)j * kv_dim + (size_t)kh * head_dim, head_dim) * scale;
                    mx = score[j] > mx ? score[j] : mx;
                }
                double sum = 0.0;
                for (int j = j0; j < n_keys; j++) {
                    score[j] = expf(score[j] - mx);
                    sum += score[j];
                }
                float inv = (float)(1.0 / sum);
                float *o = out + ((size_t)t * n_head + h) * head_dim;
                memset(o, 0, (size_t)head_dim * sizeof(float));
                for (int j = j0; j < n_keys; j++) {
                    const float *vv = v_cache + (size_t)j * kv_dim + (size_t)kh * head_dim;
                    float p = score[j] * inv;
                    for (int i = 0; i < head_dim; i++)
                        o[i] += p * vv[i];
                }
            }
        free(score);
    }
    return failed ? KERN_E_NOMEM : KERN_OK;
}
