/*
 * f32 -> Q4_K, Q5_K and Q6_K, choosing every scale and every quant as ggml's
 * reference quantizers do (quantize_row_q4_K_ref, _q5_K_ref and quantize_row_q6_K_ref in
 * ggml/src/ggml-quants.c: what llama-quantize runs when it has no importance
 * matrix), so that a tensor we quantize holds the bytes llama.cpp's would.
 * That only holds if every float operation happens in the same order with
 * the same roundings: quant/ is compiled with -ffp-contract=off, and the
 * expressions below keep the reference's association, so do not "simplify"
 * them. The tests compare bytes with ggml's own output.
 */
#include "blocks.h"

#include <math.h>

static int clamp_int(int v, int lo, int hi) { return v < lo ? lo : v > hi ? hi : v; }

/*
 * Fits x[i] ~ scale * L[i] + min with L[i] in [0, nmax] and min <= 0,
 * minimising sum w[i] (scale L[i] + min - x[i])^2 (or w[i] |scale L[i] + min - x[i]| where mad: Q2_K's) over the
 * scales (nmax + rmin + rdelta k) / (max - min), k = 0..nstep, each refined by
 * weighted least squares (ggml's make_qkx2_quants, use_mad as mad).
 * Returns the scale and stores -min in *neg_min.
 */
static float error_of(float diff, bool mad) { return mad ? fabsf(diff) : diff * diff; }

static float fit_scale_and_min(int n, int nmax, const float *x, const float *w, uint8_t *L, float *neg_min,
                               float rmin, float rdelta, int nstep, bool mad)
{
    float min = x[0], max = x[0], sum_w = w[0], sum_x = sum_w * x[0];
    for (int i = 1; i < n; i++) {
        if (x[i] < min)
            min = x[i];
        if (x[i] > max)
            max = x[i];
        sum_w += w[i];
        sum_x += w[i] * x[i];
    }
    if (min > 0)
        min = 0;
    if (max == min) {
        memset(L, 0, (size_t)n);
        *neg_min = -min;
        return 0.0f;
    }
    float iscale = nmax / (max - min), scale = 1 / iscale, best_error = 0;
    for (int i = 0; i < n; i++) {
        L[i] = (uint8_t)clamp_int(quant_nearest_int(iscale * (x[i] - min)), 0, nmax);
        const float diff = scale * L[i] + min - x[i];
        best_error += w[i] * error_of(diff, mad);
    }
    uint8_t trial[32];
    for (int step = 0; step <= nstep; step++) {
        iscale = (rmin + rdelta * step + nmax) / (max - min);
        float sum_l = 0, sum_l2 = 0, sum_xl = 0;
        for (int i = 0; i < n; i++) {
            const int l = clamp_int(quant_nearest_int(iscale * (x[i] - min)), 0, nmax);
            trial[i] = (uint8_t)l;
            sum_l += w[i] * l;
            sum_l2 += w[i] * l * l;
            sum_xl += w[i] * l * x[i];
        }
        const float det = sum_w * sum_l2 - sum_l * sum_l;
        if (!(det > 0))
            continue;
        float this_scale = (sum_w * sum_xl - sum_x * sum_l) / det;
        float this_min = (sum_l2 * sum_x - sum_l * sum_xl) / det;
        if (this_min > 0) {
            this_min = 0;
            this_scale = sum_xl / sum_l2;
        }
        float error = 0;
        for (int i = 0; i < n; i++) {
            const float diff = this_scale * trial[i] + this_min - x[i];
            error += w[i] * error_of(diff, mad);
        }
        if (error < best_error) {
            memcpy(L, trial, (size_t)n);
            best_error = error;
            scale = this_scale;
            min = this_min;
        }
    }
    *neg_min = -min;
    return scale;
}

/*
 * Fits x[i] ~ scale * (L[i] - nmax) with L[i] - nmax in [-nmax, nmax - 1],
 * weighting each value by x[i]^2: the scale that maps the value of largest
 * magnitude to -nmax, then 18 nearby ones, keeping the best least-squares fit
 * (ggml's make_qx_quants with rmse_type 1 and no importance weights).
 */
