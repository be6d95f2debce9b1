/* Metadata with which a good model loads, then prints gibberish or never stops, found by gguf-verify the way
 * llama.cpp's vocabulary loader reads it (src/llama-vocab.cpp): each case of hostile_model.c's last group is
 * written by our writer and must get its finding, severity and fix, and nothing else of the kind; the
 * tokenizer must use what llama.cpp uses (a special id past the vocabulary: its default). The real models and
 * every shared model get none of these findings (test_verify's healthy-model tests hold them to no error and
 * no warning). */
#include "hostile_model.h"
#include "testutil.h"
#include "tokenizer.h"

#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char dir[128];
static void setup(void) { cr_assert(tmp_dir_make(dir, "genmeta")); }
static void teardown(void) { tmp_dir_remove(dir); }
TestSuite(generation_metadata, .init = setup, .fini = teardown, .timeout = 120);

/* Writes hostile case `name` to dir; returns its path (static). */
static const char *write_case(const char *name)
{
    static char path[256];
    for (size_t i = 0; i < hostile_case_count(); i++) {
        if (strcmp(hostile_case_at(i)->name, name) != 0)
            continue;
        uint8_t *buf;
        size_t len;
        gguf_error e;
        cr_assert_eq(hostile_write_buffer(i, &buf, &len, &e), GGUF_OK, "%s: %s", name, e.message);
        snprintf(path, sizeof path, "%s/%s.gguf", dir, name);
        cr_assert(write_whole_file(path, buf, len));
        free(buf);
        return path;
    }
    cr_assert_fail("no hostile case '%s'", name);
    return NULL;
}

static const char *const codes[] = { "pre-tokenizer-missing", "special-token-out-of-range", "special-token-ordinary",
                                     "end-of-turn-missing",   "end-of-turn-by-text",        "bos-off",
                                     "no-chat-template",      "refused",                    "template-unrecognised",
                                     "bos-twice" };

/* gguf-verify --json of case `name`: exactly one finding of this file's kinds, code `code` with `severity`
 * whose meaning holds `says`; the exit status is `status`. */
static void expect_finding(const char *name, const char *code, const char *severity, const char *says, int status)
{
    char args[512];
    snprintf(args, sizeof args, "%s --json --no-audit", write_case(name));
    int st;
    char *out = run_tool("gguf-verify", args, &st);
    cJSON *doc = cJSON_Parse(out);
    cr_assert(doc, "%s: no JSON: %s", name, out);
    cr_expect_eq(st, status, "%s: exit %d: %s", name, st, out);
    int mine = 0;
    const cJSON *f;
    cJSON_ArrayForEach(f, cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "verdict"), "findings"))
    {
        const char *c = cJSON_GetObjectItem(f, "code")->valuestring;
        for (size_t k = 0; k < sizeof codes / sizeof *codes; k++)
            if (!strcmp(c, codes[k])) {
                mine++;
                cr_expect_str_eq(c, code, "%s: %s", name, out);
                cr_expect_str_eq(cJSON_GetObjectItem(f, "severity")->valuestring, severity, "%s", name);
                const char *meaning = cJSON_GetObjectItem(f, "meaning")->valuestring,
                           *measured = cJSON_GetObjectItem(f, "measured")->valuestring;
                cr_expect(strstr(meaning, says) || strstr(measured, says), "%s: '%s' not in: %s / %s", name, says,
                          measured, meaning);
            }
    }
    cr_expect_eq(mine, 1, "%s: %d findings of these kinds: %s", name, mine, out);
    cJSON_Delete(doc);
    free(out);
}

Test(generation_metadata, a_bpe_file_without_its_pre_tokenizer_is_a_warning_with_the_fix)
{
    expect_finding("bpe-without-pre", "pre-tokenizer-missing", "warning", "gguf-new-metadata IN.gguf OUT.gguf "
                   "--pre-tokenizer", 0);
}

Test(generation_metadata, a_pre_tokenizer_llama_cpp_does_not_know_is_the_files_fault)
{
    expect_finding("pre-unknown", "refused", "error", "unknown pre-tokenizer type", 1);
    char args[512];
    snprintf(args, sizeof args, "%s -p hi -n 1 2>&1", write_case("pre-unknown"));
    int st;
    char *out = run_tool("gguf-run", args, &st);
    cr_expect_eq(st, 1, "a malformed file, not an unsupported one: exit %d: %s", st, out);
    cr_expect(strstr(out, "--pre-tokenizer"), "%s", out);
    free(out);
}

