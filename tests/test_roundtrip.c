/* Writer -> reader round trips: every value type with its extreme values,
 * arrays of every type (strings, nested), every storable tensor type in
 * 1-4 dimensions, both versions and several alignments. */
#include "testutil.h"

#include <criterion/criterion.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static gguf_file *reopen(gguf_writer *w, tbuf *b)
{
    gguf_error err;
    cr_assert_eq(gguf_writer_write_buffer(w, &b->p, &b->len, &err), GGUF_OK, "%s", err.message);
    cr_assert_eq(gguf_writer_size(w), b->len);
    gguf_file *f;
    cr_assert_eq(gguf_open_memory(b->p, b->len, &f, &err), GGUF_OK, "%s", err.message);
    return f;
}

/* Writes f again from what the reader holds (every key by gguf_writer_add_copy, every tensor's data): the result
 * must be the same bytes, which is what a tool that rewrites a model (gguf-quantize) relies on. */
static void assert_copy_is_identical(const tbuf *b)
{
    gguf_file *f;
    gguf_error err;
    cr_assert_eq(gguf_open_memory(b->p, b->len, &f, &err), GGUF_OK, "%s", err.message);
    gguf_writer *w = gguf_writer_create(gguf_version(f));
    for (size_t i = 0; i < gguf_kv_count(f); i++)
        cr_assert_eq(gguf_writer_add_copy(w, gguf_kv_at(f, i)->key, &gguf_kv_at(f, i)->value, &err), GGUF_OK, "%s",
                     err.message);
    for (size_t i = 0; i < gguf_tensor_count(f); i++) {
        const gguf_tensor *t = gguf_tensor_at(f, i);
        cr_assert_eq(gguf_writer_add_tensor(w, t->name, t->type, t->n_dims, t->ne, t->data, &err), GGUF_OK);
    }
    tbuf c;
    cr_assert_eq(gguf_writer_write_buffer(w, &c.p, &c.len, &err), GGUF_OK, "%s", err.message);
    cr_assert_eq(c.len, b->len);
    size_t at = 0;
    while (at < c.len && c.p[at] == b->p[at])
        at++;
    cr_assert_eq(at, c.len, "the copy differs at byte %zu", at);
    tbuf_free(&c);
    gguf_writer_free(w);
    gguf_close(f);
}

Test(roundtrip, copied_keys_and_tensors_give_the_same_bytes)
{
    tbuf b = base_file(); /* alignment key, strings, arrays of ints and strings, three tensors */
    assert_copy_is_identical(&b);
    /* a string holding a NUL byte (legal in GGUF) is copied by its length, not cut at the NUL */
    const uint64_t at = kv_value_offset(&b, "test.str") + 8 + 2;
    cr_assert_eq(b.p[at], 'l');
    b.p[at] = 0;
    assert_copy_is_identical(&b);
    tbuf_free(&b);
    gguf_error err;
    gguf_writer *w = gguf_writer_create(3);
    cr_assert_eq(gguf_writer_add_copy(w, "k", NULL, &err), GGUF_E_INVALID_ARG);
    gguf_writer_free(w);
}

