/* Hostile files through every tool: each class of hostile_model.c (zero, huge, negative and
 * float-typed counts, arrays of different lengths, 1 MB tokens, bad merges, escape bytes in every kind of
 * string, amplification) under gguf-inspect, gguf-verify and gguf-run in their main modes. Nothing may be
 * killed by a signal, no raw control byte or invalid UTF-8 may reach stdout or stderr, JSON must parse, a
 * refusal exits 1 naming the key or tensor (2 only for what is merely not supported), and every file
 * gguf-run refuses as malformed is a gguf-verify error. A file that shrinks while mapped is a message. */
#include "audit.h"
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
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char out[256];
        size_t n = term_guard_escape((const unsigned char *)cases[i].in, strlen(cases[i].in), out);
        out[n] = '\0';
        cr_expect_str_eq(out, cases[i].out, "case %zu", i);
    }
}

/* A mapped file that shrinks under a reader: SIGBUS becomes a message naming the file and byte, and exit 2. */
Test(hostile, truncated_while_read_is_a_message_not_a_signal)
{
    char path[256];
    snprintf(path, sizeof path, "%s/shrinks.gguf", dir);
    fixture_opts o = fixture_default_opts();
    gguf_error err;
    cr_assert_eq(fixture_write_file(path, &o, &err), GGUF_OK, "%s", err.message);
    int fds[2];
    cr_assert_eq(pipe(fds), 0);
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        dup2(fds[1], STDERR_FILENO);
        close(fds[0]);
        sigbus_guard_install("shrink-test");
        gguf_file *f;
        if (gguf_open(path, &f, &err) != GGUF_OK || truncate(path, 4096) != 0)
            _exit(3);
        const gguf_tensor *t = gguf_tensor_at(f, gguf_tensor_count(f) - 1);
        volatile uint8_t last = t->data[t->size - 1]; /* past the new end: SIGBUS */
        (void)last;
        _exit(4);
    }
    close(fds[1]);
    char out[2048] = { 0 };
    size_t n = 0;
    ssize_t r;
    while (n < sizeof out - 1 && (r = read(fds[0], out + n, sizeof out - 1 - n)) > 0)
        n += (size_t)r;
    close(fds[0]);
    int status;
    waitpid(pid, &status, 0);
    cr_assert(WIFEXITED(status), "the reader was killed by signal %d", WIFSIGNALED(status) ? WTERMSIG(status) : 0);
    cr_assert_eq(WEXITSTATUS(status), 2, "exit %d: %s", WEXITSTATUS(status), out);
    cr_assert(strstr(out, "shrink-test: ") && strstr(out, path) && strstr(out, ": byte ") &&
                  strstr(out, "the file changed while being read"),
              "%s", out);
}
