/* Hostile models (see hostile_model.h): each case rewrites the fixture model through our reader
 * and writer, setting, adding or dropping keys and renaming or dropping tensors, and may patch
 * bytes afterwards for what the writer itself refuses (duplicate names). */
#include "hostile_model.h"
#include "fixture_model.h"

/* The case table names only the fields each case sets; the rest are zero on purpose. */
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char HOSTILE_ESCAPES[] = "\x1b[2J\x07\r\x9b\xc2\x9b\xff";

#define ESC_TEXT "evil\x1b[2J\x1b]0;pwned\x07\r\x9b\xc2\x9b\xff\xfe"

enum { MAX_KEY_EDITS = 6, MAX_TENSOR_EDITS = 3 };

typedef struct key_edit {
    const char *key;  /* NULL: unused slot */
    bool drop;
    gguf_wvalue v;
} key_edit;

typedef struct tensor_edit {
    const char *from; /* NULL: unused slot */
    const char *to;   /* NULL: dropped */
} tensor_edit;

/* Values made at write time (they depend on the base's vocabulary). */
typedef enum runtime_value {
    RT_NONE,
    RT_TOKEN_1MB,       /* tokens: one token of 1 MiB */
    RT_TOKENS_DUP,      /* tokens: every normal token spelled the same */
    RT_TOKENS_EMPTY,    /* tokens: every normal token empty */
    RT_TOKENS_ESCAPES,  /* tokens: escape bytes in normal tokens */
    RT_SCORES_SHORT,    /* scores: one fewer than tokens */
    RT_TYPES_SHORT,     /* token_type: one fewer than tokens */
    RT_TYPES_STRINGS,   /* token_type: strings */
    RT_TYPES_HUGE,      /* token_type: values far outside the enum */
    RT_MERGES_NOSPACE,  /* merges: no space between the halves */
    RT_MERGES_UNKNOWN,  /* merges: halves that are not tokens */
    RT_MERGES_ESCAPES,  /* merges: escape bytes */
} runtime_value;

typedef struct hostile_case {
    hostile_case_info info;
    key_edit keys[MAX_KEY_EDITS];
    tensor_edit tensors[MAX_TENSOR_EDITS];
    const char *rt_key;    /* key whose value is made at write time */
    runtime_value rt;
    const char *patch_from; /* after writing, the first occurrence is overwritten by patch_to (same length) */
    const char *patch_to;
} hostile_case;

#define U32(x) { .type = GGUF_VT_UINT32, .v.u64 = (x) }
#define U64(x) { .type = GGUF_VT_UINT64, .v.u64 = (x) }
#define I32(x) { .type = GGUF_VT_INT32, .v.i64 = (x) }
#define F32(x) { .type = GGUF_VT_FLOAT32, .v.f64 = (x) }
#define STR(x) { .type = GGUF_VT_STRING, .v.str = (x) }
#define BOOL(x) { .type = GGUF_VT_BOOL, .v.b = (x) }
#define SET(k, val) { .key = (k), .v = val }
#define DROP(k) { .key = (k), .drop = true }

static const int32_t ints3[] = { 1, 2, 3 };
static const char *const strs2[] = { "a", "b" };
#define ARR_I32 { .type = GGUF_VT_ARRAY, .elem_type = GGUF_VT_INT32, .count = 3, .v.elems = ints3 }
#define ARR_STR { .type = GGUF_VT_ARRAY, .elem_type = GGUF_VT_STRING, .count = 2, .v.strs = strs2 }
#define ARR_EMPTY_STR { .type = GGUF_VT_ARRAY, .elem_type = GGUF_VT_STRING, .count = 0, .v.strs = strs2 }

