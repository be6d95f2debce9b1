/*
 * Sampler and smoke verdict, on inputs built here so each rule is seen firing
 * and staying quiet: a trace fed through the engine's own probe interface.
 */
#include "engine.h"
#include "kern.h"
#include "testutil.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

Test(sampler, greedy_is_argmax_with_lowest_id_on_ties)
{
    float l[5] = { 1, 3, 3, -2, 0 };
    engine_sampler_params p = engine_sampler_default();
    engine_sampler *s = engine_sampler_create(&p, 5);
    cr_assert_eq(engine_sample(s, l), 1);
    engine_sampler_free(s);
}

static void frequencies(engine_sampler_params p, const float *l, int n, int draws, double *freq)
{
    engine_sampler *s = engine_sampler_create(&p, n);
    memset(freq, 0, (size_t)n * sizeof *freq);
    for (int i = 0; i < draws; i++)
        freq[engine_sample(s, l)] += 1.0 / draws;
    engine_sampler_free(s);
}

Test(sampler, temperature_one_draws_the_softmax)
{
    float l[3] = { logf(0.5f), logf(0.3f), logf(0.2f) };
    double f[3];
    frequencies((engine_sampler_params){ .temp = 1.0f, .top_p = 1.0f, .seed = 1 }, l, 3, 40000, f);
    cr_assert_float_eq(f[0], 0.5, 0.015);
    cr_assert_float_eq(f[1], 0.3, 0.015);
    cr_assert_float_eq(f[2], 0.2, 0.015);
}

Test(sampler, filters_cut_the_tail)
{
    float l[3] = { logf(0.5f), logf(0.3f), logf(0.2f) };
    double f[3];
    frequencies((engine_sampler_params){ .temp = 1.0f, .top_k = 1, .top_p = 1.0f, .seed = 2 }, l, 3, 2000, f);
    cr_assert_float_eq(f[0], 1.0, 1e-12, "top-k 1 is greedy");
    frequencies((engine_sampler_params){ .temp = 1.0f, .top_p = 0.6f, .seed = 3 }, l, 3, 20000, f);
    cr_assert_float_eq(f[2], 0.0, 1e-12, "top-p 0.6 keeps 0.5 + 0.3");
    cr_assert_float_eq(f[0], 0.5 / 0.8, 0.02);
    frequencies((engine_sampler_params){ .temp = 1.0f, .top_p = 1.0f, .min_p = 0.5f, .seed = 4 }, l, 3, 20000, f);
    cr_assert_float_eq(f[2], 0.0, 1e-12, "min-p 0.5 drops 0.2 (< 0.5 x 0.5)");
    cr_assert_gt(f[1], 0.3);
    frequencies((engine_sampler_params){ .temp = 0.05f, .top_p = 1.0f, .seed = 5 }, l, 3, 2000, f);
    cr_assert_gt(f[0], 0.99, "low temperature sharpens");
}

Test(sampler, same_seed_same_draws)
{
    float l[64];
    for (int i = 0; i < 64; i++)
        l[i] = sinf((float)i);
    engine_sampler_params p = { .temp = 1.5f, .top_p = 1.0f, .seed = 99 };
    engine_sampler *a = engine_sampler_create(&p, 64), *b = engine_sampler_create(&p, 64);
    for (int i = 0; i < 100; i++)
        cr_assert_eq(engine_sample(a, l), engine_sample(b, l));
    engine_sampler_free(a);
    engine_sampler_free(b);
}

/* ---- smoke verdict ---- */

typedef struct scene {
    gguf_file *f;
    tok_vocab *v;
    engine_trace *t;
    int n_layer, n_prompt;
} scene;

/* A trace of n_pos positions over 4 layers whose RMS grows gently, built through the probe. */
static scene make_scene(int n_prompt, int n_pos, float (*rms)(int layer, int pos))
{
    tok_error te;
    scene s = { .n_layer = 4, .n_prompt = n_prompt };
    char *path = model_path("stories260K.gguf");
    if (!path)
        cr_skip_test("stories260K not found (its vocabulary names the tokens): skipped");
    gguf_error ge;
    cr_assert_eq(gguf_open(path, &s.f, &ge), GGUF_OK);
    cr_assert_eq(tok_vocab_load(s.f, &s.v, &te), TOK_OK);
    free(path);
    s.t = engine_trace_create(s.n_layer, 512);
    engine_probe p = engine_trace_probe(s.t);
    for (int pos = 0; pos < n_pos; pos++)
        for (int il = 0; il <= s.n_layer; il++) {
            float r = rms(il, pos);
            kern_row_stats st = { .rms = r, .mean = 0, .min = -r, .max = r, .max_abs = r };
            p.on_op(p.user, il == s.n_layer ? ENGINE_OP_RESULT_NORM : ENGINE_OP_LAYER_OUT, il, pos, 1, &st);
        }
    return s;
}

