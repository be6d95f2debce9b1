/*
 * The forward pass on every architecture model/arch.c describes, with models
 * our writer makes in each one's shape (no shared file needed, so this runs
 * under the sanitizers too): the flags the entry implies are the ones the
 * engine uses, two identical backends agree at every op the model has (the
 * post-norms only where they exist), the sliding window really hides what
 * lies outside it in the prompt and in decode steps, and soft-capping bounds
 * the logits.
 */
#include "engine.h"
#include "fixture_model.h"
#include "testutil.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct loaded {
    uint8_t *buf;
    gguf_file *f;
    kern_backend *be;
    engine_model *m;
} loaded;

static loaded load_arch(const char *arch, uint32_t n_layer)
{
    loaded l = { 0 };
    fixture_opts o = fixture_default_opts();
    o.arch = arch;
    o.n_layer = n_layer;
    size_t len;
    gguf_error ge;
    cr_assert_eq(fixture_write_buffer(&o, &l.buf, &len, &ge), GGUF_OK, "%s: %s", arch, ge.message);
    cr_assert_eq(gguf_open_memory(l.buf, len, &l.f, &ge), GGUF_OK, "%s: %s", arch, ge.message);
    l.be = kern_cpu_create(2);
    engine_error e;
    cr_assert_eq(engine_model_load(l.f, l.be, &l.m, &e), ENGINE_OK, "%s: %s", arch, e.message);
    return l;
}

static void unload(loaded *l)
{
    engine_model_free(l->m);
    l->be->destroy(l->be);
    gguf_close(l->f);
    free(l->buf);
}

Test(forward_flags, each_description_sets_the_engine_s_flags)
{
    const struct {
        const char *arch;
        bool bias, qk_norm, post, gelu, neox, swa, softcap, embd_scale;
    } want[] = {
        { "llama", false, false, false, false, false, false, false, false },
        { "qwen2", true, false, false, false, true, false, false, false },
        { "qwen3", false, true, false, false, true, false, false, false },
        { "gemma3", false, true, true, true, true, true, true, true },
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        loaded l = load_arch(want[i].arch, 2);
        const engine_hparams *hp = engine_model_hparams(l.m);
        cr_assert_str_eq(hp->arch, want[i].arch);
        cr_assert_eq(hp->qkv_bias, want[i].bias, "%s", want[i].arch);
        cr_assert_eq(hp->qk_norm, want[i].qk_norm, "%s", want[i].arch);
        cr_assert_eq(hp->post_norms, want[i].post, "%s", want[i].arch);
        cr_assert_eq(hp->act == KERN_ACT_GELU_TANH, want[i].gelu, "%s", want[i].arch);
        cr_assert_eq(hp->rope.neox, want[i].neox, "%s", want[i].arch);
        cr_assert_eq(hp->swa_window == 4, want[i].swa, "%s", want[i].arch);
        cr_assert_eq(hp->final_softcap == 30.0f, want[i].softcap, "%s", want[i].arch);
        cr_assert_eq(hp->embd_scale == sqrtf(64.0f), want[i].embd_scale, "%s", want[i].arch);
        if (want[i].swa) {
            cr_assert_float_eq(hp->rope_swa.base, 1000.0f, 0, "sliding layers' own rope base");
            cr_assert_float_eq(hp->rope.base, 10000.0f, 0);
        }
        unload(&l);
    }
}

