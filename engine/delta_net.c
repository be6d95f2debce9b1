/*
 * A gated delta net's layer (Qwen3.5, Qwen3-Next: llama.cpp's qwen35 and qwen3next graphs, build_layer_attn_linear,
 * and delta-net-base.cpp), on the T rows at positions c->pos .. and the layer's recurrent state, which carries every
 * position before them:
 *
 *   h          = rmsnorm(x) * attn_norm
 *   mixed, z   = h Wqkv, h Wgate;   beta, alpha = h Wbeta, h Walpha   (per value head; Qwen3-Next's fused ssm_in and
 *                                                                      ssm_ba taken apart by engine_dn_unpack)
 *   qkv        = SiLU(causal convolution of mixed over the last ssm.conv_kernel rows, per channel)
 *   o          = the gated delta rule over q, k (key heads), v (value heads) with decay exp(softplus(alpha + dt) a)
 *                and strength sigmoid(beta) (kern.h's delta_net)
 *   o          = (rmsnorm(o per value head) * ssm_norm) * SiLU(z);  c->o = o Wssm_out
 *
 * Also the rows the gated attention layers of the same models need (q and its gate apart) and the states' upkeep.
 */
#include "pass.h"

#include <stdlib.h>
#include <string.h>

/* LFM2's short convolution layer (llama.cpp's lfm2 graph, build_shortconv_block), on the same state's upkeep:
 *
 *   B, C, x    = h Win (thirds of each row);   y = C * conv(B * x) over shortconv.l_cache taps;   c->o = y Wout
 */

/* Where a token's rows sit in the context's dn buffer, each region B rows of its width (B = c->max_batch). */
typedef struct dn_rows {
    float *mixed, *conv; /* the projection to q, k, v, and its convolution (dn_channels) */
    float *z;            /* the output's gate (dn_hv x dn_d) */
    float *beta, *alpha; /* per value head */
    float *out;          /* the delta rule's output (dn_hv x dn_d) */
    float *qkvz, *ba;    /* Qwen3-Next's fused projections as they come (engine_dn_unpack), or empty */
} dn_rows;

enum { DN_REGIONS = 8 };

static size_t dn_widths(const engine_hparams *hp, size_t w[DN_REGIONS])
{
    const size_t C = (size_t)hp->dn_channels, inner = (size_t)hp->dn_hv * hp->dn_d, H = (size_t)hp->dn_hv;
    const size_t fused = hp->dn_grouped;
    const size_t ws[DN_REGIONS] = { C, C, inner, H, H, inner, fused * (C + inner), fused * 2 * H };
    memcpy(w, ws, sizeof ws);
    return engine_dn_regions(NULL, w, DN_REGIONS, NULL);
}

size_t engine_dn_regions(const engine_ctx *c, const size_t *widths, int n, float **regions)
{
    size_t sum = 0;
    for (int i = 0; i < n; i++) {
        if (c)
            regions[i] = c->dn + (size_t)c->max_batch * sum;
        sum += widths[i];
    }
    return sum;
}

size_t engine_dn_width(const engine_hparams *hp)
{
    size_t w[DN_REGIONS];
    /* LFM2's short convolution: B, C, x as the product leaves them, then apart */
    const size_t net = hp->delta_net ? dn_widths(hp, w) : hp->shortconv ? 6 * (size_t)hp->n_embd
                       : hp->mamba2 ? engine_mamba2_width(hp) : hp->mamba1 ? engine_mamba1_width(hp) : 0;
    /* a gated attention layer: q and gate as the product leaves them, then the gates apart (or the gate product) */
    /* (Step-3.5: a gate per head, then the gates spread over each head's values) */
    /* (Laguna: either gate, by layer) */
    size_t gated = hp->attn_out_gated ? 3 * (size_t)hp->n_head * hp->head_dim
                   : hp->attn_gate_proj ? (size_t)hp->n_head * hp->head_dim
                                        : 0;
    const size_t per_head = (size_t)hp->n_head * (1 + (size_t)hp->v_dim_max);
    if ((hp->desc->attn_gate_per_head || hp->desc->attn_gate_either) && per_head > gated)
        gated = per_head;
    return net > gated ? net : gated;
}

static dn_rows dn_rows_of(const engine_ctx *c)
{
    size_t w[DN_REGIONS];
    dn_widths(&c->m->hp, w);
    float *at[DN_REGIONS];
    engine_dn_regions(c, w, DN_REGIONS, at);
    return (dn_rows){ .mixed = at[0], .conv = at[1], .z = at[2], .beta = at[3], .alpha = at[4], .out = at[5],
                      .qkvz = at[6], .ba = at[7] };
}

