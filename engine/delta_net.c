/*
 * A gated delta net's layer (Qwen3.5: llama.cpp's qwen35 graph, build_layer_attn_linear, and delta-net-base.cpp), on
 * the T rows at positions c->pos .. and the layer's recurrent state, which carries every position before them:
 *
 *   h          = rmsnorm(x) * attn_norm
 *   mixed, z   = h Wqkv, h Wgate;   beta, alpha = h Wbeta, h Walpha   (per value head)
 *   qkv        = SiLU(causal convolution of mixed over the last ssm.conv_kernel rows, per channel)
 *   o          = the gated delta rule over q, k (key heads), v (value heads) with decay exp(softplus(alpha + dt) a)
 *                and strength sigmoid(beta) (kern.h's delta_net)
 *   o          = (rmsnorm(o per value head) * ssm_norm) * SiLU(z);  c->o = o Wssm_out
 *
 * Also the rows the gated attention layers of the same models need (q and its gate apart) and the states' upkeep.
 */
#include "pass.h"

#include <stdlib.h>

/* Where a token's rows sit in the context's dn buffer, each region B rows of its width (B = c->max_batch). */
typedef struct dn_rows {
    float *mixed, *conv; /* the projection to q, k, v, and its convolution (dn_channels) */
    float *z;            /* the output's gate (dn_hv x dn_d) */
    float *beta, *alpha; /* per value head */
    float *out;          /* the delta rule's output (dn_hv x dn_d) */
} dn_rows;

static size_t dn_widths(const engine_hparams *hp, size_t w[6])
{
    const size_t C = (size_t)hp->dn_channels, inner = (size_t)hp->dn_hv * hp->dn_d, H = (size_t)hp->dn_hv;
    const size_t ws[6] = { C, C, inner, H, H, inner };
    size_t sum = 0;
    for (int i = 0; i < 6; i++)
        sum += w[i] = ws[i];
    return sum;
}

size_t engine_dn_width(const engine_hparams *hp)
{
    size_t w[6];
    const size_t net = hp->delta_net ? dn_widths(hp, w) : 0;
    /* a gated attention layer: q and gate as the product leaves them, then the gates apart */
    const size_t gated = hp->attn_out_gated ? 3 * (size_t)hp->n_head * hp->head_dim : 0;
    return net > gated ? net : gated;
}

static dn_rows dn_rows_of(const engine_ctx *c)
{
    size_t w[6];
    dn_widths(&c->m->hp, w);
    float *at = c->dn;
    float **region[6];
    dn_rows r;
    region[0] = &r.mixed, region[1] = &r.conv, region[2] = &r.z, region[3] = &r.beta, region[4] = &r.alpha,
    region[5] = &r.out;
    for (int i = 0; i < 6; i++) {
        *region[i] = at;
        at += (size_t)c->max_batch * w[i];
    }
    return r;
}

size_t engine_dn_state_floats(const engine_hparams *hp, size_t *conv)
{
    if (!hp->delta_net) {
        *conv = 0;
        return 0;
    }
    *conv = (size_t)hp->n_recurrent * (size_t)(hp->dn_conv - 1) * (size_t)hp->dn_channels;
    return (size_t)hp->n_recurrent * (size_t)hp->dn_hv * (size_t)hp->dn_d * (size_t)hp->dn_d;
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
    if (ks == KERN_OK)
        ks = c->be->from_host(c->be, c->dn_state, zeros, state);
    free(zeros);
    if (ks != KERN_OK)
        return engine_fail(err, ENGINE_E_BACKEND, 0, "", "%s backend: clearing the recurrent state failed: %s",
                           c->be->name, kern_status_name(ks));
    return ENGINE_OK;
}

void engine_delta_net_block(pass *p, int il, int T, const float *in)
{
    engine_ctx *c = p->c;
    const engine_hparams *hp = &c->m->hp;
    const kern_weight *w = c->m->layers[il].w;
    const int slot = c->m->layers[il].recurrent - 1, C = hp->dn_channels, inner = hp->dn_hv * hp->dn_d;
    float *conv_state = c->dn_conv_state + (size_t)slot * (hp->dn_conv - 1) * C;
    float *state = c->dn_state + (size_t)slot * hp->dn_hv * hp->dn_d * hp->dn_d;
    const dn_rows r = dn_rows_of(c);
    static const char *const names[4] = { "attn_qkv", "attn_gate", "ssm_beta", "ssm_alpha" };
    const kern_weight *const ws[4] = { &w[MODEL_ROLE_ATTN_QKV], &w[MODEL_ROLE_ATTN_GATE], &w[MODEL_ROLE_SSM_BETA],
                                       &w[MODEL_ROLE_SSM_ALPHA] };
    const kern_weight *const no_bias[4] = { 0 };
    float *const outs[4] = { r.mixed, r.z, r.beta, r.alpha };
    run_products(p, 4, ws, no_bias, in, T, outs, names, "attn_qkv, attn_gate, ssm_beta, ssm_alpha");
    run_ssm_conv(p, "short convolution", &w[MODEL_ROLE_SSM_CONV1D], r.mixed, T, C, hp->dn_conv, conv_state, r.conv);
    run_delta_net(p, "gated delta rule", r.conv, r.beta, r.alpha, &w[MODEL_ROLE_SSM_DT], &w[MODEL_ROLE_SSM_A], state,
                  T, hp->dn_hk, hp->dn_hv, hp->dn_d, hp->eps, r.out);
    run_rmsnorm(p, "ssm_norm", &w[MODEL_ROLE_SSM_NORM], r.out, T * hp->dn_hv, hp->dn_d, hp->eps, r.out);
    run_glu(p, "output gate SiLU(z)", KERN_ACT_SILU, r.z, r.out, (size_t)T * inner, (size_t)inner, r.out);
    pass_look(p, ENGINE_OP_ATTN, r.out, T, inner);
    run_matmul(p, "ssm_out", &w[MODEL_ROLE_SSM_OUT], NULL, r.out, T, c->o);
    pass_look(p, ENGINE_OP_ATTN_OUT, c->o, T, hp->n_embd);
}
