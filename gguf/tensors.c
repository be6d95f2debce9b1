/*
 * Tensor infos and the data layout: names, shapes, types, offsets, then the
 * checks that need all tensors at once (bounds, overlaps, llama.cpp's
 * stricter ordering rules).
 *
 *   tensor info:  u64 name len, name, u32 n_dims, u64 ne[n_dims], u32 type, u64 offset
 *   data section: starts at the header's end rounded up to the alignment;
 *                 each offset is relative to it and a multiple of the alignment.
 */
#include "file.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static gguf_status read_name(gguf_file *f, gguf_cursor *c, size_t i, gguf_tensor *t, gguf_error *err)
{
    char what[48];
    snprintf(what, sizeof what, "tensor #%zu", i);
    gguf_status s = gguf_read_name(f, c, t->info_offset, what, GGUF_E_EMPTY_NAME, &t->name, err);
    if (s != GGUF_OK)
        return s;
    long prev = gguf_index_insert(&f->tensor_index, &f->tensors[0].name, sizeof *f->tensors, (uint32_t)i);
    if (prev >= 0)
        return gguf_fail(err, GGUF_E_DUPLICATE_NAME, t->info_offset, t->name,
                         "tensor '%s' is described twice (first at byte %llu)", t->name,
                         (unsigned long long)f->tensors[prev].info_offset);
    size_t name_len = strlen(t->name);
    if (name_len > GGUF_LLAMA_CPP_MAX_NAME)
        gguf_add_warning(f, GGUF_W_LONG_NAME, t->info_offset, t->name,
                         "llama.cpp would refuse this file because tensor '%s' has a %llu-byte name "
                         "(its limit is %d)", t->name, (unsigned long long)name_len, GGUF_LLAMA_CPP_MAX_NAME);
    return GGUF_OK;
}

static gguf_status read_info(gguf_file *f, gguf_cursor *c, size_t i, gguf_error *err)
{
    gguf_tensor *t = &f->tensors[i];
    t->info_offset = c->pos;
    gguf_status s = read_name(f, c, i, t, err);
    if (s != GGUF_OK)
        return s;
    const char *nm = t->name;
    uint64_t at = c->pos;
    if (!gguf_read_u32(c, &t->n_dims))
        return gguf_fail(err, GGUF_E_TRUNCATED, at, nm, "tensor '%s': its info runs past the end of the file", nm);
    if (t->n_dims == 0 || t->n_dims > GGUF_MAX_DIMS)
        return gguf_fail(err, GGUF_E_N_DIMS, at, nm, "tensor '%s' has %u dimensions; ggml supports 1 to %d",
                         nm, t->n_dims, GGUF_MAX_DIMS);
    uint64_t n = 1;
    bool overflow = false;
    for (uint32_t d = 0; d < GGUF_MAX_DIMS; d++) {
        t->ne[d] = 1;
        if (d >= t->n_dims)
            continue;
        at = c->pos;
        if (!gguf_read_u64(c, &t->ne[d]))
            return gguf_fail(err, GGUF_E_TRUNCATED, at, nm, "tensor '%s': its shape runs past the end of the file", nm);
        if (t->ne[d] == 0)
            return gguf_fail(err, GGUF_E_ZERO_DIM, at, nm, "tensor '%s' has dimension %u equal to 0", nm, d);
        overflow |= !gguf_mul_ok(n, t->ne[d], &n);
    }
    if (overflow || n > (uint64_t)INT64_MAX)
        return gguf_fail(err, GGUF_E_ELEMENT_OVERFLOW, t->info_offset, nm,
                         "tensor '%s': the product of its dimensions overflows a 64-bit element count", nm);
    t->n_elements = n;
    at = c->pos;
    if (!gguf_read_u32(c, &t->type))
        return gguf_fail(err, GGUF_E_TRUNCATED, at, nm, "tensor '%s': its type runs past the end of the file", nm);
    const gguf_type_traits *tt = gguf_type_traits_of(t->type);
    if (tt->state == GGUF_TYPE_UNKNOWN)
        return gguf_fail(err, GGUF_E_UNKNOWN_TYPE, at, nm,
                         "tensor '%s' has type id %u, which ggml does not define (a newer format, or corruption)",
                         nm, t->type);
    if (tt->state == GGUF_TYPE_REMOVED)
        return gguf_fail(err, GGUF_E_REMOVED_TYPE, at, nm,
                         "tensor '%s' has type %s (id %u), which ggml removed; re-quantize the model",
                         nm, tt->name, t->type);
    if (t->ne[0] % tt->block_size != 0)
        return gguf_fail(err, GGUF_E_BLOCK_MULTIPLE, t->info_offset, nm,
                         "tensor '%s': its first dimension %llu is not a multiple of %s's block size %u",
                         nm, (unsigned long long)t->ne[0], tt->name, tt->block_size);
    if (!gguf_tensor_nbytes(t->type, t->ne, &t->size))
        return gguf_fail(err, GGUF_E_SIZE_OVERFLOW, t->info_offset, nm,
                         "tensor '%s': its size in bytes overflows 64 bits", nm);
    at = c->pos;
    if (!gguf_read_u64(c, &t->offset))
        return gguf_fail(err, GGUF_E_TRUNCATED, at, nm, "tensor '%s': its offset runs past the end of the file", nm);
    if (t->offset % f->alignment != 0)
        return gguf_fail(err, GGUF_E_MISALIGNED, at, nm,
                         "tensor '%s' has data offset %llu, not a multiple of the alignment %u",
                         nm, (unsigned long long)t->offset, f->alignment);
    return GGUF_OK;
}

