/* Private to engine/: one forward pass as its blocks see it (forward.c, experts.c), and the backend's ops run
 * through it. */
#ifndef GGUFSCOPE_ENGINE_PASS_H
#define GGUFSCOPE_ENGINE_PASS_H

#include "internal.h"

#include <math.h>

/* One forward pass as it runs: every op below runs only while nothing before it failed and keeps the first
 * failure, so a block reads as its math and the status is looked at once a layer (forward_batch's loop). */
typedef struct pass {
    engine_ctx *c;
    kern_backend *be;
    const engine_probe *probe;
    int layer;            /* the layer the next ops belong to, for messages (-1 before the first) */
    engine_status st;     /* ENGINE_OK until an op fails, then that failure */
    engine_error *err;
    /* h already holds the norm of x that the next block would make (add_rmsnorm made it with the residual add) */
    bool normed;
} pass;

/* Keeps ks as the pass's status when it is the first failure, naming the op `what` and the layer (forward.c). */
void pass_check(pass *p, kern_status ks, const char *what);

/* run_NAME(p, what, args...): the backend's op NAME (kern.h's list) on its arguments unless an op before it failed;
 * `what` names it in the message of its own failure. */
#define RUN(name, params, args)                                                                                   \
    __attribute__((unused)) static inline void run_##name(pass *p, const char *what, KERN_ARGS params)            \
    {                                                                                                             \
        if (!p->st)                                                                                               \
            pass_check(p, p->be->name(p->be, KERN_ARGS args), what);                                              \
    }
KERN_OPS(RUN)
#undef RUN

/* w where it is bound, else NULL: an optional bias as the ops take it */
static inline const kern_weight *pass_bound(const kern_weight *w)
{
    return w && w->t ? w : NULL;
}

/* A block's norm (attn_norm, ffn_norm, the post-norms, output_norm) as the model has them: RMSNorm, or LayerNorm
 * (model_hparams.norm_layer: Cohere's), plus its bias where bias is bound (StarCoder2's LayerNorms; PhiMoE's RMSNorms,
 * whose bias llama.cpp adds after the gains); without gains where w is not bound (OLMo's LayerNorms, Talkie's
 * RMSNorms: model_arch.norms_without_gains). */
static inline void run_block_norm(pass *p, const char *what, const kern_weight *w, const kern_weight *bias,
                                  const float *x, int T, int n, float eps, float *out)
{
    if (p->c->m->hp.norm_layer) { /* (no gains at all: OLMo's) */
        run_layernorm(p, what, pass_bound(w), pass_bound(bias), x, T, n, eps, out);
        return;
    }
    run_rmsnorm(p, what, pass_bound(w), x, T, n, eps, out);
    if (pass_bound(bias))
        run_add_bias(p, what, bias, T, n, out);
}

/* w times x into y plus the bias, as llama.cpp's build_lora_mm and the caller's add: where w has a per-tensor scale
 * (kern_weight.scaled), the product times it, then the bias. */
static inline void run_product(pass *p, const char *what, const kern_weight *w, const kern_weight *bias, const float *x,
                               int T, float *y)
{
    if (!w->scaled) {
        run_matmul(p, what, w, bias, x, T, y);
        return;
    }
    run_matmul(p, what, w, NULL, x, T, y);
    run_scale(p, what, y, (size_t)T * (size_t)w->t->ne[1], w->scale);
    if (pass_bound(bias))
        run_add_bias(p, what, bias, T, (int)w->t->ne[1], y);
}

/* Whether any of the n weights has a per-tensor scale (the fused products do not take one) */
static inline bool any_scaled(int n, const kern_weight *const ws[])
{
    for (int i = 0; i < n; i++)
        if (ws[i] && ws[i]->scaled)
            return true;
    return false;
}

/* ws[i] times x into ys[i], for n weights that read the same x: one product where the backend has matmul_many
 * (x prepared once, one team of threads over all the rows), else one product each (where one is scaled, or the
 * backend has no matmul_many), named by names[i] (n names). */
static inline void run_products(pass *p, int n, const kern_weight *const ws[], const kern_weight *const bs[],
                                const float *x, int T, float *const ys[], const char *const names[], const char *group)
{
    if (p->st)
        return;
    if (p->be->matmul_many && !any_scaled(n, ws)) {
        pass_check(p, p->be->matmul_many(p->be, n, ws, bs, x, T, ys), group);
        return;
    }
    for (int i = 0; i < n; i++)
        run_product(p, names[i], ws[i], bs[i], x, T, ys[i]);
}

/* ws[i] times xs[i] into ys[i], for n weights of one row length that each read their own x: one product where the
 * backend has matmul_many_x, else one matmul each, all named `what`. */
static inline void run_products_x(pass *p, int n, const kern_weight *const ws[], const kern_weight *const bs[],
                                  const float *const xs[], int T, float *const ys[], const char *what)
{
    if (p->st)
        return;
    if (p->be->matmul_many_x && !any_scaled(n, ws)) {
        pass_check(p, p->be->matmul_many_x(p->be, n, ws, bs, xs, T, ys), what);
        return;
    }
    for (int i = 0; i < n; i++)
        run_product(p, what, ws[i], bs[i], xs[i], T, ys[i]);
}

/* As run_products, each row of the ys as a one-token product makes it (kern.h's matmul_each); a scaled weight's rows
 * times its scale, then its bias (run_product's order). */
