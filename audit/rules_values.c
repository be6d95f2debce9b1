/* Rules on each tensor's own numbers. */
#include "rules.h"

#include <math.h>
#include <string.h>

#define F16_MAX 65504.0
/* A norm whose mean magnitude is below this multiplies its input by ~0. Trained norms go as low as 1.06e-3
 * (SmolLM2-135M's layer-0 attn_norm), so the line sits ten times under that. */
#define NORM_NEAR_ZERO 1e-4

static void where(const gguf_tensor *t, uint64_t element, char *buf, size_t cap)
{
    uint64_t row = element / t->ne[0], col = element % t->ne[0];
    if (t->n_dims >= 2)
        snprintf(buf, cap, "element %llu (row %llu, column %llu)", (unsigned long long)element,
                 (unsigned long long)row, (unsigned long long)col);
    else
        snprintf(buf, cap, "element %llu", (unsigned long long)element);
}

static bool scales_nonfinite(const audit_stats *s)
{
    for (int i = 0; i < s->n_scales; i++)
        if (s->scale[i].n_nan || s->scale[i].n_inf)
            return true;
    return false;
}

static void scale_rules(const gguf_tensor *t, const audit_stats *s, findings *fs)
{
    const char *type = gguf_type_traits_of(t->type)->name;
    for (int i = 0; i < s->n_scales; i++) {
        const audit_scale_stats *c = &s->scale[i];
        audit_finding *x;
        if ((c->n_nan || c->n_inf) && (x = finding_add(fs, AUDIT_ERROR, "scale-nonfinite", t->name))) {
            uint64_t first = c->first_nan < c->first_inf ? c->first_nan : c->first_inf;
            FSET(x->measured, "%llu NaN and %llu Inf block scales '%s' of %llu %s blocks; first in block %llu",
                 (unsigned long long)c->n_nan, (unsigned long long)c->n_inf, c->name, (unsigned long long)c->count,
                 type, (unsigned long long)first);
            FSET(x->expected, "finite scales (ggml's quantizer writes only finite ones)");
            FSET(x->meaning, "every value of such a block decodes to NaN/Inf; one such weight turns every "
                             "activation it touches into NaN and generation into a single repeated token");
        }
        /* An error: no healthy file here holds one, and no ggml quantizer can write one. */
        if (c->n_negative && c->never_negative &&
            (x = finding_add(fs, AUDIT_ERROR, "scale-negative", t->name))) {
            FSET(x->measured, "%llu negative '%s' of %llu %s blocks; first in block %llu",
                 (unsigned long long)c->n_negative, c->name, (unsigned long long)c->count, type,
                 (unsigned long long)c->first_negative);
            FSET(x->expected, "'%s' >= 0: ggml's %s quantizer never writes a negative one", c->name, type);
            FSET(x->meaning, "the block's values are sign-flipped: the bytes were altered after quantization "
                             "or written by a tool that lays %s out differently", type);
        }
        double spread_log2 = c->max_abs > 0 ? log2(c->max_abs) - c->median_log2 : 0;
        audit_severity sev = spread_log2 >= AUDIT_HUGE_SCALE_ERROR_LOG2 ? AUDIT_ERROR : AUDIT_WARNING;
        if (c->n_huge && (x = finding_add(fs, sev, "scale-huge", t->name))) {
            FSET(x->measured, "%llu '%s' scales at least 2^%d times the median |%s| (about 2^%d); largest %.6g "
                              "in block %llu, 2^%.1f times the median", (unsigned long long)c->n_huge, c->name,
                 AUDIT_HUGE_SCALE_LOG2, c->name, c->median_log2, c->max_abs, (unsigned long long)c->max_abs_block,
                 spread_log2);
            FSET(x->expected, "block scales within 2^%d of each other, as quantizing one weight matrix gives "
                              "(healthy files: 2^5.2 at most; an error from 2^%d, a flipped exponent bit's size)",
                 AUDIT_HUGE_SCALE_LOG2, AUDIT_HUGE_SCALE_ERROR_LOG2);
            FSET(x->meaning, "those blocks decode to values orders of magnitude above the rest: an altered scale "
                             "byte, and activations through this matrix blow up");
        }
    }
}

