/*
 * --numerics ggml dots of the 32-value types (Q4_0, Q5_0, Q8_0, IQ4_NL against Q8_0; Q4_1, Q5_1 against Q8_1)
 * with AVX-512 VNNI: two blocks per 512-bit vpdpbusd, where the AVX2 form (act_dot_avx2.c) takes one block
 * through two sign ops, maddubs and madd.
 *
 * vpdpbusd multiplies unsigned weight bytes by signed activation bytes, so each type's quants go in as
 * unsigned values u = w + offset (Q4_0: the nibble, offset 8; Q5_0: 16; Q8_0: w ^ 0x80, 128; IQ4_NL:
 * kvalues + 128, 128; Q4_1 / Q5_1: the nibble itself, 0), and the accumulator starts at -offset times the
 * sum of the 4 activations each lane meets. That correction, the activation quants and their scales are
 * written once per activation row by the prep (act_dot_prep_legacy), which every weight row then reads.
 *
 * Each dword lane ends holding sum((u - offset) * a) over the same 4 values as ggml's 8 lanes per block
 * (ggml-cpu/arch/x86/quants.c: mul_sum_i8_pairs_float), the same integers, and the f32 part is ggml's:
 * per block, acc += (d_w * d_a) * lanes in 8-lane registers, block after block, then its 8-lane sum, plus
 * Q4_1/Q5_1's m * s added in block order. So a dot here equals the AVX2 one bit for bit (test_act).
 */
#include "blocks.h"

#if defined(__x86_64__)
#include <immintrin.h>

#include "act_unpack_avx2.h"
#include "simd_hsum.h"

#define VNNI __attribute__((target("avx2,fma,f16c,avx512f,avx512vl,avx512bw,avx512vnni")))

/* Where a weight block's parts lie, and the offset its quants carry as unsigned bytes. */
typedef struct legacy_form {
    uint8_t block_bytes, qs_at;
    int8_t qh_at, m_at; /* -1: none */
    uint8_t offset;
    bool with_min;      /* against Q8_1: m * s per block */
} legacy_form;

static const legacy_form forms[] = {
    [LEG_Q4_0] = { 18, 2, -1, -1, 8, false },    [LEG_Q5_0] = { 22, 6, 2, -1, 16, false },
    [LEG_Q8_0] = { 34, 2, -1, -1, 128, false },  [LEG_IQ4_NL] = { 18, 2, -1, -1, 128, false },
    [LEG_Q4_1] = { 20, 4, -1, 2, 0, true },      [LEG_Q5_1] = { 24, 8, 4, 2, 0, true },
};

/* The prepared activation row for nb blocks in np = ceil(nb / 2) pairs (the last pair padded with zeros):
 *   quants   np x 64 bytes   the two blocks' 32 quants each, as they meet one 512-bit register of weights
 *   corr     np x 16 int32   -offset * (sum of the 4 quants of each lane)
 *   scales   np x 4 f32      d of each block, then Q8_1's s of each block (0 against Q8_0) */
static int64_t pairs_of(int64_t n)
{
    return (n / 32 + 1) / 2;
}

uint64_t quant_act_prep_bytes_legacy_vnni(int64_t n)
{
    return (uint64_t)pairs_of(n) * (64 + 64 + 16);
}

static void prep_legacy(const legacy_form F, const uint8_t *a, uint8_t *dst, int64_t n)
{
    const int64_t nb = n / 32, np = pairs_of(n);
    const int qa = F.with_min ? 4 : 2, ab = F.with_min ? 36 : 34;
    int8_t *quants = (int8_t *)dst;
    int32_t *corr = (int32_t *)(dst + np * 64);
    float *scales = (float *)(dst + np * 128);
    memset(dst, 0, quant_act_prep_bytes_legacy_vnni(n));
    for (int64_t i = 0; i < nb; i++, a += ab) {
        const int64_t p = i / 2, h = i % 2;
        memcpy(quants + 64 * p + 32 * h, a + qa, 32);
        for (int lane = 0; lane < 8; lane++) {
            int sum = 0;
            for (int j = 0; j < 4; j++)
                sum += ((const int8_t *)(a + qa))[4 * lane + j];
            corr[16 * p + 8 * h + lane] = -(int32_t)F.offset * sum;
        }
        scales[4 * p + h] = rdf16(a);
        scales[4 * p + 2 + h] = F.with_min ? rdf16(a + 2) : 0.0f;
    }
}

