/* gguf-run's memory: what a run will hold (--dry-run: without allocating the context), and after a run what it held
 * beside that estimate. The estimate is the private memory measured once the model and vocabulary are loaded (the
 * weights stay in the mapping: shared, reclaimable pages) plus the context engine_ctx_create allocates: activations,
 * and the K/V caches' pages for the positions a run reaches (pages of positions never reached are not touched). */
#include "json_doc.h"
#include "json_line.h"
#include "memory_report.h"
#include "procmem.h"
#include "run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double mib(uint64_t b)
{
    return (double)b / 1048576.0;
}

engine_status run_memory_measure(run_memory *rm, const engine_model *m, int n_ctx, engine_error *e)
{
    rm->loaded = procmem_private_bytes();
    rm->n_ctx = n_ctx;
    return engine_ctx_estimate(m, n_ctx, RUN_MAX_BATCH, &rm->ctx, e);
}

/* The pages a buffer of `bytes` is committed in: the CPU backend maps buffers of 2 MiB and more in transparent huge
 * pages where the kernel allows them (kernels/cpu/buffers.c), the rest come from the heap in 4 KiB pages. */
static uint64_t page_for(uint64_t bytes)
{
    static int thp = -1;
    if (thp < 0) {
        char line[128] = "";
        FILE *fp = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
        thp = fp && fgets(line, sizeof line, fp) && !strstr(line, "[never]");
        if (fp)
            fclose(fp);
    }
    return thp && bytes >= (2u << 20) ? 2u << 20 : 4096;
}

/* Pages of [from, from + len) not already counted (ranges come in increasing order; *next is the first page not
 * counted yet). */
static uint64_t new_pages(uint64_t from, uint64_t len, uint64_t page, uint64_t *next)
{
    if (!len)
        return 0;
    uint64_t first = from / page, last = (from + len - 1) / page;
    if (first < *next)
        first = *next;
    *next = last + 1;
    return last >= first ? (last - first + 1) * page : 0;
}

uint64_t run_memory_expected(const run_memory *rm, int positions, int batch)
{
    const engine_ctx_memory *c = &rm->ctx;
    uint64_t total = rm->loaded;
    /* K and V: each a buffer of n_layer regions of n_ctx rows; a run touches the first `positions` of each */
    for (int cache = 0; cache < 2; cache++) {
        const uint64_t row = cache ? c->v_row_bytes : c->kv_row_bytes, region = (uint64_t)c->n_ctx * row;
        const uint64_t page = page_for(region * (uint64_t)c->n_layer);
        uint64_t next = 0;
        for (int l = 0; l < c->n_layer; l++)
            total += new_pages((uint64_t)l * region, (uint64_t)positions * row, page, &next);
    }
    total += c->state_bytes; /* recurrent states: written whole (zeroed) when the context is made */
    /* activations: the rows of the largest batch run (the logits' scratch whole) */
    for (int i = 0; i < c->n_act; i++) {
        uint64_t rows = c->act[i].batch_rows && (uint64_t)batch < c->act[i].rows ? (uint64_t)batch : c->act[i].rows;
        uint64_t next = 0, p = page_for(c->act[i].rows * c->act[i].row_bytes);
        total += new_pages(0, rows * c->act[i].row_bytes, p, &next);
    }
    return total;
}

int run_memory_dry_run(FILE *out, const gguf_file *f, const run_memory *rm, const char *label, bool json)
{
    model_hparams hp;
    model_memory_params p = model_memory_params_default();
    p.n_ctx = rm->n_ctx;
    model_memory mm;
    model_error me = { 0 };
    const bool llama =
        model_hparams_read(f, &hp, &me) == MODEL_OK && model_memory_estimate(f, &hp, &p, &mm, &me) == MODEL_OK;
    if (json) {
        cJSON *doc = json_doc_new("gguf-run", label);
        json_doc_verdict(doc, 0, "dry run: memory estimated, nothing run");
        cJSON *o = cJSON_AddObjectToObject(doc, "dry_run");
        cJSON_AddNumberToObject(o, "n_ctx", rm->n_ctx);
        cJSON_AddNumberToObject(o, "loaded_bytes", (double)rm->loaded);
        cJSON_AddNumberToObject(o, "kv_bytes", (double)rm->ctx.kv_bytes);
        cJSON_AddNumberToObject(o, "activation_bytes", (double)rm->ctx.activation_bytes);
        cJSON_AddNumberToObject(o, "state_bytes", (double)rm->ctx.state_bytes);
        cJSON_AddNumberToObject(o, "estimated_full_context_bytes",
                                (double)run_memory_expected(rm, rm->n_ctx, rm->ctx.max_batch));
        if (llama)
            cJSON_AddItemToObject(doc, "llama_cpp", memory_report_json(&p, &mm));
        return json_print_line(out, doc) == 0 ? 0 : 2;
    }
    char state[64] = "";
    if (rm->ctx.state_bytes)
        snprintf(state, sizeof state, ", recurrent state %.1f MiB", mib(rm->ctx.state_bytes));
    fprintf(out, "gguf-run   -c %d: %.1f MiB private with the model loaded, then KV cache %.1f MiB (%.1f KiB a "
            "position)%s and activations %.1f MiB: %.1f MiB when every position is used\n", rm->n_ctx,
            mib(rm->loaded), mib(rm->ctx.kv_bytes), rm->ctx.kv_bytes_per_position / 1024.0, state,
            mib(rm->ctx.activation_bytes), mib(run_memory_expected(rm, rm->n_ctx, rm->ctx.max_batch)));
    if (llama)
        memory_report_text(out, &hp, &p, &mm);
    else
        fprintf(out, "llama.cpp  no estimate: %s\n", me.message);
    return 0;
}
