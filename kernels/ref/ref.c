/*
 * The reference backend: every op as its definition says it, on host memory, where the tests and --compare's
 * re-derivation hold other backends to it. The ops whose result can move more than their inputs do are computed
 * in double and rounded once: RMSNorm's sum of squares and scale, attention's scores, softmax and weighted sums,
 * SiLU, soft-capping. Products, embeddings and rotation are the exact CPU backend's (weights decoded exactly,
 * activations in f32: the definition of the exact numerics, llama.cpp on f32 weights), and so are the rest: the
 * reference is that backend with these four ops in their place.
 */
#include "kern.h"
#include "act_oai.h"
#include "act_xielu.h"

#include "quant.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A norm's gains as floats into *g (the caller frees them): w's n (or *m rows of n: each row's own; m NULL: one row),
 * or ones where w is NULL (the norm alone). */
static kern_status gains(const kern_weight *w, int n, float **g, int64_t *m)
{
    *g = NULL;
    const int64_t rows = w && w->t && m && w->t->ne[0] == (uint64_t)n ? (int64_t)(w->t->n_elements / (uint64_t)n) : 1;
    if (m)
        *m = rows;
    if (w && (!w->t || w->t->ne[0] != (uint64_t)n))
        return KERN_E_SHAPE;
    float *v = malloc((size_t)(n * rows) * sizeof *v);
    if (!v)
        return KERN_E_NOMEM;
    for (int i = 0; i < n && !w; i++)
        v[i] = 1.0f;
    if (w && quant_dequantize_row(w->t->type, w->t->data, v, n * rows) != QUANT_OK) {
        free(v);
        return KERN_E_UNSUPPORTED;
    }
    *g = v;
    return KERN_OK;
}

/* out = (x - mean) / sqrt(var + eps) * g, all in double, each value rounded once. */
static kern_status ref_layernorm(kern_backend *b, const kern_weight *w, const kern_weight *bias, const float *x, int T,
                                 int n, float eps, float *out)
{
    (void)b;
    float *g, *bv = NULL;
    int64_t m;
    kern_status s = gains(w, n, &g, &m);
    if (!s && bias && (s = gains(bias, n, &bv, NULL)))
        free(g);
    if (s)
        return s;
    for (int t = 0; t < T; t++) {
        const float *xr = x + (size_t)t * n, *gt = g + (size_t)(t % m) * n;
        double mean = 0.0, var = 0.0;
        for (int i = 0; i < n; i++)
            mean += xr[i];
        mean /= n;
        for (int i = 0; i < n; i++)
            var += (xr[i] - mean) * (xr[i] - mean);
        const double scale = 1.0 / sqrt(var / n + (double)eps);
        for (int i = 0; i < n; i++)
            out[(size_t)t * n + i] = (float)((xr[i] - mean) * scale * gt[i] + (bv ? bv[i] : 0.0));
    }
    free(g);
    free(bv);
    return KERN_OK;
}

/* out = x / sqrt(mean(x^2) + eps) * g: the mean and the scale in double, each value rounded once; row t takes gains
 * row t mod m where w holds m rows (Mamba-2's each group's). */
static kern_status ref_rmsnorm(kern_backend *b, const kern_weight *w, const float *x, int T, int n, float eps,
                               float *out)
{
    (void)b;
    float *g;
    int64_t m;
    const kern_status s = gains(w, n, &g, &m);
    if (s)
        return s;
    for (int t = 0; t < T; t++) {
        const float *xr = x + (size_t)t * n, *gt = g + (size_t)(t % m) * n;
        float *o = out + (size_t)t * n;
        double ss = 0.0;
        for (int i = 0; i < n; i++)
            ss += (double)xr[i] * xr[i];
        const double scale = 1.0 / sqrt(ss / n + (double)eps);
        for (int i = 0; i < n; i++)
            o[i] = (float)(xr[i] * scale * gt[i]);
    }
    free(g);
    return KERN_OK;
}

/* q . k over d values in double: 8 partial sums the compiler keeps in vector lanes (one running sum is a chain it
 * may not reorder; a long prompt's comparison spends most of its time here), added in a fixed tree. */
static double dot_double(const float *q, const float *k, int d)
{
    double part[8] = { 0 };
    int i = 0;
    for (; i + 8 <= d; i += 8)
        for (int l = 0; l < 8; l++)
            part[l] += (double)q[i + l] * k[i + l];
    for (; i < d; i++)
        part[0] += (double)q[i] * k[i];
    return ((part[0] + part[4]) + (part[1] + part[5])) + ((part[2] + part[6]) + (part[3] + part[7]));
}

/* Each query's softmax over its own keys (all before it, or the last `window`) and its head's sink where there is
 * one, in double: scores, their maxima, e^(s - max), the normalized weights and the weighted sums of the values. */
