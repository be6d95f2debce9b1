/*
 * audit.h — tensor statistics and the sanity rules built on them.
 *
 * Statistics stream a tensor's blocks through quant/ into per-thread scratch
 * (no full-tensor copies). The rules compare every number with what it should
 * be relative to: the same tensor in the other layers (robust z-scores over
 * the median and MAD, so a bad layer cannot hide itself), the role's known
 * character, the hyperparameters in the metadata. Each finding carries its
 * severity, the tensor, the measured numbers, what was expected and what it
 * means for inference. Nothing here prints or exits.
 */
#ifndef GGUFSCOPE_AUDIT_H
#define GGUFSCOPE_AUDIT_H

#include "gguf.h"
#include "model.h"
#include "quant.h"

#include "export.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum audit_status { AUDIT_OK = 0, AUDIT_E_NOMEM, AUDIT_E_INVALID_ARG } audit_status;

/* Values at least 2^AUDIT_EXTREME_LOG2 times a tensor's median magnitude are
 * "extreme"; scales 2^AUDIT_HUGE_SCALE_LOG2 times the median scale "huge".
 * Gaussian weights stay below 2^4 of their median, trained ones below 2^9
 * (every healthy file here: matrices 2^7.2, block scales 2^5.2; the "super
 * weights" reported in Llama-class models about 2^8). A weight matrix past
 * 2^AUDIT_EXTREME_ERROR_LOG2, or a block scale past 2^AUDIT_HUGE_SCALE_ERROR_LOG2,
 * is what a flipped top exponent bit makes, not training: an error. */
#define AUDIT_EXTREME_LOG2 12
#define AUDIT_HUGE_SCALE_LOG2 10
#define AUDIT_EXTREME_ERROR_LOG2 16
#define AUDIT_HUGE_SCALE_ERROR_LOG2 14
#define AUDIT_NONE UINT64_MAX

/* ---- statistics ---------------------------------------------------------- */

typedef struct audit_scale_stats {
    const char *name;            /* "d", "dmin", "m", "e" */
    bool never_negative;         /* ggml's quantizer never writes it negative */
    uint64_t count, n_nan, n_inf, n_negative, n_zero, n_huge;
    uint64_t first_nan, first_inf, first_negative, first_huge; /* block index, AUDIT_NONE when none */
    double max_abs;
    uint64_t max_abs_block;
    int median_log2;             /* floor(log2 |d|) median over nonzero finite scales */
} audit_scale_stats;

typedef struct audit_stats {
    bool supported;              /* false: quant/ cannot decode the type; nothing else is filled */
    uint64_t count;
    uint64_t n_nan, n_pinf, n_ninf, n_zero;
    uint64_t first_nonfinite;    /* element index, AUDIT_NONE when none */
    double min, max, mean, std, rms, max_abs; /* over finite values (0 when there are none) */
    uint64_t max_abs_index;
    int median_log2;             /* floor(log2 |x|) median over nonzero finite values; 0 when none */
    uint64_t n_extreme;          /* |x| >= 2^(median_log2 + AUDIT_EXTREME_LOG2) */
    int n_scales;
    audit_scale_stats scale[QUANT_MAX_SCALES];
} audit_stats;

/* Statistics of one tensor over n_threads OpenMP threads (0: all). */
GGUFSCOPE_API audit_status audit_tensor_stats(const gguf_tensor *t, int n_threads, audit_stats *out);

/* Statistics of every tensor of f into out (n_tensors entries, info order).
 * progress (may be NULL) is called on the calling thread with bytes done. */
GGUFSCOPE_API audit_status audit_file_stats(const gguf_file *f, int n_threads, gguf_progress_fn progress, void *user,
                              audit_stats *out);

/* ---- names and roles ------------------------------------------------------ */

typedef enum audit_class {
    AUDIT_CLASS_OTHER,
    AUDIT_CLASS_EMBEDDING,       /* token_embd.weight */
    AUDIT_CLASS_OUTPUT,          /* output.weight */
    AUDIT_CLASS_MATRIX,          /* a 2-D (or more) weight */
    AUDIT_CLASS_NORM,            /* a normalization's scale vector */
    AUDIT_CLASS_BIAS,
} audit_class;

/* "blk.12.attn_q.weight" -> 12 and *role = "attn_q.weight"; other names -> -1 and *role = name. */
GGUFSCOPE_API int audit_layer_of(const char *name, const char **role);
GGUFSCOPE_API audit_class audit_class_of(const gguf_tensor *t);

/* ---- hyperparameters ------------------------------------------------------ */

typedef struct audit_hparams {
    model_hparams g;              /* the reader engine/ uses too (model/hparams.c): sizes (0: unknown), the
                                  * architecture's description (g.arch, NULL when not described), file type */
    int64_t n_padding_tokens;    /* unused/[PAD…] tokens at the end of the vocabulary */
} audit_hparams;

