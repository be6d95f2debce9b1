/*
 * gguf-fidelity: llama-perplexity's KL-divergence statistics held to their definitions computed here in double
 * (softmax, KL(P_base || P_q), the right token's probability), its logits file read back as written, and the tool
 * as a user runs it on the shared tiny-llama files (F32 base, its llama-quantize quantizations): a model against
 * itself diverges by nothing, a base written with --kl-divergence-base and read with --base-logits gives the
 * figures of the direct run, and texts or vocabularies that cannot be compared are refused.
 */
#include "kld.h"
#include "logits_file.h"
#include "suite_helpers.h"
#include "testutil.h"

#include <cJSON.h>
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char tmp_dir[64];
static void setup(void) { cr_assert(tmp_dir_make(tmp_dir, "fidelity")); }
static void teardown(void) { cr_assert(tmp_dir_remove(tmp_dir)); }
TestSuite(fidelity, .init = setup, .fini = teardown, .timeout = 300);

/* log softmax of x (n) in double */
static void log_softmax(const float *x, int n, double *out)
{
    double mx = x[0], sum = 0;
    for (int i = 1; i < n; i++)
        mx = x[i] > mx ? x[i] : mx;
    for (int i = 0; i < n; i++)
        sum += exp(x[i] - mx);
    for (int i = 0; i < n; i++)
        out[i] = x[i] - mx - log(sum);
}

static int by_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* 400 positions of a 1000-token vocabulary: the base's logits spread over 14 nats (inside the 16 the stored rows
 * keep), the quantization's the same plus noise of 0.3 (a KLD of a few hundredths, as a 4-bit quantization gives).
 * Each statistic against its definition: the base kept as 16-bit steps moves a log-probability by at most
 * 14 / 65535 / 2 nats. */
Test(fidelity, statistics_follow_their_definitions)
{
    enum { V = 1000, N = 400 };
    float *b = malloc(V * sizeof *b), *q = malloc(V * sizeof *q);
    double *lb = malloc(V * sizeof *lb), *lq = malloc(V * sizeof *lq), kl[N];
    uint16_t *row = malloc(kld_row_u16(V) * sizeof *row);
    kld_acc acc = { 0 };
    double nll = 0, nll_base = 0, kld_sum = 0, pd = 0, pd2 = 0;
    int same = 0;
    uint32_t s = 7;
    for (int pos = 0; pos < N; pos++) {
        for (int i = 0; i < V; i++) {
            b[i] = 7.0f * test_frand(&s);
            q[i] = b[i] + 0.3f * test_frand(&s);
        }
        const int tok = (int)((test_frand(&s) + 1.0f) * 0.5f * (V - 1));
        kld_store_row(b, V, tok, row);
        cr_assert(kld_add(&acc, q, V, row, tok));
        log_softmax(b, V, lb);
        log_softmax(q, V, lq);
        double k = 0;
        int tb = 0, tq = 0;
        for (int i = 0; i < V; i++) {
            k += exp(lb[i]) * (lb[i] - lq[i]);
            tb = lb[i] > lb[tb] ? i : tb;
            tq = lq[i] > lq[tq] ? i : tq;
        }
        kl[pos] = k;
        kld_sum += k;
        nll += -lq[tok];
        nll_base += -lb[tok];
        const double d = exp(lq[tok]) - exp(lb[tok]);
        pd += d, pd2 += d * d;
        same += tb == tq;
    }
    kld_summary sm;
    cr_assert(kld_summarize(&acc, &sm));
    cr_assert_eq(acc.count, (size_t)N);
    cr_assert_float_eq(sm.kld.value, kld_sum / N, 2e-3 * kld_sum / N, "mean KLD %.7f, definition %.7f", sm.kld.value,
                       kld_sum / N);
    cr_assert_gt(kld_sum / N, 0.01, "the premise: a KLD of a few hundredths (%g)", kld_sum / N);
    cr_assert_float_eq(sm.ppl.value, exp(nll / N), 1e-5 * exp(nll / N));
    cr_assert_float_eq(sm.ppl_base.value, exp(nll_base / N), 2e-4 * exp(nll_base / N));
    cr_assert_float_eq(sm.ln_ratio.value, (nll - nll_base) / N, 2e-4);
    cr_assert_float_eq(sm.p_diff.value, pd / N, 1e-6);
    cr_assert_float_eq(sm.p_diff_rms.value, sqrt(pd2 / N), 1e-6);
    cr_assert_leq(fabs(sm.same_top.value - (double)same / N), 1.0 / N, "same top %g, definition %g",
                  sm.same_top.value, (double)same / N);
    /* percentiles of the sorted values, interpolated between neighbours: the median of 400 is the mean of the
     * 200th and 201st */
    qsort(kl, N, sizeof kl[0], by_double);
    cr_assert(sm.percentiles);
    cr_assert_float_eq(sm.kld_pct[5], 0.5 * (kl[N / 2 - 1] + kl[N / 2]), 2e-3 * kl[N / 2]);
    cr_assert_float_eq(sm.kld_pct[0], kl[N - 1], 2e-3 * kl[N - 1]);
    cr_assert_float_eq(sm.kld_pct[10], kl[0], 2e-3 * kl[0] + 1e-6);
    cr_assert_float_eq(sm.kld_pct[3], kl[379] + 0.05 * (kl[380] - kl[379]), 2e-3 * kl[380], "95%%: 0.95 x 399");
    /* a model against itself: nothing diverges but the stored steps (16 / 65535 nats: under 1e-4 of KLD) */
    kld_acc self = { 0 };
    for (int pos = 0; pos < 20; pos++) {
        for (int i = 0; i < V; i++)
            b[i] = 10.0f * test_frand(&s);
        kld_store_row(b, V, pos, row);
        cr_assert(kld_add(&self, b, V, row, pos));
    }
    cr_assert(kld_summarize(&self, &sm));
    cr_assert_lt(fabs(sm.kld.value), 1e-4, "KLD of a model against itself: %g", sm.kld.value);
    cr_assert_eq(sm.same_top.value, 1.0);
    cr_assert_not(sm.percentiles, "no percentiles below 100 positions (as llama-perplexity)");
    kld_free(&acc), kld_free(&self);
    free(b), free(q), free(lb), free(lq), free(row);
}