static const hostile_case cases[] = {
    /* seeds: the healthy bases */
    { { "healthy-spm", HOSTILE_SPM, true } },
    { { "healthy-bpe", HOSTILE_BPE, true } },
    { { "healthy-vocab-spm", HOSTILE_VOCAB_SPM, true } },
    { { "healthy-vocab-bpe", HOSTILE_VOCAB_BPE, true } },
    /* hyperparameters: zero, huge, negative, float- and string-typed, not dividing */
    { { "head-count-zero", HOSTILE_SPM }, { SET("llama.attention.head_count", U32(0)) } },
    { { "head-count-huge", HOSTILE_SPM }, { SET("llama.attention.head_count", U32(UINT32_MAX)) } },
    { { "head-count-negative", HOSTILE_SPM }, { SET("llama.attention.head_count", I32(-4)) } },
    { { "head-count-float", HOSTILE_SPM }, { SET("llama.attention.head_count", F32(4.0)) } },
    { { "head-count-string", HOSTILE_SPM }, { SET("llama.attention.head_count", STR("4")) } },
    { { "head-count-array", HOSTILE_SPM }, { SET("llama.attention.head_count", ARR_I32) } },
    { { "head-count-not-dividing", HOSTILE_SPM }, { SET("llama.attention.head_count", U32(3)) } },
    { { "head-count-kv-zero", HOSTILE_SPM }, { SET("llama.attention.head_count_kv", U32(0)) } },
    { { "head-count-kv-not-dividing", HOSTILE_SPM }, { SET("llama.attention.head_count_kv", U32(3)) } },
    { { "head-count-kv-above-heads", HOSTILE_SPM }, { SET("llama.attention.head_count_kv", U32(8)) } },
    { { "head-count-u64-huge", HOSTILE_SPM },
      { SET("llama.attention.head_count", U64(1ull << 62)), SET("llama.embedding_length", U64(1ull << 62)) } },
    { { "embedding-length-zero", HOSTILE_SPM }, { SET("llama.embedding_length", U32(0)) } },
    { { "embedding-length-huge", HOSTILE_SPM }, { SET("llama.embedding_length", U64(UINT64_MAX)) } },
    { { "embedding-length-negative", HOSTILE_SPM }, { SET("llama.embedding_length", I32(-64)) } },
    { { "block-count-zero", HOSTILE_SPM }, { SET("llama.block_count", U32(0)) } },
    { { "block-count-amplified", HOSTILE_SPM }, { SET("llama.block_count", U32(100000)) } },
    { { "block-count-2-31", HOSTILE_SPM }, { SET("llama.block_count", U32(1u << 31)) } },
    { { "block-count-u64-max", HOSTILE_SPM }, { SET("llama.block_count", U64(UINT64_MAX)) } },
    { { "context-length-zero", HOSTILE_SPM }, { SET("llama.context_length", U32(0)) } },
    { { "context-length-huge", HOSTILE_SPM }, { SET("llama.context_length", U64(1ull << 40)) } },
    { { "ff-length-zero", HOSTILE_SPM }, { SET("llama.feed_forward_length", U32(0)) } },
    { { "ff-length-wrong", HOSTILE_SPM }, { SET("llama.feed_forward_length", U32(96)) } },
    { { "rope-dims-too-many", HOSTILE_SPM }, { SET("llama.rope.dimension_count", U32(1000)) } },
    { { "rope-dims-odd", HOSTILE_SPM }, { SET("llama.rope.dimension_count", U32(7)) } },
    { { "rope-base-zero", HOSTILE_SPM }, { SET("llama.rope.freq_base", F32(0.0)) } },
    { { "rope-base-negative", HOSTILE_SPM }, { SET("llama.rope.freq_base", F32(-1e4)) } },
    { { "rms-eps-nan", HOSTILE_SPM }, { SET("llama.attention.layer_norm_rms_epsilon", F32(__builtin_nan(""))) } },
    { { "rms-eps-negative", HOSTILE_SPM }, { SET("llama.attention.layer_norm_rms_epsilon", F32(-1.0)) } },
    { { "key-length-mismatch", HOSTILE_SPM },
      { SET("llama.attention.key_length", U32(24)), SET("llama.attention.value_length", U32(8)) } },
    { { "key-length-huge", HOSTILE_SPM }, { SET("llama.attention.key_length", U64(1ull << 60)) } },
    { { "head-dims-product-huge", HOSTILE_SPM },
      { SET("llama.attention.head_count", U32(65536)), SET("llama.attention.key_length", U32(65536)),
        SET("llama.attention.head_count_kv", U32(65536)) } },
    { { "sliding-window-huge", HOSTILE_SPM }, { SET("llama.attention.sliding_window", U64(UINT64_MAX)) } },
    /* values llama.cpp takes as they come, after which every output is NaN or a constant */
    { { "rms-eps-inf", HOSTILE_SPM }, { SET("llama.attention.layer_norm_rms_epsilon", F32(__builtin_inff())) } },
    { { "rms-eps-1e30", HOSTILE_SPM }, { SET("llama.attention.layer_norm_rms_epsilon", F32(1e30)) } },
    { { "rope-base-inf", HOSTILE_SPM }, { SET("llama.rope.freq_base", F32(__builtin_inff())) } },
    { { "rope-scaling-factor-tiny", HOSTILE_SPM },
      { SET("llama.rope.scaling.type", STR("linear")), SET("llama.rope.scaling.factor", F32(1e-45)) } },
    { { "rope-scaling-factor-inf", HOSTILE_SPM },
      { SET("llama.rope.scaling.type", STR("linear")), SET("llama.rope.scaling.factor", F32(__builtin_inff())) } },
    { { "gemma3-healthy", HOSTILE_GEMMA3, true } },
    { { "gemma3-softcap-inf", HOSTILE_GEMMA3 }, { SET("gemma3.final_logit_softcapping", F32(__builtin_inff())) } },
    { { "gemma3-window-int-max", HOSTILE_GEMMA3, true }, { SET("gemma3.attention.sliding_window", U32(INT32_MAX)) } },
    /* what llama.cpp's loader refuses: experts announced without expert tensors, no feed-forward width */
    { { "experts-without-tensors", HOSTILE_SPM },
      { SET("llama.expert_count", U32(8)), SET("llama.expert_used_count", U32(2)) } },
    { { "ff-length-missing", HOSTILE_SPM }, { DROP("llama.feed_forward_length") } },
    /* names that print as other names (U+200B, bidi overrides, tags) */
    { { "key-confusable", HOSTILE_SPM }, { SET("general.architecture\u200b", STR("qwen2")) } },
    { { "name-bidi", HOSTILE_SPM, true }, { SET("general.name", STR("abc\u202edcba\u2066x\u2069\U000e0041\u2028y")) } },
    { { "tensor-confusable", HOSTILE_SPM }, .tensors = { { "output_norm.weight", "output_norm.weight\ufeff" } } },
    /* tensors */
    { { "missing-output-norm", HOSTILE_SPM }, .tensors = { { "output_norm.weight", NULL } } },
    { { "missing-token-embd", HOSTILE_SPM }, .tensors = { { "token_embd.weight", NULL } } },
    { { "missing-layer-tensor", HOSTILE_SPM }, .tensors = { { "blk.1.ffn_up.weight", NULL } } },
    { { "extra-unknown-tensor", HOSTILE_SPM }, .tensors = { { "blk.0.ffn_up.weight", "blk.0.ffn_up_exps.weight" } } },
    { { "tensor-wrong-shape", HOSTILE_SPM }, .tensors = { { "blk.0.attn_q.weight", "blk.0.attn_k.weight" },
                                                        { "blk.0.attn_k.weight", "blk.0.attn_q.weight" } } },
    { { "tensor-name-escapes", HOSTILE_SPM }, .tensors = { { "blk.0.attn_q.weight", "blk.0." ESC_TEXT } } },
    { { "layer-index-huge", HOSTILE_SPM }, .tensors = { { "blk.1.ffn_up.weight", "blk.4294967297.ffn_up.weight" } } },
    { { "duplicate-tensor-escapes", HOSTILE_SPM },
      .tensors = { { "blk.1.ffn_up.weight", "dup\x1b]0;A\x07" }, { "blk.1.ffn_gate.weight", "dup\x1b]0;B\x07" } },
      .patch_from = "dup\x1b]0;B\x07", .patch_to = "dup\x1b]0;A\x07" },
    /* strings with escape bytes */
    { { "name-escapes", HOSTILE_SPM, true }, { SET("general.name", STR(ESC_TEXT)) } },
    { { "architecture-escapes", HOSTILE_SPM }, { SET("general.architecture", STR(ESC_TEXT)) } },
    { { "architecture-llama-escape-suffix", HOSTILE_SPM }, { SET("general.architecture", STR("llama\x1b[2J")) } },
    { { "key-escapes", HOSTILE_SPM, true }, { SET("general." ESC_TEXT, STR(ESC_TEXT)) } },
    { { "duplicate-key-escapes", HOSTILE_SPM },
      { SET("dup\x1b]0;A\x07", U32(1)), SET("dup\x1b]0;B\x07", U32(2)) },
      .patch_from = "dup\x1b]0;B\x07", .patch_to = "dup\x1b]0;A\x07" },
    { { "chat-template-escapes", HOSTILE_SPM, true }, { SET("tokenizer.chat_template", STR(ESC_TEXT)) } },
    { { "tokenizer-model-escapes", HOSTILE_SPM }, { SET("tokenizer.ggml.model", STR(ESC_TEXT)) } },
    { { "tokens-escapes", HOSTILE_SPM, true }, .rt_key = "tokenizer.ggml.tokens", .rt = RT_TOKENS_ESCAPES },
    { { "tokens-escapes-bpe", HOSTILE_BPE, true }, .rt_key = "tokenizer.ggml.tokens", .rt = RT_TOKENS_ESCAPES },
    { { "pre-escapes", HOSTILE_BPE }, { SET("tokenizer.ggml.pre", STR(ESC_TEXT)) } },
    /* tokenizer arrays */
    { { "tokenizer-model-missing", HOSTILE_SPM }, { DROP("tokenizer.ggml.model") } },
    { { "tokenizer-model-unknown", HOSTILE_SPM }, { SET("tokenizer.ggml.model", STR("wordpiece")) } },
    { { "tokenizer-model-number", HOSTILE_SPM }, { SET("tokenizer.ggml.model", U32(1)) } },
    { { "tokens-missing", HOSTILE_SPM }, { DROP("tokenizer.ggml.tokens") } },
    { { "tokens-empty", HOSTILE_SPM }, { SET("tokenizer.ggml.tokens", ARR_EMPTY_STR) } },
    { { "tokens-numbers", HOSTILE_SPM }, { SET("tokenizer.ggml.tokens", ARR_I32) } },
    { { "tokens-string", HOSTILE_SPM }, { SET("tokenizer.ggml.tokens", STR("abc")) } },
    { { "tokens-fewer-than-rows", HOSTILE_SPM }, { SET("tokenizer.ggml.tokens", ARR_STR) } },
    /* found by fuzz-model: SentencePiece's default EOS (2) past a vocabulary of two tokens */
    { { "tokens-fewer-than-default-ids", HOSTILE_SPM },
      { SET("tokenizer.ggml.tokens", ARR_STR), DROP("tokenizer.ggml.eos_token_id"), DROP("tokenizer.ggml.bos_token_id"),
        DROP("tokenizer.ggml.scores"), DROP("tokenizer.ggml.token_type") } },
    { { "vocab-fewer-than-default-ids", HOSTILE_VOCAB_SPM },
      { SET("tokenizer.ggml.tokens", ARR_STR), DROP("tokenizer.ggml.eos_token_id"), DROP("tokenizer.ggml.bos_token_id"),
        DROP("tokenizer.ggml.scores"), DROP("tokenizer.ggml.token_type") } },
    { { "token-1mb", HOSTILE_SPM }, .rt_key = "tokenizer.ggml.tokens", .rt = RT_TOKEN_1MB },
    { { "token-1mb-bpe", HOSTILE_BPE }, .rt_key = "tokenizer.ggml.tokens", .rt = RT_TOKEN_1MB },
    { { "tokens-duplicate", HOSTILE_SPM }, .rt_key = "tokenizer.ggml.tokens", .rt = RT_TOKENS_DUP },
    { { "tokens-empty-strings", HOSTILE_SPM }, .rt_key = "tokenizer.ggml.tokens", .rt = RT_TOKENS_EMPTY },
    { { "tokens-empty-strings-bpe", HOSTILE_BPE }, .rt_key = "tokenizer.ggml.tokens", .rt = RT_TOKENS_EMPTY },
    { { "scores-short", HOSTILE_SPM }, .rt_key = "tokenizer.ggml.scores", .rt = RT_SCORES_SHORT },
    { { "scores-strings", HOSTILE_SPM }, { SET("tokenizer.ggml.scores", ARR_STR) } },
    { { "token-type-short", HOSTILE_SPM }, .rt_key = "tokenizer.ggml.token_type", .rt = RT_TYPES_SHORT },
    { { "token-type-strings", HOSTILE_SPM }, .rt_key = "tokenizer.ggml.token_type", .rt = RT_TYPES_STRINGS },
    { { "token-type-huge", HOSTILE_SPM }, .rt_key = "tokenizer.ggml.token_type", .rt = RT_TYPES_HUGE },
    { { "bos-out-of-range", HOSTILE_SPM }, { SET("tokenizer.ggml.bos_token_id", U32(1000000000)) } },
    { { "bos-negative", HOSTILE_SPM }, { SET("tokenizer.ggml.bos_token_id", I32(-5)) } },
    { { "bos-float", HOSTILE_SPM }, { SET("tokenizer.ggml.bos_token_id", F32(1.0)) } },
    { { "eos-out-of-range", HOSTILE_SPM }, { SET("tokenizer.ggml.eos_token_id", U64(UINT64_MAX)) } },
    { { "eot-out-of-range-bpe", HOSTILE_BPE }, { SET("tokenizer.ggml.eot_token_id", U32(70000)) } },
    { { "unk-out-of-range", HOSTILE_SPM }, { SET("tokenizer.ggml.unknown_token_id", U32(288)) } },
    { { "add-bos-string", HOSTILE_SPM }, { SET("tokenizer.ggml.add_bos_token", STR("yes")) } },
    { { "merges-missing-bpe", HOSTILE_BPE }, { DROP("tokenizer.ggml.merges") } },
    { { "merges-numbers-bpe", HOSTILE_BPE }, { SET("tokenizer.ggml.merges", ARR_I32) } },
    { { "merges-nospace-bpe", HOSTILE_BPE }, .rt_key = "tokenizer.ggml.merges", .rt = RT_MERGES_NOSPACE },
    { { "merges-unknown-bpe", HOSTILE_BPE }, .rt_key = "tokenizer.ggml.merges", .rt = RT_MERGES_UNKNOWN },
    { { "merges-escapes-bpe", HOSTILE_BPE }, .rt_key = "tokenizer.ggml.merges", .rt = RT_MERGES_ESCAPES },
    /* every pre-tokenizer, and one that does not exist */
    { { "pre-gpt2", HOSTILE_BPE, true }, { SET("tokenizer.ggml.pre", STR("gpt2")) } },
    { { "pre-llama3", HOSTILE_BPE, true }, { SET("tokenizer.ggml.pre", STR("llama-bpe")) } },
    { { "pre-qwen2", HOSTILE_BPE, true }, { SET("tokenizer.ggml.pre", STR("qwen2")) } },
    { { "pre-smollm", HOSTILE_BPE, true }, { SET("tokenizer.ggml.pre", STR("smollm")) } },
    { { "pre-unknown", HOSTILE_BPE }, { SET("tokenizer.ggml.pre", STR("no-such-pre")) } },
    { { "vocab-pre-gpt2", HOSTILE_VOCAB_BPE, true }, { SET("tokenizer.ggml.pre", STR("gpt2")) } },
    { { "vocab-pre-llama3", HOSTILE_VOCAB_BPE, true }, { SET("tokenizer.ggml.pre", STR("llama3")) } },
    { { "vocab-pre-qwen2", HOSTILE_VOCAB_BPE, true }, { SET("tokenizer.ggml.pre", STR("qwen2")) } },
    { { "vocab-pre-smollm", HOSTILE_VOCAB_BPE, true }, { SET("tokenizer.ggml.pre", STR("smollm")) } },
    { { "vocab-tokens-escapes", HOSTILE_VOCAB_SPM, true }, .rt_key = "tokenizer.ggml.tokens", .rt = RT_TOKENS_ESCAPES },
    /* PLaMo's tokenizer over the SentencePiece vocabulary (its 256 byte tokens are what it needs) */
    { { "vocab-plamo2", HOSTILE_VOCAB_SPM, true }, { SET("tokenizer.ggml.model", STR("plamo2")) } },
    { { "plamo2-model", HOSTILE_SPM, true }, { SET("tokenizer.ggml.model", STR("plamo2")) } },
    { { "vocab-token-1mb", HOSTILE_VOCAB_SPM }, .rt_key = "tokenizer.ggml.tokens", .rt = RT_TOKEN_1MB },
    { { "vocab-merges-unknown", HOSTILE_VOCAB_BPE }, .rt_key = "tokenizer.ggml.merges", .rt = RT_MERGES_UNKNOWN },
    /* metadata with which a good model loads, then prints gibberish or never stops (test_generation_metadata) */
    { { "bpe-without-pre", HOSTILE_BPE, true }, { DROP("tokenizer.ggml.pre") } },
    { { "eos-past-vocab-bpe", HOSTILE_BPE }, { SET("tokenizer.ggml.eos_token_id", U32(49200)) } },
    { { "eos-ordinary-word", HOSTILE_SPM, true }, { SET("tokenizer.ggml.eos_token_id", U32(270)) } },
    { { "gemma-bos-off", HOSTILE_GEMMA3 }, { SET("tokenizer.ggml.add_bos_token", BOOL(false)) } },
    { { "instruct-without-template", HOSTILE_SPM, true }, { SET("general.name", STR("Tiny-Chat 1B Instruct")) } },
    { { "template-end-not-a-token", HOSTILE_SPM, true },
      { SET("tokenizer.chat_template",
            STR("{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}")) } },
    { { "template-unrecognised", HOSTILE_SPM, true },
      { SET("tokenizer.chat_template", STR("{% for m in messages %}### {{ m.role }}: {{ m.content }}\n{% endfor %}")) } },
    { { "template-bos-twice", HOSTILE_SPM, true },
      { SET("tokenizer.chat_template",
            STR("{{ bos_token }}{% for m in messages %}[INST] {{ m.content }} [/INST]{% endfor %}")) } },
    /* a chatml-looking template that reaches Python's internals when rendered (test_template_scan) */
    { { "template-ssti", HOSTILE_SPM },
      { SET("tokenizer.chat_template",
            STR("{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}\n"
                "{{ cycler.__init__.__globals__.os.popen('id').read() }}")) } },
};

