/*
 * The compute buffer llama.cpp reserves, replayed: its prompt graph for the worst-case batch (a ubatch of T
 * tokens, every row an output, a full cache) written node by node as llama.cpp's builders write it
 * (the files of src/models and llama-graph.cpp, as vendored by llama-cpp-python 0.3.36), and its graph allocator
 * (ggml/src/ggml-alloc.c) run over it. The buffer is the allocator's high-water mark, holes included: the
 * tensors alive at the peak are not enough, since a freed tensor's bytes are reused only by a tensor that fits
 * in them (on a tiny model the two-row hole the attention leaves is what a 3-row-wide gate cannot use).
 *
 * The allocator is graph_replay.c. The graph's inputs are made in the order the graph meets them (inp_embd too,
 * reserved for callers that pass embeddings: it has no reader, so it is never freed).
 *
 * scripts/llama-alloc-trace.sh prints llama.cpp's own run of this on a file; tests/test_memory.c holds the
 * replay to the buffers llama.cpp printed for every shared, real and synthetic-architecture file.
 */
#include "memory_graph.h"

#include <stdio.h>
#include <string.h>

static const builder_facts facts[] = {
    { .arch = "llama" }, { .arch = "qwen2" }, { .arch = "qwen3" }, { .arch = "qwen2moe" }, { .arch = "qwen3moe" },
    { .arch = "gpt-oss", .k_before_v = true, .rows_after_layers = true },
    { .arch = "phi3", .residual_first = true }, { .arch = "granite" }, { .arch = "olmo2" },
    { .arch = "gemma2", .k_before_v = true },
    { .arch = "gemma3", .k_before_v = true }, { .arch = "glm4moe" }, { .arch = "minimax-m2" },
    { .arch = "olmoe" }, { .arch = "ernie4_5-moe" }, { .arch = "bailingmoe2" }, { .arch = "dots1" },
    { .arch = "granitemoe" }, { .arch = "deepseek2" }, { .arch = "qwen2vl" }, { .arch = "qwen3vl" },
    { .arch = "qwen3vlmoe" }, { .arch = "smollm3" }, { .arch = "seed_oss" }, { .arch = "mistral3" },
    { .arch = "exaone4" }, { .arch = "internlm2" }, { .arch = "ernie4_5" }, { .arch = "mistral4" }, { .arch = "glm4" },
    { .arch = "exaone" }, { .arch = "gemma" }, { .arch = "llama4" }, { .arch = "command-r" },
    { .arch = "cohere2" }, { .arch = "hunyuan-dense" },
    { .arch = "gemma4", .k_before_v = true, .rows_after_norm = true },
    { .arch = "nemotron_h", .rows_after_norm = true }, { .arch = "nemotron_h_moe", .rows_after_norm = true },
    { .arch = "granitehybrid" }, { .arch = "lfm2", .residual_first = true, .residual_first_attn = true },
    { .arch = "lfm2moe", .residual_first = true, .residual_first_attn = true },
    { .arch = "qwen35", .rows_after_norm = true },
    { .arch = "qwen35moe", .rows_after_norm = true, .shexp_sigmoid = true },
    { .arch = "qwen3next", .rows_after_norm = true, .shexp_sigmoid = true, .gdn_repeat = true },
    { .arch = "falcon-h1", .rows_after_residual = true }, { .arch = "mamba2" }, { .arch = "mamba" },
    { .arch = "jamba", .residual_first = true, .residual_first_attn = true }, { .arch = "hunyuan-moe" }, { .arch = "arcee" }, { .arch = "minicpm" },
    { .arch = "starcoder2" }, { .arch = "stablelm" }, { .arch = "phi2" },
    { .arch = "falcon", .parallel_ffn_first = true }, { .arch = "gptneox" }, { .arch = "gpt2" }, { .arch = "starcoder" },
    { .arch = "bloom" }, { .arch = "mpt" }, { .arch = "deci" }, { .arch = "nemotron" }, { .arch = "olmo" },
    { .arch = "dbrx" }, { .arch = "bailingmoe" }, { .arch = "apertus" }, { .arch = "deepseek" },
    { .arch = "chatglm" }, { .arch = "xverse" }, { .arch = "maincoder" },
    { .arch = "orion" }, { .arch = "baichuan" }, { .arch = "qwen" }, { .arch = "refact" },
    { .arch = "codeshell" }, { .arch = "jais" },
    { .arch = "plamo", .parallel_ffn_first = true }, { .arch = "jais2" }, { .arch = "exaone-moe" }, { .arch = "afmoe" },
    { .arch = "mellum" }, { .arch = "minicpm3" }, { .arch = "plm" }, { .arch = "phimoe", .residual_first = true },
    { .arch = "smallthinker" }, { .arch = "pangu-embedded" }, { .arch = "grok" }, { .arch = "bitnet" }, { .arch = "openelm", .residual_first_attn = true },
    { .arch = "hunyuan_vl" }, { .arch = "arctic" }, { .arch = "nanbeige" }, { .arch = "granite_swa" },
    { .arch = "mimo2" }, { .arch = "maple" }, { .arch = "step35", .rows_after_layers = true, .layers_out_kept = true },
    { .arch = "spark2_5" }, { .arch = "hy_v3", .rows_after_norm = true }, { .arch = "plamo3" },
    { .arch = "cohere2moe", .rows_after_norm = true }, { .arch = "laguna" }, { .arch = "talkie" },
};


