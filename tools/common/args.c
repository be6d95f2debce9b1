/* Option values and option errors for every tool (args.h). */
#include "args.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef GGUFSCOPE_VERSION
#define GGUFSCOPE_VERSION "unknown"
#endif
#ifndef GGUFSCOPE_GIT
#define GGUFSCOPE_GIT "unknown"
#endif

const char *arg_flag(char **argv)
{
    static char flag[64];
    /* optarg points into argv: inside "--threads=2", or the next word; the flag is before it */
    const char *a = argv[optind - 1];
    if (optarg && a != optarg && strchr(a, '=')) {
        snprintf(flag, sizeof flag, "%.*s", (int)(strchr(a, '=') - a), a);
        return flag;
    }
    if (optarg && a == optarg && optind >= 2)
        a = argv[optind - 2];
    snprintf(flag, sizeof flag, "%s", a);
    return flag;
}

bool arg_int(const char *prog, const char *flag, const char *val, long long min, long long max, long long *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(val, &end, 10);
    if (errno || end == val || *end || v < min || v > max) {
        fprintf(stderr, "%s: %s needs an integer from %lld to %lld, got '%s'\n", prog, flag, min, max, val);
        return false;
    }
    *out = v;
    return true;
}

bool arg_u64(const char *prog, const char *flag, const char *val, uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(val, &end, 10);
    if (errno || end == val || *end || strchr(val, '-')) {
        fprintf(stderr, "%s: %s needs an integer from 0 to %llu, got '%s'\n", prog, flag,
                (unsigned long long)UINT64_MAX, val);
        return false;
    }
    *out = v;
    return true;
}

bool arg_float(const char *prog, const char *flag, const char *val, double min, double max, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(val, &end);
    if (errno || end == val || *end || !isfinite(v) || v < min || v > max) {
        fprintf(stderr, "%s: %s needs a number from %g to %g, got '%s'\n", prog, flag, min, max, val);
        return false;
    }
    *out = v;
    return true;
}

int arg_getopt_error(const char *prog, int c, char **argv)
{
    const char *a = argv[optind - 1];
    if (c == ':') {
        char flag[64];
        snprintf(flag, sizeof flag, "%.*s", (int)strcspn(a, "="), a);
        fprintf(stderr, "%s: %s needs a value (see %s --help)\n", prog, flag, prog);
    } else if (optopt && !(a[0] == '-' && a[1] == '-'))
        fprintf(stderr, "%s: unknown option '-%c' (see %s --help)\n", prog, optopt, prog);
    else
        fprintf(stderr, "%s: unknown option '%s' (see %s --help)\n", prog, a, prog);
    return 2;
}

const char *arg_version(void)
{
    return GGUFSCOPE_VERSION;
}

void arg_print_version(const char *prog)
{
    printf("%s %s (git %s)\n", prog, GGUFSCOPE_VERSION, GGUFSCOPE_GIT);
}
