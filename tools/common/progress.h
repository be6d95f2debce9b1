/* A progress bar on stderr for long work, only when stderr is a terminal. */
#ifndef GGUFSCOPE_TOOLS_PROGRESS_H
#define GGUFSCOPE_TOOLS_PROGRESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct progress {
    const char *label;
    const char *unit;    /* NULL: bytes (shown as KiB/MiB/GiB, with a rate); else what is counted ("tensors") */
    bool enabled;
    int last_permille;
    double t0, last_draw;
} progress;

/* Seconds on the monotonic clock, for timing work. */
double monotonic_seconds(void);

/* A bar counting bytes; enabled when stderr is a terminal and GGUFSCOPE_NO_PROGRESS is unset. */
void progress_init(progress *p, const char *label);
/* A bar counting things of a unit ("tensors"). */
void progress_init_count(progress *p, const char *label, const char *unit);
/* A gguf_progress_fn: user is the progress; done and total in the bar's unit. */
void progress_update(void *user, uint64_t done, uint64_t total);
/* Clears the bar's line. */
void progress_end(progress *p);

/* "ETA 1m05s" for the rest of the work from the rate so far ("" until there is a rate); buf >= 24 bytes. */
void progress_eta(double elapsed, uint64_t done, uint64_t total, char *buf, size_t len);

#endif
