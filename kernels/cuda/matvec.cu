/*
 * Matrix-vector products straight from the quantized blocks (the decode
 * path: one token reads every weight byte once), and the dequantization of
 * whole matrices into scratch for the prompt's cuBLAS GEMM.
 *
 * `split` warps per output row (1, 2, 4 or 8; the rest of the 8 warps of a
 * block take the next rows): lane l of the row's warp p decodes the 8-value
 * pieces 32p + l, 32p + l + 32 split, ... of the row (neighbouring lanes read
 * neighbouring bytes), multiplies them with up to CU_MATVEC_MAX_T token
 * vectors, each warp sums its lanes and the row's first warp sums the warps in
 * order. A row to a warp leaves a 1 024-row product with 8 warps on each of an
 * H200's 132 multiprocessors (of 64 it can hold): ncu measured 12 % occupancy
 * and the warps waiting on their loads (long scoreboard) ten cycles to each
 * instruction they issued. Splitting the rows keeps several times more loads
 * in flight.
 */
#include "act.cuh"
#include "blocks.cuh"
#include "cuda.h"

enum { MV_WARPS = 8, MV_THREADS = MV_WARPS * 32 };

/* The sums of block `block`'s rows into acc: the body every matrix-vector kernel shares (matvec_k, matvec_many_k,
 * matvec_glu_k), so that a row's sums are the same bits whichever launch computes them. Returns the row whose sums
 * this thread holds, or -1 (only lane 0 of a row's first warp holds them). Uses the block's shared memory when
 * split > 1: a second call in one kernel must come after a barrier. */
template <uint32_t TYPE, int NT, bool XVEC>
__device__ int64_t matvec_sums(const uint8_t *w, size_t row_bytes, int64_t K, int64_t N, const float *x, int T,
                               int split, int64_t block, float acc[NT])
{
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, part = warp % split;
    const int64_t row = block * (MV_WARPS / split) + warp / split;
    const bool live = row < N;  /* warps past the last row still meet the barrier below */
    const uint8_t *wr = w + (size_t)(live ? row : 0) * row_bytes;
#pragma unroll
    for (int t = 0; t < NT; t++)
        acc[t] = 0.0f;
    const int64_t pieces = live ? K / 8 : 0;
    /* the first weight bytes this lane reads on their way into L2 while the kernel before may still be writing x
     * (a programmatic dependent launch: kc_grid_wait) */
    const int64_t first = 32 * part + lane;
    if (first < pieces) {
        const uint8_t *at = wr + (size_t)(8 * first / kc_traits<TYPE>::qk) * kc_traits<TYPE>::bytes;
        asm volatile("prefetch.global.L2 [%0];" ::"l"(at));
    }
    kc_grid_wait();
#pragma unroll 2
    for (int64_t i = first; i < pieces; i += 32 * split) {
        float v[8];
        decode8<TYPE>(wr, i, v);
#pragma unroll
        for (int t = 0; t < NT; t++) {
            if (t >= T)
                break;
            const float *xp = x + (size_t)t * K + 8 * i;
            float xs[8];
            if (XVEC) {
                const float4 a = ((const float4 *)xp)[0], b = ((const float4 *)xp)[1];
                xs[0] = a.x, xs[1] = a.y, xs[2] = a.z, xs[3] = a.w, xs[4] = b.x, xs[5] = b.y, xs[6] = b.z, xs[7] = b.w;
            } else {
#pragma unroll
                for (int k = 0; k < 8; k++)
                    xs[k] = xp[k];
            }
#pragma unroll
            for (int k = 0; k < 8; k++)
                acc[t] += v[k] * xs[k];
        }
    }
#pragma unroll
    for (int t = 0; t < NT; t++) {
        float s = acc[t];
        for (int o = 16; o > 0; o >>= 1)
            s += __shfl_xor_sync(0xffffffffu, s, o);
        acc[t] = s;
    }
    if (split > 1) {  /* the same for the whole block: the barrier is met by all of it or none */
        __shared__ float sums[MV_WARPS][NT];
        if (lane == 0)
            for (int t = 0; t < NT; t++)
                sums[warp][t] = acc[t];
        __syncthreads();
        for (int t = 0; t < NT; t++) {
            float s = sums[warp - part][t];
            for (int p = 1; p < split; p++)
                s += sums[warp - part + p][t];
            acc[t] = s;
        }
    }
    return live && part == 0 && lane == 0 ? row : -1;
}