/* The base-logits file as llama-perplexity lays it out, written and read back; a truncated file, another magic
 * and impossible numbers are refused with the reason. */
Test(fidelity, logits_file_round_trips_and_refuses_broken_ones)
{
    enum { V = 301, CTX = 16, CHUNKS = 2 };
    const int scored = logits_file_scored(CTX);
    const size_t row = kld_row_u16(V);
    cr_assert_eq(scored, 7, "positions 8 .. 14 of 16");
    cr_assert_eq(row, 306, "301 tokens padded to 302, after 4 u16 of scale and minimum");
    int32_t toks[CHUNKS * CTX];
    for (int i = 0; i < CHUNKS * CTX; i++)
        toks[i] = (i * 37) % V;
    uint16_t *rows = calloc((size_t)scored * row, sizeof *rows), *back = calloc((size_t)scored * row, sizeof *back);
    float logits[V];
    uint32_t s = 3;
    char path[128];
    snprintf(path, sizeof path, "%s/base.kld", tmp_dir);
    FILE *fp = fopen(path, "wb");
    cr_assert(logits_file_write_header(fp, CTX, V, CHUNKS, toks));
    for (int c = 0; c < CHUNKS; c++) {
        for (int p = 0; p < scored; p++) {
            for (int i = 0; i < V; i++)
                logits[i] = 5.0f * test_frand(&s);
            kld_store_row(logits, V, toks[c * CTX + CTX / 2 + p + 1], rows + (size_t)p * row);
        }
        cr_assert(logits_file_write_chunk(fp, rows, CTX, V));
    }
    fclose(fp);
    logits_file lf;
    char why[600];
    cr_assert(logits_file_open(&lf, path, why, sizeof why), "%s", why);
    cr_assert_eq(lf.n_ctx, (uint32_t)CTX);
    cr_assert_eq(lf.n_vocab, V);
    cr_assert_eq(lf.n_chunk, CHUNKS);
    cr_assert_arr_eq(lf.tokens, toks, sizeof toks);
    cr_assert(logits_file_read_chunk(&lf, back, why, sizeof why));
    cr_assert(logits_file_read_chunk(&lf, back, why, sizeof why));
    cr_assert_arr_eq(back, rows, (size_t)scored * row * sizeof *rows, "the last chunk's rows read back as written");
    cr_assert_not(logits_file_read_chunk(&lf, back, why, sizeof why), "a third chunk where there are two");
    logits_file_close(&lf);
    /* cut short by one byte: refused before anything is evaluated, the sizes named */
    cr_assert_eq(truncate(path, 20 + 4 * CHUNKS * CTX + 2 * (long)CHUNKS * scored * (long)row - 1), 0);
    cr_assert_not(logits_file_open(&lf, path, why, sizeof why));
    cr_assert(strstr(why, "truncated"), "%s", why);
    logits_file_close(&lf);
    fp = fopen(path, "r+b");
    fwrite("_logitz_", 1, 8, fp);
    fclose(fp);
    cr_assert_not(logits_file_open(&lf, path, why, sizeof why));
    cr_assert(strstr(why, "not a llama-perplexity logits file"), "%s", why);
    logits_file_close(&lf);
    free(rows), free(back);
}