size_t hostile_case_count(void) { return sizeof cases / sizeof cases[0]; }
const hostile_case_info *hostile_case_at(size_t i) { return i < hostile_case_count() ? &cases[i].info : NULL; }

/* ---- the byte-level BPE vocabulary ---------------------------------------- */

enum { BPE_MERGES = 31, BPE_VOCAB = 256 + BPE_MERGES + 1 }; /* = the fixture's 288 rows */

/* GPT-2's printable code point for each byte (bytes_to_unicode in its encoder.py). */
static unsigned byte_code_point(unsigned b)
{
    if ((b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255))
        return b;
    unsigned n = 0;
    for (unsigned c = 0; c < b; c++)
        n += !((c >= 33 && c <= 126) || (c >= 161 && c <= 172) || (c >= 174 && c <= 255));
    return 256 + n;
}

static size_t put_utf8(char *p, unsigned cp)
{
    if (cp < 0x80) {
        p[0] = (char)cp;
        return 1;
    }
    p[0] = (char)(0xc0 | (cp >> 6));
    p[1] = (char)(0x80 | (cp & 0x3f));
    return 2;
}

/* Halves of each merge, in rank order; "Ġ" is GPT-2's space. */
static const char *const bpe_merge_pairs[BPE_MERGES][2] = {
    { "Ġ", "t" }, { "h", "e" }, { "Ġt", "he" }, { "i", "n" }, { "Ġ", "a" }, { "e", "r" }, { "o", "n" },
    { "r", "e" }, { "a", "n" }, { "Ġ", "s" }, { "e", "n" }, { "a", "t" }, { "o", "r" }, { "Ġ", "o" },
    { "e", "s" }, { "Ġ", "w" }, { "i", "s" }, { "i", "t" }, { "Ġ", "c" }, { "a", "l" }, { "a", "r" },
    { "Ġ", "b" }, { "Ġ", "f" }, { "Ġ", "p" }, { "e", "d" }, { "n", "g" }, { "i", "ng" }, { "o", "u" },
    { "Ġ", "m" }, { "l", "e" }, { "Ġ", "h" },
};

