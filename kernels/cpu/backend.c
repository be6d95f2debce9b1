/* The CPU backend's table: host memory, weights read in place from the mapping. */
#include "cpu.h"
#include "quant.h"
#include "row_kernels.h"

#include <omp.h>
#include <stdlib.h>
#include <string.h>

static void cpu_destroy(kern_backend *b)
{
    if (b) {
        cpu_ctx *c = b->ctx;
        for (int i = 0; c && i < 2; i++)
            free(c->angles[i].cs);
        free(b->ctx);
        free(b);
    }
}

static void cpu_set_threads(kern_backend *b, int n)
{
    ((cpu_ctx *)b->ctx)->n_threads = n > 0 ? n : omp_get_num_procs();
}

static float *cpu_alloc(kern_backend *b, size_t n)
{
    (void)b;
    return n > SIZE_MAX / sizeof(float) ? NULL : cpu_buffer_alloc((n ? n : 1) * sizeof(float));
}

static void cpu_free(kern_backend *b, float *p)
{
    (void)b;
    cpu_buffer_free(p);
}

static kern_status cpu_copy(kern_backend *b, float *dst, const float *src, size_t n)
{
    (void)b;
    if (dst != src)
        memmove(dst, src, n * sizeof(float));
    return KERN_OK;
}

static kern_status cpu_bind(kern_backend *b, kern_weight *w)
{
    (void)b;
    w->dev = NULL;
    return kern_cpu_supports(w->t->type) ? KERN_OK : KERN_E_UNSUPPORTED;
}

static void cpu_unbind(kern_backend *b, kern_weight *w)
{
    (void)b;
    w->dev = NULL;
}

static const char *cpu_last_error(const kern_backend *b)
{
    (void)b;
    return "";  /* the CPU's only failures are the statuses themselves */
}

const char *kern_numerics_name(kern_numerics n)
{
    return n == KERN_NUMERICS_GGML ? "ggml" : "exact";
}

bool kern_numerics_parse(const char *name, kern_numerics *out)
{
    if (!strcmp(name, "exact"))
        *out = KERN_NUMERICS_EXACT;
    else if (!strcmp(name, "ggml"))
        *out = KERN_NUMERICS_GGML;
    else
        return false;
    return true;
}

kern_backend *kern_cpu_create(int n_threads)
{
    return kern_cpu_create_numerics(n_threads, KERN_NUMERICS_EXACT);
}

kern_backend *kern_cpu_create_numerics(int n_threads, kern_numerics numerics)
{
    kern_backend *b = calloc(1, sizeof *b);
    cpu_ctx *c = calloc(1, sizeof *c);
    if (!b || !c) {
        free(b);
        free(c);
        return NULL;
    }
    *b = (kern_backend){
        .name = numerics == KERN_NUMERICS_GGML ? "cpu:ggml" : "cpu", .ctx = c,
        .split_rows_min = numerics == KERN_NUMERICS_GGML ? CPU_TILED_MIN_TOKENS : 0, .numerics = numerics,
        .destroy = cpu_destroy, .set_threads = cpu_set_threads,
        .alloc = cpu_alloc, .free = cpu_free, .to_host = cpu_copy, .from_host = cpu_copy,
        .bind = cpu_bind, .unbind = cpu_unbind,
#define CPU_OP_SET(name, params, args) .name = cpu_##name,
        KERN_OPS(CPU_OP_SET)
#undef CPU_OP_SET
        /* of the coarse ops, the products: the fused ones save launches a host does not have */
        .matmul_many = cpu_matmul_many, .matmul_many_x = cpu_matmul_many_x, .matmul_each = cpu_matmul_each,
        .last_error = cpu_last_error,
    };
    cpu_set_threads(b, n_threads);
    return b;
}
