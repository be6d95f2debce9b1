/* A build without nvcc: the CUDA entry points exist and say why there is no GPU path. */
#include "kern.h"

#include <stdio.h>

kern_backend *kern_cuda_create(int device, char *why, size_t why_len)
{
    (void)device;
    snprintf(why, why_len, "this build has no CUDA backend: nvcc was not found when it was configured "
                           "(install the CUDA toolkit and rebuild, or configure with -DGGUFSCOPE_CUDA=ON)");
    return NULL;
}

bool kern_cuda_built(void)
{
    return false;
}

bool kern_cuda_decode_row_host(uint32_t type, const void *row, int64_t k, float *out)
{
    (void)type, (void)row, (void)k, (void)out;
    return false;
}
