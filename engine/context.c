/*
 * An engine context: its buffers (the KV cache, the activations, the experts' host staging and, where a backend
 * replays decode steps, the staged key and value rows), what they will take before they are made
 * (engine_ctx_estimate counts the same buffers), and its position. The forward pass that fills them is forward.c.
 */
#include "pass.h"

#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void engine_ctx_free(engine_ctx *c)
{
    if (!c)
        return;
    float *bufs[] = { c->k_cache, c->v_cache, c->x, c->h, c->q, c->att, c->o, c->gate, c->up, c->logits,
                      c->router, c->moe_tmp, c->k_step, c->v_step, c->mla, c->dn, c->dn_conv_state, c->dn_state,
                      c->ple, c->ple_tmp, c->moe_beside };
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
        if (bufs[i])
            c->be->free(c->be, bufs[i]);
    free(c->stats);
    free(c->router_host);
    free(c->route_probs);
    free(c->route_weights);
    free(c->route_ids);
    free(c->moe_in_host);
    free(c->moe_stage_host);
    free(c->moe_weights_host);
    free(c->moe_out_host);
    free(c->moe_ids_host);
    free(c->moe_slots_host);
    free(c->probe_host);
    free(c->router_in_host);
    free(c->k_off);
    free(c->v_off);
    free(c);
}

/* Where each layer's keys and values start in the caches (k_off, v_off: NULL to count only), each layer n_ctx rows of
 * its own width; the caches' sizes in *k, *v. False when they overflow. */
static bool cache_layout(const engine_model *m, size_t n_ctx, size_t *k_off, size_t *v_off, size_t *k, size_t *v)
{
    size_t ka = 0, va = 0;
    for (int il = 0; il < m->hp.n_layer; il++) {
        const engine_layer *L = &m->layers[il];
        size_t kr, vr;
        if (L->recurrent || !L->mixer) { /* a recurrent or feed-forward layer keeps no keys or values */
            if (k_off)
                k_off[il] = ka;
            if (v_off)
                v_off[il] = va;
            continue;
        }
        if (L->kv_src != il) { /* it reads an earlier layer's cache (Gemma 4 E2B / E4B): none of its own */
            if (k_off)
                k_off[il] = k_off[L->kv_src];
            if (v_off)
                v_off[il] = v_off[L->kv_src];
            continue;
        }
        if (k_off)
            k_off[il] = ka;
        if (v_off)
            v_off[il] = va;
        if (__builtin_mul_overflow(n_ctx, (size_t)L->n_kv_head * (size_t)L->head_dim, &kr) ||
            __builtin_mul_overflow(n_ctx, (size_t)L->n_kv_head * (size_t)L->v_dim, &vr) ||
            __builtin_add_overflow(ka, kr, &ka) || __builtin_add_overflow(va, vr, &va))
            return false;
    }
    *k = ka;
    *v = va;
    return true;
}

/* Elements of each buffer a context of n_ctx positions and batches of B holds. */
typedef struct ctx_sizes {
    size_t kv, kv_v, x, q, ff, logit, router, mla; /* kv, kv_v: the K and the V cache */
    size_t ple;      /* Gemma 4's per-layer inputs (each of two buffers) */
    size_t beside;   /* Gemma 4's experts beside a dense block (their input, the router's, their output), Talkie's skip */
    size_t dn, dn_conv, dn_state; /* a gated delta net's rows (or gated attention's), its recurrent states */
    size_t moe_host; /* the grouped experts' host floats: two batches of rows, every slot's output and weight */
} ctx_sizes;

/* Whether a batch's tokens go through each expert together (one product per expert over the tokens that chose it):
 * in exact numerics, where the order of a product's sums is free, and under --numerics ggml where the backend can
 * multiply each token's row as a one-token product does (matmul_each), the order llama.cpp's mul_mat_id keeps;
 * else token by token. */
static bool groups_experts(const engine_model *m)
{
    return m->hp.n_expert > 0 && (m->be->numerics == KERN_NUMERICS_EXACT || m->be->matmul_each ||
                                  m->hp.desc->moe_weight_before);
}

