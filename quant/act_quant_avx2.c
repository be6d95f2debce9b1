/*
 * AVX2 forms of the activation quantizers (act_quant.c has the rules and the
 * scalar forms they equal bit for bit): the same products rounded with
 * _mm256_round_ps to nearest even, as ggml-cpu's AVX2 quantize_row_q8_0 /
 * q8_1 do, and packed with saturation (a NaN converts to INT32_MIN and packs
 * to -128, as the scalar to_q8 gives it).
 */
#include "x86_target.h"
#include "blocks.h"

#if defined(__x86_64__)
#include <immintrin.h>

#include "act_unpack_avx2.h"

/* The largest |x| of 32 * nv values; NaNs are passed over, as fmaxf passes them over. */
X86_AVX2 static inline float amax(const float *x, int nv)
{
    const __m256 abs = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
    __m256 m = _mm256_setzero_ps();
    for (int i = 0; i < 8 * nv; i += 8) /* max_ps returns its second operand where one is NaN: keep m there */
        m = _mm256_max_ps(_mm256_and_ps(_mm256_loadu_ps(x + i), abs), m);
    __m128 h = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps(m, 1));
    h = _mm_max_ps(h, _mm_movehl_ps(h, h));
    h = _mm_max_ss(h, _mm_movehdup_ps(h));
    return _mm_cvtss_f32(h);
}

/* 32 values times mul, rounded to nearest even, into q; returns the sum of the quants. */
X86_AVX2 static inline int round32(const float *x, float mul, int8_t *q)
{
    const __m256 m = _mm256_set1_ps(mul);
    __m256i v[4];
    for (int k = 0; k < 4; k++)
        v[k] = _mm256_cvtps_epi32(_mm256_round_ps(_mm256_mul_ps(_mm256_loadu_ps(x + 8 * k), m),
                                                  _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    /* packs interleave 128-bit lanes; the permute puts the 32 bytes back in order */
    const __m256i w = _mm256_packs_epi32(v[0], v[1]), z = _mm256_packs_epi32(v[2], v[3]);
    const __m256i b = _mm256_permutevar8x32_epi32(_mm256_packs_epi16(w, z), _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
    _mm256_storeu_si256((__m256i *)q, b);
    /* the sum from the bytes themselves (a NaN's -128, not its 16-bit -32768) */
    const __m256i s = _mm256_madd_epi16(_mm256_add_epi16(_mm256_cvtepi8_epi16(_mm256_castsi256_si128(b)),
                                                         _mm256_cvtepi8_epi16(_mm256_extracti128_si256(b, 1))),
                                        _mm256_set1_epi16(1));
    __m128i t = _mm_add_epi32(_mm256_castsi256_si128(s), _mm256_extracti128_si256(s, 1));
    t = _mm_add_epi32(t, _mm_shuffle_epi32(t, 0x4e));
    t = _mm_add_epi32(t, _mm_shuffle_epi32(t, 0xb1));
    return _mm_cvtsi128_si32(t);
}

X86_AVX2 int quant_act_q8_block_avx2(const float *x, int8_t q[32], float *d_out)
{
    const float m = amax(x, 4);
    *d_out = m / 127.0f;
    return round32(x, m != 0.0f ? 127.0f / m : 0.0f, q);
}

/* The Q8_K block of 256 values: the first value of largest |x| (with its sign), then iscale = -127 / it. */
X86_AVX2 void quant_act_q8k_block_avx2(const float *x, uint8_t *b)
{
    const float m = amax(x, 32);
    int8_t *q = (int8_t *)(b + 4);
    int16_t bsums[16] = { 0 };
    float d = 0.0f;
    if (m != 0.0f) {
        int first = 0;
        const __m256 vm = _mm256_set1_ps(m), abs = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
        for (int i = 0; i < QK_K; i += 8) {
            const int eq = _mm256_movemask_ps(_mm256_cmp_ps(_mm256_and_ps(_mm256_loadu_ps(x + i), abs), vm, _CMP_EQ_OQ));
            if (eq) {
                first = i + __builtin_ctz((unsigned)eq);
                break;
            }
        }
        const float iscale = -127.0f / x[first];
        for (int c = 0; c < QK_K; c += 32) {
            round32(x + c, iscale, q + c);
            for (int h = 0; h < 2; h++) {
                int s = 0;
                for (int j = 0; j < 16; j++)
                    s += q[c + 16 * h + j];
                bsums[(c + 16 * h) / 16] = (int16_t)s;
            }
        }
        d = 1.0f / iscale;
    } else {
        memset(q, 0, QK_K);
    }
    memcpy(b, &d, 4);
    memcpy(b + 4 + QK_K, bsums, sizeof bsums);
}

/* n f32 values rounded to f16 (to nearest even, F16C's conversion: NaN quieted with its top payload bits, as
 * quant_f32_to_f16) into h; the tail of n % 8 by the scalar rule. */
X86_AVX2 void quant_act_f16_row_avx2(const float *x, uint16_t *h, int64_t n)
{
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm_storeu_si128((__m128i *)(h + i), _mm256_cvtps_ph(_mm256_loadu_ps(x + i), _MM_FROUND_TO_NEAREST_INT));
    for (; i < n; i++)
        h[i] = quant_f32_to_f16(x[i]);
}

/* n f32 values rounded to bf16 as quant_f32_to_bf16 rounds them (nearest even; a NaN keeps its top bits, quieted). */
X86_AVX2 void quant_act_bf16_row_avx2(const float *x, uint16_t *h, int64_t n)
{
    const __m256i one = _mm256_set1_epi32(1), bias = _mm256_set1_epi32(0x7fff), quiet = _mm256_set1_epi32(0x40);
    const __m256i abs = _mm256_set1_epi32(0x7fffffff), inf = _mm256_set1_epi32(0x7f800000);
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m256i r[2];
        for (int k = 0; k < 2; k++) {
            const __m256i u = _mm256_loadu_si256((const __m256i *)(x + i + 8 * k));
            const __m256i rounded = _mm256_srli_epi32(
                _mm256_add_epi32(_mm256_add_epi32(u, bias), _mm256_and_si256(_mm256_srli_epi32(u, 16), one)), 16);
            const __m256i nan = _mm256_cmpgt_epi32(_mm256_and_si256(u, abs), inf);
            const __m256i kept = _mm256_or_si256(_mm256_srli_epi32(u, 16), quiet);
            r[k] = _mm256_blendv_epi8(rounded, kept, nan);
        }
        /* packus interleaves 128-bit lanes; the permute puts the 16 halves back in order */
        const __m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi32(r[0], r[1]), 0xd8);
        _mm256_storeu_si256((__m256i *)(h + i), packed);
    }
    for (; i < n; i++)
        h[i] = quant_f32_to_bf16(x[i]);
}

#endif
