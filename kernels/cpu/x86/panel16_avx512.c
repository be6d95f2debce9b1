/*
 * Panel decoders: 16 rows' blocks decoded straight into a GEMM's k-major panel (panel[k * 16 + r], value k of row
 * r), as kernels/cpu/gemm.c multiplies it. Decoding rows and then transposing them wrote every float and read it
 * back, with a 16 x 16 float transpose per 16 values (SmolLM2 Q4_0 prompts: 10 % of the time). Here the 16 rows'
 * bytes are moved once so that one dword holds 4 bytes of one row, and each value is then made for the 16 rows at
 * once, in the lanes of one zmm. The operations per value are the scalar decoder's (dequant_legacy.c,
 * dequant_k.c, dequant_iq.c): small integers made floats exactly (by a table lookup, vpermps, where the bits
 * index one), then the same multiply and subtract in the same order, so every float is its bit for bit (test_quant
 * checks each against it).
 */
#include "x86_target.h"
#include "x86.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#include "nibble_lookup_avx512.h"

#define INLINE static inline __attribute__((always_inline))

/* Dword r = the 4 bytes at p + r * rb, for the 16 rows: scalar loads put together in registers, in place of one
 * vpgatherdd (microcoded on AMD's cores). One thread on Zen 5, SmolLM2-shaped Q4_0 rows: the same 0.60 ns per
 * decoded zmm with the rows hot, 2.2 -> 1.8 ns streamed from memory; SmolLM2 Q5_0 pp64 (two per block: d and
 * qh) x1.023 in 5 interleaved rounds, Q4_0 x1.007, gemma-3-270m (mostly Q5_0) x1.008. */
X86_AVX512 INLINE __m512i rows_dword(const uint8_t *p, uint64_t rb)
{
    __m128i q[4];
    for (int i = 0; i < 4; i++) {
        const uint8_t *r = p + (uint64_t)(4 * i) * rb;
        q[i] = _mm_setr_epi32((int)rd32(r), (int)rd32(r + rb), (int)rd32(r + 2 * rb), (int)rd32(r + 3 * rb));
    }
    return _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_set_m128i(q[1], q[0])), _mm256_set_m128i(q[3], q[2]), 1);
}

/* dw[g]: dword r = bytes 4g..4g+3 of the 16 bytes at p + r * rb, for the 16 rows. Z[q] holds rows 4q..4q+3, one
 * per 128-bit lane: dword 4l + g is bytes 4g..4g+3 of row 4q + l (indices 16 and up name the second source). The
 * first permutes take dwords g = 2p and 2p + 1 of 8 rows (Z[0], Z[1] or Z[2], Z[3]) into positions 8h + r (row r's
 * dword 2p + h); the second join the two groups of 8 rows: position r <- position 8p + r % 8 of the first group
 * (r < 8) or of the second. 16 loads and 8 two-source permutes for 16 rows' 16 bytes. */
X86_AVX512 INLINE void rows_bytes16(const uint8_t *p, uint64_t rb, __m512i dw[4])
{
    const __m512i first0 = _mm512_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28, 1, 5, 9, 13, 17, 21, 25, 29);
    const __m512i first1 = _mm512_setr_epi32(2, 6, 10, 14, 18, 22, 26, 30, 3, 7, 11, 15, 19, 23, 27, 31);
    const __m512i second0 = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23);
    const __m512i second1 = _mm512_setr_epi32(8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31);
    __m512i z[4];
    for (int q = 0; q < 4; q++) {
        const uint8_t *r = p + (uint64_t)(4 * q) * rb;
        z[q] = _mm512_castsi128_si512(_mm_loadu_si128((const __m128i *)r));
        z[q] = _mm512_inserti32x4(z[q], _mm_loadu_si128((const __m128i *)(r + rb)), 1);
        z[q] = _mm512_inserti32x4(z[q], _mm_loadu_si128((const __m128i *)(r + 2 * rb)), 2);
        z[q] = _mm512_inserti32x4(z[q], _mm_loadu_si128((const __m128i *)(r + 3 * rb)), 3);
    }
    const __m512i lo01 = _mm512_permutex2var_epi32(z[0], first0, z[1]);
    const __m512i hi01 = _mm512_permutex2var_epi32(z[0], first1, z[1]);
    const __m512i lo23 = _mm512_permutex2var_epi32(z[2], first0, z[3]);
    const __m512i hi23 = _mm512_permutex2var_epi32(z[2], first1, z[3]);
    dw[0] = _mm512_permutex2var_epi32(lo01, second0, lo23);
    dw[1] = _mm512_permutex2var_epi32(lo01, second1, lo23);
    dw[2] = _mm512_permutex2var_epi32(hi01, second0, hi23);
    dw[3] = _mm512_permutex2var_epi32(hi01, second1, hi23);
}

