/* gguf-verify as a user runs it: healthy real models pass clean, corruptions
 * made here from real models are named with their tensor (exit 1), manifests
 * equal llama-gguf-hash's own, sha256 agrees with sha256sum, the checked file
 * is never written. */
#include "golden.h"
#include "suite_helpers.h"
#include "testutil.h"
#include "verify_doc.h"

#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char tmp_path[64];
static void setup(void)
{
    strcpy(tmp_path, "/tmp/ggufscope-verify-XXXXXX");
    int fd = mkstemp(tmp_path);
    close(fd);
}
static void teardown(void) { unlink(tmp_path); }
TestSuite(verify, .init = setup, .fini = teardown, .timeout = 120);

/* Without --strict: exit 1 (an error, not a warning) and the finding named on the tensor. */
static void expect_named(const char *what, const char *code, const char *tensor)
{
    int st;
    cJSON *doc = verify_json(tmp_path, NULL, &st); /* no --strict: a corruption is an error, not a warning */
    char *txt = findings_text(doc);
    cr_expect_eq(st, 1, "%s: exit %d, expected 1; findings:\n%s", what, st, txt);
    const cJSON *f = find_finding(doc, code, tensor);
    cr_expect(f, "%s: no '%s' finding on %s; findings:\n%s", what, code ? code : "(any)", tensor, txt);
    if (f)
        cr_expect_neq(strcmp(cJSON_GetObjectItem(f, "severity")->valuestring, "info"), 0);
    free(txt);
    cJSON_Delete(doc);
}

Test(verify, healthy_shared_models_have_no_errors_or_warnings)
{
    DIR *d = opendir(models_dir());
    if (!d)
        cr_skip_test("no shared models at %s: skipped", models_dir());
    struct dirent *e;
    int checked = 0;
    while ((e = readdir(d))) {
        size_t n = strlen(e->d_name);
        if (n < 5 || strcmp(e->d_name + n - 5, ".gguf") != 0)
            continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", models_dir(), e->d_name);
        int st;
        cJSON *doc = verify_json(path, NULL, &st);
        char *txt = findings_text(doc);
        cr_expect_eq(st, 0, "%s: exit %d; findings:\n%s", e->d_name, st, txt);
        cr_expect_eq(count_findings(doc, "error"), 0, "%s:\n%s", e->d_name, txt);
        cr_expect_eq(count_findings(doc, "warning"), 0, "%s:\n%s", e->d_name, txt);
        cr_expect_str_eq(cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "verdict"), "status")->valuestring, "ok");
        free(txt);
        cJSON_Delete(doc);
        checked++;
    }
    closedir(d);
    cr_expect_geq(checked, 20, "only %d models checked", checked);
}

Test(verify, qwen2_traits_are_explained_not_flagged)
{
    char *p = need_model("tiny-qwen2-q4_k_m.gguf");
    int st;
    cJSON *doc = verify_json(p, NULL, &st);
    cr_expect_eq(st, 0);
    cr_expect(find_finding(doc, "final-norm-large", "output_norm.weight"));
    cr_expect(find_finding(doc, "tied-embeddings", "token_embd.weight"));
    const cJSON *pad = find_finding(doc, "vocab-padding", NULL);
    cr_assert(pad);
    cr_expect(strstr(cJSON_GetObjectItem(pad, "measured")->valuestring, "1024 rows, 959 real tokens"), "%s",
              cJSON_GetObjectItem(pad, "measured")->valuestring);
    cJSON_Delete(doc);
    free(p);
    /* a file type that names what was requested, not what is inside */
    p = need_model("stories260K-q4_0mix.gguf");
    doc = verify_json(p, NULL, &st);
    cr_expect_eq(st, 0);
    cr_expect(find_finding(doc, "file-type", NULL));
    cJSON_Delete(doc);
    free(p);
}

/* ---- corruptions ---------------------------------------------------------- */

static void put_f32(uint8_t *p, float v) { memcpy(p, &v, 4); }
static float get_f32(const uint8_t *p)
{
    float v;
    memcpy(&v, p, 4);
    return v;
}

