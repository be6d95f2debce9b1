/* libFuzzer target: a model file from memory through everything that reads its metadata and
 * binds its tensors: the architecture's hyperparameters, the audit's metadata and shape rules,
 * the vocabulary, the engine's model load, and for a small model that loads, a forward pass of
 * two tokens (rotary, norms and attention under whatever the hyperparameters say). */
#include "audit.h"
#include "engine.h"
#include "gguf.h"
#include "kern.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

/* A forward pass only where it is cheap, so the fuzzer keeps its pace. */
enum { FORWARD_MAX_EMBD = 1024, FORWARD_MAX_VOCAB = 1 << 16 };

static void forward_two(engine_model *m)
{
    const engine_hparams *hp = engine_model_hparams(m);
    if (hp->n_embd > FORWARD_MAX_EMBD || hp->n_vocab > FORWARD_MAX_VOCAB)
        return;
    engine_ctx *c = NULL;
    engine_error err;
    if (engine_ctx_create(m, 4, 2, &c, &err) != ENGINE_OK)
        return;
    float *logits = malloc(sizeof(float) * (size_t)hp->n_vocab);
    int32_t tokens[2] = { 1, (int32_t)(hp->n_vocab - 1) };
    if (logits)
        engine_forward(c, tokens, 2, false, logits, NULL, &err);
    free(logits);
    engine_ctx_free(c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tok_error terr;
    static kern_backend *cpu;
    if (!cpu)
        cpu = kern_cpu_create(1);
    gguf_file *f = NULL;
    gguf_error gerr;
    if (gguf_open_memory(data, size, &f, &gerr) != GGUF_OK)
        return 0;
    model_hparams ghp;
    model_error merr;
    model_hparams_read(f, &ghp, &merr);
    audit_report r;
    if (audit_model(f, NULL, &r) == AUDIT_OK)
        audit_report_free(&r);
    engine_error err;
    tok_vocab *v = NULL;
    if (tok_vocab_load(f, &v, &terr) == TOK_OK)
        tok_vocab_free(v);
    engine_model *m = NULL;
    if (cpu && engine_model_load(f, cpu, &m, &err) == ENGINE_OK) {
        forward_two(m);
        engine_model_free(m);
    }
    gguf_close(f);
    return 0;
}