static engine_status ctx_sizes_of(const engine_model *m, int n_ctx, size_t B, ctx_sizes *z, engine_error *err)
{
    const engine_hparams *hp = &m->hp;
    /* Every size here comes from the file's hyperparameters (each below 2^30 or 2^16, but their products are
     * not), so each product is checked: one that does not fit is refused, not wrapped into a small buffer. */
    size_t q_dim;
    int ff_widest = hp->n_ff > hp->n_ff_exp ? hp->n_ff : hp->n_ff_exp;
    ff_widest = ff_widest > hp->n_ff_shexp ? ff_widest : hp->n_ff_shexp;
    ff_widest = ff_widest > hp->n_ple ? ff_widest : hp->n_ple; /* a layer's per-layer input uses gate and up */
    size_t mla_row = engine_mla_width(hp), dn_row = engine_dn_width(hp);
    z->dn_state = engine_dn_state_floats(hp, &z->dn_conv);
    bool overflow = __builtin_mul_overflow((size_t)hp->n_head, engine_q_width(hp), &q_dim) ||
                    !cache_layout(m, (size_t)n_ctx, NULL, NULL, &z->kv, &z->kv_v) ||
                    __builtin_mul_overflow(B, mla_row, &z->mla) ||
                    __builtin_mul_overflow(B, dn_row, &z->dn) ||
                    __builtin_mul_overflow(B, (size_t)hp->n_embd, &z->x) ||
                    __builtin_mul_overflow(B * (size_t)hp->n_layer, (size_t)hp->n_ple, &z->ple) ||
                    __builtin_mul_overflow(B, q_dim, &z->q) || __builtin_mul_overflow(B, (size_t)ff_widest, &z->ff) ||
                    __builtin_mul_overflow(B, (size_t)hp->n_expert + 1, &z->router) ||
                    __builtin_mul_overflow((size_t)engine_logit_rows(m->be), (size_t)hp->n_vocab, &z->logit);
    const size_t float_max = SIZE_MAX / sizeof(float) / 2; /* the byte count of each, and of two caches, fits */
    if (overflow || z->kv > float_max || z->kv_v > float_max || z->mla > float_max || z->dn > float_max ||
        z->dn_state > float_max || z->dn_conv > float_max || z->x > float_max || z->q > float_max || z->ff > float_max ||
        z->ple > float_max ||
        z->logit > float_max || z->router > float_max)
        return engine_fail(err, ENGINE_E_INPUT, 0, "",
                           "a context of %d positions for this model's hyperparameters (%d layers, %d x %d key/value "
                           "values per position) needs more memory than can be addressed", n_ctx, hp->n_layer,
                           hp->n_kv_head, hp->head_dim);
    if (!hp->n_expert)
        z->router = 0; /* a dense model has no router */
    /* (SmallThinker's router reads the layer's input, kept here through the attention) */
    z->beside = hp->desc->embd_skip             ? z->x /* Talkie's normed embeddings, each layer's skip */
                : !hp->n_expert                 ? 0
                : hp->desc->moe_dense_beside    ? 3 * z->x
                : hp->desc->router_on_input     ? z->x
                : hp->desc->moe_dense_residual  ? z->x /* Arctic's experts read the layer's input */
                : hp->desc->moe_dense_mean      ? z->x /* Grok-2's dense block's output */
                                                : 0;
    /* B rows twice, B k outputs of n_embd and B k weights */
    size_t slots_x = 0;
    z->moe_host = 0;
    if (groups_experts(m) &&
        (__builtin_mul_overflow((size_t)hp->n_expert_used, z->x + B, &slots_x) || slots_x > float_max))
        return engine_fail(err, ENGINE_E_INPUT, 0, "", "batches of %zu tokens through %d experts each need more "
                           "memory than can be addressed", B, hp->n_expert_used);
    if (groups_experts(m))
        z->moe_host = 2 * z->x + slots_x;
    return ENGINE_OK;
}

