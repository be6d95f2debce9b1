/* Progress bar: "\r<label> [#####     ]  45%  1.2 GiB/2.5 GiB  1.8 GB/s". */
#include "progress.h"
#include "gguf.h"
#include "term_guard.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

double monotonic_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void progress_init(progress *p, const char *label)
{
    p->label = label;
    p->enabled = isatty(STDERR_FILENO) && !getenv("GGUFSCOPE_NO_PROGRESS");
    p->last_permille = -1;
    p->t0 = monotonic_seconds();
}

void progress_update(void *user, uint64_t done, uint64_t total)
{
    progress *p = user;
    if (!p->enabled || total == 0)
        return;
    int permille = (int)(1000.0 * (double)done / (double)total);
    if (permille == p->last_permille)
        return;
    p->last_permille = permille;
    char bar[31];
    int fill = permille * 30 / 1000;
    for (int i = 0; i < 30; i++)
        bar[i] = i < fill ? '#' : ' ';
    bar[30] = '\0';
    char a[32], b[32];
    gguf_format_size(done, a, sizeof a);
    gguf_format_size(total, b, sizeof b);
    double dt = monotonic_seconds() - p->t0;
    fprintf(term_guard_raw_stderr(), "\r%s [%s] %3d%%  %s/%s  %.2f GB/s ", p->label, bar, permille / 10, a, b,
            dt > 0 ? (double)done / dt / 1e9 : 0.0);
    fflush(term_guard_raw_stderr());
}

void progress_end(progress *p)
{
    if (p->enabled && p->last_permille >= 0)
        fprintf(term_guard_raw_stderr(), "\r%*s\r", 100, "");
    p->last_permille = -1;
    p->t0 = monotonic_seconds();
}
