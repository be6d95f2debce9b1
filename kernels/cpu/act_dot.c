/*
 * Dot products of a weight row with activations quantized as llama.cpp's CPU
 * backend quantizes them (act_quant.c): integer sums of weight quants times
 * activation quants inside each block, scaled once per block, as ggml's
 * ggml_vec_dot_<type>_<act> functions compute them (ggml-cpu/quants.c).
 *
 * The scalar reference reads every type through its own row decoder: a copy
 * of the block with its scale set to 1 and its min to 0 decodes to the
 * integers scale x quant exactly (they fit in f32's 24 bits), and with scale
 * 0 and min 1 to the integers -min of each value's group. So
 *   block dot = d_w * d_a * sum(unit * qa) + dmin_w * d_a * sum(minunit * qa)
 * is ggml's sum (d * sumi - dmin * sum(m * bsums)) with the same integers;
 * only the f32 order of the per-block terms differs. Q4_1 and Q5_1 instead add
 * m_w * s_a, with Q8_1's s rounded to f16 as ggml stores it: that rounding is
 * the reason these types need integer dots at all.
 */
#include "x86/x86.h"

typedef enum min_kind {
    MIN_NONE,     /* d * q only */
    MIN_Q8_1_S,   /* + m * s: Q4_1, Q5_1 against Q8_1 */
    MIN_GROUPED,  /* - dmin * m per group: Q2_K, Q4_K, Q5_K against Q8_K's bsums */
} min_kind;

typedef struct act_dot_layout {
    bool present;
    uint8_t d_off;    /* byte offset of the scale d in the weight block */
    uint8_t min_off;  /* of the f16 min (m or dmin), when min != MIN_NONE */
    min_kind min;
    bool e8m0;        /* d is one E8M0 byte (2^(e - 128), MXFP4: ggml_e8m0_to_fp32_half), not an f16 */
} act_dot_layout;

/* a type whose scale d is an f16 at byte d_off (its min, where it has one, at m_off) */
#define F16_SCALED(d_off, m_off, kind) { true, d_off, m_off, kind, false }
static const act_dot_layout layouts[GGUF_TENSOR_COUNT] = {
    [GGUF_TENSOR_Q4_0] = F16_SCALED(0, 0, MIN_NONE),       [GGUF_TENSOR_Q4_1] = F16_SCALED(0, 2, MIN_Q8_1_S),
    [GGUF_TENSOR_Q5_0] = F16_SCALED(0, 0, MIN_NONE),       [GGUF_TENSOR_Q5_1] = F16_SCALED(0, 2, MIN_Q8_1_S),
    [GGUF_TENSOR_Q8_0] = F16_SCALED(0, 0, MIN_NONE),       [GGUF_TENSOR_IQ4_NL] = F16_SCALED(0, 0, MIN_NONE),
    [GGUF_TENSOR_Q2_K] = F16_SCALED(80, 82, MIN_GROUPED),  [GGUF_TENSOR_Q3_K] = F16_SCALED(108, 0, MIN_NONE),
    [GGUF_TENSOR_Q4_K] = F16_SCALED(0, 2, MIN_GROUPED),    [GGUF_TENSOR_Q5_K] = F16_SCALED(0, 2, MIN_GROUPED),
    [GGUF_TENSOR_Q6_K] = F16_SCALED(208, 0, MIN_NONE),     [GGUF_TENSOR_IQ4_XS] = F16_SCALED(0, 0, MIN_NONE),
    /* ggml_vec_dot_mxfp4_q8_0: the doubled E2M1 levels times Q8_0's quants, the block by e8m0_half(e) * d_a */
    [GGUF_TENSOR_MXFP4] = { true, 0, 0, MIN_NONE, true },
    /* ggml_vec_dot_nvfp4_q8_0: four scales a block, its own forms (act_dot_lanes.c) at every level */
    [GGUF_TENSOR_NVFP4] = { true, 0, 0, MIN_NONE, false },
    /* the ternary types (BitNet) and IQ3_S: the scalar form is ggml's generic one; x86's lanes are act_dot_lanes.c's;
     * IQ3_XXS, the IQ2s and the IQ1s, whose decode with d = 1 is no integer, take the lanes at every level */
    [GGUF_TENSOR_TQ1_0] = F16_SCALED(52, 0, MIN_NONE),     [GGUF_TENSOR_TQ2_0] = F16_SCALED(64, 0, MIN_NONE),
    [GGUF_TENSOR_IQ3_S] = F16_SCALED(0, 0, MIN_NONE),      [GGUF_TENSOR_IQ3_XXS] = F16_SCALED(0, 0, MIN_NONE),
    [GGUF_TENSOR_IQ2_XXS] = F16_SCALED(0, 0, MIN_NONE),    [GGUF_TENSOR_IQ2_XS] = F16_SCALED(0, 0, MIN_NONE),
    [GGUF_TENSOR_IQ2_S] = F16_SCALED(0, 0, MIN_NONE),      [GGUF_TENSOR_IQ1_S] = F16_SCALED(0, 0, MIN_NONE),
    [GGUF_TENSOR_IQ1_M] = F16_SCALED(0, 0, MIN_NONE), /* (its d is spread over its scale words: the lanes read it) */
};

