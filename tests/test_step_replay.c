/*
 * The engine's half of a replayed decode step (kern.h: step_begin / step_replay), held on the host: a CPU backend
 * that keeps the ops of each recorded step as a device keeps a graph, and replays them at a new position with a new
 * token, changing nothing else (what the CUDA backend does with one graph launch). If the engine folded a position
 * into anything but an op's pos0, or read a result from anywhere but where the recording put it, the replayed
 * generation would part from the eager one; it must equal it bit for bit, its cache included.
 */
#include "engine.h"
#include "backend_sides.h"
#include "fixture_model.h"
#include "testutil.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef enum {
    REC_EMBED, REC_MATMUL, REC_RMSNORM, REC_ROPE, REC_ATTENTION, REC_GLU, REC_SCALE, REC_SOFTCAP, REC_ADD, REC_STORE,
    REC_ARGMAX, REC_TOP_K, REC_ROPE_STORE, REC_ADD_RMSNORM, REC_MATMUL_GLU,
} rec_kind;

/* One recorded op: its arguments as the engine gave them, a position kept as its distance from the step's. */
typedef struct rec_op {
    rec_kind kind;
    const kern_weight *w, *bias;
    const float *x, *y;
    float *out;
    int T, n, k, pos_delta;
    size_t len, row;
    float f;
    kern_act act;
    kern_rope rope;
    kern_attn attn;
    int32_t *ids;
    float *vals;
    float *k_rows, *k_cache, *v_cache; /* rope_store's (q in out, v in x), attention's caches */
    int n_kv;
    const kern_weight *up, *up_bias; /* matmul_glu's (the gate in w, its bias in bias, its scratch in k_rows) */
} rec_op;

enum { REC_MAX = 4096 };

/* The recorder: the CPU backend's ops (inner), the step being recorded, and the one kept for replays. */
static struct {
    kern_backend inner;
    bool open;
    uint64_t key, kept_key;
    int pos;
    int32_t token; /* what the recorded embedding reads, as a graph's copy node reads pinned memory */
    rec_op ops[REC_MAX], kept[REC_MAX];
    int n, n_kept;
    int records, replays, declined, fused_ops;
} R;

static void push(rec_op op)
{
    if (!R.open)
        return;
    cr_assert_lt(R.n, REC_MAX, "a decode step of more than %d ops", REC_MAX);
    R.ops[R.n++] = op;
}

/* rope_store as the four ops it stands for (the CPU offers no fused op: it has no launches to save) */
static kern_status rope_store_composed(kern_backend *b, const rec_op *o, int pos0)
{
    const kern_backend *in = &R.inner;
    const int hd = (int)o->row, kv = o->n_kv * hd;
    kern_status s = in->rope(b, o->out, o->T, o->n, hd, pos0, &o->rope);
    if (!s)
        s = in->rope(b, o->k_rows, o->T, o->n_kv, hd, pos0, &o->rope);
    if (!s)
        s = in->store_rows(b, o->k_cache, o->k_rows, o->T, kv, pos0);
    return s ? s : in->store_rows(b, o->v_cache, o->x, o->T, kv, pos0);
}

/* matmul_glu as the three ops it stands for, the up products in the scratch the engine gave (k_rows) */
static kern_status matmul_glu_composed(kern_backend *b, const rec_op *o)
{
    const kern_backend *in = &R.inner;
    const size_t F = (size_t)(o->up->t->n_elements / o->up->t->ne[0]), n = (size_t)o->T * F;
    kern_status s = in->matmul(b, o->w, o->bias, o->x, o->T, o->out);
    if (!s)
        s = in->matmul(b, o->up, o->up_bias, o->x, o->T, o->k_rows);
    return s ? s : in->glu(b, o->act, o->out, o->k_rows, n, F, o->out);
}