/* Scaled in place where the model multiplies by s (granite's multipliers, gemma's embedding scale). */
static int scaled(build *b, int x, float s)
{
    return s != 1.0f ? graph_op(b->g, graph_bytes(b->g, x), LY_ROWS, true, x, -1, -1) : x;
}


/* A DeciLM layer (llama.cpp's deci graph) of input x, h its attn_norm where it attends: its attention (the output
 * product of h alone where it has no key/value heads: llama.cpp's "linear attention", without the output's bias),
 * added to x, or x itself where it has no heads; the last layer's rows picked (the attention's, then x's); then the
 * feed-forward block on its norm, added; a layer without one leaves x as it came (the graph goes on from x). */
static int pruned_layer(build *b, int64_t il, int x, int h, bool last)
{
    graph *g = b->g;
    const model_hparams *hp = b->hp;
    const bool attends = model_hparams_layer_has_attention(hp, il);
    int cur = !attends ? x
              : model_hparams_layer_has_kv_heads(hp, il) ? build_attention(b, (int)il, h)
                                                          : graph_op(g, rows(b, b->E), LY_ROWS, false, h, -1, -1);
    if (!model_hparams_layer_has_ffn(hp, il))
        return x;
    int res = x;
    if (last) {
        cur = pick_rows(b, cur);
        res = attends ? pick_rows(b, x) : cur;
        b->n_rows = b->n_out;
    }
    const int inp = attends ? graph_op(g, rows(b, b->E), LY_ROWS, true, cur, res, -1) : cur;
    const int out = build_feed_forward(b, norm_rows_bias(b, inp, rows(b, b->E), LY_ROWS, false), il);
    return graph_op(g, rows(b, b->E), LY_ROWS, true, out, inp, -1);
}

/* The attention's output product of its core (its rows picked in the last layer), for summed_parallel_layer. */
static int parallel_attention(build *b, int core, bool last)
{
    const int att = build_out_projection(b, core);
    return last ? pick_rows(b, att) : att;
}

/* The feed-forward block of h (its rows picked in the last layer, the block on those), for summed_parallel_layer. */
static int parallel_ffn(build *b, int h, int64_t il, bool last)
{
    const int hi = last ? pick_rows(b, h) : h;
    b->n_rows = last ? b->n_out : b->T;
    const int ffn = build_feed_forward(b, hi, il);
    b->n_rows = b->T;
    return ffn;
}

