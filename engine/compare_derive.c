/*
 * Every op of a layer re-derived from one side's own inputs, for the comparison of two backends (compare.c).
 *
 * A row beyond the tolerance is no divergence when each side equals, within the tolerance, what the op gives on
 * that side's own inputs: the difference came in with the inputs. Three ops can move much more than their inputs
 * (softmax, RMSNorm's per-channel gains with outlier channels, GELU through llama.cpp's table of f16 inputs), and a
 * side in llama.cpp's numerics (cpu:ggml) rounds every product's activations, which moves every op by percents.
 * So the re-derivation follows each side's numerics where they are a definition: a GGML side's activations are
 * rounded to the weight type's activation type (quant_act_quantize) before the host's exact product, and its
 * rotary angles are stepped in f32 as llama.cpp steps them. Everything else is the op's definition as the reference
 * backend computes it (kern_ref_create: products by the exact CPU backend, norms, attention, SiLU and soft-capping
 * in double), GELU by llama.cpp's f16 table (its definition, which every backend computes) at the nearest of three
 * f16 inputs (gelu_up_nearest). A side whose op is wrong
 * (weights, bias, rotary, cache, residual) does not equal its re-derivation, and the comparison names the op and
 * that side.
 */
#include "compare_internal.h"
#include "quant.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* T rows of n values through the reference's RMSNorm with the gains of w (out may be x). */
static bool norm_rows(cmp_state *s, const kern_weight *w, const float *x, int T, int n, float *out)
{
    kern_backend *ref = s->d.be[KERN_NUMERICS_EXACT];
    const kern_weight g = { .t = w ? w->t : NULL };
    return ref && x && (!w || g.t) && ref->rmsnorm(ref, w ? &g : NULL, x, T, n, s->m->hp.eps, out) == KERN_OK;
}

/* A block's norm (attn_norm, ffn_norm, the post-norms, output_norm) as the model has them: RMSNorm, or LayerNorm
 * (Cohere's), plus its bias where bias is bound (StarCoder2's, PhiMoE's), as the reference defines it. */
static bool block_norm_bias_rows(cmp_state *s, const kern_weight *w, const kern_weight *bias, const float *x, int T,
                                 int n, float *out)
{
    kern_backend *ref = s->d.be[KERN_NUMERICS_EXACT];
    if (!s->m->hp.norm_layer) { /* (PhiMoE's RMSNorms add a bias after the gains; Talkie's have no gains) */
        const kern_weight b = { .t = bias ? bias->t : NULL };
        const bool gains = !s->m->hp.desc->norms_without_gains;
        return norm_rows(s, gains ? w : NULL, x, T, n, out) && (!b.t || ref->add_bias(ref, &b, T, n, out) == KERN_OK);
    }
    const kern_weight g = { .t = w->t }, b = { .t = bias ? bias->t : NULL };
    const bool gains = !s->m->hp.desc->norms_without_gains; /* OLMo's have none */
    return ref && x && (g.t || !gains) &&
           ref->layernorm(ref, g.t ? &g : NULL, b.t ? &b : NULL, x, T, n, s->m->hp.eps, out) == KERN_OK;
}

/* clamp_kqv's clamp of a q, k or v product (where the model has one: MPT's, OLMo's), as the forward pass applies it */
static bool clamp_kqv(cmp_state *s, float *x, size_t n)
{
    kern_backend *ref = s->d.be[KERN_NUMERICS_EXACT];
    const float cl = s->m->hp.g.clamp_kqv;
    return cl <= 0.0f || (ref && ref->clamp(ref, x, n, -cl, cl) == KERN_OK);
}

static bool block_norm_rows(cmp_state *s, const kern_weight *w, const float *x, int T, int n, float *out)
{
    return block_norm_bias_rows(s, w, NULL, x, T, n, out);
}

/* The rows x (T, n) as a side's product meets them: a GGML side rounds them to the activation type of the weight's
 * type (as llama.cpp's CPU backend does; the rounded rows stay in d->act), which the exact product then multiplies
 * as they are. */
