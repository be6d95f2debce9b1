/*
 * AVX2 integer dots of K- and I-quant rows with Q8_K activations (act_dot.c has the arithmetic and the scalar
 * reference they are held to; the 32-value types are act_dot_legacy.c's). 32 weight quants become 32 bytes in
 * a register, in the order of the activation quants they meet; _mm256_maddubs_epi16 multiplies unsigned by
 * signed bytes into pairs of 16-bit sums (a signed weight lends its sign to the activation first), and
 * _mm256_madd_epi16 widens them to 32 bits, times the group scale. Every sum stays below 2^15 per pair and
 * 2^31 per block (the bounds are at each helper). Blocks are scaled in f32 once each. Each type's lanes, offsets
 * and mins are added as ggml's AVX2 vec_dot adds them (ggml-cpu/arch/x86/quants.c), so every dot here is bit for
 * bit llama.cpp's on the same blocks.
 */
#include "x86_target.h"
#include "x86.h"

#include <math.h>

#if defined(__x86_64__)
#include <immintrin.h>

#include "act_unpack_avx2.h"
#include "prefetch_ahead.h"
#include "row_sums.h"
#include "simd_hsum.h"

/* Signed weights: |w| times a with w's sign. */
X86_AVX2 static inline __m256i pairs_i8(__m256i w, __m256i a)
{
    return _mm256_maddubs_epi16(_mm256_sign_epi8(w, w), _mm256_sign_epi8(a, w));
}

/* Each kernel's body takes nt (1..ACT_MAX_ROWS) activation rows at a, a + as, ...: the weights are unpacked once
 * per block for all of them (a prompt's tokens), and nt is a constant where the body is inlined, so the loops
 * over it unroll into registers. The entry points are the 1-row dot and the 4-row one. */

/* ---- 256-value blocks against Q8_K [d:f32][qs:256][bsums:16 x i16] ----
 * Per block the 8 chunks' scaled sums add up in int32 (at most 8 chunks x 2 x 32767 x 127 < 2^31),
 * then d_w * d_a scales them once. */

/* The 4 int32 lanes' sum (exact in any order). */
X86_AVX2 static inline int32_t hsum_i32x4(__m128i v)
{
    v = _mm_add_epi32(v, _mm_shuffle_epi32(v, _MM_SHUFFLE(1, 0, 3, 2)));
    return _mm_cvtsi128_si32(_mm_add_epi32(v, _mm_shuffle_epi32(v, _MM_SHUFFLE(2, 3, 0, 1))));
}

/* Q2_K's mins in ggml's 8 lanes: lane k holds m[2k] bsums[2k] + m[2k + 1] bsums[2k + 1], m the scale bytes' high
 * nibbles (one per 16 values). */
X86_AVX2 static inline __m256i q2k_mins_lanes(const uint8_t *y, const uint8_t *scales)
{
    const __m128i m = _mm_and_si128(_mm_srli_epi16(_mm_loadu_si128((const __m128i *)scales), 4), _mm_set1_epi8(0x0f));
    return _mm256_madd_epi16(_mm256_cvtepu8_epi16(m), load32(y + 4 + QK_K));
}

/* A block's group scales as bytes: 16 of 16 values (Q2_K, Q3_K) or 8 of 32 (Q5_K, IQ4_XS; Q5_K's 8 mins
 * after them), all within int8. */
X86_AVX2 static INLINE __m128i scale_bytes(kquant_kind k, const uint8_t *b)
{
    switch (k) {
    case KQ_Q2_K: return _mm_and_si128(_mm_loadu_si128((const __m128i *)b), _mm_set1_epi8(0x0f));
    case KQ_Q3_K: return quant_q3k_scales16(b + 96);
    case KQ_Q4_K:
    case KQ_Q5_K: return kq_scale_bytes(b);
    case KQ_Q6_K: return _mm_loadu_si128((const __m128i *)(b + 192));
    default: { /* IQ4_XS: 4 low bits from scales_l's nibbles, 2 high from scales_h, minus 32 */
        const __m128i l = _mm_cvtsi32_si128((int)rd32(b + 4)), low4 = _mm_set1_epi8(0x0f);
        uint64_t h = rd16(b + 2); /* its 2-bit fields 8 bits apart, in 3 doubling steps */
        h = (h | h << 24) & 0x000000ff000000ffULL;
        h = (h | h << 12) & 0x000f000f000f000fULL;
        h = (h | h << 6) & 0x0303030303030303ULL;
        const __m128i low = _mm_unpacklo_epi8(_mm_and_si128(l, low4), _mm_and_si128(_mm_srli_epi16(l, 4), low4));
        return _mm_sub_epi8(_mm_or_si128(low, _mm_slli_epi16(_mm_cvtsi64_si128((long long)h), 4)), _mm_set1_epi8(32));
    }
    }
}