/* Two CPU backends on the same model agree exactly at every op it runs, and at no other. */
Test(forward_flags, identical_backends_agree_at_every_op_each_architecture_has)
{
    const char *archs[] = { "llama", "qwen2", "qwen3", "gemma3" };
    const int32_t prompt[] = { 1, 280, 17, 260, 44, 281, 5, 270, 9 };
    for (size_t i = 0; i < 4; i++) {
        loaded l = load_arch(archs[i], 2);
        kern_backend *b2 = kern_cpu_create(2);
        engine_model *m2;
        engine_ctx *ca, *cb;
        engine_error e;
        cr_assert_eq(engine_model_load(l.f, b2, &m2, &e), ENGINE_OK);
        cr_assert_eq(engine_ctx_create(l.m, 32, 4, &ca, &e), ENGINE_OK);
        cr_assert_eq(engine_ctx_create(m2, 32, 4, &cb, &e), ENGINE_OK);
        engine_comparison r;
        cr_assert_eq(engine_compare(ca, cb, prompt, 9, 5, 4, 1e-6f, &r, &e), ENGINE_OK, "%s", e.message);
        cr_assert_eq(r.first_bad, -1, "%s: identical backends diverge", archs[i]);
        const bool post = engine_model_hparams(l.m)->post_norms;
        for (int k = 0; k < r.n_points; k++) {
            const engine_op op = r.points[k].op;
            const bool runs = ((op != ENGINE_OP_ATTN_POST_NORM && op != ENGINE_OP_FFN_POST_NORM) || post) &&
                              (op != ENGINE_OP_EMBD || r.points[k].layer == 0); /* the embeddings enter layer 0 */
            cr_assert_eq(r.points[k].worst_pos >= 0, runs, "%s: point %d (%s)", archs[i], k, engine_op_name(op));
            if (runs)
                cr_assert_eq(r.points[k].rel_worst, 0.0f, "%s: %s", archs[i], engine_op_name(op));
        }
        engine_comparison_free(&r);
        engine_ctx_free(ca);
        engine_ctx_free(cb);
        engine_model_free(m2);
        b2->destroy(b2);
        unload(&l);
    }
}

/* The CPU backend's matmul, and the rows each layer's ffn_down was asked for through counting_matmul. */
typedef kern_status (*matmul_fn)(kern_backend *, const kern_weight *, const kern_weight *, const float *, int, float *);
static matmul_fn real_matmul;
static int down_rows[2];

static kern_status counting_matmul(kern_backend *b, const kern_weight *w, const kern_weight *bias, const float *x,
                                   int T, float *y)
{
    int il;
    if (strstr(w->t->name, ".ffn_down.") && sscanf(w->t->name, "blk.%d.", &il) == 1 && il >= 0 && il < 2)
        down_rows[il] += T;
    return real_matmul(b, w, bias, x, T, y);
}

/* Asked for the last position's logits only, a prompt takes only that row through the last layer's FFN (what
 * llama.cpp's graphs do), and the logits are those of the pass that keeps every row, to rounding (the one row
 * goes through the one-token kernels, the nine through the GEMM). */
Test(forward_flags, only_the_rows_whose_logits_are_asked_for_go_through_the_last_ffn)
{
    const char *archs[] = { "llama", "qwen2", "qwen3", "gemma3" };
    const int32_t prompt[] = { 1, 280, 17, 260, 44, 281, 5, 270, 9 };
    for (size_t i = 0; i < 4; i++) {
        loaded l = load_arch(archs[i], 2);
        real_matmul = l.be->matmul;
        l.be->matmul = counting_matmul;
        const int nv = engine_model_hparams(l.m)->n_vocab;
        float *last = malloc((size_t)nv * sizeof(float)), *all = malloc((size_t)9 * nv * sizeof(float));
        cr_assert(last && all);
        engine_ctx *c;
        engine_error e;
        memset(down_rows, 0, sizeof down_rows);
        cr_assert_eq(engine_ctx_create(l.m, 16, 16, &c, &e), ENGINE_OK);
        cr_assert_eq(engine_forward(c, prompt, 9, false, last, NULL, &e), ENGINE_OK, "%s", e.message);
        engine_ctx_free(c);
        cr_assert(down_rows[0] == 9 && down_rows[1] == 1, "%s: ffn_down rows %d, %d", archs[i], down_rows[0],
                  down_rows[1]);
        memset(down_rows, 0, sizeof down_rows);
        cr_assert_eq(engine_ctx_create(l.m, 16, 16, &c, &e), ENGINE_OK);
        cr_assert_eq(engine_forward(c, prompt, 9, true, all, NULL, &e), ENGINE_OK, "%s", e.message);
        engine_ctx_free(c);
        cr_assert(down_rows[0] == 9 && down_rows[1] == 9, "%s: with every row's logits, ffn_down rows %d, %d",
                  archs[i], down_rows[0], down_rows[1]);
        float scale = 0.0f, worst = 0.0f;
        for (int v = 0; v < nv; v++) {
            scale = fmaxf(scale, fabsf(all[8 * (size_t)nv + v]));
            worst = fmaxf(worst, fabsf(all[8 * (size_t)nv + v] - last[v]));
        }
        cr_assert(scale > 0.0f && worst <= 1e-5f * scale, "%s: last logits %g apart of max %g", archs[i], worst,
                  scale);
        l.be->matmul = real_matmul;
        free(last);
        free(all);
        unload(&l);
    }
}

