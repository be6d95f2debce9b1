/*
 * The second half of a layer of the forward pass (forward.c): the residual adds, and the feed-forward blocks a layer
 * may have after its attention, each as the architecture's entry says: gated (or not) and dense, the experts
 * (experts.c) alone or beside a dense block (Gemma 4's, Grok-2's, Arctic's), a parallel layer's block on the
 * attention's input (Cohere's, GPT-NeoX's, phi2's), and Gemma 4's per-layer inputs added after it.
 */
#include "pass.h"

#include <math.h>
#include <stddef.h>

/* x += o over n rows of E, and where the backend fuses them and nothing probes the sum, the norm that reads it next
 * (next_norm: NULL when none does) into h with it: then p->normed says h holds it. (An RMSNorm with a bias, PhiMoE's,
 * is not fused.) */
static void residual_add(pass *p, float *x, const float *o, int n, const kern_weight *next_norm, float *h)
{
    engine_ctx *c = p->c;
    const int E = c->m->hp.n_embd;
    const model_arch *a = c->m->hp.desc;
    if (next_norm && next_norm->t && p->be->add_rmsnorm && !p->probe && !c->m->hp.norm_layer &&
        a->need[MODEL_ROLE_ATTN_NORM_BIAS] == MODEL_NEED_ABSENT) {
        if (!p->st)
            pass_check(p, p->be->add_rmsnorm(p->be, x, o, next_norm, n, E, c->m->hp.eps, h),
                       "residual add and the norm after it");
        p->normed = true;
        return;
    }
    run_add(p, "residual add", x, o, (size_t)n * E);
}

/* Gemma 4 E2B / E4B's per-layer inputs of the batch (llama.cpp's gemma4 project_per_layer_inputs): each token's rows of
 * per_layer_token_embd times sqrt(its width), plus the RMS-normed projection of the scaled embeddings times
 * 1/sqrt(n_embd), the sum times 1/sqrt(2); into c->ple (T, n_layer, n_ple). */
void engine_per_layer_inputs(pass *p, const int32_t *tokens, int T)
{
    engine_ctx *c = p->c;
    const engine_model *m = c->m;
    const engine_hparams *hp = &m->hp;
    const size_t n = (size_t)T * hp->n_layer * hp->n_ple;
    run_embed(p, "per_layer_token_embd", &m->ple_embd, tokens, T, c->ple_tmp);
    run_scale(p, "per-layer embedding scale", c->ple_tmp, n, sqrtf((float)hp->n_ple));
    run_product(p, "per_layer_model_proj", &m->ple_proj, NULL, c->x, T, c->ple);
    run_scale(p, "per-layer projection scale", c->ple, n, 1.0f / sqrtf((float)hp->n_embd));
    run_rmsnorm(p, "per_layer_proj_norm", &m->ple_norm, c->ple, T * hp->n_layer, hp->n_ple, hp->eps, c->ple);
    run_add(p, "per-layer inputs", c->ple, c->ple_tmp, n);
    run_scale(p, "per-layer input scale", c->ple, n, 1.0f / sqrtf(2.0f));
}

/* Layer il's per-layer input on rows [r0, T) of the residual (llama.cpp's gemma4 graph): x += post_norm(proj(
 * GELU(inp_gate x) * the layer's per-layer input)). c->gate and c->up are free by then. */
static void per_layer_input(pass *p, int il, int T, int r0)
{
    engine_ctx *c = p->c;
    const engine_hparams *hp = &c->m->hp;
    const kern_weight *w = c->m->layers[il].w;
    const int E = hp->n_embd, P = hp->n_ple, Tr = T - r0;
    float *x = c->x + (size_t)r0 * E, *o = c->o + (size_t)r0 * E;
    const size_t row = (size_t)hp->n_layer * P; /* a token's rows of every layer */
    run_product(p, "inp_gate", &w[MODEL_ROLE_PER_LAYER_INP_GATE], NULL, x, Tr, c->gate);
    run_copy_rows(p, "the layer's per-layer inputs", c->up, (size_t)P, c->ple + (size_t)r0 * row + (size_t)il * P, row,
                  Tr, P);
    run_glu(p, "GELU(gate) x per-layer input", KERN_ACT_GELU_TANH, c->gate, c->up, (size_t)Tr * P, (size_t)P, c->gate);
    run_product(p, "proj", &w[MODEL_ROLE_PER_LAYER_PROJ], NULL, c->gate, Tr, o);
    run_block_norm(p, "post_norm", &w[MODEL_ROLE_PER_LAYER_POST_NORM], NULL, o, Tr, E, hp->eps, o);
    run_add(p, "residual add (per-layer input)", x, o, (size_t)Tr * E);
}

