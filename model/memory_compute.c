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
    { .arch = "phi3", .q_scaled = true, .residual_first = true }, { .arch = "granite" }, { .arch = "olmo2" },
    { .arch = "gemma2", .k_before_v = true, .q_scaled = true },
    { .arch = "gemma3", .k_before_v = true, .q_scaled = true }, { .arch = "glm4moe" }, { .arch = "minimax-m2" },
    { .arch = "olmoe" }, { .arch = "ernie4_5-moe" }, { .arch = "bailingmoe2" }, { .arch = "dots1" },
    { .arch = "granitemoe" }, { .arch = "deepseek2" }, { .arch = "qwen2vl" }, { .arch = "qwen3vl" },
    { .arch = "qwen3vlmoe" }, { .arch = "smollm3" }, { .arch = "seed_oss" }, { .arch = "mistral3" },
    { .arch = "exaone4" }, { .arch = "internlm2" }, { .arch = "ernie4_5" }, { .arch = "mistral4" }, { .arch = "glm4" },
    { .arch = "exaone" }, { .arch = "gemma", .q_scaled = true }, { .arch = "llama4" }, { .arch = "command-r" },
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
    { .arch = "starcoder2" }, { .arch = "stablelm" }, { .arch = "phi2", .q_scaled = true },
    { .arch = "falcon", .parallel_ffn_first = true }, { .arch = "gptneox" },
};

/* The positions, an input the graph meets at the first rotation (after the K rotation matrix where there is one:
 * ggml visits a product's matrix before its other source). */
static int positions(build *b, bool swa)
{
    if (b->k_rot_n[swa] && b->k_rot[swa] < 0)
        b->k_rot[swa] = graph_input(b->g, b->k_rot_n[swa] * b->k_rot_n[swa] * sizeof(float));
    if (b->pos < 0)
        b->pos = graph_input(b->g, 4 * b->T * (b->hp->mrope ? 4 : 1)); /* multi-axis: 4 positions a token */
    return b->pos;
}

/* The attention temperature's input (a scale per token), made where a query first reads it. */
static int temperature(build *b)
{
    if (b->attn_temp < 0)
        b->attn_temp = graph_input(b->g, 4 * b->T);
    return b->attn_temp;
}

/* x times a Hadamard rotation (llama_mul_mat_hadamard: views of x, their product with the matrix, a view). */
static int rotated(build *b, int x, int *rot, uint64_t n)
{
    if (!n)
        return x;
    if (*rot < 0)
        *rot = graph_input(b->g, n * n * sizeof(float));
    const int v = graph_view(b->g, x);
    return graph_view(b->g, graph_op(b->g, graph_bytes(b->g, v), LY_OTHER, false, *rot, v, -1));
}

/* Latent attention split per head: the cache holds keys only (its values are their first kv_lora_rank). */
static bool keys_only(const build *b)
{
    return b->hp->arch->mla && b->hp->head_dim_k_mla > 0;
}

static cache_inputs *cache_of(build *b, bool swa, uint64_t v_width)
{
    cache_inputs *c = &b->cache[swa];
    if (c->mask < 0) {
        const bool fa = b->m->flash_attn;
        c->k_idxs = graph_input(b->g, 8 * b->T);
        /* without flash attention V is stored transposed: an index per value */
        if (!keys_only(b))
            c->v_idxs = graph_input(b->g, 8 * b->T * (fa ? 1 : v_width));
        c->mask = graph_input(b->g, c->cells * b->T * (fa ? 2 : 4));
    }
    return c;
}

/* q or k of layer il from its input h: the product (plus bias), its norm (per head, or over the whole row:
 * olmo2), the rotation; q scaled where the builder scales it. */
static int q_or_k_of(build *b, int h, uint64_t width, bool is_q, int fused, bool swa, bool rotate, int *product);

static int q_or_k(build *b, int h, uint64_t width, bool is_q, int fused, bool swa, bool rotate)
{
    return q_or_k_of(b, h, width, is_q, fused, swa, rotate, NULL);
}