/* Byte j (0..15) of the rows_bytes16 form, at the bottom of each lane (the bits above are the next bytes'). */
X86_AVX512 INLINE __m512i byte_at(const __m512i dw[4], int j)
{
    return _mm512_srli_epi32(dw[j / 4], 8 * (j % 4));
}

/* The 16 rows' f16 at bits 16h of each lane as floats. */
X86_AVX512 INLINE __m512 half_at(__m512i v, int h)
{
    return _mm512_cvtph_ps(_mm512_cvtepi32_epi16(h ? _mm512_srli_epi32(v, 16) : v));
}

/* The integer lanes v as floats scaled by d (d * (float)v, the scalar decoders' block scales). */
X86_AVX512 INLINE __m512 scaled(__m512 d, __m512i v)
{
    return _mm512_mul_ps(d, _mm512_cvtepi32_ps(v));
}

/* The 32-value types (block_q4_0 ... block_q5_1, block_iq4_nl). Each value is looked up for the 16 rows at once
 * (table, + 16 for a fifth bit, * d, + m). d (and m, and qh) come by 16 scalar loads per block (rows_dword).
 * Inlined into each type's entry, so that its form is a constant and the steps it has no part in (m, qh) leave
 * no tests or register copies behind: 0.58 -> 0.54 ns per decoded zmm (Q4_0, hot rows, one thread), 0.86 -> 0.79
 * for Q5_0. */
X86_AVX512 INLINE void panel16_nibbles(const uint8_t *base, uint64_t rb, int64_t k0, int64_t kc, float *panel,
                                   quant_nibble_form F)
{
    const __m512 table = quant_nibble_table_avx512(F), sixteen = _mm512_set1_ps(16.0f);
    for (int64_t k = k0; k < k0 + kc; k += 32, panel += 32 * 16) {
        const uint8_t *b = base + (uint64_t)(k / 32) * (uint64_t)F.block_bytes;
        const __m512i dm = rows_dword(b, rb); /* d, then m where the type has one (m_at 2) */
        const __m512 d = half_at(dm, 0), m = F.m_at >= 0 ? half_at(dm, 1) : _mm512_setzero_ps();
        const __m512i qh = F.qh_at >= 0 ? rows_dword(b + F.qh_at, rb) : _mm512_setzero_si512();
        __m512i dw[4];
        rows_bytes16(b + F.qs_at, rb, dw);
#pragma GCC unroll 16
        for (int j = 0; j < 16; j++) {
            const __m512i idx = byte_at(dw, j); /* vpermps reads the low 4 bits */
            __m512 lo = _mm512_permutexvar_ps(idx, table), hi = _mm512_permutexvar_ps(_mm512_srli_epi32(idx, 4), table);
            if (F.qh_at >= 0) {
                lo = _mm512_mask_add_ps(lo, _mm512_test_epi32_mask(qh, _mm512_set1_epi32(1 << j)), lo, sixteen);
                hi = _mm512_mask_add_ps(hi, _mm512_test_epi32_mask(qh, _mm512_set1_epi32((int)(1u << (j + 16)))), hi,
                                        sixteen);
            }
            lo = _mm512_mul_ps(lo, d);
            hi = _mm512_mul_ps(hi, d);
            if (F.m_at >= 0) {
                lo = _mm512_add_ps(lo, m);
                hi = _mm512_add_ps(hi, m);
            }
            _mm512_storeu_ps(panel + j * 16, lo);
            _mm512_storeu_ps(panel + (j + 16) * 16, hi);
        }
    }
}

