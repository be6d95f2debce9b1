#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

tbuf base_file(void)
{
    gguf_writer *w = gguf_writer_create(3);
    static const int32_t arr[3] = { 1, -2, 3 };
    static const char *const strs[2] = { "x", "yz" };
    gguf_wvalue a = { .type = GGUF_VT_ARRAY, .elem_type = GGUF_VT_INT32, .count = 3, .v.elems = arr };
    gguf_wvalue s = { .type = GGUF_VT_ARRAY, .elem_type = GGUF_VT_STRING, .count = 2, .v.strs = strs };
    gguf_wvalue u8a = { .type = GGUF_VT_UINT8, .v.u64 = 7 }, u8b = { .type = GGUF_VT_UINT8, .v.u64 = 9 };
    gguf_writer_add_str(w, "general.architecture", "test", NULL);
    gguf_writer_add_u32(w, "general.alignment", 32, NULL);
    gguf_writer_add_str(w, "test.str", "hello", NULL);
    gguf_writer_add(w, "test.arr", &a, NULL);
    gguf_writer_add(w, "test.strs", &s, NULL);
    gguf_writer_add(w, "k.aa", &u8a, NULL);
    gguf_writer_add(w, "k.bb", &u8b, NULL);
    static float f32[64];
    static uint8_t q8[2 * 34];
    for (int i = 0; i < 64; i++)
        f32[i] = (float)i * 0.25f - 8.0f;
    uint64_t ne2[2] = { 32, 2 }, ne1[1] = { 64 };
    gguf_writer_add_tensor(w, "ta", GGUF_TENSOR_F32, 2, ne2, f32, NULL);
    gguf_writer_add_tensor(w, "tb", GGUF_TENSOR_F32, 2, ne2, f32, NULL);
    gguf_writer_add_tensor(w, "tq", GGUF_TENSOR_Q8_0, 1, ne1, q8, NULL);
    tbuf b = { 0 };
    if (gguf_writer_write_buffer(w, &b.p, &b.len, NULL) != GGUF_OK)
        abort();
    gguf_writer_free(w);
    return b;
}

void tbuf_free(tbuf *b)
{
    free(b->p);
    b->p = NULL;
    b->len = 0;
}

tbuf tbuf_copy(const tbuf *b)
{
    tbuf c = { malloc(b->len ? b->len : 1), b->len };
    memcpy(c.p, b->p, b->len);
    return c;
}