static const char *text_path(void)
{
    static const char *const texts[] = { "/usr/share/common-licenses/GPL-3", "/usr/share/common-licenses/Apache-2.0" };
    for (size_t i = 0; i < 2; i++)
        if (access(texts[i], R_OK) == 0)
            return texts[i];
    return NULL;
}

/* gguf-fidelity ARGS --json: its summary line for the model whose path ends with `model` */
static cJSON *summary_of(const char *out, const char *model)
{
    cJSON *found = NULL;
    char *copy = strdup(out);
    for (char *save = NULL, *line = strtok_r(copy, "\n", &save); line && !found; line = strtok_r(NULL, "\n", &save)) {
        cJSON *j = cJSON_Parse(line);
        const cJSON *kind = cJSON_GetObjectItem(j, "kind"), *m = cJSON_GetObjectItem(j, "file");
        const size_t ml = strlen(model);
        if (j && cJSON_IsString(kind) && !strcmp(kind->valuestring, "summary") && cJSON_IsString(m) &&
            strlen(m->valuestring) >= ml && !strcmp(m->valuestring + strlen(m->valuestring) - ml, model))
            found = j;
        else
            cJSON_Delete(j);
    }
    free(copy);
    cr_assert(found, "no summary for %s in:\n%s", model, out);
    return found;
}

static double field(const cJSON *s, const char *name)
{
    return cJSON_GetObjectItem(cJSON_GetObjectItem(s, name), "value")->valuedouble;
}

/* The shared F32 tiny-llama against itself and its llama-quantize quantizations, 3 chunks of 128 tokens of a
 * license text: itself diverges by nothing (KLD under 1e-4, the same top token everywhere, the same PPL); Q8_0
 * diverges by less than Q4_0 (8 bits a weight against 4); with --kl-divergence-base the base's file is
 * llama-perplexity's layout and size, and read back with --base-logits it gives the direct run's figures. */
Test(fidelity, tiny_llama_against_itself_and_its_quantizations)
{
    const char *text = text_path();
    if (!text)
        cr_skip_test("no license text in /usr/share/common-licenses: skipped");
    char *f32 = need_model("tiny-llama-f32.gguf"), *q8 = need_model("tiny-llama-q8_0.gguf"),
         *q4 = need_model("tiny-llama-q4_0.gguf");
    char args[8192], base[160];
    snprintf(base, sizeof base, "%s/base.kld", tmp_dir);
    snprintf(args, sizeof args, "'%s' '%s' '%s' '%s' -f '%s' -c 128 --chunks 3 --json -t 2 --kl-divergence-base '%s'",
             f32, f32, q8, q4, text, base);
    int st;
    char *out = run_tool("gguf-fidelity", args, &st);
    cr_assert_eq(st, 0, "%s", out);
    cJSON *self = summary_of(out, "tiny-llama-f32.gguf"), *s8 = summary_of(out, "tiny-llama-q8_0.gguf"),
          *s4 = summary_of(out, "tiny-llama-q4_0.gguf");
    cr_assert_eq(cJSON_GetObjectItem(self, "positions")->valueint, 3 * 63, "positions 64 .. 126 of each chunk");
    cr_assert_lt(field(self, "kld"), 1e-4, "itself: KLD %g (the stored rows' 16-bit steps only)", field(self, "kld"));
    cr_assert_eq(field(self, "same_top"), 1.0);
    cr_assert_float_eq(field(self, "ppl"), field(self, "ppl_base"), 1e-3 * field(self, "ppl"));
    cr_assert_gt(field(s8, "kld"), 0.0);
    cr_assert_lt(field(s8, "kld"), field(s4, "kld"), "Q8_0's KLD %g, Q4_0's %g", field(s8, "kld"), field(s4, "kld"));
    /* the file: header, 3 x 128 tokens, 3 x 63 rows of 512 + 4 u16 */
    FILE *fp = fopen(base, "rb");
    cr_assert(fp);
    fseek(fp, 0, SEEK_END);
    cr_assert_eq(ftell(fp), 20 + 4 * 3 * 128 + 2 * 3 * 63 * 516);
    fclose(fp);
    snprintf(args, sizeof args, "'%s' --base-logits '%s' --json -t 2", q4, base);
    char *again = run_tool("gguf-fidelity", args, &st);
    cr_assert_eq(st, 0, "%s", again);
    cJSON *r4 = summary_of(again, "tiny-llama-q4_0.gguf");
    static const char *const names[] = { "ppl", "ppl_base", "kld", "p_diff_rms", "same_top" };
    for (size_t i = 0; i < 5; i++)
        cr_assert_eq(field(r4, names[i]), field(s4, names[i]), "%s: %.9g read back, %.9g directly", names[i],
                     field(r4, names[i]), field(s4, names[i]));
    cJSON_Delete(self), cJSON_Delete(s8), cJSON_Delete(s4), cJSON_Delete(r4);
    free(out), free(again), free(f32), free(q8), free(q4);
}