static void nan_at_5(uint8_t *d, const gguf_tensor *t) { (void)t, put_f32(d + 4 * 5, NAN); }
static void inf_scale_block_3(uint8_t *d, const gguf_tensor *t)
{
    (void)t;
    d[3 * 34] = 0x00, d[3 * 34 + 1] = 0x7c; /* Q8_0 block 3: d = +Inf (f16 0x7c00) */
}
static void zero_all(uint8_t *d, const gguf_tensor *t) { memset(d, 0, t->size); }
static void times_16(uint8_t *d, const gguf_tensor *t)
{
    for (uint64_t i = 0; i < t->n_elements; i++)
        put_f32(d + 4 * i, 16.0f * get_f32(d + 4 * i));
}
static void times_5(uint8_t *d, const gguf_tensor *t)
{
    for (uint64_t i = 0; i < t->n_elements; i++)
        put_f32(d + 4 * i, 5.0f * get_f32(d + 4 * i));
}
static void uniform_noise(uint8_t *d, const gguf_tensor *t)
{
    uint32_t s = 12345;
    for (uint64_t i = 0; i < t->n_elements; i++) {
        s = s * 1664525u + 1013904223u;
        put_f32(d + 4 * i, (float)(s >> 8) / 16777216.0f * 4.0f - 2.0f);
    }
}
/* The tensor replaced by uniform noise at 10 times its own RMS. */
static void noise_10x(uint8_t *d, const gguf_tensor *t)
{
    double ss = 0;
    for (uint64_t i = 0; i < t->n_elements; i++)
        ss += (double)get_f32(d + 4 * i) * get_f32(d + 4 * i);
    const float a = (float)(10.0 * sqrt(ss / (double)t->n_elements) * sqrt(3.0));
    uint32_t s = 4242;
    for (uint64_t i = 0; i < t->n_elements; i++) {
        s = s * 1664525u + 1013904223u;
        put_f32(d + 4 * i, a * ((float)(s >> 8) / 8388608.0f - 1.0f));
    }
}
static void random_bytes(uint8_t *d, const gguf_tensor *t)
{
    uint32_t s = 777;
    for (uint64_t i = 0; i < t->size; i++) {
        s = s * 1664525u + 1013904223u;
        d[i] = (uint8_t)(s >> 24);
    }
}
static void flip_exponent_bit(uint8_t *d, const gguf_tensor *t) { (void)t, d[4 * 100 + 3] ^= 0x40; }
static void flip_low_mantissa(uint8_t *d, const gguf_tensor *t) { (void)t, d[4 * 7] ^= 0x01; }

Test(verify, nan_in_one_weight_is_named)
{
    write_patched("stories260K.gguf", "blk.1.attn_q.weight", nan_at_5, tmp_path);
    expect_named("NaN weight", "nonfinite", "blk.1.attn_q.weight");
}

Test(verify, inf_block_scale_is_named_with_its_block)
{
    write_patched("stories260K-q8_0mix.gguf", "blk.2.attn_q.weight", inf_scale_block_3, tmp_path);
    expect_named("Inf scale", "scale-nonfinite", "blk.2.attn_q.weight");
    int st;
    cJSON *doc = verify_json(tmp_path, NULL, &st);
    const cJSON *f = find_finding(doc, "scale-nonfinite", "blk.2.attn_q.weight");
    cr_assert(f);
    cr_expect(strstr(cJSON_GetObjectItem(f, "measured")->valuestring, "first in block 3"), "%s",
              cJSON_GetObjectItem(f, "measured")->valuestring);
    cJSON_Delete(doc);
}

Test(verify, zeroed_matrix_is_named)
{
    write_patched("stories260K.gguf", "blk.2.ffn_up.weight", zero_all, tmp_path);
    expect_named("zeroed matrix", "zero-matrix", "blk.2.ffn_up.weight");
}

/* Severity from evidence: x16 puts the norm at robust z ~57 and 16x its siblings, where no healthy file's
 * tensor goes (z 8.5 at most): an error without --strict. */