typedef struct scratch {
    char bpe_mem[BPE_VOCAB * 16];
    const char *bpe_tokens[BPE_VOCAB];
    int32_t bpe_types[BPE_VOCAB];
    char merge_mem[BPE_MERGES * 16];
    const char *merges[BPE_MERGES];
    /* runtime values */
    const char **strs;
    char *big;
    int32_t *ints;
    float *floats;
    char *rt_mem;
} scratch;

static void build_bpe(scratch *s)
{
    char *m = s->bpe_mem;
    for (unsigned b = 0; b < 256; b++) {
        s->bpe_tokens[b] = m;
        m += put_utf8(m, byte_code_point(b));
        *m++ = '\0';
        s->bpe_types[b] = 1;
    }
    char *mm = s->merge_mem;
    for (int i = 0; i < BPE_MERGES; i++) {
        s->bpe_tokens[256 + i] = m;
        m += sprintf(m, "%s%s", bpe_merge_pairs[i][0], bpe_merge_pairs[i][1]) + 1;
        s->bpe_types[256 + i] = 1;
        s->merges[i] = mm;
        mm += sprintf(mm, "%s %s", bpe_merge_pairs[i][0], bpe_merge_pairs[i][1]) + 1;
    }
    s->bpe_tokens[BPE_VOCAB - 1] = "<|endoftext|>";
    s->bpe_types[BPE_VOCAB - 1] = 3; /* control */
}

