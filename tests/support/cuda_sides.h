/* What the CUDA suites share (test_cuda.c, test_cuda_paths.c): a backend or a skip, noise, copies to and from the
 * device, relative differences, weights of any type quantized from noise. */
#ifndef GGUFSCOPE_TEST_CUDA_SIDES_H
#define GGUFSCOPE_TEST_CUDA_SIDES_H

#include "gguf.h"
#include "kern.h"

#include <stddef.h>
#include <stdint.h>

/* The CUDA backend on device 0, or the test skipped with the reason there is none. */
kern_backend *cuda_or_skip(void);
float max_abs(const float *x, size_t n);
/* max |a - b| / max |a| (INFINITY where one is NaN and the other not) */
float rel_diff(const float *a, const float *b, size_t n);
/* n values of fixture_value(seed, i, scale), malloc'd */
float *noise(size_t n, uint32_t seed, float scale);
/* A device copy of host data; a host copy (malloc'd) of device data. */
float *up(kern_backend *b, const float *h, size_t n);
float *down(kern_backend *b, const float *d, size_t n);

/* A weight tensor of `type`, (rows, k), quantized from noise by quant/ (or raw floats); data is the caller's. */
typedef struct wbuf {
    gguf_tensor t;
    uint8_t *data;
} wbuf;
wbuf make_weight(uint32_t type, int64_t k, int64_t rows, uint32_t seed);

#endif
