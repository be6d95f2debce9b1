/*
 * The attention blocks of llama.cpp's prompt graph, replayed node by node for the compute buffer (memory_compute.c):
 * q, k and v (fused or not, normed, rotated, scaled), the cache's inputs and stores, flash attention or the scores of
 * every head, latent attention, the output product; the quantized cache's Hadamard rotation (llama-kv-cache.cpp).
 */
#include "memory_graph.h"

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

/* x clamped where the model clamps q, k and v (clamp_kqv: ggml_clamp, an op ggml may run in place) */
static int clamped(build *b, int x, uint64_t bytes)
{
    return b->hp->clamp_kqv > 0.0f ? graph_op(b->g, bytes, LY_ROWS, true, x, -1, -1) : x;
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
    if (fused >= 0) { /* phi3: a view of the fused product, rotated into a new tensor (GPT-2's: the view itself) */
        int r = rotate ? graph_op(g, bytes, LY_HEADS, true, graph_view(g, fused), positions(b, swa), -1)
                       : graph_view(g, fused);
        r = is_q && b->hp->arch->q_prescaled ? graph_op(g, bytes, LY_HEADS, true, r, -1, -1) : r;
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
    x = clamped(b, x, bytes);
    int r;
    if (has(b, is_q ? MODEL_ROLE_ATTN_Q_NORM : MODEL_ROLE_ATTN_K_NORM) && b->hp->arch->qk_norm_full)
        r = graph_view(g, norm(b, x, LY_ROWS));
    else if (has(b, is_q ? MODEL_ROLE_ATTN_Q_NORM : MODEL_ROLE_ATTN_K_NORM) && !b->hp->arch->qk_norm_after_rope)
        r = norm_rows(b, graph_view(g, x), bytes, LY_HEADS);
    else
        r = graph_view(g, x);
    if (rotate) /* not on a NoPE layer (SmolLM3's every fourth) */
        r = graph_op(g, bytes, LY_HEADS, true, r, positions(b, swa), -1);
    if (b->hp->arch->q_norm_head_gain) { /* Talkie's after the rotation: q's gains (one a head), k's none */
        r = graph_op(g, bytes, LY_HEADS, true, r, -1, -1);
        r = is_q ? graph_op(g, bytes, LY_HEADS, true, r, -1, -1) : r;
    } else if (has(b, is_q ? MODEL_ROLE_ATTN_Q_NORM : MODEL_ROLE_ATTN_K_NORM) && b->hp->arch->qk_norm_after_rope) {
        r = norm(b, r, LY_HEADS); /* Hunyuan's norms after the rotation */
    }
    /* the temperature: q times its position's scale (Ministral 3's; Llama 4's on the layers without positions) */
    if (is_q && b->hp->attn_temp_scale != 0.0f && !(b->hp->attn_temp_nope_only && rotate))
        r = graph_op(g, bytes, LY_HEADS, true, r, temperature(b), -1);
    if (rotate && b->hp->qk_l2_norm) /* Llama 4: a norm without gains after the rotation */
        r = graph_op(g, bytes, LY_HEADS, true, r, -1, -1);
    r = is_q && b->hp->arch->q_prescaled ? graph_op(g, bytes, LY_HEADS, true, r, -1, -1) : r;
    return rotated(b, r, &b->k_rot[swa], b->k_rot_n[swa]);
}

static int attend_core(build *b, bool swa, int q, int k, int v, uint64_t o_w, uint64_t v_w);
static int attend_stored(build *b, bool swa, int q, uint64_t o_w, uint64_t v_w);

/* Layer il's attention from h up to its output projection: q, k, v in the builder's order, their rows stored into the
 * cache, the attention (flash, or the scores of every head). llama.cpp's build_attn adds these to the graph where it
 * builds them; the output projection joins it where a later node reads it, which a parallel block (Cohere's) reaches
 * after its feed-forward block. */
int build_attention_core(build *b, int il, int h)
{
    graph *g = b->g;
    model_hparams lh; /* the layer's own heads (Gemma 4's sliding layers) */
    model_hparams_layer(b->hp, il, &lh);
    const model_hparams *hp = &lh;
    b->layer_heads = lh.n_head;
    const uint64_t q_w = (uint64_t)(hp->n_head * hp->head_dim_k), k_w = (uint64_t)(hp->n_head_kv * hp->head_dim_k);
    const uint64_t v_w = (uint64_t)(hp->n_head_kv * hp->head_dim_v), o_w = (uint64_t)(hp->n_head * hp->head_dim_v);
    const bool swa = b->m->n_layer_swa > 0 && model_hparams_layer_is_swa(hp, il);
    const uint64_t v_cache_w = model_memory_v_width(b->hp, il, b->v_padded); /* its rows in the cache */
    int fused = -1, q, k = -1, v;
    if (has(b, MODEL_ROLE_ATTN_QKV))
        fused = graph_op(g, rows(b, q_w + k_w + v_w), LY_ROWS, false, h, -1, -1);
    if (fused >= 0 && has(b, MODEL_ROLE_ATTN_QKV_BIAS)) /* phi2's older files: the fused product's bias */
        fused = graph_op(g, rows(b, q_w + k_w + v_w), LY_ROWS, true, fused, -1, -1);
    if (fused >= 0)
        fused = clamped(b, fused, rows(b, q_w + k_w + v_w));
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
        v = graph_view(g, clamped(b, v, rows(b, v_w)));
    }
    if (hp->arch->v_norm) /* Gemma 4: v RMS-normed without gains */
        v = graph_op(g, rows(b, v_w), LY_HEADS, true, v, -1, -1);
    v = rotated(b, v, &b->v_rot[swa], b->v_rot_n[swa]);
    if (!b->bf->k_before_v)
        k = q_or_k(b, h, k_w, false, fused, swa, rotate);
    return attend_core(b, swa, q, k, v, o_w, v_cache_w);
}