/* ---- runtime values ---------------------------------------------------------- */

/* Copies the string array v (read from the base) into s->strs. */
static uint64_t copy_strs(scratch *s, const gguf_value *v)
{
    s->strs = calloc(v->count + 1, sizeof *s->strs);
    s->rt_mem = malloc(v->count * 40 + 1);
    char *m = s->rt_mem;
    for (uint64_t i = 0; i < v->count; i++) {
        size_t n = v->v.strs[i].len < 32 ? v->v.strs[i].len : 32;
        memcpy(m, v->v.strs[i].ptr, n);
        m[n] = '\0';
        s->strs[i] = m;
        m += n + 1;
    }
    return v->count;
}

static bool make_runtime(scratch *s, runtime_value rt, const gguf_value *old, gguf_wvalue *out)
{
    uint64_t n = old->type == GGUF_VT_ARRAY ? old->count : 0;
    *out = (gguf_wvalue){ .type = GGUF_VT_ARRAY, .elem_type = GGUF_VT_STRING, .count = n };
    switch (rt) {
    case RT_TOKEN_1MB:
    case RT_TOKENS_DUP:
    case RT_TOKENS_EMPTY:
    case RT_TOKENS_ESCAPES:
    case RT_MERGES_NOSPACE:
    case RT_MERGES_UNKNOWN:
    case RT_MERGES_ESCAPES:
        if (old->elem_type != GGUF_VT_STRING)
            return false;
        copy_strs(s, old);
        if (rt == RT_TOKENS_ESCAPES) /* each its own text: llama.cpp refuses a vocabulary with a text twice */
            s->big = malloc((size_t)n * 48 + 1);
        if (rt == RT_TOKENS_ESCAPES && !s->big)
            return false;
        for (uint64_t i = 0; i < n; i++) {
            bool normal_token = i >= 259 && i < n - 1; /* SPM: past specials and bytes; BPE: merged tokens */
            bool merge = true;
            if (rt == RT_TOKENS_DUP && normal_token)
                s->strs[i] = "same";
            else if (rt == RT_TOKENS_EMPTY && normal_token)
                s->strs[i] = "";
            else if (rt == RT_TOKENS_ESCAPES && (normal_token || i == 42)) {
                char *e = s->big + (size_t)i * 48;
                snprintf(e, 48, "%s%llu", i % 2 ? ESC_TEXT : "\x1b[31m", (unsigned long long)i);
                s->strs[i] = e;
            }
            else if (rt == RT_MERGES_NOSPACE && merge)
                s->strs[i] = i % 2 ? "Ġt" : "abc";
            else if (rt == RT_MERGES_UNKNOWN && merge)
                s->strs[i] = i % 2 ? "zz qq" : " ";
            else if (rt == RT_MERGES_ESCAPES && merge)
                s->strs[i] = i % 2 ? "\x1b[2J \x07" : ESC_TEXT " \x9b";
        }
        if (rt == RT_TOKEN_1MB && n > 270) {
            s->big = malloc((1u << 20) + 1);
            for (size_t i = 0; i < 1u << 20; i++)
                s->big[i] = (char)('a' + i % 26);
            s->big[1u << 20] = '\0';
            s->strs[270] = s->big;
        }
        out->v.strs = s->strs;
        return true;
    case RT_SCORES_SHORT:
        s->floats = calloc(n + 1, sizeof *s->floats);
        *out = (gguf_wvalue){ .type = GGUF_VT_ARRAY, .elem_type = GGUF_VT_FLOAT32, .count = n ? n - 1 : 0,
                              .v.elems = s->floats };
        return true;
    case RT_TYPES_SHORT:
    case RT_TYPES_HUGE:
        s->ints = calloc(n + 1, sizeof *s->ints);
        for (uint64_t i = 0; i < n; i++)
            s->ints[i] = rt == RT_TYPES_HUGE ? (int32_t)(i * 2654435761u) : 1;
        *out = (gguf_wvalue){ .type = GGUF_VT_ARRAY, .elem_type = GGUF_VT_INT32,
                              .count = rt == RT_TYPES_SHORT && n ? n - 1 : n, .v.elems = s->ints };
        return true;
    case RT_TYPES_STRINGS:
        s->strs = calloc(n + 1, sizeof *s->strs);
        for (uint64_t i = 0; i < n; i++)
            s->strs[i] = "1";
        out->v.strs = s->strs;
        return true;
    case RT_NONE:
        break;
    }
    return false;
}

