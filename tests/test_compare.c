/*
 * What a backend comparison explains away and what it still names: attention, RMSNorm and the gated activation
 * can move much more than their inputs (softmax; per-channel gains with outlier channels; GELU through a table of
 * f16 inputs), so a row beyond the tolerance whose sides each equal the op re-derived from their own inputs is no
 * divergence, while a fault inside the op is named there; llama.cpp's numerics (cpu:ggml) explained op by op; and the
 * bug zoo, every fault named at its layer and op and on its side.
 */
#include "backend_sides.h"
#include "fixture_model.h"
#include "golden.h"
#include "testutil.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A CPU backend with small differences of the kinds two correct backends show, or faults inside one op, to hold
 * the comparison's explanations to (each field 0: as the CPU backend computes):
 *   rope_factor  q and k multiplied by it after rotary, as the probes see them: scaling them up makes the scores
 *                large, as deep random-weight layers do, and two factors a little apart make q and k differ a
 *                little and the attention more (softmax);
 *   nudge        the first layer's ffn_down output moved at channel 0 by this much of its row's largest value;
 *   noise        every product's every value moved by up to this much of itself (a summation order);
 *   bad_norm     the post-FFN norm 1 % off;  bad_glu  the gated activation 1 % off. */
typedef struct tweaked_cpu {
    kern_backend b;  /* the CPU backend's table with rope, matmul(s), rmsnorm, glu and destroy replaced */
    kern_backend *in;
    float rope_factor, nudge, noise;
    bool bad_norm, bad_glu;
    uint32_t seed;
} tweaked_cpu;

static kern_status tweaked_rope(kern_backend *b, float *x, int T, int n_head, int head_dim, int pos0,
                                const kern_rope *r)
{
    tweaked_cpu *u = (tweaked_cpu *)b;
    kern_status s = u->in->rope(u->in, x, T, n_head, head_dim, pos0, r);
    return s || u->rope_factor == 0.0f ? s : u->in->scale(u->in, x, (size_t)T * n_head * head_dim, u->rope_factor);
}

static bool named(const kern_weight *w, const char *suffix)
{
    const size_t n = strlen(w->t->name), k = strlen(suffix);
    return n >= k && strcmp(w->t->name + n - k, suffix) == 0;
}

static kern_status tweaked_matmul(kern_backend *b, const kern_weight *w, const kern_weight *bias, const float *x, int T,
                                 float *y)
{
    tweaked_cpu *u = (tweaked_cpu *)b;
    kern_status st = u->in->matmul(u->in, w, bias, x, T, y);
    const int64_t n = (int64_t)w->t->ne[1];
    for (int64_t i = 0; !st && u->noise > 0.0f && i < T * n; i++) {
        u->seed = u->seed * 1664525u + 1013904223u;
        y[i] += u->noise * fabsf(y[i]) * ((float)(u->seed >> 8) / 8388608.0f - 1.0f);
    }
    if (st || strcmp(w->t->name, "blk.0.ffn_down.weight") != 0 || u->nudge == 0.0f)
        return st;
    for (int t = 0; t < T; t++) {
        float *row = y + (size_t)t * n, m = 0.0f;
        for (int64_t i = 0; i < n; i++)
            m = fmaxf(m, fabsf(row[i]));
        row[0] += u->nudge * m;
    }
    return KERN_OK;
}

static kern_status tweaked_rmsnorm(kern_backend *b, const kern_weight *w, const float *x, int T, int n, float eps,
                                  float *out)
{
    tweaked_cpu *u = (tweaked_cpu *)b;
    kern_status st = u->in->rmsnorm(u->in, w, x, T, n, eps, out);
    return st || !u->bad_norm || !named(w, "post_ffw_norm.weight") ? st
                                                                     : u->in->scale(u->in, out, (size_t)T * n, 1.01f);
}

static kern_status tweaked_matmul_many(kern_backend *b, int n, const kern_weight *const ws[],
                                      const kern_weight *const biases[], const float *x, int T, float *const ys[])
{
    for (int i = 0; i < n; i++) {
        kern_status st = tweaked_matmul(b, ws[i], biases ? biases[i] : NULL, x, T, ys[i]);
        if (st)
            return st;
    }
    return KERN_OK;
}

