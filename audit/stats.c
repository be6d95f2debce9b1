/* Per-tensor statistics, streamed: each thread decodes a run of blocks into
 * a small scratch buffer and folds it into its own accumulator; the
 * accumulators are merged in thread order (Chan's pairwise formulas for mean
 * and variance), so results do not depend on timing. */
#include "audit.h"
#include "quant.h"

#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#define CHUNK_VALUES 8192
#define EXP_BINS 256 /* biased f32 exponent: 0 zero/subnormal, 255 Inf/NaN */

typedef struct scale_acc {
    uint64_t count, n_nan, n_inf, n_neg, n_zero;
    uint64_t first_nan, first_inf, first_neg;
    float max_abs;
    uint64_t max_abs_block;
    uint64_t hist[EXP_BINS];
} scale_acc;

typedef struct acc {
    uint64_t n_fin, n_nan, n_pinf, n_ninf, n_zero, first_nonfinite;
    double mean, m2;
    float min, max, max_abs;
    uint64_t max_abs_index;
    uint64_t hist[EXP_BINS];
    scale_acc sc[QUANT_MAX_SCALES];
} acc;

static void acc_init(acc *a)
{
    memset(a, 0, sizeof *a);
    a->first_nonfinite = AUDIT_NONE;
    a->min = INFINITY;
    a->max = -INFINITY;
    for (int i = 0; i < QUANT_MAX_SCALES; i++)
        a->sc[i].first_nan = a->sc[i].first_inf = a->sc[i].first_neg = AUDIT_NONE;
}

static inline uint32_t bits_of(float v)
{
    uint32_t b;
    memcpy(&b, &v, 4);
    return b;
}

/* Folds n finite-or-not values starting at element e0 into a. */
static void fold_values(acc *a, const float *x, size_t n, uint64_t e0)
{
    uint32_t nonfinite = 0;
    for (size_t i = 0; i < n; i++)
        nonfinite += (bits_of(x[i]) & 0x7f800000u) == 0x7f800000u;

    float mn = INFINITY, mx = -INFINITY, amax = 0.0f;
    double sum = 0.0;
    uint64_t zeros = 0, n_fin = n;
    if (nonfinite == 0) {
        for (size_t i = 0; i < n; i++) {
            float v = x[i], av = fabsf(v);
            mn = v < mn ? v : mn;
            mx = v > mx ? v : mx;
            amax = av > amax ? av : amax;
            sum += v;
            zeros += v == 0.0f;
        }
    } else {
        n_fin = 0;
        for (size_t i = 0; i < n; i++) {
            float v = x[i];
            if (isnan(v) || isinf(v)) {
                if (a->first_nonfinite == AUDIT_NONE || e0 + i < a->first_nonfinite)
                    a->first_nonfinite = e0 + i;
                a->n_nan += isnan(v) != 0;
                a->n_pinf += isinf(v) && v > 0;
                a->n_ninf += isinf(v) && v < 0;
                continue;
            }
            n_fin++;
            mn = v < mn ? v : mn;
            mx = v > mx ? v : mx;
            amax = fabsf(v) > amax ? fabsf(v) : amax;
            sum += v;
            zeros += v == 0.0f;
        }
    }
    uint64_t h[4][EXP_BINS] = { { 0 } };
    size_t i = 0;
    for (; i + 4 <= n; i += 4)
        for (int k = 0; k < 4; k++)
            h[k][(bits_of(x[i + k]) >> 23) & 0xff]++;
    for (; i < n; i++)
        h[0][(bits_of(x[i]) >> 23) & 0xff]++;
    for (int b = 0; b < EXP_BINS; b++)
        a->hist[b] += h[0][b] + h[1][b] + h[2][b] + h[3][b];
    if (n_fin == 0)
        return;

    double cmean = sum / (double)n_fin, m2 = 0.0;
    if (nonfinite == 0) {
        for (size_t k = 0; k < n; k++) {
            double d = (double)x[k] - cmean;
            m2 += d * d;
        }
    } else {
        for (size_t k = 0; k < n; k++)
            if (isfinite(x[k])) {
                double d = (double)x[k] - cmean;
                m2 += d * d;
            }
    }
    if (amax > a->max_abs || a->n_fin == 0) {
        for (size_t k = 0; k < n; k++)
            if (fabsf(x[k]) == amax) {
                a->max_abs_index = e0 + k;
                break;
            }
        a->max_abs = amax;
    }
    a->min = mn < a->min ? mn : a->min;
    a->max = mx > a->max ? mx : a->max;
    a->n_zero += zeros;
    /* Chan et al.: combine (n_a, mean_a, M2_a) with this chunk's (n_b, mean_b, M2_b). */
    double na = (double)a->n_fin, nb = (double)n_fin, delta = cmean - a->mean;
    a->n_fin += n_fin;
    a->mean += delta * nb / (na + nb);
    a->m2 += m2 + delta * delta * na * nb / (na + nb);
}