/* The same, the product itself into *product where it is not NULL (Gemma 4's values read it too). */
static int q_or_k_of(build *b, int h, uint64_t width, bool is_q, int fused, bool swa, bool rotate, int *product)
{
    graph *g = b->g;
    const uint64_t bytes = rows(b, width);
    if (fused >= 0) { /* phi3: a view of the fused product, rotated into a new tensor */
        int r = graph_op(g, bytes, LY_HEADS, true, graph_view(g, fused), positions(b, swa), -1);
        r = is_q && b->bf->q_scaled ? graph_op(g, bytes, LY_HEADS, true, r, -1, -1) : r;
        return rotated(b, r, &b->k_rot[swa], b->k_rot_n[swa]);
    }
    /* Qwen3.5's q rows hold each head's query then its gate: the product twice as wide, q a view of it */
    const bool gated = is_q && b->hp->arch->attn_out_gated;
    int x = graph_op(g, gated ? 2 * bytes : bytes, LY_ROWS, false, h, -1, -1);
    if (gated)
        b->q_gated = x;
    if (product)
        *product = x;
    if (has(b, is_q ? MODEL_ROLE_ATTN_Q_BIAS : MODEL_ROLE_ATTN_K_BIAS))
        x = graph_op(g, bytes, LY_ROWS, true, x, -1, -1);
    int r;
    if (has(b, is_q ? MODEL_ROLE_ATTN_Q_NORM : MODEL_ROLE_ATTN_K_NORM) && b->hp->arch->qk_norm_full)
        r = graph_view(g, norm(b, x, LY_ROWS));
    else if (has(b, is_q ? MODEL_ROLE_ATTN_Q_NORM : MODEL_ROLE_ATTN_K_NORM) && !b->hp->arch->qk_norm_after_rope)
        r = norm_rows(b, graph_view(g, x), bytes, LY_HEADS);
    else
        r = graph_view(g, x);
    if (rotate) /* not on a NoPE layer (SmolLM3's every fourth) */
        r = graph_op(g, bytes, LY_HEADS, true, r, positions(b, swa), -1);
    if (has(b, is_q ? MODEL_ROLE_ATTN_Q_NORM : MODEL_ROLE_ATTN_K_NORM) && b->hp->arch->qk_norm_after_rope)
        r = norm(b, r, LY_HEADS); /* Hunyuan's norms after the rotation */
    /* the temperature: q times its position's scale (Ministral 3's; Llama 4's on the layers without positions) */
    if (is_q && b->hp->attn_temp_scale != 0.0f && !(b->hp->attn_temp_nope_only && rotate))
        r = graph_op(g, bytes, LY_HEADS, true, r, temperature(b), -1);
    if (rotate && b->hp->qk_l2_norm) /* Llama 4: a norm without gains after the rotation */
        r = graph_op(g, bytes, LY_HEADS, true, r, -1, -1);
    r = is_q && b->bf->q_scaled ? graph_op(g, bytes, LY_HEADS, true, r, -1, -1) : r;
    return rotated(b, r, &b->k_rot[swa], b->k_rot_n[swa]);
}

static int attend_core(build *b, bool swa, int q, int k, int v, uint64_t o_w, uint64_t v_w);
static int attend_stored(build *b, bool swa, int q, uint64_t o_w, uint64_t v_w);
static int out_projection(build *b, int att);

/* Layer il's attention from h up to its output projection: q, k, v in the builder's order, their rows stored into the
 * cache, the attention (flash, or the scores of every head). llama.cpp's build_attn adds these to the graph where it
 * builds them; the output projection joins it where a later node reads it, which a parallel block (Cohere's) reaches
 * after its feed-forward block. */
static int attention_core(build *b, int il, int h)
{
    graph *g = b->g;
    model_hparams lh; /* the layer's own heads (Gemma 4's sliding layers) */
    model_hparams_layer(b->hp, il, &lh);
    const model_hparams *hp = &lh;
    const uint64_t q_w = (uint64_t)(hp->n_head * hp->head_dim_k), k_w = (uint64_t)(hp->n_head_kv * hp->head_dim_k);
    const uint64_t v_w = (uint64_t)(hp->n_head_kv * hp->head_dim_v), o_w = (uint64_t)(hp->n_head * hp->head_dim_v);
    const bool swa = b->m->n_layer_swa > 0 && model_hparams_layer_is_swa(hp, il);
    const uint64_t v_cache_w = model_memory_v_width(b->hp, il, b->v_padded); /* its rows in the cache */
    int fused = -1, q, k = -1, v;
    if (has(b, MODEL_ROLE_ATTN_QKV))
        fused = graph_op(g, rows(b, q_w + k_w + v_w), LY_ROWS, false, h, -1, -1);
    if (fused >= 0 && has(b, MODEL_ROLE_ATTN_QKV_BIAS)) /* phi2's older files: the fused product's bias */
        fused = graph_op(g, rows(b, q_w + k_w + v_w), LY_ROWS, true, fused, -1, -1);
    const bool rotate = model_hparams_layer_rotates(hp, il);
    q = q_or_k(b, h, q_w, true, fused, swa, rotate);
    if (model_hparams_layer_kv_source(hp, il) != il) /* Gemma 4 E2B / E4B: an earlier layer's keys and values */
        return attend_stored(b, swa, q, o_w, v_cache_w);
    const bool bias_v = has(b, MODEL_ROLE_ATTN_V_BIAS);
    /* Gemma 4's full layers: the values are the key product (before k's norm), which then has two readers */
    const bool v_is_k = hp->arch->v_from_k && !has(b, MODEL_ROLE_ATTN_V);
    int k_product = -1;
    if (b->bf->k_before_v)
        k = q_or_k_of(b, h, k_w, false, fused, swa, rotate, v_is_k ? &k_product : NULL);
    if (fused >= 0) {
        v = graph_view(g, fused);
    } else if (v_is_k) {
        v = graph_view(g, k_product);
    } else {
        v = graph_op(g, rows(b, v_w), LY_ROWS, false, h, -1, -1);
        if (bias_v)
            v = graph_op(g, rows(b, v_w), LY_ROWS, true, v, -1, -1);
        v = graph_view(g, v);
    }
    if (hp->arch->v_norm) /* Gemma 4: v RMS-normed without gains */
        v = graph_op(g, rows(b, v_w), LY_HEADS, true, v, -1, -1);
    v = rotated(b, v, &b->v_rot[swa], b->v_rot_n[swa]);
    if (!b->bf->k_before_v)
        k = q_or_k(b, h, k_w, false, fused, swa, rotate);
    return attend_core(b, swa, q, k, v, o_w, v_cache_w);
}

