#include "fixture_model.h"
#include "model.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

fixture_opts fixture_default_opts(void)
{
    return (fixture_opts){ .version = 3, .n_layer = 2, .n_embd = 64, .n_ff = 128, .n_vocab = 288, .seed = 1 };
}

/* splitmix64: a stateless hash so any element can be produced on its own. */
static uint64_t mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

float fixture_value(uint32_t seed, uint64_t i, float scale)
{
    uint64_t h = mix(((uint64_t)seed << 40) ^ i);
    return scale * ((float)(h >> 40) / (float)(1u << 24) * 2.0f - 1.0f);
}

/* IEEE half from float, round to nearest even; fixture values are normal and small. */
static uint16_t to_half(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    uint32_t sign = (x >> 16) & 0x8000u;
    int32_t exp = (int32_t)((x >> 23) & 0xff) - 127 + 15;
    uint32_t man = x & 0x7fffffu;
    if (exp <= 0)
        return (uint16_t)sign; /* values this small do not occur in fixtures */
    uint32_t h = sign | (uint32_t)exp << 10 | man >> 13;
    uint32_t rest = man & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (h & 1u)))
        h++;
    return (uint16_t)h;
}

typedef struct tensor_src {
    uint32_t seed, type;
    float scale, offset;   /* value = offset + U(-scale, scale) */
} tensor_src;

/* Produces the bytes of element (or block) e of a tensor into out. */
static size_t element_bytes(const tensor_src *t, uint64_t e, uint8_t out[64])
{
    switch (t->type) {
    case GGUF_TENSOR_F32: {
        float v = t->offset + fixture_value(t->seed, e, t->scale);
        memcpy(out, &v, 4);
        return 4;
    }
    case GGUF_TENSOR_F16: {
        uint16_t h = to_half(t->offset + fixture_value(t->seed, e, t->scale));
        memcpy(out, &h, 2);
        return 2;
    }
    default: { /* Q8_0 block: f16 scale d, then 32 int8 quants (ggml block_q8_0) */
        uint16_t d = to_half(t->scale / 127.0f);
        memcpy(out, &d, 2);
        for (int k = 0; k < 32; k++)
            out[2 + k] = (uint8_t)(int8_t)lrintf(fixture_value(t->seed, e * 32 + (uint64_t)k, 127.0f));
        return 34;
    }
    }
}

static gguf_status fill_tensor(void *user, uint8_t *dst, uint64_t at, size_t len)
{
    const tensor_src *t = user;
    uint8_t el[64];
    size_t esz = element_bytes(t, 0, el);
    for (uint64_t e = at / esz; e * esz < at + len; e++) {
        element_bytes(t, e, el);
        for (size_t k = 0; k < esz; k++) {
            uint64_t pos = e * esz + k;
            if (pos >= at && pos < at + len)
                dst[pos - at] = el[k];
        }
    }
    return GGUF_OK;
}

#define MAX_TENSORS 1024

typedef struct fixture_state {
    tensor_src srcs[MAX_TENSORS];
    char *tokens[4096];
    char token_mem[4096 * 16];
    float scores[4096];
    int32_t types[4096];
    size_t n;
} fixture_state;

static gguf_status add(gguf_writer *w, fixture_state *st, const char *name, uint32_t type, uint32_t n_dims,
                       uint64_t ne0, uint64_t ne1, float scale, float offset, gguf_error *err)
{
    if (st->n >= MAX_TENSORS)
        return GGUF_E_INVALID_ARG;
    tensor_src *t = &st->srcs[st->n];
    *t = (tensor_src){ (uint32_t)(st->n + 1) * 7919u, type, scale, offset };
    st->n++;
    uint64_t ne[2] = { ne0, ne1 };
    return gguf_writer_add_tensor_fill(w, name, type, n_dims, ne, fill_tensor, t, err);
}

static void build_vocab(fixture_state *st, uint32_t n_vocab)
{
    char *m = st->token_mem;
    for (uint32_t i = 0; i < n_vocab; i++) {
        st->tokens[i] = m;
        if (i == 0)
            strcpy(m, "<unk>");
        else if (i == 1)
            strcpy(m, "<s>");
        else if (i == 2)
            strcpy(m, "</s>");
        else if (i < 259)
            snprintf(m, 16, "<0x%02X>", i - 3);
        else
            snprintf(m, 16, "\xe2\x96\x81w%u", i - 259); /* U+2581, SentencePiece's space */
        m += strlen(m) + 1;
        st->scores[i] = i < 259 ? 0.0f : -(float)(i - 259);
        st->types[i] = i == 0 ? 2 : i < 3 ? 3 : i < 259 ? 6 : 1; /* unknown, control, byte, normal */
    }
}

