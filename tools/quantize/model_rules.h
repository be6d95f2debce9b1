/* gguf-quantize's model rules: which type each tensor of a model gets, in which order, as llama-quantize
 * (llama.cpp's src/llama-quant.cpp, no importance matrix) chooses them for the architectures model/arch.c marks
 * `quantize`; the blocks themselves are quant/'s. */
#ifndef GGUFSCOPE_TOOLS_MODEL_RULES_H
#define GGUFSCOPE_TOOLS_MODEL_RULES_H

#include "gguf.h"
#include "overrides.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* File types by llama.h's LLAMA_FTYPE_MOSTLY_* numbers (what general.file_type holds). */
typedef enum quantize_ftype {
    QUANTIZE_FTYPE_Q4_0 = 2, QUANTIZE_FTYPE_Q8_0 = 7, QUANTIZE_FTYPE_Q5_0 = 8, QUANTIZE_FTYPE_Q2_K = 10,
    QUANTIZE_FTYPE_Q3_K_S = 11, QUANTIZE_FTYPE_Q3_K_M = 12, QUANTIZE_FTYPE_Q3_K_L = 13, QUANTIZE_FTYPE_Q4_K_S = 14,
    QUANTIZE_FTYPE_Q4_K_M = 15, QUANTIZE_FTYPE_Q5_K_S = 16, QUANTIZE_FTYPE_Q5_K_M = 17, QUANTIZE_FTYPE_Q6_K = 18,
    QUANTIZE_FTYPE_IQ4_NL = 25, QUANTIZE_FTYPE_IQ4_XS = 30,
    QUANTIZE_FTYPE_TQ1_0 = 36, QUANTIZE_FTYPE_TQ2_0 = 37, /* ternary (BitNet b1.58's), untied embeddings in Q4_K */
    QUANTIZE_FTYPE_MXFP4_MOE = 38, /* the experts in MXFP4, every other matrix in Q8_0 (gpt-oss's release) */
} quantize_ftype;
/* "Q2_K", "Q3_K_S", "Q3_K_M", "Q3_K_L", "Q4_K_M", "Q4_K_S", "Q5_K_M", "Q5_K_S", "Q6_K", "Q8_0", "Q4_0", "Q5_0",
 * "IQ4_NL", "IQ4_XS", "MXFP4_MOE", "TQ1_0", "TQ2_0" (any case); false for anything else. */
bool quantize_ftype_parse(const char *name, quantize_ftype *out);
const char *quantize_ftype_name(quantize_ftype ftype);

/* One output tensor: its source and the type it is written in (the source's own: copied as it is). */
typedef struct quantize_plan_entry {
    const gguf_tensor *src;
    uint32_t type;
} quantize_plan_entry;

/* The tensors of a quantized model in the order and types llama-quantize (no importance matrix; ov: its
 * --tensor-type overrides, or NULL) gives them. *out (freed by the caller) points into `in`. Errors name the
 * tensor: another architecture, already quantized sources, a type this quantizer does not write. */
gguf_status quantize_model_plan(const gguf_file *in, quantize_ftype ftype, const quantize_overrides *ov,
                                quantize_plan_entry **out, size_t *n, gguf_error *err);
/* Writes the quantized model to path atomically (temporary file, rename):
 * the source's metadata, general.quantization_version and general.file_type,
 * then the tensors of the plan, on `threads` OpenMP threads (0: all). The
 * result is byte for byte what llama-quantize writes for the same source. */
gguf_status quantize_model_write(const gguf_file *in, quantize_ftype ftype, const quantize_overrides *ov,
                                 const char *path, int threads, gguf_error *err);

#endif