static void free_scene(scene *s)
{
    engine_trace_free(s->t);
    tok_vocab_free(s->v);
    gguf_close(s->f);
}

static float healthy(int layer, int pos) { return 1.0f + 0.5f * layer + 0.01f * (pos % 7); }
static float exploding(int layer, int pos) { return layer >= 2 ? 1000.0f * healthy(layer, pos) : healthy(layer, pos); }
static float generated_blowup(int layer, int pos) { return pos >= 10 && layer == 3 ? 500.0f : healthy(layer, pos); }

/* How the steps' logits move: a different landscape each step (a model reading its input), the same one
 * nudged by about 1e-3 of the top logit a step (frozen, but not bit-identical), or the same one every step. */
typedef enum { MOVING, NEARLY_FROZEN, FROZEN } motion;

/* Steps choosing tok[i] with a margin of about 9 logits, their logits moving as m says. */
static void add_steps(scene *s, const int32_t *tok, int n, motion m)
{
    float l[512];
    for (int i = 0; i < n; i++) {
        for (int k = 0; k < 512; k++)
            l[k] = m == MOVING ? sinf((float)(k * (i + 1)))
                 : sinf((float)k) + (m == NEARLY_FROZEN ? 5e-3f * sinf((float)(k * (i + 1))) : 0.0f);
        l[tok[i]] = 10.0f;
        cr_assert(engine_trace_step(s->t, s->n_prompt - 1 + i, tok[i], l));
    }
}

static const engine_finding *finding(const engine_verdict *v, engine_symptom sym)
{
    for (int i = 0; i < v->n_findings; i++)
        if (v->findings[i].symptom == sym)
            return &v->findings[i];
    return NULL;
}

Test(smoke, healthy_run_passes)
{
    scene s = make_scene(10, 30, healthy);
    int32_t tok[20];
    for (int i = 0; i < 20; i++)
        tok[i] = 100 + (i * 37) % 300;
    add_steps(&s, tok, 20, MOVING);
    engine_verdict v;
    engine_smoke_judge(s.t, s.v, NULL, NULL, s.n_prompt, tok, 20, &v);
    cr_assert(v.ok, "%s: %s", v.summary, v.n_findings ? v.findings[0].message : "");
    free_scene(&s);
}

/* One token over and over, chosen surely while the logits stay frozen: the model does not see what it generates
 * (the stuck-embedding bug). */
Test(smoke, a_sure_frozen_loop_of_one_token_is_named)
{
    scene s = make_scene(10, 30, healthy);
    int32_t tok[20];
    for (int i = 0; i < 20; i++)
        tok[i] = i < 4 ? 100 + i : 300;
    add_steps(&s, tok, 20, NEARLY_FROZEN);
    engine_verdict v;
    engine_smoke_judge(s.t, s.v, NULL, NULL, s.n_prompt, tok, 20, &v);
    const engine_finding *f = finding(&v, ENGINE_SYM_REPETITION);
    cr_assert(!v.ok && f, "%s", v.summary);
    cr_assert(strstr(f->message, "token 300") && strstr(f->message, "16 times") && strstr(f->message, "frozen"), "%s",
              f->message);
    cr_assert_null(finding(&v, ENGINE_SYM_FLAT_LOGITS), "moving by 1e-3 is not flat: the loop rule names it");
    free_scene(&s);
}

Test(smoke, padding_token_is_named)
{
    scene s = make_scene(10, 20, healthy);
    int32_t tok[4] = { 100, 101, 5000, 102 };  /* past the 512-token vocabulary */
    add_steps(&s, (int32_t[]){ 100, 101, 102, 102 }, 4, MOVING);
    engine_verdict v;
    engine_smoke_judge(s.t, s.v, NULL, NULL, s.n_prompt, tok, 4, &v);
    const engine_finding *f = finding(&v, ENGINE_SYM_PADDING);
    cr_assert(f);
    cr_assert(strstr(f->message, "id 5000"), "%s", f->message);
    free_scene(&s);
}

