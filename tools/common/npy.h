/* numpy .npy files of little-endian f32 in C order: written (format 1.0) and read (2-D). */
#ifndef GGUFSCOPE_TOOLS_NPY_H
#define GGUFSCOPE_TOOLS_NPY_H

#include <stddef.h>
#include <stdint.h>

/* Produces `count` consecutive f32 values starting at flat index `at`; returns 0 on success. */
typedef int (*npy_fill_fn)(void *user, uint64_t at, float *dst, size_t count);

/* Writes an f32 array of shape[0..ndim) to path atomically (temporary file,
 * fsync, rename). Returns 0, or -1 with a message in err. */
int npy_write_f32(const char *path, const uint64_t *shape, int ndim, npy_fill_fn fill, void *user, size_t chunk,
                  char *err, size_t err_len);

enum { NPY_MAX_DIMS = 4 };

/* Reads a little-endian float array in C order (.npy format 1.x or 2.x, as numpy.save writes it) of f16, f32, f64
 * or bfloat16 (ml_dtypes' '<V2') values, up to NPY_MAX_DIMS dimensions, into a malloc'd f32 buffer with its shape;
 * NULL with the reason in err (not .npy, another dtype, truncated). */
float *npy_read_floats(const char *path, uint64_t shape[NPY_MAX_DIMS], int *ndim, char *err, size_t err_len);
/* The same from the bytes of one (a member of an .npz); name for messages. */
float *npy_parse_floats(const unsigned char *buf, size_t len, const char *name, uint64_t shape[NPY_MAX_DIMS],
                        int *ndim, char *err, size_t err_len);
/* The relative rounding step of the element type in an .npy's bytes: 2^-11 float16, 2^-8 bfloat16, else 0. */
float npy_rounding(const unsigned char *buf, size_t len);
/* A float16 value (its bits) as a float: for readers of other containers. */
float npy_half_to_float(uint16_t h);

#endif
