/*
 * llama-perplexity's KL-divergence statistics, computed as it computes them (tools/perplexity/perplexity.cpp:
 * log_softmax and its three forms, kl_divergence, the mean_and_uncertainty, covariance and percentile lambdas), so
 * that figures from one process here can be held to its two passes. Its arithmetic is kept where it decides a
 * value: the base row's max - 16 floor and 65535 steps, f32 log-sum-exp, the -16 cut in the KLD sum.
 */
#include "kld.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

size_t kld_row_u16(int n_vocab)
{
    return 2 * (((size_t)n_vocab + 1) / 2) + 4;
}

/* perplexity.cpp's nearest_int: round half to even through the f32 mantissa (|x| < 2^22) */
static int nearest_int(float f)
{
    const float v = f + 12582912.f;
    int32_t i;
    memcpy(&i, &v, 4);
    return (i & 0x007fffff) - 0x00400000;
}

double kld_store_row(const float *logits, int n_vocab, int tok, uint16_t *out)
{
    float max_logit = logits[0], min_logit = logits[0];
    for (int i = 1; i < n_vocab; i++) {
        max_logit = logits[i] > max_logit ? logits[i] : max_logit;
        min_logit = logits[i] < min_logit ? logits[i] : min_logit;
    }
    min_logit = min_logit > max_logit - 16 ? min_logit : max_logit - 16;
    double sum_exp = 0.0;
    for (int i = 0; i < n_vocab; i++)
        sum_exp += expf(logits[i] - max_logit);
    const float log_sum_exp = (float)log(sum_exp);
    const float min_log_prob = min_logit - max_logit - log_sum_exp;
    const float scale = (max_logit - min_logit) / 65535.f;
    memcpy(out, &scale, 4);
    memcpy(out + 2, &min_log_prob, 4);
    uint16_t *q = out + 4;
    if (scale != 0.0f) {
        const float inv = 1 / scale;
        for (int i = 0; i < n_vocab; i++)
            q[i] = logits[i] > min_logit ? (uint16_t)nearest_int(inv * (logits[i] - min_logit)) : 0;
    } else {
        memset(q, 0, (size_t)n_vocab * sizeof *q);
    }
    if (n_vocab % 2)
        q[n_vocab] = 0; /* the row's padding to an even count */
    return (double)max_logit + log_sum_exp - logits[tok];
}

static bool keep(kld_acc *a, float kld, float p_diff)
{
    if (a->count >= a->cap) {
        const size_t cap = a->cap ? 2 * a->cap : 4096;
        float *k = realloc(a->kld_values, cap * sizeof *k);
        if (k)
            a->kld_values = k;
        float *p = k ? realloc(a->p_diff_values, cap * sizeof *p) : NULL;
        if (!k || !p)
            return false;
        a->p_diff_values = p;
        a->cap = cap;
    }
    a->kld_values[a->count] = kld;
    a->p_diff_values[a->count] = p_diff;
    return true;
}

/* One position's figures, before they are added up. */
typedef struct kld_point {
    float nll, nll_base, p_diff;
    double kld;
    bool same_top;
} kld_point;

static kld_point point_of(const float *logits, int n_vocab, const uint16_t *base, int tok)
{
    float max_logit = logits[0];
    int imax = 0;
    for (int i = 1; i < n_vocab; i++)
        if (logits[i] > max_logit) {
            max_logit = logits[i];
            imax = i;
        }
    double sum_exp = 0.0;
    for (int i = 0; i < n_vocab; i++)
        sum_exp += expf(logits[i] - max_logit);
    const float log_sum_exp = (float)log(sum_exp);
    float scale, min_log_prob;
    memcpy(&scale, base, 4);
    memcpy(&min_log_prob, base + 2, 4);
    const uint16_t *q = base + 4;

    kld_point pt;
    pt.nll = max_logit + log_sum_exp - logits[tok];
    pt.nll_base = -(scale * q[tok] + min_log_prob);
    max_logit += log_sum_exp;
    double kld = 0.0;
    int imax_base = -1;
    float p_log_base_max = 0;
    for (int i = 0; i < n_vocab; i++) {
        const float p_log_base = scale * q[i] + min_log_prob;
        if (i == 0 || p_log_base > p_log_base_max) {
            p_log_base_max = p_log_base;
            imax_base = i;
        }
        if (p_log_base > -16.f)
            kld += expf(p_log_base) * (p_log_base - logits[i] + max_logit);
    }
    pt.kld = kld;
    pt.p_diff = expf(-pt.nll) - expf(-pt.nll_base);
    pt.same_top = imax == imax_base;
    return pt;
}

