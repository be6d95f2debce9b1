/*
 * Sampling: greedy, or llama.cpp's usual chain top-k -> top-p -> min-p on
 * the raw logits, then temperature, then a draw from a seeded xoshiro256**.
 * Candidates more than 40 nats below the best are dropped up front: their
 * probability (< 4e-18) cannot change a draw, and the sort stays short.
 */
#include "engine.h"

#include <math.h>
#include <stdlib.h>

typedef struct cand {
    float logit;
    int32_t id;
} cand;

struct engine_sampler {
    engine_sampler_params p;
    int32_t n_vocab;
    cand *c;
    uint64_t s[4];
};

engine_sampler_params engine_sampler_default(void)
{
    return (engine_sampler_params){ .temp = 0.0f, .top_k = 0, .top_p = 1.0f, .min_p = 0.0f, .seed = 0 };
}

uint64_t engine_splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

/* xoshiro256** (Blackman & Vigna): a uniform double in [0, 1). */
static double next_uniform(engine_sampler *s)
{
    uint64_t *q = s->s, r = rotl(q[1] * 5, 7) * 9, t = q[1] << 17;
    q[2] ^= q[0];
    q[3] ^= q[1];
    q[1] ^= q[2];
    q[0] ^= q[3];
    q[2] ^= t;
    q[3] = rotl(q[3], 45);
    return (double)(r >> 11) * 0x1.0p-53;
}

engine_sampler *engine_sampler_create(const engine_sampler_params *p, int32_t n_vocab)
{
    engine_sampler *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->p = *p;
    s->n_vocab = n_vocab;
    s->c = malloc((size_t)n_vocab * sizeof *s->c);
    if (!s->c) {
        free(s);
        return NULL;
    }
    uint64_t x = p->seed;
    for (int i = 0; i < 4; i++)
        s->s[i] = engine_splitmix64(&x);
    return s;
}

void engine_sampler_free(engine_sampler *s)
{
    if (s) {
        free(s->c);
        free(s);
    }
}

int32_t engine_argmax(const float *logits, int32_t n)
{
    int32_t best = 0;
    for (int32_t i = 1; i < n; i++)
        if (logits[i] > logits[best] || (isnan(logits[best]) && !isnan(logits[i])))
            best = i;
    return best;
}

static int by_logit_desc(const void *a, const void *b)
{
    const cand *x = a, *y = b;
    if (x->logit != y->logit)
        return x->logit < y->logit ? 1 : -1;
    return x->id < y->id ? -1 : x->id > y->id;
}

static int32_t sample_sorted(engine_sampler *s, size_t n);

int32_t engine_sample(engine_sampler *s, const float *logits)
{
    const engine_sampler_params *p = &s->p;
    int32_t best = engine_argmax(logits, s->n_vocab);
    if (p->temp <= 0.0f || !isfinite(logits[best]))
        return best;
    const float floor = logits[best] - 40.0f;
    size_t n = 0;
    for (int32_t i = 0; i < s->n_vocab; i++)
        if (logits[i] >= floor)
            s->c[n++] = (cand){ logits[i], i };
    qsort(s->c, n, sizeof *s->c, by_logit_desc);
    return sample_sorted(s, n);
}

int32_t engine_sample_top(engine_sampler *s, const int32_t *ids, const float *vals, int k)
{
    if (k < 1 || ids[0] < 0)
        return 0;
    if (s->p.temp <= 0.0f || !isfinite(vals[0]))
        return ids[0];
    size_t n = 0;
    for (int i = 0; i < k && ids[i] >= 0; i++)
        if (vals[i] >= vals[0] - 40.0f)
            s->c[n++] = (cand){ vals[i], ids[i] };
    return sample_sorted(s, n);
}

/* Candidates s->c[0..n) sorted by logit (largest first, ties to the lower
 * id): top-k, then top-p and min-p at temperature 1, then a draw at temp. */
static int32_t sample_sorted(engine_sampler *s, size_t n)
{
    const engine_sampler_params *p = &s->p;
    if (p->top_k > 0 && (size_t)p->top_k < n)
        n = (size_t)p->top_k;
    /* Probabilities at temperature 1 decide top-p and min-p. */
    double z = 0.0;
    for (size_t i = 0; i < n; i++)
        z += exp((double)s->c[i].logit - s->c[0].logit);
    if (p->top_p < 1.0f) {
        double cum = 0.0;
        size_t keep = n;
        for (size_t i = 0; i < n; i++) {
            cum += exp((double)s->c[i].logit - s->c[0].logit) / z;
            if (cum >= p->top_p) {
                keep = i + 1;
                break;
            }
        }
        n = keep;
    }
    if (p->min_p > 0.0f) {
        size_t keep = 1;
        while (keep < n && exp((double)s->c[keep].logit - s->c[0].logit) >= p->min_p)
            keep++;
        n = keep;
    }
    double total = 0.0;
    for (size_t i = 0; i < n; i++)
        total += exp(((double)s->c[i].logit - s->c[0].logit) / p->temp);
    double r = next_uniform(s) * total, acc = 0.0;
    for (size_t i = 0; i < n; i++) {
        acc += exp(((double)s->c[i].logit - s->c[0].logit) / p->temp);
        if (r < acc)
            return s->c[i].id;
    }
    return s->c[n - 1].id;
}
