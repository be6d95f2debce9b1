/*
 * The recurrent layers' mixers in llama.cpp's compute graph, for the replay of its allocator (memory_compute.c says
 * how): Mamba-2's and Mamba-1's (mamba-base.cpp), the gated delta net (qwen35, qwen3next), LFM2's short convolution,
 * each node in the order ggml's graph holds it. Their state reads and stores (llama-graph's build_rs) are expanded where
 * the builder builds the layer, so they go at the position the last expanded node left (build.expanded).
 */
#include "memory_graph.h"

/* A recurrent layer's state reads (llama-graph's build_rs): the batch's sequences' rows of n values (none where the
 * read is the op itself: Mamba-2's scan reads its states by index), then the others' (no rows: one sequence a stream),
 * copied back into the cache; the first makes the row indices. Returns the rows read, or -1. */
static int state_rows(build *b, uint64_t n)
{
    graph *g = b->g;
    if (b->s_copy < 0) {
        b->s_copy = graph_input(g, 4 * b->streams);
        b->s_copy_main = graph_view(g, b->s_copy);
    }
    const int read = n ? graph_op(g, n * b->streams * sizeof(float), LY_OTHER, false, b->s_copy_main, -1, -1) : -1;
    if (b->s_copy_extra < 0)
        b->s_copy_extra = graph_view(g, b->s_copy);
    graph_store(g, graph_op(g, 0, LY_OTHER, false, b->s_copy_extra, -1, -1), -1);
    return read;
}

/* A Mamba-2 mixer on h (llama.cpp's build_mamba2_layer), in ggml's order: the conv state's rows; the input product
 * (z, xBC, dt); the state and xBC's columns concatenated, the last columns stored back; the convolution, its bias,
 * silu; dt made contiguous plus its bias; the scan (its output y, then the new states, stored back); then, pulled in
 * by the next layer: z made contiguous, y + x D, swiglu(z, y), the grouped norm, the output product. */
int mamba2_mixer(build *b, int h)
{
    graph *g = b->g;
    const model_hparams *hp = b->hp;
    const uint64_t f = sizeof(float), T = b->n_rows, S = b->streams, E = b->E;
    const uint64_t inner = (uint64_t)hp->ssm_d_inner, state = (uint64_t)hp->ssm_d_state;
    const uint64_t channels = inner + 2 * (uint64_t)hp->ssm_n_k_heads * state, taps = (uint64_t)hp->ssm_d_conv - 1;
    const uint64_t heads = (uint64_t)hp->ssm_n_v_heads;
    /* the conv state's reads are expanded where the layer is built: after the last node the builder expanded itself,
     * ahead of the earlier layers' nodes that this layer's product pulls in */
    graph_insert_at(g, b->expanded);
    const int conv_rows = state_rows(b, taps * channels);
    graph_insert_at(g, -1);
    const int zxbcdt = graph_view(g, graph_op(g, (inner + channels + heads) * T * f, LY_ROWS, false, h, -1, -1));
    const int conv_x = graph_op(g, (taps + T / S) * channels * S * f, LY_OTHER, false, graph_view(g, conv_rows),
                                graph_view(g, graph_view(g, zxbcdt)), -1);
    graph_store(g, graph_view(g, conv_x), -1);
    int xbc = graph_op(g, channels * T * f, LY_ROWS, false, conv_x, -1, -1);
    xbc = graph_op(g, channels * T * f, LY_ROWS, true, graph_op(g, channels * T * f, LY_ROWS, true, xbc, -1, -1), -1,
                   -1);
    const int x = graph_view(g, xbc);
    int dt = graph_op(g, heads * T * f, LY_ROWS, false, graph_view(g, zxbcdt), -1, -1);
    dt = graph_op(g, heads * T * f, LY_ROWS, true, dt, -1, -1);
    const int scan = graph_op(g, (inner * T + state * inner * S) * f, LY_OTHER, false, x, dt, b->s_copy_main);
    state_rows(b, 0);
    graph_store(g, graph_view(g, scan), -1);
    b->expanded = graph_position(g);
    const int z = graph_op(g, inner * T * f, LY_ROWS, false, graph_view(g, zxbcdt), -1, -1);
    const int y = graph_op(g, inner * T * f, LY_ROWS, true, graph_view(g, scan),
                           graph_op(g, inner * T * f, LY_ROWS, true, x, -1, -1), -1);
    const int gated = graph_op(g, inner * T * f, LY_ROWS, false, z, y, -1);
    return graph_op(g, E * T * f, LY_ROWS, false, graph_view(g, norm(b, graph_view(g, gated), LY_ROWS)), -1, -1);
}

