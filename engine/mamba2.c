/*
 * A Mamba-2 mixer (Nemotron-H: llama.cpp's nemotron_h graph, build_mamba2_layer in mamba-base.cpp) on the T rows at
 * positions c->pos .. and the layer's recurrent states (the convolution's inputs before, and a state per head), which
 * carry every position before them:
 *
 *   z, xBC, dt = h Wssm_in                   (z: inner; x, B, C: inner + 2 groups x state; dt: one per head)
 *   xBC        = SiLU(causal convolution of xBC over ssm.conv_kernel rows, per channel, + ssm_conv1d.bias)
 *   y          = the selective scan (kern.h's ssm_scan): per head a state of head_dim x state_size decayed by
 *                exp(softplus(dt + dt_bias) A), written with x dt B and read by C, plus D x
 *   y          = rmsnorm(y * SiLU(z), per group) * ssm_norm;   c->o = y Wssm_out
 */
#include "pass.h"

#include <string.h>

/* The batch's regions in c->dn, B rows each: the projection, x B C apart, their convolution, z apart, the scan's y. */
enum { M2_REGIONS = 5 };

static void m2_widths(const engine_hparams *hp, size_t w[M2_REGIONS])
{
    const size_t inner = (size_t)hp->m2_inner, C = (size_t)hp->dn_channels;
    const size_t ws[M2_REGIONS] = { inner + C + (size_t)hp->dn_hv, C, C, inner, inner };
    memcpy(w, ws, sizeof ws);
}

size_t engine_mamba2_width(const engine_hparams *hp)
{
    size_t w[M2_REGIONS];
    m2_widths(hp, w);
    return engine_dn_regions(NULL, w, M2_REGIONS, NULL);
}

void engine_mamba2_block(pass *p, int il, int T, const float *in, float *out)
{
    engine_ctx *c = p->c;
    const engine_hparams *hp = &c->m->hp;
    const kern_weight *w = c->m->layers[il].w;
    const int slot = c->m->layers[il].state - 1, inner = hp->m2_inner, C = hp->dn_channels;
    const int heads = hp->dn_hv, groups = hp->dn_hk;
    size_t width[M2_REGIONS];
    m2_widths(hp, width);
    float *region[M2_REGIONS];
    engine_dn_regions(c, width, M2_REGIONS, region);
    float *proj = region[0], *xbc = region[1], *conv = region[2], *z = region[3], *y = region[4];
    const size_t P = width[0];
    float *conv_state = c->dn_conv_state + (size_t)slot * (hp->dn_conv - 1) * C;
    float *state = c->dn_state + (size_t)slot * inner * hp->dn_d;
    const kern_weight *conv_bias = w[MODEL_ROLE_SSM_CONV1D_BIAS].t ? &w[MODEL_ROLE_SSM_CONV1D_BIAS] : NULL;

    run_product(p, "ssm_in", &w[MODEL_ROLE_SSM_IN], NULL, in, T, proj);
    run_copy_rows(p, "z apart", z, (size_t)inner, proj, P, T, inner);
    run_copy_rows(p, "x, B and C apart", xbc, (size_t)C, proj + inner, P, T, C);
    run_ssm_conv(p, "short convolution", &w[MODEL_ROLE_SSM_CONV1D], conv_bias, xbc, T, C, hp->dn_conv, true,
                 conv_state, conv);
    run_ssm_scan(p, "selective scan", conv, proj + inner + C, P, &w[MODEL_ROLE_SSM_DT], &w[MODEL_ROLE_SSM_A],
                 &w[MODEL_ROLE_SSM_D], state, T, heads, inner / heads, groups, hp->dn_d, y);
    run_glu(p, "y * SiLU(z)", KERN_ACT_SILU, z, y, (size_t)T * inner, (size_t)inner, y);
    if (w[MODEL_ROLE_SSM_NORM].t) /* (Falcon-H1's without mamba_rms_norm have none) */
        run_rmsnorm(p, "ssm_norm (per group)", &w[MODEL_ROLE_SSM_NORM], y, T * groups, inner / groups, hp->eps, y);
    const bool beside = hp->desc->mixer_beside; /* the attention's own output is the layer's attn and attn_out */
    if (!beside)
        pass_look(p, ENGINE_OP_ATTN, y, T, inner);
    run_product(p, "ssm_out", &w[MODEL_ROLE_SSM_OUT], NULL, y, T, out);
    if (!beside)
        pass_look(p, ENGINE_OP_ATTN_OUT, out, T, hp->n_embd);
}
