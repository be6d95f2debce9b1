/*
 * Mixture-of-experts layers: the router's choice per token (route.c), the chosen experts' gated feed-forward
 * blocks (token by token, or each expert once over the tokens that chose it; Nemotron-H's without a gate), their
 * weighted sum in llama.cpp's order, and the shared expert.
 */
#include "pass.h"

#include <math.h>
#include <string.h>

/* Whether grouped experts must keep each token's order of sums (kern.h's matmul_each). */
static bool experts_keep_token_order(const engine_ctx *c)
{
    return c->be->numerics != KERN_NUMERICS_EXACT;
}

/* What an expert's gate and up products are called where each is its own op. */
static const char *const expert_gate_up[2] = { "expert gate", "expert up" };

/* Part `role` (ENGINE_EXPERT_*) of expert e of layer L, or NULL where the file has none (the biases). */
static const kern_weight *expert_part(const engine_layer *L, int role, int e)
{
    return L->experts[role] ? &L->experts[role][e] : NULL;
}

/* Expert e's output scale (Gemma 4's ffn_down_exps.scale), 1 without one. */
static float expert_scale(const engine_layer *L, int e)
{
    return L->down_scale ? L->down_scale[e] : 1.0f;
}

/* Expert output y (n_embd values) scaled by the expert's own scale where it has one, then by its routing weight (as
 * ggml multiplies them in turn) and, from the second chosen (j > 0) on, added into out: the experts' sum in the order
 * chosen, as ggml adds them. */
static void sum_expert(pass *p, float *out, float *y, int j, float scale, float weight)
{
    const size_t E = (size_t)p->c->m->hp.n_embd;
    if (scale != 1.0f)
        run_scale(p, "expert scale", y, E, scale);
    run_scale(p, "expert weight", y, E, weight);
    if (j > 0)
        run_add(p, "sum of the experts", out, y, E);
}

/* The experts' gated activation over the rows (F values each) of c->gate and c->up into c->gate, up alone where they
 * have no gate; a SwiGLU under the layer's limit where it has one (Maple's, Step-3.5's: run_limited_swiglu). */
static void expert_activation(pass *p, float limit, bool gated, size_t n, size_t F)
{
    engine_ctx *c = p->c;
    if (limit > 0.0f && gated && c->m->hp.act == KERN_ACT_SILU)
        run_limited_swiglu(p, limit, c->gate, c->up, n, F);
    else
        run_glu(p, "gated activation", c->m->hp.act, gated ? c->gate : c->up, c->up, n, F, c->gate);
}

/* One gated feed-forward block (gate, up, down, each with its bias where bias[] has one) on the Tr rows of h into
 * out, its width F, its SwiGLU limited where limit > 0; gate and up are scratch. A mixture of experts runs each chosen
 * expert and the shared expert through it; `each`: every row's products as one token's (grouped experts under
 * --numerics ggml). */
static void gated_ffn(pass *p, const kern_weight *wg, const kern_weight *wu, const kern_weight *wd,
                      const kern_weight *const bias[3], int F, float limit, int Tr, bool each, const float *h,
                      float *out, const char *names)
{
    engine_ctx *c = p->c;
    const kern_weight *const gate_up[2] = { wg, wu };
    const kern_weight *const gate_up_bias[2] = { bias[0], bias[1] };
    float *const gate_up_out[2] = { c->gate, c->up };
    const int parts = wg && wg->t ? 2 : 1; /* the up product alone without a gate (Nemotron-H's: relu(up)^2) */
    if (each) {
        run_products_each(p, parts, gate_up + 2 - parts, gate_up_bias + 2 - parts, h, Tr, gate_up_out + 2 - parts,
                          names);
        expert_activation(p, limit, parts == 2, (size_t)Tr * F, (size_t)F);
    } else {
        run_gated_products(p, gate_up, gate_up_bias, h, Tr, F, c->m->hp.act, c->gate, c->up, expert_gate_up, names,
                           limit);
    }
    if (each)
        run_products_each(p, 1, &wd, &bias[2], c->gate, Tr, &out, "expert down");
    else
        run_product(p, "expert down", wd, bias[2], c->gate, Tr, out);
}