static float fit_symmetric_scale(int n, int nmax, const float *x, int8_t *L)
{
    float max = 0, amax = 0;
    for (int i = 0; i < n; i++) {
        if (fabsf(x[i]) > amax) {
            amax = fabsf(x[i]);
            max = x[i];
        }
    }
    if (amax < 1e-15f) { /* ggml's GROUP_MAX_EPS: an all-zero group */
        memset(L, 0, (size_t)n);
        return 0.0f;
    }
    float iscale = -nmax / max, sumlx = 0, suml2 = 0;
    for (int i = 0; i < n; i++) {
        const int l = clamp_int(quant_nearest_int(iscale * x[i]), -nmax, nmax - 1);
        L[i] = (int8_t)(l + nmax);
        const float w = x[i] * x[i];
        sumlx += w * x[i] * l;
        suml2 += w * l * l;
    }
    float scale = suml2 ? sumlx / suml2 : 0.0f, best = scale * sumlx;
    for (int step = -9; step <= 9; step++) {
        if (step == 0)
            continue;
        iscale = -(nmax + 0.1f * step) / max;
        sumlx = suml2 = 0;
        for (int i = 0; i < n; i++) {
            const int l = clamp_int(quant_nearest_int(iscale * x[i]), -nmax, nmax - 1);
            const float w = x[i] * x[i];
            sumlx += w * x[i] * l;
            suml2 += w * l * l;
        }
        if (suml2 > 0 && sumlx * sumlx > best * suml2) {
            for (int i = 0; i < n; i++)
                L[i] = (int8_t)(nmax + clamp_int(quant_nearest_int(iscale * x[i]), -nmax, nmax - 1));
            scale = sumlx / suml2;
            best = scale * sumlx;
        }
    }
    return scale;
}

/*
 * The scales, mins and quants Q4_K and Q5_K share: each 32-value group j fitted as d s_j q - dmin m_j with
 * q in [0, nmax] (weights av|x| + |x|, as the reference), the 6-bit s_j and m_j packed into head[4..16) as
 * kq_scale_min (blocks.h) draws them, d and dmin (f16) into head[0..4), then every quant chosen again against the
 * rounded scales. rmin and nstep are the fit's search (Q4_K: -1, 20 steps; Q5_K: -0.5, 15).
 */
static void k_scales_and_quants(const float *x, int nmax, float rmin, int nstep, uint8_t *head, uint8_t L[QK_K])
{
    float scales[8], mins[8], w[32];
    float max_scale = 0, max_min = 0;
    for (int j = 0; j < 8; j++) {
        const float *xj = x + 32 * j;
        float sum_x2 = 0;
        for (int l = 0; l < 32; l++)
            sum_x2 += xj[l] * xj[l];
        const float av_x = sqrtf(sum_x2 / 32);
        for (int l = 0; l < 32; l++)
            w[l] = av_x + fabsf(xj[l]);
        scales[j] = fit_scale_and_min(32, nmax, xj, w, L + 32 * j, &mins[j], rmin, 0.1f, nstep, false);
        if (scales[j] > max_scale)
            max_scale = scales[j];
        if (mins[j] > max_min)
            max_min = mins[j];
    }
    const float inv_scale = max_scale > 0 ? 63.0f / max_scale : 0.0f;
    const float inv_min = max_min > 0 ? 63.0f / max_min : 0.0f;
    uint8_t *sc = head + 4;
    memset(sc, 0, 12);
    for (int j = 0; j < 8; j++) {
        /* the reference stores the rounded value in a byte before clamping */
        const uint8_t ls = (uint8_t)quant_nearest_int(inv_scale * scales[j]), lm = (uint8_t)quant_nearest_int(inv_min * mins[j]);
        const uint8_t s6 = ls < 63 ? ls : 63, m6 = lm < 63 ? lm : 63;
        if (j < 4) {
            sc[j] = s6;
            sc[j + 4] = m6;
        } else {
            sc[j + 4] = (uint8_t)((s6 & 0xf) | (m6 & 0xf) << 4);
            sc[j - 4] |= (uint8_t)((s6 >> 4) << 6);
            sc[j] |= (uint8_t)((m6 >> 4) << 6);
        }
    }
    const uint16_t d16 = quant_f32_to_f16(max_scale / 63.0f), dmin16 = quant_f32_to_f16(max_min / 63.0f);
    memcpy(head, &d16, 2);
    memcpy(head + 2, &dmin16, 2);
    const float d = quant_f16_to_f32(d16), dmin = quant_f16_to_f32(dmin16);
    for (int j = 0; j < 8; j++) {
        uint8_t s6, m6;
        kq_scale_min(j, sc, &s6, &m6);
        const float dj = d * s6;
        if (!dj) /* keeps the fit's quants, as the reference does */
            continue;
        const float mj = dmin * m6;
        for (int l = 0; l < 32; l++)
            L[32 * j + l] = (uint8_t)clamp_int(quant_nearest_int((x[32 * j + l] + mj) / dj), 0, nmax);
    }
}