static kern_status run_op(kern_backend *b, const rec_op *o, int pos)
{
    const kern_backend *in = &R.inner;
    switch (o->kind) {
    case REC_EMBED: return in->embed(b, o->w, &R.token, o->T, o->out);
    case REC_MATMUL: return in->matmul(b, o->w, o->bias, o->x, o->T, o->out);
    case REC_RMSNORM: return in->rmsnorm(b, o->w, o->x, o->T, o->n, o->f, o->out);
    case REC_ROPE: return in->rope(b, o->out, o->T, o->n, o->k, pos + o->pos_delta, &o->rope);
    case REC_ATTENTION: return in->attention(b, o->x, o->k_cache, o->v_cache, o->T, pos + o->pos_delta, &o->attn,
                                             o->out);
    case REC_GLU: return in->glu(b, o->act, o->x, o->y, o->len, o->row, o->out);
    case REC_SCALE: return in->scale(b, o->out, o->len, o->f);
    case REC_SOFTCAP: return in->softcap(b, o->out, o->len, o->f);
    case REC_ADD: return in->add(b, o->out, o->x, o->len);
    case REC_STORE: return in->store_rows(b, o->out, o->x, o->T, o->n, pos + o->pos_delta);
    case REC_ARGMAX: return in->argmax(b, o->x, o->n, o->ids);
    case REC_TOP_K: return in->top_k(b, o->x, o->n, o->k, o->ids, o->vals);
    case REC_ROPE_STORE: return rope_store_composed(b, o, pos + o->pos_delta);
    case REC_MATMUL_GLU: return matmul_glu_composed(b, o);
    case REC_ADD_RMSNORM: { /* as the two ops it stands for */
        const kern_status s = in->add(b, o->k_rows, o->x, (size_t)o->T * o->n);
        return s ? s : in->rmsnorm(b, o->w, o->k_rows, o->T, o->n, o->f, o->out);
    }
    }
    return KERN_E_SHAPE;
}

/* Each op is recorded and run at once, as the CPU would; a replay runs the kept list again. */
static kern_status record(kern_backend *b, rec_op op)
{
    push(op);
    return run_op(b, &op, R.pos);
}

static kern_status r_embed(kern_backend *b, const kern_weight *w, const int32_t *tokens, int T, float *out)
{
    if (!R.open)
        return R.inner.embed(b, w, tokens, T, out);
    cr_assert_eq(T, 1, "a decode step embeds one token");
    R.token = tokens[0];
    return record(b, (rec_op){ .kind = REC_EMBED, .w = w, .T = T, .out = out });
}

static kern_status r_matmul(kern_backend *b, const kern_weight *w, const kern_weight *bias, const float *x, int T,
                            float *y)
{
    return record(b, (rec_op){ .kind = REC_MATMUL, .w = w, .bias = bias, .x = x, .T = T, .out = y });
}

static kern_status r_rmsnorm(kern_backend *b, const kern_weight *w, const float *x, int T, int n, float eps,
                             float *out)
{
    return record(b, (rec_op){ .kind = REC_RMSNORM, .w = w, .x = x, .T = T, .n = n, .f = eps, .out = out });
}

static kern_status r_rope(kern_backend *b, float *x, int T, int n_head, int head_dim, int pos0, const kern_rope *r)
{
    return record(b, (rec_op){ .kind = REC_ROPE, .out = x, .T = T, .n = n_head, .k = head_dim,
                               .pos_delta = pos0 - R.pos, .rope = *r });
}

static kern_status r_attention(kern_backend *b, const float *q, const float *k_cache, const float *v_cache, int T,
                               int pos0, const kern_attn *a, float *out)
{
    return record(b, (rec_op){ .kind = REC_ATTENTION, .x = q, .k_cache = (float *)k_cache, .v_cache = (float *)v_cache,
                               .T = T, .pos_delta = pos0 - R.pos, .attn = *a, .out = out });
}

static kern_status r_glu(kern_backend *b, kern_act act, const float *gate, const float *up, size_t n, size_t row,
                         float *out)
{
    return record(b, (rec_op){ .kind = REC_GLU, .act = act, .x = gate, .y = up, .len = n, .row = row, .out = out });
}

static kern_status r_scale(kern_backend *b, float *x, size_t n, float s)
{
    return record(b, (rec_op){ .kind = REC_SCALE, .out = x, .len = n, .f = s });
}

static kern_status r_softcap(kern_backend *b, float *x, size_t n, float cap)
{
    return record(b, (rec_op){ .kind = REC_SOFTCAP, .out = x, .len = n, .f = cap });
}

static kern_status r_add(kern_backend *b, float *x, const float *y, size_t n)
{
    return record(b, (rec_op){ .kind = REC_ADD, .out = x, .x = y, .len = n });
}

