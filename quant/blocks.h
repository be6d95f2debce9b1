/* Private: helpers the block decoders share, and the per-type entry points. */
#ifndef GGUFSCOPE_QUANT_BLOCKS_H
#define GGUFSCOPE_QUANT_BLOCKS_H

#include "quant.h"

#include <math.h>
#include <string.h>

#define QK_K 256

/* Blocks sit at any byte offset (18-, 34-, 110-byte blocks): read fields with memcpy. */
static inline uint16_t rd16(const uint8_t *p)
{
    uint16_t v;
    memcpy(&v, p, 2);
    return v;
}

static inline uint32_t rd32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

static inline float rdf16(const uint8_t *p) { return quant_f16_to_f32(rd16(p)); }

/* Scalar reference row decoders, one per type (n is a multiple of the block size). */
#define QUANT_DECL(name) void quant_deq_##name(const void *src, float *y, int64_t n)
QUANT_DECL(f32); QUANT_DECL(f16); QUANT_DECL(bf16);
QUANT_DECL(q4_0); QUANT_DECL(q4_1); QUANT_DECL(q5_0); QUANT_DECL(q5_1); QUANT_DECL(q8_0); QUANT_DECL(q8_1);
QUANT_DECL(iq4_nl); QUANT_DECL(mxfp4); QUANT_DECL(nvfp4);
QUANT_DECL(q2_k); QUANT_DECL(q3_k); QUANT_DECL(q4_k); QUANT_DECL(q5_k); QUANT_DECL(q6_k); QUANT_DECL(q8_k);
QUANT_DECL(iq2_xxs); QUANT_DECL(iq2_xs); QUANT_DECL(iq2_s); QUANT_DECL(iq3_xxs); QUANT_DECL(iq3_s);
QUANT_DECL(iq1_s); QUANT_DECL(iq1_m); QUANT_DECL(iq4_xs); QUANT_DECL(tq1_0); QUANT_DECL(tq2_0);

/* AVX2+F16C twins of the hottest decoders (simd_avx2.c); used only when the CPU has them. */
QUANT_DECL(f16_avx2); QUANT_DECL(bf16_avx2); QUANT_DECL(q8_0_avx2); QUANT_DECL(q4_0_avx2);
QUANT_DECL(q4_k_avx2); QUANT_DECL(q5_k_avx2); QUANT_DECL(q6_k_avx2);
/* The types whose blocks act_unpack_avx2.h unpacks (simd_avx2_unpacked.c). */
QUANT_DECL(q4_1_avx2); QUANT_DECL(q5_0_avx2); QUANT_DECL(q5_1_avx2); QUANT_DECL(iq4_nl_avx2);
QUANT_DECL(q2_k_avx2); QUANT_DECL(q3_k_avx2); QUANT_DECL(iq4_xs_avx2);

/* AVX-512F twins (simd_avx512.c); used when the CPU has AVX-512F as well as AVX2. */
QUANT_DECL(f16_avx512); QUANT_DECL(q8_0_avx512); QUANT_DECL(q4_0_avx512); QUANT_DECL(q4_1_avx512);
QUANT_DECL(q5_0_avx512); QUANT_DECL(q5_1_avx512); QUANT_DECL(iq4_nl_avx512); QUANT_DECL(iq4_xs_avx512);
QUANT_DECL(q4_k_avx512); QUANT_DECL(q5_k_avx512); QUANT_DECL(q6_k_avx512);

