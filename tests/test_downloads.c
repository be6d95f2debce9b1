/* Broken downloads named as what they are. A file that is not GGUF gets its kind and what to do (an LFS
 * pointer, a web page or a server's error, an empty file, an archive, safetensors, a pickle); a truncated file
 * still shows its metadata and which tensors are complete, and with a manifest whether what arrived is intact;
 * a file appended to itself is an error naming where it should end. Fixtures: the model writer's files, cut,
 * doubled and replaced at test time. */
#include "engine.h"
#include "fixture_model.h"
#include "kern.h"
#include "testutil.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static char dir[128];
static char model[192];   /* a whole fixture model */
static tbuf whole;

static void setup(void)
{
    cr_assert(tmp_dir_make(dir, "downloads"));
    snprintf(model, sizeof model, "%s/model.gguf", dir);
    gguf_error err;
    fixture_opts o = fixture_default_opts();
    cr_assert_eq(fixture_write_file(model, &o, &err), GGUF_OK, "%s", err.message);
    whole = read_whole_file(model);
    cr_assert(whole.p);
}
static void teardown(void)
{
    tbuf_free(&whole);
    tmp_dir_remove(dir);
}
TestSuite(downloads, .init = setup, .fini = teardown, .timeout = 120);

static char *write_tmp(const char *name, const void *p, size_t len)
{
    static char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    cr_assert(write_whole_file(path, p, len));
    return path;
}

/* gguf_open's status and message for a file holding text. */
static gguf_status open_text(const char *text, size_t len, gguf_error *err)
{
    gguf_file *f = NULL;
    gguf_status s = gguf_open(write_tmp("page.gguf", text, len), &f, err);
    cr_assert_null(f);
    return s;
}

Test(downloads, an_lfs_pointer_says_the_model_was_never_fetched)
{
    const char t[] = "version https://git-lfs.github.com/spec/v1\n"
                     "oid sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08\n"
                     "size 98362432\n";
    gguf_error e;
    cr_assert_eq(open_text(t, sizeof t - 1, &e), GGUF_E_LFS_POINTER, "%s", e.message);
    cr_assert(strstr(e.message, "git lfs pull"), "%s", e.message);
    cr_assert(strstr(e.message, "93.8 MiB"), "the pointer's size: %s", e.message);
    cr_assert(strstr(e.message, "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"), "%s", e.message);
}

/* A pointer whose last bytes are its size, with nothing after them, read from memory of exactly its length: the size
 * is parsed within the bytes (found by fuzz-open: sscanf ran past the end of a buffer with no NUL). */
Test(downloads, an_lfs_pointer_ending_in_its_size_is_read_within_its_bytes)
{
    static const char t[] = "version https://git-lfs.github.com/spec/v1\noid sha256:00\nsize 4096382";
    const size_t n = sizeof t - 1;
    char *exact = malloc(n); /* no byte after the last digit for a scan to run into */
    cr_assert(exact);
    memcpy(exact, t, n);
    gguf_file *f = NULL;
    gguf_error e;
    cr_assert_eq(gguf_open_memory(exact, n, &f, &e), GGUF_E_LFS_POINTER, "%s", e.message);
    cr_assert_null(f);
    cr_assert(strstr(e.message, "3.91 MiB"), "the pointer's size: %s", e.message);
    free(exact);
}