/* Checks every tensor's data lies inside the file; names the first one that
 * does not and how many bytes the file is short. */
static gguf_status check_bounds(gguf_file *f, gguf_error *err)
{
    const gguf_tensor *first_bad = NULL;
    uint64_t max_end = 0;
    for (size_t i = 0; i < f->n_tensors; i++) {
        gguf_tensor *t = &f->tensors[i];
        uint64_t start, end;
        if (!gguf_add_ok(f->data_offset, t->offset, &start) || !gguf_add_ok(start, t->size, &end))
            return gguf_fail(err, GGUF_E_SIZE_OVERFLOW, t->info_offset, t->name,
                             "tensor '%s': data offset %llu plus size %llu overflows 64 bits", t->name,
                             (unsigned long long)t->offset, (unsigned long long)t->size);
        if (end > f->size && !first_bad)
            first_bad = t;
        if (end > max_end)
            max_end = end;
        if (end <= f->size)
            t->data = f->bytes + start;
    }
    if (!first_bad)
        return GGUF_OK;
    uint64_t end = f->data_offset + first_bad->offset + first_bad->size;
    char past[32], missing[32];
    gguf_format_size(end - f->size, past, sizeof past);
    gguf_format_size(max_end - f->size, missing, sizeof missing);
    f->missing_bytes = max_end - f->size;
    gguf_status s = gguf_fail(f->allow_partial ? &f->truncation : err, GGUF_E_DATA_PAST_END, f->data_offset + first_bad->offset, first_bad->name,
                     "tensor '%s' ends %s past the end of the file; the file is %llu bytes but its tensors "
                     "need %llu (%s missing): the file is truncated (download incomplete?)", first_bad->name,
                     past, (unsigned long long)f->size, (unsigned long long)max_end, missing);
    return f->allow_partial ? GGUF_OK : s; /* its tensors past the end keep data NULL */
}

typedef struct span {
    uint64_t offset;
    uint32_t index;
} span;

static int by_offset(const void *a, const void *b)
{
    const span *x = a, *y = b;
    if (x->offset != y->offset)
        return x->offset < y->offset ? -1 : 1;
    return x->index < y->index ? -1 : 1;
}

