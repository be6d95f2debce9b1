/*
 * Chat prompts against llama.cpp: tests/data/chat_formats.jsonl holds what
 * llama.cpp's llama_chat_apply_template makes of one user message for every
 * family gguf-run formats and for template texts that trip each of its
 * detection rules (scripts/chat-formats-reference.sh wrote it from llama.cpp), with llama.cpp's names that
 * format it the same, among which the family we detect must be.
 * Then the real SmolLM2's own template, through gguf-run --chat, against the
 * golden chat0 prompt tokens, and the refusals.
 */
#include "engine.h"
#include "fixture_model.h"
#include "golden.h"
#include "testutil.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

Test(chat, every_format_and_detection_rule_matches_llama_cpp)
{
    tbuf b = read_whole_file("tests/data/chat_formats.jsonl");
    cr_assert(b.p, "tests/data/chat_formats.jsonl unreadable");
    int formatted = 0, refused = 0, unknown = 0;
    for (char *save = NULL, *line = strtok_r((char *)b.p, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        cJSON *j = cJSON_Parse(line);
        cr_assert(j, "bad line: %s", line);
        const char *tmpl = cJSON_GetObjectItem(j, "template")->valuestring;
        const char *msg = cJSON_GetObjectItem(j, "message")->valuestring;
        const cJSON *want = cJSON_GetObjectItem(j, "formatted");
        const char *family = tok_chat_detect(tmpl, strlen(tmpl));
        /* llama.cpp's own names that format the message as it did: the family we detect must be one of them */
        const cJSON *names = cJSON_GetObjectItem(j, "families"), *name;
        bool among = cJSON_GetArraySize(names) == 0;
        cJSON_ArrayForEach(name, names)
            among |= family && strcmp(name->valuestring, family) == 0;
        cr_assert(among, "'%.60s': we detect %s, which llama.cpp formats otherwise", tmpl, family);
        if (cJSON_IsNull(want)) {
            cr_assert_null(family, "llama.cpp recognizes no format in '%.60s', we say %s", tmpl, family);
            unknown++;
        } else if (!tok_chat_formats(family)) {
            /* a family llama.cpp formats and we only recognize: named, refused */
            cr_assert_not_null(family, "llama.cpp formats '%.60s', we do not recognize it", tmpl);
            char *out;
            tok_error e;
            cr_assert_eq(tok_chat_format(family, msg, strlen(msg), &out, &e), TOK_E_INPUT);
            cr_assert(strstr(e.message, family) && strstr(e.message, "--chat-template"), "%s", e.message);
            refused++;
        } else {
            char *out;
            tok_error e;
            cr_assert_eq(tok_chat_format(family, msg, strlen(msg), &out, &e), TOK_OK, "%s", e.message);
            cr_assert_str_eq(out, want->valuestring, "'%.60s' (%s)", tmpl, family);
            free(out);
            formatted++;
        }
        cJSON_Delete(j);
    }
    cr_log_info("%d formatted, %d recognised and refused, %d unknown to both", formatted, refused, unknown);
    cr_assert_geq(formatted, 45, "only %d formatted cases", formatted);
    cr_assert_geq(refused, 9);
    cr_assert_geq(unknown, 1);
    tbuf_free(&b);
}

Test(chat, unknown_family_names_are_refused)
{
    char *out = NULL;
    tok_error e;
    cr_assert_eq(tok_chat_format("alpaca", "hi", 2, &out, &e), TOK_E_INPUT);
    cr_assert(strstr(e.message, "alpaca") && strstr(e.message, "chatml"), "%s", e.message);
    cr_assert_null(out);
    cr_assert_not(tok_chat_formats(NULL));
    cr_assert_null(tok_chat_detect("", 0));
}

/* SmolLM2's own tokenizer.chat_template (Jinja with a default system prompt that
 * llama.cpp's built-in ChatML leaves out): gguf-run --chat gives llama.cpp's chat0 tokens. */
Test(chat, smollm2_chat_prompt_tokens_are_llama_cpp_s)
{
    char *m = model_path("SmolLM2-135M-Instruct.Q4_1.gguf");
    cJSON *g = golden_json("generate/SmolLM2-135M-Instruct.Q4_1.chat0.json");
    if (!m || !g) {
        free(m);
        cJSON_Delete(g);
        cr_skip_test("SmolLM2-135M-Instruct.Q4_1.gguf (make models) or its chat0 golden not found: skipped");
    }
    char args[8192];
    int st;
    snprintf(args, sizeof args, "'%s' --chat -p '%s' --tokenize", m,
             cJSON_GetObjectItem(g, "prompt")->valuestring);
    char *out = run_tool("gguf-run", args, &st);
    cr_assert_eq(st, 0, "%s", out);
    cJSON *j = cJSON_Parse(out);
    cr_assert(j, "%s", out);
    const cJSON *got = cJSON_GetObjectItem(j, "tokens"), *want = cJSON_GetObjectItem(g, "prompt_tokens");
    cr_assert_eq(cJSON_GetArraySize(got), cJSON_GetArraySize(want), "%s", out);
    for (int i = 0; i < cJSON_GetArraySize(want); i++)
        cr_assert_eq(cJSON_GetArrayItem(got, i)->valueint, cJSON_GetArrayItem(want, i)->valueint, "token %d", i);
    cJSON_Delete(j);
    free(out);

    /* the answer stops at <|im_end|> and is llama.cpp's */
    snprintf(args, sizeof args, "'%s' --chat -p '%s' -n 32 -q --threads 2", m,
             cJSON_GetObjectItem(g, "prompt")->valuestring);
    out = run_tool("gguf-run", args, &st);
    cr_assert_eq(st, 0);
    size_t len = strlen(out);
    if (len && out[len - 1] == '\n')  /* gguf-run ends the text with a newline */
        out[len - 1] = '\0';
    cr_assert_str_eq(out, cJSON_GetObjectItem(g, "greedy_text")->valuestring);
    free(out);

    /* --special: the same markers typed into a plain prompt become the tokens */
    snprintf(args, sizeof args, "'%s' --special -p '%s' --tokenize", m,
             cJSON_GetObjectItem(g, "chat_text")->valuestring);
    out = run_tool("gguf-run", args, &st);
    j = cJSON_Parse(out);
    cr_assert(j, "%s", out);
    cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItem(j, "tokens")), cJSON_GetArraySize(want));
    cr_assert_eq(cJSON_GetArrayItem(cJSON_GetObjectItem(j, "tokens"), 0)->valueint, 1, "<|im_start|> is id 1");
    cJSON_Delete(j);
    free(out);
    /* without it they are text */
    snprintf(args, sizeof args, "'%s' -p '<|im_start|>' --tokenize", m);
    out = run_tool("gguf-run", args, &st);
    j = cJSON_Parse(out);
    cr_assert_gt(cJSON_GetArraySize(cJSON_GetObjectItem(j, "tokens")), 1, "%s", out);
    cJSON_Delete(j);
    free(out);
    cJSON_Delete(g);
    free(m);
}

