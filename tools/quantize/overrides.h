/* llama-quantize's --tensor-type NAME=TYPE: a type for the tensors whose name the regular expression NAME (lowercased,
 * searched anywhere in the name, as std::regex_search does) matches; the first match wins. */
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
void quantize_overrides_free(quantize_overrides *ov);

#endif
