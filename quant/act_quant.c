/*
 * Activations rounded the way llama.cpp's CPU backend rounds them before it
 * multiplies them with weights (ggml-cpu.c's type_traits_cpu: each weight
 * type's vec_dot_type, and that type's from_float on x86).
 *
 *   Q8_0  [d:f16][qs:32]            d = amax / 127 (stored as f16), q = round_even(x * (127 / amax))
 *   Q8_1  [d:f16][s:f16][qs:32]     as Q8_0, and s = f16(d * sum(q)) with the unrounded d
 *   Q8_K  [d:f32][qs:256][bsums:16 x i16]
 *                                   m = the value of largest |x| (first one on ties, with its sign),
 *                                   q = min(127, round_even(x * (-127 / m))), d = 1 / (-127 / m),
 *                                   bsums = sums of q over each 16 values
 *   F16, BF16                       round to nearest even
 *
 * Q8_0 and Q8_1 follow the AVX2 quantizers (ggml-cpu/arch/x86/quants.c), which
 * multiply by 127 / amax and round ties to even, not the reference ones
 * (ggml-quants.c: x / d, ties away from zero) that llama-quantize uses for
 * weights: a tie or a last-bit difference moves a quant by one step, and
 * --numerics ggml is there to reproduce llama.cpp's rounding, not roughly.
 * Q8_K is the reference quantizer, which is what x86 calls.
 */
#include "blocks.h"

#include <math.h>

uint32_t quant_act_type(uint32_t weight_type)
{
    const quant_type_row *r = quant_type_row_of(weight_type);
    return r->has_act ? r->act_type : GGUF_TENSOR_COUNT;
}

uint64_t quant_act_row_bytes(uint32_t act_type, int64_t n)
{
    const gguf_type_traits *tr = gguf_type_traits_of(act_type);
    if (!tr || !tr->block_size || n < 0 || n % tr->block_size)
        return 0;
    return (uint64_t)n / tr->block_size * tr->type_size;
}

static float block_amax(const float *x, int n)
{
    float m = 0.0f;
    for (int j = 0; j < n; j++)
        m = fmaxf(m, fabsf(x[j]));
    return m;
}

/* A rounded value as a quant: NaN (a broken model's activations) becomes -128 as AVX2's conversion and
 * pack give it, and nothing out of range reaches a cast (undefined behaviour). */
static int8_t to_q8(float v)
{
    if (v >= -128.0f && v <= 127.0f)
        return (int8_t)v;
    return v > 127.0f ? 127 : -128;
}

/* 32 values into q with d = amax / 127; returns sum(q) and leaves the unrounded d in *d_out. With avx2,
 * the AVX2 form (act_quant_avx2.c), equal bit for bit. */
static int q8_block(const float *x, int8_t q[32], float *d_out, bool avx2)
{
#if defined(__x86_64__)
    if (avx2)
        return quant_act_q8_block_avx2(x, q, d_out);
#else
    (void)avx2;
#endif
    const float amax = block_amax(x, 32);
    const float id = amax != 0.0f ? 127.0f / amax : 0.0f;
    int sum = 0;
    for (int j = 0; j < 32; j++) {
        q[j] = to_q8(rintf(x[j] * id));  /* the default rounding mode: nearest, ties to even */
        sum += q[j];
    }
    *d_out = amax / 127.0f;
    return sum;
}

static void quantize_q8_0(const float *x, uint8_t *b, int64_t n)
{
    const bool avx2 = quant_use_avx2(QUANT_IMPL_BEST);
    for (; n > 0; n -= 32, x += 32, b += 34) {
        float d;
        q8_block(x, (int8_t *)(b + 2), &d, avx2);
        uint16_t h = quant_f32_to_f16(d);
        memcpy(b, &h, 2);
    }
}

static void quantize_q8_1(const float *x, uint8_t *b, int64_t n)
{
    const bool avx2 = quant_use_avx2(QUANT_IMPL_BEST);
    for (; n > 0; n -= 32, x += 32, b += 36) {
        float d;
        int sum = q8_block(x, (int8_t *)(b + 4), &d, avx2);
        uint16_t h[2] = { quant_f32_to_f16(d), quant_f32_to_f16(d * (float)sum) };
        memcpy(b, h, 4);
    }
}