/* Layer il's attention from h: its core (times sigmoid of the query's gate half, made contiguous, where the arch gates
 * its output: Qwen3.5), then the output product (plus bias). */
static int attention(build *b, int il, int h)
{
    int att = attention_core(b, il, h);
    if (b->hp->arch->attn_out_gated) {
        graph *g = b->g;
        const uint64_t bytes = rows(b, (uint64_t)(b->hp->n_head * b->hp->head_dim_v));
        const int gate = graph_op(g, bytes, LY_OTHER, true,
                                  graph_op(g, bytes, LY_OTHER, false, graph_view(g, b->q_gated), -1, -1), -1, -1);
        att = graph_op(g, bytes, LY_OTHER, true, att, gate, -1);
    }
    return out_projection(b, att);
}

/* The rows k and v stored into the cache, the attention of q over it (flash, or the scores of every head); o_w: the
 * attention output's width. */
static int attend_core(build *b, bool swa, int q, int k, int v, uint64_t o_w, uint64_t v_w)
{
    graph *g = b->g;
    cache_inputs *c = cache_of(b, swa, v_w);
    graph_store(g, graph_view(g, k), c->k_idxs);
    graph_store(g, b->m->flash_attn ? graph_view(g, v) : graph_view(g, graph_view(g, v)), c->v_idxs);
    return attend_stored(b, swa, q, o_w, v_w);
}

/* The attention of q over the cache as it stands (Gemma 4's shared layers read an earlier layer's, storing nothing). */
static int attend_stored(build *b, bool swa, int q, uint64_t o_w, uint64_t v_w)
{
    graph *g = b->g;
    const model_hparams *hp = b->hp;
    cache_inputs *c = cache_of(b, swa, v_w);
    const int qp = graph_view(g, graph_view(g, q));
    int att;
    if (b->m->flash_attn) {
        att = graph_view(g, graph_op(g, rows(b, o_w), LY_OTHER, false, qp, c->mask, -1));
        att = rotated(b, att, &b->v_rot[swa], b->v_rot_n[swa]); /* the rotation undone on the output */
    } else {
        const uint64_t scores = c->cells * b->T * (uint64_t)hp->n_head * sizeof(float);
        int kq = graph_op(g, scores, LY_SCORES, false, qp, -1, -1);
        if (hp->attn_softcap > 0.0f) /* scale, tanh, scale */
            for (int i = 0; i < 3; i++)
                kq = graph_op(g, scores, LY_SCORES, true, kq, -1, -1);
        kq = graph_op(g, scores, LY_SCORES, true, kq, c->mask, -1);
        const int kqv = graph_op(g, rows(b, o_w), LY_OTHER, false, kq, -1, -1);
        att = graph_op(g, rows(b, o_w), LY_OTHER, false, graph_view(g, kqv), -1, -1); /* permuted, then a copy */
    }
    b->expanded = graph_position(g); /* build_attn_mha expands its output; the output product joins later */
    return att;
}

/* The attention's output product (plus bias). */
static int out_projection(build *b, int att)
{
    graph *g = b->g;
    int out = graph_op(g, rows(b, b->E), LY_ROWS, false, att, -1, -1);
    if (has(b, MODEL_ROLE_ATTN_OUT_BIAS))
        out = graph_op(g, rows(b, b->E), LY_ROWS, true, out, -1, -1);
    return out;
}