static const float *as_multiplied(cmp_state *s, int side, const gguf_tensor *w, const float *x, int T, int n)
{
    cmp_deriving *d = &s->d;
    const uint32_t act = quant_act_type(w->type);
    if (d->numerics[side] != KERN_NUMERICS_GGML || act == GGUF_TENSOR_COUNT || act == GGUF_TENSOR_F32)
        return x;
    const uint64_t rb = quant_act_row_bytes(act, n);
    float *xr = cmp_room(&d->act_f, &d->cap_act_f, (size_t)T * n);
    if (!rb || !xr || !cmp_grow((void **)&d->act, &d->cap_act, (size_t)T * rb, 1))
        return NULL;
    for (int t = 0; t < T; t++)
        if (quant_act_quantize(act, x + (size_t)t * n, d->act + t * rb, n) != QUANT_OK ||
            quant_dequantize_row(act, d->act + t * rb, xr + (size_t)t * n, n) != QUANT_OK)
            return NULL;
    return xr;
}

/* y (T, rows of w) = x (T, n) @ w^T (+ bias) as the op defines it, in the side's numerics: for a GGML side, the
 * exact product of its rounded activations plus what llama.cpp's dots add beyond that (Q8_1's f16 sums). */
bool cmp_product(cmp_state *s, int side, const kern_weight *w, const kern_weight *bias, const float *x, int T, int n,
                 float *y)
{
    kern_backend *be = s->d.be[KERN_NUMERICS_EXACT];
    if (!be || !x || !y || !w->t || w->t->ne[0] != (uint64_t)n)
        return false;
    const gguf_tensor *t = w->t;
    const float *xr = as_multiplied(s, side, t, x, T, n);
    const kern_weight wh = { .t = t }, bh = { .t = bias ? bias->t : NULL };
    /* a per-tensor scale multiplies the product before its bias (pass.h's run_product) */
    const kern_weight *const b_in = bh.t && !w->scaled ? &bh : NULL;
    if (!xr || be->matmul(be, &wh, b_in, xr, T, y) != KERN_OK)
        return false;
    const size_t rows = (size_t)t->ne[1];
    if (xr != x && quant_act_type(t->type) == GGUF_TENSOR_Q8_1) {
        const size_t wb = t->size / rows, ab = quant_act_row_bytes(GGUF_TENSOR_Q8_1, n);
        for (int i = 0; i < T; i++)
            for (size_t r = 0; r < rows; r++)
                y[i * rows + r] += (float)quant_act_sum_correction(t->type, t->data + r * wb, s->d.act + i * ab, n);
    }
    if (!w->scaled)
        return true;
    for (size_t i = 0; i < (size_t)T * rows; i++)
        y[i] *= w->scale;
    return !bh.t || be->add_bias(be, &bh, T, (int)rows, y) == KERN_OK;
}

/* The residual stream entering layer il: the previous layer's output, or for the first layer the chunk's
 * embeddings, looked up and scaled by the host backend as the forward pass does it. */
/* The embeddings of the chunk's tokens at positions pos0.. as the model makes them (learned positions added, normed,
 * scaled), from the host's exact backend. */
static const float *host_embeddings(cmp_state *s, int pos0, int T, float *out)
{
    const engine_model *m = s->m;
    kern_backend *be = s->d.be[KERN_NUMERICS_EXACT];
    const kern_weight emb = { .t = m->tok_embd.t }, pos = { .t = m->pos_embd.t };
    if (!be || !emb.t || !s->toks || be->embed(be, &emb, s->toks, T, out) != KERN_OK)
        return NULL;
    if (pos.t && be->add_rows(be, &pos, pos0, T, out) != KERN_OK)
        return NULL;
    const kern_weight norm = { .t = m->embd_norm.t }, bias = { .t = m->embd_norm_b.t };
    if (norm.t && be->layernorm(be, &norm, bias.t ? &bias : NULL, out, T, m->hp.n_embd, m->hp.eps, out) != KERN_OK)
        return NULL;
    if (m->hp.desc->embd_skip && be->rmsnorm(be, NULL, out, T, m->hp.n_embd, m->hp.eps, out) != KERN_OK)
        return NULL; /* Talkie's RMSNorm without gains */
    if (m->hp.embd_scale != 1.0f && be->scale(be, out, (size_t)T * m->hp.n_embd, m->hp.embd_scale) != KERN_OK)
        return NULL;
    return out;
}