X86_AVX512 void cpu_panel16_q4_0_avx512(const void *base, uint64_t rb, int64_t k0, int64_t kc, float *panel)
{
    panel16_nibbles(base, rb, k0, kc, panel, quant_nibble_forms[QUANT_NIB_Q4_0]);
}

X86_AVX512 void cpu_panel16_q4_1_avx512(const void *base, uint64_t rb, int64_t k0, int64_t kc, float *panel)
{
    panel16_nibbles(base, rb, k0, kc, panel, quant_nibble_forms[QUANT_NIB_Q4_1]);
}

X86_AVX512 void cpu_panel16_q5_0_avx512(const void *base, uint64_t rb, int64_t k0, int64_t kc, float *panel)
{
    panel16_nibbles(base, rb, k0, kc, panel, quant_nibble_forms[QUANT_NIB_Q5_0]);
}

X86_AVX512 void cpu_panel16_q5_1_avx512(const void *base, uint64_t rb, int64_t k0, int64_t kc, float *panel)
{
    panel16_nibbles(base, rb, k0, kc, panel, quant_nibble_forms[QUANT_NIB_Q5_1]);
}

X86_AVX512 void cpu_panel16_iq4_nl_avx512(const void *base, uint64_t rb, int64_t k0, int64_t kc, float *panel)
{
    panel16_nibbles(base, rb, k0, kc, panel, quant_nibble_forms[QUANT_NIB_IQ4_NL]);
}

/* The 16 rows' scale and min of group j of a Q4_K / Q5_K block (kq_scale_min's bits, lane-wise) from its header
 * as rows_bytes16 leaves it (bytes 0-3: d, dmin; 4-15: the 12 scale bytes), multiplied out as the scalar decoder
 * does: d * sc and dmin * m. */
X86_AVX512 INLINE void k45_group(const __m512i h[4], int j, __m512 d, __m512 dmin, __m512 *dl, __m512 *ml)
{
    const __m512i six = _mm512_set1_epi32(63), four = _mm512_set1_epi32(15), two = _mm512_set1_epi32(3);
    __m512i sc, m;
    if (j < 4) {
        sc = _mm512_and_si512(byte_at(h, 4 + j), six);
        m = _mm512_and_si512(byte_at(h, 8 + j), six);
    } else {
        const __m512i lows = byte_at(h, 8 + j); /* scale bytes j + 4: sc's low nibble, then m's */
        const __m512i top_sc = _mm512_and_si512(_mm512_srli_epi32(byte_at(h, j), 6), two);
        const __m512i top_m = _mm512_and_si512(_mm512_srli_epi32(byte_at(h, 4 + j), 6), two);
        sc = _mm512_or_si512(_mm512_and_si512(lows, four), _mm512_slli_epi32(top_sc, 4));
        m = _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi32(lows, 4), four), _mm512_slli_epi32(top_m, 4));
    }
    *dl = scaled(d, sc);
    *ml = scaled(dmin, m);
}

/* Q4_K (five false) and Q5_K: 8 groups of 32, group 2c in the low nibbles of qs[32c .. 32c + 32), group 2c + 1 in
 * their high nibbles; Q5_K's fifth bit of value l of group g is bit g of qh[l]. */
