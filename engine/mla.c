/*
 * Latent attention (DeepSeek-V2/V3, Kimi K2, GLM-4.7-Flash: llama.cpp's deepseek2 graph, src/models/deepseek2.cpp),
 * one layer on the T rows at positions c->pos ..:
 *
 *   h   = rmsnorm(x) * attn_norm
 *   q   = h Wq, or rmsnorm(h Wq_a) * attn_q_a_norm  Wq_b          (n_head heads of k_mla: qk_nope, then n_rot)
 *   c_kv, k_pe = h Wkv_a_mqa                                      (kv_lora_rank values, then n_rot)
 *   c_kv = rmsnorm(c_kv) * attn_kv_a_norm;  rope(k_pe) (one head all heads share);  rope(each head's last n_rot of q)
 * split per head (attn_k_b, attn_v_b: the files converters write today), the keys' decompression absorbed into q:
 *   q_h = [ q_nope_h Wk_b[h]^T (kv_lora_rank) | q_pe_h ],  k = [ c_kv | k_pe ],  v = c_kv  (one key/value head)
 *   a_h = attention(q_h, k, v) Wv_b[h]^T (v_mla)
 * whole (attn_kv_b, older files):
 *   k_nope_h, v_h = c_kv Wkv_b;  k_h = [ k_nope_h | k_pe ];  q_h = [ q_nope_h | q_pe_h ];  a_h = attention(q_h, k_h, v_h)
 * then o = a Wo. The scores are scaled by mscale^2 / sqrt(k_mla) (model/hparams.c). Parts of rows are gathered and put
 * back by copy_rows; each head's product runs on its own matrix, all heads in one op where the backend has
 * matmul_many_x.
 */
#include "pass.h"

/* Where a token's rows sit in the context's mla buffer, each region B rows of its width (B = c->max_batch). */
typedef struct mla_rows {
    float *q_a;   /* the query's compression (n_lora_q) */
    float *q;     /* the query before absorption (n_head x k_mla) */
    float *kv_a;  /* the keys' and values' compression and the rotary key (n_lora_kv + n_rot) */
    float *lat;   /* the compression normed (n_lora_kv) */
    float *k_pe;  /* the rotary key (n_rot) */
    float *q_pe;  /* each head's rotary part of q (n_head x n_rot) */
    float *kv_b;  /* whole: the decompression (n_head x (qk_nope + v_mla)) */
    float *hx;    /* split: each head's inputs gathered, heads outermost (n_head x max(qk_nope, n_lora_kv)) */
    float *hy;    /* split: each head's products, heads outermost (n_head x max(n_lora_kv, v_mla)) */
    float *out;   /* split: the heads' decompressed outputs (n_head x v_mla) */
} mla_rows;

static int widest(int a, int b)
{
    return a > b ? a : b;
}

/* Each region's width in a token's row, in mla_rows' order; returns their sum. */
static size_t mla_widths(const engine_hparams *hp, size_t w[10])
{
    const size_t H = (size_t)hp->n_head, rot = (size_t)hp->rope.n_rot;
    const size_t split = hp->mla_split;
    const size_t ws[10] = { (size_t)hp->n_lora_q, H * (size_t)hp->k_mla, (size_t)hp->n_lora_kv + rot,
                            (size_t)hp->n_lora_kv, rot, H * rot,
                            split ? 0 : H * (size_t)(hp->qk_nope + hp->v_mla),
                            split ? H * (size_t)widest(hp->qk_nope, hp->n_lora_kv) : 0,
                            split ? H * (size_t)widest(hp->n_lora_kv, hp->v_mla) : 0, split ? H * (size_t)hp->v_mla : 0 };
    size_t sum = 0;
    for (int i = 0; i < 10; i++)
        sum += w[i] = ws[i];
    return sum;
}

size_t engine_mla_width(const engine_hparams *hp)
{
    size_t w[10];
    return hp->mla ? mla_widths(hp, w) : 0;
}

static mla_rows mla_rows_of(const engine_ctx *c)
{
    size_t w[10];
    mla_widths(&c->m->hp, w);
    float *at = c->mla;
    mla_rows r;
    float **fields[10] = { &r.q_a, &r.q, &r.kv_a, &r.lat, &r.k_pe, &r.q_pe, &r.kv_b, &r.hx, &r.hy, &r.out };
    for (int i = 0; i < 10; i++) {
        *fields[i] = at;
        at += w[i] * (size_t)c->max_batch;
    }
    return r;
}