/* Expert e of layer L (with its biases where the file has them) on the Tr rows of h into out. */
static void run_expert(pass *p, const engine_layer *L, int e, int Tr, bool each, const float *h, float *out)
{
    const kern_weight *const bias[3] = { expert_part(L, ENGINE_EXPERT_GATE_BIAS, e),
                                         expert_part(L, ENGINE_EXPERT_UP_BIAS, e),
                                         expert_part(L, ENGINE_EXPERT_DOWN_BIAS, e) };
    gated_ffn(p, expert_part(L, ENGINE_EXPERT_GATE, e), expert_part(L, ENGINE_EXPERT_UP, e),
              expert_part(L, ENGINE_EXPERT_DOWN, e), bias, p->c->m->hp.n_ff_exp, L->expert_clamp, Tr, each, h, out,
              "ffn_gate_exps, ffn_up_exps");
}

/* The most experts a token chooses that chosen_experts_together takes (real files choose 1 to 8). */
enum { TOGETHER_MAX = 32 };

/* Whether one token's k chosen experts go through chosen_experts_together: the backend multiplies many weights in
 * one product, and the batch buffers hold k rows (gate and up: k rows of the expert width; moe_tmp: k - 1 outputs). */
static bool experts_together(const engine_ctx *c)
{
    const int k = c->m->hp.n_expert_used;
    return c->be->matmul_many && k <= c->max_batch && k <= TOGETHER_MAX;
}

/* One token's k chosen experts (ids, weights) on h into out, together: the gate and up products of all of them as
 * one product (up to KERN_MATMUL_MANY weights at a time), one activation over their k rows, their down products as
 * one (run_products_x), then each output scaled by its weight and summed in the order chosen. Every row and sum is
 * the expert-by-expert loop's, bit for bit; what goes is the threads' start and join per expert (two products each,
 * 8 experts a layer: a decode step's team of threads started 16 times a layer) and, on a device, launches. */
static void chosen_experts_together(pass *p, const engine_layer *L, const int *ids, const float *weights,
                                    const float *h, float *out)
{
    engine_ctx *c = p->c;
    const engine_hparams *hp = &c->m->hp;
    const int k = hp->n_expert_used, F = hp->n_ff_exp, E = hp->n_embd;
    const kern_weight *ws[2 * TOGETHER_MAX], *bs[2 * TOGETHER_MAX];
    const char *names[2 * TOGETHER_MAX]; /* each product's, for run_products' one by one path */
    const float *ins[TOGETHER_MAX];
    float *ys[2 * TOGETHER_MAX];
    /* each expert's gate and up products, or its up product alone where the experts have no gate (relu(up)^2) */
    const int parts = L->experts[ENGINE_EXPERT_GATE] ? 2 : 1;
    for (int j = 0; j < k; j++) {
        const int e = ids[j];
        for (int i = 0; i < parts; i++) {
            const int part = parts == 2 && i == 0 ? ENGINE_EXPERT_GATE : ENGINE_EXPERT_UP;
            ws[parts * j + i] = expert_part(L, part, e);
            bs[parts * j + i] = expert_part(L, part + ENGINE_EXPERT_GATE_BIAS - ENGINE_EXPERT_GATE, e);
            ys[parts * j + i] = (part == ENGINE_EXPERT_GATE ? c->gate : c->up) + (size_t)j * F;
            names[parts * j + i] = expert_gate_up[part == ENGINE_EXPERT_GATE ? 0 : 1];
        }
    }
    for (int i = 0; i < parts * k; i += KERN_MATMUL_MANY) {
        const int n = parts * k - i < KERN_MATMUL_MANY ? parts * k - i : KERN_MATMUL_MANY;
        run_products(p, n, ws + i, bs + i, h, 1, ys + i, names + i, "ffn_gate_exps, ffn_up_exps");
    }
    expert_activation(p, L->expert_clamp, parts == 2, (size_t)k * F, (size_t)F);
    for (int j = 0; j < k; j++) {
        const int e = ids[j];
        ws[j] = expert_part(L, ENGINE_EXPERT_DOWN, e);
        bs[j] = expert_part(L, ENGINE_EXPERT_DOWN_BIAS, e);
        ins[j] = c->gate + (size_t)j * F;
        ys[j] = j == 0 ? out : c->moe_tmp + (size_t)(j - 1) * E;
    }
    for (int i = 0; i < k; i += KERN_MATMUL_MANY)
        run_products_x(p, k - i < KERN_MATMUL_MANY ? k - i : KERN_MATMUL_MANY, ws + i, bs + i, ins + i, 1, ys + i,
                       "expert down");
    for (int j = 0; j < k; j++)
        sum_expert(p, out, ys[j], j, expert_scale(L, ids[j]), weights[j]);
}