/* The writer keeps pointers to the vocabulary and tensor sources until it
 * writes, so they live here rather than on fixture_add_model's stack. */
static _Thread_local fixture_state fixture_st;

gguf_status fixture_add_model(gguf_writer *w, const fixture_opts *o, gguf_error *err)
{
    if (o->n_vocab < 259 || o->n_vocab > 4096 || o->n_embd % 32 || o->n_ff % 32 || o->n_layer > 96)
        return GGUF_E_INVALID_ARG;
    const char *arch = o->arch ? o->arch : "llama";
    const model_arch *desc = model_arch_find(arch, strlen(arch));
    if (!desc)
        return GGUF_E_INVALID_ARG;
    fixture_state *st = &fixture_st;
    st->n = 0;
    build_vocab(st, o->n_vocab);
    gguf_status s = GGUF_OK;
    char key[96];
/* Each writer call runs while every one before it succeeded; the first failure is what the function returns. */
#define ADD(x) ((void)(s = s != GGUF_OK ? s : (x)))
    if (o->alignment)
        ADD(gguf_writer_add_u32(w, "general.alignment", o->alignment, err));
    ADD(gguf_writer_add_str(w, "general.architecture", arch, err));
    ADD(gguf_writer_add_str(w, "general.name", "ggufscope fixture", err));
    ADD(gguf_writer_add_u32(w, "general.file_type", 1, err)); /* mostly F16 */
    static const struct { const char *suffix; uint32_t fixed; } counts[] = {
        { "context_length", 256 }, { "embedding_length", 0 }, { "block_count", 1 }, { "feed_forward_length", 2 },
        { "attention.head_count", 4 }, { "attention.head_count_kv", 2 },
    };
    const uint32_t given[] = { 0, o->n_embd, o->n_layer, o->n_ff };
    for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++) {
        snprintf(key, sizeof key, "%s.%s", arch, counts[i].suffix);
        ADD(gguf_writer_add_u32(w, key, i >= 1 && i <= 3 ? given[i] : counts[i].fixed, err));
    }
    snprintf(key, sizeof key, "%s.attention.layer_norm_rms_epsilon", arch);
    ADD(gguf_writer_add_f32(w, key, 1e-5f, err));
    snprintf(key, sizeof key, "%s.rope.freq_base", arch);
    ADD(gguf_writer_add_f32(w, key, 10000.0f, err));
    if (desc->swa_period) {
        snprintf(key, sizeof key, "%s.attention.sliding_window", arch);
        ADD(gguf_writer_add_u32(w, key, 4, err));
        snprintf(key, sizeof key, "%s.rope.freq_base_swa", arch);
        ADD(gguf_writer_add_f32(w, key, 1000.0f, err));
    }
    if (desc->final_softcap) {
        snprintf(key, sizeof key, "%s.final_logit_softcapping", arch);
        ADD(gguf_writer_add_f32(w, key, 30.0f, err));
    }
    ADD(gguf_writer_add_str(w, "tokenizer.ggml.model", "llama", err));
    gguf_wvalue toks = { .type = GGUF_VT_ARRAY, .elem_type = GGUF_VT_STRING, .count = o->n_vocab,
                         .v.strs = (const char *const *)st->tokens };
    gguf_wvalue scores = { .type = GGUF_VT_ARRAY, .elem_type = GGUF_VT_FLOAT32, .count = o->n_vocab,
                           .v.elems = st->scores };
    gguf_wvalue types = { .type = GGUF_VT_ARRAY, .elem_type = GGUF_VT_INT32, .count = o->n_vocab,
                          .v.elems = st->types };
    ADD(gguf_writer_add(w, "tokenizer.ggml.tokens", &toks, err));
    ADD(gguf_writer_add(w, "tokenizer.ggml.scores", &scores, err));
    ADD(gguf_writer_add(w, "tokenizer.ggml.token_type", &types, err));
    ADD(gguf_writer_add_u32(w, "tokenizer.ggml.bos_token_id", 1, err));
    ADD(gguf_writer_add_u32(w, "tokenizer.ggml.eos_token_id", 2, err));

    uint32_t d = o->n_embd, ff = o->n_ff, kv = o->n_embd / 2;
    float ws = 1.0f / sqrtf((float)d);
    ADD(add(w, st, "token_embd.weight", GGUF_TENSOR_F16, 2, d, o->n_vocab, 0.5f, 0, err));
    char name[64];
    for (uint32_t l = 0; l < o->n_layer; l++) {
#define LAYER(suffix, type, nd, a, b, sc, off)                                   \
        snprintf(name, sizeof name, "blk.%u." suffix, l);                       \
        ADD(add(w, st, name, type, nd, a, b, sc, off, err))
        LAYER("attn_norm.weight", GGUF_TENSOR_F32, 1, d, 1, 0.1f, 1.0f);
        LAYER("attn_q.weight", GGUF_TENSOR_F16, 2, d, d, ws, 0);
        LAYER("attn_k.weight", GGUF_TENSOR_F16, 2, d, kv, ws, 0);
        LAYER("attn_v.weight", GGUF_TENSOR_F16, 2, d, kv, ws, 0);
        LAYER("attn_output.weight", GGUF_TENSOR_F16, 2, d, d, ws, 0);
        LAYER("ffn_norm.weight", GGUF_TENSOR_F32, 1, d, 1, 0.1f, 1.0f);
        LAYER("ffn_gate.weight", GGUF_TENSOR_F16, 2, d, ff, ws, 0);
        LAYER("ffn_up.weight", GGUF_TENSOR_F16, 2, d, ff, ws, 0);
        LAYER("ffn_down.weight", GGUF_TENSOR_F16, 2, ff, d, 1.0f / sqrtf((float)ff), 0);
        /* what the architecture requires beyond llama (head dim d / 4, kv width d / 2) */
        if (desc->need[MODEL_ROLE_ATTN_Q_BIAS] == MODEL_NEED_REQUIRED) {
            LAYER("attn_q.bias", GGUF_TENSOR_F32, 1, d, 1, 0.1f, 0);
            LAYER("attn_k.bias", GGUF_TENSOR_F32, 1, kv, 1, 0.1f, 0);
            LAYER("attn_v.bias", GGUF_TENSOR_F32, 1, kv, 1, 0.1f, 0);
        }
        if (desc->need[MODEL_ROLE_ATTN_Q_NORM] == MODEL_NEED_REQUIRED) {
            LAYER("attn_q_norm.weight", GGUF_TENSOR_F32, 1, d / 4, 1, 0.1f, 1.0f);
            LAYER("attn_k_norm.weight", GGUF_TENSOR_F32, 1, d / 4, 1, 0.1f, 1.0f);
        }
        if (desc->need[MODEL_ROLE_ATTN_POST_NORM] == MODEL_NEED_REQUIRED) {
            LAYER("post_attention_norm.weight", GGUF_TENSOR_F32, 1, d, 1, 0.1f, 1.0f);
            LAYER("post_ffw_norm.weight", GGUF_TENSOR_F32, 1, d, 1, 0.1f, 1.0f);
        }
#undef LAYER
    }
    ADD(add(w, st, "output_norm.weight", GGUF_TENSOR_F32, 1, d, 1, 0.1f, 1.0f, err));
    if (o->rope_freqs) /* divisors in [1, 7]: a Llama 3.1 file's lie between 1 and its scaling factor */
        ADD(add(w, st, "rope_freqs.weight", GGUF_TENSOR_F32, 1, o->rope_freqs, 1, 3.0f, 4.0f, err));
    ADD(add(w, st, "output.weight", o->f16_output ? GGUF_TENSOR_F16 : GGUF_TENSOR_Q8_0, 2, d, o->n_vocab, ws, 0, err));
#undef ADD
    return s;
}

gguf_status fixture_write_file(const char *path, const fixture_opts *o, gguf_error *err)
{
    gguf_writer *w = gguf_writer_create(o->version);
    if (!w)
        return GGUF_E_NOMEM;
    gguf_status s = fixture_add_model(w, o, err);
    if (s == GGUF_OK)
        s = gguf_writer_write_file(w, path, err);
    gguf_writer_free(w);
    return s;
}

gguf_status fixture_write_buffer(const fixture_opts *o, uint8_t **buf, size_t *len, gguf_error *err)
{
    gguf_writer *w = gguf_writer_create(o->version);
    if (!w)
        return GGUF_E_NOMEM;
    gguf_status s = fixture_add_model(w, o, err);
    if (s == GGUF_OK)
        s = gguf_writer_write_buffer(w, buf, len, err);
    gguf_writer_free(w);
    return s;
}