/* Chunk c's madd multipliers (8 lanes the scale of its values 0-15, 8 that of 16-31) from scale_bytes. */
X86_AVX2 static INLINE __m256i chunk_scales(kquant_kind k, __m128i s8, int c)
{
    const bool by_16 = k == KQ_Q2_K || k == KQ_Q3_K || k == KQ_Q6_K;
    const char lo = (char)(by_16 ? 2 * c : c), hi = (char)(by_16 ? 2 * c + 1 : c);
    return _mm256_cvtepi8_epi16(
        _mm_shuffle_epi8(s8, _mm_setr_epi8(lo, lo, lo, lo, lo, lo, lo, lo, hi, hi, hi, hi, hi, hi, hi, hi)));
}

X86_AVX2 static INLINE void kquant_body(kquant_kind k, const uint8_t *b, const uint8_t *a, uint64_t as, int nt, int64_t n,
                                    float *out)
{
    static const uint8_t block_bytes[] = { 84, 110, 144, 176, 210, 136 };
    __m256 acc[ACT_MAX_ROWS];
    float mins[ACT_MAX_ROWS];
    for (int t = 0; t < nt; t++)
        acc[t] = _mm256_setzero_ps(), mins[t] = 0.0f;
    for (int64_t i = 0; i < n; i += QK_K, b += block_bytes[k], a += Q8K_BYTES) {
        prefetch_block_ahead(b, block_bytes[k], n);
        kblock u; /* its quants; the scales come from scale_bytes (the scalar ones go unused) */
        kblock_unpack(k, b, &u);
        const __m128i s8 = scale_bytes(k, b);
        __m256i sc[8];
        for (int c = 0; c < 8; c++)
            sc[c] = chunk_scales(k, s8, c);
        const __m128i mins16 = _mm_cvtepu8_epi16(_mm_srli_si128(s8, 8)); /* Q5_K */
        for (int t = 0; t < nt; t++) {
            const uint8_t *y = a + t * as;
            __m256i isum = _mm256_setzero_si256();
            for (int c = 0; c < 8; c++) {
                const __m256i ya = load32(y + 4 + 32 * c);
                const __m256i pairs = u.is_signed ? pairs_i8(u.q[c], ya) : _mm256_maddubs_epi16(u.q[c], ya);
                isum = _mm256_add_epi32(isum, _mm256_madd_epi16(pairs, sc[c]));
            }
            const float da = q8k_d(y);
            if (k == KQ_Q2_K) /* its mins into the 8 lanes first, as ggml's dot adds them */
                acc[t] = _mm256_fmadd_ps(_mm256_set1_ps(-(u.dmin * da)), _mm256_cvtepi32_ps(q2k_mins_lanes(y, b)), acc[t]);
            acc[t] = _mm256_fmadd_ps(_mm256_set1_ps(u.d * da), _mm256_cvtepi32_ps(isum), acc[t]);
            if (k == KQ_Q5_K) /* summed apart, one fused multiply-add a block as ggml's dot (built with FMA) */
                mins[t] = fmaf(u.dmin * da, (float)hsum_i32x4(q8k_mins_lanes(y, mins16)), mins[t]);
        }
    }
    for (int t = 0; t < nt; t++)
        out[t] = quant_hsum8(acc[t]) - mins[t];
}

/* A Q4_K block's 8 chunks of quants (chunk 2j: low nibbles of qs[32j..], chunk 2j + 1: their high ones), each
 * chunk's scale in every 16-bit lane (sc), and its 8 mins widened to 16 bits. */
X86_AVX2 static INLINE void q4k_unpack(const uint8_t *b, __m256i q[8], __m256i sc[8], __m128i *mins16)
{
    const __m256i low4 = _mm256_set1_epi8(0x0f);
    const __m128i sm = kq_scale_bytes(b);
    const __m128i s16 = _mm_cvtepu8_epi16(sm);
    const __m256i scales = _mm256_setr_m128i(s16, s16);
    *mins16 = _mm_cvtepu8_epi16(_mm_srli_si128(sm, 8));
    for (int j = 0; j < 4; j++) {
        const __m256i v = load32(b + 16 + 32 * j);
        q[2 * j] = _mm256_and_si256(v, low4);
        q[2 * j + 1] = _mm256_and_si256(_mm256_srli_epi16(v, 4), low4);
    }
    for (int c = 0; c < 8; c++) /* chunk c's scale (16-bit lane c) in every lane */
        sc[c] = _mm256_shuffle_epi8(scales, _mm256_set1_epi16((short)((2 * c + 1) << 8 | 2 * c)));
}

