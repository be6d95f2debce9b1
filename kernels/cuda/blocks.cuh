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
 *   Q2_K  84 B: scales[16] (low nibble sc, high m), qs[64], f16 d, f16 dmin; two 128-value halves, each
 *               four 2-bit planes of 32 bytes; d*sc*q - dmin*m
 *   Q3_K 110 B: hmask[32], qs[64], 12 B packed 6-bit scales, f16 d; Q2_K's planes plus a third bit from
 *               hmask (clear: subtract 4); d*(sc-32)*q
 *   IQ4_NL 18 B: f16 d, 16 B nibbles as Q4_0, each an index into 16 non-uniform levels; d*level
 *   IQ4_XS 136 B: f16 d, u16 high scale bits, 4 B low scale nibbles, 128 B nibbles: eight IQ4_NL blocks
 *               of 32 with 6-bit scales; d*(ls-32)*level
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
template <> struct kc_traits<GGUF_TENSOR_F32> { static const int qk = 1, bytes = 4; };
template <> struct kc_traits<GGUF_TENSOR_F16> { static const int qk = 1, bytes = 2; };
template <> struct kc_traits<GGUF_TENSOR_BF16> { static const int qk = 1, bytes = 2; };
template <> struct kc_traits<GGUF_TENSOR_Q4_0> { static const int qk = 32, bytes = 18; };
template <> struct kc_traits<GGUF_TENSOR_Q4_1> { static const int qk = 32, bytes = 20; };
template <> struct kc_traits<GGUF_TENSOR_Q5_0> { static const int qk = 32, bytes = 22; };
template <> struct kc_traits<GGUF_TENSOR_Q5_1> { static const int qk = 32, bytes = 24; };
template <> struct kc_traits<GGUF_TENSOR_Q8_0> { static const int qk = 32, bytes = 34; };
template <> struct kc_traits<GGUF_TENSOR_Q4_K> { static const int qk = 256, bytes = 144; };
template <> struct kc_traits<GGUF_TENSOR_Q5_K> { static const int qk = 256, bytes = 176; };
template <> struct kc_traits<GGUF_TENSOR_Q6_K> { static const int qk = 256, bytes = 210; };
template <> struct kc_traits<GGUF_TENSOR_Q2_K> { static const int qk = 256, bytes = 84; };
template <> struct kc_traits<GGUF_TENSOR_Q3_K> { static const int qk = 256, bytes = 110; };
template <> struct kc_traits<GGUF_TENSOR_IQ4_NL> { static const int qk = 32, bytes = 18; };
template <> struct kc_traits<GGUF_TENSOR_IQ4_XS> { static const int qk = 256, bytes = 136; };
template <> struct kc_traits<GGUF_TENSOR_MXFP4> { static const int qk = 32, bytes = 17; };
template <> struct kc_traits<GGUF_TENSOR_NVFP4> { static const int qk = 64, bytes = 36; };

/* Values 8i .. 8i+7 of a row. For the float types the caller guarantees the
 * row length is a multiple of 8 (else it uses kc_decode1). */
template <uint32_t T> KC_HD void decode8(const uint8_t *row, int64_t i, float v[8]);

/* Float rows start 16-byte aligned when their length is a multiple of 8 (the
 * device copies and host buffers are): one or two 16-byte loads per lane. */
template <> KC_HD void decode8<GGUF_TENSOR_F32>(const uint8_t *row, int64_t i, float v[8])
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

template <> KC_HD void decode8<GGUF_TENSOR_F16>(const uint8_t *row, int64_t i, float v[8])
{
    kc_unpack8<false>(((const uint4 *)row)[i], v);
}

template <> KC_HD void decode8<GGUF_TENSOR_BF16>(const uint8_t *row, int64_t i, float v[8])
{
    kc_unpack8<true>(((const uint4 *)row)[i], v);
}

/* Q4_0/Q4_1/Q5_0/Q5_1: quarter c of a 32-value block is values 8c..8c+7:
 * low nibbles of qs[8c..] for c < 2, high nibbles of qs[8(c-2)..] after. */
