/* Files of metadata alone for the hyperparameter reader's suites (test_hparams, test_hparams_layers). */
#ifndef GGUFSCOPE_TESTS_HPARAMS_FILES_H
#define GGUFSCOPE_TESTS_HPARAMS_FILES_H

#include "gguf.h"
#include "testutil.h"

#include <stddef.h>

/* Elements of an array */
#define N(a) (sizeof(a) / sizeof((a)[0]))

/* One key of such a file */
typedef struct kv_spec {
    const char *key;
    char kind;          /* 'u' u32, 'f' f32, 's' string, 'B' bool ("1" or "0"), 'b' bool array (value: "1,0,1"), 'i' int32
                         * array ("0,2,0"), 'F' f32 array ("0.5,1.5"), 'S' string array ("a,b,a") */
    const char *value;
} kv_spec;

/* A file of our writer with the keys given (an arch name and "key=value" pairs of u32/f32/str); its bytes in *keep
 * (the caller frees keep->p after closing the file). */
gguf_file *hparams_file_with(const kv_spec *kvs, size_t n, tbuf *keep);
/* The file of kvs with kvs[at] set to value is refused as malformed, naming subject (kvs is left as it was). */
void hparams_refused_naming(kv_spec *kvs, size_t n, size_t at, const char *value, const char *subject);

#endif
