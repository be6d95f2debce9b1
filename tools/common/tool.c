/* The tools' start and finish (tool.h). */
#include "tool.h"
#include "sigbus.h"
#include "term_guard.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *prog_name = "gguf";
static bool finished, stdout_closed;

/* exit() from anywhere but the tool's own finish: a library gave up (libgomp cannot make its threads). */
static void on_exit_elsewhere(void)
{
    if (finished)
        return;
    fflush(stderr);
    _exit(2);
}

/* Descriptor fd held open on path when it was closed; true when it had been. */
static bool hold_open(int fd, const char *path, int flags)
{
    if (fcntl(fd, F_GETFD) != -1 || errno != EBADF)
        return false;
    int got = open(path, flags | O_CLOEXEC);
    if (got < 0)
        got = open("/dev/null", flags | O_CLOEXEC);
    if (got >= 0 && got != fd) { /* the lowest free descriptor is fd itself, unless a lower one is closed too */
        dup2(got, fd);
        close(got);
    }
    return true;
}

void tool_start(const char *prog)
{
    prog_name = prog;
    hold_open(STDIN_FILENO, "/dev/null", O_RDONLY);
    stdout_closed = hold_open(STDOUT_FILENO, "/dev/full", O_WRONLY);
    hold_open(STDERR_FILENO, "/dev/null", O_WRONLY);
    term_guard_install(); /* nothing from the file reaches the terminal as a command */
    sigbus_guard_install(prog); /* a file that shrinks while read: a message and exit 2 */
    atexit(on_exit_elsewhere);
}

int tool_finish(int status)
{
    errno = 0;
    if ((fflush(stdout) != 0 || ferror(stdout)) && status != 2) {
        int e = errno ? errno : EIO;
        fprintf(stderr, "%s: cannot write the output: %s\n", prog_name,
                stdout_closed ? "standard output is closed" : strerror(e));
        status = 2;
    }
    finished = true;
    return status;
}

void tool_exit(int status)
{
    exit(tool_finish(status));
}
