/* llama-quantize's options that change what it writes: --tensor-type NAME=TYPE, a type for the tensors whose name the
 * regular expression NAME (lowercased, searched anywhere in the name, as std::regex_search does) matches, the first
 * match winning; and --allow-requantize, quantized weights taken as sources (decoded to f32, then quantized). */
#ifndef GGUFSCOPE_TOOLS_QUANTIZE_OVERRIDES_H
#define GGUFSCOPE_TOOLS_QUANTIZE_OVERRIDES_H

#include "gguf.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct quantize_overrides quantize_overrides;

/* Adds "NAME=TYPE" (TYPE a ggml type name, any case) to *ov (created on the first call); false with why filled for a
 * malformed one, an expression that does not compile, or a type this quantizer does not write. */
bool quantize_overrides_add(quantize_overrides **ov, const char *spec, char *why, size_t why_len);
/* The type the first matching override gives name, or GGUF_TENSOR_COUNT when none matches (ov may be NULL). */
uint32_t quantize_overrides_type(const quantize_overrides *ov, const char *name);
/* --allow-requantize on *ov (created where NULL); false only when out of memory */
bool quantize_overrides_allow_requantize(quantize_overrides **ov);
bool quantize_overrides_requantize(const quantize_overrides *ov);
void quantize_overrides_free(quantize_overrides *ov);

#endif
