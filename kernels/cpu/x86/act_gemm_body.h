/*
 * Prompt products with --numerics ggml: 8 or 16 weight rows against many rows
 * of quantized activations at once. This body is compiled twice, by
 * act_gemm_avx2.c (maddubs, any AVX2 CPU, 8-row panels) and act_gemm_vnni.c
 * (AVX-512 VNNI's vpdpbusd; 16-row panels, 512-bit registers for the kinds
 * summed row by row), which define GEMM_VNNI (0/1), GEMM_TARGET
 * (the functions' target attribute) and GEMM_NAME(name) (the entry points'
 * names). The integers, and so the results, are the same bit for bit.
 *
 * The 1-row integer dots (act_dot_avx2.c) hold one weight row in a register's
 * 32 bytes and must add the register's 8 lanes up at the end of every row; for
 * a prompt that horizontal sum, the per-block scale multiply and the unpacking
 * of every block are paid once per row per token. Here 8 rows (16, VNNI) are
 * first unpacked into a panel (per-thread scratch, a few KB, L1-sized) in which
 * 32-bit lane r of each register holds 4 consecutive quants of row r: a
 * token's 4 activation quants broadcast to all lanes meet all 8 rows in one
 * _mm256_maddubs_epi16, scales are vectors of the 8 rows' scales, and each
 * lane ends as one row's result. The weights stay where they are mapped; the
 * panel is rebuilt per call (its cost is spread over the prompt's tokens).
 * llama.cpp gets to the same shape by repacking its weights at load
 * (ggml-cpu/repack.cpp, rows interleaved 8 at a time); we keep the file's
 * bytes as they are and pay the repack per product instead.
 *
 * Signed weight types whose values fit in a few bits are stored unsigned
 * (q + off) so that maddubs takes them as they are, and off * sum(a) is taken
 * back with the activations' sums of 16 (Q8_K's bsums, and their equals for
 * Q8_0 / Q8_1, quant_act_sums16). With maddubs, whose 16-bit pair sums
 * saturate, wide signed types (Q8_0, IQ4_NL, IQ4_XS) lend their sign to the
 * activation as the 1-row dots do; vpdpbusd sums into 32 bits, so with VNNI
 * they are stored + 128 like the others. Every integer is the one ggml's dot
 * computes; only the f32 order of adding the blocks may differ (see quant.h).
 */
#include "act_gemm_panel.h"
/* The activations' block: bytes, values, where the quants start. */
static INLINE int act_block_bytes(gemm_kind k) { return k.act == ACT_Q8_K ? 292 : k.act == ACT_Q8_1 ? 36 : 34; }
static INLINE int act_block_values(gemm_kind k) { return k.act == ACT_Q8_K ? 256 : 32; }
static INLINE int act_quants_at(gemm_kind k) { return k.act == ACT_Q8_0 ? 2 : 4; }

GEMM_TARGET static INLINE float act_d(gemm_kind k, const uint8_t *blk)
{
    return k.act == ACT_Q8_K ? q8k_d(blk) : f16c(blk);
}

/* A chunk's scale pairs for its half h (values 16h..16h+15): the panel's, or ones where unscaled. */
GEMM_TARGET static INLINE __m256i half_scales(gemm_kind k, const uint8_t *chunk, int h)
{
    return k.scaled ? load32(chunk + scales_at(PANEL_ROWS) + 32 * h) : _mm256_set1_epi16(1);
}

/* A token's 4 activation quants at q, broadcast to all 8 lanes, with the signs of w where the kind is signed. */
GEMM_TARGET static INLINE __m256i group_acts(gemm_kind k, const uint8_t *q, __m256i w)
{
    const __m256i x = _mm256_set1_epi32((int)rd32(q));
    return k.sign ? _mm256_sign_epi8(x, w) : x;
}

/* From CPU_TILED_MIN_TOKENS tokens on llama.cpp multiplies the 256-value types it does not repack with its tiled
 * K-quant kernel (ggml-cpu/tiled/tiled-kernel.cpp), which adds a row's blocks otherwise than vec_dot: each block's
 * whole integer (scales applied, Q6_K's -32 and Q3_K's -4 taken off) times d_w, less dmin times the mins' integer
 * (one fused step: this function), then times d_a and added to the sum in one fused step (the caller; its
 * AVX512-VNNI microkernel writes that as a multiply and an add, which GCC contracts: the vendored build's object
 * code fuses them). Bit for bit the vendored build's Q6_K products of tiny-qwen3-q4_k_m at 8 tokens and more,
 * both builds. The G_*_TILED kinds take this step once per block (step 0). */
GEMM_TARGET static INLINE __m256 tiled_block(gemm_kind k, __m256i isum, __m256i imin, __m256 d, __m256 dm)
{
    const __m256 r = _mm256_mul_ps(_mm256_cvtepi32_ps(isum), d);
    return k.min == GMIN_GROUPED ? _mm256_fnmadd_ps(dm, _mm256_cvtepi32_ps(imin), r) : r;
}