Test(smoke, layer_that_rescales_the_residual_is_named)
{
    scene s = make_scene(10, 14, exploding);
    int32_t tok[4] = { 100, 101, 102, 103 };
    add_steps(&s, tok, 4, MOVING);
    engine_verdict v;
    engine_smoke_judge(s.t, s.v, NULL, NULL, s.n_prompt, tok, 4, &v);
    const engine_finding *f = finding(&v, ENGINE_SYM_RMS);
    cr_assert(f);
    cr_assert(strstr(f->message, "layer 2 multiplies"), "%s", f->message);
    free_scene(&s);
}

Test(smoke, generated_position_outside_the_prompt_range_is_named)
{
    scene s = make_scene(10, 14, generated_blowup);
    int32_t tok[4] = { 100, 101, 102, 103 };
    add_steps(&s, tok, 4, MOVING);
    engine_verdict v;
    engine_smoke_judge(s.t, s.v, NULL, NULL, s.n_prompt, tok, 4, &v);
    const engine_finding *f = finding(&v, ENGINE_SYM_RMS);
    cr_assert(f);
    cr_assert(strstr(f->message, "layer 3") && strstr(f->message, "position 10"), "%s", f->message);
    free_scene(&s);
}

Test(smoke, frozen_logits_are_named)
{
    scene s = make_scene(10, 20, healthy);
    int32_t tok[6] = { 100, 100, 100, 100, 100, 100 };
    add_steps(&s, tok, 6, FROZEN);
    engine_verdict v;
    engine_smoke_judge(s.t, s.v, NULL, NULL, s.n_prompt, tok, 6, &v);
    cr_assert(finding(&v, ENGINE_SYM_FLAT_LOGITS), "%s", v.summary);
    free_scene(&s);
}

Test(smoke, nan_in_hidden_state_is_named_with_layer_and_position)
{
    scene s = make_scene(10, 12, healthy);
    engine_probe p = engine_trace_probe(s.t);
    kern_row_stats bad = { .rms = NAN, .n_nan = 7 };
    p.on_op(p.user, ENGINE_OP_LAYER_OUT, 2, 11, 1, &bad);
    int32_t tok[2] = { 100, 101 };
    add_steps(&s, tok, 2, MOVING);
    engine_verdict v;
    engine_smoke_judge(s.t, s.v, NULL, NULL, s.n_prompt, tok, 2, &v);
    const engine_finding *f = finding(&v, ENGINE_SYM_NONFINITE);
    cr_assert(f);
    cr_assert(strstr(f->message, "7 NaN") && strstr(f->message, "layer 2") && strstr(f->message, "position 11"),
              "%s", f->message);
    free_scene(&s);
}

/* ---- what a healthy model does: notes, not failures ---- */

static const engine_finding *noted(const engine_verdict *v, engine_symptom sym)
{
    for (int i = 0; i < v->n_notes; i++)
        if (v->notes[i].symptom == sym)
            return &v->notes[i];
    return NULL;
}

/* A confident cycle of a sentence's length (gemma-3-270m's greedy decoding does this, as llama.cpp's) is a note. */
Test(smoke, confident_sentence_loop_is_a_note)
{
    scene s = make_scene(10, 50, healthy);
    int32_t tok[40];
    for (int i = 0; i < 40; i++)
        tok[i] = i < 3 ? 60 + i : 100 + (i - 3) % 6; /* 3 tokens, then a 6-token sentence over and over */
    add_steps(&s, tok, 40, MOVING);                     /* margins of about 9 logits */
    engine_verdict v;
    engine_smoke_judge(s.t, s.v, NULL, NULL, s.n_prompt, tok, 40, &v);
    cr_assert(v.ok, "%s: %s", v.summary, v.n_findings ? v.findings[0].message : "");
    const engine_finding *f = noted(&v, ENGINE_SYM_REPETITION);
    cr_assert(f && strstr(f->message, "greedy loop") && strstr(f->message, "cycle of 6 tokens"), "%s",
              f ? f->message : v.summary);
    cr_assert(strstr(v.summary, "1 note"), "%s", v.summary);
    free_scene(&s);
}