void put_u32le(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

void put_u64le(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

uint64_t get_u64le(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

static gguf_file *open_valid(const tbuf *b)
{
    gguf_file *f;
    if (gguf_open_memory(b->p, b->len, &f, NULL) != GGUF_OK)
        abort();
    return f;
}

uint64_t kv_offset(const tbuf *b, const char *key)
{
    gguf_file *f = open_valid(b);
    const gguf_kv *kv = gguf_find_kv(f, key);
    uint64_t o = kv ? kv->offset : 0;
    gguf_close(f);
    return o;
}

uint64_t kv_type_offset(const tbuf *b, const char *key) { return kv_offset(b, key) + 8 + strlen(key); }
uint64_t kv_value_offset(const tbuf *b, const char *key) { return kv_type_offset(b, key) + 4; }

uint64_t tensor_info_offset(const tbuf *b, const char *name)
{
    gguf_file *f = open_valid(b);
    const gguf_tensor *t = gguf_tensor_by_name(f, name);
    uint64_t o = t ? t->info_offset : 0;
    gguf_close(f);
    return o;
}

static uint32_t tensor_ndims(const tbuf *b, const char *name)
{
    gguf_file *f = open_valid(b);
    uint32_t n = gguf_tensor_by_name(f, name)->n_dims;
    gguf_close(f);
    return n;
}

uint64_t tensor_ndims_offset(const tbuf *b, const char *name) { return tensor_info_offset(b, name) + 8 + strlen(name); }
uint64_t tensor_dim_offset(const tbuf *b, const char *name, unsigned d) { return tensor_ndims_offset(b, name) + 4 + 8 * d; }
uint64_t tensor_type_offset(const tbuf *b, const char *name) { return tensor_dim_offset(b, name, tensor_ndims(b, name)); }
uint64_t tensor_offset_offset(const tbuf *b, const char *name) { return tensor_type_offset(b, name) + 4; }

gguf_status open_buf(const tbuf *b, gguf_error *err)
{
    gguf_file *f = NULL;
    /* a heap copy of exactly len bytes, so a sanitizer sees any overread */
    uint8_t *copy = malloc(b->len ? b->len : 1);
    memcpy(copy, b->p, b->len);
    gguf_status s = gguf_open_memory(copy, b->len, &f, err);
    gguf_close(f);
    free(copy);
    return s;
}

static const char *env_or(const char *name, const char *fallback)
{
    const char *v = getenv(name);
    return v && *v ? v : fallback;
}

const char *models_dir(void) { return env_or("GGUFSCOPE_MODELS", "../shared/models"); }
const char *venv_python(void) { return env_or("GGUFSCOPE_PYTHON", "build/venv/bin/python"); }
const char *bin_dir(void) { return env_or("GGUFSCOPE_BIN", "build"); }

char *run_capture(const char *cmd, int *status)
{
    FILE *p = popen(cmd, "r");
    if (!p) {
        *status = -1;
        return NULL;
    }
    size_t cap = 1 << 16, len = 0;
    char *out = malloc(cap);
    size_t n;
    while ((n = fread(out + len, 1, cap - len - 1, p)) > 0) {
        len += n;
        if (cap - len < 4096) {
            cap *= 2;
            out = realloc(out, cap);
        }
    }
    out[len] = '\0';
    int rc = pclose(p);
    *status = WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
    return out;
}

tbuf read_whole_file(const char *path)
{
    tbuf b = { 0 };
    FILE *fp = fopen(path, "rb");
    if (!fp)
        return b;
    fseek(fp, 0, SEEK_END);
    long n = ftell(fp);
    fseek(fp, 0, SEEK_SET);
    b.p = malloc(n > 0 ? (size_t)n + 1 : 1);
    b.len = n > 0 && fread(b.p, 1, (size_t)n, fp) == (size_t)n ? (size_t)n : 0;
    b.p[b.len] = 0; /* a text file's bytes read as one C string */
    fclose(fp);
    return b;
}

bool write_whole_file(const char *path, const uint8_t *p, size_t len)
{
    FILE *fp = fopen(path, "wb");
    if (!fp)
        return false;
    bool ok = fwrite(p, 1, len, fp) == len;
    return (fclose(fp) == 0) && ok;
}

const char *real_models_dir(void) { return env_or("GGUFSCOPE_REAL_MODELS", "build/models/real"); }

static char *existing(const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = malloc(n);
    snprintf(p, n, "%s/%s", dir, name);
    FILE *fp = fopen(p, "rb");
    if (!fp) {
        free(p);
        return NULL;
    }
    fclose(fp);
    return p;
}

char *model_path(const char *name)
{
    char *p = existing(models_dir(), name);
    return p ? p : existing(real_models_dir(), name);
}

char *run_tool(const char *tool, const char *args, int *status)
{
    size_t n = strlen(bin_dir()) + strlen(tool) + strlen(args) + 32;
    char *cmd = malloc(n);
    snprintf(cmd, n, "'%s/%s' %s", bin_dir(), tool, args);
    char *out = run_capture(cmd, status);
    free(cmd);
    return out;
}

char *tmp_dir_make(char *dir, const char *tag)
{
    snprintf(dir, 64, "/tmp/ggufscope-%.16s-XXXXXX", tag);
    return mkdtemp(dir);
}

bool tmp_dir_remove(const char *dir)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0;
}

float test_frand(uint32_t *s)
{
    *s = *s * 1664525u + 1013904223u;
    return (float)((*s >> 8) & 0xffff) / 32768.0f - 1.0f;
}
