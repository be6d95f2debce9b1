/* How much an output row weighs: the smoke verdict's evidence for whether picking a padding id can be the
 * model's own doing. A trained model's padding rows are empty (zeros, or orders of magnitude below its real
 * rows), so a correct engine never ranks them first; a random-weight model's are like any other row. */
#include "internal.h"
#include "quant.h"

#include <math.h>
#include <stdlib.h>

/* RMS of one row of the output matrix (token_embd when tied); NAN when it cannot be decoded. */
static double row_rms(const gguf_tensor *t, int64_t row, float *buf)
{
    const int64_t n = (int64_t)t->ne[0];
    const gguf_type_traits *tt = gguf_type_traits_of(t->type);
    const size_t row_bytes = (size_t)(n / tt->block_size) * tt->type_size;
    if (row < 0 || (uint64_t)row >= t->ne[1] || quant_dequantize_row(t->type, t->data + (size_t)row * row_bytes, buf, n) != QUANT_OK)
        return NAN;
    double s = 0.0;
    for (int64_t i = 0; i < n; i++)
        s += (double)buf[i] * buf[i];
    return sqrt(s / (double)n);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double engine_model_output_row_weight(const engine_model *m, int32_t row, int32_t n_real)
{
    const gguf_tensor *t = m->output.t;
    float *buf = t ? malloc(sizeof(float) * (size_t)t->ne[0]) : NULL;
    if (!buf)
        return NAN;
    double r = row_rms(t, row, buf);
    /* the median of 33 real rows spread over the vocabulary */
    double real[33];
    int k = 0;
    for (int i = 0; i < 33 && n_real > 0; i++) {
        double x = row_rms(t, (int64_t)n_real * i / 33, buf);
        if (isfinite(x))
            real[k++] = x;
    }
    free(buf);
    if (k == 0 || !isfinite(r))
        return NAN;
    qsort(real, (size_t)k, sizeof *real, cmp_double);
    double med = real[k / 2];
    return med > 0.0 ? r / med : (r > 0.0 ? INFINITY : 0.0);
}
