/*
 * AVX2 fused dots of the 32-value 4- and 5-bit types (Q4_0, Q4_1, Q5_0, Q5_1, IQ4_NL, MXFP4), IQ4_XS and the K-quants, reading
 * weight bytes as fields of dwords, against x rearranged once per product into the fields' order.
 *
 * A block's 16 bytes of nibbles are 4 dwords, so one 256-bit register holds two blocks (a "pair"; IQ4_XS's
 * sub-blocks 2p and 2p + 1 are already adjacent). Lane l holds dword l & 3 of block l >> 2; its field s (s =
 * 0..7, nibble s & 1 of byte s / 2) is value 4 (l & 3) + s / 2 + 16 (s & 1) of that block (ggml-common.h's
 * layout: value j in the low nibble of byte j, value j + 16 in its high one).
 *
 * A field masked in place converts to q 2^k for its bit offset k, so 8 masks and 8 conversions give the pair's
 * 64 values with no widening or byte shuffles, where widening 8 bytes at a time to dwords took about 25
 * instructions a block; x is scaled by 2^-k in the rearrangement (exact: a power of two; only |x| < 2^-100
 * would lose bits). AVX2 converts signed dwords, so the top field is shifted down instead and has scale 1.
 * Two forms:
 *   nibble form (Q4_0, Q4_1, Q4_K): field s masked where it lies, k = 4 s;
 *   byte form (Q5_*, IQ4_*, Q5_K): the low nibbles and the high ones (shifted down 4) each as 4 bytes, the Q5 fifth
 *     bits put in as bit 4 of each byte, or the IQ4 levels looked up by a byte shuffle; field s is byte s / 2
 *     of the one or the other, k = 8 (s / 2).
 *
 * The offsets (Q4_0's 8, Q5_0's 16, IQ4's 127 below: the levels are looked up as kvalues + 127, all unsigned;
 * MXFP4's 12, its levels E2M1 doubled, |level| <= 12)
 * and Q4_1's/Q5_1's mins multiply a per-lane sum of the x each lane meets, made by the rearrangement too:
 *   sum_i (d q_i + m) x_i = d sum_i q_i x_i + m sum_i x_i,
 * folded into the first multiply-add (offsets) or one more (mins) instead of summing x in every row.
 */
#include "x86_target.h"
#include "x86.h"

#if defined(__x86_64__)
#include <immintrin.h>
#include "k23_chunk_avx2.h"
#include "kq_scales_avx2.h"
#include "prefetch_ahead.h"
#include "simd_hsum.h"

/* x scale of field s in each form: the inverse of the factor the field converts with (a table: ldexpf per
 * value made the rearrangement, which runs before the product's threads start, 6 us for 2048 values). */
static const float nibble_scales[8] = { 1.0f, 0x1p-4f, 0x1p-8f, 0x1p-12f, 0x1p-16f, 0x1p-20f, 0x1p-24f, 1.0f };
static const float byte_scales[8] = { 1.0f, 1.0f, 0x1p-8f, 0x1p-8f, 0x1p-16f, 0x1p-16f, 1.0f, 1.0f };

static int64_t pairs_span(int64_t n)
{
    return cpu_fields_span(n, 8);
}

void cpu_prep_fields(const float *x, float *xp, int64_t n, int lanes, const float scale[8], float offset)
{
    const int64_t group = 8 * (int64_t)lanes;
    float *lane_sums = xp + cpu_fields_span(n, lanes);
    for (int64_t p = 0; group * p < n; p++) {
        float sums[16] = { 0 };
        for (int s = 0; s < 8; s++)
            for (int l = 0; l < lanes; l++) {
                const int64_t i = group * p + 32 * (l >> 2) + 4 * (l & 3) + s / 2 + 16 * (s & 1);
                const float v = i < n ? x[i] : 0.0f;
                xp[group * p + lanes * s + l] = v * scale[s];
                sums[l] += v;
            }
        for (int l = 0; l < lanes; l++)
            lane_sums[lanes * p + l] = offset * sums[l];
    }
}

static void prep_pairs(const float *x, float *xp, int64_t n, bool byte_form, float offset)
{
    cpu_prep_fields(x, xp, n, 8, byte_form ? byte_scales : nibble_scales, offset);
}

void cpu_dot_prep_pairs_q4_0(const float *x, float *xp, int64_t n) { prep_pairs(x, xp, n, false, -8.0f); }
void cpu_dot_prep_pairs_q4_1(const float *x, float *xp, int64_t n) { prep_pairs(x, xp, n, false, 1.0f); }
void cpu_dot_prep_pairs_q5_0(const float *x, float *xp, int64_t n) { prep_pairs(x, xp, n, true, -16.0f); }
void cpu_dot_prep_pairs_q5_1(const float *x, float *xp, int64_t n) { prep_pairs(x, xp, n, true, 1.0f); }
void cpu_dot_prep_pairs_iq4(const float *x, float *xp, int64_t n) { prep_pairs(x, xp, n, true, -127.0f); }
void cpu_dot_prep_pairs_mxfp4(const float *x, float *xp, int64_t n) { prep_pairs(x, xp, n, true, -12.0f); }

