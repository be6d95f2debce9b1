/*
 * The forward pass of the dense decoders model/arch.c describes, read top to
 * bottom like the math (karpathy/llama2.c's habit), on whatever backend the
 * model is bound to. What differs between architectures is a flag or a
 * present tensor, never a name:
 *
 *   x = embd[tokens] (+ position_embd[positions]: gpt2; LayerNormed: bloom; * sqrt(n_embd): gemma; * embedding_scale:
 *       granite)
 *   per layer:  h = rmsnorm(x) * attn_norm                (h = x without attn_norm: olmo2; a LayerNorm: Cohere,
 *                                                           + its bias: StarCoder2, whose every product has one)
 *               q, k, v = h Wq (+bq), h Wk (+bk), h Wv (+bv)   (the rows of one fused Wqkv: phi3)
 *               (q, k = rmsnorm per head * q_norm, k_norm: qwen3, gemma3; over the whole row: olmo2)
 *               rope(q), rope(k) (sliding-window layers: their own base);  k, v -> cache
 *               a = attention(q, K, V; scale, window; a sink logit per head: gpt-oss) Wo (+bo)
 *                                                          (a * sigmoid(the gate each head's q row carries): Qwen3.5;
 *                                                           its other layers a gated delta net, LFM2's a short
 *                                                           convolution: delta_net.c)
 *                                                          (a = rmsnorm(a) * post_attention_norm: gemma, olmo2)
 *               x += a                                     (a * residual_scale: granite)
 *               h = rmsnorm(x) * ffn_norm                  (h = x without ffn_norm: olmo2; gpt-oss calls it
 *                                                           post_attention_norm)
 *               f = (act(h Wgate) * (h Wup)) Wdown, act SiLU, tanh-GELU or gpt-oss's clamped SwiGLU
 *                                                          (or the chosen experts', with their biases: MoE;
 *                                                           without a gate: relu(h Wup)^2, GELU(h Wup + b))
 *                                                          (f = rmsnorm(f) * post_ffw_norm: gemma, olmo2)
 *               x += f                                     <- l_out (the traced residual; f * residual_scale)
 *   logits = (rmsnorm(x) * output_norm) Wout               <- result_norm before Wout
 *            (* 1 / logit_scale: granite; c * tanh(logits / c) with final soft-capping)
 * The residual adds and feed-forward blocks are forward_ffn.c, the experts' half of a mixture's experts.c; the context
 * it runs in, context.c.
 */
#include "pass.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* A backend op's status as the engine's: a failure names the op and layer, with the backend's own account of it
 * (the device call, file, line); a decode step being recorded is thrown away. */
static engine_status op_status(engine_ctx *c, kern_status ks, const char *what, int layer, engine_error *err)
{
    if (ks == KERN_OK)
        return ENGINE_OK;
    kern_backend *be = c->be;
    const char *why = be->last_error(be);
    if (c->recording) {
        c->recording = false;
        be->step_end(be, false); /* the half-recorded step is thrown away */
    }
    return engine_fail(err, ks == KERN_E_NOMEM ? ENGINE_E_NOMEM : ENGINE_E_BACKEND, 0, "",
                       "%s backend: %s failed in layer %d: %s%s%.400s", be->name, what, layer, kern_status_name(ks),
                       *why ? ": " : "", why);
}

void pass_check(pass *p, kern_status ks, const char *what)
{
    if (ks != KERN_OK)
        p->st = op_status(p->c, ks, what, p->layer, p->err);
}

/* Layer il's weights out of the resident set once the layer ran (engine_model_release_weights). */
static void release_layer(const engine_model *m, int il)
{
    for (int r = 0; r < MODEL_ROLE_COUNT; r++)
        gguf_tensor_release(m->f, m->layers[il].w[r].t);
}