/* What cannot be compared is refused (exit 2, the reason said): a text shorter than two contexts, a quantization
 * of another vocabulary, a base file that is not one, an output that would replace an input. */
Test(fidelity, refuses_what_cannot_be_compared)
{
    const char *text = text_path();
    if (!text)
        cr_skip_test("no license text in /usr/share/common-licenses: skipped");
    char *f32 = need_model("tiny-llama-f32.gguf"), *qwen = need_model("tiny-qwen2-f32.gguf");
    char args[8192], shortp[160];
    snprintf(shortp, sizeof shortp, "%s/short.txt", tmp_dir);
    FILE *fp = fopen(shortp, "w");
    fputs("Once upon a time there was a license.", fp);
    fclose(fp);
    const struct {
        const char *fmt, *why;
    } cases[] = {
        { "'%s' '%s' -f '%s' -c 128 2>&1", "needs at least 256" },
        { "'%s' '%s' -f '%s' -c 128 2>&1", "tokenize the text differently" },
        { "--base-logits '%s' '%s' -f '%s' 2>&1", "not a llama-perplexity logits file" },
        { "'%s' '%s' -f /dev/null --kl-divergence-base '%s' 2>&1", "" },
    };
    for (size_t i = 0; i < 4; i++) {
        if (i == 0)
            snprintf(args, sizeof args, cases[i].fmt, f32, f32, shortp);
        else if (i == 1)
            snprintf(args, sizeof args, cases[i].fmt, f32, qwen, text);
        else if (i == 2)
            snprintf(args, sizeof args, cases[i].fmt, shortp, f32, text);
        else
            snprintf(args, sizeof args, cases[i].fmt, f32, f32, f32);
        int st;
        char *out = run_tool("gguf-fidelity", args, &st);
        cr_expect_eq(st, 2, "case %zu: exit %d: %s", i, st, out);
        cr_expect(strstr(out, cases[i].why), "case %zu: %s", i, out);
        free(out);
    }
    free(f32), free(qwen);
}

/* Provenance: llama-quantize's Q4_K_M, Q6_K, Q8_0 and Q4_0 of the shared F32 tiny-llama (made by llama.cpp, not
 * by us) read identical to our re-quantization of every tensor; a copy of the Q4_K_M with one byte of one block of
 * blk.1.ffn_down.weight changed exits 1 naming that tensor, its block, and no other tensor. */
