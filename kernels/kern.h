/*
 * kern.h — the compute the engine needs, behind one ops interface.
 *
 * A backend is a table of function pointers (zeux/calm's habit): the engine
 * never touches activations itself, it asks the backend to allocate them and
 * to run ops on them, and copies results to the host only when it needs them
 * (logits, trace statistics). The CPU backend (kernels/cpu) is the first user;
 * the CUDA backend fills the same table with device memory and kernels.
 *
 * Shapes follow ggml: a matrix of ne[1] rows of ne[0] values; "x (T, n)" is T
 * rows (tokens) of n contiguous f32 values. Weights stay in the file's type
 * and bytes; a backend binds each tensor once (the CPU reads the mapping in
 * place, a GPU uploads once).
 *
 * Ops return KERN_OK or a status, and never print or exit.
 */
#ifndef GGUFSCOPE_KERN_H
#define GGUFSCOPE_KERN_H

#include "gguf.h"

#include <stdbool.h>
#include <stddef.h>
#include <math.h>
#include <stdint.h>

typedef enum kern_status {
    KERN_OK = 0,
    KERN_E_NOMEM,        /* allocation failed (host or device) */
    KERN_E_UNSUPPORTED,  /* a weight type this backend cannot multiply */
    KERN_E_SHAPE,        /* operands that do not fit together */
    KERN_E_DEVICE,       /* the device reported an error */
} kern_status;

const char *kern_status_name(kern_status s);

/* A weight bound to a backend: the file's tensor plus what the backend keeps. */
typedef struct kern_weight {
    const gguf_tensor *t;  /* the file's view: type, shape, bytes */
    void *dev;             /* backend data (device copy); NULL on the CPU */
    /* scaled: the engine multiplies this weight's product by scale before its bias (llama.cpp's per-tensor W.scale,
     * NVFP4's second scale). Backends do not read it. */
    bool scaled;
    float scale;
} kern_weight;

/* The gate's activation of a gated feed-forward block (GLU). */
/* SIGMOID: sigmoid(gate) * up, a gate on an output rather than a feed-forward activation (Qwen3.5's attention);
 * SOFTPLUS: softplus(gate) * up, another such gate (Laguna's attention: ggml_softplus, x above 20 taken as itself);
 * NONE: gate * up, a product of two rows (LFM2's short convolution: ggml_mul); RELU: max(gate, 0) * up, which with
 * gate and up the same row is relu(x)^2 (Nemotron-H's ungated block: ggml_relu then ggml_sqr, equal but for the sign
 * of a zero). */
typedef enum kern_act {
    KERN_ACT_SILU, KERN_ACT_GELU_TANH, KERN_ACT_SWIGLU_OAI, KERN_ACT_SIGMOID, KERN_ACT_NONE, KERN_ACT_RELU,
    KERN_ACT_SOFTPLUS
} kern_act;

/* The activations glu applies alone (up NULL: out = act(gate), ggml_gelu or ggml_relu of an ungated block) */
static inline bool kern_act_alone(kern_act a)
{
    return a == KERN_ACT_GELU_TANH || a == KERN_ACT_RELU;
}

/* xIELU's parameters for one layer (Apertus), as ggml_xielu takes them: alpha_p = softplus(the file's alpha_p),
 * alpha_n = beta + softplus(the file's alpha_n) (kern_xielu_of). */
typedef struct kern_xielu {
    float alpha_n, alpha_p, beta, eps;
} kern_xielu;

/* Rotary embedding parameters for one model. */
typedef struct kern_rope {
    int n_rot;                 /* leading dimensions of each head that rotate (even) */
    bool neox;                 /* NEOX: pairs (i, i + n_rot/2); NORM: pairs (2i, 2i+1) */
    float base;                /* theta_base: 10000, 1e6 for Qwen2 */
    float freq_scale;          /* 1 / linear scaling factor */
    const float *freq_factors; /* (n_rot/2) divisors of each frequency (Llama 3.1 rope_freqs), or NULL */
    /* YaRN (rope_yarn.h): ext_factor 0 leaves the angles interpolated (pos * freq_scale * ...); above 0, pair i's
     * angle blends towards the unscaled one by ramp(i) * ext_factor, ramp 1 below corr_lo and 0 above corr_hi,
     * and cosines and sines are scaled by attn_factor (1 + 0.1 ln(1 / freq_scale)); without YaRN by attn_factor */
    float ext_factor, attn_factor, corr_lo, corr_hi;
} kern_rope;

