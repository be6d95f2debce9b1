/* Writer-made weights for the kernel suites: rows of random values in [-0.5, 0.5) quantized by our quantizer. */
#include "weights.h"

#include "quant.h"
#include "testutil.h"

#include <criterion/criterion.h>
#include <stdlib.h>

gguf_tensor test_weight_tensor(uint32_t type, int64_t n, int64_t rows, uint8_t **buf)
{
    const gguf_type_traits *tr = gguf_type_traits_of(type);
    size_t rb = (size_t)n / tr->block_size * tr->type_size;
    *buf = aligned_alloc(64, (rb * rows + 63) / 64 * 64);
    float *src = malloc((size_t)n * sizeof(float));
    uint32_t s = 42;
    for (int64_t r = 0; r < rows; r++) {
        for (int64_t i = 0; i < n; i++)
            src[i] = test_frand(&s) * 0.5f;
        cr_assert_eq(quant_quantize_row(type, src, *buf + rb * r, n), QUANT_OK);
    }
    free(src);
    return (gguf_tensor){ .name = "w", .n_dims = 2, .ne = { (uint64_t)n, (uint64_t)rows, 1, 1 }, .type = type,
                          .size = rb * rows, .n_elements = (uint64_t)(n * rows), .data = *buf };
}
