/*
 * AVX-512 fused dots of the 32-value 4- and 5-bit types Q4_0, Q4_1, Q5_0 and Q5_1 (exact numerics, generation)
 * reading the weight bytes as fields of dwords, against x rearranged once per product: vecdot_fields_avx2.c's pairs,
 * four blocks ("a quad") to a 512-bit register.
 *
 * Lane l of a quad holds dword l & 3 of block l >> 2 (its 16 bytes of nibbles are 4 dwords); field s (s = 0..7) is
 * value 4 (l & 3) + s / 2 + 16 (s & 1) of that block (ggml-common.h: value j in the low nibble of byte j, value
 * j + 16 in its high one). Masked in place, a field converts (unsigned, vcvtudq2ps, so no field needs a shift) to
 * q 2^k exactly for its bit offset k, and x was scaled by 2^-k when it was rearranged. Two forms, as on AVX2:
 *   nibble form (Q4_0, Q4_1): field s at bits 4s;
 *   byte form (Q5_0, Q5_1): the low nibbles and the high ones (shifted down 4) as bytes, the fifth bits added as
 *     16 under a byte mask made from qh; field s is byte s / 2 of the one or the other, k = 8 (s / 2).
 * 8 masks, 8 conversions and 8 multiply-adds for 128 values, with one shuffle for the four blocks' d. The lookup
 * dots of vecdot_avx512.c (one vpermps per 16 values, after widening the bytes) ran no faster than the AVX2 pairs
 * at half the width: Qwen3-0.6B-shape Q4_0, one thread, 27-30 tokens/s either way, 68 % of it in the Q4_0 dot;
 * here 32-33 (Q5_0 21-25 -> 27-29, Q5_1 19-21 -> 25-27). IQ4_NL keeps its lookup: there the table gives the level
 * itself, and as fields (its levels + 127 by a byte shuffle) it measured no faster (27.5-28.5 against 26.8-29.2).
 *
 * The offsets (Q4_0's 8, Q5_0's 16) and Q4_1's / Q5_1's mins multiply a per-lane sum of the x that lane meets, made
 * by the rearrangement too:
 *   sum_i (d q_i + m) x_i = d sum_i q_i x_i + m sum_i x_i.
 */
#include "x86_target.h"
#include "x86.h"

#if defined(__x86_64__)
#include <immintrin.h>
#include "prefetch_ahead.h"


static int64_t quads_span(int64_t n)
{
    return cpu_fields_span(n, 16);
}

/* x in the quads' order (cpu_prep_fields, 16 lanes): field s times 2^-k, k = 4 s (nibble form) or 8 (s / 2) (byte
 * form); unsigned conversions leave no field shifted down, so every field has its own power (the AVX2 pairs'
 * tables differ in their top fields) */
static void prep_quads(const float *x, float *xp, int64_t n, bool byte_form, float offset)
{
    static const float nibble_scales[8] = { 1.0f, 0x1p-4f, 0x1p-8f, 0x1p-12f, 0x1p-16f, 0x1p-20f, 0x1p-24f, 0x1p-28f };
    static const float byte_scales[8] = { 1.0f, 1.0f, 0x1p-8f, 0x1p-8f, 0x1p-16f, 0x1p-16f, 0x1p-24f, 0x1p-24f };
    cpu_prep_fields(x, xp, n, 16, byte_form ? byte_scales : nibble_scales, offset);
}

void cpu_dot_prep_quads_q4_0(const float *x, float *xp, int64_t n) { prep_quads(x, xp, n, false, -8.0f); }
void cpu_dot_prep_quads_q4_1(const float *x, float *xp, int64_t n) { prep_quads(x, xp, n, false, 1.0f); }
void cpu_dot_prep_quads_q5_0(const float *x, float *xp, int64_t n) { prep_quads(x, xp, n, true, -16.0f); }
void cpu_dot_prep_quads_q5_1(const float *x, float *xp, int64_t n) { prep_quads(x, xp, n, true, 1.0f); }