static void fold_scales(acc *a, uint32_t type, const uint8_t *blocks, size_t n_blocks, size_t block_bytes,
                        uint64_t b0)
{
    for (size_t k = 0; k < n_blocks; k++) {
        float s[QUANT_MAX_SCALES];
        int n = quant_block_scales(type, blocks + k * block_bytes, s);
        for (int i = 0; i < n; i++) {
            scale_acc *c = &a->sc[i];
            uint64_t blk = b0 + k;
            c->count++;
            c->hist[(bits_of(s[i]) >> 23) & 0xff]++;
            if (isnan(s[i])) {
                c->n_nan++;
                c->first_nan = c->first_nan == AUDIT_NONE ? blk : c->first_nan;
                continue;
            }
            if (isinf(s[i])) {
                c->n_inf++;
                c->first_inf = c->first_inf == AUDIT_NONE ? blk : c->first_inf;
                continue;
            }
            if (s[i] < 0.0f) {
                c->n_neg++;
                c->first_neg = c->first_neg == AUDIT_NONE ? blk : c->first_neg;
            }
            c->n_zero += s[i] == 0.0f;
            if (fabsf(s[i]) > c->max_abs || c->count == 1) {
                c->max_abs = fabsf(s[i]);
                c->max_abs_block = blk;
            }
        }
    }
}

static uint64_t min_index(uint64_t x, uint64_t y) { return x < y ? x : y; }

/* b (the later range) into a. */
static void acc_merge(acc *a, const acc *b)
{
    if (b->n_fin) {
        if (a->n_fin == 0 || b->max_abs > a->max_abs) {
            a->max_abs = b->max_abs;
            a->max_abs_index = b->max_abs_index;
        }
        double na = (double)a->n_fin, nb = (double)b->n_fin, delta = b->mean - a->mean;
        a->mean += delta * nb / (na + nb);
        a->m2 += b->m2 + delta * delta * na * nb / (na + nb);
        a->n_fin += b->n_fin;
        a->min = b->min < a->min ? b->min : a->min;
        a->max = b->max > a->max ? b->max : a->max;
    }
    a->n_nan += b->n_nan;
    a->n_pinf += b->n_pinf;
    a->n_ninf += b->n_ninf;
    a->n_zero += b->n_zero;
    a->first_nonfinite = min_index(a->first_nonfinite, b->first_nonfinite);
    for (int i = 0; i < EXP_BINS; i++)
        a->hist[i] += b->hist[i];
    for (int s = 0; s < QUANT_MAX_SCALES; s++) {
        scale_acc *x = &a->sc[s];
        const scale_acc *y = &b->sc[s];
        if (y->count && (x->count == 0 || y->max_abs > x->max_abs)) {
            x->max_abs = y->max_abs;
            x->max_abs_block = y->max_abs_block;
        }
        x->count += y->count;
        x->n_nan += y->n_nan;
        x->n_inf += y->n_inf;
        x->n_neg += y->n_neg;
        x->n_zero += y->n_zero;
        x->first_nan = min_index(x->first_nan, y->first_nan);
        x->first_inf = min_index(x->first_inf, y->first_inf);
        x->first_neg = min_index(x->first_neg, y->first_neg);
        for (int i = 0; i < EXP_BINS; i++)
            x->hist[i] += y->hist[i];
    }
}

/* Median biased exponent over bins 1..254 (nonzero finite normals); 0 when empty. */
static int median_bin(const uint64_t *hist, uint64_t *total)
{
    uint64_t n = 0, run = 0;
    for (int b = 1; b < 255; b++)
        n += hist[b];
    *total = n;
    if (n == 0)
        return 0;
    for (int b = 1; b < 255; b++) {
        run += hist[b];
        if (2 * run >= n)
            return b;
    }
    return 254;
}

static uint64_t count_from_bin(const uint64_t *hist, int from)
{
    uint64_t n = 0;
    for (int b = from < 1 ? 1 : from; b < 255; b++)
        n += hist[b];
    return n;
}

