/*
 * A Mamba-1 mixer (llama.cpp's mamba graph, build_mamba_layer in mamba-base.cpp: state-spaces Mamba, Falcon-Mamba) on
 * the T rows at positions c->pos .. and the layer's recurrent states (the convolution's inputs before, and a state of
 * ssm.state_size values per channel), which carry every position before them:
 *
 *   x, z     = h Wssm_in                       (inner each)
 *   x        = SiLU(causal convolution of x over ssm.conv_kernel rows, per channel, + ssm_conv1d.bias)
 *   dt, B, C = x Wssm_x                        (ssm.time_step_rank, then ssm.state_size each; each RMS-normed with
 *                                               Jamba's gains, or without where ssm.dt_b_c_rms: Falcon-Mamba)
 *   dt       = dt Wssm_dt                      (one per channel; its bias added in the scan)
 *   y        = the selective scan (kern.h's ssm_scan with a head per channel): each channel's state decayed value by
 *              value by exp(softplus(dt + dt_bias) A[c][j]), written with x dt B and read by C, plus D x
 *   c->o     = (y * SiLU(z)) Wssm_out
 */
#include "pass.h"

#include <string.h>

/* The batch's regions in c->dn, B rows each: the input product, x and z apart, the convolution, ssm_x's product,
 * B and C apart (normed there), x B C together as the scan reads them, dt apart, dt widened, the scan's y. */
enum { M1_PROJ, M1_X, M1_Z, M1_CONV, M1_XDB, M1_B, M1_C, M1_XBC, M1_DT_LOW, M1_DT, M1_Y, M1_REGIONS };

static void m1_widths(const engine_hparams *hp, size_t w[M1_REGIONS])
{
    const size_t I = (size_t)hp->m2_inner, S = (size_t)hp->dn_d, R = (size_t)hp->m1_dt_rank;
    const size_t ws[M1_REGIONS] = { 2 * I, I, I, I, R + 2 * S, S, S, I + 2 * S, R, I, I };
    memcpy(w, ws, sizeof ws);
}

size_t engine_mamba1_width(const engine_hparams *hp)
{
    size_t w[M1_REGIONS];
    m1_widths(hp, w);
    return engine_dn_regions(NULL, w, M1_REGIONS, NULL);
}

void engine_mamba1_block(pass *p, int il, int T, const float *in, float *out)
{
    engine_ctx *c = p->c;
    const engine_hparams *hp = &c->m->hp;
    const kern_weight *w = c->m->layers[il].w;
    const int slot = c->m->layers[il].state - 1, I = hp->m2_inner, S = hp->dn_d, R = hp->m1_dt_rank;
    size_t width[M1_REGIONS];
    m1_widths(hp, width);
    float *r[M1_REGIONS];
    engine_dn_regions(c, width, M1_REGIONS, r);
    float *conv_state = c->dn_conv_state + (size_t)slot * (hp->dn_conv - 1) * I;
    float *state = c->dn_state + (size_t)slot * I * S;

    run_product(p, "ssm_in", &w[MODEL_ROLE_SSM_IN], NULL, in, T, r[M1_PROJ]);
    run_copy_rows(p, "x apart", r[M1_X], (size_t)I, r[M1_PROJ], 2 * (size_t)I, T, I);
    run_copy_rows(p, "z apart", r[M1_Z], (size_t)I, r[M1_PROJ] + I, 2 * (size_t)I, T, I);
    run_ssm_conv(p, "short convolution", &w[MODEL_ROLE_SSM_CONV1D], &w[MODEL_ROLE_SSM_CONV1D_BIAS], r[M1_X], T, I,
                 hp->dn_conv, true, conv_state, r[M1_CONV]);
    run_product(p, "ssm_x (dt, B, C)", &w[MODEL_ROLE_SSM_X], NULL, r[M1_CONV], T, r[M1_XDB]);
    const size_t ld_xdb = (size_t)R + 2 * (size_t)S, ld_xbc = (size_t)I + 2 * (size_t)S;
    run_copy_rows(p, "dt apart", r[M1_DT_LOW], (size_t)R, r[M1_XDB], ld_xdb, T, R);
    run_copy_rows(p, "B apart", r[M1_B], (size_t)S, r[M1_XDB] + R, ld_xdb, T, S);
    run_copy_rows(p, "C apart", r[M1_C], (size_t)S, r[M1_XDB] + R + S, ld_xdb, T, S);
    /* dt, B and C each RMS-normed: with Jamba's gains, or without (Falcon-Mamba's dt_b_c_rms) */
    static const struct {
        int region;
        model_role gains;
        const char *name;
    } norms[] = { { M1_DT_LOW, MODEL_ROLE_SSM_DT_NORM, "dt norm" }, { M1_B, MODEL_ROLE_SSM_B_NORM, "B norm" },
                  { M1_C, MODEL_ROLE_SSM_C_NORM, "C norm" } };
    for (size_t i = 0; i < sizeof norms / sizeof norms[0]; i++) {
        const kern_weight *g = w[norms[i].gains].t ? &w[norms[i].gains] : NULL;
        if (g || hp->m1_dt_b_c_rms)
            run_rmsnorm(p, norms[i].name, g, r[norms[i].region], T, i ? S : R, hp->eps, r[norms[i].region]);
    }
    run_product(p, "ssm_dt", &w[MODEL_ROLE_SSM_DT_PROJ], NULL, r[M1_DT_LOW], T, r[M1_DT]);
    run_copy_rows(p, "x into the scan's rows", r[M1_XBC], ld_xbc, r[M1_CONV], (size_t)I, T, I);
    run_copy_rows(p, "B into the scan's rows", r[M1_XBC] + I, ld_xbc, r[M1_B], (size_t)S, T, S);
    run_copy_rows(p, "C into the scan's rows", r[M1_XBC] + I + S, ld_xbc, r[M1_C], (size_t)S, T, S);
    run_ssm_scan(p, "selective scan", r[M1_XBC], r[M1_DT], (size_t)I, &w[MODEL_ROLE_SSM_DT], &w[MODEL_ROLE_SSM_A],
                 &w[MODEL_ROLE_SSM_D], state, T, I, 1, 1, S, r[M1_Y]);
    run_glu(p, "y * SiLU(z)", KERN_ACT_SILU, r[M1_Z], r[M1_Y], (size_t)T * I, (size_t)I, r[M1_Y]);
    pass_look(p, ENGINE_OP_ATTN, r[M1_Y], T, I);
    run_product(p, "ssm_out", &w[MODEL_ROLE_SSM_OUT], NULL, r[M1_Y], T, out);
    pass_look(p, ENGINE_OP_ATTN_OUT, out, T, hp->n_embd);
}