/* Where a block's parts lie (m, qh: -1 for none; d at 0) and its form. */
typedef struct quad_layout {
    int block_bytes, m_at, qh_at, qs_at;
} quad_layout;

/* The f16 at each of the quad's (up to) 4 blocks, offset `at` in each, 4 lanes apiece; blocks past nb read 0. */
X86_AVX512 static inline __attribute__((always_inline)) __m512 quad_f16(const uint8_t *b, int block_bytes, int at, int nb)
{
    uint64_t h = 0;
    for (int k = 0; k < nb; k++)
        h |= (uint64_t)rd16(b + k * block_bytes + at) << 16 * k;
    const __m128 f = _mm_cvtph_ps(_mm_cvtsi64_si128((long long)h));
    return _mm512_permutexvar_ps(_mm512_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3),
                                 _mm512_castps128_ps512(f));
}

/* The quad's nibbles: block k's 16 bytes of qs in lanes 4k..4k+3 (zeros past nb). */
X86_AVX512 static inline __attribute__((always_inline)) __m512i quad_load(const uint8_t *b, int block_bytes, int qs_at, int nb)
{
    __m512i v = _mm512_castsi128_si512(_mm_loadu_si128((const __m128i *)(b + qs_at)));
    if (nb == 4) {
        v = _mm512_inserti32x4(v, _mm_loadu_si128((const __m128i *)(b + block_bytes + qs_at)), 1);
        v = _mm512_inserti32x4(v, _mm_loadu_si128((const __m128i *)(b + 2 * block_bytes + qs_at)), 2);
        return _mm512_inserti32x4(v, _mm_loadu_si128((const __m128i *)(b + 3 * block_bytes + qs_at)), 3);
    }
    v = _mm512_maskz_mov_epi32(0x000f, v);
    for (int k = 1; k < nb; k++)
        v = _mm512_mask_broadcast_i32x4(v, (__mmask16)(0xfu << 4 * k),
                                        _mm_loadu_si128((const __m128i *)(b + k * block_bytes + qs_at)));
    return v;
}

/* s + the quad's 128 values times xp, in two chains of multiply-adds (fields 0, 2, 4, 6 and 1, 3, 5, 7): the
 * nibble form from v; the byte form from lo (fields 0, 2, 4, 6 as bytes 0-3 of each lane) and hi (1, 3, 5, 7) */
X86_AVX512 static inline __attribute__((always_inline)) __m512 quad_nibbles(__m512i v, const float *xp, __m512 s)
{
    __m512 t = _mm512_setzero_ps();
#pragma GCC unroll 8
    for (int f = 0; f < 8; f++) {
        const __m512 p = _mm512_cvtepu32_ps(_mm512_and_si512(v, _mm512_set1_epi32((int)(0xfu << 4 * f))));
        if (f & 1)
            t = _mm512_fmadd_ps(p, _mm512_loadu_ps(xp + 16 * f), t);
        else
            s = _mm512_fmadd_ps(p, _mm512_loadu_ps(xp + 16 * f), s);
    }
    return _mm512_add_ps(s, t);
}

X86_AVX512 static inline __attribute__((always_inline)) __m512 quad_bytes(__m512i lo, __m512i hi, const float *xp,
                                                                        __m512 s)
{
    __m512 t = _mm512_setzero_ps();
#pragma GCC unroll 4
    for (int k = 0; k < 4; k++) {
        const __m512i m = _mm512_set1_epi32((int)(0xffu << 8 * k));
        s = _mm512_fmadd_ps(_mm512_cvtepu32_ps(_mm512_and_si512(lo, m)), _mm512_loadu_ps(xp + 32 * k), s);
        t = _mm512_fmadd_ps(_mm512_cvtepu32_ps(_mm512_and_si512(hi, m)), _mm512_loadu_ps(xp + 32 * k + 16), t);
    }
    return _mm512_add_ps(s, t);
}

/* Q5's fifth bits of the quad's nb blocks as two byte masks of the register: byte 16 b + j of lo is value j of
 * block b (bit j of its qh), of hi value 16 + j (bit 16 + j) */
