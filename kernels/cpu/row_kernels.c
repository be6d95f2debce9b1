/*
 * The CPU backend's row kernels by weight type, one row a type: the fused dot (generation) at the AVX2 and
 * AVX-512 levels with the prep that rearranges x for it, and the 16-row panel decoder of the f32 GEMM (AVX-512).
 * A type without an entry is multiplied through quant/'s row decoders (matmul.c). The integer dots of
 * --numerics ggml have their own table (act_dot.c): the same kind of row, for the other numerics.
 */
#include "x86/x86.h"

typedef struct type_kernels {
    cpu_dot_kernel dot_avx2, dot_avx512;
    cpu_panel16_fn panel16_avx512;
} type_kernels;

#if defined(__x86_64__)
/* K-quants read x rearranged into fields (Q2_K and Q3_K take Q6_K's at AVX2, a form of their own at AVX-512), the
 * 32-value 4- and 5-bit types in pairs (AVX2) or as fields of four blocks a register (AVX-512), IQ4_XS the IQ4_NL
 * pairs (AVX2), MXFP4 IQ4_NL's with its own levels; Q8_0, BF16 (AVX2) and IQ4_NL, IQ4_XS, MXFP4, Q8_0 (AVX-512) read x
 * as it is. */
static const type_kernels kernels[GGUF_TENSOR_COUNT] = {
    [GGUF_TENSOR_Q4_0] = { { cpu_dot_q4_0_avx2, cpu_dot_prep_pairs_q4_0 },
                         { cpu_dot_quads_q4_0_avx512, cpu_dot_prep_quads_q4_0 }, cpu_panel16_q4_0_avx512 },
    [GGUF_TENSOR_Q4_1] = { { cpu_dot_q4_1_avx2, cpu_dot_prep_pairs_q4_1 },
                         { cpu_dot_quads_q4_1_avx512, cpu_dot_prep_quads_q4_1 }, cpu_panel16_q4_1_avx512 },
    [GGUF_TENSOR_Q5_0] = { { cpu_dot_q5_0_avx2, cpu_dot_prep_pairs_q5_0 },
                         { cpu_dot_quads_q5_0_avx512, cpu_dot_prep_quads_q5_0 }, cpu_panel16_q5_0_avx512 },
    [GGUF_TENSOR_Q5_1] = { { cpu_dot_q5_1_avx2, cpu_dot_prep_pairs_q5_1 },
                         { cpu_dot_quads_q5_1_avx512, cpu_dot_prep_quads_q5_1 }, cpu_panel16_q5_1_avx512 },
    [GGUF_TENSOR_Q8_0] = { { cpu_dot_q8_0_avx2, NULL }, { cpu_dot_q8_0_avx512, NULL }, NULL },
    [GGUF_TENSOR_IQ4_NL] = { { cpu_dot_iq4_nl_avx2, cpu_dot_prep_pairs_iq4 }, { cpu_dot_iq4_nl_avx512, NULL },
                           cpu_panel16_iq4_nl_avx512 },
    [GGUF_TENSOR_IQ4_XS] = { { cpu_dot_iq4_xs_avx2, cpu_dot_prep_pairs_iq4 }, { cpu_dot_iq4_xs_avx512, NULL },
                           cpu_panel16_iq4_xs_avx512 },
    [GGUF_TENSOR_MXFP4] = { { cpu_dot_mxfp4_avx2, cpu_dot_prep_pairs_mxfp4 }, { cpu_dot_mxfp4_avx512, NULL }, NULL },
    [GGUF_TENSOR_Q2_K] = { { cpu_dot_q2_k_avx2, cpu_dot_prep_fields_q6_k }, { cpu_dot_q2_k_avx512, cpu_dot_prep_q23_k },
                         cpu_panel16_q2_k_avx512 },
    [GGUF_TENSOR_Q3_K] = { { cpu_dot_q3_k_avx2, cpu_dot_prep_fields_q6_k }, { cpu_dot_q3_k_avx512, cpu_dot_prep_q23_k },
                         cpu_panel16_q3_k_avx512 },
    [GGUF_TENSOR_Q4_K] = { { cpu_dot_q4_k_avx2, cpu_dot_prep_fields_q4_k }, { cpu_dot_q4_k_avx512, cpu_dot_prep_q4_k },
                         cpu_panel16_q4_k_avx512 },
    [GGUF_TENSOR_Q5_K] = { { cpu_dot_q5_k_avx2, cpu_dot_prep_fields_q5_k }, { cpu_dot_q5_k_avx512, cpu_dot_prep_q5_k },
                         cpu_panel16_q5_k_avx512 },
    [GGUF_TENSOR_Q6_K] = { { cpu_dot_q6_k_avx2, cpu_dot_prep_fields_q6_k }, { cpu_dot_q6_k_avx512, cpu_dot_prep_q6_k },
                         cpu_panel16_q6_k_avx512 },
    [GGUF_TENSOR_BF16] = { { cpu_dot_bf16_avx2, NULL }, { NULL, NULL }, NULL },
};
#else
static const type_kernels kernels[GGUF_TENSOR_COUNT];
#endif

static const type_kernels *of(uint32_t type)
{
    static const type_kernels none;
    return type < GGUF_TENSOR_COUNT ? &kernels[type] : &none;
}

cpu_panel16_fn cpu_panel16_function(uint32_t type, quant_impl impl)
{
    return quant_use_avx512(impl) ? of(type)->panel16_avx512 : NULL;
}

cpu_dot_kernel cpu_dot_function(uint32_t type, quant_impl impl)
{
    const cpu_dot_kernel none = { NULL, NULL };
    if (quant_use_avx512(impl) && of(type)->dot_avx512.dot)
        return of(type)->dot_avx512;
    /* the AVX2 form on the AVX-512 level where that level has none of its own (BF16) */
    return quant_use_avx2(impl) ? of(type)->dot_avx2 : none;
}

int64_t cpu_dot_prep_floats(int64_t n)
{
    /* x rearranged (for the AVX2 pairs, n rounded up to 64; the AVX-512 quads, to 128), then a sum per group
     * (32 values for Q4_K, 16 for Q6_K) or 8 lane sums per 64 values (the pairs; 16 per 128, the quads) */
    const int64_t pairs = (n + 63) / 64 * 72, quads = (n + 127) / 128 * 144;
    return pairs > quads ? pairs : quads;
}