/* The shape and masking of one attention op. */
typedef struct kern_attn {
    int n_head, n_kv_head, head_dim;
    float scale;   /* multiplies q.k: 1/sqrt(head_dim) in most models */
    int window;    /* > 0: a query sees only the last `window` positions (itself included); 0: all before it */
    float softcap; /* > 0: each scaled score s becomes softcap * tanh(s / softcap) before the softmax (gemma2) */
    /* F32 (n_head) or NULL: head h's sink is a logit every query's softmax includes but no value answers to, so
     * the weights sum to less than 1 (gpt-oss; ggml_soft_max_add_sinks) */
    const kern_weight *sinks;
    /* > 0: each value row is this long, not head_dim (DeepSeek-V2/V3's latent attention: keys of the compressed
     * latent and its rotary part, values of the latent alone); 0: head_dim (kern_attn_v_dim) */
    int v_dim;
    bool chunked; /* with window > 0: a query at p sees p - p % window .. p instead (Llama 4's chunks) */
    /* > 0: ALiBi (BLOOM): each scaled score of head h gains kern_alibi_slope(h) times (key position - query
     * position), as ggml_soft_max_ext's max_bias scales llama.cpp's mask of -|p0 - p1| */
    float alibi_max_bias;
    /* > 0 (with softcap): softcap * tanh(s * softcap_in), one product, in place of s / softcap (Grok's) */
    float softcap_in;
} kern_attn;

/* ALiBi's slope of head h of n_head (ggml_soft_max_ext's max_bias): m0^(h + 1) for the first n_head_log2 heads (the
 * largest power of two not above n_head), m1^(2 (h - n_head_log2) + 1) after, m0 = 2^(-max_bias / n_head_log2), m1 =
 * 2^(-max_bias / 2 / n_head_log2), in f32 as ggml's CPU backend computes them. */
#ifdef __CUDACC__
__host__ __device__ /* the CUDA attention's heads compute theirs (its powf, within an ulp or two of libm's) */
#endif
static inline float kern_alibi_slope(float max_bias, int n_head, int h)
{
    uint32_t n_log2 = 1;
    while (n_log2 * 2 <= (uint32_t)n_head)
        n_log2 *= 2;
    const float m0 = powf(2.0f, -max_bias / (float)n_log2), m1 = powf(2.0f, -(max_bias / 2.0f) / (float)n_log2);
    return (uint32_t)h < n_log2 ? powf(m0, (float)(h + 1)) : powf(m1, (float)(2 * (h - (int)n_log2) + 1));
}

/* The first key position a query at position pos sees (kern_attn.window and .chunked). */
static inline int kern_attn_first_key(const kern_attn *a, int pos)
{
    if (a->window <= 0)
        return 0;
    if (a->chunked)
        return pos - pos % a->window;
    return pos >= a->window ? pos - a->window + 1 : 0;
}

/* The length of a's value rows and output rows per head. */
static inline int kern_attn_v_dim(const kern_attn *a)
{
    return a->v_dim > 0 ? a->v_dim : a->head_dim;
}

/* Per-row statistics of activations (for traces and verdicts). */
typedef struct kern_row_stats {
    float rms, mean, min, max, max_abs;
    uint32_t n_nan, n_inf;
} kern_row_stats;

/* How a CPU backend multiplies activations with weights:
 *   EXACT  weights decoded exactly, activations kept in f32: the reference numerics, equal to
 *          llama.cpp run on the weights dequantized to f32 (the goldens' -deq twins) to ~1e-6;
 *   GGML   activations rounded first as llama.cpp's CPU backend rounds them for each weight type
 *          (Q8_0, Q8_1, Q8_K blocks, f16, bf16; quant_act_type) and multiplied by integer dot
 *          products: llama.cpp's own logits on quantized files, to summation order. */
typedef enum kern_numerics { KERN_NUMERICS_EXACT, KERN_NUMERICS_GGML } kern_numerics;

typedef struct kern_backend kern_backend;

