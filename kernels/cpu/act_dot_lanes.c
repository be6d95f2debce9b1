/*
 * Dots against Q8_K activations in llama.cpp's x86 order for the types whose integer products it keeps in eight int32
 * lanes per block (ggml-cpu/arch/x86/quants.c, the AVX2 forms, which its AVX-512 builds run too): the ternary types
 * (ggml_vec_dot_tq1_0_q8_K, ggml_vec_dot_tq2_0_q8_K: BitNet's), IQ3_S, IQ3_XXS, IQ2_XXS, IQ2_XS, IQ2_S, and IQ1_S and
 * IQ1_M below (each held bit for bit to libggml-cpu's vec_dot on random rows, -128 activations among them). Lane l
 * holds the weights times the activations of the elements e with (e % 32) / 4 == l (the byte e % 32 of a register, its
 * pair of 16-bit products that madd joins): for the I-quants each weight its grid value with its sign times its
 * (sub-)block's 2 ls + 1; for the ternary types each digit (0, 1, 2: the weight plus one), less the activations 32 l ..
 * 32 l + 31 (the two bsums that fold into that lane), which takes the digits' offset out over the block. The lanes go
 * to f32 times d_w * d_a into eight running sums (a fused multiply-add: _mm256_fmadd_ps for the I-quants, and the mul
 * then add of the ternary ones as GCC contracts them), added at the end as hsum_float_8 pairs them (times 1/4 or 1/8
 * where the type's scales are 2 ls + 1 over 4 or 8). The integers are exact in any order, so the lanes are computed
 * here in C from the weights decoded with d = 1; only the f32 steps follow llama.cpp.
 */
#include "blocks.h"
#include "quant.h"
#include "row_kernels.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

enum { QK = 256, Q8_K_QS = 4, Q8_K_BSUMS = 4 + QK, Q8_K_BYTES = 4 + QK + 32, F16_ONE = 0x3c00 };

/* ggml's hsum_float_8: (high half + low half), then those four pairwise, then the last two */
static float hsum8(const float a[8])
{
    const float r0 = a[4] + a[0], r1 = a[5] + a[1], r2 = a[6] + a[2], r3 = a[7] + a[3];
    return (r0 + r2) + (r1 + r3);
}

/* A type's block: its bytes, where its f16 d lies, whether its decode is digit - 1 (the ternary types), whether the
 * kernel puts a weight's sign on the activation (the I-quants' sign or xor, under which -128 stays -128), what the
 * decode with d = 1 is multiplied by to be the kernel's integer (IQ2's (ls + 1/2) / 4 is 2 ls + 1 over 8), and the
 * factor on the final sum that takes it out again. */
typedef struct lanes_form {
    uint32_t type;
    size_t type_size, d_off;
    bool digits, sign_on_activation;
    float int_mul, final;
} lanes_form;

static void lanes_dot(const lanes_form *f, const void *w, const void *a, int64_t n, float *out)
{
    const quant_row_fn deq = quant_row_function(f->type, QUANT_IMPL_SCALAR);
    const uint8_t *wb = w, *ab = a;
    float acc[8] = { 0 };
    for (int64_t i = 0; i < n; i += QK, wb += f->type_size, ab += Q8_K_BYTES) {
        uint8_t copy[128]; /* (the largest block here, IQ3_S's, is 110 bytes) */
        float v[QK];
        memcpy(copy, wb, f->type_size);
        const uint16_t one = F16_ONE;
        memcpy(copy + f->d_off, &one, 2); /* with d = 1 the decode is the integer weight */
        deq(copy, v, QK);
        const int8_t *qa = (const int8_t *)(ab + Q8_K_QS);
        int32_t lane[8] = { 0 };
        for (int e = 0; e < QK; e++) {
            const int32_t wv = (int32_t)lroundf(v[e] * f->int_mul) + (f->digits ? 1 : 0);
            /* a negative weight's sign flips the activation, and -(-128) wraps back to -128 in int8 */
            const bool wraps = f->sign_on_activation && wv < 0 && qa[e] == -128;
            lane[(e & 31) >> 2] += wraps ? -wv * -128 : wv * qa[e];
        }
        if (f->digits) {
            int16_t bsums[16];
            memcpy(bsums, ab + Q8_K_BSUMS, sizeof bsums);
            for (int k = 0; k < 16; k++)
                lane[k >> 1] -= bsums[k];
        }
        float da;
        memcpy(&da, ab, 4);
        uint16_t h;
        memcpy(&h, wb + f->d_off, 2);
        const float d = quant_f16_to_f32(h) * da;
        for (int l = 0; l < 8; l++)
            acc[l] = fmaf((float)lane[l], d, acc[l]);
    }
    *out = f->final * hsum8(acc);
}

