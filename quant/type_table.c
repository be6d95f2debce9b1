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

#define F16_D(at, never_neg) { at, QUANT_ENC_F16, never_neg, "d" }
/* the SIMD forms exist on x86 only */
#if defined(__x86_64__) || defined(__i386__)
#define X86(fn) fn
#else
#define X86(fn) NULL
#endif
#define ACT(t) .has_act = true, .act_type = GGML_TYPE_##t

static const quant_type_row rows[GGML_TYPE_COUNT] = {
    [GGML_TYPE_F32] = { { quant_deq_f32 }, quant_quantize_f32, ACT(F32) },
    [GGML_TYPE_F16] = { { quant_deq_f16, X86(quant_deq_f16_avx2), X86(quant_deq_f16_avx512) }, quant_quantize_f16, ACT(F16) },
    /* BF16 has no AVX-512 form: its AVX2 one measured faster (64 vs 51 GB/s) */
    [GGML_TYPE_BF16] = { { quant_deq_bf16, X86(quant_deq_bf16_avx2) }, quant_quantize_bf16, ACT(BF16) },
    [GGML_TYPE_Q4_0] = { { quant_deq_q4_0, X86(quant_deq_q4_0_avx2), X86(quant_deq_q4_0_avx512) }, quant_quantize_q4_0,
                         ACT(Q8_0), 1, { F16_D(0, false) }, quant_describe_q4_0 },
    [GGML_TYPE_Q4_1] = { { quant_deq_q4_1, X86(quant_deq_q4_1_avx2), X86(quant_deq_q4_1_avx512) }, NULL, ACT(Q8_1), 2,
                         { F16_D(0, true), { 2, QUANT_ENC_F16, false, "m" } }, quant_describe_q4_1 },
    [GGML_TYPE_Q5_0] = { { quant_deq_q5_0, X86(quant_deq_q5_0_avx2), X86(quant_deq_q5_0_avx512) }, quant_quantize_q5_0,
                         ACT(Q8_0), 1, { F16_D(0, false) }, quant_describe_q5_0 },
    [GGML_TYPE_Q5_1] = { { quant_deq_q5_1, X86(quant_deq_q5_1_avx2), X86(quant_deq_q5_1_avx512) }, NULL, ACT(Q8_1), 2,
                         { F16_D(0, true), { 2, QUANT_ENC_F16, false, "m" } }, quant_describe_q5_1 },
    [GGML_TYPE_Q8_0] = { { quant_deq_q8_0, X86(quant_deq_q8_0_avx2), X86(quant_deq_q8_0_avx512) }, quant_quantize_q8_0,
                         ACT(Q8_0), 1, { F16_D(0, true) }, quant_describe_q8_0 },
    [GGML_TYPE_Q8_1] = { { quant_deq_q8_1 }, NULL, .n_scales = 2,
                         .scale = { F16_D(0, true), { 2, QUANT_ENC_F16, false, "s" } } },
    [GGML_TYPE_Q2_K] = { { quant_deq_q2_k, X86(quant_deq_q2_k_avx2) }, NULL, ACT(Q8_K), 2,
                         { F16_D(80, true), { 82, QUANT_ENC_F16, true, "dmin" } }, quant_describe_q2_k },
    [GGML_TYPE_Q3_K] = { { quant_deq_q3_k, X86(quant_deq_q3_k_avx2) }, NULL, ACT(Q8_K), 1, { F16_D(108, false) },
                         quant_describe_q3_k },
    [GGML_TYPE_Q4_K] = { { quant_deq_q4_k, X86(quant_deq_q4_k_avx2), X86(quant_deq_q4_k_avx512) }, quant_quantize_q4_k,
                         ACT(Q8_K), 2, { F16_D(0, true), { 2, QUANT_ENC_F16, true, "dmin" } }, quant_describe_q4_k },
    [GGML_TYPE_Q5_K] = { { quant_deq_q5_k, X86(quant_deq_q5_k_avx2), X86(quant_deq_q5_k_avx512) }, NULL, ACT(Q8_K), 2,
                         { F16_D(0, true), { 2, QUANT_ENC_F16, true, "dmin" } }, quant_describe_q5_k },
    [GGML_TYPE_Q6_K] = { { quant_deq_q6_k, X86(quant_deq_q6_k_avx2), X86(quant_deq_q6_k_avx512) }, quant_quantize_q6_k,
                         ACT(Q8_K), 1, { F16_D(208, false) }, quant_describe_q6_k },
    [GGML_TYPE_Q8_K] = { { quant_deq_q8_k }, NULL, .n_scales = 1, .scale = { { 0, QUANT_ENC_F32, false, "d" } } },
    [GGML_TYPE_IQ2_XXS] = { { quant_deq_iq2_xxs }, NULL, ACT(Q8_K), 1, { F16_D(0, false) } },
    [GGML_TYPE_IQ2_XS] = { { quant_deq_iq2_xs }, NULL, ACT(Q8_K), 1, { F16_D(0, false) } },
    [GGML_TYPE_IQ2_S] = { { quant_deq_iq2_s }, NULL, ACT(Q8_K), 1, { F16_D(0, false) } },
    [GGML_TYPE_IQ3_XXS] = { { quant_deq_iq3_xxs }, NULL, ACT(Q8_K), 1, { F16_D(0, false) } },
    [GGML_TYPE_IQ3_S] = { { quant_deq_iq3_s }, NULL, ACT(Q8_K), 1, { F16_D(0, false) } },
    [GGML_TYPE_IQ1_S] = { { quant_deq_iq1_s }, NULL, ACT(Q8_K), 1, { F16_D(0, false) } },
    /* IQ1_M's f16 scale is spread over the top nibbles of its four u16 scale words */
    [GGML_TYPE_IQ1_M] = { { quant_deq_iq1_m }, NULL, ACT(Q8_K), 1, { { 48, QUANT_ENC_IQ1M, false, "d" } } },
    [GGML_TYPE_IQ4_NL] = { { quant_deq_iq4_nl, X86(quant_deq_iq4_nl_avx2), X86(quant_deq_iq4_nl_avx512) }, NULL, ACT(Q8_0), 1,
                           { F16_D(0, false) }, quant_describe_iq4_nl },
    [GGML_TYPE_IQ4_XS] = { { quant_deq_iq4_xs, X86(quant_deq_iq4_xs_avx2), X86(quant_deq_iq4_xs_avx512) }, NULL, ACT(Q8_K), 1,
                           { F16_D(0, false) }, quant_describe_iq4_xs },
    [GGML_TYPE_TQ1_0] = { { quant_deq_tq1_0 }, NULL, ACT(Q8_K), 1, { F16_D(52, true) } },
    [GGML_TYPE_TQ2_0] = { { quant_deq_tq2_0 }, NULL, ACT(Q8_K), 1, { F16_D(64, true) } },
    [GGML_TYPE_MXFP4] = { { quant_deq_mxfp4 }, NULL, ACT(Q8_0), 1, { { 0, QUANT_ENC_E8M0, true, "e" } },
                          quant_describe_mxfp4 },
};

const quant_type_row *quant_type_row_of(uint32_t type)
{
    static const quant_type_row none;
    return type < GGML_TYPE_COUNT ? &rows[type] : &none;
}
