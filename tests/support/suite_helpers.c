/* Helpers of the gguf-run suites (see suite_helpers.h). */
#include "suite_helpers.h"

#include "fixture_model.h"
#include "golden.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

char *need_model(const char *name)
{
    char *p = model_path(name);
    if (!p)
        cr_skip_test("shared model %s not found in %s (set GGUFSCOPE_MODELS): skipped", name, models_dir());
    return p;
}

cJSON *need_golden(const char *stem)
{
    char rel[256];
    snprintf(rel, sizeof rel, "generate/%s.json", stem);
    cJSON *g = golden_json(rel);
    if (!g)
        cr_skip_test("golden %s not found: skipped", stem);
    return g;
}

char *generate_golden(const char *name)
{
    char *p = malloc(1024);
    snprintf(p, 1024, "%s/generate/%s", golden_dir(), name);
    if (access(p, R_OK) != 0) {
        free(p);
        cr_skip_test("golden %s not found: skipped", name);
    }
    return p;
}

void need_reference(void)
{
    char ref[1024];
    snprintf(ref, sizeof ref, "%s/../tools/reference_forward.py", models_dir());
    if (access(ref, R_OK) != 0)
        cr_skip_test("%s not found: skipped", ref);
}

cJSON *run_json(const char *model, const char *extra, int *status)
{
    char args[2048];
    snprintf(args, sizeof args, "'%s' --json -q %s", model, extra);
    char *out = run_tool("gguf-run", args, status);
    cJSON *j = out ? cJSON_Parse(out) : NULL;
    cr_assert(j, "gguf-run %s printed no JSON: %s", args, out ? out : "(nothing)");
    free(out);
    return j;
}

double logits_vs_golden(const char *npy, const char *stem)
{
    char gpath[8192];
    snprintf(gpath, sizeof gpath, "%s/generate/%s.prompt_logits.npy", golden_dir(), stem);
    uint64_t r1, c1, r2, c2;
    float *ours = npy_read_f32(npy, &r1, &c1), *ref = npy_read_f32(gpath, &r2, &c2);
    cr_assert(ours && ref, "%s or %s unreadable", npy, gpath);
    cr_assert(r1 == r2 && c1 == c2, "logits %llux%llu, golden %llux%llu", (unsigned long long)r1,
              (unsigned long long)c1, (unsigned long long)r2, (unsigned long long)c2);
    double mx = 0, diff = 0;
    for (uint64_t i = 0; i < r1 * c1; i++) {
        mx = fmax(mx, fabs(ref[i]));
        diff = fmax(diff, fabs((double)ours[i] - ref[i]));
    }
    free(ours);
    free(ref);
    return diff / mx;
}

char *run_write_tmp(const char *dir, const char *name, tbuf *b)
{
    char *path = malloc(256);
    snprintf(path, 256, "%s/%s", dir, name);
    cr_assert(write_whole_file(path, b->p, b->len));
    tbuf_free(b);
    return path;
}

char *run_fixture(const char *dir, const char *name, void (*patch)(tbuf *b))
{
    fixture_opts o = fixture_default_opts();
    tbuf b;
    gguf_error ge;
    cr_assert_eq(fixture_write_buffer(&o, &b.p, &b.len, &ge), GGUF_OK);
    if (patch)
        patch(&b);
    return run_write_tmp(dir, name, &b);
}

void assert_sha256(const char *path, const char *want, const char *what)
{
    gguf_digest d;
    uint64_t size;
    char hex[65];
    cr_assert_eq(gguf_file_sha256_path(path, &d, &size, NULL), GGUF_OK, "%s", path);
    gguf_digest_hex(&d, hex);
    cr_assert_str_eq(hex, want, "%s: %s", path, what);
}
