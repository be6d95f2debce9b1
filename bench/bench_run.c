/*
 * Engine throughput, llama-bench style: prompt processing of --pp random
 * tokens and generation of --tg tokens one at a time, medians of --runs,
 * as JSON lines with the achieved weight bandwidth and private memory.
 *   bench-run MODEL [--pp 64] [--tg 32] [--runs 5] [--threads 2] [--backend cpu|cuda] [--numerics exact|ggml]
 * Generation is greedy with the argmax on the backend (only the id comes back),
 * as a real decode loop runs. As in llama-bench, the two are separate tests:
 * generation starts from an empty context, not after the prompt (after a
 * 512-token prompt, each generated token would also pay attention over it).
 */
#include "engine.h"
#include "procmem.h"
#include "progress.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: bench-run MODEL [--pp N] [--tg N] [--runs R] [--threads T] [--backend cpu|cuda] [--numerics exact|ggml]\n");
        return 2;
    }
    int pp = 64, tg = 32, runs = 5, threads = 2;
    const char *backend = "cpu";
    kern_numerics numerics = KERN_NUMERICS_EXACT;
    for (int i = 2; i + 1 < argc; i += 2) {
        int v = atoi(argv[i + 1]);
        if (!strcmp(argv[i], "--backend")) backend = argv[i + 1];
        else if (!strcmp(argv[i], "--numerics") && !kern_numerics_parse(argv[i + 1], &numerics)) runs = 0;
        else if (!strcmp(argv[i], "--pp")) pp = v;
        else if (!strcmp(argv[i], "--tg")) tg = v;
        else if (!strcmp(argv[i], "--runs")) runs = v;
        else if (!strcmp(argv[i], "--threads")) threads = v;
    }
    if (runs < 1 || runs > 64 || pp < 1 || tg < 1) {
        fprintf(stderr, "bench-run: bad arguments\n");
        return 2;
    }
    if (numerics != KERN_NUMERICS_EXACT && strcmp(backend, "cpu")) {
        /* the CUDA backend computes exactly only: a ggml line from it would be an exact one mislabelled */
        fprintf(stderr, "bench-run: --numerics %s is the CPU backend's, not %s's\n", kern_numerics_name(numerics), backend);
        return 2;
    }
    gguf_file *f;
    gguf_error ge;
    if (gguf_open(argv[1], &f, &ge)) {
        fprintf(stderr, "bench-run: %s: %s\n", argv[1], ge.message);
        return 2;
    }
    char why[512] = "out of memory";
    kern_backend *be = !strcmp(backend, "cuda") ? kern_cuda_create(0, why, sizeof why)
                       : !strcmp(backend, "cpu") ? kern_cpu_create_numerics(threads, numerics) : NULL;
    if (!be) {
        fprintf(stderr, "bench-run: backend %s: %s\n", backend, why);
        return 2;
    }
    engine_model *m;
    engine_error e;
    if (engine_model_load(f, be, &m, &e)) {
        fprintf(stderr, "bench-run: %s: %s\n", argv[1], e.message);
        return 2;
    }
    const engine_hparams *hp = engine_model_hparams(m);
    int32_t *tok = malloc((size_t)(pp + tg) * sizeof *tok);
    float *logits = malloc((size_t)hp->n_vocab * sizeof(float));
    uint32_t s = 1;
    for (int i = 0; i < pp + tg; i++) {
        s = s * 1664525u + 1013904223u;
        tok[i] = (int32_t)((s >> 8) % (uint32_t)hp->n_vocab);
    }
    double t_pp[64], t_tg[64];
    uint64_t priv = 0, ctx_bytes = 0;
    /* One context for every run, rewound between them, as llama-bench keeps one per test and clears its memory
     * between repetitions: run 0 (not counted) faults the cache's pages in and warms the page cache, so the
     * timed runs measure the steady state in both engines (llama.cpp faults its KV buffer in when it creates
     * it). A fresh context per run put the page faults of its KV cache in every timed prompt: 4 % of the
     * Qwen3-0.6B shape's pp512. */
    engine_ctx *c;
    if (engine_ctx_create(m, pp + tg, 256, &c, &e)) {
        fprintf(stderr, "bench-run: %s\n", e.message);
        return 2;
    }
    for (int r = 0; r <= runs; r++) {
        if (engine_ctx_rewind(c, 0, &e)) {
            fprintf(stderr, "bench-run: %s\n", e.message);
            return 2;
        }
        double t0 = monotonic_seconds();
        if (engine_forward(c, tok, pp, false, logits, NULL, &e)) {
            fprintf(stderr, "bench-run: %s\n", e.message);
            return 2;
        }
        double t1 = monotonic_seconds();
        if (engine_ctx_rewind(c, 0, &e)) {
            fprintf(stderr, "bench-run: %s\n", e.message);
            return 2;
        }
        int32_t next;
        double t2 = monotonic_seconds();
        for (int i = 0; i < tg; i++)
            if (engine_forward_argmax(c, &tok[pp + i], 1, &next, NULL, &e)) {
                fprintf(stderr, "bench-run: %s\n", e.message);
                return 2;
            }
        double t3 = monotonic_seconds();
        if (r) {
            t_pp[r - 1] = t1 - t0;
            t_tg[r - 1] = t3 - t2;
        }
        uint64_t p = procmem_private_bytes();
        priv = p > priv ? p : priv;
        ctx_bytes = engine_ctx_bytes(c);
    }
    engine_ctx_free(c);
    qsort(t_pp, (size_t)runs, sizeof(double), cmp_double);
    qsort(t_tg, (size_t)runs, sizeof(double), cmp_double);
    double pps = pp / t_pp[runs / 2], tgs = tg / t_tg[runs / 2];
    uint64_t bpt = engine_model_bytes_per_token(m);
    /* the prompt's products in multiply-adds a second, to set beside the vector units' ceilings (bench-peak) */
    uint64_t lpt = engine_model_layer_products_per_token(m);
    const char *name = strrchr(argv[1], '/') ? strrchr(argv[1], '/') + 1 : argv[1];
    printf("{\"bench\":\"run\",\"engine\":\"ggufscope\",\"backend\":\"%s\",\"device\":\"%s\",\"model\":\"%s\","
           "\"threads\":%d,\"pp\":%d,\"tg\":%d,\"runs\":%d,"
           "\"pp_tokens_per_s\":%.2f,\"tg_tokens_per_s\":%.2f,\"weight_bytes_per_token\":%llu,\"tg_gb_per_s\":%.2f,"
           "\"layer_products_per_token\":%llu,\"pp_g_products_per_s\":%.1f,"
           "\"private_mib\":%.1f,\"context_mib\":%.1f}\n",
           be->name, be->device ? be->device : "cpu", name, threads, pp, tg, runs, pps, tgs, (unsigned long long)bpt,
           tgs * bpt / 1e9, (unsigned long long)lpt, pps * (double)lpt / 1e9, priv / 1048576.0, ctx_bytes / 1048576.0);
    const char *timing = be->step_timing ? be->step_timing(be) : NULL;
    if (timing) /* GGUFSCOPE_CUDA_TIMING=1: where the decode steps' time went */
        fprintf(stderr, "%s\n", timing);
    free(tok);
    free(logits);
    engine_model_free(m);
    be->destroy(be);
    gguf_close(f);
    return 0;
}
