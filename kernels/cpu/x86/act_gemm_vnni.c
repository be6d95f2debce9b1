/* The prompt products (act_gemm_body.h) with AVX-512 VNNI's vpdpbusd: 16-row panels in 512-bit registers, or 256-bit ones (AVX-512VL's 32 of them). */
#include "x86_target.h"
#include "x86.h"

#if defined(__x86_64__)
#include <immintrin.h>

#include "act_unpack_avx2.h"

#define GEMM_VNNI 1
#define GEMM_TARGET X86_AVX512_VNNI
#define GEMM_SUFFIX _vnni
#include "act_gemm_body.h"

#endif
