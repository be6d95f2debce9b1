#include "json_line.h"
#include "format.h"

#include <stdlib.h>
#include <string.h>

int json_print_line(FILE *out, cJSON *doc)
{
    char *text = doc ? cJSON_PrintUnformatted(doc) : NULL;
    cJSON_Delete(doc);
    if (!text)
        return -1;
    fputs(text, out);
    fputc('\n', out);
    free(text);
    return 0;
}

cJSON *json_text(const char *s, size_t len)
{
    char *clean = utf8_sanitize(s ? s : "", s ? len : 0);
    if (!clean)
        return NULL;
    cJSON *j = cJSON_CreateString(clean);
    free(clean);
    return j;
}

void json_add_text(cJSON *obj, const char *name, const char *s)
{
    cJSON *j = json_text(s, s ? strlen(s) : 0);
    if (j && !cJSON_AddItemToObject(obj, name, j))
        cJSON_Delete(j);
}

bool json_add_named(cJSON *obj, const char *name, size_t len, cJSON *item)
{
    char *clean = utf8_sanitize(name, len);
    bool ok = clean && item && cJSON_AddItemToObject(obj, clean, item);
    free(clean);
    if (!ok)
        cJSON_Delete(item);
    return ok;
}
