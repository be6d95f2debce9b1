#include "golden.h"
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *golden_dir(void)
{
    static char buf[4096];
    const char *e = getenv("GGUFSCOPE_GOLDEN");
    if (e && *e)
        return e;
    snprintf(buf, sizeof buf, "%s/../golden", models_dir());
    return buf;
}

cJSON *golden_json(const char *rel)
{
    char path[8192];
    snprintf(path, sizeof path, "%s/%s", golden_dir(), rel);
    tbuf b = read_whole_file(path);
    if (!b.p)
        return NULL;
    cJSON *j = cJSON_ParseWithLength((const char *)b.p, b.len);
    tbuf_free(&b);
    return j;
}

float *npy_read_f32(const char *path, uint64_t *rows, uint64_t *cols)
{
    tbuf b = read_whole_file(path);
    if (!b.p || b.len < 12 || memcmp(b.p, "\x93NUMPY", 6)) {
        tbuf_free(&b);
        return NULL;
    }
    size_t hlen, hstart;
    if (b.p[6] == 1) {
        hlen = b.p[8] | (size_t)b.p[9] << 8;
        hstart = 10;
    } else {
        hlen = b.p[8] | (size_t)b.p[9] << 8 | (size_t)b.p[10] << 16 | (size_t)b.p[11] << 24;
        hstart = 12;
    }
    char *h = strndup((const char *)b.p + hstart, hlen);
    unsigned long long r = 0, c = 0;
    const char *sh = strstr(h, "'shape': (");
    bool ok = strstr(h, "'descr': '<f4'") && strstr(h, "'fortran_order': False") && sh &&
              sscanf(sh, "'shape': (%llu, %llu)", &r, &c) == 2 && hstart + hlen + r * c * 4 == b.len;
    free(h);
    float *out = ok ? malloc(r * c * sizeof(float)) : NULL;
    if (out)
        memcpy(out, b.p + hstart + hlen, r * c * sizeof(float));
    *rows = r;
    *cols = c;
    tbuf_free(&b);
    return out;
}

size_t json_ints(const cJSON *arr, int32_t *out, size_t n)
{
    size_t k = 0;
    const cJSON *x;
    cJSON_ArrayForEach(x, arr)
    {
        if (k < n)
            out[k] = (int32_t)x->valuedouble;
        k++;
    }
    return k;
}