static void nonfinite_rule(const gguf_tensor *t, const audit_stats *s, findings *fs)
{
    uint64_t bad = s->n_nan + s->n_pinf + s->n_ninf;
    if (!bad || scales_nonfinite(s))
        return;
    audit_finding *x = finding_add(fs, AUDIT_ERROR, "nonfinite", t->name);
    if (!x)
        return;
    char at[96];
    where(t, s->first_nonfinite, at, sizeof at);
    FSET(x->measured, "%llu NaN, %llu +Inf, %llu -Inf of %llu values; first at %s", (unsigned long long)s->n_nan,
         (unsigned long long)s->n_pinf, (unsigned long long)s->n_ninf, (unsigned long long)s->count, at);
    FSET(x->expected, "finite values only");
    FSET(x->meaning, "any NaN/Inf weight turns every activation it touches into NaN: the logits become NaN and "
                     "a greedy engine repeats one token");
}

static void constant_rule(const gguf_tensor *t, audit_class cls, const audit_stats *s, findings *fs)
{
    bool matrix = cls == AUDIT_CLASS_MATRIX || cls == AUDIT_CLASS_EMBEDDING || cls == AUDIT_CLASS_OUTPUT;
    uint64_t finite = s->count - s->n_nan - s->n_pinf - s->n_ninf;
    if (finite < 2 || s->std != 0.0)
        return;
    audit_finding *x;
    if (matrix && (x = finding_add(fs, AUDIT_ERROR, s->max_abs == 0.0 ? "zero-matrix" : "constant-matrix",
                                   t->name))) {
        FSET(x->measured, "all %llu values are %.6g", (unsigned long long)finite, s->mean);
        FSET(x->expected, "varying values (a trained or initialized weight matrix)");
        FSET(x->meaning, "the matrix maps every input to %s: the information through it is lost (a zeroed or "
                         "never-written region of the file)", s->max_abs == 0.0 ? "zero" : "the same direction");
    } else if (cls == AUDIT_CLASS_NORM && s->max_abs == 0.0 &&
               (x = finding_add(fs, AUDIT_ERROR, "zero-norm", t->name))) {
        FSET(x->measured, "all %llu values are 0", (unsigned long long)finite);
        FSET(x->expected, "norm scales around 1 (positive)");
        FSET(x->meaning, "the normalized activations are multiplied by 0: everything after this norm sees zeros");
    }
}

/* Trained and initialized weight matrices keep a median magnitude of about 2^-9 to 2^-3; no float format a
 * model is stored in has a reason to hold one below 2^-24, the smallest f16 step. An F16 matrix whose type
 * was relabelled BF16 decodes there (its f16 exponent and mantissa bits read as a bf16 exponent: ~2^-53). */
#define MATRIX_MIN_MEDIAN_LOG2 (-24)

static void magnitude_rule(const gguf_tensor *t, audit_class cls, const audit_stats *s, findings *fs)
{
    bool matrix = cls == AUDIT_CLASS_MATRIX || cls == AUDIT_CLASS_EMBEDDING || cls == AUDIT_CLASS_OUTPUT;
    audit_finding *x;
    if (!matrix || s->max_abs == 0.0 || s->median_log2 >= MATRIX_MIN_MEDIAN_LOG2 ||
        !(x = finding_add(fs, AUDIT_ERROR, "magnitude-implausible", t->name)))
        return;
    FSET(x->measured, "median magnitude about 2^%d = %.3g (max |x| %.3g)", s->median_log2, ldexp(1.0, s->median_log2),
         s->max_abs);
    FSET(x->expected, "a median magnitude of 2^%d or more (trained matrices sit near 2^-9 to 2^-3)",
         MATRIX_MIN_MEDIAN_LOG2);
    FSET(x->meaning, "values this small carry no signal: the tensor's bytes are read as the wrong type (F16 "
                     "labelled BF16 decodes to about 1e-16) or were scaled away");
}

