/* Reading ../shared/golden: JSON documents and f32 .npy arrays. */
#ifndef GGUFSCOPE_TEST_GOLDEN_H
#define GGUFSCOPE_TEST_GOLDEN_H

#include <cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The golden directory (env GGUFSCOPE_GOLDEN, else next to the models: ../golden). */
const char *golden_dir(void);
/* golden_dir()/rel parsed, or NULL when absent or not JSON. */
cJSON *golden_json(const char *rel);
/* Reads a 2-D little-endian f32 .npy (version 1 or 2); NULL when absent or another layout. */
float *npy_read_f32(const char *path, uint64_t *rows, uint64_t *cols);
/* Fills out[0..n) from a JSON array of integers; returns how many there were. */
size_t json_ints(const cJSON *arr, int32_t *out, size_t n);

/* Writes ../shared/tools/synth_arch.py's preset to path with build/venv's Python and checks the file is the golden
 * README's (sha256, from synth_arch_sha256): 1 written and checked, 0 when the script or the venv is not there
 * (skip), -1 when it ran but failed or wrote another file (a failure; why in *why, 200 bytes). */
int synth_arch_write(const char *preset, const char *path, char *why);
/* Writes tests/py/heldout_arch.py's shape `name` to path with build/venv's Python (its callers check the sha256):
 * false when it failed, with the script's output in why (200 bytes). */
bool heldout_arch_write(const char *name, const char *path, char *why);
/* The i-th preset the golden README lists (NULL past the last), its general.architecture in *arch. */
const char *synth_arch_preset(size_t i, const char **arch);
/* The golden README's sha256 of a preset's f32 file, or NULL for a preset it does not list. */
const char *synth_arch_sha256(const char *preset);

#endif
