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

bool arg_bytes(const char *prog, const char *flag, const char *val, uint64_t *out)
{
    /* "8G", "8GiB", "8GB", "512M", "1.5T", or plain bytes; binary units (llama.cpp's --fit-target is MiB) */
    char *end = NULL;
    errno = 0;
    double x = strtod(val, &end);
    static const char units[] = "BKMGT";
    double mult = 1;
    if (end && *end) {
        const char *u = strchr(units, end[0] >= 'a' ? end[0] - 32 : end[0]);
        if (u && end[0]) {
            for (long i = 0; i < u - units; i++)
                mult *= 1024;
            end++;
            if (*end == 'i')
                end++;
            if (*end == 'B' || *end == 'b')
                end++;
        }
    }
    if (end == val || !end || *end || errno || !(x >= 0) || x * mult >= 1.8e19) {
        fprintf(stderr, "%s: %s needs a size in bytes (e.g. 8G, 512MiB, 1073741824), got '%s'\n", prog, flag, val);
        return false;
    }
    *out = (uint64_t)(x * mult);
    return true;
}

void arg_llama_aliases(int argc, char **argv, const char *const (*pairs)[2], size_t n)
{
    /* getopt_long reads "-ctk" as -c with the value "tk": llama.cpp's multi-letter short options become their
     * long forms before it runs ("-ctk=q8_0" too) */
    static char buf[16][96];
    size_t used = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--") == 0)
            break;
        for (size_t k = 0; k < n; k++) {
            size_t len = strlen(pairs[k][0]);
            if (strncmp(argv[i], pairs[k][0], len) != 0)
                continue;
            if (argv[i][len] == '\0')
                argv[i] = (char *)pairs[k][1];
            else if (argv[i][len] == '=' && used < 16) {
                snprintf(buf[used], sizeof buf[used], "%s%s", pairs[k][1], argv[i] + len);
                argv[i] = buf[used++];
            }
            break;
        }
    }
}