Test(roundtrip, every_scalar_type_at_its_limits)
{
    const gguf_wvalue vals[] = {
        { .type = GGUF_VT_UINT8, .v.u64 = UINT8_MAX }, { .type = GGUF_VT_INT8, .v.i64 = INT8_MIN },
        { .type = GGUF_VT_UINT16, .v.u64 = UINT16_MAX }, { .type = GGUF_VT_INT16, .v.i64 = INT16_MIN },
        { .type = GGUF_VT_UINT32, .v.u64 = UINT32_MAX }, { .type = GGUF_VT_INT32, .v.i64 = INT32_MIN },
        { .type = GGUF_VT_FLOAT32, .v.f64 = -FLT_MAX }, { .type = GGUF_VT_BOOL, .v.b = true },
        { .type = GGUF_VT_STRING, .v.str = "h\xc3\xa9llo\n\t" }, { .type = GGUF_VT_UINT64, .v.u64 = UINT64_MAX },
        { .type = GGUF_VT_INT64, .v.i64 = INT64_MIN }, { .type = GGUF_VT_FLOAT64, .v.f64 = DBL_MIN },
        { .type = GGUF_VT_FLOAT32, .v.f64 = 1e-45 /* smallest f32 subnormal */ },
        { .type = GGUF_VT_BOOL, .v.b = false }, { .type = GGUF_VT_STRING, .v.str = "" },
    };
    const size_t n = sizeof vals / sizeof vals[0];
    for (uint32_t version = 2; version <= 3; version++) {
        gguf_writer *w = gguf_writer_create(version);
        char key[32];
        for (size_t i = 0; i < n; i++) {
            snprintf(key, sizeof key, "t.k%zu", i);
            cr_assert_eq(gguf_writer_add(w, key, &vals[i], NULL), GGUF_OK);
        }
        tbuf b;
        gguf_file *f = reopen(w, &b);
        cr_assert_eq(gguf_version(f), version);
        cr_assert_eq(gguf_kv_count(f), n);
        for (size_t i = 0; i < n; i++) {
            snprintf(key, sizeof key, "t.k%zu", i);
            const gguf_kv *kv = gguf_find_kv(f, key);
            cr_assert_not_null(kv);
            cr_assert_eq(kv, gguf_kv_at(f, i), "file order is kept");
            cr_assert_eq(kv->value.type, vals[i].type);
            switch (vals[i].type) {
            case GGUF_VT_STRING:
                cr_assert_eq(kv->value.v.str.len, strlen(vals[i].v.str));
                cr_assert(memcmp(kv->value.v.str.ptr, vals[i].v.str, kv->value.v.str.len) == 0);
                break;
            case GGUF_VT_FLOAT32:
                cr_assert_eq(kv->value.v.f64, (double)(float)vals[i].v.f64);
                break;
            case GGUF_VT_FLOAT64: cr_assert_eq(kv->value.v.f64, vals[i].v.f64); break;
            case GGUF_VT_BOOL: cr_assert_eq(kv->value.v.b, vals[i].v.b); break;
            case GGUF_VT_INT8: case GGUF_VT_INT16: case GGUF_VT_INT32: case GGUF_VT_INT64:
                cr_assert_eq(kv->value.v.i64, vals[i].v.i64);
                break;
            default: cr_assert_eq(kv->value.v.u64, vals[i].v.u64); break;
            }
        }
        gguf_close(f);
        gguf_writer_free(w);
        assert_copy_is_identical(&b);
        tbuf_free(&b);
    }
}