/* ---- the rewrite -------------------------------------------------------------- */

static const key_edit *find_edit(const hostile_case *c, const char *key)
{
    for (int i = 0; i < MAX_KEY_EDITS && c->keys[i].key; i++)
        if (!strcmp(c->keys[i].key, key))
            return &c->keys[i];
    return NULL;
}

/* The base's replacement for a key, before the case's own edits. */
static bool base_override(hostile_base base, scratch *s, const char *key, gguf_wvalue *out)
{
    if (base != HOSTILE_BPE && base != HOSTILE_VOCAB_BPE)
        return false;
    if (!strcmp(key, "tokenizer.ggml.model"))
        *out = (gguf_wvalue){ .type = GGUF_VT_STRING, .v.str = "gpt2" };
    else if (!strcmp(key, "tokenizer.ggml.tokens"))
        *out = (gguf_wvalue){ .type = GGUF_VT_ARRAY, .elem_type = GGUF_VT_STRING, .count = BPE_VOCAB,
                              .v.strs = s->bpe_tokens };
    else if (!strcmp(key, "tokenizer.ggml.token_type"))
        *out = (gguf_wvalue){ .type = GGUF_VT_ARRAY, .elem_type = GGUF_VT_INT32, .count = BPE_VOCAB,
                              .v.elems = s->bpe_types };
    else if (!strcmp(key, "tokenizer.ggml.bos_token_id") || !strcmp(key, "tokenizer.ggml.eos_token_id"))
        *out = (gguf_wvalue){ .type = GGUF_VT_UINT32, .v.u64 = BPE_VOCAB - 1 };
    else
        return false;
    return true;
}

