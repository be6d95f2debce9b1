/* Each per-layer tensor against the same role in the other layers.
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
    size_t index;
    int layer;
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

static void check_group(const gguf_file *f, const audit_stats *stats, const member *g, size_t n, int n_layers,
                        findings *fs)
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
            double x = metrics[m].get(&stats[g[i].index]);
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
            bool edge = g[i].layer == 0 || g[i].layer == n_layers - 1;
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
            FSET(x->measured, "%s %.4g in layer %d, %.1fx the median %.4g of %zu layers (others %.4g-%.4g); "
                              "robust z %.0f", metrics[m].name, exp2(v[i]), g[i].layer, exp2(v[i] - med),
                 exp2(med), k, lo, hi, z);
            if (edge_norm) {
                FSET(x->expected, "norm gains of the first and last layer within %.0fx of the median over layers",
                     exp2(NORM_EDGE_WARN_LOG2));
                FSET(x->meaning, "common in trained models: the first and last blocks scale their input unlike the "
                                 "rest; not a sign of damage at this distance");
            } else {
                FSET(x->expected, "within %.0fx of the median over layers (robust z within %.0f)%s", exp2(need),
                     Z_LIMIT, broken ? "; no healthy model's tensor is past z 8" : "");
                FSET(x->meaning, "%s", meaning_for(audit_class_of(t)));
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
                g[m++] = (member){ e[i].index, e[i].layer };
        if (m >= MIN_SIBLINGS)
            check_group(f, stats, g, m, n_layers, fs);
        a = b;
    }
    free(e), free(g);
}
