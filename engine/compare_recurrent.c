/*
 * The recurrent mixers re-derived from one side's own inputs, for the comparison of two backends (compare_derive.c says
 * how and why): a mixer's state holds every position before the chunk, so each is replayed from zero states over the
 * side's own attn_norm rows from the first position (attn_history.norm), its products in the side's numerics
 * (cmp_product), everything else by the reference backend.
 */
#include "compare_internal.h"

#include <stdlib.h>
#include <string.h>

/* Layer il's tensors as the host reads them, whichever backend bound them. */
static void host_weights(const engine_model *m, int il, kern_weight w[MODEL_ROLE_COUNT])
{
    for (int r = 0; r < MODEL_ROLE_COUNT; r++)
        w[r] = (kern_weight){ .t = m->layers[il].w[r].t };
}

/* Whether a mixer can be replayed over the side's attn_norm rows of its first n positions. */
static bool replayable(const cmp_state *s, int side, int n)
{
    return s->d.be[KERN_NUMERICS_EXACT] && s->h.norm[side] && n <= s->h.n_pos;
}

/* A gated delta net's output (delta_net.c's block before ssm_out) on the chunk's rows, replayed from a zero state over
 * the side's own attn_norm rows at every position before and in the chunk (its state holds them all): the products in
 * the side's numerics, the convolution, the delta rule, the norm and the gate by the reference. */
static bool derive_delta_net(cmp_state *s, int side, int il, int pos0, int T, float *out)
{
    const engine_hparams *hp = &s->m->hp;
    const attn_history *h = &s->h;
    kern_backend *ref = s->d.be[KERN_NUMERICS_EXACT];
    const int E = hp->n_embd, n = pos0 + T, C = hp->dn_channels, H = hp->dn_hv, inner = H * hp->dn_d;
    if (!replayable(s, side, n))
        return false;
    const float *x = h->norm[side] + (size_t)il * h->n_pos * E;
    kern_weight w[MODEL_ROLE_COUNT];
    host_weights(s->m, il, w);
    const size_t conv_n = (size_t)(hp->dn_conv - 1) * C, state_n = (size_t)H * hp->dn_d * hp->dn_d;
    const size_t fused = (size_t)n * ((size_t)C + (size_t)inner + 2 * (size_t)H); /* Qwen3-Next's, as they come */
    float *buf = calloc((size_t)n * (2 * (size_t)C + 2 * (size_t)inner + 2 * (size_t)H) + conv_n + state_n + fused,
                        sizeof *buf);
    if (!buf)
        return false;
    float *mixed = buf, *conv = mixed + (size_t)n * C, *z = conv + (size_t)n * C, *beta = z + (size_t)n * inner;
    float *alpha = beta + (size_t)n * H, *o = alpha + (size_t)n * H, *conv_state = o + (size_t)n * inner;
    float *state = conv_state + conv_n, *qkvz = state + state_n, *ba = qkvz + (size_t)n * (C + inner);
    const bool fused_in = !w[MODEL_ROLE_ATTN_QKV].t, fused_ba = w[MODEL_ROLE_SSM_BA].t != NULL;
    const bool ok =
        (fused_in ? cmp_product(s, side, &w[MODEL_ROLE_SSM_IN], NULL, x, n, E, qkvz)
                  : cmp_product(s, side, &w[MODEL_ROLE_ATTN_QKV], NULL, x, n, E, mixed) &&
                        cmp_product(s, side, &w[MODEL_ROLE_ATTN_GATE], NULL, x, n, E, z)) &&
        (fused_ba ? cmp_product(s, side, &w[MODEL_ROLE_SSM_BA], NULL, x, n, E, ba)
                  : cmp_product(s, side, &w[MODEL_ROLE_SSM_BETA], NULL, x, n, E, beta) &&
                        cmp_product(s, side, &w[MODEL_ROLE_SSM_ALPHA], NULL, x, n, E, alpha)) &&
        engine_dn_unpack(ref, hp, fused_in ? qkvz : NULL, fused_ba ? ba : NULL, n, mixed, z, beta, alpha) == KERN_OK &&
        ref->ssm_conv(ref, &w[MODEL_ROLE_SSM_CONV1D], NULL, mixed, n, C, hp->dn_conv, true, conv_state, conv) ==
            KERN_OK &&
        ref->delta_net(ref, conv, beta, alpha, &w[MODEL_ROLE_SSM_DT], &w[MODEL_ROLE_SSM_A], state, n, hp->dn_hk, H,
                       hp->dn_grouped, hp->dn_d, hp->eps, o) == KERN_OK &&
        ref->rmsnorm(ref, &w[MODEL_ROLE_SSM_NORM], o, n * H, hp->dn_d, hp->eps, o) == KERN_OK &&
        ref->glu(ref, KERN_ACT_SILU, z, o, (size_t)n * inner, (size_t)inner, o) == KERN_OK;
    if (ok)
        memcpy(out, o + (size_t)pos0 * inner, (size_t)T * inner * sizeof *out);
    free(buf);
    return ok;
}