/* A layer whose two blocks read one norm and are summed before the residual (llama.cpp's phi2: (attention + ffn) + x;
 * falcon: (ffn + attention) + x), in ggml's order: the attention's core, which build_attn expands (on Falcon-40B's
 * attn_norm_2 of x, attn_norm being the feed-forward block's alone and met where that block is), then the final sum's
 * sources depth first: the first block's, the second's, their sum, x's rows, the residual sum. */
static int summed_parallel_layer(build *b, int64_t il, int x, bool last)
{
    graph *g = b->g;
    const bool own_norm = has(b, MODEL_ROLE_ATTN_NORM_2);
    const model_role norm_role = own_norm ? MODEL_ROLE_ATTN_NORM_2 : MODEL_ROLE_ATTN_NORM;
    const model_role bias_role = own_norm ? MODEL_ROLE_ATTN_NORM_2_BIAS : MODEL_ROLE_ATTN_NORM_BIAS;
    const int h_attn = has(b, norm_role) ? norm_rows_bias(b, x, rows(b, b->E), LY_ROWS, has(b, bias_role)) : x;
    const int core = build_attention_core(b, (int)il, h_attn);
    int first, second;
    if (b->bf->parallel_ffn_first) { /* the feed-forward block's norm is met here */
        const int h = own_norm ? norm_rows_bias(b, x, rows(b, b->E), LY_ROWS, has(b, MODEL_ROLE_ATTN_NORM_BIAS))
                               : h_attn;
        first = parallel_ffn(b, h, il, last);
        second = parallel_attention(b, core, last);
    } else {
        first = parallel_attention(b, core, last);
        second = parallel_ffn(b, h_attn, il, last);
    }
    if (last)
        b->n_rows = b->n_out;
    const int both = graph_op(g, rows(b, b->E), LY_ROWS, true, first, second, -1);
    return graph_op(g, rows(b, b->E), LY_ROWS, true, both, last ? pick_rows(b, x) : x, -1);
}

/* Snowflake Arctic's layer with experts (llama.cpp's arctic graph), in ggml's order: the attention's core, which
 * build_attn expands; the experts of ffn_norm_exps(x) (x's rows picked first in the last layer), which build_moe_ffn
 * expands right after it, reading nothing of the attention; then what a later expansion meets depth first from the
 * layer's output, (experts + ((dense + inp)): the output product (its rows picked), the residual sum inp, the dense
 * block on its ffn_norm, its sum with inp, the experts' sum added. */
static int dense_residual_layer(build *b, int64_t il, int x, int h, bool last)
{
    graph *g = b->g;
    const int core = build_attention_core(b, (int)il, h);
    const uint64_t all_rows = b->n_rows;
    const int xr = last ? pick_rows(b, x) : x;
    if (last)
        b->n_rows = b->n_out;
    const int moe = build_feed_forward(b, norm_rows(b, xr, rows(b, b->E), LY_ROWS), il);
    b->n_rows = all_rows;
    int att = build_out_projection(b, core);
    if (last) {
        att = pick_rows(b, att);
        b->n_rows = b->n_out;
    }
    const int inp = graph_op(g, rows(b, b->E), LY_ROWS, true, att, xr, -1);
    const int dense = build_dense_feed_forward(b, norm_rows(b, inp, rows(b, b->E), LY_ROWS), il);
    const int ffn_out = graph_op(g, rows(b, b->E), LY_ROWS, true, dense, inp, -1);
    return graph_op(g, rows(b, b->E), LY_ROWS, true, moe, ffn_out, -1);
}