/*
 * The compute ops, declared once. Each entry is X(name, params, args): the op returns a kern_status and takes the
 * backend, then params; args name those params. From this list follow the backend struct's members, each
 * backend's declarations and table (cpu.h, cuda.h: KERN_OPS(...) with their own X), the fault wrapper's forwarding
 * (fault.c) and the engine's calls (engine/forward.c), so an op added here reaches all of them; a backend that
 * lacks it no longer links.
 *
 *   embed       out (T, ne0) = rows tokens[0..T) of the embedding matrix w.
 *   add_rows    x (T, ne0) += rows row0 .. row0 + T of w (learned positions: GPT-2's position_embd rows at the
 *               batch's positions, found at run time in a replayed decode step as store_rows' are).
 *   matmul      y (T, ne1) = x (T, ne0) @ w^T, plus bias (ne1) when bias != NULL.
 *   rmsnorm     out (T, n) = x / sqrt(mean(x^2) + eps) * w  (w: F32 (n), or (n, m): row t takes gains row t mod m,
 *               Mamba-2's each group's own; NULL: no gains, ggml_rms_norm alone).
 *   layernorm   out (T, n) = (x - mean(x)) / sqrt(var(x) + eps) * w + bias  (ggml_norm, the gains, then the bias
 *               where bias is not NULL: StarCoder2's; w as rmsnorm's, or (n, m): row t takes gains row t mod m,
 *               Command R+'s each head's own; bias F32 (n)). x and out may be the same.
 *   add_bias    x (T, n) += bias (F32 (n)) in every row: an RMSNorm's bias after its gains (llama.cpp's phimoe).
 *   rope        rotates x (T, n_head, head_dim) in place; row t is at position pos0 + t.
 *   attention   causal attention of q (T, n_head, head_dim) at positions pos0.. over the keys (pos0 + T, n_kv_head,
 *               head_dim) and values (pos0 + T, n_kv_head, v_dim) of one layer's cache (v_dim: kern_attn_v_dim);
 *               out (T, n_head, v_dim). GQA: query head h
 *               reads kv head h / (n_head / n_kv_head). Scores are q.k * a->scale (then a->softcap *
 *               tanh(score / a->softcap) where a->softcap > 0); with a->window > 0 a query at position p sees only
 *               the keys at p - window + 1 .. p (sliding-window layers), or chunked at p - p % window .. p.
 *   glu         out (n) = act(gate) * up: SiLU (SwiGLU), or GELU (GeGLU) as kern_gelu_ggml defines it; rows of
 *               `row` values (n a multiple of it: --numerics ggml's SiLU treats each row's end as llama.cpp does).
 *               up NULL: act(gate) alone, for the activations kern_act_alone names (KERN_E_UNSUPPORTED otherwise).
 *   scale       x (n) *= s.
 *   softcap     x (n) = cap * tanh(x / cap): soft-capping of logits.
 *   clamp       x (n) = max(min(x, hi), lo), as ggml_clamp (a NaN becomes hi there too): the q, k and v products'
 *               clamp_kqv (MPT, OLMo, DBRX).
 *   xielu       out (n) = alpha_p x^2 + beta x where x > 0, else (expm1(min(x, eps)) - x) alpha_n + beta x (ggml_xielu,
 *               the activation of Apertus's block without a gate). x and out may be the same.
 *   add         x (n) += y.
 *   store_rows  rows src (T, n) into rows pos0 .. pos0 + T of dst (rows of n): keys and values into a layer's
 *               cache where a replayed decode step must find its position at run time (step_replay).
 *   copy_rows   rows of n values from src (rows ld_src apart) to dst (rows ld_dst apart): a part of each row
 *               gathered or put back (a head of q, the rotary part of a latent row), the regions apart.
 *   ssm_conv    a short causal convolution per channel, then its SiLU where silu: out (T, n) row t = (SiLU of)
 *               sum_j w[c][j] * in[t + j][c] (+ bias[c] where bias is not NULL: Mamba-2's) over the d_conv rows in =
 *               state (d_conv - 1, n: the inputs before, oldest first) then x (T, n); state becomes in's last d_conv - 1
 *               rows (ggml_ssm_conv, ggml_add, then ggml_silu in a delta net or Mamba-2; w: ssm_conv1d or LFM2's
 *               shortconv.conv, (n, d_conv) in GGUF order (d_conv, n)). x and out may not overlap.
 *   ssm_scan    Mamba's selective scan (ggml_ssm_scan, kernels/ssm_scan.h) over T tokens of xbc (T, n_head head_dim +
 *               2 n_group d_state: x, then B and C of each group, as the convolution left them) and dt (T rows of
 *               n_head, ld_dt apart): per token, head h and row i of it, dts = softplus(dt[h] + dt_bias[h]); the
 *               state (n_head, head_dim, d_state) row becomes s exp(dts a[h]) + B x dts (B, C: group h / (n_head /
 *               n_group)); out (T, n_head head_dim) = s . C + d[h] x. dt_bias, d: F32 (n_head) in any shape; a: F32
 *               (n_head), or (n_head, d_state) for Mamba-1 (a head per channel, head_dim 1), whose state value j
 *               decays by exp(dts a[h][j]).
 *   delta_net   the gated delta rule (llama.cpp's delta-net-base.cpp, ggml_gated_delta_net) over T tokens of qkv (T,
 *               2 hk d + hv d: the convolved q and k of hk key heads, then v of hv value heads, each d long), with
 *               value head h reading key head h % hk (tiled), or h / (hv / hk) where grouped: q, k L2-normed (x / max(|x|, eps)); per token and head
 *               g = softplus(alpha + dt[h]) * a[h], b = sigmoid(beta); the state S (hv, d, d: row j a value
 *               index, column i a key index) becomes S exp(g), then row j += k (v_j - S_j . k) b; out (T, hv d) row
 *               t, head h, value j = S_j . q / sqrt(d). beta, alpha (T, hv) as the products left them; dt, a F32 (hv).
 *   row_stats   statistics of each of the T rows of x (T, n), into host memory.
 *   argmax      index of the largest of x (n) into host memory (ties: the lowest index; NaN never wins).
 *   top_k       the k (1..KERN_TOP_K_MAX) largest of x (n): ids and values into host memory, largest first, ties
 *               to the lower index, NaN never chosen (fewer than k when x has fewer non-NaN values: ids[i] = -1
 *               after).
 */