static kern_status r_store_rows(kern_backend *b, float *dst, const float *src, int T, int n, int pos0)
{
    return record(b, (rec_op){ .kind = REC_STORE, .out = dst, .x = src, .T = T, .n = n, .pos_delta = pos0 - R.pos });
}

static kern_status r_argmax(kern_backend *b, const float *x, int n, int32_t *out)
{
    return record(b, (rec_op){ .kind = REC_ARGMAX, .x = x, .n = n, .ids = out });
}

static kern_status r_top_k(kern_backend *b, const float *x, int n, int k, int32_t *ids, float *vals)
{
    return record(b, (rec_op){ .kind = REC_TOP_K, .x = x, .n = n, .k = k, .ids = ids, .vals = vals });
}

static kern_status r_rope_store(kern_backend *b, float *q, float *k, const float *v, int T, int n_head, int n_kv_head,
                                int head_dim, int pos0, const kern_rope *r, float *k_cache, float *v_cache)
{
    R.fused_ops++;
    return record(b, (rec_op){ .kind = REC_ROPE_STORE, .out = q, .k_rows = k, .x = v, .T = T, .n = n_head,
                               .n_kv = n_kv_head, .row = (size_t)head_dim, .pos_delta = pos0 - R.pos, .rope = *r,
                               .k_cache = k_cache, .v_cache = v_cache });
}


static kern_status r_add_rmsnorm(kern_backend *b, float *x, const float *y, const kern_weight *w, int T, int n,
                                 float eps, float *out)
{
    R.fused_ops++;
    return record(b, (rec_op){ .kind = REC_ADD_RMSNORM, .k_rows = x, .x = y, .w = w, .T = T, .n = n, .f = eps,
                               .out = out });
}

static kern_status r_matmul_glu(kern_backend *b, const kern_weight *gate, const kern_weight *up,
                                const kern_weight *const biases[2], const float *x, int T, kern_act act, float *out,
                                float *scratch)
{
    R.fused_ops++;
    return record(b, (rec_op){ .kind = REC_MATMUL_GLU, .w = gate, .up = up, .bias = biases ? biases[0] : NULL,
                               .up_bias = biases ? biases[1] : NULL, .x = x, .T = T, .act = act, .out = out,
                               .k_rows = scratch });
}

static kern_status r_row_stats(kern_backend *b, const float *x, int T, int n, kern_row_stats *out)
{
    cr_assert(!R.open, "row statistics (the host) inside a recorded step");
    return R.inner.row_stats(b, x, T, n, out);
}

static kern_status r_to_host(kern_backend *b, float *d, const float *s, size_t n)
{
    cr_assert(!R.open, "the host was needed inside a recorded step");
    return R.inner.to_host(b, d, s, n);
}

static kern_status r_step_begin(kern_backend *b, uint64_t key, int pos)
{
    (void)b;
    cr_assert(!R.open, "step_begin while a step is open");
    R.open = true;
    R.key = key;
    R.pos = pos;
    R.n = 0;
    return KERN_OK;
}

static kern_status r_step_end(kern_backend *b, bool run)
{
    (void)b;
    cr_assert(R.open, "step_end without step_begin");
    R.open = false;
    if (run) { /* what ran is kept, as a device keeps its last graph */
        memcpy(R.kept, R.ops, (size_t)R.n * sizeof *R.ops);
        R.n_kept = R.n;
        R.kept_key = R.key;
        R.records++;
    }
    return KERN_OK;
}

static kern_status r_step_replay(kern_backend *b, uint64_t key, int pos, const int32_t *token)
{
    if (!R.n_kept || key != R.kept_key) {
        R.declined++;
        return KERN_E_UNSUPPORTED;
    }
    R.token = *token;
    kern_status s = KERN_OK;
    for (int i = 0; i < R.n_kept && !s; i++)
        s = run_op(b, &R.kept[i], pos);
    R.replays++;
    return s;
}

/* The CPU backend with the recorder's ops; of the coarse ops only rope_store, add_rmsnorm and matmul_glu, and those
 * only when `fused` (the engine then hands the rotations and the cache's stores, each residual add with the norm
 * after it, and each gated block's products with its activation, over as one op). */
