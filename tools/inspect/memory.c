/* gguf-inspect --memory: the buffers llama.cpp's CPU build would allocate for this file (model_memory_estimate),
 * as text or JSON, and with --fit the largest context a budget holds. */
#include "json_doc.h"
#include "json_line.h"
#include "memory_report.h"
#include "model.h"
#include "inspect.h"

#include <cjson/cJSON.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

int inspect_print_memory(FILE *out, const gguf_file *f, const inspect_opts *o)
{
    model_hparams hp;
    model_error merr = { 0 };
    model_status s = model_hparams_read(f, &hp, &merr);
    model_memory m;
    if (s == MODEL_OK)
        s = model_memory_estimate(f, &hp, &o->mem, &m, &merr);
    int rc = s == MODEL_OK ? 0 : s == MODEL_E_MALFORMED ? 1 : 2;
    if (s != MODEL_OK) {
        fprintf(stderr, "gguf-inspect: %s: no memory estimate: %s%s%s%s\n", o->path, merr.message,
                merr.subject[0] ? " (" : "", merr.subject, merr.subject[0] ? ")" : "");
        if (o->json)
            json_doc_print_error("gguf-inspect", o->path, rc, s == MODEL_E_MALFORMED ? "malformed" : "unsupported",
                                 merr.offset, merr.subject, merr.message);
        return rc;
    }
    int64_t fit = o->fit_set ? model_memory_fit(f, &hp, &o->mem, o->fit) : 0;
    if (o->json) {
        cJSON *doc = json_doc_new("gguf-inspect", o->path);
        json_doc_verdict(doc, 0, "memory estimated");
        cJSON_AddItemToObject(doc, "memory", memory_report_json(&o->mem, &m));
        if (o->fit_set) {
            cJSON *fo = cJSON_AddObjectToObject(doc, "fit");
            cJSON_AddNumberToObject(fo, "budget", (double)o->fit);
            cJSON_AddNumberToObject(fo, "n_ctx", (double)fit);
        }
        return json_print_line(out, doc) == 0 ? 0 : 2;
    }
    memory_report_text(out, &hp, &o->mem, &m);
    if (o->fit_set) {
        if (fit == 0)
            fprintf(out, "fit: not even -c 256 fits in %.2f MiB\n", (double)o->fit / 1048576.0);
        else {
            model_memory_params q = o->mem;
            q.n_ctx = fit;
            model_memory at;
            model_memory_estimate(f, &hp, &q, &at, NULL);
            fprintf(out, "fit: -c %lld fits in %.2f MiB (total %.2f MiB)%s\n", (long long)fit,
                    (double)o->fit / 1048576.0, (double)at.total / 1048576.0,
                    fit >= hp.n_ctx_train ? ": the model's whole context" : "");
        }
    }
    return 0;
}
