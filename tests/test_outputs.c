/* What the tools write and how they end: no output replaces a file the tool reads (the model, the manifest,
 * the prompt file, their links), an existing pipe or device is written in place and a directory refused; a FIFO
 * named as the model or a prompt of NUL bytes is refused without waiting or reading it whole; a closed or full
 * standard output, or a library that exits on its own, is exit 2; a reader that goes away ends the tool
 * quietly by SIGPIPE; --json owes an error document on every path. */
#include "fixture_model.h"
#include "suite_helpers.h"
#include "testutil.h"

#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

static char dir[128], model[256];

static void setup(void)
{
    cr_assert(tmp_dir_make(dir, "outputs"));
    snprintf(model, sizeof model, "%s/m.gguf", dir);
    fixture_opts o = fixture_default_opts();
    gguf_error err;
    cr_assert_eq(fixture_write_file(model, &o, &err), GGUF_OK, "%s", err.message);
}
static void teardown(void) { tmp_dir_remove(dir); }
TestSuite(outputs, .init = setup, .fini = teardown, .timeout = 240);

/* Runs tool with the model and args (a %s in args is replaced by out); the status, the output in *text. */
static int run_on_model(const char *tool, const char *args, const char *out, char **text)
{
    char opt[1024], cmd[1400];
    snprintf(opt, sizeof opt, args, out);
    snprintf(cmd, sizeof cmd, "'%s' %s 2>&1", model, opt);
    int status;
    *text = run_tool(tool, cmd, &status);
    return status;
}

static const char *const writers[][2] = {
    { "gguf-verify", "--write-manifest='%s'" },
    { "gguf-inspect", "--dump token_embd.weight --out '%s'" },
    { "gguf-run", "-p hi -n 2 --logits-out '%s'" },
    { "gguf-run", "-p hi -n 2 --trace='%s'" },
    { "gguf-run", "-p hi -n 2 --plot '%s'" },
};
enum { N_WRITERS = sizeof writers / sizeof writers[0] };

/* Every output option aimed at the model, under its own name, through a symbolic link and a hard link, and
 * gguf-quantize's OUT: exit 2 naming the refusal, and the model keeps every byte. */
Test(outputs, no_output_replaces_the_model)
{
    char sym[300], hard[300], dotted[300];
    snprintf(sym, sizeof sym, "%s/sym.gguf", dir);
    snprintf(hard, sizeof hard, "%s/hard.gguf", dir);
    snprintf(dotted, sizeof dotted, "%s/./m.gguf", dir);
    cr_assert_eq(symlink(model, sym), 0);
    cr_assert_eq(link(model, hard), 0);
    tbuf before = read_whole_file(model);
    const char *const targets[] = { model, sym, hard, dotted };
    for (size_t k = 0; k < 4; k++)
        for (int m = 0; m < N_WRITERS; m++) {
            char *text;
            int status = run_on_model(writers[m][0], writers[m][1], targets[k], &text);
            cr_expect_eq(status, 2, "%s %s -> %s: exit %d\n%s", writers[m][0], writers[m][1], targets[k], status, text);
            cr_expect(strstr(text, "refusing to overwrite"), "%s:\n%s", writers[m][0], text);
            free(text);
        }
    char args[800];
    snprintf(args, sizeof args, "'%s' '%s' Q8_0 2>&1", model, hard);
    int status;
    char *text = run_tool("gguf-quantize", args, &status);
    cr_expect_eq(status, 2, "gguf-quantize onto a hard link of its input: exit %d\n%s", status, text);
    free(text);
    tbuf after = read_whole_file(model);
    cr_assert(before.len == after.len && !memcmp(before.p, after.p, before.len), "the model was written");
    struct stat st;
    cr_assert_eq(lstat(sym, &st), 0);
    cr_assert(S_ISLNK(st.st_mode), "the symbolic link was replaced");
    tbuf_free(&before);
    tbuf_free(&after);
}