Test(verify, norm_scaled_by_16_is_an_error_against_its_siblings)
{
    write_patched("stories260K.gguf", "blk.2.attn_norm.weight", times_16, tmp_path);
    expect_named("norm x16", "sibling-outlier", "blk.2.attn_norm.weight");
    int st;
    cJSON *doc = verify_json(tmp_path, NULL, &st);
    cr_expect_eq(st, 1, "an error fails the file");
    const cJSON *f = find_finding(doc, "sibling-outlier", "blk.2.attn_norm.weight");
    cr_expect(f && !strcmp(cJSON_GetObjectItem(f, "severity")->valuestring, "error"));
    cJSON_Delete(doc);
}

Test(verify, ffn_replaced_by_noise_at_10x_is_an_error)
{
    write_patched("stories260K.gguf", "blk.3.ffn_down.weight", noise_10x, tmp_path);
    int st;
    cJSON *doc = verify_json(tmp_path, NULL, &st);
    cr_expect_eq(st, 1);
    const cJSON *f = find_finding(doc, "sibling-outlier", "blk.3.ffn_down.weight");
    cr_expect(f && !strcmp(cJSON_GetObjectItem(f, "severity")->valuestring, "error"), "%s",
              f ? cJSON_GetObjectItem(f, "measured")->valuestring : "no finding");
    cJSON_Delete(doc);
}

/* Without --strict a warning lists the oddity and still exits 0 (the verdict reads WARNINGS): plausible but
 * unusual, as x5 on one norm is (5x its siblings, under the error's 8x). */
Test(verify, warnings_exit_0_unless_strict)
{
    write_patched("stories260K.gguf", "blk.2.attn_norm.weight", times_5, tmp_path);
    int st;
    cJSON *doc = verify_json(tmp_path, NULL, &st);
    cr_expect_eq(st, 0, "a warning alone exits 0");
    const cJSON *v = cJSON_GetObjectItem(doc, "verdict");
    cr_expect_str_eq(cJSON_GetObjectItem(v, "status")->valuestring, "ok");
    cr_expect_str_eq(cJSON_GetObjectItem(v, "summary")->valuestring, "WARNINGS");
    cr_expect(find_finding(doc, "sibling-outlier", "blk.2.attn_norm.weight"), "the warning is still listed");
    cr_expect_eq(count_findings(doc, "error"), 0);
    cJSON_Delete(doc);
    doc = verify_json(tmp_path, "--strict", &st);
    cr_expect_eq(st, 1, "--strict: the warning fails the file");
    cJSON_Delete(doc);
}

Test(verify, ffn_replaced_by_noise_is_named)
{
    write_patched("stories260K.gguf", "blk.3.ffn_down.weight", uniform_noise, tmp_path);
    expect_named("FFN noise", "sibling-outlier", "blk.3.ffn_down.weight");
}

Test(verify, random_bytes_in_a_quantized_ffn_are_named)
{
    write_patched("tiny-llama-q4_k_m.gguf", "blk.1.ffn_down.weight", random_bytes, tmp_path);
    expect_named("random bytes in Q4_K_M", NULL, "blk.1.ffn_down.weight");
}

Test(verify, flipped_exponent_bit_is_named)
{
    write_patched("stories260K.gguf", "blk.2.attn_k.weight", flip_exponent_bit, tmp_path);
    expect_named("exponent flip", "extreme-values", "blk.2.attn_k.weight");
}

