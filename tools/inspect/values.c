/* gguf-inspect --values, --dump and --raw: dequantized numbers of one tensor. */
#include "format.h"
#include "inspect.h"
#include "npy.h"
#include "quant.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* Parses "A:B" (either side may be empty) against [0, limit); returns false on nonsense. */
bool inspect_parse_range(const char *s, uint64_t limit, uint64_t def_count, uint64_t *a, uint64_t *b)
{
    *a = 0;
    *b = def_count < limit ? def_count : limit;
    if (!s)
        return true;
    const char *colon = strchr(s, ':');
    char *end;
    if (!colon)
        return false;
    if (colon != s) {
        *a = strtoull(s, &end, 10);
        if (end != colon)
            return false;
    }
    *b = limit;
    if (colon[1]) {
        *b = strtoull(colon + 1, &end, 10);
        if (*end)
            return false;
    }
    if (*b > limit)
        *b = limit;
    return *a < *b;
}

static const gguf_tensor *find(const gguf_file *f, const inspect_opts *o, const char *name)
{
    const gguf_tensor *t = gguf_tensor_by_name(f, name);
    if (!t)
        fprintf(stderr, "gguf-inspect: %s: no tensor named '%s' (list them with --tensors-only)\n", o->path, name);
    else if (!quant_can_dequantize(t->type))
        fprintf(stderr, "gguf-inspect: %s: tensor '%s' has type %s, which ggufscope cannot dequantize yet\n", o->path,
                name, gguf_type_traits_of(t->type)->name);
    else
        return t;
    return NULL;
}

int inspect_print_values(FILE *out, const gguf_file *f, const inspect_opts *o)
{
    const gguf_tensor *t = find(f, o, o->values);
    if (!t)
        return 2;
    const uint64_t n_rows = t->n_elements / t->ne[0];
    uint64_t r0, r1, c0, c1;
    if (!inspect_parse_range(o->rows, n_rows, 8, &r0, &r1) || !inspect_parse_range(o->cols, t->ne[0], 8, &c0, &c1)) {
        fprintf(stderr, "gguf-inspect: bad --rows/--cols (want A:B within %" PRIu64 " rows x %" PRIu64 " cols)\n",
                n_rows, t->ne[0]);
        return 2;
    }
    float *row = malloc(t->ne[0] * sizeof(float));
    if (!row)
        return 2;
    fprintf(out, "tensor '%s' (%s, ne = [", t->name, gguf_type_traits_of(t->type)->name);
    for (uint32_t d = 0; d < t->n_dims; d++)
        fprintf(out, d ? ", %" PRIu64 : "%" PRIu64, t->ne[d]);
    fprintf(out, "]): rows %" PRIu64 ":%" PRIu64 " of %" PRIu64 ", cols %" PRIu64 ":%" PRIu64 " of %" PRIu64 "\n",
            r0, r1, n_rows, c0, c1, t->ne[0]);
    fprintf(out, "%8s", "row");
    for (uint64_t c = c0; c < c1; c++)
        fprintf(out, " %12" PRIu64, c);
    fputc('\n', out);
    for (uint64_t r = r0; r < r1; r++) {
        quant_dequantize_rows(t, r, 1, row, 1);
        fprintf(out, "%8" PRIu64, r);
        for (uint64_t c = c0; c < c1; c++)
            fprintf(out, " %12.6g", row[c]);
        fputc('\n', out);
    }
    free(row);
    return 0;
}

typedef struct dump_src {
    const gguf_tensor *t;
} dump_src;

static int dump_fill(void *user, uint64_t at, float *dst, size_t count)
{
    const gguf_tensor *t = ((dump_src *)user)->t;
    return quant_dequantize_rows(t, at / t->ne[0], count / t->ne[0], dst, 0) == QUANT_OK ? 0 : -1;
}

int inspect_dump_npy(const gguf_file *f, const inspect_opts *o)
{
    const gguf_tensor *t = find(f, o, o->dump);
    if (!t)
        return 2;
    /* numpy order: the outermost GGUF dim first, so a matrix is (rows, ne0) */
    uint64_t shape[GGUF_MAX_DIMS];
    for (uint32_t d = 0; d < t->n_dims; d++)
        shape[d] = t->ne[t->n_dims - 1 - d];
    uint64_t rows_per_chunk = (1u << 20) / t->ne[0];
    rows_per_chunk = rows_per_chunk ? rows_per_chunk : 1;
    dump_src src = { t };
    char err[512];
    if (npy_write_f32(o->out, shape, (int)t->n_dims, dump_fill, &src, (size_t)(rows_per_chunk * t->ne[0]), err,
                      sizeof err) != 0) {
        fprintf(stderr, "gguf-inspect: %s\n", err);
        return 2;
    }
    fprintf(stderr, "gguf-inspect: wrote '%s' (%s, f32, %" PRIu64 " values) to %s\n", t->name,
            gguf_type_traits_of(t->type)->name, t->n_elements, o->out);
    return 0;
}

int inspect_print_raw(FILE *out, const gguf_file *f, const inspect_opts *o)
{
    const gguf_tensor *t = find(f, o, o->raw);
    if (!t)
        return 2;
    const gguf_type_traits *tt = gguf_type_traits_of(t->type);
    const uint64_t n_blocks = t->n_elements / tt->block_size;
    const uint64_t shown = o->blocks < n_blocks ? o->blocks : n_blocks;
    fprintf(out, "tensor '%s': %s, %u values in %u bytes per block, %" PRIu64 " blocks; first %" PRIu64 "\n",
            t->name, tt->name, tt->block_size, tt->type_size, n_blocks, shown);
    char text[8192];
    float vals[256];
    for (uint64_t i = 0; i < shown; i++) {
        const uint8_t *b = t->data + i * tt->type_size;
        fprintf(out, "block %" PRIu64 " (data offset %" PRIu64 "):\n", i, t->offset + i * tt->type_size);
        quant_describe_block(t->type, b, text, sizeof text);
        fputs(text, out);
        quant_dequantize_row(t->type, b, vals, tt->block_size);
        fprintf(out, "  %-8s = [", "values");
        for (uint32_t j = 0; j < tt->block_size; j++)
            fprintf(out, j ? ", %.6g" : "%.6g", vals[j]);
        fputs("]\n", out);
    }
    return 0;
}
