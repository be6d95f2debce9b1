/* A progress bar on stderr for long work, only when stderr is a terminal. */
#ifndef GGUFSCOPE_TOOLS_PROGRESS_H
#define GGUFSCOPE_TOOLS_PROGRESS_H

#include <stdbool.h>
#include <stdint.h>

typedef struct progress {
    const char *label;
    bool enabled;
    int last_permille;
    double t0;
} progress;

/* Seconds on the monotonic clock, for timing work. */
double monotonic_seconds(void);

/* enabled when stderr is a terminal and GGUFSCOPE_NO_PROGRESS is unset. */
void progress_init(progress *p, const char *label);
/* A gguf_progress_fn: user is the progress. */
void progress_update(void *user, uint64_t done, uint64_t total);
/* Clears the bar's line. */
void progress_end(progress *p);

#endif