static void norm_rule(const gguf_tensor *t, const audit_stats *s, findings *fs)
{
    if (s->max_abs == 0.0 || s->n_nan + s->n_pinf + s->n_ninf)
        return; /* zero-norm and nonfinite say it better */
    audit_finding *x;
    /* An error: every healthy file's norms average above 0 (1.06e-3 at the least); a mean at or below 0 is a
     * sign-flipped tensor or gemma's w-1 stored without the +1 that GGUF converters add. */
    if (s->mean <= 0.0 && (x = finding_add(fs, AUDIT_ERROR, "norm-negative-mean", t->name))) {
        FSET(x->measured, "mean %.6g (min %.6g, max %.6g)", s->mean, s->min, s->max);
        FSET(x->expected, "a positive mean: norm weights scale each channel, trained ones sit around 0.1-10");
        FSET(x->meaning, "the normalized activations are mostly sign-flipped: a corrupted or mislabeled tensor "
                         "(some formats store norm weights as w-1; GGUF stores w)");
    } else if (fabs(s->mean) < NORM_NEAR_ZERO &&
               (x = finding_add(fs, AUDIT_WARNING, "norm-near-zero", t->name))) {
        FSET(x->measured, "mean %.3g, max |x| %.3g", s->mean, s->max_abs);
        FSET(x->expected, "mean well above %g", NORM_NEAR_ZERO);
        FSET(x->meaning, "the layer's normalized input is scaled to almost nothing: the block contributes "
                         "nothing and the residual stream passes unchanged");
    }
}

static void range_rules(const gguf_tensor *t, audit_class cls, const audit_stats *s, findings *fs)
{
    /* Norms and biases are left at warnings: their spread is the model's character (gemma's norms: 2^8.3). */
    bool matrix = cls == AUDIT_CLASS_MATRIX || cls == AUDIT_CLASS_EMBEDDING || cls == AUDIT_CLASS_OUTPUT;
    double spread_log2 = s->max_abs > 0 ? log2(s->max_abs) - s->median_log2 : 0;
    audit_severity sev = matrix && spread_log2 >= AUDIT_EXTREME_ERROR_LOG2 ? AUDIT_ERROR : AUDIT_WARNING;
    audit_finding *x;
    if (s->n_extreme && (x = finding_add(fs, sev, "extreme-values", t->name))) {
        char at[96];
        where(t, s->max_abs_index, at, sizeof at);
        FSET(x->measured, "%llu of %llu values are at least 2^%d times the median magnitude (about 2^%d = %.3g); "
                          "max |x| = %.6g at %s, 2^%.1f times the median", (unsigned long long)s->n_extreme,
             (unsigned long long)s->count, AUDIT_EXTREME_LOG2, s->median_log2, ldexp(1.0, s->median_log2), s->max_abs,
             at, spread_log2);
        FSET(x->expected, "max |x| within 2^%d of the median magnitude (trained weights stay under 2^9; in a "
                          "weight matrix 2^%d is an error)", AUDIT_EXTREME_LOG2, AUDIT_EXTREME_ERROR_LOG2);
        FSET(x->meaning, "a few weights dwarf the rest, as a flipped exponent bit does; the activations they "
                         "touch explode");
    }
    if (s->max_abs > F16_MAX && t->type != GGUF_TENSOR_F16 &&
        (x = finding_add(fs, AUDIT_WARNING, "past-f16-range", t->name))) {
        FSET(x->measured, "max |x| = %.6g", s->max_abs);
        FSET(x->expected, "|x| <= 65504, the largest f16");
        FSET(x->meaning, "an engine that converts these weights to f16 (cuBLAS half GEMM, f16 uploads) turns "
                         "them into Inf");
    }
}

void rules_values(const gguf_file *f, const audit_hparams *hp, const audit_stats *stats, findings *fs)
{
    /* Gemma 4's converter writes rope_freqs as 1 for the pairs that rotate and 1e30 for those that stay put (its
     * "proportional" rope): a spread of 2^100 by design, and an f16 copy's Inf stops them as well */
    const bool stay_put_marker = hp->g.arch && hp->g.arch->rope_freqs_full_only;
    for (size_t i = 0; i < gguf_tensor_count(f); i++) {
        const gguf_tensor *t = gguf_tensor_at(f, i);
        const audit_stats *s = &stats[i];
        if (!s->supported)
            continue;
        audit_class cls = audit_class_of(t);
        scale_rules(t, s, fs);
        nonfinite_rule(t, s, fs);
        constant_rule(t, cls, s, fs);
        magnitude_rule(t, cls, s, fs);
        if (cls == AUDIT_CLASS_NORM)
            norm_rule(t, s, fs);
        if (!(stay_put_marker && !strcmp(t->name, model_role_info_of(MODEL_ROLE_ROPE_FREQS)->name)))
            range_rules(t, cls, s, fs);
    }
}