/* What a probe sees of op after it ran: its rows' statistics and values (T, n), as the probe asks. */
void pass_look(pass *p, engine_op op, const float *x, int T, int n)
{
    engine_ctx *c = p->c;
    const engine_probe *pr = p->probe;
    /* the feed-forward output too where llama.cpp's traces name it l_out (model_arch.l_out_is_ffn_out) */
    const bool traced = op == ENGINE_OP_LAYER_OUT || op == ENGINE_OP_RESULT_NORM ||
                        (op == ENGINE_OP_FFN_OUT && c->m->hp.desc->l_out_is_ffn_out);
    if (p->st || !pr || (!pr->all_ops && !traced))
        return;
    if (pr->on_op) {
        run_row_stats(p, "row statistics", x, T, n, c->stats);
        if (!p->st)
            pr->on_op(pr->user, op, p->layer, c->pos, T, c->stats);
    }
    if (pr->on_values && !p->st) {
        const size_t need = (size_t)T * n;
        if (need > c->probe_cap) {
            float *grown = realloc(c->probe_host, need * sizeof(float));
            if (!grown) {
                p->st = engine_fail(p->err, ENGINE_E_NOMEM, 0, "", "out of memory copying activations for a probe");
                return;
            }
            c->probe_host = grown;
            c->probe_cap = need;
        }
        pass_check(p, p->be->to_host(p->be, c->probe_host, x, need), "copy of activations");
        if (!p->st)
            pr->on_values(pr->user, op, p->layer, c->pos, T, n, c->probe_host);
    }
}

/* The recording of a decode step a device may replay (step_begin .. step_end), when nothing before failed. */
static void step_begin(pass *p, uint64_t key)
{
    if (p->st)
        return;
    pass_check(p, p->be->step_begin(p->be, key, p->c->pos), "recording the decode step");
    p->c->recording = !p->st;
}

static void step_end(pass *p)
{
    if (p->st)
        return;
    p->c->recording = false;
    pass_check(p, p->be->step_end(p->be, true), "running the recorded decode step");
}

/* What comes back of the last row's logits when they stay on the backend:
 * the top k ids (and values), k = 1 through the backend's argmax. */
typedef struct top_request {
    int k;
    int32_t *ids;
    float *vals;
} top_request;

/* A replayable step's top ids (and values) from the context's host memory to the caller's. */
static void deliver_top(const engine_ctx *c, const top_request *top)
{
    memcpy(top->ids, c->step_ids, (size_t)top->k * sizeof *top->ids);
    if (top->vals && top->k > 1)
        memcpy(top->vals, c->step_vals, (size_t)top->k * sizeof *top->vals);
}

/* Layer il's attention over an earlier layer's keys and values (Gemma 4 E2B / E4B's last layers: kv_src's cache, which
 * that layer filled for these positions before): its own q (norm, rotation), the attention, the output projection. */
static void shared_kv_attention(pass *p, int il, int T, const float *in)
{
    engine_ctx *c = p->c;
    const engine_model *m = c->m;
    const engine_hparams *hp = &m->hp;
    const engine_layer *L = &m->layers[il];
    const int hd = L->head_dim, q_dim = L->n_head * hd, src = L->kv_src;
    const kern_weight *w = L->w;
    const kern_attn attn = engine_layer_attn(m, il);
    run_product(p, "attn_q", &w[MODEL_ROLE_ATTN_Q], NULL, in, T, c->q);
    if (w[MODEL_ROLE_ATTN_Q_NORM].t)
        run_block_norm(p, "attn_q_norm", &w[MODEL_ROLE_ATTN_Q_NORM], NULL, c->q, T * L->n_head, hd, hp->eps, c->q);
    run_rope(p, "rope(q)", c->q, T, L->n_head, hd, c->pos, L->swa ? &hp->rope_swa : &hp->rope);
    pass_look(p, ENGINE_OP_Q, c->q, T, q_dim);
    run_attention(p, "attention (an earlier layer's keys and values)", c->q, c->k_cache + c->k_off[src],
                  c->v_cache + c->v_off[src], T, c->pos, &attn, c->att);
    pass_look(p, ENGINE_OP_ATTN, c->att, T, q_dim);
    run_product(p, "attn_output", &w[MODEL_ROLE_ATTN_OUT], NULL, c->att, T, c->o);
    pass_look(p, ENGINE_OP_ATTN_OUT, c->o, T, hp->n_embd);
}