static kern_backend *recording_cpu(bool fused)
{
    kern_backend *be = kern_cpu_create(1);
    memset(&R, 0, sizeof R);
    R.inner = *be;
    be->embed = r_embed;
    be->matmul = r_matmul;
    be->rmsnorm = r_rmsnorm;
    be->rope = r_rope;
    be->attention = r_attention;
    be->glu = r_glu;
    be->scale = r_scale;
    be->softcap = r_softcap;
    be->add = r_add;
    be->store_rows = r_store_rows;
    be->argmax = r_argmax;
    be->top_k = r_top_k;
    be->row_stats = r_row_stats;
    be->to_host = r_to_host;
    be->matmul_many = NULL;
    be->matmul_many_x = NULL;
    be->matmul_each = NULL;
    be->rope_store = fused ? r_rope_store : NULL;
    be->add_rmsnorm = fused ? r_add_rmsnorm : NULL;
    be->matmul_glu = fused ? r_matmul_glu : NULL;
    be->step_begin = r_step_begin;
    be->step_end = r_step_end;
    be->step_replay = r_step_replay;
    return be;
}

enum { STEPS = 64, PROMPT = 4, PROBED_AT = 20, REWIND_AT = 40, REWIND = 3 };

/* A prompt, then STEPS greedy tokens (every 8th step a top-5 instead, whose first id goes on; step PROBED_AT traced;
 * before step REWIND_AT, REWIND positions forgotten and run again), then the logits of one more token: the cache's
 * whole contents speak in those. */
typedef struct run_result {
    int32_t tokens[STEPS];
    int32_t top5[STEPS][5];
    float *logits;
    int n_vocab;
} run_result;

static void generate(const char *model, kern_backend *be, run_result *out)
{
    char path[4096];
    gguf_file *f;
    gguf_error ge;
    if (model[0] == '/')
        cr_assert_eq(gguf_open(model, &f, &ge), GGUF_OK, "%s", ge.message);
    else
        f = open_model(model, path, sizeof path);
    engine_model *m;
    engine_ctx *c;
    engine_error e;
    cr_assert_eq(engine_model_load(f, be, &m, &e), ENGINE_OK, "%s", e.message);
    cr_assert_eq(engine_ctx_create(m, PROMPT + STEPS + 2, 8, &c, &e), ENGINE_OK, "%s", e.message);
    const int nv = engine_model_hparams(m)->n_vocab;
    int32_t prompt[PROMPT] = { 1, 15, 27, 3 }, tok, fed[STEPS];
    cr_assert_eq(engine_forward_argmax(c, prompt, PROMPT, &tok, NULL, &e), ENGINE_OK, "%s", e.message);
    engine_trace *trace = engine_trace_create(engine_model_hparams(m)->n_layer, nv);
    float *probed = malloc((size_t)nv * sizeof(float));
    for (int s = 0; s < STEPS; s++) {
        int32_t next;
        if (s == REWIND_AT) { /* back REWIND positions and through them again: replays at earlier positions */
            cr_assert_eq(engine_ctx_rewind(c, engine_ctx_pos(c) - REWIND, &e), ENGINE_OK, "%s", e.message);
            for (int r = s - REWIND; r < s; r++) {
                cr_assert_eq(engine_forward_argmax(c, &fed[r], 1, &next, NULL, &e), ENGINE_OK, "%s", e.message);
                if (r % 8 != 7) /* a top-5 step's first id is its argmax too */
                    cr_assert_eq(next, out->tokens[r], "step %d again after the rewind: %d, first %d", r, next,
                                 out->tokens[r]);
            }
        }
        fed[s] = tok;
        if (s == PROBED_AT) { /* a traced pass (never recorded) between replays */
            engine_probe probe = engine_trace_probe(trace);
            cr_assert_eq(engine_forward(c, &tok, 1, false, probed, &probe, &e), ENGINE_OK, "%s", e.message);
            next = engine_argmax(probed, nv);
        } else if (s % 8 == 7) {
            float vals[5];
            cr_assert_eq(engine_forward_top_k(c, &tok, 1, 5, out->top5[s], vals, NULL, &e), ENGINE_OK, "%s", e.message);
            next = out->top5[s][0];
        } else {
            cr_assert_eq(engine_forward_argmax(c, &tok, 1, &next, NULL, &e), ENGINE_OK, "%s", e.message);
        }
        out->tokens[s] = tok = next;
    }
    engine_trace_free(trace);
    free(probed);
    out->n_vocab = nv;
    out->logits = malloc((size_t)nv * sizeof(float));
    cr_assert_eq(engine_forward(c, &tok, 1, false, out->logits, NULL, &e), ENGINE_OK, "%s", e.message);
    engine_ctx_free(c);
    engine_model_free(m);
    gguf_close(f);
}

