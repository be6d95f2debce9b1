/*
 * Per-row and element-wise ops of the CUDA backend: token embedding,
 * RMSNorm, rotary embedding, gated activations (SwiGLU, GeGLU), scaling,
 * soft-capping, residual add, row statistics (argmax and top-k: top_k.cu).
 * The math is the CPU backend's (kernels/cpu/ops.c) term for term: sums of
 * squares in double, rotary angles in double, so that the two backends differ
 * only in summation order.
 */
#include "act.cuh"
#include "act_xielu.h"
#include "blocks.cuh"
#include "cuda.h"
#include "row_stats.h"
#include "rope_yarn.h"

#include <math.h>

/* ---- block reductions ---------------------------------------------------- */

template <typename V> __device__ V warp_sum(V v)
{
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

/* Sum over a block of up to 1024 threads; every thread gets the result. */
template <typename V> __device__ V block_sum(V v)
{
    __shared__ V part[32];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, n_warps = (blockDim.x + 31) >> 5;
    v = warp_sum(v);
    __syncthreads();  /* part[] may still be read by a previous call */
    if (lane == 0)
        part[warp] = v;
    __syncthreads();
    v = lane < n_warps ? part[lane] : (V)0;
    return warp_sum(v);
}

/* ---- embedding ------------------------------------------------------------ */

/* Rows of w into out (T, K): row tokens[t], or where tokens is NULL row row0 + t (+ *pos_dev where a replayed step
 * keeps its position on the device), written (embed) or added to what out holds (add_rows). */
template <uint32_t TYPE, bool ADD>
__global__ void embed_rows(const uint8_t *w, size_t row_bytes, int64_t K, const int32_t *tokens, const int *pos_dev,
                           int row0, float *out)
{
    kc_grid_wait();
    const int t = blockIdx.y;
    const int64_t r = tokens ? tokens[t] : (int64_t)row0 + (pos_dev ? *pos_dev : 0) + t;
    const uint8_t *row = w + (size_t)r * row_bytes;
    float *o = out + (size_t)t * K;
    if (K % 8 == 0) {
        for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < K / 8; i += (int64_t)gridDim.x * blockDim.x) {
            float v[8];
            decode8<TYPE>(row, i, v);
            for (int k = 0; k < 8; k++)
                o[8 * i + k] = ADD ? __fadd_rn(o[8 * i + k], v[k]) : v[k];
        }
    } else {
        for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < K; i += (int64_t)gridDim.x * blockDim.x)
            o[i] = ADD ? __fadd_rn(o[i], kc_decode1(TYPE, row, i)) : kc_decode1(TYPE, row, i);
    }
}

kern_status cu_embed(kern_backend *b, const kern_weight *w, const int32_t *tokens, int T, float *out)
{
    cu_ctx *c = cu_of(b);
    const cu_weight *cw = (const cu_weight *)w->dev;
    if ((size_t)T > c->tok_cap) {
        /* Prompts longer than the staging buffers: grow both (never while recording: decode is one token). */
        if (c->capturing)
            return KERN_E_SHAPE;
        cudaFreeHost(c->tok_host);
        c->tok_host = NULL;
        c->exec_key = 0; /* a recorded step's copy node read the old staging buffer: no replays of it */
        c->tok_cap = 0;
        if (!CU_OK(b, cudaMallocHost((void **)&c->tok_host, (size_t)T * sizeof(int32_t))))
            return cu_status(b);
        cudaFree(c->tok_dev);
        c->tok_dev = NULL;
        kern_status s = cu_malloc(b, (void **)&c->tok_dev, (size_t)T * sizeof(int32_t), "token ids");
        if (s)
            return s;
        c->tok_cap = (size_t)T;
    }
    /* The previous step has finished with the staging buffer: every step ends in a synchronizing copy. */
    memcpy(c->tok_host, tokens, (size_t)T * sizeof(int32_t));
    if (!CU_OK(b, cudaMemcpyAsync(c->tok_dev, c->tok_host, (size_t)T * sizeof(int32_t), cudaMemcpyHostToDevice,
                                  c->stream)))
        return cu_status(b);
    const int64_t K = cw->ne0;
    const int per_row = (int)((K / 8 + 255) / 256);
    dim3 grid(per_row > 0 ? per_row : 1, T);
    kern_status ls = KERN_OK;
    bool known = kc_dispatch(cw->type, [&]<uint32_t TYPE>() {
        ls = cu_launch(b, "embed_rows", embed_rows<TYPE, false>, grid, dim3(256), cw->data, cw->row_bytes, K,
                       (const int32_t *)c->tok_dev, (const int *)NULL, 0, out);
    });
    return known ? ls : KERN_E_UNSUPPORTED;
}

