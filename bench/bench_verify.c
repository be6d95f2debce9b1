/* Hash and audit throughput of gguf-verify's libraries on one model file,
 * beside this machine's memory read bandwidth and `sha256sum` of the same
 * file, all measured in the same run. JSON lines, medians of several runs.
 *
 *   bench-verify MODEL.gguf [runs]
 *
 * The file should sit in the page cache (the first, discarded run puts it
 * there), so the numbers are about memory, not the disk. */
#include "audit.h"
#include "gguf.h"

#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <xxhash.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static void emit(const char *what, int threads, double bytes, double seconds, double bandwidth)
{
    printf("{\"bench\": \"%s\", \"threads\": %d, \"bytes\": %.0f, \"seconds\": %.4f, \"gb_per_s\": %.2f, "
           "\"fraction_of_read_bandwidth\": %.2f}\n",
           what, threads, bytes, seconds, bytes / seconds / 1e9, bandwidth > 0 ? bytes / seconds / 1e9 / bandwidth : 0);
    fflush(stdout);
}

/* Read bandwidth: a sum over 1 GiB of anonymous memory, all threads. */
static double read_bandwidth(int runs)
{
    size_t n = (size_t)1 << 27; /* 1 GiB of uint64 */
    uint64_t *buf = malloc(n * sizeof *buf);
    if (!buf)
        return 0;
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n; i++)
        buf[i] = i;
    double t[16];
    volatile uint64_t sink = 0;
    for (int r = 0; r < runs; r++) {
        double t0 = now();
        uint64_t s = 0;
#pragma omp parallel for schedule(static) reduction(+ : s)
        for (size_t i = 0; i < n; i++)
            s += buf[i];
        t[r] = now() - t0;
        sink += s;
    }
    (void)sink;
    free(buf);
    return (double)(n * sizeof(uint64_t)) / median(t, runs) / 1e9;
}

static double time_hash(const gguf_file *f, unsigned tk, unsigned mk, bool uuid, bool file_sha, int threads,
                        int runs, double *bytes)
{
    double t[16];
    for (int r = 0; r < runs; r++) {
        gguf_hash_request req = { tk, mk, uuid, file_sha, threads, NULL, NULL };
        gguf_hashes h;
        double t0 = now();
        if (gguf_hash_file(f, &req, &h, NULL) != GGUF_OK)
            exit(2);
        t[r] = now() - t0;
        *bytes = (double)h.bytes_hashed;
        gguf_hashes_free(&h);
    }
    return median(t, runs);
}

static double time_audit(const gguf_file *f, int threads, int runs)
{
    size_t n = gguf_tensor_count(f);
    audit_stats *s = calloc(n + 1, sizeof *s);
    double t[16];
    for (int r = 0; r < runs; r++) {
        double t0 = now();
        if (audit_file_stats(f, threads, NULL, NULL, s) != AUDIT_OK)
            exit(2);
        audit_report rep;
        audit_model(f, s, &rep);
        t[r] = now() - t0;
        audit_report_free(&rep);
    }
    free(s);
    return median(t, runs);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: bench-verify MODEL.gguf [runs]\n");
        return 2;
    }
    int runs = argc > 2 ? atoi(argv[2]) : 5;
    if (runs < 1 || runs > 15)
        runs = 5;
    gguf_file *f;
    gguf_error err;
    if (gguf_open(argv[1], &f, &err) != GGUF_OK) {
        fprintf(stderr, "bench-verify: %s\n", err.message);
        return 2;
    }
    int all = omp_get_max_threads();
    double bw = read_bandwidth(runs), bytes = 0, data = 0;
    printf("{\"bench\": \"memory_read\", \"threads\": %d, \"gb_per_s\": %.2f}\n", all, bw);
    for (size_t i = 0; i < gguf_tensor_count(f); i++)
        data += (double)gguf_tensor_at(f, i)->size;

    /* xxh64's own speed on one core with the data in cache: the ceiling of a thread */
    {
        size_t len = (size_t)1 << 20;
        uint8_t *b = malloc(len);
        memset(b, 7, len);
        double t[16];
        volatile uint64_t sink = 0;
        for (int r = 0; r < runs; r++) {
            double t0 = now();
            for (int i = 0; i < 256; i++)
                sink += XXH64(b, len, (uint64_t)i);
            t[r] = now() - t0;
        }
        (void)sink;
        printf("{\"bench\": \"xxh64_in_cache_one_core\", \"threads\": 1, \"gb_per_s\": %.2f}\n",
               256.0 * (double)len / median(t, runs) / 1e9);
        free(b);
    }

    unsigned x = GGUF_HASH_BIT(GGUF_HASH_XXH64), s256 = GGUF_HASH_BIT(GGUF_HASH_SHA256);
    time_hash(f, x, 0, false, false, all, 1, &bytes); /* page the file in */
    for (int th = 1; th <= all; th *= 2) {
        emit("xxh64_tensors", th, bytes, time_hash(f, x, 0, false, false, th, runs, &bytes), bw);
        emit("xxh64_tensors_and_model", th, bytes, time_hash(f, x, x, false, false, th, runs, &bytes), bw);
    }
    emit("sha256_tensors_and_model", all, bytes, time_hash(f, s256, s256, false, false, all, 3, &bytes), bw);
    emit("llama_gguf_hash_all", all, bytes,
         time_hash(f, GGUF_HASH_LLAMA_ALL, GGUF_HASH_LLAMA_ALL, false, false, all, 3, &bytes), bw);
    emit("file_sha256", all, bytes, time_hash(f, 0, 0, false, true, all, 3, &bytes), bw);
    for (int th = 1; th <= all; th *= 2)
        emit("audit_full", th, data, time_audit(f, th, runs), bw);

    /* the reference: coreutils sha256sum over the same (cached) file */
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "sha256sum '%s' > /dev/null", argv[1]);
    double t[16];
    for (int r = 0; r < 3; r++) {
        double t0 = now();
        if (system(cmd) != 0)
            return 2;
        t[r] = now() - t0;
    }
    emit("coreutils_sha256sum", 1, (double)gguf_file_size(f), median(t, 3), bw);
    gguf_close(f);
    return 0;
}