/* The 16 bytes at a in the low half, those at b (NULL: zeros, a lone last block) in the high half. */
X86_AVX2 static inline __m256i pair_load(const uint8_t *a, const uint8_t *b)
{
    const __m128i lo = _mm_loadu_si128((const __m128i *)a);
    return b ? _mm256_inserti128_si256(_mm256_castsi128_si256(lo), _mm_loadu_si128((const __m128i *)b), 1)
             : _mm256_zextsi128_si256(lo);
}

/* Two f16 at a and b (NULL: zero) as 4 lanes each. */
X86_AVX2 static inline __m256 pair_f16(const uint8_t *a, const uint8_t *b)
{
    const uint32_t h = (uint32_t)rd16(a) | (b ? (uint32_t)rd16(b) << 16 : 0);
    const __m128 f = _mm_cvtph_ps(_mm_cvtsi32_si128((int)h));
    return _mm256_permutevar8x32_ps(_mm256_castps128_ps256(f), _mm256_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1));
}

/* The 64 nibble-form values of v times xp (its 64 floats) in two chains of multiply-adds (one chain 8 deep
 * measured 4-7% slower): *even, fields 0, 2, 4, 6 added to s; *odd, fields 1, 3, 5, 7. */
X86_AVX2 static inline void nibble_chains(__m256i v, const float *xp, __m256 s, __m256 *even, __m256 *odd)
{
    __m256 t = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_srli_epi32(v, 28)), _mm256_loadu_ps(xp + 56));
#pragma GCC unroll 7
    for (int f = 0; f < 7; f++) {
        const __m256 p = _mm256_cvtepi32_ps(_mm256_and_si256(v, _mm256_set1_epi32(0xf << 4 * f)));
        if (f & 1)
            t = _mm256_fmadd_ps(p, _mm256_loadu_ps(xp + 8 * f), t);
        else
            s = _mm256_fmadd_ps(p, _mm256_loadu_ps(xp + 8 * f), s);
    }
    *even = s, *odd = t;
}

/* s + the pair's 64 values in the nibble form times xp. */
X86_AVX2 static inline __m256 fields_nibbles(__m256i v, const float *xp, __m256 s)
{
    __m256 even, odd;
    nibble_chains(v, xp, s, &even, &odd);
    return _mm256_add_ps(even, odd);
}

/* The byte-form values (lo: fields 0, 2, 4, 6 as bytes 0-3 of each lane; hi: fields 1, 3, 5, 7; every byte below
 * 2^7) times xp in two chains of multiply-adds, 4 deep each (one chain 8 deep measured 5% slower): *even, lo's
 * fields added to s; *odd, hi's. */
X86_AVX2 static inline void byte_chains(__m256i lo, __m256i hi, const float *xp, __m256 s, __m256 *even, __m256 *odd)
{
    __m256 t = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_srli_epi32(hi, 24)), _mm256_loadu_ps(xp + 56));
    s = _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_srli_epi32(lo, 24)), _mm256_loadu_ps(xp + 48), s);
#pragma GCC unroll 3
    for (int k = 0; k < 3; k++) {
        const __m256i m = _mm256_set1_epi32(0xff << 8 * k);
        s = _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_and_si256(lo, m)), _mm256_loadu_ps(xp + 16 * k), s);
        t = _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_and_si256(hi, m)), _mm256_loadu_ps(xp + 16 * k + 8), t);
    }
    *even = s, *odd = t;
}

/* s + the byte-form values times xp (both chains of byte_chains added). */
X86_AVX2 static inline __m256 fields_bytes(__m256i lo, __m256i hi, const float *xp, __m256 s)
{
    __m256 even, odd;
    byte_chains(lo, hi, xp, s, &even, &odd);
    return _mm256_add_ps(even, odd);
}

/* The low nibbles of every byte of v, and the high ones shifted down. */
X86_AVX2 static inline void split_nibbles(__m256i v, __m256i *lo, __m256i *hi)
{
    const __m256i mask = _mm256_set1_epi8(0x0f);
    *lo = _mm256_and_si256(v, mask);
    *hi = _mm256_and_si256(_mm256_srli_epi16(v, 4), mask);
}

/*
 * The Q5 fifth bits of a pair as bit 4 of the byte-form bytes: byte k of lane l is field 2k (lo) or 2k + 1
 * (hi), value 4 (l & 3) + k (+ 16) of its block, whose fifth bit is that bit of its 32-bit qh. Each byte
 * copies the qh byte holding its bit (byte (l & 3) / 2, + 2 for hi) and tests it.
 */