/* Q3_K's 16 signed scales unpacked from their 12 bytes (dequant_k.c; the fused dot reads them too). */
void quant_q3k_scales(const uint8_t *packed, int8_t out[16]);
/* The activation quantizers' AVX2 forms (act_quant_avx2.c). */
int quant_act_q8_block_avx2(const float *x, int8_t q[32], float *d_out);
void quant_act_q8k_block_avx2(const float *x, uint8_t *b);
void quant_act_f16_row_avx2(const float *x, uint16_t *h, int64_t n);
void quant_act_bf16_row_avx2(const float *x, uint16_t *h, int64_t n);
/* Reference quantizers, n values into n / block blocks at dst, as ggml's reference quantizers round
 * (quantize.c: F32, F16, BF16, Q8_0, Q5_0, Q5_1, Q4_0, MXFP4; quantize_k.c: Q2_K, Q3_K, Q4_K, Q5_K, Q6_K; quantize_iq4.c:
 * IQ4_NL, IQ4_XS; quantize_ternary.c:
 * TQ1_0, TQ2_0). */
/* MXFP4 (dequant_legacy.c): its E2M1 values doubled, and 2^(e-127) / 2 as an f32 as ggml's
 * ggml_e8m0_to_fp32_half computes it (subnormal for e < 2). */
extern const int8_t quant_kvalues_mxfp4[16];
static inline float quant_e8m0_half(uint8_t e)
{
    uint32_t bits = e < 2 ? 0x00200000u << e : (uint32_t)(e - 1) << 23;
    float f;
    memcpy(&f, &bits, 4);
    return f;
}
/* NVFP4's sub-block scale: an unsigned E4M3 (exponent bias 7, 0 and 0x7F read as 0), halved as ggml's
 * ggml_ue4m3_to_fp32 halves it (its levels are E2M1 doubled, as MXFP4's); exact in f32. The sign bit is not read, as
 * ggml does not read it. */
static inline float quant_ue4m3_half(uint8_t x)
{
    if (x == 0 || x == 0x7F)
        return 0.0f;
    const int e = (x >> 3) & 0xF, m = x & 7;
    return e == 0 ? ldexpf((float)m, -10) : ldexpf(1.0f + (float)m / 8.0f, e - 8);
}

/* Round to nearest, ties to even, for |f| < 2^22, as ggml's nearest_int: adding 1.5 * 2^23 leaves the rounded integer
 * in the low mantissa bits. Any other input (NaN, Inf, huge) gives some int rather than undefined behaviour; callers
 * clamp it. The reference quantizers' rounding (quantize_k.c, quantize_iq4.c). */
static inline int quant_nearest_int(float f)
{
    const float v = f + 12582912.0f;
    uint32_t u;
    memcpy(&u, &v, sizeof u);
    return (int)(u & 0x007fffff) - 0x00400000;
}

#define QUANT_QUANTIZE_DECL(name) void quant_quantize_##name(const float *x, uint8_t *dst, int64_t n)
QUANT_QUANTIZE_DECL(f32); QUANT_QUANTIZE_DECL(f16); QUANT_QUANTIZE_DECL(bf16); QUANT_QUANTIZE_DECL(q8_0);
QUANT_QUANTIZE_DECL(q5_0); QUANT_QUANTIZE_DECL(q5_1); QUANT_QUANTIZE_DECL(q4_0); QUANT_QUANTIZE_DECL(q2_k); QUANT_QUANTIZE_DECL(q3_k); QUANT_QUANTIZE_DECL(q4_k);
QUANT_QUANTIZE_DECL(q5_k);
QUANT_QUANTIZE_DECL(q6_k); QUANT_QUANTIZE_DECL(iq4_nl); QUANT_QUANTIZE_DECL(iq4_xs); QUANT_QUANTIZE_DECL(mxfp4);
QUANT_QUANTIZE_DECL(tq1_0); QUANT_QUANTIZE_DECL(tq2_0);