static kern_status tweaked_glu(kern_backend *b, kern_act act, const float *gate, const float *up, size_t n, size_t row,
                              float *out)
{
    tweaked_cpu *u = (tweaked_cpu *)b;
    kern_status st = u->in->glu(u->in, act, gate, up, n, row, out);
    return st || !u->bad_glu ? st : u->in->scale(u->in, out, n, 1.01f);
}

static void tweaked_destroy(kern_backend *b)
{
    tweaked_cpu *u = (tweaked_cpu *)b;
    u->in->destroy(u->in);
    free(u);
}

static side tweaked_side(const gguf_file *f, tweaked_cpu how, const char *fault)
{
    tweaked_cpu *u = calloc(1, sizeof *u);
    cr_assert(u);
    *u = how;
    u->in = kern_cpu_create(2);
    u->b = *u->in;
    u->b.rope = tweaked_rope;
    u->b.matmul = tweaked_matmul;
    u->b.matmul_many = tweaked_matmul_many;
    u->b.matmul_many_x = NULL; /* the engine composes it from the tweaked matmul */
    u->b.rmsnorm = tweaked_rmsnorm;
    u->b.glu = tweaked_glu;
    u->b.destroy = tweaked_destroy;
    u->seed = 7;
    return load_side(f, fault ? kern_fault_wrap(&u->b, fault) : &u->b, 32, 4);
}

static engine_comparison scaled_compare(const gguf_file *f, const int32_t *toks, float fa, float fb, const char *fault,
                                        float tol)
{
    side a = tweaked_side(f, (tweaked_cpu){ .rope_factor = fa }, NULL);
    side b = tweaked_side(f, (tweaked_cpu){ .rope_factor = fb }, fault);
    engine_comparison r;
    engine_error e;
    cr_assert_eq(engine_compare(a.c, b.c, toks, 10, 6, 4, tol, &r, &e), ENGINE_OK, "%s", e.message);
    free_side(&a);
    free_side(&b);
    return r;
}

/* Attention beyond the tolerance while its q, k and v are within it is no divergence when each side equals the
 * exact attention of its own inputs: the CPU against CUDA on the 1.1B shape's layer 18 (1.4e-3 from q and k
 * 1e-4 apart) was the false alarm. A fault inside attention is still named there (the bug zoo below). */
Test(compare, attention_that_its_inputs_explain_is_no_divergence)
{
    char path[4096];
    gguf_file *f = open_model("tiny-llama-f32.gguf", path, sizeof path);
    int32_t toks[10];
    tokens_for(f, toks, 10);
    const float tol = 1e-3f, scale = 4.0f, nudge = 1e-4f;
    engine_comparison r = scaled_compare(f, toks, scale, scale * (1.0f + nudge), NULL, tol);
    float qk = 0.0f, attn = 0.0f;
    for (int il = 0; il < r.n_layer; il++) {
        const engine_cmp_point *p = &r.points[il * (ENGINE_OP_LAYER_OUT + 1)];
        qk = fmaxf(qk, fmaxf(p[ENGINE_OP_Q].rel_worst, p[ENGINE_OP_K].rel_worst));
        attn = fmaxf(attn, p[ENGINE_OP_ATTN].rel_worst);
    }
    /* the premise: q and k within the tolerance, attention beyond it */
    cr_assert_leq(qk, tol, "q and k differ by %g", qk);
    cr_assert_gt(attn, tol, "attention differs by only %g: no amplification to judge", attn);
    cr_assert_eq(r.first_bad, -1, "named %s of layer %d, which its inputs explain",
                 engine_op_name(r.points[r.first_bad].op), r.points[r.first_bad].layer);
    bool explained = false;
    for (int k = 0; k < r.n_points; k++)
        explained |= r.points[k].rel_explained > tol;
    cr_assert(explained, "no attention row recorded as explained");
    engine_comparison_free(&r);
    /* the same inputs with the scores scaled wrongly inside attention: named there, not explained */
    r = scaled_compare(f, toks, scale, scale * (1.0f + nudge), "attn-scale", tol);
    cr_assert_geq(r.first_bad, 0, "the attention fault went unnoticed");
    cr_assert_eq(r.points[r.first_bad].op, ENGINE_OP_ATTN, "named %s", engine_op_name(r.points[r.first_bad].op));
    cr_assert_eq(r.points[r.first_bad].layer, 0);
    /* what follows a divergence is its consequence: nothing after it is explained away */
    for (int k = 0; k < r.n_points; k++)
        cr_assert_lt(r.points[k].rel_explained, 0.0f, "point %d explained after the divergence", k);
    engine_comparison_free(&r);
    gguf_close(f);
}

