/* The command line as a llama.cpp user types it: llama.cpp's short and long names, --opt=value, strict
 * numbers with their ranges, one wording for a missing value or an unknown option (no usage dump), --version
 * everywhere, and several files per call for gguf-verify and gguf-inspect (JSON Lines, worst exit status). */
#include "suite_helpers.h"
#include "testutil.h"

#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

TestSuite(cli, .timeout = 120);

static const char *const tools[] = { "gguf-inspect", "gguf-verify", "gguf-run", "gguf-quantize", "gguf-fidelity" };

Test(cli, version_everywhere)
{
    for (size_t i = 0; i < sizeof tools / sizeof tools[0]; i++) {
        int status;
        char *out = run_tool(tools[i], "--version", &status);
        cr_assert_eq(status, 0, "%s --version exits %d", tools[i], status);
        char want[64];
        snprintf(want, sizeof want, "%s 0.", tools[i]);
        cr_assert(!strncmp(out, want, strlen(want)) && strstr(out, "(git "), "%s --version: %s", tools[i], out);
        free(out);
    }
}

/* tool MODEL args: exit 2, a message holding says (and also_says when given), and no usage dump. */
static void expect_refusal(const char *model, const char *tool, const char *args, const char *says,
                           const char *also_says)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "'%s' %s 2>&1", model, args);
    int status;
    char *out = run_tool(tool, cmd, &status);
    cr_expect_eq(status, 2, "%s %s: exit %d", tool, args, status);
    cr_expect(strstr(out, says) && (!also_says || strstr(out, also_says)), "%s %s said:\n%s", tool, args, out);
    cr_expect(!strstr(out, "usage:"), "no usage dump for a mistake:\n%s", out);
    free(out);
}

