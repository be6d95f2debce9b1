/* The scale fields of quantized blocks (d, dmin, m), read without decoding
 * the quants, for audits of block scales. Offsets follow ggml-common.h; the
 * "never negative" flags follow ggml's reference quantizers (ggml-quants.c):
 * d = amax/127 for Q8_0, (max-min)/15 for Q4_1, max_scale/63 for Q4_K, …,
 * while Q4_0, Q5_0, Q3_K and Q6_K divide a signed extreme by a negative
 * number and legitimately store either sign. */
#include "blocks.h"

typedef struct scale_field {
    uint16_t offset;
    uint8_t encoding;        /* 0 f16, 1 f32, 2 e8m0, 3 IQ1_M's scattered f16 */
    bool never_negative;
    const char *name;
} scale_field;

typedef struct scale_layout {
    int count;
    scale_field field[2];
} scale_layout;

enum { ENC_F16, ENC_F32, ENC_E8M0, ENC_IQ1M };

static scale_layout layout_of(uint32_t type)
{
    switch (type) {
    case GGML_TYPE_Q4_0: case GGML_TYPE_Q5_0: case GGML_TYPE_IQ4_NL: case GGML_TYPE_IQ4_XS:
    case GGML_TYPE_IQ2_XXS: case GGML_TYPE_IQ2_XS: case GGML_TYPE_IQ2_S: case GGML_TYPE_IQ3_XXS:
    case GGML_TYPE_IQ3_S: case GGML_TYPE_IQ1_S:
        return (scale_layout){ 1, { { 0, ENC_F16, false, "d" } } };
    case GGML_TYPE_Q8_0: return (scale_layout){ 1, { { 0, ENC_F16, true, "d" } } };
    case GGML_TYPE_Q4_1: case GGML_TYPE_Q5_1:
        return (scale_layout){ 2, { { 0, ENC_F16, true, "d" }, { 2, ENC_F16, false, "m" } } };
    case GGML_TYPE_Q8_1: return (scale_layout){ 2, { { 0, ENC_F16, true, "d" }, { 2, ENC_F16, false, "s" } } };
    case GGML_TYPE_Q2_K:
        return (scale_layout){ 2, { { 80, ENC_F16, true, "d" }, { 82, ENC_F16, true, "dmin" } } };
    case GGML_TYPE_Q3_K: return (scale_layout){ 1, { { 108, ENC_F16, false, "d" } } };
    case GGML_TYPE_Q4_K: case GGML_TYPE_Q5_K:
        return (scale_layout){ 2, { { 0, ENC_F16, true, "d" }, { 2, ENC_F16, true, "dmin" } } };
    case GGML_TYPE_Q6_K: return (scale_layout){ 1, { { 208, ENC_F16, false, "d" } } };
    case GGML_TYPE_Q8_K: return (scale_layout){ 1, { { 0, ENC_F32, false, "d" } } };
    case GGML_TYPE_IQ1_M: return (scale_layout){ 1, { { 48, ENC_IQ1M, false, "d" } } };
    case GGML_TYPE_TQ1_0: return (scale_layout){ 1, { { 52, ENC_F16, true, "d" } } };
    case GGML_TYPE_TQ2_0: return (scale_layout){ 1, { { 64, ENC_F16, true, "d" } } };
    case GGML_TYPE_MXFP4: return (scale_layout){ 1, { { 0, ENC_E8M0, true, "e" } } };
    default: return (scale_layout){ 0, { { 0, 0, false, NULL } } };
    }
}

int quant_scale_count(uint32_t type) { return layout_of(type).count; }

const char *quant_scale_name(uint32_t type, int i)
{
    scale_layout l = layout_of(type);
    return i >= 0 && i < l.count ? l.field[i].name : NULL;
}

bool quant_scale_never_negative(uint32_t type, int i)
{
    scale_layout l = layout_of(type);
    return i >= 0 && i < l.count && l.field[i].never_negative;
}

int quant_block_scales(uint32_t type, const uint8_t *block, float out[2])
{
    scale_layout l = layout_of(type);
    for (int i = 0; i < l.count; i++) {
        const uint8_t *p = block + l.field[i].offset;
        switch (l.field[i].encoding) {
        case ENC_F16: out[i] = rdf16(p); break;
        case ENC_F32: memcpy(&out[i], p, 4); break;
        case ENC_E8M0: {
            /* ggml maps e = 0 to 2^-127 and otherwise places e in the f32 exponent (255 gives Inf). */
            uint32_t bits = p[0] == 0 ? 0x00400000u : (uint32_t)p[0] << 23;
            memcpy(&out[i], &bits, 4);
            break;
        }
        case ENC_IQ1M: {
            /* The f16 scale is spread over the top nibbles of the four u16 scale words. */
            uint16_t sc[4];
            memcpy(sc, p, 8);
            uint16_t h = (uint16_t)((sc[0] >> 12) | ((sc[1] >> 8) & 0x00f0) | ((sc[2] >> 4) & 0x0f00) | (sc[3] & 0xf000));
            out[i] = quant_f16_to_f32(h);
            break;
        }
        }
    }
    return l.count;
}