/* gemma-3's post-norms multiply channels by gains that differ much, and its activations have outlier
 * channels: max |a - b| / max |a| is not kept by that scaling, and the real gemma-3-270m's ffn_post_norm came
 * out 1.4e-3 apart, CPU against CUDA, from an ffn_out 7e-4 apart (a false alarm on an H200). A norm row beyond
 * the tolerance whose sides each equal the exact norm of their own input is no divergence; a fault inside the
 * norm is still named there. The writer's gemma3 fixture, its post-FFN gains raised to 8 at channel 0 (where the
 * nudge lands) so that the norm turns 0.9 tol into more than tol. */
/* The writer's gemma3 fixture in memory (buf, len: the caller frees buf after closing the file). */
static gguf_file *open_gemma3_fixture(fixture_opts o, uint8_t **buf, size_t *len)
{
    o.arch = "gemma3";
    gguf_error ge;
    cr_assert_eq(fixture_write_buffer(&o, buf, len, &ge), GGUF_OK, "%s", ge.message);
    gguf_file *f;
    cr_assert_eq(gguf_open_memory(*buf, *len, &f, &ge), GGUF_OK, "%s", ge.message);
    return f;
}

Test(compare, a_norm_that_its_input_explains_is_no_divergence)
{
    uint8_t *buf;
    size_t len;
    gguf_error ge;
    gguf_file *f = open_gemma3_fixture(fixture_default_opts(), &buf, &len);
    int patched = 0;
    for (uint64_t i = 0; i < gguf_tensor_count(f); i++) {
        const gguf_tensor *t = gguf_tensor_at(f, i);
        const size_t n = strlen(t->name), k = strlen("post_ffw_norm.weight");
        if (n >= k && strcmp(t->name + n - k, "post_ffw_norm.weight") == 0 && t->type == GGUF_TENSOR_F32) {
            const float big = 8.0f;
            memcpy(buf + (t->data - buf), &big, sizeof big);
            patched++;
        }
    }
    gguf_close(f);
    cr_assert_gt(patched, 0, "the gemma3 fixture has no F32 post_ffw_norm gains");
    cr_assert_eq(gguf_open_memory(buf, len, &f, &ge), GGUF_OK, "%s", ge.message);
    int32_t toks[10];
    tokens_for(f, toks, 10);
    const float tol = 1e-3f;
    for (int bad = 0; bad < 2; bad++) {
        side a = tweaked_side(f, (tweaked_cpu){ 0 }, NULL);
        side b = tweaked_side(f, (tweaked_cpu){ .nudge = 0.9f * tol, .bad_norm = bad }, NULL);
        engine_comparison r;
        engine_error e;
        cr_assert_eq(engine_compare(a.c, b.c, toks, 10, 6, 4, tol, &r, &e), ENGINE_OK, "%s", e.message);
        free_side(&a);
        free_side(&b);
        if (!bad) {
            const float in = r.points[ENGINE_OP_FFN_OUT].rel_worst, post = r.points[ENGINE_OP_FFN_POST_NORM].rel_worst;
            /* the premise: layer 0's norm input within the tolerance, its output beyond it */
            cr_assert_leq(in, tol, "ffn_out differs by %g", in);
            cr_assert_gt(post, tol, "ffn_post_norm differs by only %g: no amplification to judge", post);
            cr_assert_eq(r.first_bad, -1, "named %s of layer %d, which its input explains",
                         engine_op_name(r.points[r.first_bad].op), r.points[r.first_bad].layer);
            cr_assert_gt(r.points[ENGINE_OP_FFN_POST_NORM].rel_explained, tol,
                         "no ffn_post_norm row recorded as explained");
        } else {
            cr_assert_geq(r.first_bad, 0, "the fault inside the post-FFN norm went unnoticed");
            cr_assert_eq(r.points[r.first_bad].op, ENGINE_OP_FFN_POST_NORM, "named %s",
                         engine_op_name(r.points[r.first_bad].op));
            cr_assert_eq(r.points[r.first_bad].layer, 0);
        }
        engine_comparison_free(&r);
    }
    gguf_close(f);
    free(buf);
}