size_t engine_dn_state_floats(const engine_hparams *hp, size_t *conv)
{
    *conv = hp->delta_net || hp->shortconv || hp->mamba2 || hp->mamba1
                ? (size_t)hp->n_recurrent * (size_t)(hp->dn_conv - 1) * (size_t)hp->dn_channels
                : 0;
    if (hp->mamba2 || hp->mamba1) /* each head's rows (Mamba-1: each channel) of state_size values */
        return (size_t)hp->n_recurrent * (size_t)hp->m2_inner * (size_t)hp->dn_d;
    return hp->delta_net ? (size_t)hp->n_recurrent * (size_t)hp->dn_hv * (size_t)hp->dn_d * (size_t)hp->dn_d : 0;
}

engine_status engine_dn_reset(engine_ctx *c, engine_error *err)
{
    size_t conv;
    const size_t state = engine_dn_state_floats(&c->m->hp, &conv);
    const size_t most = conv > state ? conv : state;
    if (!most)
        return ENGINE_OK;
    float *zeros = calloc(most, sizeof *zeros);
    if (!zeros)
        return engine_fail(err, ENGINE_E_NOMEM, 0, "", "out of memory clearing the recurrent state");
    kern_status ks = conv ? c->be->from_host(c->be, c->dn_conv_state, zeros, conv) : KERN_OK;
    if (ks == KERN_OK && state)
        ks = c->be->from_host(c->be, c->dn_state, zeros, state);
    free(zeros);
    if (ks != KERN_OK)
        return engine_fail(err, ENGINE_E_BACKEND, 0, "", "%s backend: clearing the recurrent state failed: %s",
                           c->be->name, kern_status_name(ks));
    return ENGINE_OK;
}

kern_status engine_dn_unpack(kern_backend *be, const engine_hparams *hp, const float *qkvz, const float *ba, int T,
                             float *mixed, float *z, float *beta, float *alpha)
{
    const size_t d = (size_t)hp->dn_d, hk = (size_t)hp->dn_hk, r = (size_t)(hp->dn_hv / hp->dn_hk);
    const size_t C = (size_t)hp->dn_channels, inner = (size_t)hp->dn_hv * d, W = 2 * d + 2 * r * d;
    kern_status s = KERN_OK;
    for (size_t k = 0; k < hk && qkvz && !s; k++) {
        const float *src = qkvz + k * W; /* key head k's q, k, v, z */
        struct {
            float *dst;
            size_t ld, n;
        } const parts[4] = { { mixed + k * d, C, d }, { mixed + (hk + k) * d, C, d },
                             { mixed + 2 * hk * d + k * r * d, C, r * d }, { z + k * r * d, inner, r * d } };
        for (int i = 0; i < 4 && !s; src += parts[i].n, i++)
            s = be->copy_rows(be, parts[i].dst, parts[i].ld, src, hk * W, T, (int)parts[i].n);
    }
    for (size_t k = 0; k < hk && ba && !s; k++) { /* key head k's value heads' beta, then their alpha */
        s = be->copy_rows(be, beta + k * r, (size_t)hp->dn_hv, ba + k * 2 * r, 2 * (size_t)hp->dn_hv, T, (int)r);
        if (!s)
            s = be->copy_rows(be, alpha + k * r, (size_t)hp->dn_hv, ba + k * 2 * r + r, 2 * (size_t)hp->dn_hv, T,
                              (int)r);
    }
    return s;
}

