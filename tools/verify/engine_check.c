/* Whether the file would load at all: gguf-run's own checks of hyperparameters, tensors and vocabulary,
 * which follow llama.cpp's loader (what it reads, the shapes it creates, the ranges it accepts). A file the
 * engine refuses as malformed is an error here too, with the same reason, so that verify never says OK
 * on a file that neither gguf-run nor llama.cpp would run. */
#include "engine.h"
#include "kern.h"
#include "verify.h"

#include <stdio.h>

/* The engine's and the tokenizer's error records have these fields alike. */
typedef struct refusal {
    uint64_t offset;
    const char *subject, *message;
} refusal;

static void refused(verify_result *r, const refusal *e)
{
    audit_finding *x = audit_findings_add(&r->integrity, AUDIT_ERROR, "refused", e->subject);
    if (!x)
        return;
    if (e->offset)
        AUDIT_FSET(x->measured, "byte %llu: %s", (unsigned long long)e->offset, e->message);
    else
        AUDIT_FSET(x->measured, "%s", e->message);
    AUDIT_FSET(x->expected, "a file llama.cpp's loader (and gguf-run's) accepts");
    AUDIT_FSET(x->meaning, "llama.cpp would refuse this file: %.520s", e->message);
}

static void unsupported(verify_result *r, const refusal *e)
{
    audit_finding *x = audit_findings_add(&r->integrity, AUDIT_INFO, "not-runnable", e->subject);
    if (!x)
        return;
    AUDIT_FSET(x->measured, "%s", e->message);
    AUDIT_FSET(x->expected, "an architecture, tokenizer and weight types gguf-run runs");
    AUDIT_FSET(x->meaning, "gguf-run cannot load this model, so only the structure and the weights were checked");
}

/* A file the engine runs but llama.cpp's graph for its architecture aborts on (model_arch.llama_aborts_why): MPT's
 * q/k LayerNorms. */
static void llama_aborts(verify_result *r, const engine_model *m)
{
    const engine_hparams *hp = engine_model_hparams(m);
    const model_arch *a = hp->desc;
    const gguf_tensor *t = NULL;
    char name[96];
    for (int il = 0; il < hp->n_layer && a->llama_aborts_why && !t; il++) {
        snprintf(name, sizeof name, "blk.%d.%s", il, model_role_name(a, a->llama_aborts_role));
        t = gguf_tensor_by_name(r->f, name);
    }
    audit_finding *x = t ? audit_findings_add(&r->integrity, AUDIT_WARNING, "llama-cpp-aborts", t->name) : NULL;
    if (!x)
        return;
    AUDIT_FSET(x->measured, "tensor '%s' (%s), in a %s model", t->name, model_role_info_of(a->llama_aborts_role)->what,
               a->name);
    AUDIT_FSET(x->expected, "a file llama.cpp builds a graph for");
    AUDIT_FSET(x->meaning, "llama.cpp loads this file, then aborts building its graph: %s; the file itself may be "
                           "sound (gguf-run runs it)", a->llama_aborts_why);
}

void verify_engine_check(verify_result *r)
{
    if (!r->f)
        return;
    kern_backend *cpu = kern_cpu_create(1);
    if (!cpu)
        return;
    engine_error e = { 0 };
    engine_model *m = NULL;
    tok_vocab *v = NULL;
    /* a vocabulary-only file (no tensors) is what llama.cpp loads with vocab_only: its vocabulary alone */
    /* a truncated file: its structure finding says llama.cpp refuses it; what is left to say is its vocabulary */
    /* a remote file read in part: the tensors not fetched are not there to bind */
    engine_status s = gguf_tensor_count(r->f) && !gguf_missing_bytes(r->f, NULL) && !gguf_tensors_absent(r->f)
                          ? engine_model_load(r->f, cpu, &m, &e)
                          : ENGINE_OK;
    if (s != ENGINE_OK && s != ENGINE_E_NOMEM) {
        const refusal why = { e.offset, e.subject, e.message };
        (engine_status_is_file_fault(s) ? refused : unsupported)(r, &why);
    }
    if (s == ENGINE_OK && m)
        llama_aborts(r, m);
    if (s == ENGINE_OK) {
        tok_error te = { 0 };
        tok_status ts = tok_vocab_load(r->f, &v, &te);
        const refusal why = { te.offset, te.subject, te.message };
        if (ts == TOK_E_MALFORMED)
            refused(r, &why);
        else if (ts == TOK_E_UNSUPPORTED)
            unsupported(r, &why);
    }
    tok_vocab_free(v);
    engine_model_free(m);
    cpu->destroy(cpu);
}