#if GEMM_VNNI
GEMM_TARGET static INLINE __m512 tiled_block16(gemm_kind k, __m512i isum, __m512i imin, __m512 d, __m512 dm)
{
    const __m512 r = _mm512_mul_ps(_mm512_cvtepi32_ps(isum), d);
    return k.min == GMIN_GROUPED ? _mm512_fnmadd_ps(dm, _mm512_cvtepi32_ps(imin), r) : r;
}
#endif

#if !GEMM_VNNI
/* ORDER_ROWS, 8 rows with maddubs (VNNI multiplies these kinds 16 rows at a time, below): nt (1..4)
 * activation rows at a, a + as, ... (their sums of 16 at sums, sums + ns, ...) against the panel: out[t]
 * lane r is row r's product with activation row t. */
GEMM_TARGET static INLINE void gemm_tokens(gemm_kind k, const uint8_t *panel, const uint8_t *a, uint64_t as,
                                    const int16_t *sums, int64_t ns, int nt, int64_t n, __m256 out[GEMM_TOKENS])
{
    const __m256i offs = _mm256_set1_epi16((short)k.off);
    __m256 acc[GEMM_TOKENS], accm[GEMM_TOKENS];
    for (int t = 0; t < nt; t++)
        acc[t] = accm[t] = _mm256_setzero_ps();
    const int step = k.step && nt == GEMM_TOKENS ? k.step : k.sb / 32; /* chunks per f32 step (gemm_kind) */
    const uint8_t *p = panel;
    for (int64_t i = 0; i < n; i += k.sb) {
        const __m256 d = _mm256_loadu_ps((const float *)p), dm = _mm256_loadu_ps((const float *)(p + 32));
        p += 64;
        __m256i isum[GEMM_TOKENS], imin[GEMM_TOKENS];
        for (int t = 0; t < nt; t++)
            isum[t] = _mm256_setzero_si256(), imin[t] = _mm256_setzero_si256();
        const uint8_t *ablk = a + (uint64_t)(i / act_block_values(k)) * act_block_bytes(k);
        for (int c = 0; c < k.sb / 32; c++, p += chunk_bytes(k, PANEL_ROWS)) {
            const int64_t v0 = i + 32 * c;
            const uint8_t *aq = ablk + act_quants_at(k) + v0 % act_block_values(k);
            const __m256i slo = half_scales(k, p, 0), shi = half_scales(k, p, 1);
            __m256i part[GEMM_TOKENS] = { 0 };
            for (int j = 0; j < 8; j++) {
                const __m256i w = load32(p + 32 * j);
                const __m256i wu = k.sign ? _mm256_sign_epi8(w, w) : w;
                for (int t = 0; t < nt; t++) {
                    const __m256i pr = _mm256_maddubs_epi16(wu, group_acts(k, aq + (uint64_t)t * as + 4 * j, w));
                    part[t] = j % k.depth == 0 ? pr : _mm256_add_epi16(part[t], pr); /* a new 16-bit run */
                    if (j % k.depth == k.depth - 1)
                        isum[t] = _mm256_add_epi32(isum[t], _mm256_madd_epi16(part[t], j < 4 ? slo : shi));
                }
            }
            if (k.off || k.min == GMIN_GROUPED) {
                for (int t = 0; t < nt; t++) {
                    int32_t pair;
                    memcpy(&pair, sums + t * ns + v0 / 16, 4);
                    const __m256i bs = _mm256_set1_epi32(pair);
                    if (k.min == GMIN_OFFSET)
                        isum[t] = _mm256_sub_epi32(isum[t],
                                                   _mm256_madd_epi16(load32(p + min_pairs_at(k, PANEL_ROWS)), bs));
                    else if (k.off)
                        isum[t] = _mm256_sub_epi32(isum[t], _mm256_madd_epi16(offs, bs));
                    if (k.min == GMIN_GROUPED)
                        imin[t] = _mm256_add_epi32(imin[t], _mm256_madd_epi16(load32(p + min_pairs_at(k, PANEL_ROWS)), bs));
                }
            }
            if ((c + 1) % step)
                continue;
            for (int t = 0; t < nt; t++) {
                const __m256 da = _mm256_set1_ps(act_d(k, ablk + (uint64_t)t * as));
                if (k.tiled) {
                    acc[t] = _mm256_fmadd_ps(tiled_block(k, isum[t], imin[t], d, dm), da, acc[t]);
                    isum[t] = imin[t] = _mm256_setzero_si256();
                    continue;
                }
                acc[t] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum[t]), _mm256_mul_ps(d, da), acc[t]);
                if (k.min == GMIN_GROUPED && k.step)
                    accm[t] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(imin[t]), _mm256_mul_ps(dm, da), accm[t]);
                else if (k.min == GMIN_GROUPED)
                    acc[t] = _mm256_fnmadd_ps(_mm256_cvtepi32_ps(imin[t]), _mm256_mul_ps(dm, da), acc[t]);
                isum[t] = imin[t] = _mm256_setzero_si256();
            }
        }
    }
    for (int t = 0; t < nt; t++)
        out[t] = k.step ? _mm256_sub_ps(acc[t], accm[t]) : acc[t];
}
#endif

