/*
 * What llama.cpp's vocabulary loader changes after it has read the file's tokens and keys (src/llama-vocab.cpp,
 * llama_vocab::impl::load, as vendored by llama-cpp-python 0.3.36), so that generation stops where llama.cpp's
 * does and the same tokens are printed and cut out of text:
 *   - fill-in-the-middle tokens no key names are found by their text and become control tokens; the pad, repo
 *     and file-separator ones end generation (Qwen2.5's <|fim_pad|>, <|repo_name|>, <|file_sep|>);
 *   - a token whose text is one of the end-of-generation texts ends generation and is a control token;
 *   - gpt-oss's <|channel|>, <|message|>, <|start|> and <|constrain|> are user-defined: always printed;
 *   - the keyed eos, eot and eom end generation;
 *   - o200k_harmony (gpt-oss) and solar-open: where <|return|> and <|call|>, or <|calls|> and <|flush|>, end
 *     generation, <|end|> does not (it closes gpt-oss's analysis message, not the reply) and is user-defined;
 *   - gemma4 and plamo: where <|tool_response> or <|plamo:eos|> ends generation, </s> is an ordinary token.
 * llama.cpp finds a role's token by walking a hash map and takes the first text that matches; where a vocabulary
 * holds two of a role's texts we take the lower id. Held to llama.cpp's own answer for files that trip every rule
 * (tests/data/llama_vocab_rules.jsonl, test_tokenizer).
 */
#include "internal.h"
#include "vocab.h"

#include <string.h>

/* A fill-in-the-middle role: its keys (the later one wins where both are set, as llama.cpp reads them in that
 * order), the texts that find it where neither names a token, and whether it ends generation. */
typedef struct fim_role {
    const char *key, *old_key;
    const char *texts[8];
    bool ends_generation;
} fim_role;

static const fim_role fim_roles[] = {
    { "tokenizer.ggml.fim_pre_token_id", "tokenizer.ggml.prefix_token_id",
      { "<|fim_prefix|>", "<fim-prefix>", "<fim_prefix>", "<\uff5cfim\u2581begin\uff5c>", "<PRE>", "\u2581<PRE>",
        "<|code_prefix|>", "<|prefix|>" }, false },
    { "tokenizer.ggml.fim_suf_token_id", "tokenizer.ggml.suffix_token_id",
      { "<|fim_suffix|>", "<fim-suffix>", "<fim_suffix>", "<\uff5cfim\u2581hole\uff5c>", "<SUF>", "\u2581<SUF>",
        "<|code_suffix|>", "<|suffix|>" }, false },
    { "tokenizer.ggml.fim_mid_token_id", "tokenizer.ggml.middle_token_id",
      { "<|fim_middle|>", "<fim-middle>", "<fim_middle>", "<\uff5cfim\u2581end\uff5c>", "<MID>", "\u2581<MID>",
        "<|code_middle|>", "<|middle|>" }, false },
    { "tokenizer.ggml.fim_pad_token_id", NULL, { "<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>", "[PAD]" }, true },
    { "tokenizer.ggml.fim_rep_token_id", NULL,
      { "<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>", "<reponame>" }, true },
    { "tokenizer.ggml.fim_sep_token_id", NULL, { "<|file_sep|>" }, true },
};

/* Printed as text whatever the file says (llama.cpp: "quick hack for gpt-oss, always render these tokens"). */
static const char *const always_printed[] = { "<|channel|>", "<|message|>", "<|start|>", "<|constrain|>" };

static int32_t id_of(const tok_vocab *v, const char *text)
{
    return strmap_get(&v->by_text, text, strlen(text));
}

/* The id a key names, or -1 where it is absent, not a number or past the vocabulary (llama.cpp then keeps its
 * default, none for these roles). */
static int32_t keyed_id(const gguf_file *f, const char *key, int32_t n)
{
    int64_t id;
    if (!key || gguf_get_int(f, key, INT64_MIN, INT64_MAX, &id, NULL) != GGUF_OK)
        return -1;
    return id >= 0 && id < n ? (int32_t)id : -1;
}

static void fim_tokens(tok_vocab *v, const gguf_file *f)
{
    for (size_t r = 0; r < sizeof fim_roles / sizeof *fim_roles; r++) {
        const fim_role *role = &fim_roles[r];
        int32_t id = keyed_id(f, role->old_key, v->n);
        if (id < 0)
            id = keyed_id(f, role->key, v->n);
        if (id < 0) {
            for (int k = 0; k < 8 && role->texts[k]; k++) {
                const int32_t t = id_of(v, role->texts[k]);
                if (t >= 0 && (id < 0 || t < id))
                    id = t;
            }
            if (id >= 0)
                v->type[id] = TOK_TYPE_CONTROL;
        }
        if (id >= 0 && role->ends_generation)
            v->eog[id] = 1;
    }
}

/* The token with this text when it ends generation, or -1. */
static int32_t eog_with_text(const tok_vocab *v, const char *text)
{
    const int32_t id = id_of(v, text);
    return id >= 0 && v->eog[id] ? id : -1;
}

void vocab_apply_llama_rules(tok_vocab *v, const gguf_file *f)
{
    fim_tokens(v, f);
    for (int32_t i = 0; i < v->n; i++)
        if (tok_is_eog_text(v->text[i].ptr, (size_t)v->text[i].len)) {
            v->eog[i] = 1;
            v->type[i] = TOK_TYPE_CONTROL;
        }
    for (size_t k = 0; k < sizeof always_printed / sizeof *always_printed; k++) {
        const int32_t id = id_of(v, always_printed[k]);
        if (id >= 0)
            v->type[id] = TOK_TYPE_USER_DEFINED;
    }
    const int32_t keyed[3] = { v->eos, v->eot, v->eom };
    for (int i = 0; i < 3; i++)
        if (keyed[i] >= 0)
            v->eog[keyed[i]] = 1;

    const int32_t end = eog_with_text(v, "<|end|>");
    const bool call = eog_with_text(v, "<|call|>") >= 0 || eog_with_text(v, "<|calls|>") >= 0;
    if (end >= 0 && call && (eog_with_text(v, "<|return|>") >= 0 || eog_with_text(v, "<|flush|>") >= 0)) {
        v->eog[end] = 0;
        v->type[end] = TOK_TYPE_USER_DEFINED;
    }
    const int32_t s = eog_with_text(v, "</s>");
    if (s >= 0 && (eog_with_text(v, "<|tool_response>") >= 0 || eog_with_text(v, "<|plamo:eos|>") >= 0)) {
        v->eog[s] = 0;
        v->type[s] = TOK_TYPE_NORMAL;
    }
}
