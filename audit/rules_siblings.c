/* Each per-layer tensor against the same role in the other layers, and each expert of a mixture-of-experts
 * tensor against the other experts of its layer.
 *
 * Per role (attn_q.weight, ffn_norm.weight, …) and statistic, over layers:
 * the median and the MAD (median absolute deviation), and for each layer the
 * robust z-score (x - median) / (1.4826 MAD). One bad layer moves neither the
 * median nor the MAD, so it cannot hide itself by inflating the spread as it
 * would a mean and standard deviation. A layer is flagged only when it is
 * both far out in z and far off in ratio: trained models drift smoothly
 * across depth, and the first and last layers legitimately differ most, so
 * they need a larger ratio. */
#include "rules.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MIN_SIBLINGS 3
#define Z_LIMIT 6.0
#define MAD_TO_SIGMA 1.4826
/* log2 of the ratio to the median a layer must also exceed. */
#define RMS_LOG2_INNER 2.0   /* 4x  */
#define RMS_LOG2_EDGE 3.0    /* 8x for the first and last layer */
#define MAXABS_LOG2 6.0      /* 64x: real models carry isolated outlier weights of 10-30x */
/* Norm gains of the first and last layer: trained models put them far from the rest (SmolLM2-135M's
 * layer-0 attn_norm sits at 0.12x the median of 30 layers), so up to 64x they are a note, beyond a warning. */
#define NORM_EDGE_WARN_LOG2 6.0
/* An error, not a warning: the RMS of a layer this far out cannot be a healthy model's. On every healthy file
 * we have (the shared models, both real ones, the 0.5B/0.6B shapes, the MoE files) no tensor's RMS passes
 * robust z 7.7 (SmolLM2's layer-0 attn_norm; 4.4 in inner layers), and none passes z 6 and the warning's ratio
 * together (docs/gguf-verify.md, "Severities"); a norm scaled by 16 sits at z 57-80, a layer replaced by noise
 * at 10x its siblings' RMS at z 19. */
#define ERROR_Z 15.0
#define ERROR_EXTRA_LOG2 1.0 /* and twice the warning's ratio */
/* log2 units below which layers count as equal (noise in random-weight files). */
#define SPREAD_FLOOR 0.05

typedef struct member {
    size_t index;            /* the tensor's */
    int layer;
    int expert;              /* -1: the tensor is compared with its layer siblings; else one expert of it */
    const audit_stats *s;
} member;

typedef struct metric {
    const char *name;        /* "RMS", "max |x|" */
    double (*get)(const audit_stats *);
    double min_log2;         /* inner layers */
    double edge_log2;
} metric;

static double get_rms(const audit_stats *s) { return s->rms; }
static double get_max_abs(const audit_stats *s) { return s->max_abs; }

static const metric metrics[] = {
    { "RMS", get_rms, RMS_LOG2_INNER, RMS_LOG2_EDGE },
    { "max |x|", get_max_abs, MAXABS_LOG2, MAXABS_LOG2 },
};

static const char *meaning_for(audit_class cls)
{
    switch (cls) {
    case AUDIT_CLASS_NORM:
        return "this layer's normalized activations are scaled unlike every other layer's: a scaled, replaced or "
               "corrupted norm, and everything downstream of it shifts";
    case AUDIT_CLASS_BIAS:
        return "this layer's bias is unlike its siblings': a replaced or corrupted vector shifts every activation "
               "of the layer";
    default:
        return "this layer's weights are unlike the same matrix in every other layer: replaced, rescaled or "
               "corrupted data, and its output dominates (or vanishes from) the residual stream";
    }
}

