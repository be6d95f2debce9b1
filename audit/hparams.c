/* The hyperparameters the rules check shapes against: model/'s reader
 * (the one the engine uses), plus the padding at the end of the vocabulary. */
#include "audit.h"

#include <stdio.h>
#include <string.h>

/* Token types as llama.cpp's vocabulary defines them: 5 is UNUSED. */
#define TOKEN_TYPE_UNUSED 5

static bool looks_like_padding(const gguf_str *s)
{
    return (s->len >= 4 && memcmp(s->ptr, "[PAD", 4) == 0) || (s->len >= 6 && memcmp(s->ptr, "<|PAD", 5) == 0);
}

static int64_t padding_tail(const gguf_file *f, int64_t n_tokens)
{
    const gguf_kv *tok = gguf_find_kv(f, "tokenizer.ggml.tokens");
    const gguf_kv *typ = gguf_find_kv(f, "tokenizer.ggml.token_type");
    if (!tok || tok->value.type != GGUF_VT_ARRAY || tok->value.elem_type != GGUF_VT_STRING)
        return 0;
    bool types_ok = typ && typ->value.type == GGUF_VT_ARRAY && (int64_t)typ->value.count == n_tokens;
    int64_t n = 0;
    for (int64_t i = n_tokens - 1; i >= 0; i--) {
        bool unused = false;
        gguf_value v;
        if (types_ok && gguf_array_scalar(&typ->value, (uint64_t)i, &v) == GGUF_OK)
            unused = (v.type == GGUF_VT_INT32 || v.type == GGUF_VT_INT64 || v.type == GGUF_VT_INT8 ||
                      v.type == GGUF_VT_INT16)
                         ? v.v.i64 == TOKEN_TYPE_UNUSED
                         : v.v.u64 == TOKEN_TYPE_UNUSED;
        if (!unused && !looks_like_padding(&tok->value.v.strs[i]))
            break;
        n++;
    }
    return n;
}

void audit_read_hparams(const gguf_file *f, audit_hparams *hp)
{
    memset(hp, 0, sizeof *hp);
    /* a key of the wrong type or out of range leaves its value unknown (0): no rule holds shapes to it */
    model_hparams_read(f, &hp->g, NULL);
    hp->n_padding_tokens = padding_tail(f, hp->g.n_vocab);
}

/* llama.h's llama_ftype values. */
static const char *const ftype_names[] = {
    [0] = "F32", [1] = "F16", [2] = "Q4_0", [3] = "Q4_1", [7] = "Q8_0", [8] = "Q5_0", [9] = "Q5_1",
    [10] = "Q2_K", [11] = "Q3_K_S", [12] = "Q3_K_M", [13] = "Q3_K_L", [14] = "Q4_K_S", [15] = "Q4_K_M",
    [16] = "Q5_K_S", [17] = "Q5_K_M", [18] = "Q6_K", [19] = "IQ2_XXS", [20] = "IQ2_XS", [21] = "Q2_K_S",
    [22] = "IQ3_XS", [23] = "IQ3_XXS", [24] = "IQ1_S", [25] = "IQ4_NL", [26] = "IQ3_S", [27] = "IQ3_M",
    [28] = "IQ2_S", [29] = "IQ2_M", [30] = "IQ4_XS", [31] = "IQ1_M", [32] = "BF16", [36] = "TQ1_0",
    [37] = "TQ2_0", [38] = "MXFP4_MOE", [39] = "NVFP4", [40] = "Q1_0", [41] = "Q2_0",
};

const char *audit_file_type_name(int64_t ft)
{
    if (ft < 0 || ft >= (int64_t)(sizeof ftype_names / sizeof ftype_names[0]))
        return NULL;
    return ftype_names[ft];
}