#define KERN_OPS(X)                                                                                                   \
    X(embed, (const kern_weight *w, const int32_t *tokens, int T, float *out), (w, tokens, T, out))                   \
    X(add_rows, (const kern_weight *w, int row0, int T, float *x), (w, row0, T, x))                                   \
    X(matmul, (const kern_weight *w, const kern_weight *bias, const float *x, int T, float *y),                       \
      (w, bias, x, T, y))                                                                                             \
    X(rmsnorm, (const kern_weight *w, const float *x, int T, int n, float eps, float *out),                           \
      (w, x, T, n, eps, out))                                                                                         \
    X(layernorm, (const kern_weight *w, const kern_weight *bias, const float *x, int T, int n, float eps,            \
                  float *out), (w, bias, x, T, n, eps, out))                                                          \
    X(add_bias, (const kern_weight *bias, int T, int n, float *x), (bias, T, n, x))                                   \
    X(rope, (float *x, int T, int n_head, int head_dim, int pos0, const kern_rope *r),                                \
      (x, T, n_head, head_dim, pos0, r))                                                                              \
    X(attention, (const float *q, const float *k_cache, const float *v_cache, int T, int pos0,                        \
                  const kern_attn *a, float *out), (q, k_cache, v_cache, T, pos0, a, out))                            \
    X(glu, (kern_act act, const float *gate, const float *up, size_t n, size_t row, float *out),                      \
      (act, gate, up, n, row, out))                                                                                   \
    X(scale, (float *x, size_t n, float s), (x, n, s))                                                                \
    X(softcap, (float *x, size_t n, float cap), (x, n, cap))                                                          \
    X(clamp, (float *x, size_t n, float lo, float hi), (x, n, lo, hi))                                                \
    X(xielu, (const float *x, size_t n, const kern_xielu *xp, float *out), (x, n, xp, out))                           \
    X(add, (float *x, const float *y, size_t n), (x, y, n))                                                           \
    X(store_rows, (float *dst, const float *src, int T, int n, int pos0), (dst, src, T, n, pos0))                     \
    X(copy_rows, (float *dst, size_t ld_dst, const float *src, size_t ld_src, int rows, int n),                       \
      (dst, ld_dst, src, ld_src, rows, n))                                                                            \
    X(ssm_conv, (const kern_weight *w, const kern_weight *bias, const float *x, int T, int n, int d_conv, bool silu,  \
                 float *state, float *out), (w, bias, x, T, n, d_conv, silu, state, out))                              \
    X(ssm_scan, (const float *xbc, const float *dt, size_t ld_dt, const kern_weight *dt_bias, const kern_weight *a,   \
                 const kern_weight *d, float *state, int T, int n_head, int head_dim, int n_group, int d_state,       \
                 float *out), (xbc, dt, ld_dt, dt_bias, a, d, state, T, n_head, head_dim, n_group, d_state, out))     \
    X(delta_net, (const float *qkv, const float *beta, const float *alpha, const kern_weight *dt,                     \
                  const kern_weight *a, float *state, int T, int hk, int hv, bool grouped, int d, float eps,          \
                  float *out), (qkv, beta, alpha, dt, a, state, T, hk, hv, grouped, d, eps, out))                    \
    X(row_stats, (const float *x, int T, int n, kern_row_stats *out), (x, T, n, out))                                 \
    X(argmax, (const float *x, int n, int32_t *out), (x, n, out))                                                     \
    X(top_k, (const float *x, int n, int k, int32_t *ids, float *vals), (x, n, k, ids, vals))

