/*
 * --numerics ggml dots of the 32-value types (Q4_0, Q5_0, Q8_0, IQ4_NL, MXFP4 against Q8_0; Q4_1, Q5_1 against Q8_1)
 * against activation rows prepared once per row (act_dot_prep): with AVX-512 VNNI two blocks per 512-bit
 * vpdpbusd, with AVX2 one per maddubs + madd.
 *
 * Both multiply unsigned weight bytes by signed activation bytes, so the quants go in as unsigned values
 * u = w + offset (Q4_0: the nibble, offset 8; Q5_0: 16; Q8_0: w ^ 0x80, 128; IQ4_NL / MXFP4: levels + 128, 128;
 * Q4_1 / Q5_1: the nibble itself, 0), and -offset times the sum of the 4 activations each lane meets is
 * added back. That correction, the activation quants and their scales as f32 are written once per
 * activation row by the prep, which every weight row then reads. With AVX2, where maddubs would saturate on
 * bytes past 127, Q8_0, IQ4_NL and MXFP4 keep their signed quants (the sign of w moved onto a) and no correction.
 * MXFP4's scale is one E8M0 byte, halved as ggml's GGML_E8M0_TO_FP32_HALF (its levels are E2M1 doubled).
 *
 * Each dword lane ends holding sum(w * a) over the same 4 values as ggml's 8 lanes per block
 * (ggml-cpu/arch/x86/quants.c: mul_sum_i8_pairs_float), the same integers, and the f32 part is ggml's:
 * per block, acc += (d_w * d_a) * lanes in 8-lane registers, block after block, then its 8-lane sum, plus
 * Q4_1/Q5_1's m * s added in block order. So the two levels agree bit for bit (test_act).
 */
#include "x86_target.h"
#include "x86.h"

#if defined(__x86_64__)
#include <immintrin.h>

#include "act_unpack_avx2.h"
#include "nibble_lookup_avx512.h"
#include "prefetch_ahead.h"
#include "row_sums.h"
#include "simd_hsum.h"


/* Where a weight block's parts lie (quant_nibble_forms; Q8_0 is [d][qs:32]), and the offset its quants carry as
 * unsigned bytes: the nibble types' -offset (8, 16, or 0 with a min), 128 for IQ4_NL's levels and Q8_0's
 * signed bytes. The VNNI form uses every offset, the AVX2 one only the nibble types'. */
typedef struct legacy_form {
    int block_bytes, qs_at, qh_at, m_at; /* -1: none */
    uint8_t offset;
    bool with_min;                       /* against Q8_1: m * s per block */
} legacy_form;

static inline legacy_form form_of(legacy_kind k)
{
    static const int nibble_form_of[] = { [LEG_Q4_0] = QUANT_NIB_Q4_0, [LEG_Q5_0] = QUANT_NIB_Q5_0,
                                          [LEG_IQ4_NL] = QUANT_NIB_IQ4_NL, [LEG_Q4_1] = QUANT_NIB_Q4_1,
                                          [LEG_Q5_1] = QUANT_NIB_Q5_1 };
    if (k == LEG_Q8_0)
        return (legacy_form){ 34, 2, -1, -1, 128, false };
    if (k == LEG_MXFP4) /* [e:e8m0][qs:16], IQ4_NL's nibble order */
        return (legacy_form){ 17, 1, -1, -1, 128, false };
    const quant_nibble_form N = quant_nibble_forms[nibble_form_of[k]];
    return (legacy_form){ N.block_bytes, N.qs_at, N.qh_at, N.m_at, N.iq4 ? 128 : (uint8_t)-N.offset, N.m_at >= 0 };
}

/* The prepared activation row for nb blocks in np = ceil(nb / 2) pairs (the last pair padded with zeros):
 *   quants   np x 64 bytes   the two blocks' 32 quants each, as they meet one 512-bit register of weights
 *   corr     np x 16 int32   -offset * (sum of the 4 quants of each lane)
 *   scales   np x 4 f32      d of each block, then Q8_1's s of each block (0 against Q8_0) */
#define PREP_QUANTS(y, np, p) ((y) + 64 * (p))
#define PREP_CORR(y, np, p) ((y) + 64 * (np) + 64 * (p))
#define PREP_SCALES(y, np, p) ((y) + 128 * (np) + 16 * (p))

