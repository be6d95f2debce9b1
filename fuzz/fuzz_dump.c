/* libFuzzer target: another engine's tensor dump as gguf-run --against reads it (an .npz, stored or deflated,
 * with or without zip64 extras; a .safetensors file; one .npy), every array's values read. */
#include "tensor_dump.h"

#include <stddef.h>
#include <stdint.h>

static volatile float sink;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tensor_dump d;
    char why[600];
    if (tensor_dump_parse(data, size, "input", &d, why, sizeof why) != 0)
        return 0;
    for (size_t i = 0; i < d.n; i++) {
        uint64_t n = 1;
        for (int k = 0; k < d.a[i].ndim; k++)
            n *= d.a[i].shape[k];
        sink += d.a[i].data[n - 1] + d.a[i].rounding;
    }
    tensor_dump_free(&d);
    return 0;
}