/* The chosen experts of Tr tokens (routed already: their logits in c->router_host), each expert once over the
 * tokens that chose it (groups_experts): the rows gathered on the host, its products over all of them (each row
 * in its own token's order under --numerics ggml), each output
 * kept by its slot (token t, choice j); then per token the outputs scaled by their weights and summed in the order
 * chosen, as the token-by-token path adds them. o serves as the expert's output before it holds the sums. Where the
 * weight scales an expert's input (Llama 4: build_moe_ffn's weight_before_ffn), each gathered row is multiplied by
 * its slot's weight in f32 as ggml's mul does, and the outputs are summed as they come. */
static void grouped_experts(pass *p, int il, int Tr, const float *h, float *o)
{
    engine_ctx *c = p->c;
    const engine_hparams *hp = &c->m->hp;
    const engine_layer *L = &c->m->layers[il];
    const int E = hp->n_embd, n_exp = hp->n_expert, k = hp->n_expert_used;
    const bool before = hp->desc->moe_weight_before;
    for (int t = 0; t < Tr; t++)
        engine_route(hp, L->select_bias, c->router_host + (size_t)t * n_exp, c->route_probs,
                     c->moe_ids_host + (size_t)t * k, c->moe_weights_host + (size_t)t * k);
    pass_check(p, c->be->to_host(c->be, c->moe_in_host, h, (size_t)Tr * E), "copy of the experts' input");
    for (int e = 0; e < n_exp && !p->st; e++) {
        int n = 0;
        for (int s = 0; s < Tr * k; s++)
            if (c->moe_ids_host[s] == e) {
                float *row = c->moe_stage_host + (size_t)n * E;
                const float *in = c->moe_in_host + (size_t)(s / k) * E;
                c->moe_slots_host[n] = s;
                for (int i = 0; i < E; i++)
                    row[i] = before ? in[i] * c->moe_weights_host[s] : in[i];
                n++;
            }
        if (!n)
            continue;
        pass_check(p, c->be->from_host(c->be, c->moe_tmp, c->moe_stage_host, (size_t)n * E),
                   "copy of an expert's rows");
        const bool each = experts_keep_token_order(c);
        if (each && !c->be->matmul_each) /* rows one at a time keep each token's order too */
            for (int i = 0; i < n; i++)
                run_expert(p, L, e, 1, false, c->moe_tmp + (size_t)i * E, o + (size_t)i * E);
        else
            run_expert(p, L, e, n, each, c->moe_tmp, o);
        if (!p->st)
            pass_check(p, c->be->to_host(c->be, c->moe_stage_host, o, (size_t)n * E), "copy of an expert's output");
        for (int i = 0; i < n && !p->st; i++)
            memcpy(c->moe_out_host + (size_t)c->moe_slots_host[i] * E, c->moe_stage_host + (size_t)i * E,
                   (size_t)E * sizeof(float));
    }
    if (p->st)
        return;
    for (int t = 0; t < Tr; t++) { /* into moe_in_host, whose rows are used */
        float *acc = c->moe_in_host + (size_t)t * E;
        for (int j = 0; j < k; j++) {
            const float *y = c->moe_out_host + ((size_t)t * k + j) * E;
            const float w = before ? 1.0f : c->moe_weights_host[(size_t)t * k + j];
            const float s = expert_scale(L, c->moe_ids_host[(size_t)t * k + j]); /* (1 but in Gemma 4) */
            for (int i = 0; i < E; i++) {
                const float scaled = y[i] * s * w;
                acc[i] = j ? acc[i] + scaled : scaled;
            }
        }
    }
    pass_check(p, c->be->from_host(c->be, o, c->moe_in_host, (size_t)Tr * E), "copy of the experts' sums");
}

