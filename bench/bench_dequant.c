/*
 * bench-dequant [--big-mib N] [--runs N] [--types LIST]
 * Dequantization throughput per type, as JSON lines:
 *   "cache": one 64 KiB-of-output row set decoded repeatedly (single thread), scalar and SIMD;
 *   "big":   a tensor of N MiB of f32 output (default 1024) decoded whole, 1 thread and all threads.
 * Throughput is values/ns and GB/s of f32 written; medians of --runs runs.
 */
#include "quant.h"

#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Valid blocks: quantize smooth random data where we can, else random bytes with sane f16 scales. */
static void make_data(uint32_t type, uint8_t *dst, uint64_t n_values)
{
    const gguf_type_traits *tt = gguf_type_traits_of(type);
    uint64_t n_blocks = n_values / tt->block_size, x = 88172645463325252ull;
    for (uint64_t i = 0; i < n_blocks * tt->type_size; i++) {
        x ^= x << 13; x ^= x >> 7; x ^= x << 17;
        dst[i] = (uint8_t)x;
    }
    if (tt->block_size == 1) {
        for (uint64_t i = 0; i < n_values && (type == GGUF_TENSOR_F16 || type == GGUF_TENSOR_BF16); i++) {
            uint16_t h = type == GGUF_TENSOR_F16 ? quant_f32_to_f16((float)(i % 1000) * 1e-3f)
                                               : quant_f32_to_bf16((float)(i % 1000) * 1e-3f);
            memcpy(dst + 2 * i, &h, 2);
        }
        return;
    }
    /* every f16 that could be a scale: keep them finite by clearing the top exponent bit */
    for (uint64_t b = 0; b < n_blocks; b++)
        for (uint32_t k = 1; k < tt->type_size; k += 2)
            dst[b * tt->type_size + k] &= 0x3f;
}

static double time_median(int runs, void (*body)(void *), void *arg)
{
    double t[32];
    for (int r = 0; r < runs; r++) {
        double t0 = now_s();
        body(arg);
        t[r] = now_s() - t0;
    }
    qsort(t, (size_t)runs, sizeof t[0], cmp);
    return t[runs / 2];
}

typedef struct job {
    quant_row_fn fn;
    const uint8_t *src;
    float *dst;
    int64_t n, reps, row_len;
    size_t row_bytes;
    int threads;
} job;

static void run_cache(void *p)
{
    job *j = p;
    for (int64_t r = 0; r < j->reps; r++)
        j->fn(j->src, j->dst, j->n);
}

static void run_big(void *p)
{
    job *j = p;
    const int64_t rows = j->n / j->row_len;
#pragma omp parallel for schedule(static) num_threads(j->threads)
    for (int64_t r = 0; r < rows; r++)
        j->fn(j->src + (size_t)r * j->row_bytes, j->dst + r * j->row_len, j->row_len);
}

/* Memory bandwidth of this machine, measured the way whole-tensor decoding uses memory:
 * stream a buffer in and write one out (a copy), all threads, counted as bytes written. */
typedef struct copy_job {
    const float *src;
    float *dst;
    int64_t n;
    int threads;
} copy_job;

static void run_copy(void *p)
{
    copy_job *c = p;
    const int64_t chunk = 1 << 16;
#pragma omp parallel for schedule(static) num_threads(c->threads)
    for (int64_t i = 0; i < c->n; i += chunk)
        memcpy(c->dst + i, c->src + i, (size_t)(c->n - i < chunk ? c->n - i : chunk) * sizeof(float));
}

static void report(const char *mode, const char *type, const char *impl, int threads, int64_t values, double secs)
{
    printf("{\"bench\":\"dequant\",\"mode\":\"%s\",\"type\":\"%s\",\"impl\":\"%s\",\"threads\":%d,"
           "\"values\":%lld,\"median_s\":%.6f,\"values_per_ns\":%.3f,\"gb_s_f32_out\":%.2f}\n",
           mode, type, impl, threads, (long long)values, secs, (double)values / secs * 1e-9,
           (double)values * 4 / secs * 1e-9);
    fflush(stdout);
}