Test(chat, a_model_without_a_template_needs_one_named)
{
    char *m = model_path("stories260K.gguf");
    if (!m)
        cr_skip_test("stories260K.gguf not found: skipped");
    char args[4096];
    int st;
    snprintf(args, sizeof args, "'%s' --chat -p hi 2>&1", m);
    char *out = run_tool("gguf-run", args, &st);
    cr_assert_eq(st, 2);
    cr_assert(strstr(out, "no tokenizer.chat_template") && strstr(out, "--chat-template"), "%s", out);
    free(out);
    snprintf(args, sizeof args, "'%s' --chat-template alpaca -p hi 2>&1", m);
    out = run_tool("gguf-run", args, &st);
    cr_assert_eq(st, 2);
    cr_assert(strstr(out, "'alpaca' is not a format"), "%s", out);
    free(out);
    /* a named format works on any model: the markers are plain text to this vocabulary */
    snprintf(args, sizeof args, "'%s' --chat-template zephyr -p hi --tokenize", m);
    out = run_tool("gguf-run", args, &st);
    cr_assert_eq(st, 0, "%s", out);
    free(out);
    free(m);
}

/* A template no rule recognizes: exit 2 quoting its start, escaped. */
Test(chat, an_unrecognized_template_is_quoted_and_refused)
{
    char dir[128];
    cr_assert(tmp_dir_make(dir, "chat"));
    char path[256];
    snprintf(path, sizeof path, "%s/odd.gguf", dir);
    fixture_opts fo = fixture_default_opts();
    gguf_writer *w = gguf_writer_create(3);
    gguf_error ge;
    cr_assert_eq(fixture_add_model(w, &fo, &ge), GGUF_OK, "%s", ge.message);
    cr_assert_eq(gguf_writer_add_str(w, "tokenizer.chat_template", "{{ messages[0].content }}\x1b[31m", &ge), GGUF_OK);
    cr_assert_eq(gguf_writer_write_file(w, path, &ge), GGUF_OK, "%s", ge.message);
    gguf_writer_free(w);
    char args[512];
    int st;
    snprintf(args, sizeof args, "'%s' --chat -p hi 2>&1", path);
    char *out = run_tool("gguf-run", args, &st);
    cr_assert_eq(st, 2, "%s", out);
    cr_assert(strstr(out, "not a format gguf-run recognizes") && strstr(out, "{{ messages[0].content }}"), "%s", out);
    cr_assert_null(strchr(out, '\x1b'), "the escape byte reached the terminal: %s", out);
    free(out);
    cr_assert(tmp_dir_remove(dir));
}
