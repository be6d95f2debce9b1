/*
 * --numerics ggml: attention in the order of llama.cpp's CPU backend without flash attention (llama-graph.cpp
 * build_attn_mha: kq = mul_mat(k, q), soft_max_ext(kq, mask, scale), kqv = mul_mat(v transposed, kq)), so that the
 * rounding of its output into Q8 blocks for the output projection lands where llama.cpp's does. In the llama.cpp
 * that llama-cpp-python 0.3.36 vendors (ggml-cpu/vec.cpp, ops.cpp, llamafile/sgemm.cpp), for a KV cache in f32
 * whose rows (cells) are the positions and are padded to a multiple of 256 (masked past the causal edge):
 *  - each score is ggml_vec_dot_f32 of the key and the query (float_ggml.c): four accumulators of W lanes taking
 *    4W values a step, folded (0 + 2, 1 + 3, then 0 + 1) and their lanes summed (GGML_F32x8_REDUCE /
 *    GGML_F32x16_REDUCE), the values past the last whole step added one product at a time;
 *  - the softmax scales the scores in f32, takes e^(s - max) by ggml_v_expf W lanes at a time over the whole
 *    padded row (masked keys give 0), sums each W-lane chunk to a float and the chunks in double, and multiplies
 *    every probability by the f32 reciprocal of that sum;
 *  - the weighted values of a prompt (two tokens or more) are llamafile's tinyBLAS: one W-lane accumulator per
 *    output over the keys (lane l taking keys l, l + W, ...), its lanes summed at the end; a single token's are
 *    ggml_vec_dot_f32 over the padded row.
 * W is 16 where ggml is built with AVX-512F, else 8 (AVX2): the lanes this CPU's llama.cpp build would use,
 * cpu_vector_lanes(). Measured against the vendored build's own dump of every op (throwaway programs, not in the
 * repository): the scores, probabilities and outputs of SmolLM2 and gemma-3 are bit for bit its, natively
 * and with an AVX2-only build under GGUFSCOPE_SIMD=avx2.
 */
#include "x86_target.h"
#include "cpu.h"
#include "quant.h"

#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__)
#include "ggml_exp.h"
#include "ggml_sums.h"

#include <immintrin.h>


/* e^(x[i] - mx) for W lanes by ggml_v_expf, written back; their sum as the softmax's lanes give it */
X86_AVX512 static float exp_chunk16(float *x, float mx)
{
    const __m512 e = ggml_exp16(_mm512_sub_ps(_mm512_loadu_ps(x), _mm512_set1_ps(mx)));
    _mm512_storeu_ps(x, e);
    return ggml_lanes_sum(x, 16, GGML_LANES_HSUM);
}

X86_AVX2 static float exp_chunk8(float *x, float mx)
{
    const __m256 e = ggml_exp8(_mm256_sub_ps(_mm256_loadu_ps(x), _mm256_set1_ps(mx)));
    _mm256_storeu_ps(x, e);
    return ggml_lanes_sum(x, 8, GGML_LANES_HSUM);
}

/* acc[0..d) += v[0..d) * p, each a fused multiply-add (d a multiple of 8, or the rest one at a time) */
X86_AVX2 static void axpy_fused(float *acc, const float *v, float p, int d)
{
    const __m256 pm = _mm256_set1_ps(p);
    int c = 0;
    for (; c + 8 <= d; c += 8)
        _mm256_storeu_ps(acc + c, _mm256_fmadd_ps(_mm256_loadu_ps(v + c), pm, _mm256_loadu_ps(acc + c)));
    for (; c < d; c++)
        acc[c] = fmaf(v[c], p, acc[c]);
}

/* a[0..d) += b[0..d), elementwise */
X86_AVX2 static void add_rows(float *a, const float *b, int d)
{
    int c = 0;
    for (; c + 8 <= d; c += 8)
        _mm256_storeu_ps(a + c, _mm256_add_ps(_mm256_loadu_ps(a + c), _mm256_loadu_ps(b + c)));
    for (; c < d; c++)
        a[c] += b[c];
}

/* out[i] = the slots' values at i (slot s: acc + s d) summed as ggml_lanes_sum / ggml_dot_fold sum lanes, every
 * step an elementwise add of two slots' rows (ggml_sums.h's trees, in place over whole rows; acc is consumed) */
static void lanes_sums(float *acc, int d, int W, bool prompt, float *out)
{
#define SLOT(s) (acc + (size_t)(s) * d)
    if (!prompt) /* vec_dot's fold of its four accumulators, then as GGML_LANES_HADD */
        for (int l = 0; l < W; l++) {
            add_rows(SLOT(l), SLOT(2 * W + l), d);
            add_rows(SLOT(W + l), SLOT(3 * W + l), d);
            add_rows(SLOT(l), SLOT(W + l), d);
        }
    if (W == 16) /* the halves first */
        for (int l = 0; l < 8; l++)
            add_rows(SLOT(l), SLOT(l + 8), d);
    const bool hadd = !prompt && W == 8;
    /* ((a0 + a4) + (a2 + a6)) + ((a1 + a5) + (a3 + a7)), or for hadd
     * ((a0 + a4) + (a1 + a5)) + ((a2 + a6) + (a3 + a7)) */
    for (int l = 0; l < 4; l++)
        add_rows(SLOT(l), SLOT(l + 4), d);
    add_rows(SLOT(0), SLOT(hadd ? 1 : 2), d);
    add_rows(SLOT(hadd ? 2 : 1), SLOT(3), d);
    add_rows(SLOT(0), SLOT(hadd ? 2 : 1), d);
    memcpy(out, SLOT(0), (size_t)d * sizeof(float));
#undef SLOT
}