/* Overlaps are errors; gaps and reordering are what llama.cpp refuses
 * (it expects each tensor right after the previous one, padded). */
static gguf_status check_layout(gguf_file *f, gguf_error *err)
{
    if (f->n_tensors == 0)
        return GGUF_OK;
    span *order = malloc(f->n_tensors * sizeof *order);
    if (!order)
        return gguf_fail(err, GGUF_E_NOMEM, 0, "", "out of memory");
    for (size_t i = 0; i < f->n_tensors; i++)
        order[i] = (span){ f->tensors[i].offset, (uint32_t)i };
    qsort(order, f->n_tensors, sizeof *order, by_offset);
    bool reordered = false;
    const gguf_tensor *reach = NULL; /* the tensor whose data ends furthest so far */
    for (size_t k = 0; k < f->n_tensors; k++) {
        const gguf_tensor *t = &f->tensors[order[k].index];
        reordered |= order[k].index != k;
        if (reach && t->offset < reach->offset + reach->size) {
            gguf_status s = gguf_fail(err, GGUF_E_OVERLAP, f->data_offset + t->offset, t->name,
                                      "tensor '%s' (bytes %llu-%llu of the data section) overlaps tensor '%s' "
                                      "(bytes %llu-%llu)", t->name, (unsigned long long)t->offset,
                                      (unsigned long long)(t->offset + t->size), reach->name,
                                      (unsigned long long)reach->offset,
                                      (unsigned long long)(reach->offset + reach->size));
            free(order);
            return s;
        }
        if (!reach || t->offset + t->size > reach->offset + reach->size)
            reach = t;
    }
    free(order);
    if (reordered) {
        gguf_add_warning(f, GGUF_W_REORDER, f->data_offset, "",
                         "llama.cpp would refuse this file because the tensor data is not in the order of "
                         "the tensor infos (the GGUF spec allows this)");
        return GGUF_OK;
    }
    uint64_t expected = 0;
    for (size_t i = 0; i < f->n_tensors; i++) {
        const gguf_tensor *t = &f->tensors[i];
        if (t->offset != expected)
            gguf_add_warning(f, GGUF_W_GAP, f->data_offset + t->offset, t->name,
                             "llama.cpp would refuse this file because tensor '%s' has offset %llu, expected "
                             "%llu (a %llu-byte gap before it; the GGUF spec allows this)", t->name,
                             (unsigned long long)t->offset, (unsigned long long)expected,
                             (unsigned long long)(t->offset - expected));
        if (!gguf_align_up(t->offset + t->size, f->alignment, &expected)) /* only past a truncated file's end */
            break;
    }
    return GGUF_OK;
}

gguf_status gguf_parse_tensors(gguf_file *f, uint64_t *pos, uint64_t n_tensors, gguf_error *err)
{
    gguf_cursor c = { f->bytes, f->size, *pos };
    f->n_tensors = (size_t)n_tensors;
    f->tensors = gguf_arena_array(&f->arena, n_tensors, sizeof *f->tensors);
    if ((!f->tensors && n_tensors) || !gguf_index_init(&f->tensor_index, &f->arena, f->n_tensors))
        return gguf_fail(err, GGUF_E_NOMEM, 8, "", "out of memory for %llu tensors", (unsigned long long)n_tensors);
    for (size_t i = 0; i < f->n_tensors; i++) {
        gguf_status s = read_info(f, &c, i, err);
        if (s != GGUF_OK)
            return s;
    }
    *pos = c.pos;
    if (!gguf_align_up(c.pos, f->alignment, &f->data_offset))
        return gguf_fail(err, GGUF_E_SIZE_OVERFLOW, c.pos, "", "the data section offset overflows");
    gguf_status s = check_bounds(f, err);
    if (s != GGUF_OK)
        return s;
    return check_layout(f, err);
}