GGUFSCOPE_API void audit_read_hparams(const gguf_file *f, audit_hparams *out);
/* llama.cpp's name of a general.file_type value ("Q4_K_M"), or NULL. */
GGUFSCOPE_API const char *audit_file_type_name(int64_t file_type);

/* ---- findings ------------------------------------------------------------- */

typedef enum audit_severity { AUDIT_INFO, AUDIT_WARNING, AUDIT_ERROR } audit_severity;

typedef struct audit_finding {
    audit_severity severity;
    char code[32];               /* stable identifier: "nan", "scale-inf", "sibling-outlier", … */
    char tensor[256];            /* "" when about the whole model */
    int layer;                   /* -1 when not per layer */
    char measured[GGUF_ERROR_MESSAGE_SIZE + 128]; /* (room for an error's message and where it was) */
    char expected[320];
    char meaning[600];           /* one sentence: what it means for inference */
} audit_finding;

/* How many findings of one code a list keeps; the rest are counted into one "and N more like it" finding,
 * so that a hostile file (100 000 layers, every tensor broken) costs memory and output in proportion to the
 * kinds of problem, not to what its header claims. */
enum { AUDIT_SAME_CODE_MAX = 16 };

typedef struct audit_code_count {
    char code[32];
    audit_severity worst;        /* of the findings dropped */
    size_t kept, dropped;
    char last_tensor[256];       /* the last one dropped */
} audit_code_count;

/* A growing list of findings, for the audit's rules and for tools that add
 * their own (gguf-verify's integrity checks). */
typedef struct audit_findings {
    audit_finding *v;
    size_t n, cap;
    bool failed;                 /* out of memory: later findings were dropped */
    audit_code_count *counts;    /* per code (a handful of codes) */
    size_t n_counts;
    audit_finding spill;         /* what audit_findings_add hands out for a finding past the cap */
} audit_findings;

/* A new finding, zeroed but for what is given (layer -1); NULL when out of memory. Past
 * AUDIT_SAME_CODE_MAX findings of one code, a scratch finding that is only counted. */
GGUFSCOPE_API audit_finding *audit_findings_add(audit_findings *l, audit_severity sev, const char *code,
                                                const char *tensor);
/* Appends one finding per code that went past the cap ("and N more like it") and frees the counts. */
GGUFSCOPE_API void audit_findings_close(audit_findings *l);

/* snprintf into one of a finding's fixed-size text fields. */
#define AUDIT_FSET(field, ...) snprintf((field), sizeof(field), __VA_ARGS__)

typedef struct audit_role_summary {
    char role[96];               /* "attn_q.weight", or a global tensor's name */
    int n_layers;                /* 0 for tensors outside blk.N */
    char types[64];              /* "Q4_K" or "Q4_K,Q6_K" */
    double rms_min, rms_median, rms_max;
    double mean_median, max_abs_max;
    int n_findings;
    size_t first_tensor;         /* index of its first tensor (roles are listed in that order) */
    int n_measured;              /* tensors whose values were decoded (0: the figures above are not measurements) */
} audit_role_summary;

typedef struct audit_report {
    audit_hparams hp;
    audit_finding *findings;     /* errors first, then warnings, then infos */
    size_t n_findings;
    size_t n_errors, n_warnings, n_infos;
    audit_role_summary *roles;
    size_t n_roles;
} audit_report;

GGUFSCOPE_API const char *audit_severity_name(audit_severity s); /* "error", "warning", "info" */

/* Runs every rule over f. stats (one per tensor, from audit_file_stats) may
 * be NULL: then only the metadata and shape rules run. */
GGUFSCOPE_API audit_status audit_model(const gguf_file *f, const audit_stats *stats, audit_report *out);
GGUFSCOPE_API void audit_report_free(audit_report *r);

/* ---- comparing two tensors ------------------------------------------------ */

typedef struct audit_diff {
    bool comparable;             /* same element count and both types decodable */
    bool bytes_equal;            /* the same type, shape and bytes: identical tensors */
    uint64_t count, n_different; /* values that differ (NaN vs NaN counts as equal) */
    uint64_t n_nonfinite_a, n_nonfinite_b;
    double max_abs_diff;
    uint64_t max_abs_index;
    double rms_diff, rms_a, rms_b;
    double rel_rms;              /* rms_diff / rms_a (0 when rms_a is 0) */
} audit_diff;

GGUFSCOPE_API audit_status audit_compare_tensors(const gguf_tensor *a, const gguf_tensor *b, int n_threads,
                                                 audit_diff *out);

#ifdef __cplusplus
}
#endif

#endif