/* One block of a type decoded field by field as text (describe.c), appended to t. */
typedef struct quant_text {
    char *p;
    size_t cap, len;
} quant_text;
#define QUANT_DESCRIBE_DECL(name) void quant_describe_##name(quant_text *t, const uint8_t *b)
QUANT_DESCRIBE_DECL(q4_0); QUANT_DESCRIBE_DECL(q4_1); QUANT_DESCRIBE_DECL(q5_0); QUANT_DESCRIBE_DECL(q5_1);
QUANT_DESCRIBE_DECL(q8_0); QUANT_DESCRIBE_DECL(iq4_nl); QUANT_DESCRIBE_DECL(mxfp4); QUANT_DESCRIBE_DECL(nvfp4); QUANT_DESCRIBE_DECL(q2_k);
QUANT_DESCRIBE_DECL(q3_k); QUANT_DESCRIBE_DECL(q4_k); QUANT_DESCRIBE_DECL(q5_k); QUANT_DESCRIBE_DECL(q6_k);
QUANT_DESCRIBE_DECL(iq4_xs);

/* A scale field of a block: where it is, how it is stored, its name in ggml and whether ggml's quantizer can write
 * it negative (scales.c reads them). */
typedef enum quant_scale_encoding {
    QUANT_ENC_F16, QUANT_ENC_F32, QUANT_ENC_E8M0, QUANT_ENC_IQ1M, QUANT_ENC_UE4M3
} quant_scale_encoding;
typedef struct quant_scale_field {
    uint16_t offset;
    uint8_t encoding;        /* quant_scale_encoding */
    bool never_negative;
    const char *name;
} quant_scale_field;

/* Everything quant/ knows of a weight type beyond gguf/'s block size and bytes, one row a type (type_table.c):
 * adding a type that is only read touches its row and its decoder. */
typedef struct quant_type_row {
    quant_row_fn decode[3];  /* scalar, AVX2, AVX-512 forms of the row decoder (NULL: the level below's) */
    void (*quantize)(const float *x, uint8_t *dst, int64_t n); /* NULL: not written here */
    bool has_act;            /* llama.cpp's CPU backend multiplies it: */
    uint32_t act_type;       /* with activations rounded to this type (quant_act_type) */
    int n_scales;
    quant_scale_field scale[QUANT_MAX_SCALES];
    void (*describe)(quant_text *t, const uint8_t *b); /* NULL: raw bytes */
} quant_type_row;

/* The row of a type: an empty one (every field NULL or 0) for a type quant/ does not know. */
const quant_type_row *quant_type_row_of(uint32_t type);

/* The 16 IQ4_NL / IQ4_XS levels (ggml's kvalues_iq4nl). */
extern const int8_t quant_kvalues_iq4nl[16];

/* K-quant 6-bit scale and min j (0..7) from the 12 packed bytes of Q4_K/Q5_K:
 *   bytes 0-3:  low 6 bits = scale 0-3,  top 2 bits = high bits of scale 4-7
 *   bytes 4-7:  low 6 bits = min 0-3,    top 2 bits = high bits of min 4-7
 *   bytes 8-11: low nibble = low bits of scale 4-7, high nibble = low bits of min 4-7 */
static inline void kq_scale_min(int j, const uint8_t *q, uint8_t *sc, uint8_t *m)
{
    if (j < 4) {
        *sc = q[j] & 63;
        *m = q[j + 4] & 63;
    } else {
        *sc = (uint8_t)((q[j + 4] & 0xf) | ((q[j - 4] >> 6) << 4));
        *m = (uint8_t)((q[j + 4] >> 4) | ((q[j] >> 6) << 4));
    }
}

/* The scale and min of the two 32-value groups is and is+1 of a Q4_K/Q5_K block,
 * multiplied out as ggml does: d * sc and dmin * m. */
static inline void kq_pair(int is, const uint8_t *scales, float d, float dmin, float *d1, float *m1, float *d2,
                           float *m2)
{
    uint8_t sc, m;
    kq_scale_min(is, scales, &sc, &m);
    *d1 = d * (float)sc;
    *m1 = dmin * (float)m;
    kq_scale_min(is + 1, scales, &sc, &m);
    *d2 = d * (float)sc;
    *m2 = dmin * (float)m;
}

#endif