/* Block `block` of y = x W^T + bias. */
template <uint32_t TYPE, int NT, bool XVEC>
__device__ void matvec_block(const uint8_t *w, size_t row_bytes, int64_t K, int64_t N, const float *x, int T,
                             const float *bias, float *y, int split, int64_t block)
{
    float acc[NT];
    const int64_t row = matvec_sums<TYPE, NT, XVEC>(w, row_bytes, K, N, x, T, split, block, acc);
    if (row >= 0)
        for (int t = 0; t < T && t < NT; t++)
            y[(size_t)t * N + row] = acc[t] + (bias ? bias[row] : 0.0f);
}

template <uint32_t TYPE, int NT, bool XVEC>
__global__ void __launch_bounds__(MV_THREADS)
matvec_k(const uint8_t *w, size_t row_bytes, int64_t K, int64_t N, const float *x, int T, const float *bias, float *y,
         int split)
{
    matvec_block<TYPE, NT, XVEC>(w, row_bytes, K, N, x, T, bias, y, split, blockIdx.x);
}

/* Up to KERN_MATMUL_MANY products of one type that read the same x in one launch (q, k and v; gate and up): each
 * a run of blocks, each with the split its own launch would have had. */
typedef struct mv_job {
    const uint8_t *w;
    size_t row_bytes;
    int64_t N;
    const float *bias;
    float *y;
    int split;
    unsigned first_block;
} mv_job;

typedef struct mv_jobs {
    mv_job job[KERN_MATMUL_MANY];
    int n;
} mv_jobs;

template <uint32_t TYPE, int NT, bool XVEC>
__global__ void __launch_bounds__(MV_THREADS) matvec_many_k(mv_jobs jobs, int64_t K, const float *x, int T)
{
    int j = 0;
    while (j + 1 < jobs.n && blockIdx.x >= jobs.job[j + 1].first_block)
        j++;
    const mv_job &o = jobs.job[j];
    matvec_block<TYPE, NT, XVEC>(o.w, o.row_bytes, K, o.N, x, T, o.bias, o.y, o.split, blockIdx.x - o.first_block);
}

/* Warps per row: enough for about 32 warps per multiprocessor across the launch (half of what one can
 * hold), a power of two up to a block's 8, while every lane still has a piece of the row to read. */
static int matvec_split(const cu_ctx *c, int64_t rows, int64_t pieces)
{
    const int64_t want = (int64_t)(c->sm_count > 0 ? c->sm_count : 132) * 32;
    int split = 1;
    while (split < MV_WARPS && rows * split < want && pieces >= 32 * (2 * split))
        split *= 2;
    return split;
}

/* Float rows whose length is not a multiple of 8: one value at a time. */
/* out = act(x Wg^T + bg) * (x Wu^T + bu), the gate's and the up's rows summed as matvec_k sums them (the same
 * split: both have the same shape) and the activation as glu applies it. */
template <uint32_t TYPE, int NT, bool XVEC>
__global__ void __launch_bounds__(MV_THREADS)
matvec_glu_k(const uint8_t *wg, const uint8_t *wu, size_t row_bytes, int64_t K, int64_t N, const float *x, int T,
             const float *bg, const float *bu, kern_act act, float *out, int split)
{
    float g[NT], u[NT];
    const int64_t row = matvec_sums<TYPE, NT, XVEC>(wg, row_bytes, K, N, x, T, split, blockIdx.x, g);
    if (split > 1)
        __syncthreads(); /* the gate's partial sums are read before the up's overwrite them */
    matvec_sums<TYPE, NT, XVEC>(wu, row_bytes, K, N, x, T, split, blockIdx.x, u);
    if (row >= 0)
        for (int t = 0; t < T && t < NT; t++)
            out[(size_t)t * N + row] = kc_glu(act, g[t] + (bg ? bg[row] : 0.0f), u[t] + (bu ? bu[row] : 0.0f));
}

__global__ void matvec_any_k(uint32_t type, const uint8_t *w, size_t row_bytes, int64_t K, int64_t N, const float *x,
                             int T, const float *bias, float *y)
{
    kc_grid_wait();
    const int64_t row = (int64_t)blockIdx.x * MV_WARPS + (threadIdx.x >> 5);
    if (row >= N)
        return;
    const int lane = threadIdx.x & 31;
    const uint8_t *wr = w + (size_t)row * row_bytes;
    for (int t = 0; t < T; t++) {
        float s = 0.0f;
        for (int64_t i = lane; i < K; i += 32)
            s += kc_decode1(type, wr, i) * x[(size_t)t * K + i];
        for (int o = 16; o > 0; o >>= 1)
            s += __shfl_xor_sync(0xffffffffu, s, o);
        if (lane == 0)
            y[(size_t)t * N + row] = s + (bias ? bias[row] : 0.0f);
    }
}

bool cu_supports(uint32_t type)
{
    return kc_dispatch(type, [&]<uint32_t TYPE>() {});  /* [&]: no function-pointer conversion to warn about */
}