/* gemma-3's GELU goes through llama.cpp's table of f16 inputs: a gate value a hair apart on the two sides can round
 * to the neighbouring f16 and move by 2^-11 of itself, so 1e-5 of noise in the products put the real gemma-3's
 * ffn_act 1e-3 apart (a false alarm, CPU against a CPU with that noise). An ffn_act row beyond the tolerance whose
 * sides each land within it of act(W_gate h) * (W_up h), re-derived in double from their own ffn_norm row, is no
 * divergence; a fault inside the activation is named there. The writer's gemma3 fixture, 1e-4 of noise. */
Test(compare, a_gated_activation_that_its_input_explains_is_no_divergence)
{
    fixture_opts o = fixture_default_opts();
    o.n_layer = 4, o.n_embd = 256, o.n_ff = 512, o.n_vocab = 1024;
    uint8_t *buf;
    size_t len;
    gguf_file *f = open_gemma3_fixture(o, &buf, &len);
    int32_t toks[10];
    tokens_for(f, toks, 10);
    const float tol = 1e-3f;
    for (int bad = 0; bad < 3; bad++) {
        /* 0: noise; 1: noise and a fault in the activation; 2: no noise, only the re-derivation's own check */
        side a = tweaked_side(f, (tweaked_cpu){ 0 }, NULL);
        side b = tweaked_side(f, (tweaked_cpu){ .noise = bad == 2 ? 0.0f : 1e-4f, .bad_glu = bad == 1 }, NULL);
        engine_comparison r;
        engine_error e;
        cr_assert_eq(engine_compare(a.c, b.c, toks, 10, 6, 4, tol, &r, &e), ENGINE_OK, "%s", e.message);
        free_side(&a);
        free_side(&b);
        float act = 0.0f, explained = -1.0f;
        for (int il = 0; il < r.n_layer; il++) {
            act = fmaxf(act, r.points[il * (ENGINE_OP_LAYER_OUT + 1) + ENGINE_OP_FFN_ACT].rel_worst);
            explained = fmaxf(explained, r.points[il * (ENGINE_OP_LAYER_OUT + 1) + ENGINE_OP_FFN_ACT].rel_explained);
        }
        if (bad == 0) {
            cr_assert_gt(act, tol, "ffn_act differs by only %g: no amplification to judge", act);
            cr_assert_eq(r.first_bad, -1, "named %s of layer %d, which its input explains",
                         engine_op_name(r.points[r.first_bad].op), r.points[r.first_bad].layer);
            cr_assert_gt(explained, tol, "no ffn_act row recorded as explained");
        } else if (bad == 1) {
            cr_assert_geq(r.first_bad, 0, "the fault inside the activation went unnoticed");
            cr_assert_eq(r.points[r.first_bad].op, ENGINE_OP_FFN_ACT, "named %s",
                         engine_op_name(r.points[r.first_bad].op));
            cr_assert_eq(r.points[r.first_bad].layer, 0);
        } else {
            cr_assert_eq(r.first_bad, -1);
            cr_assert_eq(act, 0.0f, "two equal backends differ by %g", act);
        }
        engine_comparison_free(&r);
    }
    gguf_close(f);
    free(buf);
}

/* llama.cpp's numerics round every product's activations (Q8_0, Q8_1, Q8_K blocks, f16, bf16) and move every op
 * by percents: against the exact CPU that is no divergence, since each side equals every op re-derived on the host
 * from its own inputs in its own numerics (a GGML side's activations rounded as llama.cpp rounds them, Q8_1's f16
 * sums and GELU's f16 table included) to 1e-5. Every shared quantized model (each type the shared files hold), the
 * mixtures of experts (routing and each chosen expert re-derived; gpt-oss's MXFP4 experts, biases and sinks), the
 * writer's gemma3 fixture (GeGLU, post-norms, q/k norms), and the real models where they are present. */
