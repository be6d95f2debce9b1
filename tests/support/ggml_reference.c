#include "ggml_reference.h"

#include "quant.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

float ggml_ref_expf(float x, bool wide)
{
    const float z = fmaf(x, 0x1.715476p+0f, 0x1.8p23f), n = z - 0x1.8p23f;
    const float b = fmaf(-n, 0x1.7f7d1cp-20f, fmaf(-n, 0x1.62e4p-1f, x)), u = b * b;
    const float upper = fmaf(fmaf(0x1.0e4020p-7f, b, 0x1.573e2ep-5f), u, fmaf(0x1.555e66p-3f, b, 0x1.fffdb6p-2f));
    if (wide) {
        if (fabsf(n) > 192.0f)
            return n <= 0.0f ? 0.0f : INFINITY;
        return ldexpf(fmaf(upper, u, fmaf(0x1.ffffecp-1f, b, 1.0f)), (int)n);
    }
    const float j = fmaf(upper, u, 0x1.ffffecp-1f * b);
    uint32_t zb, kb;
    memcpy(&zb, &z, 4);
    const uint32_t e = zb << 23, one = 0x3f800000u;
    kb = e + one;
    float k;
    memcpy(&k, &kb, 4);
    if (fabsf(n) <= 126.0f)
        return fmaf(j, k, k);
    const uint32_t g = n <= 0.0f ? 0x82000000u : 0u, s1b = g + 0x7f000000u, s2b = e - g;
    float s1, s2;
    memcpy(&s1, &s1b, 4);
    memcpy(&s2, &s2b, 4);
    return fabsf(n) > 192.0f ? s1 * s1 : fmaf(s2, j, s2) * s1;
}

float ggml_ref_hsum(const float *a, bool wide)
{
    float h[8];
    for (int l = 0; l < 8; l++)
        h[l] = wide ? a[l + 8] + a[l] : a[l];
    return ((h[0] + h[4]) + (h[2] + h[6])) + ((h[1] + h[5]) + (h[3] + h[7]));
}

/* Four accumulators of W lanes over the first np values by FMA, folded (0 + 2, 1 + 3, 0 + 1) and their lanes
 * summed: 16 lanes as ggml_ref_hsum, 8 as GGML_F32x8_REDUCE (the halves, then two horizontal adds) */
static float four_accumulators(const float *x, const float *y, int64_t np, bool wide)
{
    const int W = wide ? 16 : 8;
    float acc[4][16] = { { 0 } };
    for (int64_t i = 0; i < np; i++)
        acc[i / W % 4][i % W] = fmaf(x[i], y[i], acc[i / W % 4][i % W]);
    for (int l = 0; l < W; l++) {
        acc[0][l] += acc[2][l];
        acc[1][l] += acc[3][l];
        acc[0][l] += acc[1][l];
    }
    if (wide)
        return ggml_ref_hsum(acc[0], true);
    const float *a = acc[0];
    return ((a[0] + a[4]) + (a[1] + a[5])) + ((a[2] + a[6]) + (a[3] + a[7]));
}

float ggml_ref_dot_f32(const float *x, const float *y, int n, bool wide)
{
    const int64_t np = n / (wide ? 64 : 32) * (wide ? 64 : 32);
    float sum = four_accumulators(x, y, np, wide);
    for (int64_t i = np; i < n; i++)
        sum += x[i] * y[i];
    return sum;
}

float ggml_ref_dot_f16(const float *w, const float *x, int64_t n, bool wide)
{
    const int64_t np = n / (wide ? 64 : 32) * (wide ? 64 : 32);
    double sum = four_accumulators(w, x, np, wide);
    for (int64_t i = np; i < n; i++)
        sum += (double)(w[i] * x[i]);
    return (float)sum;
}

/* vdpbf16ps's lane: acc + w1 x1, rounded, then + w0 x0, rounded (Intel SDM's order: the odd element of the pair
 * first); the products of bf16 values are exact in f32 */
static float bf16_pair_step(float acc, const float *w, const float *x)
{
    acc += w[1] * x[1];
    return acc + w[0] * x[0];
}

float ggml_ref_tinyblas(const float *w, const float *x, int64_t n, int width, bool bf16_pairs)
{
    float lanes[16] = { 0 };
    if (bf16_pairs)
        for (int64_t i = 0; i < n; i += 2)
            lanes[i / 2 % 16] = bf16_pair_step(lanes[i / 2 % 16], w + i, x + i);
    else
        for (int64_t i = 0; i < n; i++)
            lanes[i % width] = fmaf(w[i], x[i], lanes[i % width]);
    return ggml_ref_hsum(lanes, bf16_pairs || width == 16);
}

float ggml_ref_dot_bf16(const float *w, const float *x, int64_t n, int form)
{
    float c[4][16] = { { 0 } };
    int64_t i = 0;
    double sum;
    if (form == GGML_BF16_PAIRS) {
        for (; i + 64 <= n; i += 64)
            for (int64_t j = 0; j < 64; j += 2)
                c[j / 32][j % 32 / 2] = bf16_pair_step(c[j / 32][j % 32 / 2], w + i + j, x + i + j);
        sum = ggml_ref_hsum(c[0], true);
        sum += ggml_ref_hsum(c[1], true);
    } else if (form == GGML_BF16_AVX512) {
        for (; i + 32 <= n; i += 32)
            for (int j = 0; j < 32; j++)
                c[j / 16][j % 16] = fmaf(w[i + j], x[i + j], c[j / 16][j % 16]);
        sum = ggml_ref_hsum(c[0], true);
        sum += ggml_ref_hsum(c[1], true);
    } else {
        for (; i + 32 <= n; i += 32)
            for (int j = 0; j < 32; j++)
                c[j / 8][j % 8] = fmaf(w[i + j], x[i + j], c[j / 8][j % 8]);
        float f[8];
        for (int l = 0; l < 8; l++)
            f[l] = (c[0][l] + c[2][l]) + (c[1][l] + c[3][l]);
        sum = ggml_ref_hsum(f, false);
    }
    for (; i < n; i++)
        sum += (double)(w[i] * x[i]);
    return (float)sum;
}

float ggml_ref_gelu(float x, bool fused)
{
    if (x <= -10.0f)
        return 0.0f;
    if (x >= 10.0f)
        return x;
    const float h = quant_f16_to_f32(quant_f32_to_f16(x)), a = 0.044715f, c = 0.79788456080286535588f;
    const float inner = fused ? fmaf(a * h, h, 1.0f) : 1.0f + a * h * h;
    return quant_f16_to_f32(quant_f32_to_f16(0.5f * h * (1.0f + tanhf(c * h * inner))));
}
