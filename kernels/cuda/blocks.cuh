/*
 * The ggml blocks the CUDA backend reads, decoded eight values at a time:
 * decode8<TYPE>(row, i, v) writes values 8i .. 8i+7 of a row. Eight
 * consecutive values always share one scale in every type here, so a lane
 * of a warp reads a contiguous run of quantized bytes and one scale, and the
 * 32 lanes of a warp read neighbouring bytes.
 *
 * __host__ __device__: the same code is compiled for the host and checked
 * there against quant/'s decoders (tests/test_cuda_decode.c), which runs
 * without a GPU.
 *
 * Layouts (ggml-common.h; gguf-py's quants.py has the same in numpy):
 *   Q4_0  18 B: f16 d, 16 B nibbles; value j<16 low nibble of qs[j], j>=16 high nibble of qs[j-16]; (q-8)*d
 *   Q4_1  20 B: f16 d, f16 m, 16 B nibbles as Q4_0; q*d + m
 *   Q5_0  22 B: f16 d, u32 qh (bit j = fifth bit of value j), 16 B nibbles; (q-16)*d
 *   Q5_1  24 B: f16 d, f16 m, u32 qh, 16 B nibbles; q*d + m
 *   Q8_0  34 B: f16 d, 32 int8; q*d
 *   Q4_K 144 B: f16 d, f16 dmin, 12 B packed 6-bit scales/mins, 128 B nibbles; four 64-value groups,
 *               the low nibbles of 32 bytes then their high nibbles; d*sc*q - dmin*m
 *   Q5_K 176 B: as Q4_K plus qh[32] before the nibbles: bit 2g (first half of group g) or 2g+1 (second)
 *               of qh[l] is the fifth bit
 *   Q6_K 210 B: ql[128], qh[64], int8 scales[16], f16 d; two 128-value halves; d*sc*(q-32)
 */
#ifndef GGUFSCOPE_KERN_CUDA_BLOCKS_CUH
#define GGUFSCOPE_KERN_CUDA_BLOCKS_CUH

#include "gguf.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>
#include <string.h>

#define KC_HD __host__ __device__ __forceinline__

/* Little-endian loads from any byte offset (blocks of 18, 22, 34, 210 bytes are not aligned). */
KC_HD uint16_t kc_u16(const uint8_t *p)
{
    return (uint16_t)(p[0] | (p[1] << 8));
}

