/* gguf-fidelity's reports: a chunk's line, a quantization's summary (llama-perplexity's blocks of figures), its
 * provenance; as text or as JSON Lines in the tools' envelope (docs/JSON.md). */
#include "procmem.h"
#include "fidelity.h"
#include "json_doc.h"
#include "json_line.h"
#include "provenance.h"

#include <cJSON.h>
#include <stdio.h>

void fid_print_chunk(const job *j, int chunk, const model *q)
{
    kld_summary s;
    if (!kld_summarize(&q->acc, &s))
        return;
    if (j->o->json) {
        cJSON *d = json_doc_new("gguf-fidelity", q->path);
        cJSON_AddStringToObject(d, "kind", "chunk");
        cJSON_AddNumberToObject(d, "chunk", chunk + 1);
        cJSON_AddNumberToObject(d, "ppl", s.ppl.value);
        cJSON_AddNumberToObject(d, "ln_ppl_ratio", s.ln_ratio.value);
        cJSON_AddNumberToObject(d, "kld", s.kld.value);
        cJSON_AddNumberToObject(d, "p_diff_rms", s.p_diff_rms.value);
        cJSON_AddNumberToObject(d, "same_top", s.same_top.value);
        json_print_line(stdout, d);
    } else if (!j->o->quiet) {
        printf("%4d  %-28.28s %9.4f ± %9.4f  %10.5f ± %10.5f  %10.5f ± %10.5f  %6.3f ± %6.3f %%  %6.3f ± %6.3f %%\n",
               chunk + 1, q->path, s.ppl.value, s.ppl.unc, s.ln_ratio.value, s.ln_ratio.unc, s.kld.value, s.kld.unc,
               100 * s.p_diff_rms.value, 100 * s.p_diff_rms.unc, 100 * s.same_top.value, 100 * s.same_top.unc);
    }
    fflush(stdout);
}

static void print_value(const char *name, kld_value v)
{
    printf("%-30s: %10.6f ± %10.6f\n", name, v.value, v.unc);
}

void fid_print_summary(const job *j, const model *q)
{
    kld_summary s;
    if (!kld_summarize(&q->acc, &s)) {
        fprintf(stderr, "gguf-fidelity: out of memory\n");
        return;
    }
    if (j->o->json) {
        cJSON *d = json_doc_new("gguf-fidelity", q->path);
        char line[200];
        snprintf(line, sizeof line, "mean KLD %.6f, PPL(Q)/PPL(base) %.4f, same top token %.2f%% over %zu positions",
                 s.kld.value, s.ppl_ratio.value, 100 * s.same_top.value, q->acc.count);
        json_doc_verdict(d, 0, line);
        cJSON_AddStringToObject(d, "kind", "summary");
        if (j->base)
            json_add_text(d, "base", j->base->path);
        cJSON_AddNumberToObject(d, "positions", (double)q->acc.count);
        cJSON_AddNumberToObject(d, "seconds", q->seconds);
        /* the process's, when the evaluation of every model is done */
        cJSON_AddNumberToObject(d, "private_bytes", (double)procmem_private_bytes());
        cJSON_AddNumberToObject(d, "peak_resident_bytes", (double)procmem_peak_bytes());
        const struct {
            const char *name;
            kld_value v;
        } vals[] = { { "ppl", s.ppl }, { "ppl_base", s.ppl_base }, { "ln_ppl_ratio", s.ln_ratio },
                     { "ppl_ratio", s.ppl_ratio }, { "ppl_diff", s.ppl_diff }, { "kld", s.kld },
                     { "p_diff", s.p_diff }, { "p_diff_rms", s.p_diff_rms }, { "same_top", s.same_top } };
        for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++) {
            cJSON *v = cJSON_AddObjectToObject(d, vals[i].name);
            cJSON_AddNumberToObject(v, "value", vals[i].v.value);
            cJSON_AddNumberToObject(v, "unc", vals[i].v.unc);
        }
        cJSON_AddNumberToObject(d, "ln_ppl_correlation", s.cor);
        if (s.percentiles) {
            cJSON *k = cJSON_AddObjectToObject(d, "kld_percentiles"), *p = cJSON_AddObjectToObject(d, "p_diff_percentiles");
            for (int i = 0; i < 11; i++)
                cJSON_AddNumberToObject(k, kld_pct_names[i][0] == ' ' ? kld_pct_names[i] + 1 : kld_pct_names[i],
                                        s.kld_pct[i]);
            for (int i = 0; i < 13; i++)
                cJSON_AddNumberToObject(p, p_diff_pct_names[i][0] == ' ' ? p_diff_pct_names[i] + 1 : p_diff_pct_names[i],
                                        s.p_diff_pct[i]);
        }
        json_print_line(stdout, d);
        return;
    }
    printf("\n%s against %s: %zu positions, %.1f s\n", q->path, j->base ? j->base->path : j->o->base_logits,
           q->acc.count, q->seconds);
    printf("====== Perplexity statistics ======\n");
    print_value("Mean PPL(Q)", s.ppl);
    print_value("Mean PPL(base)", s.ppl_base);
    printf("%-30s: %6.2f%%\n", "Cor(ln(PPL(Q)), ln(PPL(base)))", 100.0 * s.cor);
    print_value("Mean ln(PPL(Q)/PPL(base))", s.ln_ratio);
    print_value("Mean PPL(Q)/PPL(base)", s.ppl_ratio);
    print_value("Mean PPL(Q)-PPL(base)", s.ppl_diff);
    printf("\n====== KL divergence statistics ======\n");
    printf("Mean    KLD: %10.6f ± %10.6f\n", s.kld.value, s.kld.unc);
    for (int i = 0; s.percentiles && i < 11; i++)
        printf("%-7s KLD: %10.6f\n", kld_pct_names[i], s.kld_pct[i]);
    printf("\n====== Token probability statistics ======\n");
    printf("Mean    Δp: %6.3f ± %5.3f %%\n", 100 * s.p_diff.value, 100 * s.p_diff.unc);
    for (int i = 0; s.percentiles && i < 13; i++)
        printf("%-7s Δp: %6.3f%%\n", p_diff_pct_names[i], 100 * s.p_diff_pct[i]);
    printf("RMS Δp    : %6.3f ± %5.3f %%\n", 100 * s.p_diff_rms.value, 100 * s.p_diff_rms.unc);
    printf("Same top p: %6.3f ± %5.3f %%\n", 100 * s.same_top.value, 100 * s.same_top.unc);
}