/* Each bad value: exit 2, a message naming the flag, the value and the range, and no usage dump. */
Test(cli, numbers_are_strict)
{
    char *m = need_model("stories260K.gguf");
    static const struct { const char *tool, *args, *says; } cases[] = {
        { "gguf-run", "-p x --threads abc", "--threads needs an integer from 1 to 4096, got 'abc'" },
        { "gguf-run", "-p x -t 0", "-t needs an integer from 1 to 4096, got '0'" },
        { "gguf-run", "-p x --temp -1", "--temp needs a number from 0 to 100, got '-1'" },
        { "gguf-run", "-p x --top-p 2", "--top-p needs a number from 0 to 1, got '2'" },
        { "gguf-run", "-p x --n-predict=5x", "--n-predict needs an integer from 0 to" },
        { "gguf-run", "-p x -s -3", "-s needs an integer from 0 to 18446744073709551615, got '-3'" },
        { "gguf-run", "-p x --ctx-size 1e9", "--ctx-size needs an integer from 1 to" },
        { "gguf-verify", "--threads abc", "--threads needs an integer from 1 to 4096, got 'abc'" },
        { "gguf-inspect", "--raw token_embd.weight --blocks abc", "--blocks needs an integer from 1 to" },
        { "gguf-fidelity", "x.gguf -f x -c 2", "-c needs an integer from 4 to" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        expect_refusal(m, cases[i].tool, cases[i].args, cases[i].says, NULL);
    free(m);
}

Test(cli, missing_values_and_unknown_options)
{
    char *m = need_model("stories260K.gguf");
    static const struct { const char *tool, *args, *says; } cases[] = {
        { "gguf-run", "-p x --threads", "gguf-run: --threads needs a value" },
        { "gguf-run", "-p", "gguf-run: -p needs a value" },
        { "gguf-run", "-p x --frobnicate", "gguf-run: unknown option '--frobnicate'" },
        { "gguf-run", "-p x -Z", "gguf-run: unknown option '-Z'" },
        { "gguf-verify", "--manifest", "gguf-verify: --manifest needs a value" },
        { "gguf-inspect", "--key", "gguf-inspect: --key needs a value" },
        { "gguf-quantize", "--threads", "gguf-quantize: --threads needs a value" },
        { "gguf-fidelity", "--chunks", "gguf-fidelity: --chunks needs a value" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        expect_refusal(m, cases[i].tool, cases[i].args, cases[i].says, "--help");
    free(m);
}

/* -m, -f, -n, -t, -c, -s and --opt=value run exactly what the long forms run. */
Test(cli, llama_cpp_names_run_the_same)
{
    char *m = need_model("stories260K.gguf");
    char dir[128], prompt[200];
    cr_assert(tmp_dir_make(dir, "cli"));
    snprintf(prompt, sizeof prompt, "%s/prompt.txt", dir);
    cr_assert(write_whole_file(prompt, (const uint8_t *)"Once upon a time", 16));
    char a[1024], b[1024];
    snprintf(a, sizeof a, "'%s' --prompt 'Once upon a time' --n-predict 12 --threads 1 --ctx 64 --seed 3 --json", m);
    snprintf(b, sizeof b, "-m '%s' -f '%s' -n 12 -t 1 -c 64 -s 3 --json", m, prompt);
    int sa, sb;
    char *oa = run_tool("gguf-run", a, &sa), *ob = run_tool("gguf-run", b, &sb);
    cr_assert_eq(sa, 0);
    cr_assert_eq(sb, 0, "%s", ob);
    cJSON *ja = cJSON_Parse(oa), *jb = cJSON_Parse(ob);
    cr_assert(ja && jb);
    char *ta = cJSON_PrintUnformatted(cJSON_GetObjectItem(ja, "tokens"));
    char *tb = cJSON_PrintUnformatted(cJSON_GetObjectItem(jb, "tokens"));
    cr_assert(ta && tb);
    cr_assert_str_eq(ta, tb);
    snprintf(b, sizeof b, "--model='%s' --file='%s' --n-predict=12 --threads=1 --ctx-size=64 --seed=3 --json", m,
             prompt);
    free(ob);
    ob = run_tool("gguf-run", b, &sb);
    cr_assert_eq(sb, 0, "%s", ob);
    cJSON_Delete(jb);
    jb = cJSON_Parse(ob);
    free(tb);
    tb = cJSON_PrintUnformatted(cJSON_GetObjectItem(jb, "tokens"));
    cr_assert_str_eq(ta, tb);
    free(ta), free(tb), free(oa), free(ob);
    cJSON_Delete(ja), cJSON_Delete(jb);
    tmp_dir_remove(dir);
    free(m);
}

/* Several files: one JSON line each, in order; the exit status is the worst one's. */
Test(cli, several_files_json_lines)
{
    char *good = need_model("stories260K.gguf"), *other = need_model("tiny-llama-q8_0.gguf");
    char *bad = model_path("corrupt/ggml-vocab-llama-spm.utf8-mangled.gguf");
    static const char *const tools2[] = { "gguf-verify", "gguf-inspect" };
    for (int t = 0; t < 2; t++) {
        char args[2048];
        snprintf(args, sizeof args, "'%s' '%s' --json", good, other);
        int status;
        char *out = run_tool(tools2[t], args, &status);
        cr_assert_eq(status, 0, "%s: %s", tools2[t], out);
        int lines = 0;
        for (char *line = strtok(out, "\n"); line; line = strtok(NULL, "\n"), lines++) {
            cJSON *doc = cJSON_Parse(line);
            cr_assert(doc, "%s: line %d is not a JSON document: %.200s", tools2[t], lines, line);
            const cJSON *file = cJSON_GetObjectItem(doc, "file");
            cr_assert(cJSON_IsString(file) && strstr(file->valuestring, lines ? "tiny-llama" : "stories260K"),
                      "%s: line %d is not the file in order", tools2[t], lines);
            cJSON_Delete(doc);
        }
        cr_assert_eq(lines, 2, "%s: %d lines", tools2[t], lines);
        free(out);
    }
    /* a missing file among good ones: its own error, and exit 2 (trouble) overall */
    char args[2048];
    snprintf(args, sizeof args, "'%s' /nonexistent.gguf '%s' 2>&1", good, other);
    int status;
    char *out = run_tool("gguf-verify", args, &status);
    cr_assert_eq(status, 2, "%s", out);
    cr_assert(strstr(out, "stories260K") && strstr(out, "/nonexistent.gguf") && strstr(out, "tiny-llama"), "%s", out);
    free(out);
    if (bad) {
        snprintf(args, sizeof args, "'%s' '%s' >/dev/null 2>&1", good, bad);
        free(run_tool("gguf-verify", args, &status));
        cr_assert_eq(status, 1, "a problem file among good ones: exit 1");
    }
    free(good), free(other), free(bad);
}

/* Verdict colour: only when asked or on a terminal, never in JSON or under --color=never. */
Test(cli, colour_only_where_it_belongs)
{
    char *m = need_model("stories260K.gguf");
    static const struct { const char *tool, *args; bool coloured; } cases[] = {
        { "gguf-verify", "--color=always", true },   { "gguf-verify", "", false },
        { "gguf-verify", "--color=never", false },   { "gguf-verify", "--color=always --json", false },
        { "gguf-run", "-p hi -n 2 --color 2>&1", true }, { "gguf-run", "-p hi -n 2 2>&1", false },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char args[1024];
        snprintf(args, sizeof args, "'%s' %s", m, cases[i].args);
        int status;
        char *out = run_tool(cases[i].tool, args, &status);
        cr_assert_eq(status, 0, "%s %s: %s", cases[i].tool, args, out);
        bool green = strstr(out, "\x1b[1;32mOK") && strstr(out, "\x1b[0m");
        cr_expect_eq(green, cases[i].coloured, "%s %s: colour %d", cases[i].tool, cases[i].args, green);
        if (!cases[i].coloured)
            cr_expect(!strchr(out, 0x1b), "%s %s: an escape byte", cases[i].tool, cases[i].args);
        free(out);
    }
    int status;
    char args[1024];
    snprintf(args, sizeof args, "'%s' --color=sometimes 2>&1", m);
    char *out = run_tool("gguf-verify", args, &status);
    cr_expect_eq(status, 2);
    cr_expect(strstr(out, "--color takes auto, always or never"), "%s", out);
    free(out);
    free(m);
}

/* Every tool's --json document has the shape docs/JSON.md gives, errors included. */
static void check_envelope(const char *tool, const char *args, const char *line, int status)
{
    cJSON *doc = cJSON_Parse(line);
    cr_assert(doc, "%s %s: not JSON: %.300s", tool, args, line);
    const cJSON *t = cJSON_GetObjectItem(doc, "tool"), *v = cJSON_GetObjectItem(doc, "version"),
                *f = cJSON_GetObjectItem(doc, "file"), *x = cJSON_GetObjectItem(doc, "exit_status"),
                *verdict = cJSON_GetObjectItem(doc, "verdict");
    cr_assert(cJSON_IsString(t) && !strcmp(t->valuestring, tool), "%s %s: tool", tool, args);
    cr_assert(cJSON_IsString(v) && v->valuestring[0] >= '0' && v->valuestring[0] <= '9', "%s %s: version", tool, args);
    cr_assert(cJSON_IsString(f) && f->valuestring[0], "%s %s: file", tool, args);
    cr_assert(cJSON_IsNumber(x) && x->valueint == status, "%s %s: exit_status %d, the tool exited %d", tool, args,
              cJSON_IsNumber(x) ? x->valueint : -1, status);
    static const char *const statuses[] = { "ok", "problem", "error" };
    const cJSON *st = cJSON_GetObjectItem(verdict, "status"), *findings = cJSON_GetObjectItem(verdict, "findings");
    cr_assert(cJSON_IsString(st) && status >= 0 && status <= 2 && !strcmp(st->valuestring, statuses[status]),
              "%s %s: verdict.status", tool, args);
    cr_assert(cJSON_IsString(cJSON_GetObjectItem(verdict, "summary")), "%s %s: verdict.summary", tool, args);
    cr_assert(cJSON_IsArray(findings), "%s %s: verdict.findings", tool, args);
    const cJSON *g;
    cJSON_ArrayForEach(g, findings)
    {
        const char *sev = cJSON_GetStringValue(cJSON_GetObjectItem(g, "severity"));
        cr_assert(sev && (!strcmp(sev, "error") || !strcmp(sev, "warning") || !strcmp(sev, "info")), "%s %s: severity",
                  tool, args);
        static const char *const fields[] = { "code", "measured", "expected", "meaning" };
        for (int k = 0; k < 4; k++)
            cr_assert(cJSON_IsString(cJSON_GetObjectItem(g, fields[k])), "%s %s: a finding without %s", tool, args,
                      fields[k]);
    }
    if (status)
        cr_assert_gt(cJSON_GetArraySize(findings), 0, "%s %s: exit %d with no finding", tool, args, status);
    cJSON_Delete(doc);
}

Test(cli, one_json_schema_for_every_tool)
{
    char *m = need_model("stories260K.gguf"), *f16 = need_model("stories260K-f16.gguf");
    char *bad = model_path("corrupt/ggml-vocab-llama-spm.utf8-mangled.gguf");
    struct { const char *tool; char args[1024]; int status; } cases[16];
    int n = 0;
#define CASE(t, st, ...) (cases[n].tool = (t), cases[n].status = (st), snprintf(cases[n++].args, 1024, __VA_ARGS__))
    CASE("gguf-inspect", 0, "'%s' --json", m);
    CASE("gguf-inspect", 0, "'%s' --stats='blk.0.*' --json", m);
    CASE("gguf-inspect", 0, "'%s' --memory --fit 1G --json", m);
    CASE("gguf-inspect", 1, "'%s' --diff '%s' --json", m, f16);
    CASE("gguf-inspect", 2, "/nonexistent.gguf --json");
    CASE("gguf-verify", 0, "'%s' --json", m);
    CASE("gguf-verify", 2, "/nonexistent.gguf --json");
    CASE("gguf-run", 0, "'%s' -p 'Once upon' -n 4 --json", m);
    CASE("gguf-run", 0, "'%s' -p 'Once upon' --tokenize", m);
    CASE("gguf-run", 0, "'%s' -p 'Once upon' --dry-run --json", m);
    CASE("gguf-run", 0, "'%s' -p 'Once upon' -n 2 --compare cpu,cpu --json", m);
    CASE("gguf-run", 2, "/nonexistent.gguf -p x --json");
    if (bad) {
        CASE("gguf-verify", 1, "'%s' --json", bad);
        CASE("gguf-inspect", 1, "'%s' --json", bad);
    }
#undef CASE
    for (int i = 0; i < n; i++) {
        char args[1100];
        snprintf(args, sizeof args, "%s 2>/dev/null", cases[i].args);
        int status;
        char *out = run_tool(cases[i].tool, args, &status);
        cr_assert_eq(status, cases[i].status, "%s %s: exit %d\n%.300s", cases[i].tool, cases[i].args, status, out);
        char *nl = strchr(out, '\n');
        cr_assert(nl && nl[1] == '\0', "%s %s: one line of JSON expected:\n%.300s", cases[i].tool, cases[i].args, out);
        check_envelope(cases[i].tool, cases[i].args, out, status);
        free(out);
    }
    free(m), free(f16), free(bad);
}

/* --stats=GLOB and the older FILE --stats GLOB select the same tensors. */
Test(cli, stats_glob_both_forms)
{
    char *m = need_model("stories260K.gguf");
    char a[1024], b[1024];
    snprintf(a, sizeof a, "'%s' --stats='blk.1.*'", m);
    snprintf(b, sizeof b, "'%s' --stats 'blk.1.*'", m);
    int sa, sb;
    char *oa = run_tool("gguf-inspect", a, &sa), *ob = run_tool("gguf-inspect", b, &sb);
    cr_assert_eq(sa, 0, "%s", oa);
    cr_assert_eq(sb, 0, "%s", ob);
    cr_assert_str_eq(oa, ob);
    cr_assert(strstr(oa, "blk.1.attn_q.weight") && !strstr(oa, "blk.0.") && !strstr(oa, "token_embd"), "%s", oa);
    free(oa), free(ob), free(m);
}