KC_HD uint32_t kc_u32(const uint8_t *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

KC_HD float kc_f16(uint16_t h)
{
    __half_raw r;
    r.x = h;
    return __half2float(__half(r));
}

KC_HD float kc_bf16(uint16_t h)
{
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

KC_HD float kc_f16_at(const uint8_t *p)
{
    return kc_f16(kc_u16(p));
}

/* Scale and min j (0..7) of a Q4_K/Q5_K block from its 12 packed bytes. */
KC_HD void kc_scale_min(int j, const uint8_t *q, int *sc, int *m)
{
    if (j < 4) {
        *sc = q[j] & 63;
        *m = q[j + 4] & 63;
    } else {
        *sc = (q[j + 4] & 0xf) | ((q[j - 4] >> 6) << 4);
        *m = (q[j + 4] >> 4) | ((q[j] >> 6) << 4);
    }
}

/* Values per block and bytes per block of the types this backend reads. */
template <uint32_t T> struct kc_traits;
template <> struct kc_traits<GGML_TYPE_F32> { static const int qk = 1, bytes = 4; };
template <> struct kc_traits<GGML_TYPE_F16> { static const int qk = 1, bytes = 2; };
template <> struct kc_traits<GGML_TYPE_BF16> { static const int qk = 1, bytes = 2; };
template <> struct kc_traits<GGML_TYPE_Q4_0> { static const int qk = 32, bytes = 18; };
template <> struct kc_traits<GGML_TYPE_Q4_1> { static const int qk = 32, bytes = 20; };
template <> struct kc_traits<GGML_TYPE_Q5_0> { static const int qk = 32, bytes = 22; };
template <> struct kc_traits<GGML_TYPE_Q5_1> { static const int qk = 32, bytes = 24; };
template <> struct kc_traits<GGML_TYPE_Q8_0> { static const int qk = 32, bytes = 34; };
template <> struct kc_traits<GGML_TYPE_Q4_K> { static const int qk = 256, bytes = 144; };
template <> struct kc_traits<GGML_TYPE_Q5_K> { static const int qk = 256, bytes = 176; };
template <> struct kc_traits<GGML_TYPE_Q6_K> { static const int qk = 256, bytes = 210; };

/* Values 8i .. 8i+7 of a row. For the float types the caller guarantees the
 * row length is a multiple of 8 (else it uses kc_decode1). */
template <uint32_t T> KC_HD void decode8(const uint8_t *row, int64_t i, float v[8]);

/* Float rows start 16-byte aligned when their length is a multiple of 8 (the
 * device copies and host buffers are): one or two 16-byte loads per lane. */
template <> KC_HD void decode8<GGML_TYPE_F32>(const uint8_t *row, int64_t i, float v[8])
{
    const float4 *p = (const float4 *)row + 2 * i;
    const float4 a = p[0], b = p[1];
    v[0] = a.x, v[1] = a.y, v[2] = a.z, v[3] = a.w, v[4] = b.x, v[5] = b.y, v[6] = b.z, v[7] = b.w;
}

template <bool BF16> KC_HD void kc_unpack8(uint4 u, float v[8])
{
    const uint32_t w[4] = { u.x, u.y, u.z, u.w };
    for (int k = 0; k < 4; k++) {
        const uint16_t lo = (uint16_t)(w[k] & 0xffff), hi = (uint16_t)(w[k] >> 16);
        v[2 * k] = BF16 ? kc_bf16(lo) : kc_f16(lo);
        v[2 * k + 1] = BF16 ? kc_bf16(hi) : kc_f16(hi);
    }
}

template <> KC_HD void decode8<GGML_TYPE_F16>(const uint8_t *row, int64_t i, float v[8])
{
    kc_unpack8<false>(((const uint4 *)row)[i], v);
}

template <> KC_HD void decode8<GGML_TYPE_BF16>(const uint8_t *row, int64_t i, float v[8])
{
    kc_unpack8<true>(((const uint4 *)row)[i], v);
}

/* Q4_0/Q4_1/Q5_0/Q5_1: quarter c of a 32-value block is values 8c..8c+7:
 * low nibbles of qs[8c..] for c < 2, high nibbles of qs[8(c-2)..] after. */
KC_HD int kc_nib(const uint8_t *qs, int c, int k)
{
    return c < 2 ? qs[8 * c + k] & 0xf : qs[8 * (c - 2) + k] >> 4;
}

template <> KC_HD void decode8<GGML_TYPE_Q4_0>(const uint8_t *row, int64_t i, float v[8])
{
    const uint8_t *b = row + (i >> 2) * 18;
    const int c = (int)(i & 3);
    const float d = kc_f16_at(b);
    for (int k = 0; k < 8; k++)
        v[k] = (float)(kc_nib(b + 2, c, k) - 8) * d;
}

template <> KC_HD void decode8<GGML_TYPE_Q4_1>(const uint8_t *row, int64_t i, float v[8])
{
    const uint8_t *b = row + (i >> 2) * 20;
    const int c = (int)(i & 3);
    const float d = kc_f16_at(b), m = kc_f16_at(b + 2);
    for (int k = 0; k < 8; k++)
        v[k] = (float)kc_nib(b + 4, c, k) * d + m;
}

template <> KC_HD void decode8<GGML_TYPE_Q5_0>(const uint8_t *row, int64_t i, float v[8])
{
    const uint8_t *b = row + (i >> 2) * 22;
    const int c = (int)(i & 3);
    const float d = kc_f16_at(b);
    const uint32_t qh = kc_u32(b + 2);
    for (int k = 0; k < 8; k++) {
        int j = 8 * c + k;  /* the value's index in the block: its fifth bit is bit j of qh */
        int q = kc_nib(b + 6, c, k) | (int)(((qh >> j) & 1) << 4);
        v[k] = (float)(q - 16) * d;
    }
}

template <> KC_HD void decode8<GGML_TYPE_Q5_1>(const uint8_t *row, int64_t i, float v[8])
{
    const uint8_t *b = row + (i >> 2) * 24;
    const int c = (int)(i & 3);
    const float d = kc_f16_at(b), m = kc_f16_at(b + 2);
    const uint32_t qh = kc_u32(b + 4);
    for (int k = 0; k < 8; k++) {
        int j = 8 * c + k;
        int q = kc_nib(b + 8, c, k) | (int)(((qh >> j) & 1) << 4);
        v[k] = (float)q * d + m;
    }
}

template <> KC_HD void decode8<GGML_TYPE_Q8_0>(const uint8_t *row, int64_t i, float v[8])
{
    const uint8_t *b = row + (i >> 2) * 34;
    const float d = kc_f16_at(b);
    const int8_t *q = (const int8_t *)(b + 2) + 8 * (i & 3);
    for (int k = 0; k < 8; k++)
        v[k] = (float)q[k] * d;
}

/* Q4_K and Q5_K: offset o (multiple of 8) in the 256-value block lies in
 * group g = o / 64; its first 32 values are low nibbles, the next 32 high.
 * Both share the block head (d, dmin, 12 scale bytes); what differs is
 * where the nibbles lie and Q5_K's fifth bit. */
struct kc_kq_at {
    int g, hi, l;   /* group pair, high-nibble half, index within the 32 */
    float d, mn;    /* d sc and dmin m of the 32 values */
};

KC_HD kc_kq_at kc_kq_locate(const uint8_t *b, int64_t i)
{
    kc_kq_at a;
    const int o = (int)(i & 31) * 8, within = o & 63;
    a.g = o >> 6;
    a.hi = within >= 32;
    a.l = within & 31;
    int sc, m;
    kc_scale_min(2 * a.g + a.hi, b + 4, &sc, &m);
    a.d = kc_f16_at(b) * (float)sc;
    a.mn = kc_f16_at(b + 2) * (float)m;
    return a;
}

template <> KC_HD void decode8<GGML_TYPE_Q4_K>(const uint8_t *row, int64_t i, float v[8])
{
    const uint8_t *b = row + (i >> 5) * 144;
    const kc_kq_at a = kc_kq_locate(b, i);
    const uint8_t *qs = b + 16 + 32 * a.g + a.l;
    for (int k = 0; k < 8; k++)
        v[k] = a.d * (float)(a.hi ? qs[k] >> 4 : qs[k] & 0xf) - a.mn;
}

template <> KC_HD void decode8<GGML_TYPE_Q5_K>(const uint8_t *row, int64_t i, float v[8])
{
    const uint8_t *b = row + (i >> 5) * 176;
    const kc_kq_at a = kc_kq_locate(b, i);
    const uint8_t *qh = b + 16 + a.l, *qs = b + 48 + 32 * a.g + a.l;
    const int bit = 2 * a.g + a.hi;
    for (int k = 0; k < 8; k++) {
        int q = (a.hi ? qs[k] >> 4 : qs[k] & 0xf) | (((qh[k] >> bit) & 1) << 4);
        v[k] = a.d * (float)q - a.mn;
    }
}

/* Q6_K: offset o in half n = o / 128; quarter qq = (o % 128) / 32 of it takes
 * ql[64n + l (+32 for odd qq)] (low nibble for qq < 2, high after), two bits
 * 2qq of qh[32n + l], and scale 8n + l/16 + 2qq. */
template <> KC_HD void decode8<GGML_TYPE_Q6_K>(const uint8_t *row, int64_t i, float v[8])
{
    const uint8_t *b = row + (i >> 5) * 210;
    const int o = (int)(i & 31) * 8, n = o >> 7, r = o & 127, qq = r >> 5, l = r & 31;
    const uint8_t *ql = b + 64 * n + l + (qq & 1) * 32, *qh = b + 128 + 32 * n + l;
    const int8_t sc = (int8_t)b[192 + 8 * n + l / 16 + 2 * qq];
    const float d = kc_f16_at(b + 208) * (float)sc;
    const int shift = qq >= 2 ? 4 : 0;
    for (int k = 0; k < 8; k++) {
        int q = ((ql[k] >> shift) & 0xf) | (((qh[k] >> (2 * qq)) & 3) << 4);
        v[k] = d * (float)(q - 32);
    }
}

/* One value of a float-typed row: for rows whose length is not a multiple of 8. */
KC_HD float kc_decode1(uint32_t type, const uint8_t *row, int64_t i)
{
    switch (type) {
    case GGML_TYPE_F32: {
        float f;
        memcpy(&f, row + 4 * i, 4);
        return f;
    }
    case GGML_TYPE_F16: return kc_f16(kc_u16(row + 2 * i));
    case GGML_TYPE_BF16: return kc_bf16(kc_u16(row + 2 * i));
    default: return 0.0f;
    }
}

/* Calls f.template operator()<TYPE>() for a runtime type id; false when unsupported. */
template <typename F> static inline bool kc_dispatch(uint32_t type, F &&f)
{
    switch (type) {
    case GGML_TYPE_F32: f.template operator()<GGML_TYPE_F32>(); return true;
    case GGML_TYPE_F16: f.template operator()<GGML_TYPE_F16>(); return true;
    case GGML_TYPE_BF16: f.template operator()<GGML_TYPE_BF16>(); return true;
    case GGML_TYPE_Q4_0: f.template operator()<GGML_TYPE_Q4_0>(); return true;
    case GGML_TYPE_Q4_1: f.template operator()<GGML_TYPE_Q4_1>(); return true;
    case GGML_TYPE_Q5_0: f.template operator()<GGML_TYPE_Q5_0>(); return true;
    case GGML_TYPE_Q5_1: f.template operator()<GGML_TYPE_Q5_1>(); return true;
    case GGML_TYPE_Q8_0: f.template operator()<GGML_TYPE_Q8_0>(); return true;
    case GGML_TYPE_Q4_K: f.template operator()<GGML_TYPE_Q4_K>(); return true;
    case GGML_TYPE_Q5_K: f.template operator()<GGML_TYPE_Q5_K>(); return true;
    case GGML_TYPE_Q6_K: f.template operator()<GGML_TYPE_Q6_K>(); return true;
    default: return false;
    }
}

#endif