/* Step-3.5's (and Laguna's narrow) head-wise gate on the attention's output (T, n_head, v_dim) in c->att: one gate
 * per head, attn_gate's product of the attention's input in, each head's values times its sigmoid (softplus: Laguna)
 * (llama.cpp's step35 and laguna graphs: the activation, then ggml_mul broadcasting it over the head). The gates go to c->dn (T x n_head), then are spread over each head's
 * values there (one column copied, then the copied columns doubled), so that the one glu op multiplies them. */
static void gate_heads(pass *p, int il, int T, const float *in)
{
    engine_ctx *c = p->c;
    const engine_layer *L = &c->m->layers[il];
    const size_t H = (size_t)L->n_head, vd = (size_t)L->v_dim, rows = (size_t)T * H;
    float *g = c->dn, *wide = c->dn + (size_t)c->max_batch * (size_t)c->m->hp.n_head;
    run_product(p, "attn_gate (a gate per head)", &L->w[MODEL_ROLE_ATTN_GATE], NULL, in, T, g);
    run_copy_rows(p, "head gates over their values", wide, vd, g, 1, (int)rows, 1);
    for (size_t have = 1; have < vd; have *= 2) {
        const size_t n = have < vd - have ? have : vd - have;
        run_copy_rows(p, "head gates over their values", wide + have, vd, wide, vd, (int)rows, (int)n);
    }
    run_glu(p, "attention output gate (per head)", c->m->hp.attn_gate_act, wide, c->att, rows * vd, vd, c->att);
}

/* Layer il's attention block on the T rows at positions c->pos ..: attn_norm, q, k and v (with their biases, head
 * norms and rotation; k and v go into the cache), attention, and its output projection into c->o. */
