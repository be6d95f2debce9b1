/* The CUDA backend's private parts: its context, checked calls, and the ops the table points at. */
#ifndef GGUFSCOPE_KERN_CUDA_H
#define GGUFSCOPE_KERN_CUDA_H

extern "C" {
#include "kern.h"
}

#include <cublas_v2.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <utility>

/* A bound weight on the device: the file's bytes, uploaded once. */
typedef struct cu_weight {
    uint8_t *data;      /* the tensor's bytes in its file type */
    float *vec;         /* 1-D weights (norms, biases): an f32 copy, else NULL */
    uint32_t type;
    int64_t ne0, ne1;   /* row length, rows */
    size_t row_bytes;
} cu_weight;

typedef struct cu_ctx {
    int device;
    int sm_count;  /* multiprocessors: how many warps a launch needs to keep the card's loads in flight */
    char device_name[256];
    cudaStream_t stream;
    cublasHandle_t blas;
    char error[768];
    kern_status error_status;

    /* Prompt matmuls: the weight decoded to f32, grown on demand; under GGUFSCOPE_CUDA_TF32=1 (tf32x) the split
     * activations (hi, lo) and the weight's low part (and its high one for an F32 weight). */
    float *w32;
    size_t w32_cap;
    bool tf32x;
    float *tf_x, *tf_w;
    size_t tf_x_cap, tf_w_cap;
    /* Token ids: pinned host staging (a graph's copy node reads it when replayed) and the device copy. */
    int32_t *tok_host, *tok_dev;
    size_t tok_cap;
    /* Row statistics and argmax results on their way to the host. */
    kern_row_stats *stats_dev;
    size_t stats_cap;
    int32_t *top_ids;  /* (KERN_TOP_K_MAX) */
    float *top_vals;

    /* Decode-step graphs: recorded between step_begin and step_end, replayed
     * through an executable graph that is updated in place while the step's
     * shape stays the same. */
    bool graphs, capturing;
    cudaGraphExec_t exec;
    /* Steps replayed whole (GGUFSCOPE_CUDA_REPLAY=1, issue 58's stage 1; off by default until a GPU run shows it
     * bit-identical to recording each step): while replay is on, a recorded step reads its position from pos_dev
     * (a copy node at its start brings *pos_host, which the host sets before each launch), each op that reads a
     * position taking it as pos_dev + (pos0 - step_pos) (cu_step_pos); exec_key is the key exec was recorded
     * under (0: none a replay may use). A recorded top-k's ids and values come to pinned out_ids / out_vals
     * inside the graph and to the engine's host memory (outs) once the launch has finished. */
    bool replay;
    int *pos_host, *pos_dev;
    int step_pos;
    uint64_t step_key, exec_key;
    int32_t *out_ids;
    float *out_vals;
    struct cu_step_out {
        void *dst;
        const void *src;
        size_t bytes;
        bool argmax;  /* an argmax that found only NaN answers 0, as the CPU */
    } outs[2], exec_outs[2]; /* the step being recorded's, exec's */
    int n_outs, n_exec_outs;

    /* Programmatic dependent launch (GGUFSCOPE_CUDA_PDL=1, issue 58's stage 2; sm_90): every launch may start
     * while the kernel before it finishes (cu_launch), each kernel waiting for it only where it reads what that
     * kernel wrote (kc_grid_wait), so a launch's own latency and a product's first weight loads overlap the last
     * kernel's tail. */
    bool pdl;

    /* GGUFSCOPE_CUDA_TIMING=1 (backend.cu, step_timing): where a decode step's time goes, host and device, per
     * step: recording, updating the executable graph, the launch call, the host's time until the next step
     * begins, and the GPU's time between events around the launch. */
    struct step_timing *timing;
    char timing_json[512];
} cu_ctx;

static inline cu_ctx *cu_of(const kern_backend *b)
{
    return (cu_ctx *)b->ctx;
}

/* The position an op of a decode step being recorded for replay reads: pos_dev, with *pos0 made its distance
 * from the step's position; NULL (and pos0 as given) otherwise. Kernels take pos (pos_dev ? *pos_dev : 0) + pos0. */
static inline const int *cu_step_pos(const cu_ctx *c, int *pos0)
{
    if (!c->replay || !c->capturing)
        return NULL;
    *pos0 -= c->step_pos;
    return c->pos_dev;
}

/* Blocks of 256 threads for a grid-stride loop over n elements. */
static inline unsigned cu_grid(size_t n)
{
    size_t g = (n + 255) / 256;
    return (unsigned)(g < 1 ? 1 : g > 65535 ? 65535 : g);
}

