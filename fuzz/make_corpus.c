/* Writes the seed corpora of the fuzz targets, one directory each under DIR:
 *   open/      for fuzz-open: valid files made by our writer (versions 2 and 3, several
 *              alignments, every value type) and malformed variants (truncations, patched fields);
 *   model/     for fuzz-model: every hostile model class (hostile_model.c);
 *   tokenize/  for fuzz-tokenize: each vocabulary-only hostile class after a text to tokenize;
 *   dump/      for fuzz-dump: tensor dumps as engines write them (our .npz and .safetensors, numpy's
 *              savez_compressed with its zip64 extras), whole and cut short. */
#include "fixture_model.h"
#include "hostile_model.h"
#include "tensor_dump.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int n_written;

static void save2(const char *dir, const char *tag, const uint8_t *head, size_t head_len, const uint8_t *buf,
                  size_t len)
{
    char path[4096];
    const int n = snprintf(path, sizeof path, "%s/%03d-%s.gguf", dir, n_written++, tag);
    if (n < 0 || (size_t)n >= sizeof path) {
        fprintf(stderr, "fuzz-make-corpus: the corpus directory's path is too long\n");
        exit(2);
    }
    FILE *fp = fopen(path, "wb");
    if (!fp || (head_len && fwrite(head, 1, head_len, fp) != head_len) || fwrite(buf, 1, len, fp) != len) {
        fprintf(stderr, "fuzz-make-corpus: cannot write %s\n", path);
        exit(2);
    }
    fclose(fp);
}

static void save(const char *dir, const char *tag, const uint8_t *buf, size_t len)
{
    save2(dir, tag, NULL, 0, buf, len);
}

/* numpy.savez_compressed of {'l_out-0': float16 (2, 3), 'hidden_states': float32 (2, 1, 2, 3)}: deflated members
 * behind local headers with zip64 extras, as numpy writes every .npz. */
static const uint8_t numpy_npz[] = {
    80, 75, 3, 4, 45, 0, 0, 0, 8, 0, 0, 0, 33, 0, 206, 60, 99, 175, 255, 255, 255, 255, 255, 255,
    255, 255, 11, 0, 20, 0, 108, 95, 111, 117, 116, 45, 48, 46, 110, 112, 121, 1, 0, 16, 0, 140, 0, 0,
    0, 0, 0, 0, 0, 82, 0, 0, 0, 0, 0, 0, 0, 155, 236, 23, 234, 27, 16, 201, 200, 80, 198, 80,
    173, 158, 146, 90, 156, 92, 164, 110, 165, 160, 110, 147, 102, 164, 174, 163, 160, 158, 150, 95, 84, 82, 148, 152,
    23, 159, 95, 148, 146, 10, 18, 119, 75, 204, 41, 78, 5, 138, 23, 103, 36, 22, 164, 2, 249, 26, 70, 58,
    10, 198, 154, 58, 10, 181, 10, 100, 3, 46, 6, 6, 6, 27, 6, 7, 6, 39, 6, 23, 6, 87, 0, 80,
    75, 3, 4, 45, 0, 0, 0, 8, 0, 0, 0, 33, 0, 138, 48, 249, 248, 255, 255, 255, 255, 255, 255, 255,
    255, 17, 0, 20, 0, 104, 105, 100, 100, 101, 110, 95, 115, 116, 97, 116, 101, 115, 46, 110, 112, 121, 1, 0,
    16, 0, 176, 0, 0, 0, 0, 0, 0, 0, 81, 0, 0, 0, 0, 0, 0, 0, 155, 236, 23, 234, 27, 16,
    201, 200, 80, 198, 80, 173, 158, 146, 90, 156, 92, 164, 110, 165, 160, 110, 147, 102, 162, 174, 163, 160, 158, 150,
    95, 84, 82, 148, 152, 23, 159, 95, 148, 146, 10, 18, 119, 75, 204, 41, 78, 5, 138, 23, 103, 36, 22, 164,
    2, 249, 26, 70, 58, 10, 134, 58, 10, 64, 210, 88, 83, 71, 161, 86, 129, 12, 192, 197, 192, 208, 96, 79,
    10, 6, 0, 80, 75, 1, 2, 45, 3, 45, 0, 0, 0, 8, 0, 0, 0, 33, 0, 206, 60, 99, 175, 82,
    0, 0, 0, 140, 0, 0, 0, 11, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 128, 1, 0, 0, 0,
    0, 108, 95, 111, 117, 116, 45, 48, 46, 110, 112, 121, 80, 75, 1, 2, 45, 3, 45, 0, 0, 0, 8, 0,
    0, 0, 33, 0, 138, 48, 249, 248, 81, 0, 0, 0, 176, 0, 0, 0, 17, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 128, 1, 143, 0, 0, 0, 104, 105, 100, 100, 101, 110, 95, 115, 116, 97, 116, 101, 115, 46,
    110, 112, 121, 80, 75, 5, 6, 0, 0, 0, 0, 2, 0, 2, 0, 120, 0, 0, 0, 35, 1, 0, 0, 0,
    0,
};

