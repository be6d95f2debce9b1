/*
 * The feed-forward blocks of llama.cpp's prompt graph, replayed node by node for the compute buffer
 * (memory_compute.c): the dense block (gated or not, with its biases), the routed experts (llama-graph's
 * build_moe_ffn) with the shared expert, and the dense block beside the experts (Gemma 4).
 */
#include "memory_graph.h"

static int experts_of(build *b, int x, int router_in, bool norm_in);

/* An ungated block's activation (nemotron_h's LLM_FFN_RELU_SQR): ggml's relu, then its square, each in place. */
static int relu_squared(build *b, int x, layout ly)
{
    const uint64_t bytes = graph_bytes(b->g, x);
    return graph_op(b->g, bytes, ly, true, graph_op(b->g, bytes, ly, true, x, -1, -1), -1, -1);
}

/* gate's SiLU times up (bytes each: gate may be a view of a product of both, Gemma 4's): the one GLU op, or where the
 * layer limits it in the form llama.cpp's build_moe_ffn and build_ffn give every family but Maple's
 * (model_arch.swiglu_clamp_silu_first: Step-3.5's), the gate's SiLU, that clamped, up clamped, their product: four ops
 * ggml may run in place (Maple's ggml_swiglu_clamp is one GLU op). */
static int swiglu_of(build *b, int gate, int up, uint64_t bytes, float limit, layout ly)
{
    graph *g = b->g;
    if (limit <= 1e-6f || !b->hp->arch->swiglu_clamp_silu_first)
        return graph_op(g, bytes, LY_OTHER, false, gate, up, -1);
    const int act = graph_op(g, bytes, ly, true, graph_op(g, bytes, ly, true, gate, -1, -1), -1, -1);
    up = graph_op(g, bytes, ly, true, up, -1, -1);
    return graph_op(g, bytes, ly, true, act, up, -1);
}

/* The limits of the layer being built (Step-3.5's by layer): [0] the experts', [1] the shared expert's and dense
 * block's. */
static void layer_limits(const build *b, float out[2])
{
    model_hparams lh;
    model_hparams_layer(b->hp, b->layer, &lh);
    out[0] = lh.swiglu_clamp_exp;
    out[1] = lh.swiglu_clamp_shexp;
}

/* The routed experts of x (llama-graph's build_moe_ffn): router, choice, the experts' products, their weighted
 * sum; then the shared expert, under its sigmoid gate where it has one (qwen2moe; glm4moe's has none). */
static int experts(build *b, int x)
{
    return experts_of(b, x, x, false);
}

/* The same, routed on the rows of router_in, the experts reading x (normed first where norm_in: Gemma 4's
 * pre_ffw_norm_2, which its graph meets after the routing). */
