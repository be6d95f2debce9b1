/* Every prefix of a valid file is rejected, cleanly, with a code that says
 * the file ends early; the whole file is accepted. */
#include "fixture_model.h"
#include "testutil.h"

#include <criterion/criterion.h>
#include <stdlib.h>

static bool is_truncation(gguf_status s)
{
    return s == GGUF_E_EMPTY_FILE || s == GGUF_E_TRUNCATED || s == GGUF_E_STRING_LENGTH || s == GGUF_E_DATA_PAST_END ||
           s == GGUF_E_TENSOR_COUNT || s == GGUF_E_KV_COUNT || s == GGUF_E_ARRAY_COUNT;
}

/* Where the last tensor's data ends: what follows is alignment padding, and
 * a file cut inside that padding is still complete. */
static size_t data_end(const tbuf *full)
{
    gguf_file *f;
    cr_assert_eq(gguf_open_memory(full->p, full->len, &f, NULL), GGUF_OK);
    uint64_t end = 0;
    for (size_t i = 0; i < gguf_tensor_count(f); i++) {
        const gguf_tensor *t = gguf_tensor_at(f, i);
        uint64_t e = gguf_data_offset(f) + t->offset + t->size;
        end = e > end ? e : end;
    }
    gguf_close(f);
    cr_assert(end > 0 && end <= full->len);
    return (size_t)end;
}

static void check_prefixes(const tbuf *full, size_t step)
{
    size_t complete = data_end(full);
    cr_assert_lt(complete, full->len, "the fixture should end in padding, to test both sides");
    for (size_t len = 0; len < full->len; len += (len < 4096 ? 1 : step)) {
        tbuf b = { full->p, len };
        gguf_error err = { 0 };
        gguf_status s = open_buf(&b, &err);
        if (len >= complete) {
            cr_assert_eq(s, GGUF_OK, "prefix of %zu bytes holds all tensor data: %s", len, err.message);
            continue;
        }
        cr_assert(is_truncation(s), "prefix of %zu bytes: %s (%s)", len, gguf_status_name(s), err.message);
        cr_assert(err.offset <= full->len, "offset %llu past the original file", (unsigned long long)err.offset);
    }
    gguf_error err;
    cr_assert_eq(open_buf(full, &err), GGUF_OK, "%s", err.message);
}

Test(prefix, every_prefix_of_small_file)
{
    tbuf b = base_file();
    check_prefixes(&b, 1);
    tbuf_free(&b);
}

Test(prefix, header_prefixes_of_fixture_model, .timeout = 120)
{
    fixture_opts o = fixture_default_opts();
    o.n_layer = 1;
    o.n_vocab = 260;
    tbuf b;
    cr_assert_eq(fixture_write_buffer(&o, &b.p, &b.len, NULL), GGUF_OK);
    check_prefixes(&b, 997);
    tbuf_free(&b);
}