/* The residual entering layer il on one side: the previous layer's output, or the side's own embeddings (the host's
 * when the side showed none). */
const float *cmp_residual_in(cmp_state *s, int side, int il, int pos0, int T, float *scratch)
{
    const int E = s->m->hp.n_embd;
    if (il > 0 && model_hparams_layer_ends_loop(&s->m->hp.g, il - 1)) { /* a looped model's pass ends: its final norm */
        const float *x = cmp_side_rows(s, side, ENGINE_OP_LAYER_OUT, il - 1, E);
        return x && block_norm_bias_rows(s, &s->m->output_norm, &s->m->output_norm_b, x, T, E, scratch) ? scratch
                                                                                                        : NULL;
    }
    if (il > 0)
        return cmp_side_rows(s, side, ENGINE_OP_LAYER_OUT, il - 1, E);
    const float *embd = cmp_side_rows(s, side, ENGINE_OP_EMBD, 0, E);
    return embd ? embd : host_embeddings(s, pos0, T, scratch);
}

/* What the attention (or FFN) block adds to the residual: its post-norm's rows where the model has one. */
static const float *block_output(const cmp_state *s, int side, int il, engine_op post, engine_op plain, int role)
{
    const int E = s->m->hp.n_embd;
    return cmp_side_rows(s, side, s->m->layers[il].w[role].t ? post : plain, il, E);
}

/* out = a + s b (+ s c), each T * E, added in double: the residual and its blocks' outputs, each scaled by the
 * model's residual scale s (granite; 1 elsewhere). */
bool cmp_add_rows(const float *a, const float *b, const float *c, float s, size_t n, float *out)
{
    if (!a || !b)
        return false;
    for (size_t i = 0; i < n; i++)
        out[i] = (float)((double)a[i] + (double)(s * b[i]) + (c ? (double)(s * c[i]) : 0.0));
    return true;
}

/* The attention of the chunk's query rows over the side's own k and v history, as the reference defines it (the
 * layer's grouped heads, scale and sliding window). */
static bool derive_attention(cmp_state *s, int side, int il, int pos0, int T, float *out)
{
    const attn_history *h = &s->h;
    kern_backend *ref = s->d.be[KERN_NUMERICS_EXACT];
    const float *q = cmp_side_rows(s, side, ENGINE_OP_Q, il, s->m->layers[il].n_head * s->m->layers[il].head_dim);
    if (!ref || !q || !h->kv[0][0] || pos0 + T > h->n_pos)
        return false;
    const size_t layer = (size_t)s->m->layers[il].kv_src * h->n_pos * h->kv_dim; /* (an earlier layer's: Gemma 4) */
    const kern_attn a = engine_layer_attn(s->m, il);
    return ref->attention(ref, q, h->kv[side][0] + layer, h->kv[side][1] + layer, T, pos0, &a, out) == KERN_OK;
}

/* The gated attention's q product (Qwen3.5: each head's query then its gate, 2 head_dim a head) of the side's attn_norm
 * rows in, into the deriving scratch. */
static float *gated_q(cmp_state *s, int side, int il, int T, const float *in)
{
    const engine_hparams *hp = &s->m->hp;
    cmp_deriving *d = &s->d;
    float *both = cmp_room(&d->gate, &d->cap_gate, (size_t)T * 2 * hp->n_head * hp->head_dim);
    return both && cmp_product(s, side, &s->m->layers[il].w[MODEL_ROLE_ATTN_Q], NULL, in, T, hp->n_embd, both) ? both : NULL;
}