/* The recorder's run of model (fused or not) against the plain CPU backend's: the same tokens, top-5 lists and
 * final logits, bit for bit (R keeps the recorder's counts after). */
static void recorded_matches_eager(const char *model, bool fused)
{
    run_result eager = { 0 }, recorded = { 0 };
    kern_backend *cpu = kern_cpu_create(1);
    generate(model, cpu, &eager);
    cpu->destroy(cpu);
    kern_backend *rec = recording_cpu(fused);
    generate(model, rec, &recorded);
    for (int s = 0; s < STEPS; s++) {
        cr_assert_eq(recorded.tokens[s], eager.tokens[s], "%s: step %d: token %d recorded, %d eager", model, s,
                     recorded.tokens[s], eager.tokens[s]);
        if (s % 8 == 7)
            cr_assert(!memcmp(recorded.top5[s], eager.top5[s], sizeof eager.top5[s]), "%s: step %d's top 5", model,
                      s);
    }
    cr_assert(!memcmp(recorded.logits, eager.logits, (size_t)eager.n_vocab * sizeof(float)),
              "%s: the logits after the %s steps differ from the eager ones", model, fused ? "fused" : "recorded");
    free(eager.logits);
    free(recorded.logits);
    rec->destroy(rec);
}

/* As recorded_matches_eager, and the steps were replays: of the STEPS - 1 + REWIND steps that end in a top-k (the
 * traced one does not), the first, each top-5 step and each argmax step after one record anew (their keys differ:
 * 1 + 8 + 7), and so does the last token's, whose logits come to the host. */
static void replay_matches_eager(const char *model, bool fused)
{
    recorded_matches_eager(model, fused);
    const int recorded = 1 + STEPS / 8 + (STEPS / 8 - 1), topk_steps = STEPS - 1 + REWIND;
    cr_assert_eq(R.replays, topk_steps - recorded, "%s: %d of %d steps replayed", model, R.replays, topk_steps);
    cr_assert_eq(R.records, recorded + 1, "%s: %d steps recorded", model, R.records);
}

Test(step_replay, replayed_greedy_steps_equal_eager_ones_bit_for_bit)
{
    for (int fused = 0; fused < 2; fused++) {
        replay_matches_eager("stories260K.gguf", fused);
        replay_matches_eager("tiny-qwen3-f32.gguf", fused); /* q and k normed per head before rotation and store */
        replay_matches_eager("tiny-qwen2-q4_k_m.gguf", fused); /* biases on q, k, v */
    }
    cr_assert_gt(R.fused_ops, 0, "the engine never handed rope_store a step");
}

/* The fused ops the engine hands a backend in every pass without probes (add_rmsnorm: each residual add with the
 * norm after it), on the architectures whose blocks differ around those adds: post-norms and a sliding window
 * (gemma3, our writer's), experts with no recorded steps (routing reads the host) and gpt-oss's sinks, biases and
 * windows. Bit for bit the unfused run. */
Test(step_replay, fused_passes_equal_unfused_ones_on_other_architectures)
{
    fixture_opts o = fixture_default_opts();
    o.arch = "gemma3";
    o.n_layer = 3;
    char path[256];
    snprintf(path, sizeof path, "/tmp/ggufscope-step-replay-gemma3-%d.gguf", (int)getpid());
    gguf_error ge;
    cr_assert_eq(fixture_write_file(path, &o, &ge), GGUF_OK, "%s", ge.message);
    recorded_matches_eager(path, true);
    unlink(path);
    const char *moe[] = { "moe/tiny-qwen3moe-q4_k_m.gguf", "moe/tiny-gptoss-mxfp4.gguf",
                          "moe/tiny-qwen2moe-q4_k_m.gguf" };
    for (size_t i = 0; i < sizeof moe / sizeof moe[0]; i++) {
        recorded_matches_eager(moe[i], true);
        cr_assert_eq(R.records + R.replays, 0, "%s: a mixture's steps were recorded (its routing reads the host)",
                     moe[i]);
    }
    cr_assert_gt(R.fused_ops, 0, "the engine never handed add_rmsnorm a pass");
}