kern_status cu_add_rows(kern_backend *b, const kern_weight *w, int row0, int T, float *x)
{
    const cu_weight *cw = (const cu_weight *)w->dev;
    if (row0 < 0 || T < 1 || (int64_t)row0 + T > cw->ne1)
        return KERN_E_SHAPE;
    const int *pos_dev = cu_step_pos(cu_of(b), &row0);
    const int64_t K = cw->ne0;
    const int per_row = (int)((K / 8 + 255) / 256);
    dim3 grid(per_row > 0 ? per_row : 1, T);
    kern_status ls = KERN_OK;
    bool known = kc_dispatch(cw->type, [&]<uint32_t TYPE>() {
        ls = cu_launch(b, "add_rows", embed_rows<TYPE, true>, grid, dim3(256), cw->data, cw->row_bytes, K,
                       (const int32_t *)NULL, pos_dev, row0, x);
    });
    return known ? ls : KERN_E_UNSUPPORTED;
}

/* ---- RMSNorm ------------------------------------------------------------- */

/* One row's norm by one block; each thread reads back only the values it summed (and, in add_rmsnorm_rows, wrote),
 * so the fused add needs no barrier. Rounded as written (no contraction): rmsnorm_rows and add_rmsnorm_rows give
 * the same bits. */
__device__ void rmsnorm_row(const float *xr, const float *g, int n, float eps, float *o)
{
    double ss = 0.0;
    for (int i = threadIdx.x; i < n; i += blockDim.x)
        ss = __dadd_rn(ss, __dmul_rn((double)xr[i], (double)xr[i]));
    ss = block_sum(ss);
    const float scale = 1.0f / sqrtf((float)(ss / n) + eps);
    for (int i = threadIdx.x; i < n; i += blockDim.x)
        o[i] = g ? xr[i] * scale * g[i] : xr[i] * scale; /* no gains: ggml_rms_norm alone */
}

__global__ void rmsnorm_rows(const float *x, const float *g, int m, int n, float eps, float *out)
{
    kc_grid_wait();
    g = g ? g + (size_t)(blockIdx.x % m) * n : NULL; /* a row's gains: one set, or each group's (m of them) */
    rmsnorm_row(x + (size_t)blockIdx.x * n, g, n, eps, out + (size_t)blockIdx.x * n);
}

__global__ void add_rmsnorm_rows(float *x, const float *y, const float *g, int n, float eps, float *out)
{
    kc_grid_wait();
    float *xr = x + (size_t)blockIdx.x * n;
    const float *yr = y + (size_t)blockIdx.x * n;
    for (int i = threadIdx.x; i < n; i += blockDim.x)
        xr[i] = __fadd_rn(xr[i], yr[i]);
    rmsnorm_row(xr, g, n, eps, out + (size_t)blockIdx.x * n);
}

