/* SIGBUS from a mapped file that shrank (sigbus.h). Only async-signal-safe calls: write and _exit, with
 * the message assembled by hand. */
#include "sigbus.h"
#include "gguf.h"

#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

static const char *prog_name = "gguf";

typedef struct msg {
    char buf[1024];
    size_t n;
} msg;

static void put(msg *m, const char *s)
{
    for (; *s && m->n < sizeof m->buf - 1; s++) /* the path is the user's, but may hold any byte */
        m->buf[m->n++] = (unsigned char)*s < 0x20 || *s == 0x7f ? '?' : *s;
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
    m.buf[m.n++] = '\n'; /* put() keeps one byte free for it */
    ssize_t w = write(STDERR_FILENO, m.buf, m.n);
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
