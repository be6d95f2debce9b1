/*
 * The CPU backend's rotary embedding (split from ops.c): each head's pairs rotated by the position's angles, NORM
 * (2i, 2i + 1) or NEOX (i, i + n_rot/2) pairs, with the angles computed exactly (each in double) or as llama.cpp's
 * CPU backend does (f32 products, YaRN's ramp, libm's cosf and sinf: --numerics ggml), kept for a batch's positions.
 */
#include "x86_target.h"
#include "cpu.h"
#include "rope_yarn.h"

#include <math.h>
#if defined(__x86_64__)
#include <immintrin.h>
#endif
#include <stdlib.h>
#include <string.h>

static bool same_angles(const cpu_rope_angles *a, int pos0, int T, const kern_rope *r)
{
    const size_t pairs = (size_t)T * (size_t)(r->n_rot / 2);
    return a->cs && a->pos0 == pos0 && a->T == T && a->n_rot == r->n_rot && a->base == r->base &&
           a->freq_scale == r->freq_scale && a->ext_factor == r->ext_factor && a->attn_factor == r->attn_factor &&
           a->corr_lo == r->corr_lo && a->corr_hi == r->corr_hi && a->factors == (r->freq_factors != NULL) &&
           (!a->factors || !memcmp(a->cs + 2 * pairs, r->freq_factors, (size_t)(r->n_rot / 2) * sizeof(float)));
}

/* The angles' set for this call: a kept one that matches (*fresh false), or the older set, grown to hold them
 * and marked for filling (*fresh true); NULL when it cannot grow. */
static cpu_rope_angles *angles_for(cpu_ctx *c, int pos0, int T, const kern_rope *r, bool *fresh)
{
    for (int i = 0; i < 2; i++)
        if (same_angles(&c->angles[i], pos0, T, r)) {
            *fresh = false;
            return &c->angles[i];
        }
    cpu_rope_angles *a = &c->angles[c->angles_next];
    c->angles_next ^= 1;
    const size_t need = (size_t)T * (size_t)(r->n_rot / 2) * 2 + (size_t)(r->n_rot / 2);
    if (need > a->cap) {
        free(a->cs);
        a->cap = 0;
        if (!(a->cs = malloc(need * sizeof(float))))
            return NULL;
        a->cap = need;
    }
    /* filled below; until then no call may match it */
    *a = (cpu_rope_angles){ .cs = a->cs, .cap = a->cap, .pos0 = -1 };
    *fresh = true;
    return a;
}

/* Rotates one head's pairs by the angles' cosines and sines cs = [c0, s0, c1, s1, ...]:
 * (v[a], v[b]) <- (v[a] c - v[b] s, v[a] s + v[b] c), a = 2i, b = 2i + 1 for NORM (ggml's rope mode 0) and
 * a = i, b = i + half for NEOX (mode 2). The vector paths below round each product and the sum as this does, so
 * every path gives the same bits. */
static void rope_pairs_scalar(float *v, const float *cs, int i, int half, bool neox)
{
    for (; i < half; i++) {
        const float c = cs[2 * i], sn = cs[2 * i + 1];
        const int ia = neox ? i : 2 * i, ib = neox ? i + half : 2 * i + 1;
        const float x0 = v[ia], x1 = v[ib];
        v[ia] = x0 * c - x1 * sn;
        v[ib] = x0 * sn + x1 * c;
    }
}

#if defined(__x86_64__)
/* The cosines and sines of 8 pairs' angles (cs = [c0, s0, c1, s1, ...]) in two vectors, in order: the shuffle
 * leaves their 64-bit units 0, 2, 1, 3 */
X86_AVX2 static inline void neox_angles(const float *cs, __m256 *c, __m256 *sn)
{
    const __m256 p0 = _mm256_loadu_ps(cs), p1 = _mm256_loadu_ps(cs + 8);
    *c = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(_mm256_shuffle_ps(p0, p1, 0x88)), 0xd8));
    *sn = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(_mm256_shuffle_ps(p0, p1, 0xdd)), 0xd8));
}

/* The pairs the AVX2 path rotates, from the first; the caller finishes the rest. Scalar, with the heads in the
 * inner loop (a stride of head_dim), the rotation was 1.4 % of a SmolLM2 pp64. */