Test(verify, truncated_copy_says_how_much_is_missing)
{
    char *p = need_model("stories260K.gguf");
    tbuf b = read_whole_file(p);
    cr_assert(write_whole_file(tmp_path, b.p, b.len - 5000));
    int st;
    cJSON *doc = verify_json(tmp_path, NULL, &st);
    cr_expect_eq(st, 1);
    /* a truncated download opens partially: the finding says how much is missing, naming the first tensor cut */
    const cJSON *f = find_finding(doc, "truncated", NULL);
    cr_assert(f);
    cr_expect(strstr(cJSON_GetObjectItem(f, "measured")->valuestring, "4.88 KiB missing"), "%s",
              cJSON_GetObjectItem(f, "measured")->valuestring);
    cr_expect(cJSON_GetObjectItem(f, "tensor")->valuestring[0], "the first incomplete tensor is named");
    const cJSON *s = cJSON_GetObjectItem(doc, "structure");
    cr_expect_eq(cJSON_GetObjectItem(s, "missing_bytes")->valuedouble, 5000);
    cJSON_Delete(doc);
    tbuf_free(&b);
    free(p);
}

Test(verify, real_corrupted_file_is_rejected_with_the_reason)
{
    char *p = need_model("corrupt/ggml-vocab-llama-spm.utf8-mangled.gguf");
    char args[1024];
    snprintf(args, sizeof args, "'%s' 2>&1", p);
    int st;
    char *out = run_tool("gguf-verify", args, &st);
    cr_expect_eq(st, 1, "%s", out);
    cr_expect(strstr(out, "verdict    PROBLEMS"), "%s", out);
    cr_expect(strstr(out, "byte 399"), "%s", out);
    cr_expect(strstr(out, "runs past the end of the file"), "%s", out);
    free(out);
    free(p);
}

/* A hybrid's roles belong to their kind of layer (Qwen3-Next's older ssm_in in its three delta nets of four, LFM2's
 * convolutions, Qwen3.5's), and MiMo-V2's sinks and Step-3.5's head gates are where a layer has them (MiMo-V2's
 * checkpoints': the sliding layers): a role in most layers and absent from the others is not a missing tensor there. */
Test(verify, a_hybrid_s_layers_each_have_their_own_roles, .timeout = 120)
{
    static const char *const files[] = { "heldout-qwen3next-legacy", "heldout-qwen35", "heldout-lfm2",
                                         "heldout-mimo2", "heldout-step35-b" };
    char dir[128], path[256], why[200], args[512];
    if (access(venv_python(), X_OK) != 0)
        cr_skip_test("build/venv not found: the held-out files cannot be written");
    cr_assert(tmp_dir_make(dir, "hybrid"));
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        snprintf(path, sizeof path, "%s/%s.gguf", dir, files[i]);
        cr_assert(heldout_arch_write(files[i], path, why), "%s", why);
        snprintf(args, sizeof args, "'%s' 2>&1", path);
        int st;
        char *out = run_tool("gguf-verify", args, &st);
        cr_expect_eq(st, 0, "%s: %s", files[i], out);
        cr_expect(strstr(out, "verdict    OK: 0 errors"), "%s: %s", files[i], out);
        free(out);
    }
    cr_assert(tmp_dir_remove(dir));
}

/* ---- manifests --------------------------------------------------------------- */

static char *golden_path(const char *name)
{
    char *p = malloc(1024);
    snprintf(p, 1024, "%s/../golden/manifests/%s", models_dir(), name);
    if (access(p, R_OK) != 0) {
        free(p);
        cr_skip_test("golden %s not found: skipped", name);
    }
    return p;
}