static int experts_of(build *b, int x, int router_in, bool norm_in)
{
    graph *g = b->g;
    const model_hparams *hp = b->hp;
    const uint64_t T = b->n_rows, f = sizeof(float), n_exp = (uint64_t)hp->n_expert, k = (uint64_t)hp->n_expert_used;
    const uint64_t ff = (uint64_t)hp->n_ff_exp, E = b->E;
    const bool bias = has(b, MODEL_ROLE_FFN_GATE_EXPS_BIAS), softmax_after = hp->moe_gating == MODEL_MOE_SOFTMAX_WEIGHT;
    /* SmallThinker's routing reads the layer's input alone, so build_moe_ffn's expansion of its weights lands right
     * after the attention's core (the last node expanded), ahead of the output product: every row's logits, the last
     * layer's rows picked from them */
    const bool on_input = b->layer_in >= 0;
    if (on_input)
        graph_insert_at(g, b->expanded);
    int logits = graph_op(g, n_exp * (on_input ? b->T : T) * f, LY_ROUTE, false, on_input ? b->layer_in : router_in,
                          -1, -1);
    if (on_input && T != b->T)
        logits = pick_rows(b, logits);
    int probs = logits;
    /* the softmax or the sigmoids, or the router's bias (gpt-oss) */
    if (!softmax_after || has(b, MODEL_ROLE_FFN_GATE_INP_BIAS))
        probs = graph_op(g, n_exp * T * f, LY_ROUTE, true, probs, -1, -1);
    const int probs_rows = graph_view(g, probs);
    /* what the choice ranks: the probabilities plus the selection bias where there is one (glm4moe) */
    int select =
        has(b, MODEL_ROLE_FFN_EXP_PROBS_B) ? graph_op(g, n_exp * T * f, LY_ROUTE, true, probs, -1, -1) : probs;
    if (hp->arch->moe_weight_before) /* Llama 4 ranks the logits (the sigmoids weigh the chosen) */
        select = logits;
    if (hp->n_expert_groups > 1) { /* each group's two best summed, the best groups' kept, the others' made -inf */
        const uint64_t groups = (uint64_t)hp->n_expert_groups, used = (uint64_t)hp->n_group_used;
        const int per_group = graph_view(g, select), rows_of_one = graph_view(g, per_group);
        const int two = graph_view(g, graph_op(g, n_exp * T * 4, LY_OTHER, false, per_group, -1, -1));
        const int best = graph_op(g, 2 * groups * T * f, LY_OTHER, false, rows_of_one, two, -1);
        const int score = graph_op(g, groups * T * f, LY_OTHER, false, graph_view(g, best), -1, -1);
        const int kept = graph_view(g, graph_op(g, groups * T * 4, LY_OTHER, false, graph_view(g, score), -1, -1));
        const int rows_kept = graph_op(g, n_exp / groups * used * T * f, LY_OTHER, false, per_group, kept, -1);
        const int fill = graph_op(g, n_exp * T * f, LY_OTHER, true, per_group, -1, -1);
        select = graph_view(g, graph_view_written(g, fill, rows_kept, kept));
    }
    /* the argsort (int32), its top k */
    const int chosen = graph_view(g, graph_op(g, n_exp * T * 4, LY_OTHER, false, select, -1, -1));
    int w = graph_op(g, k * T * f, LY_CHOSEN, false, probs_rows, chosen, -1);
    if (softmax_after) {
        w = graph_view(g, graph_op(g, k * T * f, LY_CHOSEN, true, graph_view(g, w), -1, -1));
    } else if (hp->moe_renormalise) {
        const int wv = graph_view(g, w);
        const int sum = graph_op(g, T * f, LY_TOKEN, true, graph_op(g, T * f, LY_TOKEN, false, wv, -1, -1), -1, -1);
        w = graph_view(g, graph_op(g, k * T * f, LY_CHOSEN, true, wv, sum, -1));
    }
    if (hp->moe_scale != 1.0f) /* expert_weights_scale */
        w = graph_op(g, k * T * f, LY_CHOSEN, true, w, -1, -1);
    if (on_input)
        graph_insert_at(g, -1);
    int in = graph_view(g, norm_in ? norm(b, x, LY_ROWS) : x);
    const bool before = hp->arch->moe_weight_before; /* Llama 4: the input repeated per choice, times its weight */
    if (before)
        in = graph_op(g, E * k * T * f, LY_EXPERT, true, graph_op(g, E * k * T * f, LY_EXPERT, false, in, -1, -1), w, -1);
    int gate, up;
    if (has(b, MODEL_ROLE_FFN_GATE_UP_EXPS)) { /* Gemma 4: one product, gate and up its two views */
        const int both = graph_op(g, 2 * ff * k * T * f, LY_EXPERT, false, in, chosen, -1);
        gate = graph_view(g, both), up = graph_view(g, both);
    } else if (!has(b, MODEL_ROLE_FFN_GATE_EXPS)) { /* Nemotron 3's: up alone, then relu and its square in place */
        gate = up = graph_op(g, ff * k * T * f, LY_EXPERT, false, in, chosen, -1);
    } else {
        gate = graph_op(g, ff * k * T * f, LY_EXPERT, false, in, chosen, -1);
        if (bias)
            gate = graph_op(g, ff * k * T * f, LY_EXPERT, true, gate, chosen, -1);
        up = graph_op(g, ff * k * T * f, LY_EXPERT, false, in, chosen, -1);
        if (bias)
            up = graph_op(g, ff * k * T * f, LY_EXPERT, true, up, chosen, -1);
    }
    float limits[2];
    layer_limits(b, limits);
    const int act =
        gate == up ? relu_squared(b, up, LY_EXPERT) : swiglu_of(b, gate, up, ff * k * T * f, limits[0], LY_EXPERT);
    int down = graph_op(g, E * k * T * f, LY_EXPERT, false, act, chosen, -1);
    if (bias)
        down = graph_op(g, E * k * T * f, LY_EXPERT, true, down, chosen, -1);
    if (has(b, MODEL_ROLE_FFN_DOWN_EXPS_SCALE)) { /* Gemma 4: each expert's scale repeated per token, its rows picked */
        const int repeated = graph_op(g, n_exp * T * f, LY_OTHER, false, -1, -1, -1);
        down = graph_op(g, E * k * T * f, LY_EXPERT, true, down,
                        graph_op(g, k * T * f, LY_OTHER, false, repeated, chosen, -1), -1);
    }
    const int weighted = before ? down : graph_op(g, E * k * T * f, LY_EXPERT, true, down, w, -1);
    int sum = k > 1 ? graph_op(g, E * T * f, LY_ROWS, true, graph_view(g, weighted), graph_view(g, weighted), -1)
                    : graph_op(g, E * T * f, LY_ROWS, false, graph_view(g, weighted), -1, -1); /* one expert: a copy */
    for (uint64_t j = 2; j < k; j++)
        sum = graph_op(g, E * T * f, LY_ROWS, true, sum, graph_view(g, weighted), -1);
    b->expanded = graph_position(g); /* build_moe_ffn expands the sum; the shared expert joins later */
    if (!has(b, MODEL_ROLE_FFN_UP_SHEXP))
        return sum;
    const uint64_t fs = (uint64_t)hp->n_ff_shexp;
    int shared;
    if (hp->arch->shexp_gate_up_fused) { /* Granite's: one product of both, ggml_swiglu of its halves, down */
        const int act = graph_op(g, fs * T * f, LY_OTHER, false, graph_op(g, 2 * fs * T * f, LY_ROWS, false, x, -1, -1),
                                 -1, -1);
        return graph_op(g, E * T * f, LY_ROWS, true, sum, graph_op(g, E * T * f, LY_ROWS, false, act, -1, -1), -1);
    }
    if (!has(b, MODEL_ROLE_FFN_GATE_SHEXP)) { /* Nemotron 3's: up, relu squared, down */
        shared = graph_op(g, E * T * f, LY_ROWS, false,
                          relu_squared(b, graph_op(g, fs * T * f, LY_ROWS, false, x, -1, -1), LY_ROWS), -1, -1);
        return graph_op(g, E * T * f, LY_ROWS, true, sum, shared, -1);
    }
    const int sg = graph_op(g, fs * T * f, LY_ROWS, false, x, -1, -1);
    const int su = graph_op(g, fs * T * f, LY_ROWS, false, x, -1, -1);
    shared = graph_op(g, E * T * f, LY_ROWS, false, swiglu_of(b, sg, su, fs * T * f, limits[1], LY_ROWS), -1, -1);
    if (!has(b, MODEL_ROLE_FFN_GATE_INP_SHEXP)) { /* Cohere2 MoE's halves the sum after (ggml_scale) */
        const int joined = graph_op(g, E * T * f, LY_ROWS, true, sum, shared, -1);
        return hp->arch->shexp_mean ? graph_op(g, E * T * f, LY_ROWS, true, joined, -1, -1) : joined;
    }
    const int logit = graph_op(g, T * f, LY_TOKEN, false, x, -1, -1);
    /* sigmoid(logit): one op in place (qwen35moe), or silu(logit) / logit (qwen2moe) */
    const int gate_w = b->bf->shexp_sigmoid ? graph_op(g, T * f, LY_TOKEN, true, logit, -1, -1)
                                            : graph_op(g, T * f, LY_TOKEN, true,
                                                       graph_op(g, T * f, LY_TOKEN, true, logit, -1, -1), logit, -1);
    shared = graph_op(g, E * T * f, LY_ROWS, true, shared, gate_w, -1);
    return graph_op(g, E * T * f, LY_ROWS, true, sum, shared, -1);
}