static void quantize_q8_k(const float *x, uint8_t *b, int64_t n)
{
    const bool avx2 = quant_use_avx2(QUANT_IMPL_BEST);
    for (; n > 0; n -= QK_K, x += QK_K, b += 292) {
#if defined(__x86_64__)
        if (avx2) {
            quant_act_q8k_block_avx2(x, b);
            continue;
        }
#endif
        float amax = 0.0f, max = 0.0f;
        for (int j = 0; j < QK_K; j++)
            if (fabsf(x[j]) > amax) {
                amax = fabsf(x[j]);
                max = x[j];
            }
        int8_t *q = (int8_t *)(b + 4);
        int16_t bsums[16] = { 0 };
        float d = 0.0f;
        if (amax != 0.0f) {
            const float iscale = -127.0f / max;
            for (int j = 0; j < QK_K; j++) {
                q[j] = to_q8(rintf(iscale * x[j]));
                bsums[j / 16] = (int16_t)(bsums[j / 16] + q[j]);
            }
            d = 1.0f / iscale;
        } else {
            memset(q, 0, QK_K);
        }
        memcpy(b, &d, 4);
        memcpy(b + 4 + QK_K, bsums, sizeof bsums);
    }
}

/* F16 or BF16 rounding of n values into b: vectors where the CPU has them (the scalar loop was a quarter of an
 * F16 prompt with --numerics ggml), equal bit for bit. */
static void round_halves(uint32_t type, const float *x, uint8_t *b, int64_t n)
{
#if defined(__x86_64__)
    if (quant_use_avx2(QUANT_IMPL_BEST) && ((uintptr_t)b & 1) == 0) {
        (type == GGUF_TENSOR_F16 ? quant_act_f16_row_avx2 : quant_act_bf16_row_avx2)(x, (uint16_t *)(void *)b, n);
        return;
    }
#endif
    for (int64_t i = 0; i < n; i++) {
        uint16_t h = type == GGUF_TENSOR_F16 ? quant_f32_to_f16(x[i]) : quant_f32_to_bf16(x[i]);
        memcpy(b + 2 * i, &h, 2);
    }
}

quant_status quant_act_quantize(uint32_t act_type, const float *x, void *dst, int64_t n)
{
    if (!quant_act_row_bytes(act_type, n))
        return act_type < GGUF_TENSOR_COUNT && gguf_type_traits_of(act_type) ? QUANT_E_SHAPE : QUANT_E_UNSUPPORTED;
    uint8_t *b = dst;
    switch (act_type) {
    case GGUF_TENSOR_F32: memcpy(dst, x, (size_t)n * sizeof(float)); break;
    case GGUF_TENSOR_F16:
    case GGUF_TENSOR_BF16:
        round_halves(act_type, x, b, n);
        break;
    case GGUF_TENSOR_Q8_0: quantize_q8_0(x, b, n); break;
    case GGUF_TENSOR_Q8_1: quantize_q8_1(x, b, n); break;
    case GGUF_TENSOR_Q8_K: quantize_q8_k(x, b, n); break;
    default: return QUANT_E_UNSUPPORTED;
    }
    return QUANT_OK;
}

quant_status quant_act_sums16(uint32_t act_type, const void *a, int64_t n, int16_t *sums)
{
    if (act_type != GGUF_TENSOR_Q8_0 && act_type != GGUF_TENSOR_Q8_1 && act_type != GGUF_TENSOR_Q8_K)
        return QUANT_E_UNSUPPORTED;
    if (!quant_act_row_bytes(act_type, n))
        return QUANT_E_SHAPE;
    const gguf_type_traits *tr = gguf_type_traits_of(act_type);
    const int bv = (int)tr->block_size, at = act_type == GGUF_TENSOR_Q8_0 ? 2 : 4;
    const uint8_t *b = a;
    for (int64_t i = 0; i < n; i += bv, b += tr->type_size) {
        if (act_type == GGUF_TENSOR_Q8_K) { /* its bsums, as stored */
            memcpy(sums + i / 16, b + 4 + QK_K, QK_K / 16 * sizeof(int16_t));
            continue;
        }
        const int8_t *q = (const int8_t *)(b + at);
        for (int h = 0; h < 2; h++) {
            int s = 0;
            for (int j = 0; j < 16; j++)
                s += q[16 * h + j];
            sums[i / 16 + h] = (int16_t)s;
        }
    }
    return QUANT_OK;
}

double quant_act_sum_correction(uint32_t weight_type, const void *w, const void *a, int64_t n)
{
    /* Q4_1 [d:f16][m:f16][qs:16], Q5_1 [d:f16][m:f16][qh:4][qs:16]; Q8_1 [d:f16][s:f16][qs:32] (ggml-common.h) */
    const size_t wb = weight_type == GGUF_TENSOR_Q4_1 ? 20 : weight_type == GGUF_TENSOR_Q5_1 ? 24 : 0;
    if (!wb || n % 32)
        return 0.0;
    const uint8_t *wp = w, *ap = a;
    double c = 0.0;
    for (int64_t b = 0; b < n / 32; b++, wp += wb, ap += 36) {
        int sum = 0;
        for (int j = 0; j < 32; j++)
            sum += (int8_t)ap[4 + j];
        c += (double)rdf16(wp + 2) * ((double)rdf16(ap + 2) - (double)rdf16(ap) * sum);
    }
    return c;
}
