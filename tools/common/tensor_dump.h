/* Named float arrays as engines dump their activations: read from an .npz, a .safetensors file or a folder of
 * .npy files (float16, bfloat16, float32 or float64, as f32 here), and written as an .npz or .safetensors of
 * float32 arrays (the file name says which). */
#ifndef GGUFSCOPE_TOOLS_TENSOR_DUMP_H
#define GGUFSCOPE_TOOLS_TENSOR_DUMP_H

#include "npy.h"

#include <stddef.h>
#include <stdint.h>

typedef struct dump_array {
    char *name;                    /* the member's name, its ".npy" dropped; printable ASCII */
    int ndim;
    uint64_t shape[NPY_MAX_DIMS];
    float *data;
    float rounding;                /* the relative step of the type it was stored in: 2^-11 float16, 2^-8 bfloat16,
                                    * 0 float32 and float64 */
} dump_array;

typedef struct tensor_dump {
    dump_array *a;
    size_t n;
} tensor_dump;

/* 0, or 2 with the reason in why (a damaged or foreign file, another dtype, out of memory). */
int tensor_dump_read(const char *path, tensor_dump *d, char *why, size_t why_len);
/* The same from a file's bytes (an .npz, a .safetensors or one .npy, named "0"); name for messages. */
int tensor_dump_parse(const unsigned char *b, size_t len, const char *name, tensor_dump *d, char *why,
                      size_t why_len);
void tensor_dump_free(tensor_dump *d);
const dump_array *tensor_dump_find(const tensor_dump *d, const char *name);
/* Writes the n arrays to path atomically (.npz: stored members; .safetensors: F32); 0, or 2 with why. */
int tensor_dump_write(const char *path, const dump_array *a, size_t n, char *why, size_t why_len);

#endif
