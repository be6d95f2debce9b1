/*
 * The K-quants' fused dots at the AVX-512 level (Q2_K .. Q6_K): each weight row against x as its prep function
 * rearranged it, decoded in registers (the matrix-vector path of generation).
 */
#include "x86.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#include "kq_scales_avx2.h"
#include "k23_chunk_avx2.h"
#include "prefetch_ahead.h"
#include "f16_scale_avx512.h"

/*
 * The fused dots below turn each weight into a float with no shuffle and no
 * shift: AND-ing a 64-byte load with a mask that keeps one field of every
 * 32-bit lane (a nibble at bits 4s for Q4_K, a byte at bits 8j for Q6_K, and
 * for Q5_K, Q2_K and Q3_K once a shift has put their bits into bytes)
 * leaves the integer q 2^(4s) (q 2^(8j)), which one vcvt(u)dq2ps makes an
 * exact float; x was scaled once by the inverse power of two when it was
 * rearranged, so the FMA forms q x with a single rounding. On Zen 4 AND runs
 * on any vector pipe and the conversion on a different pipe from the FMA, so
 * the three overlap; the earlier shift + ternary-logic form put the
 * ternary-logic op on the FMA pipes and ran ~20% slower, and was less exact
 * (it multiplied 1 + q/16 and subtracted the sum of x afterwards).
 */

/* 2^-k for 0 <= k < 32: multiplying by it is exact for any normal result. */
static inline float pow2_neg(int k)
{
    return 1.0f / (float)(1u << k);
}


/* sums[k] = x[g k] + ... + x[g k + g - 1], g = 16 or 32: the group sums the prepared x carries after its n values. */
X86_AVX512 static void group_sums(const float *x, int64_t n, int g, float *sums)
{
    for (int64_t k = 0; k < n / g; k++) {
        __m512 v = _mm512_loadu_ps(x + g * k);
        if (g == 32)
            v = _mm512_add_ps(v, _mm512_loadu_ps(x + g * k + 16));
        sums[k] = _mm512_reduce_add_ps(v);
    }
}

/* scale * [lo[j], lo[4 + j], ..., lo[28 + j], hi[j], hi[4 + j], ..., hi[28 + j]]: x read at stride 4 from two
 * runs of 32, the gather both preparations below are made of (the scalar loops they replace cost ~1% of a
 * decode step on the 1.1B shape, with the other thread waiting). */
X86_AVX512 static inline __m512 stride4_pick(const float *lo, const float *hi, int j, float scale)
{
    const __m512i idx = _mm512_add_epi32(_mm512_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28, 0, 4, 8, 12, 16, 20, 24, 28),
                                         _mm512_set1_epi32(j));
    const __m512 a = _mm512_permutex2var_ps(_mm512_loadu_ps(lo), idx, _mm512_loadu_ps(lo + 16));
    const __m512 b = _mm512_permutex2var_ps(_mm512_loadu_ps(hi), idx, _mm512_loadu_ps(hi + 16));
    return _mm512_mul_ps(_mm512_mask_blend_ps(0xff00, a, b), _mm512_set1_ps(scale));
}

/*
 * Q4_K. Lane l of load L (64 bytes of qs), nibble s, is value
 * 64 c + 32 (s & 1) + 4 (l & 7) + s / 2 with c = 2 L + (l >= 8), so x is
 * rearranged into that order and scaled by 2^-4s (exact: a power of two; only
 * |x| < 2^-98 would lose bits, far below anything an activation carries).
 * Per 32-value group k, with A_k = sum q x and S_k = sum x:
 *   sum (d sc_k q - dmin m_k) x = d sc_k A_k - dmin m_k S_k.
 * Block layout: ggml-common.h block_q4_K (d, dmin, 12 scale bytes, 128 of qs;
 * the low nibbles of qs[32j..32j+32) are group 2j, the high ones 2j+1).
 */
/* x in that order, field s scaled by 2^-(shift s) (Q4_K's nibbles: shift 4; Q5_K's bytes below: fields 2k, 2k + 1
 * both byte k, so shift(s) = 8 (s / 2)). */
X86_AVX512 static void prep_k_fields(const float *x, float *xp, int64_t n, bool bytes)
{
    for (int64_t b = 0; b < n; b += QK_K)
        for (int load = 0; load < 2; load++)
            for (int s = 0; s < 8; s++) {
                const float *lo = x + b + 128 * load + 32 * (s & 1);
                _mm512_storeu_ps(xp + b + 128 * load + 16 * s,
                                 stride4_pick(lo, lo + 64, s / 2, pow2_neg(bytes ? 8 * (s / 2) : 4 * s)));
            }
    group_sums(x, n, 32, xp + n);
}