/* TQ1_0: qs[48], qh[4], d at 52; TQ2_0: qs[64], d at 64; the I-quants d at 0: IQ3_S with qs[64], qh[8], signs[32],
 * scales[4]; IQ3_XXS qs[96]; IQ2_XXS qs[32] (u16); IQ2_XS qs[32] (u16), scales[8]; IQ2_S qs[64], qh[8], scales[8].
 * (ggml_vec_dot_iq3_xxs_q8_K ends with 0.25f * hsum, the IQ2 ones with 0.125f.) */
static const lanes_form tq1_0 = { GGUF_TENSOR_TQ1_0, 54, 52, true, false, 1.0f, 1.0f },
                        tq2_0 = { GGUF_TENSOR_TQ2_0, 66, 64, true, false, 1.0f, 1.0f },
                        iq3_s = { GGUF_TENSOR_IQ3_S, 110, 0, false, true, 1.0f, 1.0f },
                        iq3_xxs = { GGUF_TENSOR_IQ3_XXS, 98, 0, false, true, 4.0f, 0.25f },
                        iq2_xxs = { GGUF_TENSOR_IQ2_XXS, 66, 0, false, true, 8.0f, 0.125f },
                        iq2_xs = { GGUF_TENSOR_IQ2_XS, 74, 0, false, true, 8.0f, 0.125f },
                        iq2_s = { GGUF_TENSOR_IQ2_S, 82, 0, false, true, 8.0f, 0.125f };

void cpu_act_dot_tq1_0_lanes(const void *w, const void *a, int64_t n, float *out)
{
    lanes_dot(&tq1_0, w, a, n, out);
}

void cpu_act_dot_tq2_0_lanes(const void *w, const void *a, int64_t n, float *out)
{
    lanes_dot(&tq2_0, w, a, n, out);
}

void cpu_act_dot_iq3_s_lanes(const void *w, const void *a, int64_t n, float *out)
{
    lanes_dot(&iq3_s, w, a, n, out);
}

void cpu_act_dot_iq3_xxs_lanes(const void *w, const void *a, int64_t n, float *out)
{
    lanes_dot(&iq3_xxs, w, a, n, out);
}

void cpu_act_dot_iq2_xxs_lanes(const void *w, const void *a, int64_t n, float *out)
{
    lanes_dot(&iq2_xxs, w, a, n, out);
}

void cpu_act_dot_iq2_xs_lanes(const void *w, const void *a, int64_t n, float *out)
{
    lanes_dot(&iq2_xs, w, a, n, out);
}

void cpu_act_dot_iq2_s_lanes(const void *w, const void *a, int64_t n, float *out)
{
    lanes_dot(&iq2_s, w, a, n, out);
}

/* IQ1_S (ggml_vec_dot_iq1_s_q8_K's AVX2 form): the lanes of each grid value (-1, 0, 1) times its activation (the sign
 * put on the activation, -128 left as it is) times the sub-block's 2 ls + 1, into eight f32 sums by fused
 * multiply-adds; beside them each sub-block's delta (+-1/8 of its scale) times its activations' sum, in one f32 sum,
 * added at the end as hsum + IQ1S_DELTA * that sum (both a multiply and an add GCC contracts). The grid values come
 * back from the decode with d = 1: ls (g + delta), exact in f32. Block: d at 0, qs[32], qh[8] (u16) at 34. */