kern_status cu_add_rmsnorm(kern_backend *b, float *x, const float *y, const kern_weight *w, int T, int n, float eps,
                           float *out)
{
    const cu_weight *cw = (const cu_weight *)w->dev;
    if (!cw->vec || cw->ne0 * cw->ne1 != n)
        return KERN_E_SHAPE;
    if (kern_status ls = cu_launch(b, "add_rmsnorm_rows", add_rmsnorm_rows, dim3(T), dim3(256), x, y,
                                   cw->vec, n, eps, out))
        return ls;
    return KERN_OK;
}

/* ggml_norm's order in a block: the sum, the mean in float, the squares of x - mean, the variance in float. */
__global__ void layernorm_rows(const float *x, const float *g, const float *bias, int m, int n, float eps, float *out)
{
    kc_grid_wait();
    const float *xr = x + (size_t)blockIdx.x * n;
    g = g ? g + (size_t)(blockIdx.x % m) * n : NULL; /* a row's gains: one set, or each head's (m of them) */
    float *o = out + (size_t)blockIdx.x * n;
    double sum = 0.0;
    for (int i = threadIdx.x; i < n; i += blockDim.x)
        sum = __dadd_rn(sum, (double)xr[i]);
    const float mean = (float)(block_sum(sum) / n);
    double sum2 = 0.0;
    for (int i = threadIdx.x; i < n; i += blockDim.x) {
        const float v = __fsub_rn(xr[i], mean);
        sum2 = __dadd_rn(sum2, (double)__fmul_rn(v, v));
    }
    const float scale = 1.0f / sqrtf((float)(block_sum(sum2) / n) + eps);
    for (int i = threadIdx.x; i < n; i += blockDim.x) {
        const float v = __fmul_rn(__fsub_rn(xr[i], mean), scale);
        const float scaled = g ? __fmul_rn(v, g[i]) : v;
        o[i] = bias ? __fadd_rn(scaled, bias[i]) : scaled;
    }
}

kern_status cu_layernorm(kern_backend *b, const kern_weight *w, const kern_weight *bias, const float *x, int T, int n,
                         float eps, float *out)
{
    const cu_weight *cw = w ? (const cu_weight *)w->dev : NULL, *cb = bias ? (const cu_weight *)bias->dev : NULL;
    if (cw && (!cw->vec || n <= 0 || (cw->ne0 * cw->ne1) % n))
        return KERN_E_SHAPE;
    if (cb && (!cb->vec || cb->ne0 * cb->ne1 != n))
        return KERN_E_SHAPE;
    const int m = cw ? (int)(cw->ne0 * cw->ne1 / n) : 1;
    if (kern_status ls = cu_launch(b, "layernorm_rows", layernorm_rows, dim3(T), dim3(256), x, cw ? cw->vec : NULL,
                                   cb ? cb->vec : NULL, m, n, eps, out))
        return ls;
    return KERN_OK;
}

__global__ void add_bias_rows(float *x, const float *bias, int n)
{
    float *r = x + (size_t)blockIdx.x * n;
    for (int i = threadIdx.x; i < n; i += blockDim.x)
        r[i] += bias[i];
}

kern_status cu_add_bias(kern_backend *b, const kern_weight *bias, int T, int n, float *x)
{
    const cu_weight *cb = bias ? (const cu_weight *)bias->dev : NULL;
    if (!cb || !cb->vec || cb->ne0 * cb->ne1 != n)
        return KERN_E_SHAPE;
    if (kern_status ls = cu_launch(b, "add_bias_rows", add_bias_rows, dim3(T), dim3(256), x, cb->vec, n))
        return ls;
    return KERN_OK;
}

kern_status cu_rmsnorm(kern_backend *b, const kern_weight *w, const float *x, int T, int n, float eps, float *out)
{
    const cu_weight *cw = w ? (const cu_weight *)w->dev : NULL;
    if (cw && (!cw->vec || n < 1 || (cw->ne0 * cw->ne1) % n))
        return KERN_E_SHAPE;
    const float *gains = cw ? cw->vec : NULL;
    const int m = cw ? (int)(cw->ne0 * cw->ne1 / n) : 1;
    if (kern_status ls = cu_launch(b, "rmsnorm_rows", rmsnorm_rows, dim3(T), dim3(256), x, gains, m, n, eps, out))
        return ls;
    return KERN_OK;
}

