/* Private: the rule families and the finding list they append to. */
#ifndef GGUFSCOPE_AUDIT_RULES_H
#define GGUFSCOPE_AUDIT_RULES_H

#include "audit.h"

#include <stdio.h>

typedef audit_findings findings;

/* audit_findings_add, with the layer taken from the tensor's name. */
audit_finding *finding_add(findings *fs, audit_severity sev, const char *code, const char *tensor);

#define FSET AUDIT_FSET

/* Tensors grouped by role: per-layer tensors first, by role, then layer;
 * other tensors after them, by name (each its own group). */
typedef struct role_entry {
    const char *role;        /* "attn_q.weight" for blk.N tensors, the whole name otherwise */
    int layer;               /* -1 outside blk.N */
    size_t index;            /* the tensor's index in the file */
} role_entry;

/* All n tensors' entries, sorted as above (malloc'd), or NULL when out of memory. */
role_entry *role_entries_sorted(const gguf_file *f);
/* The end of the group that starts at e[g]. */
size_t role_group_end(const role_entry *e, size_t n, size_t g);

/* Shapes against the hyperparameters, missing and surplus layers, vocabulary rows. */
void rules_shape(const gguf_file *f, const audit_hparams *hp, findings *fs);
/* Normal oddities explained: tied embeddings, padded vocabulary, file type, final norm. */
void rules_meta(const gguf_file *f, const audit_hparams *hp, const audit_stats *stats, findings *fs);
/* Each tensor's own numbers: NaN/Inf, block scales, constant matrices, norms, extremes. */
void rules_values(const gguf_file *f, const audit_hparams *hp, const audit_stats *stats, findings *fs);
/* Each per-layer tensor against the same role in the other layers. */
void rules_siblings(const gguf_file *f, const audit_stats *stats, findings *fs);
/* Each expert of a mixture-of-experts tensor against its layer's other experts; constant experts. Reads the
 * experts' data again (stats holds each tensor whole). */
void rules_experts(const gguf_file *f, const audit_stats *stats, findings *fs);

/* Keys and tensor names that are not ASCII, and those that display as another name. */
void rules_names(const gguf_file *f, const audit_hparams *hp, findings *fs);

/* The median of v[0..n) (v is reordered). */
double median_of(double *v, size_t n);

#endif
