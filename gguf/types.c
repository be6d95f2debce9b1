/*
 * The ggml type table, indexed by type id.
 *
 * Block sizes and bytes per block are format facts, as ggml's type traits
 * (ggml/src/ggml.c) and gguf-py's GGML_QUANT_SIZES define them. Ids 4 and 5
 * (Q4_2, Q4_3) were removed from ggml long ago; ids 31-33 and 36-38 were the
 * interleaved Q4_0/IQ4_NL layouts that ggml removed from files in favour of
 * repacking at load time. A file using any of them cannot be read by llama.cpp.
 * Q8_1 is 36 bytes as ggml's block_q8_1 (a half2 of d and s, then 32 quants);
 * gguf-py still lists the older 40-byte layout with two floats.
 */
#include "gguf.h"

#include <ctype.h>
#include <string.h>

#define OK(n, b, s)      { n, b, s, GGUF_TYPE_OK, (b) > 1 }
#define REMOVED(n, b, s) { n, b, s, GGUF_TYPE_REMOVED, (b) > 1 }

static const gguf_type_traits type_table[GGUF_TENSOR_COUNT] = {
    [0]  = OK("F32", 1, 4),
    [1]  = OK("F16", 1, 2),
    [2]  = OK("Q4_0", 32, 18),
    [3]  = OK("Q4_1", 32, 20),
    [4]  = REMOVED("Q4_2", 32, 18),
    [5]  = REMOVED("Q4_3", 32, 20),
    [6]  = OK("Q5_0", 32, 22),
    [7]  = OK("Q5_1", 32, 24),
    [8]  = OK("Q8_0", 32, 34),
    [9]  = OK("Q8_1", 32, 36),
    [10] = OK("Q2_K", 256, 84),
    [11] = OK("Q3_K", 256, 110),
    [12] = OK("Q4_K", 256, 144),
    [13] = OK("Q5_K", 256, 176),
    [14] = OK("Q6_K", 256, 210),
    [15] = OK("Q8_K", 256, 292),
    [16] = OK("IQ2_XXS", 256, 66),
    [17] = OK("IQ2_XS", 256, 74),
    [18] = OK("IQ3_XXS", 256, 98),
    [19] = OK("IQ1_S", 256, 50),
    [20] = OK("IQ4_NL", 32, 18),
    [21] = OK("IQ3_S", 256, 110),
    [22] = OK("IQ2_S", 256, 82),
    [23] = OK("IQ4_XS", 256, 136),
    [24] = OK("I8", 1, 1),
    [25] = OK("I16", 1, 2),
    [26] = OK("I32", 1, 4),
    [27] = OK("I64", 1, 8),
    [28] = OK("F64", 1, 8),
    [29] = OK("IQ1_M", 256, 56),
    [30] = OK("BF16", 1, 2),
    [31] = REMOVED("Q4_0_4_4", 32, 18),
    [32] = REMOVED("Q4_0_4_8", 32, 18),
    [33] = REMOVED("Q4_0_8_8", 32, 18),
    [34] = OK("TQ1_0", 256, 54),
    [35] = OK("TQ2_0", 256, 66),
    [36] = REMOVED("IQ4_NL_4_4", 32, 18),
    [37] = REMOVED("IQ4_NL_4_8", 32, 18),
    [38] = REMOVED("IQ4_NL_8_8", 32, 18),
    [39] = OK("MXFP4", 32, 17),
    [40] = OK("NVFP4", 64, 36),
    [41] = OK("Q1_0", 128, 18),
};

static const gguf_type_traits unknown_type = { "unknown", 0, 0, GGUF_TYPE_UNKNOWN, false };

const gguf_type_traits *gguf_type_traits_of(uint32_t type_id)
{
    if (type_id >= GGUF_TENSOR_COUNT || type_table[type_id].name == NULL)
        return &unknown_type;
    return &type_table[type_id];
}

int gguf_type_from_name(const char *name)
{
    if (!name)
        return -1;
    for (int id = 0; id < GGUF_TENSOR_COUNT; id++) {
        const char *n = type_table[id].name;
        if (!n || strlen(n) != strlen(name))
            continue;
        size_t i = 0;
        while (n[i] && toupper((unsigned char)name[i]) == n[i])
            i++;
        if (!n[i])
            return id;
    }
    return -1;
}

static const char *const value_type_names[GGUF_VT_COUNT] = {
    "u8", "i8", "u16", "i16", "u32", "i32", "f32", "bool", "string", "array", "u64", "i64", "f64",
};
static const size_t value_type_sizes[GGUF_VT_COUNT] = { 1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8 };

const char *gguf_value_type_name(uint32_t vt)
{
    return vt < GGUF_VT_COUNT ? value_type_names[vt] : "?";
}

size_t gguf_value_type_size(uint32_t vt)
{
    return vt < GGUF_VT_COUNT ? value_type_sizes[vt] : 0;
}