static kern_status ref_attention(kern_backend *b, const float *q, const float *k_cache, const float *v_cache, int T,
                                 int pos0, const kern_attn *a, float *out)
{
    (void)b;
    const int d = a->head_dim, dv = kern_attn_v_dim(a);
    if (a->v_dim < 0 || a->n_kv_head <= 0 || a->n_head % a->n_kv_head || d <= 0 || a->window < 0 || pos0 < 0 || T < 0 ||
        (a->sinks && (a->sinks->t->type != GGUF_TENSOR_F32 || a->sinks->t->n_elements != (uint64_t)a->n_head)))
        return KERN_E_SHAPE;
    const int group = a->n_head / a->n_kv_head;
    const size_t kv_dim = (size_t)a->n_kv_head * d, vv_dim = (size_t)a->n_kv_head * dv;
    double *p = malloc(((size_t)pos0 + (size_t)T + (size_t)dv) * sizeof *p), *acc = p + pos0 + T;
    if (!p)
        return KERN_E_NOMEM;
    for (int t = 0; t < T; t++)
        for (int h = 0; h < a->n_head; h++) {
            const float *qh = q + ((size_t)t * a->n_head + h) * d;
            const size_t off = (size_t)(h / group) * d, voff = (size_t)(h / group) * dv;
            const int n_keys = pos0 + t + 1, j0 = kern_attn_first_key(a, n_keys - 1);
            double m = -INFINITY, l = 0.0;
            const double slope = a->alibi_max_bias > 0.0f ? kern_alibi_slope(a->alibi_max_bias, a->n_head, h) : 0.0;
            for (int j = j0; j < n_keys; j++) {
                p[j] = dot_double(qh, k_cache + (size_t)j * kv_dim + off, d) * a->scale;
                if (a->softcap > 0.0f)
                    p[j] = a->softcap * tanh(a->softcap_in > 0.0f ? p[j] * a->softcap_in : p[j] / a->softcap);
                p[j] += slope * (double)(j - (n_keys - 1)); /* ALiBi: the key's distance behind the query */
                m = p[j] > m ? p[j] : m;
            }
            const double sink = a->sinks ? ((const float *)a->sinks->t->data)[h] : -INFINITY;
            m = sink > m ? sink : m;
            for (int j = j0; j < n_keys; j++)
                l += p[j] = exp(p[j] - m);
            l += exp(sink - m); /* the sink: a logit in the sum with no value (0 without one) */
            for (int i = 0; i < dv; i++)
                acc[i] = 0.0;
            for (int j = j0; j < n_keys; j++)
                for (int i = 0; i < dv; i++)
                    acc[i] += p[j] / l * v_cache[(size_t)j * vv_dim + voff + i];
            float *o = out + ((size_t)t * a->n_head + h) * dv;
            for (int i = 0; i < dv; i++)
                o[i] = (float)acc[i];
        }
    free(p);
    return KERN_OK;
}

/* SiLU, the sigmoid and softplus gates and gpt-oss's clamped SwiGLU in double; GELU is kern_gelu_ggml by definition (llama.cpp's table of f16 inputs
 * and outputs). */
static kern_status ref_glu(kern_backend *b, kern_act act, const float *gate, const float *up, size_t n, size_t row,
                           float *out)
{
    (void)b;
    if (act != KERN_ACT_SILU && act != KERN_ACT_GELU_TANH && act != KERN_ACT_SWIGLU_OAI && act != KERN_ACT_SIGMOID &&
        act != KERN_ACT_NONE && act != KERN_ACT_RELU && act != KERN_ACT_SOFTPLUS)
        return KERN_E_UNSUPPORTED;
    if (!up && !kern_act_alone(act))
        return KERN_E_UNSUPPORTED;
    if (!row || n % row)
        return KERN_E_SHAPE;
    for (size_t i = 0; i < n; i++) {
        const double x = gate[i], u = up ? up[i] : 1.0;
        out[i] = (float)(act == KERN_ACT_SILU        ? x / (1.0 + exp(-x)) * u
                         : act == KERN_ACT_SIGMOID   ? u / (1.0 + exp(-x))
                         : act == KERN_ACT_SOFTPLUS  ? (x > 0.0 ? x + log1p(exp(-x)) : log1p(exp(x))) * u
                         : act == KERN_ACT_NONE      ? x * u
                         : act == KERN_ACT_RELU      ? (x > 0.0 ? x : 0.0) * u
                         : act == KERN_ACT_SWIGLU_OAI ? act_oai_double(gate[i], up[i])
                                                      : (double)kern_gelu_ggml(gate[i]) * u);
    }
    return KERN_OK;
}

/* cap * tanh(x / cap) in double. */
static kern_status ref_softcap(kern_backend *b, float *x, size_t n, float cap)
{
    (void)b;
    if (!(cap > 0.0f))
        return KERN_E_SHAPE;
    for (size_t i = 0; i < n; i++)
        x[i] = (float)(cap * tanh((double)x[i] / cap));
    return KERN_OK;
}

/* xIELU in double (act_xielu.h) */
static kern_status ref_xielu(kern_backend *b, const float *x, size_t n, const kern_xielu *p, float *out)
{
    (void)b;
    for (size_t i = 0; i < n; i++)
        out[i] = (float)act_xielu_double(x[i], p);
    return KERN_OK;
}

kern_backend *kern_ref_create(int n_threads)
{
    kern_backend *b = kern_cpu_create_numerics(n_threads, KERN_NUMERICS_EXACT);
    if (!b)
        return NULL;
    b->name = "ref";
    /* one product at a time: the plain definition */
    b->matmul_many = b->matmul_each = NULL;
    b->matmul_many_x = NULL;
    b->rmsnorm = ref_rmsnorm;
    b->layernorm = ref_layernorm;
    b->attention = ref_attention;
    b->glu = ref_glu;
    b->softcap = ref_softcap;
    b->xielu = ref_xielu;
    return b;
}