X86_AVX2 static int rope_pairs_avx2(float *v, const float *cs, int half, bool neox)
{
    int i = 0;
    if (!neox) {
        /* 4 pairs a vector: lanes (2j, 2j + 1) hold (x0, x1); addsub subtracts in even lanes, adds in odd */
        for (; i + 4 <= half; i += 4) {
            const __m256 p = _mm256_loadu_ps(cs + 2 * i), x = _mm256_loadu_ps(v + 2 * i);
            const __m256 swapped = _mm256_permute_ps(x, 0xb1); /* (x1, x0) in each pair */
            _mm256_storeu_ps(v + 2 * i, _mm256_addsub_ps(_mm256_mul_ps(x, _mm256_moveldup_ps(p)),
                                                         _mm256_mul_ps(swapped, _mm256_movehdup_ps(p))));
        }
        return i;
    }
    for (; i + 8 <= half; i += 8) {
        __m256 c, sn;
        neox_angles(cs + 2 * i, &c, &sn);
        const __m256 x0 = _mm256_loadu_ps(v + i), x1 = _mm256_loadu_ps(v + half + i);
        _mm256_storeu_ps(v + i, _mm256_sub_ps(_mm256_mul_ps(x0, c), _mm256_mul_ps(x1, sn)));
        _mm256_storeu_ps(v + half + i, _mm256_add_ps(_mm256_mul_ps(x0, sn), _mm256_mul_ps(x1, c)));
    }
    return i;
}
#endif

/* --numerics ggml: the rotation as llama.cpp's build computes it (ggml-cpu/ops.cpp rotate_pairs, x0 c - x1 s and
 * x0 s + x1 c, which GCC fuses): the second product rounded, the first fused with the sum. Bit for bit the
 * vendored build's q and k on SmolLM2 (NORM) and gemma-3 (NEOX), natively and AVX2-only (op dumps). */
static void rope_pairs_ggml_scalar(float *v, const float *cs, int i, int half, bool neox)
{
    for (; i < half; i++) {
        const float c = cs[2 * i], sn = cs[2 * i + 1];
        const int ia = neox ? i : 2 * i, ib = neox ? i + half : 2 * i + 1;
        const float x0 = v[ia], x1 = v[ib];
        v[ia] = fmaf(x0, c, -(x1 * sn));
        v[ib] = fmaf(x0, sn, x1 * c);
    }
}

#if defined(__x86_64__)
X86_AVX2 static int rope_pairs_ggml_avx2(float *v, const float *cs, int half, bool neox)
{
    int i = 0;
    if (!neox) {
        /* pairs (x0, x1) in lanes (2j, 2j + 1): fmaddsub subtracts x1 s in even lanes, adds x1 c in odd ones */
        for (; i + 4 <= half; i += 4) {
            const __m256 p = _mm256_loadu_ps(cs + 2 * i), x = _mm256_loadu_ps(v + 2 * i);
            const __m256 x1_sc = _mm256_mul_ps(_mm256_movehdup_ps(x), _mm256_permute_ps(p, 0xb1));
            _mm256_storeu_ps(v + 2 * i, _mm256_fmaddsub_ps(_mm256_moveldup_ps(x), p, x1_sc));
        }
        return i;
    }
    for (; i + 8 <= half; i += 8) {
        __m256 c, sn;
        neox_angles(cs + 2 * i, &c, &sn);
        const __m256 x0 = _mm256_loadu_ps(v + i), x1 = _mm256_loadu_ps(v + half + i);
        _mm256_storeu_ps(v + i, _mm256_fmsub_ps(x0, c, _mm256_mul_ps(x1, sn)));
        _mm256_storeu_ps(v + half + i, _mm256_fmadd_ps(x0, sn, _mm256_mul_ps(x1, c)));
    }
    return i;
}
#endif

/* --numerics ggml: llama.cpp's angles for one position (ggml_rope_cache_init and rope_yarn): theta starts at the
 * position and is multiplied by powf(base, -2 / n_rot) from pair to pair, all in f32, each divided by its frequency
 * factor, interpolated (times freq_scale) and, with YaRN, blended back towards itself (GCC fuses the blend's first
 * product with its sum, as in the rotation below), then libm's cosf and sinf times the magnitude. Our exact angles
 * (each in double) differ from these in the last bit now and then. */