static int attend(build *b, bool swa, int q, int k, int v, uint64_t o_w)
{
    return out_projection(b, attend_core(b, swa, q, k, v, o_w, (uint64_t)(b->hp->n_head_kv * b->hp->head_dim_v)));
}

/* A layer's latent attention from h (llama.cpp's deepseek2 graph): the query (through its compression where the file
 * has one), the compressed row and its rotary key, then split per head (the keys' decompression absorbed into the
 * query, a cache of keys alone, the values' decompression after the attention) or whole (every head's key and value
 * decompressed, the generic attention). Views of a row's parts are sized by their own width, not their base's. */
static int latent_attention(build *b, int h)
{
    graph *g = b->g;
    const model_hparams *hp = b->hp;
    const uint64_t H = (uint64_t)hp->n_head, T = b->n_rows, f = sizeof(float), rot = (uint64_t)hp->n_rot;
    const uint64_t lora = (uint64_t)hp->n_lora_kv;
    const uint64_t k_mla = (uint64_t)(hp->head_dim_k_mla ? hp->head_dim_k_mla : hp->head_dim_k);
    const uint64_t v_mla = (uint64_t)(hp->head_dim_v_mla ? hp->head_dim_v_mla : hp->head_dim_v);
    int q = hp->n_lora_q > 0 ? norm(b, graph_op(g, rows(b, (uint64_t)hp->n_lora_q), LY_ROWS, false, h, -1, -1), LY_ROWS)
                             : h;
    q = graph_view(g, graph_op(g, rows(b, H * k_mla), LY_ROWS, false, q, -1, -1)); /* reshaped into heads */
    const bool split = keys_only(b);
    int q_rot = -1, absorbed = -1;
    if (split) { /* q_nope's view, permuted, times attn_k_b; q_pe's view rotated; the two concatenated */
        absorbed = graph_view(g, graph_op(g, lora * T * H * f, LY_OTHER, false, graph_view(g, graph_view(g, q)), -1, -1));
        q_rot = graph_op(g, rot * H * T * f, LY_HEADS, true, graph_view(g, q), positions(b, false), -1);
        q = graph_op(g, (lora + rot) * H * T * f, LY_OTHER, false, absorbed, q_rot, -1);
    } else { /* the rotation of each head's last values, on the whole of q */
        q = graph_op(g, H * k_mla * T * f, LY_HEADS, true, q, positions(b, false), -1);
    }
    const int kv_a = graph_op(g, rows(b, lora + rot), LY_ROWS, false, h, -1, -1);
    const int kv_c = graph_op(g, rows(b, lora), LY_ROWS, true,
                              graph_op(g, rows(b, lora), LY_ROWS, true, graph_view(g, kv_a), -1, -1), -1, -1);
    if (split) {
        const int k_pe = graph_op(g, rot * T * f, LY_HEADS, true, graph_view(g, kv_a), positions(b, false), -1);
        const int k = graph_op(g, (lora + rot) * T * f, LY_OTHER, false, graph_view(g, kv_c), k_pe, -1);
        cache_inputs *c = cache_of(b, false, 0);
        graph_store(g, graph_view(g, k), c->k_idxs);
        int kqv;
        if (b->m->flash_attn) {
            kqv = graph_view(g, graph_op(g, lora * H * T * f, LY_OTHER, false, graph_view(g, graph_view(g, q)),
                                         c->mask, -1));
        } else { /* the values: the keys' first kv_lora_rank transposed, made contiguous (every stream's cells) */
            const gguf_type_traits *tk = gguf_type_traits_of(b->type_k);
            const int v = graph_op(g, lora / tk->block_size * tk->type_size * c->cells * b->streams, LY_OTHER, false, -1,
                                   -1, -1);
            const uint64_t scores = c->cells * b->T * H * f;
            int kq = graph_op(g, scores, LY_SCORES, false, graph_view(g, graph_view(g, q)), -1, -1);
            kq = graph_op(g, scores, LY_SCORES, true, kq, c->mask, -1);
            kqv = graph_op(g, lora * T * H * f, LY_OTHER, false, v, kq, -1);
        }
        const int mla = graph_op(g, v_mla * T * H * f, LY_OTHER, false, kqv, -1, -1);
        int att = graph_op(g, v_mla * H * T * f, LY_OTHER, false, graph_view(g, mla), -1, -1);
        att = b->m->flash_attn ? graph_view(g, att) : att;
        return graph_op(g, rows(b, (uint64_t)hp->n_embd), LY_ROWS, false, att, -1, -1);
    }
    const uint64_t nope = k_mla - rot;
    const int kv = graph_op(g, rows(b, H * (nope + v_mla)), LY_ROWS, false, kv_c, -1, -1);
    const int v = graph_op(g, rows(b, H * v_mla), LY_OTHER, false, graph_view(g, kv), -1, -1);
    const int k_nope = graph_view(g, kv);
    const int k_pe = graph_op(g, rot * T * f, LY_HEADS, true, graph_view(g, kv_a), positions(b, false), -1);
    const int k = graph_op(g, rows(b, H * k_mla), LY_OTHER, false, k_nope,
                           graph_op(g, rot * H * T * f, LY_OTHER, false, k_pe, -1, -1), -1);
    return attend(b, false, q, k, v, H * v_mla);
}