static int64_t pairs_of(int64_t n)
{
    return (n / 32 + 1) / 2;
}

uint64_t cpu_act_prep_bytes_legacy(int64_t n)
{
    return (uint64_t)pairs_of(n) * (64 + 64 + 16);
}

static void prep_legacy(const legacy_form F, const uint8_t *a, uint8_t *dst, int64_t n)
{
    const int64_t nb = n / 32, np = pairs_of(n);
    const int qa = F.with_min ? 4 : 2, ab = F.with_min ? 36 : 34;
    memset(dst, 0, cpu_act_prep_bytes_legacy(n));
    for (int64_t i = 0; i < nb; i++, a += ab) {
        const int64_t p = i / 2, h = i % 2;
        const int8_t *q = (const int8_t *)(a + qa);
        memcpy(PREP_QUANTS(dst, np, p) + 32 * h, q, 32);
        int32_t corr[8];
        for (int lane = 0; lane < 8; lane++)
            corr[lane] = -(int32_t)F.offset * (q[4 * lane] + q[4 * lane + 1] + q[4 * lane + 2] + q[4 * lane + 3]);
        memcpy(PREP_CORR(dst, np, p) + 32 * h, corr, sizeof corr);
        const float d = rdf16(a), s = F.with_min ? rdf16(a + 2) : 0.0f;
        memcpy(PREP_SCALES(dst, np, p) + 4 * h, &d, 4);
        memcpy(PREP_SCALES(dst, np, p) + 8 + 4 * h, &s, 4);
    }
}

#define PREP_ENTRY_POINT(name, kind)                                                  \
    void cpu_act_prep_##name(const void *a, void *dst, int64_t n)                   \
    {                                                                                 \
        prep_legacy(form_of(kind), a, dst, n);                                        \
    }
PREP_ENTRY_POINT(q8_0_offset8, LEG_Q4_0)
PREP_ENTRY_POINT(q8_0_offset16, LEG_Q5_0)
PREP_ENTRY_POINT(q8_0_offset128, LEG_Q8_0)
PREP_ENTRY_POINT(q8_1, LEG_Q4_1)

/* Whether the kind's quants are signed levels (no offset in the AVX2 form), and a block's scale d as f32. */
static inline bool signed_levels(legacy_kind k)
{
    return k == LEG_Q8_0 || k == LEG_IQ4_NL || k == LEG_MXFP4;
}

X86_AVX2 static INLINE float block_d(legacy_kind k, const uint8_t *blk)
{
    return k == LEG_MXFP4 ? quant_e8m0_half(blk[0]) : f16c(blk);
}

/* The unsigned quants of block b (lanes 0-1 of the result) and, when `two`, of the block after it (lanes
 * 2-3); a block past the row is never read. */
X86_AVX512_VNNI static INLINE __m512i quants_of(legacy_kind k, const uint8_t *b, bool two)
{
    const legacy_form F = form_of(k);
    const uint8_t *b1 = b + F.block_bytes;
    if (k == LEG_Q8_0) {
        const __m256i lo = _mm256_loadu_si256((const __m256i *)(b + 2));
        const __m256i hi = two ? _mm256_loadu_si256((const __m256i *)(b1 + 2)) : _mm256_setzero_si256();
        return _mm512_xor_si512(_mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1), _mm512_set1_epi8((char)0x80));
    }
    /* each block's 16 nibble bytes twice, the second copy shifted down 4: values 0-15 then 16-31 */
    const __m256i t0 = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)(b + F.qs_at)));
    const __m256i t1 = two ? _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)(b1 + F.qs_at)))
                           : _mm256_setzero_si256();
    const __m512i t = _mm512_inserti64x4(_mm512_castsi256_si512(t0), t1, 1);
    __m512i q = _mm512_and_si512(_mm512_srlv_epi64(t, _mm512_setr_epi64(0, 0, 4, 4, 0, 0, 4, 4)),
                                 _mm512_set1_epi8(0x0f));
    if (F.qh_at >= 0) { /* Q5: bit j of qh is value j's fifth bit */
        const uint64_t bits = rd32(b + F.qh_at) | (two ? (uint64_t)rd32(b1 + F.qh_at) << 32 : 0);
        q = _mm512_mask_add_epi8(q, (__mmask64)bits, q, _mm512_set1_epi8(16));
    }
    if (k == LEG_IQ4_NL || k == LEG_MXFP4) { /* levels + 128 = levels ^ 0x80 as bytes */
        const __m128i kv = _mm_loadu_si128((const __m128i *)(k == LEG_MXFP4 ? quant_kvalues_mxfp4 : quant_kvalues_iq4nl));
        const __m512i table = _mm512_xor_si512(_mm512_broadcast_i32x4(kv), _mm512_set1_epi8((char)0x80));
        q = _mm512_shuffle_epi8(table, q);
    }
    return q;
}

