/* Files of metadata alone for the hyperparameter reader's suites (hparams_files.h). */
#include "hparams_files.h"

#include "model.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

gguf_file *hparams_file_with(const kv_spec *kvs, size_t n, tbuf *keep)
{
    gguf_writer *w = gguf_writer_create(3);
    gguf_error e;
    void *held[64];
    size_t n_held = 0;
    cr_assert(n <= 64);
    for (size_t i = 0; i < n; i++) {
        gguf_status s;
        if (kvs[i].kind == 'u')
            s = gguf_writer_add_u32(w, kvs[i].key, (uint32_t)strtoul(kvs[i].value, NULL, 10), &e);
        else if (kvs[i].kind == 'f')
            s = gguf_writer_add_f32(w, kvs[i].key, strtof(kvs[i].value, NULL), &e);
        else if (kvs[i].kind == 's')
            s = gguf_writer_add_str(w, kvs[i].key, kvs[i].value, &e);
        else if (kvs[i].kind == 'B')
            s = gguf_writer_add(w, kvs[i].key, &(gguf_wvalue){ .type = GGUF_VT_BOOL, .v.b = kvs[i].value[0] == '1' }, &e);
        else if (kvs[i].kind == 'i') { /* each array its own: the writer reads them when it writes */
            int32_t *ints = held[n_held++] = malloc(64 * sizeof *ints);
            cr_assert(ints);
            uint64_t count = 0;
            for (const char *p = kvs[i].value; *p && count < 64; p += strcspn(p, ","), p += *p == ',')
                ints[count++] = (int32_t)strtol(p, NULL, 10);
            gguf_wvalue v = { .type = GGUF_VT_ARRAY, .elem_type = GGUF_VT_INT32, .count = count, .v.elems = ints };
            s = gguf_writer_add(w, kvs[i].key, &v, &e);
        } else if (kvs[i].kind == 'S') { /* the value's copy, cut at its commas, and the pieces' addresses */
            char *text = held[n_held++] = strdup(kvs[i].value);
            const char **strs = held[n_held++] = malloc(64 * sizeof *strs);
            cr_assert(text && strs);
            uint64_t count = 0;
            char *save = NULL;
            for (char *p = strtok_r(text, ",", &save); p && count < 64; p = strtok_r(NULL, ",", &save))
                strs[count++] = p;
            gguf_wvalue v = { .type = GGUF_VT_ARRAY, .elem_type = GGUF_VT_STRING, .count = count, .v.strs = strs };
            s = gguf_writer_add(w, kvs[i].key, &v, &e);
        } else if (kvs[i].kind == 'F') {
            float *fs = held[n_held++] = malloc(64 * sizeof *fs);
            cr_assert(fs);
            uint64_t count = 0;
            for (const char *p = kvs[i].value; *p && count < 64; p += strcspn(p, ","), p += *p == ',')
                fs[count++] = strtof(p, NULL);
            gguf_wvalue v = { .type = GGUF_VT_ARRAY, .elem_type = GGUF_VT_FLOAT32, .count = count, .v.elems = fs };
            s = gguf_writer_add(w, kvs[i].key, &v, &e);
        } else {
            bool *bits = held[n_held++] = malloc(64 * sizeof *bits);
            cr_assert(bits);
            uint64_t count = 0;
            for (const char *p = kvs[i].value; *p; p++)
                if (*p == '0' || *p == '1')
                    bits[count++] = *p == '1';
            gguf_wvalue v = { .type = GGUF_VT_ARRAY, .elem_type = GGUF_VT_BOOL, .count = count, .v.elems = bits };
            s = gguf_writer_add(w, kvs[i].key, &v, &e);
        }
        cr_assert_eq(s, GGUF_OK, "%s", e.message);
    }
    cr_assert_eq(gguf_writer_write_buffer(w, &keep->p, &keep->len, &e), GGUF_OK);
    gguf_writer_free(w);
    for (size_t i = 0; i < n_held; i++)
        free(held[i]);
    gguf_file *f;
    cr_assert_eq(gguf_open_memory(keep->p, keep->len, &f, &e), GGUF_OK, "%s", e.message);
    return f;
}

void hparams_refused_naming(kv_spec *kvs, size_t n, size_t at, const char *value, const char *subject)
{
    const char *was = kvs[at].value;
    kvs[at].value = value;
    tbuf b;
    model_hparams hp;
    model_error e;
    gguf_file *f = hparams_file_with(kvs, n, &b);
    cr_assert_eq(model_hparams_read(f, &hp, &e), MODEL_E_MALFORMED, "%s = %s", subject, value);
    cr_assert_str_eq(e.subject, subject);
    gguf_close(f);
    free(b.p);
    kvs[at].value = was;
}