/* Layer il's attention from h: its core, times the sigmoid of its gates where the arch gates its output, then the
 * output product (plus bias). The gates: Qwen3.5's, the query's gate half made contiguous; AFMoE's, a product of h
 * that ggml meets after the core (only the product of the two reads it), which then takes a tensor of its own
 * (llama-completion's buffers: the attention's output there, a reshape of the core's, is not reused). */
int build_attention(build *b, int il, int h)
{
    int att = build_attention_core(b, il, h);
    model_hparams layer;
    model_hparams_layer(b->hp, il, &layer);
    const bool per_head = layer.attn_gate_heads && has(b, MODEL_ROLE_ATTN_GATE); /* (Laguna's narrow gates too) */
    const bool own_product = b->hp->arch->attn_gate_proj && !per_head;
    if (own_product || b->hp->arch->attn_out_gated) {
        graph *g = b->g;
        const uint64_t heads = (uint64_t)(b->layer_heads > 0 ? b->layer_heads : b->hp->n_head);
        const uint64_t bytes = rows(b, heads * (uint64_t)b->hp->head_dim_v);
        const int src = own_product ? graph_op(g, bytes, LY_ROWS, false, h, -1, -1)
                                    : graph_op(g, bytes, LY_OTHER, false, graph_view(g, b->q_gated), -1, -1);
        const int gate = graph_op(g, bytes, LY_OTHER, true, src, -1, -1);
        att = graph_op(g, bytes, LY_OTHER, !own_product, att, gate, -1);
    }
    if (per_head) { /* Step-3.5: a gate per head, its sigmoid (Laguna's softplus), the product broadcast */
        graph *g = b->g;
        const uint64_t heads = (uint64_t)(b->layer_heads > 0 ? b->layer_heads : b->hp->n_head);
        const int gate = graph_op(g, rows(b, heads), LY_ROWS, false, h, -1, -1);
        att = graph_op(g, graph_bytes(g, att), LY_OTHER, true, graph_view(g, att),
                       graph_view(g, graph_op(g, rows(b, heads), LY_ROWS, true, gate, -1, -1)), -1);
    }
    return build_out_projection(b, att);
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
        const uint64_t heads = (uint64_t)(b->layer_heads > 0 ? b->layer_heads : hp->n_head);
        const uint64_t scores = c->cells * b->T * heads * sizeof(float);
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
int build_out_projection(build *b, int att)
{
    graph *g = b->g;
    if (has(b, MODEL_ROLE_ATTN_SUB_NORM)) /* BitNet: the attention's output normed first */
        att = norm(b, att, LY_ROWS);
    int out = graph_op(g, rows(b, b->E), LY_ROWS, false, att, -1, -1);
    if (has(b, MODEL_ROLE_ATTN_OUT_BIAS))
        out = graph_op(g, rows(b, b->E), LY_ROWS, true, out, -1, -1);
    return out;
}

static int attend(build *b, bool swa, int q, int k, int v, uint64_t o_w)
{
    return build_out_projection(b, attend_core(b, swa, q, k, v, o_w, (uint64_t)(b->hp->n_head_kv * b->hp->head_dim_v)));
}

/* A layer's latent attention from h (llama.cpp's deepseek2 graph): the query (through its compression where the file
 * has one), the compressed row and its rotary key, then split per head (the keys' decompression absorbed into the
 * query, a cache of keys alone, the values' decompression after the attention) or whole (every head's key and value
 * decompressed, the generic attention). Views of a row's parts are sized by their own width, not their base's. */
int build_latent_attention(build *b, int h)
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
int build_attention_and_mixer(build *b, int il, int x, int h)
{
    graph *g = b->g;
    const int core = build_attention_core(b, il, h);
    const int mixed = mamba2_mixer(b, norm_rows(b, x, rows(b, b->E), LY_ROWS));
    graph_insert_at(g, b->expanded);
    const int att = build_out_projection(b, core);
    graph_insert_at(g, -1);
    return graph_op(g, rows(b, b->E), LY_ROWS, true, att, mixed, -1);
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
uint64_t build_cache_rotation(const model_hparams *hp, uint32_t cache_type, bool swa, bool keys)
{
    model_hparams first;
    model_hparams_layer(hp, 0, &first);
    if ((keys ? first.head_dim_k : first.head_dim_v) % 64)
        return 0;
    const int64_t own = keys ? (swa && hp->head_dim_k_swa ? hp->head_dim_k_swa : hp->head_dim_k)
                             : (swa && hp->head_dim_v_swa ? hp->head_dim_v_swa : hp->head_dim_v);
    return rotation(cache_type, own, keys);
}