int main(int argc, char **argv)
{
    int runs = 5;
    uint64_t big_mib = 1024;
    const char *only = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--runs") && i + 1 < argc) runs = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--big-mib") && i + 1 < argc) big_mib = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--types") && i + 1 < argc) only = argv[++i];
        else { fprintf(stderr, "usage: bench-dequant [--runs N] [--big-mib N] [--types F16,Q4_K,...]\n"); return 2; }
    }
    if (runs < 1 || runs > 32)
        runs = 5;
    const int all = omp_get_max_threads();
    fprintf(stderr, "bench-dequant: SIMD level %s, %d threads\n", quant_simd_level(), all);
    if (big_mib) {
        const int64_t n = (int64_t)(big_mib << 20) / 4;
        float *a = malloc((size_t)n * 4), *b = malloc((size_t)n * 4);
        memset(a, 1, (size_t)n * 4);
        memset(b, 0, (size_t)n * 4);
        for (int th = 1; th <= all; th = th == all ? all + 1 : all) {
            copy_job c = { a, b, n, th };
            run_copy(&c);
            report("memcpy", "f32", "memcpy", th, n, time_median(runs < 3 ? runs : 3, run_copy, &c));
        }
        free(a);
        free(b);
    }
    const int64_t cache_n = 16384; /* 64 KiB of f32 output */
    for (uint32_t type = 0; type < GGUF_TENSOR_COUNT; type++) {
        if (!quant_can_dequantize(type) || type == GGUF_TENSOR_F32 || type == GGUF_TENSOR_Q8_1 ||
            type == GGUF_TENSOR_Q8_K)
            continue;
        const gguf_type_traits *tt = gguf_type_traits_of(type);
        if (only && !strstr(only, tt->name))
            continue;
        uint8_t *src = malloc((size_t)cache_n / tt->block_size * tt->type_size);
        float *dst = malloc((size_t)cache_n * 4);
        make_data(type, src, (uint64_t)cache_n);
        static const quant_impl impls[3] = { QUANT_IMPL_SCALAR, QUANT_IMPL_AVX2, QUANT_IMPL_BEST };
        static const char *const impl_names[3] = { "scalar", "avx2", NULL };
        quant_row_fn seen[3] = { 0 };
        for (int k = 0; k < 3; k++) {
            quant_row_fn fn = quant_row_function(type, impls[k]);
            if ((k > 0 && fn == seen[0]) || (k > 1 && fn == seen[1]))
                continue; /* that path is the same code as one already measured */
            seen[k] = fn;
            job j = { fn, src, dst, cache_n, 2000, 0, 0, 1 };
            run_cache(&j);
            report("cache", tt->name, impl_names[k] ? impl_names[k] : quant_simd_level(), 1, cache_n * j.reps,
                   time_median(runs, run_cache, &j));
        }
        free(src);
        free(dst);
        if (big_mib == 0)
            continue;
        const int64_t row_len = 4096, n = (int64_t)(big_mib << 20) / 4 / row_len * row_len;
        const size_t row_bytes = (size_t)row_len / tt->block_size * tt->type_size;
        src = malloc((size_t)(n / row_len) * row_bytes);
        dst = malloc((size_t)n * 4);
        make_data(type, src, (uint64_t)n);
        memset(dst, 0, (size_t)n * 4); /* fault the output pages in before timing */
        for (int th = 1; th <= all; th = th == all ? all + 1 : all) {
            quant_row_fn best = quant_row_function(type, QUANT_IMPL_BEST);
            const char *impl = best == quant_row_function(type, QUANT_IMPL_SCALAR) ? "scalar"
                               : best == quant_row_function(type, QUANT_IMPL_AVX2) ? "avx2" : quant_simd_level();
            job j = { best, src, dst, n, 1, row_len, row_bytes, th };
            run_big(&j);
            report("big", tt->name, impl, th, n, time_median(runs < 3 ? runs : 3, run_big, &j));
        }
        free(src);
        free(dst);
    }
    return 0;
}