static bool accumulate(kld_acc *a, const kld_point *pt)
{
    if (!keep(a, (float)pt->kld, pt->p_diff))
        return false;
    const float nll = pt->nll, nll_base = pt->nll_base, p_diff = pt->p_diff;
    a->sum_nll += nll;
    a->sum_nll2 += nll * nll;
    a->sum_nll_base += nll_base;
    a->sum_nll_base2 += nll_base * nll_base;
    a->sum_nll_nll_base += nll * nll_base;
    a->sum_kld += pt->kld;
    a->sum_kld2 += pt->kld * pt->kld;
    a->sum_p_diff += p_diff;
    const double p_diff2 = p_diff * p_diff; /* the product in f32, as there */
    a->sum_p_diff2 += p_diff2;
    a->sum_p_diff4 += p_diff2 * p_diff2;
    a->max_p_diff = fabsf(p_diff) > a->max_p_diff ? fabsf(p_diff) : a->max_p_diff;
    a->n_same_top += pt->same_top;
    a->count++;
    return true;
}

bool kld_add(kld_acc *a, const float *logits, int n_vocab, const uint16_t *base, int tok)
{
    const kld_point pt = point_of(logits, n_vocab, base, tok);
    return accumulate(a, &pt);
}

bool kld_add_rows(kld_acc *a, const float *logits, int n_vocab, const uint16_t *rows, const int32_t *targets, int n,
                  int n_threads)
{
    kld_point *pts = malloc((size_t)(n > 0 ? n : 1) * sizeof *pts);
    if (!pts)
        return false;
    const size_t row = kld_row_u16(n_vocab);
#pragma omp parallel for num_threads(n_threads) schedule(static)
    for (int p = 0; p < n; p++)
        pts[p] = point_of(logits + (size_t)p * n_vocab, n_vocab, rows + (size_t)p * row, targets[p]);
    bool ok = true;
    for (int p = 0; p < n && ok; p++)
        ok = accumulate(a, &pts[p]);
    free(pts);
    return ok;
}

void kld_store_rows(const float *logits, int n_vocab, const int32_t *targets, int n, uint16_t *rows, int n_threads)
{
    const size_t row = kld_row_u16(n_vocab);
#pragma omp parallel for num_threads(n_threads) schedule(static)
    for (int p = 0; p < n; p++)
        kld_store_row(logits + (size_t)p * n_vocab, n_vocab, targets[p], rows + (size_t)p * row);
}

void kld_free(kld_acc *a)
{
    free(a->kld_values);
    free(a->p_diff_values);
    memset(a, 0, sizeof *a);
}

static kld_value mean_and_uncertainty(double sum, double sum2, size_t count)
{
    if (count < 1)
        return (kld_value){ 0, 0 };
    const double f = sum / count;
    double df = sum2 / count - f * f;
    df = df > 0 && count > 10 ? sqrt(df / (count - 1)) : 0.;
    return (kld_value){ f, df };
}

static double covariance(double suma, double sumb, double sumab, size_t count)
{
    if (count < 10)
        return 0.0;
    return (sumab / count - (suma / count) * (sumb / count)) / (count - 1);
}