/* One token from the first step on, chosen surely while the logits move: SmolLM2 after "Chapter 1" prints '0'
 * forever so. Greedy decoding's trap, a note. */
Test(smoke, a_trained_models_one_token_loop_is_a_note)
{
    scene s = make_scene(2, 30, healthy);
    int32_t tok[24];
    for (int i = 0; i < 24; i++)
        tok[i] = 300;
    add_steps(&s, tok, 24, MOVING);
    engine_verdict v;
    engine_smoke_judge(s.t, s.v, NULL, NULL, s.n_prompt, tok, 24, &v);
    cr_assert(v.ok, "%s: %s", v.summary, v.n_findings ? v.findings[0].message : "");
    const engine_finding *f = noted(&v, ENGINE_SYM_REPETITION);
    cr_assert(f && strstr(f->message, "token 300") && strstr(f->message, "24 times"), "%s",
              f ? f->message : v.summary);
    free_scene(&s);
}

/* A loop chosen by near-ties (margins ~0) is what a random-weight model does: a note that says so. */
Test(smoke, a_loop_of_near_ties_is_a_note)
{
    scene s = make_scene(10, 50, healthy);
    int32_t tok[40];
    float l[512];
    for (int i = 0; i < 40; i++) {
        tok[i] = i < 3 ? 60 + i : 100 + (i - 3) % 6;
        for (int k = 0; k < 512; k++)
            l[k] = 0.001f * sinf((float)(k * (i + 1)));
        l[tok[i]] = 0.002f; /* wins by a hair */
        cr_assert(engine_trace_step(s.t, s.n_prompt - 1 + i, tok[i], l));
    }
    engine_verdict v;
    engine_smoke_judge(s.t, s.v, NULL, NULL, s.n_prompt, tok, 40, &v);
    cr_assert(v.ok, "%s", v.summary);
    const engine_finding *f = noted(&v, ENGINE_SYM_REPETITION);
    cr_assert(f && strstr(f->message, "near-ties") && strstr(f->message, "median 0.00 logits"), "%s",
              f ? f->message : v.summary);
    free_scene(&s);
}

/* Trained models put a massive activation on the first position (SmolLM2's layer 11 multiplies its RMS ~150x):
 * with a one-token prompt that position is not a broken layer. */
static float sink(int layer, int pos) { return pos == 0 && layer >= 2 ? 150.0f * healthy(layer, pos) : healthy(layer, pos); }

Test(smoke, the_first_positions_massive_activation_is_not_a_broken_layer)
{
    for (int n_prompt = 1; n_prompt <= 3; n_prompt++) {
        scene s = make_scene(n_prompt, n_prompt + 12, sink);
        int32_t tok[12];
        for (int i = 0; i < 12; i++)
            tok[i] = 100 + i;
        add_steps(&s, tok, 12, MOVING);
        engine_verdict v;
        engine_smoke_judge(s.t, s.v, NULL, NULL, s.n_prompt, tok, 12, &v);
        cr_assert(v.ok, "prompt of %d: %s: %s", n_prompt, v.summary, v.n_findings ? v.findings[0].message : "");
        free_scene(&s);
    }
}

/* With fewer than 3 positions after the sink a layer's factor is not judged, and the verdict says so. */
Test(smoke, too_few_positions_to_judge_the_layers_is_a_note)
{
    scene s = make_scene(2, 2, exploding);
    engine_verdict v;
    engine_smoke_judge(s.t, s.v, NULL, NULL, s.n_prompt, NULL, 0, &v);
    cr_assert(v.ok, "%s", v.summary);
    const engine_finding *f = noted(&v, ENGINE_SYM_RMS);
    cr_assert(f && strstr(f->message, "not judged") && strstr(f->message, "1 position after the first"), "%s",
              f ? f->message : v.summary);
    cr_assert(strstr(v.summary, "too few positions"), "%s", v.summary);
    cr_assert_str_eq(engine_note_name(ENGINE_SYM_RMS), "layers_not_judged");
    free_scene(&s);
}