/* ---- rotary embedding ------------------------------------------------------ */

/* Frequency divisors travel as a kernel argument: a recorded decode step then
 * needs no device copy of them, and a replay reads the values it was given. */
enum { ROPE_MAX_HALF = 256 };
typedef struct rope_args {
    int n_rot, neox, has_factors;
    float base, freq_scale, ext_factor, attn_factor, corr_lo, corr_hi;
    float factors[ROPE_MAX_HALF];
} rope_args;

/* theta_i = pos * base^(-2i / n_rot) / factor_i, interpolated by freq_scale (and blended as YaRN says), in double
 * as on the CPU; pair i of the head at v rotated by it. rope_rows and rope_store_k both rotate through this, so
 * the fused op's bits are the separate ops'. */
__device__ void rope_pair(float *v, int i, int pos, const rope_args &a)
{
    const int half = a.n_rot / 2;
    double theta = (double)pos * pow((double)a.base, -2.0 * i / a.n_rot);
    if (a.has_factors)
        theta /= a.factors[i];
    theta = rope_yarn_theta(theta, a.freq_scale, a.ext_factor, a.corr_lo, a.corr_hi, i);
    const double mscale = rope_yarn_mscale(a.freq_scale, a.ext_factor, a.attn_factor);
    const float c = (float)(cos(theta) * mscale), s = (float)(sin(theta) * mscale);
    const int p = a.neox ? i : 2 * i, q = a.neox ? i + half : 2 * i + 1;
    const float x0 = v[p], x1 = v[q];
    /* rounded as written (no contraction into a multiply-add): the same bits wherever this is inlined, and the
     * CPU's arithmetic */
    v[p] = __fsub_rn(__fmul_rn(x0, c), __fmul_rn(x1, s));
    v[q] = __fadd_rn(__fmul_rn(x0, s), __fmul_rn(x1, c));
}

__global__ void rope_rows(float *x, int n_head, int head_dim, const int *pos_dev, int pos0, rope_args a)
{
    kc_grid_wait();
    const int half = a.n_rot / 2, t = blockIdx.y;
    if (pos_dev)
        pos0 += *pos_dev;
    for (int k = blockIdx.x * blockDim.x + threadIdx.x; k < n_head * half; k += gridDim.x * blockDim.x)
        rope_pair(x + ((size_t)t * n_head + k / half) * head_dim, k % half, pos0 + t, a);
}

static kern_status rope_args_of(const kern_rope *r, int head_dim, rope_args *a)
{
    const int half = r->n_rot / 2;
    if (r->n_rot > head_dim || r->n_rot % 2 || half > ROPE_MAX_HALF)
        return KERN_E_SHAPE;
    *a = rope_args{};
    a->n_rot = r->n_rot;
    a->neox = r->neox;
    a->base = r->base;
    a->freq_scale = r->freq_scale;
    a->ext_factor = r->ext_factor;
    a->attn_factor = r->attn_factor;
    a->corr_lo = r->corr_lo;
    a->corr_hi = r->corr_hi;
    a->has_factors = r->freq_factors != NULL;
    for (int i = 0; a->has_factors && i < half; i++)
        a->factors[i] = r->freq_factors[i];
    return KERN_OK;
}

kern_status cu_rope(kern_backend *b, float *x, int T, int n_head, int head_dim, int pos0, const kern_rope *r)
{
    rope_args a;
    kern_status st = rope_args_of(r, head_dim, &a);
    if (st)
        return st;
    const int work = n_head * (r->n_rot / 2);
    dim3 grid(work > 0 ? (work + 127) / 128 : 1, T);
    const int *pos_dev = cu_step_pos(cu_of(b), &pos0);
    if (kern_status ls = cu_launch(b, "rope_rows", rope_rows, dim3(grid), dim3(128), x, n_head, head_dim, pos_dev, pos0,
                                   a))
        return ls;
    return KERN_OK;
}

