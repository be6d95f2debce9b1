/*
 * --compare's re-derivation of the feed-forward block (compare_derive.c's op by op): the gated activation of a dense
 * block, and a mixture of experts' output (routing, each chosen expert, the shared expert), each from one side's own
 * inputs in its own numerics.
 */
#include "compare_internal.h"
#include "quant.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* GELU times up as llama.cpp defines it (kern_gelu_ggml: a table of f16 inputs and outputs), at the host's gate x
 * rounded to its f16 or either neighbour, whichever lands nearest the side's own value `own`: the side's gate
 * differs from x by its summation order, and where x lies near the middle between two f16 values that can round
 * it to the neighbour and move the value by up to 2^-10 of itself (the smooth tanh-GELU lies up to 2^-11 from
 * the table anyway: 9e-4 of a row on the real gemma-3). A wrong activation (1 % off) is far from all three. Outside
 * (-10, 10) the definition needs no table. */
static double gelu_up_nearest(float x, double up, float own)
{
    if (!(x > -10.0f && x < 10.0f))
        return kern_gelu_ggml(x) * up;  /* 0 or x itself out there: no table */
    const uint16_t h = quant_f32_to_f16(x);
    double best = kern_gelu_ggml(quant_f16_to_f32(h)) * up;
    for (int step = -1; step <= 1; step += 2) {
        const uint16_t n = (uint16_t)(h + step);
        if ((n & 0x7fff) >= 0x7c00 || ((h ^ n) & 0x8000))
            continue;  /* past the largest finite f16, or across the sign */
        const double v = kern_gelu_ggml(quant_f16_to_f32(n)) * up;
        if (fabs(v - own) < fabs(best - own))
            best = v;
    }
    return best;
}

/* engine_limited_swiglu by backend b in the model's form (plain SiLU where limit is 0). */
static bool limited_swiglu(const cmp_state *s, kern_backend *b, float limit, float *gate, float *up, size_t n,
                           size_t F, float *out)
{
    return engine_limited_swiglu(b, limit, s->m->hp.desc->swiglu_clamp_silu_first, gate, up, n, F, out) == KERN_OK;
}

/* act(gate) * up of the side's ffn_norm rows: the two products in the side's numerics, then SiLU as the reference
 * defines it or GELU as gelu_up_nearest takes it. */
bool cmp_derive_glu(cmp_state *s, int side, int il, int T, float *out)
{
    const engine_hparams *hp = &s->m->hp;
    const kern_weight *w = s->m->layers[il].w;
    const int E = hp->n_embd, F = s->m->layers[il].n_ff;
    cmp_deriving *d = &s->d;
    const float *h = cmp_side_rows(s, side, ENGINE_OP_FFN_NORM, il, E);
    const float *own = cmp_side_rows(s, side, ENGINE_OP_FFN_ACT, il, F);
    float *gate = cmp_room(&d->gate, &d->cap_gate, (size_t)T * F), *up = cmp_room(&d->up, &d->cap_up, (size_t)T * F);
    if (!own || !gate || !up || !cmp_product(s, side, &w[MODEL_ROLE_FFN_UP], &w[MODEL_ROLE_FFN_UP_BIAS], h, T, E, up))
        return false;
    if (!w[MODEL_ROLE_FFN_GATE].t && hp->act_xielu) { /* Apertus's: xIELU(up), as the reference defines it */
        kern_backend *ref = d->be[KERN_NUMERICS_EXACT];
        return ref->xielu(ref, up, (size_t)T * F, &s->m->layers[il].xielu, out) == KERN_OK;
    }
    if (!w[MODEL_ROLE_FFN_GATE].t && hp->act_squared) { /* Nemotron-H's block without a gate: relu(up)^2 */
        kern_backend *ref = d->be[KERN_NUMERICS_EXACT];
        return ref->glu(ref, hp->act, up, up, (size_t)T * F, (size_t)F, out) == KERN_OK;
    }
    if (!w[MODEL_ROLE_FFN_GATE].t) { /* StarCoder2's: GELU(up) alone, as gelu_up_nearest takes it with up 1 */
        for (size_t i = 0; i < (size_t)T * F; i++)
            out[i] = (float)gelu_up_nearest(up[i], 1.0f, own[i]);
        return true;
    }
    if (!cmp_product(s, side, &w[MODEL_ROLE_FFN_GATE], &w[MODEL_ROLE_FFN_GATE_BIAS], h, T, E, gate))
        return false;
    if (hp->act == KERN_ACT_SILU) /* (under the layer's limit where it has one: Step-3.5's dense layers) */
        return limited_swiglu(s, d->be[KERN_NUMERICS_EXACT], s->m->layers[il].shexp_clamp, gate, up, (size_t)T * F,
                              (size_t)F, out);
    for (size_t i = 0; i < (size_t)T * F; i++)
        out[i] = (float)gelu_up_nearest(gate[i], up[i], own[i]);
    return true;
}

