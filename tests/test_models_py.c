/* Every real file in ../shared/models, and files our writer makes, read by
 * us and by the reference `gguf` Python package (from PyPI, in build/venv):
 * names, types, dims, offsets and every metadata value must agree. */
#include "fixture_model.h"
#include "testutil.h"

#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static cJSON *py_dump(const char *path)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "'%s' tests/py/gguf_py_dump.py '%s'", venv_python(), path);
    int status;
    char *out = run_capture(cmd, &status);
    cr_assert_eq(status, 0, "the gguf package could not read %s (is build/venv set up? run make test)", path);
    cJSON *j = cJSON_Parse(out);
    free(out);
    cr_assert_not_null(j, "gguf_py_dump.py printed no JSON for %s", path);
    return j;
}

static void hex_of(const char *p, uint64_t n, char *out)
{
    for (uint64_t i = 0; i < n; i++)
        sprintf(out + 2 * i, "%02x", (unsigned char)p[i]);
    out[2 * n] = '\0';
}

static void compare_str(const char *key, gguf_str s, const cJSON *j)
{
    cr_assert(cJSON_IsString(j), "%s: expected a string from gguf-py", key);
    char *hex = malloc(2 * s.len + 1);
    hex_of(s.ptr, s.len, hex);
    cr_assert_str_eq(hex, j->valuestring, "%s: string differs", key);
    free(hex);
}

static void compare_scalar(const char *key, const gguf_value *v, const cJSON *j)
{
    switch (v->type) {
    case GGUF_VT_FLOAT32: case GGUF_VT_FLOAT64:
        if (cJSON_IsString(j)) { /* non-finite */
            cr_assert(!isfinite(v->v.f64), "%s", key);
        } else {
            cr_assert_eq(v->v.f64, j->valuedouble, "%s: %.17g vs %.17g", key, v->v.f64, j->valuedouble);
        }
        break;
    case GGUF_VT_BOOL:
        cr_assert(cJSON_IsBool(j) || cJSON_IsNumber(j), "%s", key);
        cr_assert_eq(v->v.b, cJSON_IsTrue(j) || (cJSON_IsNumber(j) && j->valuedouble != 0), "%s", key);
        break;
    case GGUF_VT_INT8: case GGUF_VT_INT16: case GGUF_VT_INT32: case GGUF_VT_INT64:
        cr_assert_eq((double)v->v.i64, j->valuedouble, "%s", key);
        break;
    default:
        cr_assert_eq((double)v->v.u64, j->valuedouble, "%s", key);
        break;
    }
}

