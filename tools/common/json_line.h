/* A JSON document written as one line, the form every tool's --json output takes. */
#ifndef GGUFSCOPE_TOOLS_JSON_LINE_H
#define GGUFSCOPE_TOOLS_JSON_LINE_H

#include <cjson/cJSON.h>
#include <stdio.h>

/* Writes doc (NULL allowed) unformatted and a newline to out, and deletes it.
 * -1 when it could not be printed (doc NULL or out of memory), else 0. */
int json_print_line(FILE *out, cJSON *doc);

#endif