/* An output gate's factor, in double: the sigmoid, or Laguna's softplus */
static double gate_factor(kern_act act, double g)
{
    return act == KERN_ACT_SOFTPLUS ? (g > 0.0 ? g + log1p(exp(-g)) : log1p(exp(g))) : 1.0 / (1.0 + exp(-g));
}

/* The attention's output rows (T, n_head x head_dim) times each head's (or each value's) gate, from the side's own
 * attn_norm rows. */
static bool gate_attention(cmp_state *s, int side, int il, int T, float *out)
{
    const engine_hparams *hp = &s->m->hp;
    const float *in = cmp_side_rows(s, side, ENGINE_OP_ATTN_NORM, il, hp->n_embd);
    const engine_layer *L = &s->m->layers[il];
    if (L->gate_heads || hp->attn_gate_proj) { /* Step-3.5: a gate per head (where the layer has attn_gate); AFMoE
                                                * a gate per value, a product of its own; Laguna either, by layer */
        if (!L->w[MODEL_ROLE_ATTN_GATE].t)
            return true;
        cmp_deriving *d = &s->d;
        const size_t values = (size_t)T * L->n_head * L->v_dim, n = L->gate_heads ? (size_t)T * L->n_head : values;
        const size_t per = L->gate_heads ? (size_t)L->v_dim : 1; /* the values one gate multiplies */
        float *gate = cmp_room(&d->gate, &d->cap_gate, n);
        if (!gate || !cmp_product(s, side, &L->w[MODEL_ROLE_ATTN_GATE], NULL, in, T, hp->n_embd, gate))
            return false;
        for (size_t i = 0; i < values; i++)
            out[i] = (float)(out[i] * gate_factor(hp->attn_gate_act, gate[i / per]));
        return true;
    }
    const float *both = gated_q(s, side, il, T, in);
    if (!both)
        return false;
    const int hd = hp->head_dim;
    for (size_t r = 0; r < (size_t)T * hp->n_head; r++)
        for (int i = 0; i < hd; i++)
            out[r * hd + i] = (float)(out[r * hd + i] / (1.0 + exp(-(double)both[r * 2 * hd + hd + i])));
    return true;
}

/* q or k: the product with the side's attn_norm rows (+ bias), clamped where the model clamps, each head's RMSNorm
 * where the model has one (qwen3, gemma3; the whole row's in olmo2 and MPT), then the rotation, with the angles of the
 * side's numerics. */
