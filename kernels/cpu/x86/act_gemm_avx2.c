/* The prompt products (act_gemm_body.h) with maddubs, on any AVX2 CPU. */
#include "x86_target.h"
#include "x86.h"

#if defined(__x86_64__)
#include <immintrin.h>

#include "act_unpack_avx2.h"

#define GEMM_VNNI 0
#define GEMM_TARGET X86_AVX2
#define GEMM_SUFFIX _avx2
#include "act_gemm_body.h"

#endif