Test(verify, manifests_equal_llama_gguf_hash_for_every_shared_model)
{
    DIR *d = opendir(models_dir());
    if (!d)
        cr_skip_test("no shared models at %s: skipped", models_dir());
    struct dirent *e;
    int compared = 0;
    while ((e = readdir(d))) {
        size_t n = strlen(e->d_name);
        if (n < 5 || strcmp(e->d_name + n - 5, ".gguf") != 0)
            continue;
        char base[512], gm[1024], gu[1024], cmd[4096];
        snprintf(base, sizeof base, "%.*s", (int)(n - 5), e->d_name);
        snprintf(gm, sizeof gm, "%s/../golden/manifests/%s.manifest", models_dir(), base);
        snprintf(gu, sizeof gu, "%s/../golden/manifests/%s.uuid", models_dir(), base);
        tbuf want_m = read_whole_file(gm), want_u = read_whole_file(gu);
        if (!want_m.len || !want_u.len)
            continue;
        /* llama-gguf-hash labels lines with the path as given: run it the same way */
        snprintf(cmd, sizeof cmd, "cd '%s' && '%s/gguf-verify' '%s' --write-manifest --uuid", models_dir(), bin_dir(),
                 e->d_name);
        int st;
        char *got = run_capture(cmd, &st);
        cr_expect_eq(st, 0);
        size_t want_len = want_m.len + want_u.len;
        char *want = malloc(want_len + 1);
        memcpy(want, want_m.p, want_m.len);
        memcpy(want + want_m.len, want_u.p, want_u.len);
        want[want_len] = '\0';
        cr_expect_str_eq(got, want, "%s: manifest differs from llama-gguf-hash's", e->d_name);
        free(want), free(got);
        tbuf_free(&want_m), tbuf_free(&want_u);
        compared++;
    }
    closedir(d);
    cr_expect_geq(compared, 20, "only %d manifests compared", compared);
}

Test(verify, manifest_check_matches_tensors_by_name_after_a_rename)
{
    char *p = need_model("stories260K-q8_0mix.gguf");
    char *gm = golden_path("stories260K-q8_0mix.manifest");
    tbuf b = read_whole_file(p);
    cr_assert(write_whole_file(tmp_path, b.p, b.len));
    char extra[2048];
    snprintf(extra, sizeof extra, "--manifest '%s' --no-audit", gm);
    int st;
    cJSON *doc = verify_json(tmp_path, extra, &st);
    const cJSON *m = cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "digests"), "manifest");
    cr_assert(m);
    cr_expect_eq(st, 0);
    cr_expect_eq(cJSON_GetObjectItem(m, "ok")->valueint, 3 * 48 + 3);
    cr_expect_eq(cJSON_GetObjectItem(m, "mismatched")->valueint, 0);
    cr_expect_eq(cJSON_GetObjectItem(m, "tensors_matched")->valueint, 48);
    cJSON_Delete(doc);
    tbuf_free(&b), free(p), free(gm);
}

Test(verify, flipped_byte_is_named_by_the_manifest)
{
    write_patched("stories260K.gguf", "blk.1.ffn_up.weight", flip_low_mantissa, tmp_path);
    char *gm = golden_path("stories260K.manifest");
    char extra[2048];
    snprintf(extra, sizeof extra, "--manifest '%s'", gm);
    int st;
    cJSON *doc = verify_json(tmp_path, extra, &st);
    cr_expect_eq(st, 1);
    int on_tensor = 0, elsewhere = 0;
    const cJSON *f;
    cJSON_ArrayForEach(f, findings_of(doc))
    {
        if (strcmp(cJSON_GetObjectItem(f, "code")->valuestring, "checksum-mismatch") != 0)
            continue;
        const char *t = cJSON_GetObjectItem(f, "tensor")->valuestring;
        if (strcmp(t, "blk.1.ffn_up.weight") == 0) {
            on_tensor++;
            const char *m = cJSON_GetObjectItem(f, "measured")->valuestring;
            cr_expect(strstr(m, "xxh64 ") && strstr(m, "sha1 ") && strstr(m, "sha256 "), "%s", m);
        }
        else if (t[0])
            elsewhere++;
    }
    cr_expect_eq(on_tensor, 1, "one finding for the flipped tensor, naming its three digests");
    cr_expect_eq(elsewhere, 0, "no other tensor differs");
    cJSON_Delete(doc);
    free(gm);
}