static bool derive_qk(cmp_state *s, int side, bool is_q, int il, int pos0, int T, float *out)
{
    const engine_model *m = s->m;
    const engine_hparams *hp = &m->hp;
    const engine_layer *L = &m->layers[il];
    const int heads = is_q ? L->n_head : L->n_kv_head, hd = L->head_dim;
    const kern_weight *w = &L->w[is_q ? MODEL_ROLE_ATTN_Q : MODEL_ROLE_ATTN_K];
    const kern_weight *bias = L->has_bias ? &L->w[is_q ? MODEL_ROLE_ATTN_Q_BIAS : MODEL_ROLE_ATTN_K_BIAS] : NULL;
    const kern_weight *g = &L->w[is_q ? MODEL_ROLE_ATTN_Q_NORM : MODEL_ROLE_ATTN_K_NORM];
    kern_backend *rot = s->d.be[s->d.numerics[side]];
    const float *in = cmp_side_rows(s, side, ENGINE_OP_ATTN_NORM, il, hp->n_embd);
    if (is_q && hp->attn_out_gated) { /* each head's query, then its gate: the queries taken */
        float *both = gated_q(s, side, il, T, in);
        if (!both)
            return false;
        for (size_t r = 0; r < (size_t)T * heads; r++)
            memcpy(out + r * hd, both + r * 2 * hd, (size_t)hd * sizeof(float));
    } else if (!rot || !cmp_product(s, side, w, bias, in, T, hp->n_embd, out))
        return false;
    if (!rot || !clamp_kqv(s, out, (size_t)T * heads * hd))
        return false;
    const bool norm_after = hp->desc->qk_norm_after_rope; /* Hunyuan's norms come after the rotation */
    const kern_weight *gb = &L->w[is_q ? MODEL_ROLE_ATTN_Q_NORM_BIAS : MODEL_ROLE_ATTN_K_NORM_BIAS];
    if (g->t && hp->qk_norm_full) { /* olmo2's, MPT's: each whole row */
        if (!block_norm_bias_rows(s, g, gb, out, T, heads * hd, out))
            return false;
    } else if (g->t && !norm_after && !block_norm_rows(s, g, out, T * heads, hd, out)) { /* Command R+'s: LayerNorms */
        return false;
    }
    if (!L->no_rope && rot->rope(rot, out, T, heads, hd, pos0, L->swa ? &hp->rope_swa : &hp->rope) != KERN_OK)
        return false;
    const bool gainless_k = !is_q && hp->desc->q_norm_head_gain; /* Talkie's k: normed without gains */
    if ((g->t || gainless_k) && norm_after && !norm_rows(s, g->t ? g : NULL, out, T * heads, hd, out))
        return false;
    if (hp->g.qk_l2_norm && !L->no_rope && !norm_rows(s, NULL, out, T * heads, hd, out))
        return false; /* Llama 4's norm without gains after the rotation */
    for (int t = 0; t < T && is_q; t++) { /* the attention temperature (Ministral 3; Llama 4's layers without rope) */
        const float temp = engine_attn_temperature(hp, L->no_rope, pos0 + t);
        for (int i = 0; i < heads * hd && temp != 1.0f; i++)
            out[(size_t)t * heads * hd + i] *= temp;
    }
    return true;
}

/* The logits: the output projection of the side's final-norm rows (scaled first where MiniCPM3 scales them, plus its
 * bias: phi2's), scaled, soft-capped where the model caps them. */
static bool derive_logits(cmp_state *s, int side, int T, float *out)
{
    const engine_hparams *hp = &s->m->hp;
    const int E = hp->n_embd;
    kern_backend *ref = s->d.be[KERN_NUMERICS_EXACT];
    const float *h = cmp_side_rows(s, side, ENGINE_OP_RESULT_NORM, hp->n_layer, E);
    float *first = hp->g.logit_scale_first && h ? malloc((size_t)T * (size_t)E * sizeof(float)) : NULL;
    if (hp->g.logit_scale_first && h && !first)
        return false;
    if (first) {
        memcpy(first, h, (size_t)T * (size_t)E * sizeof(float));
        h = first;
    }
    const bool ok = (!first || ref->scale(ref, first, (size_t)T * E, hp->logit_scale) == KERN_OK) &&
                    cmp_product(s, side, &s->m->output, &s->m->output_b, h, T, E, out);
    free(first);
    if (!ok)
        return false;
    if (hp->logit_scale != 1.0f && !hp->g.logit_scale_first &&
        ref->scale(ref, out, (size_t)T * hp->n_vocab, hp->logit_scale) != KERN_OK)
        return false;
    return hp->final_softcap <= 0.0f ||
           ref->softcap(ref, out, (size_t)T * hp->n_vocab, hp->final_softcap) == KERN_OK;
}

/* out times a layer's output scale (Gemma 4's; 1: none), as forward.c scales the residual, or the attention's
 * value scale (MiMo-V2's). */
static bool scale_rows(float scale, size_t n, float *out)
{
    for (size_t i = 0; i < n && scale != 1.0f; i++)
        out[i] *= scale;
    return true;
}

/* Talkie's skip: out plus the side's normed embeddings (the first layer's input) times the layer's scale; scratch
 * holds the embeddings where the side showed none. */
