/* The scale fields of quantized blocks (d, dmin, m), read without decoding the quants, for audits of block
 * scales; where each is and whether it can be negative is the type's row (type_table.c). */
#include "blocks.h"

int quant_scale_count(uint32_t type) { return quant_type_row_of(type)->n_scales; }

const char *quant_scale_name(uint32_t type, int i)
{
    const quant_type_row *r = quant_type_row_of(type);
    return i >= 0 && i < r->n_scales ? r->scale[i].name : NULL;
}

bool quant_scale_never_negative(uint32_t type, int i)
{
    const quant_type_row *r = quant_type_row_of(type);
    return i >= 0 && i < r->n_scales && r->scale[i].never_negative;
}

int quant_block_scales(uint32_t type, const uint8_t *block, float out[QUANT_MAX_SCALES])
{
    const quant_type_row *r = quant_type_row_of(type);
    for (int i = 0; i < r->n_scales; i++) {
        const uint8_t *p = block + r->scale[i].offset;
        switch ((quant_scale_encoding)r->scale[i].encoding) {
        case QUANT_ENC_F16: out[i] = rdf16(p); break;
        case QUANT_ENC_F32: memcpy(&out[i], p, 4); break;
        case QUANT_ENC_E8M0: {
            /* ggml maps e = 0 to 2^-127 and otherwise places e in the f32 exponent (255 gives Inf). */
            uint32_t bits = p[0] == 0 ? 0x00400000u : (uint32_t)p[0] << 23;
            memcpy(&out[i], &bits, 4);
            break;
        }
        case QUANT_ENC_UE4M3: out[i] = 2.0f * quant_ue4m3_half(p[0]); break; /* (the E4M3 value itself) */
        case QUANT_ENC_IQ1M: {
            /* The f16 scale is spread over the top nibbles of the four u16 scale words. */
            uint16_t sc[4];
            memcpy(sc, p, 8);
            uint16_t h = (uint16_t)((sc[0] >> 12) | ((sc[1] >> 8) & 0x00f0) | ((sc[2] >> 4) & 0x0f00) | (sc[3] & 0xf000));
            out[i] = quant_f16_to_f32(h);
            break;
        }
        }
    }
    return r->n_scales;
}
