/*
 * Causal attention over one layer's f32 KV cache with grouped query heads and
 * an optional sliding window (keys p - window + 1 .. p, or p - p % window .. p in chunks), decode and prompt
 * alike: one block per (token, head), each of its warps
 * walks every ATT_WARPS-th key with a running (online) softmax, and the
 * warps' partial results are merged at the end. A lane holds head dimensions
 * lane, lane + 32, ... so head_dim (and the value length) may be anything up to ATT_MAX_D.
 *   q (T, n_head, d), K cache (pos0 + T, n_kv, d), V cache (pos0 + T, n_kv, dv) -> out (T, n_head, dv)
 * A head's sink (gpt-oss) joins the merge: one more logit in the max and the denominator.
 * The position may come from device memory (a replayed decode step: cuda.h's cu_step_pos).
 */
#include "cuda.h"

#include <math.h>

/* 576: DeepSeek-V2/V3's latent keys (512 latent values and 64 rotary ones) */
enum { ATT_WARPS = 4, ATT_MAX_D = 576, ATT_PER_LANE = ATT_MAX_D / 32 };

__global__ void __launch_bounds__(ATT_WARPS * 32)
attention_k(const float *q, const float *kc, const float *vc, const int *pos_dev, int pos0, int n_head, int n_kv,
            int hd, int dv, float scale, float softcap, float softcap_in, float alibi, int window, bool chunked,
            const float *sinks, float *out)
{
    kc_grid_wait();
    if (pos_dev)
        pos0 += *pos_dev;
    const int h = blockIdx.x, t = blockIdx.y, kh = h / (n_head / n_kv);
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const size_t kv_dim = (size_t)n_kv * hd, vv_dim = (size_t)n_kv * dv;
    /* kern_attn_first_key, on the device */
    const int n_keys = pos0 + t + 1, j0 = window <= 0    ? 0
                                          : chunked     ? (n_keys - 1) - (n_keys - 1) % window
                                          : n_keys > window ? n_keys - window : 0;
    const float *qv = q + ((size_t)t * n_head + h) * hd;
    float qr[ATT_PER_LANE], acc[ATT_PER_LANE];
#pragma unroll
    for (int r = 0; r < ATT_PER_LANE; r++) {
        const int d = lane + 32 * r;
        qr[r] = d < hd ? qv[d] : 0.0f;
        acc[r] = 0.0f;
    }
    float m = -INFINITY, l = 0.0f;
    for (int j = j0 + warp; j < n_keys; j += ATT_WARPS) {
        const float *kv = kc + (size_t)j * kv_dim + (size_t)kh * hd, *vv = vc + (size_t)j * vv_dim + (size_t)kh * dv;
        float s = 0.0f;
#pragma unroll
        for (int r = 0; r < ATT_PER_LANE; r++) {
            const int d = lane + 32 * r;
            if (d < hd)
                s += qr[r] * kv[d];
        }
        for (int o = 16; o > 0; o >>= 1)
            s += __shfl_xor_sync(0xffffffffu, s, o);
        s *= scale;
        if (softcap > 0.0f)
            s = softcap * tanhf(softcap_in > 0.0f ? s * softcap_in : s / softcap);
        if (alibi > 0.0f) /* ALiBi: the head's slope times the key's distance behind the query */
            s = fmaf(kern_alibi_slope(alibi, n_head, h), (float)(j - (n_keys - 1)), s);
        const float m_new = fmaxf(m, s), corr = expf(m - m_new), p = expf(s - m_new);
        l = l * corr + p;
#pragma unroll
        for (int r = 0; r < ATT_PER_LANE; r++) {
            const int d = lane + 32 * r;
            acc[r] = acc[r] * corr + (d < dv ? p * vv[d] : 0.0f);
        }
        m = m_new;
    }
    __shared__ float sm[ATT_WARPS], sl[ATT_WARPS], sacc[ATT_WARPS][ATT_MAX_D];
    if (lane == 0) {
        sm[warp] = m;
        sl[warp] = l;
    }
#pragma unroll
    for (int r = 0; r < ATT_PER_LANE; r++) {
        const int d = lane + 32 * r;
        if (d < dv)
            sacc[warp][d] = acc[r];
    }
    __syncthreads();
    /* a sink is one more logit in the softmax with no value: in the max and the denominator only */
    const float sink = sinks ? sinks[h] : -INFINITY;
    float M = sink;
    for (int w = 0; w < ATT_WARPS; w++)
        M = fmaxf(M, sm[w]);
    float *o = out + ((size_t)t * n_head + h) * dv;
    for (int d = threadIdx.x; d < dv; d += blockDim.x) {
        float num = 0.0f, den = 0.0f;
        for (int w = 0; w < ATT_WARPS; w++) {
            if (sm[w] == -INFINITY)
                continue;  /* a warp that saw no key (fewer keys than warps) */
            const float f = expf(sm[w] - M);
            num += sacc[w][d] * f;
            den += sl[w] * f;
        }
        if (sinks)
            den += expf(sink - M);
        o[d] = num / den;
    }
}

kern_status cu_attention(kern_backend *b, const float *q, const float *k_cache, const float *v_cache, int T, int pos0,
                         const kern_attn *a, float *out)
{
    const int dv = kern_attn_v_dim(a);
    if (a->n_kv_head <= 0 || a->n_head % a->n_kv_head || a->head_dim > ATT_MAX_D || a->head_dim < 1 || a->window < 0 ||
        a->v_dim < 0 || dv > ATT_MAX_D)
        return KERN_E_SHAPE;
    const cu_weight *sw = a->sinks ? (const cu_weight *)a->sinks->dev : NULL;
    if (a->sinks && (!sw || !sw->vec || sw->ne0 * sw->ne1 != a->n_head))
        return KERN_E_SHAPE;
    dim3 grid(a->n_head, T);
    /* the grid does not depend on the position: a replay may move it */
    const int *pos_dev = cu_step_pos(cu_of(b), &pos0);
    if (kern_status ls = cu_launch(b, "attention_k", attention_k, dim3(grid), dim3(ATT_WARPS * 32), q, k_cache, v_cache,
                                   pos_dev, pos0, a->n_head, a->n_kv_head, a->head_dim, dv, a->scale, a->softcap,
                                   a->softcap_in, a->alibi_max_bias, a->window, a->chunked, sw ? sw->vec : NULL, out))
        return ls;
    return KERN_OK;
}
