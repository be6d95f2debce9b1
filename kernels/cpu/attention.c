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

#if defined(__x86_64__)
#include <immintrin.h>

/* o = sum over j of (score[j] inv) v_j, 32 of the d values at a time held in 4 registers across all j (d a
 * multiple of 32). In SSE2, as the baseline build compiles the loop below, and then with one AVX2 call per j,
 * this sum was 6-8 % of a 64-token prompt. */
__attribute__((target("avx2,fma"))) static void weighted_sum_avx2(const float *score, float inv, const float *v,
                                                                 size_t stride, int j0, int j1, int d, float *o)
{
    for (int c = 0; c < d; c += 32) {
        __m256 acc[4] = { _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps() };
        for (int j = j0; j < j1; j++) {
            const __m256 p = _mm256_set1_ps(score[j] * inv);
            const float *vv = v + (size_t)j * stride + c;
            for (int i = 0; i < 4; i++)
                acc[i] = _mm256_fmadd_ps(p, _mm256_loadu_ps(vv + 8 * i), acc[i]);
        }
        for (int i = 0; i < 4; i++)
            _mm256_storeu_ps(o + c + 8 * i, acc[i]);
    }
}
#endif

static void weighted_sum(const float *score, float inv, const float *v, size_t stride, int j0, int j1, int d, float *o)
{
#if defined(__x86_64__)
    if (cpu_have_avx2() && d % 32 == 0) {
        weighted_sum_avx2(score, inv, v, stride, j0, j1, d, o);
        return;
    }
#endif
    memset(o, 0, (size_t)d * sizeof(float));
    for (int j = j0; j < j1; j++) {
        const float p = score[j] * inv, *vv = v + (size_t)j * stride;
        for (int i = 0; i < d; i++)
            o[i] += p * vv[i];
    }
}

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
                weighted_sum(score, inv, v_cache + (size_t)kh * head_dim, (size_t)kv_dim, j0, n_keys, head_dim,
                             out + ((size_t)t * n_head + h) * head_dim);
            }
        free(score);
    }
    return failed ? KERN_E_NOMEM : KERN_OK;
}