Test(compare, llama_cpp_numerics_are_explained_op_by_op)
{
    static const char *const models[] = {
        "tiny-llama-q4_0.gguf", "tiny-llama-q4_k_m.gguf", "tiny-llama-q5_k_m.gguf", "tiny-llama-q6_k.gguf",
        "tiny-llama-q8_0.gguf", "tiny-qwen2-q4_0.gguf", "tiny-qwen2-q4_k_m.gguf", "tiny-qwen3-q4_k_m.gguf",
        "tiny-qwen3-q8_0.gguf", "stories260K-q5_1mix.gguf", "stories260K-iq4_nlmix.gguf", "stories260K-q5_0mix.gguf",
        "stories260K-bf16.gguf", "SmolLM2-135M-Instruct.Q4_1.gguf", "gemma-3-270m-q4_k_m.gguf",
        "moe/tiny-qwen3moe-q4_k_m.gguf", "moe/tiny-qwen2moe-q4_k_m.gguf", "moe/tiny-mixtral-q4_k_m.gguf",
        "moe/tiny-gptoss-mxfp4.gguf",
        "heldout-jais",  /* written here and quantized by gguf-quantize: biases on the gate, up and down products */
        "heldout-afmoe", /* ... and AFMoE's output gate, a product of its own, and its post-norms */
        "heldout-nanbeige", /* ... Nanbeige's looped blocks, the final norm between the passes */
        "heldout-granite_swa", /* ... Granite iSWA's sinks, sliding windows by layer and a layer without positions */
        /* ... its MoE form, whose 48-wide experts keep their down products in F16 (an ulp of the gate or up product
         * can move an activation across an f16 rounding step: gate_up_product goes on with the side's own) */
        "heldout-granite_swa-moe",
        "heldout-mimo2",   /* ... MiMo-V2's values narrower than its keys, its value scale, key/value heads by layer */
        "heldout-mimo2-b", /* ... and its fused q/k/v, 64-wide experts whose down products round to Q8_0 */
        "heldout-maple",   /* ... Maple's experts' SwiGLU limited by layer, the sliding layers alone rotating */
        "heldout-step35",  /* ... Step-3.5's head-wise gates, SiLU(gate) limited in experts, shared expert, dense block */
        "heldout-cohere2moe",   /* ... Cohere2 MoE's experts in a parallel block, its shared expert averaged in */
        "heldout-cohere2moe-b", /* ... its RMSNorms, the experts' gate and up fused */
        "heldout-plamo3-b",     /* ... PLaMo 3's post-norms, fused q/k/v with values narrower than keys */
        "heldout-laguna",       /* ... Laguna's softplus gates per head and per value by layer, heads per layer */
        "heldout-scaled",       /* ... per-tensor scales on q, k, v (before their biases), the output product */
        "heldout-scaled-moe",   /* ... a scale per expert on the experts' products */
        "heldout-talkie",       /* ... Talkie's gainless norms, q gains per head after the rotation, embedding skips */
        NULL,           /* the writer's gemma3 fixture */
    };
    const float tol = 1e-3f;
    int judged = 0;
    char dir[128] = "";
    for (size_t i = 0; i < sizeof models / sizeof models[0]; i++) {
        char *path = models[i] && strncmp(models[i], "heldout-", 8) ? model_path(models[i]) : NULL;
        if (models[i] && !path && access(venv_python(), X_OK) == 0 && (dir[0] || tmp_dir_make(dir, "numerics"))) {
            char f32[256], q[256], why[200], args[600];
            snprintf(f32, sizeof f32, "%s/%s-f32.gguf", dir, models[i]);
            snprintf(q, sizeof q, "%s/%s-q4_k_m.gguf", dir, models[i]);
            cr_assert(heldout_arch_write(models[i], f32, why), "%s", why);
            snprintf(args, sizeof args, "'%s' '%s' Q4_K_M 2>&1", f32, q);
            int st;
            free(run_tool("gguf-quantize", args, &st));
            cr_assert_eq(st, 0, "gguf-quantize %s", args);
            path = strdup(q);
        }
        uint8_t *buf = NULL;
        size_t len;
        gguf_file *f = NULL;
        gguf_error ge;
        if (models[i] && !path) {
            cr_log_warn("%s not present: not compared in llama.cpp's numerics", models[i]);
            continue;
        }
        if (path)
            cr_assert_eq(gguf_open(path, &f, &ge), GGUF_OK, "%s: %s", path, ge.message);
        else
            f = open_gemma3_fixture(fixture_default_opts(), &buf, &len);
        const char *name = models[i] ? models[i] : "the gemma3 fixture";
        int32_t toks[10];
        tokens_for(f, toks, 10);
        side a = make_side(f, NULL, 32, 4), b = load_side(f, kern_cpu_create_numerics(2, KERN_NUMERICS_GGML), 32, 4);
        engine_comparison r;
        engine_error e;
        cr_assert_eq(engine_compare(a.c, b.c, toks, 10, 6, 4, tol, &r, &e), ENGINE_OK, "%s", e.message);
        free_side(&a);
        free_side(&b);
        cr_expect_eq(r.first_bad, -1, "%s: named %s of layer %d (its sides %g and %g from their re-derivations)", name,
                     r.first_bad < 0 ? "" : engine_op_name(r.points[r.first_bad].op),
                     r.first_bad < 0 ? -1 : r.points[r.first_bad].layer,
                     r.first_bad < 0 ? 0.0 : r.points[r.first_bad].first_self[0],
                     r.first_bad < 0 ? 0.0 : r.points[r.first_bad].first_self[1]);
        int beyond = 0;
        for (int k = 0; k < r.n_points; k++) {
            const engine_cmp_point *p = &r.points[k];
            if (p->rel_worst > tol) {
                beyond++;
                for (int side = 0; side < 2; side++)
                    cr_expect_leq(p->self_worst[side], 1e-5f, "%s: side %d's %s of layer %d is %g from its own "
                                  "re-derivation", name, side, engine_op_name(p->op), p->layer, p->self_worst[side]);
            }
        }
        /* the premise: the rounding moves the logits past the tolerance (bf16 activations too) */
        cr_expect_gt(r.points[r.n_points - 1].rel_worst, tol, "%s: logits only %g apart", name,
                     r.points[r.n_points - 1].rel_worst);
        cr_expect_gt(beyond, r.n_layer, "%s: %d ops beyond the tolerance", name, beyond);
        judged++;
        engine_comparison_free(&r);
        gguf_close(f);
        free(buf);
        free(path);
    }
    cr_assert(!dir[0] || tmp_dir_remove(dir));
    cr_assert_geq(judged, 1);
}