/* ORDER_GROUPS: tokens per pass, so that the accumulators fit the registers (16 with AVX2, 32 with
 * AVX-512VL): 8 a token for 32-value blocks, 16 for 256-value ones (one pass each; with VNNI those go
 * through gemm_tokens_groups16, 9 a token for 3). */
enum { GROUP_TOKENS = GEMM_VNNI ? 2 : 1, GROUP256_TOKENS = 3 };
/* A row's 8 lane sums added as ggml's hsum_float_8 adds them: ((a0 + a4) + (a2 + a6)) + ((a1 + a5) + (a3 + a7)). */
GEMM_TARGET static INLINE __m256 ggml_lane_sum(const __m256 a[8])
{
    const __m256 b0 = _mm256_add_ps(a[0], a[4]), b1 = _mm256_add_ps(a[1], a[5]);
    const __m256 b2 = _mm256_add_ps(a[2], a[6]), b3 = _mm256_add_ps(a[3], a[7]);
    return _mm256_add_ps(_mm256_add_ps(b0, b2), _mm256_add_ps(b1, b3));
}

/* GMIN_GROUPED in the lane order (Q4_K and Q5_K's vec_dot): chunk c's mins times the activation block's sums of
 * its two halves (Q8_K's bsums 2c and 2c + 1), per row. */
GEMM_TARGET static INLINE __m256i chunk_mins(gemm_kind k, const uint8_t *chunk, const uint8_t *ablk, int c)
{
    int32_t pair;
    memcpy(&pair, ablk + 4 + QK_K + 4 * c, 4);
    return _mm256_madd_epi16(load32(chunk + min_pairs_at(k, PANEL_ROWS)), _mm256_set1_epi32(pair));
}

/* GMIN_LANES: group j's -32 for 8 rows, from chunk j's scale pairs (chunk0: the block's first chunk) and the
 * activation block's bsums 2j, 2j + 1. */
GEMM_TARGET static INLINE __m256i lane_offsets(gemm_kind k, const uint8_t *chunk0, const uint8_t *ablk, int j)
{
    return _mm256_slli_epi32(chunk_mins(k, chunk0 + (uint64_t)j * chunk_bytes(k, PANEL_ROWS), ablk, j), 5);
}

/* A block's mins summed apart in f32, as vec_dot's summs: + dmin * d_a * (float)sum(m * bsums), per row, in one
 * fused multiply-add (ggml's C statement, contracted where llama.cpp is built with FMA). */
GEMM_TARGET static INLINE __m256 block_mins(__m256 mins, __m256 dm, float da, __m256i imin)
{
    return _mm256_fmadd_ps(_mm256_mul_ps(dm, _mm256_set1_ps(da)), _mm256_cvtepi32_ps(imin), mins);
}

/* The row's result: the lanes added as hsum_float_8 adds them, then Q8_1's m * s added, or the K-quants' mins
 * taken off. */
GEMM_TARGET static INLINE __m256 groups_result(gemm_kind k, const __m256 acc[8], __m256 mins)
{
    const __m256 s = ggml_lane_sum(acc);
    return k.min == GMIN_Q8_1_S ? _mm256_add_ps(s, mins) : k.min == GMIN_GROUPED ? _mm256_sub_ps(s, mins) : s;
}

/* nt activation rows against the panel, adding as ggml's vec_dot adds: lane j of a row's accumulator is
 * group j's 4-product integer (times its 16- or 32-value scale, summed over a 256-value block's chunks),
 * times d_w * d_a per block, then ((a0 + a4) + (a2 + a6)) + ((a1 + a5) + (a3 + a7)) (hsum_float_8), plus
 * Q8_1's m * s summed on its own. Here acc[t][j] holds lane j of 8 rows. */
