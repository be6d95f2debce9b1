/* One test per class of malformed file: each asserts its specific error
 * code, and that the offset and the key or tensor named are the right ones.
 * Fixtures are the writer-made base file with one field patched. */
#include "testutil.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

static tbuf base;
static void setup(void) { base = base_file(); }
static void teardown(void) { tbuf_free(&base); }
TestSuite(malformed, .init = setup, .fini = teardown);

/* Opens b and asserts code, offset and subject. */
static gguf_error expect(const tbuf *b, gguf_status code, uint64_t offset, const char *subject)
{
    gguf_error err = { 0 };
    gguf_status s = open_buf(b, &err);
    cr_assert_eq(s, code, "expected %s, got %s: %s", gguf_status_name(code), gguf_status_name(s), err.message);
    cr_assert_eq(err.code, code);
    cr_assert_eq(err.offset, offset, "offset %llu, expected %llu (%s)", (unsigned long long)err.offset,
                 (unsigned long long)offset, err.message);
    if (subject)
        cr_assert_str_eq(err.subject, subject, "subject '%s', expected '%s'", err.subject, subject);
    cr_assert(strlen(err.message) > 10, "a sentence for the user");
    return err;
}

Test(malformed, base_file_is_valid)
{
    gguf_error err;
    cr_assert_eq(open_buf(&base, &err), GGUF_OK, "%s", err.message);
}

Test(malformed, bad_magic)
{
    base.p[0] = 'X';
    gguf_error e = expect(&base, GGUF_E_BAD_MAGIC, 0, "");
    cr_assert(strstr(e.message, "\\x58GUF") || strstr(e.message, "\\x58"), "%s", e.message);
}

Test(malformed, legacy_ggjt_magic_is_named)
{
    memcpy(base.p, "tjgg", 4);
    gguf_error e = expect(&base, GGUF_E_BAD_MAGIC, 0, "");
    cr_assert(strstr(e.message, "pre-GGUF"), "%s", e.message);
}

Test(malformed, version_1_rejected_with_supported_list)
{
    put_u32le(base.p + 4, 1);
    gguf_error e = expect(&base, GGUF_E_VERSION, 4, "");
    cr_assert(strstr(e.message, "version 1") && strstr(e.message, "2 and 3"), "%s", e.message);
}

Test(malformed, unknown_version)
{
    put_u32le(base.p + 4, 7);
    gguf_error e = expect(&base, GGUF_E_VERSION, 4, "");
    cr_assert(strstr(e.message, "version 7"), "%s", e.message);
}

Test(malformed, big_endian_recognised)
{
    base.p[4] = 0; base.p[5] = 0; base.p[6] = 0; base.p[7] = 3;
    gguf_error e = expect(&base, GGUF_E_BIG_ENDIAN, 4, "");
    cr_assert(strstr(e.message, "big-endian"), "%s", e.message);
}

Test(malformed, impossible_tensor_count)
{
    put_u64le(base.p + 8, 1ull << 40);
    expect(&base, GGUF_E_TENSOR_COUNT, 8, "");
}

Test(malformed, impossible_kv_count)
{
    put_u64le(base.p + 16, 1ull << 40);
    expect(&base, GGUF_E_KV_COUNT, 16, "");
}

Test(malformed, key_length_past_end)
{
    uint64_t at = kv_offset(&base, "test.str");
    put_u64le(base.p + at, base.len);
    expect(&base, GGUF_E_STRING_LENGTH, at, "key #2 (after 'general.alignment')");
}

Test(malformed, string_value_length_past_end)
{
    uint64_t at = kv_value_offset(&base, "test.str");
    put_u64le(base.p + at, UINT64_MAX - 3);
    expect(&base, GGUF_E_STRING_LENGTH, at, "test.str");
}

Test(malformed, string_array_element_past_end)
{
    uint64_t at = kv_value_offset(&base, "test.strs") + 4 + 8; /* first element's length */
    put_u64le(base.p + at, 1ull << 33);
    expect(&base, GGUF_E_STRING_LENGTH, at, "test.strs");
}

