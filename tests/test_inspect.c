/* gguf-inspect as a user runs it: output sections, --json (checked against
 * the library's view), --key, --tensors, exit codes and error messages. */
#include "fixture_model.h"
#include "quant.h"
#include "testutil.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char path[64];
static void setup(void)
{
    strcpy(path, "/tmp/ggufscope-inspect-XXXXXX");
    int fd = mkstemp(path);
    close(fd);
    fixture_opts o = fixture_default_opts();
    cr_assert_eq(fixture_write_file(path, &o, NULL), GGUF_OK);
}
static void teardown(void) { unlink(path); }
TestSuite(inspect, .init = setup, .fini = teardown);

static char *inspect(const char *args, int *status)
{
    size_t n = strlen(bin_dir()) + strlen(args) + 32;
    char *cmd = malloc(n);
    snprintf(cmd, n, "'%s/gguf-inspect' %s 2>&1", bin_dir(), args);
    char *out = run_capture(cmd, status);
    free(cmd);
    return out;
}

Test(inspect, default_output_has_summary_metadata_and_tensors)
{
    char args[256];
    snprintf(args, sizeof args, "'%s'", path);
    int st;
    char *out = inspect(args, &st);
    cr_assert_eq(st, 0, "%s", out);
    const char *want[] = { "architecture     llama", "name             ggufscope fixture",
                           "parameters", "tensors          21", "F16", "Q8_0", "alignment        32",
                           "context length   256", "vocabulary       288 tokens, SentencePiece",
                           "metadata (17 keys)", "[288 × string]", "tensors (21; shape in GGUF order",
                           "output.weight", "64 x 288" };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        cr_assert(strstr(out, want[i]), "missing '%s' in:\n%s", want[i], out);
    free(out);
}

Test(inspect, json_document_agrees_with_the_library)
{
    char args[256];
    snprintf(args, sizeof args, "'%s' --json", path);
    int st;
    char *out = inspect(args, &st);
    cr_assert_eq(st, 0);
    cJSON *j = cJSON_Parse(out);
    cr_assert_not_null(j, "not JSON: %.200s", out);
    gguf_file *f;
    cr_assert_eq(gguf_open(path, &f, NULL), GGUF_OK);
    cr_assert_eq(cJSON_GetObjectItem(j, "gguf_version")->valuedouble, 3);
    cr_assert_eq(cJSON_GetObjectItem(j, "data_offset")->valuedouble, (double)gguf_data_offset(f));
    const cJSON *meta = cJSON_GetObjectItem(j, "metadata");
    cr_assert_eq((size_t)cJSON_GetArraySize(meta), gguf_kv_count(f));
    const cJSON *toks = cJSON_GetObjectItem(meta, "tokenizer.ggml.tokens");
    cr_assert_eq(cJSON_GetArraySize(toks), 288, "arrays in full");
    cr_assert_str_eq(cJSON_GetArrayItem(toks, 287)->valuestring, "\xe2\x96\x81w28");
    cr_assert_str_eq(cJSON_GetObjectItem(meta, "general.architecture")->valuestring, "llama");
    const cJSON *tensors = cJSON_GetObjectItem(j, "tensors");
    cr_assert_eq((size_t)cJSON_GetArraySize(tensors), gguf_tensor_count(f));
    size_t i = 0;
    for (const cJSON *t = tensors->child; t; t = t->next, i++) {
        const gguf_tensor *gt = gguf_tensor_at(f, i);
        cr_assert_str_eq(cJSON_GetObjectItem(t, "name")->valuestring, gt->name);
        cr_assert_str_eq(cJSON_GetObjectItem(t, "type")->valuestring, gguf_type_traits_of(gt->type)->name);
        cr_assert_eq(cJSON_GetObjectItem(t, "offset")->valuedouble, (double)gt->offset);
        cr_assert_eq(cJSON_GetObjectItem(t, "size")->valuedouble, (double)gt->size);
        const cJSON *shape = cJSON_GetObjectItem(t, "shape");
        cr_assert_eq((uint32_t)cJSON_GetArraySize(shape), gt->n_dims);
        cr_assert_eq(cJSON_GetArrayItem(shape, 0)->valuedouble, (double)gt->ne[0], "ne0 first");
    }
    gguf_close(f);
    cJSON_Delete(j);
    free(out);
}