GEMM_TARGET static INLINE void gemm_tokens_groups(gemm_kind k, const uint8_t *panel, const uint8_t *a,
                                                  uint64_t as, int nt, int64_t n, __m256 out[GEMM_TOKENS])
{
    __m256 acc[GROUP_TOKENS][8], mins[GROUP_TOKENS];
    for (int t = 0; t < nt; t++) {
        mins[t] = _mm256_setzero_ps();
        for (int j = 0; j < 8; j++)
            acc[t][j] = _mm256_setzero_ps();
    }
    const uint8_t *p = panel;
    for (int64_t i = 0; i < n; i += k.sb) {
        const __m256 d = _mm256_loadu_ps((const float *)p), dm = _mm256_loadu_ps((const float *)(p + 32));
        const uint8_t *ablk = a + (uint64_t)(i / act_block_values(k)) * act_block_bytes(k);
        __m256 dd[GROUP_TOKENS];
        __m256i imin[GROUP_TOKENS];
        for (int t = 0; t < nt; t++) {
            dd[t] = _mm256_mul_ps(d, _mm256_set1_ps(act_d(k, ablk + (uint64_t)t * as)));
            imin[t] = _mm256_setzero_si256();
        }
        __m256i isum[GROUP_TOKENS][8];
        p += 64;
        for (int c = 0; c < k.sb / 32; c++, p += chunk_bytes(k, PANEL_ROWS)) {
            const uint8_t *aq = ablk + act_quants_at(k) + 32 * c;
            if (k.min == GMIN_GROUPED)
                for (int t = 0; t < nt; t++)
                    imin[t] = _mm256_add_epi32(imin[t], chunk_mins(k, p, ablk + (uint64_t)t * as, c));
            for (int j = 0; j < 8; j++) {
                const __m256i w = load32(p + 32 * j);
                const __m256i wu = k.sign ? _mm256_sign_epi8(w, w) : w;
                for (int t = 0; t < nt; t++) {
                    const __m256i x = group_acts(k, aq + (uint64_t)t * as + 4 * j, w);
#if GEMM_VNNI /* the 32-value kinds here, unscaled */
                    const __m256i iv = _mm256_dpbusd_epi32(_mm256_setzero_si256(), wu, x);
#else
                    const __m256i iv = _mm256_madd_epi16(_mm256_maddubs_epi16(wu, x), half_scales(k, p, j >= 4));
#endif
                    const uint8_t *at = ablk + (uint64_t)t * as;
                    isum[t][j] = c > 0                  ? _mm256_add_epi32(isum[t][j], iv)
                                 : k.min == GMIN_LANES ? _mm256_sub_epi32(iv, lane_offsets(k, p, at, j))
                                                       : iv;
                }
            }
        }
        for (int t = 0; t < nt; t++)
            for (int j = 0; j < 8; j++)
                acc[t][j] = _mm256_fmadd_ps(dd[t], _mm256_cvtepi32_ps(isum[t][j]), acc[t][j]);
        if (k.min == GMIN_Q8_1_S)
            for (int t = 0; t < nt; t++)
                mins[t] = _mm256_add_ps(mins[t], _mm256_mul_ps(dm, _mm256_set1_ps(f16c(ablk + (uint64_t)t * as + 2))));
        if (k.min == GMIN_GROUPED)
            for (int t = 0; t < nt; t++)
                mins[t] = block_mins(mins[t], dm, act_d(k, ablk + (uint64_t)t * as), imin[t]);
    }
    for (int t = 0; t < nt; t++)
        out[t] = groups_result(k, acc[t], mins[t]);
}

#if GEMM_VNNI
/* ORDER_GROUPS for 256-value blocks (Q3_K, Q5_K, Q6_K, IQ4_XS; scaled; prompts of fewer than CPU_TILED_MIN_TOKENS
 * tokens, vec_dot's order: from there on the G_*_TILED kinds take them) with VNNI, on 16-row panels: lane r of
 * a 512-bit register is row r, so each instruction meets 16 rows where the 8-lane form met 8 (x1.6-1.8 on
 * Qwen3-0.6B-shape IQ4_XS / Q6_K prompts). The same integers and lane sums as gemm_tokens_groups, with group j
 * outer and chunk c inner, so that one integer sum per token is live and nt tokens share each weight load and
 * its sign. AVX-512 has no vpsignb: a signed weight's |w| meets the activation negated where w < 0 (a masked
 * subtract from zero; where w is 0 the product is 0 either way, as with vpsignb). maddubs' 16-bit pair sums (no
 * saturation: |w| <= 127 against |x| <= 128) meet the scale pairs (s, s) in one vpdpwssd, where dpbusd took a
 * vpmulld and an add more. */