enum { F16_ONE = 0x3c00, F16_ZERO = 0 };

/* The block's decode with its scale and min fields replaced, as integers. */
static void decode_with(quant_row_fn deq, const uint8_t *blk, size_t size, int block, const act_dot_layout *L,
                        uint16_t d, uint16_t m, int32_t *out)
{
    uint8_t copy[256];
    float v[QK_K];
    memcpy(copy, blk, size);
    if (L->e8m0)
        copy[L->d_off] = d == F16_ONE ? 128 : 0; /* 2^0, or the smallest scale (the min is never asked of it) */
    else
        memcpy(copy + L->d_off, &d, 2);
    if (L->min != MIN_NONE)
        memcpy(copy + L->min_off, &m, 2);
    deq(copy, v, block);
    for (int j = 0; j < block; j++)
        out[j] = (int32_t)v[j];
}

/* An MXFP4 block's scale halved, as ggml's GGML_E8M0_TO_FP32_HALF (its levels are E2M1 doubled): quant/'s decode
 * of the e field times 0.5, exact down to e = 0 (2^-128 is an f32 subnormal). */
static float e8m0_half(const uint8_t *block)
{
    float e[QUANT_MAX_SCALES];
    quant_block_scales(GGUF_TENSOR_MXFP4, block, e);
    return 0.5f * e[0];
}

static float act_dot_scalar(uint32_t type, const void *w, const void *a, int64_t n)
{
    const act_dot_layout *L = &layouts[type];
    const gguf_type_traits *wt = gguf_type_traits_of(type);
    const uint32_t at = quant_act_type(type);
    const gguf_type_traits *atr = gguf_type_traits_of(at);
    const quant_row_fn deq = quant_row_function(type, QUANT_IMPL_SCALAR);
    const int bs = (int)wt->block_size;
    const uint8_t *wb = w, *ab = a;
    float sum = 0.0f;
    for (int64_t i = 0; i < n; i += bs, wb += wt->type_size, ab += atr->type_size) {
        /* Q8_0 [d:f16][qs], Q8_1 [d:f16][s:f16][qs], Q8_K [d:f32][qs][bsums] */
        float da;
        const int8_t *qa;
        if (at == GGUF_TENSOR_Q8_K) {
            memcpy(&da, ab, 4);
            qa = (const int8_t *)(ab + 4);
        } else {
            da = rdf16(ab);
            qa = (const int8_t *)(ab + (at == GGUF_TENSOR_Q8_1 ? 4 : 2));
        }
        int32_t unit[QK_K];
        decode_with(deq, wb, wt->type_size, bs, L, F16_ONE, F16_ZERO, unit);
        int64_t sumi = 0;
        for (int j = 0; j < bs; j++)
            sumi += (int64_t)unit[j] * qa[j];
        sum += (L->e8m0 ? e8m0_half(wb) : rdf16(wb + L->d_off)) * da * (float)sumi;
        if (L->min == MIN_Q8_1_S) {
            sum += rdf16(wb + L->min_off) * rdf16(ab + 2);
        } else if (L->min == MIN_GROUPED) {
            decode_with(deq, wb, wt->type_size, bs, L, F16_ZERO, F16_ONE, unit);
            int64_t summ = 0;
            for (int j = 0; j < bs; j++)
                summ += (int64_t)unit[j] * qa[j];
            sum += rdf16(wb + L->min_off) * da * (float)summ;
        }
    }
    return sum;
}