/* A block's 8 lanes against Q8_K row y: each chunk's pair sums of unsigned quants times its scale (Q4_K, Q2_K). */
X86_AVX2 static INLINE __m256i q4k_isum(const __m256i q[8], const __m256i sc[8], const uint8_t *y)
{
    __m256i isum = _mm256_setzero_si256();
    for (int c = 0; c < 8; c++)
        isum = _mm256_add_epi32(isum, _mm256_madd_epi16(_mm256_maddubs_epi16(q[c], load32(y + 4 + 32 * c)), sc[c]));
    return isum;
}

/* Q4_K on its own, as ggml's AVX2 dot forms it (the generation path of a Q4_K_M file): the 6-bit scales and
 * mins unpacked in registers, each chunk's scale spread to its 16-bit lanes by a byte shuffle, and the mins
 * term in 4 int32 lanes scaled into 4 f32 ones, added after the 8 (bit for bit ggml's vec_dot). The generic
 * body's scalar unpacking of the scales and mins took as many instructions as the products. */
X86_AVX2 static INLINE void q4k_body(kquant_kind k, const uint8_t *b, const uint8_t *a, uint64_t as, int nt, int64_t n,
                                 float *out)
{
    (void)k;
    __m256 acc[ACT_MAX_ROWS];
    __m128 acc_m[ACT_MAX_ROWS];
    for (int t = 0; t < nt; t++)
        acc[t] = _mm256_setzero_ps(), acc_m[t] = _mm_setzero_ps();
    for (int64_t i = 0; i < n; i += QK_K, b += 144, a += Q8K_BYTES) {
        prefetch_block_ahead(b, 144, n);
        __m256i q[8], sc[8];
        __m128i mins16;
        q4k_unpack(b, q, sc, &mins16);
        const float d = f16c(b), dmin = f16c(b + 2);
        for (int t = 0; t < nt; t++) {
            const uint8_t *y = a + t * as;
            const __m256i isum = q4k_isum(q, sc, y);
            const float da = q8k_d(y);
            acc[t] = _mm256_fmadd_ps(_mm256_set1_ps(d * da), _mm256_cvtepi32_ps(isum), acc[t]);
            acc_m[t] = _mm_fmadd_ps(_mm_set1_ps(dmin * da), _mm_cvtepi32_ps(q8k_mins_lanes(y, mins16)), acc_m[t]);
        }
    }
    for (int t = 0; t < nt; t++)
        out[t] = quant_hsum8(acc[t]) - quant_hsum4(acc_m[t]);
}

/* llama.cpp's GEMV order for Q4_K, and for Q2_K where its AVX-512 build repacks it (ggml_gemv_q4_K_8x8_q8_K,
 * ggml_gemv_q2_K_8x8_q8_K; act_dot_vnni_k.c's q4k_gemv says what it computes), 8 rows side by side: each row's
 * block integer as the dots form it and its mins' integer, then added across lanes (row_sums.h). */
X86_AVX2 static INLINE void kq_gemv(kquant_kind k, const uint8_t *w, uint64_t rb, int nr, const uint8_t *y, int64_t n,
                                float *out)
{
    enum { ROWS = 8 };
    const int bytes = k == KQ_Q4_K ? 144 : 84, d_at = k == KQ_Q4_K ? 0 : 80; /* dmin right after d */
    const int64_t nb = n / QK_K;
    rows_ahead ahead = rows_ahead_start(w, (uint64_t)ROWS * rb, 1, nb); /* the next group of rows */
    __m256 acc = _mm256_setzero_ps(), accm = _mm256_setzero_ps();
    for (int64_t i = 0; i < nb; i++, y += Q8K_BYTES) {
        rows_ahead_step(&ahead);
        const __m128i bs_pairs = q8k_bsum_pairs(y);
        __m256i isum[ROWS], imin[ROWS];
        uint16_t d[ROWS], dmin[ROWS];
        const uint8_t *b = w + (uint64_t)i * bytes;
        for (int r = 0; r < ROWS; r++) {
            __m256i q[8], sc[8];
            if (k == KQ_Q4_K) {
                __m128i mins16;
                q4k_unpack(b, q, sc, &mins16);
                imin[r] = _mm256_zextsi128_si256(_mm_madd_epi16(mins16, bs_pairs)); /* 4 lanes, 4 zeros */
            } else {
                kblock u;
                kblock_unpack(k, b, &u);
                const __m128i s8 = scale_bytes(k, b);
                for (int c = 0; c < 8; c++)
                    q[c] = u.q[c], sc[c] = chunk_scales(k, s8, c);
                imin[r] = q2k_mins_lanes(y, b);
            }
            isum[r] = q4k_isum(q, sc, y);
            d[r] = rd16(b + d_at), dmin[r] = rd16(b + d_at + 2);
            b += r + 1 < nr ? rb : 0;
        }
        const __m256 da = _mm256_set1_ps(q8k_d(y));
        const __m256 dw = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)d));
        const __m256 dm = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)dmin));
        acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(quant_rows8_sum(isum)), _mm256_mul_ps(dw, da), acc);
        accm = _mm256_fmadd_ps(_mm256_cvtepi32_ps(quant_rows8_sum(imin)), _mm256_mul_ps(dm, da), accm);
    }
    float all[ROWS];
    _mm256_storeu_ps(all, _mm256_sub_ps(acc, accm));
    memcpy(out, all, (size_t)nr * sizeof(float));
}

