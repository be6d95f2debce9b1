/* What a tensor is, from its name (llama.cpp's naming: "blk.N.<role>"). */
#include "rules.h"

#include <stdlib.h>
#include <string.h>

int audit_layer_of(const char *name, const char **role)
{
    *role = name;
    if (strncmp(name, "blk.", 4) != 0)
        return -1;
    char *end;
    long n = strtol(name + 4, &end, 10);
    if (end == name + 4 || *end != '.' || n < 0 || n > 1000000)
        return -1;
    *role = end + 1;
    return (int)n;
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

audit_class audit_class_of(const gguf_tensor *t)
{
    const char *role;
    audit_layer_of(t->name, &role);
    if (strcmp(role, "token_embd.weight") == 0)
        return AUDIT_CLASS_EMBEDDING;
    if (strcmp(role, "output.weight") == 0)
        return AUDIT_CLASS_OUTPUT;
    if (ends_with(role, ".bias"))
        return AUDIT_CLASS_BIAS;
    if (strstr(role, "norm") && ends_with(role, ".weight") && t->n_dims == 1)
        return AUDIT_CLASS_NORM;
    if (t->n_dims >= 2 && ends_with(role, ".weight"))
        return AUDIT_CLASS_MATRIX;
    return AUDIT_CLASS_OTHER;
}

static int by_role(const void *a, const void *b)
{
    const role_entry *x = a, *y = b;
    if ((x->layer >= 0) != (y->layer >= 0))
        return x->layer >= 0 ? -1 : 1;
    int c = strcmp(x->role, y->role);
    if (c)
        return c;
    if (x->layer != y->layer)
        return x->layer < y->layer ? -1 : 1;
    return (x->index > y->index) - (x->index < y->index);
}

role_entry *role_entries_sorted(const gguf_file *f)
{
    size_t n = gguf_tensor_count(f);
    role_entry *e = malloc((n + 1) * sizeof *e);
    if (!e)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        e[i].index = i;
        e[i].layer = audit_layer_of(gguf_tensor_at(f, i)->name, &e[i].role);
    }
    qsort(e, n, sizeof *e, by_role);
    return e;
}

size_t role_group_end(const role_entry *e, size_t n, size_t g)
{
    size_t end = g + 1;
    while (end < n && (e[end].layer >= 0) == (e[g].layer >= 0) && strcmp(e[end].role, e[g].role) == 0)
        end++;
    return end;
}
