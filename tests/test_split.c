/* Split models: shards written here in llama.cpp's gguf-split layout (support/split_writer.h) from a writer-made
 * model. Opened as one they hold the model's
 * tensors byte for byte, and every tool reads them as the whole model; a missing, foreign or inconsistent
 * shard is an error naming it. */
#include "fixture_model.h"
#include "split_writer.h"
#include "testutil.h"

#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[128], whole[256], prefix[256];

enum { SHARDS = 3 };

/* Writes whole's tensors into SHARDS shards of PREFIX; `bad` (a shard index) gets the fault. */
static void write_shards(split_fault what, int bad)
{
    char why[600];
    cr_assert(split_write(whole, prefix, SHARDS, what, bad, why, sizeof why), "%s", why);
}

static void shard_path(int s, char *out, size_t len)
{
    snprintf(out, len, "%s-%05d-of-%05d.gguf", prefix, s + 1, SHARDS);
}

static void setup(void)
{
    cr_assert(tmp_dir_make(dir, "split"));
    snprintf(whole, sizeof whole, "%s/whole.gguf", dir);
    snprintf(prefix, sizeof prefix, "%s/model", dir);
    fixture_opts o = fixture_default_opts();
    gguf_error err;
    cr_assert_eq(fixture_write_file(whole, &o, &err), GGUF_OK, "%s", err.message);
}
static void teardown(void) { tmp_dir_remove(dir); }
TestSuite(split, .init = setup, .fini = teardown, .timeout = 120);

Test(split, shards_open_as_the_whole_model)
{
    write_shards(SPLIT_FAULT_NONE, -1);
    char first[400];
    shard_path(0, first, sizeof first);
    gguf_file *a, *b;
    gguf_error err;
    cr_assert_eq(gguf_open(whole, &a, &err), GGUF_OK, "%s", err.message);
    cr_assert_eq(gguf_open(first, &b, &err), GGUF_OK, "%s", err.message);
    cr_assert_eq(gguf_shard_count(b), SHARDS);
    cr_assert_eq(gguf_shard_count(a), 1);
    cr_assert_eq(gguf_tensor_count(b), gguf_tensor_count(a));
    uint32_t last_shard = 0;
    for (size_t i = 0; i < gguf_tensor_count(a); i++) {
        const gguf_tensor *x = gguf_tensor_at(a, i), *y = gguf_tensor_by_name(b, x->name);
        cr_assert(y, "tensor %s not found in the split model", x->name);
        cr_assert_eq(y->size, x->size);
        cr_assert(!memcmp(x->data, y->data, x->size), "tensor %s: bytes differ", x->name);
        last_shard = y->shard > last_shard ? y->shard : last_shard;
    }
    cr_assert_eq(last_shard, SHARDS - 1, "tensors come from every shard");
    gguf_str name;
    cr_assert_eq(gguf_get_str(b, "general.architecture", &name, NULL), GGUF_OK);
    gguf_close(a);
    gguf_close(b);
}

/* The tools on the first shard: the same tensors, digests and generated tokens as on the whole file. */
Test(split, every_tool_reads_the_split_model)
{
    write_shards(SPLIT_FAULT_NONE, -1);
    char first[400], args[1024];
    shard_path(0, first, sizeof first);
    int sa, sb;
    const char *modes[][2] = {
        { "gguf-verify", "--json" },
        { "gguf-run", "-p 'hello world' -n 6 --json" },
        { "gguf-inspect", "--json" },
    };
    for (int m = 0; m < 3; m++) {
        snprintf(args, sizeof args, "'%s' %s", whole, modes[m][1]);
        char *oa = run_tool(modes[m][0], args, &sa);
        snprintf(args, sizeof args, "'%s' %s", first, modes[m][1]);
        char *ob = run_tool(modes[m][0], args, &sb);
        cr_assert_eq(sa, 0, "%s on the whole file: %s", modes[m][0], oa);
        cr_assert_eq(sb, 0, "%s on the split model: %s", modes[m][0], ob);
        cJSON *ja = cJSON_Parse(oa), *jb = cJSON_Parse(ob);
        cr_assert(ja && jb);
        const char *field = m == 1 ? "tokens" : "tensors";
        if (m == 0) { /* the tensor-data digest covers every shard's tensors, in order */
            char *da = cJSON_PrintUnformatted(cJSON_GetObjectItem(cJSON_GetObjectItem(ja, "digests"), "model"));
            char *db = cJSON_PrintUnformatted(cJSON_GetObjectItem(cJSON_GetObjectItem(jb, "digests"), "model"));
            cr_assert_str_eq(da, db, "model digest");
            free(da), free(db);
        } else if (m == 1) {
            char *ta = cJSON_PrintUnformatted(cJSON_GetObjectItem(ja, field));
            char *tb = cJSON_PrintUnformatted(cJSON_GetObjectItem(jb, field));
            cr_assert(ta && tb && !strcmp(ta, tb), "generated tokens: whole %s, split %s", oa, ob);
            free(ta), free(tb);
        } else {
            cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItem(ja, field)),
                         cJSON_GetArraySize(cJSON_GetObjectItem(jb, field)), "tensor lists");
        }
        cJSON_Delete(ja), cJSON_Delete(jb);
        free(oa), free(ob);
    }
}