/* A Mamba-2 mixer's output (mamba2.c's block before ssm_out) on the chunk's rows, replayed from zero states over the
 * side's own attn_norm rows from the first position: ssm_in in the side's numerics, the convolution, the scan, the gate
 * and the grouped norm by the reference. */
static bool derive_mamba2(cmp_state *s, int side, int il, int pos0, int T, float *out)
{
    const engine_hparams *hp = &s->m->hp;
    const attn_history *h = &s->h;
    kern_backend *ref = s->d.be[KERN_NUMERICS_EXACT];
    const int E = hp->n_embd, n = pos0 + T, C = hp->dn_channels, inner = hp->m2_inner, H = hp->dn_hv, G = hp->dn_hk;
    if (!replayable(s, side, n))
        return false;
    kern_weight w[MODEL_ROLE_COUNT];
    host_weights(s->m, il, w);
    const size_t P = (size_t)inner + (size_t)C + (size_t)H, conv_n = (size_t)(hp->dn_conv - 1) * C;
    float *buf = calloc((size_t)n * (P + 2 * (size_t)C + 2 * (size_t)inner) + conv_n + (size_t)inner * hp->dn_d,
                        sizeof *buf);
    if (!buf)
        return false;
    float *proj = buf, *xbc = proj + (size_t)n * P, *conv = xbc + (size_t)n * C, *z = conv + (size_t)n * C;
    float *y = z + (size_t)n * inner, *conv_state = y + (size_t)n * inner, *state = conv_state + conv_n;
    const bool ok =
        cmp_product(s, side, &w[MODEL_ROLE_SSM_IN], NULL, h->norm[side] + (size_t)il * h->n_pos * E, n, E, proj) &&
        ref->copy_rows(ref, z, (size_t)inner, proj, P, n, inner) == KERN_OK &&
        ref->copy_rows(ref, xbc, (size_t)C, proj + inner, P, n, C) == KERN_OK &&
        ref->ssm_conv(ref, &w[MODEL_ROLE_SSM_CONV1D], &w[MODEL_ROLE_SSM_CONV1D_BIAS], xbc, n, C, hp->dn_conv, true,
                      conv_state, conv) == KERN_OK &&
        ref->ssm_scan(ref, conv, proj + inner + C, P, &w[MODEL_ROLE_SSM_DT], &w[MODEL_ROLE_SSM_A], &w[MODEL_ROLE_SSM_D],
                      state, n, H, inner / H, G, hp->dn_d, y) == KERN_OK &&
        ref->glu(ref, KERN_ACT_SILU, z, y, (size_t)n * inner, (size_t)inner, y) == KERN_OK &&
        (!w[MODEL_ROLE_SSM_NORM].t || /* (Falcon-H1's without mamba_rms_norm have none) */
         ref->rmsnorm(ref, &w[MODEL_ROLE_SSM_NORM], y, n * G, inner / G, hp->eps, y) == KERN_OK);
    if (ok)
        memcpy(out, y + (size_t)pos0 * inner, (size_t)T * inner * sizeof *out);
    free(buf);
    return ok;
}

/* A Mamba-1 mixer's output (mamba1.c's block before ssm_out) on the chunk's rows, replayed from zero states over the
 * side's own attn_norm rows from the first position: the products in the side's numerics, the convolution, the norms
 * (Falcon-Mamba's, Jamba's), the scan and the gate by the reference. */