static uint64_t build_and_replay(const gguf_file *f, const model_hparams *hp, const model_memory_params *p,
                                 const model_memory *m, const builder_facts *bf)
{
    graph *g = graph_new();
    if (!g)
        return 0;
    const uint64_t seqs = (uint64_t)p->n_seq, T = ((uint64_t)m->n_tokens + seqs - 1) / seqs * seqs;
    build b = { .g = g, .f = f, .hp = hp, .m = m, .bf = bf, .T = T, .n_rows = T, .n_out = (uint64_t)m->n_tokens,
                .out_ids = -1, .pos = -1, .attn_temp = -1,
                .k_rot_n = { build_cache_rotation(hp, p->type_k, false, true), build_cache_rotation(hp, p->type_k, true, true) },
                .v_rot_n = { build_cache_rotation(hp, p->type_v, false, false), build_cache_rotation(hp, p->type_v, true, false) },
                .k_rot = { -1, -1 }, .v_rot = { -1, -1 }, .type_k = p->type_k, .streams = seqs,
                .v_padded = model_memory_v_padded(hp, m->flash_attn), .s_copy = -1, .s_copy_main = -1,
                .s_copy_extra = -1, .q_gated = -1, .layer_in = -1,
                .E = (uint64_t)hp->n_embd, .cache = { { -1, -1, -1, (uint64_t)m->kv_cells },
                                                      { -1, -1, -1, (uint64_t)m->kv_cells_swa } } };
    const uint64_t V = (uint64_t)(hp->n_vocab > 0 ? hp->n_vocab : hp->vocab_size);
    const int tokens = graph_input(g, 4 * b.T);
    /* Qwen3-VL's deepstack layers add later slices of a wider input row (an image's features; a text token's
     * embedding padded with zeros), so the input is that wide, the embedding padded and viewed */
    const uint64_t deepstack = (uint64_t)hp->n_deepstack_layers;
    graph_input(g, rows(&b, b.E * (1 + deepstack))); /* inp_embd: no reader, never freed */
    int x = graph_op(g, rows(&b, b.E), LY_ROWS, false, tokens, -1, -1);
    if (gguf_tensor_by_name(f, model_role_info_of(MODEL_ROLE_POS_EMBD)->name)) { /* GPT-2: + the positions' rows */
        b.pos = graph_input(g, 4 * b.T);
        x = graph_op(g, rows(&b, b.E), LY_ROWS, true, x, graph_op(g, rows(&b, b.E), LY_ROWS, false, b.pos, -1, -1), -1);
    }
    if (hp->arch->embd_norm) /* BLOOM: the embeddings' LayerNorm with its bias */
        x = norm_rows_bias(&b, x, rows(&b, b.E), LY_ROWS, true);
    const int embd = deepstack ? graph_view(g, graph_op(g, rows(&b, b.E * (1 + deepstack)), LY_OTHER, false, x, -1, -1))
                               : -1;
    /* Gemma 4 E2B / E4B: each token's per-layer rows (llama.cpp expands them right after the embedding), [P, L, T] */
    const uint64_t P = (uint64_t)hp->n_embd_per_layer, PL = P * (uint64_t)hp->n_layer;
    int ple_sel = -1, ple_all = -1;
    if (P) {
        ple_sel = graph_op(g, rows(&b, PL), LY_ROWS, false, graph_input(g, 4 * b.T), -1, -1);
        ple_sel = graph_op(g, rows(&b, PL), LY_HEADS, true, graph_view(g, ple_sel), -1, -1);
    }
    x = deepstack ? embd : scaled(&b, x, hp->embd_scale);
    const int embd_scaled = x;
    /* Talkie: the embeddings RMS-normed (no gains), which every layer's skip reads */
    const int skip = hp->arch->embd_skip ? (x = norm_rows(&b, x, rows(&b, b.E), LY_ROWS)) : -1;
    b.expanded = graph_position(g); /* build_inp_embd expands the embedding */
    /* the prediction blocks after the layers are another graph; a looped model runs its blocks again, the final norm
     * of each pass's output (its loop_norm) the next pass's input */
    const int64_t n_run = model_hparams_layers_run(hp);
    for (int64_t run = 0; run < n_run && !graph_failed(g); run++) {
        const int64_t il = model_hparams_layer_block(hp, run);
        b.layer = il;
        if (run > 0 && model_hparams_layer_ends_loop(hp, run - 1))
            x = norm(&b, x, LY_ROWS);
        const bool last = run == n_run - 1 && !bf->rows_after_layers && !bf->rows_after_norm;
        if (hp->arch->parallel_blocks_summed) {
            x = summed_parallel_layer(&b, il, x, last);
            continue;
        }
        b.layer_in = hp->arch->router_on_input ? x : -1;
        const int h = has(&b, MODEL_ROLE_ATTN_NORM) || hp->arch->norms_without_gains
                          ? norm_rows_bias(&b, x, rows(&b, b.E), LY_ROWS, has(&b, MODEL_ROLE_ATTN_NORM_BIAS))
                          : x;
        if (hp->parallel) { /* Cohere: x = (ffn(h) + x) + build_attention(h), GPT-NeoX: (ffn(ffn_norm(x)) + x) +
                              * build_attention(h), in ggml's order: the attention's core; the feed-forward block (on the last
                              * layer's rows of h, or its own norm of x's rows, picked first); the sum with x (its rows);
                              * the output product; its rows; the sum */
            const bool own_norm = has(&b, MODEL_ROLE_FFN_NORM);
            const int core = build_attention_core(&b, (int)il, h);
            const uint64_t all_rows = b.n_rows;
            const int xr = own_norm && last ? pick_rows(&b, x) : x;
            const int hi = own_norm ? -1 : last ? pick_rows(&b, h) : h;
            if (last)
                b.n_rows = b.n_out;
            const int ffn = build_feed_forward(&b, own_norm ? norm_rows_bias(&b, xr, rows(&b, b.E), LY_ROWS,
                                                                       has(&b, MODEL_ROLE_FFN_NORM_BIAS))
                                                      : hi,
                                         il);
            const int sum = graph_op(g, rows(&b, b.E), LY_ROWS, true, ffn, own_norm || !last ? xr : pick_rows(&b, x), -1);
            b.n_rows = all_rows;
            int att = build_out_projection(&b, core);
            if (last) {
                att = pick_rows(&b, att);
                b.n_rows = b.n_out;
            }
            x = graph_op(g, rows(&b, b.E), LY_ROWS, true, sum, att, -1);
            continue;
        }
        if (hp->arch->blocks_by_width) {
            x = pruned_layer(&b, il, x, h, last);
            continue;
        }
        if (hp->arch->moe_dense_residual && model_hparams_layer_has_experts(hp, il)) {
            x = dense_residual_layer(&b, il, x, h, last);
            continue;
        }
        if (hp->arch->single_block) { /* nemotron_h: x + one block of attn_norm(x): mixer, attention or feed-forward
                                        * (mamba2: the last layer's rows picked from the mixer's output, then x's) */
            const bool recurrent = model_hparams_layer_is_recurrent(hp, il);
            int cur = recurrent && hp->arch->mamba2 ? mamba2_mixer(&b, h)
                      : recurrent && hp->arch->mamba1 ? mamba1_mixer(&b, h)
                      : model_hparams_layer_is_ffn_only(hp, il) ? build_feed_forward(&b, h, il)
                                                                : build_attention(&b, (int)il, h);
            if (last) {
                cur = pick_rows(&b, cur);
                b.n_rows = b.n_out;
            }
            x = graph_op(g, rows(&b, b.E), LY_ROWS, true, cur, last ? pick_rows(&b, x) : x, -1);
            continue;
        }
        const bool recurrent = model_hparams_layer_is_recurrent(hp, il);
        int cur = hp->arch->mla                       ? build_latent_attention(&b, h)
                  : hp->arch->mixer_beside           ? build_attention_and_mixer(&b, (int)il, x, h)
                  : recurrent && hp->arch->mamba2    ? mamba2_mixer(&b, h)
                  : recurrent && hp->arch->mamba1    ? mamba1_mixer(&b, h)
                  : recurrent && hp->arch->shortconv ? shortconv_mixer(&b, h)
                  : recurrent && hp->arch->delta_net ? delta_net_mixer(&b, h)
                                                      : build_attention(&b, (int)il, h);
        const bool pick_sum = last && bf->rows_after_residual; /* falcon-h1: the residual sum's rows picked */
        int res = x;
        if (last && !pick_sum && bf->residual_first_attn) { /* the add reads the residual's rows first: ggml meets
                                                             * them before the block's nodes nothing expanded yet */
            graph_insert_at(g, b.expanded);
            res = pick_rows(&b, x);
            graph_insert_at(g, -1);
        }
        if (last && !pick_sum) {
            cur = pick_rows(&b, cur);
            b.n_rows = b.n_out;
        }
        const model_role post_from = hp->arch->attn_post_norm_from, post_or = hp->arch->ffn_post_norm_or;
        if ((has(&b, MODEL_ROLE_ATTN_POST_NORM) && hp->arch->ffn_norm_from != MODEL_ROLE_ATTN_POST_NORM) ||
            (post_from && has(&b, post_from)))
            cur = norm(&b, cur, LY_ROWS);
        cur = scaled(&b, cur, hp->residual_scale);
        if (last && !pick_sum && !bf->residual_first_attn)
            res = pick_rows(&b, x);
        const int skip_rows = skip >= 0 && last ? pick_rows(&b, skip) : skip; /* (Talkie's, picked after x's) */
        int inp = bf->residual_first_attn ? graph_op(g, rows(&b, b.E), LY_ROWS, true, res, cur, -1)
                                          : graph_op(g, rows(&b, b.E), LY_ROWS, true, cur, res, -1);
        if (pick_sum) {
            inp = pick_rows(&b, inp);
            b.n_rows = b.n_out;
        }
        const bool ffn_norm = has(&b, MODEL_ROLE_FFN_NORM) || hp->arch->norms_without_gains ||
                              (hp->arch->ffn_norm_from && has(&b, hp->arch->ffn_norm_from));
        int out = hp->arch->moe_dense_beside && model_hparams_layer_has_experts(hp, il)
                      ? build_dense_and_experts(&b, inp, il)
                      : build_feed_forward(&b,
                                     ffn_norm ? norm_rows_bias(&b, inp, rows(&b, b.E), LY_ROWS,
                                                               has(&b, MODEL_ROLE_FFN_NORM_BIAS))
                                              : inp,
                                     il);
        if (has(&b, MODEL_ROLE_FFN_POST_NORM) || (post_or && has(&b, post_or)))
            out = norm(&b, out, LY_ROWS);
        out = scaled(&b, out, hp->residual_scale);
        x = bf->residual_first ? graph_op(g, rows(&b, b.E), LY_ROWS, true, inp, out, -1)
                               : graph_op(g, rows(&b, b.E), LY_ROWS, true, out, inp, -1);
        if ((uint64_t)il < deepstack) /* the input row's slice il + 1 added to the layer's output */
            x = graph_op(g, rows(&b, b.E), LY_ROWS, true, x, graph_view(g, embd), -1);
        if (P) { /* Gemma 4 E2B / E4B: x += post_norm(proj(GELU(inp_gate x) * the layer's per-layer rows)) */
            const int gate = graph_op(g, rows(&b, P), LY_ROWS, true, graph_op(g, rows(&b, P), LY_ROWS, false, x, -1, -1),
                                      -1, -1);
            if (ple_all < 0) { /* the per-layer inputs, where the first layer reads them: the embeddings' projection,
                                * scaled, normed, added to the rows, scaled, permuted into a copy */
                int pr = graph_op(g, rows(&b, PL), LY_ROWS, true, graph_op(g, rows(&b, PL), LY_ROWS, false, embd_scaled,
                                                                            -1, -1), -1, -1);
                pr = norm(&b, graph_view(g, pr), LY_HEADS);
                pr = graph_op(g, rows(&b, PL), LY_HEADS, true, graph_op(g, rows(&b, PL), LY_HEADS, true, pr, ple_sel, -1),
                              -1, -1);
                ple_all = graph_op(g, rows(&b, PL), LY_OTHER, false, graph_view(g, pr), -1, -1);
            }
            const int mixed = graph_op(g, rows(&b, P), LY_ROWS, true, gate, graph_view(g, ple_all), -1);
            x = graph_op(g, rows(&b, b.E), LY_ROWS, true, x,
                         norm(&b, graph_op(g, rows(&b, b.E), LY_ROWS, false, mixed, -1, -1), LY_ROWS), -1);
        }
        if (skip >= 0) /* Talkie: + the normed embeddings times the layer's scale */
            x = graph_op(g, rows(&b, b.E), LY_ROWS, true, x,
                         graph_op(g, rows(&b, b.E), LY_ROWS, true, skip_rows, -1, -1), -1);
        else if (has(&b, MODEL_ROLE_LAYER_OUT_SCALE)) /* Gemma 4: the layer's output times its scale */
            x = graph_op(g, rows(&b, b.E), LY_ROWS, true, x, -1, -1);
    }
    b.layer = 0;
    if (bf->rows_after_layers) {
        if (bf->layers_out_kept)
            graph_output(g, x);
        x = pick_rows(&b, x);
        b.n_rows = b.n_out;
    }
    x = norm_rows_bias(&b, x, rows(&b, b.E), LY_ROWS,
                       gguf_tensor_by_name(f, model_role_info_of(MODEL_ROLE_OUTPUT_NORM_BIAS)->name) != NULL);
    if (bf->rows_after_norm) { /* gemma4, nemotron_h: the rows picked from the final norm's output, which is a graph
                                * output too (t_h_nextn, a draft head's input): never freed */
        graph_output(g, x);
        x = pick_rows(&b, x);
        b.n_rows = b.n_out;
    }
    x = hp->logit_scale_first ? scaled(&b, x, hp->logit_scale) : x; /* MiniCPM3's lmhead_scaling */
    int logits = graph_op(g, rows(&b, V), LY_ROWS, false, x, -1, -1);
    if (gguf_tensor_by_name(f, model_role_info_of(MODEL_ROLE_OUTPUT_BIAS)->name)) /* phi2's logits' bias */
        logits = graph_op(g, rows(&b, V), LY_ROWS, true, logits, -1, -1);
    logits = hp->logit_scale_first ? logits : scaled(&b, logits, hp->logit_scale);
    if (hp->final_softcap > 0.0f) /* scale, tanh, scale */
        for (int i = 0; i < 3; i++)
            logits = graph_op(g, rows(&b, V), LY_ROWS, true, logits, -1, -1);
    graph_output(g, logits);
    const uint64_t high = graph_replay(g);
    graph_free(g);
    return high;
}

uint64_t model_memory_compute(const gguf_file *f, const model_hparams *hp, const model_memory_params *p,
                              const model_memory *m)
{
    /* deepseek2's latent attention with a quantized cache rotates its keys and values where this replay does not
     * follow yet (the whole form of minicpm3 and plm caches as any attention does) */
    if (hp->arch && hp->arch->mla == MODEL_MLA_DEEPSEEK2 &&
        (gguf_type_traits_of(p->type_k)->quantized || gguf_type_traits_of(p->type_v)->quantized))
        return 0;
    for (size_t i = 0; hp->arch && i < sizeof facts / sizeof facts[0]; i++)
        if (!strcmp(facts[i].arch, hp->arch->name))
            return build_and_replay(f, hp, p, m, &facts[i]);
    return 0;
}
