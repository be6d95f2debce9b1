/* A JSON document written as it is produced, so that its memory is one element's, not the document's: the
 * small head (tool, version, file, verdict) is a cJSON object; the large members (a 64 M-value metadata
 * array, a million tensors) follow element by element, each printed by cJSON and freed. The result is the one
 * line json_print_line would have printed for the whole tree. */
#ifndef GGUFSCOPE_TOOLS_JSON_STREAM_H
#define GGUFSCOPE_TOOLS_JSON_STREAM_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef struct json_stream {
    FILE *out;
    bool comma;  /* a value was written in the open container: the next one needs a comma */
    bool failed; /* out of memory, or the stream refused a write */
} json_stream;

/* Starts the document with head's members (head is deleted) and leaves it open for more. */
void json_stream_begin(json_stream *js, FILE *out, cJSON *head);
/* A member's name (a name from a file is sanitized as json_text): the value comes next. */
void json_stream_key(json_stream *js, const char *name, size_t len);
/* Opens and closes an array ('[' ']') or an object ('{' '}'). */
void json_stream_open(json_stream *js, char bracket);
void json_stream_close(json_stream *js, char bracket);
/* A value (deleted after it is printed; NULL marks the stream failed). */
void json_stream_value(json_stream *js, cJSON *v);
/* Every member of obj into the open object, in order (obj is deleted). */
void json_stream_members(json_stream *js, cJSON *obj);
/* Number values as exact text (64-bit integers doubles would round). */
void json_stream_uint(json_stream *js, uint64_t v);
void json_stream_int(json_stream *js, int64_t v);
/* Ends the document and the line; 0, or -1 when anything failed (the line is then incomplete). */
int json_stream_end(json_stream *js);

#endif