/* The other inputs are protected the same way: the manifest being checked and the prompt file. */
Test(outputs, no_output_replaces_the_manifest_or_the_prompt)
{
    char manifest[300], prompt[300], args[1200];
    snprintf(manifest, sizeof manifest, "%s/m.manifest", dir);
    snprintf(prompt, sizeof prompt, "%s/prompt.txt", dir);
    snprintf(args, sizeof args, "'%s' --write-manifest='%s' 2>&1", model, manifest);
    int status;
    free(run_tool("gguf-verify", args, &status));
    cr_assert_eq(status, 0);
    cr_assert(write_whole_file(prompt, (const uint8_t *)"once upon a time", 16));
    tbuf m0 = read_whole_file(manifest), p0 = read_whole_file(prompt);
    snprintf(args, sizeof args, "'%s' --manifest '%s' --write-manifest='%s' 2>&1", model, manifest, manifest);
    char *text = run_tool("gguf-verify", args, &status);
    cr_expect_eq(status, 2, "%s", text);
    free(text);
    snprintf(args, sizeof args, "'%s' -f '%s' -n 2 --trace='%s' 2>&1", model, prompt, prompt);
    text = run_tool("gguf-run", args, &status);
    cr_expect_eq(status, 2, "%s", text);
    cr_expect(strstr(text, "refusing to overwrite"), "%s", text);
    free(text);
    tbuf m1 = read_whole_file(manifest), p1 = read_whole_file(prompt);
    cr_assert(m0.len == m1.len && !memcmp(m0.p, m1.p, m0.len), "the manifest was written");
    cr_assert(p0.len == p1.len && !memcmp(p0.p, p1.p, p0.len), "the prompt file was written");
    tbuf_free(&m0), tbuf_free(&m1), tbuf_free(&p0), tbuf_free(&p1);
}

/* An output that is a link to another file replaces that file (the link stays a link); a pipe or a device is
 * written in place (they stay what they are); a directory is refused; nothing temporary is left behind. The
 * device and the pipe are made in the test's directory: a tool that replaced them would harm nothing else. */
Test(outputs, links_pipes_devices_and_directories)
{
    char target[300], link[300], fifo[300], dev[300], got[300], cmd[1600];
    snprintf(target, sizeof target, "%s/real.npy", dir);
    snprintf(link, sizeof link, "%s/link.npy", dir);
    cr_assert(write_whole_file(target, (const uint8_t *)"old", 3));
    cr_assert_eq(symlink("real.npy", link), 0);
    char *text;
    int status = run_on_model("gguf-inspect", "--dump token_embd.weight --out '%s'", link, &text);
    cr_expect_eq(status, 0, "%s", text);
    free(text);
    struct stat st;
    cr_assert_eq(lstat(link, &st), 0);
    cr_expect(S_ISLNK(st.st_mode), "the link became a file");
    tbuf t = read_whole_file(target);
    cr_expect(t.len > 10 && !memcmp(t.p, "\x93NUMPY", 6), "the link's target holds the array");
    tbuf_free(&t);
    /* a pipe with a reader: the trace arrives through it */
    snprintf(fifo, sizeof fifo, "%s/trace.fifo", dir);
    snprintf(got, sizeof got, "%s/trace.got", dir);
    cr_assert_eq(mkfifo(fifo, 0600), 0);
    snprintf(cmd, sizeof cmd, "bash -c \"cat '%s' > '%s' & '%s/gguf-run' '%s' -p hi -n 2 -q --trace='%s'; s=\\$?; "
             "wait; exit \\$s\" 2>&1", fifo, got, bin_dir(), model, fifo);
    text = run_capture(cmd, &status);
    cr_expect_eq(status, 0, "%s", text);
    free(text);
    cr_assert_eq(lstat(fifo, &st), 0);
    cr_expect(S_ISFIFO(st.st_mode), "the pipe was replaced by a file");
    t = read_whole_file(got);
    cr_expect(t.len && strstr((const char *)t.p, "\"prompt_trace\""), "the trace did not come through the pipe");
    tbuf_free(&t);
    /* a character device (a null device of our own, where mknod is allowed) */
    snprintf(dev, sizeof dev, "%s/null", dir);
    if (mknod(dev, S_IFCHR | 0666, makedev(1, 3)) == 0) {
        status = run_on_model("gguf-run", "-p hi -n 2 -q --logits-out '%s'", dev, &text);
        cr_expect_eq(status, 0, "%s", text);
        free(text);
        cr_assert_eq(lstat(dev, &st), 0);
        cr_expect(S_ISCHR(st.st_mode), "the device was replaced by a file");
    }
    status = run_on_model("gguf-run", "-p hi -n 2 --trace='%s'", dir, &text);
    cr_expect_eq(status, 2, "%s", text);
    cr_expect(strstr(text, "is a directory"), "%s", text);
    free(text);
    snprintf(cmd, sizeof cmd, "ls -a '%s' | grep -c tmp", dir);
    text = run_capture(cmd, &status);
    cr_expect_eq(atoi(text), 0, "temporary files left behind");
    free(text);
}