/* The members of g (n of them: one role's layers, or one tensor's experts) against their median. */
static void check_group(const gguf_file *f, const member *g, size_t n, int n_layers, findings *fs)
{
    double *v = malloc(n * sizeof *v), *dev = malloc(n * sizeof *dev), *sorted = malloc(n * sizeof *sorted);
    bool *flagged = calloc(n, sizeof *flagged); /* one finding per tensor: its RMS one explains a max |x| one */
    if (!v || !dev || !sorted || !flagged) {
        free(v), free(dev), free(sorted), free(flagged);
        fs->failed = true;
        return;
    }
    for (size_t m = 0; m < sizeof metrics / sizeof metrics[0]; m++) {
        size_t k = 0;
        for (size_t i = 0; i < n; i++) {
            double x = metrics[m].get(g[i].s);
            v[i] = x > 0 && isfinite(x) ? log2(x) : NAN;
            if (!isnan(v[i]))
                sorted[k++] = v[i];
        }
        if (k < MIN_SIBLINGS)
            continue;
        double med = median_of(sorted, k);
        for (size_t i = 0, j = 0; i < n; i++)
            if (!isnan(v[i]))
                dev[j++] = fabs(v[i] - med);
        double spread = MAD_TO_SIGMA * median_of(dev, k);
        if (spread < SPREAD_FLOOR)
            spread = SPREAD_FLOOR;
        for (size_t i = 0; i < n; i++) {
            if (isnan(v[i]) || flagged[i])
                continue;
            double z = (v[i] - med) / spread;
            const bool experts = g[i].expert >= 0, edge = !experts && (g[i].layer == 0 || g[i].layer == n_layers - 1);
            double need = edge ? metrics[m].edge_log2 : metrics[m].min_log2;
            if (fabs(z) <= Z_LIMIT || fabs(v[i] - med) < need)
                continue;
            const gguf_tensor *t = gguf_tensor_at(f, g[i].index);
            const double dist = fabs(v[i] - med);
            const bool norm_edge = edge && audit_class_of(t) == AUDIT_CLASS_NORM,
                       edge_norm = norm_edge && dist < NORM_EDGE_WARN_LOG2;
            const double warn_at = norm_edge ? NORM_EDGE_WARN_LOG2 : need;
            const bool broken = metrics[m].get == get_rms && fabs(z) >= ERROR_Z && dist >= warn_at + ERROR_EXTRA_LOG2;
            audit_finding *x = finding_add(fs, edge_norm ? AUDIT_INFO : broken ? AUDIT_ERROR : AUDIT_WARNING,
                                           edge_norm ? "edge-layer-norm" : "sibling-outlier", t->name);
            if (!x)
                continue;
            double lo = INFINITY, hi = -INFINITY;
            for (size_t j = 0; j < n; j++)
                if (j != i && !isnan(v[j])) {
                    lo = fmin(lo, exp2(v[j]));
                    hi = fmax(hi, exp2(v[j]));
                }
            char who[48];
            if (experts)
                snprintf(who, sizeof who, "expert %d of layer %d", g[i].expert, g[i].layer);
            else
                snprintf(who, sizeof who, "layer %d", g[i].layer);
            FSET(x->measured, "%s %.4g in %s, %.1fx the median %.4g of %zu %s (others %.4g-%.4g); robust z %.0f",
                 metrics[m].name, exp2(v[i]), who, exp2(v[i] - med), exp2(med), k, experts ? "experts" : "layers", lo,
                 hi, z);
            if (edge_norm) {
                FSET(x->expected, "norm gains of the first and last layer within %.0fx of the median over layers",
                     exp2(NORM_EDGE_WARN_LOG2));
                FSET(x->meaning, "common in trained models: the first and last blocks scale their input unlike the "
                                 "rest; not a sign of damage at this distance");
            } else {
                FSET(x->expected, "within %.0fx of the median over %s (robust z within %.0f)%s", exp2(need),
                     experts ? "the layer's experts" : "layers", Z_LIMIT,
                     broken ? "; no healthy model's tensor is past z 8" : "");
                FSET(x->meaning, "%s", experts ? "this expert's weights are unlike its layer's other experts': "
                                                 "replaced, rescaled or corrupted data, and every token routed to it "
                                                 "gets that expert's distorted output"
                                               : meaning_for(audit_class_of(t)));
            }
            flagged[i] = true;
        }
    }
    free(v), free(dev), free(sorted), free(flagged);
}

void rules_siblings(const gguf_file *f, const audit_stats *stats, findings *fs)
{
    size_t n = gguf_tensor_count(f);
    role_entry *e = role_entries_sorted(f);
    member *g = malloc((n + 1) * sizeof *g);
    if (!e || !g) {
        free(e), free(g);
        fs->failed = true;
        return;
    }
    int n_layers = 0;
    for (size_t i = 0; i < n; i++)
        n_layers = e[i].layer + 1 > n_layers ? e[i].layer + 1 : n_layers;
    for (size_t a = 0; a < n && e[a].layer >= 0;) {
        size_t b = role_group_end(e, n, a), m = 0;
        for (size_t i = a; i < b; i++)
            if (stats[e[i].index].supported)
                g[m++] = (member){ e[i].index, e[i].layer, -1, &stats[e[i].index] };
        if (m >= MIN_SIBLINGS)
            check_group(f, g, m, n_layers, fs);
        a = b;
    }
    free(e), free(g);
}

static void constant_expert(const gguf_tensor *t, int layer, uint64_t e, const audit_stats *s, findings *fs)
{
    audit_finding *x = finding_add(fs, AUDIT_ERROR, s->max_abs == 0.0 ? "zero-expert" : "constant-expert", t->name);
    if (!x)
        return;
    FSET(x->measured, "expert %llu of layer %d: all %llu values are %.6g", (unsigned long long)e, layer,
         (unsigned long long)s->count, s->mean);
    FSET(x->expected, "varying values, as in the layer's other experts");
    FSET(x->meaning, "every token the router sends to this expert gets %s from it: a zeroed or never-written region",
         s->max_abs == 0.0 ? "nothing" : "the same direction");
}

void rules_experts(const gguf_file *f, const audit_stats *stats, findings *fs)
{
    for (size_t i = 0; i < gguf_tensor_count(f); i++) {
        const gguf_tensor *t = gguf_tensor_at(f, i);
        int64_t layer;
        const model_role r = model_role_of_name(t->name, &layer);
        if (r == MODEL_ROLE_COUNT || model_role_info_of(r)->ne2 != MODEL_DIM_EXPERT || !stats[i].supported ||
            t->n_dims != 3 || t->ne[2] < MIN_SIBLINGS || !t->data || t->ne[2] > INT32_MAX)
            continue;
        const uint64_t n = t->ne[2];
        audit_stats *es = malloc(n * sizeof *es);
        member *g = malloc(n * sizeof *g);
        if (!es || !g) {
            free(es), free(g);
            fs->failed = true;
            return;
        }
        size_t m = 0;
        for (uint64_t e = 0; e < n; e++) {
            gguf_tensor v = gguf_tensor_slice(t, e);
            if (audit_tensor_stats(&v, 0, &es[e]) != AUDIT_OK || !es[e].supported)
                continue;
            if (es[e].count > es[e].n_nan + es[e].n_pinf + es[e].n_ninf + 1 && es[e].std == 0.0)
                constant_expert(t, (int)layer, e, &es[e], fs);
            else
                g[m++] = (member){ i, (int)layer, (int)e, &es[e] };
        }
        if (m >= MIN_SIBLINGS)
            check_group(f, g, m, 0, fs);
        free(es), free(g);
    }
}