/* The gate or up product of a gated block (one row h, E values, into y: F values) as the side's down product will
 * see it. The definition's product (cmp_product) and, for a GGML side, that numerics' own host kernel's: the two sum
 * in other orders, so they part by ulps, and the down product rounds the activation to 8 bits (or f16), where an ulp
 * can move a value across a rounding step: 1e-3 of the down product's row (1e-4 in f16), a difference of the
 * definition's order and not of the side. Where the kernel's product is within 1e-5 of the definition's (of the row's
 * largest), its values go on, so the down product rounds what the side rounded; where it is not, the definition's
 * do, and the side's departure shows. */
static bool gate_up_product(cmp_state *s, int side, const kern_weight *w, const kern_weight *bias, const float *h,
                            int F, float *y)
{
    cmp_deriving *d = &s->d;
    const int E = s->m->hp.n_embd;
    if (!cmp_product(s, side, w, bias, h, 1, E, y))
        return false;
    kern_backend *own = d->be[KERN_NUMERICS_GGML];
    float *k = d->numerics[side] == KERN_NUMERICS_GGML && own ? cmp_room(&d->own_product, &d->cap_own_product, (size_t)F)
                                                              : NULL;
    const kern_weight wh = { .t = w->t }, bh = { .t = bias ? bias->t : NULL }; /* the file's bytes, as cmp_product */
    /* (a per-tensor scale: the product times it, then the bias, as the forward pass takes them) */
    if (!k || own->matmul(own, &wh, bh.t && !w->scaled ? &bh : NULL, h, 1, k) != KERN_OK)
        return true;
    if (w->scaled) {
        for (int i = 0; i < F; i++)
            k[i] *= w->scale;
        if (bh.t && own->add_bias(own, &bh, 1, F, k) != KERN_OK)
            return true;
    }
    double worst = 0.0, largest = 0.0;
    for (int i = 0; i < F; i++) {
        worst = fmax(worst, fabs((double)k[i] - (double)y[i]));
        largest = fmax(largest, fabs((double)y[i]));
    }
    if (worst <= 1e-5 * largest)
        memcpy(y, k, (size_t)F * sizeof(float));
    return true;
}

/* One gated block (gate, up, down with their biases where given) of one row h (E values) into out (E): the products
 * (gate_up_product: as the side's down product will round them), their limit where limit > 0, and the activation in
 * the side's numerics (SiLU or gpt-oss's: the reference's in double for an exact side, the side's own exponential for
 * a GGML one). */
static bool gated_block(cmp_state *s, int side, const kern_weight *const w[3], const kern_weight *const bias[3], int F,
                        float limit, const float *h, float *out)
{
    cmp_deriving *d = &s->d;
    kern_backend *ref = d->be[d->numerics[side]] ? d->be[d->numerics[side]] : d->be[KERN_NUMERICS_EXACT];
    float *gate = cmp_room(&d->gate, &d->cap_gate, (size_t)F), *up = cmp_room(&d->up, &d->cap_up, (size_t)F);
    const bool ungated = !w[0] || !w[0]->t; /* Nemotron-H's experts: relu(up)^2 */
    const bool limited = !ungated && limit > 0.0f && s->m->hp.act == KERN_ACT_SILU;
    return gate && up && ref && s->m->hp.act != KERN_ACT_GELU_TANH &&
           (ungated || gate_up_product(s, side, w[0], bias[0], h, F, gate)) &&
           gate_up_product(s, side, w[1], bias[1], h, F, up) &&
           (limited ? limited_swiglu(s, ref, limit, gate, up, (size_t)F, (size_t)F, gate)
                    : ref->glu(ref, s->m->hp.act, ungated ? up : gate, up, (size_t)F, (size_t)F, gate) == KERN_OK) &&
           cmp_product(s, side, w[2], bias[2], gate, 1, F, out);
}

