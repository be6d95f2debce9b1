/* Writes the seed corpus for fuzz-open: valid files made by our writer
 * (versions 2 and 3, several alignments, every value type) and malformed
 * variants of them (truncations and patched fields). */
#include "fixture_model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int n_written;

static void save(const char *dir, const char *tag, const uint8_t *buf, size_t len)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%03d-%s.gguf", dir, n_written++, tag);
    FILE *fp = fopen(path, "wb");
    if (!fp || fwrite(buf, 1, len, fp) != len) {
        fprintf(stderr, "fuzz-make-corpus: cannot write %s\n", path);
        exit(2);
    }
    fclose(fp);
}

/* A small file holding one key of every value type, nested arrays and a few tensors. */
static void all_types(const char *dir)
{
    gguf_writer *w = gguf_writer_create(3);
    static const int32_t ints[] = { -1, 2, -3 };
    static const char *const strs[] = { "a", "", "ccc" };
    gguf_wvalue inner[2] = {
        { .type = GGUF_VT_ARRAY, .elem_type = GGUF_VT_INT32, .count = 3, .v.elems = ints },
        { .type = GGUF_VT_ARRAY, .elem_type = GGUF_VT_STRING, .count = 3, .v.strs = strs },
    };
    gguf_wvalue nested = { .type = GGUF_VT_ARRAY, .elem_type = GGUF_VT_ARRAY, .count = 2, .v.items = inner };
    gguf_wvalue vals[] = {
        { .type = GGUF_VT_UINT8, .v.u64 = 200 }, { .type = GGUF_VT_INT8, .v.i64 = -100 },
        { .type = GGUF_VT_UINT16, .v.u64 = 60000 }, { .type = GGUF_VT_INT16, .v.i64 = -30000 },
        { .type = GGUF_VT_UINT32, .v.u64 = 4000000000u }, { .type = GGUF_VT_INT32, .v.i64 = -2000000000 },
        { .type = GGUF_VT_FLOAT32, .v.f64 = 1.5 }, { .type = GGUF_VT_BOOL, .v.b = true },
        { .type = GGUF_VT_STRING, .v.str = "hello" }, { .type = GGUF_VT_UINT64, .v.u64 = UINT64_MAX },
        { .type = GGUF_VT_INT64, .v.i64 = INT64_MIN }, { .type = GGUF_VT_FLOAT64, .v.f64 = -2.25 },
    };
    char key[32];
    for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++) {
        snprintf(key, sizeof key, "test.k%zu", i);
        gguf_writer_add(w, key, &vals[i], NULL);
    }
    gguf_writer_add(w, "test.nested", &nested, NULL);
    static float data[64];
    uint64_t ne[2] = { 32, 2 };
    gguf_writer_add_tensor(w, "a", GGML_TYPE_F32, 2, ne, data, NULL);
    gguf_writer_add_tensor(w, "b", GGML_TYPE_Q8_0, 1, ne, data, NULL);
    uint8_t *buf;
    size_t len;
    if (gguf_writer_write_buffer(w, &buf, &len, NULL) == GGUF_OK) {
        save(dir, "all-types", buf, len);
        for (size_t cut = 8; cut < len; cut = cut * 2 + 3)
            save(dir, "all-types-prefix", buf, cut);
        free(buf);
    }
    gguf_writer_free(w);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: fuzz-make-corpus DIR\n");
        return 2;
    }
    const char *dir = argv[1];
    mkdir(dir, 0755);
    all_types(dir);
    fixture_opts variants[3] = { fixture_default_opts(), fixture_default_opts(), fixture_default_opts() };
    variants[0].n_layer = 1;
    variants[0].n_vocab = 260;
    variants[1].version = 2;
    variants[1].n_layer = 1;
    variants[1].n_vocab = 260;
    variants[2].alignment = 64;
    variants[2].n_layer = 1;
    variants[2].n_vocab = 260;
    for (int v = 0; v < 3; v++) {
        uint8_t *buf;
        size_t len;
        if (fixture_write_buffer(&variants[v], &buf, &len, NULL) != GGUF_OK)
            return 2;
        save(dir, "fixture", buf, len);
        if (v == 0) {
            /* header-only prefixes, and single-byte corruptions spread over the header */
            save(dir, "prefix", buf, len / 3);
            uint8_t *m = malloc(len);
            for (size_t at = 4; at < 4096 && at < len; at += 97) {
                memcpy(m, buf, len);
                m[at] ^= 0xff;
                save(dir, "flip", m, len);
            }
            free(m);
        }
        free(buf);
    }
    printf("fuzz-make-corpus: %d files in %s\n", n_written, dir);
    return 0;
}