static void attention_block(pass *p, int il, int T)
{
    engine_ctx *c = p->c;
    const engine_model *m = c->m;
    const engine_hparams *hp = &m->hp;
    const engine_layer *L = &m->layers[il];
    const int E = hp->n_embd, hd = L->head_dim, n_kv = L->n_kv_head, q_dim = L->n_head * hd, kv_dim = n_kv * hd;
    /* a head's values may be narrower or wider than its keys (MiMo-V2's value_length): the value rows and the
     * attention's output are the values' width */
    const int vd = L->v_dim, v_dim = n_kv * vd, out_dim = L->n_head * vd;
    const int pos0 = c->pos;
    const kern_weight *w = L->w;
    const kern_rope *rope = L->swa ? &hp->rope_swa : &hp->rope;
    kern_attn attn = engine_layer_attn(m, il);
    float *kc = c->k_cache + c->k_off[il], *vc = c->v_cache + c->v_off[il];
    /* a step that may be replayed at another position keeps its key and value rows apart until store_rows puts
     * them in the cache (kern.h: no position folded into a pointer) */
    const bool staged = c->recording && c->k_step;
    float *k_new = staged ? c->k_step : kc + (size_t)pos0 * kv_dim;
    float *v_new = staged ? c->v_step : vc + (size_t)pos0 * v_dim;
    static const char *const qkv_names[3] = { "attn_q", "attn_k", "attn_v" };
    const kern_weight *const qkv[3] = { &w[MODEL_ROLE_ATTN_Q], &w[MODEL_ROLE_ATTN_K], &w[MODEL_ROLE_ATTN_V] };
    const kern_weight *const qkv_bias[3] = { L->has_bias ? &w[MODEL_ROLE_ATTN_Q_BIAS] : NULL,
                                             L->has_bias ? &w[MODEL_ROLE_ATTN_K_BIAS] : NULL,
                                             L->has_bias ? &w[MODEL_ROLE_ATTN_V_BIAS] : NULL };
    float *qkv_out[3] = { c->q, k_new, v_new };
    p->layer = il;

    const float *in = c->x; /* olmo2 has no norm before its blocks (OLMo one without gains) */
    if (w[MODEL_ROLE_ATTN_NORM].t || hp->desc->norms_without_gains) {
        if (!p->normed)
            run_block_norm(p, "attn_norm", &w[MODEL_ROLE_ATTN_NORM], &w[MODEL_ROLE_ATTN_NORM_BIAS], c->x, T, E, hp->eps,
                           c->h);
        pass_look(p, ENGINE_OP_ATTN_NORM, c->h, T, E);
        in = c->h;
    }
    if (w[MODEL_ROLE_ATTN_NORM_2].t) { /* Falcon-40B: the attention's own norm, into c->o (free until the output
                                        * product); attn_norm's rows in c->h are the feed-forward block's */
        run_block_norm(p, "attn_norm_2", &w[MODEL_ROLE_ATTN_NORM_2], &w[MODEL_ROLE_ATTN_NORM_2_BIAS], c->x, T, E,
                       hp->eps, c->o);
        in = c->o;
    }
    p->normed = false;
    if (L->linear) { /* DeciLM's "linear attention": the output product of the normed input, nothing attended (and,
                      * as llama.cpp's deci graph has it, without the output's bias) */
        run_product(p, "attn_output (linear attention)", &w[MODEL_ROLE_ATTN_OUT], NULL, in, T, c->o);
        pass_look(p, ENGINE_OP_ATTN_OUT, c->o, T, E);
        return;
    }
    if (hp->mla) {
        engine_mla_attention_block(p, il, T, in);
        return;
    }
    if (L->recurrent && hp->shortconv) {
        engine_shortconv_block(p, il, T, in);
        return;
    }
    if (L->recurrent && hp->mamba2) {
        engine_mamba2_block(p, il, T, in, c->o);
        return;
    }
    if (L->recurrent && hp->mamba1) {
        engine_mamba1_block(p, il, T, in, c->o);
        return;
    }
    if (L->recurrent) {
        engine_delta_net_block(p, il, T, in);
        return;
    }
    if (L->kv_src != il) {
        shared_kv_attention(p, il, T, in);
        return;
    }
    /* Qwen3.5: each head's query then its output gate in attn_q's rows, taken apart after the product */
    float *const q_gate = hp->attn_out_gated ? c->dn : NULL;
    /* AFMoE, Laguna's wide gates: a product of their own of the attention's input, a gate per value */
    const bool gate_values = hp->attn_gate_proj && !L->gate_heads;
    float *const gates = q_gate ? q_gate + (size_t)c->max_batch * 2 * q_dim : gate_values ? c->dn : NULL;
    if (q_gate)
        qkv_out[0] = q_gate;
    const bool v_is_k = !qkv[2]->t; /* Gemma 4's full layers: the values are the key projection's output */
    run_products(p, v_is_k ? 2 : 3, qkv, qkv_bias, in, T, qkv_out, qkv_names, v_is_k ? "attn_q, attn_k"
                                                                                 : "attn_q, attn_k, attn_v");
    if (v_is_k)
        run_copy_rows(p, "v as k", v_new, (size_t)kv_dim, k_new, (size_t)kv_dim, T, kv_dim);
    if (gate_values)
        run_product(p, "attn_gate", &w[MODEL_ROLE_ATTN_GATE], NULL, in, T, gates);
    if (q_gate) {
        run_copy_rows(p, "q apart from its gate", c->q, (size_t)hd, q_gate, 2 * (size_t)hd, T * L->n_head, hd);
        run_copy_rows(p, "the gate apart from q", gates, (size_t)hd, q_gate + hd, 2 * (size_t)hd, T * L->n_head, hd);
    }
    if (hp->g.clamp_kqv > 0.0f) { /* MPT's, OLMo's clip_qkv: after the products and their biases, as build_qkv */
        const float cl = hp->g.clamp_kqv;
        run_clamp(p, "clamp_kqv(q)", c->q, (size_t)T * q_dim, -cl, cl);
        run_clamp(p, "clamp_kqv(k)", k_new, (size_t)T * kv_dim, -cl, cl);
        run_clamp(p, "clamp_kqv(v)", v_new, (size_t)T * v_dim, -cl, cl);
    }
    if (w[MODEL_ROLE_ATTN_Q_NORM].t && hp->qk_norm_full) { /* olmo2's RMSNorm, MPT's LayerNorm (with biases where the
                                                             * file has them) of each whole q and k row */
        run_block_norm(p, "attn_q_norm", &w[MODEL_ROLE_ATTN_Q_NORM], &w[MODEL_ROLE_ATTN_Q_NORM_BIAS], c->q, T, q_dim,
                       hp->eps, c->q);
        run_block_norm(p, "attn_k_norm", &w[MODEL_ROLE_ATTN_K_NORM], &w[MODEL_ROLE_ATTN_K_NORM_BIAS], k_new, T, kv_dim,
                       hp->eps, k_new);
    } else if (w[MODEL_ROLE_ATTN_Q_NORM].t && !hp->desc->qk_norm_after_rope) { /* qwen3, gemma3: RMSNorm of every
                                                * head of q and k (Command R+: a LayerNorm, each head's own gains) */
        run_block_norm(p, "attn_q_norm", &w[MODEL_ROLE_ATTN_Q_NORM], NULL, c->q, T * L->n_head, hd, hp->eps, c->q);
        run_block_norm(p, "attn_k_norm", &w[MODEL_ROLE_ATTN_K_NORM], NULL, k_new, T * n_kv, hd, hp->eps, k_new);
    }
    if (hp->desc->v_norm) /* Gemma 4: each head of v RMS-normed without gains */
        run_rmsnorm(p, "v norm (no gains)", NULL, v_new, T * n_kv, vd, hp->eps, v_new);
    /* nothing probes a staged step; Llama 4's norm comes after the rotation, before the store */
    const bool norm_after = hp->desc->qk_norm_after_rope && w[MODEL_ROLE_ATTN_Q_NORM].t; /* Hunyuan's */
    const bool fused = staged && p->be->rope_store && !L->no_rope && !hp->g.qk_l2_norm && !norm_after && vd == hd;
    if (L->no_rope) {
        /* a NoPE layer: q and k go to the attention as the products left them */
    } else if (fused && !p->st) {
        pass_check(p, p->be->rope_store(p->be, c->q, k_new, v_new, T, L->n_head, n_kv, hd, pos0, rope, kc, vc),
                   "rope(q), rope(k), k and v into the cache");
    } else {
        run_rope(p, "rope(q)", c->q, T, L->n_head, hd, pos0, rope);
        run_rope(p, "rope(k)", k_new, T, n_kv, hd, pos0, rope);
    }
    if (hp->g.qk_l2_norm && !L->no_rope) { /* Llama 4: each rotated head of q and k normed without gains */
        run_rmsnorm(p, "q norm (no gains)", NULL, c->q, T * L->n_head, hd, hp->eps, c->q);
        run_rmsnorm(p, "k norm (no gains)", NULL, k_new, T * n_kv, hd, hp->eps, k_new);
    }
    if (norm_after) { /* Hunyuan: each rotated head of q and k RMS-normed with its gains (Talkie: q's one a head, bound
                       * as rows, and k's none) */
        run_rmsnorm(p, "attn_q_norm", &w[MODEL_ROLE_ATTN_Q_NORM], c->q, T * L->n_head, hd, hp->eps, c->q);
        run_rmsnorm(p, "attn_k_norm", pass_bound(&w[MODEL_ROLE_ATTN_K_NORM]), k_new, T * n_kv, hd, hp->eps, k_new);
    }
    for (int t = 0; t < T && hp->g.attn_temp_scale != 0.0f; t++) { /* Ministral 3, Llama 4: q scaled by position */
        const float temp = engine_attn_temperature(hp, L->no_rope, pos0 + t);
        if (temp != 1.0f)
            run_scale(p, "attention temperature", c->q + (size_t)t * q_dim, (size_t)q_dim, temp);
    }
    pass_look(p, ENGINE_OP_Q, c->q, T, q_dim);
    pass_look(p, ENGINE_OP_K, k_new, T, kv_dim);
    pass_look(p, ENGINE_OP_V, v_new, T, v_dim);
    if (hp->desc->q_prescaled && attn.scale != 1.0f) { /* q times the scale, the scores by 1: llama.cpp's rounding */
        run_scale(p, "q scale", c->q, (size_t)T * q_dim, attn.scale);
        attn.scale = 1.0f;
    }
    if (staged && !fused) {
        run_store_rows(p, "k into the cache", kc, k_new, T, kv_dim, pos0);
        run_store_rows(p, "v into the cache", vc, v_new, T, v_dim, pos0);
    }
    run_attention(p, "attention", c->q, kc, vc, T, pos0, &attn, c->att);
    if (gates) /* (Qwen3.5's gates in q: sigmoid) */
        run_glu(p, "attention output gate", q_gate ? KERN_ACT_SIGMOID : hp->attn_gate_act, gates, c->att,
                (size_t)T * q_dim, (size_t)q_dim, c->att);
    if (L->gate_heads)
        gate_heads(p, il, T, in);
    if (w[MODEL_ROLE_ATTN_SUB_NORM].t) /* BitNet: the attention's output RMS-normed before its product */
        run_block_norm(p, "attn_sub_norm", &w[MODEL_ROLE_ATTN_SUB_NORM], NULL, c->att, T, out_dim, hp->eps, c->att);
    pass_look(p, ENGINE_OP_ATTN, c->att, T, out_dim);
    const kern_weight *out_bias = w[MODEL_ROLE_ATTN_OUT_BIAS].t ? &w[MODEL_ROLE_ATTN_OUT_BIAS] : NULL;
    run_product(p, "attn_output", &w[MODEL_ROLE_ATTN_OUT], out_bias, c->att, T, c->o);
    if (hp->g.attn_value_scale != 0.0f) /* MiMo-V2: after the product, as llama.cpp's graph scales */
        run_scale(p, "attention value scale", c->o, (size_t)T * E, hp->g.attn_value_scale);
    if (!hp->desc->mixer_beside) {
        pass_look(p, ENGINE_OP_ATTN_OUT, c->o, T, E);
    } else { /* Falcon-H1: its Mamba-2 mixer on the same norm, added to the attention's output (into c->h,
              * attn_norm's output: the attention's products read it before, nothing after) */
        engine_mamba2_block(p, il, T, c->h, c->h);
        run_add(p, "attention + mixer", c->o, c->h, (size_t)T * E);
        pass_look(p, ENGINE_OP_ATTN_OUT, c->o, T, E); /* the layer's block output: both, as added to x */
    }
}

