/*
 * The CUDA backend's table: one device, one stream, device memory for
 * activations and weights (uploaded once at bind, in the file's type), and
 * decode steps recorded as CUDA graphs.
 */
#include "cuda.h"
extern "C" {
#include "quant.h"
}

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Each decode step's split (GGUFSCOPE_CUDA_TIMING=1), in microseconds: capture (step_begin to the end of the
 * recording: the host issuing every kernel into the graph), update (cudaGraphExecUpdate or instantiation), launch
 * (the cudaGraphLaunch call), host_between (from that call's return to the next step_begin: the host waiting on
 * the step's results, then sampling), gpu (CUDA events around the launch). Their medians as one JSON object
 * (step_timing, for a tool to print), so a GPU run shows whether the GPU idles while the host records (issue 58's
 * stage 0). */
enum { TIMED_STEPS_MAX = 4096 };
typedef struct step_timing {
    cudaEvent_t start, stop;
    double begin_s, launched_s;   /* this step's step_begin, the last launch's return (0: none yet) */
    bool gpu_pending;             /* events recorded for a launch not read yet */
    int n, n_instantiated;
    float capture[TIMED_STEPS_MAX], update[TIMED_STEPS_MAX], launch[TIMED_STEPS_MAX], between[TIMED_STEPS_MAX],
        gpu[TIMED_STEPS_MAX];
} step_timing;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_float(const void *a, const void *b)
{
    const float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

static float median(float *v, int n)
{
    if (n <= 0)
        return 0.0f;
    qsort(v, (size_t)n, sizeof *v, cmp_float);
    return n % 2 ? v[n / 2] : 0.5f * (v[n / 2 - 1] + v[n / 2]);
}

static const char *cu_step_timing(kern_backend *b)
{
    cu_ctx *c = cu_of(b);
    step_timing *t = c->timing;
    if (!t || t->n == 0)
        return NULL;
    /* medians of copies: the steps still to come keep their order */
    float *v[5], *copies = (float *)malloc(5 * (size_t)t->n * sizeof(float));
    if (!copies)
        return NULL;
    const float *const from[5] = { t->capture, t->update, t->launch, t->between, t->gpu };
    for (int i = 0; i < 5; i++) {
        v[i] = copies + (size_t)i * (size_t)t->n;
        memcpy(v[i], from[i], (size_t)t->n * sizeof(float));
    }
    snprintf(c->timing_json, sizeof c->timing_json,
            "{\"cuda_timing\": {\"device\": \"%s\", \"steps\": %d, \"instantiations\": %d, \"capture_us\": %.1f, "
            "\"update_us\": %.1f, \"launch_us\": %.1f, \"host_between_us\": %.1f, \"gpu_us\": %.1f}}",
            c->device_name, t->n, t->n_instantiated, median(v[0], t->n), median(v[1], t->n), median(v[2], t->n),
            median(v[3], t->n), median(v[4], t->n));
    free(copies);
    return c->timing_json;
}

static void cu_destroy(kern_backend *b)
{
    if (!b)
        return;
    cu_ctx *c = cu_of(b);
    if (c) {
        if (c->timing) {
            cudaEventDestroy(c->timing->start);
            cudaEventDestroy(c->timing->stop);
            free(c->timing);
        }
        if (c->exec)
            cudaGraphExecDestroy(c->exec);
        if (c->blas)
            cublasDestroy(c->blas);
        void *dev[] = { c->w32, c->tok_dev, c->stats_dev, c->top_ids, c->top_vals, c->pos_dev, c->tf_x, c->tf_w };
        for (size_t i = 0; i < sizeof dev / sizeof dev[0]; i++)
            if (dev[i])
                cudaFree(dev[i]);
        void *pinned[] = { c->tok_host, c->pos_host, c->out_ids, c->out_vals };
        for (size_t i = 0; i < sizeof pinned / sizeof pinned[0]; i++)
            if (pinned[i])
                cudaFreeHost(pinned[i]);
        if (c->stream)
            cudaStreamDestroy(c->stream);
        free(c);
    }
    free(b);
}

static void cu_set_threads(kern_backend *b, int n)
{
    (void)b;
    (void)n;
}

static float *cu_alloc(kern_backend *b, size_t n)
{
    void *p;
    if (cu_malloc(b, &p, n * sizeof(float), "activations"))
        return NULL;
    cu_ctx *c = cu_of(b);
    if (!CU_OK(b, cudaMemsetAsync(p, 0, n * sizeof(float), c->stream)) || !CU_OK(b, cudaStreamSynchronize(c->stream))) {
        cudaFree(p);
        return NULL;
    }
    return (float *)p;
}

static void cu_free(kern_backend *b, float *p)
{
    (void)b;
    cudaFree(p);
}

static kern_status cu_to_host(kern_backend *b, float *dst, const float *src, size_t n)
{
    cu_ctx *c = cu_of(b);
    if (!CU_OK(b, cudaMemcpyAsync(dst, src, n * sizeof(float), cudaMemcpyDeviceToHost, c->stream)))
        return cu_status(b);
    if (!CU_OK(b, cudaStreamSynchronize(c->stream)))
        return cu_status(b);
    return KERN_OK;
}

static kern_status cu_from_host(kern_backend *b, float *dst, const float *src, size_t n)
{
    cu_ctx *c = cu_of(b);
    if (!CU_OK(b, cudaMemcpyAsync(dst, src, n * sizeof(float), cudaMemcpyHostToDevice, c->stream)))
        return cu_status(b);
    if (!CU_OK(b, cudaStreamSynchronize(c->stream)))
        return cu_status(b);
    return KERN_OK;
}

static void cu_unbind(kern_backend *b, kern_weight *w)
{
    (void)b;
    cu_weight *cw = (cu_weight *)w->dev;
    if (cw) {
        cudaFree(cw->data);
        if (cw->vec)
            cudaFree(cw->vec);
        free(cw);
    }
    w->dev = NULL;
}

/* Uploads the tensor's bytes; 1-D weights (norms, biases) also as f32, the form their ops read, and so small F32
 * matrices that are gains of several rows (Command R+'s each head's q/k norm). */
static kern_status cu_bind(kern_backend *b, kern_weight *w)
{
    const gguf_tensor *t = w->t;
    const bool vector = (t->ne[1] == 1 || (t->type == GGUF_TENSOR_F32 && t->n_elements <= (1u << 20))) &&
                        t->ne[2] == 1 && t->ne[3] == 1;
    w->dev = NULL;
    if (!cu_supports(t->type) && !(vector && quant_can_dequantize(t->type)))
        return KERN_E_UNSUPPORTED;
    cu_weight *cw = (cu_weight *)calloc(1, sizeof *cw);
    if (!cw)
        return KERN_E_NOMEM;
    cw->type = t->type;
    cw->ne0 = (int64_t)t->ne[0];
    cw->ne1 = (int64_t)(t->n_elements / t->ne[0]);
    cw->row_bytes = (size_t)(t->size / (uint64_t)cw->ne1);
    w->dev = cw;
    char what[320];
    snprintf(what, sizeof what, "tensor '%.256s'", t->name);
    kern_status s = cu_malloc(b, (void **)&cw->data, t->size, what);
    if (!s && !CU_OK(b, cudaMemcpy(cw->data, t->data, t->size, cudaMemcpyHostToDevice)))
        s = cu_status(b);
    if (!s && vector) {
        float *host = (float *)malloc((size_t)t->n_elements * sizeof(float));
        if (!host)
            s = KERN_E_NOMEM;
        else if (quant_dequantize_row(t->type, t->data, host, (int64_t)t->n_elements) != QUANT_OK)
            s = KERN_E_UNSUPPORTED;
        else if (!(s = cu_malloc(b, (void **)&cw->vec, (size_t)t->n_elements * sizeof(float), what)) &&
                 !CU_OK(b, cudaMemcpy(cw->vec, host, (size_t)t->n_elements * sizeof(float), cudaMemcpyHostToDevice)))
            s = cu_status(b);
        free(host);
    }
    if (s)
        cu_unbind(b, w);
    return s;
}

/* Whether the environment sets switch `name` to `value` ("0" or "1"). */
static bool env_is(const char *name, const char *value)
{
    const char *e = getenv(name);
    return e && !strcmp(e, value);
}

/* The last timed step's GPU time, and the host's time since its launch, once the next step begins. */
static void timing_next_step(step_timing *t)
{
    if (!t)
        return;
    t->begin_s = now_s();
    if (t->gpu_pending && t->n <= TIMED_STEPS_MAX) {
        float ms = 0.0f;
        if (cudaEventSynchronize(t->stop) == cudaSuccess && cudaEventElapsedTime(&ms, t->start, t->stop) == cudaSuccess)
            t->gpu[t->n - 1] = 1000.0f * ms;
        cudaGetLastError();
        t->between[t->n - 1] = (float)(1e6 * (t->begin_s - t->launched_s));
    }
    t->gpu_pending = false;
}

static kern_status cu_step_begin(kern_backend *b, uint64_t key, int pos)
{
    cu_ctx *c = cu_of(b);
    if (!c->graphs || c->capturing)
        return KERN_OK;
    timing_next_step(c->timing);
    c->step_key = key;
    c->step_pos = pos;
    c->n_outs = 0;
    if (c->replay) {
        /* the last launch may still read *pos_host (a step whose results nobody waited for) */
        if (!CU_OK(b, cudaStreamSynchronize(c->stream)))
            return cu_status(b);
        *c->pos_host = pos;
    }
    if (!CU_OK(b, cudaStreamBeginCapture(c->stream, cudaStreamCaptureModeThreadLocal)))
        return cu_status(b);
    c->capturing = true;
    if (c->replay &&
        !CU_OK(b, cudaMemcpyAsync(c->pos_dev, c->pos_host, sizeof(int), cudaMemcpyHostToDevice, c->stream))) {
        cudaGraph_t g = NULL;
        cudaStreamEndCapture(c->stream, &g);
        if (g)
            cudaGraphDestroy(g);
        c->capturing = false;
        return cu_status(b);
    }
    return KERN_OK;
}

/* After a launch: the timing's events around it, and its split. */
static kern_status launch_exec(kern_backend *b, step_timing *t, double captured_s, double ready_s)
{
    cu_ctx *c = cu_of(b);
    if (t && !CU_OK(b, cudaEventRecord(t->start, c->stream)))
        return cu_status(b);
    if (!CU_OK(b, cudaGraphLaunch(c->exec, c->stream)))
        return cu_status(b);
    if (t) {
        if (!CU_OK(b, cudaEventRecord(t->stop, c->stream)))
            return cu_status(b);
        t->launched_s = now_s();
        t->capture[t->n] = (float)(1e6 * (captured_s - t->begin_s));
        t->update[t->n] = (float)(1e6 * (ready_s - captured_s));
        t->launch[t->n] = (float)(1e6 * (t->launched_s - ready_s));
        t->between[t->n] = t->gpu[t->n] = 0.0f; /* filled when the next step begins */
        t->n++;
        t->gpu_pending = true;
    }
    return KERN_OK;
}

/* A step's results in host memory: waits for the launch, then copies each from its pinned staging. */
static kern_status deliver_outs(kern_backend *b)
{
    cu_ctx *c = cu_of(b);
    if (!c->n_exec_outs)
        return KERN_OK;
    if (!CU_OK(b, cudaStreamSynchronize(c->stream)))
        return cu_status(b);
    for (int i = 0; i < c->n_exec_outs; i++) {
        const cu_ctx::cu_step_out *o = &c->exec_outs[i];
        memcpy(o->dst, o->src, o->bytes);
        int32_t *id = (int32_t *)o->dst;
        if (o->argmax && *id < 0)
            *id = 0; /* all NaN: as the CPU, index 0 */
    }
    return KERN_OK;
}

static kern_status cu_step_replay(kern_backend *b, uint64_t key, int pos, const int32_t *token)
{
    cu_ctx *c = cu_of(b);
    if (!c->exec || !key || key != c->exec_key || c->capturing)
        return KERN_E_UNSUPPORTED;
    step_timing *t = c->timing && c->timing->n < TIMED_STEPS_MAX ? c->timing : NULL;
    timing_next_step(c->timing);
    /* nothing queued may still read the pinned inputs (an eager pass that ended without a copy to the host); the
     * stream is idle after a step's results were waited for, and then this costs a few microseconds */
    if (!CU_OK(b, cudaStreamSynchronize(c->stream)))
        return cu_status(b);
    *c->pos_host = pos;
    c->tok_host[0] = *token;
    const double now = t ? t->begin_s : 0.0; /* no recording, no update: both 0 */
    kern_status s = launch_exec(b, t, now, now);
    return s ? s : deliver_outs(b);
}

/* Ends the recording and runs it: the executable graph is updated in place
 * when the step has the same shape as the last one (only kernel arguments
 * changed: positions, cache offsets), else instantiated anew. */
static kern_status cu_step_end(kern_backend *b, bool run)
{
    cu_ctx *c = cu_of(b);
    if (!c->capturing)
        return KERN_OK;
    cudaGraph_t g = NULL;
    c->capturing = false;
    if (!CU_OK(b, cudaStreamEndCapture(c->stream, &g)))
        return cu_status(b);
    step_timing *t = run && c->timing && c->timing->n < TIMED_STEPS_MAX ? c->timing : NULL;
    const double captured_s = t ? now_s() : 0.0;
    if (!run) {
        cudaGraphDestroy(g);
        return KERN_OK;
    }
    bool updated = false;
    if (c->exec) {
        cudaGraphExecUpdateResultInfo info;
        updated = cudaGraphExecUpdate(c->exec, g, &info) == cudaSuccess;
        if (!updated) {
            cudaGetLastError();
            cudaGraphExecDestroy(c->exec);
            c->exec = NULL;
        }
    }
    if (!updated) {
        if (!CU_OK(b, cudaGraphInstantiate(&c->exec, g, 0))) {
            cudaGraphDestroy(g);
            c->exec = NULL;
            c->exec_key = 0;
            return cu_status(b);
        }
        if (t)
            t->n_instantiated++;
    }
    cudaGraphDestroy(g);
    c->exec_key = c->replay ? c->step_key : 0;
    memcpy(c->exec_outs, c->outs, sizeof c->outs);
    c->n_exec_outs = c->n_outs;
    const double ready_s = t ? now_s() : 0.0;
    kern_status s = launch_exec(b, t, captured_s, ready_s);
    return s ? s : deliver_outs(b);
}

static const char *cu_last_error(const kern_backend *b)
{
    return cu_of(b)->error;
}

/* The entry point kernels/cuda_loader.c looks up in this library. */
extern "C" kern_backend *kern_cuda_create_impl(int device, char *why, size_t why_len)
{
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess || n == 0) {
        snprintf(why, why_len, "no usable CUDA device: %s%s%s%s", e != cudaSuccess ? cudaGetErrorString(e) : "the driver reports none",
                 e != cudaSuccess ? " (" : "", e != cudaSuccess ? cudaGetErrorName(e) : "",
                 e == cudaErrorInsufficientDriver ? "; a machine with no NVIDIA driver at all says this too)"
                 : e != cudaSuccess ? ")" : "");
        cudaGetLastError();
        return NULL;
    }
    if (device < 0 || device >= n) {
        snprintf(why, why_len, "no CUDA device %d: the driver reports %d", device, n);
        return NULL;
    }
    kern_backend *b = (kern_backend *)calloc(1, sizeof *b);
    cu_ctx *c = (cu_ctx *)calloc(1, sizeof *c);
    if (!b || !c) {
        free(b);
        free(c);
        snprintf(why, why_len, "out of memory");
        return NULL;
    }
    *b = (kern_backend){};
    b->name = "cuda";
    b->device = c->device_name;
    b->ctx = c;
    b->destroy = cu_destroy;
    b->set_threads = cu_set_threads;
    b->alloc = cu_alloc;
    b->free = cu_free;
    b->to_host = cu_to_host;
    b->from_host = cu_from_host;
    b->bind = cu_bind;
    b->unbind = cu_unbind;
#define CU_OP_SET(name, params, args) b->name = cu_##name;
    KERN_OPS(CU_OP_SET)
#undef CU_OP_SET
    b->step_begin = cu_step_begin;
    b->step_end = cu_step_end;
    b->step_timing = cu_step_timing;
    b->last_error = cu_last_error;
    c->device = device;
    /* Recording is on unless GGUFSCOPE_CUDA_GRAPHS=0 (to measure what graphs buy, or to rule them out); issue 58's
     * paths are off unless their switch is 1 (gguf-run.md names them). */
    c->graphs = !env_is("GGUFSCOPE_CUDA_GRAPHS", "0");
    c->replay = c->graphs && env_is("GGUFSCOPE_CUDA_REPLAY", "1");
    c->tf32x = env_is("GGUFSCOPE_CUDA_TF32", "1");
    c->pdl = env_is("GGUFSCOPE_CUDA_PDL", "1");
    const bool fuse = env_is("GGUFSCOPE_CUDA_FUSED", "1");
    b->step_replay = c->replay ? cu_step_replay : NULL;
    b->rope_store = c->replay ? cu_rope_store : NULL;
    b->matmul_many = fuse ? cu_matmul_many : NULL;
    b->add_rmsnorm = fuse ? cu_add_rmsnorm : NULL;
    b->matmul_glu = fuse ? cu_matmul_glu : NULL;
    if (c->graphs && env_is("GGUFSCOPE_CUDA_TIMING", "1") && (c->timing = (step_timing *)calloc(1, sizeof *c->timing)) &&
        (cudaEventCreate(&c->timing->start) != cudaSuccess || cudaEventCreate(&c->timing->stop) != cudaSuccess)) {
        cudaGetLastError();
        free(c->timing); /* no events: no timing (an event made before the failure is left to the process's end) */
        c->timing = NULL;
    }
    cudaDeviceProp prop;
    bool ok = CU_OK(b, cudaSetDevice(device)) && CU_OK(b, cudaGetDeviceProperties(&prop, device)) &&
              CU_OK(b, cudaStreamCreateWithFlags(&c->stream, cudaStreamNonBlocking)) &&
              cu_check_blas(b, cublasCreate(&c->blas), "cublasCreate", __FILE__, __LINE__) &&
              cu_check_blas(b, cublasSetStream(c->blas, c->stream), "cublasSetStream", __FILE__, __LINE__) &&
              CU_OK(b, cudaMallocHost((void **)&c->tok_host, 1024 * sizeof(int32_t))) &&
              !cu_malloc(b, (void **)&c->tok_dev, 1024 * sizeof(int32_t), "token ids") &&
              !cu_malloc(b, (void **)&c->top_ids, KERN_TOP_K_MAX * sizeof(int32_t), "top-k ids") &&
              !cu_malloc(b, (void **)&c->pos_dev, sizeof(int), "the step's position") &&
              CU_OK(b, cudaMallocHost((void **)&c->pos_host, sizeof(int))) &&
              CU_OK(b, cudaMallocHost((void **)&c->out_ids, KERN_TOP_K_MAX * sizeof(int32_t))) &&
              CU_OK(b, cudaMallocHost((void **)&c->out_vals, KERN_TOP_K_MAX * sizeof(float))) &&
              !cu_malloc(b, (void **)&c->top_vals, KERN_TOP_K_MAX * sizeof(float), "top-k values");
    if (!ok) {
        snprintf(why, why_len, "CUDA device %d could not be set up: %s", device, c->error);
        cu_destroy(b);
        return NULL;
    }
    c->tok_cap = 1024;
    c->sm_count = prop.multiProcessorCount;
    snprintf(c->device_name, sizeof c->device_name, "%.200s (sm_%d%d, %.1f GiB)", prop.name, prop.major, prop.minor,
             prop.totalGlobalMem / 1073741824.0);
    /* Prompt GEMMs accumulate in f32 with the default math (no TF32 shortcut on f32 inputs). */
    cublasSetMathMode(c->blas, CUBLAS_DEFAULT_MATH);
    return b;
}