Test(roundtrip, arrays_of_every_type_and_nested)
{
    static const uint8_t u8[] = { 0, 255, 7 };
    static const int8_t i8[] = { -128, 127 };
    static const uint16_t u16[] = { 65535, 1 };
    static const int16_t i16[] = { -32768, 5 };
    static const uint32_t u32[] = { 4294967295u };
    static const int32_t i32[] = { -2147483647 - 1, 0, 9 };
    static const float f32[] = { 0.1f, -3.5f, INFINITY };
    static const bool bools[] = { true, false, true };
    static const uint64_t u64[] = { UINT64_MAX, 0 };
    static const int64_t i64[] = { INT64_MIN, INT64_MAX };
    static const double f64[] = { 1e300, -0.0 };
    static const char *const strs[] = { "a", "", "\xe2\x96\x81the", "x y z" };
    const struct { uint32_t et; const void *p; uint64_t n; } arrs[] = {
        { GGUF_VT_UINT8, u8, 3 }, { GGUF_VT_INT8, i8, 2 }, { GGUF_VT_UINT16, u16, 2 },
        { GGUF_VT_INT16, i16, 2 }, { GGUF_VT_UINT32, u32, 1 }, { GGUF_VT_INT32, i32, 3 },
        { GGUF_VT_FLOAT32, f32, 3 }, { GGUF_VT_BOOL, bools, 3 }, { GGUF_VT_UINT64, u64, 2 },
        { GGUF_VT_INT64, i64, 2 }, { GGUF_VT_FLOAT64, f64, 2 }, { GGUF_VT_UINT8, u8, 0 },
    };
    gguf_writer *w = gguf_writer_create(3);
    char key[32];
    for (size_t i = 0; i < sizeof arrs / sizeof arrs[0]; i++) {
        gguf_wvalue v = { .type = GGUF_VT_ARRAY, .elem_type = arrs[i].et, .count = arrs[i].n, .v.elems = arrs[i].p };
        snprintf(key, sizeof key, "a.%zu", i);
        cr_assert_eq(gguf_writer_add(w, key, &v, NULL), GGUF_OK);
    }
    gguf_wvalue sv = { .type = GGUF_VT_ARRAY, .elem_type = GGUF_VT_STRING, .count = 4, .v.strs = strs };
    gguf_writer_add(w, "a.strings", &sv, NULL);
    gguf_wvalue inner[2] = {
        { .type = GGUF_VT_ARRAY, .elem_type = GGUF_VT_INT32, .count = 3, .v.elems = i32 },
        { .type = GGUF_VT_ARRAY, .elem_type = GGUF_VT_STRING, .count = 4, .v.strs = strs },
    };
    gguf_wvalue mid = { .type = GGUF_VT_ARRAY, .elem_type = GGUF_VT_ARRAY, .count = 2, .v.items = inner };
    gguf_wvalue outer = { .type = GGUF_VT_ARRAY, .elem_type = GGUF_VT_ARRAY, .count = 1, .v.items = &mid };
    gguf_writer_add(w, "a.nested", &outer, NULL);
    tbuf b;
    gguf_file *f = reopen(w, &b);
    for (size_t i = 0; i < sizeof arrs / sizeof arrs[0]; i++) {
        snprintf(key, sizeof key, "a.%zu", i);
        const gguf_value *v;
        cr_assert_eq(gguf_get_array(f, key, &v, NULL), GGUF_OK);
        cr_assert_eq(v->elem_type, arrs[i].et);
        cr_assert_eq(v->count, arrs[i].n);
        size_t es = gguf_value_type_size(arrs[i].et);
        for (uint64_t k = 0; k < v->count; k++) {
            gguf_value e;
            cr_assert_eq(gguf_array_scalar(v, k, &e), GGUF_OK);
            cr_assert_eq(e.type, arrs[i].et);
            if (arrs[i].et == GGUF_VT_BOOL)
                cr_assert_eq(e.v.b, bools[k]);
            else if (arrs[i].et != GGUF_VT_FLOAT32 && arrs[i].et != GGUF_VT_FLOAT64)
                cr_assert(memcmp(v->v.raw + k * es, (const uint8_t *)arrs[i].p + k * es, es) == 0);
            else if (arrs[i].et == GGUF_VT_FLOAT32)
                cr_assert_eq(e.v.f64, (double)f32[k]);
            else
                cr_assert(memcmp(&e.v.f64, &f64[k], 8) == 0, "bit-exact, including -0.0");
        }
        gguf_value oob;
        cr_assert_eq(gguf_array_scalar(v, v->count, &oob), GGUF_E_INVALID_ARG);
    }
    const gguf_value *s;
    cr_assert_eq(gguf_get_array(f, "a.strings", &s, NULL), GGUF_OK);
    cr_assert_eq(s->count, 4);
    for (int k = 0; k < 4; k++) {
        cr_assert_eq(s->v.strs[k].len, strlen(strs[k]));
        cr_assert(memcmp(s->v.strs[k].ptr, strs[k], strlen(strs[k])) == 0);
    }
    const gguf_value *n;
    cr_assert_eq(gguf_get_array(f, "a.nested", &n, NULL), GGUF_OK);
    cr_assert_eq(n->elem_type, GGUF_VT_ARRAY);
    cr_assert_eq(n->count, 1);
    const gguf_value *m = &n->v.items[0];
    cr_assert_eq(m->elem_type, GGUF_VT_ARRAY);
    cr_assert_eq(m->count, 2);
    cr_assert_eq(m->v.items[0].elem_type, GGUF_VT_INT32);
    gguf_value e;
    gguf_array_scalar(&m->v.items[0], 2, &e);
    cr_assert_eq(e.v.i64, 9);
    cr_assert_eq(m->v.items[1].count, 4);
    cr_assert_eq(m->v.items[1].v.strs[2].len, strlen(strs[2]));
    gguf_close(f);
    gguf_writer_free(w);
    assert_copy_is_identical(&b);
    tbuf_free(&b);
}

/* Deterministic bytes for tensor data. */
static uint8_t *pattern(uint64_t n, uint32_t seed)
{
    uint8_t *p = malloc(n);
    uint32_t x = seed * 2654435761u + 1;
    for (uint64_t i = 0; i < n; i++) {
        x ^= x << 13; x ^= x >> 17; x ^= x << 5;
        p[i] = (uint8_t)x;
    }
    return p;
}

