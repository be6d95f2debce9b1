/* Lookups and typed getters, and the atomic file writer. */
#include "fixture_model.h"
#include "testutil.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static tbuf base;
static gguf_file *f;
static void setup(void)
{
    base = base_file();
    cr_assert_eq(gguf_open_memory(base.p, base.len, &f, NULL), GGUF_OK);
}
static void teardown(void)
{
    gguf_close(f);
    tbuf_free(&base);
}
TestSuite(access, .init = setup, .fini = teardown);

Test(access, lookup_finds_every_key_and_tensor_and_nothing_else)
{
    for (size_t i = 0; i < gguf_kv_count(f); i++)
        cr_assert_eq(gguf_find_kv(f, gguf_kv_at(f, i)->key), gguf_kv_at(f, i));
    for (size_t i = 0; i < gguf_tensor_count(f); i++)
        cr_assert_eq(gguf_tensor_by_name(f, gguf_tensor_at(f, i)->name), gguf_tensor_at(f, i));
    cr_assert_null(gguf_find_kv(f, "k.a"));
    cr_assert_null(gguf_find_kv(f, "k.aaa"));
    cr_assert_null(gguf_tensor_by_name(f, "t"));
    cr_assert_null(gguf_kv_at(f, gguf_kv_count(f)));
    cr_assert_null(gguf_tensor_at(f, gguf_tensor_count(f)));
}

Test(access, lookup_in_a_large_index)
{
    gguf_writer *w = gguf_writer_create(3);
    char key[32];
    for (int i = 0; i < 5000; i++) {
        snprintf(key, sizeof key, "k.%d", i);
        gguf_writer_add_u32(w, key, (uint32_t)i * 3u, NULL);
    }
    tbuf b;
    gguf_writer_write_buffer(w, &b.p, &b.len, NULL);
    gguf_file *g;
    cr_assert_eq(gguf_open_memory(b.p, b.len, &g, NULL), GGUF_OK);
    for (int i = 0; i < 5000; i++) {
        snprintf(key, sizeof key, "k.%d", i);
        uint32_t v;
        cr_assert_eq(gguf_get_u32(g, key, &v, NULL), GGUF_OK);
        cr_assert_eq(v, (uint32_t)i * 3u);
    }
    gguf_close(g);
    gguf_writer_free(w);
    tbuf_free(&b);
}

Test(access, typed_getters_fail_clearly)
{
    uint32_t u;
    gguf_error err;
    cr_assert_eq(gguf_get_u32(f, "test.str", &u, &err), GGUF_E_KEY_TYPE);
    cr_assert_str_eq(err.message, "key 'test.str' is a string, expected u32");
    cr_assert_str_eq(err.subject, "test.str");
    cr_assert_eq(err.offset, kv_offset(&base, "test.str"));
    cr_assert_eq(gguf_get_u32(f, "k.aa", &u, &err), GGUF_E_KEY_TYPE);
    cr_assert_str_eq(err.message, "key 'k.aa' is a u8, expected u32");
    cr_assert_eq(gguf_get_u32(f, "nope", &u, &err), GGUF_E_KEY_NOT_FOUND);
    cr_assert(strstr(err.message, "'nope'"));
    cr_assert_eq(gguf_get_u32(f, "general.alignment", &u, &err), GGUF_OK);
    cr_assert_eq(u, 32);
    gguf_str s;
    cr_assert_eq(gguf_get_str(f, "test.str", &s, NULL), GGUF_OK);
    cr_assert(s.len == 5 && memcmp(s.ptr, "hello", 5) == 0);
    const gguf_value *a;
    cr_assert_eq(gguf_get_array(f, "test.str", &a, &err), GGUF_E_KEY_TYPE);
    cr_assert_str_eq(err.message, "key 'test.str' is a string, expected array");
}

Test(access, lenient_integer_getter_checks_range)
{
    int64_t v;
    gguf_error err;
    cr_assert_eq(gguf_get_int(f, "k.aa", 0, 100, &v, NULL), GGUF_OK);
    cr_assert_eq(v, 7);
    cr_assert_eq(gguf_get_int(f, "k.bb", 0, 8, &v, &err), GGUF_E_KEY_TYPE);
    cr_assert(strstr(err.message, "outside [0, 8]"), "%s", err.message);
    cr_assert_eq(gguf_get_int(f, "test.str", 0, 8, &v, NULL), GGUF_E_KEY_TYPE);
}

Test(access, type_table_names_and_lookup)
{
    cr_assert_eq(gguf_type_from_name("q4_k"), GGUF_TENSOR_Q4_K);
    cr_assert_eq(gguf_type_from_name("IQ2_XXS"), GGUF_TENSOR_IQ2_XXS);
    cr_assert_eq(gguf_type_from_name("Q4_KK"), -1);
    cr_assert_eq(gguf_type_traits_of(4)->state, GGUF_TYPE_REMOVED);
    cr_assert_eq(gguf_type_traits_of(5)->state, GGUF_TYPE_REMOVED);
    cr_assert_eq(gguf_type_traits_of(GGUF_TENSOR_COUNT)->state, GGUF_TYPE_UNKNOWN);
    cr_assert_eq(gguf_type_traits_of(UINT32_MAX)->state, GGUF_TYPE_UNKNOWN);
    for (uint32_t t = 0; t < GGUF_TENSOR_COUNT; t++) {
        const gguf_type_traits *tt = gguf_type_traits_of(t);
        if (tt->state == GGUF_TYPE_UNKNOWN)
            continue;
        cr_assert_eq(gguf_type_from_name(tt->name), (int)t, "%s", tt->name);
        cr_assert(tt->block_size > 0 && tt->type_size > 0);
    }
}

