/* The statistics llama-perplexity prints for a quantized model against its base (tools/perplexity/perplexity.cpp,
 * its --kl-divergence mode), with its definitions: the base's log-probabilities of a position kept as 16-bit steps
 * over its top 16 nats (the form its logits file stores), the quantized model's negative log-likelihood, the
 * KL-divergence of the base's distribution from the quantized one over the tokens the base gives more than e^-16,
 * the change in the probability of the right token, and whether both rank the same token first. */
#ifndef GGUFSCOPE_TOOLS_FIDELITY_KLD_H
#define GGUFSCOPE_TOOLS_FIDELITY_KLD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* u16 values one position's base log-probabilities take: a (scale, min) pair of floats, then one per token */
size_t kld_row_u16(int n_vocab);

/* Stores the log-probabilities of one position's logits as llama-perplexity's base pass does (out: kld_row_u16
 * values); returns the negative log-likelihood of tok as that pass counts it. */
double kld_store_row(const float *logits, int n_vocab, int tok, uint16_t *out);

typedef struct kld_acc {
    double sum_nll, sum_nll2, sum_nll_base, sum_nll_base2, sum_nll_nll_base, sum_kld, sum_kld2;
    double sum_p_diff, sum_p_diff2, sum_p_diff4;
    float max_p_diff;
    size_t n_same_top, count;
    float *kld_values, *p_diff_values; /* every position's, for the percentiles */
    size_t cap;
} kld_acc;

/* Adds one position: the quantized model's logits against the base's stored row, tok the right token. false when
 * out of memory. */
bool kld_add(kld_acc *a, const float *logits, int n_vocab, const uint16_t *base, int tok);
/* n positions at once (logits n x n_vocab, their stored base rows, the right tokens), each position's figures
 * computed in parallel and added in order: the sums are those of n kld_add calls. */
bool kld_add_rows(kld_acc *a, const float *logits, int n_vocab, const uint16_t *rows, const int32_t *targets, int n,
                  int n_threads);
/* kld_store_row for n positions, in parallel. */
void kld_store_rows(const float *logits, int n_vocab, const int32_t *targets, int n, uint16_t *rows, int n_threads);
void kld_free(kld_acc *a);

/* A mean and its uncertainty as llama-perplexity estimates them (0 below 11 values). */
typedef struct kld_value {
    double value, unc;
} kld_value;

typedef struct kld_summary {
    kld_value ppl, ppl_base, ln_ratio, ppl_ratio, ppl_diff, kld, p_diff, p_diff_rms, same_top;
    double cor; /* correlation of ln PPL(Q) and ln PPL(base) */
    /* KLD: max, 99.9, 99, 95, 90, median, 10, 5, 1, 0.1 %, min; dp: max, 99.9, 99, 95, 90, 75, median, 25, 10, 5,
     * 1, 0.1 %, min */
    double kld_pct[11], p_diff_pct[13];
    bool percentiles; /* 100 positions or more (llama-perplexity prints none below) */
} kld_summary;

/* What the positions so far say (sorts copies of the values; false when out of memory). */
bool kld_summarize(const kld_acc *a, kld_summary *s);

extern const char *const kld_pct_names[11];
extern const char *const p_diff_pct_names[13];

#endif