X86_AVX512 void cpu_dot_prep_q4_k(const float *x, float *xp, int64_t n) { prep_k_fields(x, xp, n, false); }
X86_AVX512 void cpu_dot_prep_q5_k(const float *x, float *xp, int64_t n) { prep_k_fields(x, xp, n, true); }

/* For blocks a and b: lanes 0-7 d sc_k, lanes 8-15 dmin m_k (d and dmin are the blocks' first two halves). */
X86_AVX512 static inline void q4_k_scales(const uint8_t *a, const uint8_t *b, __m512 *ga, __m512 *gb)
{
    const __m512i halves = _mm512_setr_epi32(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1);
    const __m512 dd = _mm512_castps128_ps512(_mm_cvtph_ps(_mm_insert_epi32(_mm_cvtsi32_si128((int)rd32(a)), (int)rd32(b), 1)));
    const __m256i sb = kq_scale_bytes_pair(a, b);
    *ga = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(_mm256_castsi256_si128(sb))),
                        _mm512_permutexvar_ps(halves, dd));
    *gb = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(_mm256_extracti128_si256(sb, 1))),
                        _mm512_permutexvar_ps(_mm512_add_epi32(halves, _mm512_set1_epi32(2)), dd));
}

/* Nibble s of every lane of v as the float q 2^(4s); for Q5_K, the five bits of byte k as q 2^(8k). */
#define Q4_FIELD(v, s) _mm512_cvtepu32_ps(_mm512_and_si512(v, _mm512_set1_epi32((int)(0xfu << (4 * (s))))))
#define Q5_FIELD(v, k) _mm512_cvtepu32_ps(_mm512_and_si512(v, _mm512_set1_epi32((int)(0x1fu << (8 * (k))))))

/*
 * Block b (256 values; xp its part of the prepared x, sums its 8 group sums) with its scales g into the running
 * sums. five: a Q5_K block (d, dmin, the scale bytes as Q4_K's, then qh[32] and qs[128]; value i of group g gets
 * 16 from bit g of qh[i]), read in the byte form: each load's low nibbles and high ones as the bytes of two
 * vectors, bit 4 of each byte its fifth bit; byte k of lane l in the low vector is nibble 2k of Q4_K's form, so x
 * is Q4_K's order with the byte form's scales, and the groups and scales stay as they are.
 */
X86_AVX512 static inline __attribute__((always_inline)) void q4_k_block(const uint8_t *b, const float *xp, const float *sums,
                                                                       __m512 g, int64_t row, bool five, __m512 acc[3])
{
    const __m512i halves_by_2 = _mm512_setr_epi32(0, 0, 0, 0, 0, 0, 0, 0, 2, 2, 2, 2, 2, 2, 2, 2);
    /* Lanes 0-7 of the even nibbles of load 0 are group 0, lanes 8-15 group 2; odd: 1 and 3; load 1: +4. */
    const __m512i g_even = _mm512_setr_epi32(0, 0, 0, 0, 0, 0, 0, 0, 2, 2, 2, 2, 2, 2, 2, 2);
    const __m512i g_odd = _mm512_add_epi32(g_even, _mm512_set1_epi32(1)), four = _mm512_set1_epi32(4);
    /* the group sums in lanes 8-15 against the mins; lanes 0-7 load nothing and stay zero */
    acc[2] = _mm512_fmadd_ps(g, _mm512_maskz_loadu_ps(0xff00, sums - 8), acc[2]);
    prefetch_block_ahead(b, five ? 176 : 144, row);
    const __m512i low_nibbles = _mm512_set1_epi8(0x0f);
    /* Q5_K's qh (b + 16), each 256-bit half against the lanes of that half of a load (unused for Q4_K) */
    const __m512i qh = five ? _mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i *)(b + 16))) : low_nibbles;
    for (int load = 0; load < 2; load++) {
        const float *xl = xp + 128 * load;
        /* field s: nibble s of v (Q4_K), or byte s / 2 of lo (s even) or hi (s odd) (Q5_K); even fields in e,
         * odd ones in o */
        __m512i v = _mm512_loadu_si512(b + (five ? 48 : 16) + 64 * load), lo = v, hi = v;
        if (five) {
            /* fifth bits of groups 4 load (+ 2 in lanes 8-15) and the next at bits 0 and 1 of each byte, moved to
             * bit 4 under the low nibbles and the high ones (0xCA: the nibble mask selects between the two) */
            const __m512i h = _mm512_srlv_epi32(qh, _mm512_add_epi32(_mm512_set1_epi32(4 * load), halves_by_2));
            lo = _mm512_ternarylogic_epi32(low_nibbles, v, _mm512_slli_epi32(h, 4), 0xCA);
            hi = _mm512_ternarylogic_epi32(low_nibbles, _mm512_srli_epi32(v, 4), _mm512_slli_epi32(h, 3), 0xCA);
        }
        __m512 e = _mm512_setzero_ps(), o = _mm512_setzero_ps();
#pragma GCC unroll 8
        for (int s = 0; s < 8; s++) {
            const __m512 f = five ? Q5_FIELD(s & 1 ? hi : lo, s / 2) : Q4_FIELD(v, s);
            const __m512 xs = _mm512_loadu_ps(xl + 16 * s);
            if (s & 1)
                o = s < 2 ? _mm512_mul_ps(f, xs) : _mm512_fmadd_ps(f, xs, o);
            else
                e = s < 2 ? _mm512_mul_ps(f, xs) : _mm512_fmadd_ps(f, xs, e);
        }
        const __m512i ge = load ? _mm512_add_epi32(g_even, four) : g_even;
        const __m512i go = load ? _mm512_add_epi32(g_odd, four) : g_odd;
        acc[0] = _mm512_fmadd_ps(e, _mm512_permutexvar_ps(ge, g), acc[0]);
        acc[1] = _mm512_fmadd_ps(o, _mm512_permutexvar_ps(go, g), acc[1]);
    }
}