X86_AVX512 INLINE void panel16_k45(const uint8_t *base, uint64_t rb, int64_t k0, int64_t kc, float *panel, bool five)
{
    const uint64_t block_bytes = five ? 176 : 144, qs_at = five ? 48 : 16;
    const __m512 ramp = quant_ramp_avx512(0.0f), sixteen = _mm512_set1_ps(16.0f);
    for (int64_t k = k0; k < k0 + kc; k += QK_K, panel += QK_K * 16) {
        const uint8_t *b = base + (uint64_t)(k / QK_K) * block_bytes;
        __m512i h[4], qh[2][4];
        rows_bytes16(b, rb, h);
        const __m512 d = half_at(h[0], 0), dmin = half_at(h[0], 1);
        if (five) {
            rows_bytes16(b + 16, rb, qh[0]);
            rows_bytes16(b + 32, rb, qh[1]);
        }
        for (int c = 0; c < 4; c++) {
            __m512 d1, m1, d2, m2;
            k45_group(h, 2 * c, d, dmin, &d1, &m1);
            k45_group(h, 2 * c + 1, d, dmin, &d2, &m2);
            for (int half = 0; half < 2; half++) {
                __m512i q[4];
                rows_bytes16(b + qs_at + 32 * c + 16 * half, rb, q);
                float *out = panel + (64 * c + 16 * half) * 16;
#pragma GCC unroll 16
                for (int j = 0; j < 16; j++) {
                    const __m512i idx = byte_at(q, j);
                    __m512 lo = _mm512_permutexvar_ps(idx, ramp);
                    __m512 hi = _mm512_permutexvar_ps(_mm512_srli_epi32(idx, 4), ramp);
                    if (five) {
                        const __m512i bits = byte_at(qh[half], j);
                        lo = _mm512_mask_add_ps(lo, _mm512_test_epi32_mask(bits, _mm512_set1_epi32(1 << 2 * c)), lo,
                                                sixteen);
                        hi = _mm512_mask_add_ps(hi, _mm512_test_epi32_mask(bits, _mm512_set1_epi32(2 << 2 * c)), hi,
                                                sixteen);
                    }
                    _mm512_storeu_ps(out + j * 16, _mm512_sub_ps(_mm512_mul_ps(d1, lo), m1));
                    _mm512_storeu_ps(out + (32 + j) * 16, _mm512_sub_ps(_mm512_mul_ps(d2, hi), m2));
                }
            }
        }
    }
}

X86_AVX512 void cpu_panel16_q4_k_avx512(const void *base, uint64_t rb, int64_t k0, int64_t kc, float *panel)
{
    panel16_k45(base, rb, k0, kc, panel, false);
}

X86_AVX512 void cpu_panel16_q5_k_avx512(const void *base, uint64_t rb, int64_t k0, int64_t kc, float *panel)
{
    panel16_k45(base, rb, k0, kc, panel, true);
}

/* Q6_K: per 128-value half, value 16a + j (a = 0..3) is the low nibble of ql[16a + j] with two bits of
 * qh[16 (a % 2) + j] on top (bits 0-1 for a < 2, bits 2-3 after), and value 64 + 16a + j its high nibble with the
 * next two bits up; minus 32, times d * sc[v / 16] (the scalar decoder's order). The value is made a float as two
 * lookups added: the nibble, and 16 x the two bits - 32 (a table whose entries repeat for the bits above). */
X86_AVX512 void cpu_panel16_q6_k_avx512(const void *base, uint64_t rb, int64_t k0, int64_t kc, float *panel)
{
    const __m512 ramp = quant_ramp_avx512(0.0f);
    const __m512 tops = _mm512_setr_ps(-32, -16, 0, 16, -32, -16, 0, 16, -32, -16, 0, 16, -32, -16, 0, 16);
    for (int64_t k = k0; k < k0 + kc; k += QK_K, panel += QK_K * 16) {
        const uint8_t *b = (const uint8_t *)base + (uint64_t)(k / QK_K) * 210;
        __m512i sc[4];
        rows_bytes16(b + 192, rb, sc); /* the 16 int8 scales */
        const __m512 d = half_at(rows_dword(b + 206, rb), 1); /* d is the block's last 2 bytes */
        for (int half = 0; half < 2; half++) {
            __m512i qh[2][4];
            rows_bytes16(b + 128 + 32 * half, rb, qh[0]);
            rows_bytes16(b + 144 + 32 * half, rb, qh[1]);
            for (int a = 0; a < 4; a++) {
                __m512i q[4];
                rows_bytes16(b + 64 * half + 16 * a, rb, q);
                const int s_lo = 8 * half + a, s_hi = s_lo + 4, top_shift = 2 * (a / 2);
                /* sign-extended byte s of the scales */
                const __m512i v_lo = _mm512_srai_epi32(_mm512_slli_epi32(sc[s_lo / 4], 24 - 8 * (s_lo % 4)), 24);
                const __m512i v_hi = _mm512_srai_epi32(_mm512_slli_epi32(sc[s_hi / 4], 24 - 8 * (s_hi % 4)), 24);
                const __m512 dl_lo = scaled(d, v_lo), dl_hi = scaled(d, v_hi);
                float *out = panel + (128 * half + 16 * a) * 16;
#pragma GCC unroll 16
                for (int j = 0; j < 16; j++) {
                    const __m512i idx = byte_at(q, j);
                    const __m512i top = _mm512_srli_epi32(byte_at(qh[a % 2], j), top_shift);
                    const __m512 lo = _mm512_add_ps(_mm512_permutexvar_ps(idx, ramp), _mm512_permutexvar_ps(top, tops));
                    const __m512 hi = _mm512_add_ps(_mm512_permutexvar_ps(_mm512_srli_epi32(idx, 4), ramp),
                                                    _mm512_permutexvar_ps(_mm512_srli_epi32(top, 4), tops));
                    _mm512_storeu_ps(out + j * 16, _mm512_mul_ps(dl_lo, lo));
                    _mm512_storeu_ps(out + (64 + j) * 16, _mm512_mul_ps(dl_hi, hi));
                }
            }
        }
    }
}