/* Layer il's dense feed-forward block on the Tr rows of in into out: gated, or without a gate (run_gated_products:
 * Nemotron-H's relu(h Wup)^2, StarCoder2's GELU; Apertus's xIELU), with the biases the layer has (gate and up are its
 * scratch rows). */
static void dense_block(pass *p, int il, int T, int Tr, const float *in, float *gate, float *up, float *out)
{
    const engine_ctx *c = p->c;
    const kern_weight *w = c->m->layers[il].w;
    const int F = c->m->layers[il].n_ff;
    static const char *const gate_up_names[2] = { "ffn_gate", "ffn_up" };
    const kern_weight *const gate_up[2] = { &w[MODEL_ROLE_FFN_GATE], &w[MODEL_ROLE_FFN_UP] };
    const kern_weight *const biases[2] = { pass_bound(&w[MODEL_ROLE_FFN_GATE_BIAS]),
                                           pass_bound(&w[MODEL_ROLE_FFN_UP_BIAS]) };
    if (c->m->hp.act_xielu) { /* Apertus's: xIELU(up) with the layer's parameters, no gate */
        run_product(p, "ffn_up", gate_up[1], biases[1], in, Tr, up);
        run_xielu(p, "xIELU", up, (size_t)Tr * F, &c->m->layers[il].xielu, gate);
    } else {
        /* (llama.cpp's build_ffn limits every gated block by the layer's swiglu_clamp_shexp: Step-3.5's) */
        run_gated_products(p, gate_up, biases, in, Tr, F, c->m->hp.act, gate, up, gate_up_names, "ffn_gate, ffn_up",
                           c->m->layers[il].shexp_clamp);
    }
    if (w[MODEL_ROLE_FFN_SUB_NORM].t) /* BitNet: the activation RMS-normed before ffn_down */
        run_block_norm(p, "ffn_sub_norm", &w[MODEL_ROLE_FFN_SUB_NORM], NULL, gate, Tr, F, c->m->hp.eps, gate);
    pass_look(p, ENGINE_OP_FFN_ACT, c->gate, T, F);
    run_product(p, "ffn_down", &w[MODEL_ROLE_FFN_DOWN], pass_bound(&w[MODEL_ROLE_FFN_DOWN_BIAS]), gate, Tr, out);
}

/* Gemma 4 26B-A4B's layer with experts (llama.cpp's gemma4 graph) on rows [r0, T), the residual c->x and its ffn_norm
 * rows in h: o = post_ffw_norm_1(the dense block on h) + post_ffw_norm_2(the experts on pre_ffw_norm_2(x)), routed on
 * rmsnorm(x) (no gains) times 1/sqrt(n_embd) times ffn_gate_inp.scale, the last product on the host (c->moe_beside:
 * the experts' input, the router's, the experts' output). */
static void dense_and_experts(pass *p, int il, int T, int r0, const float *h)
{
    engine_ctx *c = p->c;
    const engine_hparams *hp = &c->m->hp;
    const engine_layer *L = &c->m->layers[il];
    const kern_weight *w = L->w;
    const int E = hp->n_embd, F = L->n_ff, Tr = T - r0;
    const size_t n = (size_t)Tr * E, B = (size_t)c->max_batch * E;
    float *x = c->x + (size_t)r0 * E, *o = c->o + (size_t)r0 * E;
    float *moe_in = c->moe_beside, *router_in = moe_in + B, *moe_out = router_in + B;
    dense_block(p, il, T, Tr, h, c->gate + (size_t)r0 * F, c->up + (size_t)r0 * F, o);
    run_block_norm(p, "post_ffw_norm_1", &w[MODEL_ROLE_FFN_POST_NORM_1], NULL, o, Tr, E, hp->eps, o);
    run_block_norm(p, "pre_ffw_norm_2", &w[MODEL_ROLE_FFN_PRE_NORM_2], NULL, x, Tr, E, hp->eps, moe_in);
    run_rmsnorm(p, "router input norm (no gains)", NULL, x, Tr, E, hp->eps, router_in);
    run_scale(p, "router input scale", router_in, n, 1.0f / sqrtf((float)E));
    if (!p->st)
        pass_check(p, c->be->to_host(c->be, c->router_in_host, router_in, n), "copy of the router's input");
    for (size_t i = 0; i < n && !p->st; i++) /* times ffn_gate_inp.scale, as ggml's mul does it */
        c->router_in_host[i] *= L->router_scale[i % (size_t)E];
    if (!p->st)
        pass_check(p, c->be->from_host(c->be, router_in, c->router_in_host, n), "copy of the router's input");
    engine_experts_block(p, il, Tr, moe_in, router_in, moe_out);
    run_block_norm(p, "post_ffw_norm_2", &w[MODEL_ROLE_FFN_POST_NORM_2], NULL, moe_out, Tr, E, hp->eps, moe_out);
    run_add(p, "dense block + experts", o, moe_out, n);
}