static void ggml_angles(float *ct, int pos, int half, const kern_rope *r)
{
    const float theta_scale = powf(r->base, -2.0f / (float)r->n_rot);
    const float mscale = r->ext_factor != 0.0f ? r->attn_factor * (1.0f + 0.1f * logf(1.0f / r->freq_scale))
                                               : r->attn_factor;
    float theta = (float)pos;
    for (int i = 0; i < half; i++) {
        const float extrap = r->freq_factors ? theta / r->freq_factors[i] : theta, interp = r->freq_scale * extrap;
        float t = interp;
        if (r->ext_factor != 0.0f) {
            const float mix = rope_yarn_ramp(r->corr_lo, r->corr_hi, i) * r->ext_factor;
            t = fmaf(interp, 1.0f - mix, extrap * mix);
        }
        ct[2 * i] = cosf(t) * mscale, ct[2 * i + 1] = sinf(t) * mscale;
        theta *= theta_scale;
    }
}

/* Our angles for one position: pos * base^(-2i / n_rot) (power[i]) / factor_i in double, interpolated and blended
 * as YaRN says (rope_yarn.h), its cosine and sine times the magnitude rounded once to float. */
static void exact_angles(float *ct, int pos, int half, const kern_rope *r, const double *power)
{
    const double mscale = rope_yarn_mscale(r->freq_scale, r->ext_factor, r->attn_factor);
    for (int i = 0; i < half; i++) {
        double theta = (double)pos * power[i];
        if (r->freq_factors)
            theta /= r->freq_factors[i];
        theta = rope_yarn_theta(theta, r->freq_scale, r->ext_factor, r->corr_lo, r->corr_hi, i);
        ct[2 * i] = (float)(cos(theta) * mscale), ct[2 * i + 1] = (float)(sin(theta) * mscale);
    }
}

/* One head's rotation in our form or llama.cpp's (ggml): the vector path's pairs, then the rest one at a time */
static void rope_pairs(float *v, const float *cs, int half, bool neox, bool avx2, bool ggml)
{
    int i = 0;
#if defined(__x86_64__)
    if (avx2)
        i = (ggml ? rope_pairs_ggml_avx2 : rope_pairs_avx2)(v, cs, half, neox);
#else
    (void)avx2;
#endif
    (ggml ? rope_pairs_ggml_scalar : rope_pairs_scalar)(v, cs, i, half, neox);
}

/* theta_i = pos * freq_scale * base^(-2i / n_rot) / factor_i, rotating the
 * pair (2i, 2i+1) for NORM and (i, i + n_rot/2) for NEOX (ggml's rope modes
 * 0 and 2); dimensions past n_rot pass through. */
kern_status cpu_rope(kern_backend *b, float *x, int T, int n_head, int head_dim, int pos0, const kern_rope *r)
{
    const int half = r->n_rot / 2;
    if (r->n_rot > head_dim || r->n_rot % 2)
        return KERN_E_SHAPE;
    if (half == 0 || T <= 0)
        return KERN_OK;
    bool fresh;
    cpu_rope_angles *a = angles_for(b->ctx, pos0, T, r, &fresh);
    const bool avx2 = cpu_have_avx2(), ggml = cpu_numerics(b) == KERN_NUMERICS_GGML, exact = fresh && !ggml;
    double *power = exact ? malloc((size_t)half * sizeof(double)) : NULL; /* base^(-2i / n_rot) */
    if (!a || (exact && !power)) {
        free(power);
        return KERN_E_NOMEM;
    }
    for (int i = 0; exact && i < half; i++)
        power[i] = pow(r->base, -2.0 * i / r->n_rot);
    float *cs = a->cs;
    /* New angles are computed by the thread that uses them: before the parallel loop, the sines and cosines of
     * a 64-token prompt were a few percent of its time on one thread while the others waited. */
#pragma omp parallel for num_threads(cpu_threads(b)) if (T > 1)
    for (int t = 0; t < T; t++) {
        float *ct = &cs[(size_t)t * half * 2];
        if (fresh && ggml)
            ggml_angles(ct, pos0 + t, half, r);
        else if (exact)
            exact_angles(ct, pos0 + t, half, r, power);
        for (int h = 0; h < n_head; h++)
            rope_pairs(x + ((size_t)t * n_head + h) * head_dim, ct, half, r->neox, avx2, ggml);
    }
    if (fresh) {
        if (r->freq_factors)
            memcpy(cs + (size_t)T * half * 2, r->freq_factors, (size_t)half * sizeof(float));
        *a = (cpu_rope_angles){ .cs = cs, .cap = a->cap, .pos0 = pos0, .T = T, .n_rot = r->n_rot, .base = r->base,
                                .freq_scale = r->freq_scale, .ext_factor = r->ext_factor,
                                .attn_factor = r->attn_factor, .corr_lo = r->corr_lo, .corr_hi = r->corr_hi,
                                .factors = r->freq_factors != NULL };
    }
    free(power);
    return KERN_OK;
}