/* IQ4_XS: group ib of 32 is IQ4_NL's layout (qs[16 ib ..], value j low nibble, 16 + j high) looked up in its
 * levels, times d (ls - 32), ls the group's 4 bits of scales_l and 2 of scales_h. */
X86_AVX512 void cpu_panel16_iq4_xs_avx512(const void *base, uint64_t rb, int64_t k0, int64_t kc, float *panel)
{
    const __m512 table = quant_iq4_table_avx512();
    const __m512i four = _mm512_set1_epi32(15), two = _mm512_set1_epi32(3), bias = _mm512_set1_epi32(32);
    for (int64_t k = k0; k < k0 + kc; k += QK_K, panel += QK_K * 16) {
        const uint8_t *b = (const uint8_t *)base + (uint64_t)(k / QK_K) * 136;
        const __m512i dh = rows_dword(b, rb), low = rows_dword(b + 4, rb); /* d, scales_h; scales_l */
        const __m512 d = half_at(dh, 0);
        for (int ib = 0; ib < 8; ib++) {
            const __m512i ls = _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi32(low, 4 * ib), four),
                                               _mm512_slli_epi32(_mm512_and_si512(_mm512_srli_epi32(dh, 16 + 2 * ib), two), 4));
            const __m512 dl = scaled(d, _mm512_sub_epi32(ls, bias));
            __m512i q[4];
            rows_bytes16(b + 8 + 16 * ib, rb, q);
            float *out = panel + 32 * ib * 16;
#pragma GCC unroll 16
            for (int j = 0; j < 16; j++) {
                const __m512i idx = byte_at(q, j);
                _mm512_storeu_ps(out + j * 16, _mm512_mul_ps(dl, _mm512_permutexvar_ps(idx, table)));
                _mm512_storeu_ps(out + (16 + j) * 16,
                                 _mm512_mul_ps(dl, _mm512_permutexvar_ps(_mm512_srli_epi32(idx, 4), table)));
            }
        }
    }
}

/* Q2_K (three false) and Q3_K: per 128-value half, 32 bytes of qs hold four runs of 32 values, run s at bits 2s of
 * every byte, value 32s + i of the half from byte i; group (16 values) 8 half + 2s + i / 16. Q2_K: dl q - ml with
 * dl = d (sc & 15), ml = dmin (sc >> 4) from the group's scale byte. Q3_K: dl (q - 4 where the value's hmask bit,
 * bit 4 half + s of hmask[i], is clear), dl = d (sc6 - 32); that bit is put in as bit 2 of the lookup's index
 * (the table's entries repeat for bit 3). */