Test(verify, manifest_names_missing_and_extra_tensors)
{
    char *p = need_model("stories260K.gguf");
    char *gm = golden_path("stories260K.manifest");
    tbuf m = read_whole_file(gm);
    char man[64];
    strcpy(man, "/tmp/ggufscope-manifest-XXXXXX");
    int fd = mkstemp(man);
    FILE *fp = fdopen(fd, "w");
    /* drop every line of one tensor, add one for a tensor the file does not have */
    char *text = strndup((const char *)m.p, m.len);
    for (char *save = NULL, *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
        if (!strstr(line, ":blk.0.attn_k.weight"))
            fprintf(fp, "%s\n", line);
    fprintf(fp, "xxh64     0123456789abcdef  stories260K.gguf:blk.9.attn_k.weight\n");
    fclose(fp);
    char extra[2048];
    snprintf(extra, sizeof extra, "--manifest '%s' --no-audit", man);
    int st;
    cJSON *doc = verify_json(p, extra, &st);
    cr_expect_eq(st, 1);
    cr_expect(find_finding(doc, "tensor-missing", "blk.9.attn_k.weight"));
    cr_expect(find_finding(doc, "tensor-extra", "blk.0.attn_k.weight"));
    cr_expect_null(find_finding(doc, "checksum-mismatch", NULL));
    cJSON_Delete(doc);
    unlink(man);
    free(text), tbuf_free(&m), free(p), free(gm);
}

Test(verify, malformed_manifest_is_trouble)
{
    char *p = need_model("stories260K.gguf");
    char man[64];
    strcpy(man, "/tmp/ggufscope-manifest-XXXXXX");
    int fd = mkstemp(man);
    cr_assert(write(fd, "sha256  abc  x.gguf:t\n", 22) == 22);
    close(fd);
    char args[2048];
    snprintf(args, sizeof args, "'%s' --manifest '%s' 2>&1", p, man);
    int st;
    char *out = run_tool("gguf-verify", args, &st);
    cr_expect_eq(st, 2, "%s", out);
    cr_expect(strstr(out, "manifest line 1"), "%s", out);
    free(out);
    unlink(man);
    free(p);
}

/* ---- whole-file sha256, crc32, never writing ----------------------------------- */

static void sha256sum_of(const char *path, char *hex)
{
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "sha256sum '%s'", path);
    int st;
    char *out = run_capture(cmd, &st);
    cr_assert_eq(st, 0);
    memcpy(hex, out, 64);
    hex[64] = '\0';
    free(out);
}

Test(verify, sha256_agrees_with_sha256sum)
{
    char *p = need_model("tiny-llama-q6_k.gguf");
    char hex[65], extra[256];
    sha256sum_of(p, hex);
    snprintf(extra, sizeof extra, "--sha256 %s --no-audit", hex);
    int st;
    cJSON *doc = verify_json(p, extra, &st);
    cr_expect_eq(st, 0);
    const cJSON *s = cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "digests"), "file_sha256");
    cr_assert(s);
    cr_expect_str_eq(cJSON_GetObjectItem(s, "actual")->valuestring, hex);
    cJSON_Delete(doc);
    hex[0] = hex[0] == '0' ? '1' : '0';
    snprintf(extra, sizeof extra, "--sha256 %s --no-audit", hex);
    doc = verify_json(p, extra, &st);
    cr_expect_eq(st, 1);
    cr_expect(find_finding(doc, "sha256-mismatch", NULL));
    cJSON_Delete(doc);
    free(p);
}

Test(verify, truncated_download_still_gets_its_sha256_compared)
{
    char *p = need_model("stories260K.gguf");
    char hex[65], extra[256];
    sha256sum_of(p, hex);
    tbuf b = read_whole_file(p);
    cr_assert(write_whole_file(tmp_path, b.p, b.len / 2));
    snprintf(extra, sizeof extra, "--sha256 %s", hex);
    int st;
    cJSON *doc = verify_json(tmp_path, extra, &st);
    cr_expect_eq(st, 1);
    cr_expect(find_finding(doc, "truncated", NULL));
    cr_expect(find_finding(doc, "sha256-mismatch", NULL));
    cJSON_Delete(doc);
    tbuf_free(&b), free(p);
}