GEMM_TARGET static INLINE void gemm_tokens_groups16(gemm_kind k, const uint8_t *panel, const uint8_t *a,
                                                    uint64_t as, int nt, int64_t n, __m512 out[GEMM_TOKENS])
{
    __m512 acc[GROUP256_TOKENS][8], mins[GROUP256_TOKENS];
    for (int t = 0; t < nt; t++) {
        mins[t] = _mm512_setzero_ps();
        for (int j = 0; j < 8; j++)
            acc[t][j] = _mm512_setzero_ps();
    }
    const __m512i zero = _mm512_setzero_si512();
    const uint8_t *p = panel;
    for (int64_t i = 0; i < n; i += k.sb, p += block_panel_bytes(k, WIDE_ROWS)) {
        const __m512 d = _mm512_loadu_ps(p);
        const uint8_t *ablk = a + (uint64_t)(i / act_block_values(k)) * act_block_bytes(k);
        if (k.min == GMIN_GROUPED) { /* vec_dot's summs: dmin * d_a * sum(m * bsums), summed apart */
            const __m512 dm = _mm512_loadu_ps(p + 4 * WIDE_ROWS);
            for (int t = 0; t < nt; t++) {
                const uint8_t *at = ablk + (uint64_t)t * as;
                __m512i imin = zero;
                for (int c = 0; c < k.sb / 32; c++) {
                    int32_t pair;
                    memcpy(&pair, at + 4 + QK_K + 4 * c, 4);
                    const uint8_t *chunk = p + 8 * WIDE_ROWS + (uint64_t)c * chunk_bytes(k, WIDE_ROWS);
                    imin = _mm512_add_epi32(imin, _mm512_madd_epi16(_mm512_loadu_si512(chunk + min_pairs_at(k, WIDE_ROWS)),
                                                                    _mm512_set1_epi32(pair)));
                }
                mins[t] = _mm512_fmadd_ps(_mm512_mul_ps(dm, _mm512_set1_ps(act_d(k, at))), _mm512_cvtepi32_ps(imin),
                                          mins[t]); /* block_mins' fused step */
            }
        }
#pragma GCC unroll 8
        for (int j = 0; j < 8; j++) { /* unrolled: acc[t][j] in registers, not on the stack */
            __m512i isum[GROUP256_TOKENS];
            for (int t = 0; t < nt; t++)
                isum[t] = zero;
            for (int c = 0; c < k.sb / 32; c++) {
                const uint8_t *chunk = p + 8 * WIDE_ROWS + (uint64_t)c * chunk_bytes(k, WIDE_ROWS);
                const __m512i w = _mm512_loadu_si512(chunk + 4 * WIDE_ROWS * j);
                const __m512i wu = k.sign ? _mm512_abs_epi8(w) : w;
                const __mmask64 neg = k.sign ? _mm512_movepi8_mask(w) : 0;
                const __m512i sc = _mm512_loadu_si512(chunk + scales_at(WIDE_ROWS) + 4 * WIDE_ROWS * (j >= 4));
                for (int t = 0; t < nt; t++) {
                    __m512i x = _mm512_set1_epi32((int)rd32(ablk + (uint64_t)t * as + act_quants_at(k) + 32 * c + 4 * j));
                    if (k.sign)
                        x = _mm512_mask_sub_epi8(x, neg, zero, x);
                    isum[t] = _mm512_dpwssd_epi32(isum[t], _mm512_maddubs_epi16(wu, x), sc);
                }
            }
            if (k.min == GMIN_LANES) { /* group j: chunk j's scale pairs against the halves' bsums, times 32 */
                const __m512i pairs = _mm512_loadu_si512(p + 8 * WIDE_ROWS + (uint64_t)j * chunk_bytes(k, WIDE_ROWS) +
                                                         min_pairs_at(k, WIDE_ROWS));
                for (int t = 0; t < nt; t++) {
                    int32_t pair;
                    memcpy(&pair, ablk + (uint64_t)t * as + 4 + QK_K + 4 * j, 4);
                    const __m512i offsets = _mm512_madd_epi16(pairs, _mm512_set1_epi32(pair));
                    isum[t] = _mm512_sub_epi32(isum[t], _mm512_slli_epi32(offsets, 5));
                }
            }
            for (int t = 0; t < nt; t++) {
                const __m512 dd = _mm512_mul_ps(d, _mm512_set1_ps(act_d(k, ablk + (uint64_t)t * as)));
                acc[t][j] = _mm512_fmadd_ps(dd, _mm512_cvtepi32_ps(isum[t]), acc[t][j]);
            }
        }
    }
    /* hsum_float_8's order, lane-wise: ((a0 + a4) + (a2 + a6)) + ((a1 + a5) + (a3 + a7)) */
    for (int t = 0; t < nt; t++) {
        const __m512 *v = acc[t];
        const __m512 s = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(v[0], v[4]), _mm512_add_ps(v[2], v[6])),
                                       _mm512_add_ps(_mm512_add_ps(v[1], v[5]), _mm512_add_ps(v[3], v[7])));
        out[t] = k.min == GMIN_GROUPED ? _mm512_sub_ps(s, mins[t]) : s;
    }
}

