/* The row decoder of a type at the SIMD level asked for (type_table.c's row), f16 output, and threaded
 * whole-tensor rows. */
#include "blocks.h"

#include <stdlib.h>
#ifdef _OPENMP
#include <omp.h>
#endif

typedef enum level { LEVEL_SCALAR, LEVEL_AVX2, LEVEL_AVX512 } level;

/* The best level the CPU has, capped by GGUFSCOPE_SIMD=scalar|avx2 (for comparisons and bisecting). */
static level simd_level(void)
{
    static int cached = -1;
    if (cached < 0) {
        const char *env = getenv("GGUFSCOPE_SIMD");
        level cap = !env ? LEVEL_AVX512 : !strcmp(env, "scalar") ? LEVEL_SCALAR : !strcmp(env, "avx2") ? LEVEL_AVX2
                                                                                                       : LEVEL_AVX512;
        level have = quant_cpu_has_avx512() ? LEVEL_AVX512 : quant_cpu_has_avx2() ? LEVEL_AVX2 : LEVEL_SCALAR;
        cached = (int)(have < cap ? have : cap);
    }
    return (level)cached;
}

bool quant_use_avx2(quant_impl impl)
{
#if defined(__x86_64__)
    const bool asked = impl == QUANT_IMPL_AVX2 || (impl == QUANT_IMPL_BEST && simd_level() >= LEVEL_AVX2);
    return asked && quant_cpu_has_avx2() && quant_cpu_has_fma();
#else
    (void)impl;
    return false;
#endif
}

bool quant_use_avx512(quant_impl impl)
{
    return impl == QUANT_IMPL_BEST && simd_level() >= LEVEL_AVX512 && quant_use_avx2(impl);
}

bool quant_use_vnni(quant_impl impl)
{
    return impl == QUANT_IMPL_BEST && simd_level() >= LEVEL_AVX512 && quant_cpu_has_avx512vnni() && quant_use_avx2(impl);
}

bool quant_can_dequantize(uint32_t type)
{
    return quant_type_row_of(type)->decode[LEVEL_SCALAR] != NULL;
}

const char *quant_simd_level(void)
{
    static const char *const names[] = { "scalar", "avx2", "avx512" };
    return names[simd_level()];
}

quant_row_fn quant_row_function(uint32_t type, quant_impl impl)
{
    const quant_row_fn *fns = quant_type_row_of(type)->decode;
    if (!fns[LEVEL_SCALAR])
        return NULL;
    /* the best form at or below the level asked for: AVX2 alone where that is asked, else the CPU's level */
    level at = impl == QUANT_IMPL_BEST ? simd_level() : impl == QUANT_IMPL_AVX2 && quant_cpu_has_avx2() ? LEVEL_AVX2
                                                                                                      : LEVEL_SCALAR;
    while (at > LEVEL_SCALAR && !fns[at])
        at--;
    return fns[at];
}

static quant_status check_row(uint32_t type, const void *src, const void *dst, int64_t n)
{
    if (!quant_can_dequantize(type))
        return QUANT_E_UNSUPPORTED;
    if (!src || !dst || n < 0)
        return QUANT_E_INVALID_ARG;
    if (n % gguf_type_traits_of(type)->block_size != 0)
        return QUANT_E_SHAPE;
    return QUANT_OK;
}

quant_status quant_dequantize_row(uint32_t type, const void *src, float *dst, int64_t n)
{
    quant_status s = check_row(type, src, dst, n);
    if (s == QUANT_OK && n > 0)
        quant_row_function(type, QUANT_IMPL_BEST)(src, dst, n);
    return s;
}

quant_status quant_dequantize_row_f16(uint32_t type, const void *src, uint16_t *dst, int64_t n)
{
    quant_status s = check_row(type, src, dst, n);
    if (s != QUANT_OK || n == 0)
        return s;
    const gguf_type_traits *tt = gguf_type_traits_of(type);
    const int64_t chunk = tt->block_size * 16; /* stack scratch, a multiple of the block */
    float tmp[256 * 16];
    const uint8_t *p = src;
    quant_row_fn fn = quant_row_function(type, QUANT_IMPL_BEST);
    for (int64_t i = 0; i < n; i += chunk) {
        const int64_t k = n - i < chunk ? n - i : chunk;
        fn(p + (i / tt->block_size) * tt->type_size, tmp, k);
        for (int64_t j = 0; j < k; j++)
            dst[i + j] = quant_f32_to_f16(tmp[j]);
    }
    return QUANT_OK;
}

quant_status quant_dequantize_rows(const gguf_tensor *t, uint64_t row0, uint64_t n_rows, float *dst, int n_threads)
{
    if (!t || !dst || !t->data)
        return QUANT_E_INVALID_ARG;
    if (!quant_can_dequantize(t->type))
        return QUANT_E_UNSUPPORTED;
    const uint64_t row_len = t->ne[0], total_rows = t->n_elements / t->ne[0];
    if (row0 > total_rows || n_rows > total_rows - row0)
        return QUANT_E_INVALID_ARG;
    const gguf_type_traits *tt = gguf_type_traits_of(t->type);
    const uint64_t row_bytes = row_len / tt->block_size * tt->type_size;
    quant_row_fn fn = quant_row_function(t->type, QUANT_IMPL_BEST);
    const int64_t rows = (int64_t)n_rows;
#ifdef _OPENMP
    if (n_threads <= 0)
        n_threads = omp_get_max_threads();
#pragma omp parallel for schedule(static) num_threads(n_threads) if (rows * (int64_t)row_len > (1 << 16))
#endif
    for (int64_t r = 0; r < rows; r++)
        fn(t->data + (row0 + (uint64_t)r) * row_bytes, dst + (uint64_t)r * row_len, (int64_t)row_len);
    (void)n_threads;
    return QUANT_OK;
}