/* Layer il's mixture of experts on the Tr rows of h into o, routed on the rows of router_in (h where NULL): the
 * router's logits (plus its bias) come to the host,
 * each token goes through the experts engine_route picks for it, each output scaled by its weight and summed in
 * the order chosen (as ggml adds them); then the shared expert, scaled by the sigmoid of its gate where it has
 * one (qwen2moe), where there is one. Only the chosen experts' rows are read. */
void engine_experts_block(pass *p, int il, int Tr, const float *h, const float *router_in, float *o)
{
    engine_ctx *c = p->c;
    const engine_hparams *hp = &c->m->hp;
    const engine_layer *L = &c->m->layers[il];
    const kern_weight *w = L->w;
    const int E = hp->n_embd, n_exp = hp->n_expert, k = hp->n_expert_used;
    const kern_weight *router_bias = w[MODEL_ROLE_FFN_GATE_INP_BIAS].t ? &w[MODEL_ROLE_FFN_GATE_INP_BIAS] : NULL;
    run_product(p, "ffn_gate_inp", &w[MODEL_ROLE_FFN_GATE_INP], router_bias, router_in ? router_in : h, Tr, c->router);
    if (!p->st)
        pass_check(p, c->be->to_host(c->be, c->router_host, c->router, (size_t)Tr * n_exp),
                   "copy of the router's logits");
    /* every token through the grouped path where a weight scales the input (its rows are scaled on the host) */
    const bool grouped = c->moe_out_host && (Tr > 1 || hp->desc->moe_weight_before);
    if (grouped && !p->st)
        grouped_experts(p, il, Tr, h, o);
    for (int t = 0; t < Tr && !p->st && !grouped; t++) {
        engine_route(hp, L->select_bias, c->router_host + (size_t)t * n_exp, c->route_probs, c->route_ids,
                     c->route_weights);
        float *ot = o + (size_t)t * E, *tmp = c->moe_tmp + (size_t)t * E;
        if (experts_together(c)) {
            chosen_experts_together(p, L, c->route_ids, c->route_weights, h + (size_t)t * E, ot);
            continue;
        }
        for (int j = 0; j < k; j++) {
            float *dst = j == 0 ? ot : tmp;
            run_expert(p, L, c->route_ids[j], 1, false, h + (size_t)t * E, dst);
            sum_expert(p, ot, dst, j, expert_scale(L, c->route_ids[j]), c->route_weights[j]);
        }
    }
    if (!w[MODEL_ROLE_FFN_UP_SHEXP].t)
        return;
    /* llama.cpp's qwen2moe: out += ffn_shexp(h) * sigmoid(h . ffn_gate_inp_shexp); glm4moe's shared experts have no
     * gate: out += ffn_shexp(h); Nemotron-H's is relu(h Wup)^2 Wdown (no ffn_gate_shexp) */
    const bool gated = w[MODEL_ROLE_FFN_GATE_INP_SHEXP].t;
    if (gated) {
        run_product(p, "ffn_gate_inp_shexp", &w[MODEL_ROLE_FFN_GATE_INP_SHEXP], NULL, h, Tr, c->router);
        if (!p->st)
            pass_check(p, c->be->to_host(c->be, c->router_host, c->router, (size_t)Tr),
                       "copy of the shared expert's gate");
    }
    const kern_weight *const no_bias[3] = { 0 };
    gated_ffn(p, &w[MODEL_ROLE_FFN_GATE_SHEXP], &w[MODEL_ROLE_FFN_UP_SHEXP], &w[MODEL_ROLE_FFN_DOWN_SHEXP], no_bias,
              hp->n_ff_shexp, L->shexp_clamp, Tr, false, h, c->moe_tmp, "ffn_gate_shexp, ffn_up_shexp");
    for (int t = 0; t < Tr && !p->st && gated; t++)
        run_scale(p, "shared expert gate", c->moe_tmp + (size_t)t * E, (size_t)E,
                  1.0f / (1.0f + expf(-c->router_host[t])));
    run_add(p, "shared expert", o, c->moe_tmp, (size_t)Tr * E);
    if (hp->desc->shexp_mean) /* Cohere2 MoE's: the two averaged */
        run_scale(p, "mean of the experts and the shared experts", o, (size_t)Tr * E, 0.5f);
}