/* f.template operator()<TYPE, NT, XVEC>() for the weight type, the kernels' token count (one, or up to
 * CU_MATVEC_MAX_T) and whether x allows 16-byte loads: the one place a matrix-vector launch picks its instance.
 * False for a type the kernels do not read. */
template <typename F> static bool mv_dispatch(uint32_t type, int T, bool xvec, F &&f)
{
    return kc_dispatch(type, [&]<uint32_t TYPE>() {
        if (T == 1 && xvec)
            f.template operator()<TYPE, 1, true>();
        else if (T == 1)
            f.template operator()<TYPE, 1, false>();
        else if (xvec)
            f.template operator()<TYPE, CU_MATVEC_MAX_T, true>();
        else
            f.template operator()<TYPE, CU_MATVEC_MAX_T, false>();
    });
}

kern_status cu_matvec(kern_backend *b, const cu_weight *w, const float *bias, const float *x, int T, float *y)
{
    if (T < 1 || T > CU_MATVEC_MAX_T)
        return KERN_E_SHAPE;
    if (w->ne0 % 8) {
        const unsigned blocks = (unsigned)((w->ne1 + MV_WARPS - 1) / MV_WARPS);
        if (kern_status ls = cu_launch(b, "matvec_any_k", matvec_any_k, dim3(blocks), dim3(MV_THREADS),
                                       w->type, w->data, w->row_bytes, w->ne0, w->ne1, x, T, bias, y))
            return ls;
        return KERN_OK;
    }
    const bool xvec = (uintptr_t)x % 16 == 0;
    const int split = matvec_split(cu_of(b), w->ne1, w->ne0 / 8), rows_per_block = MV_WARPS / split;
    const unsigned blocks = (unsigned)((w->ne1 + rows_per_block - 1) / rows_per_block);
    kern_status ls = KERN_OK;
    bool known = mv_dispatch(w->type, T, xvec, [&]<uint32_t TYPE, int NT, bool XVEC>() {
        ls = cu_launch(b, "matvec_k", matvec_k<TYPE, NT, XVEC>, dim3(blocks), dim3(MV_THREADS), w->data,
                       w->row_bytes, w->ne0, w->ne1, x, T, bias, y, split);
    });
    return known ? ls : KERN_E_UNSUPPORTED;
}

/* ws[i] times x into ys[i] in one launch where they share a type and a row length of whole pieces and T is a
 * decode's; else one product after another (cu_matmul: the prompt's GEMMs). */
kern_status cu_matmul_many(kern_backend *b, int n, const kern_weight *const ws[], const kern_weight *const biases[],
                           const float *x, int T, float *const ys[])
{
    if (n < 1 || n > KERN_MATMUL_MANY)
        return KERN_E_SHAPE;
    const cu_weight *w0 = (const cu_weight *)ws[0]->dev;
    bool one_launch = T >= 1 && T <= CU_MATVEC_MAX_T && w0->ne0 % 8 == 0;
    for (int i = 1; i < n; i++) {
        const cu_weight *w = (const cu_weight *)ws[i]->dev;
        one_launch = one_launch && w->type == w0->type && w->ne0 == w0->ne0;
    }
    mv_jobs jobs = {};
    unsigned blocks = 0;
    for (int i = 0; i < n && one_launch; i++) {
        const cu_weight *w = (const cu_weight *)ws[i]->dev;
        const kern_weight *bias = biases ? biases[i] : NULL;
        const float *bv = bias ? ((const cu_weight *)bias->dev)->vec : NULL;
        if (bias && (!bv || ((const cu_weight *)bias->dev)->ne0 != w->ne1))
            return KERN_E_SHAPE;
        const int split = matvec_split(cu_of(b), w->ne1, w->ne0 / 8), rows_per_block = MV_WARPS / split;
        jobs.job[i] = mv_job{ w->data, w->row_bytes, w->ne1, bv, ys[i], split, blocks };
        blocks += (unsigned)((w->ne1 + rows_per_block - 1) / rows_per_block);
    }
    if (!one_launch) {
        kern_status s = KERN_OK;
        for (int i = 0; i < n && !s; i++)
            s = cu_matmul(b, ws[i], biases ? biases[i] : NULL, x, T, ys[i]);
        return s;
    }
    jobs.n = n;
    const bool xvec = (uintptr_t)x % 16 == 0;
    const int64_t K = w0->ne0;
    kern_status ls = KERN_OK;
    bool known = mv_dispatch(w0->type, T, xvec, [&]<uint32_t TYPE, int NT, bool XVEC>() {
        ls = cu_launch(b, "matvec_many_k", matvec_many_k<TYPE, NT, XVEC>, dim3(blocks), dim3(MV_THREADS), jobs, K,
                       x, T);
    });
    return known ? ls : KERN_E_UNSUPPORTED;
}