KC_HD int kc_nib(const uint8_t *qs, int c, int k)
{
    return c < 2 ? qs[8 * c + k] & 0xf : qs[8 * (c - 2) + k] >> 4;
}

template <> KC_HD void decode8<GGUF_TENSOR_Q4_0>(const uint8_t *row, int64_t i, float v[8])
{
    const uint8_t *b = row + (i >> 2) * 18;
    const int c = (int)(i & 3);
    const float d = kc_f16_at(b);
    for (int k = 0; k < 8; k++)
        v[k] = (float)(kc_nib(b + 2, c, k) - 8) * d;
}

template <> KC_HD void decode8<GGUF_TENSOR_Q4_1>(const uint8_t *row, int64_t i, float v[8])
{
    const uint8_t *b = row + (i >> 2) * 20;
    const int c = (int)(i & 3);
    const float d = kc_f16_at(b), m = kc_f16_at(b + 2);
    for (int k = 0; k < 8; k++)
        v[k] = (float)kc_nib(b + 4, c, k) * d + m;
}

template <> KC_HD void decode8<GGUF_TENSOR_Q5_0>(const uint8_t *row, int64_t i, float v[8])
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

template <> KC_HD void decode8<GGUF_TENSOR_Q5_1>(const uint8_t *row, int64_t i, float v[8])
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

template <> KC_HD void decode8<GGUF_TENSOR_Q8_0>(const uint8_t *row, int64_t i, float v[8])
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

template <> KC_HD void decode8<GGUF_TENSOR_Q4_K>(const uint8_t *row, int64_t i, float v[8])
{
    const uint8_t *b = row + (i >> 5) * 144;
    const kc_kq_at a = kc_kq_locate(b, i);
    const uint8_t *qs = b + 16 + 32 * a.g + a.l;
    for (int k = 0; k < 8; k++)
        v[k] = a.d * (float)(a.hi ? qs[k] >> 4 : qs[k] & 0xf) - a.mn;
}

template <> KC_HD void decode8<GGUF_TENSOR_Q5_K>(const uint8_t *row, int64_t i, float v[8])
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
template <> KC_HD void decode8<GGUF_TENSOR_Q6_K>(const uint8_t *row, int64_t i, float v[8])
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

/* Q2_K and Q3_K share the 2-bit planes: offset o in half h = o / 128 lies in
 * plane s = (o % 128) / 32 (bits 2s of each byte) and part p = (o % 32) / 16
 * of it, whose 16 values read bytes 16p .. 16p+15 of the half's 32 (ggml's
 * dequantize_row_q2_K walks them in that order); its scale is number 8h+2s+p. */
struct kc_plane_at {
    int h, s, l;    /* half, plane, byte index within the half's 32 */
    int scale;      /* which of the block's 16 scales */
};

KC_HD kc_plane_at kc_plane_locate(int64_t i)
{
    kc_plane_at a;
    const int o = (int)(i & 31) * 8, r = o & 127;
    a.h = o >> 7;
    a.s = r >> 5;
    a.l = r & 31;  /* 16p + (0 or 8) */
    a.scale = 8 * a.h + 2 * a.s + (a.l >> 4);
    return a;
}

template <> KC_HD void decode8<GGUF_TENSOR_Q2_K>(const uint8_t *row, int64_t i, float v[8])
{
    const uint8_t *b = row + (i >> 5) * 84;
    const kc_plane_at a = kc_plane_locate(i);
    const uint8_t sc = b[a.scale], *q = b + 16 + 32 * a.h + a.l;
    const float dl = kc_f16_at(b + 80) * (float)(sc & 0xf), ml = kc_f16_at(b + 82) * (float)(sc >> 4);
    for (int k = 0; k < 8; k++)
        v[k] = dl * (float)((q[k] >> (2 * a.s)) & 3) - ml;
}

/* Q3_K's scale j: low nibble from byte j (j < 8) or the high nibble of byte j-8, top two bits from
 * byte 8 + j%4 at bit 2(j/4) (ggml's make_q3_k scale packing). The third bit of value l of a half is
 * bit 4h+s of hmask[l]: hmask is shared by both halves. */
