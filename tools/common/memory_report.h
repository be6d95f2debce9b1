/* Printing model_memory_estimate's figures: one wording for gguf-inspect --memory and gguf-run --dry-run. */
#ifndef GGUFSCOPE_TOOLS_MEMORY_REPORT_H
#define GGUFSCOPE_TOOLS_MEMORY_REPORT_H

#include "model.h"

#include <cjson/cJSON.h>
#include <stdio.h>

/* "memory: what llama.cpp's CPU build allocates for -c ..." and a line per buffer, in MiB as llama.cpp prints. */
void memory_report_text(FILE *out, const model_hparams *hp, const model_memory_params *p, const model_memory *m);
/* The same in bytes, with the settings, as a JSON object. */
cJSON *memory_report_json(const model_memory_params *p, const model_memory *m);

#endif