Test(fidelity, provenance_names_an_altered_block)
{
    char *f32 = need_model("tiny-llama-f32.gguf");
    static const char *const quants[] = { "tiny-llama-q4_k_m.gguf", "tiny-llama-q6_k.gguf", "tiny-llama-q8_0.gguf",
                                          "tiny-llama-q4_0.gguf" };
    char args[8192];
    int st;
    for (size_t i = 0; i < 4; i++) {
        char *q = need_model(quants[i]);
        snprintf(args, sizeof args, "'%s' '%s' --provenance --json", f32, q);
        char *out = run_tool("gguf-fidelity", args, &st);
        cr_assert_eq(st, 0, "%s: %s", quants[i], out);
        cJSON *j = cJSON_Parse(out);
        cr_assert(j, "%s", out);
        cr_assert_eq(cJSON_GetObjectItem(j, "identical")->valueint, 39, "%s: %s", quants[i], out);
        cJSON_Delete(j);
        free(out), free(q);
    }
    /* the altered copy: byte 40 of block 7 of blk.1.ffn_down.weight (Q4_K in this Q4_K_M) */
    char *q = need_model("tiny-llama-q4_k_m.gguf"), copy[160];
    snprintf(copy, sizeof copy, "%s/altered.gguf", tmp_dir);
    tbuf b = read_whole_file(q);
    gguf_file *f;
    gguf_error ge;
    cr_assert_eq(gguf_open(q, &f, &ge), GGUF_OK);
    const gguf_tensor *t = gguf_tensor_by_name(f, "blk.1.ffn_down.weight");
    const uint32_t block = gguf_type_traits_of(t->type)->type_size;
    const size_t off = (size_t)gguf_data_offset(f) + (size_t)t->offset + 7 * (size_t)block + 40;
    gguf_close(f);
    b.p[off] ^= 0x5a;
    FILE *fp = fopen(copy, "wb");
    cr_assert_eq(fwrite(b.p, 1, b.len, fp), b.len);
    fclose(fp);
    tbuf_free(&b);
    snprintf(args, sizeof args, "'%s' '%s' --provenance", f32, copy);
    char *out = run_tool("gguf-fidelity", args, &st);
    cr_assert_eq(st, 1, "%s", out);
    cr_assert(strstr(out, "38 identical to the quantizer's, 1 differ"), "%s", out);
    cr_assert(strstr(out, "blk.1.ffn_down.weight") && strstr(out, "1 of ") && strstr(out, "(the first: block 7)"),
              "%s", out);
    free(out), free(q), free(f32);
}

/* Attribution is checked, not asserted: on tiny-llama's Q4_0 and Q4_K_M (llama-quantize's), the 3 tensors
 * --attribute names, restored together, recover more KLD than 3 tensors chosen at random and restored with
 * --restore, for each of 4 seeds; and its figures are the tool's own (the named set's KLD is what --restore of
 * those three measures). */
