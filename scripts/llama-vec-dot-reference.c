/* llama.cpp's vec_dot outputs for tests/data/llama_cpp_vec_dot.bin: per type 8 rows of 512 values, weights quantized
 * by ggml from random values with a random importance matrix, activations of the type's vec_dot_type (Q8_K; NVFP4's
 * Q8_0) from random values with some at -128, and the dot libggml-cpu computes. Built outside the project against the llama.cpp that PyPI's llama-cpp-python
 * 0.3.36 sdist vendors (GGML_NATIVE on an AVX-512 machine: the AVX2 forms of these dots):
 *
 *   gcc -O2 scripts/llama-vec-dot-reference.c -I$L/ggml/include -L$B -lggml -lggml-base -lggml-cpu -lm \
 *       -Wl,-rpath,$B -o vec-dot-reference && ./vec-dot-reference tests/data/llama_cpp_vec_dot.bin
 *
 * The file: "VECDOT01", a u32 count of types, then per type u32 type, n, rows, weight row bytes, activation row bytes,
 * and per row the weight row, the activation row and the f32 dot. */
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include "ggml.h"
#include "ggml-cpu.h"
int main(int argc, char **argv) {
    const uint32_t n = 512, rows = 8;
    const enum ggml_type types[] = { GGML_TYPE_TQ1_0, GGML_TYPE_TQ2_0, GGML_TYPE_IQ3_S, GGML_TYPE_IQ3_XXS,
                                     GGML_TYPE_IQ2_XXS, GGML_TYPE_IQ2_XS, GGML_TYPE_IQ2_S, GGML_TYPE_IQ1_S,
                                     GGML_TYPE_IQ1_M, GGML_TYPE_NVFP4 };
    FILE *o = fopen(argv[1], "wb");
    fwrite("VECDOT01", 1, 8, o);
    uint32_t nt = sizeof types / sizeof types[0];
    fwrite(&nt, 4, 1, o);
    float w[512], x[512], im[512];
    ggml_cpu_init();
    srand(11);
    for (uint32_t k = 0; k < nt; k++) {
        ggml_quantize_init(types[k]);
        const struct ggml_type_traits_cpu *tr = ggml_get_type_traits_cpu(types[k]);
        const struct ggml_type_traits_cpu *trq = ggml_get_type_traits_cpu(tr->vec_dot_type);
        uint32_t t = types[k], wb = (uint32_t)ggml_row_size(types[k], n);
        uint32_t ab = (uint32_t)ggml_row_size(tr->vec_dot_type, n);
        fwrite(&t, 4, 1, o); fwrite(&n, 4, 1, o); fwrite(&rows, 4, 1, o); fwrite(&wb, 4, 1, o); fwrite(&ab, 4, 1, o);
        uint8_t wq[1024], aq[1024];
        for (uint32_t r = 0; r < rows; r++) {
            for (uint32_t i = 0; i < n; i++) {
                w[i] = rand() / (float)RAND_MAX - 0.5f;
                x[i] = (rand() / (float)RAND_MAX - 0.5f) * 3;
                im[i] = rand() / (float)RAND_MAX + 0.1f;
            }
            x[rand() % n] = -10.0f; x[256 + rand() % 256] = -9.0f;
            ggml_quantize_chunk(types[k], w, wq, 0, 1, n, im);
            trq->from_float(x, aq, n);
            float s = 0;
            tr->vec_dot((int)n, &s, 0, wq, 0, aq, 0, 1);
            fwrite(wq, 1, wb, o); fwrite(aq, 1, ab, o); fwrite(&s, 4, 1, o);
        }
    }
    fclose(o);
    return 0;
}
