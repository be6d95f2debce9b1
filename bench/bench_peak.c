/*
 * bench-peak: the arithmetic ceilings of this CPU's vector units, as multiply-adds per second, for the instruction
 * each engine multiplies a prompt's products with:
 *   f32-fma-zmm / f32-fma-ymm  our exact numerics' products (f32 weights decoded, f32 activations: an FMA makes 16
 *                              or 8);
 *   bf16-dot-zmm               llama.cpp's BF16 prompts on AVX512-BF16 (vdpbf16ps: 32 products an instruction);
 *   int8-dot-zmm               llama.cpp's quantized prompts with AVX512-VNNI (vpdpbusd: 64 products);
 *   int8-dot-ymm               the same on AVX2 (vpmaddubsw + vpmaddwd + vpaddd: 32 products in three).
 * A prompt product is bounded by whichever ceiling its kernel uses, so these say how far an engine on f32
 * activations can go against one on bf16 or int8 (docs/BENCHMARKS.md). Each kernel runs independent chains
 * (more than latency x throughput on any core here) for about 0.2 s a thread; the best of 5 repetitions, since a
 * ceiling is what the units reach when nothing else runs (on a shared 2-vCPU machine one repetition in three ran
 * at half speed on two threads: the other vCPU taken away, not the units' rate).
 * JSON lines on stdout, one per instruction the CPU has, per-thread and for all threads together.
 * usage: bench-peak [--threads T]
 */
#include "x86_target.h"
#include "quant.h"

#include <omp.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#if defined(__x86_64__)
#include <immintrin.h>

/* Independent accumulators: 24 zmm (of AVX-512's 32 registers), 12 ymm (AVX2 has 16; 24 spilled and ran at 80 %). */
enum { CHAINS = 24, YMM_CHAINS = 12, REPS = 5 };
static const long ITERS = 1L << 25;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The lanes of a 256-bit register added (AVX2 has no reduce instruction). */
X86_AVX2 static float sum_ymm(__m256 v)
{
    float out[8], s = 0;
    _mm256_storeu_ps(out, v);
    for (int j = 0; j < 8; j++)
        s += out[j];
    return s;
}

X86_AVX2 static float sum_ymm_epi32(__m256i v)
{
    int32_t out[8];
    int64_t s = 0;
    _mm256_storeu_si256((__m256i *)out, v);
    for (int j = 0; j < 8; j++)
        s += out[j];
    return (float)s;
}

/* NAME(iters, sink): CHAINS_N independent accumulators of type VEC, each INIT(i) and then STEP(acc) iters times;
 * *sink gets the sum of REDUCE(acc) over the chains, which depends on every chain, so none is optimized away.
 * SETUP declares the operands STEP uses. */
#define CHAIN_KERNEL(NAME, ISA, VEC, CHAINS_N, SETUP, INIT, STEP, REDUCE)                                  \
    ISA static void NAME(long iters, float *sink)                                  \
    {                                                                                                       \
        SETUP;                                                                                              \
        VEC a[CHAINS_N];                                                                                    \
        for (int i = 0; i < (CHAINS_N); i++)                                                                \
            a[i] = INIT;                                                                                    \
        for (long k = 0; k < iters; k++) {                                                                  \
            _Pragma("GCC unroll 24") for (int i = 0; i < (CHAINS_N); i++) a[i] = STEP;                      \
        }                                                                                                   \
        float s = 0;                                                                                        \
        for (int i = 0; i < (CHAINS_N); i++)                                                                \
            s += REDUCE;                                                                                    \
        *sink = s;                                                                                          \
    }

CHAIN_KERNEL(fma_zmm, X86_AVX512, __m512, CHAINS,
             const __m512 x = _mm512_set1_ps(0.999999f); const __m512 y = _mm512_set1_ps(1e-7f),
             _mm512_set1_ps(1.0f + (float)i), _mm512_fmadd_ps(a[i], x, y), _mm512_reduce_add_ps(a[i]))
CHAIN_KERNEL(fma_ymm, X86_AVX2, __m256, YMM_CHAINS,
             const __m256 x = _mm256_set1_ps(0.999999f); const __m256 y = _mm256_set1_ps(1e-7f),
             _mm256_set1_ps(1.0f + (float)i), _mm256_fmadd_ps(a[i], x, y), sum_ymm(a[i]))