Test(downloads, web_pages_and_server_errors_are_named_with_their_title_or_error)
{
    static const struct {
        const char *text, *shows;
    } pages[] = {
        { "\xef\xbb\xbf  <!DOCTYPE html>\n<html><head><title>404 Not Found</title></head><body></body></html>",
          "an HTML page (titled \"404 Not Found\")" },
        { "<html><head>\n<title>\n  Access to model  \x1b[31mrestricted\n</title>", "titled \"Access to model ?[31mrestricted\"" },
        { "{\"error\":\"Invalid username or password.\"}", "a JSON document (error: \"Invalid username or password.\")" },
        { "{\"detail\": \"Not Found\"}", "(detail: \"Not Found\")" },
        { "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>AccessDenied</Code></Error>",
          "an XML document (error code \"AccessDenied\")" },
    };
    for (size_t i = 0; i < sizeof pages / sizeof *pages; i++) {
        gguf_error e;
        cr_assert_eq(open_text(pages[i].text, strlen(pages[i].text), &e), GGUF_E_WEB_PAGE, "page %zu: %s", i,
                     e.message);
        cr_assert(strstr(e.message, pages[i].shows), "page %zu: %s", i, e.message);
        cr_assert(strstr(e.message, "'resolve'"), "the advice: %s", e.message);
        for (const char *c = e.message; *c; c++) /* text from the file reaches the message printable */
            cr_assert(*c >= 0x20 && *c < 0x7f, "page %zu: byte 0x%02x in the message", i, (unsigned char)*c);
    }
}

