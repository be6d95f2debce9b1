/* Helpers of the Criterion suites that assert or skip with Criterion's macros (testutil.h has the plain
 * ones): the shared models and goldens a test needs, and gguf-run's outputs. */
#ifndef GGUFSCOPE_SUITE_HELPERS_H
#define GGUFSCOPE_SUITE_HELPERS_H

#include "testutil.h"

#include <cJSON.h>

/* The shared model's path (malloc'd), or the test skipped when it is not there. */
char *need_model(const char *name);
/* golden generate/STEM.json, or the test skipped when it is not there. */
cJSON *need_golden(const char *stem);
/* generate/NAME of the goldens (any file: .json, .npy), or the test skipped when it is not there; malloc'd. */
char *generate_golden(const char *name);
/* ../shared/tools/reference_forward.py (the numpy engine tests/py/reference_trace.py runs), or the test skipped. */
void need_reference(void);
/* Asserts that the file at path has sha256 want (the file a reference answer was made from); what says why. */
void assert_sha256(const char *path, const char *want, const char *what);
/* gguf-run MODEL --json -q EXTRA: its JSON (asserted to be some), its exit status in *status. */
cJSON *run_json(const char *model, const char *extra, int *status);
/* Max |ours - golden| / max |golden| of the prompt logits gguf-run wrote to npy and golden stem's. */
double logits_vs_golden(const char *npy, const char *stem);
/* Writes b as dir/name and frees it; returns the path (malloc'd). */
char *run_write_tmp(const char *dir, const char *name, tbuf *b);
/* The fixture model our writer makes (the demo's fallback), patched by patch when not NULL, as dir/name. */
char *run_fixture(const char *dir, const char *name, void (*patch)(tbuf *b));

#endif
