/*
 * The CUDA backend lives in its own shared library (libggufscope-cuda.so),
 * opened only when a CUDA backend is asked for: a CPU run never maps cuBLAS
 * and the CUDA runtime (about 90 MiB of private memory when linked in), and
 * the tools start on machines that have no CUDA libraries at all.
 */
#include "kern.h"

#include <dlfcn.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CUDA_LIB "libggufscope-cuda.so"

bool kern_cuda_built(void)
{
#ifdef GGUFSCOPE_HAVE_CUDA
    return true;
#else
    return false;
#endif
}

#ifdef GGUFSCOPE_HAVE_CUDA
/* GGUFSCOPE_CUDA_LIB, then beside the executable, then PREFIX/lib of an installed one, then the build tree,
 * then the loader's own search. */
static void *open_library(char *why, size_t why_len)
{
    static void *handle;
    if (handle)
        return handle;
    char exe[4096], dir[4096], path[8192];
    const char *env = getenv("GGUFSCOPE_CUDA_LIB");
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    exe[n > 0 ? n : 0] = 0;
    snprintf(dir, sizeof dir, "%s", exe);
    const char *exe_dir = n > 0 ? dirname(dir) : ".";
    char candidates[5][8192];
    int k = 0;
    if (env && *env)
        snprintf(candidates[k++], sizeof candidates[0], "%s", env);
    snprintf(candidates[k++], sizeof candidates[0], "%s/" CUDA_LIB, exe_dir);
    snprintf(candidates[k++], sizeof candidates[0], "%s/../lib/" CUDA_LIB, exe_dir); /* an installed tree */
    snprintf(candidates[k++], sizeof candidates[0], "%s/" CUDA_LIB, GGUFSCOPE_CUDA_LIB_DIR);
    snprintf(candidates[k++], sizeof candidates[0], CUDA_LIB);
    path[0] = 0;
    for (int i = 0; i < k && !handle; i++) {
        handle = dlopen(candidates[i], RTLD_NOW | RTLD_LOCAL);
        if (!handle && !path[0] && access(candidates[i], F_OK) == 0) {
            /* It is there but does not load (a missing libcublas, say): that is the reason to give. */
            snprintf(path, sizeof path, "%s", dlerror());
        }
    }
    if (!handle)
        snprintf(why, why_len, "the CUDA backend library could not be loaded: %s",
                 path[0] ? path : CUDA_LIB " was not found beside the executable or in the build tree");
    return handle;
}

static void *symbol(const char *name, char *why, size_t why_len)
{
    void *h = open_library(why, why_len);
    void *f = h ? dlsym(h, name) : NULL;
    if (h && !f)
        snprintf(why, why_len, "%s has no symbol %s: it is from another build", CUDA_LIB, name);
    return f;
}
#endif

kern_backend *kern_cuda_create(int device, char *why, size_t why_len)
{
#ifdef GGUFSCOPE_HAVE_CUDA
    kern_backend *(*create)(int, char *, size_t) = NULL;
    void *f = symbol("kern_cuda_create_impl", why, why_len);
    memcpy(&create, &f, sizeof f);  /* dlsym's object pointer to a function pointer, the way POSIX allows */
    return create ? create(device, why, why_len) : NULL;
#else
    (void)device;
    snprintf(why, why_len, "this build has no CUDA backend: nvcc was not found when it was configured "
                           "(install the CUDA toolkit and rebuild, or configure with -DGGUFSCOPE_CUDA=ON)");
    return NULL;
#endif
}

/* A float -> float device function of the library, compiled for the host, at x. */
static bool host_float_fn(const char *name, float x, float *out)
{
#ifdef GGUFSCOPE_HAVE_CUDA
    char why[512];
    float (*fn)(float) = NULL;
    void *f = symbol(name, why, sizeof why);
    memcpy(&fn, &f, sizeof f);
    if (!fn)
        return false;
    *out = fn(x);
    return true;
#else
    (void)name, (void)x, (void)out;
    return false;
#endif
}

bool kern_cuda_gelu_host(float x, float *out)
{
    return host_float_fn("kern_cuda_gelu_host_impl", x, out);
}

bool kern_cuda_tf32_host(float x, float *out)
{
    return host_float_fn("kern_cuda_tf32_host_impl", x, out);
}

bool kern_cuda_decode_row_host(uint32_t type, const void *row, int64_t k, float *out)
{
#ifdef GGUFSCOPE_HAVE_CUDA
    char why[512];
    bool (*decode)(uint32_t, const void *, int64_t, float *) = NULL;
    void *f = symbol("kern_cuda_decode_row_host_impl", why, sizeof why);
    memcpy(&decode, &f, sizeof f);
    return decode && decode(type, row, k, out);
#else
    (void)type, (void)row, (void)k, (void)out;
    return false;
#endif
}