/* A context rewound to position 4 runs the rest of the prompt again over the first 4 positions' cache: the same
 * floats as a context that ran those 4 and then the rest (different tokens left behind after position 4 in the
 * rewound one's cache are overwritten, not read). Positions outside 0..filled are refused. */
Test(forward_flags, a_rewound_context_reruns_from_where_it_was_rewound_to)
{
    const int32_t prompt[] = { 1, 280, 17, 260, 44, 281, 5, 270, 9 }, other[] = { 3, 3, 3, 3, 3, 3, 3, 3, 3 };
    loaded l = load_arch("qwen3", 2);
    const int nv = engine_model_hparams(l.m)->n_vocab;
    float *a = malloc((size_t)nv * sizeof(float)), *b = malloc((size_t)nv * sizeof(float));
    engine_ctx *ca, *cb;
    engine_error e;
    cr_assert_eq(engine_ctx_create(l.m, 16, 16, &ca, &e), ENGINE_OK);
    cr_assert_eq(engine_ctx_create(l.m, 16, 16, &cb, &e), ENGINE_OK);
    cr_assert_eq(engine_forward(ca, prompt, 4, false, NULL, NULL, &e), ENGINE_OK, "%s", e.message);
    cr_assert_eq(engine_forward(ca, prompt + 4, 5, false, a, NULL, &e), ENGINE_OK, "%s", e.message);
    cr_assert_eq(engine_forward(cb, prompt, 4, false, NULL, NULL, &e), ENGINE_OK, "%s", e.message);
    cr_assert_eq(engine_forward(cb, other, 9, false, NULL, NULL, &e), ENGINE_OK, "%s", e.message);
    cr_assert_eq(engine_ctx_rewind(cb, 14, &e), ENGINE_E_INPUT, "past the 13 positions filled");
    cr_assert_eq(engine_ctx_rewind(cb, -1, &e), ENGINE_E_INPUT);
    cr_assert_eq(engine_ctx_pos(cb), 13, "a refused rewind changes nothing");
    cr_assert_eq(engine_ctx_rewind(cb, 4, &e), ENGINE_OK, "%s", e.message);
    cr_assert_eq(engine_ctx_pos(cb), 4);
    cr_assert_eq(engine_forward(cb, prompt + 4, 5, false, b, NULL, &e), ENGINE_OK, "%s", e.message);
    cr_assert_eq(engine_ctx_pos(cb), 9);
    cr_assert_eq(memcmp(a, b, (size_t)nv * sizeof(float)), 0, "the rewound context's logits differ");
    engine_ctx_free(ca);
    engine_ctx_free(cb);
    free(a);
    free(b);
    unload(&l);
}

/* The logits at position 12 after 13 tokens, token k replaced by `swap`, run as a prompt of `chunk` tokens
 * at a time (1: every position a decode step). */
static void logits_at_12(loaded *l, int k, int32_t swap, int chunk, float *out)
{
    int32_t toks[13] = { 1, 280, 17, 260, 44, 281, 5, 270, 9, 263, 30, 271, 12 };
    if (k >= 0)
        toks[k] = swap;
    engine_ctx *c;
    engine_error e;
    cr_assert_eq(engine_ctx_create(l->m, 16, chunk, &c, &e), ENGINE_OK);
    cr_assert_eq(engine_forward(c, toks, 13, false, out, NULL, &e), ENGINE_OK, "%s", e.message);
    engine_ctx_free(c);
}

/* gemma3's fixture: 2 layers, both sliding (il % 6 < 5), window 4: each layer reaches 3 positions further
 * back, so position 12 sees layer-1 inputs 9..12, which saw tokens 6..12. Token 5 cannot reach it and
 * token 6 does, through the prompt's path and through decode steps'; in a llama model every token does. */