Test(roundtrip, every_storable_type_many_shapes_and_alignments)
{
    static const uint32_t alignments[] = { 1, 8, 32, 64, 4096 };
    for (size_t ai = 0; ai < sizeof alignments / sizeof alignments[0]; ai++) {
        gguf_writer *w = gguf_writer_create(3);
        if (alignments[ai] != 32)
            cr_assert_eq(gguf_writer_add_u32(w, "general.alignment", alignments[ai], NULL), GGUF_OK);
        uint8_t *datas[GGUF_TENSOR_COUNT * 4] = { 0 };
        uint64_t shapes[GGUF_TENSOR_COUNT * 4][4];
        int n = 0;
        for (uint32_t type = 0; type < GGUF_TENSOR_COUNT; type++) {
            const gguf_type_traits *tt = gguf_type_traits_of(type);
            if (tt->state != GGUF_TYPE_OK)
                continue;
            for (uint32_t nd = 1; nd <= 4; nd++, n++) {
                uint64_t ne[4] = { tt->block_size * (1 + type % 3), 1 + nd, 3, 2 };
                memcpy(shapes[n], ne, sizeof ne);
                uint64_t size = (ne[0] / tt->block_size) * tt->type_size;
                for (uint32_t d = 1; d < nd; d++)
                    size *= ne[d];
                datas[n] = pattern(size, (uint32_t)n);
                char name[64];
                snprintf(name, sizeof name, "%s.%ud", tt->name, nd);
                cr_assert_eq(gguf_writer_add_tensor(w, name, type, nd, ne, datas[n], NULL), GGUF_OK, "%s", name);
            }
        }
        tbuf b;
        gguf_file *f = reopen(w, &b);
        cr_assert_eq(gguf_alignment(f), alignments[ai]);
        cr_assert_eq(gguf_tensor_count(f), (size_t)n);
        cr_assert_eq(gguf_warning_count(f), 0, "the writer's layout is the one llama.cpp expects");
        cr_assert_eq(gguf_data_offset(f) % alignments[ai], 0);
        for (int i = 0; i < n; i++) {
            const gguf_tensor *t = gguf_tensor_at(f, (size_t)i);
            cr_assert_eq(gguf_tensor_by_name(f, t->name), t);
            cr_assert_eq(t->offset % alignments[ai], 0);
            uint32_t nd = (uint32_t)(i % 4) + 1;
            cr_assert_eq(t->n_dims, nd);
            for (uint32_t d = 0; d < 4; d++)
                cr_assert_eq(t->ne[d], d < nd ? shapes[i][d] : 1);
            cr_assert(memcmp(t->data, datas[i], (size_t)t->size) == 0, "%s: data round trip", t->name);
            cr_assert_eq(t->data, b.p + gguf_data_offset(f) + t->offset, "a view, not a copy");
        }
        gguf_close(f);
        gguf_writer_free(w);
        tbuf_free(&b);
        for (int i = 0; i < n; i++)
            free(datas[i]);
    }
}

static gguf_status fill_index(void *user, uint8_t *dst, uint64_t at, size_t len)
{
    (void)user;
    for (size_t i = 0; i < len; i++)
        dst[i] = (uint8_t)((at + i) * 31u);
    return GGUF_OK;
}

Test(roundtrip, fill_callback_across_chunk_boundaries)
{
    gguf_writer *w = gguf_writer_create(3);
    uint64_t ne[2] = { 1000, 100 }; /* 400 000 bytes: several 64 KiB chunks */
    cr_assert_eq(gguf_writer_add_tensor_fill(w, "big", GGUF_TENSOR_F32, 2, ne, fill_index, NULL, NULL), GGUF_OK);
    tbuf b;
    gguf_file *f = reopen(w, &b);
    const gguf_tensor *t = gguf_tensor_by_name(f, "big");
    cr_assert_eq(t->size, 400000);
    for (uint64_t i = 0; i < t->size; i++)
        cr_assert_eq(t->data[i], (uint8_t)(i * 31u), "byte %llu", (unsigned long long)i);
    gguf_close(f);
    gguf_writer_free(w);
    tbuf_free(&b);
}

Test(roundtrip, writer_refuses_what_readers_would_reject)
{
    gguf_writer *w = gguf_writer_create(3);
    static float d[64];
    uint64_t bad0[1] = { 48 }, zero[2] = { 32, 0 }, ok[1] = { 32 };
    gguf_error err;
    cr_assert_eq(gguf_writer_add_tensor(w, "q", GGUF_TENSOR_Q8_0, 1, bad0, d, &err), GGUF_E_BLOCK_MULTIPLE);
    cr_assert_eq(gguf_writer_add_tensor(w, "z", GGUF_TENSOR_F32, 2, zero, d, &err), GGUF_E_ZERO_DIM);
    cr_assert_eq(gguf_writer_add_tensor(w, "r", 4, 1, ok, d, &err), GGUF_E_UNKNOWN_TYPE);
    cr_assert_eq(gguf_writer_add_tensor(w, "", GGUF_TENSOR_F32, 1, ok, d, &err), GGUF_E_INVALID_ARG);
    cr_assert_eq(gguf_writer_add_tensor(w, "a", GGUF_TENSOR_F32, 1, ok, d, &err), GGUF_OK);
    cr_assert_eq(gguf_writer_add_tensor(w, "a", GGUF_TENSOR_F32, 1, ok, d, &err), GGUF_E_DUPLICATE_NAME);
    cr_assert_eq(gguf_writer_add_u32(w, "k", 1, &err), GGUF_OK);
    cr_assert_eq(gguf_writer_add_u32(w, "k", 2, &err), GGUF_E_DUPLICATE_KEY);
    cr_assert_eq(gguf_writer_add_u32(w, "general.alignment", 64, &err), GGUF_E_ALIGNMENT, "after a tensor");
    cr_assert_null(gguf_writer_create(1));
    gguf_writer_free(w);
}