/* ORDER_GROUPS, 256-value blocks: T activation rows against the 16-row panel's first nr rows. */
GEMM_TARGET static INLINE void gemm_groups16(gemm_kind k, const uint8_t *panel, const uint8_t *a, uint64_t as, int T,
                                             int64_t n, float *y, int64_t ld, int nr)
{
    __m512 o[GEMM_TOKENS];
    for (int t = 0; t < T; t += GROUP256_TOKENS) {
        const int nt = T - t < GROUP256_TOKENS ? T - t : GROUP256_TOKENS;
        const uint8_t *at = a + (uint64_t)t * as;
        if (nt == 3) /* nt a constant in each call: its loops unroll into registers */
            gemm_tokens_groups16(k, panel, at, as, 3, n, o);
        else if (nt == 2)
            gemm_tokens_groups16(k, panel, at, as, 2, n, o);
        else
            gemm_tokens_groups16(k, panel, at, as, 1, n, o);
        for (int j = 0; j < nt; j++)
            _mm512_mask_storeu_ps(y + (t + j) * ld, (__mmask16)((1u << nr) - 1), o[j]);
    }
}
#endif

GEMM_TARGET static INLINE void store_rows(__m256 v, float *y, int nr)
{
    if (nr == PANEL_ROWS) {
        _mm256_storeu_ps(y, v);
        return;
    }
    float tmp[PANEL_ROWS];
    _mm256_storeu_ps(tmp, v);
    memcpy(y, tmp, (size_t)nr * sizeof(float));
}

/* ORDER_GROUPS: T activation rows (a, stride as) against the 8-row panel's first nr rows, into y[t * ld + r]. */
GEMM_TARGET static INLINE void gemm_groups8(gemm_kind k, const uint8_t *panel, const uint8_t *a, uint64_t as, int T,
                                            int64_t n, float *y, int64_t ld, int nr)
{
    const int step = k.sb == 32 ? GROUP_TOKENS : 1;
    __m256 o[GEMM_TOKENS];
    for (int t = 0; t < T; t += step) {
        const int nt = T - t < step ? T - t : step;
        const uint8_t *at = a + (uint64_t)t * as;
        if (nt == GROUP_TOKENS && step == GROUP_TOKENS)
            gemm_tokens_groups(k, panel, at, as, GROUP_TOKENS, n, o);
        else
            gemm_tokens_groups(k, panel, at, as, 1, n, o);
        for (int j = 0; j < nt; j++)
            store_rows(o[j], y + (t + j) * ld, nr);
    }
}

#if GEMM_VNNI
/* ORDER_ROWS on 16 rows: nt (1..4) activation rows against the 16-row panel, out[t] lane r row r's product. */
GEMM_TARGET static INLINE void gemm_tokens(gemm_kind k, const uint8_t *panel, const uint8_t *a, uint64_t as,
                                             const int16_t *sums, int64_t ns, int nt, int64_t n,
                                             __m512 out[GEMM_TOKENS])
{
    const __m512i offs = _mm512_set1_epi16((short)k.off);
    __m512 acc[GEMM_TOKENS], accm[GEMM_TOKENS];
    for (int t = 0; t < nt; t++)
        acc[t] = accm[t] = _mm512_setzero_ps();
    const int step = k.step && nt == GEMM_TOKENS ? k.step : k.sb / 32; /* chunks per f32 step (gemm_kind) */
    const uint8_t *p = panel;
    for (int64_t i = 0; i < n; i += k.sb) {
        const __m512 d = _mm512_loadu_ps(p), dm = _mm512_loadu_ps(p + 64);
        p += 128;
        __m512i isum[GEMM_TOKENS], imin[GEMM_TOKENS];
        for (int t = 0; t < nt; t++)
            isum[t] = _mm512_setzero_si512(), imin[t] = _mm512_setzero_si512();
        const uint8_t *ablk = a + (uint64_t)(i / act_block_values(k)) * act_block_bytes(k);
        for (int c = 0; c < k.sb / 32; c++, p += chunk_bytes(k, WIDE_ROWS)) {
            const int64_t v0 = i + 32 * c;
            const uint8_t *aq = ablk + act_quants_at(k) + v0 % act_block_values(k);
            /* a half's 4 groups (one scale), or all 8 where the halves share one (or none) */
            const int run = k.scaled && !k.scale32 ? 4 : 8;
            __m512i part[GEMM_TOKENS] = { 0 };
            for (int j = 0; j < 8; j++) {
                const __m512i w = _mm512_loadu_si512(p + 64 * j);
                for (int t = 0; t < nt; t++) {
                    const __m512i x = _mm512_set1_epi32((int)rd32(aq + (uint64_t)t * as + 4 * j));
                    part[t] = _mm512_dpbusd_epi32(j % run == 0 ? _mm512_setzero_si512() : part[t], w, x);
                    if (j % run == run - 1) {
                        __m512i v = part[t];
                        if (k.scaled) { /* the int16 pairs (s, s) as int32 s */
                            const __m512i pairs = _mm512_loadu_si512(p + scales_at(WIDE_ROWS) + 64 * (j >= 4));
                            v = _mm512_mullo_epi32(v, _mm512_srai_epi32(_mm512_slli_epi32(pairs, 16), 16));
                        }
                        isum[t] = _mm512_add_epi32(isum[t], v);
                    }
                }
            }
            if (k.off || k.min == GMIN_GROUPED) {
                for (int t = 0; t < nt; t++) {
                    int32_t pair;
                    memcpy(&pair, sums + t * ns + v0 / 16, 4);
                    const __m512i bs = _mm512_set1_epi32(pair);
                    if (k.min == GMIN_OFFSET)
                        isum[t] = _mm512_sub_epi32(
                            isum[t], _mm512_madd_epi16(_mm512_loadu_si512(p + min_pairs_at(k, WIDE_ROWS)), bs));
                    else if (k.off)
                        isum[t] = _mm512_sub_epi32(isum[t], _mm512_madd_epi16(offs, bs));
                    if (k.min == GMIN_GROUPED)
                        imin[t] = _mm512_add_epi32(
                            imin[t], _mm512_madd_epi16(_mm512_loadu_si512(p + min_pairs_at(k, WIDE_ROWS)), bs));
                }
            }
            if ((c + 1) % step)
                continue;
            for (int t = 0; t < nt; t++) {
                const __m512 da = _mm512_set1_ps(act_d(k, ablk + (uint64_t)t * as));
                if (k.tiled) {
                    acc[t] = _mm512_fmadd_ps(tiled_block16(k, isum[t], imin[t], d, dm), da, acc[t]);
                    isum[t] = imin[t] = _mm512_setzero_si512();
                    continue;
                }
                acc[t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum[t]), _mm512_mul_ps(d, da), acc[t]);
                if (k.min == GMIN_GROUPED && k.step)
                    accm[t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(imin[t]), _mm512_mul_ps(dm, da), accm[t]);
                else if (k.min == GMIN_GROUPED)
                    acc[t] = _mm512_fnmadd_ps(_mm512_cvtepi32_ps(imin[t]), _mm512_mul_ps(dm, da), acc[t]);
                isum[t] = imin[t] = _mm512_setzero_si512();
            }
        }
    }
    for (int t = 0; t < nt; t++)
        out[t] = k.step ? _mm512_sub_ps(acc[t], accm[t]) : acc[t];
}