static bool derive_mamba1(cmp_state *s, int side, int il, int pos0, int T, float *out)
{
    const engine_hparams *hp = &s->m->hp;
    const attn_history *h = &s->h;
    kern_backend *ref = s->d.be[KERN_NUMERICS_EXACT];
    const int E = hp->n_embd, n = pos0 + T, I = hp->m2_inner, S = hp->dn_d, R = hp->m1_dt_rank;
    if (!replayable(s, side, n))
        return false;
    kern_weight w[MODEL_ROLE_COUNT];
    host_weights(s->m, il, w);
    const size_t xdb_w = (size_t)R + 2 * (size_t)S, xbc_w = (size_t)I + 2 * (size_t)S;
    const size_t per_row = 7 * (size_t)I + xdb_w + 2 * (size_t)S + xbc_w + (size_t)R; /* proj (2), x, z, conv, dt, y */
    const kern_weight *dt_gains = w[MODEL_ROLE_SSM_DT_NORM].t ? &w[MODEL_ROLE_SSM_DT_NORM] : NULL;
    const kern_weight *b_gains = w[MODEL_ROLE_SSM_B_NORM].t ? &w[MODEL_ROLE_SSM_B_NORM] : NULL;
    const kern_weight *c_gains = w[MODEL_ROLE_SSM_C_NORM].t ? &w[MODEL_ROLE_SSM_C_NORM] : NULL;
    float *buf = calloc((size_t)n * per_row + (size_t)(hp->dn_conv - 1) * I + (size_t)I * S, sizeof *buf);
    if (!buf)
        return false;
    float *proj = buf, *x = proj + (size_t)n * 2 * I, *z = x + (size_t)n * I, *conv = z + (size_t)n * I;
    float *dt = conv + (size_t)n * I, *y = dt + (size_t)n * I, *xdb = y + (size_t)n * I, *bc = xdb + (size_t)n * xdb_w;
    float *c = bc + (size_t)n * S; /* B's rows, then C's */
    float *xbc = bc + (size_t)n * 2 * S, *dt_low = xbc + (size_t)n * xbc_w, *conv_state = dt_low + (size_t)n * R;
    float *state = conv_state + (size_t)(hp->dn_conv - 1) * I;
    const bool rms = hp->m1_dt_b_c_rms; /* (Falcon-Mamba's: no gains; Jamba's have them) */
    const bool ok =
        cmp_product(s, side, &w[MODEL_ROLE_SSM_IN], NULL, h->norm[side] + (size_t)il * h->n_pos * E, n, E, proj) &&
        ref->copy_rows(ref, x, (size_t)I, proj, 2 * (size_t)I, n, I) == KERN_OK &&
        ref->copy_rows(ref, z, (size_t)I, proj + I, 2 * (size_t)I, n, I) == KERN_OK &&
        ref->ssm_conv(ref, &w[MODEL_ROLE_SSM_CONV1D], &w[MODEL_ROLE_SSM_CONV1D_BIAS], x, n, I, hp->dn_conv, true,
                      conv_state, conv) == KERN_OK &&
        cmp_product(s, side, &w[MODEL_ROLE_SSM_X], NULL, conv, n, I, xdb) &&
        ref->copy_rows(ref, dt_low, (size_t)R, xdb, xdb_w, n, R) == KERN_OK &&
        ref->copy_rows(ref, bc, (size_t)S, xdb + R, xdb_w, n, S) == KERN_OK &&
        ref->copy_rows(ref, c, (size_t)S, xdb + R + S, xdb_w, n, S) == KERN_OK &&
        (!(rms || dt_gains) || ref->rmsnorm(ref, dt_gains, dt_low, n, R, hp->eps, dt_low) == KERN_OK) &&
        (!(rms || b_gains) || ref->rmsnorm(ref, b_gains, bc, n, S, hp->eps, bc) == KERN_OK) &&
        (!(rms || c_gains) || ref->rmsnorm(ref, c_gains, c, n, S, hp->eps, c) == KERN_OK) &&
        cmp_product(s, side, &w[MODEL_ROLE_SSM_DT_PROJ], NULL, dt_low, n, R, dt) &&
        ref->copy_rows(ref, xbc, xbc_w, conv, (size_t)I, n, I) == KERN_OK &&
        ref->copy_rows(ref, xbc + I, xbc_w, bc, (size_t)S, n, S) == KERN_OK &&
        ref->copy_rows(ref, xbc + I + S, xbc_w, c, (size_t)S, n, S) == KERN_OK &&
        ref->ssm_scan(ref, xbc, dt, (size_t)I, &w[MODEL_ROLE_SSM_DT], &w[MODEL_ROLE_SSM_A], &w[MODEL_ROLE_SSM_D], state,
                      n, I, 1, 1, S, y) == KERN_OK &&
        ref->glu(ref, KERN_ACT_SILU, z, y, (size_t)n * I, (size_t)I, y) == KERN_OK;
    if (ok)
        memcpy(out, y + (size_t)pos0 * I, (size_t)T * I * sizeof *out);
    free(buf);
    return ok;
}