Test(forward_flags, the_sliding_window_hides_what_lies_outside_it)
{
    loaded g = load_arch("gemma3", 2), ll = load_arch("llama", 2);
    const int nv = engine_model_hparams(g.m)->n_vocab;
    float *base = malloc(nv * sizeof *base), *b = malloc(nv * sizeof *b);
    for (int chunk = 1; chunk <= 13; chunk += 12) {
        logits_at_12(&g, -1, 0, chunk, base);
        for (int k = 0; k <= 6; k++) {
            logits_at_12(&g, k, 77, chunk, b);
            const bool same = memcmp(base, b, nv * sizeof *b) == 0;
            cr_assert_eq(same, k < 6, "gemma3 (chunk %d): token %d %s position 12", chunk, k,
                         same ? "does not reach" : "reaches");
        }
        logits_at_12(&ll, -1, 0, chunk, base);
        logits_at_12(&ll, 0, 77, chunk, b);
        cr_assert_neq(memcmp(base, b, nv * sizeof *b), 0, "llama (chunk %d): token 0 should reach position 12", chunk);
    }
    float *a = base;
    /* soft-capped at 30: every logit inside (-30, 30) */
    logits_at_12(&g, -1, 0, 13, a);
    for (int i = 0; i < nv; i++)
        cr_assert(fabsf(a[i]) < 30.0f, "logit %d = %g", i, a[i]);
    free(base);
    free(b);
    unload(&g);
    unload(&ll);
}

/* Llama 3.1's rope_freqs.weight: the llama entry allows it, the engine divides each frequency by its
 * factor (the logits move), and one of the wrong length is refused naming it; an architecture whose entry
 * has no rope_freqs refuses the tensor as llama.cpp would. */
Test(forward_flags, rope_freqs_is_used_where_allowed_and_refused_elsewhere)
{
    const int32_t toks[6] = { 1, 280, 17, 260, 44, 281 };
    float *plain = NULL, *scaled = NULL;
    int nv = 0;
    for (int with = 0; with < 2; with++) {
        fixture_opts o = fixture_default_opts();
        o.rope_freqs = with ? 8 : 0; /* head dim 16: 8 frequencies */
        uint8_t *buf;
        size_t len;
        gguf_error ge;
        cr_assert_eq(fixture_write_buffer(&o, &buf, &len, &ge), GGUF_OK, "%s", ge.message);
        gguf_file *f;
        cr_assert_eq(gguf_open_memory(buf, len, &f, &ge), GGUF_OK);
        kern_backend *be = kern_cpu_create(2);
        engine_model *m;
        engine_ctx *c;
        engine_error e;
        cr_assert_eq(engine_model_load(f, be, &m, &e), ENGINE_OK, "%s", e.message);
        cr_assert_eq(engine_model_hparams(m)->freq_factors, with == 1);
        nv = engine_model_hparams(m)->n_vocab;
        float *out = malloc((size_t)nv * sizeof *out);
        cr_assert_eq(engine_ctx_create(m, 8, 8, &c, &e), ENGINE_OK);
        cr_assert_eq(engine_forward(c, toks, 6, false, out, NULL, &e), ENGINE_OK);
        *(with ? &scaled : &plain) = out;
        engine_ctx_free(c);
        engine_model_free(m);
        be->destroy(be);
        gguf_close(f);
        free(buf);
    }
    cr_assert_neq(memcmp(plain, scaled, (size_t)nv * sizeof *plain), 0, "the factors change the rotation");
    free(plain);
    free(scaled);

    const struct { const char *arch; uint32_t n; const char *says; } bad[] = {
        { "llama", 5, "rotary needs 8 factors" }, { "qwen3", 8, "not part of a qwen3 model" } };
    for (int i = 0; i < 2; i++) {
        fixture_opts o = fixture_default_opts();
        o.arch = bad[i].arch;
        o.rope_freqs = bad[i].n;
        uint8_t *buf;
        size_t len;
        gguf_error ge;
        cr_assert_eq(fixture_write_buffer(&o, &buf, &len, &ge), GGUF_OK);
        gguf_file *f;
        cr_assert_eq(gguf_open_memory(buf, len, &f, &ge), GGUF_OK);
        kern_backend *be = kern_cpu_create(1);
        engine_model *m;
        engine_error e;
        cr_assert_eq(engine_model_load(f, be, &m, &e), ENGINE_E_MODEL, "%s", bad[i].arch);
        cr_assert_str_eq(e.subject, "rope_freqs.weight");
        cr_assert(strstr(e.message, bad[i].says), "%s", e.message);
        cr_assert_neq(e.offset, 0);
        be->destroy(be);
        gguf_close(f);
        free(buf);
    }
}

/* A per-tensor scale beside a weight (blk.N.W.scale, one value; llama.cpp's loader takes it in any architecture and a
 * family's graph may multiply W's product by it) is run where the entry says its graph does (llama's feed-forward
 * block: the logits move; test_engine_arch holds a file of them to llama.cpp's goldens), left unread where it says its
 * graph leaves it (qwen2's feed-forward block, DeciLM's) as is an input scale (W.input_scale, which no graph reads);
 * one of the wrong length, or beside a weight the layer lacks, is refused as llama.cpp refuses it. */