/*
 * Coarse ops a backend may implement for speed; NULL where it does not, and the engine composes them from the
 * fine ops above (and always does when something probes, so traces and comparisons see every intermediate).
 *
 *   matmul_many  ys[i] (T, ne1 of ws[i]) = x (T, ne0) @ ws[i]^T, plus biases[i] where biases and biases[i] are not
 *                NULL, for 1..KERN_MATMUL_MANY weights of the same ne0 that read the same x (q, k and v; gate and
 *                up; the gate and up products of a decode step's chosen experts): one product, x prepared once per
 *                type and one team of threads over all their rows.
 *   matmul_many_x  as matmul_many, but ys[i] = xs[i] @ ws[i]^T, each weight with its own x (T, ne0) (a decode
 *                step's chosen experts' down products, each reading its own expert's activation): one team of
 *                threads over all their rows, each row bit for bit what matmul gives it.
 *   matmul_each  as matmul_many, but each of the T rows of ys[i] is bit for bit what a one-token product (T = 1) of
 *                that row of x gives, whatever T: llama.cpp's mul_mat_id multiplies each token's row by an expert
 *                alone, so a batch of the tokens that chose one expert (--numerics ggml) must not change the
 *                order of its sums, while each weight block is still read once for all of them.
 *   rope_store   rope of q (T, n_head, head_dim) and of k (T, n_kv_head, head_dim) at positions pos0 .., then k and
 *                v (T, n_kv_head * head_dim) into rows pos0 .. of the layer's caches (store_rows): what a replayed
 *                decode step runs between its products and its attention, bit for bit, in one op.
 *   add_rmsnorm  x (T, n) += y, then out = rmsnorm(x) * w: a residual add and the norm that reads its sum (the
 *                feed-forward's, the next layer's, the output's), bit for bit the two ops, in one.
 *   matmul_glu   out (T, ne1) = act(x @ gate^T + biases[0]) * (x @ up^T + biases[1]) (biases, and each of them, may
 *                be NULL): the gated block's two products and its activation, bit for bit matmul, matmul and glu;
 *                scratch (T, ne1) is the op's to use (for the up products where it composes them).
 */
