/* Hostile files through every tool: each class of hostile_model.c (zero, huge, negative and
 * float-typed counts, arrays of different lengths, 1 MB tokens, bad merges, escape bytes in every kind of
 * string, amplification) under gguf-inspect, gguf-verify and gguf-run in their main modes. Nothing may be
 * killed by a signal, no raw control byte or invalid UTF-8 may reach stdout or stderr, JSON must parse, a
 * refusal exits 1 naming the key or tensor (2 only for what is merely not supported), and every file
 * gguf-run refuses as malformed is a gguf-verify error. A file that shrinks while mapped is a message. */
#include "audit.h"
#include "gguf.h"
#include "fixture_model.h"
#include "hostile_model.h"
#include "sigbus.h"
#include "term_guard.h"
#include "testutil.h"

#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static char dir[128];
static char paths[256][160];
static size_t n_paths;

static void setup(void)
{
    cr_assert(tmp_dir_make(dir, "hostile"), "cannot make a temporary directory");
    n_paths = 0;
    for (size_t i = 0; i < hostile_case_count() && n_paths < 256; i++) {
        uint8_t *buf;
        size_t len;
        gguf_error err;
        cr_assert_eq(hostile_write_buffer(i, &buf, &len, &err), GGUF_OK, "case %s: %s", hostile_case_at(i)->name,
                     err.message);
        snprintf(paths[n_paths], sizeof paths[n_paths], "%s/%03zu-%s.gguf", dir, i, hostile_case_at(i)->name);
        cr_assert(write_whole_file(paths[n_paths], buf, len));
        free(buf);
        n_paths++;
    }
}
static void teardown(void) { tmp_dir_remove(dir); }
TestSuite(hostile, .init = setup, .fini = teardown, .timeout = 600);

/* NULL when text is valid UTF-8 without control characters other than newline and tab; else where. */
static const char *first_unsafe(const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        unsigned c = *p;
        size_t n = c < 0x80 ? 1 : (c & 0xe0) == 0xc0 && c >= 0xc2 ? 2 : (c & 0xf0) == 0xe0 ? 3
                 : (c & 0xf8) == 0xf0 && c <= 0xf4 ? 4 : 0;
        if (n == 0)
            return (const char *)p;
        if (n == 1 && ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f))
            return (const char *)p;
        for (size_t k = 1; k < n; k++)
            if ((p[k] & 0xc0) != 0x80)
                return (const char *)p;
        if (n == 2 && c == 0xc2 && p[1] < 0xa0) /* C1 controls */
            return (const char *)p;
        uint32_t cp; /* bidi controls, zero-width spaces, separators, tags: they print as nothing */
        if (n > 1 && gguf_utf8_next((const char *)p, n, &cp) == n && gguf_codepoint_invisible(cp, false))
            return (const char *)p;
        p += n;
    }
    return NULL;
}

static const hostile_case_info *info_of(size_t i) { return hostile_case_at(i); }

typedef struct mode {
    const char *tool, *args; /* args after the file; %s: a healthy file */
    bool json;
} mode;

/* Runs the mode on every case and checks what every run must satisfy; fills statuses (may be NULL). */
static void run_mode(const mode *m, int *statuses)
{
    for (size_t i = 0; i < n_paths; i++) {
        char extra[512];
        snprintf(extra, sizeof extra, m->args, paths[0]);
        size_t cap = strlen(paths[i]) + strlen(extra) + 32;
        char *args = malloc(cap);
        snprintf(args, cap, "'%s' %s %s", paths[i], extra, m->json ? "2>/dev/null" : "2>&1");
        int status;
        char *out = run_tool(m->tool, args, &status);
        cr_assert(out, "%s %s: no output captured", m->tool, args);
        cr_assert_geq(status, 0, "%s %s was killed by a signal", m->tool, args);
        const char *bad = first_unsafe(out);
        cr_assert_null(bad, "%s %s printed a raw control byte or invalid UTF-8 (0x%02x) here: ...%.40s", m->tool,
                       args, bad ? (unsigned char)*bad : 0, bad ? (bad - out > 40 ? bad - 40 : out) : "");
        if (status == 2)
            cr_assert(m->json || strstr(out, "is not supported"),
                      "%s %s exited 2 (trouble) on a file: a bad file is exit 1\n%s", m->tool, args, out);
        if (status == 1 && !m->json && !info_of(i)->healthy && strstr(out, "gguf-run:"))
            cr_assert(strstr(out, "'"), "a refusal names its key or tensor: %s", out);
        if (m->json && out[0]) {
            cJSON *doc = cJSON_Parse(out);
            cr_assert(doc, "%s %s printed invalid JSON:\n%.400s", m->tool, args, out);
            cJSON_Delete(doc);
        }
        if (statuses)
            statuses[i] = status;
        free(out);
        free(args);
    }
}