/* Q4_K (five false) or Q5_K rows, two blocks a step (their scales unpacked together) and an odd block out. */
X86_AVX512 static inline float dot_k(const uint8_t *b, const float *xp, int64_t n, bool five)
{
    const int bytes = five ? 176 : 144;
    const float *sums = xp + n;
    /* the even-nibble and odd-nibble sums, and the mins against the group sums */
    __m512 acc[3] = { _mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps() };
    const int64_t row = n;
    __m512 ga, gb;
    for (; n >= 2 * QK_K; n -= 2 * QK_K, b += 2 * bytes, xp += 2 * QK_K, sums += 16) {
        q4_k_scales(b, b + bytes, &ga, &gb);
        q4_k_block(b, xp, sums, ga, row, five, acc);
        q4_k_block(b + bytes, xp + QK_K, sums + 8, gb, row, five, acc);
    }
    if (n > 0) { /* an odd block out */
        q4_k_scales(b, b, &ga, &gb);
        q4_k_block(b, xp, sums, ga, row, five, acc);
    }
    return _mm512_reduce_add_ps(_mm512_add_ps(acc[0], acc[1])) - _mm512_reduce_add_ps(acc[2]);
}

X86_AVX512 float cpu_dot_q4_k_avx512(const void *src, const float *xp, int64_t n) { return dot_k(src, xp, n, false); }
X86_AVX512 float cpu_dot_q5_k_avx512(const void *src, const float *xp, int64_t n) { return dot_k(src, xp, n, true); }
#undef Q4_FIELD
#undef Q5_FIELD

/*
 * Q6_K. The six-bit values of half a block (64 bytes of ql, 32 of qh) are
 * assembled into 128 bytes, byte i being value i, with two shifts and a
 * bit-select each: low nibble or high nibble of ql[i] under bits 4-5 taken
 * from qh (qh[l] holds bits 4-5 of values l, l+32, l+64, l+96 in its bit
 * pairs 0-3; the 32 qh bytes are broadcast to both 256-bit halves and the
 * upper half shifted by 2, so one vector serves values 0-63 and, shifted by
 * 4, values 64-127). Bits 6-7 are left over and masked off per field. As
 * 16 lanes of 4 bytes a 64-value chunk holds value 4 l + j in lane l, byte j,
 * so x is read as 16 j + l, scaled by 2^-8j (cpu_dot_prep_q6_k), and lanes
 * 4g..4g+3 are the 16-value group g with its own scale. With A_g = sum q x
 * and S_g = sum x over group g:
 *   sum d sc_g (q - 32) x = d sc_g (A_g - 32 S_g).
 * Block layout: ggml-common.h block_q6_K (ql[128], qh[64], scales[16], d).
 */
X86_AVX512 void cpu_dot_prep_q6_k(const float *x, float *xp, int64_t n)
{
    for (int64_t c = 0; c < n; c += 64)
        for (int j = 0; j < 4; j++)
            _mm512_storeu_ps(xp + c + 16 * j, stride4_pick(x + c, x + c + 32, j, pow2_neg(8 * j)));
    group_sums(x, n, 16, xp + n);
}