/* Falcon-H1's layer from its input x and h = attn_norm(x) (llama.cpp's falcon-h1 graph): the attention's core;
 * attn_norm(x) again (the graph builds it twice), the Mamba-2 mixer on it, the attention's output product between the
 * mixer's expanded nodes and those its sum pulls in; the two added. */
static int attention_and_mixer(build *b, int il, int x, int h)
{
    graph *g = b->g;
    const int core = attention_core(b, il, h);
    const int mixed = mamba2_mixer(b, norm_rows(b, x, rows(b, b->E), LY_ROWS));
    graph_insert_at(g, b->expanded);
    const int att = out_projection(b, core);
    graph_insert_at(g, -1);
    return graph_op(g, rows(b, b->E), LY_ROWS, true, att, mixed, -1);
}

/* A token row picked by out_ids (every row: the worst case reserves them all), an input the graph meets last. */
static int pick_rows(build *b, int x)
{
    if (b->out_ids < 0)
        b->out_ids = graph_input(b->g, 4 * b->n_out);
    return graph_op(b->g, graph_bytes(b->g, x) / b->T * b->n_out, LY_ROWS, false, x, b->out_ids, -1);
}

static int experts_of(build *b, int x, int router_in, bool norm_in);

/* An ungated block's activation (nemotron_h's LLM_FFN_RELU_SQR): ggml's relu, then its square, each in place. */
static int relu_squared(build *b, int x, layout ly)
{
    const uint64_t bytes = graph_bytes(b->g, x);
    return graph_op(b->g, bytes, ly, true, graph_op(b->g, bytes, ly, true, x, -1, -1), -1, -1);
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
    const int logits = graph_op(g, n_exp * T * f, LY_ROUTE, false, router_in, -1, -1);
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
    const int act =
        gate == up ? relu_squared(b, up, LY_EXPERT) : graph_op(g, ff * k * T * f, LY_OTHER, false, gate, up, -1);
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
    if (!has(b, MODEL_ROLE_FFN_GATE_SHEXP)) { /* Nemotron 3's: up, relu squared, down */
        shared = graph_op(g, E * T * f, LY_ROWS, false,
                          relu_squared(b, graph_op(g, fs * T * f, LY_ROWS, false, x, -1, -1), LY_ROWS), -1, -1);
        return graph_op(g, E * T * f, LY_ROWS, true, sum, shared, -1);
    }
    const int sg = graph_op(g, fs * T * f, LY_ROWS, false, x, -1, -1);
    const int su = graph_op(g, fs * T * f, LY_ROWS, false, x, -1, -1);
    shared = graph_op(g, E * T * f, LY_ROWS, false, graph_op(g, fs * T * f, LY_OTHER, false, sg, su, -1), -1, -1);
    if (!has(b, MODEL_ROLE_FFN_GATE_INP_SHEXP))
        return graph_op(g, E * T * f, LY_ROWS, true, sum, shared, -1);
    const int logit = graph_op(g, T * f, LY_TOKEN, false, x, -1, -1);
    /* sigmoid(logit): one op in place (qwen35moe), or silu(logit) / logit (qwen2moe) */
    const int gate_w = b->bf->shexp_sigmoid ? graph_op(g, T * f, LY_TOKEN, true, logit, -1, -1)
                                            : graph_op(g, T * f, LY_TOKEN, true,
                                                       graph_op(g, T * f, LY_TOKEN, true, logit, -1, -1), logit, -1);
    shared = graph_op(g, E * T * f, LY_ROWS, true, shared, gate_w, -1);
    return graph_op(g, E * T * f, LY_ROWS, true, sum, shared, -1);
}

/* Layer il's feed-forward block of x: gated (gate and up, or phi3's one product holding both), or the experts (past
 * a mixture's leading dense layers). */
static int dense_ffn(build *b, int x, int64_t il);

static int feed_forward(build *b, int x, int64_t il)
{
    if (model_hparams_layer_has_experts(b->hp, il))
        return experts(b, x);
    return dense_ffn(b, x, il);
}

