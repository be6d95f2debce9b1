/*
 * One row a weight type: its row decoders at each SIMD level, its quantizer, the type llama.cpp's CPU backend
 * rounds activations to for it (ggml-cpu's type_traits_cpu vec_dot_type), its scale fields (offsets from
 * ggml-common.h; "never negative" where ggml's reference quantizer divides by a positive number: d = amax / 127
 * for Q8_0, (max - min) / 15 for Q4_1, max_scale / 63 for Q4_K; Q4_0, Q5_0, Q3_K and Q6_K divide a signed extreme
 * by a negative number and legitimately store either sign), and its field-by-field describer. The block size and
 * bytes are gguf/'s (gguf_type_traits_of); the CPU backend's row kernels have their own table
 * (kernels/cpu/row_kernels.c).
 */
#include "blocks.h"

/* the SIMD forms exist on x86 only */
#if defined(__x86_64__) || defined(__i386__)
#define X86(fn) fn
#else
#define X86(fn) NULL
#endif
#define ACT(t) .has_act = true, .act_type = GGUF_TENSOR_##t

static const quant_type_row rows[GGUF_TENSOR_COUNT] = {
    [GGUF_TENSOR_F32] = { .decode = { quant_deq_f32 }, .quantize = quant_quantize_f32, ACT(F32) },
    [GGUF_TENSOR_F16] = { .decode = { quant_deq_f16, X86(quant_deq_f16_avx2), X86(quant_deq_f16_avx512) },
                          .quantize = quant_quantize_f16, ACT(F16) },
    /* BF16 has no AVX-512 form: its AVX2 one measured faster (64 vs 51 GB/s) */
    [GGUF_TENSOR_BF16] = { .decode = { quant_deq_bf16, X86(quant_deq_bf16_avx2) }, .quantize = quant_quantize_bf16,
                           ACT(BF16) },
    [GGUF_TENSOR_Q4_0] = { .decode = { quant_deq_q4_0, X86(quant_deq_q4_0_avx2), X86(quant_deq_q4_0_avx512) },
                           .quantize = quant_quantize_q4_0, ACT(Q8_0), .n_scales = 1,
                           .scale = { { 0, QUANT_ENC_F16, false, "d" } }, .describe = quant_describe_q4_0 },
    [GGUF_TENSOR_Q4_1] = { .decode = { quant_deq_q4_1, X86(quant_deq_q4_1_avx2), X86(quant_deq_q4_1_avx512) },
                           ACT(Q8_1), .n_scales = 2,
                           .scale = { { 0, QUANT_ENC_F16, true, "d" }, { 2, QUANT_ENC_F16, false, "m" } },
                           .describe = quant_describe_q4_1 },
    [GGUF_TENSOR_Q5_0] = { .decode = { quant_deq_q5_0, X86(quant_deq_q5_0_avx2), X86(quant_deq_q5_0_avx512) },
                           .quantize = quant_quantize_q5_0, ACT(Q8_0), .n_scales = 1,
                           .scale = { { 0, QUANT_ENC_F16, false, "d" } }, .describe = quant_describe_q5_0 },
    [GGUF_TENSOR_Q5_1] = { .decode = { quant_deq_q5_1, X86(quant_deq_q5_1_avx2), X86(quant_deq_q5_1_avx512) },
                           .quantize = quant_quantize_q5_1, ACT(Q8_1), .n_scales = 2,
                           .scale = { { 0, QUANT_ENC_F16, true, "d" }, { 2, QUANT_ENC_F16, false, "m" } },
                           .describe = quant_describe_q5_1 },
    [GGUF_TENSOR_Q8_0] = { .decode = { quant_deq_q8_0, X86(quant_deq_q8_0_avx2), X86(quant_deq_q8_0_avx512) },
                           .quantize = quant_quantize_q8_0, ACT(Q8_0), .n_scales = 1,
                           .scale = { { 0, QUANT_ENC_F16, true, "d" } }, .describe = quant_describe_q8_0 },
    [GGUF_TENSOR_Q8_1] = { .decode = { quant_deq_q8_1 }, .n_scales = 2,
                           .scale = { { 0, QUANT_ENC_F16, true, "d" }, { 2, QUANT_ENC_F16, false, "s" } } },
    [GGUF_TENSOR_Q2_K] = { .decode = { quant_deq_q2_k, X86(quant_deq_q2_k_avx2) }, .quantize = quant_quantize_q2_k,
                           ACT(Q8_K), .n_scales = 2,
                           .scale = { { 80, QUANT_ENC_F16, true, "d" }, { 82, QUANT_ENC_F16, true, "dmin" } },
                           .describe = quant_describe_q2_k },
    [GGUF_TENSOR_Q3_K] = { .decode = { quant_deq_q3_k, X86(quant_deq_q3_k_avx2) }, .quantize = quant_quantize_q3_k,
                           ACT(Q8_K), .n_scales = 1,
                           .scale = { { 108, QUANT_ENC_F16, false, "d" } }, .describe = quant_describe_q3_k },
    [GGUF_TENSOR_Q4_K] = { .decode = { quant_deq_q4_k, X86(quant_deq_q4_k_avx2), X86(quant_deq_q4_k_avx512) },
                           .quantize = quant_quantize_q4_k, ACT(Q8_K), .n_scales = 2,
                           .scale = { { 0, QUANT_ENC_F16, true, "d" }, { 2, QUANT_ENC_F16, true, "dmin" } },
                           .describe = quant_describe_q4_k },
    [GGUF_TENSOR_Q5_K] = { .decode = { quant_deq_q5_k, X86(quant_deq_q5_k_avx2), X86(quant_deq_q5_k_avx512) },
                           .quantize = quant_quantize_q5_k, ACT(Q8_K), .n_scales = 2,
                           .scale = { { 0, QUANT_ENC_F16, true, "d" }, { 2, QUANT_ENC_F16, true, "dmin" } },
                           .describe = quant_describe_q5_k },
    [GGUF_TENSOR_Q6_K] = { .decode = { quant_deq_q6_k, X86(quant_deq_q6_k_avx2), X86(quant_deq_q6_k_avx512) },
                           .quantize = quant_quantize_q6_k, ACT(Q8_K), .n_scales = 1,
                           .scale = { { 208, QUANT_ENC_F16, false, "d" } }, .describe = quant_describe_q6_k },
    [GGUF_TENSOR_Q8_K] = { .decode = { quant_deq_q8_k }, .n_scales = 1,
                           .scale = { { 0, QUANT_ENC_F32, false, "d" } } },
    [GGUF_TENSOR_IQ2_XXS] = { .decode = { quant_deq_iq2_xxs }, ACT(Q8_K), .n_scales = 1,
                              .scale = { { 0, QUANT_ENC_F16, false, "d" } } },
    [GGUF_TENSOR_IQ2_XS] = { .decode = { quant_deq_iq2_xs }, ACT(Q8_K), .n_scales = 1,
                             .scale = { { 0, QUANT_ENC_F16, false, "d" } } },
    [GGUF_TENSOR_IQ2_S] = { .decode = { quant_deq_iq2_s }, ACT(Q8_K), .n_scales = 1,
                            .scale = { { 0, QUANT_ENC_F16, false, "d" } } },
    [GGUF_TENSOR_IQ3_XXS] = { .decode = { quant_deq_iq3_xxs }, ACT(Q8_K), .n_scales = 1,
                              .scale = { { 0, QUANT_ENC_F16, false, "d" } } },
    [GGUF_TENSOR_IQ3_S] = { .decode = { quant_deq_iq3_s }, ACT(Q8_K), .n_scales = 1,
                            .scale = { { 0, QUANT_ENC_F16, false, "d" } } },
    [GGUF_TENSOR_IQ1_S] = { .decode = { quant_deq_iq1_s }, ACT(Q8_K), .n_scales = 1,
                            .scale = { { 0, QUANT_ENC_F16, false, "d" } } },
    /* IQ1_M's f16 scale is spread over the top nibbles of its four u16 scale words */
    [GGUF_TENSOR_IQ1_M] = { .decode = { quant_deq_iq1_m }, ACT(Q8_K), .n_scales = 1,
                            .scale = { { 48, QUANT_ENC_IQ1M, false, "d" } } },
    [GGUF_TENSOR_IQ4_NL] = { .decode = { quant_deq_iq4_nl, X86(quant_deq_iq4_nl_avx2), X86(quant_deq_iq4_nl_avx512) },
                             .quantize = quant_quantize_iq4_nl, ACT(Q8_0), .n_scales = 1,
                             .scale = { { 0, QUANT_ENC_F16, false, "d" } }, .describe = quant_describe_iq4_nl },
    [GGUF_TENSOR_IQ4_XS] = { .decode = { quant_deq_iq4_xs, X86(quant_deq_iq4_xs_avx2), X86(quant_deq_iq4_xs_avx512) },
                             .quantize = quant_quantize_iq4_xs, ACT(Q8_K), .n_scales = 1,
                             .scale = { { 0, QUANT_ENC_F16, false, "d" } }, .describe = quant_describe_iq4_xs },
    [GGUF_TENSOR_TQ1_0] = { .decode = { quant_deq_tq1_0 }, .quantize = quant_quantize_tq1_0, ACT(Q8_K), .n_scales = 1,
                            .scale = { { 52, QUANT_ENC_F16, true, "d" } } },
    [GGUF_TENSOR_TQ2_0] = { .decode = { quant_deq_tq2_0 }, .quantize = quant_quantize_tq2_0, ACT(Q8_K), .n_scales = 1,
                            .scale = { { 64, QUANT_ENC_F16, true, "d" } } },
    /* (read only: llama-quantize does not write NVFP4; its second, per-tensor scale is the engine's, W.scale) */
    [GGUF_TENSOR_NVFP4] = { .decode = { quant_deq_nvfp4 }, ACT(Q8_0), .n_scales = 4,
                            .scale = { { 0, QUANT_ENC_UE4M3, true, "d[0]" }, { 1, QUANT_ENC_UE4M3, true, "d[1]" },
                                       { 2, QUANT_ENC_UE4M3, true, "d[2]" }, { 3, QUANT_ENC_UE4M3, true, "d[3]" } },
                            .describe = quant_describe_nvfp4 },
    [GGUF_TENSOR_MXFP4] = { .decode = { quant_deq_mxfp4 }, .quantize = quant_quantize_mxfp4, ACT(Q8_0), .n_scales = 1,
                            .scale = { { 0, QUANT_ENC_E8M0, true, "e" } }, .describe = quant_describe_mxfp4 },
};

const quant_type_row *quant_type_row_of(uint32_t type)
{
    static const quant_type_row none;
    return type < GGUF_TENSOR_COUNT ? &rows[type] : &none;
}