/* ggml's f32 part for block h (0, 1) of pair p of the weight row at b: acc += (d_w * d_a) * lanes, and Q4_1 /
 * Q5_1's m * s. sc: the prepared row's 4 scales of the pair. */
X86_AVX2 static INLINE void add_block(legacy_kind k, const uint8_t *b, int h, const float *sc, __m256i lanes,
                                  __m256 *acc, float *mins)
{
    const legacy_form F = form_of(k);
    const uint8_t *blk = b + h * F.block_bytes;
    *acc = _mm256_fmadd_ps(_mm256_set1_ps(block_d(k, blk) * sc[h]), _mm256_cvtepi32_ps(lanes), *acc);
    if (F.with_min)
        *mins += f16c(blk + F.m_at) * sc[2 + h];
}

/* Pair p of the weight row at b (two blocks, or only the first where !two) against nt prepared activation rows
 * at a, a + as, ...: with VNNI both blocks in one vpdpbusd. */
X86_AVX512_VNNI static INLINE void pair_vnni(legacy_kind k, const uint8_t *b, bool two, const uint8_t *a, uint64_t as, int nt,
                                  int64_t np, int64_t p, __m256 *acc, float *mins)
{
    const legacy_form F = form_of(k);
    const __m512i q = quants_of(k, b, two);
    for (int t = 0; t < nt; t++) {
        const uint8_t *y = a + t * as;
        const __m512i init = F.offset ? _mm512_loadu_si512(PREP_CORR(y, np, p)) : _mm512_setzero_si512();
        const __m512i lanes = _mm512_dpbusd_epi32(init, q, _mm512_loadu_si512(PREP_QUANTS(y, np, p)));
        const float *sc = (const float *)PREP_SCALES(y, np, p);
        add_block(k, b, 0, sc, _mm512_castsi512_si256(lanes), &acc[t], &mins[t]);
        if (two)
            add_block(k, b, 1, sc, _mm512_extracti64x4_epi64(lanes, 1), &acc[t], &mins[t]);
    }
}

/* With AVX2, block by block: unsigned nibbles through maddubs plus the correction, or (Q8_0, IQ4_NL) signed
 * quants with their sign moved onto the activations. Block h of pair p of the prepared row y against the block's
 * quants q (|q| in qabs): ggml's 8 lanes. */
X86_AVX2 static INLINE __m256i block_lanes_avx2(legacy_kind k, __m256i q, __m256i qabs, const uint8_t *y, int64_t np,
                                            int64_t p, int h)
{
    const bool is_signed = signed_levels(k);
    __m256i ya = load32(PREP_QUANTS(y, np, p) + 32 * h);
    if (is_signed)
        ya = _mm256_sign_epi8(ya, q);
    const __m256i lanes = _mm256_madd_epi16(_mm256_maddubs_epi16(qabs, ya), _mm256_set1_epi16(1));
    return !is_signed && form_of(k).offset ? _mm256_add_epi32(lanes, load32(PREP_CORR(y, np, p) + 32 * h)) : lanes;
}