template <> KC_HD void decode8<GGUF_TENSOR_Q3_K>(const uint8_t *row, int64_t i, float v[8])
{
    const uint8_t *b = row + (i >> 5) * 110;
    const kc_plane_at a = kc_plane_locate(i);
    const uint8_t *packed = b + 96, *q = b + 32 + 32 * a.h + a.l, *hm = b + a.l;
    const int j = a.scale;
    const int low = j < 8 ? packed[j] & 0xf : packed[j - 8] >> 4, high = (packed[8 + (j & 3)] >> (2 * (j >> 2))) & 3;
    const float dl = kc_f16_at(b + 108) * (float)((low | high << 4) - 32);
    const int m = 1 << (4 * a.h + a.s);
    for (int k = 0; k < 8; k++)
        v[k] = dl * (float)(((q[k] >> (2 * a.s)) & 3) - ((hm[k] & m) ? 0 : 4));
}

/* IQ4_NL's 16 levels (ggml-common.h's kvalues_iq4nl), eight signed bytes to a word, so that host and
 * device code read the same constant without a table in either's memory. */
KC_HD float kc_iq4nl_level(int n)
{
    const uint64_t lo = 0xf6eaddcfbfad9881ull, hi = 0x7159453526190d01ull;
    return (float)(int8_t)((n < 8 ? lo : hi) >> (8 * (n & 7)));
}

template <> KC_HD void decode8<GGUF_TENSOR_IQ4_NL>(const uint8_t *row, int64_t i, float v[8])
{
    const uint8_t *b = row + (i >> 2) * 18;
    const int c = (int)(i & 3);
    const float d = kc_f16_at(b);
    for (int k = 0; k < 8; k++)
        v[k] = d * kc_iq4nl_level(kc_nib(b + 2, c, k));
}

/* IQ4_XS: sub-block ib = o / 32 is an IQ4_NL block's nibbles with the 6-bit scale ls: low nibble
 * ib % 2 of scales_l[ib / 2], top two bits 2ib of scales_h. */
template <> KC_HD void decode8<GGUF_TENSOR_IQ4_XS>(const uint8_t *row, int64_t i, float v[8])
{
    const uint8_t *b = row + (i >> 5) * 136;
    const int ib = (int)(i & 31) >> 2, c = (int)(i & 3);
    const int ls = ((b[4 + ib / 2] >> 4 * (ib % 2)) & 0xf) | (((kc_u16(b + 2) >> 2 * ib) & 3) << 4);
    const float dl = kc_f16_at(b) * (float)(ls - 32);
    for (int k = 0; k < 8; k++)
        v[k] = dl * kc_iq4nl_level(kc_nib(b + 8 + 16 * ib, c, k));
}

/* MXFP4's 16 levels, E2M1 doubled (ggml-common.h's kvalues_mxfp4), packed as kc_iq4nl_level's. */
KC_HD float kc_mxfp4_level(int n)
{
    const uint64_t lo = 0x0c08060403020100ull, hi = 0xf4f8fafcfdfeff00ull;
    return (float)(int8_t)((n < 8 ? lo : hi) >> (8 * (n & 7)));
}

