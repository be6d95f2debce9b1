#include "json_line.h"

#include <stdlib.h>

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