/* The side a fault is on is the side named, A as well as B: the wrong rotary pairs on side A (cpu:ggml, so that
 * every op also differs by the rounding) against the exact CPU. */
Test(compare, the_faulty_side_is_named_on_either_side)
{
    char path[4096];
    gguf_file *f = open_model("tiny-llama-q4_0.gguf", path, sizeof path);
    int32_t toks[10];
    tokens_for(f, toks, 10);
    kern_backend *ggml = kern_fault_wrap(kern_cpu_create_numerics(2, KERN_NUMERICS_GGML), "rope-mode");
    cr_assert(ggml);
    side a = load_side(f, ggml, 32, 4), b = make_side(f, NULL, 32, 4);
    engine_comparison r;
    engine_error e;
    cr_assert_eq(engine_compare(a.c, b.c, toks, 10, 6, 4, 1e-3f, &r, &e), ENGINE_OK, "%s", e.message);
    free_side(&a);
    free_side(&b);
    gguf_close(f);
    cr_assert_geq(r.first_bad, 0, "the wrong rotation went unnoticed");
    const engine_cmp_point *p = &r.points[r.first_bad];
    cr_expect_eq(p->op, ENGINE_OP_Q, "named %s", engine_op_name(p->op));
    cr_expect_eq(p->layer, 0);
    cr_expect(p->first_self[0] > r.tol && p->first_self[1] >= 0.0f && p->first_self[1] <= r.tol,
              "re-derived from their own inputs: the faulty cpu:ggml %g, cpu %g", p->first_self[0], p->first_self[1]);
    engine_comparison_free(&r);
}

/* The bug zoo: every fault named at the layer and op where it bites, with the phase (a decode-only bug is
 * invisible in the prompt). The shared models each fault needs: biases (qwen2), Q4_K weights, a grouped cache. */