/* The n_head products of one head's matrix each (ws[h]) on the heads' gathered rows xs (heads outermost, T rows of
 * n_in each) into ys (T rows of n_out each), KERN_MATMUL_MANY heads to an op. */
static void per_head_products(pass *p, const kern_weight *ws, const float *xs, int n_in, float *ys, int n_out, int T,
                              const char *what)
{
    const int H = p->c->m->hp.n_head;
    for (int h0 = 0; h0 < H; h0 += KERN_MATMUL_MANY) {
        const int n = H - h0 < KERN_MATMUL_MANY ? H - h0 : KERN_MATMUL_MANY;
        const kern_weight *w[KERN_MATMUL_MANY], *b[KERN_MATMUL_MANY] = { 0 };
        const float *x[KERN_MATMUL_MANY];
        float *y[KERN_MATMUL_MANY];
        for (int i = 0; i < n; i++) {
            w[i] = &ws[h0 + i];
            x[i] = xs + (size_t)(h0 + i) * T * n_in;
            y[i] = ys + (size_t)(h0 + i) * T * n_out;
        }
        run_products_x(p, n, w, b, x, T, y, what);
    }
}

/* Each head's first n values of rows ld apart (T rows of H heads, head stride hs) gathered head by head into heads
 * (heads outermost), or (back) put from there. */
static void heads_apart(pass *p, float *rows, size_t ld, size_t hs, float *heads, int n, int T, bool back,
                        const char *what)
{
    const int H = p->c->m->hp.n_head;
    for (int h = 0; h < H; h++) {
        float *row = rows + (size_t)h * hs, *head = heads + (size_t)h * T * n;
        if (back)
            run_copy_rows(p, what, row, ld, head, (size_t)n, T, n);
        else
            run_copy_rows(p, what, head, (size_t)n, row, ld, T, n);
    }
}