/* One query's attention over cells [lo, hi) of one KV head (keys at cell 0, rows ld floats apart, d long; values
 * rows ldv apart, dv long). p: hi - lo + 2 W floats; acc: GGML_DOT_ACCUMULATORS W dv floats. prompt: a call of two
 * tokens or more (tinyBLAS). */
static void attend_row(const float *q, const float *keys, const float *values, size_t ld, size_t ldv, int d, int dv,
                       int lo, int hi, float scale, float softcap, float softcap_in, float slope, float sink,
                       bool prompt, int W, float *p, float *acc, float *out)
{
    /* p[k] is cell c0 + k: the chunks of W lanes start at multiples of W, as over ggml's whole padded row */
    const int c0 = lo / W * W, c1 = (hi + W - 1) / W * W;
    float mx = -INFINITY;
    for (int c = c0; c < c1; c++) {
        float w = -INFINITY;
        if (c >= lo && c < hi) {
            w = cpu_dot_f32_ggml(keys + (size_t)c * ld, q, d, W) * scale;
            if (softcap > 0.0f) /* llama.cpp's build_attn_mha: scale by 1/c (grok's by its factor), tanh, by c */
                w = tanhf(w * (softcap_in > 0.0f ? softcap_in : 1.0f / softcap)) * softcap;
            if (slope != 0.0f) /* ALiBi: ggml_soft_max_ext's wp[i] += slope * mask[i], the mask -(hi - 1 - c) */
                w = fmaf(slope, (float)(c - (hi - 1)), w);
            mx = w > mx ? w : mx;
        }
        p[c - c0] = w;
    }
    /* ggml_soft_max_add_sinks: the head's sink joins the max, and its e^(sink - max) (libm's expf) the sum */
    mx = sink > mx ? sink : mx;
    double sum = 0.0;
    for (int c = c0; c < c1; c += W)
        sum += W == 16 ? exp_chunk16(p + (c - c0), mx) : exp_chunk8(p + (c - c0), mx);
    if (sink > -INFINITY)
        sum += (double)expf(sink - mx);
    const float inv = (float)(1.0 / sum);
    /* the weighted values: lane (tinyBLAS) or accumulator-and-lane (vec_dot) of each key, then their sums */
    const int slots = prompt ? W : GGML_DOT_ACCUMULATORS * W;
    for (int i = 0; i < slots * dv; i++)
        acc[i] = 0.0f;
    for (int c = lo; c < hi; c++)
        axpy_fused(acc + (size_t)(c % slots) * dv, values + (size_t)c * ldv, p[c - c0] * inv, dv);
    lanes_sums(acc, dv, W, prompt, out);
}

bool cpu_attention_ggml(kern_backend *b, const float *q, const float *k_cache, const float *v_cache, int T, int pos0,
                        const kern_attn *a, float *out, kern_status *status)
{
    const int W = cpu_vector_lanes();
    if (W == 0 || (W == 16 && !quant_cpu_has_avx512dq())) /* ggml's condition for its 16-lane e^x */
        return false;
    const int n_head = a->n_head, group = n_head / a->n_kv_head, d = a->head_dim, dv = kern_attn_v_dim(a);
    const int n_ctx = pos0 + T;
    const size_t ld = (size_t)a->n_kv_head * (size_t)d, ldv = (size_t)a->n_kv_head * (size_t)dv;
    const int keys_max = a->window > 0 && a->window < n_ctx ? a->window : n_ctx;
    const size_t p_floats = (size_t)keys_max + 2 * GGML_MAX_LANES, acc_floats = (size_t)GGML_DOT_ACCUMULATORS * W * dv;
    int failed = 0;
    const bool wide = (double)T * n_head * n_ctx * d >= 1 << 15;
#pragma omp parallel num_threads(cpu_threads(b)) if (wide)
    {
        float *p = malloc(p_floats * sizeof(float)), *acc = malloc(acc_floats * sizeof(float));
        if (!p || !acc) {
#pragma omp atomic write
            failed = 1;
        }
#pragma omp for schedule(dynamic, 4)
        for (int row = 0; row < T * n_head; row++) {
            if (!p || !acc)
                continue;
            const int t = row / n_head, h = row % n_head, kh = h / group, hi = pos0 + t + 1;
            const int lo = kern_attn_first_key(a, hi - 1);
            const float sink = a->sinks ? ((const float *)a->sinks->t->data)[h] : -INFINITY;
            const float slope = a->alibi_max_bias > 0.0f ? kern_alibi_slope(a->alibi_max_bias, n_head, h) : 0.0f;
            attend_row(q + (size_t)row * d, k_cache + (size_t)kh * d, v_cache + (size_t)kh * dv, ld, ldv, d, dv, lo,
                       hi, a->scale, a->softcap, a->softcap_in, slope, sink, T >= 2, W, p, acc, out + (size_t)row * dv);
        }
        free(p);
        free(acc);
    }
    *status = failed ? KERN_E_NOMEM : KERN_OK;
    return true;
}
#else
bool cpu_attention_ggml(kern_backend *b, const float *q, const float *k_cache, const float *v_cache, int T, int pos0,
                        const kern_attn *a, float *out, kern_status *status)
{
    (void)b, (void)q, (void)k_cache, (void)v_cache, (void)T, (void)pos0, (void)a, (void)out, (void)status;
    return false;
}
#endif