Test(compare, every_bug_zoo_fault_is_named_at_its_layer_and_op)
{
    static const struct {
        const char *fault, *model;
        int layer;
        engine_op op;
        bool decode;
    } zoo[] = {
        { "rope-mode", "tiny-qwen2-f32.gguf", 0, ENGINE_OP_Q, false },
        { "lm-head-rows", "tiny-llama-f16.gguf", -1, ENGINE_OP_COUNT, false },
        { "stuck-embedding", "tiny-llama-f32.gguf", 0, ENGINE_OP_EMBD, true },
        { "no-qkv-bias", "tiny-qwen2-f32.gguf", 0, ENGINE_OP_Q, false },
        { "lm-head-transposed", "tiny-llama-f16.gguf", -1, ENGINE_OP_COUNT, false },
        { "q4k-scales", "tiny-llama-q4_k_m.gguf", 0, ENGINE_OP_Q, false },
        { "kv-pos", "tiny-llama-f32.gguf", 0, ENGINE_OP_ATTN, true },
        { "gqa-map", "tiny-llama-f32.gguf", 0, ENGINE_OP_ATTN, false },
        { "norm-skip", "tiny-llama-f32.gguf", 0, ENGINE_OP_ATTN_NORM, false },
        { "residual-twice", "tiny-llama-f32.gguf", 0, ENGINE_OP_FFN_NORM, false },
        { "attn-scale", "tiny-llama-f32.gguf", 0, ENGINE_OP_ATTN, false },
        { "padding-logits", "tiny-llama-f32.gguf", -1, ENGINE_OP_COUNT, false },
        /* Qwen3.5's held-out shape (tests/py/qwen35_arch.py), written here: its first layer a delta net, the prompt's
         * second batch of 4 the first to miss the inputs before */
        { "conv-state", "heldout-qwen35", 0, ENGINE_OP_ATTN, false },
        /* Nemotron-H's (tests/py/nemotron_h_arch.py): its first layer a Mamba-2 mixer, whose convolution forgets the
         * first batch; its attention layer (3, without positions, 4 query heads to 2 key/value heads) the first that
         * grouped heads read wrongly reach */
        { "conv-state", "heldout-nemotron_h", 0, ENGINE_OP_ATTN, false },
        { "gqa-map", "heldout-nemotron_h", 3, ENGINE_OP_ATTN, false },
        /* Falcon-Mamba's (tests/py/mamba_arch.py): its first layer a Mamba-1 mixer with dt, B and C normed, re-derived
         * on both sides (the correct side within the tolerance of its own replay) */
        { "conv-state", "heldout-mamba-falcon", 0, ENGINE_OP_ATTN, false },
        /* StarCoder2's (tests/py/layernorm_arch.py): LayerNorms with biases, the correct side's re-derived with its
         * bias; the faulty side's gains left out */
        { "norm-skip", "heldout-starcoder2", 0, ENGINE_OP_ATTN_NORM, false },
        /* Phi-2's first GGUF form: attn_qkv with its bias, whose q values the faulty side leaves out */
        { "no-qkv-bias", "heldout-phi2-fused", 0, ENGINE_OP_Q, false },
    };
    char dir[128] = "", written[256] = "", why[200];
    for (size_t i = 0; i < sizeof zoo / sizeof zoo[0]; i++) {
        char path[4096];
        const char *model = zoo[i].model;
        if (!strncmp(model, "heldout-", 8)) {
            if (access(venv_python(), X_OK) != 0) {
                cr_log_warn("%s: build/venv not found, %s not written: skipped", zoo[i].fault, model);
                continue;
            }
            cr_assert(dir[0] || tmp_dir_make(dir, "zoo"));
            snprintf(written, sizeof written, "%s/%s.gguf", dir, model);
            cr_assert(heldout_arch_write(model, written, why), "%s", why);
            model = written;
        }
        engine_comparison r = compare(model, zoo[i].fault, 4, path, sizeof path);
        cr_assert_geq(r.first_bad, 0, "%s on %s went unnoticed", zoo[i].fault, path);
        const engine_cmp_point *p = &r.points[r.first_bad];
        cr_expect_eq(p->op, zoo[i].op, "%s: first divergence at %s, expected %s", zoo[i].fault, engine_op_name(p->op),
                     engine_op_name(zoo[i].op));
        if (zoo[i].layer >= 0)
            cr_expect_eq(p->layer, zoo[i].layer, "%s: layer %d", zoo[i].fault, p->layer);
        cr_expect_eq(p->first_pos >= r.n_prompt, zoo[i].decode, "%s: position %d of a %d-token prompt", zoo[i].fault,
                     p->first_pos, r.n_prompt);
        cr_expect(kern_fault_bug(zoo[i].fault), "%s has a description", zoo[i].fault);
        /* and the faulty side is the one whose op its own inputs do not give */
        cr_expect(p->first_self[0] >= 0.0f && p->first_self[0] <= r.tol && p->first_self[1] > r.tol,
                  "%s: re-derived from their own inputs, cpu %g and the faulty cpu %g", zoo[i].fault,
                  p->first_self[0], p->first_self[1]);
        for (int k = 0; k < r.n_points; k++)
            cr_expect_lt(r.points[k].rel_explained, 0.0f, "%s: point %d explained away", zoo[i].fault, k);
        engine_comparison_free(&r);
    }
    cr_assert(!dir[0] || tmp_dir_remove(dir));
}