X86_AVX2 void cpu_act_gemv_q4_k_avx2(const void *w, uint64_t rb, int nr, const void *y, int64_t n, float *out)
{
    kq_gemv(KQ_Q4_K, w, rb, nr, y, n, out);
}

X86_AVX2 void cpu_act_gemv_q2_k_avx2(const void *w, uint64_t rb, int nr, const void *y, int64_t n, float *out)
{
    kq_gemv(KQ_Q2_K, w, rb, nr, y, n, out);
}

/* Q6_K on its own, as ggml's AVX2 dot forms it: the quants unsigned (0..63) against the activations, each
 * chunk's 16-bit pair sums times its halves' scales (spread by a byte shuffle), and the -32 taken off once a block
 * as ggml takes it, 32 * (s[2k] bsums[2k] + s[2k + 1] bsums[2k + 1]) off lane k: bit for bit ggml's
 * ggml_vec_dot_q6_K_q8_K. (All exact in 32 bits: a lane's products at most 8 x 4 x 63 x 128 x 128.) */
X86_AVX2 static INLINE void q6k_body(kquant_kind k, const uint8_t *b, const uint8_t *a, uint64_t as, int nt, int64_t n,
                                 float *out)
{
    (void)k;
    __m256 acc[ACT_MAX_ROWS];
    for (int t = 0; t < nt; t++)
        acc[t] = _mm256_setzero_ps();
    for (int64_t i = 0; i < n; i += QK_K, b += 210, a += Q8K_BYTES) {
        prefetch_block_ahead(b, 210, n);
        const __m128i s8 = _mm_loadu_si128((const __m128i *)(b + 192));
        __m256i q[8], sc[8];
        q6k_half_chunks(b, 0, q);
        q6k_half_chunks(b, 1, q + 4);
        for (int c = 0; c < 8; c++) /* chunk c: group 2c's scale for values 0-15, 2c + 1's for 16-31 */
            sc[c] = chunk_scales(KQ_Q6_K, s8, c);
        const float d = f16c(b + 208);
        for (int t = 0; t < nt; t++) {
            const uint8_t *y = a + t * as;
            __m256i isum = _mm256_setzero_si256();
            for (int c = 0; c < 8; c++)
                isum = _mm256_add_epi32(isum, _mm256_madd_epi16(_mm256_maddubs_epi16(q[c], load32(y + 4 + 32 * c)), sc[c]));
            isum = _mm256_sub_epi32(isum, q6k_offsets(y, s8));
            acc[t] = _mm256_fmadd_ps(_mm256_set1_ps(d * q8k_d(y)), _mm256_cvtepi32_ps(isum), acc[t]);
        }
    }
    for (int t = 0; t < nt; t++)
        out[t] = quant_hsum8(acc[t]);
}

/* The entry points: one row (decode) and four (prompts), per type. */
#define ACT_ENTRY_POINTS(name, body, kind) ACT_ENTRY_POINTS_AT(avx2, X86_AVX2, name, body, kind)
ACT_ENTRY_POINTS(q2_k, kquant_body, KQ_Q2_K)
ACT_ENTRY_POINTS(q3_k, kquant_body, KQ_Q3_K)
ACT_ENTRY_POINTS(q4_k, q4k_body, KQ_Q4_K)
ACT_ENTRY_POINTS(q5_k, kquant_body, KQ_Q5_K)
ACT_ENTRY_POINTS(q6_k, q6k_body, KQ_Q6_K)
ACT_ENTRY_POINTS(iq4_xs, kquant_body, KQ_IQ4_XS)

#endif