/* Arctic's layer with experts: the dense block of h (ffn_norm of the attention's residual) added to that residual
 * x, then the experts of ffn_norm_exps of the layer's input (kept in c->moe_beside through the attention, normed there
 * in place) into c->o, which the caller adds last: llama.cpp's arctic graph's order of adds, (ffn + x) + experts. */
static void dense_then_experts(pass *p, int il, int T, int r0, const float *h)
{
    engine_ctx *c = p->c;
    const engine_hparams *hp = &c->m->hp;
    const engine_layer *L = &c->m->layers[il];
    const int E = hp->n_embd, F = L->n_ff, Tr = T - r0;
    float *x = c->x + (size_t)r0 * E, *o = c->o + (size_t)r0 * E, *layer_in = c->moe_beside + (size_t)r0 * E;
    dense_block(p, il, T, Tr, h, c->gate + (size_t)r0 * F, c->up + (size_t)r0 * F, o);
    run_add(p, "residual add (dense block)", x, o, (size_t)Tr * E);
    run_block_norm(p, "ffn_norm_exps", &L->w[MODEL_ROLE_FFN_NORM_EXPS], NULL, layer_in, Tr, E, hp->eps, layer_in);
    engine_experts_block(p, il, Tr, layer_in, NULL, o);
}

/* Layer il's residual adds and feed-forward block: the attention output in c->o (post-normed where the model has
 * it) added to the residual c->x, then ffn_norm, the gated activation, ffn_down (post-normed), added too. Rows
 * [r0, T) only: the last layer's rows that go on (forward_batch's keep0); probes see every row with r0 = 0.
 * next_norm: the norm that reads the layer's output next (the next layer's attn_norm, or output_norm), for
 * residual_add. */
void engine_ffn_block(pass *p, int il, int T, int r0, const kern_weight *next_norm)
{
    engine_ctx *c = p->c;
    const engine_hparams *hp = &c->m->hp;
    const engine_layer *L = &c->m->layers[il];
    const int E = hp->n_embd, F = L->n_ff, Tr = T - r0;
    const kern_weight *w = L->w;
    float *x = c->x + (size_t)r0 * E, *h = c->h + (size_t)r0 * E, *o = c->o + (size_t)r0 * E;
    float *gate = c->gate + (size_t)r0 * F, *up = c->up + (size_t)r0 * F;
    p->layer = il;

    if (L->mixer) { /* (Nemotron-H's feed-forward layer has none) */
        if (w[MODEL_ROLE_ATTN_POST_NORM].t) { /* gemma: the block's output is normalized before the residual add */
            run_block_norm(p, "post_attention_norm", &w[MODEL_ROLE_ATTN_POST_NORM], NULL, o, Tr, E, hp->eps, o);
            pass_look(p, ENGINE_OP_ATTN_POST_NORM, c->o, T, E);
        }
        if (hp->residual_scale != 1.0f)
            run_scale(p, "residual scale", o, (size_t)Tr * E, hp->residual_scale);
        residual_add(p, x, o, Tr, L->ffn ? &w[MODEL_ROLE_FFN_NORM] : next_norm, h);
    }
    if (!L->ffn) { /* Nemotron-H's mixer layer: the mixer is the whole layer */
        pass_look(p, ENGINE_OP_LAYER_OUT, c->x, T, E);
        return;
    }
    const float *in = x; /* olmo2 has no norm before its blocks (OLMo one without gains) */
    if (w[MODEL_ROLE_FFN_NORM].t || hp->desc->norms_without_gains) {
        if (!p->normed)
            run_block_norm(p, "ffn_norm", &w[MODEL_ROLE_FFN_NORM], &w[MODEL_ROLE_FFN_NORM_BIAS], x, Tr, E, hp->eps,
                           h);
        pass_look(p, ENGINE_OP_FFN_NORM, c->h, T, E);
        in = h;
    }
    p->normed = false;
    if (w[MODEL_ROLE_FFN_GATE_INP].t && hp->desc->moe_dense_beside) {
        dense_and_experts(p, il, T, r0, in);
    } else if (w[MODEL_ROLE_FFN_GATE_INP].t && hp->desc->moe_dense_residual) {
        dense_then_experts(p, il, T, r0, in);
    } else if (w[MODEL_ROLE_FFN_GATE_INP].t) { /* not in a dense model, nor in a mixture's leading dense layers */
        engine_experts_block(p, il, Tr, in, hp->desc->router_on_input ? c->moe_beside + (size_t)r0 * E : NULL, o);
        if (hp->desc->moe_dense_mean && w[MODEL_ROLE_FFN_UP].t) { /* Grok-2's: (dense + experts) * sqrt(2)/2, the
                                                                   * factor a double's quotient in float */
            float *dense = c->moe_beside + (size_t)r0 * E;
            dense_block(p, il, T, Tr, in, gate, up, dense);
            run_add(p, "dense block + experts", o, dense, (size_t)Tr * E);
            run_scale(p, "dense block + experts scale", o, (size_t)Tr * E, (float)(sqrt(2.0) / 2.0));
        }
    } else {
        dense_block(p, il, T, Tr, in, gate, up, o);
    }
    pass_look(p, ENGINE_OP_FFN_OUT, c->o, T, E);
    if (w[MODEL_ROLE_FFN_POST_NORM].t) {
        run_block_norm(p, "post_ffw_norm", &w[MODEL_ROLE_FFN_POST_NORM], NULL, o, Tr, E, hp->eps, o);
        pass_look(p, ENGINE_OP_FFN_POST_NORM, c->o, T, E);
    }
    if (hp->residual_scale != 1.0f)
        run_scale(p, "residual scale", o, (size_t)Tr * E, hp->residual_scale);
    const bool more = L->out_scale != 1.0f || L->w[MODEL_ROLE_PER_LAYER_INP_GATE].t || hp->desc->embd_skip;
    residual_add(p, x, o, Tr, more ? NULL : next_norm, h); /* (Gemma 4's and Talkie's more come after the add) */
    if (L->w[MODEL_ROLE_PER_LAYER_INP_GATE].t)
        per_layer_input(p, il, T, r0);
    if (hp->desc->embd_skip) { /* Talkie: + the normed embeddings times the layer's scale, that product first (into o,
                                * read by nothing after the add) */
        run_copy_rows(p, "embd_skip", o, (size_t)E, c->moe_beside + (size_t)r0 * E, (size_t)E, Tr, E);
        run_scale(p, "embd_skip", o, (size_t)Tr * E, L->embd_skip_scale);
        run_add(p, "embd_skip added", x, o, (size_t)Tr * E);
    }
    if (L->out_scale != 1.0f) /* Gemma 4: the layer's output scaled (after the residual add, before the next norm) */
        run_scale(p, "layer output scale", x, (size_t)Tr * E, L->out_scale);
    pass_look(p, ENGINE_OP_LAYER_OUT, c->x, T, E);
}

