/* Audit statistics for --json output. */
#ifndef GGUFSCOPE_TOOLS_STATS_JSON_H
#define GGUFSCOPE_TOOLS_STATS_JSON_H

#include "audit.h"

#include <cjson/cJSON.h>

/* name, type, decoded, and when decoded: counts, min/max/mean/std/rms/max_abs and the block scales. */
cJSON *stats_to_json(const gguf_tensor *t, const audit_stats *s);

#endif
