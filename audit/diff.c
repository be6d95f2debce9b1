/* Two tensors compared value by value, streamed through per-thread scratch. */
#include "audit.h"
#include "quant.h"

#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#define CHUNK_VALUES 8192

typedef struct dacc {
    uint64_t n_diff, nf_a, nf_b, max_index;
    double max_diff, ss_diff, ss_a, ss_b;
} dacc;

static void fold(dacc *d, const float *a, const float *b, size_t n, uint64_t e0)
{
    for (size_t i = 0; i < n; i++) {
        bool fa = isfinite(a[i]), fb = isfinite(b[i]);
        d->nf_a += !fa;
        d->nf_b += !fb;
        if (!fa || !fb) {
            /* NaN vs NaN (or the same Inf) is no difference in the file's values */
            bool same = (isnan(a[i]) && isnan(b[i])) || a[i] == b[i];
            d->n_diff += !same;
            continue;
        }
        double x = (double)b[i] - (double)a[i];
        d->n_diff += x != 0.0;
        d->ss_diff += x * x;
        d->ss_a += (double)a[i] * a[i];
        d->ss_b += (double)b[i] * b[i];
        if (fabs(x) > d->max_diff) {
            d->max_diff = fabs(x);
            d->max_index = e0 + i;
        }
    }
}

audit_status audit_compare_tensors(const gguf_tensor *a, const gguf_tensor *b, int n_threads, audit_diff *out)
{
    memset(out, 0, sizeof *out);
    if (!a || !b)
        return AUDIT_E_INVALID_ARG;
    /* the same bytes read as another type or shape are other values: identical means all three agree */
    out->bytes_equal = a->type == b->type && a->n_dims == b->n_dims && memcmp(a->ne, b->ne, sizeof a->ne) == 0 &&
                       a->size == b->size && memcmp(a->data, b->data, a->size) == 0;
    quant_row_fn fa = quant_row_function(a->type, QUANT_IMPL_BEST), fb = quant_row_function(b->type, QUANT_IMPL_BEST);
    if (a->n_elements != b->n_elements || !fa || !fb)
        return AUDIT_OK;
    const gguf_type_traits *ta = gguf_type_traits_of(a->type), *tb = gguf_type_traits_of(b->type);
    /* chunks hold whole blocks of both types: a multiple of both block sizes */
    uint64_t step = ta->block_size > tb->block_size ? ta->block_size : tb->block_size;
    if (step % ta->block_size || step % tb->block_size)
        step = (uint64_t)ta->block_size * tb->block_size;
    uint64_t per = CHUNK_VALUES > step ? CHUNK_VALUES / step * step : step;
    uint64_t n = a->n_elements, n_chunks = (n + per - 1) / per;
    int nt = n_threads > 0 ? n_threads : omp_get_max_threads();
    if (n_chunks < 8)
        nt = 1;
    dacc *acc = calloc((size_t)nt, sizeof *acc);
    float *scratch = malloc((size_t)nt * 2 * per * sizeof *scratch);
    if (!acc || !scratch) {
        free(acc), free(scratch);
        return AUDIT_E_NOMEM;
    }
    out->comparable = true;
    out->count = n;
#pragma omp parallel num_threads(nt)
    {
        int me = omp_get_thread_num();
        float *xa = scratch + (size_t)me * 2 * per, *xb = xa + per;
#pragma omp for schedule(static)
        for (uint64_t c = 0; c < n_chunks; c++) {
            uint64_t e0 = c * per, len = n - e0 < per ? n - e0 : per;
            fa(a->data + e0 / ta->block_size * ta->type_size, xa, (int64_t)len);
            fb(b->data + e0 / tb->block_size * tb->type_size, xb, (int64_t)len);
            fold(&acc[me], xa, xb, (size_t)len, e0);
        }
    }
    dacc t = { 0 };
    for (int i = 0; i < nt; i++) {
        t.n_diff += acc[i].n_diff;
        t.nf_a += acc[i].nf_a;
        t.nf_b += acc[i].nf_b;
        t.ss_diff += acc[i].ss_diff;
        t.ss_a += acc[i].ss_a;
        t.ss_b += acc[i].ss_b;
        if (acc[i].max_diff > t.max_diff) {
            t.max_diff = acc[i].max_diff;
            t.max_index = acc[i].max_index;
        }
    }
    out->n_different = t.n_diff;
    out->n_nonfinite_a = t.nf_a;
    out->n_nonfinite_b = t.nf_b;
    out->max_abs_diff = t.max_diff;
    out->max_abs_index = t.max_index;
    out->rms_diff = sqrt(t.ss_diff / (double)n);
    out->rms_a = sqrt(t.ss_a / (double)n);
    out->rms_b = sqrt(t.ss_b / (double)n);
    out->rel_rms = out->rms_a > 0 ? out->rms_diff / out->rms_a : 0.0;
    free(acc), free(scratch);
    return AUDIT_OK;
}