/* Each fault: the open fails with GGUF_E_SPLIT (or a duplicate name), naming the shard, and the tools exit 1. */
Test(split, bad_shards_are_named)
{
    char first[400], bad[400];
    shard_path(0, first, sizeof first);
    static const struct { split_fault what; int shard; const char *says; gguf_status code; } cases[] = {
        { SPLIT_FAULT_COUNT, 2, "belongs to a split of 4 shards", GGUF_E_SPLIT },
        { SPLIT_FAULT_NO, 1, "split.no is 2 where shard 1 was expected", GGUF_E_SPLIT },
        { SPLIT_FAULT_DUPLICATE, 2, "is in shard 1 and again in shard 3", GGUF_E_DUPLICATE_NAME },
        { SPLIT_FAULT_NONE, 1, "is missing", GGUF_E_SPLIT }, /* shard 2 deleted below */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        write_shards(cases[i].what, cases[i].shard);
        shard_path(cases[i].shard, bad, sizeof bad);
        if (i == 3)
            cr_assert_eq(unlink(bad), 0);
        gguf_file *f;
        gguf_error err;
        cr_assert_eq(gguf_open(first, &f, &err), cases[i].code, "case %zu: %s", i, err.message);
        cr_assert(strstr(err.message, cases[i].says), "case %zu: %s", i, err.message);
        cr_assert(strstr(err.message, bad) || strstr(err.subject, bad) || cases[i].what == SPLIT_FAULT_DUPLICATE,
                  "case %zu names the shard: %s", i, err.message);
        char args[512];
        snprintf(args, sizeof args, "'%s' 2>&1", first);
        int status;
        char *out = run_tool("gguf-verify", args, &status);
        cr_assert_eq(status, 1, "case %zu: gguf-verify exits %d\n%s", i, status, out);
        free(out);
    }
    /* a later shard given first, and a first shard whose name does not follow the pattern */
    write_shards(SPLIT_FAULT_NONE, -1);
    shard_path(1, bad, sizeof bad);
    gguf_file *f;
    gguf_error err;
    cr_assert_eq(gguf_open(bad, &f, &err), GGUF_E_SPLIT);
    cr_assert(strstr(err.message, "open the first one"), "%s", err.message);
    char renamed[400];
    snprintf(renamed, sizeof renamed, "%s/renamed.gguf", dir);
    cr_assert_eq(rename(first, renamed), 0);
    cr_assert_eq(gguf_open(renamed, &f, &err), GGUF_E_SPLIT);
    cr_assert(strstr(err.message, "PREFIX-00001-of-00003.gguf"), "%s", err.message);
}

/* No output may replace a shard (the output guard knows every shard the model opened, by inode): each tool's
 * output option aimed at the third shard exits 2 before writing, and the shard keeps its bytes. */
Test(split, no_output_replaces_a_shard)
{
    write_shards(SPLIT_FAULT_NONE, -1);
    char first[400], last[400], link[400];
    shard_path(0, first, sizeof first);
    shard_path(SHARDS - 1, last, sizeof last);
    snprintf(link, sizeof link, "%s/link-to-last.gguf", dir);
    cr_assert_eq(symlink(last, link), 0);
    tbuf before = read_whole_file(last);
    const char *const outputs[] = { last, link };
    for (int k = 0; k < 2; k++) {
        const char *modes[][2] = {
            { "gguf-verify", "--write-manifest='%s'" },
            { "gguf-inspect", "--dump token_embd.weight --out '%s'" },
            { "gguf-run", "-p hi -n 1 --logits-out '%s'" },
            { "gguf-run", "-p hi -n 1 --trace='%s'" },
            { "gguf-run", "-p hi -n 1 --plot '%s'" },
        };
        for (size_t m = 0; m < sizeof modes / sizeof modes[0]; m++) {
            char opt[600], args[1200];
            snprintf(opt, sizeof opt, modes[m][1], outputs[k]);
            snprintf(args, sizeof args, "'%s' %s 2>&1", first, opt);
            int status;
            char *out = run_tool(modes[m][0], args, &status);
            cr_expect_eq(status, 2, "%s %s: exit %d\n%s", modes[m][0], opt, status, out);
            cr_expect(strstr(out, "refusing to overwrite"), "%s %s:\n%s", modes[m][0], opt, out);
            free(out);
        }
    }
    tbuf after = read_whole_file(last);
    cr_assert(before.len == after.len && !memcmp(before.p, after.p, before.len), "the shard was written");
    tbuf_free(&before);
    tbuf_free(&after);
}

/* A FIFO in place of a shard is refused at once (opened without blocking, then found not regular): no tool
 * waits for a writer that never comes. */
Test(split, a_fifo_for_a_shard_does_not_hang)
{
    write_shards(SPLIT_FAULT_NONE, -1);
    char first[400], middle[400];
    shard_path(0, first, sizeof first);
    shard_path(1, middle, sizeof middle);
    cr_assert_eq(unlink(middle), 0);
    cr_assert_eq(mkfifo(middle, 0600), 0);
    static const char *const tools[] = { "gguf-inspect", "gguf-verify", "gguf-run" };
    for (int t = 0; t < 3; t++) {
        char cmd[1200];
        /* timeout's 124 would mean the tool blocked */
        snprintf(cmd, sizeof cmd, "timeout 20 '%s/%s' '%s' %s 2>&1", bin_dir(), tools[t], first,
                 t == 2 ? "-p hi -n 1" : "");
        int status;
        char *out = run_capture(cmd, &status);
        cr_expect(status == 1 || status == 2, "%s: exit %d (124: it blocked)\n%s", tools[t], status, out);
        cr_expect(strstr(out, "not a regular file"), "%s:\n%s", tools[t], out);
        free(out);
    }
}