Test(forward_flags, a_per_tensor_scale_multiplies_its_product_where_the_graph_reads_it)
{
    const struct {
        const char *arch, *name;
        uint64_t n;
        engine_status want;
        int base;   /* the case whose logits these are compared with (-1: none) */
        bool moves; /* whether they differ */
    } cases[] = {
        { "llama", NULL, 0, ENGINE_OK, -1, false },
        { "llama", "blk.1.ffn_down.scale", 1, ENGINE_OK, 0, true },
        { "llama", "blk.0.attn_q.input_scale", 1, ENGINE_OK, 0, false },
        { "qwen2", NULL, 0, ENGINE_OK, -1, false },
        { "qwen2", "blk.1.ffn_down.scale", 1, ENGINE_OK, 3, false },
        { "qwen2", "blk.0.attn_v.scale", 1, ENGINE_OK, 3, true },
        { "deci", NULL, 0, ENGINE_OK, -1, false },
        { "deci", "blk.1.ffn_down.scale", 1, ENGINE_OK, 6, false },
        { "deci", "blk.1.attn_output.scale", 1, ENGINE_OK, 6, true },
        { "llama", "blk.1.ffn_down.scale", 2, ENGINE_E_MODEL, -1, false },
        { "llama", "blk.0.ffn_down_shexp.scale", 1, ENGINE_E_MODEL, -1, false },
        /* the logits' scale is loaded only beside an NVFP4 output.weight (test_engine_arch runs one) */
        { "llama", "output.scale", 1, ENGINE_E_MODEL, -1, false },
    };
    enum { N_CASES = sizeof cases / sizeof cases[0] };
    static const float values[2] = { 0.5f, 0.25f };
    const int32_t toks[6] = { 1, 280, 17, 260, 44, 281 };
    float *logits[N_CASES] = { 0 };
    int nv = 0;
    for (size_t i = 0; i < N_CASES; i++) {
        fixture_opts o = fixture_default_opts();
        o.arch = cases[i].arch;
        gguf_error ge;
        gguf_writer *w = gguf_writer_create(3);
        cr_assert_eq(fixture_add_model(w, &o, &ge), GGUF_OK, "%s", ge.message);
        if (cases[i].name)
            cr_assert_eq(gguf_writer_add_tensor(w, cases[i].name, GGUF_TENSOR_F32, 1, &cases[i].n, values, &ge),
                         GGUF_OK);
        uint8_t *buf;
        size_t len;
        cr_assert_eq(gguf_writer_write_buffer(w, &buf, &len, &ge), GGUF_OK, "%s", ge.message);
        gguf_writer_free(w);
        gguf_file *f;
        cr_assert_eq(gguf_open_memory(buf, len, &f, &ge), GGUF_OK);
        kern_backend *be = kern_cpu_create(1);
        engine_model *m;
        engine_error e;
        cr_assert_eq(engine_model_load(f, be, &m, &e), cases[i].want, "case %zu %s: %s", i, cases[i].name, e.message);
        if (cases[i].want == ENGINE_OK) {
            nv = engine_model_hparams(m)->n_vocab;
            logits[i] = malloc((size_t)nv * sizeof(float));
            engine_ctx *c;
            cr_assert_eq(engine_ctx_create(m, 8, 8, &c, &e), ENGINE_OK);
            cr_assert_eq(engine_forward(c, toks, 6, false, logits[i], NULL, &e), ENGINE_OK);
            engine_ctx_free(c);
            engine_model_free(m);
            if (cases[i].base >= 0)
                cr_assert_eq(memcmp(logits[cases[i].base], logits[i], (size_t)nv * sizeof(float)) != 0,
                             cases[i].moves, "case %zu: %s %s", i, cases[i].arch, cases[i].name);
        } else {
            cr_assert_str_eq(e.subject, cases[i].name);
            cr_assert_neq(e.offset, 0);
            cr_assert(strstr(e.message, cases[i].want == ENGINE_E_ARCH ? "does not run it yet"
                                                                        : "llama.cpp would refuse this file"),
                      "%s", e.message);
        }
        be->destroy(be);
        gguf_close(f);
        free(buf);
    }
    for (size_t i = 0; i < N_CASES; i++)
        free(logits[i]);
}