static void finish(const acc *a, uint32_t type, audit_stats *out)
{
    out->n_nan = a->n_nan;
    out->n_pinf = a->n_pinf;
    out->n_ninf = a->n_ninf;
    out->n_zero = a->n_zero;
    out->first_nonfinite = a->first_nonfinite;
    if (a->n_fin) {
        out->min = a->min;
        out->max = a->max;
        out->mean = a->mean;
        double var = a->m2 / (double)a->n_fin;
        out->std = sqrt(var > 0 ? var : 0);
        out->rms = sqrt(a->mean * a->mean + (var > 0 ? var : 0));
        out->max_abs = a->max_abs;
        out->max_abs_index = a->max_abs_index;
    }
    uint64_t total;
    int med = median_bin(a->hist, &total);
    out->median_log2 = total ? med - 127 : 0;
    out->n_extreme = total ? count_from_bin(a->hist, med + AUDIT_EXTREME_LOG2) : 0;
    out->n_scales = quant_scale_count(type);
    for (int s = 0; s < out->n_scales; s++) {
        const scale_acc *c = &a->sc[s];
        audit_scale_stats *o = &out->scale[s];
        o->name = quant_scale_name(type, s);
        o->never_negative = quant_scale_never_negative(type, s);
        o->count = c->count;
        o->n_nan = c->n_nan;
        o->n_inf = c->n_inf;
        o->n_negative = c->n_neg;
        o->n_zero = c->n_zero;
        o->first_nan = c->first_nan;
        o->first_inf = c->first_inf;
        o->first_negative = c->first_neg;
        o->max_abs = c->max_abs;
        o->max_abs_block = c->max_abs_block;
        uint64_t nz;
        int smed = median_bin(c->hist, &nz);
        o->median_log2 = nz ? smed - 127 : 0;
        o->n_huge = nz ? count_from_bin(c->hist, smed + AUDIT_HUGE_SCALE_LOG2) : 0;
        o->first_huge = o->n_huge ? c->max_abs_block : AUDIT_NONE;
    }
}

audit_status audit_tensor_stats(const gguf_tensor *t, int n_threads, audit_stats *out)
{
    memset(out, 0, sizeof *out);
    out->first_nonfinite = AUDIT_NONE;
    if (!t)
        return AUDIT_E_INVALID_ARG;
    quant_row_fn fn = quant_row_function(t->type, QUANT_IMPL_BEST);
    if (!fn || !t->data)
        return AUDIT_OK; /* supported stays false: a type quant/ cannot decode, or bytes not there (not fetched) */
    out->supported = true;
    out->count = t->n_elements;
    const gguf_type_traits *tt = gguf_type_traits_of(t->type);
    uint64_t n_blocks = t->n_elements / tt->block_size;
    uint64_t per_chunk = CHUNK_VALUES / tt->block_size ? CHUNK_VALUES / tt->block_size : 1;
    uint64_t n_chunks = (n_blocks + per_chunk - 1) / per_chunk;
    int nt = n_threads > 0 ? n_threads : omp_get_max_threads();
    if (n_chunks < 8)
        nt = 1;
    acc *accs = malloc((size_t)nt * sizeof *accs);
    float *scratch = malloc((size_t)nt * per_chunk * tt->block_size * sizeof *scratch);
    if (!accs || !scratch) {
        free(accs);
        free(scratch);
        return AUDIT_E_NOMEM;
    }
    bool has_scales = quant_scale_count(t->type) > 0;
#pragma omp parallel num_threads(nt)
    {
        int me = omp_get_thread_num();
        acc *a = &accs[me];
        float *x = scratch + (size_t)me * per_chunk * tt->block_size;
        acc_init(a);
#pragma omp for schedule(static)
        for (uint64_t c = 0; c < n_chunks; c++) {
            uint64_t b0 = c * per_chunk, nb = n_blocks - b0 < per_chunk ? n_blocks - b0 : per_chunk;
            const uint8_t *src = t->data + b0 * tt->type_size;
            fn(src, x, (int64_t)(nb * tt->block_size));
            fold_values(a, x, (size_t)(nb * tt->block_size), b0 * tt->block_size);
            if (has_scales)
                fold_scales(a, t->type, src, (size_t)nb, tt->type_size, b0);
        }
    }
    for (int i = 1; i < nt; i++)
        acc_merge(&accs[0], &accs[i]);
    finish(&accs[0], t->type, out);
    free(accs);
    free(scratch);
    return AUDIT_OK;
}

audit_status audit_file_stats(const gguf_file *f, int n_threads, gguf_progress_fn progress, void *user,
                              audit_stats *out)
{
    uint64_t total = 0, done = 0;
    size_t n = gguf_tensor_count(f);
    for (size_t i = 0; i < n; i++)
        total += gguf_tensor_at(f, i)->size;
    for (size_t i = 0; i < n; i++) {
        const gguf_tensor *t = gguf_tensor_at(f, i);
        audit_status s = audit_tensor_stats(t, n_threads, &out[i]);
        if (s != AUDIT_OK)
            return s;
        done += t->size;
        if (progress)
            progress(user, done, total);
    }
    return AUDIT_OK;
}