/* Layer il's feed-forward block of x: gated (gate and up, or phi3's one product holding both), or the experts (past
 * a mixture's leading dense layers; Grok-2's with a dense block beside them, their sum scaled). */

int build_feed_forward(build *b, int x, int64_t il)
{
    if (!model_hparams_layer_has_experts(b->hp, il))
        return build_dense_feed_forward(b, x, il);
    const int moe = experts(b, x);
    if (!b->hp->arch->moe_dense_mean || !has(b, MODEL_ROLE_FFN_UP))
        return moe;
    /* Grok-2's dense block on the same input after the experts, the sum, its scale */
    const uint64_t bytes = rows(b, b->E);
    const int sum = graph_op(b->g, bytes, LY_ROWS, true, build_dense_feed_forward(b, x, il), moe, -1);
    return graph_op(b->g, bytes, LY_ROWS, true, sum, -1, -1);
}

/* Gemma 4 26B-A4B's layer with experts on its attention output x, in its graph's order: the router's input (x normed
 * without gains, scaled, times its gains), the experts on pre_ffw_norm_2(x), the dense block on ffn_norm(x) and its
 * post_ffw_norm_1, the experts' post_ffw_norm_2, their sum. */
int build_dense_and_experts(build *b, int x, int64_t il)
{
    graph *g = b->g;
    const uint64_t bytes = rows(b, b->E);
    int router_in = graph_op(g, bytes, LY_ROWS, true, x, -1, -1);
    router_in = graph_op(g, bytes, LY_ROWS, true, graph_op(g, bytes, LY_ROWS, true, router_in, -1, -1), -1, -1);
    const int moe = experts_of(b, x, router_in, true);
    const int mlp = norm(b, build_dense_feed_forward(b, norm(b, x, LY_ROWS), il), LY_ROWS);
    return graph_op(g, bytes, LY_ROWS, true, mlp, norm(b, moe, LY_ROWS), -1);
}