X86_AVX2 static inline void fifth_bits(const uint8_t *qh_a, const uint8_t *qh_b, __m256i *lo, __m256i *hi)
{
    const __m128i a = _mm_cvtsi32_si128((int)rd32(qh_a)), b = _mm_cvtsi32_si128(qh_b ? (int)rd32(qh_b) : 0);
    const __m256i q = _mm256_inserti128_si256(_mm256_castsi128_si256(a), b, 1);
    const __m256i pick_lo = _mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1,
                                             0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1);
    const __m256i pick_hi = _mm256_add_epi8(pick_lo, _mm256_set1_epi8(2));
    const __m256i bit = _mm256_set1_epi64x((long long)0x8040201008040201ull);
    const __m256i sixteen = _mm256_set1_epi8(0x10);
    const __m256i l = _mm256_and_si256(_mm256_shuffle_epi8(q, pick_lo), bit);
    const __m256i h = _mm256_and_si256(_mm256_shuffle_epi8(q, pick_hi), bit);
    *lo = _mm256_or_si256(*lo, _mm256_and_si256(_mm256_cmpeq_epi8(l, bit), sixteen));
    *hi = _mm256_or_si256(*hi, _mm256_and_si256(_mm256_cmpeq_epi8(h, bit), sixteen));
}

/* The pair's two scales as pair_f16 gives them, from MXFP4's E8M0 bytes (2^(e - 128)). */
X86_AVX2 static inline __m256 pair_e8m0(const uint8_t *a, const uint8_t *b)
{
    const __m128 lo = _mm_set1_ps(quant_e8m0_half(a[0])), hi = _mm_set1_ps(b ? quant_e8m0_half(b[0]) : 0.0f);
    return _mm256_insertf128_ps(_mm256_castps128_ps256(lo), hi, 1);
}

/* One row of a 32-value type: bytes per block; where m (or -1: none), qh (or -1) and qs sit; the levels its
 * nibbles pick (IQ4_NL's, MXFP4's; NULL: the nibbles themselves) and the offset that makes them unsigned (the
 * prep's lane sums carry minus it); whether d is MXFP4's E8M0 byte. */
typedef struct pair_layout {
    int block_bytes, m_at, qh_at, qs_at;
    const int8_t *levels;
    int8_t level_offset;
    bool e8m0;
} pair_layout;

X86_AVX2 static inline float dot_pairs(const uint8_t *b, const float *xp, int64_t n, pair_layout L)
{
    const float *lane_sums = xp + pairs_span(n);
    const __m256i levels = L.levels ? _mm256_broadcastsi128_si256(_mm_add_epi8(
                                          _mm_loadu_si128((const __m128i *)L.levels), _mm_set1_epi8(L.level_offset)))
                                    : _mm256_setzero_si256();
    __m256 acc = _mm256_setzero_ps(), macc = _mm256_setzero_ps();
    for (int64_t i = 0; i < n; i += 64, b += 2 * L.block_bytes, xp += 64, lane_sums += 8) {
        const uint8_t *c = i + 32 < n ? b + L.block_bytes : NULL; /* the pair's second block */
        prefetch_block_ahead(b, 2 * L.block_bytes, n);
        const __m256i v = pair_load(b + L.qs_at, c ? c + L.qs_at : NULL);
        const __m256 sums = _mm256_loadu_ps(lane_sums);
        const bool has_m = L.m_at >= 0;
        __m256 s = has_m ? _mm256_setzero_ps() : sums;
        if (L.qh_at < 0 && !L.levels) {
            s = fields_nibbles(v, xp, s);
        } else {
            __m256i lo, hi;
            split_nibbles(v, &lo, &hi);
            if (L.levels)
                lo = _mm256_shuffle_epi8(levels, lo), hi = _mm256_shuffle_epi8(levels, hi);
            else
                fifth_bits(b + L.qh_at, c ? c + L.qh_at : NULL, &lo, &hi);
            s = fields_bytes(lo, hi, xp, s);
        }
        acc = _mm256_fmadd_ps(s, L.e8m0 ? pair_e8m0(b, c) : pair_f16(b, c), acc);
        if (has_m)
            macc = _mm256_fmadd_ps(sums, pair_f16(b + L.m_at, c ? c + L.m_at : NULL), macc);
    }
    return quant_hsum8(_mm256_add_ps(acc, macc));
}

X86_AVX2 float cpu_dot_q4_0_avx2(const void *src, const float *xp, int64_t n)
{
    return dot_pairs(src, xp, n, (pair_layout){ 18, -1, -1, 2, NULL, 0, false });
}

