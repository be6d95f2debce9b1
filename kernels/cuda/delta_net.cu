/*
 * The recurrent layers' ops on the device (kern.h's ssm_conv, ssm_scan and delta_net), as kernels/cpu/delta_net.c
 * computes them: the convolution one thread per channel, its taps in the CPU's order; the delta rule one block per
 * value head, one thread per row of the head's state (a value index), tokens in turn. The state lives in the
 * context's device memory between calls.
 */
#include "cuda.h"
#include "ssm_conv.h"
#include "ssm_scan.h"

#include <math.h>

__global__ void ssm_conv_k(const float *taps, const float *bias, const float *x, int T, int n, int d_conv, bool silu,
                           float *state, float *out)
{
    kc_grid_wait();
    const int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c < n)
        ssm_conv_channel(taps + (size_t)c * d_conv, bias, x, T, n, c, d_conv, silu, state, out);
}

kern_status cu_ssm_conv(kern_backend *b, const kern_weight *w, const kern_weight *bias, const float *x, int T, int n,
                        int d_conv, bool silu, float *state, float *out)
{
    const cu_weight *cw = w ? (const cu_weight *)w->dev : NULL;
    const cu_weight *cb = bias ? (const cu_weight *)bias->dev : NULL;
    if (T < 0 || n < 1 || d_conv < 1 || d_conv > SSM_CONV_MAX_TAPS || !cw || cw->ne0 != d_conv || cw->ne1 != n ||
        (bias && (!cb || !cb->vec || cb->ne0 * cb->ne1 != n)))
        return KERN_E_SHAPE;
    if (cw->type != GGUF_TENSOR_F32) /* llama-quantize keeps the taps F32 */
        return KERN_E_UNSUPPORTED;
    return cu_launch(b, "ssm_conv_k", ssm_conv_k, dim3((unsigned)((n + 127) / 128)), dim3(128),
                     (const float *)cw->data, cb ? (const float *)cb->vec : (const float *)NULL, x, T, n, d_conv, silu,
                     state, out);
}

/* Mamba's scan: one thread per row of a head's state (n_head x head_dim of them), tokens in turn (ssm_scan.h); a decay
 * rate per head (Mamba-2) or per head and state value (Mamba-1: a_per_state). */
__global__ void ssm_scan_k(ssm_scan_shape sh, const float *xbc, const float *dt, const float *dt_bias, const float *a,
                           bool a_per_state, const float *d, float *state, float *out)
{
    kc_grid_wait();
    const int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= sh.n_head * sh.head_dim)
        return;
    const int h = r / sh.head_dim, i = r % sh.head_dim;
    ssm_scan_row(&sh, xbc, dt, dt_bias[h], a + (size_t)h * (a_per_state ? sh.d_state : 1), a_per_state, d[h], h, i,
                 state + (size_t)r * sh.d_state, out);
}

kern_status cu_ssm_scan(kern_backend *b, const float *xbc, const float *dt, size_t ld_dt, const kern_weight *dt_bias,
                        const kern_weight *a, const kern_weight *d, float *state, int T, int n_head, int head_dim,
                        int n_group, int d_state, float *out)
{
    const kern_weight *const vecs[3] = { dt_bias, a, d };
    const float *v[3];
    const cu_weight *ca = a ? (const cu_weight *)a->dev : NULL;
    /* a decay rate per head (Mamba-2), or per head and state value (Mamba-1's A: d_state x n_head) */
    const bool per_state = ca && ca->ne0 * ca->ne1 == (int64_t)n_head * d_state && d_state > 1;
    for (int i = 0; i < 3; i++) {
        const cu_weight *cw = vecs[i] ? (const cu_weight *)vecs[i]->dev : NULL;
        if (!cw || !cw->vec || cw->ne0 * cw->ne1 != (int64_t)n_head * (i == 1 && per_state ? d_state : 1))
            return KERN_E_SHAPE;
        v[i] = cw->vec;
    }
    if (T < 0 || n_head < 1 || head_dim < 1 || n_group < 1 || d_state < 1 || n_head % n_group)
        return KERN_E_SHAPE;
    const ssm_scan_shape sh = { T, n_head, head_dim, n_group, d_state, ld_dt };
    const int rows = n_head * head_dim;
    return cu_launch(b, "ssm_scan_k", ssm_scan_k, dim3((unsigned)((rows + 127) / 128)), dim3(128), sh, xbc, dt, v[0],
                     v[1], per_state, v[2], state, out);
}

