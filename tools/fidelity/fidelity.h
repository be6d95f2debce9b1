/* gguf-fidelity's parts: the run's options, its models, and the chunked evaluation they share (main.c), the
 * attribution (attribute.c). */
#ifndef GGUFSCOPE_TOOLS_FIDELITY_H
#define GGUFSCOPE_TOOLS_FIDELITY_H

#include "engine.h"
#include "kld.h"
#include "logits_file.h"

enum { MAX_QUANTS = 8, MAX_RESTORE = 64 };

typedef struct opts {
    const char *base, *quants[MAX_QUANTS], *text_path, *kl_base_out, *base_logits;
    const char *restore[MAX_RESTORE]; /* --restore: tensors put back to the base's weights in every QUANT */
    const char *plot;                 /* --plot F.svg: the attribution drawn (F-2.svg ... for later QUANTs) */
    int n_quants, n_ctx, chunks, n_threads, n_restore;
    int attribute;                    /* --attribute=N: name the N tensors that cost the most KLD (0: off) */
    int attribute_chunks;             /* chunks the attribution measures on */
    kern_numerics numerics;
    bool json, quiet, ctx_given, provenance;
} opts;

/* One model: its file, vocabulary, backend, weights and context, and what it measured. */
typedef struct model {
    const char *path;
    gguf_file *f;
    tok_vocab *v;
    kern_backend *be;
    engine_model *m;
    engine_ctx *c;
    kld_acc acc;
    double seconds;
} model;

typedef struct job {
    const opts *o;
    model *base, *quants;
    logits_file *base_file;  /* --base-logits */
    const int32_t *tokens;   /* n_chunk x n_ctx */
    int n_chunk, n_vocab;
    bool add_bos;
    int32_t bos;
    int status;
} job;

/* "gguf-fidelity: MESSAGE" on stderr; returns status. */
int fid_trouble(int status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The logits of positions n_ctx / 2 .. n_ctx - 1 of one chunk ((n_ctx - n_ctx / 2) x n_vocab), the model's context
 * rewound first. */
int fid_run_chunk(model *md, const int32_t *chunk, int n_ctx, float *logits);
/* Chunk i's tokens as the models take it (BOS first where the vocabulary adds one) into chunk (n_ctx). */
void fid_chunk_tokens(const job *j, int i, int32_t *chunk);

/* The reports (report.c): after a chunk, a quantization's summary, its provenance (0 identical, 1 some tensor
 * differs, 2 trouble). */
void fid_print_chunk(const job *j, int chunk, const model *q);
void fid_print_summary(const job *j, const model *q);
int fid_print_provenance(const opts *o, const model *base, const model *q);

/* --attribute for quantization q: which of its tensors cost the KLD, confirmed by restoring them (q_index: which
 * QUANT, for --plot's file name). 0 or 2. */
int fid_attribute(const job *j, model *q, int q_index);

/* One quantized tensor as the attribution saw it (plot.c). */
typedef struct fid_score {
    const char *name;
    int layer;          /* -1: outside the layers (token_embd, output) */
    double err;         /* its product's error on the base's activations */
    double recovered;   /* the KLD restoring it recovers (measured only) */
    bool measured;
} fid_score;

/* The attribution of quantization quant as an SVG: product error per layer and role, the measured recoveries
 * (kld: the quantization's KLD). 0, or -1 with err set. */
int fid_write_plot(const char *path, const char *quant, const fid_score *s, int n, int n_layer, double kld, char *err,
                   size_t err_len);

#endif