Test(inspect, key_prints_raw_values)
{
    char args[256];
    int st;
    snprintf(args, sizeof args, "'%s' --key general.name", path);
    char *out = inspect(args, &st);
    cr_assert_eq(st, 0);
    cr_assert_str_eq(out, "ggufscope fixture\n");
    free(out);
    snprintf(args, sizeof args, "'%s' --key llama.block_count", path);
    out = inspect(args, &st);
    cr_assert_str_eq(out, "2\n");
    free(out);
    snprintf(args, sizeof args, "'%s' --key tokenizer.ggml.tokens | sed -n 2p", path);
    out = inspect(args, &st);
    cr_assert_str_eq(out, "<s>\n");
    free(out);
    snprintf(args, sizeof args, "'%s' --key no.such.key", path);
    out = inspect(args, &st);
    cr_assert_eq(st, 2);
    cr_assert(strstr(out, "'no.such.key' is not in the file"), "%s", out);
    free(out);
}

Test(inspect, tensor_glob_and_sections)
{
    char args[256];
    int st;
    snprintf(args, sizeof args, "'%s' --tensors-only --tensors 'blk.1.*'", path);
    char *out = inspect(args, &st);
    cr_assert_eq(st, 0);
    cr_assert(strstr(out, "9 of 21 match 'blk.1.*'"), "%s", out);
    cr_assert(strstr(out, "blk.1.ffn_down.weight"));
    cr_assert_null(strstr(out, "blk.0."));
    cr_assert_null(strstr(out, "metadata ("), "--tensors-only hides metadata");
    free(out);
    snprintf(args, sizeof args, "'%s' --metadata-only", path);
    out = inspect(args, &st);
    cr_assert(strstr(out, "metadata (17 keys)"));
    cr_assert_null(strstr(out, "tensors ("), "--metadata-only hides the tensor table");
    free(out);
    snprintf(args, sizeof args, "'%s' --json --tensors '*norm*'", path);
    out = inspect(args, &st);
    cJSON *j = cJSON_Parse(out);
    cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItem(j, "tensors")), 5);
    cJSON_Delete(j);
    free(out);
}

Test(inspect, full_shows_long_arrays_whole)
{
    char args[256];
    int st;
    snprintf(args, sizeof args, "'%s' --metadata-only --full", path);
    char *out = inspect(args, &st);
    cr_assert(strstr(out, "\"\xe2\x96\x81w28\"]"), "the last token is shown with --full");
    cr_assert_null(strstr(out, "[288 × string]"));
    free(out);
}

Test(inspect, exit_codes_and_error_messages)
{
    int st;
    char *out = inspect("", &st);
    cr_assert_eq(st, 2, "no file is a usage error");
    free(out);
    out = inspect("--bogus x", &st);
    cr_assert_eq(st, 2);
    free(out);
    out = inspect("/nonexistent.gguf", &st);
    cr_assert_eq(st, 2, "I/O trouble");
    cr_assert(strstr(out, "cannot open"), "%s", out);
    free(out);
    /* a truncated copy: the file has a problem, exit 1, message names the tensor and the byte offset */
    char cut[80], args[256];
    snprintf(cut, sizeof cut, "%s.cut", path);
    snprintf(args, sizeof args, "head -c 150000 '%s' > '%s'", path, cut);
    cr_assert_eq(system(args), 0);
    snprintf(args, sizeof args, "'%s'", cut);
    out = inspect(args, &st);
    cr_assert_eq(st, 1, "%s", out);
    cr_assert(strstr(out, "error at byte") && strstr(out, "'blk.1.ffn_gate.weight' ends") &&
              strstr(out, "truncated (download incomplete?)"), "%s", out);
    free(out);
    unlink(cut);
}

Test(inspect, corrupt_file_from_the_wild_is_rejected, .timeout = 60)
{
    char p[4096], args[4200];
    snprintf(p, sizeof p, "%s/corrupt/ggml-vocab-llama-spm.utf8-mangled.gguf", models_dir());
    if (access(p, R_OK) != 0)
        cr_skip_test("%s not present: skipped", p);
    snprintf(args, sizeof args, "'%s'", p);
    int st;
    char *out = inspect(args, &st);
    cr_assert_eq(st, 1, "%s", out);
    cr_assert(strstr(out, "error at byte"), "%s", out);
    free(out);
}