Test(malformed, invalid_value_type)
{
    uint64_t at = kv_type_offset(&base, "k.aa");
    put_u32le(base.p + at, 13);
    expect(&base, GGUF_E_VALUE_TYPE, at, "k.aa");
}

Test(malformed, invalid_array_element_type)
{
    uint64_t at = kv_value_offset(&base, "test.arr");
    put_u32le(base.p + at, 99);
    expect(&base, GGUF_E_ARRAY_TYPE, at, "test.arr");
}

Test(malformed, absurd_array_count)
{
    uint64_t at = kv_value_offset(&base, "test.arr");
    put_u64le(base.p + at + 4, 1ull << 50);
    gguf_error e = expect(&base, GGUF_E_ARRAY_COUNT, at + 4, "test.arr");
    cr_assert(strstr(e.message, "1125899906842624"), "%s", e.message);
}

Test(malformed, empty_key)
{
    uint64_t at = kv_offset(&base, "k.aa");
    put_u64le(base.p + at, 0);
    expect(&base, GGUF_E_EMPTY_KEY, at, "key #5 (after 'test.strs')");
}

Test(malformed, duplicate_key)
{
    uint64_t at = kv_offset(&base, "k.bb");
    memcpy(base.p + at + 8, "k.aa", 4);
    gguf_error e = expect(&base, GGUF_E_DUPLICATE_KEY, at, "k.aa");
    cr_assert(strstr(e.message, "twice"), "%s", e.message);
}

Test(malformed, nul_in_key)
{
    uint64_t at = kv_offset(&base, "k.bb");
    base.p[at + 8 + 1] = 0;
    expect(&base, GGUF_E_NUL_IN_NAME, at, "key #6 (after 'k.aa')");
}

Test(malformed, empty_tensor_name)
{
    uint64_t at = tensor_info_offset(&base, "tb");
    put_u64le(base.p + at, 0);
    expect(&base, GGUF_E_EMPTY_NAME, at, "tensor #1");
}

Test(malformed, duplicate_tensor_name)
{
    uint64_t at = tensor_info_offset(&base, "tb");
    base.p[at + 8 + 1] = 'a';
    expect(&base, GGUF_E_DUPLICATE_NAME, at, "ta");
}

Test(malformed, zero_dims)
{
    uint64_t at = tensor_ndims_offset(&base, "ta");
    put_u32le(base.p + at, 0);
    expect(&base, GGUF_E_N_DIMS, at, "ta");
}

Test(malformed, five_dims)
{
    uint64_t at = tensor_ndims_offset(&base, "ta");
    put_u32le(base.p + at, 5);
    expect(&base, GGUF_E_N_DIMS, at, "ta");
}

Test(malformed, zero_dim)
{
    uint64_t at = tensor_dim_offset(&base, "tb", 1);
    put_u64le(base.p + at, 0);
    expect(&base, GGUF_E_ZERO_DIM, at, "tb");
}

Test(malformed, element_count_overflow)
{
    uint64_t info = tensor_info_offset(&base, "tb");
    put_u64le(base.p + tensor_dim_offset(&base, "tb", 1), 1ull << 62);
    expect(&base, GGUF_E_ELEMENT_OVERFLOW, info, "tb");
}

Test(malformed, byte_size_overflow)
{
    /* 32 x 2^57 = 2^62 F32 elements fit in int64, but 2^64 bytes do not fit in u64 */
    uint64_t info = tensor_info_offset(&base, "tb");
    put_u64le(base.p + tensor_dim_offset(&base, "tb", 1), 1ull << 57);
    expect(&base, GGUF_E_SIZE_OVERFLOW, info, "tb");
}

Test(malformed, offset_plus_size_overflow)
{
    uint64_t info = tensor_info_offset(&base, "tb");
    put_u64le(base.p + tensor_offset_offset(&base, "tb"), UINT64_MAX - 31);
    expect(&base, GGUF_E_SIZE_OVERFLOW, info, "tb");
}