X86_AVX2 float cpu_dot_q4_1_avx2(const void *src, const float *xp, int64_t n)
{
    return dot_pairs(src, xp, n, (pair_layout){ 20, 2, -1, 4, NULL, 0, false });
}

X86_AVX2 float cpu_dot_q5_0_avx2(const void *src, const float *xp, int64_t n)
{
    return dot_pairs(src, xp, n, (pair_layout){ 22, -1, 2, 6, NULL, 0, false });
}

X86_AVX2 float cpu_dot_q5_1_avx2(const void *src, const float *xp, int64_t n)
{
    return dot_pairs(src, xp, n, (pair_layout){ 24, 2, 4, 8, NULL, 0, false });
}

X86_AVX2 float cpu_dot_iq4_nl_avx2(const void *src, const float *xp, int64_t n)
{
    return dot_pairs(src, xp, n, (pair_layout){ 18, -1, -1, 2, quant_kvalues_iq4nl, 127, false });
}

/* MXFP4 [e:e8m0][qs:16]: IQ4_NL's nibble order with its own levels and scale. */
X86_AVX2 float cpu_dot_mxfp4_avx2(const void *src, const float *xp, int64_t n)
{
    return dot_pairs(src, xp, n, (pair_layout){ 17, -1, -1, 1, quant_kvalues_mxfp4, 12, true });
}

/*
 * IQ4_XS: per 256 values [d:f16][scales_h:u16][scales_l:4][qs:128]; sub-block j (32 values, 16 bytes of qs)
 * has the 6-bit scale ls_j (low 4 bits: nibble j of scales_l; high 2: bits 2j, 2j + 1 of scales_h) and
 * values d (ls_j - 32) kvalues[q]. Sub-blocks 2p and 2p + 1 are a pair, read in one load.
 */
X86_AVX2 float cpu_dot_iq4_xs_avx2(const void *src, const float *xp, int64_t n)
{
    const uint8_t *b = src;
    const float *lane_sums = xp + pairs_span(n);
    const __m256i levels = _mm256_broadcastsi128_si256(_mm_add_epi8(
        _mm_loadu_si128((const __m128i *)quant_kvalues_iq4nl), _mm_set1_epi8(127)));
    __m256 acc = _mm256_setzero_ps();
    const int64_t row = n;
    for (; n > 0; n -= 256, b += 136) {
        prefetch_block_ahead(b, 136, row);
        /* the 8 sub-block scales d (ls_j - 32), lane j */
        const __m256i low = _mm256_and_si256(_mm256_srlv_epi32(_mm256_set1_epi32((int)rd32(b + 4)),
                                                               _mm256_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28)),
                                             _mm256_set1_epi32(0xf));
        const __m256i high = _mm256_and_si256(_mm256_srlv_epi32(_mm256_set1_epi32((int)rd16(b + 2) << 4),
                                                                _mm256_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14)),
                                              _mm256_set1_epi32(0x30));
        const __m256 scales = _mm256_mul_ps(
            _mm256_cvtepi32_ps(_mm256_sub_epi32(_mm256_or_si256(low, high), _mm256_set1_epi32(32))),
            _mm256_set1_ps(_cvtsh_ss(rd16(b))));
        for (int p = 0; p < 4; p++, xp += 64, lane_sums += 8) {
            __m256i lo, hi;
            split_nibbles(_mm256_loadu_si256((const __m256i *)(b + 8 + 32 * p)), &lo, &hi);
            lo = _mm256_shuffle_epi8(levels, lo), hi = _mm256_shuffle_epi8(levels, hi);
            const __m256 s = fields_bytes(lo, hi, xp, _mm256_loadu_ps(lane_sums));
            const __m256i pick = _mm256_setr_epi32(2 * p, 2 * p, 2 * p, 2 * p, 2 * p + 1, 2 * p + 1, 2 * p + 1, 2 * p + 1);
            acc = _mm256_fmadd_ps(s, _mm256_permutevar8x32_ps(scales, pick), acc);
        }
    }
    return quant_hsum8(acc);
}

/*
 * Q4_K (ggml-common.h block_q4_K: d, dmin f16, 12 bytes of 6-bit scales and mins, qs[128]; the low nibbles of
 * qs[32j..32j+32) are group 2j of 32 values, the high ones group 2j + 1; y = d sc_g q - dmin m_g). Each 32 bytes
 * of qs are read in the nibble form: field s of lane l is value 64 j + 32 (s & 1) + 4 l + s / 2, so the even
 * fields are group 2j and the odd ones group 2j + 1, each summed in its own chain and scaled once. The mins
 * meet the group sums of x the rearrangement leaves after the n values: sum_g dmin m_g sum(x of g).
 */