/*
 * Q4_K block (144 bytes; ggml-common.h block_q4_K):
 *   d (f16) | dmin (f16) | scales[12] | qs[128]
 * qs[32 c + l] holds value 64 c + l in its low nibble and 64 c + 32 + l in its high one.
 * Value = d s_j q - dmin m_j.
 */
static void quantize_q4_k_block(const float *x, uint8_t *b)
{
    uint8_t L[QK_K];
    k_scales_and_quants(x, 15, -1.0f, 20, b, L);
    uint8_t *qs = b + 16;
    for (int c = 0; c < 4; c++)
        for (int l = 0; l < 32; l++)
            qs[32 * c + l] = (uint8_t)(L[64 * c + l] | L[64 * c + 32 + l] << 4);
}

/*
 * Q5_K block (176 bytes; block_q5_K): d (f16) | dmin (f16) | scales[12] | qh[32] | qs[128]
 * Q4_K's layout for the low four bits of each 5-bit quant; bit 4 of value 64 c + l is bit 2c of qh[l], of value
 * 64 c + 32 + l bit 2c + 1.
 */
static void quantize_q5_k_block(const float *x, uint8_t *b)
{
    uint8_t L[QK_K];
    k_scales_and_quants(x, 31, -0.5f, 15, b, L);
    uint8_t *qh = b + 16, *qs = b + 48;
    memset(qh, 0, 32);
    for (int c = 0; c < 4; c++)
        for (int l = 0; l < 32; l++) {
            const uint8_t lo = L[64 * c + l], hi = L[64 * c + 32 + l];
            qh[l] |= (uint8_t)((lo >> 4) << (2 * c) | (hi >> 4) << (2 * c + 1));
            qs[32 * c + l] = (uint8_t)((lo & 0xf) | (hi & 0xf) << 4);
        }
}

/*
 * Q6_K block (210 bytes; ggml-common.h block_q6_K):
 *   ql[128] | qh[64] | scales[16] (int8, one per 16 values) | d (f16)
 * Value = d scales[g] (q - 32), q six bits: for half h (128 values) and l < 32,
 *   q(128h + l)      = low nibble of ql[64h + l]      | bits 0-1 of qh[32h + l] << 4
 *   q(128h + l + 32) = low nibble of ql[64h + l + 32] | bits 2-3 of qh[32h + l] << 4
 *   q(128h + l + 64) = high nibble of ql[64h + l]      | bits 4-5 of qh[32h + l] << 4
 *   q(128h + l + 96) = high nibble of ql[64h + l + 32] | bits 6-7 of qh[32h + l] << 4
 */
static void quantize_q6_k_block(const float *x, uint8_t *b)
{
    int8_t L[QK_K];
    float scales[16], max_scale = 0, max_abs_scale = 0;
    for (int g = 0; g < 16; g++) {
        scales[g] = fit_symmetric_scale(16, 32, x + 16 * g, L + 16 * g);
        if (fabsf(scales[g]) > max_abs_scale) {
            max_abs_scale = fabsf(scales[g]);
            max_scale = scales[g];
        }
    }
    if (max_abs_scale < 1e-15f) {
        memset(b, 0, 210);
        return;
    }
    const float iscale = -128.0f / max_scale;
    const uint16_t d16 = quant_f32_to_f16(1 / iscale);
    memcpy(b + 208, &d16, 2);
    int8_t *sc = (int8_t *)(b + 192);
    for (int g = 0; g < 16; g++) {
        const int s = quant_nearest_int(iscale * scales[g]);
        sc[g] = (int8_t)(s < 127 ? s : 127);
    }
    const float d = quant_f16_to_f32(d16);
    for (int g = 0; g < 16; g++) {
        const float dg = d * sc[g];
        if (!dg) /* keeps the fit's quants, as the reference does */
            continue;
        for (int i = 0; i < 16; i++)
            L[16 * g + i] = (int8_t)(clamp_int(quant_nearest_int(x[16 * g + i] / dg), -32, 31) + 32);
    }
    uint8_t *ql = b, *qh = b + 128;
    for (int h = 0; h < 2; h++, ql += 64, qh += 32) {
        const int8_t *q = L + 128 * h;
        for (int l = 0; l < 32; l++) {
            ql[l] = (uint8_t)((q[l] & 0xf) | (q[l + 64] & 0xf) << 4);
            ql[l + 32] = (uint8_t)((q[l + 32] & 0xf) | (q[l + 96] & 0xf) << 4);
            qh[l] = (uint8_t)(q[l] >> 4 | (q[l + 32] >> 4) << 2 | (q[l + 64] >> 4) << 4 | (q[l + 96] >> 4) << 6);
        }
    }
}