static inline void run_products_each(pass *p, int n, const kern_weight *const ws[], const kern_weight *const bs[],
                                     const float *x, int T, float *const ys[], const char *group)
{
    if (p->st)
        return;
    if (!any_scaled(n, ws)) {
        pass_check(p, p->be->matmul_each(p->be, n, ws, bs, x, T, ys), group);
        return;
    }
    const kern_weight *none[KERN_MATMUL_MANY] = { 0 };
    if (n > KERN_MATMUL_MANY) {
        pass_check(p, KERN_E_SHAPE, group);
        return;
    }
    pass_check(p, p->be->matmul_each(p->be, n, ws, none, x, T, ys), group);
    for (int i = 0; i < n; i++) {
        const int rows = (int)ws[i]->t->ne[1];
        if (ws[i]->scaled)
            run_scale(p, group, ys[i], (size_t)T * (size_t)rows, ws[i]->scale);
        if (pass_bound(bs[i]))
            run_add_bias(p, group, bs[i], T, rows, ys[i]);
    }
}

/* SiLU(gate) * up into gate (n values, rows of F) under a layer's SwiGLU limit (engine_layer.expert_clamp or
 * .shexp_clamp) in its architecture's form: engine_limited_swiglu. */
static inline void run_limited_swiglu(pass *p, float limit, float *gate, float *up, size_t n, size_t F)
{
    if (!p->st)
        pass_check(p,
                   engine_limited_swiglu(p->be, limit, p->c->m->hp.desc->swiglu_clamp_silu_first, gate, up, n, F,
                                         gate),
                   "limited SwiGLU");
}

/* A gated block's gate and up products of the Tr rows of x (their biases in bs, either may be NULL) and its
 * activation into gate (rows of F; up is scratch): one op where the backend has matmul_glu and nothing probes the
 * products, else the products (run_products) and glu. A block without a gate (gate_up[0] unbound) is its up product
 * and act(up) * up where the model's activation is squared (Nemotron-H's relu(up)^2), act(up) alone otherwise
 * (StarCoder2's GELU). */
static inline void run_gated_products(pass *p, const kern_weight *const gate_up[2], const kern_weight *const bs[2],
                                      const float *x, int Tr, int F, kern_act act, float *gate, float *up,
                                      const char *const names[2], const char *group, float limit)
{
    if (limit > 0.0f && gate_up[0] && gate_up[0]->t && act == KERN_ACT_SILU) {
        float *const outs[2] = { gate, up }; /* the products apart: the limit comes between them and the SiLU */
        run_products(p, 2, gate_up, bs, x, Tr, outs, names, group);
        run_limited_swiglu(p, limit, gate, up, (size_t)Tr * F, (size_t)F);
        return;
    }
    if (!gate_up[0] || !gate_up[0]->t) {
        run_product(p, names[1], gate_up[1], bs[1], x, Tr, up);
        run_glu(p, "activation", act, up, p->c->m->hp.act_squared ? up : NULL, (size_t)Tr * F, (size_t)F, gate);
        return;
    }
    if (p->be->matmul_glu && !p->probe && !any_scaled(2, gate_up)) {
        if (!p->st)
            pass_check(p, p->be->matmul_glu(p->be, gate_up[0], gate_up[1], bs, x, Tr, act, gate, up), group);
        return;
    }
    float *const outs[2] = { gate, up };
    run_products(p, 2, gate_up, bs, x, Tr, outs, names, group);
    run_glu(p, "gated activation", act, gate, up, (size_t)Tr * F, (size_t)F, gate);
}

/* What a probe sees of op after it ran: its rows' statistics and values (T, n), as the probe asks (forward.c). */
void pass_look(pass *p, engine_op op, const float *x, int T, int n);

/* Layer il's latent attention (mla.c) on the T rows of in (attn_norm's output) into c->o. */
void engine_mla_attention_block(pass *p, int il, int T, const float *in);

/* Layer il's gated delta net (delta_net.c) on the T rows of in (attn_norm's output) into c->o. */
void engine_delta_net_block(pass *p, int il, int T, const float *in);

/* Layer il's short convolution (LFM2; delta_net.c) on the T rows of in into c->o. */
void engine_shortconv_block(pass *p, int il, int T, const float *in);

/* Layer il's Mamba-2 mixer (Nemotron-H; mamba2.c) on the T rows of in into out (c->o; Falcon-H1's beside its
 * attention: in itself, which only the mixer's first product reads). */
void engine_mamba2_block(pass *p, int il, int T, const float *in, float *out);

/* Layer il's Mamba-1 mixer (state-spaces Mamba, Falcon-Mamba; mamba1.c) on the T rows of in into out (c->o). */
void engine_mamba1_block(pass *p, int il, int T, const float *in, float *out);

/* Layer il's mixture of experts on the Tr rows of h into o, routed on the rows of router_in (h where NULL; experts.c). */
void engine_experts_block(pass *p, int il, int Tr, const float *h, const float *router_in, float *o);
/* Layer il's residual adds and feed-forward block, rows [r0, T) (forward_ffn.c): after its attention (next_norm: the
 * norm that reads the layer's output next, NULL where something else does first), or a parallel layer's; Gemma 4's
 * per-layer inputs of the batch's tokens, made once before the layers. */
void engine_ffn_block(pass *p, int il, int T, int r0, const kern_weight *next_norm);
void engine_parallel_block(pass *p, int il, int T, int r0);
void engine_per_layer_inputs(pass *p, const int32_t *tokens, int T);

#endif