/* One scalar entry point per type (the kernel pointer carries no type). */
#define SCALAR_ENTRY_POINT(name, TYPE)                                         \
    static void scalar_##name(const void *w, const void *a, int64_t n, float *out) \
    {                                                                          \
        *out = act_dot_scalar(TYPE, w, a, n);                                  \
    }
SCALAR_ENTRY_POINT(q4_0, GGUF_TENSOR_Q4_0)
SCALAR_ENTRY_POINT(q4_1, GGUF_TENSOR_Q4_1)
SCALAR_ENTRY_POINT(q5_0, GGUF_TENSOR_Q5_0)
SCALAR_ENTRY_POINT(q5_1, GGUF_TENSOR_Q5_1)
SCALAR_ENTRY_POINT(q8_0, GGUF_TENSOR_Q8_0)
SCALAR_ENTRY_POINT(iq4_nl, GGUF_TENSOR_IQ4_NL)
SCALAR_ENTRY_POINT(q2_k, GGUF_TENSOR_Q2_K)
SCALAR_ENTRY_POINT(q3_k, GGUF_TENSOR_Q3_K)
SCALAR_ENTRY_POINT(q4_k, GGUF_TENSOR_Q4_K)
SCALAR_ENTRY_POINT(q5_k, GGUF_TENSOR_Q5_K)
SCALAR_ENTRY_POINT(q6_k, GGUF_TENSOR_Q6_K)
SCALAR_ENTRY_POINT(iq4_xs, GGUF_TENSOR_IQ4_XS)
SCALAR_ENTRY_POINT(mxfp4, GGUF_TENSOR_MXFP4)
SCALAR_ENTRY_POINT(tq1_0, GGUF_TENSOR_TQ1_0)
SCALAR_ENTRY_POINT(tq2_0, GGUF_TENSOR_TQ2_0)
SCALAR_ENTRY_POINT(iq3_s, GGUF_TENSOR_IQ3_S)

static const cpu_act_dot_fn scalar_fns[GGUF_TENSOR_COUNT] = {
    [GGUF_TENSOR_Q4_0] = scalar_q4_0, [GGUF_TENSOR_Q4_1] = scalar_q4_1,     [GGUF_TENSOR_Q5_0] = scalar_q5_0,
    [GGUF_TENSOR_Q5_1] = scalar_q5_1, [GGUF_TENSOR_Q8_0] = scalar_q8_0,     [GGUF_TENSOR_IQ4_NL] = scalar_iq4_nl,
    [GGUF_TENSOR_Q2_K] = scalar_q2_k, [GGUF_TENSOR_Q3_K] = scalar_q3_k,     [GGUF_TENSOR_Q4_K] = scalar_q4_k,
    [GGUF_TENSOR_Q5_K] = scalar_q5_k, [GGUF_TENSOR_Q6_K] = scalar_q6_k,     [GGUF_TENSOR_IQ4_XS] = scalar_iq4_xs,
    [GGUF_TENSOR_MXFP4] = scalar_mxfp4, [GGUF_TENSOR_TQ1_0] = scalar_tq1_0, [GGUF_TENSOR_TQ2_0] = scalar_tq2_0,
    [GGUF_TENSOR_IQ3_S] = scalar_iq3_s,                 [GGUF_TENSOR_IQ3_XXS] = cpu_act_dot_iq3_xxs_lanes,
    [GGUF_TENSOR_IQ2_XXS] = cpu_act_dot_iq2_xxs_lanes, [GGUF_TENSOR_IQ2_XS] = cpu_act_dot_iq2_xs_lanes,
    [GGUF_TENSOR_IQ2_S] = cpu_act_dot_iq2_s_lanes,     [GGUF_TENSOR_IQ1_S] = cpu_act_dot_iq1_s_lanes,
    [GGUF_TENSOR_IQ1_M] = cpu_act_dot_iq1_m_lanes, [GGUF_TENSOR_NVFP4] = cpu_act_dot_nvfp4_generic,
};

