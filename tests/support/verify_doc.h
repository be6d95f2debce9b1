/* gguf-verify --json as the suites read it (docs/JSON.md), and copies of shared models with one tensor's bytes
 * changed: what the verify and experts suites share. Asserts with Criterion's macros. */
#ifndef GGUFSCOPE_VERIFY_DOC_H
#define GGUFSCOPE_VERIFY_DOC_H

#include "gguf.h"

#include <cJSON.h>
#include <stdint.h>

/* gguf-verify --json on path with extra args (NULL: none): the document (asserted to be one), the exit status. */
cJSON *verify_json(const char *path, const char *extra, int *status);
/* The verdict's findings. */
cJSON *findings_of(const cJSON *doc);
/* How many findings have this severity ("error", "warning", "info"). */
int count_findings(const cJSON *doc, const char *severity);
/* The first finding with this code on this tensor (code or tensor NULL: any), or NULL. */
const cJSON *find_finding(const cJSON *doc, const char *code, const char *tensor);
/* The findings printed (malloc'd), for messages. */
char *findings_text(const cJSON *doc);

/* A shared model (need_model's name) written to out with tensor's data bytes changed by patch. */
typedef void (*patch_fn)(uint8_t *data, const gguf_tensor *t);
void write_patched(const char *model, const char *tensor, patch_fn patch, const char *out);

#endif