/* The sum of x over each group of g values (g divides n), into sums: what the rearrangements leave after x. */
static void group_sums(const float *x, int64_t n, int g, float *sums)
{
    for (int64_t k = 0; k < n / g; k++) {
        float sum = 0.0f;
        for (int i = 0; i < g; i++)
            sum += x[g * k + i];
        sums[k] = sum;
    }
}

/* x in the order of the fields of Q4_K's / Q5_K's 32-byte loads (field s of lane l: value 32 (s & 1) + 4 l + s / 2
 * of the 64), each scaled for its form, then the 32-value group sums. */
static void prep_k_fields(const float *x, float *xp, int64_t n, const float scale[8])
{
    for (int64_t c = 0; c < n; c += 64)
        for (int s = 0; s < 8; s++)
            for (int l = 0; l < 8; l++)
                xp[c + 8 * s + l] = x[c + 32 * (s & 1) + 4 * l + s / 2] * scale[s];
    group_sums(x, n, 32, xp + n);
}

void cpu_dot_prep_fields_q4_k(const float *x, float *xp, int64_t n) { prep_k_fields(x, xp, n, nibble_scales); }
void cpu_dot_prep_fields_q5_k(const float *x, float *xp, int64_t n) { prep_k_fields(x, xp, n, byte_scales); }

/* d sc_g of block b's 8 groups into scales[0..7] and the block's sum of dmin m_g S_g into *mins, from its half
 * of the pair's scale bytes (sb) and its 8 group sums of x. The scales go through memory so that each group's
 * multiply-add takes its scale by a broadcast load (a load port) rather than a lane permute and its index vector
 * (three vector ops a group as GCC compiled it). */
X86_AVX2 static inline void q4_k_block_scales(const uint8_t *b, __m128i sb, const float *group_sums, float scales[8],
                                          __m256 *mins)
{
    const __m128 dd = _mm_cvtph_ps(_mm_cvtsi32_si128((int)rd32(b))); /* d, dmin */
    _mm256_store_ps(scales, _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(sb)), _mm256_broadcastss_ps(dd)));
    const __m256 m = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_srli_si128(sb, 8))),
                                   _mm256_broadcastss_ps(_mm_movehdup_ps(dd)));
    *mins = _mm256_fmadd_ps(m, _mm256_loadu_ps(group_sums), *mins);
}

/* The block's 256 values (its qs at b + 16) times its part of xp, each group scaled by scales[g]. */
X86_AVX2 static inline void q4_k_block(const uint8_t *b, const float *xp, const float scales[8], __m256 acc[2])
{
    for (int j = 0; j < 4; j++, xp += 64) {
        const __m256i v = _mm256_loadu_si256((const __m256i *)(b + 16 + 32 * j));
        __m256 even, odd;
        nibble_chains(v, xp, _mm256_setzero_ps(), &even, &odd);
        acc[0] = _mm256_fmadd_ps(even, _mm256_broadcast_ss(scales + 2 * j), acc[0]);
        acc[1] = _mm256_fmadd_ps(odd, _mm256_broadcast_ss(scales + 2 * j + 1), acc[1]);
    }
}

/*
 * Q5_K (ggml-common.h block_q5_K: d, dmin f16, the 12 scale bytes of Q4_K, qh[32], qs[128]; y = d sc_g q - dmin
 * m_g with q = the nibble + 16 times bit g of qh[i] for value i of the group, g's nibbles as Q4_K's) in the byte
 * form: each 32 bytes of qs split into their low nibbles (group 2j, fields 0, 2, 4, 6) and high ones (group
 * 2j + 1, fields 1, 3, 5, 7), the fifth bits put in as bit 4 of each byte. Byte k of lane l is value 4 l + k of
 * its group, whose fifth bit sits in qh[4 l + k]: byte k of lane l of qh's 32 bytes, at bit 2j (low) or 2j + 1
 * (high). x is read in Q4_K's order, scaled for the byte form.
 */
X86_AVX2 static inline void q5_k_block(const uint8_t *b, const float *xp, const float scales[8], __m256 acc[2])
{
    const __m256i low = _mm256_set1_epi8(0x0f), bit4 = _mm256_set1_epi8(0x10);
    __m256i h = _mm256_loadu_si256((const __m256i *)(b + 16)); /* shifted by 2 a step: groups 2j, 2j + 1 at bits 0, 1 */
    for (int j = 0; j < 4; j++, xp += 64, h = _mm256_srli_epi32(h, 2)) {
        const __m256i v = _mm256_loadu_si256((const __m256i *)(b + 48 + 32 * j));
        const __m256i lo = _mm256_or_si256(_mm256_and_si256(v, low), _mm256_and_si256(_mm256_slli_epi32(h, 4), bit4));
        const __m256i hi = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi32(v, 4), low),
                                           _mm256_and_si256(_mm256_slli_epi32(h, 3), bit4));
        __m256 even, odd;
        byte_chains(lo, hi, xp, _mm256_setzero_ps(), &even, &odd);
        acc[0] = _mm256_fmadd_ps(even, _mm256_broadcast_ss(scales + 2 * j), acc[0]);
        acc[1] = _mm256_fmadd_ps(odd, _mm256_broadcast_ss(scales + 2 * j + 1), acc[1]);
    }
}