/* Byte j of every lane of v (six bits of it) as the float q 2^(8j). */
#define Q6_FIELD(v, j) _mm512_cvtepi32_ps(_mm512_and_si512(v, _mm512_set1_epi32(0x3f << (8 * (j)))))

X86_AVX512 float cpu_dot_q6_k_avx512(const void *src, const float *xp, int64_t n)
{
    const __m512i group = _mm512_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3);
    const __m512i low_nibbles = _mm512_set1_epi8(0x0f), upper_by_2 = _mm512_setr_epi32(0, 0, 0, 0, 0, 0, 0, 0, 2, 2, 2, 2, 2, 2, 2, 2);
    const float *sums = xp + n;
    __m512 tot0 = _mm512_setzero_ps(), tot1 = _mm512_setzero_ps(), offs = _mm512_setzero_ps();
    const int64_t row = n;
    for (const uint8_t *b = src; n > 0; n -= QK_K, b += 210, xp += QK_K, sums += 16) {
        /* d sc_g for the 16 groups */
        const __m512 ds = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128((const __m128i *)(b + 192)))),
                                        _mm512_set1_ps(scale_f16(b + 208)));
        offs = _mm512_fmadd_ps(ds, _mm512_loadu_ps(sums), offs);
        prefetch_block_ahead(b, 210, row);
        for (int half = 0; half < 2; half++) {
            const __m512i ql = _mm512_loadu_si512(b + 64 * half);
            const __m512i qh = _mm512_srlv_epi32(_mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i *)(b + 128 + 32 * half))),
                                                 upper_by_2);
            /* select (0x0f: ql bits, else qh bits): 0xCA = (a & b) | (~a & c) with a the mask */
            const __m512i v[2] = {
                _mm512_ternarylogic_epi32(low_nibbles, ql, _mm512_slli_epi32(qh, 4), 0xCA),
                _mm512_ternarylogic_epi32(low_nibbles, _mm512_srli_epi32(ql, 4), qh, 0xCA),
            };
            for (int m = 0; m < 2; m++) {
                const float *xc = xp + 128 * half + 64 * m;
                __m512 a = _mm512_mul_ps(Q6_FIELD(v[m], 0), _mm512_loadu_ps(xc));
                a = _mm512_fmadd_ps(Q6_FIELD(v[m], 1), _mm512_loadu_ps(xc + 16), a);
                a = _mm512_fmadd_ps(Q6_FIELD(v[m], 2), _mm512_loadu_ps(xc + 32), a);
                a = _mm512_fmadd_ps(Q6_FIELD(v[m], 3), _mm512_loadu_ps(xc + 48), a);
                const __m512 sc = _mm512_permutexvar_ps(_mm512_add_epi32(group, _mm512_set1_epi32(8 * half + 4 * m)), ds);
                if (m)
                    tot1 = _mm512_fmadd_ps(a, sc, tot1);
                else
                    tot0 = _mm512_fmadd_ps(a, sc, tot0);
            }
        }
    }
    return _mm512_reduce_add_ps(_mm512_add_ps(tot0, tot1)) - 32.0f * _mm512_reduce_add_ps(offs);
}
#undef Q6_FIELD


/*
 * Q2_K and Q3_K (ggml-common.h block_q2_K: scales[16], qs[64], d, dmin; block_q3_K: hmask[32], qs[64],
 * scales[12], d) in Q6_K's byte fields. A 64-byte load of qs holds both 128-value halves, half h in lanes 8h..8h+7;
 * chunk s (0..3) of a half is bits 2s of every byte, byte k of lane l its value 32 s + 4 (l & 7) + k, so lanes
 * 4g'..4g'+3 are one 16-value group (groups 2s, 2s + 1, 8 + 2s, 9 + 2s). The load shifted down 2s gives the chunk
 * at bits 0-1 of each byte (the bits above are masked off per field); Q3_K's hmask bit (bit c = 4 h + s of the
 * value's hmask byte; value = the 2 bits - 4 where it is clear) is rotated to bit 2 and put in by a ternary select,
 * making v = q + 4 h, and its -4 meets the group sums: sum_g d sc_g (A_g - 4 S_g). Q2_K's mins likewise:
 * sum_g (d sc_g A_g - dmin m_g S_g).
 */
X86_AVX512 void cpu_dot_prep_q23_k(const float *x, float *xp, int64_t n)
{
    for (int64_t b = 0; b < n; b += QK_K)
        for (int s = 0; s < 4; s++)
            for (int k = 0; k < 4; k++)
                _mm512_storeu_ps(xp + b + 64 * s + 16 * k,
                                 stride4_pick(x + b + 32 * s, x + b + 128 + 32 * s, k, pow2_neg(8 * k)));
    group_sums(x, n, 16, xp + n);
}