/* --provenance for one quantization: 0 every checked tensor is the quantizer's, 1 some are not, 2 trouble. */
int fid_print_provenance(const opts *o, const model *base, const model *q)
{
    prov_report r;
    if (!provenance_check(base->f, q->f, o->n_threads, &r)) {
        provenance_free(&r);
        return fid_trouble(2, "out of memory re-quantizing %s", q->path);
    }
    static const char *const kinds[] = { [PROV_IDENTICAL] = "identical", [PROV_DIFFERS] = "differs",
                                         [PROV_NOT_CHECKED] = "not checked", [PROV_SHAPE] = "another shape" };
    if (o->json) {
        cJSON *d = json_doc_new("gguf-fidelity", q->path), *list = cJSON_CreateArray();
        char line[200];
        snprintf(line, sizeof line, "%llu tensors identical to the quantizer's, %llu differ, %llu not checked",
                 (unsigned long long)r.identical, (unsigned long long)r.differing, (unsigned long long)r.not_checked);
        cJSON *findings = json_doc_verdict(d, r.differing ? 1 : 0, line);
        for (uint64_t i = 0; i < r.n; i++) {
            const prov_tensor *p = &r.tensors[i];
            if (p->kind != PROV_DIFFERS && p->kind != PROV_SHAPE)
                continue;
            char measured[200];
            snprintf(measured, sizeof measured, "%llu of %llu blocks differ (the first: block %llu), by up to %.3g of a "
                     "block's RMS", (unsigned long long)p->blocks_differing, (unsigned long long)p->blocks,
                     (unsigned long long)p->first_block, p->worst);
            json_doc_finding(findings, "error", "provenance-differs", "tensor", p->t->name,
                             p->kind == PROV_SHAPE ? "another shape than the base's tensor" : measured,
                             "the bytes the quantizer makes of the base's tensor",
                             "this tensor was not made from this base by ggml's reference quantizer (altered, another "
                             "base, or an importance matrix)");
        }
        cJSON_AddStringToObject(d, "kind", "provenance");
        json_add_text(d, "base", base->path);
        cJSON_AddNumberToObject(d, "tensors", (double)r.n);
        cJSON_AddNumberToObject(d, "identical", (double)r.identical);
        cJSON_AddNumberToObject(d, "differing", (double)r.differing);
        cJSON_AddNumberToObject(d, "not_checked", (double)r.not_checked);
        for (uint64_t i = 0; i < r.n; i++) {
            const prov_tensor *p = &r.tensors[i];
            if (p->kind != PROV_DIFFERS && p->kind != PROV_SHAPE)
                continue;
            cJSON *t = cJSON_CreateObject();
            json_add_text(t, "name", p->t->name);
            cJSON_AddStringToObject(t, "type", gguf_type_traits_of(p->t->type)->name);
            cJSON_AddStringToObject(t, "result", kinds[p->kind]);
            cJSON_AddNumberToObject(t, "blocks", (double)p->blocks);
            cJSON_AddNumberToObject(t, "blocks_differing", (double)p->blocks_differing);
            cJSON_AddNumberToObject(t, "first_block", (double)p->first_block);
            cJSON_AddNumberToObject(t, "worst_over_block_rms", p->worst);
            cJSON_AddItemToArray(list, t);
        }
        cJSON_AddItemToObject(d, "differing_tensors", list);
        json_print_line(stdout, d);
    } else {
        printf("\nprovenance %s from %s: %llu tensors, %llu identical to the quantizer's, %llu differ, %llu not checked\n",
               q->path, base->path, (unsigned long long)r.n, (unsigned long long)r.identical,
               (unsigned long long)r.differing, (unsigned long long)r.not_checked);
        for (uint64_t i = 0; i < r.n; i++) {
            const prov_tensor *p = &r.tensors[i];
            if (p->kind == PROV_SHAPE)
                printf("  %-32s %-7s another shape than the base's tensor of that name\n", p->t->name,
                       gguf_type_traits_of(p->t->type)->name);
            else if (p->kind == PROV_DIFFERS)
                printf("  %-32s %-7s %llu of %llu blocks differ from the quantizer's (the first: block %llu), by up "
                       "to %.3g of a block's RMS\n", p->t->name, gguf_type_traits_of(p->t->type)->name,
                       (unsigned long long)p->blocks_differing, (unsigned long long)p->blocks,
                       (unsigned long long)p->first_block, p->worst);
        }
        if (r.differing && r.differing * 2 > r.n - r.not_checked)
            printf("  most tensors differ: the file was made with an importance matrix or by another quantizer, not "
                   "altered in places\n");
    }
    const int rc = r.differing ? 1 : 0;
    provenance_free(&r);
    return rc;
}