X86_AVX2 static INLINE void block_avx2(legacy_kind k, const uint8_t *b, int h, const uint8_t *a, uint64_t as, int nt,
                                   int64_t np, int64_t p, __m256 *acc, float *mins)
{
    const legacy_form F = form_of(k);
    const bool is_signed = signed_levels(k);
    const uint8_t *blk = b + h * F.block_bytes;
    const __m256i q = is_signed ? legacy_quants(k, blk) : legacy_nibbles(k, blk);
    const __m256i qabs = is_signed ? _mm256_sign_epi8(q, q) : q;
    for (int t = 0; t < nt; t++) {
        const uint8_t *y = a + t * as;
        add_block(k, b, h, (const float *)PREP_SCALES(y, np, p), block_lanes_avx2(k, q, qabs, y, np, p, h), &acc[t],
                  &mins[t]);
    }
}

X86_AVX2 static INLINE void pair_avx2(legacy_kind k, const uint8_t *b, bool two, const uint8_t *a, uint64_t as, int nt,
                                  int64_t np, int64_t p, __m256 *acc, float *mins)
{
    block_avx2(k, b, 0, a, as, nt, np, p, acc, mins);
    if (two)
        block_avx2(k, b, 1, a, as, nt, np, p, acc, mins);
}

/* NAME: nt (1..4) prepared activation rows at a, a + as, ... against one weight row, pair by pair through PAIR
 * (full pairs in the loop, so `two` is a constant there; nt is one where inlined). */
#define DEFINE_LEGACY_BODY(NAME, ATTR, PAIR)                                                                    \
    ATTR static INLINE void NAME(legacy_kind k, const uint8_t *b, const uint8_t *a, uint64_t as, int nt,         \
                                 int64_t n, float *out)                                                          \
    {                                                                                                           \
        const int64_t nb = n / 32, np = pairs_of(n), step = 2 * form_of(k).block_bytes;                         \
        __m256 acc[4];                                                                                          \
        float mins[4];                                                                                          \
        for (int t = 0; t < nt; t++)                                                                            \
            acc[t] = _mm256_setzero_ps(), mins[t] = 0.0f;                                                       \
        int64_t p = 0;                                                                                          \
        for (; 2 * p + 1 < nb; p++, b += step) {                                                                \
            prefetch_block_ahead(b, (int)step, n);                                                              \
            PAIR(k, b, true, a, as, nt, np, p, acc, mins);                                                      \
        }                                                                                                       \
        if (2 * p < nb)                                                                                         \
            PAIR(k, b, false, a, as, nt, np, p, acc, mins);                                                     \
        for (int t = 0; t < nt; t++)                                                                            \
            out[t] = quant_hsum8(acc[t]) + mins[t];                                                             \
    }
DEFINE_LEGACY_BODY(legacy_body_vnni, X86_AVX512_VNNI, pair_vnni)
DEFINE_LEGACY_BODY(legacy_body_avx2, X86_AVX2, pair_avx2)

/*
 * llama.cpp's products of fewer than 4 tokens for the types it repacks (Q4_0 and IQ4_NL: ggml-cpu/repack.cpp,
 * the x86 gemv_q4_b32_8x8_q8_0_lut_avx behind ggml_gemv_q4_0_8x8_q8_0 and ggml_gemv_iq4_nl_8x8_q8_0), whose f32
 * order is not vec_dot's: per row, block after block, acc = fma((float)isum, d_w * d_a, acc), with isum the
 * block's whole integer. nr (1..16, or 1..8 with AVX2) weight rows at w, rb bytes apart, against one prepared
 * activation row y (the dots' prep), into out[0..nr). Each row's blocks meet the activations as in the dots (two
 * blocks per vpdpbusd with VNNI); the rows' lane sums are then added across lanes, so that lane r of one register
 * holds row r's integer (exact: any order) and the f32 steps run for all the rows at once, without the panel
 * packing the prompts' products need (which took half of a token's time). Rows past nr repeat the last.
 */
enum { GEMV_ROWS_VNNI = 16, GEMV_ROWS_AVX2 = 8 };

/* A row's scales of its block at rp and the next (two), for the GEMVs: the f16 d of both as one dword (the high half
 * 0 where there is no second block), converted with the other rows' at once; MXFP4's E8M0 ones as f32. */