Test(hostile, inspect_modes)
{
    static const mode modes[] = {
        { "gguf-inspect", "", false },          { "gguf-inspect", "--json", true },
        { "gguf-inspect", "--full", false },    { "gguf-inspect", "--stats", false },
        { "gguf-inspect", "--diff '%s'", false }, { "gguf-inspect", "--diff '%s' --json", true },
        { "gguf-inspect", "--key general.name", false }, { "gguf-inspect", "--tensors 'blk.0.*'", false },
    };
    for (size_t k = 0; k < sizeof modes / sizeof modes[0]; k++)
        run_mode(&modes[k], NULL);
}

Test(hostile, run_modes)
{
    static const mode modes[] = {
        { "gguf-run", "-p 'hello the cat <s>' -n 3", false },
        { "gguf-run", "-p 'hello' -n 2 --json", true },
        { "gguf-run", "-p 'hello <s> the' --tokenize", false },
        { "gguf-run", "-p 'hello' -n 2 --trace", false },
        { "gguf-run", "-p 'hi' -n 2 --chat-template chatml --smoke", false },
    };
    for (size_t k = 0; k < sizeof modes / sizeof modes[0]; k++)
        run_mode(&modes[k], NULL);
}

/* gguf-verify in its modes, and its verdict against gguf-run's: every file the engine refuses as malformed
 * (exit 1) is a verify error, and the healthy cases pass both. */
Test(hostile, verify_agrees_with_run)
{
    static const mode verify = { "gguf-verify", "", false }, verify_json = { "gguf-verify", "--json", true },
                      manifest = { "gguf-verify", "--write-manifest", false },
                      run = { "gguf-run", "-p 'hello' -n 1 -q", false },
                      tokenize = { "gguf-run", "-p 'hello' --tokenize", false };
    int v[256], r[256], t[256];
    run_mode(&verify, v);
    run_mode(&verify_json, NULL);
    run_mode(&manifest, NULL);
    run_mode(&run, r);
    run_mode(&tokenize, t);
    for (size_t i = 0; i < n_paths; i++) /* a vocabulary-only file is for tokenizing, as llama.cpp's vocab_only */
        if (info_of(i)->base == HOSTILE_VOCAB_SPM || info_of(i)->base == HOSTILE_VOCAB_BPE)
            r[i] = t[i];
    size_t refused = 0;
    for (size_t i = 0; i < n_paths; i++) {
        if (r[i] == 1) {
            refused++;
            cr_expect_eq(v[i], 1, "%s: gguf-run refuses it (exit 1) but gguf-verify exits %d", paths[i], v[i]);
        }
        if (info_of(i)->healthy) {
            cr_expect_eq(r[i], 0, "%s: a healthy case, gguf-run exits %d", paths[i], r[i]);
            cr_expect_eq(v[i], 0, "%s: a healthy case, gguf-verify exits %d", paths[i], v[i]);
        }
    }
    cr_assert_gt(refused, 40, "most hostile classes are refused (%zu were)", refused);
}