X86_AVX512 INLINE void panel16_k23(const uint8_t *base, uint64_t rb, int64_t k0, int64_t kc, float *panel, bool three)
{
    const uint64_t block_bytes = three ? 110 : 84, qs_at = three ? 32 : 16;
    const __m512 table = three ? _mm512_setr_ps(-4, -3, -2, -1, 0, 1, 2, 3, -4, -3, -2, -1, 0, 1, 2, 3)
                               : _mm512_setr_ps(0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3);
    const __m512i four = _mm512_set1_epi32(15), two = _mm512_set1_epi32(3), bias = _mm512_set1_epi32(32);
    for (int64_t k = k0; k < k0 + kc; k += QK_K, panel += QK_K * 16) {
        const uint8_t *b = base + (uint64_t)(k / QK_K) * block_bytes;
        /* Q2_K: the 16 scale bytes. Q3_K: bytes 94..109, so that the 12 scale bytes (96..107) and d (108) are read
         * without passing the block's end: scale byte x is byte x + 2 here */
        __m512i s[4], hm[2][4];
        rows_bytes16(b + (three ? 94 : 0), rb, s);
        const __m512i dd = three ? s[3] : rows_dword(b + 80, rb);
        const __m512 d = half_at(dd, three), dmin = half_at(dd, 1);
        if (three) {
            rows_bytes16(b, rb, hm[0]);
            rows_bytes16(b + 16, rb, hm[1]);
        }
        for (int half = 0; half < 2; half++) {
            __m512i q[2][4];
            rows_bytes16(b + qs_at + 32 * half, rb, q[0]);
            rows_bytes16(b + qs_at + 32 * half + 16, rb, q[1]);
            for (int sh = 0; sh < 4; sh++) {
                /* Q3_K: the run's hmask bit (4 half + sh of each byte) rotated to bit 2 of its byte */
                const __m512i turn = _mm512_set1_epi32((4 * half + sh - 2) & 31);
                for (int p = 0; p < 2; p++) {
                    const int g = 8 * half + 2 * sh + p;
                    __m512 dl, ml = _mm512_setzero_ps();
                    if (three) {
                        /* quant_q3k_scales: low 4 bits from byte g (g < 8) or the high nibble of byte g - 8, top 2
                         * bits at 2 (g / 4) of byte 8 + g % 4 */
                        const __m512i lo = _mm512_and_si512(_mm512_srli_epi32(byte_at(s, 2 + g % 8), 4 * (g / 8)), four);
                        const __m512i hi = _mm512_and_si512(_mm512_srli_epi32(byte_at(s, 10 + g % 4), 2 * (g / 4)), two);
                        dl = scaled(d, _mm512_sub_epi32(_mm512_or_si512(lo, _mm512_slli_epi32(hi, 4)), bias));
                    } else {
                        const __m512i sc = byte_at(s, g);
                        dl = scaled(d, _mm512_and_si512(sc, four));
                        ml = scaled(dmin, _mm512_and_si512(_mm512_srli_epi32(sc, 4), four));
                    }
                    __m512i hbits[4];
                    for (int g4 = 0; three && g4 < 4; g4++)
                        hbits[g4] = _mm512_rorv_epi32(hm[p][g4], turn);
                    float *out = panel + (128 * half + 32 * sh + 16 * p) * 16;
#pragma GCC unroll 16
                    for (int j = 0; j < 16; j++) {
                        __m512i idx = _mm512_srli_epi32(byte_at(q[p], j), 2 * sh);
                        if (three) /* bits 0-1 from qs, the rest from the rotated hmask */
                            idx = _mm512_ternarylogic_epi32(idx, byte_at(hbits, j), two, 0xE4);
                        const __m512 v = _mm512_mul_ps(dl, _mm512_permutexvar_ps(idx, table));
                        _mm512_storeu_ps(out + j * 16, three ? v : _mm512_sub_ps(v, ml));
                    }
                }
            }
        }
    }
}

X86_AVX512 void cpu_panel16_q2_k_avx512(const void *base, uint64_t rb, int64_t k0, int64_t kc, float *panel)
{
    panel16_k23(base, rb, k0, kc, panel, false);
}

X86_AVX512 void cpu_panel16_q3_k_avx512(const void *base, uint64_t rb, int64_t k0, int64_t kc, float *panel)
{
    panel16_k23(base, rb, k0, kc, panel, true);
}

#endif