X86_AVX2 static INLINE void gemv_row_d(legacy_kind k, const uint8_t *rp, int bb, bool two, uint32_t *f16_pair,
                                       float *d0, float *d1)
{
    if (k == LEG_MXFP4)
        *d0 = quant_e8m0_half(rp[0]), *d1 = two ? quant_e8m0_half(rp[bb]) : 0.0f;
    else
        *f16_pair = rd16(rp) | (two ? (uint32_t)rd16(rp + bb) << 16 : 0);
}

X86_AVX512_VNNI static INLINE void gemv_vnni(legacy_kind k, const uint8_t *w, uint64_t rb, int nr, const uint8_t *y, int64_t n,
                                  float *out)
{
    const legacy_form F = form_of(k);
    const int64_t nb = n / 32, np = pairs_of(n), bb = F.block_bytes;
    /* the 16 rows after the next 16, a share at each pair: one group ahead left the AVX2 form at 13-14 GB/s from
     * memory on one thread where the same rows in cache ran at 20; two groups ahead, 17 */
    rows_ahead ahead = rows_ahead_start(w, (uint64_t)GEMV_ROWS_VNNI * rb, 2, np);
    __m512 acc = _mm512_setzero_ps();
    for (int64_t p = 0; p < np; p++) {
        rows_ahead_step(&ahead);
        const bool two = 2 * p + 1 < nb;
        const __m512i init = F.offset ? _mm512_loadu_si512(PREP_CORR(y, np, p)) : _mm512_setzero_si512();
        const __m512i aq = _mm512_loadu_si512(PREP_QUANTS(y, np, p));
        /* each row's lanes 0-7 hold block 2p's 8 partial sums, lanes 8-15 block 2p + 1's; added pairwise as the
         * rows come, so that few registers are live: 16 rows -> 8 -> 4 -> 2 registers */
        __m512i sums[GEMV_ROWS_VNNI / 2];
        /* each row's two f16 d, as one dword (the high half 0 where the pair has one block): read as the rows
         * are walked and stored, then loaded as one vector (a gather each cost as much as all the rest) */
        uint32_t d_pairs[GEMV_ROWS_VNNI];
        float e_d0[GEMV_ROWS_VNNI], e_d1[GEMV_ROWS_VNNI]; /* MXFP4's */
        const uint8_t *rp = w + 2 * p * bb;
#pragma GCC unroll 8
        for (int i = 0; i < GEMV_ROWS_VNNI / 2; i++) {
            const __m512i l0 = _mm512_dpbusd_epi32(init, quants_of(k, rp, two), aq);
            gemv_row_d(k, rp, (int)bb, two, &d_pairs[2 * i], &e_d0[2 * i], &e_d1[2 * i]);
            rp += 2 * i + 1 < nr ? rb : 0;
            const __m512i l1 = _mm512_dpbusd_epi32(init, quants_of(k, rp, two), aq);
            gemv_row_d(k, rp, (int)bb, two, &d_pairs[2 * i + 1], &e_d0[2 * i + 1], &e_d1[2 * i + 1]);
            rp += 2 * i + 2 < nr ? rb : 0;
            sums[i] = quant_add_pairs(l0, l1);
        }
        const __m512i dw = k == LEG_MXFP4 ? _mm512_setzero_si512() : _mm512_loadu_si512(d_pairs);
        for (int i = 0; i < 4; i++)
            sums[i] = quant_add_pairs(sums[2 * i], sums[2 * i + 1]);
        for (int i = 0; i < 2; i++)
            sums[i] = quant_add_pairs(sums[2 * i], sums[2 * i + 1]);
        /* sums[0] lane 2r + h: row r (0-7), block 2p + h; sums[1] rows 8-15 */
        const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
        const float *sc = (const float *)PREP_SCALES(y, np, p);
        const __m512i s0 = _mm512_permutex2var_epi32(sums[0], even, sums[1]);
        const __m512 d0 = k == LEG_MXFP4 ? _mm512_loadu_ps(e_d0) : _mm512_cvtph_ps(_mm512_cvtepi32_epi16(dw));
        acc = _mm512_fmadd_ps(_mm512_cvtepi32_ps(s0), _mm512_mul_ps(d0, _mm512_set1_ps(sc[0])), acc);
        if (two) {
            const __m512i odd = _mm512_add_epi32(even, _mm512_set1_epi32(1));
            const __m512i s1 = _mm512_permutex2var_epi32(sums[0], odd, sums[1]);
            const __m512 d1 = k == LEG_MXFP4 ? _mm512_loadu_ps(e_d1)
                                             : _mm512_cvtph_ps(_mm512_cvtepi32_epi16(_mm512_srli_epi32(dw, 16)));
            acc = _mm512_fmadd_ps(_mm512_cvtepi32_ps(s1), _mm512_mul_ps(d1, _mm512_set1_ps(sc[1])), acc);
        }
    }
    _mm512_mask_storeu_ps(out, (__mmask16)((1u << nr) - 1), acc);
}