static int by_value(const void *a, const void *b)
{
    const float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

/* perplexity.cpp's percentile, its arithmetic in f32 */
static float percentile(const float *v, size_t n, float fraction)
{
    if (fraction <= 0)
        return v[0];
    if (fraction >= 1)
        return v[n - 1];
    float p = fraction * (float)(n - 1);
    const size_t ip = (size_t)p;
    p -= (float)ip;
    return (1 - p) * v[ip] + p * v[ip + 1 < n ? ip + 1 : n - 1];
}

static float median(const float *v, size_t n)
{
    return n % 2 == 0 ? 0.5f * (v[n / 2] + v[n / 2 - 1]) : v[n / 2];
}

const char *const kld_pct_names[11] = { "Maximum", "99.9%", "99.0%", "95.0%", "90.0%", "Median",
                                        "10.0%", " 5.0%", " 1.0%", " 0.1%", "Minimum" };
const char *const p_diff_pct_names[13] = { "Maximum", "99.9%", "99.0%", "95.0%", "90.0%", "75.0%", "Median",
                                           "25.0%", "10.0%", " 5.0%", " 1.0%", " 0.1%", "Minimum" };

bool kld_summarize(const kld_acc *a, kld_summary *s)
{
    memset(s, 0, sizeof *s);
    const size_t n = a->count;
    s->ppl = mean_and_uncertainty(a->sum_nll, a->sum_nll2, n);
    s->ppl_base = mean_and_uncertainty(a->sum_nll_base, a->sum_nll_base2, n);
    const double cov = covariance(a->sum_nll, a->sum_nll_base, a->sum_nll_nll_base, n);
    s->cor = s->ppl.unc > 0 && s->ppl_base.unc > 0 ? cov / (s->ppl.unc * s->ppl_base.unc) : 0.0;
    s->ln_ratio.value = s->ppl.value - s->ppl_base.value;
    s->ln_ratio.unc = sqrt(fmax(0.0, s->ppl.unc * s->ppl.unc + s->ppl_base.unc * s->ppl_base.unc - 2.0 * cov));
    /* the means above are of ln; as perplexities, their uncertainties through d exp(x) = exp(x) dx */
    const double ppl = exp(s->ppl.value), ppl_base = exp(s->ppl_base.value);
    s->ppl_ratio = (kld_value){ exp(s->ln_ratio.value), exp(s->ln_ratio.value) * s->ln_ratio.unc };
    s->ppl = (kld_value){ ppl, ppl * s->ppl.unc };
    s->ppl_base = (kld_value){ ppl_base, ppl_base * s->ppl_base.unc };
    const double ppl_cov = ppl * ppl_base * cov;
    s->ppl_diff = (kld_value){ ppl - ppl_base,
                               sqrt(fmax(0.0, s->ppl.unc * s->ppl.unc + s->ppl_base.unc * s->ppl_base.unc -
                                              2.0 * ppl_cov)) };
    s->kld = mean_and_uncertainty(a->sum_kld, a->sum_kld2, n);
    s->p_diff = mean_and_uncertainty(a->sum_p_diff, a->sum_p_diff2, n);
    const kld_value mse = mean_and_uncertainty(a->sum_p_diff2, a->sum_p_diff4, n);
    s->p_diff_rms.value = sqrt(mse.value);
    s->p_diff_rms.unc = s->p_diff_rms.value > 0 ? 0.5 / s->p_diff_rms.value * mse.unc : 0.0;
    const double top = n ? (double)a->n_same_top / n : 0.0;
    s->same_top = (kld_value){ top, n > 1 ? sqrt(top * (1 - top) / (n - 1)) : 0.0 };
    s->percentiles = n >= 100;
    if (!s->percentiles)
        return true;
    float *k = malloc(n * sizeof *k), *p = malloc(n * sizeof *p);
    if (!k || !p) {
        free(k), free(p);
        return false;
    }
    memcpy(k, a->kld_values, n * sizeof *k);
    memcpy(p, a->p_diff_values, n * sizeof *p);
    qsort(k, n, sizeof *k, by_value);
    qsort(p, n, sizeof *p, by_value);
    const float kf[11] = { 1, 0.999f, 0.99f, 0.95f, 0.9f, -1, 0.1f, 0.05f, 0.01f, 0.001f, 0 };
    for (int i = 0; i < 11; i++)
        s->kld_pct[i] = kf[i] < 0 ? median(k, n) : percentile(k, n, kf[i]);
    const float pf[13] = { 1, 0.999f, 0.99f, 0.95f, 0.9f, 0.75f, -1, 0.25f, 0.1f, 0.05f, 0.01f, 0.001f, 0 };
    for (int i = 0; i < 13; i++)
        s->p_diff_pct[i] = pf[i] < 0 ? median(p, n) : percentile(p, n, pf[i]);
    free(k), free(p);
    return true;
}
