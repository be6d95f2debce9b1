/* The hyperparameters the rules check shapes against, from metadata
 * ("<arch>.embedding_length", …; names as llama.cpp's gguf-py constants). */
#include "audit.h"

#include <stdio.h>
#include <string.h>

static int64_t get_int(const gguf_file *f, const char *arch, const char *suffix)
{
    char key[160];
    snprintf(key, sizeof key, "%s.%s", arch, suffix);
    int64_t v = 0;
    if (gguf_get_int(f, key, 1, INT64_C(1) << 40, &v, NULL) != GGUF_OK)
        return 0;
    return v;
}

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
    hp->file_type = -1;
    gguf_str arch;
    if (gguf_get_str(f, "general.architecture", &arch, NULL) == GGUF_OK && arch.len < sizeof hp->arch &&
        !memchr(arch.ptr, '\0', arch.len))
        memcpy(hp->arch, arch.ptr, arch.len);
    if (hp->arch[0]) {
        hp->n_embd = get_int(f, hp->arch, "embedding_length");
        hp->n_layer = get_int(f, hp->arch, "block_count");
        hp->n_head = get_int(f, hp->arch, "attention.head_count");
        hp->n_head_kv = get_int(f, hp->arch, "attention.head_count_kv");
        if (!hp->n_head_kv)
            hp->n_head_kv = hp->n_head; /* llama.cpp's default: no grouping */
        hp->n_ff = get_int(f, hp->arch, "feed_forward_length");
        hp->head_dim_k = get_int(f, hp->arch, "attention.key_length");
        hp->head_dim_v = get_int(f, hp->arch, "attention.value_length");
        if (!hp->head_dim_k && hp->n_head && hp->n_embd % hp->n_head == 0)
            hp->head_dim_k = hp->n_embd / hp->n_head;
        if (!hp->head_dim_v)
            hp->head_dim_v = hp->head_dim_k;
        hp->vocab_size = get_int(f, hp->arch, "vocab_size");
    }
    const gguf_kv *tok = gguf_find_kv(f, "tokenizer.ggml.tokens");
    if (tok && tok->value.type == GGUF_VT_ARRAY)
        hp->n_tokens = (int64_t)tok->value.count;
    hp->n_padding_tokens = padding_tail(f, hp->n_tokens);
    int64_t ft;
    if (gguf_get_int(f, "general.file_type", 0, 1 << 20, &ft, NULL) == GGUF_OK)
        hp->file_type = ft;
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