#endif

/* ORDER_ROWS results: one register holds all the panel's rows (16 in zmm with VNNI, 8 in ymm). */
#if GEMM_VNNI
typedef __m512 rows_vec;
#else
typedef __m256 rows_vec;
#endif

GEMM_TARGET static INLINE void store_rows_vec(rows_vec v, float *y, int nr)
{
#if GEMM_VNNI
    _mm512_mask_storeu_ps(y, (__mmask16)((1u << nr) - 1), v);
#else
    store_rows(v, y, nr);
#endif
}

/* ORDER_ROWS: T activation rows (a, stride as; their sums of 16 at sums, n / 16 per row) against the
 * panel's first nr rows, into y[t * ld + r]. */
GEMM_TARGET static INLINE void gemm_rows(gemm_kind k, const uint8_t *panel, const uint8_t *a, uint64_t as,
                                         const int16_t *sums, int T, int64_t n, float *y, int64_t ld, int nr)
{
    const int64_t ns = n / 16;
    rows_vec o[GEMM_TOKENS];
    for (int t = 0; t < T; t += GEMM_TOKENS) {
        const int nt = T - t < GEMM_TOKENS ? T - t : GEMM_TOKENS;
        const uint8_t *at = a + (uint64_t)t * as;
        if (nt == 4) /* nt a constant in each call: its loops unroll into registers */
            gemm_tokens(k, panel, at, as, sums + t * ns, ns, 4, n, o);
        else if (nt == 3)
            gemm_tokens(k, panel, at, as, sums + t * ns, ns, 3, n, o);
        else if (nt == 2)
            gemm_tokens(k, panel, at, as, sums + t * ns, ns, 2, n, o);
        else
            gemm_tokens(k, panel, at, as, sums + t * ns, ns, 1, n, o);
        for (int j = 0; j < nt; j++)
            store_rows_vec(o[j], y + (t + j) * ld, nr);
    }
}

/* Whether the kind's panel holds 16 rows in 512-bit lanes (VNNI: the ORDER_ROWS kinds and the 256-value
 * ORDER_GROUPS ones), or PANEL_OF / 8 panels of 8 rows. */
static INLINE bool wide_panel(gemm_kind k)
{
    return GEMM_VNNI && (k.order == ORDER_ROWS || k.sb == 256);
}