#if defined(__x86_64__)
/* The 32-value types read activation rows their prep rewrote (act_dot_legacy.c); the K- and I-quants read them
 * as quantized. */
#define AVX2_KERNEL(name) { .dot = cpu_act_dot_##name##_avx2, .dot4 = cpu_act_dot4_##name##_avx2 }
#define PREPPED_KERNEL(name, level, form) \
    { .dot = cpu_act_dot_##name##_##level, .dot4 = cpu_act_dot4_##name##_##level, .prep = cpu_act_prep_##form,  \
      .prep_bytes = cpu_act_prep_bytes_legacy }
#define LEGACY_KERNELS(level)                                                                                       \
    [GGUF_TENSOR_Q4_0] = PREPPED_KERNEL(q4_0, level, q8_0_offset8),                                                   \
    [GGUF_TENSOR_Q5_0] = PREPPED_KERNEL(q5_0, level, q8_0_offset16),                                                  \
    [GGUF_TENSOR_Q8_0] = PREPPED_KERNEL(q8_0, level, q8_0_offset128),                                                 \
    [GGUF_TENSOR_IQ4_NL] = PREPPED_KERNEL(iq4_nl, level, q8_0_offset128),                                             \
    [GGUF_TENSOR_Q4_1] = PREPPED_KERNEL(q4_1, level, q8_1), [GGUF_TENSOR_Q5_1] = PREPPED_KERNEL(q5_1, level, q8_1),   \
    [GGUF_TENSOR_MXFP4] = PREPPED_KERNEL(mxfp4, level, q8_0_offset128)
static const cpu_act_kernel avx2_fns[GGUF_TENSOR_COUNT] = {
    LEGACY_KERNELS(avx2),
    [GGUF_TENSOR_Q2_K] = AVX2_KERNEL(q2_k), [GGUF_TENSOR_Q3_K] = AVX2_KERNEL(q3_k),
    [GGUF_TENSOR_Q4_K] = AVX2_KERNEL(q4_k), [GGUF_TENSOR_Q5_K] = AVX2_KERNEL(q5_k),
    [GGUF_TENSOR_Q6_K] = AVX2_KERNEL(q6_k), [GGUF_TENSOR_IQ4_XS] = AVX2_KERNEL(iq4_xs),
    [GGUF_TENSOR_TQ1_0] = { .dot = cpu_act_dot_tq1_0_lanes }, [GGUF_TENSOR_TQ2_0] = { .dot = cpu_act_dot_tq2_0_lanes },
    [GGUF_TENSOR_IQ3_S] = { .dot = cpu_act_dot_iq3_s_lanes },
    [GGUF_TENSOR_IQ3_XXS] = { .dot = cpu_act_dot_iq3_xxs_lanes },
    [GGUF_TENSOR_IQ2_XXS] = { .dot = cpu_act_dot_iq2_xxs_lanes },
    [GGUF_TENSOR_IQ2_XS] = { .dot = cpu_act_dot_iq2_xs_lanes },
    [GGUF_TENSOR_IQ2_S] = { .dot = cpu_act_dot_iq2_s_lanes },
    [GGUF_TENSOR_IQ1_S] = { .dot = cpu_act_dot_iq1_s_lanes },
    [GGUF_TENSOR_IQ1_M] = { .dot = cpu_act_dot_iq1_m_lanes },
    [GGUF_TENSOR_NVFP4] = { .dot = cpu_act_dot_nvfp4_lanes },
};
#define VNNI_KERNEL(name) { .dot = cpu_act_dot_##name##_vnni, .dot4 = cpu_act_dot4_##name##_vnni }
static const cpu_act_kernel vnni_fns[GGUF_TENSOR_COUNT] = {
    LEGACY_KERNELS(vnni), [GGUF_TENSOR_Q4_K] = VNNI_KERNEL(q4_k), [GGUF_TENSOR_Q6_K] = VNNI_KERNEL(q6_k),
};
#endif