void cpu_act_dot_iq1_s_lanes(const void *w, const void *a, int64_t n, float *out)
{
    const quant_row_fn deq = quant_row_function(GGUF_TENSOR_IQ1_S, QUANT_IMPL_SCALAR);
    const uint8_t *wb = w, *ab = a;
    float acc[8] = { 0 }, acc_delta = 0.0f;
    for (int64_t i = 0; i < n; i += QK, wb += 50, ab += Q8_K_BYTES) {
        uint8_t copy[50];
        float v[QK];
        memcpy(copy, wb, sizeof copy);
        const uint16_t one = F16_ONE;
        memcpy(copy, &one, 2);
        deq(copy, v, QK);
        const int8_t *qa = (const int8_t *)(ab + Q8_K_QS);
        int16_t bsums[16];
        memcpy(bsums, ab + Q8_K_BSUMS, sizeof bsums);
        int32_t lane[8] = { 0 }, sum_delta = 0;
        for (int ib = 0; ib < 8; ib++) {
            uint16_t qh;
            memcpy(&qh, wb + 34 + 2 * ib, 2);
            const int ls = 2 * ((qh >> 12) & 7) + 1, sign = qh & 0x8000 ? -1 : 1;
            const float delta = sign * 0.125f;
            for (int e = 0; e < 32; e++) {
                const int g = (int)lroundf(v[32 * ib + e] / (float)ls - delta), y = qa[32 * ib + e];
                lane[e >> 2] += ls * (g < 0 && y == -128 ? -g * -128 : g * y);
            }
            sum_delta += (bsums[2 * ib] + bsums[2 * ib + 1]) * sign * ls;
        }
        float da;
        memcpy(&da, ab, 4);
        uint16_t h;
        memcpy(&h, wb, 2);
        const float d = da * quant_f16_to_f32(h);
        for (int l = 0; l < 8; l++)
            acc[l] = fmaf((float)lane[l], d, acc[l]);
        acc_delta = fmaf(d, (float)sum_delta, acc_delta);
    }
    *out = fmaf(0.125f, acc_delta, hsum8(acc));
}

/* IQ1_M (ggml_vec_dot_iq1_m_q8_K's AVX2 form): two sets of lanes, each with every 16 values' own 2 ls + 1: the grid
 * values times their activations (sign on the activation, -128 left), and each 8 values' delta sign on their
 * activations (the same flip); each into eight f32 sums by fused multiply-adds with d_w * d_a, added at the end as
 * hsum + IQ1M_DELTA * hsum. The grid values come back from the decode with d = 1 (its f16 is the top nibble of each of
 * the four scale words). Block: qs[32], qh[16] at 32, scales (4 u16) at 48. */
void cpu_act_dot_iq1_m_lanes(const void *w, const void *a, int64_t n, float *out)
{
    const quant_row_fn deq = quant_row_function(GGUF_TENSOR_IQ1_M, QUANT_IMPL_SCALAR);
    const uint8_t *wb = w, *ab = a;
    float acc[8] = { 0 }, acc_delta[8] = { 0 };
    for (int64_t i = 0; i < n; i += QK, wb += 56, ab += Q8_K_BYTES) {
        uint8_t copy[56];
        float v[QK];
        memcpy(copy, wb, sizeof copy);
        uint16_t sc[4], dbits = 0;
        memcpy(sc, wb + 48, sizeof sc);
        for (int k = 0; k < 4; k++) {
            dbits |= (uint16_t)((sc[k] >> 12) << (4 * k));
            const uint16_t nibble = (uint16_t)(((F16_ONE >> (4 * k)) & 0xf) << 12);
            const uint16_t word = (uint16_t)((sc[k] & 0x0fff) | nibble);
            memcpy(copy + 48 + 2 * k, &word, 2);
        }
        deq(copy, v, QK);
        const int8_t *qa = (const int8_t *)(ab + Q8_K_QS);
        const uint8_t *qh = wb + 32;
        int32_t lane[8] = { 0 }, lane_delta[8] = { 0 };
        for (int e = 0; e < QK; e++) {
            const int ib = e / 32, half = (e % 32) / 16, eighth = (e % 32) / 8;
            const int ls = 2 * ((sc[ib / 2] >> (6 * (ib % 2) + 3 * half)) & 7) + 1;
            const int sign = qh[2 * ib + eighth / 2] & (eighth % 2 ? 0x80 : 0x08) ? -1 : 1;
            const int g = (int)lroundf(v[e] / (float)ls - sign * 0.125f), y = qa[e];
            lane[(e & 31) >> 2] += ls * (g < 0 && y == -128 ? -g * -128 : g * y);
            lane_delta[(e & 31) >> 2] += ls * (sign < 0 && y != -128 ? -y : y);
        }
        float da;
        memcpy(&da, ab, 4);
        const float d = da * quant_f16_to_f32(dbits);
        for (int l = 0; l < 8; l++) {
            acc[l] = fmaf((float)lane[l], d, acc[l]);
            acc_delta[l] = fmaf((float)lane_delta[l], d, acc_delta[l]);
        }
    }
    *out = fmaf(0.125f, hsum8(acc_delta), hsum8(acc));
}