Test(verify, crc32_agrees_with_python_zlib)
{
    char *p = need_model("tiny-qwen2-q8_0.gguf");
    int st;
    cJSON *doc = verify_json(p, "--hashes crc32 --no-audit", &st);
    cr_expect_eq(st, 0);
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "'%s' -c \"import gguf,zlib,sys; r=gguf.GGUFReader(sys.argv[1]); "
             "[print(t.name, '%%08x' %% zlib.crc32(t.data.tobytes())) for t in r.tensors]\" '%s'",
             venv_python(), p);
    char *out = run_capture(cmd, &st);
    cr_assert_eq(st, 0, "%s", out);
    const cJSON *tensors = cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "digests"), "tensors");
    int n = 0;
    for (char *save = NULL, *line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char name[256], hex[16];
        cr_assert_eq(sscanf(line, "%255s %15s", name, hex), 2);
        const cJSON *t = cJSON_GetObjectItem(tensors, name);
        cr_assert(t, "no digests for %s", name);
        cr_expect_str_eq(cJSON_GetObjectItem(t, "crc32")->valuestring, hex, "%s", name);
        n++;
    }
    cr_expect_eq(n, 50);
    free(out);
    cJSON_Delete(doc);
    free(p);
}

Test(verify, never_writes_the_file_it_checks)
{
    char *p = need_model("stories260K-q5_1mix.gguf");
    tbuf b = read_whole_file(p);
    cr_assert(write_whole_file(tmp_path, b.p, b.len));
    cr_assert_eq(chmod(tmp_path, 0444), 0);
    struct stat before, after;
    cr_assert_eq(stat(tmp_path, &before), 0);
    char extra[64];
    snprintf(extra, sizeof extra, "--hashes xxh64,sha1,sha256,crc32 --uuid");
    int st;
    cJSON *doc = verify_json(tmp_path, extra, &st);
    cr_expect_eq(st, 0);
    cJSON_Delete(doc);
    cr_assert_eq(stat(tmp_path, &after), 0);
    cr_expect_eq(before.st_mtim.tv_sec, after.st_mtim.tv_sec);
    cr_expect_eq(before.st_mtim.tv_nsec, after.st_mtim.tv_nsec);
    tbuf now = read_whole_file(tmp_path);
    cr_assert_eq(now.len, b.len);
    cr_expect_eq(memcmp(now.p, b.p, b.len), 0);
    chmod(tmp_path, 0644);
    tbuf_free(&now), tbuf_free(&b), free(p);
}

Test(verify, write_manifest_to_a_file_is_atomic_and_equals_stdout)
{
    char *p = need_model("stories260K.gguf");
    char out_path[128], args[2048];
    snprintf(out_path, sizeof out_path, "%s.manifest", tmp_path);
    snprintf(args, sizeof args, "'%s' --write-manifest='%s' --no-audit", p, out_path);
    int st;
    char *report = run_tool("gguf-verify", args, &st);
    cr_expect_eq(st, 0, "%s", report);
    snprintf(args, sizeof args, "'%s' --write-manifest", p);
    char *printed = run_tool("gguf-verify", args, &st);
    tbuf written = read_whole_file(out_path);
    cr_assert(written.len > 0);
    cr_expect_eq(written.len, strlen(printed));
    cr_expect_eq(memcmp(written.p, printed, written.len), 0);
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "ls '%s'.tmp.* 2>/dev/null | wc -l", out_path);
    char *left = run_capture(cmd, &st);
    cr_expect_eq(atoi(left), 0, "temporary files left behind");
    unlink(out_path);
    free(left), free(report), free(printed), tbuf_free(&written), free(p);
}

Test(verify, usage_and_io_trouble_exit_2)
{
    int st;
    char *out = run_tool("gguf-verify", "2>&1", &st);
    cr_expect_eq(st, 2);
    free(out);
    out = run_tool("gguf-verify", "/nonexistent/x.gguf 2>&1", &st);
    cr_expect_eq(st, 2, "%s", out);
    free(out);
    out = run_tool("gguf-verify", "x.gguf --bogus 2>&1", &st);
    cr_expect_eq(st, 2);
    free(out);
    out = run_tool("gguf-verify", "x.gguf --hashes md5 2>&1", &st);
    cr_expect_eq(st, 2);
    free(out);
}