static gguf_status rewrite(const hostile_case *c, const gguf_file *f, scratch *s, gguf_writer *w, gguf_error *err)
{
    bool bpe = c->info.base == HOSTILE_BPE || c->info.base == HOSTILE_VOCAB_BPE;
    bool tensors = c->info.base == HOSTILE_SPM || c->info.base == HOSTILE_BPE || c->info.base == HOSTILE_GEMMA3;
    gguf_status st;
    for (size_t i = 0; i < gguf_kv_count(f); i++) {
        const gguf_kv *kv = gguf_kv_at(f, i);
        if (bpe && !strcmp(kv->key, "tokenizer.ggml.scores"))
            continue; /* byte-level BPE has none */
        gguf_wvalue v;
        bool have = base_override(c->info.base, s, kv->key, &v);
        const key_edit *e = find_edit(c, kv->key);
        if (e && e->drop)
            continue;
        if (e)
            v = e->v, have = true;
        if (c->rt_key && !strcmp(c->rt_key, kv->key)) {
            gguf_value old = kv->value;
            if (have && v.type == GGUF_VT_ARRAY && v.elem_type == GGUF_VT_STRING) { /* the BPE base's tokens */
                old.count = v.count;
                old.elem_type = GGUF_VT_STRING;
            }
            gguf_str *view = NULL;
            if (have && v.type == GGUF_VT_ARRAY && v.elem_type == GGUF_VT_STRING) {
                view = calloc(v.count + 1, sizeof *view);
                for (uint64_t k = 0; k < v.count; k++)
                    view[k] = (gguf_str){ v.v.strs[k], strlen(v.v.strs[k]) };
                old.v.strs = view;
            }
            bool ok = make_runtime(s, c->rt, &old, &v);
            free(view);
            if (!ok)
                return GGUF_E_INVALID_ARG;
            have = true;
        }
        st = have ? gguf_writer_add(w, kv->key, &v, err) : gguf_writer_add_copy(w, kv->key, &kv->value, err);
        if (st != GGUF_OK)
            return st;
    }
    if (bpe) {
        static const char *const pre = "default";
        const key_edit *e = find_edit(c, "tokenizer.ggml.pre");
        gguf_wvalue merges = { .type = GGUF_VT_ARRAY, .elem_type = GGUF_VT_STRING, .count = BPE_MERGES,
                               .v.strs = s->merges };
        if (c->rt_key && !strcmp(c->rt_key, "tokenizer.ggml.merges")) {
            gguf_str view[BPE_MERGES];
            for (int k = 0; k < BPE_MERGES; k++)
                view[k] = (gguf_str){ s->merges[k], strlen(s->merges[k]) };
            gguf_value old = { .type = GGUF_VT_ARRAY, .elem_type = GGUF_VT_STRING, .count = BPE_MERGES,
                               .v.strs = view };
            if (!make_runtime(s, c->rt, &old, &merges))
                return GGUF_E_INVALID_ARG;
        }
        const key_edit *em = find_edit(c, "tokenizer.ggml.merges");
        if (!(em && em->drop) &&
            (st = gguf_writer_add(w, "tokenizer.ggml.merges", em ? &em->v : &merges, err)) != GGUF_OK)
            return st;
        if (!e && (st = gguf_writer_add_str(w, "tokenizer.ggml.pre", pre, err)) != GGUF_OK)
            return st;
    }
    for (int i = 0; i < MAX_KEY_EDITS && c->keys[i].key; i++) /* keys the base does not have */
        if (!c->keys[i].drop && !gguf_find_kv(f, c->keys[i].key) &&
            (!bpe || strcmp(c->keys[i].key, "tokenizer.ggml.merges")) &&
            (st = gguf_writer_add(w, c->keys[i].key, &c->keys[i].v, err)) != GGUF_OK)
            return st;
    for (size_t i = 0; tensors && i < gguf_tensor_count(f); i++) {
        const gguf_tensor *t = gguf_tensor_at(f, i);
        const char *name = t->name;
        for (int k = 0; k < MAX_TENSOR_EDITS && c->tensors[k].from; k++)
            if (!strcmp(c->tensors[k].from, t->name))
                name = c->tensors[k].to;
        if (name && (st = gguf_writer_add_tensor(w, name, t->type, t->n_dims, t->ne, t->data, err)) != GGUF_OK)
            return st;
    }
    return GGUF_OK;
}

