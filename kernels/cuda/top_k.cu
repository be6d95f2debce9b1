/*
 * The CUDA backend's argmax and top-k of the logits (split from ops.cu): larger values first, the lower index on a tie,
 * NaN never taken, as the CPU backend's; one block for a few candidates, a multi-block reduction for the argmax of a
 * wide row, and the top-k kept on the device inside a recorded decode step.
 */
#include "cuda.h"

/* (v, i) comes before (w, j): larger value first, the lower index on a tie. */
__device__ bool before(float v, int i, float w, int j)
{
    return j < 0 || (i >= 0 && (v > w || (v == w && i < j)));
}

/* One block of 1024 threads, k passes: pass p finds the first element, in
 * that order, strictly after the one pass p - 1 found, so nothing needs
 * excluding and each pass is one read of x. NaN is never taken. */
__global__ void top_k_k(const float *x, int n, int k, int32_t *ids, float *vals)
{
    kc_grid_wait();
    __shared__ float bv[1024];
    __shared__ int bi[1024];
    float prev_v = INFINITY;
    int prev_i = -1;
    for (int p = 0; p < k; p++) {
        float best = -INFINITY;
        int at = -1;
        for (int i = threadIdx.x; i < n; i += blockDim.x) {
            const float v = x[i];
            const bool after = p == 0 || v < prev_v || (v == prev_v && i > prev_i);
            if (!isnan(v) && after && before(v, i, best, at)) {
                best = v;
                at = i;
            }
        }
        bv[threadIdx.x] = best;
        bi[threadIdx.x] = at;
        __syncthreads();
        for (int s = blockDim.x / 2; s > 0; s >>= 1) {
            if (threadIdx.x < s && before(bv[threadIdx.x + s], bi[threadIdx.x + s], bv[threadIdx.x], bi[threadIdx.x])) {
                bv[threadIdx.x] = bv[threadIdx.x + s];
                bi[threadIdx.x] = bi[threadIdx.x + s];
            }
            __syncthreads();
        }
        prev_v = bv[0];
        prev_i = bi[0];
        if (threadIdx.x == 0) {
            ids[p] = prev_i;
            vals[p] = prev_i < 0 ? NAN : prev_v;
        }
        __syncthreads();  /* bv[0] is read by every thread before the next pass overwrites it */
        if (prev_i < 0) {  /* nothing left (every value NaN or taken): the rest is empty */
            for (int q = p + 1 + threadIdx.x; q < k; q += blockDim.x) {
                ids[q] = -1;
                vals[q] = NAN;
            }
            break;
        }
    }
}

/* The argmax of a step recorded for replay in two launches that use the whole card (one block of 1024 threads took
 * 16 us of a token on 32 k logits): each of up to KERN_TOP_K_MAX blocks finds the first of the largest in its
 * slice, then one block the first of theirs (`before`: ties to the lower index, NaN never taken; -1 when all are
 * NaN). Its id and value land where top_k_k's would. */
enum { ARGMAX_THREADS = 256 };

__device__ void block_best(float *v, int *i)
{
    __shared__ float bv[ARGMAX_THREADS];
    __shared__ int bi[ARGMAX_THREADS];
    bv[threadIdx.x] = *v;
    bi[threadIdx.x] = *i;
    __syncthreads();
    for (int s = ARGMAX_THREADS / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s && before(bv[threadIdx.x + s], bi[threadIdx.x + s], bv[threadIdx.x], bi[threadIdx.x])) {
            bv[threadIdx.x] = bv[threadIdx.x + s];
            bi[threadIdx.x] = bi[threadIdx.x + s];
        }
        __syncthreads();
    }
    *v = bv[0];
    *i = bi[0];
}

__global__ void __launch_bounds__(ARGMAX_THREADS) argmax_part_k(const float *x, int n, float *vals, int32_t *ids)
{
    kc_grid_wait();
    float best = -INFINITY;
    int at = -1;
    for (int i = blockIdx.x * ARGMAX_THREADS + threadIdx.x; i < n; i += gridDim.x * ARGMAX_THREADS)
        if (!isnan(x[i]) && before(x[i], i, best, at)) {
            best = x[i];
            at = i;
        }
    block_best(&best, &at);
    if (threadIdx.x == 0) {
        vals[blockIdx.x] = best;
        ids[blockIdx.x] = at;
    }
}

