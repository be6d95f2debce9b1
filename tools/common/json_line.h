/* A JSON document written as one line, the form every tool's --json output takes. */
#ifndef GGUFSCOPE_TOOLS_JSON_LINE_H
#define GGUFSCOPE_TOOLS_JSON_LINE_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdio.h>

/* Writes doc (NULL allowed) unformatted and a newline to out, and deletes it.
 * -1 when it could not be printed (doc NULL or out of memory), else 0. */
int json_print_line(FILE *out, cJSON *doc);

/* A JSON string of len bytes from a file or the user: invalid UTF-8 and NULs become U+FFFD (cJSON
 * escapes the control characters). NULL when out of memory. */
cJSON *json_text(const char *s, size_t len);
/* Adds json_text(s, strlen(s)) to obj under name (ours, plain ASCII). */
void json_add_text(cJSON *obj, const char *name, const char *s);
/* Adds item to obj under a name read from a file (sanitized as json_text). */
bool json_add_named(cJSON *obj, const char *name, size_t len, cJSON *item);

#endif