/* The start of every kernel: with a programmatic dependent launch, wait for the kernel before to finish (its writes
 * visible) and let the next one start launching; without one, nothing. Reads of what no kernel writes (weights)
 * may come before it. */
static __device__ __forceinline__ void kc_grid_wait()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    cudaGridDependencySynchronize();
    cudaTriggerProgrammaticLaunchCompletion();
#endif
}

/* Checks a CUDA call; on failure records "call at file:line: reason" in the
 * context (abandoning a graph being recorded) and returns false. */
bool cu_check(kern_backend *b, cudaError_t e, const char *call, const char *file, int line);
bool cu_check_blas(kern_backend *b, cublasStatus_t s, const char *call, const char *file, int line);
/* The status the last recorded failure maps to. */
kern_status cu_status(const kern_backend *b);

#define CU_OK(b, call) cu_check((b), (call), #call, __FILE__, __LINE__)
/* The same for a cuBLAS call (kernel launches: cu_launch). Each caller returns cu_status(b) itself when one is
 * false. */
#define CUBLAS_OK(b, call) cu_check_blas((b), (call), #call, __FILE__, __LINE__)

/* Launches kernel on the backend's stream, as a programmatic dependent launch when c->pdl, and checks the launch
 * (bad configuration, no kernel image for this GPU). Every kernel begins with kc_grid_wait (above) before it reads
 * anything an earlier kernel wrote. */
template <typename... P, typename... A>
static inline kern_status cu_launch(kern_backend *b, const char *name, void (*kernel)(P...), dim3 grid, dim3 block,
                                    A &&...args)
{
    cu_ctx *c = cu_of(b);
    cudaLaunchAttribute attr[1] = {};
    attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr[0].val.programmaticStreamSerializationAllowed = 1;
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = grid;
    cfg.blockDim = block;
    cfg.stream = c->stream;
    cfg.attrs = attr;
    cfg.numAttrs = c->pdl ? 1 : 0;
    if (!cu_check(b, cudaLaunchKernelEx(&cfg, kernel, std::forward<A>(args)...), name, __FILE__, __LINE__))
        return cu_status(b);
    return KERN_OK;
}

/* Device memory of `bytes`, with an out-of-memory message naming the need and what was free. */
kern_status cu_malloc(kern_backend *b, void **p, size_t bytes, const char *what);
/* Grows a scratch buffer to hold at least `bytes` (contents are not kept). */
kern_status cu_reserve(kern_backend *b, void **p, size_t *cap, size_t bytes, const char *what);

/* y (T, N) row-major = x (T, K) row-major times W^T, W (N, K) row-major: the one
 * place the row-major/column-major translation for cuBLAS is written down. */
kern_status cu_gemm_rows(kern_backend *b, int N, int T, int K, const float *W, const float *x, float *y);

/* The ops of kern.h's list as cu_NAME (the table in backend.cu); of the optional ones rope_store, offered while
 * steps replay (a staged step is its only user), matmul_many, add_rmsnorm and matmul_glu. */
#define CU_OP_DECLARE(name, params, args) kern_status cu_##name(kern_backend *b, KERN_ARGS params);
KERN_OPS(CU_OP_DECLARE)
kern_status cu_rope_store(kern_backend *b, float *q, float *k, const float *v, int T, int n_head, int n_kv_head,
                          int head_dim, int pos0, const kern_rope *r, float *k_cache, float *v_cache);
/* matmul_many, add_rmsnorm and matmul_glu, offered under GGUFSCOPE_CUDA_FUSED=1 (issue 58's stage 2, off by default until a GPU
 * run shows them bit-identical to the ops they fuse, and faster) */
kern_status cu_matmul_many(kern_backend *b, int n, const kern_weight *const ws[], const kern_weight *const biases[],
                           const float *x, int T, float *const ys[]);
kern_status cu_add_rmsnorm(kern_backend *b, float *x, const float *y, const kern_weight *w, int T, int n, float eps,
                           float *out);
kern_status cu_matmul_glu(kern_backend *b, const kern_weight *gate, const kern_weight *up,
                          const kern_weight *const biases[2], const float *x, int T, kern_act act, float *out,
                          float *scratch);

/* Matrix-vector products for T <= CU_MATVEC_MAX_T tokens straight from the blocks (matvec.cu). */
enum { CU_MATVEC_MAX_T = 8 };
kern_status cu_matvec(kern_backend *b, const cu_weight *w, const float *bias, const float *x, int T, float *y);
/* The whole of w decoded into f32 scratch for the prompt GEMM (matvec.cu). */
kern_status cu_dequant_f32(kern_backend *b, const cu_weight *w, float *out);
/* Whether the kernels read this type. */
bool cu_supports(uint32_t type);

#endif