static void dumps(const char *root)
{
    char dir[4096], path[4200], why[600];
    snprintf(dir, sizeof dir, "%s/dump", root);
    mkdir(dir, 0755);
    static float values[2 * 5 * 8];
    for (int i = 0; i < 2 * 5 * 8; i++)
        values[i] = (float)i * 0.25f - 3.0f;
    char n0[] = "l_out-0", n1[] = "result_norm";
    const dump_array a[2] = { { .name = n0, .ndim = 2, .shape = { 5, 8 }, .data = values },
                              { .name = n1, .ndim = 3, .shape = { 1, 5, 8 }, .data = values + 40 } };
    const char *const names[2] = { "ours.npz", "ours.safetensors" };
    for (int k = 0; k < 2; k++) {
        snprintf(path, sizeof path, "%s/%s", dir, names[k]);
        if (tensor_dump_write(path, a, 2, why, sizeof why)) {
            fprintf(stderr, "fuzz-make-corpus: %s\n", why);
            exit(2);
        }
        FILE *fp = fopen(path, "rb");
        uint8_t buf[4096];
        const size_t len = fp ? fread(buf, 1, sizeof buf, fp) : 0;
        if (fp)
            fclose(fp);
        save(dir, "dump-cut", buf, len / 2);
    }
    save(dir, "numpy-npz", numpy_npz, sizeof numpy_npz);
    save(dir, "numpy-npz-cut", numpy_npz, sizeof numpy_npz - 30);
}

/* Texts the tokenizer seeds carry: words, specials' spellings, escapes, scripts, digits, blanks. */
static const char *const seed_texts[] = {
    "Hello world, the cat sat on the mat.",
    " <s></s><unk><|endoftext|> and <0x41>",
    "\x1b[2J\x07\r\x9b\xc2\x9b\xff\xfe evil",
    "\xe6\x97\xa5\xe6\x9c\xac 12345 it's we'll I'D",
    "   \t\n\r\n  trailing   ",
    "",
    "{% for message in messages %}<|im_start|>{{ message['content'] }}{% endfor %}",
};

static void model_and_tokenize(const char *root)
{
    char model_dir[4096], tok_dir[4096];
    snprintf(model_dir, sizeof model_dir, "%s/model", root);
    snprintf(tok_dir, sizeof tok_dir, "%s/tokenize", root);
    mkdir(model_dir, 0755);
    mkdir(tok_dir, 0755);
    for (size_t i = 0; i < hostile_case_count(); i++) {
        const hostile_case_info *c = hostile_case_at(i);
        uint8_t *buf;
        size_t len;
        gguf_error err;
        if (hostile_write_buffer(i, &buf, &len, &err) != GGUF_OK) {
            fprintf(stderr, "fuzz-make-corpus: case %s: %s\n", c->name, err.message);
            exit(2);
        }
        bool vocab_only = c->base == HOSTILE_VOCAB_SPM || c->base == HOSTILE_VOCAB_BPE;
        if (!vocab_only && len < (1u << 20)) /* the 1 MB tokens are the tokenizer's seeds */
            save(model_dir, c->name, buf, len);
        for (size_t t = 0; vocab_only && t < sizeof seed_texts / sizeof seed_texts[0]; t++) {
            size_t n = strlen(seed_texts[t]);
            uint8_t head[2 + 256] = { (uint8_t)n, (uint8_t)(n >> 8) };
            memcpy(head + 2, seed_texts[t], n);
            save2(tok_dir, c->name, head, 2 + n, buf, len);
        }
        free(buf);
    }
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
    gguf_writer_add_tensor(w, "a", GGUF_TENSOR_F32, 2, ne, data, NULL);
    gguf_writer_add_tensor(w, "b", GGUF_TENSOR_Q8_0, 1, ne, data, NULL);
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
    const char *root = argv[1];
    mkdir(root, 0755);
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/open", root);
    mkdir(dir, 0755);
    model_and_tokenize(root);
    dumps(root);
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
    printf("fuzz-make-corpus: %d files in %s/{open,model,tokenize,dump}\n", n_written, root);
    return 0;
}