/* ---- values of tensors (quant/) ---- */

Test(inspect, dump_writes_npy_that_numpy_loads_equal_to_the_gguf_package, .timeout = 120)
{
    char p[4096], npy[64], args[4400];
    snprintf(p, sizeof p, "%s/tiny-llama-q4_k_m.gguf", models_dir());
    if (access(p, R_OK) != 0)
        cr_skip_test("%s not present: skipped", p);
    snprintf(npy, sizeof npy, "/tmp/ggufscope-dump-%d.npy", (int)getpid());
    static const char *names[] = { "blk.0.ffn_down.weight", "blk.1.attn_norm.weight", "output.weight" };
    for (int k = 0; k < 3; k++) {
        snprintf(args, sizeof args, "'%s' --dump %s --out %s", p, names[k], npy);
        int st;
        char *out = inspect(args, &st);
        cr_assert_eq(st, 0, "%s", out);
        free(out);
        char cmd[8192];
        snprintf(cmd, sizeof cmd,
                 "'%s' -c \"import numpy as np, gguf, sys; a = np.load('%s'); "
                 "t = [t for t in gguf.GGUFReader('%s').tensors if t.name == '%s'][0]; "
                 "ref = gguf.quants.dequantize(t.data, t.tensor_type); "
                 "print('OK' if a.dtype == np.float32 and a.shape == ref.shape and a.tobytes() == "
                 "ref.astype(np.float32).tobytes() else 'DIFF', a.shape, ref.shape)\"",
                 venv_python(), npy, p, names[k]);
        out = run_capture(cmd, &st);
        cr_assert_eq(st, 0, "%s", out);
        cr_assert(strncmp(out, "OK", 2) == 0, "%s: %s", names[k], out);
        free(out);
    }
    unlink(npy);
}

Test(inspect, values_grid_and_raw_blocks)
{
    char args[256];
    int st;
    snprintf(args, sizeof args, "'%s' --values output.weight --rows 2:4 --cols 30:34", path);
    char *out = inspect(args, &st);
    cr_assert_eq(st, 0, "%s", out);
    cr_assert(strstr(out, "(Q8_0, ne = [64, 288]): rows 2:4 of 288, cols 30:34 of 64"), "%s", out);
    /* row 2, col 30 of the fixture: q = round(value * 127) in a block whose scale is ws/127 */
    gguf_file *f;
    cr_assert_eq(gguf_open(path, &f, NULL), GGUF_OK);
    const gguf_tensor *t = gguf_tensor_by_name(f, "output.weight");
    const uint8_t *blk = t->data + 2 * (64 / 32 * 34) + 34; /* row 2, block 1 (cols 32-63) */
    uint16_t dh;
    memcpy(&dh, blk, 2);
    float expect = (float)(int8_t)blk[2 + 0] * quant_f16_to_f32(dh); /* col 32 */
    char want[32];
    snprintf(want, sizeof want, "%.6g", expect);
    cr_assert(strstr(out, want), "col 32 of row 2 should read %s:\n%s", want, out);
    gguf_close(f);
    free(out);

    snprintf(args, sizeof args, "'%s' --raw output.weight --blocks 2", path);
    out = inspect(args, &st);
    cr_assert_eq(st, 0, "%s", out);
    cr_assert(strstr(out, "Q8_0, 32 values in 34 bytes per block, 576 blocks; first 2"), "%s", out);
    cr_assert(strstr(out, "block 1 (data offset") && strstr(out, "  d        = ") && strstr(out, "  qs       = ["),
              "%s", out);
    free(out);

    snprintf(args, sizeof args, "'%s' --values output.weight --rows 5:3", path);
    out = inspect(args, &st);
    cr_assert_eq(st, 2, "an empty range is a usage error");
    free(out);
    snprintf(args, sizeof args, "'%s' --values no.such.tensor", path);
    out = inspect(args, &st);
    cr_assert_eq(st, 2);
    cr_assert(strstr(out, "no tensor named 'no.such.tensor'"), "%s", out);
    free(out);
    snprintf(args, sizeof args, "'%s' --dump output.weight", path);
    out = inspect(args, &st);
    cr_assert_eq(st, 2, "--dump needs --out");
    free(out);
}