/*
 * The AVX2 GEMV takes two rows' blocks a register (row 2j's 16 nibble bytes in the low half, row 2j + 1's in the
 * high), their low nibbles (values 0-15) against the activations' first 16 broadcast to both halves, the high
 * (16-31) against the last 16, and adds across rows with hadds: lane j ends with row 2j's integer, lane 4 + j
 * with row 2j + 1's (gemv_lane_of). Q4_0's unsigned nibbles (0-15) against |a| <= 127 keep a sum of 16 products
 * within 16 bits, so its rows are added in 16-bit lanes and widened once, and the offset's correction, the
 * block's and the same for every row, is added once. IQ4_NL's levels reach 127, so a pair of its products
 * already fills 16 bits: widened at once and added in 32-bit lanes (MXFP4's, at most 12, take the same path).
 */
static inline int gemv_lane_of(int r)
{
    return (r % 2) * 4 + r / 2;
}

X86_AVX2 static INLINE void gemv_avx2(legacy_kind k, const uint8_t *w, uint64_t rb, int nr, const uint8_t *y, int64_t n,
                                  float *out)
{
    const legacy_form F = form_of(k);
    const int64_t nb = n / 32, np = pairs_of(n);
    const __m256i level_table = _mm256_broadcastsi128_si256(
        _mm_loadu_si128((const __m128i *)(k == LEG_MXFP4 ? quant_kvalues_mxfp4 : quant_kvalues_iq4nl)));
    const uint8_t *row[GEMV_ROWS_AVX2];
    for (int r = 0; r < GEMV_ROWS_AVX2; r++)
        row[r] = w + (uint64_t)(r < nr ? r : nr - 1) * rb;
    rows_ahead ahead = rows_ahead_start(w, (uint64_t)GEMV_ROWS_AVX2 * rb, 2, nb); /* as gemv_vnni's */
    __m256 acc = _mm256_setzero_ps();
    for (int64_t i = 0; i < nb; i++) {
        rows_ahead_step(&ahead);
        const int64_t p = i / 2;
        const int h = (int)(i % 2);
        uint16_t d[GEMV_ROWS_AVX2]; /* the rows' f16 d, converted at once */
        float e_d[GEMV_ROWS_AVX2];  /* MXFP4's */
        const __m128i *yq = (const __m128i *)(PREP_QUANTS(y, np, p) + 32 * h);
        const __m256i ylo = _mm256_broadcastsi128_si256(_mm_loadu_si128(yq));
        const __m256i yhi = _mm256_broadcastsi128_si256(_mm_loadu_si128(yq + 1));
        const __m256i m4 = _mm256_set1_epi8(0x0f), ones = _mm256_set1_epi16(1);
        __m256i two_rows[GEMV_ROWS_AVX2 / 2];
        for (int j = 0; j < GEMV_ROWS_AVX2 / 2; j++) {
            const uint8_t *b0 = row[2 * j] + i * F.block_bytes, *b1 = row[2 * j + 1] + i * F.block_bytes;
            const __m256i raw = _mm256_inserti128_si256(
                _mm256_castsi128_si256(_mm_loadu_si128((const __m128i *)(b0 + F.qs_at))),
                _mm_loadu_si128((const __m128i *)(b1 + F.qs_at)), 1);
            const __m256i lo = _mm256_and_si256(raw, m4), hi = _mm256_and_si256(_mm256_srli_epi16(raw, 4), m4);
            if (k == LEG_Q4_0) {
                two_rows[j] = _mm256_add_epi16(_mm256_maddubs_epi16(lo, ylo), _mm256_maddubs_epi16(hi, yhi));
            } else { /* IQ4_NL, MXFP4: signed levels, their sign moved onto the activations */
                const __m256i vlo = _mm256_shuffle_epi8(level_table, lo), vhi = _mm256_shuffle_epi8(level_table, hi);
                const __m256i plo = _mm256_maddubs_epi16(_mm256_sign_epi8(vlo, vlo), _mm256_sign_epi8(ylo, vlo));
                const __m256i phi = _mm256_maddubs_epi16(_mm256_sign_epi8(vhi, vhi), _mm256_sign_epi8(yhi, vhi));
                two_rows[j] = _mm256_add_epi32(_mm256_madd_epi16(plo, ones), _mm256_madd_epi16(phi, ones));
            }
            if (k == LEG_MXFP4) {
                e_d[gemv_lane_of(2 * j)] = quant_e8m0_half(b0[0]);
                e_d[gemv_lane_of(2 * j + 1)] = quant_e8m0_half(b1[0]);
            } else {
                d[gemv_lane_of(2 * j)] = rd16(b0);
                d[gemv_lane_of(2 * j + 1)] = rd16(b1);
            }
        }
        __m256i isum;
        if (k == LEG_Q4_0) {
            const __m256i sums16 = _mm256_hadd_epi16(_mm256_hadd_epi16(two_rows[0], two_rows[1]),
                                                     _mm256_hadd_epi16(two_rows[2], two_rows[3]));
            const int32_t corr = quant_hsum8_epi32(load32(PREP_CORR(y, np, p) + 32 * h));
            isum = _mm256_add_epi32(_mm256_madd_epi16(sums16, ones), _mm256_set1_epi32(corr));
        } else {
            isum = _mm256_hadd_epi32(_mm256_hadd_epi32(two_rows[0], two_rows[1]),
                                     _mm256_hadd_epi32(two_rows[2], two_rows[3]));
        }
        const float da = ((const float *)PREP_SCALES(y, np, p))[h];
        const __m256 dw = k == LEG_MXFP4 ? _mm256_loadu_ps(e_d) : _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)d));
        acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum), _mm256_mul_ps(dw, _mm256_set1_ps(da)), acc);
    }
    float all[GEMV_ROWS_AVX2];
    _mm256_storeu_ps(all, acc);
    for (int r = 0; r < nr; r++)
        out[r] = all[gemv_lane_of(r)];
}