/* The sum of v over the block (blockDim.x a multiple of 32, at most 1024), in every thread. */
static __device__ float block_sum(float v, float *scratch)
{
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_xor_sync(0xffffffffu, v, o);
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, warps = blockDim.x / 32;
    __syncthreads();
    if (lane == 0)
        scratch[warp] = v;
    __syncthreads();
    float total = 0.0f;
    for (int i = 0; i < warps; i++)
        total += scratch[i];
    return total;
}

enum { DN_MAX_D = 1024 };

/* One block per value head, d <= blockDim.x threads: thread j owns row j of the head's state. Shared memory holds
 * the normed q and k of the token. */
__global__ void delta_net_k(const float *qkv, const float *beta, const float *alpha, const float *dt, const float *a,
                            float *state, int T, int hk, int hv, bool grouped, int d, float eps, float *out)
{
    kc_grid_wait();
    __shared__ float qn[DN_MAX_D], kn[DN_MAX_D], scratch[32];
    const int h = blockIdx.x, j = threadIdx.x, kh = grouped ? h / (hv / hk) : h % hk;
    const size_t row = (size_t)(2 * hk + hv) * d;
    float *S = state + (size_t)h * d * d;
    const float scale = 1.0f / sqrtf((float)d);
    for (int t = 0; t < T; t++) {
        const float *r = qkv + (size_t)t * row;
        const float qj = j < d ? r[(size_t)kh * d + j] : 0.0f, kj = j < d ? r[(size_t)(hk + kh) * d + j] : 0.0f;
        const float qs = 1.0f / fmaxf(sqrtf(block_sum(qj * qj, scratch)), eps);
        const float ks = 1.0f / fmaxf(sqrtf(block_sum(kj * kj, scratch)), eps);
        if (j < d) {
            qn[j] = qj * qs;
            kn[j] = kj * ks;
        }
        __syncthreads();
        const float x = alpha[(size_t)t * hv + h] + dt[h];
        const float decay = expf((x > 20.0f ? x : logf(1.0f + expf(x))) * a[h]);
        const float bt = 1.0f / (1.0f + expf(-beta[(size_t)t * hv + h]));
        if (j < d) {
            float *Sj = S + (size_t)j * d;
            float sk = 0.0f;
            for (int i = 0; i < d; i++) {
                Sj[i] *= decay;
                sk += Sj[i] * kn[i];
            }
            const float delta = (r[(size_t)(2 * hk + h) * d + j] - sk) * bt;
            float o = 0.0f;
            for (int i = 0; i < d; i++) {
                Sj[i] += kn[i] * delta;
                o += Sj[i] * qn[i];
            }
            out[(size_t)t * hv * d + (size_t)h * d + j] = o * scale;
        }
        __syncthreads();
    }
}

kern_status cu_delta_net(kern_backend *b, const float *qkv, const float *beta, const float *alpha,
                         const kern_weight *dt, const kern_weight *a, float *state, int T, int hk, int hv,
                         bool grouped, int d, float eps, float *out)
{
    const cu_weight *cdt = dt ? (const cu_weight *)dt->dev : NULL, *ca = a ? (const cu_weight *)a->dev : NULL;
    if (T < 0 || hk < 1 || hv < 1 || d < 1 || d > DN_MAX_D || hv % hk || !cdt || !ca || !cdt->vec || !ca->vec ||
        cdt->ne0 * cdt->ne1 != hv || ca->ne0 * ca->ne1 != hv)
        return KERN_E_SHAPE;
    const unsigned threads = (unsigned)((d + 31) / 32 * 32);
    return cu_launch(b, "delta_net_k", delta_net_k, dim3((unsigned)hv), dim3(threads), qkv, beta, alpha,
                     (const float *)cdt->vec, (const float *)ca->vec, state, T, hk, hv, grouped, d, eps, out);
}