static bool add_skip(cmp_state *s, int side, int pos0, int T, const engine_layer *L, float *scratch, float *out)
{
    const float *e = cmp_residual_in(s, side, 0, pos0, T, scratch);
    for (size_t i = 0; e && i < (size_t)T * (size_t)s->m->hp.n_embd; i++)
        out[i] = (float)((double)out[i] + (double)(e[i] * L->embd_skip_scale));
    return e != NULL;
}

/* One side's T rows of op (layer il) into out. */
static bool derive_side(cmp_state *s, int side, engine_op op, int il, int pos0, int T, float *out)
{
    const engine_model *m = s->m;
    const engine_hparams *hp = &m->hp;
    /* the attention's output rows: decompressed by then in latent attention */
    const engine_layer *L = op == ENGINE_OP_RESULT_NORM || op == ENGINE_OP_COUNT ? NULL : &m->layers[il];
    const int E = hp->n_embd, q_dim = L ? L->n_head * (hp->mla ? hp->v_mla : L->v_dim) : 0, F = L ? L->n_ff : 0;
    const kern_weight *w = L ? L->w : NULL;
    cmp_deriving *d = &s->d;
    float *in = cmp_room(&d->in, &d->cap_in, (size_t)T * E);
    if (!in)
        return false;
    /* latent attention's q, k, v and attention are several ops each (mla.c), not re-derived here: judged by the
     * tolerance alone */
    if (hp->mla && (op == ENGINE_OP_Q || op == ENGINE_OP_K || op == ENGINE_OP_V || op == ENGINE_OP_ATTN))
        return false;
    /* Falcon-40B's q, k and v read the attention's own norm, which no probe records: the tolerance judges them */
    if (w && w[MODEL_ROLE_ATTN_NORM_2].t && (op == ENGINE_OP_Q || op == ENGINE_OP_K || op == ENGINE_OP_V))
        return false;
    switch (op) {
    case ENGINE_OP_EMBD: return host_embeddings(s, pos0, T, out) != NULL;
    case ENGINE_OP_ATTN_NORM:
        return block_norm_bias_rows(s, &w[MODEL_ROLE_ATTN_NORM], &w[MODEL_ROLE_ATTN_NORM_BIAS],
                                    cmp_residual_in(s, side, il, pos0, T, in), T, E, out);
    case ENGINE_OP_Q:
    case ENGINE_OP_K: return derive_qk(s, side, op == ENGINE_OP_Q, il, pos0, T, out);
    case ENGINE_OP_V: /* (Gemma 4: the key projection where the layer has none of its own; each head normed) */
        return cmp_product(s, side, &w[w[MODEL_ROLE_ATTN_V].t ? MODEL_ROLE_ATTN_V : MODEL_ROLE_ATTN_K],
                       L->has_bias ? &w[MODEL_ROLE_ATTN_V_BIAS] : NULL,
                       cmp_side_rows(s, side, ENGINE_OP_ATTN_NORM, il, E), T, E, out) &&
               clamp_kqv(s, out, (size_t)T * L->n_kv_head * L->v_dim) &&
               (!hp->desc->v_norm || norm_rows(s, NULL, out, T * L->n_kv_head, L->v_dim, out));
    case ENGINE_OP_ATTN:
        if (m->layers[il].recurrent)
            return cmp_derive_mixer(s, side, il, pos0, T, out);
        return derive_attention(s, side, il, pos0, T, out) &&
               (!(hp->attn_out_gated || hp->attn_gate_proj || m->layers[il].gate_heads) ||
                gate_attention(s, side, il, T, out)) &&
               (!w[MODEL_ROLE_ATTN_SUB_NORM].t || block_norm_rows(s, &w[MODEL_ROLE_ATTN_SUB_NORM], out, T, q_dim, out));
    case ENGINE_OP_ATTN_OUT:
        if (hp->desc->mixer_beside) /* Falcon-H1: the attention's output product plus its mixer's */
            return cmp_derive_beside(s, side, il, pos0, T, q_dim, out);
        if (m->layers[il].recurrent) { /* the delta net's ssm_out, or the convolution's out_proj */
            const int inner = hp->shortconv ? E : hp->mamba2 || hp->mamba1 ? hp->m2_inner : hp->dn_hv * hp->dn_d;
            const kern_weight *wo = &w[hp->shortconv ? MODEL_ROLE_SHORTCONV_OUT : MODEL_ROLE_SSM_OUT];
            return cmp_product(s, side, wo, NULL, cmp_side_rows(s, side, ENGINE_OP_ATTN, il, inner), T, inner, out);
        }
        if (L->linear) /* DeciLM's "linear attention": the output product of the normed input (no bias) */
            return cmp_product(s, side, &w[MODEL_ROLE_ATTN_OUT], NULL,
                               cmp_side_rows(s, side, ENGINE_OP_ATTN_NORM, il, E), T, E, out);
        return cmp_product(s, side, &w[MODEL_ROLE_ATTN_OUT], w[MODEL_ROLE_ATTN_OUT_BIAS].t ? &w[MODEL_ROLE_ATTN_OUT_BIAS] : NULL,
                       cmp_side_rows(s, side, ENGINE_OP_ATTN, il, q_dim), T, q_dim, out) &&
               scale_rows(hp->g.attn_value_scale != 0.0f ? hp->g.attn_value_scale : 1.0f, (size_t)T * E, out);
    case ENGINE_OP_ATTN_POST_NORM:
        return block_norm_rows(s, &w[MODEL_ROLE_ATTN_POST_NORM], cmp_side_rows(s, side, ENGINE_OP_ATTN_OUT, il, E), T,
                               E, out);
    case ENGINE_OP_FFN_NORM:
        if (hp->g.parallel) { /* a parallel layer's block reads x: its own norm (GPT-NeoX's), or the attention's
                               * (Cohere's) */
            const bool own = w[MODEL_ROLE_FFN_NORM].t != NULL;
            return block_norm_bias_rows(s, &w[own ? MODEL_ROLE_FFN_NORM : MODEL_ROLE_ATTN_NORM],
                                        &w[own ? MODEL_ROLE_FFN_NORM_BIAS : MODEL_ROLE_ATTN_NORM_BIAS],
                                        cmp_residual_in(s, side, il, pos0, T, in), T, E, out);
        }
        if (!L->mixer) /* Nemotron-H's feed-forward layer: its norm reads the layer's input */
            return block_norm_rows(s, &w[MODEL_ROLE_FFN_NORM], cmp_residual_in(s, side, il, pos0, T, in), T, E, out);
        return cmp_add_rows(cmp_residual_in(s, side, il, pos0, T, in),
                        block_output(s, side, il, ENGINE_OP_ATTN_POST_NORM, ENGINE_OP_ATTN_OUT,
                                     MODEL_ROLE_ATTN_POST_NORM),
                        NULL, hp->residual_scale, (size_t)T * E, in) &&
               block_norm_bias_rows(s, &w[MODEL_ROLE_FFN_NORM], &w[MODEL_ROLE_FFN_NORM_BIAS], in, T, E, out);
    case ENGINE_OP_FFN_ACT: /* (BitNet's sub-norm after the activation) */
        return cmp_derive_glu(s, side, il, T, out) &&
               (!w[MODEL_ROLE_FFN_SUB_NORM].t || block_norm_rows(s, &w[MODEL_ROLE_FFN_SUB_NORM], out, T, F, out));
    case ENGINE_OP_FFN_OUT:
        if ((hp->desc->moe_dense_beside || hp->desc->moe_dense_residual ||
             (hp->desc->moe_dense_mean && w[MODEL_ROLE_FFN_UP].t)) &&
            w[MODEL_ROLE_FFN_GATE_INP].t) /* Gemma 4's, Arctic's, Grok-2's dense block beside: the tolerance judges */
            return false;
        if (hp->n_expert > 0)
            return cmp_derive_experts(s, side, il, pos0, T, out);
        return cmp_product(s, side, &w[MODEL_ROLE_FFN_DOWN], &w[MODEL_ROLE_FFN_DOWN_BIAS],
                           cmp_side_rows(s, side, ENGINE_OP_FFN_ACT, il, F), T, F, out);
    case ENGINE_OP_FFN_POST_NORM:
        return block_norm_rows(s, &w[MODEL_ROLE_FFN_POST_NORM], cmp_side_rows(s, side, ENGINE_OP_FFN_OUT, il, E), T, E,
                               out);
    case ENGINE_OP_LAYER_OUT:
        /* Gemma 4's per-layer input, Arctic's two blocks each added apart: the tolerance judges */
        if (w[MODEL_ROLE_PER_LAYER_INP_GATE].t || (hp->desc->moe_dense_residual && w[MODEL_ROLE_FFN_GATE_INP].t))
            return false;
        if (!L->mixer && !L->ffn) { /* DeciLM's layer of neither block: its input as it came */
            const float *x = cmp_residual_in(s, side, il, pos0, T, in);
            if (x)
                memcpy(out, x, (size_t)T * E * sizeof *out);
            return x != NULL;
        }
        if (!L->mixer || !L->ffn) /* Nemotron-H's layer: its one block's output added */
            return cmp_add_rows(cmp_residual_in(s, side, il, pos0, T, in),
                            L->mixer ? block_output(s, side, il, ENGINE_OP_ATTN_POST_NORM, ENGINE_OP_ATTN_OUT,
                                                    MODEL_ROLE_ATTN_POST_NORM)
                                     : block_output(s, side, il, ENGINE_OP_FFN_POST_NORM, ENGINE_OP_FFN_OUT,
                                                    MODEL_ROLE_FFN_POST_NORM),
                            NULL, hp->residual_scale, (size_t)T * E, out);
        return cmp_add_rows(cmp_residual_in(s, side, il, pos0, T, in),
                        block_output(s, side, il, ENGINE_OP_ATTN_POST_NORM, ENGINE_OP_ATTN_OUT,
                                     MODEL_ROLE_ATTN_POST_NORM),
                        block_output(s, side, il, ENGINE_OP_FFN_POST_NORM, ENGINE_OP_FFN_OUT, MODEL_ROLE_FFN_POST_NORM),
                        hp->residual_scale, (size_t)T * E, out) &&
               scale_rows(L->out_scale, (size_t)T * E, out) &&
               (!hp->desc->embd_skip || add_skip(s, side, pos0, T, L, in, out));
    case ENGINE_OP_RESULT_NORM:
        return block_norm_bias_rows(s, &m->output_norm, &m->output_norm_b,
                                    cmp_side_rows(s, side, ENGINE_OP_LAYER_OUT, hp->n_layer - 1, E), T, E, out);
    case ENGINE_OP_COUNT: return derive_logits(s, side, T, out);
    }
    return false;
}

bool cmp_derive(cmp_state *s, engine_op op, int layer, int pos0, int T, int n)
{
    cmp_deriving *d = &s->d;
    for (int side = 0; side < 2; side++)
        if (!cmp_room(&d->out[side], &d->cap_out[side], (size_t)T * n) ||
            !derive_side(s, side, op, layer, pos0, T, d->out[side]))
            return false;
    return true;
}

void cmp_deriving_free(cmp_deriving *d)
{
    for (int i = 0; i < 2; i++) {
        free(d->out[i]);
        if (d->be[i])
            d->be[i]->destroy(d->be[i]);
    }
    free(d->in);
    free(d->gate);
    free(d->up);
    free(d->own_product);
    free(d->act);
    free(d->act_f);
    memset(d, 0, sizeof *d);
}