/*
 * Fits x[i] ~ scale * (L[i] - nmax) with L[i] - nmax in [-nmax, nmax - 1] for Q3_K: the scale that maps the value of
 * largest magnitude to -nmax, then up to five passes that move one quant at a time to where the weighted (x[i]^2)
 * least-squares fit of the others puts it, keeping a move that improves the fit (ggml's make_q3_quants with do_rmse).
 */
static float fit_q3_scale(int n, int nmax, const float *x, int8_t *L)
{
    float max = 0, amax = 0;
    for (int i = 0; i < n; i++) {
        if (fabsf(x[i]) > amax) {
            amax = fabsf(x[i]);
            max = x[i];
        }
    }
    if (amax < 1e-15f) { /* an all-zero group */
        memset(L, 0, (size_t)n);
        return 0.0f;
    }
    const float iscale = -nmax / max;
    float sumlx = 0, suml2 = 0;
    for (int i = 0; i < n; i++) {
        const int l = clamp_int(quant_nearest_int(iscale * x[i]), -nmax, nmax - 1);
        L[i] = (int8_t)l;
        const float w = x[i] * x[i];
        sumlx += w * x[i] * l;
        suml2 += w * l * l;
    }
    for (int pass = 0; pass < 5; pass++) {
        int moved = 0;
        for (int i = 0; i < n; i++) {
            const float w = x[i] * x[i];
            float slx = sumlx - w * x[i] * L[i];
            if (!(slx > 0))
                continue;
            float sl2 = suml2 - w * L[i] * L[i];
            const int l = clamp_int(quant_nearest_int(x[i] * sl2 / slx), -nmax, nmax - 1);
            if (l == L[i])
                continue;
            slx += w * x[i] * l;
            sl2 += w * l * l;
            if (sl2 > 0 && slx * slx * suml2 > sumlx * sumlx * sl2) {
                L[i] = (int8_t)l;
                sumlx = slx;
                suml2 = sl2;
                moved++;
            }
        }
        if (!moved)
            break;
    }
    for (int i = 0; i < n; i++)
        L[i] = (int8_t)(L[i] + nmax);
    return suml2 > 0.0f ? sumlx / suml2 : 0.0f;
}

/* Q2_K's and Q3_K's two-bit quants of 256 values, four to a byte as ggml packs them: byte 32 h + l of half h (128
 * values) holds values 128 h + l, + 32, + 64, + 96 in its bit pairs from the lowest. */
static void pack_2bit(const uint8_t *L, uint8_t *qs)
{
    for (int j = 0; j < QK_K; j += 128)
        for (int l = 0; l < 32; l++)
            qs[j / 4 + l] = (uint8_t)(L[j + l] | L[j + l + 32] << 2 | L[j + l + 64] << 4 | L[j + l + 96] << 6);
}

/*
 * Q2_K block (84 bytes; block_q2_K): scales[16] (low nibble a group's scale, high its min) | qs[64] | d | dmin (f16)
 * Value = d s_g q - dmin m_g, q two bits, each group of 16 fitted with weights |x| by mean absolute error.
 */
static void quantize_q2_k_block(const float *x, uint8_t *b)
{
    uint8_t L[QK_K];
    float scales[16], mins[16], w[16];
    float max_scale = 0, max_min = 0;
    for (int g = 0; g < 16; g++) {
        for (int l = 0; l < 16; l++)
            w[l] = fabsf(x[16 * g + l]);
        scales[g] = fit_scale_and_min(16, 3, x + 16 * g, w, L + 16 * g, &mins[g], -0.5f, 0.1f, 15, true);
        if (scales[g] > max_scale)
            max_scale = scales[g];
        if (mins[g] > max_min)
            max_min = mins[g];
    }
    uint8_t *sc = b;
    uint16_t d16 = 0, dmin16 = 0;
    if (max_scale > 0) {
        const float iscale = 15.0f / max_scale;
        for (int g = 0; g < 16; g++)
            sc[g] = (uint8_t)quant_nearest_int(iscale * scales[g]);
        d16 = quant_f32_to_f16(max_scale / 15.0f);
    } else {
        memset(sc, 0, 16);
    }
    if (max_min > 0) {
        const float iscale = 15.0f / max_min;
        for (int g = 0; g < 16; g++)
            sc[g] |= (uint8_t)(quant_nearest_int(iscale * mins[g]) << 4);
        dmin16 = quant_f32_to_f16(max_min / 15.0f);
    }
    memcpy(b + 80, &d16, 2);
    memcpy(b + 82, &dmin16, 2);
    const float d = quant_f16_to_f32(d16), dmin = quant_f16_to_f32(dmin16);
    for (int g = 0; g < 16; g++) {
        const float dg = d * (sc[g] & 0xF);
        if (!dg) /* keeps the fit's quants, as the reference does */
            continue;
        const float mg = dmin * (sc[g] >> 4);
        for (int l = 0; l < 16; l++)
            L[16 * g + l] = (uint8_t)clamp_int(quant_nearest_int((x[16 * g + l] + mg) / dg), 0, 3);
    }
    pack_2bit(L, b + 16);
}