engine_status engine_ctx_estimate(const engine_model *m, int n_ctx, int max_batch, engine_ctx_memory *out,
                                  engine_error *err)
{
    memset(out, 0, sizeof *out);
    if (n_ctx < 1 || max_batch < 1)
        return engine_fail(err, ENGINE_E_INPUT, 0, "", "context %d / batch %d must be positive", n_ctx, max_batch);
    ctx_sizes z = { 0 };
    engine_status s = ctx_sizes_of(m, n_ctx, (size_t)(max_batch < n_ctx ? max_batch : n_ctx), &z, err);
    if (s != ENGINE_OK)
        return s;
    const engine_hparams *hp = &m->hp;
    const uint64_t B = (uint64_t)(max_batch < n_ctx ? max_batch : n_ctx), f = sizeof(float);
    out->n_layer = hp->n_layer;
    out->n_ctx = n_ctx;
    out->max_batch = (int)B;
    /* a layer's row (a position's keys, its values): their mean over the layers where layers differ */
    out->kv_row_bytes = (uint64_t)z.kv / (uint64_t)hp->n_layer / (uint64_t)n_ctx * f;
    out->v_row_bytes = (uint64_t)z.kv_v / (uint64_t)hp->n_layer / (uint64_t)n_ctx * f;
    out->kv_bytes = ((uint64_t)z.kv + (uint64_t)z.kv_v) * f;
    out->kv_bytes_per_position = out->kv_bytes / (uint64_t)n_ctx;
    out->state_bytes = ((uint64_t)z.dn_conv + (uint64_t)z.dn_state) * f;
    /* the buffers engine_ctx_create allocates besides the caches: x, h, o; q, att; gate, up; logits; router, moe;
     * the grouped experts' host staging; latent attention's rows; a delta net's; Gemma 4's per-layer inputs and
     * experts beside a dense block */
    const uint64_t rows_of[] = { z.x, z.x, z.x, z.q, z.q, z.ff, z.ff, z.logit, z.router, z.router ? z.x : 0,
                                 z.moe_host, z.mla, z.dn, z.ple, z.ple, z.beside };
    const uint64_t logit_rows = (uint64_t)engine_logit_rows(m->be);
    for (int i = 0; i < ENGINE_CTX_ACT_BUFFERS; i++) {
        if (!rows_of[i])
            continue;
        const bool logits = i == 7;
        out->act[out->n_act].rows = logits ? logit_rows : B;
        out->act[out->n_act].row_bytes = rows_of[i] / (logits ? logit_rows : B) * f;
        out->act[out->n_act].batch_rows = !logits;
        out->activation_bytes += rows_of[i] * f;
        out->n_act++;
    }
    return ENGINE_OK;
}

