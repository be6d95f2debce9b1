/* What model/'s files share and the public header does not say. */
#ifndef GGUFSCOPE_MODEL_INTERNAL_H
#define GGUFSCOPE_MODEL_INTERNAL_H

#include "model.h"

/* Fills err (when not NULL) with code, offset, subject and the formatted message; returns code. */
model_status model_fail(model_error *err, model_status code, uint64_t offset, const char *subject, const char *fmt,
                        ...) __attribute__((format(printf, 5, 6)));

/* An integer value of any width as an int64 (false for another type, or a uint64 past INT64_MAX) (hparams_reader.c). */
bool model_value_integer(const gguf_value *v, int64_t *out);
/* An F32 or F64 value as a float (false for another type) (hparams_reader.c). */
bool model_value_float(const gguf_value *v, float *out);

/* What llama.cpp's loader refuses or asserts on in hyperparameters already read (hparams_check.c). */
model_status model_hparams_check(const gguf_file *f, const model_hparams *hp, model_error *err);

#endif