X86_AVX512 static inline __attribute__((always_inline)) void quad_fifth_bits(const uint8_t *b, quad_layout L, int nb,
                                                                          __mmask64 *lo, __mmask64 *hi)
{
    uint64_t l = 0, h = 0;
    for (int k = 0; k < nb; k++) {
        const uint64_t qh = rd32(b + k * L.block_bytes + L.qh_at);
        l |= (qh & 0xffff) << 16 * k, h |= (qh >> 16) << 16 * k;
    }
    *lo = (__mmask64)l, *hi = (__mmask64)h;
}

/* acc (macc) += the quad of nb blocks at b: d times its fields' sums (m times its lane sums) */
X86_AVX512 static inline __attribute__((always_inline)) void quad_step(const uint8_t *b, const float *xp,
                                                                    const float *lane_sums, quad_layout L, int nb,
                                                                    __m512 *acc, __m512 *macc)
{
    const __m512 sums = _mm512_loadu_ps(lane_sums), start = L.m_at < 0 ? sums : _mm512_setzero_ps();
    const __m512i v = quad_load(b, L.block_bytes, L.qs_at, nb);
    __m512 s;
    if (L.qh_at < 0) {
        s = quad_nibbles(v, xp, start);
    } else {
        const __m512i mask = _mm512_set1_epi8(0x0f), sixteen = _mm512_set1_epi8(16);
        __m512i lo = _mm512_and_si512(v, mask), hi = _mm512_and_si512(_mm512_srli_epi16(v, 4), mask);
        __mmask64 ml, mh;
        quad_fifth_bits(b, L, nb, &ml, &mh);
        lo = _mm512_mask_add_epi8(lo, ml, lo, sixteen), hi = _mm512_mask_add_epi8(hi, mh, hi, sixteen);
        s = quad_bytes(lo, hi, xp, start);
    }
    *acc = _mm512_fmadd_ps(s, quad_f16(b, L.block_bytes, 0, nb), *acc);
    if (L.m_at >= 0)
        *macc = _mm512_fmadd_ps(sums, quad_f16(b, L.block_bytes, L.m_at, nb), *macc);
}

/* One row: the offset through the lane sums where the type has no min, else the lane sums times m */
X86_AVX512 static inline __attribute__((always_inline)) float dot_quads(const uint8_t *b, const float *xp, int64_t n,
                                                                     quad_layout L)
{
    const float *lane_sums = xp + quads_span(n);
    __m512 acc = _mm512_setzero_ps(), macc = _mm512_setzero_ps();
    int64_t i = 0;
    for (; i + 128 <= n; i += 128, b += 4 * L.block_bytes, xp += 128, lane_sums += 16) {
        prefetch_block_ahead(b, 4 * L.block_bytes, n);
        quad_step(b, xp, lane_sums, L, 4, &acc, &macc);
    }
    if (i < n) /* the last 1-3 blocks */
        quad_step(b, xp, lane_sums, L, (int)((n - i) / 32), &acc, &macc);
    return _mm512_reduce_add_ps(_mm512_add_ps(acc, macc));
}

X86_AVX512 float cpu_dot_quads_q4_0_avx512(const void *src, const float *xp, int64_t n)
{
    return dot_quads(src, xp, n, (quad_layout){ 18, -1, -1, 2 });
}

X86_AVX512 float cpu_dot_quads_q4_1_avx512(const void *src, const float *xp, int64_t n)
{
    return dot_quads(src, xp, n, (quad_layout){ 20, 2, -1, 4 });
}

X86_AVX512 float cpu_dot_quads_q5_0_avx512(const void *src, const float *xp, int64_t n)
{
    return dot_quads(src, xp, n, (quad_layout){ 22, -1, 2, 6 });
}

X86_AVX512 float cpu_dot_quads_q5_1_avx512(const void *src, const float *xp, int64_t n)
{
    return dot_quads(src, xp, n, (quad_layout){ 24, 2, 4, 8 });
}

#endif
