/* The streamed JSON document (json_stream.h). */
#include "json_stream.h"
#include "json_line.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static void separate(json_stream *js)
{
    if (js->comma)
        fputc(',', js->out);
    js->comma = false;
}

void json_stream_begin(json_stream *js, FILE *out, cJSON *head)
{
    *js = (json_stream){ .out = out };
    char *text = head ? cJSON_PrintUnformatted(head) : NULL;
    cJSON_Delete(head);
    size_t n = text ? strlen(text) : 0;
    if (n < 2 || text[n - 1] != '}') {
        js->failed = true;
        free(text);
        return;
    }
    fwrite(text, 1, n - 1, out); /* without its closing brace */
    js->comma = n > 2;
    free(text);
}

void json_stream_key(json_stream *js, const char *name, size_t len)
{
    cJSON *s = json_text(name, len);
    char *text = s ? cJSON_PrintUnformatted(s) : NULL;
    cJSON_Delete(s);
    if (!text) {
        js->failed = true;
        return;
    }
    separate(js);
    fputs(text, js->out);
    fputc(':', js->out);
    free(text);
}

void json_stream_open(json_stream *js, char bracket)
{
    separate(js);
    fputc(bracket, js->out);
}

void json_stream_close(json_stream *js, char bracket)
{
    fputc(bracket, js->out);
    js->comma = true;
}

void json_stream_value(json_stream *js, cJSON *v)
{
    char *text = v ? cJSON_PrintUnformatted(v) : NULL;
    cJSON_Delete(v);
    if (!text) {
        js->failed = true;
        return;
    }
    separate(js);
    fputs(text, js->out);
    js->comma = true;
    free(text);
}

void json_stream_members(json_stream *js, cJSON *obj)
{
    if (!obj) {
        js->failed = true;
        return;
    }
    for (cJSON *c = obj->child; c; c = obj->child) {
        cJSON_DetachItemViaPointer(obj, c);
        json_stream_key(js, c->string, strlen(c->string)); /* our own names: ASCII */
        json_stream_value(js, c);
    }
    cJSON_Delete(obj);
}

void json_stream_uint(json_stream *js, uint64_t v)
{
    separate(js);
    fprintf(js->out, "%" PRIu64, v);
    js->comma = true;
}

void json_stream_int(json_stream *js, int64_t v)
{
    separate(js);
    fprintf(js->out, "%" PRId64, v);
    js->comma = true;
}

int json_stream_end(json_stream *js)
{
    fputs("}\n", js->out);
    return js->failed || ferror(js->out) ? -1 : 0;
}