Test(malformed, unknown_type)
{
    uint64_t at = tensor_type_offset(&base, "ta");
    put_u32le(base.p + at, 99);
    expect(&base, GGUF_E_UNKNOWN_TYPE, at, "ta");
}

Test(malformed, removed_types)
{
    static const uint32_t removed[] = { 4, 5, 31, 32, 33, 36, 37, 38 };
    uint64_t at = tensor_type_offset(&base, "ta");
    for (size_t i = 0; i < sizeof removed / sizeof removed[0]; i++) {
        tbuf b = tbuf_copy(&base);
        put_u32le(b.p + at, removed[i]);
        gguf_error e = expect(&b, GGUF_E_REMOVED_TYPE, at, "ta");
        cr_assert(strstr(e.message, gguf_type_traits_of(removed[i])->name), "%s", e.message);
        tbuf_free(&b);
    }
}

Test(malformed, first_dim_not_block_multiple)
{
    uint64_t info = tensor_info_offset(&base, "tq");
    put_u64le(base.p + tensor_dim_offset(&base, "tq", 0), 48);
    gguf_error e = expect(&base, GGUF_E_BLOCK_MULTIPLE, info, "tq");
    cr_assert(strstr(e.message, "48") && strstr(e.message, "Q8_0"), "%s", e.message);
}

Test(malformed, misaligned_offset)
{
    uint64_t at = tensor_offset_offset(&base, "tb");
    put_u64le(base.p + at, get_u64le(base.p + at) + 4);
    expect(&base, GGUF_E_MISALIGNED, at, "tb");
}

Test(malformed, truncated_data_names_tensor_and_missing_bytes)
{
    gguf_file *f;
    gguf_open_memory(base.p, base.len, &f, NULL);
    uint64_t tq_start = gguf_data_offset(f) + gguf_tensor_by_name(f, "tq")->offset;
    gguf_close(f);
    base.len -= 50;
    gguf_error e = expect(&base, GGUF_E_DATA_PAST_END, tq_start, "tq");
    /* tq is 68 bytes followed by 28 bytes of padding: cutting 50 leaves it 22 short */
    cr_assert(strstr(e.message, "22 B missing"), "%s", e.message);
    cr_assert(strstr(e.message, "truncated"), "%s", e.message);
}

Test(malformed, overlapping_tensors)
{
    uint64_t at = tensor_offset_offset(&base, "tb");
    gguf_file *f;
    gguf_open_memory(base.p, base.len, &f, NULL);
    uint64_t data = gguf_data_offset(f);
    gguf_close(f);
    put_u64le(base.p + at, 128); /* ta occupies 0-256 */
    gguf_error e = expect(&base, GGUF_E_OVERLAP, data + 128, "tb");
    cr_assert(strstr(e.message, "'ta'"), "%s", e.message);
}

Test(malformed, alignment_not_power_of_two)
{
    uint64_t kv = kv_offset(&base, "general.alignment");
    put_u32le(base.p + kv_value_offset(&base, "general.alignment"), 48);
    expect(&base, GGUF_E_ALIGNMENT, kv, "general.alignment");
}

Test(malformed, alignment_zero)
{
    uint64_t kv = kv_offset(&base, "general.alignment");
    put_u32le(base.p + kv_value_offset(&base, "general.alignment"), 0);
    expect(&base, GGUF_E_ALIGNMENT, kv, "general.alignment");
}

Test(malformed, alignment_wrong_type)
{
    uint64_t kv = kv_offset(&base, "general.alignment");
    put_u32le(base.p + kv_type_offset(&base, "general.alignment"), GGUF_VT_INT32);
    gguf_error e = expect(&base, GGUF_E_ALIGNMENT, kv, "general.alignment");
    cr_assert(strstr(e.message, "i32") && strstr(e.message, "u32"), "%s", e.message);
}

