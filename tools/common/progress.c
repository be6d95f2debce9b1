/* Progress bar: "\r<label> [#####     ]  45%  1.2 GiB/2.5 GiB  1.8 GB/s  ETA 4s", or for counted things
 * "\r<label> [#####     ]  45%  120/272 tensors  ETA 12s". */
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

void progress_init_count(progress *p, const char *label, const char *unit)
{
    p->label = label;
    p->unit = unit;
    p->enabled = isatty(STDERR_FILENO) && !getenv("GGUFSCOPE_NO_PROGRESS");
    p->last_permille = -1;
    p->t0 = monotonic_seconds();
    p->last_draw = 0.0;
}

void progress_init(progress *p, const char *label)
{
    progress_init_count(p, label, NULL);
}

void progress_eta(double elapsed, uint64_t done, uint64_t total, char *buf, size_t len)
{
    buf[0] = '\0';
    if (done == 0 || done >= total || elapsed < 0.5) /* no rate to speak of yet */
        return;
    double left = elapsed * (double)(total - done) / (double)done;
    if (left < 60.0)
        snprintf(buf, len, "ETA %.0fs", left);
    else if (left < 3600.0)
        snprintf(buf, len, "ETA %dm%02ds", (int)(left / 60.0), (int)left % 60);
    else
        snprintf(buf, len, "ETA %dh%02dm", (int)(left / 3600.0), (int)(left / 60.0) % 60);
}

void progress_update(void *user, uint64_t done, uint64_t total)
{
    progress *p = user;
    if (!p->enabled || total == 0)
        return;
    if (done > total)
        done = total;
    int permille = (int)(1000.0 * (double)done / (double)total);
    double now = monotonic_seconds();
    if (permille == p->last_permille && now - p->last_draw < 1.0) /* redraw at least each second: the ETA moves */
        return;
    p->last_permille = permille;
    p->last_draw = now;
    char bar[31];
    int fill = permille * 30 / 1000;
    for (int i = 0; i < 30; i++)
        bar[i] = i < fill ? '#' : ' ';
    bar[30] = '\0';
    double dt = now - p->t0;
    char eta[32], amount[96];
    progress_eta(dt, done, total, eta, sizeof eta);
    if (p->unit)
        snprintf(amount, sizeof amount, "%llu/%llu %s", (unsigned long long)done, (unsigned long long)total,
                 p->unit);
    else {
        char a[32], b[32];
        gguf_format_size(done, a, sizeof a);
        gguf_format_size(total, b, sizeof b);
        snprintf(amount, sizeof amount, "%s/%s  %.2f GB/s", a, b, dt > 0 ? (double)done / dt / 1e9 : 0.0);
    }
    FILE *err = term_guard_raw_stderr(); /* the bar's own \r */
    fprintf(err, "\r%s [%s] %3d%%  %s  %-12s", p->label, bar, permille / 10, amount, eta);
    fflush(err);
}

void progress_end(progress *p)
{
    if (p->enabled && p->last_permille >= 0)
        fprintf(term_guard_raw_stderr(), "\r%*s\r", 110, "");
    p->last_permille = -1;
    p->t0 = monotonic_seconds();
}
