/* The buffers llama.cpp's CPU build allocates (model_memory_estimate), as gguf-inspect --memory and gguf-run
 * --dry-run print them: memory_report.h. */
#include "memory_report.h"

static double mib(uint64_t b)
{
    return (double)b / (1024.0 * 1024.0);
}

static const char *type_name(uint32_t t)
{
    static char buf[2][16];
    static int k;
    const char *n = gguf_type_traits_of(t)->name;
    char *o = buf[k++ & 1];
    size_t i = 0;
    for (; n && n[i] && i < sizeof buf[0] - 1; i++)
        o[i] = (char)(n[i] >= 'A' && n[i] <= 'Z' ? n[i] + 32 : n[i]); /* llama.cpp writes cache types lowercase */
    o[i] = '\0';
    return o;
}

void memory_report_text(FILE *out, const model_hparams *hp, const model_memory_params *p, const model_memory *m)
{
    fprintf(out,
            "memory: what llama.cpp's CPU build allocates for -c %lld -b %lld -ub %lld -ctk %s -ctv %s -fa %s%s%s\n",
            (long long)m->n_ctx, (long long)p->n_batch, (long long)p->n_ubatch, type_name(p->type_k),
            type_name(p->type_v), m->flash_attn ? "on" : "off", p->no_repack ? " --no-repack" : "",
            p->no_mmap ? " --no-mmap" : "");
    fprintf(out, "  %-18s %10.2f MiB  %s\n", "CPU_Mapped", mib(m->weights_mapped),
            p->no_mmap ? "(the plain weights, read into memory)"
                       : "(the file range the plain weights span; mapped, so pages are shared and reclaimable)");
    fprintf(out, "  %-18s %10.2f MiB  (%zu tensors re-laid out for this CPU's kernels: a copy)\n", "CPU_REPACK",
            mib(m->weights_repacked), m->n_repacked);
    char streams[48] = ""; /* one stream of cells per sequence */
    if (p->n_seq > 1)
        snprintf(streams, sizeof streams, " x %lld sequences", (long long)p->n_seq);
    if (m->n_layer_swa + m->n_layer_full == 0) /* Mamba: llama.cpp makes no KV cache at all */
        fprintf(out, "  %-18s %10.2f MiB  (none: no layer attends, so the context costs no memory)\n",
                "KV cache", 0.0);
    else if (m->n_layer_swa > 0)
        fprintf(out, "  %-18s %10.2f MiB  (%lld cells%s x %lld full layers, %lld cells%s x %lld sliding-window "
                "layers; K %.2f MiB, V %.2f MiB)\n", "KV cache", mib(m->kv_bytes), (long long)m->kv_cells, streams,
                (long long)m->n_layer_full, (long long)m->kv_cells_swa, streams, (long long)m->n_layer_swa,
                mib(m->kv_k), mib(m->kv_v));
    else
        fprintf(out, "  %-18s %10.2f MiB  (%lld cells%s x %lld layers; K %.2f MiB, V %.2f MiB)\n", "KV cache",
                mib(m->kv_bytes), (long long)m->kv_cells, streams, (long long)m->n_layer_full, mib(m->kv_k),
                mib(m->kv_v));
    if (m->n_layer_recurrent > 0) {
        char scan[48] = ""; /* a short convolution keeps no scan state */
        if (m->state_scan > 0)
            snprintf(scan, sizeof scan, ", %lld state values", (long long)m->state_scan);
        fprintf(out, "  %-18s %10.2f MiB  (%lld recurrent layers x %lld sequence%s: %lld conv values%s each; f32)\n",
                "recurrent states", mib(m->recurrent), (long long)m->n_layer_recurrent, (long long)p->n_seq,
                p->n_seq == 1 ? "" : "s", (long long)m->state_conv, scan);
    }
    fprintf(out, "  %-18s %10.2f MiB  (the logits of %lld sequence%s)\n", "output", mib(m->output),
            (long long)p->n_seq, p->n_seq == 1 ? "" : "s");
    fprintf(out, "  %-18s %10.2f MiB  (the graph's scratch for a batch of %lld tokens)\n", "compute", mib(m->compute),
            (long long)m->n_tokens);
    fprintf(out, "  %-18s %10.2f MiB\n", "total", mib(m->total));
    if (m->n_ctx > hp->n_ctx_train && hp->n_ctx_train > 0)
        fprintf(out, "  note: -c %lld is past the %lld positions the model was trained for\n", (long long)m->n_ctx,
                (long long)hp->n_ctx_train);
    if (p->flash_attn != 0 && hp->arch && hp->arch->flash_attn_never)
        fprintf(out, "  note: llama.cpp turns flash attention off for every %s model (-fa %s is not followed)\n",
                hp->arch->name, p->flash_attn > 0 ? "on" : "auto");
    if (m->flash_attn && hp->arch && hp->arch->llama_aborts_flash_attn)
        fprintf(out, "  note: llama.cpp aborts making this context: flash attention is on (-fa auto turns it on) and %s\n",
                hp->arch->llama_aborts_flash_attn);
}

cJSON *memory_report_json(const model_memory_params *p, const model_memory *m)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "n_ctx", (double)m->n_ctx);
    cJSON_AddNumberToObject(o, "n_batch", (double)p->n_batch);
    cJSON_AddNumberToObject(o, "n_ubatch", (double)p->n_ubatch);
    cJSON_AddNumberToObject(o, "n_tokens", (double)m->n_tokens);
    cJSON_AddStringToObject(o, "cache_type_k", type_name(p->type_k));
    cJSON_AddStringToObject(o, "cache_type_v", type_name(p->type_v));
    cJSON_AddBoolToObject(o, "flash_attn", m->flash_attn);
    cJSON_AddNumberToObject(o, "weights_mapped", (double)m->weights_mapped);
    cJSON_AddNumberToObject(o, "weights_repacked", (double)m->weights_repacked);
    cJSON_AddNumberToObject(o, "n_repacked", (double)m->n_repacked);
    cJSON_AddNumberToObject(o, "kv", (double)m->kv_bytes);
    cJSON_AddNumberToObject(o, "kv_k", (double)m->kv_k);
    cJSON_AddNumberToObject(o, "kv_v", (double)m->kv_v);
    cJSON_AddNumberToObject(o, "kv_cells", (double)m->kv_cells);
    cJSON_AddNumberToObject(o, "kv_cells_swa", (double)m->kv_cells_swa);
    cJSON_AddNumberToObject(o, "recurrent", (double)m->recurrent);
    cJSON_AddNumberToObject(o, "n_layer_recurrent", (double)m->n_layer_recurrent);
    cJSON_AddNumberToObject(o, "output", (double)m->output);
    cJSON_AddNumberToObject(o, "compute", (double)m->compute);
    cJSON_AddNumberToObject(o, "total", (double)m->total);
    return o;
}