Test(downloads, empty_files_archives_and_other_formats_are_named)
{
    uint8_t safetensors[64] = { 20, 0, 0, 0, 0, 0, 0, 0 };
    memcpy(safetensors + 8, "{\"__metadata__\":{}} ", 20);
    uint8_t tar[600] = { 0 };
    memcpy(tar + 257, "ustar", 5);
    static const uint8_t gz[] = { 0x1f, 0x8b, 8, 0, 0, 0, 0, 0 }, zip[] = { 'P', 'K', 3, 4, 20, 0 },
                         pickle[] = { 0x80, 0x02, 0x7d, 0x71 }, zst[] = { 0x28, 0xb5, 0x2f, 0xfd, 0 };
    const struct {
        const uint8_t *p;
        size_t len;
        gguf_status code;
        const char *shows;
    } cases[] = {
        { gz, 0, GGUF_E_EMPTY_FILE, "empty (0 bytes)" },
        { gz, sizeof gz, GGUF_E_FOREIGN_FORMAT, "gzip" },
        { zip, sizeof zip, GGUF_E_FOREIGN_FORMAT, "PyTorch" },
        { zst, sizeof zst, GGUF_E_FOREIGN_FORMAT, "zstd" },
        { pickle, sizeof pickle, GGUF_E_FOREIGN_FORMAT, "pickle" },
        { safetensors, sizeof safetensors, GGUF_E_FOREIGN_FORMAT, "convert_hf_to_gguf.py" },
        { tar, sizeof tar, GGUF_E_FOREIGN_FORMAT, "tar archive" },
        { (const uint8_t *)"GG", 2, GGUF_E_TRUNCATED, "too short" },
        { (const uint8_t *)"tjggxxxx", 8, GGUF_E_BAD_MAGIC, "pre-GGUF" },
        { (const uint8_t *)"\x01\x02\x03\x04\x05", 5, GGUF_E_BAD_MAGIC, "starts with \\x01\\x02\\x03\\x04" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        gguf_file *f = NULL;
        gguf_error e;
        cr_assert_eq(gguf_open(write_tmp("other.gguf", cases[i].p, cases[i].len), &f, &e), cases[i].code,
                     "case %zu: %s [%s]", i, e.message, gguf_status_name(e.code));
        cr_assert(strstr(e.message, cases[i].shows), "case %zu: %s", i, e.message);
    }
}

Test(downloads, the_tools_exit_1_naming_the_kind)
{
    const char t[] = "version https://git-lfs.github.com/spec/v1\noid sha256:00\nsize 12\n";
    char args[512];
    snprintf(args, sizeof args, "%s 2>&1", write_tmp("lfs.gguf", t, sizeof t - 1));
    const char *tools[] = { "gguf-inspect", "gguf-verify" };
    for (int i = 0; i < 2; i++) {
        int st;
        char *out = run_tool(tools[i], args, &st);
        cr_assert_eq(st, 1, "%s: exit %d: %s", tools[i], st, out);
        cr_assert(strstr(out, "git LFS pointer") && strstr(out, "GGUF_E_LFS_POINTER"), "%s: %s", tools[i], out);
        free(out);
    }
}

/* The whole fixture cut at `at` bytes. */
static char *cut(size_t at) { return write_tmp("cut.gguf", whole.p, at); }

/* The fixture's tensor whose data spans byte `at` of the file, in a whole copy. */
static const gguf_tensor *tensor_spanning(const gguf_file *f, uint64_t at)
{
    for (size_t i = 0; i < gguf_tensor_count(f); i++) {
        const gguf_tensor *t = gguf_tensor_at(f, i);
        if (gguf_data_offset(f) + t->offset < at && at < gguf_data_offset(f) + t->offset + t->size)
            return t;
    }
    return NULL;
}

Test(downloads, a_truncated_file_opens_partially_with_its_complete_tensors)
{
    gguf_file *full, *f = NULL;
    gguf_error e;
    cr_assert_eq(gguf_open(model, &full, &e), GGUF_OK);
    const size_t at = whole.len / 2;
    const gguf_tensor *split_tensor = tensor_spanning(full, at);
    cr_assert_not_null(split_tensor, "the cut falls inside a tensor");
    const char *path = cut(at);
    cr_assert_eq(gguf_open(path, &f, &e), GGUF_E_DATA_PAST_END, "gguf_open still refuses it");
    cr_assert_null(f);
    cr_assert_eq(gguf_open_partial(path, &f, &e), GGUF_OK, "%s", e.message);
    gguf_error why;
    cr_assert_eq(gguf_missing_bytes(f, &why), whole.len - at);
    cr_assert_eq(why.code, GGUF_E_DATA_PAST_END);
    cr_assert_str_eq(why.subject, split_tensor->name, "the first incomplete tensor is named");
    cr_assert_eq(gguf_kv_count(f), gguf_kv_count(full), "the metadata is all there");
    size_t complete = 0;
    for (size_t i = 0; i < gguf_tensor_count(f); i++) {
        const gguf_tensor *t = gguf_tensor_at(f, i), *w = gguf_tensor_at(full, i);
        const bool fits = gguf_data_offset(f) + t->offset + t->size <= at;
        cr_assert_eq(t->data != NULL, fits, "%s: data set only when all its bytes are there", t->name);
        if (fits)
            cr_assert_eq(memcmp(t->data, w->data, t->size), 0);
        complete += fits;
    }
    gguf_coverage c;
    cr_assert_eq(gguf_data_coverage(f, &c, &e), GGUF_OK);
    cr_assert_eq(c.complete_tensors, complete);
    cr_assert_eq(c.partial_tensors, 1);
    cr_assert_eq(c.partial_bytes, at - (gguf_data_offset(f) + split_tensor->offset));
    cr_assert_eq(c.missing_bytes, whole.len - at);
    cr_assert_eq(c.trailing_bytes, 0, "the cut tensor's bytes are not trailing bytes");

    /* the complete tensors' digests are the whole file's; the model's cannot be computed */
    gguf_hash_request req = { GGUF_HASH_BIT(GGUF_HASH_SHA256), GGUF_HASH_BIT(GGUF_HASH_SHA256), true, false, 1,
                              NULL, NULL };
    gguf_hashes hp, hf;
    cr_assert_eq(gguf_hash_file(f, &req, &hp, &e), GGUF_OK);
    cr_assert_eq(gguf_hash_file(full, &req, &hf, &e), GGUF_OK);
    cr_assert_eq(hp.model[GGUF_HASH_SHA256].len, 0);
    cr_assert_not(hp.has_uuid);
    for (size_t i = 0; i < gguf_tensor_count(f); i++) {
        const gguf_digest *d = &hp.tensor[i][GGUF_HASH_SHA256];
        if (!gguf_tensor_at(f, i)->data)
            cr_assert_eq(d->len, 0);
        else
            cr_assert(d->len == 32 && memcmp(d->bytes, hf.tensor[i][GGUF_HASH_SHA256].bytes, 32) == 0);
    }
    /* against the whole file's manifest: the complete tensors OK, the rest and the model lines incomplete */
    char *text = gguf_manifest_format(full, &hf, GGUF_HASH_BIT(GGUF_HASH_SHA256), true, "model.gguf");
    gguf_manifest *m;
    cr_assert_eq(gguf_manifest_parse(text, strlen(text), &m, &e), GGUF_OK, "%s", e.message);
    gguf_check_report r;
    cr_assert_eq(gguf_manifest_check(m, f, &hp, &r, &e), GGUF_OK);
    cr_assert_eq(r.n_ok, complete);
    cr_assert_eq(r.n_mismatch, 0);
    cr_assert_eq(r.n_incomplete, gguf_tensor_count(f) - complete + 2, "the other tensors, the model line, the uuid");

    /* an engine given it refuses it, naming a tensor, and reads nothing that is not there */
    kern_backend *cpu = kern_cpu_create(1);
    engine_model *em = NULL;
    engine_error ee;
    cr_assert_eq(engine_model_load(f, cpu, &em, &ee), ENGINE_E_MODEL);
    cr_assert(strstr(ee.message, "truncated"), "%s", ee.message);
    cpu->destroy(cpu);

    gguf_check_report_free(&r);
    gguf_manifest_free(m);
    free(text);
    gguf_hashes_free(&hp);
    gguf_hashes_free(&hf);
    gguf_close(f);
    gguf_close(full);
}

Test(downloads, inspect_lists_a_truncated_file_marking_its_tensors)
{
    const size_t at = whole.len / 2;
    char args[512];
    snprintf(args, sizeof args, "%s 2>&1", cut(at));
    int st;
    char *out = run_tool("gguf-inspect", args, &st);
    cr_assert_eq(st, 1, "exit %d: %s", st, out);
    cr_assert(strstr(out, "GGUF_E_DATA_PAST_END"), "the error first: %s", out);
    cr_assert(strstr(out, "TRUNCATED:"), "%s", out);
    cr_assert(strstr(out, "general.architecture"), "the metadata is shown: %s", out);
    cr_assert(strstr(out, "INCOMPLETE:") && strstr(out, "MISSING"), "%s", out);
    free(out);
    snprintf(args, sizeof args, "%s --json", cut(at));
    out = run_tool("gguf-inspect", args, &st);
    cr_assert_eq(st, 1);
    cr_assert(strstr(out, "\"missing_bytes\"") && strstr(out, "\"complete\":false") &&
                  strstr(out, "\"bytes_present\""), "%s", out);
    free(out);
    snprintf(args, sizeof args, "%s --stats 2>&1", cut(at)); /* reading values needs them all */
    out = run_tool("gguf-inspect", args, &st);
    cr_assert_eq(st, 1, "exit %d: %s", st, out);
    free(out);
}

Test(downloads, verify_counts_what_arrived_and_checks_it_against_a_manifest)
{
    char manifest[256], args[768];
    snprintf(manifest, sizeof manifest, "%s/model.manifest", dir);
    snprintf(args, sizeof args, "%s --write-manifest=%s", model, manifest);
    int st;
    free(run_tool("gguf-verify", args, &st));
    cr_assert_eq(st, 0);
    const size_t at = whole.len / 2;
    char *path = cut(at);
    snprintf(args, sizeof args, "%s --manifest %s", path, manifest);
    char *out = run_tool("gguf-verify", args, &st);
    cr_assert_eq(st, 1, "exit %d: %s", st, out);
    cr_assert(strstr(out, "[truncated]") && strstr(out, "missing") && strstr(out, "cut short"), "%s", out);
    cr_assert(strstr(out, "[present-tensors]") && strstr(out, " 0 differ") && strstr(out, "resuming the download is safe"),
              "%s", out);
    free(out);
    /* a byte changed in a complete tensor: what arrived is not intact */
    gguf_file *full;
    gguf_error e;
    cr_assert_eq(gguf_open(model, &full, &e), GGUF_OK);
    const gguf_tensor *t0 = gguf_tensor_at(full, 0);
    cr_assert(gguf_data_offset(full) + t0->offset + t0->size <= at);
    tbuf bad = tbuf_copy(&whole);
    bad.p[gguf_data_offset(full) + t0->offset] ^= 0x40;
    gguf_close(full);
    path = write_tmp("cut-bad.gguf", bad.p, at);
    tbuf_free(&bad);
    snprintf(args, sizeof args, "%s --manifest %s", path, manifest);
    out = run_tool("gguf-verify", args, &st);
    cr_assert_eq(st, 1);
    cr_assert(strstr(out, "[checksum-mismatch]") && strstr(out, " 1 differ") && strstr(out, "again from the start"),
              "%s", out);
    free(out);
    /* no manifest of an incomplete model */
    snprintf(args, sizeof args, "%s --write-manifest=%s/cut.manifest 2>&1", path, dir);
    out = run_tool("gguf-verify", args, &st);
    cr_assert_eq(st, 1, "exit %d: %s", st, out);
    char written[256];
    snprintf(written, sizeof written, "%s/cut.manifest", dir);
    struct stat sb;
    cr_assert_neq(stat(written, &sb), 0, "no manifest was written");
    free(out);
}

Test(downloads, a_file_appended_to_itself_is_an_error_naming_where_it_ends)
{
    tbuf twice = { malloc(2 * whole.len), 2 * whole.len };
    memcpy(twice.p, whole.p, whole.len);
    memcpy(twice.p + whole.len, whole.p, whole.len);
    char args[512];
    snprintf(args, sizeof args, "%s --no-audit", write_tmp("twice.gguf", twice.p, twice.len));
    int st;
    char *out = run_tool("gguf-verify", args, &st);
    cr_assert_eq(st, 1, "exit %d: %s", st, out);
    char where[64];
    snprintf(where, sizeof where, "truncate -s %zu", whole.len);
    cr_assert(strstr(out, "[appended-file]") && strstr(out, "a copy of the file's own first bytes") &&
                  strstr(out, where), "%s", out);
    cr_assert_null(strstr(out, "[trailing-bytes]"), "one finding, not two: %s", out);
    free(out);
    /* half a second copy (a resumed download stopped again) is still named a copy */
    snprintf(args, sizeof args, "%s --no-audit", write_tmp("once-and-half.gguf", twice.p, whole.len + whole.len / 2));
    out = run_tool("gguf-verify", args, &st);
    cr_assert_eq(st, 1);
    cr_assert(strstr(out, "a copy of the file's own first bytes"), "%s", out);
    free(out);
    /* the file itself: no such finding */
    snprintf(args, sizeof args, "%s --no-audit", model);
    out = run_tool("gguf-verify", args, &st);
    cr_assert_null(strstr(out, "[appended-file]"), "%s", out);
    free(out);
    tbuf_free(&twice);
}

/* The fuzzer's find (fuzz-open and fuzz-tokenize, 2026-12-02): a quoted text whose space and next character
 * both landed on the last free byte wrote past the quote's buffer. Every length and spacing, every size. */
Test(downloads, quoted_text_never_passes_its_buffer)
{
    char text[300], out[128];
    for (size_t cap = 8; cap <= sizeof out; cap++)
        for (size_t k = 0; k < 200; k++) {
            memset(text, 'a', sizeof text);
            for (size_t s = k % 3; s < sizeof text; s += 2 + k % 5)
                text[s] = s % 7 ? ' ' : '\x1b';
            memset(out, 0x55, sizeof out);
            gguf_excerpt(text, k, out, cap);
            const size_t len = strlen(out);
            cr_assert_lt(len, cap, "cap %zu, length %zu", cap, k);
            for (size_t i = cap; i < sizeof out; i++)
                cr_assert_eq((unsigned char)out[i], 0x55, "cap %zu, length %zu: byte %zu written", cap, k, i);
            for (size_t i = 0; i < len; i++)
                cr_assert(out[i] >= 0x20 && out[i] < 0x7f);
        }
    for (size_t k = 60; k < 120; k++) { /* through the reader: a JSON page of spaced words */
        char page[200] = "[";
        for (size_t i = 1; i < k; i++)
            page[i] = i % 2 ? 'x' : ' ';
        gguf_error e;
        cr_assert_eq(open_text(page, k, &e), GGUF_E_WEB_PAGE);
    }
}