/* What the file says is shown, escaped, rather than dropped. */
Test(hostile, escapes_are_shown_not_dropped)
{
    for (size_t i = 0; i < n_paths; i++) {
        if (strcmp(info_of(i)->name, "name-escapes"))
            continue;
        int status;
        char args[512];
        snprintf(args, sizeof args, "'%s' 2>&1", paths[i]);
        char *out = run_tool("gguf-inspect", args, &status);
        cr_assert_eq(status, 0);
        cr_assert(strstr(out, "evil\\x1b[2J") || strstr(out, "evil\\u001b[2J"), "the name, escaped:\n%s", out);
        free(out);
        return;
    }
    cr_assert_fail("no name-escapes case");
}

/* block_count 100000 in a small file: the output stays small. */
Test(hostile, amplification_is_bounded)
{
    for (size_t i = 0; i < n_paths; i++) {
        if (strcmp(info_of(i)->name, "block-count-amplified"))
            continue;
        static const char *const tools[] = { "gguf-verify", "gguf-inspect", "gguf-run" };
        for (int t = 0; t < 3; t++) {
            int status;
            char args[512];
            snprintf(args, sizeof args, "'%s' %s 2>&1", paths[i], t == 2 ? "-p hi -n 1" : "");
            char *out = run_tool(tools[t], args, &status);
            cr_assert_lt(strlen(out), 64 * 1024, "%s printed %zu bytes", tools[t], strlen(out));
            free(out);
        }
        return;
    }
    cr_assert_fail("no block-count-amplified case");
}

/* The audit keeps AUDIT_SAME_CODE_MAX findings of one kind and counts the rest into one. */
Test(hostile, repeated_findings_are_aggregated)
{
    audit_findings l = { 0 };
    for (int i = 0; i < 1000; i++) {
        char name[32];
        snprintf(name, sizeof name, "blk.%d.attn_q.weight", i);
        audit_finding *x = audit_findings_add(&l, AUDIT_ERROR, "nan", name);
        cr_assert(x);
        AUDIT_FSET(x->measured, "NaN");
    }
    audit_findings_add(&l, AUDIT_WARNING, "other", "x");
    audit_findings_close(&l);
    cr_assert_eq(l.n, AUDIT_SAME_CODE_MAX + 2, "%zu findings", l.n);
    const audit_finding *last = &l.v[l.n - 1];
    cr_assert_str_eq(last->code, "nan");
    cr_assert_eq(last->severity, AUDIT_ERROR);
    cr_assert(strstr(last->measured, "and 984 more") && strstr(last->measured, "blk.999.attn_q.weight"), "%s",
              last->measured);
    free(l.v);
}