/* Gemma 4 26B-A4B's layer with experts on its attention output x, in its graph's order: the router's input (x normed
 * without gains, scaled, times its gains), the experts on pre_ffw_norm_2(x), the dense block on ffn_norm(x) and its
 * post_ffw_norm_1, the experts' post_ffw_norm_2, their sum. */
static int dense_and_experts(build *b, int x, int64_t il)
{
    graph *g = b->g;
    const uint64_t bytes = rows(b, b->E);
    int router_in = graph_op(g, bytes, LY_ROWS, true, x, -1, -1);
    router_in = graph_op(g, bytes, LY_ROWS, true, graph_op(g, bytes, LY_ROWS, true, router_in, -1, -1), -1, -1);
    const int moe = experts_of(b, x, router_in, true);
    const int mlp = norm(b, dense_ffn(b, norm(b, x, LY_ROWS), il), LY_ROWS);
    return graph_op(g, bytes, LY_ROWS, true, mlp, norm(b, moe, LY_ROWS), -1);
}

/* A layer's dense feed-forward block of x. */
static int dense_ffn(build *b, int x, int64_t il)
{
    graph *g = b->g;
    const model_hparams *hp = b->hp;
    model_hparams lh; /* the layer's own width (Gemma 4's last layers twice as wide) */
    model_hparams_layer(hp, il, &lh);
    const uint64_t F = (uint64_t)lh.n_ff;
    int act;
    if (hp->arch->gate_up_fused) {
        act = graph_op(g, rows(b, F), LY_OTHER, false, graph_op(g, rows(b, 2 * F), LY_ROWS, false, x, -1, -1), -1, -1);
    } else if (!has(b, MODEL_ROLE_FFN_GATE)) { /* ungated: up (plus its bias), relu squared (nemotron_h's) or GELU in
                                                 * place (starcoder2's) */
        int up = graph_op(g, rows(b, F), LY_ROWS, false, x, -1, -1);
        if (has(b, MODEL_ROLE_FFN_UP_BIAS))
            up = graph_op(g, rows(b, F), LY_ROWS, true, up, -1, -1);
        act = hp->arch->act == MODEL_ACT_RELU_SQR ? relu_squared(b, up, LY_ROWS)
                                                  : graph_op(g, rows(b, F), LY_ROWS, true, up, -1, -1);
    } else {
        const int gate = graph_op(g, rows(b, F), LY_ROWS, false, x, -1, -1);
        const int up = graph_op(g, rows(b, F), LY_ROWS, false, x, -1, -1);
        act = graph_op(g, rows(b, F), LY_OTHER, false, gate, up, -1);
    }
    const int down = graph_op(g, rows(b, (uint64_t)hp->n_embd), LY_ROWS, false, act, -1, -1);
    return has(b, MODEL_ROLE_FFN_DOWN_BIAS) ? graph_op(g, rows(b, (uint64_t)hp->n_embd), LY_ROWS, true, down, -1, -1)
                                            : down;
}

/* Scaled in place where the model multiplies by s (granite's multipliers, gemma's embedding scale). */
static int scaled(build *b, int x, float s)
{
    return s != 1.0f ? graph_op(b->g, graph_bytes(b->g, x), LY_ROWS, true, x, -1, -1) : x;
}

/* The side of a quantized cache's rotation for heads of hd values (0: none): K's the largest power of two from 64
 * that divides hd, V's 64 (llama_kv_cache::build_input_k_rot / _v_rot), where hd is a multiple of 64. */
static uint64_t rotation(uint32_t cache_type, int64_t hd, bool largest)
{
    if (!gguf_type_traits_of(cache_type)->quantized || hd <= 0 || hd % 64)
        return 0;
    uint64_t n = 64;
    while (largest && hd % (int64_t)(2 * n) == 0)
        n *= 2;
    return n;
}

/* The rotation's side in the cache of one kind of layer (full or sliding-window; keys, or values): llama_kv_cache
 * turns rotation on where layer 0's head length is a multiple of 64 (hparams.n_embd_head_k() reads layer 0) and sizes it
 * by the cache's own layers' heads (Gemma 4's two kinds differ). */
static uint64_t cache_rotation(const model_hparams *hp, uint32_t cache_type, bool swa, bool keys)
{
    model_hparams first;
    model_hparams_layer(hp, 0, &first);
    if ((keys ? first.head_dim_k : first.head_dim_v) % 64)
        return 0;
    const int64_t own = keys ? (swa && hp->head_dim_k_swa ? hp->head_dim_k_swa : hp->head_dim_k)
                             : (swa && hp->head_dim_v_swa ? hp->head_dim_v_swa : hp->head_dim_v);
    return rotation(cache_type, own, keys);
}

