/* Private: the rule families and the finding list they append to. */
#ifndef GGUFSCOPE_AUDIT_RULES_H
#define GGUFSCOPE_AUDIT_RULES_H

#include "audit.h"

#include <stdio.h>

typedef struct findings {
    audit_finding *v;
    size_t n, cap;
    bool failed;             /* out of memory: later findings were dropped */
} findings;

/* A new finding, zeroed but for what is given; NULL when out of memory. */
audit_finding *finding_add(findings *fs, audit_severity sev, const char *code, const char *tensor);

/* snprintf into one of a finding's fixed-size text fields. */
#define FSET(field, ...) snprintf((field), sizeof(field), __VA_ARGS__)

/* Shapes against the hyperparameters, missing and surplus layers, vocabulary rows. */
void rules_shape(const gguf_file *f, const audit_hparams *hp, findings *fs);
/* Normal oddities explained: tied embeddings, padded vocabulary, file type, final norm. */
void rules_meta(const gguf_file *f, const audit_hparams *hp, const audit_stats *stats, findings *fs);
/* Each tensor's own numbers: NaN/Inf, block scales, constant matrices, norms, extremes. */
void rules_values(const gguf_file *f, const audit_stats *stats, findings *fs);
/* Each per-layer tensor against the same role in the other layers. */
void rules_siblings(const gguf_file *f, const audit_stats *stats, findings *fs);

/* The median of v[0..n) (v is reordered). */
double median_of(double *v, size_t n);

#endif