/* One batch of T <= max_batch tokens at positions c->pos ... Logits go to
 * host memory (logits), or stay on the backend for a top-k there (top). */
static engine_status forward_batch(engine_ctx *c, const int32_t *tokens, int T, bool all_logits, float *logits,
                                   const top_request *top, const engine_probe *probe, engine_error *err)
{
    const engine_model *m = c->m;
    const engine_hparams *hp = &m->hp;
    const int E = hp->n_embd, V = hp->n_vocab;
    pass p = { .c = c, .be = c->be, .probe = probe, .layer = -1, .st = ENGINE_OK, .err = err };

    /* A decode step without probes needs nothing from the host until its logits: a device may record it. */
    /* routing reads the host, and a temperature's scale is the position's */
    /* (a recurrent state is not a position's: such models run their steps as they come) */
    const bool step = T == 1 && !probe && c->be->step_begin && !hp->n_expert && hp->g.attn_temp_scale == 0.0f &&
                      !hp->n_recurrent;
    /* One that ends in a top-k on the backend (no logits to the host) may be replayed whole where the backend can:
     * its key says which top-k, so steps under one key differ only in position and token. */
    const bool replayable = step && c->be->step_replay && top && !logits;
    const uint64_t key = c->step_key | (uint64_t)(replayable ? top->k : 0);
    if (replayable) {
        const kern_status ks = c->be->step_replay(c->be, key, c->pos, tokens);
        if (ks == KERN_OK) {
            c->pos += 1;
            c->last_T = 1; /* the replay wrote the buffers the recording named: the final norm's row is in h */
            deliver_top(c, top);
            return ENGINE_OK;
        }
        if (ks != KERN_E_UNSUPPORTED)
            return engine_fail(err, ks == KERN_E_NOMEM ? ENGINE_E_NOMEM : ENGINE_E_BACKEND, 0, "",
                               "%s backend: replaying the decode step at position %d failed: %s: %.400s", c->be->name,
                               c->pos, kern_status_name(ks), c->be->last_error(c->be));
    }
    if (step)
        step_begin(&p, key);
    /* The rows that go on past the last layer's attention: only those whose logits are asked for (the last one
     * when none are, for the spot check's final norm), unless a probe shows every row. Nothing else reads the
     * other rows' last hidden states: their keys and values are in the cache by then. llama.cpp's graphs drop
     * the same rows at the same place (inp_out_ids in llama-model.cpp), so its prompts skip that last FFN too. */
    const int keep0 = probe || (all_logits && logits) ? 0 : T - 1;
    run_embed(&p, "token embedding", &m->tok_embd, tokens, T, c->x);
    if (m->pos_embd.t) /* GPT-2: x = token row + the position's row */
        run_add_rows(&p, "position embedding", &m->pos_embd, c->pos, T, c->x);
    if (m->embd_norm.t) /* BLOOM: the embeddings LayerNormed before the first layer */
        run_block_norm(&p, "token_embd_norm", &m->embd_norm, &m->embd_norm_b, c->x, T, E, hp->eps, c->x);
    if (hp->desc->embd_skip) { /* Talkie: the embeddings RMS-normed, kept for each layer's skip (engine_ffn_block) */
        run_rmsnorm(&p, "inp_norm (no gains)", NULL, c->x, T, E, hp->eps, c->x);
        run_copy_rows(&p, "the normed embeddings (each layer's skip)", c->moe_beside, (size_t)E, c->x, (size_t)E, T, E);
    }
    if (hp->embd_scale != 1.0f)
        run_scale(&p, "embedding scale", c->x, (size_t)T * E, hp->embd_scale);
    if (hp->n_ple)
        engine_per_layer_inputs(&p, tokens, T);
    p.layer = 0;
    pass_look(&p, ENGINE_OP_EMBD, c->x, T, E);
    for (int il = 0; il < hp->n_layer && !p.st; il++) {
        if ((hp->desc->router_on_input || hp->desc->moe_dense_residual) && m->layers[il].w[MODEL_ROLE_FFN_GATE_INP].t)
            run_copy_rows(&p, "the layer's input (its experts')", c->moe_beside, (size_t)E, c->x, (size_t)E, T, E);
        if (m->layers[il].mixer)
            attention_block(&p, il, T);
        /* from the attention output on, rows [r0, T): all of them but in the last layer (keep0 above) */
        const bool last = il == hp->n_layer - 1, ends_loop = model_hparams_layer_ends_loop(&hp->g, il);
        if (hp->g.parallel)
            engine_parallel_block(&p, il, T, last ? keep0 : 0);
        else
            engine_ffn_block(&p, il, T, last ? keep0 : 0,
                      last ? &m->output_norm : ends_loop ? NULL : engine_layer_input_norm(m, il + 1));
        if (ends_loop) /* a looped model's pass ends: the final norm of its output, the next pass's input */
            run_block_norm(&p, "loop norm (output_norm)", &m->output_norm, &m->output_norm_b, c->x, T, E, hp->eps,
                           c->x);
        if (m->release_weights)
            release_layer(m, il);
    }
    p.layer = hp->n_layer;
    if (!p.normed)
        run_block_norm(&p, "output_norm", &m->output_norm, &m->output_norm_b, c->x + (size_t)keep0 * E, T - keep0, E,
                       hp->eps, c->h + (size_t)keep0 * E);
    p.normed = false;
    pass_look(&p, ENGINE_OP_RESULT_NORM, c->h, T, E);
    if (p.st)
        return p.st;
    c->pos += T;
    c->last_T = T;
    if (!logits && !top) {
        if (step)
            step_end(&p);
        return p.st;
    }
    const int first = all_logits && logits ? 0 : T - 1;
    if (hp->g.logit_scale_first && hp->logit_scale != 1.0f) /* after the trace's look at the norm, as llama.cpp's */
        run_scale(&p, "lm_head scale", c->h + (size_t)first * E, (size_t)(T - first) * E, hp->logit_scale);
    for (int r = first, n; r < T && !p.st; r += n) {
        n = engine_logit_part(c->be, T - r);
        run_product(&p, "output", &m->output, pass_bound(&m->output_b), c->h + (size_t)r * E, n, c->logits);
        if (hp->logit_scale != 1.0f && !hp->g.logit_scale_first)
            run_scale(&p, "logit scale", c->logits, (size_t)n * V, hp->logit_scale);
        if (hp->final_softcap > 0.0f)
            run_softcap(&p, "logit soft-capping", c->logits, (size_t)n * V, hp->final_softcap);
        if (step && !replayable)
            step_end(&p);
        if (logits && !p.st)
            pass_check(&p, c->be->to_host(c->be, logits + (size_t)(r - first) * V, c->logits, (size_t)n * V),
                  "copy of logits");
    }
    /* a replayable step's top-k is part of it, into the context's own host memory (where a replay puts it) */
    const top_request mine = { top ? top->k : 0, c->step_ids, c->step_vals };
    const top_request *into = replayable ? &mine : top;
    if (top && top->k == 1)
        run_argmax(&p, "argmax of the logits", c->logits, V, into->ids);
    else if (top)
        run_top_k(&p, "top-k of the logits", c->logits, V, top->k, into->ids, into->vals);
    if (replayable) {
        step_end(&p);
        if (!p.st)
            deliver_top(c, top);
    }
    if (m->release_weights) {
        gguf_tensor_release(m->f, m->output.t);
        gguf_tensor_release(m->f, m->tok_embd.t);
    }
    return p.st;
}