CHAIN_KERNEL(bf16_zmm, X86_AVX512_BF16, __m512, CHAINS,
             const __m512bh x = (__m512bh)_mm512_set1_epi16(0x3f80);
             const __m512bh y = (__m512bh)_mm512_set1_epi16(0x3300),
             _mm512_set1_ps((float)i), _mm512_dpbf16_ps(a[i], x, y), _mm512_reduce_add_ps(a[i]))
CHAIN_KERNEL(int8_zmm, X86_AVX512_VNNI, __m512i, CHAINS,
             const __m512i x = _mm512_set1_epi8(1); const __m512i y = _mm512_set1_epi8(1),
             _mm512_set1_epi32(i), _mm512_dpbusd_epi32(a[i], x, y), (float)_mm512_reduce_add_epi32(a[i]))
/* AVX2 has no fused int8 dot: llama.cpp's kernels take u8 x s8 pairs to i16 (maddubs), i16 pairs to i32
 * (madd with ones) and add. */
CHAIN_KERNEL(int8_ymm, X86_AVX2, __m256i, YMM_CHAINS,
             const __m256i x = _mm256_set1_epi8(1); const __m256i y = _mm256_set1_epi8(1);
             const __m256i ones = _mm256_set1_epi16(1),
             _mm256_set1_epi32(i), _mm256_add_epi32(a[i], _mm256_madd_epi16(_mm256_maddubs_epi16(x, y), ones)),
             sum_ymm_epi32(a[i]))

/* AVX2 with FMA: the f32 ymm kernel's instructions */
static bool has_avx2_fma(void)
{
    return quant_cpu_has_avx2() && quant_cpu_has_fma();
}

typedef struct peak_kernel {
    const char *name;
    bool (*available)(void); /* the CPU has its instructions (quant's detection, as the kernels use it) */
    void (*run)(long, float *);
    int products_per_step; /* multiply-adds one step of one chain does (a step: one instruction, or AVX2's three) */
    int chains;
} peak_kernel;

static const peak_kernel kernels[] = {
    { "f32-fma-zmm", quant_cpu_has_avx512, fma_zmm, 16, CHAINS },
    { "f32-fma-ymm", has_avx2_fma, fma_ymm, 8, YMM_CHAINS },
    { "bf16-dot-zmm", quant_cpu_has_avx512bf16, bf16_zmm, 32, CHAINS },
    { "int8-dot-zmm", quant_cpu_has_avx512vnni, int8_zmm, 64, CHAINS },
    { "int8-dot-ymm", quant_cpu_has_avx2, int8_ymm, 32, YMM_CHAINS },
};

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Multiply-adds per second of one kernel on `threads` threads at once (the best of REPS). */
static double rate(const peak_kernel *k, int threads)
{
    double r[REPS];
    volatile float sink = 0;
    for (int rep = 0; rep < REPS; rep++) {
        double t0 = 0, t1 = 0;
#pragma omp parallel num_threads(threads)
        {
#pragma omp barrier
#pragma omp master
            t0 = now();
            float v;
            k->run(ITERS, &v);
#pragma omp atomic
            sink += v;
#pragma omp barrier
#pragma omp master
            t1 = now();
        }
        r[rep] = (double)k->products_per_step * k->chains * (double)ITERS * threads / (t1 - t0);
    }
    qsort(r, REPS, sizeof r[0], cmp_double);
    return r[REPS - 1];
}

int main(int argc, char **argv)
{
    int threads = omp_get_num_procs();
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--threads") && i + 1 < argc && atoi(argv[i + 1]) > 0) {
            threads = atoi(argv[++i]);
        } else {
            fprintf(stderr, "usage: bench-peak [--threads T]\n");
            return 2;
        }
    }
    for (size_t i = 0; i < sizeof kernels / sizeof kernels[0]; i++) {
        const peak_kernel *k = &kernels[i];
        if (!k->available())
            continue;
        const double one = rate(k, 1), all = rate(k, threads);
        printf("{\"bench\":\"peak\",\"instruction\":\"%s\",\"products_per_step\":%d,"
               "\"g_products_per_s_one_thread\":%.1f,\"threads\":%d,\"g_products_per_s\":%.1f}\n",
               k->name, k->products_per_step, one / 1e9, threads, all / 1e9);
    }
    return 0;
}
#else
int main(void)
{
    fprintf(stderr, "bench-peak: x86-64 only\n");
    return 2;
}
#endif