/* Row t of q's heads and k's heads rotated, k's row (rotated pairs and the dimensions past n_rot) and v's into the
 * caches' row pos0 + t: one thread per pair of q, per dimension of k and per value of v. */
__global__ void rope_store_k(float *q, float *k, const float *v, int n_head, int n_kv, int hd, const int *pos_dev,
                             int pos0, rope_args a, float *kc, float *vc)
{
    kc_grid_wait();
    const int half = a.n_rot / 2, t = blockIdx.y, kv_dim = n_kv * hd, nq = n_head * half;
    if (pos_dev)
        pos0 += *pos_dev;
    const int pos = pos0 + t;
    float *qt = q + (size_t)t * n_head * hd, *kt = k + (size_t)t * kv_dim, *kd = kc + (size_t)pos * kv_dim;
    const float *vt = v + (size_t)t * kv_dim;
    for (int j = blockIdx.x * blockDim.x + threadIdx.x; j < nq + 2 * kv_dim; j += gridDim.x * blockDim.x) {
        if (j < nq) {
            rope_pair(qt + (size_t)(j / half) * hd, j % half, pos, a);
        } else if (j < nq + kv_dim) {
            const int e = j - nq, h = e / hd, d = e % hd;
            float *head = kt + (size_t)h * hd;
            if (d < half) { /* the pair's two values, rotated, into the cache as well */
                rope_pair(head, d, pos, a);
                const int p = a.neox ? d : 2 * d, r = a.neox ? d + half : 2 * d + 1;
                kd[(size_t)h * hd + p] = head[p];
                kd[(size_t)h * hd + r] = head[r];
            } else if (d >= a.n_rot) {
                kd[e] = head[d];
            }
        } else {
            const int e = j - nq - kv_dim;
            vc[(size_t)pos * kv_dim + e] = vt[e];
        }
    }
}

kern_status cu_rope_store(kern_backend *b, float *q, float *k, const float *v, int T, int n_head, int n_kv_head,
                          int head_dim, int pos0, const kern_rope *r, float *k_cache, float *v_cache)
{
    rope_args a;
    kern_status st = rope_args_of(r, head_dim, &a);
    if (st)
        return st;
    const int work = n_head * (r->n_rot / 2) + 2 * n_kv_head * head_dim;
    dim3 grid((work + 127) / 128, T);
    const int *pos_dev = cu_step_pos(cu_of(b), &pos0);
    if (kern_status ls = cu_launch(b, "rope_store_k", rope_store_k, dim3(grid), dim3(128), q, k, v, n_head, n_kv_head,
                                   head_dim, pos_dev, pos0, a, k_cache, v_cache))
        return ls;
    return KERN_OK;
}

/* ---- element-wise ------------------------------------------------------------ */

template <kern_act ACT> __global__ void glu_k(const float *gate, const float *up, size_t n, float *out)
{
    kc_grid_wait();
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        out[i] = kc_glu(ACT, gate[i], up ? up[i] : 1.0f); /* up NULL: the activation alone (kern_act_alone's) */
}

__global__ void add_k(float *x, const float *y, size_t n)
{
    kc_grid_wait();
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        x[i] += y[i];
}

__global__ void scale_k(float *x, size_t n, float s)
{
    kc_grid_wait();
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        x[i] *= s;
}

/* As the CPU: x * (1/cap), tanh, * cap. */
__global__ void softcap_k(float *x, size_t n, float inv, float cap)
{
    kc_grid_wait();
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        x[i] = tanhf(x[i] * inv) * cap;
}