/* Q4_K (block_bytes 144) or Q5_K (176), two blocks a step: their scales and mins unpacked together in SIMD
 * (kq_scales_avx2.h), where one group pair at a time in scalar code was half the instructions of the loop. */
X86_AVX2 static inline float dot_k_fields(const uint8_t *b, const float *xp, int64_t n, int block_bytes)
{
    const float *group_sums = xp + n;
    _Alignas(32) float scales[16];
    __m256 acc[2] = { _mm256_setzero_ps(), _mm256_setzero_ps() }, mins = _mm256_setzero_ps();
    for (int64_t i = 0; i < n; i += 2 * QK_K, b += 2 * block_bytes, xp += 2 * QK_K, group_sums += 16) {
        const bool pair = i + QK_K < n;
        prefetch_block_ahead(b, 2 * block_bytes, n);
        const __m256i sb = kq_scale_bytes_pair(b, pair ? b + block_bytes : b);
        q4_k_block_scales(b, _mm256_castsi256_si128(sb), group_sums, scales, &mins);
        if (pair)
            q4_k_block_scales(b + block_bytes, _mm256_extracti128_si256(sb, 1), group_sums + 8, scales + 8, &mins);
        for (int k = 0; k < (pair ? 2 : 1); k++)
            if (block_bytes == 144)
                q4_k_block(b + 144 * k, xp + QK_K * k, scales + 8 * k, acc);
            else
                q5_k_block(b + 176 * k, xp + QK_K * k, scales + 8 * k, acc);
    }
    return quant_hsum8(_mm256_sub_ps(_mm256_add_ps(acc[0], acc[1]), mins));
}

X86_AVX2 float cpu_dot_q4_k_avx2(const void *src, const float *xp, int64_t n) { return dot_k_fields(src, xp, n, 144); }
X86_AVX2 float cpu_dot_q5_k_avx2(const void *src, const float *xp, int64_t n) { return dot_k_fields(src, xp, n, 176); }

/*
 * Q6_K (ggml-common.h block_q6_K: ql[128], qh[64], scales[16] int8, d f16; y = d sc_g (q - 32), 16-value groups g)
 * in the byte form. Per 128-value half, value 32 k + i (chunk k = 0..3, i < 32) is the low (k < 2) or high
 * nibble of ql[32 (k & 1) + i] with bits 2k, 2k + 1 of qh[i] above it. Each chunk is assembled as 32 bytes whose
 * low 6 bits are q (the top two are left as they fall and masked off with the field), and field f of lane l,
 * value 4 l + f of the chunk, converts to q 2^(8 f): x is rearranged per chunk to xp[32 c + 8 f + l] =
 * x[32 c + 4 l + f] 2^(-8 f). Lanes 0-3 are group 2k of the half, lanes 4-7 group 2k + 1, so one lane-wise scale
 * vector serves a chunk. The -32 meets the 16-value sums of x the rearrangement leaves after the n values:
 *   sum_g d sc_g (A_g - 32 S_g), A_g = sum q x, S_g = sum x over g.
 * Against widening each 8 bytes to dwords (extract, shift, sign-extend) this is about 18 instructions per 32
 * values instead of 32.
 */
/* every field masked in place, the top one too: 6 bits never reach the sign */
static const float q6_scales[4] = { 1.0f, 0x1p-8f, 0x1p-16f, 0x1p-24f };

void cpu_dot_prep_fields_q6_k(const float *x, float *xp, int64_t n)
{
    for (int64_t c = 0; c < n; c += 32)
        for (int f = 0; f < 4; f++)
            for (int l = 0; l < 8; l++)
                xp[c + 8 * f + l] = x[c + 4 * l + f] * q6_scales[f];
    group_sums(x, n, 16, xp + n);
}

/* The chunk's 32 values (their low 6 bits; v) times its 32 floats of xp, lane-wise, in one chain of four: the
 * block's eight chunks are independent chains, so two per chunk only added an add. */
X86_AVX2 static inline __m256 q6_chunk(__m256i v, const float *xp)
{
    __m256 a = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_and_si256(v, _mm256_set1_epi32(0x3f))), _mm256_loadu_ps(xp));
    a = _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_and_si256(v, _mm256_set1_epi32(0x3f00))), _mm256_loadu_ps(xp + 8), a);
    a = _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_and_si256(v, _mm256_set1_epi32(0x3f0000))), _mm256_loadu_ps(xp + 16), a);
    return _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_and_si256(v, _mm256_set1_epi32(0x3f000000))), _mm256_loadu_ps(xp + 24), a);
}

