/*
 * The forward pass of the dense decoders model/arch.c describes, read top to
 * bottom like the math (karpathy/llama2.c's habit), on whatever backend the
 * model is bound to. What differs between architectures is a flag or a
 * present tensor, never a name:
 *
 *   x = embd[tokens] (* sqrt(n_embd): gemma)
 *   per layer:  h = rmsnorm(x) * attn_norm
 *               q, k, v = h Wq (+bq), h Wk (+bk), h Wv (+bv)
 *               (q, k = rmsnorm per head * q_norm, k_norm: qwen3, gemma3)
 *               rope(q), rope(k) (sliding-window layers: their own base);  k, v -> cache
 *               a = attention(q, K, V; scale, window) Wo   (a = rmsnorm(a) * post_attention_norm: gemma)
 *               x += a
 *               h = rmsnorm(x) * ffn_norm
 *               f = (act(h Wgate) * (h Wup)) Wdown, act SiLU or tanh-GELU
 *                                                          (f = rmsnorm(f) * post_ffw_norm: gemma)
 *               x += f                                     <- l_out (the traced residual)
 *   logits = (rmsnorm(x) * output_norm) Wout               <- result_norm before Wout
 *            (logits = c * tanh(logits / c) with final soft-capping)
 */
#include "internal.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>



void engine_ctx_free(engine_ctx *c)
{
    if (!c)
        return;
    float *bufs[] = { c->k_cache, c->v_cache, c->x, c->h, c->q, c->att, c->o, c->gate, c->up, c->logits };
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
        if (bufs[i])
            c->be->free(c->be, bufs[i]);
    free(c->stats);
    free(c->probe_host);
    free(c);
}