Test(generation_metadata, an_eos_past_the_vocabulary_names_what_llama_cpp_uses_instead)
{
    /* llama.cpp: "bad special token: 'tokenizer.ggml.eos_token_id' = 49200, using default id 11" */
    expect_finding("eos-past-vocab-bpe", "special-token-out-of-range", "error", "silently uses id 11", 1);
    gguf_file *f;
    gguf_error e;
    cr_assert_eq(gguf_open(write_case("eos-past-vocab-bpe"), &f, &e), GGUF_OK);
    tok_vocab *v;
    tok_error te;
    cr_assert_eq(tok_vocab_load(f, &v, &te), TOK_OK, "%s", te.message);
    cr_expect_eq(tok_vocab_eos(v), 11, "the tokenizer uses llama.cpp's default too");
    cr_expect(tok_vocab_is_eog(v, 11));
    tok_vocab_free(v);
    gguf_close(f);
}

Test(generation_metadata, an_eos_that_is_an_ordinary_word_is_a_warning)
{
    expect_finding("eos-ordinary-word", "special-token-ordinary", "warning", "an ordinary token", 0);
}

Test(generation_metadata, a_gemma_without_bos_is_an_error)
{
    expect_finding("gemma-bos-off", "bos-off", "error", "gguf-set-metadata FILE.gguf tokenizer.ggml.add_bos_token 1",
                   1);
}

Test(generation_metadata, an_instruct_model_without_its_template_is_a_warning)
{
    expect_finding("instruct-without-template", "no-chat-template", "warning", "--chat-template-config", 0);
}

Test(generation_metadata, a_template_whose_end_of_turn_is_not_a_token_is_a_warning)
{
    expect_finding("template-end-not-a-token", "end-of-turn-missing", "warning", "'<|im_end|>'", 0);
}

Test(generation_metadata, a_template_llama_cpps_detection_does_not_know_is_a_note)
{
    expect_finding("template-unrecognised", "template-unrecognised", "info", "--chat-template NAME", 0);
}

Test(generation_metadata, bos_from_template_and_flag_is_a_note)
{
    expect_finding("template-bos-twice", "bos-twice", "info", "two BOS", 0);
}

Test(generation_metadata, the_real_models_get_none_of_these)
{
    const char *names[] = { "SmolLM2-135M-Instruct.Q4_1.gguf", "gemma-3-270m-q4_k_m.gguf" };
    int seen = 0;
    for (int i = 0; i < 2; i++) {
        char *p = model_path(names[i]);
        if (!p)
            continue;
        seen++;
        char args[1024];
        snprintf(args, sizeof args, "'%s' --json --no-audit", p);
        int st;
        char *out = run_tool("gguf-verify", args, &st);
        cr_expect_eq(st, 0, "%s: %s", names[i], out);
        for (size_t k = 0; k < sizeof codes / sizeof *codes; k++) {
            char quoted[64];
            snprintf(quoted, sizeof quoted, "\"%s\"", codes[k]);
            cr_expect_null(strstr(out, quoted), "%s: %s", names[i], out);
        }
        free(out);
        free(p);
    }
    if (!seen)
        cr_skip_test("the real models are not fetched (make models): skipped");
}

Test(generation_metadata, end_of_generation_texts_are_llama_cpps_whatever_their_type)
{
    static const char *const eog[] = { "<|im_end|>", "<end_of_turn>", "</s>", "<|eot_id|>", "<eos>",
                                       "<\357\275\234end\342\226\201of\342\226\201sentence\357\275\234>" /* DeepSeek, as bytes */ };
    for (size_t i = 0; i < sizeof eog / sizeof *eog; i++)
        cr_expect(tok_is_eog_text(eog[i], strlen(eog[i])), "%zu", i);
    cr_expect_not(tok_is_eog_text("<|im_start|>", 12));
    cr_expect_not(tok_is_eog_text("</s", 3), "whole texts only");
}