#define KERN_OPS_OPTIONAL(X)                                                                                          \
    X(matmul_many, (int n, const kern_weight *const ws[], const kern_weight *const biases[],                          \
                    const float *x, int T, float *const ys[]), (n, ws, biases, x, T, ys))                      \
    X(matmul_each, (int n, const kern_weight *const ws[], const kern_weight *const biases[],                          \
                    const float *x, int T, float *const ys[]), (n, ws, biases, x, T, ys))                      \
    X(matmul_many_x, (int n, const kern_weight *const ws[], const kern_weight *const biases[],                        \
                      const float *const xs[], int T, float *const ys[]), (n, ws, biases, xs, T, ys))                \
    X(rope_store, (float *q, float *k, const float *v, int T, int n_head, int n_kv_head, int head_dim, int pos0,      \
                   const kern_rope *r, float *k_cache, float *v_cache),                                               \
      (q, k, v, T, n_head, n_kv_head, head_dim, pos0, r, k_cache, v_cache))                                          \
    X(add_rmsnorm, (float *x, const float *y, const kern_weight *w, int T, int n, float eps, float *out),             \
      (x, y, w, T, n, eps, out))                                                                                      \
    X(matmul_glu, (const kern_weight *gate, const kern_weight *up, const kern_weight *const biases[2],                \
                   const float *x, int T, kern_act act, float *out, float *scratch),                                  \
      (gate, up, biases, x, T, act, out, scratch))

/* A parenthesized list unpacked; an op's struct member. */
#define KERN_ARGS(...) __VA_ARGS__
#define KERN_OP_MEMBER(name, params, args) kern_status (*name)(kern_backend * b, KERN_ARGS params);


enum { KERN_TOP_K_MAX = 256, KERN_MATMUL_MANY = 16 };

struct kern_backend {
    const char *name;    /* "cpu", "cuda" */
    const char *device;  /* the device in words ("NVIDIA H100 80GB HBM3 (sm_90, 79.1 GiB)"), or NULL */
    void *ctx;
    /* The fewest tokens each part should have when a caller splits one batch's product into parts (0: any): the
     * CPU backend under --numerics ggml picks its order of arithmetic by the number of tokens, as llama.cpp picks
     * its kernel (its tiled K-quant product from 8 on), so a part must not fall below that where the batch does not. */
    int split_rows_min;
    /* How its products round activations: EXACT on devices and the default CPU backend, GGML for cpu:ggml (a
     * comparison re-derives each side's ops in that side's numerics). */
    kern_numerics numerics;

    void (*destroy)(kern_backend *b);
    /* Threads for the CPU backend (0: all cores); ignored by devices. */
    void (*set_threads)(kern_backend *b, int n_threads);

    /* Activation memory: n floats, zeroed. */
    float *(*alloc)(kern_backend *b, size_t n);
    void (*free)(kern_backend *b, float *p);
    kern_status (*to_host)(kern_backend *b, float *dst, const float *src, size_t n);
    kern_status (*from_host)(kern_backend *b, float *dst, const float *src, size_t n);

    /* Makes w usable by the ops (uploads it, checks its type). */
    kern_status (*bind)(kern_backend *b, kern_weight *w);
    void (*unbind)(kern_backend *b, kern_weight *w);

    /* The compute ops (KERN_OPS above: what each computes is said there), then the coarse ones a backend may
     * leave NULL (KERN_OPS_OPTIONAL). */
    KERN_OPS(KERN_OP_MEMBER)
    KERN_OPS_OPTIONAL(KERN_OP_MEMBER)

    /* Optional (NULL: none). The ops issued between step_begin and step_end
     * form one decode step (one token at position pos) that a device may
     * record and replay as a whole (CUDA graphs); between the two nothing may
     * need the host (no to_host, no row_stats), except argmax and top_k where
     * the backend has step_replay: their results reach host memory when
     * step_end returns. step_end runs what was recorded, or throws it away
     * when run is false (an op failed part-way). key names what the engine
     * records (its context, what comes back): steps recorded under one key
     * differ only in their position and token. */
    kern_status (*step_begin)(kern_backend *b, uint64_t key, int pos);
    kern_status (*step_end)(kern_backend *b, bool run);
    /* Optional (NULL: none). Runs the step last recorded under key again at position pos with token *token, its
     * host results where the recording put them, and returns KERN_OK; KERN_E_UNSUPPORTED when it holds no step
     * recorded under key (the caller records one). Only positions reach a recorded step as values at run time:
     * the ops that read a position (rope, attention, store_rows) must be given it as pos0, never folded into a
     * pointer, for a step to be replayable. */
    kern_status (*step_replay)(kern_backend *b, uint64_t key, int pos, const int32_t *token);
    /* Optional (NULL: none). The recorded steps' split of time so far as one JSON object (the CUDA backend under
     * GGUFSCOPE_CUDA_TIMING=1), or NULL when it keeps none: for a tool to print. */
    const char *(*step_timing)(kern_backend *b);