/* A FIFO as the model is refused at once (opened without blocking), by every tool. */
Test(outputs, a_fifo_as_the_model_does_not_hang)
{
    char fifo[300];
    snprintf(fifo, sizeof fifo, "%s/fifo.gguf", dir);
    cr_assert_eq(mkfifo(fifo, 0600), 0);
    static const char *const tools[] = { "gguf-inspect", "gguf-verify", "gguf-run", "gguf-quantize", "gguf-fidelity" };
    static const char *const extra[] = { "", "--sha256 0000000000000000000000000000000000000000000000000000000000000000",
                                         "-p hi -n 1", "%s/never-written.gguf Q8_0", "%s/fifo.gguf --provenance" };
    for (int t = 0; t < 5; t++) {
        char more[400], cmd[1200];
        snprintf(more, sizeof more, extra[t], dir);
        snprintf(cmd, sizeof cmd, "timeout 20 '%s/%s' '%s' %s 2>&1", bin_dir(), tools[t], fifo, more);
        int status;
        char *out = run_capture(cmd, &status);
        cr_expect(status == 2, "%s: exit %d (124: it blocked)\n%s", tools[t], status, out);
        cr_expect(strstr(out, "not a regular file"), "%s:\n%s", tools[t], out);
        free(out);
    }
}

/* -f: a prompt holding NUL bytes is refused naming the byte, and /dev/zero is refused at its first block, not
 * after reading a gigabyte (the timeout is the hang guard, not a speed measure). */
Test(outputs, a_prompt_file_is_text)
{
    char path[300], args[800];
    snprintf(path, sizeof path, "%s/nul.txt", dir);
    cr_assert(write_whole_file(path, (const uint8_t *)"hello\0world", 11));
    snprintf(args, sizeof args, "'%s' -f '%s' -n 1 2>&1", model, path);
    int status;
    char *out = run_tool("gguf-run", args, &status);
    cr_expect_eq(status, 2, "%s", out);
    cr_expect(strstr(out, "NUL byte at byte 5"), "%s", out);
    free(out);
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "timeout 20 '%s/gguf-run' '%s' -f /dev/zero -n 1 2>&1", bin_dir(), model);
    out = run_capture(cmd, &status);
    cr_expect_eq(status, 2, "%s", out);
    cr_expect(strstr(out, "NUL byte at byte 0"), "%s", out);
    free(out);
    /* a pipe still works: process substitution is how prompts are often given */
    snprintf(cmd, sizeof cmd, "bash -c \"'%s/gguf-run' '%s' -f <(printf hello) -n 1 --tokenize\"", bin_dir(), model);
    out = run_capture(cmd, &status);
    cr_expect_eq(status, 0, "%s", out);
    cr_expect(strstr(out, "\"prompt\":\"hello\""), "%s", out);
    free(out);
}

/* Standard output closed or full: exit 2 with a message, for every tool that writes there. */
Test(outputs, a_closed_or_full_stdout_is_exit_2)
{
    static const char *const tools[][2] = {
        { "gguf-inspect", "" }, { "gguf-verify", "" }, { "gguf-run", "-p hi -n 2" }, { "gguf-run", "-p hi -n 2 --json" },
    };
    for (int t = 0; t < 4; t++)
        for (int how = 0; how < 2; how++) {
            char cmd[1200]; /* stderr to the captured pipe first, then stdout closed or full */
            snprintf(cmd, sizeof cmd, "'%s/%s' '%s' %s 2>&1 %s", bin_dir(), tools[t][0], model, tools[t][1],
                     how ? ">/dev/full" : ">&-");
            int status;
            char *out = run_capture(cmd, &status);
            cr_expect_eq(status, 2, "%s %s with stdout %s: exit %d\n%s", tools[t][0], tools[t][1],
                         how ? "full" : "closed", status, out);
            cr_expect(strstr(out, "cannot write the output"), "%s:\n%s", tools[t][0], out);
            free(out);
        }
}

/* libgomp exits 1 when it cannot start its threads; 1 means "the model has a problem" here, so the tools turn a
 * library's own exit into 2. A 400 MB address-space limit and 200 threads make thread creation fail. */
