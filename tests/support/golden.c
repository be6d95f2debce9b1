#include "golden.h"
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

/* sha256 of the f32 files synth_arch.py writes (../shared/golden/README.md, gguf 0.19.0, numpy 2.x) */
static const struct {
    const char *preset, *arch, *sha256;
} synth_arch_files[] = {
    { "tiny-qwen3moe", "qwen3moe", "9bea966091e44f9b43c2ad45def917f391862d592fabffda60c72a91a63ae3ad" },
    { "tiny-qwen2moe", "qwen2moe", "a03b4ab96228907b478032eff4f26f652ab208912511f07b8865274e80645710" },
    { "tiny-mixtral", "llama", "31c045bb5a75dc584b77827d883979c4771931c0436646a04dd232af3bf80ec2" },
    { "tiny-gptoss", "gpt-oss", "a92f5b7f3222a887f63fb4c0b651b4197fd3b19a0180d26d109690315779bf4e" },
    { "tiny-phi3", "phi3", "8fd0633b202421d03990094ffe59433cc5bb79a84889b5aa475d5db861aa7433" },
    { "tiny-gemma2", "gemma2", "b5c80b1f87520a0f754249f8b75ea9091b8282bdfafafa1856c7950b80a648bb" },
    { "tiny-granite", "granite", "768732cd41d6c7c17ab4cfbe66794f74e5e26b13d2442ea9418778b3c533fab3" },
    { "tiny-olmo2", "olmo2", "49861529ea59d1bebc864c899fd799ea1c140d92bb3a379d428a95cac4159756" },
};

const char *synth_arch_preset(size_t i, const char **arch)
{
    if (i >= sizeof synth_arch_files / sizeof synth_arch_files[0])
        return NULL;
    *arch = synth_arch_files[i].arch;
    return synth_arch_files[i].preset;
}

/* The test-time writers are deterministic and every suite, and its sanitizer twin, writes the same files again:
 * with GGUFSCOPE_WRITER_CACHE set (the test environment sets build/writer-cache) each file is written once per
 * version of the writers (a folder named by the sha256 of their sources) and copied from there. A file enters the
 * folder only whole (renamed from a part of the writing process's own) and only once it has passed its check. */
static const char *writer_cache_dir(void)
{
    static char dir[2048];
    static int state; /* 0: not looked up yet, 1: dir, -1: no cache */
    if (state)
        return state > 0 ? dir : NULL;
    state = -1;
    const char *root = getenv("GGUFSCOPE_WRITER_CACHE");
    if (!root || !*root)
        return NULL;
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "cat tests/py/*.py '%s'/../tools/*.py 2>/dev/null | sha256sum", models_dir());
    int st;
    char *out = run_capture(cmd, &st);
    if (st == 0 && out && strlen(out) >= 16 && snprintf(dir, sizeof dir, "%s/%.16s", root, out) < (int)sizeof dir) {
        snprintf(cmd, sizeof cmd, "mkdir -p '%s'", dir);
        free(run_capture(cmd, &st));
        state = st == 0 ? 1 : -1;
    }
    free(out);
    return state > 0 ? dir : NULL;
}

/* write(name, to, why) returns 1 (written and checked), 0 (the writer is not here) or -1 (failed); through the
 * cache when there is one. */
typedef int (*file_writer)(const char *name, const char *to, char *why);

static int write_through_cache(file_writer write, const char *name, const char *path, char *why)
{
    const char *dir = writer_cache_dir();
    if (!dir)
        return write(name, path, why);
    char cached[2304], part[2400];
    snprintf(cached, sizeof cached, "%s/%s.gguf", dir, name);
    if (access(cached, R_OK) != 0) {
        snprintf(part, sizeof part, "%s.%ld.part", cached, (long)getpid());
        const int w = write(name, part, why);
        const bool kept = w == 1 && rename(part, cached) == 0;
        unlink(part); /* what is left of a failed writing, or nothing */
        if (w != 1)
            return w;
        if (!kept)
            return write(name, path, why);
    }
    tbuf b = read_whole_file(cached);
    const bool ok = b.p && write_whole_file(path, b.p, b.len);
    tbuf_free(&b);
    if (!ok)
        snprintf(why, 200, "%s: not copied from %.120s", name, cached);
    return ok ? 1 : -1;
}

static int heldout_arch_run(const char *name, const char *path, char *why)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "'%s' tests/py/heldout_arch.py %s '%s' 2>&1", venv_python(), name, path);
    int st;
    char *out = run_capture(cmd, &st);
    if (st != 0)
        snprintf(why, 200, "heldout_arch.py %s: %.160s", name, out ? out : "failed");
    free(out);
    return st == 0 ? 1 : -1;
}

bool heldout_arch_write(const char *name, const char *path, char *why)
{
    return write_through_cache(heldout_arch_run, name, path, why) == 1;
}

const char *synth_arch_sha256(const char *preset)
{
    for (size_t i = 0; i < sizeof synth_arch_files / sizeof synth_arch_files[0]; i++)
        if (!strcmp(synth_arch_files[i].preset, preset))
            return synth_arch_files[i].sha256;
    return NULL;
}

static int synth_arch_run(const char *preset, const char *path, char *why)
{
    char script[4096], cmd[8192];
    snprintf(script, sizeof script, "%s/../tools/synth_arch.py", models_dir());
    const char *sha = synth_arch_sha256(preset);
    if (access(script, R_OK) != 0 || access(venv_python(), X_OK) != 0)
        return 0;
    snprintf(cmd, sizeof cmd, "'%s' '%s' %s '%s' >/dev/null 2>&1 && sha256sum '%s'", venv_python(), script, preset,
             path, path);
    int st;
    char *out = run_capture(cmd, &st);
    int ok = st == 0 && out && sha && strncmp(out, sha, 64) == 0;
    if (!ok)
        snprintf(why, 200, "synth_arch.py %s %s: %.64s", preset,
                 st != 0 ? "failed (is build/venv set up?)" : "wrote a file that is not the golden README's",
                 out ? out : "");
    free(out);
    return ok ? 1 : -1;
}

int synth_arch_write(const char *preset, const char *path, char *why)
{
    return write_through_cache(synth_arch_run, preset, path, why);
}