/* ---- --stats and --diff ------------------------------------------------------ */

Test(inspect, stats_json_equals_numpy_over_gguf_py)
{
    char args[256];
    snprintf(args, sizeof args, "'%s' --stats --json", path);
    int st;
    char *out = inspect(args, &st);
    cr_assert_eq(st, 0, "%s", out);
    cJSON *doc = cJSON_Parse(out);
    cr_assert(doc, "%s", out);
    const cJSON *ours = cJSON_GetObjectItem(doc, "tensors");
    cr_assert(cJSON_IsArray(ours), "%s", out);
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "'%s' tests/py/tensor_stats.py '%s'", venv_python(), path);
    char *ref = run_capture(cmd, &st);
    cr_assert_eq(st, 0);
    int n = 0;
    for (char *save = NULL, *line = strtok_r(ref, "\n", &save); line; line = strtok_r(NULL, "\n", &save), n++) {
        cJSON *r = cJSON_Parse(line);
        const cJSON *o = cJSON_GetArrayItem(ours, n);
        cr_assert(o);
        cr_expect_str_eq(cJSON_GetObjectItem(o, "name")->valuestring, cJSON_GetObjectItem(r, "name")->valuestring);
        const char *keys[] = { "min", "max", "mean", "std", "rms", "max_abs" };
        for (int k = 0; k < 6; k++) {
            double a = cJSON_GetObjectItem(o, keys[k])->valuedouble, b = cJSON_GetObjectItem(r, keys[k])->valuedouble;
            cr_expect(fabs(a - b) <= 1e-9 * fmax(fabs(a), fabs(b)) + 1e-12, "%s %s: %.17g vs %.17g",
                      cJSON_GetObjectItem(r, "name")->valuestring, keys[k], a, b);
        }
        cJSON_Delete(r);
    }
    cr_expect_eq(n, cJSON_GetArraySize(ours));
    cJSON_Delete(doc);
    free(ref);
    free(out);
}

Test(inspect, stats_glob_selects_tensors)
{
    char args[256];
    snprintf(args, sizeof args, "'%s' --stats 'blk.1.*'", path);
    int st;
    char *out = inspect(args, &st);
    cr_assert_eq(st, 0, "%s", out);
    cr_expect(strstr(out, "blk.1.attn_q.weight"), "%s", out);
    cr_expect_null(strstr(out, "blk.0."), "%s", out);
    cr_expect(strstr(out, "max |x|"), "%s", out);
    free(out);
}

static char *diff_with(const char *other, int *st, bool json)
{
    char args[512];
    snprintf(args, sizeof args, "'%s' --diff '%s'%s", path, other, json ? " --json" : "");
    return inspect(args, st);
}

Test(inspect, diff_of_a_file_with_itself_is_identical)
{
    int st;
    char *out = diff_with(path, &st, false);
    cr_expect_eq(st, 0, "%s", out);
    cr_expect(strstr(out, "reading: identical"), "%s", out);
    free(out);
}

Test(inspect, diff_names_the_changed_tensor_and_reads_the_pattern)
{
    tbuf b = read_whole_file(path);
    gguf_file *f;
    cr_assert_eq(gguf_open_memory(b.p, b.len, &f, NULL), GGUF_OK);
    const gguf_tensor *t = gguf_tensor_by_name(f, "blk.1.attn_norm.weight");
    cr_assert_eq(t->type, GGUF_TENSOR_F32);
    uint8_t *d = b.p + (t->data - b.p);
    float v;
    memcpy(&v, d + 4 * 9, 4);
    v += 1.0f; /* one value of one tensor */
    memcpy(d + 4 * 9, &v, 4);
    char other[64];
    strcpy(other, "/tmp/ggufscope-diff-XXXXXX");
    close(mkstemp(other));
    cr_assert(write_whole_file(other, b.p, b.len));
    int st;
    char *out = diff_with(other, &st, true);
    cr_expect_eq(st, 1, "%s", out);
    cJSON *doc = cJSON_Parse(out);
    cr_assert(doc, "%s", out);
    const cJSON *sum = cJSON_GetObjectItem(doc, "summary");
    cr_expect_eq(cJSON_GetObjectItem(sum, "different")->valueint, 1);
    cr_expect(strstr(cJSON_GetObjectItem(sum, "reading")->valuestring, "localized"), "%s", out);
    const cJSON *tensor;
    bool seen = false;
    cJSON_ArrayForEach(tensor, cJSON_GetObjectItem(doc, "tensors"))
    {
        if (strcmp(cJSON_GetObjectItem(tensor, "status")->valuestring, "different") != 0)
            continue;
        seen = true;
        cr_expect_str_eq(cJSON_GetObjectItem(tensor, "name")->valuestring, "blk.1.attn_norm.weight");
        cr_expect_eq(cJSON_GetObjectItem(tensor, "values_different")->valueint, 1);
        cr_expect_eq(cJSON_GetObjectItem(tensor, "max_abs_index")->valueint, 9);
        cr_expect_float_eq(cJSON_GetObjectItem(tensor, "max_abs_diff")->valuedouble, 1.0, 1e-6);
    }
    cr_expect(seen);
    cJSON_Delete(doc);
    free(out);
    gguf_close(f);
    tbuf_free(&b);
    unlink(other);
}

