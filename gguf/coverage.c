/* Where the bytes of the data section go: tensors, padding, gaps, trailing bytes. */
#include "file.h"

#include <stdlib.h>
#include <string.h>

typedef struct placed {
    uint64_t start, end;   /* in the file */
    const char *name;
} placed;

static int by_start(const void *a, const void *b)
{
    const placed *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

static uint64_t count_nonzero(const uint8_t *p, uint64_t n)
{
    uint64_t c = 0;
    for (uint64_t i = 0; i < n; i++)
        c += p[i] != 0;
    return c;
}

/* A second GGUF header where the file should end: at the end of the last tensor's data (a writer that does
 * not pad the last tensor) or of its padding. */
static void find_appended(const gguf_file *f, uint64_t data_end, uint64_t padded_end, gguf_coverage *out)
{
    const uint64_t at[2] = { padded_end, data_end };
    for (int i = 0; i < 2; i++) {
        const uint64_t a = at[i];
        if (a == 0 || a + 4 > f->size || memcmp(f->bytes + a, "GGUF", 4) != 0)
            continue;
        out->appended_gguf_offset = a;
        const uint64_t after = f->size - a;
        out->appended_is_copy = after <= a && memcmp(f->bytes, f->bytes + a, (size_t)after) == 0;
        return;
    }
}

gguf_status gguf_data_coverage(const gguf_file *f, gguf_coverage *out, gguf_error *err)
{
    memset(out, 0, sizeof *out);
    out->data_offset = f->data_offset;
    out->data_bytes = f->size > f->data_offset ? f->size - f->data_offset : 0;
    /* this file's own data section: a split model's other shards were checked when they were opened */
    const size_t n_own = f->n_shards ? f->n_own_tensors : f->n_tensors;
    placed *v = malloc((n_own + 1) * sizeof *v);
    if (!v)
        return gguf_fail(err, GGUF_E_NOMEM, 0, "", "out of memory");
    for (size_t i = 0; i < n_own; i++) {
        const gguf_tensor *t = &f->tensors[i];
        v[i] = (placed){ f->data_offset + t->offset, f->data_offset + t->offset + t->size, t->name };
    }
    qsort(v, n_own, sizeof *v, by_start);
    uint64_t pos = f->data_offset; /* end of the previous tensor's padding */
    uint64_t last_end = 0;         /* end of the furthest tensor data */
    for (size_t i = 0; i < n_own; i++) {
        if (v[i].end > f->size) { /* a truncated file: what is there of this tensor, and nothing after it */
            out->partial_tensors += v[i].start < f->size;
            out->partial_bytes += v[i].start < f->size ? f->size - v[i].start : 0;
            continue;
        }
        if (v[i].start > pos) {
            if (out->n_gaps < GGUF_COVERAGE_MAX_GAPS)
                out->gaps[out->n_gaps] = (gguf_gap){ pos, v[i].start - pos, v[i].name };
            out->n_gaps++;
            out->gap_bytes += v[i].start - pos;
        }
        out->tensor_bytes += v[i].end - v[i].start;
        out->complete_tensors++;
        last_end = v[i].end > last_end ? v[i].end : last_end;
        /* Padding runs to the next multiple of the alignment, counted from the
         * data section's start, and never past the end of the file. */
        uint64_t rel_end = v[i].end - f->data_offset, padded;
        if (!gguf_align_up(rel_end, f->alignment, &padded))
            padded = rel_end;
        uint64_t pad_end = f->data_offset + padded;
        if (i + 1 < n_own && pad_end > v[i + 1].start)
            pad_end = v[i + 1].start;
        if (pad_end > f->size)
            pad_end = f->size;
        out->padding_bytes += pad_end - v[i].end;
        out->padding_nonzero += count_nonzero(f->bytes + v[i].end, pad_end - v[i].end);
        pos = pad_end;
    }
    out->missing_bytes = f->missing_bytes;
    if (f->size > pos && !f->missing_bytes) {
        out->trailing_offset = pos;
        out->trailing_bytes = f->size - pos;
        find_appended(f, last_end ? last_end : f->data_offset, pos, out);
    }
    free(v);
    return GGUF_OK;
}
