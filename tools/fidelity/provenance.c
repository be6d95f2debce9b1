/* A quantized file's tensors re-quantized from their base and compared block by block (provenance.h). */
#include "provenance.h"
#include "quant.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static bool is_float(uint32_t type)
{
    return type == GGUF_TENSOR_F32 || type == GGUF_TENSOR_F16 || type == GGUF_TENSOR_BF16;
}

/* Re-quantizes base's rows into t's type and compares each block with t's; false when out of memory. */
static bool compare_rows(const gguf_tensor *b, prov_tensor *p)
{
    const gguf_tensor *t = p->t;
    const gguf_type_traits *tr = gguf_type_traits_of(t->type);
    const int64_t n = (int64_t)t->ne[0];
    const uint64_t rows = t->n_elements / (uint64_t)n, row_bytes = t->size / rows;
    const uint64_t per_row = (uint64_t)n / tr->block_size;
    float *src = malloc((size_t)n * sizeof *src), *ours = malloc(tr->block_size * sizeof *ours),
          *theirs = malloc(tr->block_size * sizeof *theirs);
    uint8_t *again = malloc(row_bytes);
    bool ok = src && ours && theirs && again;
    p->blocks = rows * per_row;
    for (uint64_t r = 0; ok && r < rows; r++) {
        const uint8_t *mine = t->data + r * row_bytes;
        if (quant_dequantize_row(b->type, b->data + r * (b->size / rows), src, n) != QUANT_OK ||
            quant_quantize_row(t->type, src, again, n) != QUANT_OK) {
            ok = false;
            break;
        }
        for (uint64_t k = 0; k < per_row; k++) {
            const uint8_t *x = mine + k * tr->type_size, *y = again + k * tr->type_size;
            if (!memcmp(x, y, tr->type_size))
                continue;
            if (!p->blocks_differing++)
                p->first_block = r * per_row + k;
            quant_dequantize_row(t->type, x, theirs, (int64_t)tr->block_size);
            quant_dequantize_row(t->type, y, ours, (int64_t)tr->block_size);
            double ss = 0, worst = 0;
            for (uint32_t i = 0; i < tr->block_size; i++) {
                ss += (double)ours[i] * ours[i];
                worst = fmax(worst, fabs((double)ours[i] - theirs[i]));
            }
            const double rms = sqrt(ss / tr->block_size);
            const double rel = rms > 0 ? worst / rms : (worst > 0 ? INFINITY : 0);
            p->worst = rel > p->worst || isnan(rel) ? rel : p->worst;
        }
    }
    free(src), free(ours), free(theirs), free(again);
    return ok;
}

static bool check_one(const gguf_file *base, prov_tensor *p)
{
    const gguf_tensor *t = p->t, *b = gguf_tensor_by_name(base, t->name);
    p->kind = PROV_NOT_CHECKED;
    if (!b || !t->data || !b->data || !is_float(b->type))
        return true;
    if (b->n_elements != t->n_elements || b->ne[0] != t->ne[0]) {
        p->kind = PROV_SHAPE;
        return true;
    }
    if (t->type == b->type) { /* kept as it was: the same bytes */
        p->blocks = 1;
        p->blocks_differing = memcmp(t->data, b->data, t->size) != 0;
        p->kind = p->blocks_differing ? PROV_DIFFERS : PROV_IDENTICAL;
        return true;
    }
    const gguf_type_traits *tr = gguf_type_traits_of(t->type);
    if (!quant_can_quantize(t->type) || t->ne[0] % tr->block_size)
        return true;
    if (!compare_rows(b, p))
        return false;
    p->kind = p->blocks_differing ? PROV_DIFFERS : PROV_IDENTICAL;
    return true;
}

bool provenance_check(const gguf_file *base, const gguf_file *q, int n_threads, prov_report *r)
{
    memset(r, 0, sizeof *r);
    r->n = gguf_tensor_count(q);
    r->tensors = calloc(r->n ? r->n : 1, sizeof *r->tensors);
    if (!r->tensors)
        return false;
    int failed = 0;
#pragma omp parallel for schedule(dynamic, 1) num_threads(n_threads)
    for (uint64_t i = 0; i < r->n; i++) {
        r->tensors[i].t = gguf_tensor_at(q, i);
        if (!check_one(base, &r->tensors[i])) {
#pragma omp atomic write
            failed = 1;
        }
    }
    for (uint64_t i = 0; i < r->n; i++) {
        r->identical += r->tensors[i].kind == PROV_IDENTICAL;
        r->differing += r->tensors[i].kind == PROV_DIFFERS || r->tensors[i].kind == PROV_SHAPE;
        r->not_checked += r->tensors[i].kind == PROV_NOT_CHECKED;
    }
    return !failed;
}

void provenance_free(prov_report *r)
{
    free(r->tensors);
    memset(r, 0, sizeof *r);
}