/* The chunk's 64 values (v: bits under mask in each byte) times its 64 floats of xp, lane-wise, one chain. */
X86_AVX512 static inline __m512 q23_chunk(__m512i v, const float *xc, int mask)
{
    __m512 a = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_and_si512(v, _mm512_set1_epi32(mask))), _mm512_loadu_ps(xc));
    for (int k = 1; k < 4; k++)
        a = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_and_si512(v, _mm512_set1_epi32(mask << 8 * k))),
                            _mm512_loadu_ps(xc + 16 * k), a);
    return a;
}

/* Q2_K (three false) or Q3_K rows. */
X86_AVX512 static inline __attribute__((always_inline)) float dot_q23_k(const uint8_t *b, const float *xp, int64_t n,
                                                                        bool three)
{
    const __m512i group = _mm512_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1, 8, 8, 8, 8, 9, 9, 9, 9);
    /* rotations taking bit c = 4 h + s of each byte to bit 2: right by c - 2, for s = 0 */
    const __m512i rot0 = _mm512_setr_epi32(30, 30, 30, 30, 30, 30, 30, 30, 2, 2, 2, 2, 2, 2, 2, 2);
    const int bytes = three ? 110 : 84, qs_at = three ? 32 : 16;
    const float *sums = xp + n;
    __m512 tot0 = _mm512_setzero_ps(), tot1 = _mm512_setzero_ps(), offs = _mm512_setzero_ps();
    const int64_t row = n;
    for (; n > 0; n -= QK_K, b += bytes, xp += QK_K, sums += 16) {
        prefetch_block_ahead(b, bytes, row);
        /* the 16 groups' d sc_g (and Q2_K's dmin m_g) in registers: through the float arrays of the AVX2 dots,
         * each 512-bit load met two 256-bit stores it could not be forwarded from */
        __m512 dsv, msv;
        if (three) {
            dsv = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(quant_q3k_scales16(b + 96))),
                                _mm512_set1_ps(scale_f16(b + 108)));
        } else {
            const __m128i sm = _mm_loadu_si128((const __m128i *)b), low4 = _mm_set1_epi8(0x0f);
            dsv = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(_mm_and_si128(sm, low4))),
                                _mm512_set1_ps(scale_f16(b + 80)));
            msv = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(_mm_and_si128(_mm_srli_epi16(sm, 4), low4))),
                                _mm512_set1_ps(scale_f16(b + 82)));
        }
        /* Q3_K: the -4 against d sc_g S_g; Q2_K: the mins against dmin m_g S_g */
        offs = _mm512_fmadd_ps(three ? dsv : msv, _mm512_loadu_ps(sums), offs);
        const __m512i q = _mm512_loadu_si512(b + qs_at);
        const __m512i hm = three ? _mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i *)b)) : q;
        for (int s = 0; s < 4; s++) {
            const __m512i qs = _mm512_srli_epi32(q, 2 * s);
            __m512i v = qs;
            if (three) {
                const __m512i rot = _mm512_and_si512(_mm512_add_epi32(rot0, _mm512_set1_epi32(s)), _mm512_set1_epi32(31));
                /* 0xCA: bits 0-1 (the mask 0x03) from qs, the rest from the rotated hmask */
                v = _mm512_ternarylogic_epi32(_mm512_set1_epi8(3), qs, _mm512_rorv_epi32(hm, rot), 0xCA);
            }
            const __m512 a = q23_chunk(v, xp + 64 * s, three ? 7 : 3);
            const __m512 sc = _mm512_permutexvar_ps(_mm512_add_epi32(group, _mm512_set1_epi32(2 * s)), dsv);
            if (s & 1)
                tot1 = _mm512_fmadd_ps(a, sc, tot1);
            else
                tot0 = _mm512_fmadd_ps(a, sc, tot0);
        }
    }
    const float off = _mm512_reduce_add_ps(offs);
    return _mm512_reduce_add_ps(_mm512_add_ps(tot0, tot1)) - (three ? 4.0f * off : off);
}

X86_AVX512 float cpu_dot_q2_k_avx512(const void *src, const float *xp, int64_t n) { return dot_q23_k(src, xp, n, false); }
X86_AVX512 float cpu_dot_q3_k_avx512(const void *src, const float *xp, int64_t n) { return dot_q23_k(src, xp, n, true); }

#endif