Test(outputs, a_library_exit_is_exit_2)
{
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "bash -c \"ulimit -v 400000; '%s/gguf-verify' '%s' -t 200\" 2>&1", bin_dir(), model);
    int status;
    char *out = run_capture(cmd, &status);
    if (!strstr(out, "Thread creation failed")) {
        free(out);
        cr_skip_test("this machine starts 200 threads within 400 MB: the failure could not be provoked");
    }
    cr_expect_eq(status, 2, "%s", out);
    free(out);
}

/* | head -1: the tool ends by SIGPIPE as cat does (the shell's 141), with nothing on stderr. */
Test(outputs, a_reader_that_goes_away_ends_the_tool_quietly)
{
    char cmd[1200];
    snprintf(cmd, sizeof cmd,
             "bash -c \"set -o pipefail; '%s/gguf-inspect' '%s' --full 2>'%s/err' | head -c 10 >/dev/null\"",
             bin_dir(), model, dir);
    int status;
    free(run_capture(cmd, &status));
    cr_expect(status == 141 || status == 0, "exit %d", status);
    char err[300];
    snprintf(err, sizeof err, "%s/err", dir);
    tbuf e = read_whole_file(err);
    cr_expect_eq(e.len, 0, "stderr: %.*s", (int)e.len, e.p ? (char *)e.p : "");
    tbuf_free(&e);
}

/* Without --smoke the smoke checks' failures are warnings, and neither the verdict line nor the JSON summary
 * says FAIL beside exit 0. NaN final norm gains make every logit NaN. */
static void nan_output_norm(tbuf *b)
{
    gguf_file *f;
    cr_assert_eq(gguf_open_memory(b->p, b->len, &f, NULL), GGUF_OK);
    const gguf_tensor *t = gguf_tensor_by_name(f, "output_norm.weight");
    cr_assert(t && t->type == GGUF_TENSOR_F32);
    const size_t at = (size_t)(t->data - b->p);
    for (size_t i = 0; i < t->size; i += sizeof(float))
        memcpy(b->p + at + i, &(float){ __builtin_nanf("") }, sizeof(float));
    gguf_close(f);
}

Test(outputs, verdict_words_match_the_exit_status)
{
    char *nan_model = run_fixture(dir, "nan.gguf", nan_output_norm);
    char args[800];
    snprintf(args, sizeof args, "'%s' -p hi -n 3 2>&1", nan_model);
    int status;
    char *out = run_tool("gguf-run", args, &status);
    cr_expect_eq(status, 0, "%s", out);
    cr_expect(strstr(out, "verdict    WARNING (not failed without --smoke): ") && !strstr(out, "FAIL"), "%s", out);
    free(out);
    cJSON *doc = run_json(nan_model, "-p hi -n 3", &status);
    cr_expect_eq(status, 0);
    const cJSON *v = cJSON_GetObjectItem(doc, "verdict");
    cr_expect_str_eq(cJSON_GetObjectItem(v, "status")->valuestring, "ok");
    cr_expect(!strstr(cJSON_GetObjectItem(v, "summary")->valuestring, "FAIL"), "%s",
              cJSON_GetObjectItem(v, "summary")->valuestring);
    cJSON_Delete(doc);
    doc = run_json(nan_model, "-p hi -n 3 --smoke", &status);
    cr_expect_eq(status, 1);
    cr_expect(!strncmp(cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "verdict"), "summary")->valuestring, "FAIL", 4));
    cJSON_Delete(doc);
    /* two backends that agree on NaN do not make a healthy model: exit 1, the first NaN named */
    snprintf(args, sizeof args, "'%s' -p hi -n 2 --compare cpu,cpu:ggml 2>&1", nan_model);
    out = run_tool("gguf-run", args, &status);
    cr_expect_eq(status, 1, "%s", out);
    cr_expect(strstr(out, "NON-FINITE") && strstr(out, "position 0"), "%s", out);
    free(out);
    free(nan_model);
}

/* --json owes a document on trouble after the file is open: a prompt longer than the context. */
Test(outputs, json_errors_are_documents)
{
    char args[800];
    snprintf(args, sizeof args, "'%s' -p 'once upon a time there was' -c 2 -n 1 --json 2>/dev/null", model);
    int status;
    char *out = run_tool("gguf-run", args, &status);
    cr_expect_eq(status, 2);
    cJSON *doc = cJSON_Parse(out);
    cr_assert(doc, "no JSON document: %s", out);
    cr_expect_eq(cJSON_GetObjectItem(doc, "exit_status")->valueint, 2);
    cr_expect_str_eq(cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "verdict"), "status")->valuestring, "error");
    cJSON_Delete(doc);
    free(out);
}