static engine_status forward(engine_ctx *c, const int32_t *tokens, int T, bool all_logits, float *logits,
                             const top_request *top, const engine_probe *probe, engine_error *err)
{
    const engine_hparams *hp = &c->m->hp;
    if (T < 1)
        return engine_fail(err, ENGINE_E_INPUT, 0, "", "nothing to run: no tokens");
    if (T > c->n_ctx - c->pos)
        return engine_fail(err, ENGINE_E_INPUT, 0, "",
                           "context full: %d positions used of %d, %d more tokens do not fit", c->pos, c->n_ctx, T);
    for (int i = 0; i < T; i++)
        if (tokens[i] < 0 || tokens[i] >= hp->n_vocab)
            return engine_fail(err, ENGINE_E_INPUT, 0, "", "token %d at index %d is outside the vocabulary (0..%d)",
                               tokens[i], i, hp->n_vocab - 1);
    for (int done = 0; done < T;) {
        int n = T - done < c->max_batch ? T - done : c->max_batch;
        bool last = done + n == T;
        float *dst = !logits ? NULL : all_logits ? logits + (size_t)done * hp->n_vocab : last ? logits : NULL;
        engine_status s = forward_batch(c, tokens + done, n, all_logits, dst, last ? top : NULL, probe, err);
        if (s)
            return s;
        done += n;
    }
    return ENGINE_OK;
}

engine_status engine_forward(engine_ctx *c, const int32_t *tokens, int T, bool all_logits, float *logits,
                             const engine_probe *probe, engine_error *err)
{
    return forward(c, tokens, T, all_logits, logits, NULL, probe, err);
}

engine_status engine_forward_argmax(engine_ctx *c, const int32_t *tokens, int T, int32_t *next,
                                    const engine_probe *probe, engine_error *err)
{
    top_request top = { 1, next, NULL };
    return forward(c, tokens, T, false, NULL, &top, probe, err);
}

engine_status engine_forward_top_k(engine_ctx *c, const int32_t *tokens, int T, int k, int32_t *ids, float *vals,
                                   const engine_probe *probe, engine_error *err)
{
    if (k < 1 || k > KERN_TOP_K_MAX)
        return engine_fail(err, ENGINE_E_INPUT, 0, "", "top-k of %d: 1 to %d candidates can stay on the backend", k,
                           KERN_TOP_K_MAX);
    top_request top = { k, ids, vals };
    return forward(c, tokens, T, false, NULL, &top, probe, err);
}