void engine_delta_net_block(pass *p, int il, int T, const float *in)
{
    engine_ctx *c = p->c;
    const engine_hparams *hp = &c->m->hp;
    const kern_weight *w = c->m->layers[il].w;
    const int slot = c->m->layers[il].state - 1, C = hp->dn_channels, inner = hp->dn_hv * hp->dn_d;
    float *conv_state = c->dn_conv_state + (size_t)slot * (hp->dn_conv - 1) * C;
    float *state = c->dn_state + (size_t)slot * hp->dn_hv * hp->dn_d * hp->dn_d;
    const dn_rows r = dn_rows_of(c);
    /* q, k, v and z from attn_qkv and attn_gate, or from Qwen3-Next's older ssm_in; beta and alpha from their own
     * products, or from its ssm_ba (engine_dn_unpack) */
    const bool fused_in = !w[MODEL_ROLE_ATTN_QKV].t, fused_ba = w[MODEL_ROLE_SSM_BA].t != NULL;
    const char *names[4];
    const kern_weight *ws[4];
    float *outs[4];
    int n = 0;
    const struct {
        bool on;
        model_role role;
        float *out;
    } products[6] = { { !fused_in, MODEL_ROLE_ATTN_QKV, r.mixed }, { !fused_in, MODEL_ROLE_ATTN_GATE, r.z },
                      { fused_in, MODEL_ROLE_SSM_IN, r.qkvz },       { !fused_ba, MODEL_ROLE_SSM_BETA, r.beta },
                      { !fused_ba, MODEL_ROLE_SSM_ALPHA, r.alpha },  { fused_ba, MODEL_ROLE_SSM_BA, r.ba } };
    for (int i = 0; i < 6; i++)
        if (products[i].on) {
            names[n] = model_role_info_of(products[i].role)->name;
            ws[n] = &w[products[i].role];
            outs[n++] = products[i].out;
        }
    const kern_weight *const no_bias[4] = { 0 };
    run_products(p, n, ws, no_bias, in, T, outs, names, "the delta net's input products");
    if ((fused_in || fused_ba) && !p->st)
        pass_check(p, engine_dn_unpack(c->be, hp, fused_in ? r.qkvz : NULL, fused_ba ? r.ba : NULL, T, r.mixed, r.z,
                                       r.beta, r.alpha), "the fused projections taken apart");
    run_ssm_conv(p, "short convolution", &w[MODEL_ROLE_SSM_CONV1D], NULL, r.mixed, T, C, hp->dn_conv, true, conv_state,
                 r.conv);
    run_delta_net(p, "gated delta rule", r.conv, r.beta, r.alpha, &w[MODEL_ROLE_SSM_DT], &w[MODEL_ROLE_SSM_A], state,
                  T, hp->dn_hk, hp->dn_hv, hp->dn_grouped, hp->dn_d, hp->eps, r.out);
    run_rmsnorm(p, "ssm_norm", &w[MODEL_ROLE_SSM_NORM], r.out, T * hp->dn_hv, hp->dn_d, hp->eps, r.out);
    run_glu(p, "output gate SiLU(z)", KERN_ACT_SILU, r.z, r.out, (size_t)T * inner, (size_t)inner, r.out);
    pass_look(p, ENGINE_OP_ATTN, r.out, T, inner);
    run_product(p, "ssm_out", &w[MODEL_ROLE_SSM_OUT], NULL, r.out, T, c->o);
    pass_look(p, ENGINE_OP_ATTN_OUT, c->o, T, hp->n_embd);
}

void engine_shortconv_block(pass *p, int il, int T, const float *in)
{
    engine_ctx *c = p->c;
    const engine_hparams *hp = &c->m->hp;
    const kern_weight *w = c->m->layers[il].w;
    const int E = hp->n_embd;
    const size_t B = (size_t)c->max_batch;
    float *conv_state = c->dn_conv_state + (size_t)(c->m->layers[il].state - 1) * (hp->dn_conv - 1) * E;
    /* the batch's rows: the projection (3 n_embd), then B, C and x apart (n_embd each) */
    float *bcx = c->dn, *b = bcx + B * 3 * E, *cc = b + B * E, *x = cc + B * E;
    run_product(p, "shortconv.in_proj", &w[MODEL_ROLE_SHORTCONV_IN], NULL, in, T, bcx);
    float *const parts[3] = { b, cc, x };
    for (int i = 0; i < 3; i++)
        run_copy_rows(p, "B, C and x apart", parts[i], (size_t)E, bcx + (size_t)i * E, 3 * (size_t)E, T, E);
    run_glu(p, "B * x", KERN_ACT_NONE, b, x, (size_t)T * E, (size_t)E, b);
    run_ssm_conv(p, "short convolution", &w[MODEL_ROLE_SHORTCONV_CONV], NULL, b, T, E, hp->dn_conv, false, conv_state, x);
    run_glu(p, "C * conv", KERN_ACT_NONE, cc, x, (size_t)T * E, (size_t)E, x);
    pass_look(p, ENGINE_OP_ATTN, x, T, E);
    run_product(p, "shortconv.out_proj", &w[MODEL_ROLE_SHORTCONV_OUT], NULL, x, T, c->o);
    pass_look(p, ENGINE_OP_ATTN_OUT, c->o, T, E);
}