/* A layer's dense feed-forward block of x (Arctic's beside its experts too). */
int build_dense_feed_forward(build *b, int x, int64_t il)
{
    graph *g = b->g;
    const model_hparams *hp = b->hp;
    model_hparams lh; /* the layer's own width (Gemma 4's last layers twice as wide) */
    model_hparams_layer(hp, il, &lh);
    const uint64_t F = (uint64_t)lh.n_ff;
    int act;
    if (hp->arch->gate_up_fused) {
        act = graph_op(g, rows(b, F), LY_OTHER, false, graph_op(g, rows(b, 2 * F), LY_ROWS, false, x, -1, -1), -1, -1);
    } else if (!has(b, MODEL_ROLE_FFN_GATE)) { /* ungated: up (plus its bias), relu squared (nemotron_h's) or GELU
                                                 * (starcoder2's) or xIELU (apertus's) in place */
        int up = graph_op(g, rows(b, F), LY_ROWS, false, x, -1, -1);
        if (has(b, MODEL_ROLE_FFN_UP_BIAS))
            up = graph_op(g, rows(b, F), LY_ROWS, true, up, -1, -1);
        act = hp->arch->act == MODEL_ACT_RELU_SQR ? relu_squared(b, up, LY_ROWS)
                                                  : graph_op(g, rows(b, F), LY_ROWS, true, up, -1, -1);
    } else if (lh.swiglu_clamp_shexp > 1e-6f && hp->arch->swiglu_clamp_silu_first) {
        /* build_ffn's limited SwiGLU (Step-3.5's, whose dense blocks have no biases), as ggml orders its graph from
         * the product: the gate, its SiLU and clamp, then the up product and its clamp */
        const uint64_t bytes = rows(b, F);
        const int gate = graph_op(g, bytes, LY_ROWS, false, x, -1, -1);
        const int act_gate = graph_op(g, bytes, LY_ROWS, true, graph_op(g, bytes, LY_ROWS, true, gate, -1, -1), -1, -1);
        const int up = graph_op(g, bytes, LY_ROWS, true, graph_op(g, bytes, LY_ROWS, false, x, -1, -1), -1, -1);
        act = graph_op(g, bytes, LY_ROWS, true, act_gate, up, -1);
    } else {
        /* llama.cpp's build_ffn: up (plus its bias), then gate (plus its bias: Jais's) */
        int up = graph_op(g, rows(b, F), LY_ROWS, false, x, -1, -1);
        if (has(b, MODEL_ROLE_FFN_UP_BIAS))
            up = graph_op(g, rows(b, F), LY_ROWS, true, up, -1, -1);
        int gate = graph_op(g, rows(b, F), LY_ROWS, false, x, -1, -1);
        if (has(b, MODEL_ROLE_FFN_GATE_BIAS))
            gate = graph_op(g, rows(b, F), LY_ROWS, true, gate, -1, -1);
        act = graph_op(g, rows(b, F), LY_OTHER, false, gate, up, -1);
    }
    if (has(b, MODEL_ROLE_FFN_SUB_NORM)) /* BitNet: the activation normed before the down product, into bytes of its
                                          * own (llama-completion's buffers at every setting: not the activation's) */
        act = norm(b, act, LY_OTHER);
    const int down = graph_op(g, rows(b, (uint64_t)hp->n_embd), LY_ROWS, false, act, -1, -1);
    return has(b, MODEL_ROLE_FFN_DOWN_BIAS) ? graph_op(g, rows(b, (uint64_t)hp->n_embd), LY_ROWS, true, down, -1, -1)
                                            : down;
}