Test(fidelity, attributed_tensors_recover_more_than_random_ones)
{
    const char *text = text_path();
    if (!text)
        cr_skip_test("no license text in /usr/share/common-licenses: skipped");
    char *f32 = need_model("tiny-llama-f32.gguf");
    static const char *const quants[] = { "tiny-llama-q4_0.gguf", "tiny-llama-q4_k_m.gguf" };
    static const char *const roles[] = { "attn_q", "attn_k", "attn_v", "attn_output", "ffn_gate", "ffn_up", "ffn_down" };
    char args[8192];
    int st;
    for (size_t qi = 0; qi < 2; qi++) {
        char *q = need_model(quants[qi]);
        snprintf(args, sizeof args, "'%s' '%s' -f '%s' -c 128 --chunks 2 --attribute=3 --json -t 2", f32, q, text);
        char *out = run_tool("gguf-fidelity", args, &st);
        cr_assert_eq(st, 0, "%s", out);
        cJSON *a = NULL;
        char *copy = strdup(out);
        for (char *save = NULL, *line = strtok_r(copy, "\n", &save); line && !a; line = strtok_r(NULL, "\n", &save)) {
            cJSON *j = cJSON_Parse(line);
            if (j && !strcmp(cJSON_GetObjectItem(j, "kind")->valuestring, "attribution"))
                a = j;
            else
                cJSON_Delete(j);
        }
        free(copy);
        cr_assert(a, "%s", out);
        const double kld0 = cJSON_GetObjectItem(a, "kld")->valuedouble;
        const double top = cJSON_GetObjectItem(a, "kld_top_restored")->valuedouble;
        cr_assert_lt(top, kld0, "%s: the named three recover nothing (%g of %g)", quants[qi], top, kld0);
        char named[512] = "";
        const cJSON *list = cJSON_GetObjectItem(a, "tensors");
        for (int i = 0; i < 3; i++)
            snprintf(named + strlen(named), sizeof named - strlen(named), "%s%s", i ? "," : "",
                     cJSON_GetObjectItem(cJSON_GetArrayItem(list, i), "name")->valuestring);
        /* the named three through --restore: the same KLD (the same chunks, the same code path) */
        snprintf(args, sizeof args, "'%s' '%s' -f '%s' -c 128 --chunks 2 --restore '%s' --json -t 2", f32, q, text,
                 named);
        char *back = run_tool("gguf-fidelity", args, &st);
        cr_assert_eq(st, 0, "%s", back);
        cJSON *s = summary_of(back, quants[qi]);
        cr_assert_float_eq(field(s, "kld"), top, 1e-9, "%s: --restore %s gives %.9g, --attribute said %.9g",
                           quants[qi], named, field(s, "kld"), top);
        cJSON_Delete(s);
        free(back);
        for (uint32_t seed = 1; seed <= 4; seed++) {
            char random[512] = "";
            uint32_t r = seed * 2654435761u;
            for (int i = 0; i < 3; i++) {
                r = r * 1103515245u + 12345u;
                const int layer = (int)((r >> 8) % 4);
                r = r * 1103515245u + 12345u;
                snprintf(random + strlen(random), sizeof random - strlen(random), "%sblk.%d.%s.weight", i ? "," : "",
                         layer, roles[(r >> 8) % 7]);
            }
            snprintf(args, sizeof args, "'%s' '%s' -f '%s' -c 128 --chunks 2 --restore '%s' --json -t 2", f32, q,
                     text, random);
            char *rnd = run_tool("gguf-fidelity", args, &st);
            cr_assert_eq(st, 0, "%s", rnd);
            s = summary_of(rnd, quants[qi]);
            cr_log_info("%s: named %s -> KLD %.5f; random %s -> %.5f (of %.5f)", quants[qi], named, top, random,
                        field(s, "kld"), kld0);
            cr_expect_lt(top, field(s, "kld"), "%s: the named three (%s) leave %.5f, three at random (%s) %.5f",
                         quants[qi], named, top, random, field(s, "kld"));
            cJSON_Delete(s);
            free(rnd);
        }
        cJSON_Delete(a);
        free(out), free(q);
    }
    free(f32);
}

/* --plot draws what the attribution measured: every candidate a cell titled with its name, the measured ones (the
 * JSON's "measured") outlined, the bars led by the largest recovery with its figure; a second QUANT its own file;
 * refused without --attribute and onto a file the run reads. */