/* nr (1..PANEL_OF) rows into a panel of PANEL_OF rows. */
GEMM_TARGET static INLINE void pack_panel(gemm_type g, gemm_kind k, const uint8_t *w, uint64_t rb, int nr, int64_t n,
                                          uint8_t *p)
{
#if GEMM_VNNI
    if (wide_panel(k)) {
        pack_body(g, k, WIDE_ROWS, w, rb, nr, n, p);
        return;
    }
    pack_body(g, k, PANEL_ROWS, w, rb, nr < 8 ? nr : 8, n, p);
    if (nr > 8) /* rows 8.. as a second 8-row panel */
        pack_body(g, k, PANEL_ROWS, w + 8 * rb, rb, nr - 8, n,
                  p + (uint64_t)(n / k.sb) * block_panel_bytes(k, PANEL_ROWS));
#else
    pack_body(g, k, PANEL_ROWS, w, rb, nr, n, p);
#endif
}

GEMM_TARGET static INLINE void gemm_panel(gemm_kind k, const uint8_t *panel, const uint8_t *a, uint64_t as,
                                          const int16_t *sums, int T, int64_t n, float *y, int64_t ld, int nr)
{
#if GEMM_VNNI
    if (k.order == ORDER_ROWS) {
        gemm_rows(k, panel, a, as, sums, T, n, y, ld, nr);
        return;
    }
    if (k.sb == 256) {
        gemm_groups16(k, panel, a, as, T, n, y, ld, nr);
        return;
    }
    gemm_groups8(k, panel, a, as, T, n, y, ld, nr < 8 ? nr : 8);
    if (nr > 8)
        gemm_groups8(k, panel + (uint64_t)(n / k.sb) * block_panel_bytes(k, PANEL_ROWS), a, as, T, n, y + 8, ld,
                     nr - 8);
#else
    if (k.order == ORDER_ROWS)
        gemm_rows(k, panel, a, as, sums, T, n, y, ld, nr);
    else
        gemm_groups8(k, panel, a, as, T, n, y, ld, nr);
#endif
}

#define GEMM_PASTE(a, b) a##b
#define GEMM_XPASTE(a, b) GEMM_PASTE(a, b)
#define GEMM_FN(stem) GEMM_XPASTE(stem, GEMM_SUFFIX)
/* The panel's rows: 16 with VNNI (ORDER_ROWS kinds in zmm, ORDER_GROUPS ones as two 8-row panels), else 8. */
#define PANEL_OF (GEMM_VNNI ? 16 : 8)
#define GEMM_ENTRY_POINTS(name, g)                                                                              \
    uint64_t GEMM_FN(cpu_act_panel_bytes_##name)(int64_t n)                                                  \
    {                                                                                                          \
        /* 16-row panels (wide_panel), or PANEL_OF / 8 panels of 8 rows */                                     \
        return wide_panel(kinds[g]) ? (uint64_t)(n / kinds[g].sb) * block_panel_bytes(kinds[g], WIDE_ROWS)     \
                                                         : (uint64_t)(PANEL_OF / 8) * (uint64_t)(n / kinds[g].sb) *  \
                                                               block_panel_bytes(kinds[g], PANEL_ROWS);        \
    }                                                                                                          \
    GEMM_TARGET void GEMM_FN(cpu_act_pack_##name)(const void *w, uint64_t rb, int nr, int64_t n, void *panel) \
    {                                                                                                          \
        pack_panel(g, kinds[g], w, rb, nr, n, panel);                                                          \
    }                                                                                                          \
    GEMM_TARGET void GEMM_FN(cpu_act_gemm_##name)(const void *panel, const void *a, uint64_t as,              \
                                                    const int16_t *sums, int T, int64_t n, float *y, int64_t ld, \
                                                    int nr)                                                    \
    {                                                                                                          \
        gemm_panel(kinds[g], panel, a, as, sums, T, n, y, ld, nr);                                             \
    }
GEMM_ENTRY_POINTS(q4_0, G_Q4_0)
GEMM_ENTRY_POINTS(q5_0, G_Q5_0)
GEMM_ENTRY_POINTS(q8_0, G_Q8_0)
GEMM_ENTRY_POINTS(iq4_nl, G_IQ4_NL)
GEMM_ENTRY_POINTS(q4_1, G_Q4_1)
GEMM_ENTRY_POINTS(q5_1, G_Q5_1)
GEMM_ENTRY_POINTS(q2_k, G_Q2_K)
GEMM_ENTRY_POINTS(q3_k, G_Q3_K)
GEMM_ENTRY_POINTS(q4_k, G_Q4_K)
GEMM_ENTRY_POINTS(q5_k, G_Q5_K)
GEMM_ENTRY_POINTS(q6_k, G_Q6_K)
GEMM_ENTRY_POINTS(iq4_xs, G_IQ4_XS)
GEMM_ENTRY_POINTS(q2_k_tiled, G_Q2_K_TILED)
GEMM_ENTRY_POINTS(q3_k_tiled, G_Q3_K_TILED)
GEMM_ENTRY_POINTS(q5_k_tiled, G_Q5_K_TILED)
GEMM_ENTRY_POINTS(q6_k_tiled, G_Q6_K_TILED)
GEMM_ENTRY_POINTS(iq4_xs_tiled, G_IQ4_XS_TILED)
