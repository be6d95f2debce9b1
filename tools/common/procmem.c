#include "procmem.h"

#include <stdio.h>
#include <string.h>

static uint64_t status_kib(const char *field)
{
    FILE *fp = fopen("/proc/self/status", "r");
    if (!fp)
        return 0;
    char line[256];
    unsigned long long kib = 0;
    size_t n = strlen(field);
    while (fgets(line, sizeof line, fp))
        if (!strncmp(line, field, n) && line[n] == ':') {
            sscanf(line + n + 1, "%llu", &kib);
            break;
        }
    fclose(fp);
    return (uint64_t)kib * 1024;
}

uint64_t procmem_private_bytes(void)
{
    return status_kib("RssAnon");
}

uint64_t procmem_peak_bytes(void)
{
    return status_kib("VmHWM");
}