static void patch(uint8_t *buf, size_t len, const char *from, const char *to)
{
    size_t n = strlen(from);
    for (size_t i = 0; i + n <= len; i++)
        if (!memcmp(buf + i, from, n)) {
            memcpy(buf + i, to, n);
            return;
        }
}

gguf_status hostile_write_buffer(size_t i, uint8_t **buf, size_t *len, gguf_error *err)
{
    if (i >= hostile_case_count())
        return GGUF_E_INVALID_ARG;
    const hostile_case *c = &cases[i];
    fixture_opts o = fixture_default_opts();
    o.n_embd = 32; /* small, so that the fuzzer's mutations land on metadata more than on weights */
    o.n_ff = 64;
    if (c->info.base == HOSTILE_GEMMA3)
        o.arch = "gemma3";
    uint8_t *base;
    size_t base_len;
    gguf_status st = fixture_write_buffer(&o, &base, &base_len, err);
    if (st != GGUF_OK)
        return st;
    gguf_file *f = NULL;
    scratch *s = calloc(1, sizeof *s);
    gguf_writer *w = gguf_writer_create(3);
    if (!s || !w)
        st = GGUF_E_NOMEM;
    if (st == GGUF_OK)
        st = gguf_open_memory(base, base_len, &f, err);
    if (st == GGUF_OK) {
        build_bpe(s);
        st = rewrite(c, f, s, w, err);
    }
    if (st == GGUF_OK)
        st = gguf_writer_write_buffer(w, buf, len, err);
    if (st == GGUF_OK && c->patch_from)
        patch(*buf, *len, c->patch_from, c->patch_to);
    gguf_writer_free(w);
    gguf_close(f);
    free(base);
    if (s) {
        free(s->strs);
        free(s->big);
        free(s->ints);
        free(s->floats);
        free(s->rt_mem);
        free(s);
    }
    return st;
}