#if defined(__x86_64__)
#define GEMM_AT(name, level)                                                                                   \
    { cpu_act_panel_bytes_##name##_##level, cpu_act_pack_##name##_##level, cpu_act_gemm_##name##_##level, false, 0 }
#define GEMM_TABLE(level)                                                                                         \
    {                                                                                                             \
        [GGUF_TENSOR_Q4_0] = GEMM_AT(q4_0, level), [GGUF_TENSOR_Q4_1] = GEMM_AT(q4_1, level),                         \
        [GGUF_TENSOR_Q5_0] = GEMM_AT(q5_0, level), [GGUF_TENSOR_Q5_1] = GEMM_AT(q5_1, level),                         \
        [GGUF_TENSOR_Q8_0] = GEMM_AT(q8_0, level), [GGUF_TENSOR_IQ4_NL] = GEMM_AT(iq4_nl, level),                     \
        [GGUF_TENSOR_Q2_K] = GEMM_AT(q2_k, level), [GGUF_TENSOR_Q3_K] = GEMM_AT(q3_k, level),                         \
        [GGUF_TENSOR_Q4_K] = GEMM_AT(q4_k, level), [GGUF_TENSOR_Q5_K] = GEMM_AT(q5_k, level),                         \
        [GGUF_TENSOR_Q6_K] = GEMM_AT(q6_k, level), [GGUF_TENSOR_IQ4_XS] = GEMM_AT(iq4_xs, level),                     \
    }
static const cpu_act_gemm avx2_gemms[GGUF_TENSOR_COUNT] = GEMM_TABLE(avx2);
static const cpu_act_gemm vnni_gemms[GGUF_TENSOR_COUNT] = GEMM_TABLE(vnni);
/* From CPU_TILED_MIN_TOKENS tokens: the types llama.cpp's tiled kernel takes, in its steps */
#define TILED_TABLE(level)                                                                                        \
    {                                                                                                             \
        [GGUF_TENSOR_Q2_K] = GEMM_AT(q2_k_tiled, level), [GGUF_TENSOR_Q3_K] = GEMM_AT(q3_k_tiled, level),             \
        [GGUF_TENSOR_Q5_K] = GEMM_AT(q5_k_tiled, level), [GGUF_TENSOR_Q6_K] = GEMM_AT(q6_k_tiled, level),             \
        [GGUF_TENSOR_IQ4_XS] = GEMM_AT(iq4_xs_tiled, level),                                                        \
    }
static const cpu_act_gemm avx2_tiled[GGUF_TENSOR_COUNT] = TILED_TABLE(avx2);
static const cpu_act_gemm vnni_tiled[GGUF_TENSOR_COUNT] = TILED_TABLE(vnni);

/* Whether llama.cpp's x86 CPU backend, as built for this level, repacks the type into 8-row blocks at load
 * (repack.cpp, ggml_repack_get_optimal_repack_type: Q4_0, Q4_K, IQ4_NL, MXFP4 with AVX2; Q2_K where the build has
 * AVX-512, a build-time test: so not under GGUFSCOPE_SIMD=avx2, which stands for its AVX2 build). */
static bool llama_cpp_repacks(uint32_t type, quant_impl impl)
{
    switch (type) {
    case GGUF_TENSOR_Q4_0: case GGUF_TENSOR_Q4_K: case GGUF_TENSOR_IQ4_NL: case GGUF_TENSOR_MXFP4: return true;
    case GGUF_TENSOR_Q2_K: return quant_use_avx512(impl);
    default: return false;
    }
}
#endif

/* How llama.cpp's x86 CPU backend adds a prompt's products of the type up: in the panel's row order for the types
 * it repacks; through vec_dot or tinyBLAS (Q8_0, Q5_0, Q4_1, Q5_1, and below CPU_TILED_MIN_TOKENS tokens the
 * 256-value types it does not repack) in their 8 partial sums (act_gemm_body.h's ORDER_GROUPS); from
 * CPU_TILED_MIN_TOKENS tokens the 256-value ones it does not repack through its tiled kernel (the TILED kinds). */
cpu_act_gemm cpu_act_gemm_function(uint32_t weight_type, quant_impl impl, int tokens)
{
#if defined(__x86_64__)
    if (weight_type < GGUF_TENSOR_COUNT && quant_use_avx2(impl)) {
        /* GGUFSCOPE_SIMD=avx2 measures the AVX2 form on a VNNI CPU */
        const bool vnni = quant_use_vnni(impl), repacked = llama_cpp_repacks(weight_type, impl);
        const bool tiled = !repacked && tokens >= CPU_TILED_MIN_TOKENS && avx2_tiled[weight_type].pack;
        cpu_act_gemm g = tiled ? (vnni ? vnni_tiled : avx2_tiled)[weight_type]
                                 : (vnni ? vnni_gemms : avx2_gemms)[weight_type];
        /* Q2_K not repacked takes vec_dot below CPU_TILED_MIN_TOKENS tokens, whose order its panel does not keep */
        g.llama_cpp_order = g.pack && !(weight_type == GGUF_TENSOR_Q2_K && !repacked && !tiled);
        g.rows = vnni ? 16 : 8; /* act_gemm_body.h's PANEL_OF */
        return g;
    }
#else
    (void)weight_type;
    (void)impl;
    (void)tokens;
#endif
    return (cpu_act_gemm){ NULL, NULL, NULL, false, 0 };
}

#if defined(__x86_64__)
/* The repacked types' GEMV order (act_dot_legacy.c), at each level. */
static const struct {
    void (*vnni)(const void *w, uint64_t rb, int nr, const void *a, int64_t n, float *out);
    void (*avx2)(const void *w, uint64_t rb, int nr, const void *a, int64_t n, float *out);
} gemvs[GGUF_TENSOR_COUNT] = {
    [GGUF_TENSOR_Q4_0] = { cpu_act_gemv_q4_0_vnni, cpu_act_gemv_q4_0_avx2 },
    [GGUF_TENSOR_IQ4_NL] = { cpu_act_gemv_iq4_nl_vnni, cpu_act_gemv_iq4_nl_avx2 },
    /* gemv_q4_b32_8x8_q8_0_lut_avx<block_mxfp4x8> too: IQ4_NL's with MXFP4's levels and E8M0 scales */
    [GGUF_TENSOR_MXFP4] = { cpu_act_gemv_mxfp4_vnni, cpu_act_gemv_mxfp4_avx2 },
    [GGUF_TENSOR_Q4_K] = { cpu_act_gemv_q4_k_vnni, cpu_act_gemv_q4_k_avx2 },
    [GGUF_TENSOR_Q2_K] = { NULL, cpu_act_gemv_q2_k_avx2 },
};
#endif

cpu_act_kernel cpu_act_dot_function(uint32_t weight_type, quant_impl impl)
{
    if (weight_type >= GGUF_TENSOR_COUNT || !layouts[weight_type].present)
        return (cpu_act_kernel){ 0 };
#if defined(__x86_64__)
    const bool gemv = llama_cpp_repacks(weight_type, impl);
    if (quant_use_vnni(impl) && vnni_fns[weight_type].dot) {
        cpu_act_kernel k = vnni_fns[weight_type];
        if (gemv && gemvs[weight_type].vnni)
            k.gemv = gemvs[weight_type].vnni, k.gemv_rows = 16;
        return k;
    }
    if (quant_use_avx2(impl) && avx2_fns[weight_type].dot) {
        cpu_act_kernel k = avx2_fns[weight_type];
        if (gemv && gemvs[weight_type].avx2)
            k.gemv = gemvs[weight_type].avx2, k.gemv_rows = 8;
        return k;
    }
#else
    (void)impl;
#endif
    return (cpu_act_kernel){ .dot = scalar_fns[weight_type] };
}