/* As the CPU (ggml_clamp's comparisons: a NaN becomes hi). */
__global__ void clamp_k(float *x, size_t n, float lo, float hi)
{
    kc_grid_wait();
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        const float v = x[i] < hi ? x[i] : hi;
        x[i] = v > lo ? v : lo;
    }
}

/* ggml_xielu's function (act_xielu.h) */
__global__ void xielu_k(const float *x, size_t n, kern_xielu p, float *out)
{
    kc_grid_wait();
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        out[i] = act_xielu(x[i], p.alpha_n, p.alpha_p, p.beta, p.eps);
}

kern_status cu_glu(kern_backend *b, kern_act act, const float *gate, const float *up, size_t n, size_t row, float *out)
{
    (void)row; /* element-wise here: rows matter only to the CPU's --numerics ggml */
    if (!up && !kern_act_alone(act))
        return KERN_E_UNSUPPORTED;
    void (*kernel)(const float *, const float *, size_t, float *) = NULL;
    switch (act) {
    case KERN_ACT_SILU: kernel = glu_k<KERN_ACT_SILU>; break;
    case KERN_ACT_GELU_TANH: kernel = glu_k<KERN_ACT_GELU_TANH>; break;
    case KERN_ACT_SWIGLU_OAI: kernel = glu_k<KERN_ACT_SWIGLU_OAI>; break;
    case KERN_ACT_SIGMOID: kernel = glu_k<KERN_ACT_SIGMOID>; break;
    case KERN_ACT_NONE: kernel = glu_k<KERN_ACT_NONE>; break;
    case KERN_ACT_RELU: kernel = glu_k<KERN_ACT_RELU>; break;
    case KERN_ACT_SOFTPLUS: kernel = glu_k<KERN_ACT_SOFTPLUS>; break;
    }
    if (!kernel)
        return KERN_E_UNSUPPORTED;
    return cu_launch(b, "glu_k", kernel, dim3(cu_grid(n)), dim3(256), gate, up, n, out);
}

kern_status cu_scale(kern_backend *b, float *x, size_t n, float s)
{
    if (kern_status ls = cu_launch(b, "scale_k", scale_k, dim3(cu_grid(n)), dim3(256), x, n, s))
        return ls;
    return KERN_OK;
}

kern_status cu_softcap(kern_backend *b, float *x, size_t n, float cap)
{
    if (!(cap > 0.0f))
        return KERN_E_SHAPE;
    if (kern_status ls = cu_launch(b, "softcap_k", softcap_k, dim3(cu_grid(n)), dim3(256), x, n, 1.0f / cap, cap))
        return ls;
    return KERN_OK;
}

kern_status cu_clamp(kern_backend *b, float *x, size_t n, float lo, float hi)
{
    if (!(lo <= hi))
        return KERN_E_SHAPE;
    if (kern_status ls = cu_launch(b, "clamp_k", clamp_k, dim3(cu_grid(n)), dim3(256), x, n, lo, hi))
        return ls;
    return KERN_OK;
}

kern_status cu_add(kern_backend *b, float *x, const float *y, size_t n)
{
    if (kern_status ls = cu_launch(b, "add_k", add_k, dim3(cu_grid(n)), dim3(256), x, y, n))
        return ls;
    return KERN_OK;
}

__global__ void store_rows_k(float *dst, const float *src, int T, int n, const int *pos_dev, int pos0)
{
    kc_grid_wait();
    if (pos_dev)
        pos0 += *pos_dev;
    const size_t total = (size_t)T * n;
    float *d = dst + (size_t)pos0 * n;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < total; i += (size_t)gridDim.x * blockDim.x)
        d[i] = src[i];
}

kern_status cu_store_rows(kern_backend *b, float *dst, const float *src, int T, int n, int pos0)
{
    const int *pos_dev = cu_step_pos(cu_of(b), &pos0);
    if (kern_status ls = cu_launch(b, "store_rows_k", store_rows_k, dim3(cu_grid((size_t)T * n)), dim3(256), dst, src,
                                   T, n, pos_dev, pos0))
        return ls;
    return KERN_OK;
}

