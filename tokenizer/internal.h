/* Private to tokenizer/: the error helper and growable arrays its files share. */
#ifndef GGUFSCOPE_TOKENIZER_INTERNAL_H
#define GGUFSCOPE_TOKENIZER_INTERNAL_H

#include "tokenizer.h"


/* Fills err (when not NULL) and returns code. */
__attribute__((format(printf, 5, 6))) tok_status tok_fail(tok_error *err, tok_status code, uint64_t offset,
                                                          const char *subject, const char *fmt, ...);


#endif