__global__ void __launch_bounds__(ARGMAX_THREADS) argmax_final_k(int parts, float *vals, int32_t *ids)
{
    kc_grid_wait();
    float best = -INFINITY;
    int at = -1;
    for (int p = threadIdx.x; p < parts; p += ARGMAX_THREADS)
        if (before(vals[p], ids[p], best, at)) {
            best = vals[p];
            at = ids[p];
        }
    block_best(&best, &at);
    __syncthreads(); /* every thread has read the parts before the first is overwritten */
    if (threadIdx.x == 0) {
        vals[0] = at < 0 ? NAN : best;
        ids[0] = at;
    }
}

static kern_status argmax_wide(kern_backend *b, const float *x, int n)
{
    cu_ctx *c = cu_of(b);
    int parts = (n + 4 * ARGMAX_THREADS - 1) / (4 * ARGMAX_THREADS); /* about 4 values a thread */
    parts = parts < 1 ? 1 : parts > KERN_TOP_K_MAX ? KERN_TOP_K_MAX : parts;
    if (kern_status ls = cu_launch(b, "argmax_part_k", argmax_part_k, dim3(parts), dim3(ARGMAX_THREADS), x, n,
                                   c->top_vals, c->top_ids))
        return ls;
    if (kern_status ls = cu_launch(b, "argmax_final_k", argmax_final_k, dim3(1), dim3(ARGMAX_THREADS), parts,
                                   c->top_vals, c->top_ids))
        return ls;
    return KERN_OK;
}

/* Inside a step recorded for replay: the results to pinned memory within the graph, to the caller's once the
 * launch has finished (cu_step_end, cu_step_replay deliver them). */
static kern_status top_k_in_step(kern_backend *b, int k, int32_t *ids, float *vals)
{
    cu_ctx *c = cu_of(b);
    const size_t id_bytes = (size_t)k * sizeof *ids, val_bytes = (size_t)k * sizeof *vals;
    if (!CU_OK(b, cudaMemcpyAsync(c->out_ids, c->top_ids, id_bytes, cudaMemcpyDeviceToHost, c->stream)))
        return cu_status(b);
    c->outs[c->n_outs++] = (cu_ctx::cu_step_out){ ids, c->out_ids, id_bytes, !vals };
    if (vals) {
        if (!CU_OK(b, cudaMemcpyAsync(c->out_vals, c->top_vals, val_bytes, cudaMemcpyDeviceToHost, c->stream)))
            return cu_status(b);
        c->outs[c->n_outs++] = (cu_ctx::cu_step_out){ vals, c->out_vals, val_bytes, false };
    }
    return KERN_OK;
}

kern_status cu_top_k(kern_backend *b, const float *x, int n, int k, int32_t *ids, float *vals)
{
    cu_ctx *c = cu_of(b);
    if (k < 1 || k > KERN_TOP_K_MAX)
        return KERN_E_SHAPE;
    if (c->capturing && c->replay && k == 1) {
        kern_status s = argmax_wide(b, x, n);
        if (s)
            return s;
    } else {
        if (kern_status ls = cu_launch(b, "top_k_k", top_k_k, dim3(1), dim3(1024), x, n, k, c->top_ids, c->top_vals))
            return ls;
    }
    if (c->capturing && c->replay) {
        if (c->n_outs) /* one top-k a step: the engine's */
            return KERN_E_SHAPE;
        return top_k_in_step(b, k, ids, vals);
    }
    if (!CU_OK(b, cudaMemcpyAsync(ids, c->top_ids, (size_t)k * sizeof *ids, cudaMemcpyDeviceToHost, c->stream)))
        return cu_status(b);
    if (vals &&
        !CU_OK(b, cudaMemcpyAsync(vals, c->top_vals, (size_t)k * sizeof *vals, cudaMemcpyDeviceToHost, c->stream)))
        return cu_status(b);
    if (!CU_OK(b, cudaStreamSynchronize(c->stream)))
        return cu_status(b);
    return KERN_OK;
}

kern_status cu_argmax(kern_backend *b, const float *x, int n, int32_t *out)
{
    kern_status s = cu_top_k(b, x, n, 1, out, NULL);
    if (!s && !cu_of(b)->capturing && *out < 0)
        *out = 0;  /* all NaN: as the CPU, index 0 */
    return s;
}