Test(fidelity, plot_draws_the_attribution)
{
    const char *text = text_path();
    if (!text)
        cr_skip_test("no license text in /usr/share/common-licenses: skipped");
    char *f32 = need_model("tiny-llama-f32.gguf"), *q4k = need_model("tiny-llama-q4_k_m.gguf"),
         *q40 = need_model("tiny-llama-q4_0.gguf");
    char args[8192], svg[128], svg2[128];
    int st;
    snprintf(svg, sizeof svg, "%s/attr.svg", tmp_dir);
    snprintf(svg2, sizeof svg2, "%s/attr-2.svg", tmp_dir);
    snprintf(args, sizeof args, "'%s' '%s' '%s' -f '%s' -c 128 --chunks 2 --attribute=3 --json -t 2 --plot '%s'", f32,
             q4k, q40, text, svg);
    char *out = run_tool("gguf-fidelity", args, &st);
    cr_assert_eq(st, 0, "%s", out);
    cJSON *a = NULL;
    for (char *save = NULL, *line = strtok_r(out, "\n", &save); line && !a; line = strtok_r(NULL, "\n", &save)) {
        cJSON *j = cJSON_Parse(line);
        const cJSON *kind = j ? cJSON_GetObjectItem(j, "kind") : NULL;
        if (cJSON_IsString(kind) && !strcmp(kind->valuestring, "attribution"))
            a = j;
        else
            cJSON_Delete(j);
    }
    cr_assert(a, "no attribution line");
    tbuf b = read_whole_file(svg);
    cr_assert(b.p, "%s not written", svg);
    char *doc = strndup((const char *)b.p, b.len);
    free(b.p);
    cr_expect(!strncmp(doc, "<svg ", 5) && strstr(doc, "</svg>\n"), "not an SVG document");
    snprintf(args, sizeof args, "'%s' -c 'import sys, xml.etree.ElementTree as E; E.parse(sys.argv[1])' '%s' 2>&1",
             venv_python(), svg);
    char *xml = run_capture(args, &st);
    cr_expect_eq(st, 0, "the SVG is not well-formed XML: %s", xml);
    free(xml);
    const cJSON *list = cJSON_GetObjectItem(a, "tensors"), *t;
    int outlined = 0;
    for (const char *p = doc; (p = strstr(p, "stroke=\"black\"")); p++)
        outlined++;
    cr_expect_eq(outlined, cJSON_GetObjectItem(a, "measured")->valueint, "%d cells outlined", outlined);
    cJSON_ArrayForEach(t, list) {
        char want[160];
        snprintf(want, sizeof want, "<title>%s: product error", cJSON_GetObjectItem(t, "name")->valuestring);
        cr_expect(strstr(doc, want), "no cell for %s", want);
    }
    /* the bars, largest recovery first: the first bar's figure is the JSON's first tensor's */
    char first[64];
    snprintf(first, sizeof first, ">%.6f (",
             cJSON_GetObjectItem(cJSON_GetArrayItem(list, 0), "kld_recovered")->valuedouble);
    const char *bars = strstr(doc, "KLD recovered by restoring");
    const char *hit = bars ? strstr(bars, first) : NULL, *end = bars ? strstr(bars, "%)</text>") : NULL;
    cr_expect(hit && end && hit < end && end - hit < 40, "the first bar's figure is not %s", first);
    free(doc);
    cJSON_Delete(a);
    free(out);
    cr_expect_eq(access(svg2, F_OK), 0, "the second QUANT's plot %s is missing", svg2);
    /* refusals: no attribution to draw; the plot over the quantization the run reads */
    snprintf(args, sizeof args, "'%s' '%s' -f '%s' -c 128 --chunks 1 --plot '%s' 2>&1", f32, q4k, text, svg);
    free(run_tool("gguf-fidelity", args, &st));
    cr_expect_eq(st, 2);
    tbuf before = read_whole_file(q4k);
    snprintf(args, sizeof args, "'%s' '%s' -f '%s' -c 128 --chunks 1 --attribute --plot '%s' 2>&1", f32, q4k, text,
             q4k);
    out = run_tool("gguf-fidelity", args, &st);
    cr_expect_eq(st, 2, "%s", out);
    tbuf after = read_whole_file(q4k);
    cr_expect(before.len == after.len && !memcmp(before.p, after.p, before.len), "the quantization was replaced");
    free(before.p), free(after.p), free(out);
    free(f32), free(q4k), free(q40);
}

/* The real SmolLM2 against llama-perplexity (its figures made here: tests/data/llama_perplexity_smollm2.json says
 * how): the base is the Q4_1 file dequantized to F32 by gguf-py, the quantizations our gguf-quantize's Q4_K_M and
 * Q6_K (the same bytes as llama-quantize's, checked by sha256), the text the GPL-3 and Apache-2.0 licenses, 19
 * chunks of 512. Under --numerics ggml, PPL and mean KLD within 1 % of llama-perplexity's (run with an F32 K/V
 * cache: its default F16 cache and flash attention move the smallest KLDs by up to 4 %, docs/gguf-fidelity.md), the
 * same top token within 0.5 points; and the peak resident memory of both models' run below llama-perplexity's second
 * pass (its RSS there committed beside its figures). */
TestSuite(fidelity_real, .timeout = 900);

