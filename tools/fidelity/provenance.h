/* Whether a quantized file's bytes are what the quantizer makes of its base: each tensor of a type our quantizer
 * writes byte for byte as ggml's reference quantizers do (quant_quantize_row: F16, BF16, Q8_0, Q4_0, Q4_K, Q6_K;
 * what llama-quantize writes without an importance matrix) is quantized again from the base's tensor of that name
 * and compared block by block; a tensor of the base's own type, byte for byte. */
#ifndef GGUFSCOPE_TOOLS_FIDELITY_PROVENANCE_H
#define GGUFSCOPE_TOOLS_FIDELITY_PROVENANCE_H

#include "gguf.h"

#include <stdbool.h>
#include <stdint.h>

typedef enum prov_kind {
    PROV_IDENTICAL,     /* the bytes are the quantizer's */
    PROV_DIFFERS,       /* some blocks are not */
    PROV_NOT_CHECKED,   /* a type our quantizer does not write, or no float tensor of that name in the base */
    PROV_SHAPE,         /* the base's tensor of that name has another shape */
} prov_kind;

typedef struct prov_tensor {
    const gguf_tensor *t;
    prov_kind kind;
    uint64_t blocks, blocks_differing, first_block; /* first_block: the first differing one (row-major) */
    double worst;       /* the largest |ours - theirs| of a differing block over that block's RMS (re-quantized) */
} prov_tensor;

typedef struct prov_report {
    prov_tensor *tensors; /* one per tensor of the quantized file, in its order */
    uint64_t n, identical, differing, not_checked;
} prov_report;

/* Checks every tensor of q against base (n_threads over tensors). false when out of memory. */
bool provenance_check(const gguf_file *base, const gguf_file *q, int n_threads, prov_report *r);
void provenance_free(prov_report *r);

#endif