void engine_mla_attention_block(pass *p, int il, int T, const float *in)
{
    engine_ctx *c = p->c;
    const engine_model *m = c->m;
    const engine_hparams *hp = &m->hp;
    const engine_layer *L = &m->layers[il];
    const kern_weight *w = L->w;
    const int H = hp->n_head, rot = hp->rope.n_rot, lora = hp->n_lora_kv, nope = hp->qk_nope, kd = hp->head_dim;
    const int vd = hp->v_dim, kv_k = hp->n_kv_head * kd, kv_v = hp->n_kv_head * vd, pos0 = c->pos;
    const size_t qw = (size_t)H * (size_t)hp->k_mla;
    const mla_rows r = mla_rows_of(c);
    float *kc = c->k_cache + c->k_off[il], *vc = c->v_cache + c->v_off[il];
    const bool staged = c->recording && c->k_step; /* as forward.c's attention_block */
    float *k_new = staged ? c->k_step : kc + (size_t)pos0 * kv_k, *v_new = staged ? c->v_step : vc + (size_t)pos0 * kv_v;

    if (w[MODEL_ROLE_ATTN_Q_A].t) {
        run_product(p, "attn_q_a", &w[MODEL_ROLE_ATTN_Q_A], NULL, in, T, r.q_a);
        run_rmsnorm(p, "attn_q_a_norm", &w[MODEL_ROLE_ATTN_Q_A_NORM], r.q_a, T, hp->n_lora_q, hp->eps, r.q_a);
        run_product(p, "attn_q_b", &w[MODEL_ROLE_ATTN_Q_B], NULL, r.q_a, T, r.q);
    } else {
        run_product(p, "attn_q", &w[MODEL_ROLE_ATTN_Q], NULL, in, T, r.q);
    }
    run_product(p, "attn_kv_a_mqa", &w[MODEL_ROLE_ATTN_KV_A_MQA], NULL, in, T, r.kv_a);
    run_copy_rows(p, "the compressed keys and values", r.lat, (size_t)lora, r.kv_a, (size_t)(lora + rot), T, lora);
    run_copy_rows(p, "the rotary key", r.k_pe, (size_t)rot, r.kv_a + lora, (size_t)(lora + rot), T, rot);
    run_rmsnorm(p, "attn_kv_a_norm", &w[MODEL_ROLE_ATTN_KV_A_NORM], r.lat, T, lora, hp->eps, r.lat);
    run_rope(p, "rope(k_pe)", r.k_pe, T, 1, rot, pos0, &hp->rope);
    run_copy_rows(p, "q's rotary parts", r.q_pe, (size_t)rot, r.q + nope, (size_t)hp->k_mla, T * H, rot);
    run_rope(p, "rope(q_pe)", r.q_pe, T, H, rot, pos0, &hp->rope);

    const float *q;
    float *att_out;
    if (hp->mla_split) {
        /* q_h = [ q_nope_h absorbed | q_pe_h ]; the cache's one head: [ c_kv | k_pe ], its value c_kv */
        heads_apart(p, r.q, qw, (size_t)hp->k_mla, r.hx, nope, T, false, "q's heads apart");
        per_head_products(p, L->heads[0], r.hx, nope, r.hy, lora, T, "attn_k_b (the query's absorption)");
        heads_apart(p, c->q, (size_t)H * kd, (size_t)kd, r.hy, lora, T, true, "q's heads together");
        run_copy_rows(p, "q's rotary parts", c->q + lora, (size_t)kd, r.q_pe, (size_t)rot, T * H, rot);
        run_copy_rows(p, "the compressed key", k_new, (size_t)kd, r.lat, (size_t)lora, T, lora);
        run_copy_rows(p, "the rotary key", k_new + lora, (size_t)kd, r.k_pe, (size_t)rot, T, rot);
        run_copy_rows(p, "the compressed value", v_new, (size_t)vd, r.lat, (size_t)lora, T, lora);
        q = c->q;
        att_out = r.out;
    } else {
        /* each head's own key [ k_nope_h | k_pe ] and value from the decompression */
        const int kvb = nope + hp->v_mla;
        run_product(p, "attn_kv_b", &w[MODEL_ROLE_ATTN_KV_B], NULL, r.lat, T, r.kv_b);
        run_copy_rows(p, "the keys' parts without rotation", k_new, (size_t)kd, r.kv_b, (size_t)kvb, T * H, nope);
        for (int h = 0; h < H; h++)
            run_copy_rows(p, "the rotary key", k_new + (size_t)h * kd + nope, (size_t)kv_k, r.k_pe, (size_t)rot, T, rot);
        run_copy_rows(p, "the values", v_new, (size_t)vd, r.kv_b + nope, (size_t)kvb, T * H, hp->v_mla);
        run_copy_rows(p, "q's rotary parts", r.q + nope, (size_t)hp->k_mla, r.q_pe, (size_t)rot, T * H, rot);
        q = r.q;
        att_out = c->att;
    }
    pass_look(p, ENGINE_OP_Q, q, T, H * kd);
    pass_look(p, ENGINE_OP_K, k_new, T, kv_k);
    pass_look(p, ENGINE_OP_V, v_new, T, kv_v);
    if (staged) {
        run_store_rows(p, "k into the cache", kc, k_new, T, kv_k, pos0);
        run_store_rows(p, "v into the cache", vc, v_new, T, kv_v, pos0);
    }
    const kern_attn attn = engine_layer_attn(m, il);
    run_attention(p, "attention", q, kc, vc, T, pos0, &attn, c->att);
    if (hp->mla_split) { /* each head's latent output decompressed by its own attn_v_b */
        heads_apart(p, c->att, (size_t)H * vd, (size_t)vd, r.hx, lora, T, false, "the attention's heads apart");
        per_head_products(p, L->heads[1], r.hx, lora, r.hy, hp->v_mla, T, "attn_v_b (the values' decompression)");
        heads_apart(p, r.out, (size_t)H * hp->v_mla, (size_t)hp->v_mla, r.hy, hp->v_mla, T, true,
                    "the attention's heads together");
    }
    pass_look(p, ENGINE_OP_ATTN, att_out, T, H * hp->v_mla);
    run_product(p, "attn_output", &w[MODEL_ROLE_ATTN_OUT], NULL, att_out, T, c->o);
    pass_look(p, ENGINE_OP_ATTN_OUT, c->o, T, hp->n_embd);
}