/* The attention's output product of its core (its rows picked in the last layer), for summed_parallel_layer. */
static int parallel_attention(build *b, int core, bool last)
{
    const int att = out_projection(b, core);
    return last ? pick_rows(b, att) : att;
}

/* The feed-forward block of h (its rows picked in the last layer, the block on those), for summed_parallel_layer. */
static int parallel_ffn(build *b, int h, int64_t il, bool last)
{
    const int hi = last ? pick_rows(b, h) : h;
    b->n_rows = last ? b->n_out : b->T;
    const int ffn = feed_forward(b, hi, il);
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
    const int core = attention_core(b, (int)il, h_attn);
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

static uint64_t build_and_replay(const gguf_file *f, const model_hparams *hp, const model_memory_params *p,
                                 const model_memory *m, const builder_facts *bf)
{
    graph *g = graph_new();
    if (!g)
        return 0;
    const uint64_t seqs = (uint64_t)p->n_seq, T = ((uint64_t)m->n_tokens + seqs - 1) / seqs * seqs;
    build b = { .g = g, .f = f, .hp = hp, .m = m, .bf = bf, .T = T, .n_rows = T, .n_out = (uint64_t)m->n_tokens,
                .out_ids = -1, .pos = -1, .attn_temp = -1,
                .k_rot_n = { cache_rotation(hp, p->type_k, false, true), cache_rotation(hp, p->type_k, true, true) },
                .v_rot_n = { cache_rotation(hp, p->type_v, false, false), cache_rotation(hp, p->type_v, true, false) },
                .k_rot = { -1, -1 }, .v_rot = { -1, -1 }, .type_k = p->type_k, .streams = seqs,
                .v_padded = model_memory_v_padded(hp, m->flash_attn), .s_copy = -1, .s_copy_main = -1,
                .s_copy_extra = -1, .q_gated = -1,
                .E = (uint64_t)hp->n_embd, .cache = { { -1, -1, -1, (uint64_t)m->kv_cells },
                                                      { -1, -1, -1, (uint64_t)m->kv_cells_swa } } };
    const uint64_t V = (uint64_t)(hp->n_vocab > 0 ? hp->n_vocab : hp->vocab_size);
    const int tokens = graph_input(g, 4 * b.T);
    /* Qwen3-VL's deepstack layers add later slices of a wider input row (an image's features; a text token's
     * embedding padded with zeros), so the input is that wide, the embedding padded and viewed */
    const uint64_t deepstack = (uint64_t)hp->n_deepstack_layers;
    graph_input(g, rows(&b, b.E * (1 + deepstack))); /* inp_embd: no reader, never freed */
    int x = graph_op(g, rows(&b, b.E), LY_ROWS, false, tokens, -1, -1);
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
    b.expanded = graph_position(g); /* build_inp_embd expands the embedding */
    const int64_t n_layer = hp->n_layer - hp->n_layer_nextn; /* the prediction blocks after them are another graph */
    for (int64_t il = 0; il < n_layer && !graph_failed(g); il++) {
        b.layer = il;
        const bool last = il == n_layer - 1 && !bf->rows_after_layers && !bf->rows_after_norm;
        if (hp->arch->parallel_blocks_summed) {
            x = summed_parallel_layer(&b, il, x, last);
            continue;
        }
        const int h = has(&b, MODEL_ROLE_ATTN_NORM)
                          ? norm_rows_bias(&b, x, rows(&b, b.E), LY_ROWS, has(&b, MODEL_ROLE_ATTN_NORM_BIAS))
                          : x;
        if (hp->parallel) { /* Cohere: x = (ffn(h) + x) + attention(h), GPT-NeoX: (ffn(ffn_norm(x)) + x) +
                              * attention(h), in ggml's order: the attention's core; the feed-forward block (on the last
                              * layer's rows of h, or its own norm of x's rows, picked first); the sum with x (its rows);
                              * the output product; its rows; the sum */
            const bool own_norm = has(&b, MODEL_ROLE_FFN_NORM);
            const int core = attention_core(&b, (int)il, h);
            const uint64_t all_rows = b.n_rows;
            const int xr = own_norm && last ? pick_rows(&b, x) : x;
            const int hi = own_norm ? -1 : last ? pick_rows(&b, h) : h;
            if (last)
                b.n_rows = b.n_out;
            const int ffn = feed_forward(&b, own_norm ? norm_rows_bias(&b, xr, rows(&b, b.E), LY_ROWS,
                                                                       has(&b, MODEL_ROLE_FFN_NORM_BIAS))
                                                      : hi,
                                         il);
            const int sum = graph_op(g, rows(&b, b.E), LY_ROWS, true, ffn, own_norm || !last ? xr : pick_rows(&b, x), -1);
            b.n_rows = all_rows;
            int att = out_projection(&b, core);
            if (last) {
                att = pick_rows(&b, att);
                b.n_rows = b.n_out;
            }
            x = graph_op(g, rows(&b, b.E), LY_ROWS, true, sum, att, -1);
            continue;
        }
        if (hp->arch->single_block) { /* nemotron_h: x + one block of attn_norm(x): mixer, attention or feed-forward
                                        * (mamba2: the last layer's rows picked from the mixer's output, then x's) */
            const bool recurrent = model_hparams_layer_is_recurrent(hp, il);
            int cur = recurrent && hp->arch->mamba2 ? mamba2_mixer(&b, h)
                      : recurrent && hp->arch->mamba1 ? mamba1_mixer(&b, h)
                      : model_hparams_layer_is_ffn_only(hp, il) ? feed_forward(&b, h, il)
                                                                : attention(&b, (int)il, h);
            if (last) {
                cur = pick_rows(&b, cur);
                b.n_rows = b.n_out;
            }
            x = graph_op(g, rows(&b, b.E), LY_ROWS, true, cur, last ? pick_rows(&b, x) : x, -1);
            continue;
        }
        const bool recurrent = model_hparams_layer_is_recurrent(hp, il);
        int cur = hp->arch->mla                       ? latent_attention(&b, h)
                  : hp->arch->mixer_beside           ? attention_and_mixer(&b, (int)il, x, h)
                  : recurrent && hp->arch->mamba2    ? mamba2_mixer(&b, h)
                  : recurrent && hp->arch->mamba1    ? mamba1_mixer(&b, h)
                  : recurrent && hp->arch->shortconv ? shortconv_mixer(&b, h)
                  : recurrent && hp->arch->delta_net ? delta_net_mixer(&b, h)
                                                      : attention(&b, (int)il, h);
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
        if (has(&b, MODEL_ROLE_ATTN_POST_NORM) && !hp->arch->ffn_norm_is_post_attention)
            cur = norm(&b, cur, LY_ROWS);
        cur = scaled(&b, cur, hp->residual_scale);
        if (last && !pick_sum && !bf->residual_first_attn)
            res = pick_rows(&b, x);
        int inp = bf->residual_first_attn ? graph_op(g, rows(&b, b.E), LY_ROWS, true, res, cur, -1)
                                          : graph_op(g, rows(&b, b.E), LY_ROWS, true, cur, res, -1);
        if (pick_sum) {
            inp = pick_rows(&b, inp);
            b.n_rows = b.n_out;
        }
        const bool ffn_norm = has(&b, MODEL_ROLE_FFN_NORM) ||
                              (hp->arch->ffn_norm_is_post_attention && has(&b, MODEL_ROLE_ATTN_POST_NORM));
        int out = hp->arch->moe_dense_beside && model_hparams_layer_has_experts(hp, il)
                      ? dense_and_experts(&b, inp, il)
                      : feed_forward(&b,
                                     ffn_norm ? norm_rows_bias(&b, inp, rows(&b, b.E), LY_ROWS,
                                                               has(&b, MODEL_ROLE_FFN_NORM_BIAS))
                                              : inp,
                                     il);
        if (has(&b, MODEL_ROLE_FFN_POST_NORM))
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
        if (has(&b, MODEL_ROLE_LAYER_OUT_SCALE)) /* Gemma 4: the layer's output times its scale */
            x = graph_op(g, rows(&b, b.E), LY_ROWS, true, x, -1, -1);
    }
    b.layer = 0;
    if (bf->rows_after_layers) {
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
    int logits = graph_op(g, rows(&b, V), LY_ROWS, false, x, -1, -1);
    if (gguf_tensor_by_name(f, model_role_info_of(MODEL_ROLE_OUTPUT_BIAS)->name)) /* phi2's logits' bias */
        logits = graph_op(g, rows(&b, V), LY_ROWS, true, logits, -1, -1);
    logits = scaled(&b, logits, hp->logit_scale);
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
    /* latent attention with a quantized cache rotates its keys and values where this replay does not follow yet */
    if (hp->arch && hp->arch->mla && (gguf_type_traits_of(p->type_k)->quantized || gguf_type_traits_of(p->type_v)->quantized))
        return 0;
    for (size_t i = 0; hp->arch && i < sizeof facts / sizeof facts[0]; i++)
        if (!strcmp(facts[i].arch, hp->arch->name))
            return build_and_replay(f, hp, p, m, &facts[i]);
    return 0;
}