/* LFM2's short convolution (delta_net.c's engine_shortconv_block before out_proj) on the chunk's rows, replayed from a
 * zero state over the side's own attn_norm rows from the first position: the projection in the side's numerics, the
 * products of its thirds and the convolution by the reference. */
static bool derive_shortconv(cmp_state *s, int side, int il, int pos0, int T, float *out)
{
    const engine_hparams *hp = &s->m->hp;
    const attn_history *h = &s->h;
    kern_backend *ref = s->d.be[KERN_NUMERICS_EXACT];
    const int E = hp->n_embd, n = pos0 + T;
    if (!replayable(s, side, n))
        return false;
    const kern_weight in = { .t = s->m->layers[il].w[MODEL_ROLE_SHORTCONV_IN].t };
    const kern_weight taps = { .t = s->m->layers[il].w[MODEL_ROLE_SHORTCONV_CONV].t };
    const size_t rows = (size_t)n * E;
    float *buf = calloc(6 * rows + (size_t)(hp->dn_conv - 1) * E, sizeof *buf);
    if (!buf)
        return false;
    float *bcx = buf, *b = bcx + 3 * rows, *c = b + rows, *x = c + rows, *state = x + rows;
    bool ok = cmp_product(s, side, &in, NULL, h->norm[side] + (size_t)il * h->n_pos * E, n, E, bcx);
    float *const parts[3] = { b, c, x };
    for (int i = 0; i < 3 && ok; i++)
        ok = ref->copy_rows(ref, parts[i], (size_t)E, bcx + (size_t)i * E, 3 * (size_t)E, n, E) == KERN_OK;
    ok = ok && ref->glu(ref, KERN_ACT_NONE, b, x, rows, (size_t)E, b) == KERN_OK &&
         ref->ssm_conv(ref, &taps, NULL, b, n, E, hp->dn_conv, false, state, x) == KERN_OK &&
         ref->glu(ref, KERN_ACT_NONE, c, x, rows, (size_t)E, x) == KERN_OK;
    if (ok)
        memcpy(out, x + (size_t)pos0 * E, (size_t)T * E * sizeof *out);
    free(buf);
    return ok;
}

bool cmp_derive_mixer(cmp_state *s, int side, int il, int pos0, int T, float *out)
{
    const engine_hparams *hp = &s->m->hp;
    return hp->shortconv ? derive_shortconv(s, side, il, pos0, T, out)
           : hp->mamba2  ? derive_mamba2(s, side, il, pos0, T, out)
           : hp->mamba1  ? derive_mamba1(s, side, il, pos0, T, out)
                         : derive_delta_net(s, side, il, pos0, T, out);
}

/* Falcon-H1's block output (model_arch.mixer_beside): attn_output of the side's attention rows, plus ssm_out of its
 * Mamba-2 mixer replayed from the side's own attn_norm rows (derive_mamba2). */
bool cmp_derive_beside(cmp_state *s, int side, int il, int pos0, int T, int q_dim, float *out)
{
    const engine_hparams *hp = &s->m->hp;
    const kern_weight *w = s->m->layers[il].w;
    const int E = hp->n_embd, inner = hp->m2_inner;
    float *y = malloc((size_t)T * ((size_t)inner + (size_t)E) * sizeof *y);
    if (!y)
        return false;
    float *mixed = y + (size_t)T * inner;
    const kern_weight *bias = w[MODEL_ROLE_ATTN_OUT_BIAS].t ? &w[MODEL_ROLE_ATTN_OUT_BIAS] : NULL;
    const float *att = cmp_side_rows(s, side, ENGINE_OP_ATTN, il, q_dim);
    const bool ok = cmp_product(s, side, &w[MODEL_ROLE_ATTN_OUT], bias, att, T, q_dim, out) &&
                    derive_mamba2(s, side, il, pos0, T, y) &&
                    cmp_product(s, side, &w[MODEL_ROLE_SSM_OUT], NULL, y, T, inner, mixed) &&
                    cmp_add_rows(out, mixed, NULL, 1.0f, (size_t)T * E, out);
    free(y);
    return ok;
}
