/*
 * bench-open FILE [--runs N] [--make]
 * With --make, first writes FILE: 100 000 tensors and a 150 000-entry token
 * array (the metadata shape of a large vocabulary model with many tensors).
 * Then times gguf_open + gguf_close N times and prints one JSON line with
 * the median, min and max in milliseconds.
 */
#include "gguf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define N_TENSORS 100000
#define N_TOKENS 150000

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static gguf_status zero_fill(void *user, uint8_t *dst, uint64_t at, size_t len)
{
    (void)user;
    (void)at;
    memset(dst, 0, len);
    return GGUF_OK;
}

static int make_file(const char *path)
{
    gguf_writer *w = gguf_writer_create(3);
    char **tokens = malloc(N_TOKENS * sizeof *tokens);
    char *mem = malloc(N_TOKENS * 16);
    if (!w || !tokens || !mem)
        return 2;
    for (int i = 0; i < N_TOKENS; i++) {
        tokens[i] = mem + (size_t)i * 16;
        snprintf(tokens[i], 16, "tok%d", i);
    }
    gguf_wvalue toks = { .type = GGUF_VT_ARRAY, .elem_type = GGUF_VT_STRING, .count = N_TOKENS,
                         .v.strs = (const char *const *)tokens };
    gguf_error err;
    gguf_writer_add_str(w, "general.architecture", "llama", &err);
    gguf_writer_add(w, "tokenizer.ggml.tokens", &toks, &err);
    char name[64];
    uint64_t ne[2] = { 32, 2 };
    for (int i = 0; i < N_TENSORS; i++) {
        snprintf(name, sizeof name, "blk.%d.t%d.weight", i / 100, i % 100);
        if (gguf_writer_add_tensor_fill(w, name, GGUF_TENSOR_F16, 2, ne, zero_fill, NULL, &err) != GGUF_OK) {
            fprintf(stderr, "bench-open: %s\n", err.message);
            return 2;
        }
    }
    gguf_status s = gguf_writer_write_file(w, path, &err);
    gguf_writer_free(w);
    free(tokens);
    free(mem);
    if (s != GGUF_OK) {
        fprintf(stderr, "bench-open: %s\n", err.message);
        return 2;
    }
    return 0;
}

int main(int argc, char **argv)
{
    const char *path = NULL;
    int runs = 9;
    bool make = false;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc)
            runs = atoi(argv[++i]);
        else if (strcmp(argv[i], "--make") == 0)
            make = true;
        else
            path = argv[i];
    }
    if (!path || runs < 1 || runs > 1000) {
        fprintf(stderr, "usage: bench-open FILE [--runs N] [--make]\n");
        return 2;
    }
    if (make && make_file(path) != 0)
        return 2;
    double *t = malloc((size_t)runs * sizeof *t);
    size_t n_tensors = 0, n_kv = 0;
    for (int r = 0; r < runs; r++) {
        gguf_file *f;
        gguf_error err;
        double t0 = now_ms();
        if (gguf_open(path, &f, &err) != GGUF_OK) {
            fprintf(stderr, "bench-open: %s\n", err.message);
            return 2;
        }
        n_tensors = gguf_tensor_count(f);
        n_kv = gguf_kv_count(f);
        gguf_close(f);
        t[r] = now_ms() - t0;
    }
    qsort(t, (size_t)runs, sizeof *t, cmp_double);
    printf("{\"bench\":\"open\",\"impl\":\"ggufscope\",\"file\":\"%s\",\"tensors\":%zu,\"keys\":%zu,"
           "\"runs\":%d,\"median_ms\":%.3f,\"min_ms\":%.3f,\"max_ms\":%.3f}\n",
           path, n_tensors, n_kv, runs, t[runs / 2], t[0], t[runs - 1]);
    free(t);
    return 0;
}