/* A Mamba-1 mixer on h (llama.cpp's build_mamba_layer), in ggml's order: the conv state's rows; the input product
 * (x, z); the state and x's columns concatenated, the last columns stored back; the convolution, its bias, silu; ssm_x's
 * product (dt, B, C); dt made contiguous, or dt, B and C each RMS-normed (ssm.dt_b_c_rms); dt's product and its bias;
 * the scan (its output y, then the new states, stored back); then, pulled in by the next layer: z made contiguous,
 * y + x D, swiglu(z, y), the output product. */
int mamba1_mixer(build *b, int h)
{
    graph *g = b->g;
    const model_hparams *hp = b->hp;
    const uint64_t f = sizeof(float), T = b->n_rows, S = b->streams, E = b->E;
    const uint64_t inner = (uint64_t)hp->ssm_d_inner, state = (uint64_t)hp->ssm_d_state;
    const uint64_t taps = (uint64_t)hp->ssm_d_conv - 1, rank = (uint64_t)hp->ssm_dt_rank;
    graph_insert_at(g, b->expanded); /* the conv state's reads: where the builder expands the layer (mamba2_mixer) */
    const int conv_rows = state_rows(b, taps * inner);
    graph_insert_at(g, -1);
    const int xz = graph_op(g, 2 * inner * T * f, LY_ROWS, false, h, -1, -1);
    const int conv_x = graph_op(g, (taps + T / S) * inner * S * f, LY_OTHER, false, graph_view(g, conv_rows),
                                graph_view(g, graph_view(g, xz)), -1);
    graph_store(g, graph_view(g, conv_x), -1);
    int x = graph_op(g, inner * T * f, LY_ROWS, false, conv_x, -1, -1);
    x = graph_op(g, inner * T * f, LY_ROWS, true, graph_op(g, inner * T * f, LY_ROWS, true, x, -1, -1), -1, -1);
    const int x_db = graph_op(g, (rank + 2 * state) * T * f, LY_ROWS, false, x, -1, -1);
    const int dt_low = graph_op(g, rank * T * f, LY_ROWS, false, graph_view(g, x_db), -1, -1); /* cont or rms_norm */
    int dt = graph_op(g, inner * T * f, LY_ROWS, false, dt_low, -1, -1);
    dt = graph_op(g, inner * T * f, LY_ROWS, true, dt, -1, -1);
    int src[5] = { x, dt, b->s_copy_main, -1, -1 }, n_src = 3;
    if (hp->ssm_dt_b_c_rms) { /* B's and C's norms, which the scan reads in place of x_db's views */
        src[2] = graph_op(g, state * T * f, LY_ROWS, false, graph_view(g, x_db), -1, -1);
        src[3] = graph_op(g, state * T * f, LY_ROWS, false, graph_view(g, x_db), -1, -1);
        src[4] = b->s_copy_main;
        n_src = 5;
    }
    const int scan = graph_op_n(g, (inner * T + state * inner * S) * f, LY_OTHER, false, src, n_src);
    state_rows(b, 0);
    graph_store(g, graph_view(g, scan), -1);
    b->expanded = graph_position(g);
    const int z = graph_op(g, inner * T * f, LY_ROWS, false, graph_view(g, xz), -1, -1);
    const int y = graph_op(g, inner * T * f, LY_ROWS, true, graph_view(g, scan),
                           graph_op(g, inner * T * f, LY_ROWS, true, x, -1, -1), -1);
    const int gated = graph_op(g, inner * T * f, LY_ROWS, false, z, y, -1);
    return graph_op(g, E * T * f, LY_ROWS, false, gated, -1, -1);
}