static void compare_file(const char *path)
{
    gguf_file *f;
    gguf_error err;
    cr_assert_eq(gguf_open(path, &f, &err), GGUF_OK, "%s: %s", path, err.message);
    cJSON *py = py_dump(path);
    cr_assert_eq((double)gguf_version(f), cJSON_GetObjectItem(py, "version")->valuedouble, "%s", path);
    cr_assert_eq((double)gguf_alignment(f), cJSON_GetObjectItem(py, "alignment")->valuedouble, "%s", path);
    cr_assert_eq((double)gguf_data_offset(f), cJSON_GetObjectItem(py, "data_offset")->valuedouble, "%s", path);

    const cJSON *fields = cJSON_GetObjectItem(py, "fields");
    cr_assert_eq((size_t)cJSON_GetArraySize(fields), gguf_kv_count(f), "%s: key count", path);
    size_t i = 0;
    for (const cJSON *fj = fields->child; fj; fj = fj->next, i++) {
        const char *key = cJSON_GetObjectItem(fj, "key")->valuestring;
        const gguf_kv *kv = gguf_kv_at(f, i);
        cr_assert_str_eq(kv->key, key, "%s: key %zu", path, i);
        cr_assert_eq((double)kv->offset, cJSON_GetObjectItem(fj, "offset")->valuedouble, "%s: %s offset", path, key);
        const cJSON *types = cJSON_GetObjectItem(fj, "types");
        cr_assert_eq((double)kv->value.type, types->child->valuedouble, "%s: %s type", path, key);
        const cJSON *val = cJSON_GetObjectItem(fj, "value");
        if (kv->value.type == GGUF_VT_STRING) {
            compare_str(key, kv->value.v.str, val);
        } else if (kv->value.type != GGUF_VT_ARRAY) {
            compare_scalar(key, &kv->value, val);
        } else {
            cr_assert_eq((double)kv->value.elem_type, types->child->next->valuedouble, "%s elem type", key);
            cr_assert_eq((double)kv->value.count, cJSON_GetObjectItem(fj, "count")->valuedouble, "%s count", key);
            if (kv->value.elem_type == GGUF_VT_ARRAY)
                continue;
            const cJSON *e = val->child;
            for (uint64_t k = 0; k < kv->value.count; k++, e = e->next) {
                cr_assert_not_null(e);
                if (kv->value.elem_type == GGUF_VT_STRING) {
                    compare_str(key, kv->value.v.strs[k], e);
                } else {
                    gguf_value ev;
                    gguf_array_scalar(&kv->value, k, &ev);
                    compare_scalar(key, &ev, e);
                }
            }
        }
    }

    const cJSON *tensors = cJSON_GetObjectItem(py, "tensors");
    cr_assert_eq((size_t)cJSON_GetArraySize(tensors), gguf_tensor_count(f), "%s: tensor count", path);
    i = 0;
    for (const cJSON *tj = tensors->child; tj; tj = tj->next, i++) {
        const gguf_tensor *t = gguf_tensor_at(f, i);
        const char *name = cJSON_GetObjectItem(tj, "name")->valuestring;
        cr_assert_str_eq(t->name, name, "%s: tensor %zu", path, i);
        cr_assert_eq((double)t->type, cJSON_GetObjectItem(tj, "type")->valuedouble, "%s: %s type", path, name);
        const cJSON *shape = cJSON_GetObjectItem(tj, "shape");
        cr_assert_eq((size_t)cJSON_GetArraySize(shape), t->n_dims, "%s: %s dims", path, name);
        uint32_t d = 0;
        for (const cJSON *s = shape->child; s; s = s->next, d++)
            cr_assert_eq((double)t->ne[d], s->valuedouble, "%s: %s ne[%u]", path, name, d);
        cr_assert_eq((double)t->n_elements, cJSON_GetObjectItem(tj, "n_elements")->valuedouble, "%s", name);
        cr_assert_eq((double)t->size, cJSON_GetObjectItem(tj, "n_bytes")->valuedouble, "%s: %s bytes", path, name);
        cr_assert_eq((double)(gguf_data_offset(f) + t->offset), cJSON_GetObjectItem(tj, "data_offset")->valuedouble,
                     "%s: %s data offset", path, name);
    }
    cJSON_Delete(py);
    gguf_close(f);
}

Test(reference, every_shared_model_matches_the_gguf_package, .timeout = 600)
{
    DIR *d = opendir(models_dir());
    if (!d)
        cr_skip_test("no shared models at %s (set GGUFSCOPE_MODELS): skipped", models_dir());
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (len < 5 || strcmp(e->d_name + len - 5, ".gguf") != 0)
            continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", models_dir(), e->d_name);
        compare_file(path);
        n++;
    }
    closedir(d);
    cr_assert_gt(n, 0, "no .gguf files in %s", models_dir());
    cr_log_info("compared %d shared models with the gguf package", n);
}

Test(reference, our_writer_output_is_read_alike_by_the_gguf_package, .timeout = 120)
{
    char path[] = "/tmp/ggufscope-fixture-XXXXXX";
    int fd = mkstemp(path);
    close(fd);
    for (uint32_t version = 2; version <= 3; version++) {
        fixture_opts o = fixture_default_opts();
        o.version = version;
        o.alignment = version == 2 ? 64 : 0;
        cr_assert_eq(fixture_write_file(path, &o, NULL), GGUF_OK);
        compare_file(path);
    }
    unlink(path);
}

Test(reference, type_table_matches_the_gguf_package)
{
    tbuf b = base_file();
    char path[] = "/tmp/ggufscope-types-XXXXXX";
    int fd = mkstemp(path);
    cr_assert_eq(write(fd, b.p, b.len), (ssize_t)b.len);
    close(fd);
    cJSON *py = py_dump(path);
    const cJSON *sizes = cJSON_GetObjectItem(py, "quant_sizes");
    int n = 0;
    for (const cJSON *s = sizes->child; s; s = s->next, n++) {
        uint32_t id = (uint32_t)atoi(s->string);
        const gguf_type_traits *tt = gguf_type_traits_of(id);
        cr_assert_eq(tt->state, GGUF_TYPE_OK, "type %u (%s in gguf-py) is unknown to us", id, tt->name);
        cr_assert_eq((double)tt->block_size, s->child->valuedouble, "%s block size", tt->name);
        if (id == GGUF_TENSOR_Q8_1) /* gguf-py keeps the pre-half2 layout of 40 bytes; ggml's block is 36 */
            continue;
        cr_assert_eq((double)tt->type_size, s->child->next->valuedouble, "%s type size", tt->name);
    }
    cr_assert_gt(n, 30);
    cJSON_Delete(py);
    unlink(path);
    tbuf_free(&b);
}