Test(access, status_names_are_distinct)
{
    for (int a = 0; a < GGUF_STATUS_COUNT; a++) {
        cr_assert(strncmp(gguf_status_name((gguf_status)a), "GGUF_", 5) == 0);
        for (int b = a + 1; b < GGUF_STATUS_COUNT; b++)
            cr_assert_str_neq(gguf_status_name((gguf_status)a), gguf_status_name((gguf_status)b));
    }
}

/* ---- files ---- */

static char dir[64];
static void mkdir_setup(void)
{
    strcpy(dir, "/tmp/ggufscope-test-XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
}
static int count_entries(const char *d)
{
    DIR *dp = opendir(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(dp)))
        n += e->d_name[0] != '.';
    closedir(dp);
    return n;
}
TestSuite(files, .init = mkdir_setup);

Test(files, write_file_then_open_with_mmap)
{
    char path[128];
    snprintf(path, sizeof path, "%s/m.gguf", dir);
    fixture_opts o = fixture_default_opts();
    gguf_error err;
    cr_assert_eq(fixture_write_file(path, &o, &err), GGUF_OK, "%s", err.message);
    cr_assert_eq(count_entries(dir), 1, "no temporary file left behind");
    gguf_file *g;
    cr_assert_eq(gguf_open(path, &g, &err), GGUF_OK, "%s", err.message);
    cr_assert_eq(gguf_tensor_count(g), 3 + 9 * o.n_layer);
    struct stat st;
    stat(path, &st);
    cr_assert_eq(gguf_file_size(g), (uint64_t)st.st_size);
    cr_assert_eq(st.st_mode & 0777, 0644);
    /* the file the writer made equals the buffer it makes */
    tbuf b;
    fixture_write_buffer(&o, &b.p, &b.len, NULL);
    cr_assert_eq(b.len, gguf_file_size(g));
    cr_assert(memcmp(b.p, gguf_file_bytes(g), b.len) == 0);
    gguf_close(g);
    tbuf_free(&b);
    unlink(path);
    rmdir(dir);
}

static gguf_status failing_fill(void *user, uint8_t *dst, uint64_t at, size_t len)
{
    (void)user; (void)dst; (void)len;
    return at > 0 ? GGUF_E_IO : GGUF_OK;
}

Test(files, failed_write_keeps_the_old_file_and_leaves_nothing)
{
    char path[128];
    snprintf(path, sizeof path, "%s/m.gguf", dir);
    FILE *fp = fopen(path, "w");
    fputs("old contents", fp);
    fclose(fp);
    gguf_writer *w = gguf_writer_create(3);
    uint64_t ne[1] = { 100000 };
    gguf_writer_add_tensor_fill(w, "t", GGUF_TENSOR_F32, 1, ne, failing_fill, NULL, NULL);
    gguf_error err;
    cr_assert_neq(gguf_writer_write_file(w, path, &err), GGUF_OK);
    gguf_writer_free(w);
    char buf[64] = { 0 };
    fp = fopen(path, "r");
    cr_assert_not_null(fgets(buf, sizeof buf, fp));
    fclose(fp);
    cr_assert_str_eq(buf, "old contents");
    cr_assert_eq(count_entries(dir), 1, "the temporary file was removed");
    unlink(path);
    rmdir(dir);
}

Test(files, open_errors_are_io_trouble)
{
    gguf_file *g;
    gguf_error err;
    cr_assert_eq(gguf_open("/nonexistent/x.gguf", &g, &err), GGUF_E_IO);
    cr_assert(strstr(err.message, "No such file"), "%s", err.message);
    cr_assert_null(g);
    cr_assert_eq(gguf_open(dir, &g, &err), GGUF_E_IO);
    cr_assert(strstr(err.message, "not a regular file"), "%s", err.message);
    char path[128];
    snprintf(path, sizeof path, "%s/empty.gguf", dir);
    fclose(fopen(path, "w"));
    cr_assert_eq(gguf_open(path, &g, &err), GGUF_E_EMPTY_FILE, "an empty file is named so (a failed download)");
    unlink(path);
    rmdir(dir);
}

Test(files, opening_never_writes)
{
    char path[128];
    snprintf(path, sizeof path, "%s/m.gguf", dir);
    fixture_opts o = fixture_default_opts();
    fixture_write_file(path, &o, NULL);
    chmod(path, 0444); /* read-only: opening must still work */
    struct stat before, after;
    stat(path, &before);
    gguf_file *g;
    gguf_error err;
    cr_assert_eq(gguf_open(path, &g, &err), GGUF_OK, "%s", err.message);
    gguf_close(g);
    stat(path, &after);
    cr_assert_eq(before.st_mtim.tv_sec, after.st_mtim.tv_sec);
    cr_assert_eq(before.st_mtim.tv_nsec, after.st_mtim.tv_nsec);
    unlink(path);
    rmdir(dir);
}