/* A gated delta net on h (llama.cpp's qwen35 / qwen3next build_layer_attn_linear with the fused GATED_DELTA_NET op,
 * which its CPU context turns on), in ggml's order, all of it expanded as built (the graph expands the layer's norm
 * before it, so its state reads follow that): the conv state's rows; the q, k, v product (or the older files' q, k, v,
 * z product, its parts made contiguous and concatenated); the state and its columns concatenated, the last stored
 * back; the scan states' rows; the convolution and silu; q's and k's L2 norms (an RMS norm and a scale each), each
 * repeated to the value heads where the graph does (qwen3next); alpha's product (or beta and alpha's, each part made
 * contiguous), its bias, softplus and A; beta's sigmoid; the delta net (its output, then the new states, stored back);
 * the output's grouped norm, z (a product, or the older files' part made contiguous) and its silu, their product, the
 * output product. */
int delta_net_mixer(build *b, int h)
{
    graph *g = b->g;
    const model_hparams *hp = b->hp;
    const uint64_t f = sizeof(float), T = b->n_rows, S = b->streams, E = b->E;
    const uint64_t inner = (uint64_t)hp->ssm_d_inner, keys = (uint64_t)(hp->ssm_d_state * hp->ssm_n_k_heads);
    const uint64_t channels = inner + 2 * keys, taps = (uint64_t)hp->ssm_d_conv - 1;
    const uint64_t heads = (uint64_t)hp->ssm_n_v_heads, state = (uint64_t)hp->ssm_d_state * inner;
    const bool qkvz_fused = !has(b, MODEL_ROLE_ATTN_QKV), ba_fused = has(b, MODEL_ROLE_SSM_BA);
    const bool repeat = b->bf->gdn_repeat && hp->ssm_n_k_heads != hp->ssm_n_v_heads;
    const int conv_rows = state_rows(b, taps * channels);
    int qkv, qkvz = -1;
    if (qkvz_fused) {
        qkvz = graph_op(g, (channels + inner) * T * f, LY_ROWS, false, h, -1, -1);
        const int q = graph_op(g, keys * T * f, LY_OTHER, false, graph_view(g, qkvz), -1, -1);
        const int qk = graph_op(g, 2 * keys * T * f, LY_OTHER, false, q,
                                graph_op(g, keys * T * f, LY_OTHER, false, graph_view(g, qkvz), -1, -1), -1);
        qkv = graph_op(g, channels * T * f, LY_OTHER, false, qk,
                       graph_op(g, inner * T * f, LY_OTHER, false, graph_view(g, qkvz), -1, -1), -1);
    } else {
        qkv = graph_op(g, channels * T * f, LY_ROWS, false, h, -1, -1);
    }
    const int conv_x = graph_op(g, (taps + T / S) * channels * S * f, LY_OTHER, false, graph_view(g, conv_rows),
                                graph_view(g, graph_view(g, qkv)), -1);
    graph_store(g, graph_view(g, conv_x), -1);
    const int states = state_rows(b, state);
    int mix = graph_op(g, channels * T * f, LY_ROWS, false, conv_x, -1, -1);
    mix = graph_op(g, channels * T * f, LY_ROWS, true, mix, -1, -1);
    int qk[2];
    for (int i = 0; i < 2; i++) {
        qk[i] = norm_rows(b, graph_view(g, mix), keys * T * f, LY_HEADS);
        if (repeat)
            qk[i] = graph_view(g, graph_op(g, heads * (uint64_t)hp->ssm_d_state * T * f, LY_OTHER, false,
                                           graph_view(g, qk[i]), -1, -1));
    }
    const int v = graph_view(g, mix);
    /* alpha and beta: each a product viewed, or a part of their one product made contiguous; then alpha's bias (in
     * place on a contiguous part, new on a view), softplus and A, and beta's sigmoid */
    const uint64_t per_head = heads * T * f;
    const int ba = ba_fused ? graph_op(g, 2 * per_head, LY_ROWS, false, h, -1, -1) : -1;
    int gate = ba_fused ? graph_op(g, per_head, LY_ROWS, false, graph_view(g, ba), -1, -1)
                        : graph_view(g, graph_op(g, per_head, LY_ROWS, false, h, -1, -1));
    gate = graph_op(g, per_head, LY_ROWS, true, gate, -1, -1);
    gate = graph_op(g, per_head, LY_ROWS, true, graph_op(g, per_head, LY_ROWS, true, gate, -1, -1), -1, -1);
    const int beta_in = ba_fused ? graph_op(g, per_head, LY_ROWS, false, graph_view(g, ba), -1, -1)
                                 : graph_view(g, graph_op(g, per_head, LY_ROWS, false, h, -1, -1));
    const int beta = graph_op(g, per_head, LY_ROWS, true, beta_in, -1, -1);
    const int src[6] = { qk[0], qk[1], v, graph_view(g, gate), graph_view(g, beta), graph_view(g, states) };
    const int gdn = graph_op_n(g, (inner * T + state * S) * f, LY_OTHER, false, src, 6);
    graph_store(g, graph_view(g, gdn), -1);
    b->expanded = graph_position(g);
    const int normed = norm_rows(b, graph_view(g, gdn), inner * T * f, LY_ROWS);
    const int z = graph_op(g, inner * T * f, LY_ROWS, false, qkvz_fused ? graph_view(g, qkvz) : h, -1, -1);
    const int gated = graph_op(g, inner * T * f, LY_ROWS, true, normed,
                               graph_op(g, inner * T * f, LY_ROWS, false, graph_view(g, z), -1, -1), -1);
    return graph_view(g, graph_op(g, E * T * f, LY_ROWS, false, graph_view(g, gated), -1, -1));
}

