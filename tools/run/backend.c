/* gguf-run's backends by name, with the debug fault wrapped around one when asked. */
#include "run.h"

#include <stdio.h>
#include <string.h>

/* "cpu" and "cpu:exact" compute with exact numerics, "cpu:ggml" with llama.cpp's activation rounding. */
static bool cpu_numerics_of(const char *name, kern_numerics *out)
{
    if (!strcmp(name, "cpu")) {
        *out = KERN_NUMERICS_EXACT;
        return true;
    }
    return !strncmp(name, "cpu:", 4) && kern_numerics_parse(name + 4, out);
}

bool run_backend_known(const char *name)
{
    kern_numerics n;
    return cpu_numerics_of(name, &n) || !strcmp(name, "cuda");
}

kern_backend *run_backend_create(const char *name, int n_threads, const char *fault, char *why, size_t why_len)
{
    kern_backend *b = NULL;
    kern_numerics numerics;
    if (cpu_numerics_of(name, &numerics)) {
        b = kern_cpu_create_numerics(n_threads, numerics);
        if (!b)
            snprintf(why, why_len, "out of memory");
    } else if (!strcmp(name, "cuda")) {
        b = kern_cuda_create(0, why, why_len);
    } else {
        snprintf(why, why_len, "unknown backend '%s' (" RUN_BACKEND_NAMES ")", name);
    }
    if (b && fault) {
        b = kern_fault_wrap(b, fault);
        if (!b)
            snprintf(why, why_len, "unknown --debug-fault '%s' (%s)", fault, kern_fault_names());
    }
    return b;
}
