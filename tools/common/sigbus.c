/* SIGBUS from a mapped file that shrank (sigbus.h). Only async-signal-safe calls: write and _exit, with
 * the message assembled by hand. */
#include "sigbus.h"
#include "gguf.h"
#include "json_doc.h"
#include "json_line.h"

#include <stdlib.h>

#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

static const char *prog_name = "gguf";

/* --json: the error document around the message, split where the message goes (made before any signal) */
enum { DOC_PARTS = 3 };
static char *doc_part[DOC_PARTS];

typedef struct msg {
    char buf[1024];
    size_t n;
} msg;

static void put(msg *m, const char *s)
{
    for (; *s && m->n < sizeof m->buf - 1; s++) /* the path is the user's, but may hold any byte: JSON-safe */
        m->buf[m->n++] = (unsigned char)*s < 0x20 || (unsigned char)*s >= 0x7f || *s == '"' || *s == '\\' ? '?' : *s;
}

static void put_u64(msg *m, uint64_t v)
{
    char digits[24];
    int k = 0;
    do
        digits[k++] = (char)('0' + v % 10);
    while ((v /= 10) && k < 24);
    while (k && m->n < sizeof m->buf - 1)
        m->buf[m->n++] = digits[--k];
}

static void on_sigbus(int sig, siginfo_t *info, void *ctx)
{
    (void)sig, (void)ctx;
    msg m = { .n = 0 };
    const char *path;
    uint64_t offset;
    put(&m, prog_name);
    put(&m, ": ");
    if (gguf_mapping_lookup(info->si_addr, &path, &offset)) {
        put(&m, path);
        put(&m, ": byte ");
        put_u64(&m, offset);
        put(&m, ": ");
    }
    put(&m, "the file changed while being read (it is shorter than when it was opened: truncated, or rewritten "
            "in place); nothing read from it can be trusted, check it again once it is complete");
    ssize_t w = write(STDERR_FILENO, m.buf, m.n);
    w = write(STDERR_FILENO, "\n", 1);
    if (doc_part[0]) { /* a line of its own after whatever part of the document was already written */
        w = write(STDOUT_FILENO, "\n", 1);
        for (int i = 0; i < DOC_PARTS; i++) {
            w = write(STDOUT_FILENO, doc_part[i], strlen(doc_part[i]));
            if (i + 1 < DOC_PARTS)
                w = write(STDOUT_FILENO, m.buf, m.n);
        }
    }
    (void)w;
    _exit(2);
}

void sigbus_guard_install(const char *prog)
{
    prog_name = prog;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_sigbus;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGBUS, &sa, NULL);
}

void sigbus_guard_json(const char *file)
{
    for (int i = 0; i < DOC_PARTS; i++) {
        free(doc_part[i]);
        doc_part[i] = NULL;
    }
    /* \x01 marks where the message goes (twice: the summary and the finding); cJSON writes it as \u0001 */
    cJSON *doc = json_doc_new(prog_name, file);
    cJSON *findings = json_doc_verdict(doc, 2, "\x01");
    json_doc_finding(findings, "error", "file-changed", NULL, NULL, "\x01",
                     "a file that stays as it was opened while it is read", "the file could not be checked");
    char *text = doc ? cJSON_PrintUnformatted(doc) : NULL;
    cJSON_Delete(doc);
    char *first = text ? strstr(text, "\\u0001") : NULL, *second = first ? strstr(first + 6, "\\u0001") : NULL;
    if (second) {
        *first = *second = '\0';
        doc_part[0] = strdup(text);
        doc_part[1] = strdup(first + 6);
        doc_part[2] = malloc(strlen(second + 6) + 2);
        if (doc_part[2])
            strcat(strcpy(doc_part[2], second + 6), "\n");
    }
    if (!doc_part[0] || !doc_part[1] || !doc_part[2])
        for (int i = 0; i < DOC_PARTS; i++) {
            free(doc_part[i]);
            doc_part[i] = NULL;
        }
    free(text);
}