/* A parallel layer (model_hparams.parallel): the feed-forward block reads the attention's input norm (c->h), or its
 * own norm of x where the layer has one (GPT-NeoX's ffn_norm, into c->h: the attention read it before), and writes c->att
 * (free once the attention's output product ran; the model's q rows are n_embd wide), then x = (x + ffn) + the
 * attention's output in c->o, the order llama.cpp's command-r, cohere2 and gptneox graphs add them, or x + (attention
 * + ffn), phi2's and falcon's (parallel_blocks_summed). Rows [r0, T), as ffn_block. */
void engine_parallel_block(pass *p, int il, int T, int r0)
{
    engine_ctx *c = p->c;
    const engine_hparams *hp = &c->m->hp;
    const int E = hp->n_embd, F = c->m->layers[il].n_ff, Tr = T - r0;
    float *x = c->x + (size_t)r0 * E, *h = c->h + (size_t)r0 * E, *o = c->o + (size_t)r0 * E;
    float *f = c->att + (size_t)r0 * E, *gate = c->gate + (size_t)r0 * F, *up = c->up + (size_t)r0 * F;
    const kern_weight *w = c->m->layers[il].w;
    p->layer = il;
    if (w[MODEL_ROLE_FFN_NORM].t)
        run_block_norm(p, "ffn_norm", &w[MODEL_ROLE_FFN_NORM], &w[MODEL_ROLE_FFN_NORM_BIAS], x, Tr, E, hp->eps, h);
    pass_look(p, ENGINE_OP_FFN_NORM, c->h, T, E); /* the feed-forward block's input */
    if (w[MODEL_ROLE_FFN_GATE_INP].t) /* Cohere2 MoE's layers past its dense ones */
        engine_experts_block(p, il, Tr, h, NULL, f);
    else
        dense_block(p, il, T, Tr, h, gate, up, f);
    pass_look(p, ENGINE_OP_FFN_OUT, c->att, T, E);
    if (hp->desc->parallel_blocks_summed) {
        run_add(p, "attention + feed-forward", o, f, (size_t)Tr * E);
        run_add(p, "residual add", x, o, (size_t)Tr * E);
    } else {
        run_add(p, "residual add (feed-forward)", x, f, (size_t)Tr * E);
        run_add(p, "residual add (attention)", x, o, (size_t)Tr * E);
    }
    pass_look(p, ENGINE_OP_LAYER_OUT, c->x, T, E);
}