__global__ void copy_rows_k(float *dst, size_t ld_dst, const float *src, size_t ld_src, int rows, int n)
{
    kc_grid_wait();
    const size_t total = (size_t)rows * n;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < total; i += (size_t)gridDim.x * blockDim.x)
        dst[i / n * ld_dst + i % n] = src[i / n * ld_src + i % n];
}

kern_status cu_copy_rows(kern_backend *b, float *dst, size_t ld_dst, const float *src, size_t ld_src, int rows, int n)
{
    if (rows < 0 || n < 0)
        return KERN_E_SHAPE;
    if (!rows || !n)
        return KERN_OK;
    if (kern_status ls = cu_launch(b, "copy_rows_k", copy_rows_k, dim3(cu_grid((size_t)rows * n)), dim3(256), dst,
                                   ld_dst, src, ld_src, rows, n))
        return ls;
    return KERN_OK;
}

/* ---- row statistics --------------------------------------------------------- */

__global__ void row_stats_k(const float *x, int n, kern_row_stats *out)
{
    kc_grid_wait();
    const float *r = x + (size_t)blockIdx.x * n;
    row_stats_acc a = row_stats_start();
    for (int i = threadIdx.x; i < n; i += blockDim.x)
        row_stats_add(&a, r[i]);
    a.sum = block_sum(a.sum);
    a.ss = block_sum(a.ss);
    a.n_nan = block_sum(a.n_nan);
    a.n_inf = block_sum(a.n_inf);
    a.n_counted = block_sum(a.n_counted);
    /* min/max through the same sum machinery would be wrong: reduce them with their own shuffles. */
    __shared__ float smn[32], smx[32], sma[32];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, n_warps = (blockDim.x + 31) >> 5;
    for (int o = 16; o > 0; o >>= 1) {
        a.mn = fminf(a.mn, __shfl_xor_sync(0xffffffffu, a.mn, o));
        a.mx = fmaxf(a.mx, __shfl_xor_sync(0xffffffffu, a.mx, o));
        a.ma = fmaxf(a.ma, __shfl_xor_sync(0xffffffffu, a.ma, o));
    }
    if (lane == 0) {
        smn[warp] = a.mn;
        smx[warp] = a.mx;
        sma[warp] = a.ma;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        for (int w = 1; w < n_warps; w++) {
            a.mn = fminf(a.mn, smn[w]);
            a.mx = fmaxf(a.mx, smx[w]);
            a.ma = fmaxf(a.ma, sma[w]);
        }
        out[blockIdx.x] = row_stats_finish(&a);
    }
}

kern_status cu_row_stats(kern_backend *b, const float *x, int T, int n, kern_row_stats *out)
{
    cu_ctx *c = cu_of(b);
    kern_status s = cu_reserve(b, (void **)&c->stats_dev, &c->stats_cap, (size_t)T * sizeof(kern_row_stats),
                               "row statistics");
    if (s)
        return s;
    if (kern_status ls = cu_launch(b, "row_stats_k", row_stats_k, dim3(T), dim3(256), x, n, c->stats_dev))
        return ls;
    if (!CU_OK(b, cudaMemcpyAsync(out, c->stats_dev, (size_t)T * sizeof *out, cudaMemcpyDeviceToHost, c->stream)))
        return cu_status(b);
    if (!CU_OK(b, cudaStreamSynchronize(c->stream)))
        return cu_status(b);
    return KERN_OK;
}

kern_status cu_xielu(kern_backend *b, const float *x, size_t n, const kern_xielu *p, float *out)
{
    if (kern_status ls = cu_launch(b, "xielu_k", xielu_k, dim3(cu_grid(n)), dim3(256), x, n, *p, out))
        return ls;
    return KERN_OK;
}