/* The lm_head spot check's mismatches are the verdict's finding too. */
Test(smoke, lm_head_rows_the_file_does_not_give_are_named)
{
    scene s = make_scene(10, 14, healthy);
    int32_t tok[4] = { 100, 101, 102, 103 };
    add_steps(&s, tok, 4, MOVING);
    engine_spot spot = { .checks = 5, .rows = 320, .mismatches = 25, .n_bad = 1, .bad_rows = { 511 }, .first_pos = 10,
                         .first_row = 511, .first_backend = 18.8f, .first_reference = -8.1f };
    engine_verdict v;
    engine_smoke_judge(s.t, s.v, NULL, &spot, s.n_prompt, tok, 4, &v);
    const engine_finding *f = finding(&v, ENGINE_SYM_LM_HEAD);
    cr_assert(!v.ok && f && strstr(f->message, "25 of 320") && strstr(f->message, "row 511"), "%s", v.summary);
    spot.mismatches = 0;
    engine_smoke_judge(s.t, s.v, NULL, &spot, s.n_prompt, tok, 4, &v);
    cr_assert(v.ok, "%s", v.summary);
    free_scene(&s);
}

/* A padding id: a note when the model's own output row for it is a real row (random-weight models), a failure
 * when the row is empty (a trained model's padding), since only a broken engine ranks an empty row first. */
Test(smoke, padding_id_is_judged_by_its_output_row)
{
    tok_error te;
    char *path = model_path("tiny-qwen2-f16.gguf");
    if (!path)
        cr_skip_test("tiny-qwen2-f16 not found: skipped");
    char dir[128], zeroed[256];
    cr_assert(tmp_dir_make(dir, "padding"));
    snprintf(zeroed, sizeof zeroed, "%s/zeroed.gguf", dir);
    tbuf b = read_whole_file(path);
    gguf_file *f;
    gguf_error ge;
    cr_assert_eq(gguf_open_memory(b.p, b.len, &f, &ge), GGUF_OK);
    const gguf_tensor *out = gguf_tensor_by_name(f, "output.weight");
    if (!out) /* tied: the embedding rows are the output rows */
        out = gguf_tensor_by_name(f, "token_embd.weight");
    cr_assert(out && out->type == GGUF_TENSOR_F16, "the output rows are F16 here");
    const size_t row_bytes = (size_t)out->ne[0] * 2, at = (size_t)(out->data - b.p);
    memset(b.p + at + 1000 * row_bytes, 0, row_bytes); /* id 1000 is [PAD1000] */
    gguf_close(f);
    cr_assert(write_whole_file(zeroed, b.p, b.len));
    tbuf_free(&b);
    const char *files[2] = { path, zeroed };
    for (int z = 0; z < 2; z++) {
        gguf_file *g;
        engine_error e;
        tok_vocab *v;
        engine_model *m;
        kern_backend *cpu = kern_cpu_create(1);
        cr_assert_eq(gguf_open(files[z], &g, &ge), GGUF_OK);
        cr_assert_eq(tok_vocab_load(g, &v, &te), TOK_OK);
        cr_assert_eq(engine_model_load(g, cpu, &m, &e), ENGINE_OK, "%s", e.message);
        cr_assert_lt(tok_vocab_n_real(v), 1000, "id 1000 is padding");
        double w = engine_model_output_row_weight(m, 1000, tok_vocab_n_real(v));
        cr_assert(z ? w == 0.0 : w > 0.5 && w < 2.0, "row weight %g", w);
        engine_trace *t = engine_trace_create(2, tok_vocab_size(v));
        int32_t tok[4] = { 100, 101, 1000, 102 };
        float *l = calloc((size_t)tok_vocab_size(v), sizeof *l);
        for (int i = 0; i < 4; i++) {
            l[tok[i]] = 10.0f;
            cr_assert(engine_trace_step(t, 3 + i, tok[i], l));
            l[tok[i]] = 0.0f;
        }
        engine_verdict verdict;
        engine_smoke_judge(t, v, m, NULL, 4, tok, 4, &verdict);
        if (z == 0) {
            cr_assert(verdict.ok && noted(&verdict, ENGINE_SYM_PADDING), "%s", verdict.summary);
        } else {
            const engine_finding *x = finding(&verdict, ENGINE_SYM_PADDING);
            cr_assert(!verdict.ok && x && strstr(x->message, "is empty"), "%s", x ? x->message : verdict.summary);
        }
        free(l);
        engine_trace_free(t);
        engine_model_free(m);
        cpu->destroy(cpu);
        tok_vocab_free(v);
        gguf_close(g);
    }
    tmp_dir_remove(dir);
    free(path);
}
