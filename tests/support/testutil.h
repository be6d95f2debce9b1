/* Helpers shared by the Criterion suites: a small writer-made base file,
 * byte patching, and locating fields of it through the reader. */
#ifndef GGUFSCOPE_TESTUTIL_H
#define GGUFSCOPE_TESTUTIL_H

#include "gguf.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct tbuf {
    uint8_t *p;
    size_t len;
} tbuf;

/* The base file: keys general.architecture, general.alignment (u32 32),
 * test.str, test.arr (i32 x3), test.strs (string x2), k.aa, k.bb (u8);
 * tensors ta, tb (F32 32x2) and tq (Q8_0 64), in that order. */
tbuf base_file(void);
void tbuf_free(tbuf *b);
tbuf tbuf_copy(const tbuf *b);

void put_u32le(uint8_t *p, uint32_t v);
void put_u64le(uint8_t *p, uint64_t v);
uint64_t get_u64le(const uint8_t *p);

/* Byte offsets inside a valid image, found through our reader. */
uint64_t kv_offset(const tbuf *b, const char *key);         /* start of the key/value record */
uint64_t kv_type_offset(const tbuf *b, const char *key);    /* its u32 value type */
uint64_t kv_value_offset(const tbuf *b, const char *key);   /* its value */
uint64_t tensor_info_offset(const tbuf *b, const char *name);
uint64_t tensor_ndims_offset(const tbuf *b, const char *name);
uint64_t tensor_dim_offset(const tbuf *b, const char *name, unsigned d);
uint64_t tensor_type_offset(const tbuf *b, const char *name);
uint64_t tensor_offset_offset(const tbuf *b, const char *name);

/* Opens b from memory; returns the status and fills err. */
gguf_status open_buf(const tbuf *b, gguf_error *err);

/* Directory of the shared models (env GGUFSCOPE_MODELS or ../shared/models). */
const char *models_dir(void);
/* Python of the venv with the gguf package (env GGUFSCOPE_PYTHON). */
const char *venv_python(void);
/* Directory of the built tools (env GGUFSCOPE_BIN). */
const char *bin_dir(void);

/* Runs a shell command and returns its stdout (malloc'd) and exit status. */
char *run_capture(const char *cmd, int *status);

/* Whole files: read (len 0 and p NULL when unreadable; a NUL follows the len bytes, so a text file is a C string)
 * and written (plain, for test copies). */
tbuf read_whole_file(const char *path);
bool write_whole_file(const char *path, const uint8_t *p, size_t len);

/* Directory of the real models fetched from PyPI by scripts/fetch-real-models.sh
 * (env GGUFSCOPE_REAL_MODELS or build/models/real). */
const char *real_models_dir(void);
/* models_dir()/name, else real_models_dir()/name, when that file exists (malloc'd); else NULL. */
char *model_path(const char *name);

/* A fresh directory /tmp/ggufscope-TAG-XXXXXX into dir (at least 64 bytes); NULL on failure. Removed with
 * everything in it by tmp_dir_remove (false when that fails). */
char *tmp_dir_make(char *dir, const char *tag);
bool tmp_dir_remove(const char *dir);

/* A deterministic pseudo-random value in [-1, 1) from the state *s (a linear congruential step). */
float test_frand(uint32_t *s);

/* Runs bin_dir()/tool with args (shell words; add 2>&1 to capture stderr); returns stdout. */
char *run_tool(const char *tool, const char *args, int *status);

#endif
