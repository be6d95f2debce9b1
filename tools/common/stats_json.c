/* One tensor's audit statistics as a JSON object (gguf-inspect --stats, gguf-verify --json). */
#include "stats_json.h"
#include "format.h"

#include <stdlib.h>
#include <string.h>

cJSON *stats_to_json(const gguf_tensor *t, const audit_stats *s)
{
    cJSON *o = cJSON_CreateObject();
    char *name = utf8_sanitize(t->name, strlen(t->name));
    cJSON_AddStringToObject(o, "name", name ? name : "");
    free(name);
    cJSON_AddStringToObject(o, "type", gguf_type_traits_of(t->type)->name);
    cJSON_AddBoolToObject(o, "decoded", s->supported);
    if (!s->supported)
        return o;
    cJSON_AddNumberToObject(o, "count", (double)s->count);
    cJSON_AddNumberToObject(o, "nan", (double)s->n_nan);
    cJSON_AddNumberToObject(o, "pos_inf", (double)s->n_pinf);
    cJSON_AddNumberToObject(o, "neg_inf", (double)s->n_ninf);
    cJSON_AddNumberToObject(o, "zeros", (double)s->n_zero);
    cJSON_AddNumberToObject(o, "min", s->min);
    cJSON_AddNumberToObject(o, "max", s->max);
    cJSON_AddNumberToObject(o, "mean", s->mean);
    cJSON_AddNumberToObject(o, "std", s->std);
    cJSON_AddNumberToObject(o, "rms", s->rms);
    cJSON_AddNumberToObject(o, "max_abs", s->max_abs);
    cJSON_AddNumberToObject(o, "max_abs_index", (double)s->max_abs_index);
    cJSON *sc = cJSON_AddArrayToObject(o, "scales");
    for (int i = 0; i < s->n_scales; i++) {
        const audit_scale_stats *c = &s->scale[i];
        cJSON *x = cJSON_CreateObject();
        cJSON_AddStringToObject(x, "field", c->name);
        cJSON_AddNumberToObject(x, "blocks", (double)c->count);
        cJSON_AddNumberToObject(x, "nan", (double)c->n_nan);
        cJSON_AddNumberToObject(x, "inf", (double)c->n_inf);
        cJSON_AddNumberToObject(x, "negative", (double)c->n_negative);
        cJSON_AddNumberToObject(x, "huge", (double)c->n_huge);
        cJSON_AddNumberToObject(x, "max_abs", c->max_abs);
        cJSON_AddNumberToObject(x, "max_abs_block", (double)c->max_abs_block);
        cJSON_AddItemToArray(sc, x);
    }
    return o;
}