engine_status engine_ctx_create(engine_model *m, int n_ctx, int max_batch, engine_ctx **out, engine_error *err)
{
    *out = NULL;
    const engine_hparams *hp = &m->hp;
    if (n_ctx < 1 || max_batch < 1)
        return engine_fail(err, ENGINE_E_INPUT, 0, "", "context %d / batch %d must be positive", n_ctx, max_batch);
    /* learned positions end where their table does (llama.cpp's get_rows would read past it) */
    if (m->pos_embd.t && (uint64_t)n_ctx > m->pos_embd.t->ne[1])
        return engine_fail(err, ENGINE_E_INPUT, m->pos_embd.t->info_offset, m->pos_embd.t->name,
                           "a context of %d positions is longer than the %llu the model has learned (%s rows)", n_ctx,
                           (unsigned long long)m->pos_embd.t->ne[1], m->pos_embd.t->name);
    engine_ctx *c = calloc(1, sizeof *c);
    if (!c)
        return engine_fail(err, ENGINE_E_NOMEM, 0, "", "out of memory");
    c->m = m;
    c->be = m->be;
    c->n_ctx = n_ctx;
    c->max_batch = max_batch < n_ctx ? max_batch : n_ctx;
    if (m->rope_long || m->rope_short) /* the model's rotation follows the last context made */
        m->hp.rope.freq_factors = m->hp.rope_swa.freq_factors = engine_rope_factors_for(m, n_ctx, NULL);
    const size_t B = (size_t)c->max_batch;
    ctx_sizes z = { 0 };
    engine_status zs = ctx_sizes_of(m, n_ctx, B, &z, err);
    if (zs != ENGINE_OK) {
        engine_ctx_free(c);
        return zs;
    }
    const size_t kv = z.kv, kv_v = z.kv_v, x_n = z.x, q_n = z.q, ff_n = z.ff, logit_n = z.logit, router_n = z.router;
    struct {
        float **p;
        size_t n;
    } want[] = {
        { &c->k_cache, kv }, { &c->v_cache, kv_v }, { &c->x, x_n }, { &c->h, x_n }, { &c->mla, z.mla },
        { &c->q, q_n }, { &c->att, q_n }, { &c->o, x_n }, { &c->gate, ff_n },
        { &c->up, ff_n }, { &c->logits, logit_n }, { &c->router, router_n },
        { &c->moe_tmp, router_n ? x_n : 0 }, /* engine_ctx_estimate counts the same buffers */
        { &c->dn, z.dn }, { &c->dn_conv_state, z.dn_conv }, { &c->dn_state, z.dn_state },
        { &c->ple, z.ple }, { &c->ple_tmp, z.ple }, { &c->moe_beside, z.beside },
        /* only where steps replay: two rows, outside the estimate */
        { &c->k_step, c->be->step_replay ? (size_t)hp->kv_max : 0 },
        { &c->v_step, c->be->step_replay ? (size_t)hp->kv_max : 0 },
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        if (!want[i].n)
            continue; /* a dense model has no router */
        *want[i].p = c->be->alloc(c->be, want[i].n);
        c->bytes += want[i].n * sizeof(float);
        if (!*want[i].p) {
            engine_ctx_free(c);
            return engine_fail(err, ENGINE_E_NOMEM, 0, "",
                               "out of %s memory allocating %.1f MiB for a context of %d positions", m->be->name,
                               want[i].n * sizeof(float) / 1048576.0, n_ctx);
        }
    }
    c->k_off = malloc((size_t)hp->n_layer * sizeof *c->k_off);
    c->v_off = malloc((size_t)hp->n_layer * sizeof *c->v_off);
    size_t k_n, v_n;
    if (!c->k_off || !c->v_off || !cache_layout(m, (size_t)n_ctx, c->k_off, c->v_off, &k_n, &v_n)) {
        engine_ctx_free(c);
        return engine_fail(err, ENGINE_E_NOMEM, 0, "", "out of memory");
    }
    if ((zs = engine_dn_reset(c, err)) != ENGINE_OK) {
        engine_ctx_free(c);
        return zs;
    }
    c->stats = calloc(B, sizeof *c->stats);
    if (hp->n_expert) {
        c->router_host = malloc(router_n * sizeof(float));
        c->route_probs = malloc(2 * (size_t)hp->n_expert * sizeof(float)); /* probs, then what the choice ranks */
        c->route_weights = malloc((size_t)hp->n_expert_used * sizeof(float));
        c->route_ids = malloc((size_t)hp->n_expert_used * sizeof(int));
    }
    if (z.moe_host) {
        const size_t k = (size_t)hp->n_expert_used, slots = B * k;
        c->moe_in_host = malloc(x_n * sizeof(float));
        c->moe_stage_host = malloc(x_n * sizeof(float));
        c->moe_out_host = malloc(slots * (size_t)hp->n_embd * sizeof(float));
        c->moe_weights_host = malloc(slots * sizeof(float));
        c->moe_ids_host = malloc(slots * sizeof(int));
        c->moe_slots_host = malloc(slots * sizeof(int));
        c->bytes += z.moe_host * sizeof(float);
        if (!c->moe_in_host || !c->moe_stage_host || !c->moe_out_host || !c->moe_weights_host || !c->moe_ids_host ||
            !c->moe_slots_host) {
            engine_ctx_free(c);
            return engine_fail(err, ENGINE_E_NOMEM, 0, "", "out of memory for the experts' batches");
        }
    }
    const bool router_in = z.beside && hp->n_expert; /* (not Talkie's skip) */
    if (router_in)
        c->router_in_host = malloc(x_n * sizeof(float));
    if (!c->stats || (hp->n_expert && (!c->router_host || !c->route_probs || !c->route_weights || !c->route_ids)) ||
        (router_in && !c->router_in_host)) {
        engine_ctx_free(c);
        return engine_fail(err, ENGINE_E_NOMEM, 0, "", "out of memory");
    }
    /* Each context's steps have keys of their own: a backend shared by two contexts never replays one's step for the
     * other (their caches differ). The low 16 bits say what comes back (forward_batch puts the top-k there). */
    static _Atomic uint64_t contexts;
    c->step_key = (atomic_fetch_add(&contexts, 1) + 1) << 16;
    *out = c;
    return ENGINE_OK;
}

int engine_ctx_pos(const engine_ctx *c)
{
    return c->pos;
}

engine_status engine_ctx_rewind(engine_ctx *c, int pos, engine_error *err)
{
    if (pos < 0 || pos > c->pos)
        return engine_fail(err, ENGINE_E_INPUT, 0, "", "rewind to position %d: %d positions are filled", pos, c->pos);
    /* a recurrent state holds every position before, none apart: it goes back to the start or nowhere */
    if (c->m->hp.n_recurrent && pos != c->pos && pos != 0)
        return engine_fail(err, ENGINE_E_INPUT, 0, "", "rewind to position %d: this model's recurrent layers keep one "
                           "state of all %d positions, which can only start over (position 0)", pos, c->pos);
    if (c->m->hp.n_recurrent && pos == 0 && c->pos > 0) {
        engine_status s = engine_dn_reset(c, err);
        if (s)
            return s;
    }
    c->pos = pos;
    c->last_T = 0; /* the final norm's rows belong to the positions forgotten (the spot check needs a new pass) */
    return ENGINE_OK;
}

int engine_ctx_size(const engine_ctx *c)
{
    return c->n_ctx;
}

uint64_t engine_ctx_bytes(const engine_ctx *c)
{
    return c->bytes;
}