/*
 * Q3_K block (110 bytes; block_q3_K): hmask[32] | qs[64] | scales[12] | d (f16)
 * Value = d s_g (q - 4), q three bits: its low two in qs as Q2_K's, its high one bit (v / 32) of hmask[v % 32]; the
 * 16 six-bit scales (s_g + 32) as low nibbles in scales[0..8) (groups 0-7 low, 8-15 high) and their top two bits in
 * scales[8..12) (group g's at bit 2 (g / 4) of byte 8 + g % 4).
 */
static void quantize_q3_k_block(const float *x, uint8_t *b)
{
    int8_t L[QK_K];
    float scales[16], max_scale = 0, amax = 0;
    for (int g = 0; g < 16; g++) {
        scales[g] = fit_q3_scale(16, 4, x + 16 * g, L + 16 * g);
        if (fabsf(scales[g]) > amax) {
            amax = fabsf(scales[g]);
            max_scale = scales[g];
        }
    }
    uint8_t *hmask = b, *qs = b + 32, *sc = b + 96;
    memset(sc, 0, 12);
    uint16_t d16 = 0;
    if (max_scale) {
        const float iscale = -32.0f / max_scale;
        for (int g = 0; g < 16; g++) {
            const int l = clamp_int((int8_t)quant_nearest_int(iscale * scales[g]), -32, 31) + 32;
            if (g < 8)
                sc[g] = (uint8_t)(l & 0xF);
            else
                sc[g - 8] |= (uint8_t)((l & 0xF) << 4);
            sc[8 + g % 4] |= (uint8_t)((l >> 4) << (2 * (g / 4)));
        }
        d16 = quant_f32_to_f16(1 / iscale);
    }
    memcpy(b + 108, &d16, 2);
    const float d = quant_f16_to_f32(d16);
    for (int g = 0; g < 16; g++) {
        const int lo = g < 8 ? sc[g] & 0xF : sc[g - 8] >> 4;
        const int s = (lo | ((sc[8 + g % 4] >> (2 * (g / 4))) & 3) << 4) - 32;
        const float dg = d * s;
        if (!dg) /* keeps the fit's quants, as the reference does */
            continue;
        for (int l = 0; l < 16; l++)
            L[16 * g + l] = (int8_t)(clamp_int(quant_nearest_int(x[16 * g + l] / dg), -4, 3) + 4);
    }
    memset(hmask, 0, 32);
    uint8_t low[QK_K];
    for (int v = 0; v < QK_K; v++) {
        if (L[v] > 3)
            hmask[v % 32] |= (uint8_t)(1u << (v / 32));
        low[v] = (uint8_t)(L[v] > 3 ? L[v] - 4 : L[v]);
    }
    pack_2bit(low, qs);
}

/* n values, a block of 256 at a time, each into its bytes of dst */
static void k_blocks(const float *x, uint8_t *dst, int64_t n, size_t bytes, void (*block)(const float *, uint8_t *))
{
    for (int64_t i = 0; i < n; i += QK_K)
        block(x + i, dst + (size_t)(i / QK_K) * bytes);
}

void quant_quantize_q2_k(const float *x, uint8_t *dst, int64_t n)
{
    k_blocks(x, dst, n, 84, quantize_q2_k_block);
}

void quant_quantize_q3_k(const float *x, uint8_t *dst, int64_t n)
{
    k_blocks(x, dst, n, 110, quantize_q3_k_block);
}

void quant_quantize_q4_k(const float *x, uint8_t *dst, int64_t n)
{
    k_blocks(x, dst, n, 144, quantize_q4_k_block);
}

void quant_quantize_q5_k(const float *x, uint8_t *dst, int64_t n)
{
    k_blocks(x, dst, n, 176, quantize_q5_k_block);
}

void quant_quantize_q6_k(const float *x, uint8_t *dst, int64_t n)
{
    k_blocks(x, dst, n, 210, quantize_q6_k_block);
}