X86_AVX2 float cpu_dot_q6_k_avx2(const void *src, const float *xp, int64_t n)
{
    const float *sums = xp + n;
    const __m256i low = _mm256_set1_epi8(0x0f);
    __m256 tot[2] = { _mm256_setzero_ps(), _mm256_setzero_ps() }, offs = _mm256_setzero_ps();
    const int64_t row = n;
    for (const uint8_t *b = src; n > 0; n -= QK_K, b += 210, xp += QK_K, sums += 16) {
        prefetch_block_ahead(b, 210, row);
        const __m256 d = _mm256_set1_ps(_cvtsh_ss(rd16(b + 208)));
        const __m256 ds[2] = {
            _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *)(b + 192)))), d),
            _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *)(b + 200)))), d),
        };
        offs = _mm256_fmadd_ps(ds[0], _mm256_loadu_ps(sums), offs);
        offs = _mm256_fmadd_ps(ds[1], _mm256_loadu_ps(sums + 8), offs);
        for (int h = 0; h < 2; h++) {
            const __m256i ql0 = _mm256_loadu_si256((const __m256i *)(b + 64 * h));
            const __m256i ql1 = _mm256_loadu_si256((const __m256i *)(b + 64 * h + 32));
            const __m256i qh = _mm256_loadu_si256((const __m256i *)(b + 128 + 32 * h));
            /* low nibble from ql, bits 4-5 from qh's bits 2k, 2k + 1 moved there (andnot keeps qh's upper nibble) */
            const __m256i v[4] = {
                _mm256_or_si256(_mm256_and_si256(ql0, low), _mm256_andnot_si256(low, _mm256_slli_epi16(qh, 4))),
                _mm256_or_si256(_mm256_and_si256(ql1, low), _mm256_andnot_si256(low, _mm256_slli_epi16(qh, 2))),
                _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(ql0, 4), low), _mm256_andnot_si256(low, qh)),
                _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(ql1, 4), low),
                                _mm256_andnot_si256(low, _mm256_srli_epi16(qh, 2))),
            };
            for (int k = 0; k < 4; k++) {
                const __m256i pick = _mm256_setr_epi32(2 * k, 2 * k, 2 * k, 2 * k, 2 * k + 1, 2 * k + 1, 2 * k + 1, 2 * k + 1);
                tot[k & 1] = _mm256_fmadd_ps(q6_chunk(v[k], xp + 128 * h + 32 * k), _mm256_permutevar8x32_ps(ds[h], pick),
                                             tot[k & 1]);
            }
        }
    }
    return quant_hsum8(_mm256_fnmadd_ps(offs, _mm256_set1_ps(32.0f), _mm256_add_ps(tot[0], tot[1])));
}


/*
 * Q2_K and Q3_K in Q6_K's chunks (x prepared by cpu_dot_prep_fields_q6_k): each 32 bytes of 2-bit quants hold
 * four chunks of 32 values, chunk s at bits 2s of every byte (ggml-common.h block_q2_K / block_q3_K; value i of
 * the chunk is byte i, lanes 0-3 its first 16-value group and lanes 4-7 its second, as in Q6_K). A chunk's values
 * are shifted down to the bottom of each byte and go through q6_chunk's byte fields: where the bytes had been
 * widened to dwords and converted 16 at a time, about 23 vector operations per 32 values, this is 16 (Q2_K) and
 * 19 (Q3_K).
 *
 * Q2_K: y = d sc_g q - dmin m_g, so sum_g (d sc_g A_g - dmin m_g S_g) with S_g the group sums of x.
 */
/* The f16 at f times the 16 small integers v (bytes; sign-extended where is_signed) as floats, 8 a vector: a
 * block's group scales (d sc_g) or mins, kept in registers. */
X86_AVX2 static inline void scaled16(__m128i v, bool is_signed, const uint8_t *f, __m256 out[2])
{
    const __m256 d = _mm256_set1_ps(_cvtsh_ss(rd16(f)));
    const __m128i hi = _mm_srli_si128(v, 8);
    out[0] = _mm256_mul_ps(_mm256_cvtepi32_ps(is_signed ? _mm256_cvtepi8_epi32(v) : _mm256_cvtepu8_epi32(v)), d);
    out[1] = _mm256_mul_ps(_mm256_cvtepi32_ps(is_signed ? _mm256_cvtepi8_epi32(hi) : _mm256_cvtepu8_epi32(hi)), d);
}