    /* What the last failed call was (call, file, line, the device's words),
     * or "" when nothing failed: for messages. */
    const char *(*last_error)(const kern_backend *b);
};

/* The CPU backend: SIMD (AVX2/AVX-512 when the CPU has them) and OpenMP over
 * rows. Reads every type quant/ can dequantize. NULL when out of memory. */
kern_backend *kern_cpu_create(int n_threads);

/* "exact" / "ggml" and back; false for another name. */
const char *kern_numerics_name(kern_numerics n);
bool kern_numerics_parse(const char *name, kern_numerics *out);
/* A CPU backend with the given numerics: named "cpu" (exact) or "cpu:ggml". */
kern_backend *kern_cpu_create_numerics(int n_threads, kern_numerics numerics);

/* The reference backend (kernels/ref): the oracle the tests and --compare's re-derivation hold other backends to.
 * The exact CPU backend with RMSNorm, attention, the gated activation and soft-capping computed in double and
 * rounded once, as their definitions read; host memory; n_threads for its products (0: all). NULL when out of
 * memory. */
kern_backend *kern_ref_create(int n_threads);

/* The CUDA backend on device `device`: weights uploaded once in their file
 * types, decode by matrix-vector kernels on the quantized blocks, prompts by
 * cuBLAS. NULL when there is no usable device or this build has no CUDA
 * backend; `why` (why_len bytes) then says which, in words for a user. */
kern_backend *kern_cuda_create(int device, char *why, size_t why_len);
/* Whether this build has the CUDA backend (nvcc was found at configure time). */
bool kern_cuda_built(void);
/* The CUDA kernels' block decoders run on the host: k values (a multiple of
 * 8) of a 16-byte aligned row. False when the backend does not read `type`
 * or is not built. Lets a machine without a GPU check the device decoders. */
bool kern_cuda_decode_row_host(uint32_t type, const void *row, int64_t k, float *out);
/* The CUDA GeGLU kernel's GELU of x, run on the host into *out; false when the backend is not built. */
bool kern_cuda_gelu_host(float x, float *out);
/* x rounded to TF32 as the CUDA prompt products split their operands (GGUFSCOPE_CUDA_TF32=1), run on the host into
 * *out; false when the backend is not built. */
bool kern_cuda_tf32_host(float x, float *out);

/* A backend that forwards every op to `inner` but gets one of them wrong on
 * purpose, so that a backend comparison can be shown to find it: the seed
 * reports' bugs (the bug zoo), named by kern_fault_names and said in a sentence
 * by kern_fault_bug (fault.c's table is the one list). Takes ownership of
 * inner. NULL for an unknown fault (inner is then destroyed). */
kern_backend *kern_fault_wrap(kern_backend *inner, const char *fault);
/* "rope-mode, lm-head-rows, ...": every fault's name, for messages. */
const char *kern_fault_names(void);
/* The bug a fault plants, in a sentence; NULL for an unknown name. */
const char *kern_fault_bug(const char *fault);

/* CPU kernels the engine and other backends' checks call directly. */
/* Dot product of n f32 values (f32 accumulation in 8/16 lanes). */
float kern_dot_f32(const float *a, const float *b, int64_t n);
/* e^x as attention's softmax computes it: in double, rounded once to float (the correctly rounded value but
 * within ~3e-13 of a tie; libm's expf, within 0.502 ulp, agrees on nearly every argument; softmax.c). */
float kern_expf(float x);
/* Statistics of one row of n host values (what every backend's row_stats computes). */
void kern_stats_row(const float *x, int n, kern_row_stats *out);
/* GELU as llama.cpp's CPU backend computes it: the tanh approximation at x rounded to f16, the
 * result rounded to f16 (its 64K-entry table), 0 at x <= -10, x at x >= 10. Every backend's
 * GeGLU computes this value (kernels/cpu/ops.c says why). */
float kern_gelu_ggml(float x);
/* Whether the CPU matmul can read `type` (quant/ dequantizes it). */
bool kern_cpu_supports(uint32_t type);

#endif
