/* The comparisons' one verdict (--against, --against DUMP, --against-logits): each part's finding folded in, their
 * prompt logits held to ours, and the final line whose word matches the exit status. */
#include "npy.h"
#include "run.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void run_against_merge(run_against_result *res, int rc, int layer, int pos, const char *summary)
{
    if (rc == 0 || res->rc == 2)
        return;
    if (rc == 2 || res->rc == 0 || (layer >= 0 && (res->mark_layer < 0 || layer < res->mark_layer))) {
        const size_t n = strlen(summary) < sizeof res->summary - 1 ? strlen(summary) : sizeof res->summary - 1;
        memcpy(res->summary, summary, n); /* a reason from a file's name may be cut */
        res->summary[n] = '\0';
        res->mark_layer = layer;
        res->mark_pos = pos;
    }
    res->rc = rc > res->rc ? rc : res->rc;
}

int run_against_logits(FILE *out, const run_opts *o, const float *ours, size_t n_prompt, int n_vocab,
                       run_against_result *res)
{
    char why[600];
    uint64_t shape[NPY_MAX_DIMS];
    int ndim = 0;
    float *theirs = npy_read_floats(o->against_logits, shape, &ndim, why, sizeof why);
    if (!theirs) {
        fprintf(out, "logits     CANNOT COMPARE: %s\n", why);
        run_against_merge(res, 2, -1, -1, why);
        return res->logits_rc = 2;
    }
    /* (n_prompt, n_vocab), with leading axes of 1 dropped: transformers' (batch 1, n, V); a single position's (V) */
    int lead = 0;
    while (lead < ndim - 2 && shape[lead] == 1)
        lead++;
    const uint64_t rows = ndim - lead == 1 ? 1 : shape[lead], cols = shape[ndim - 1];
    if (ndim - lead > 2 || rows != n_prompt || cols != (uint64_t)n_vocab) {
        char got[96] = "";
        for (int d = 0; d < ndim; d++)
            snprintf(got + strlen(got), sizeof got - strlen(got), "%s%llu", d ? " x " : "",
                     (unsigned long long)shape[d]);
        snprintf(why, sizeof why, "--against-logits %s holds %s logits; the prompt gives %zu x %d (a leading batch "
                 "axis of 1 is dropped)", o->against_logits, got, n_prompt, n_vocab);
        fprintf(out, "logits     CANNOT COMPARE: %s\n", why);
        run_against_merge(res, 2, -1, -1, why);
        free(theirs);
        return res->logits_rc = 2;
    }
    /* per prompt position: max |ours - theirs| over max |theirs| (the goldens' measure), and the argmax */
    int first = -1, worst_row = 0;
    double worst = 0.0;
    size_t argmax_differ = 0;
    for (size_t i = 0; i < n_prompt; i++) {
        const float *a = ours + i * (size_t)n_vocab, *b = theirs + i * (size_t)n_vocab;
        double diff = 0.0, scale = 0.0;
        int32_t ia = 0, ib = 0;
        for (int k = 0; k < n_vocab; k++) {
            diff = fmax(diff, fabs((double)a[k] - b[k]));
            scale = fmax(scale, fabs((double)b[k]));
            ia = a[k] > a[ia] ? k : ia;
            ib = b[k] > b[ib] ? k : ib;
        }
        double rel = scale > 0.0 ? diff / scale : diff;
        argmax_differ += ia != ib;
        if (rel > worst)
            worst = rel, worst_row = (int)i;
        if (first < 0 && rel > o->tolerance)
            first = (int)i;
    }
    free(theirs);
    fprintf(out, "logits     %s: largest difference %.3g of max |logit| at prompt position %d; argmax differs at "
                 "%zu of %zu positions: %s\n", o->against_logits, worst, worst_row, argmax_differ, n_prompt,
            first >= 0 ? "DEPART" : "AGREE");
    if (first < 0)
        return res->logits_rc = 0;
    char s[200];
    snprintf(s, sizeof s, "the logits depart first at prompt position %d (beyond %g of max |logit|): look after the "
             "last layer (the output norm, the lm_head, soft-capping)", first, o->tolerance);
    run_against_merge(res, 1, INT32_MAX, first, s);
    return res->logits_rc = 1;
}

void run_against_verdict(FILE *out, const run_opts *o, const run_against_result *res)
{
    if (res->rc == 2) {
        fprintf(out, "verdict    CANNOT COMPARE: %s\n", res->summary);
        return;
    }
    if (res->rc == 1) {
        const bool logits_alone = res->logits_rc == 0;
        fprintf(out, "verdict    DEPART: %s%s%s\n", res->summary, logits_alone ? ", though the logits agree" : "",
                res->logits_rc == 1 && strncmp(res->summary, "the logits", 10) ? "; the logits depart too" : "");
        return;
    }
    const char *parts = res->layers_rc == 0 && res->full_rc == 0 ? "every layer, value by value, and its statistics"
                        : res->full_rc == 0                      ? "every layer, value by value,"
                        : res->layers_rc == 0                    ? "every layer at every prompt position"
                                                                 : "";
    if (res->logits_rc == 0 && parts[0])
        fprintf(out, "verdict    AGREE: %s and the logits agree within %g\n",
                res->layers_rc == 0 && res->full_rc < 0 ? "every layer" : parts, o->tolerance);
    else if (res->logits_rc == 0)
        fprintf(out, "verdict    AGREE: the logits agree within %g of max |logit| at every prompt position\n",
                o->tolerance);
    else
        fprintf(out, "verdict    AGREE: %s within %g\n", parts, o->tolerance);
}