/* Hand-assembled: the writer refuses to nest arrays this deep. */
Test(malformed, arrays_nested_too_deep)
{
    uint8_t img[512];
    size_t n = 0;
    memcpy(img, "GGUF", 4);
    put_u32le(img + 4, 3);
    put_u64le(img + 8, 0);
    put_u64le(img + 16, 1);
    n = 24;
    put_u64le(img + n, 1);
    img[n + 8] = 'k';
    put_u32le(img + n + 9, GGUF_VT_ARRAY);
    n += 13;
    for (int d = 0; d < GGUF_MAX_ARRAY_DEPTH + 2; d++) {
        put_u32le(img + n, GGUF_VT_ARRAY);
        put_u64le(img + n + 4, 1);
        n += 12;
    }
    tbuf b = { img, n };
    gguf_error err;
    cr_assert_eq(open_buf(&b, &err), GGUF_E_ARRAY_DEPTH, "%s", err.message);
    cr_assert_str_eq(err.subject, "k");
}

/* ---- conditions the spec allows and llama.cpp refuses: warnings ---- */

static const gguf_warning *only_warning(gguf_file *f, gguf_warning_kind kind)
{
    cr_assert_eq(gguf_warning_count(f), 1, "expected one warning, got %zu", gguf_warning_count(f));
    const gguf_warning *w = gguf_warning_at(f, 0);
    cr_assert_eq(w->kind, kind);
    cr_assert(strncmp(w->message, "llama.cpp would refuse this file because", 40) == 0, "%s", w->message);
    return w;
}

Test(malformed, valid_file_has_no_warnings)
{
    gguf_file *f;
    cr_assert_eq(gguf_open_memory(base.p, base.len, &f, NULL), GGUF_OK);
    cr_assert_eq(gguf_warning_count(f), 0);
    gguf_close(f);
}

Test(malformed, gap_between_tensors_is_a_warning)
{
    uint64_t at = tensor_offset_offset(&base, "tq");
    put_u64le(base.p + at, get_u64le(base.p + at) + 64);
    tbuf b = { calloc(1, base.len + 64), base.len + 64 };
    memcpy(b.p, base.p, base.len);
    gguf_file *f;
    gguf_error err;
    cr_assert_eq(gguf_open_memory(b.p, b.len, &f, &err), GGUF_OK, "%s", err.message);
    const gguf_warning *w = only_warning(f, GGUF_W_GAP);
    cr_assert_str_eq(w->subject, "tq");
    cr_assert(strstr(w->message, "64-byte gap"), "%s", w->message);
    gguf_close(f);
    free(b.p);
}

Test(malformed, reordered_tensors_are_a_warning)
{
    uint64_t a = tensor_offset_offset(&base, "ta"), b = tensor_offset_offset(&base, "tb");
    uint64_t oa = get_u64le(base.p + a), ob = get_u64le(base.p + b);
    put_u64le(base.p + a, ob);
    put_u64le(base.p + b, oa);
    gguf_file *f;
    gguf_error err;
    cr_assert_eq(gguf_open_memory(base.p, base.len, &f, &err), GGUF_OK, "%s", err.message);
    only_warning(f, GGUF_W_REORDER);
    gguf_close(f);
}

Test(malformed, long_tensor_name_is_a_warning)
{
    gguf_writer *w = gguf_writer_create(3);
    char name[80];
    memset(name, 'n', 70);
    name[70] = '\0';
    static float data[32];
    uint64_t ne[1] = { 32 };
    cr_assert_eq(gguf_writer_add_tensor(w, name, GGUF_TENSOR_F32, 1, ne, data, NULL), GGUF_OK);
    tbuf b;
    cr_assert_eq(gguf_writer_write_buffer(w, &b.p, &b.len, NULL), GGUF_OK);
    gguf_writer_free(w);
    gguf_file *f;
    cr_assert_eq(gguf_open_memory(b.p, b.len, &f, NULL), GGUF_OK);
    const gguf_warning *wr = only_warning(f, GGUF_W_LONG_NAME);
    cr_assert(strstr(wr->message, "70-byte name"), "%s", wr->message);
    gguf_close(f);
    tbuf_free(&b);
}