X86_AVX2 float cpu_dot_q2_k_avx2(const void *src, const float *xp, int64_t n)
{
    const float *sums = xp + n;
    const __m256i three = _mm256_set1_epi8(3);
    __m256 tot[2] = { _mm256_setzero_ps(), _mm256_setzero_ps() }, mins = _mm256_setzero_ps();
    const int64_t row = n;
    for (const uint8_t *b = src; n > 0; n -= QK_K, b += 84, xp += QK_K, sums += 16) {
        prefetch_block_ahead(b, 84, row);
        const __m128i sm = _mm_loadu_si128((const __m128i *)b), low4 = _mm_set1_epi8(0x0f);
        __m256 ds[2], ms[2];
        scaled16(_mm_and_si128(sm, low4), false, b + 80, ds);
        scaled16(_mm_and_si128(_mm_srli_epi16(sm, 4), low4), false, b + 82, ms);
        mins = _mm256_fmadd_ps(ms[0], _mm256_loadu_ps(sums), mins);
        mins = _mm256_fmadd_ps(ms[1], _mm256_loadu_ps(sums + 8), mins);
        for (int h = 0; h < 2; h++) {
            __m256i q = _mm256_loadu_si256((const __m256i *)(b + 16 + 32 * h));
            const __m256 dsh = ds[h];
            for (int s = 0; s < 4; s++, q = _mm256_srli_epi16(q, 2)) {
                const __m256i pick = _mm256_setr_epi32(2 * s, 2 * s, 2 * s, 2 * s, 2 * s + 1, 2 * s + 1, 2 * s + 1, 2 * s + 1);
                tot[s & 1] = _mm256_fmadd_ps(q6_chunk(_mm256_and_si256(q, three), xp + 128 * h + 32 * s),
                                             _mm256_permutevar8x32_ps(dsh, pick), tot[s & 1]);
            }
        }
    }
    return quant_hsum8(_mm256_sub_ps(_mm256_add_ps(tot[0], tot[1]), mins));
}

/* Bit c of every byte of hm at bit 2 (the result's other bits as they fall): the count is c's, not a constant. */
X86_AVX2 static inline __m256i hbit_at_2(__m256i hm, int c)
{
    return c < 2 ? _mm256_sll_epi16(hm, _mm_cvtsi32_si128(2 - c)) : _mm256_srl_epi16(hm, _mm_cvtsi32_si128(c - 2));
}

/*
 * Q3_K: value = its 2 bits - 4 where bit c (the chunk) of its hmask byte is clear, i.e. (the 2 bits + 4 h) - 4
 * with h that bit: the chunk's bytes are made the 3-bit v = q + 4 h (0..7), and the -4 meets the group sums:
 * sum_g d sc_g (A_g - 4 S_g), A_g = sum v x.
 */
X86_AVX2 float cpu_dot_q3_k_avx2(const void *src, const float *xp, int64_t n)
{
    const float *sums = xp + n;
    const __m256i three = _mm256_set1_epi8(3), four = _mm256_set1_epi8(4);
    __m256 tot[2] = { _mm256_setzero_ps(), _mm256_setzero_ps() }, offs = _mm256_setzero_ps();
    const int64_t row = n;
    for (const uint8_t *b = src; n > 0; n -= QK_K, b += 110, xp += QK_K, sums += 16) {
        prefetch_block_ahead(b, 110, row);
        __m256 ds[2];
        scaled16(quant_q3k_scales16(b + 96), true, b + 108, ds);
        offs = _mm256_fmadd_ps(ds[0], _mm256_loadu_ps(sums), offs);
        offs = _mm256_fmadd_ps(ds[1], _mm256_loadu_ps(sums + 8), offs);
        const __m256i hm = _mm256_loadu_si256((const __m256i *)b);
        for (int h = 0; h < 2; h++) {
            __m256i q = _mm256_loadu_si256((const __m256i *)(b + 32 + 32 * h));
            const __m256 dsh = ds[h];
            for (int s = 0; s < 4; s++, q = _mm256_srli_epi16(q, 2)) {
                const __m256i v = _mm256_or_si256(_mm256_and_si256(q, three),
                                                  _mm256_and_si256(hbit_at_2(hm, 4 * h + s), four));
                const __m256i pick = _mm256_setr_epi32(2 * s, 2 * s, 2 * s, 2 * s, 2 * s + 1, 2 * s + 1, 2 * s + 1, 2 * s + 1);
                tot[s & 1] = _mm256_fmadd_ps(q6_chunk(v, xp + 128 * h + 32 * s), _mm256_permutevar8x32_ps(dsh, pick),
                                             tot[s & 1]);
            }
        }
    }
    return quant_hsum8(_mm256_fnmadd_ps(offs, _mm256_set1_ps(4.0f), _mm256_add_ps(tot[0], tot[1])));
}

#endif
