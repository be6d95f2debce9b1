/* gguf-run's backends by name, with the debug fault wrapped around one when asked. */
#include "run.h"

#include <stdio.h>
#include <string.h>

kern_backend *run_backend_create(const char *name, int n_threads, const char *fault, char *why, size_t why_len)
{
    kern_backend *b = NULL;
    if (!strcmp(name, "cpu")) {
        b = kern_cpu_create(n_threads);
        if (!b)
            snprintf(why, why_len, "out of memory");
    } else if (!strcmp(name, "cuda")) {
        b = kern_cuda_create(0, why, why_len);
    } else {
        snprintf(why, why_len, "unknown backend '%s' (cpu, cuda)", name);
    }
    if (b && fault) {
        b = kern_fault_wrap(b, fault);
        if (!b)
            snprintf(why, why_len, "unknown --debug-fault '%s' (%s)", fault, kern_fault_names());
    }
    return b;
}