/* The same bytes read as another type or another shape are other values: not "identical". */
Test(inspect, diff_sees_types_and_shapes_not_only_bytes)
{
    for (int k = 0; k < 2; k++) {
        tbuf b = read_whole_file(path);
        if (k == 0) { /* blk.1.attn_norm.weight: F32 relabelled I32, 4 bytes a value either way */
            put_u32le(b.p + tensor_type_offset(&b, "blk.1.attn_norm.weight"), GGUF_TENSOR_I32);
        } else { /* token_embd.weight's two dimensions swapped */
            uint64_t d0 = tensor_dim_offset(&b, "token_embd.weight", 0), d1 = tensor_dim_offset(&b, "token_embd.weight", 1);
            uint64_t n0 = get_u64le(b.p + d0), n1 = get_u64le(b.p + d1);
            put_u64le(b.p + d0, n1);
            put_u64le(b.p + d1, n0);
        }
        char other[64];
        strcpy(other, "/tmp/ggufscope-diff-XXXXXX");
        close(mkstemp(other));
        cr_assert(write_whole_file(other, b.p, b.len));
        int st;
        char *out = diff_with(other, &st, true);
        cr_expect_eq(st, 1, "case %d: %s", k, out);
        cJSON *doc = cJSON_Parse(out);
        cr_assert(doc, "%s", out);
        cr_expect_eq(cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "summary"), "different")->valueint, 1, "%s", out);
        const cJSON *tensor;
        cJSON_ArrayForEach(tensor, cJSON_GetObjectItem(doc, "tensors"))
        if (!strcmp(cJSON_GetObjectItem(tensor, "status")->valuestring, "different")) {
            cr_expect_str_eq(cJSON_GetObjectItem(tensor, "name")->valuestring,
                             k ? "token_embd.weight" : "blk.1.attn_norm.weight");
            if (k)
                cr_expect(cJSON_IsTrue(cJSON_GetObjectItem(tensor, "shape_changed")), "%s", out);
        }
        cJSON_Delete(doc);
        free(out);
        out = diff_with(other, &st, false);
        cr_expect(!strstr(out, "reading: identical"), "%s", out);
        free(out);
        tbuf_free(&b);
        unlink(other);
    }
}

Test(inspect, diff_reads_a_requantization)
{
    char *a = model_path("stories260K.gguf"), *b = model_path("stories260K-q8_0mix.gguf");
    if (!a || !b)
        cr_skip_test("stories260K models not found: skipped");
    char args[2048];
    snprintf(args, sizeof args, "'%s' --diff '%s'", a, b);
    int st;
    char *out = inspect(args, &st);
    cr_expect_eq(st, 1);
    cr_expect(strstr(out, "+ general.file_type = 18"), "%s", out);
    cr_expect(strstr(out, "F32->Q8_0"), "%s", out);
    cr_expect(strstr(out, "reading: a requantization"), "%s", out);
    free(out), free(a), free(b);
}

Test(inspect, diff_needs_two_files)
{
    char args[256];
    snprintf(args, sizeof args, "'%s' --diff", path);
    int st;
    char *out = inspect(args, &st);
    cr_expect_eq(st, 2, "%s", out);
    free(out);
}
