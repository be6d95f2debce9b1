/*
 * Every CUDA and cuBLAS call the backend makes goes through here: a failure
 * is recorded as "call at file:line: the device's words" for the engine's
 * message, and a decode-step graph being recorded is abandoned so that the
 * stream is usable again.
 */
#include "cuda.h"

#include <stdio.h>
#include <string.h>

/* "kernels/cuda/x.cu" rather than the build machine's absolute path. */
static const char *short_path(const char *file)
{
    const char *p = strstr(file, "kernels/");
    return p ? p : file;
}

static void abandon_capture(cu_ctx *c)
{
    if (!c->capturing)
        return;
    cudaGraph_t g = NULL;
    cudaStreamEndCapture(c->stream, &g);
    if (g)
        cudaGraphDestroy(g);
    c->capturing = false;
    c->graphs = false;  /* what failed once inside a recording will fail again: run ops directly from now on */
    cudaGetLastError();
}

static bool record(kern_backend *b, kern_status st, const char *call, const char *file, int line, const char *why)
{
    cu_ctx *c = cu_of(b);
    abandon_capture(c);
    c->error_status = st;
    snprintf(c->error, sizeof c->error, "%.300s at %s:%d: %s", call, short_path(file), line, why);
    return false;
}

bool cu_check(kern_backend *b, cudaError_t e, const char *call, const char *file, int line)
{
    if (e == cudaSuccess)
        return true;
    char why[256];
    snprintf(why, sizeof why, "%s (%s)", cudaGetErrorString(e), cudaGetErrorName(e));
    cudaGetLastError();  /* clear a non-sticky error so the next call is judged on its own */
    return record(b, e == cudaErrorMemoryAllocation ? KERN_E_NOMEM : KERN_E_DEVICE, call, file, line, why);
}

bool cu_check_blas(kern_backend *b, cublasStatus_t s, const char *call, const char *file, int line)
{
    if (s == CUBLAS_STATUS_SUCCESS)
        return true;
    char why[256];
    snprintf(why, sizeof why, "cuBLAS %s (%s)", cublasGetStatusString(s), cublasGetStatusName(s));
    return record(b, s == CUBLAS_STATUS_ALLOC_FAILED ? KERN_E_NOMEM : KERN_E_DEVICE, call, file, line, why);
}

kern_status cu_status(const kern_backend *b)
{
    kern_status s = cu_of(b)->error_status;
    return s == KERN_OK ? KERN_E_DEVICE : s;
}

kern_status cu_malloc(kern_backend *b, void **p, size_t bytes, const char *what)
{
    *p = NULL;
    cudaError_t e = cudaMalloc(p, bytes ? bytes : 1);
    if (e == cudaSuccess)
        return KERN_OK;
    size_t free_b = 0, total_b = 0;
    cudaGetLastError();
    cudaMemGetInfo(&free_b, &total_b);
    char call[160], why[256];
    snprintf(call, sizeof call, "cudaMalloc for %s", what);
    snprintf(why, sizeof why, "%s: needed %.1f MiB, %.1f MiB free of %.1f MiB on the device", cudaGetErrorString(e),
             bytes / 1048576.0, free_b / 1048576.0, total_b / 1048576.0);
    cudaGetLastError();
    return record(b, e == cudaErrorMemoryAllocation ? KERN_E_NOMEM : KERN_E_DEVICE, call, __FILE__, __LINE__, why),
           cu_status(b);
}

kern_status cu_reserve(kern_backend *b, void **p, size_t *cap, size_t bytes, const char *what)
{
    if (bytes <= *cap)
        return KERN_OK;
    if (cu_of(b)->capturing)
        return record(b, KERN_E_DEVICE, what, __FILE__, __LINE__, "scratch cannot grow while a step is recorded"),
               cu_status(b);
    if (*p)
        cudaFree(*p);
    *cap = 0;
    kern_status s = cu_malloc(b, p, bytes, what);
    if (!s)
        *cap = bytes;
    return s;
}