/* LFM2's short convolution on h (its graph's build_shortconv_block), in ggml's order: the conv state's rows; the input
 * product (b, c, x); b x; the state and b x's columns concatenated, the last columns stored back; then, pulled in by
 * the next layer: the convolution, c times it, the output product. */
int shortconv_mixer(build *b, int h)
{
    graph *g = b->g;
    const uint64_t f = sizeof(float), T = b->n_rows, S = b->streams, E = b->E;
    const uint64_t taps = (uint64_t)b->hp->shortconv_l_cache - 1;
    graph_insert_at(g, b->expanded); /* read where the layer is built, as the Mamba-2 mixer's */
    const int conv_rows = state_rows(b, taps * E);
    graph_insert_at(g, -1);
    const int bcx = graph_op(g, 3 * E * T * f, LY_ROWS, false, graph_view(g, h), -1, -1);
    const int bx = graph_op(g, E * T * f, LY_ROWS, true, graph_view(g, bcx), graph_view(g, bcx), -1);
    const int conv_x = graph_op(g, (taps + T / S) * E * S * f, LY_OTHER, false, graph_view(g, conv_rows),
                                graph_view(g, bx), -1);
    graph_store(g, graph_view(g, conv_x), -1);
    b->expanded = graph_position(g);
    const int conv = graph_op(g, E * T * f, LY_ROWS, false, conv_x, -1, -1);
    const int y = graph_op(g, E * T * f, LY_ROWS, true, graph_view(g, bcx), conv, -1);
    return graph_view(g, graph_op(g, E * T * f, LY_ROWS, false, y, -1, -1));
}