/* A mixture of experts' output from the side's ffn_norm rows, as the forward pass defines it: the router's logits
 * (its bias), the experts engine_route picks, each chosen expert's output times its weight summed in order, the
 * shared expert times the sigmoid of its gate; where the weight scales the expert's input (Llama 4), the input times
 * it and the outputs summed as they are. Routing is re-derived too: a side whose router logits sit near a tie
 * may pick another expert, which shows as a difference here (rare; the logits' own difference is small). The router
 * reads the layer's input where the model routes on it (SmallThinker's). */
bool cmp_derive_experts(cmp_state *s, int side, int il, int pos0, int T, float *out)
{
    const engine_model *m = s->m;
    const engine_hparams *hp = &m->hp;
    const engine_layer *L = &m->layers[il];
    const kern_weight *w = L->w;
    const int E = hp->n_embd, n_exp = hp->n_expert, k = hp->n_expert_used;
    const float *h = cmp_side_rows(s, side, ENGINE_OP_FFN_NORM, il, E);
    float logits[1024], probs[2 * 1024], weights[1024], sh = 0.0f, *tmp = malloc((size_t)E * sizeof(float));
    float *scaled = malloc((size_t)E * sizeof(float));
    int ids[1024];
    const bool before = hp->desc->moe_weight_before;
    float *layer_in = hp->desc->router_on_input ? malloc((size_t)T * E * sizeof(float)) : NULL;
    const float *routed = layer_in ? cmp_residual_in(s, side, il, pos0, T, layer_in) : h;
    bool ok = h && routed && tmp && scaled && n_exp <= 1024 && (layer_in || !hp->desc->router_on_input);
    for (int t = 0; ok && t < T; t++) {
        const float *ht = h + (size_t)t * E;
        float *ot = out + (size_t)t * E;
        ok = cmp_product(s, side, &w[MODEL_ROLE_FFN_GATE_INP],
                     w[MODEL_ROLE_FFN_GATE_INP_BIAS].t ? &w[MODEL_ROLE_FFN_GATE_INP_BIAS] : NULL,
                     routed + (size_t)t * E, 1, E, logits);
        if (ok)
            engine_route(hp, L->select_bias, logits, probs, ids, weights);
        for (int j = 0; ok && j < k; j++) {
            const int e = ids[j];
            const kern_weight *const ew[3] = { L->experts[ENGINE_EXPERT_GATE] ? &L->experts[ENGINE_EXPERT_GATE][e] : NULL,
                                               &L->experts[ENGINE_EXPERT_UP][e], &L->experts[ENGINE_EXPERT_DOWN][e] };
            const kern_weight *eb[3];
            for (int part = 0; part < 3; part++)
                eb[part] = L->experts[ENGINE_EXPERT_GATE_BIAS + part] ? &L->experts[ENGINE_EXPERT_GATE_BIAS + part][e]
                                                                      : NULL;
            for (int i = 0; before && i < E; i++)
                scaled[i] = ht[i] * weights[j];
            ok = gated_block(s, side, ew, eb, hp->n_ff_exp, L->expert_clamp, before ? scaled : ht,
                             j == 0 ? ot : tmp);
            const float wj = before ? 1.0f : weights[j];
            for (int i = 0; ok && i < E; i++)
                ot[i] = j == 0 ? ot[i] * wj : ot[i] + tmp[i] * wj;
        }
        if (ok && w[MODEL_ROLE_FFN_UP_SHEXP].t) {
            const kern_weight *const sw[3] = { &w[MODEL_ROLE_FFN_GATE_SHEXP], &w[MODEL_ROLE_FFN_UP_SHEXP],
                                               &w[MODEL_ROLE_FFN_DOWN_SHEXP] };
            const kern_weight *const no_bias[3] = { 0 };
            const bool gated = w[MODEL_ROLE_FFN_GATE_INP_SHEXP].t;
            ok = (!gated || cmp_product(s, side, &w[MODEL_ROLE_FFN_GATE_INP_SHEXP], NULL, ht, 1, E, &sh)) &&
                 gated_block(s, side, sw, no_bias, hp->n_ff_shexp, L->shexp_clamp, ht, tmp);
            const float mean = hp->desc->shexp_mean ? 0.5f : 1.0f; /* (Cohere2 MoE's average of the two) */
            for (int i = 0; ok && i < E; i++)
                ot[i] = (ot[i] + (gated ? tmp[i] * (1.0f / (1.0f + expf(-sh))) : tmp[i])) * mean;
        }
    }
    free(tmp);
    free(scaled);
    free(layer_in);
    return ok;
}
