/* Writer-made weights for the kernel suites (test_kernels, test_ops). */
#ifndef GGUFSCOPE_TEST_WEIGHTS_H
#define GGUFSCOPE_TEST_WEIGHTS_H

#include "gguf.h"

#include <stdint.h>

/* rows x n random values quantized to type (F32, F16, or a type quant_quantize_row writes) into *buf
 * (64-byte aligned; the caller frees it), as a 2-D tensor over it. */
gguf_tensor test_weight_tensor(uint32_t type, int64_t n, int64_t rows, uint8_t **buf);

#endif
