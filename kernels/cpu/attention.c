/*
 * Causal multi-head attention over one layer's KV cache (f32), with grouped
 * query heads. One task per (token, head); scores in a per-thread buffer.
 *   q (T, n_head, d), K/V cache (pos0 + T, n_kv, d) -> out (T, n_head, d)
 */
#include "cpu.h"

#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

kern_status cpu_attention(kern_backend *b, const float *q, const float *k_cache, const float *v_cache, int T, int pos0,
                          int n_head, int n_kv_head, int head_dim, float *out)
{
    if (n_kv_head <= 0 || n_head % n_kv_head)
        return KERN_E_SHAPE;
    const int group = n_head / n_kv_head, n_ctx = pos0 + T, kv_dim = n_kv_head * head_dim;
    const float scale = 1.0f / sqrtf((float)head_dim);
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
                const int kh = h / group, n_keys = pos0 + t + 1;
                float mx = -INFINITY;
                for (int j = 0; j < n_keys; j++) {
                    score[j] = kern_dot_f32(qv, k_cache + (size_t)j * kv_dim + (size_t)kh * head_dim, head_dim) * scale;
                    mx = score[j] > mx ? score[j] : mx;
                }
                double sum = 0.0;
                for (int j = 0; j < n_keys; j++) {
                    score[j] = expf(score[j] - mx);
                    sum += score[j];
                }
                float inv = (float)(1.0 / sum);
                float *o = out + ((size_t)t * n_head + h) * head_dim;
                memset(o, 0, (size_t)head_dim * sizeof(float));
                for (int j = 0; j < n_keys; j++) {
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
