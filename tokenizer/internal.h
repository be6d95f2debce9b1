/* Private to tokenizer/: the error helper and growable arrays its files share. */
#ifndef GGUFSCOPE_TOKENIZER_INTERNAL_H
#define GGUFSCOPE_TOKENIZER_INTERNAL_H

#include "tokenizer.h"

/* Makes room for `need` items of elem bytes in *items (capacity *cap, doubled as it grows); false when out of
 * memory, *items unchanged. */
bool tok_reserve(void **items, size_t *cap, size_t need, size_t elem);

/* Fills err (when not NULL) and returns code. */
__attribute__((format(printf, 5, 6))) tok_status tok_fail(tok_error *err, tok_status code, uint64_t offset,
                                                          const char *subject, const char *fmt, ...);

/* Whether s[0..len) could name a tokenizer or pre-tokenizer: 1 to 64 of [A-Za-z0-9_.-]. A name that could is
 * "not supported"; one that could not is a malformed file. */
bool tok_is_identifier(const char *s, size_t len);

#endif