#define PREP_ENTRY_POINT(name, kind)                                                  \
    void quant_act_prep_##name##_vnni(const void *a, void *dst, int64_t n)            \
    {                                                                                 \
        prep_legacy(forms[kind], a, dst, n);                                          \
    }
PREP_ENTRY_POINT(q8_0_offset8, LEG_Q4_0)
PREP_ENTRY_POINT(q8_0_offset16, LEG_Q5_0)
PREP_ENTRY_POINT(q8_0_offset128, LEG_Q8_0)
PREP_ENTRY_POINT(q8_1, LEG_Q4_1)

/* The unsigned quants of block b (lanes 0-1 of the result) and, when `two`, of the block after it (lanes
 * 2-3); a block past the row is never read. */
VNNI static INLINE __m512i quants_of(legacy_kind k, const uint8_t *b, bool two)
{
    const legacy_form F = forms[k];
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
    if (k == LEG_IQ4_NL) { /* kvalues + 128 = kvalues ^ 0x80 as bytes */
        const __m512i table = _mm512_xor_si512(_mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)quant_kvalues_iq4nl)),
                                               _mm512_set1_epi8((char)0x80));
        q = _mm512_shuffle_epi8(table, q);
    }
    return q;
}

/* nt (1..4) prepared activation rows at a, a + as, ... against one weight row; nt is a constant where inlined. */
VNNI static INLINE void legacy_body(legacy_kind k, const uint8_t *b, const uint8_t *a, uint64_t as, int nt, int64_t n,
                                    float *out)
{
    const legacy_form F = forms[k];
    const int64_t nb = n / 32, np = pairs_of(n);
    __m256 acc[4];
    float mins[4];
    for (int t = 0; t < nt; t++)
        acc[t] = _mm256_setzero_ps(), mins[t] = 0.0f;
    for (int64_t p = 0; p < np; p++, b += 2 * F.block_bytes) {
        const bool two = 2 * p + 1 < nb;
        const __m512i q = quants_of(k, b, two);
        const float d0 = f16c(b), d1 = two ? f16c(b + F.block_bytes) : 0.0f;
        for (int t = 0; t < nt; t++) {
            const uint8_t *y = a + t * as;
            const float *sc = (const float *)(y + np * 128) + 4 * p;
            const __m512i init = F.offset ? _mm512_loadu_si512(y + np * 64 + 64 * p) : _mm512_setzero_si512();
            const __m512 lanes = _mm512_cvtepi32_ps(_mm512_dpbusd_epi32(init, q, _mm512_loadu_si512(y + 64 * p)));
            acc[t] = _mm256_fmadd_ps(_mm256_set1_ps(d0 * sc[0]), _mm512_castps512_ps256(lanes), acc[t]);
            if (F.with_min)
                mins[t] += f16c(b + F.m_at) * sc[2];
            if (two) {
                acc[t] = _mm256_fmadd_ps(_mm256_set1_ps(d1 * sc[1]), _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(lanes), 1)), acc[t]);
                if (F.with_min)
                    mins[t] += f16c(b + F.block_bytes + F.m_at) * sc[3];
            }
        }
    }
    for (int t = 0; t < nt; t++)
        out[t] = quant_hsum8(acc[t]) + mins[t];
}

#define ENTRY_POINTS(name, kind) ACT_ENTRY_POINTS_AT(vnni, VNNI, name, legacy_body, kind)
ENTRY_POINTS(q4_0, LEG_Q4_0)
ENTRY_POINTS(q5_0, LEG_Q5_0)
ENTRY_POINTS(q8_0, LEG_Q8_0)
ENTRY_POINTS(iq4_nl, LEG_IQ4_NL)
ENTRY_POINTS(q4_1, LEG_Q4_1)
ENTRY_POINTS(q5_1, LEG_Q5_1)

#endif