/* NVFP4 against Q8_0 (ggml_vec_dot_nvfp4_q8_0): a block of 64 weights, [d:4 ue4m3][qs:32] (quant/dequant_legacy.c),
 * meets two Q8_0 blocks, its sub-blocks 0 and 1 the first, 2 and 3 the second. The eight lanes of one Q8_0 block: lane
 * l the doubled E2M1 levels times the activations of elements 4 l .. 4 l + 3, so lanes 0-3 are the first sub-block's
 * and 4-7 the second's (x86's reordering puts each sub-block's 16 values in element order). */
enum { NVFP4_BYTES = 36, Q8_0_BYTES = 34 };

static void nvfp4_half_lanes(const uint8_t *wb, int half, const int8_t *qa, int32_t lane[8])
{
    for (int l = 0; l < 8; l++)
        lane[l] = 0;
    for (int e = 0; e < 32; e++) {
        const int sub = 2 * half + e / 16, j = e % 16;
        const uint8_t byte = wb[4 + 8 * sub + j % 8];
        lane[e >> 2] += quant_kvalues_mxfp4[j < 8 ? byte & 0xf : byte >> 4] * qa[e];
    }
}

/* x86 (its AVX2 form, which AVX-512 builds run too): each lane times ue4m3(d[s]) / 2 x d_a into eight running sums by
 * a fused multiply-add, the first Q8_0 block's then the second's, added at the end as hsum_float_8 pairs them. */
void cpu_act_dot_nvfp4_lanes(const void *w, const void *a, int64_t n, float *out)
{
    const uint8_t *wb = w, *ab = a;
    float acc[8] = { 0 };
    for (int64_t i = 0; i < n; i += 64, wb += NVFP4_BYTES, ab += 2 * Q8_0_BYTES)
        for (int half = 0; half < 2; half++) {
            const uint8_t *q8 = ab + half * Q8_0_BYTES;
            const float da = rdf16(q8);
            const float s[2] = { quant_ue4m3_half(wb[2 * half]) * da, quant_ue4m3_half(wb[2 * half + 1]) * da };
            int32_t lane[8];
            nvfp4_half_lanes(wb, half, (const int8_t *)(q8 + 2), lane);
            for (int l = 0; l < 8; l++)
                acc[l] = fmaf(s[l / 4], (float)lane[l], acc[l]);
        }
    *out = hsum8(acc);
}

/* ggml's generic form (other CPUs): each sub-block's integer sum times d_a x ue4m3(d[s]) / 2, added in turn. */
void cpu_act_dot_nvfp4_generic(const void *w, const void *a, int64_t n, float *out)
{
    const uint8_t *wb = w, *ab = a;
    float sum = 0.0f;
    for (int64_t i = 0; i < n; i += 64, wb += NVFP4_BYTES, ab += 2 * Q8_0_BYTES)
        for (int half = 0; half < 2; half++) {
            const uint8_t *q8 = ab + half * Q8_0_BYTES;
            int32_t lane[8];
            nvfp4_half_lanes(wb, half, (const int8_t *)(q8 + 2), lane);
            for (int k = 0; k < 2; k++)
                sum += rdf16(q8) * quant_ue4m3_half(wb[2 * half + k]) *
                       (float)(lane[4 * k] + lane[4 * k + 1] + lane[4 * k + 2] + lane[4 * k + 3]);
        }
    *out = sum;
}
