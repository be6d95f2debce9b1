/* An example program built against an installed ggufscope: opens a GGUF file with the library, prints its
 * architecture and each tensor's name, type and shape, and the first values of the first tensor the
 * library can dequantize. Build it with pkg-config (examples/Makefile) or CMake (examples/CMakeLists.txt). */
#include <ggufscope/gguf.h>
#include <ggufscope/quant.h>

#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: tensor_summary FILE.gguf\n");
        return 2;
    }
    gguf_file *f;
    gguf_error err;
    if (gguf_open(argv[1], &f, &err) != GGUF_OK) {
        fprintf(stderr, "tensor_summary: %s: byte %llu: %s\n", argv[1], (unsigned long long)err.offset, err.message);
        return 1;
    }
    gguf_str arch = { "?", 1 };
    gguf_get_str(f, "general.architecture", &arch, NULL);
    printf("architecture %.*s, %zu tensors\n", (int)arch.len, arch.ptr, gguf_tensor_count(f));
    const gguf_tensor *first = NULL;
    for (size_t i = 0; i < gguf_tensor_count(f); i++) {
        const gguf_tensor *t = gguf_tensor_at(f, i);
        printf("%-32s %-6s [%llu, %llu]\n", t->name, gguf_type_traits_of(t->type)->name,
               (unsigned long long)t->ne[0], (unsigned long long)t->ne[1]);
        if (!first && quant_can_dequantize(t->type))
            first = t;
    }
    if (first) {
        int64_t n = (int64_t)first->ne[0];
        float *row = malloc(sizeof(float) * (size_t)n);
        if (row && quant_dequantize_row(first->type, first->data, row, n) == QUANT_OK)
            printf("%s row 0: %g %g %g ...\n", first->name, row[0], n > 1 ? row[1] : 0.0, n > 2 ? row[2] : 0.0);
        free(row);
    }
    gguf_close(f);
    return 0;
}