#define GEMV_ENTRY_POINTS(name, kind)                                                                          \
    X86_AVX512_VNNI void cpu_act_gemv_##name##_vnni(const void *w, uint64_t rb, int nr, const void *a, int64_t n,        \
                                           float *out)                                                         \
    {                                                                                                          \
        gemv_vnni(kind, w, rb, nr, a, n, out);                                                                 \
    }                                                                                                          \
    X86_AVX2 void cpu_act_gemv_##name##_avx2(const void *w, uint64_t rb, int nr, const void *a, int64_t n,        \
                                           float *out)                                                         \
    {                                                                                                          \
        gemv_avx2(kind, w, rb, nr, a, n, out);                                                                 \
    }
GEMV_ENTRY_POINTS(q4_0, LEG_Q4_0)
GEMV_ENTRY_POINTS(iq4_nl, LEG_IQ4_NL)
GEMV_ENTRY_POINTS(mxfp4, LEG_MXFP4)

#define ENTRY_POINTS(name, kind)                                                                               \
    ACT_ENTRY_POINTS_AT(vnni, X86_AVX512_VNNI, name, legacy_body_vnni, kind)                                              \
    ACT_ENTRY_POINTS_AT(avx2, X86_AVX2, name, legacy_body_avx2, kind)
ENTRY_POINTS(q4_0, LEG_Q4_0)
ENTRY_POINTS(q5_0, LEG_Q5_0)
ENTRY_POINTS(q8_0, LEG_Q8_0)
ENTRY_POINTS(iq4_nl, LEG_IQ4_NL)
ENTRY_POINTS(q4_1, LEG_Q4_1)
ENTRY_POINTS(q5_1, LEG_Q5_1)
ENTRY_POINTS(mxfp4, LEG_MXFP4)

#endif
