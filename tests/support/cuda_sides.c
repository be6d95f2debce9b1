/* What the CUDA suites share (cuda_sides.h). */
#include "cuda_sides.h"
#include "fixture_model.h"
#include "quant.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>

kern_backend *cuda_or_skip(void)
{
    char why[512];
    kern_backend *b = kern_cuda_create(0, why, sizeof why);
    if (!b)
        cr_skip_test("no GPU here: %s", why);
    return b;
}

float max_abs(const float *x, size_t n)
{
    float m = 0.0f;
    for (size_t i = 0; i < n; i++)
        m = fabsf(x[i]) > m ? fabsf(x[i]) : m;
    return m;
}

/* max |a - b| / max |a| */
float rel_diff(const float *a, const float *b, size_t n)
{
    float d = 0.0f;
    for (size_t i = 0; i < n; i++) {
        if (isnan(a[i]) != isnan(b[i]))
            return INFINITY;
        d = fabsf(a[i] - b[i]) > d ? fabsf(a[i] - b[i]) : d;
    }
    float m = max_abs(a, n);
    return m > 0 ? d / m : d;
}

float *noise(size_t n, uint32_t seed, float scale)
{
    float *x = malloc(n * sizeof(float));
    for (size_t i = 0; i < n; i++)
        x[i] = fixture_value(seed, i, scale);
    return x;
}

/* Device copy of host data. */
float *up(kern_backend *b, const float *h, size_t n)
{
    float *d = b->alloc(b, n);
    cr_assert(d);
    cr_assert_eq(b->from_host(b, d, h, n), KERN_OK, "%s", b->last_error(b));
    return d;
}

float *down(kern_backend *b, const float *d, size_t n)
{
    float *h = malloc(n * sizeof(float));
    cr_assert_eq(b->to_host(b, h, d, n), KERN_OK, "%s", b->last_error(b));
    return h;
}

wbuf make_weight(uint32_t type, int64_t k, int64_t rows, uint32_t seed)
{
    const gguf_type_traits *tr = gguf_type_traits_of(type);
    const size_t rb = (size_t)(k / tr->block_size) * tr->type_size;
    wbuf w = { 0 };
    w.data = aligned_alloc(64, (rb * rows + 63) / 64 * 64);
    float *src = noise((size_t)k, seed, 1.0f);
    for (int64_t r = 0; r < rows; r++) {
        for (int64_t i = 0; i < k; i++)
            src[i] = fixture_value(seed + (uint32_t)r, (uint64_t)i, 0.5f);
        cr_assert_eq(quant_quantize_row(type, src, w.data + r * rb, k), QUANT_OK, "%s", tr->name);
    }
    free(src);
    w.t = (gguf_tensor){ .name = "test.weight", .n_dims = 2, .ne = { (uint64_t)k, (uint64_t)rows, 1, 1 },
                         .type = type, .size = rb * rows, .n_elements = (uint64_t)(k * rows), .data = w.data };
    return w;
}