/* The gated block's two products and its activation in one launch where gate and up share a type and shape of whole
 * pieces and T is a decode's; else matmul, matmul and glu (the up products in scratch). */
kern_status cu_matmul_glu(kern_backend *b, const kern_weight *gate, const kern_weight *up,
                          const kern_weight *const biases[2], const float *x, int T, kern_act act, float *out,
                          float *scratch)
{
    const cu_weight *g = (const cu_weight *)gate->dev, *u = (const cu_weight *)up->dev;
    const float *bv[2] = { NULL, NULL };
    for (int i = 0; i < 2; i++) {
        const kern_weight *bias = biases ? biases[i] : NULL;
        bv[i] = bias ? ((const cu_weight *)bias->dev)->vec : NULL;
        if (bias && (!bv[i] || ((const cu_weight *)bias->dev)->ne0 != g->ne1))
            return KERN_E_SHAPE;
    }
    if (g->ne0 != u->ne0 || g->ne1 != u->ne1)
        return KERN_E_SHAPE;
    if (g->type != u->type || g->ne0 % 8 || T < 1 || T > CU_MATVEC_MAX_T) {
        kern_status s = cu_matmul(b, gate, biases ? biases[0] : NULL, x, T, out);
        if (!s)
            s = cu_matmul(b, up, biases ? biases[1] : NULL, x, T, scratch);
        return s ? s : cu_glu(b, act, out, scratch, (size_t)T * (size_t)g->ne1, (size_t)g->ne1, out);
    }
    const bool xvec = (uintptr_t)x % 16 == 0;
    const int split = matvec_split(cu_of(b), g->ne1, g->ne0 / 8), rows_per_block = MV_WARPS / split;
    const unsigned blocks = (unsigned)((g->ne1 + rows_per_block - 1) / rows_per_block);
    kern_status ls = KERN_OK;
    bool known = mv_dispatch(g->type, T, xvec, [&]<uint32_t TYPE, int NT, bool XVEC>() {
        ls = cu_launch(b, "matvec_glu_k", matvec_glu_k<TYPE, NT, XVEC>, dim3(blocks), dim3(MV_THREADS), g->data,
                       u->data, g->row_bytes, g->ne0, g->ne1, x, T, bv[0], bv[1], act, out, split);
    });
    return known ? ls : KERN_E_UNSUPPORTED;
}

/* ---- whole matrices into f32 scratch for cuBLAS ------------------------------ */

template <uint32_t TYPE>
__global__ void dequant_k(const uint8_t *w, size_t row_bytes, int64_t K, int64_t N, float *out)
{
    kc_grid_wait();
    const int64_t pieces = K / 8, total = pieces * N;
    for (int64_t p = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; p < total; p += (int64_t)gridDim.x * blockDim.x) {
        const int64_t row = p / pieces, i = p % pieces;
        float v[8];
        decode8<TYPE>(w + (size_t)row * row_bytes, i, v);
        float *o = out + (size_t)row * K + 8 * i;
#pragma unroll
        for (int k = 0; k < 8; k++)
            o[k] = v[k];
    }
}

__global__ void dequant_any_k(uint32_t type, const uint8_t *w, size_t row_bytes, int64_t K, int64_t N, float *out)
{
    kc_grid_wait();
    for (int64_t p = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; p < K * N; p += (int64_t)gridDim.x * blockDim.x)
        out[p] = kc_decode1(type, w + (size_t)(p / K) * row_bytes, p % K);
}

kern_status cu_dequant_f32(kern_backend *b, const cu_weight *w, float *out)
{
    const int64_t work = w->ne0 % 8 ? w->ne0 * w->ne1 : w->ne0 / 8 * w->ne1;
    const unsigned blocks = (unsigned)(work / 256 + 1 < 65535 * 4 ? work / 256 + 1 : 65535 * 4);
    if (w->ne0 % 8) {
        if (kern_status ls = cu_launch(b, "dequant_any_k", dequant_any_k, dim3(blocks), dim3(256),
                                       w->type, w->data, w->row_bytes, w->ne0, w->ne1, out))
            return ls;
        return KERN_OK;
    }
    kern_status ls = KERN_OK;
    bool known = kc_dispatch(w->type, [&]<uint32_t TYPE>() {
        ls = cu_launch(b, "dequant_k", dequant_k<TYPE>, dim3(blocks), dim3(256), w->data, w->row_bytes, w->ne0, w->ne1,
                       out);
    });
    return known ? ls : KERN_E_UNSUPPORTED;
}