/* 2^(e - 128) as ggml's ggml_e8m0_to_fp32_half makes it (subnormal for e < 2), which halves the doubled levels. */
KC_HD float kc_e8m0_half(uint8_t e)
{
    const uint32_t bits = e < 2 ? 0x00200000u << e : (uint32_t)(e - 1) << 23;
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

/* MXFP4 [e:e8m0][qs:16]: Q4_0's nibble order. */
template <> KC_HD void decode8<GGUF_TENSOR_MXFP4>(const uint8_t *row, int64_t i, float v[8])
{
    const uint8_t *b = row + (i >> 2) * 17;
    const int c = (int)(i & 3);
    const float d = kc_e8m0_half(b[0]);
    for (int k = 0; k < 8; k++)
        v[k] = kc_mxfp4_level(kc_nib(b + 1, c, k)) * d;
}

/* NVFP4's sub-block scale, an unsigned E4M3 halved as ggml's ggml_ue4m3_to_fp32 halves it (0 and 0x7F: 0). */
KC_HD float kc_ue4m3_half(uint8_t x)
{
    if (x == 0 || x == 0x7F)
        return 0.0f;
    const int e = (x >> 3) & 0xF, m = x & 7;
    return e == 0 ? ldexpf((float)m, -10) : ldexpf(1.0f + (float)m / 8.0f, e - 8);
}

/* NVFP4 [d:4 ue4m3][qs:32], 64 values: sub-block s (values 16 s ..) the bytes qs[8 s ..), low nibbles its first 8
 * values, high nibbles the next 8; group i's 8 values are one half of one sub-block. */
template <> KC_HD void decode8<GGUF_TENSOR_NVFP4>(const uint8_t *row, int64_t i, float v[8])
{
    const uint8_t *b = row + (i >> 3) * 36;
    const int g = (int)(i & 7), s = g >> 1;
    const float d = kc_ue4m3_half(b[s]);
    const uint8_t *q = b + 4 + 8 * s;
    for (int k = 0; k < 8; k++)
        v[k] = kc_mxfp4_level(g & 1 ? q[k] >> 4 : q[k] & 0xf) * d;
}

/* One value of a float-typed row: for rows whose length is not a multiple of 8. */
KC_HD float kc_decode1(uint32_t type, const uint8_t *row, int64_t i)
{
    switch (type) {
    case GGUF_TENSOR_F32: {
        float f;
        memcpy(&f, row + 4 * i, 4);
        return f;
    }
    case GGUF_TENSOR_F16: return kc_f16(kc_u16(row + 2 * i));
    case GGUF_TENSOR_BF16: return kc_bf16(kc_u16(row + 2 * i));
    default: return 0.0f;
    }
}

/* Calls f.template operator()<TYPE>() for a runtime type id; false when unsupported. */
template <typename F> static inline bool kc_dispatch(uint32_t type, F &&f)
{
    switch (type) {
    case GGUF_TENSOR_F32: f.template operator()<GGUF_TENSOR_F32>(); return true;
    case GGUF_TENSOR_F16: f.template operator()<GGUF_TENSOR_F16>(); return true;
    case GGUF_TENSOR_BF16: f.template operator()<GGUF_TENSOR_BF16>(); return true;
    case GGUF_TENSOR_Q4_0: f.template operator()<GGUF_TENSOR_Q4_0>(); return true;
    case GGUF_TENSOR_Q4_1: f.template operator()<GGUF_TENSOR_Q4_1>(); return true;
    case GGUF_TENSOR_Q5_0: f.template operator()<GGUF_TENSOR_Q5_0>(); return true;
    case GGUF_TENSOR_Q5_1: f.template operator()<GGUF_TENSOR_Q5_1>(); return true;
    case GGUF_TENSOR_Q8_0: f.template operator()<GGUF_TENSOR_Q8_0>(); return true;
    case GGUF_TENSOR_Q4_K: f.template operator()<GGUF_TENSOR_Q4_K>(); return true;
    case GGUF_TENSOR_Q5_K: f.template operator()<GGUF_TENSOR_Q5_K>(); return true;
    case GGUF_TENSOR_Q6_K: f.template operator()<GGUF_TENSOR_Q6_K>(); return true;
    case GGUF_TENSOR_Q2_K: f.template operator()<GGUF_TENSOR_Q2_K>(); return true;
    case GGUF_TENSOR_Q3_K: f.template operator()<GGUF_TENSOR_Q3_K>(); return true;
    case GGUF_TENSOR_IQ4_NL: f.template operator()<GGUF_TENSOR_IQ4_NL>(); return true;
    case GGUF_TENSOR_IQ4_XS: f.template operator()<GGUF_TENSOR_IQ4_XS>(); return true;
    case GGUF_TENSOR_MXFP4: f.template operator()<GGUF_TENSOR_MXFP4>(); return true;
    case GGUF_TENSOR_NVFP4: f.template operator()<GGUF_TENSOR_NVFP4>(); return true;
    default: return false;
    }
}

#endif
