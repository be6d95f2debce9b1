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

/* A file the engine runs but llama.cpp's graph for its architecture aborts on: MPT's q/k LayerNorms
 * (model_arch.llama_aborts_why), an AFMoE file without a sliding window (model_arch.llama_aborts_no_window), any PLM
 * file with flash attention on (model_arch.llama_aborts_flash_attn). */
static void llama_aborts(verify_result *r, const engine_model *m)
{
    const engine_hparams *hp = engine_model_hparams(m);
    const model_arch *a = hp->desc;
    audit_finding *fa = a->llama_aborts_flash_attn
                            ? audit_findings_add(&r->integrity, AUDIT_WARNING, "llama-cpp-aborts", "general.architecture")
                            : NULL;
    if (fa) {
        AUDIT_FSET(fa->measured, "a %s model", a->name);
        AUDIT_FSET(fa->expected, "a file llama.cpp builds a graph for with flash attention on (-fa auto turns it on)");
        AUDIT_FSET(fa->meaning, "llama.cpp loads this file, then aborts making a context with flash attention: %s; the "
                                "file itself may be sound (gguf-run runs it)", a->llama_aborts_flash_attn);
    }
    if (a->llama_aborts_no_window && hp->g.swa_window == 0) {
        char key[96];
        snprintf(key, sizeof key, "%s.attention.sliding_window", a->name);
        audit_finding *x = audit_findings_add(&r->integrity, AUDIT_WARNING, "llama-cpp-aborts", key);
        if (x) {
            AUDIT_FSET(x->measured, "no sliding window (the key absent or 0) in this %s model", a->name);
            AUDIT_FSET(x->expected, "a file llama.cpp builds a graph for: attention.sliding_window > 0");
            AUDIT_FSET(x->meaning, "llama.cpp loads this file, then crashes building its graph: %s; the file itself may "
                                   "be sound (gguf-run runs it without a window)", a->llama_aborts_no_window);
        }
    }
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

/* A file of an architecture whose llama.cpp graph is not the math its checkpoints were trained with
 * (model_arch.llama_departs_from_training: PhiMoE's norms and routing). */
static void llama_departs(verify_result *r, const engine_model *m)
{
    const model_arch *a = engine_model_hparams(m)->desc;
    audit_finding *x = a->llama_departs_from_training
                           ? audit_findings_add(&r->integrity, AUDIT_INFO, "llama-cpp-departs", "general.architecture")
                           : NULL;
    if (!x)
        return;
    AUDIT_FSET(x->measured, "a %s model", a->name);
    AUDIT_FSET(x->expected, "llama.cpp's graph computes what the checkpoint was trained to compute");
    AUDIT_FSET(x->meaning, "%s: its outputs are llama.cpp's, not the original implementation's; a faithful engine may "
                           "differ from both llama.cpp and gguf-run on this file", a->llama_departs_from_training);
}

/* A file of an architecture whose llama.cpp loader gives positions by depth (model_arch.rope_n_layer: Baichuan's 7B
 * rotates at 32 layers, its 13B has ALiBi at 40) at a depth that gets none: a pruned or grown model whose attention
 * cannot tell the order of its tokens in llama.cpp (and in gguf-run, which runs it as llama.cpp does). */
static void no_positions_at_depth(verify_result *r, const engine_model *m)
{
    const engine_hparams *hp = engine_model_hparams(m);
    const model_arch *a = hp->desc;
    if (!a->rope_n_layer || !hp->g.rope_off || hp->g.alibi_max_bias > 0.0f)
        return;
    char key[96];
    snprintf(key, sizeof key, "%s.block_count", a->name);
    audit_finding *x = audit_findings_add(&r->integrity, AUDIT_WARNING, "no-positions", key);
    if (!x)
        return;
    AUDIT_FSET(x->measured, "%d layers in a %s model", hp->n_layer, a->name);
    if (a->alibi_n_layer)
        AUDIT_FSET(x->expected, "%u layers (rotary positions) or %u (ALiBi)", a->rope_n_layer, a->alibi_n_layer);
    else
        AUDIT_FSET(x->expected, "%u layers (rotary positions)", a->rope_n_layer);
    AUDIT_FSET(x->meaning, "llama.cpp's %s loader types the model by its depth and gives this one no positions: its "
                           "attention cannot tell the order of the tokens, so a model trained with positions generates "
                           "poorly (gguf-run runs it the same way)", a->name);
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
    if (s == ENGINE_OK && m) {
        llama_aborts(r, m);
        llama_departs(r, m);
        no_positions_at_depth(r, m);
    }
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