/* The terminal filter's escaping, byte by byte. */
Test(hostile, terminal_filter_escapes)
{
    static const struct { const char *in, *out; } cases[] = {
        { "plain text\n\tok", "plain text\n\tok" },
        { "a\x1b[2Jb", "a\\u001b[2Jb" },
        { "bell\x07 cr\r", "bell\\u0007 cr\\u000d" },
        { "csi\xc2\x9b c1", "csi\\u009b c1" },
        { "lone\x9b byte", "lone\\x9b byte" },
        { "\xff\xfe", "\\xff\\xfe" },
        { "\xe6\x97\xa5\xe6\x9c\xac \xe2\x96\x81", "\xe6\x97\xa5\xe6\x9c\xac \xe2\x96\x81" },
        { "overlong \xc0\xaf", "overlong \\xc0\\xaf" },
        { "surrogate \xed\xa0\x80", "surrogate \\xed\\xa0\\x80" },
        { "del\x7f", "del\\u007f" },
        /* format characters that print as nothing: shown as escapes, so 'a' + U+200B never looks like 'a' */
        { "rlo \xe2\x80\xae evil", "rlo \\u202e evil" },
        { "isolate \xe2\x81\xa6x\xe2\x81\xa9", "isolate \\u2066x\\u2069" },
        { "zwsp a\xe2\x80\x8b", "zwsp a\\u200b" },
        { "bom \xef\xbb\xbf", "bom \\ufeff" },
        { "ls \xe2\x80\xa8 ps \xe2\x80\xa9", "ls \\u2028 ps \\u2029" },
        { "tag \xf3\xa0\x81\x81", "tag \\udb40\\udc41" },
        { "emoji \xf0\x9f\x91\xa8\xe2\x80\x8d\xf0\x9f\x91\xa9", "emoji \xf0\x9f\x91\xa8\xe2\x80\x8d\xf0\x9f\x91\xa9" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char out[256];
        size_t n = term_guard_escape((const unsigned char *)cases[i].in, strlen(cases[i].in), out);
        out[n] = '\0';
        cr_expect_str_eq(out, cases[i].out, "case %zu", i);
    }
}

/* A mapped file that shrinks under a reader: SIGBUS becomes a message naming the file and byte, and exit 2;
 * with --json also an error document on stdout, on a line of its own after what was written before. */
Test(hostile, truncated_while_read_is_a_message_not_a_signal)
{
    char path[256];
    snprintf(path, sizeof path, "%s/shrinks.gguf", dir);
    fixture_opts o = fixture_default_opts();
    gguf_error err;
    for (int json = 0; json < 2; json++) {
        cr_assert_eq(fixture_write_file(path, &o, &err), GGUF_OK, "%s", err.message);
        int fds[2], outs[2];
        cr_assert_eq(pipe(fds), 0);
        cr_assert_eq(pipe(outs), 0);
        pid_t pid = fork();
        cr_assert_geq(pid, 0);
        if (pid == 0) {
            dup2(fds[1], STDERR_FILENO);
            dup2(outs[1], STDOUT_FILENO);
            close(fds[0]);
            close(outs[0]);
            sigbus_guard_install("shrink-test");
            if (json)
                sigbus_guard_json(path);
            ssize_t w = write(STDOUT_FILENO, "{\"partial\":", 11); /* a document cut by the signal */
            (void)w;
            gguf_file *f;
            if (gguf_open(path, &f, &err) != GGUF_OK || truncate(path, 4096) != 0)
                _exit(3);
            const gguf_tensor *t = gguf_tensor_at(f, gguf_tensor_count(f) - 1);
            volatile uint8_t last = t->data[t->size - 1]; /* past the new end: SIGBUS */
            (void)last;
            _exit(4);
        }
        close(fds[1]);
        close(outs[1]);
        char out[2048] = { 0 }, doc[4096] = { 0 };
        size_t n = 0, m = 0;
        ssize_t r;
        while (n < sizeof out - 1 && (r = read(fds[0], out + n, sizeof out - 1 - n)) > 0)
            n += (size_t)r;
        while (m < sizeof doc - 1 && (r = read(outs[0], doc + m, sizeof doc - 1 - m)) > 0)
            m += (size_t)r;
        close(fds[0]);
        close(outs[0]);
        int status;
        waitpid(pid, &status, 0);
        cr_assert(WIFEXITED(status), "the reader was killed by signal %d", WIFSIGNALED(status) ? WTERMSIG(status) : 0);
        cr_assert_eq(WEXITSTATUS(status), 2, "exit %d: %s", WEXITSTATUS(status), out);
        cr_assert(strstr(out, "shrink-test: ") && strstr(out, path) && strstr(out, ": byte ") &&
                      strstr(out, "the file changed while being read"),
                  "%s", out);
        if (!json)
            continue;
        const char *line = strchr(doc, '\n');
        cr_assert(line, "no document line after the cut one: %s", doc);
        cJSON *d = cJSON_Parse(line + 1);
        cr_assert(d, "the error document does not parse: %s", line + 1);
        cr_expect_eq(cJSON_GetObjectItem(d, "exit_status")->valueint, 2);
        const cJSON *v = cJSON_GetObjectItem(d, "verdict");
        cr_expect_str_eq(cJSON_GetObjectItem(v, "status")->valuestring, "error");
        cr_expect(strstr(cJSON_GetObjectItem(v, "summary")->valuestring, "the file changed while being read"), "%s",
                  line + 1);
        cr_expect_str_eq(cJSON_GetObjectItem(d, "file")->valuestring, path);
        cJSON_Delete(d);
    }
}

/* The case's path, or the test fails. */
static const char *case_path(const char *name)
{
    for (size_t i = 0; i < n_paths; i++)
        if (!strcmp(info_of(i)->name, name))
            return paths[i];
    cr_assert_fail("no %s case", name);
    return NULL;
}

/* Values llama.cpp takes as they come and then computes NaN or a constant from, and what its loader refuses:
 * gguf-run refuses each (exit 1) naming the key, and gguf-verify calls it an error; the sliding window of
 * 2^31 - 1 positions (a window wider than any context: full attention) runs, free of overflow (UBSan). */
Test(hostile, hyperparameters_that_break_every_output_are_refused)
{
    static const struct { const char *name, *key; } cases[] = {
        { "rms-eps-inf", "layer_norm_rms_epsilon" },      { "rms-eps-1e30", "layer_norm_rms_epsilon" },
        { "rope-base-inf", "rope.freq_base" },            { "rope-scaling-factor-tiny", "rope.scaling.factor" },
        { "rope-scaling-factor-inf", "rope.scaling.factor" }, { "gemma3-softcap-inf", "final_logit_softcapping" },
        { "experts-without-tensors", "expert_count" },    { "ff-length-missing", "feed_forward_length" },
        { "ff-length-zero", "feed_forward_length" },
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        char args[512];
        int status;
        snprintf(args, sizeof args, "'%s' -p hi -n 2 2>&1", case_path(cases[k].name));
        char *out = run_tool("gguf-run", args, &status);
        cr_expect_eq(status, 1, "%s: gguf-run exits %d\n%s", cases[k].name, status, out);
        cr_expect(strstr(out, cases[k].key), "%s: the message names %s:\n%s", cases[k].name, cases[k].key, out);
        free(out);
        snprintf(args, sizeof args, "'%s' 2>&1", case_path(cases[k].name));
        out = run_tool("gguf-verify", args, &status);
        cr_expect_eq(status, 1, "%s: gguf-verify exits %d\n%s", cases[k].name, status, out);
        cr_expect(strstr(out, cases[k].key), "%s: verify names %s:\n%s", cases[k].name, cases[k].key, out);
        free(out);
    }
    char args[512];
    int status;
    snprintf(args, sizeof args, "'%s' -p 'hello the cat' -n 4 2>&1", case_path("gemma3-window-int-max"));
    char *out = run_tool("gguf-run", args, &status);
    cr_expect_eq(status, 0, "%s", out);
    free(out);
}

/* A key or tensor name that prints as another: an error naming both, with the hidden character escaped. */
Test(hostile, confusable_names_are_errors)
{
    static const struct { const char *name, *shows; } cases[] = {
        { "key-confusable", "general.architecture\\u200b" },
        { "tensor-confusable", "output_norm.weight\\ufeff" },
    };
    for (size_t k = 0; k < 2; k++) {
        char args[512];
        int status;
        snprintf(args, sizeof args, "'%s' 2>&1", case_path(cases[k].name));
        char *out = run_tool("gguf-verify", args, &status);
        cr_expect_eq(status, 1, "%s: exit %d\n%s", cases[k].name, status, out);
        cr_expect(strstr(out, "[name-confusable]") && strstr(out, cases[k].shows), "%s:\n%s", cases[k].name, out);
        free(out);
    }
}

/* Reports stay the size of what they say, in memory and in output: a 4 MiB u8 array in --json is written
 * value by value (as a document tree it took 460 MB; the peak must stay under 200 MB, ASan's included), and
 * 5 000 oddly named tensors give a role table of VERIFY_ROLES_SHOWN rows and a count, not a row each. */
Test(hostile, reports_stay_the_size_of_what_they_say)
{
    char big[256], many[256], cmd[1600];
    snprintf(big, sizeof big, "%s/big-array.gguf", dir);
    snprintf(many, sizeof many, "%s/many-tensors.gguf", dir);
    gguf_writer *w = gguf_writer_create(3);
    const size_t n_values = (size_t)4 << 20;
    uint8_t *values = calloc(n_values, 1);
    cr_assert(w && values);
    gguf_writer_add_str(w, "general.architecture", "llama", NULL);
    gguf_wvalue arr = { .type = GGUF_VT_ARRAY, .elem_type = GGUF_VT_UINT8, .count = n_values, .v.elems = values };
    cr_assert_eq(gguf_writer_add(w, "big.u8", &arr, NULL), GGUF_OK);
    cr_assert_eq(gguf_writer_write_file(w, big, NULL), GGUF_OK);
    gguf_writer_free(w);
    free(values);
    int status;
    /* the peak resident memory of the tool (a child of Python's), and the document's last bytes */
    snprintf(cmd, sizeof cmd,
             "'%s' -c \"import resource, subprocess, sys; "
             "out = subprocess.run(sys.argv[1:], stdout=subprocess.PIPE).stdout; "
             "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024, out[-40:].decode())\" "
             "'%s/gguf-inspect' '%s' --json",
             venv_python(), bin_dir(), big);
    char *out = run_capture(cmd, &status);
    cr_expect_eq(status, 0, "%s", out);
    cr_expect_lt(atoi(out), 200, "peak memory %s MB", out);
    cr_expect(strstr(out, "0,0,0]},\"tensors\":[],\"warnings\":[]}"), "the document's end: %s", out);
    free(out);

    w = gguf_writer_create(3);
    gguf_writer_add_str(w, "general.architecture", "llama", NULL);
    const float one = 1.0f;
    const uint64_t ne[1] = { 1 };
    enum { N_TENSORS = 5000 };
    for (int i = 0; i < N_TENSORS; i++) {
        char name[32];
        snprintf(name, sizeof name, "t%d", i);
        cr_assert_eq(gguf_writer_add_tensor(w, name, GGUF_TENSOR_F32, 1, ne, &one, NULL), GGUF_OK);
    }
    cr_assert_eq(gguf_writer_write_file(w, many, NULL), GGUF_OK);
    gguf_writer_free(w);
    snprintf(cmd, sizeof cmd, "'%s/gguf-verify' '%s' 2>&1", bin_dir(), many);
    out = run_capture(cmd, &status);
    cr_expect_lt(strlen(out), 64 * 1024, "verify printed %zu bytes for %d tensors", strlen(out), N_TENSORS);
    cr_expect(strstr(out, "more roles, not listed"), "%.2000s", out);
    free(out);
}

/* A manifest without a whole-model line: the label is found through a name index, and a manifest of 200 000
 * tensor lines is checked (the test's timeout is the hang guard: the pairwise search took minutes). */
Test(hostile, a_large_manifest_is_read_in_linear_time, .timeout = 60)
{
    char manifest[256];
    snprintf(manifest, sizeof manifest, "%s/big.manifest", dir);
    for (int with_model_line = 0; with_model_line < 2; with_model_line++) {
        FILE *fp = fopen(manifest, "w");
        cr_assert(fp);
        for (int i = 0; i < 200000; i++)
            fprintf(fp, "xxh64     %016x  dir:m.gguf:t%d\n", (unsigned)i * 2654435761u, i);
        if (with_model_line) /* the whole-model line last: the name the others extend is the label */
            fprintf(fp, "xxh64     0123456789abcdef  dir:m.gguf\n");
        fclose(fp);
        tbuf b = read_whole_file(manifest);
        gguf_manifest *m;
        gguf_error err;
        cr_assert_eq(gguf_manifest_parse((const char *)b.p, b.len, &m, &err), GGUF_OK, "%s", err.message);
        cr_expect_str_eq(gguf_manifest_label(m), with_model_line ? "dir:m.gguf" : "");
        unsigned tensor_kinds, model_kinds;
        bool uuid;
        gguf_manifest_needs(m, &tensor_kinds, &model_kinds, &uuid);
        cr_expect_eq(tensor_kinds, GGUF_HASH_BIT(GGUF_HASH_XXH64));
        cr_expect_eq(model_kinds, with_model_line ? GGUF_HASH_BIT(GGUF_HASH_XXH64) : 0u);
        gguf_manifest_free(m);
        tbuf_free(&b);
    }
}