Test(fidelity_real, smollm2_requantizations_match_llama_perplexity)
{
    char *real = model_path("SmolLM2-135M-Instruct.Q4_1.gguf");
    if (!real)
        cr_skip_test("the real SmolLM2 is not fetched (scripts/fetch-real-models.sh): skipped");
    if (access("/usr/share/common-licenses/GPL-3", R_OK) || access("/usr/share/common-licenses/Apache-2.0", R_OK))
        cr_skip_test("no license texts in /usr/share/common-licenses: skipped");
    tbuf doc_text = read_whole_file("tests/data/llama_perplexity_smollm2.json");
    cJSON *doc = cJSON_Parse((const char *)doc_text.p);
    cr_assert(doc);
    char dir[64], cmd[8192], base[128], text[128], q4[128], q6[128];
    cr_assert(tmp_dir_make(dir, "fidelity-real"));
    snprintf(base, sizeof base, "%s/base.gguf", dir);
    snprintf(text, sizeof text, "%s/text.txt", dir);
    snprintf(q4, sizeof q4, "%s/q4_k_m.gguf", dir);
    snprintf(q6, sizeof q6, "%s/q6_k.gguf", dir);
    snprintf(cmd, sizeof cmd,
             "cat /usr/share/common-licenses/GPL-3 /usr/share/common-licenses/Apache-2.0 > '%s' && "
             "'%s' tests/py/dequantize_to_f32.py '%s' '%s' && sha256sum '%s'", text, venv_python(), real, base, base);
    int st;
    char *out = run_capture(cmd, &st);
    cr_assert_eq(st, 0, "%s", out);
    cr_assert(!strncmp(out, cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "base"), "sha256")->valuestring, 64),
              "the F32 base is not the one llama-perplexity measured: %s", out);
    free(out);
    static const char *const types[] = { "Q4_K_M", "Q6_K" };
    const char *paths[] = { q4, q6 };
    for (int i = 0; i < 2; i++) {
        snprintf(cmd, sizeof cmd, "'%s' '%s' %s -t 2 >/dev/null 2>&1 && sha256sum '%s'", base, paths[i], types[i],
                 paths[i]);
        char *q = run_tool("gguf-quantize", cmd, &st);
        cr_assert_eq(st, 0, "%s", q);
        cr_assert(!strncmp(q, cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "quants"), types[i])->valuestring, 64),
                  "%s is not llama-quantize's bytes: %s", types[i], q);
        free(q);
    }
    snprintf(cmd, sizeof cmd, "'%s' '%s' '%s' -f '%s' -c 512 -t 2 --numerics ggml --json", base, q4, q6, text);
    out = run_tool("gguf-fidelity", cmd, &st);
    cr_assert_eq(st, 0, "%s", out);
    for (int i = 0; i < 2; i++) {
        cJSON *s = summary_of(out, i ? "q6_k.gguf" : "q4_k_m.gguf");
        const cJSON *want = cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "f32_cache"), types[i]);
        const double ppl = cJSON_GetObjectItem(want, "ppl")->valuedouble, kld = cJSON_GetObjectItem(want, "kld")->valuedouble,
                     top = cJSON_GetObjectItem(want, "same_top_percent")->valuedouble,
                     ppl_base = cJSON_GetObjectItem(want, "ppl_base")->valuedouble;
        cr_log_info("%s: PPL %.6f (llama-perplexity %.6f), KLD %.6f (%.6f), same top %.3f%% (%.3f%%)", types[i],
                    field(s, "ppl"), ppl, field(s, "kld"), kld, 100 * field(s, "same_top"), top);
        cr_expect_leq(fabs(field(s, "ppl") / ppl - 1), 0.01, "%s: PPL %g, llama-perplexity's %g", types[i],
                      field(s, "ppl"), ppl);
        cr_expect_leq(fabs(field(s, "ppl_base") / ppl_base - 1), 0.01, "%s: PPL(base) %g, llama-perplexity's %g",
                      types[i], field(s, "ppl_base"), ppl_base);
        cr_expect_leq(fabs(field(s, "kld") / kld - 1), 0.01, "%s: KLD %g, llama-perplexity's %g", types[i],
                      field(s, "kld"), kld);
        cr_expect_leq(fabs(100 * field(s, "same_top") - top), 0.5, "%s: same top %g%%, llama-perplexity's %g%%",
                      types[i], 100 * field(s, "same_top"), top);
        /* both models in one process, yet below llama-perplexity's second pass alone: a layer at a time */
        const double peak = cJSON_GetObjectItem(s, "peak_resident_bytes")->valuedouble,
                     second = 1024.0 * cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "peak_resident_kb"),
                                                           "second_pass")->valuedouble;
        cr_log_info("peak resident %.0f MB (llama-perplexity's second pass %.0f MB)", peak / 1e6, second / 1e6);
        cr_expect_lt(peak, second, "peak resident %.0f bytes, llama-perplexity's second pass %.0f", peak, second);
        cJSON_Delete(s);
    }
    free(out);
    cJSON_Delete(doc);
    tbuf_free(&doc_text);
    free(real);
    cr_assert(tmp_dir_remove(dir));
}