engine_status engine_ctx_create(engine_model *m, int n_ctx, int max_batch, engine_ctx **out, engine_error *err)
{
    *out = NULL;
    const engine_hparams *hp = &m->hp;
    if (n_ctx < 1 || max_batch < 1)
        return engine_fail(err, ENGINE_E_INPUT, 0, "", "context %d / batch %d must be positive", n_ctx, max_batch);
    engine_ctx *c = calloc(1, sizeof *c);
    if (!c)
        return engine_fail(err, ENGINE_E_NOMEM, 0, "", "out of memory");
    c->m = m;
    c->be = m->be;
    c->n_ctx = n_ctx;
    c->max_batch = max_batch < n_ctx ? max_batch : n_ctx;
    /* Every size here comes from the file's hyperparameters (each below 2^30 or 2^16, but their products are
     * not), so each product is checked: one that does not fit is refused, not wrapped into a small buffer. */
    const size_t B = (size_t)c->max_batch;
    size_t kv_dim, q_dim, kv, x_n, q_n, ff_n, logit_n;
    bool overflow = __builtin_mul_overflow((size_t)hp->n_kv_head, (size_t)hp->head_dim, &kv_dim) ||
                    __builtin_mul_overflow((size_t)hp->n_head, (size_t)hp->head_dim, &q_dim) ||
                    __builtin_mul_overflow((size_t)hp->n_layer, (size_t)n_ctx, &kv) ||
                    __builtin_mul_overflow(kv, kv_dim, &kv) || __builtin_mul_overflow(B, (size_t)hp->n_embd, &x_n) ||
                    __builtin_mul_overflow(B, q_dim, &q_n) || __builtin_mul_overflow(B, (size_t)hp->n_ff, &ff_n) ||
                    __builtin_mul_overflow((size_t)engine_logit_rows(m->be), (size_t)hp->n_vocab, &logit_n);
    const size_t float_max = SIZE_MAX / sizeof(float) / 2; /* the byte count of each, and of two caches, fits */
    if (overflow || kv > float_max || x_n > float_max || q_n > float_max || ff_n > float_max ||
        logit_n > float_max) {
        engine_ctx_free(c);
        return engine_fail(err, ENGINE_E_INPUT, 0, "",
                           "a context of %d positions for this model's hyperparameters (%d layers, %d x %d key/value "
                           "values per position) needs more memory than can be addressed", n_ctx, hp->n_layer,
                           hp->n_kv_head, hp->head_dim);
    }
    struct {
        float **p;
        size_t n;
    } want[] = {
        { &c->k_cache, kv }, { &c->v_cache, kv }, { &c->x, x_n }, { &c->h, x_n },
        { &c->q, q_n }, { &c->att, q_n }, { &c->o, x_n }, { &c->gate, ff_n },
        { &c->up, ff_n }, { &c->logits, logit_n },
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        *want[i].p = c->be->alloc(c->be, want[i].n);
        c->bytes += want[i].n * sizeof(float);
        if (!*want[i].p) {
            engine_ctx_free(c);
            return engine_fail(err, ENGINE_E_NOMEM, 0, "",
                               "out of %s memory allocating %.1f MiB for a context of %d positions", m->be->name,
                               want[i].n * sizeof(float) / 1048576.0, n_ctx);
        }
    }
    c->stats = calloc(B, sizeof *c->stats);
    if (!c->stats) {
        engine_ctx_free(c);
        return engine_fail(err, ENGINE_E_NOMEM, 0, "", "out of memory");
    }
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

/* ws[i] times x into ys[i], for n weights that read the same x: one product where the backend has matmul_many
 * (x prepared once, one team of threads over all the rows), else one matmul each. *what names the weight that
 * failed (names[i]), or all of them (group) when the one product did. */
static kern_status matmuls(kern_backend *be, int n, const kern_weight *const ws[], const kern_weight *const bs[],
                           const float *x, int T, float *const ys[], const char *const names[], const char *group,
                           const char **what)
{
    *what = group;
    if (be->matmul_many)
        return be->matmul_many(be, n, ws, bs, x, T, ys);
    for (int i = 0; i < n; i++) {
        *what = names[i];
        kern_status s = be->matmul(be, ws[i], bs[i], x, T, ys[i]);
        if (s)
            return s;
    }
    return KERN_OK;
}

static engine_status probe_rows(engine_ctx *c, const engine_probe *p, engine_op op, int layer, const float *x, int T,
                                int n, engine_error *err)
{
    kern_backend *be = c->be;
    engine_status st;
    if (!p || (!p->all_ops && op != ENGINE_OP_LAYER_OUT && op != ENGINE_OP_RESULT_NORM))
        return ENGINE_OK;
    if (p->on_op) {
        if ((st = op_status(c, be->row_stats(be, x, T, n, c->stats), "row statistics", layer, err)))
            return st;
        p->on_op(p->user, op, layer, c->pos, T, c->stats);
    }
    if (p->on_values) {
        const size_t need = (size_t)T * n;
        if (need > c->probe_cap) {
            float *grown = realloc(c->probe_host, need * sizeof(float));
            if (!grown)
                return engine_fail(err, ENGINE_E_NOMEM, 0, "", "out of memory copying activations for a probe");
            c->probe_host = grown;
            c->probe_cap = need;
        }
        if ((st = op_status(c, be->to_host(be, c->probe_host, x, need), "copy of activations", layer, err)))
            return st;
        p->on_values(p->user, op, layer, c->pos, T, n, c->probe_host);
    }
    return ENGINE_OK;
}

/* What comes back of the last row's logits when they stay on the backend:
 * the top k ids (and values), k = 1 through the backend's argmax. */
typedef struct top_request {
    int k;
    int32_t *ids;
    float *vals;
} top_request;

/* Layer il's attention block on the T rows at positions c->pos ..: attn_norm, q, k and v (with their biases, head
 * norms and rotation; k and v go into the cache), attention, and its output projection into c->o. */
static engine_status attention_block(engine_ctx *c, int il, int T, const engine_probe *probe, engine_error *err)
{
    const engine_model *m = c->m;
    const engine_hparams *hp = &m->hp;
    kern_backend *be = c->be;
    const int E = hp->n_embd, hd = hp->head_dim, q_dim = hp->n_head * hd, kv_dim = hp->n_kv_head * hd;
    const int pos0 = c->pos;
    static const char *const qkv_names[3] = { "attn_q", "attn_k", "attn_v" };
    const char *what;
    engine_status st;
    const engine_layer *L = &m->layers[il];
    const kern_weight *w = L->w;
    const bool bias = L->has_bias;
    const kern_rope *rope = L->swa ? &hp->rope_swa : &hp->rope;
    const kern_attn attn = engine_layer_attn(m, il);
    float *kc = c->k_cache + (size_t)il * c->n_ctx * kv_dim, *vc = c->v_cache + (size_t)il * c->n_ctx * kv_dim;
    float *k_new = kc + (size_t)pos0 * kv_dim, *v_new = vc + (size_t)pos0 * kv_dim;

    if ((st = op_status(c, be->rmsnorm(be, &w[MODEL_ROLE_ATTN_NORM], c->x, T, E, hp->eps, c->h), "attn_norm", il,
                        err)))
        return st;
    if ((st = probe_rows(c, probe, ENGINE_OP_ATTN_NORM, il, c->h, T, E, err)))
        return st;
    const kern_weight *const qkv[3] = { &w[MODEL_ROLE_ATTN_Q], &w[MODEL_ROLE_ATTN_K], &w[MODEL_ROLE_ATTN_V] };
    const kern_weight *const qkv_bias[3] = { bias ? &w[MODEL_ROLE_ATTN_Q_BIAS] : NULL,
                                             bias ? &w[MODEL_ROLE_ATTN_K_BIAS] : NULL,
                                             bias ? &w[MODEL_ROLE_ATTN_V_BIAS] : NULL };
    float *const qkv_out[3] = { c->q, k_new, v_new };
    kern_status ks = matmuls(be, 3, qkv, qkv_bias, c->h, T, qkv_out, qkv_names, "attn_q, attn_k, attn_v", &what);
    if ((st = op_status(c, ks, what, il, err)))  /* what: set by matmuls */
        return st;
    if (w[MODEL_ROLE_ATTN_Q_NORM].t) {  /* qwen3, gemma3: RMSNorm of every head of q and k */
        if ((st = op_status(c, be->rmsnorm(be, &w[MODEL_ROLE_ATTN_Q_NORM], c->q, T * hp->n_head, hd, hp->eps, c->q),
                            "attn_q_norm", il, err)))
            return st;
        if ((st = op_status(c, be->rmsnorm(be, &w[MODEL_ROLE_ATTN_K_NORM], k_new, T * hp->n_kv_head, hd, hp->eps,
                            k_new), "attn_k_norm", il, err)))
            return st;
    }
    if ((st = op_status(c, be->rope(be, c->q, T, hp->n_head, hd, pos0, rope), "rope(q)", il, err)))
        return st;
    if ((st = op_status(c, be->rope(be, k_new, T, hp->n_kv_head, hd, pos0, rope), "rope(k)", il, err)))
        return st;
    if ((st = probe_rows(c, probe, ENGINE_OP_Q, il, c->q, T, q_dim, err)))
        return st;
    if ((st = probe_rows(c, probe, ENGINE_OP_K, il, k_new, T, kv_dim, err)))
        return st;
    if ((st = probe_rows(c, probe, ENGINE_OP_V, il, v_new, T, kv_dim, err)))
        return st;
    if ((st = op_status(c, be->attention(be, c->q, kc, vc, T, pos0, &attn, c->att), "attention", il, err)))
        return st;
    if ((st = probe_rows(c, probe, ENGINE_OP_ATTN, il, c->att, T, q_dim, err)))
        return st;
    if ((st = op_status(c, be->matmul(be, &w[MODEL_ROLE_ATTN_OUT], NULL, c->att, T, c->o), "attn_output", il, err)))
        return st;
    if ((st = probe_rows(c, probe, ENGINE_OP_ATTN_OUT, il, c->o, T, E, err)))
        return st;
    return ENGINE_OK;
}

/* Layer il's residual adds and feed-forward block: the attention output in c->o (post-normed where the model has
 * it) added to the residual c->x, then ffn_norm, the gated activation, ffn_down (post-normed), added too. Rows
 * [r0, T) only: the last layer's rows that go on (forward_batch's keep0); probes see every row with r0 = 0. */
static engine_status ffn_block(engine_ctx *c, int il, int T, int r0, const engine_probe *probe, engine_error *err)
{
    const engine_hparams *hp = &c->m->hp;
    kern_backend *be = c->be;
    const int E = hp->n_embd, F = hp->n_ff, Tr = T - r0;
    static const char *const gate_up_names[2] = { "ffn_gate", "ffn_up" };
    const char *what;
    engine_status st;
    const kern_weight *w = c->m->layers[il].w;
    float *x = c->x + (size_t)r0 * E, *h = c->h + (size_t)r0 * E, *o = c->o + (size_t)r0 * E;
    float *gate = c->gate + (size_t)r0 * F, *up = c->up + (size_t)r0 * F;

    if (w[MODEL_ROLE_ATTN_POST_NORM].t) {  /* gemma: the block's output is normalized before the residual add */
        if ((st = op_status(c, be->rmsnorm(be, &w[MODEL_ROLE_ATTN_POST_NORM], o, Tr, E, hp->eps, o),
                            "post_attention_norm", il, err)))
            return st;
        if ((st = probe_rows(c, probe, ENGINE_OP_ATTN_POST_NORM, il, c->o, T, E, err)))
            return st;
    }
    if ((st = op_status(c, be->add(be, x, o, (size_t)Tr * E), "residual add", il, err)))
        return st;

    if ((st = op_status(c, be->rmsnorm(be, &w[MODEL_ROLE_FFN_NORM], x, Tr, E, hp->eps, h), "ffn_norm", il, err)))
        return st;
    if ((st = probe_rows(c, probe, ENGINE_OP_FFN_NORM, il, c->h, T, E, err)))
        return st;
    const kern_weight *const gate_up[2] = { &w[MODEL_ROLE_FFN_GATE], &w[MODEL_ROLE_FFN_UP] };
    const kern_weight *const no_bias[2] = { 0 };
    float *const gate_up_out[2] = { gate, up };
    kern_status ks = matmuls(be, 2, gate_up, no_bias, h, Tr, gate_up_out, gate_up_names, "ffn_gate, ffn_up", &what);
    if ((st = op_status(c, ks, what, il, err)))
        return st;
    if ((st = op_status(c, be->glu(be, hp->act, gate, up, (size_t)Tr * F, (size_t)F, gate),
                        hp->act == KERN_ACT_SILU ? "swiglu" : "geglu", il, err)))
        return st;
    if ((st = probe_rows(c, probe, ENGINE_OP_FFN_ACT, il, c->gate, T, F, err)))
        return st;
    if ((st = op_status(c, be->matmul(be, &w[MODEL_ROLE_FFN_DOWN], NULL, gate, Tr, o), "ffn_down", il, err)))
        return st;
    if ((st = probe_rows(c, probe, ENGINE_OP_FFN_OUT, il, c->o, T, E, err)))
        return st;
    if (w[MODEL_ROLE_FFN_POST_NORM].t) {
        if ((st = op_status(c, be->rmsnorm(be, &w[MODEL_ROLE_FFN_POST_NORM], o, Tr, E, hp->eps, o), "post_ffw_norm",
                            il, err)))
            return st;
        if ((st = probe_rows(c, probe, ENGINE_OP_FFN_POST_NORM, il, c->o, T, E, err)))
            return st;
    }
    if ((st = op_status(c, be->add(be, x, o, (size_t)Tr * E), "residual add", il, err)))
        return st;
    if ((st = probe_rows(c, probe, ENGINE_OP_LAYER_OUT, il, c->x, T, E, err)))
        return st;
    return ENGINE_OK;
}

/* One batch of T <= max_batch tokens at positions c->pos ... Logits go to
 * host memory (logits), or stay on the backend for a top-k there (top). */
static engine_status forward_batch(engine_ctx *c, const int32_t *tokens, int T, bool all_logits, float *logits,
                                   const top_request *top, const engine_probe *probe, engine_error *err)
{
    const engine_model *m = c->m;
    const engine_hparams *hp = &m->hp;
    kern_backend *be = c->be;
    const int E = hp->n_embd;
    engine_status st;

    /* A decode step without probes needs nothing from the host until its logits: a device may record it. */
    const bool step = T == 1 && !probe && be->step_begin;
    if (step) {
        if ((st = op_status(c, be->step_begin(be), "recording the decode step", -1, err)))
            return st;
        c->recording = true;
    }
    /* The rows that go on past the last layer's attention: only those whose logits are asked for (the last one
     * when none are, for the spot check's final norm), unless a probe shows every row. Nothing else reads the
     * other rows' last hidden states: their keys and values are in the cache by then. llama.cpp's graphs drop
     * the same rows at the same place (inp_out_ids in llama-model.cpp), so its prompts skip that last FFN too. */
    const int keep0 = probe || (all_logits && logits) ? 0 : T - 1;
    if ((st = op_status(c, be->embed(be, &m->tok_embd, tokens, T, c->x), "token embedding", -1, err)))
        return st;
    if (hp->embd_scale != 1.0f &&
        (st = op_status(c, be->scale(be, c->x, (size_t)T * E, hp->embd_scale), "embedding scale", -1, err)))
        return st;
    for (int il = 0; il < hp->n_layer; il++) {
        if ((st = attention_block(c, il, T, probe, err)))
            return st;
        /* from the attention output on, rows [r0, T): all of them but in the last layer (keep0 above) */
        if ((st = ffn_block(c, il, T, il == hp->n_layer - 1 ? keep0 : 0, probe, err)))
            return st;
    }
    if ((st = op_status(c, be->rmsnorm(be, &m->output_norm, c->x + (size_t)keep0 * E, T - keep0, E, hp->eps,
                        c->h + (size_t)keep0 * E), "output_norm", hp->n_layer, err)))
        return st;
    if ((st = probe_rows(c, probe, ENGINE_OP_RESULT_NORM, hp->n_layer, c->h, T, E, err)))
        return st;
    c->pos += T;
    c->last_T = T;
    if (!logits && !top) {
        if (step) {
            c->recording = false;
            if ((st = op_status(c, be->step_end(be, true), "running the recorded decode step", hp->n_layer, err)))
                return st;
        }
        return ENGINE_OK;
    }
    const int first = all_logits && logits ? 0 : T - 1;
    for (int r = first, n; r < T; r += n) {
        n = engine_logit_part(be, T - r);
        if ((st = op_status(c, be->matmul(be, &m->output, NULL, c->h + (size_t)r * E, n, c->logits), "output",
                            hp->n_layer, err)))
            return st;
        if (hp->final_softcap > 0.0f &&
            (st = op_status(c, be->softcap(be, c->logits, (size_t)n * hp->n_vocab, hp->final_softcap),
                            "logit soft-capping", hp->n_layer, err)))
            return st;
        if (step) {
            c->recording = false;
            if ((st = op_status(c, be->step_end(be, true), "running the recorded decode step", hp->n_layer, err)))
                return st;
        }
        if (logits && (st = op_status(c, be->to_host(be, logits + (size_t)(r - first) * hp->n_vocab, c->logits,
                                                     (size_t)n * hp->n_vocab),
                                      "copy of logits", hp->n_layer, err)))
            return st;
    }
    if (top && top->k == 1)
        return op_status(c, be->argmax(be, c->logits, hp->n_vocab, top->ids), "argmax of the logits", hp->n_layer,
                         err);
    if (top)
        return op_status(c, be->top_k(be, c->logits, hp->n_vocab, top->k, top->ids, top->vals), "top-k of the logits",
                         hp->n_layer, err);
    return ENGINE_OK;
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
