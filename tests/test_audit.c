/* audit/: statistics against numpy over the gguf package's dequantization,
 * thread-count independence, the shape/layer/vocabulary rules on models our
 * writer makes with one defect each, block-scale rules, tensor comparison. */
#include "audit.h"
#include "fixture_model.h"
#include "golden.h"
#include "quant.h"
#include "testutil.h"

#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

TestSuite(audit, .timeout = 120);

static bool close_to(double a, double b, double rel)
{
    return fabs(a - b) <= rel * fmax(fabs(a), fabs(b)) + 1e-12;
}

static void compare_with_numpy(const char *model)
{
    char *path = model_path(model);
    if (!path)
        cr_skip_test("shared model %s not found: skipped", model);
    gguf_file *f;
    cr_assert_eq(gguf_open(path, &f, NULL), GGUF_OK);
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "'%s' tests/py/tensor_stats.py '%s'", venv_python(), path);
    int st;
    char *out = run_capture(cmd, &st);
    cr_assert_eq(st, 0, "tensor_stats.py failed (is build/venv set up?)");
    size_t n = 0;
    for (char *save = NULL, *line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save), n++) {
        cJSON *ref = cJSON_Parse(line);
        cr_assert(ref);
        const char *name = cJSON_GetObjectItem(ref, "name")->valuestring;
        const gguf_tensor *t = gguf_tensor_by_name(f, name);
        cr_assert(t, "%s", name);
        audit_stats s;
        cr_assert_eq(audit_tensor_stats(t, 0, &s), AUDIT_OK);
        cr_assert(s.supported, "%s", name);
        cr_expect_eq(s.count, (uint64_t)cJSON_GetObjectItem(ref, "count")->valuedouble, "%s", name);
        cr_expect_eq(s.n_zero, (uint64_t)cJSON_GetObjectItem(ref, "zeros")->valuedouble, "%s", name);
        cr_expect_eq(s.n_nan, 0);
        const char *keys[] = { "min", "max", "max_abs", "mean", "std", "rms" };
        double ours[] = { s.min, s.max, s.max_abs, s.mean, s.std, s.rms };
        for (int k = 0; k < 6; k++) {
            double want = cJSON_GetObjectItem(ref, keys[k])->valuedouble;
            cr_expect(close_to(ours[k], want, 1e-9), "%s %s: ours %.17g, numpy %.17g", name, keys[k], ours[k], want);
        }
        cJSON_Delete(ref);
    }
    cr_expect_eq(n, gguf_tensor_count(f));
    free(out);
    gguf_close(f);
    free(path);
}

Test(audit, stats_equal_numpy_f32) { compare_with_numpy("stories260K.gguf"); }
Test(audit, stats_equal_numpy_k_quants) { compare_with_numpy("tiny-qwen2-q4_k_m.gguf"); }
Test(audit, stats_equal_numpy_iq4_nl_mix) { compare_with_numpy("stories260K-iq4_nlmix.gguf"); }
Test(audit, stats_equal_numpy_bf16) { compare_with_numpy("stories260K-bf16.gguf"); }

/* Same thread count: bit-identical (merged in thread order, not by timing);
 * another thread count: another summation tree, equal to rounding. */
Test(audit, stats_are_deterministic_and_agree_across_thread_counts)
{
    fixture_opts o = fixture_default_opts();
    o.n_embd = 256, o.n_ff = 512, o.n_vocab = 2048;
    uint8_t *buf;
    size_t len;
    cr_assert_eq(fixture_write_buffer(&o, &buf, &len, NULL), GGUF_OK);
    gguf_file *f;
    cr_assert_eq(gguf_open_memory(buf, len, &f, NULL), GGUF_OK);
    for (size_t i = 0; i < gguf_tensor_count(f); i++) {
        audit_stats a, b, c;
        audit_tensor_stats(gguf_tensor_at(f, i), 1, &a);
        audit_tensor_stats(gguf_tensor_at(f, i), 2, &b);
        audit_tensor_stats(gguf_tensor_at(f, i), 2, &c);
        const char *name = gguf_tensor_at(f, i)->name;
        cr_expect_eq(memcmp(&b, &c, sizeof b), 0, "%s: two runs on 2 threads differ", name);
        cr_expect(close_to(a.mean, b.mean, 1e-12), "%s mean %.17g vs %.17g", name, a.mean, b.mean);
        cr_expect(close_to(a.std, b.std, 1e-12), "%s std", name);
        cr_expect_eq(a.min, b.min);
        cr_expect_eq(a.max, b.max);
        cr_expect_eq(a.max_abs_index, b.max_abs_index);
        cr_expect_eq(a.n_zero, b.n_zero);
    }
    gguf_close(f);
    free(buf);
}

/* ---- a tiny llama written here, with one defect at a time ----------------- */

enum defect { NONE, DROP_FFN_UP_2, EXTRA_LAYER, WRONG_K_SHAPE, SHORT_VOCAB, BAD_GQA, NEG_Q8_SCALE, ZERO_LAYER_1,
              F16_AS_BF16, FLIPPED_Q8_SCALE_EXPONENT, Q8_SCALE_TIMES_2K, NEGATED_NORM, WEIGHT_TIMES_2_17,
              WEIGHT_TIMES_2_13 };

#define E 32
#define L 4
#define FF 64
#define NV 40

static float weights[1 << 16];
static uint8_t q8[(E * FF / 32) * 34];
static uint16_t f16_q[L + 1][E * E]; /* each layer's attn_q in F16, for the relabelled-type defect */
static float edited_q[E * E], negated[E];  /* layer 1's attn_q with one weight scaled; a sign-flipped norm */

static gguf_file *tiny_llama(enum defect d, uint8_t **buf)
{
    for (int i = 0; i < (1 << 16); i++)
        weights[i] = fixture_value(7, (uint64_t)i, 0.1f);
    static float ones[FF];
    for (int i = 0; i < FF; i++)
        ones[i] = 1.0f + 0.01f * (float)(i % 7);
    gguf_writer *w = gguf_writer_create(3);
    gguf_writer_add_str(w, "general.architecture", "llama", NULL);
    gguf_writer_add_u32(w, "llama.embedding_length", E, NULL);
    gguf_writer_add_u32(w, "llama.block_count", L, NULL);
    gguf_writer_add_u32(w, "llama.feed_forward_length", FF, NULL);
    gguf_writer_add_u32(w, "llama.attention.head_count", 4, NULL);
    gguf_writer_add_u32(w, "llama.attention.head_count_kv", d == BAD_GQA ? 3 : 2, NULL);
    static char names[NV][16]; /* room for any int: the compiler checks it */
    static const char *toks[NV];
    for (int i = 0; i < NV; i++) {
        snprintf(names[i], sizeof names[i], "t%d", i);
        toks[i] = names[i];
    }
    gguf_wvalue tv = { .type = GGUF_VT_ARRAY, .elem_type = GGUF_VT_STRING, .count = d == SHORT_VOCAB ? NV - 8 : NV,
                       .v.strs = toks };
    gguf_writer_add(w, "tokenizer.ggml.tokens", &tv, NULL);
    uint64_t emb[2] = { E, NV }, nrm[1] = { E }, sq[2] = { E, E }, kv[2] = { E, d == WRONG_K_SHAPE ? E : E / 2 };
    uint64_t up[2] = { E, FF }, down[2] = { FF, E };
    gguf_writer_add_tensor(w, "token_embd.weight", GGUF_TENSOR_F32, 2, emb, weights, NULL);
    gguf_writer_add_tensor(w, "output_norm.weight", GGUF_TENSOR_F32, 1, nrm, ones, NULL);
    gguf_writer_add_tensor(w, "output.weight", GGUF_TENSOR_F32, 2, emb, weights + 5000, NULL);
    /* Q8_0 quantization of the same kind of weights for the ffn_up matrices */
    cr_assert_eq(quant_quantize_row(GGUF_TENSOR_Q8_0, weights + 9000, q8, E * FF), QUANT_OK);
    if (d == NEG_Q8_SCALE)
        q8[5 * 34 + 1] |= 0x80; /* sign bit of block 5's f16 d */
    if (d == FLIPPED_Q8_SCALE_EXPONENT)
        q8[5 * 34 + 1] ^= 0x40; /* the top exponent bit of block 5's f16 d: x2^16 */
    if (d == Q8_SCALE_TIMES_2K) {
        uint16_t h = (uint16_t)(q8[5 * 34] | q8[5 * 34 + 1] << 8);
        h = (uint16_t)(h + (11u << 10)); /* exponent + 11: 2^11 times, inside the warning band */
        q8[5 * 34] = (uint8_t)h, q8[5 * 34 + 1] = (uint8_t)(h >> 8);
    }
    memcpy(edited_q, weights + 300, sizeof edited_q);
    edited_q[7] *= d == WEIGHT_TIMES_2_17 ? 131072.0f : d == WEIGHT_TIMES_2_13 ? 8192.0f : 1.0f;
    for (int i = 0; i < E; i++)
        negated[i] = -ones[i];
    for (int l = 0; l < (d == EXTRA_LAYER ? L + 1 : L); l++) {
        if (d == ZERO_LAYER_1 && l == 1)
            continue;
        char n[64];
        const float *base = weights + 300 * l;
#define ADD(role, type, nd, ne, data)                                                                              \
    snprintf(n, sizeof n, "blk.%d." role, l);                                                                      \
    gguf_writer_add_tensor(w, n, type, nd, ne, data, NULL)
        ADD("attn_norm.weight", GGUF_TENSOR_F32, 1, nrm, ones);
        if (d == F16_AS_BF16) { /* F16 bytes under the type BF16: what a converter that mixes them up writes */
            cr_assert_eq(quant_quantize_row(GGUF_TENSOR_F16, base, f16_q[l], E * E), QUANT_OK);
            ADD("attn_q.weight", GGUF_TENSOR_BF16, 2, sq, f16_q[l]);
        } else {
            ADD("attn_q.weight", GGUF_TENSOR_F32, 2, sq, l == 1 ? edited_q : base);
        }
        ADD("attn_k.weight", GGUF_TENSOR_F32, 2, kv, base + 11);
        uint64_t v_ne[2] = { E, E / 2 };
        ADD("attn_v.weight", GGUF_TENSOR_F32, 2, v_ne, base + 23);
        ADD("attn_output.weight", GGUF_TENSOR_F32, 2, sq, base + 37);
        ADD("ffn_norm.weight", GGUF_TENSOR_F32, 1, nrm, d == NEGATED_NORM && l == 2 ? negated : ones);
        ADD("ffn_gate.weight", GGUF_TENSOR_F32, 2, up, base + 41);
        if (!(d == DROP_FFN_UP_2 && l == 2)) {
            ADD("ffn_up.weight", GGUF_TENSOR_Q8_0, 2, up, q8);
        }
        ADD("ffn_down.weight", GGUF_TENSOR_F32, 2, down, base + 53);
#undef ADD
    }
    size_t len;
    cr_assert_eq(gguf_writer_write_buffer(w, buf, &len, NULL), GGUF_OK);
    gguf_writer_free(w);
    gguf_file *f;
    cr_assert_eq(gguf_open_memory(*buf, len, &f, NULL), GGUF_OK);
    return f;
}

static audit_report audit_of(gguf_file *f, audit_stats **stats)
{
    *stats = calloc(gguf_tensor_count(f), sizeof **stats);
    cr_assert_eq(audit_file_stats(f, 0, NULL, NULL, *stats), AUDIT_OK);
    audit_report r;
    cr_assert_eq(audit_model(f, *stats, &r), AUDIT_OK);
    return r;
}

static const audit_finding *finding(const audit_report *r, const char *code, const char *tensor)
{
    for (size_t i = 0; i < r->n_findings; i++)
        if (strcmp(r->findings[i].code, code) == 0 && (!tensor || strcmp(r->findings[i].tensor, tensor) == 0))
            return &r->findings[i];
    return NULL;
}

static void list(const audit_report *r, char *out, size_t cap)
{
    size_t used = 0;
    out[0] = '\0';
    for (size_t i = 0; i < r->n_findings && used < cap; i++)
        used += (size_t)snprintf(out + used, cap - used, "%s %s %s: %s\n", audit_severity_name(r->findings[i].severity),
                                 r->findings[i].code, r->findings[i].tensor, r->findings[i].measured);
}

static void expect_finding(enum defect d, const char *code, const char *tensor, audit_severity sev)
{
    uint8_t *buf;
    gguf_file *f = tiny_llama(d, &buf);
    audit_stats *stats;
    audit_report r = audit_of(f, &stats);
    char all[8192];
    list(&r, all, sizeof all);
    const audit_finding *x = finding(&r, code, tensor);
    cr_expect(x, "no %s finding on %s; findings:\n%s", code, tensor ? tensor : "(model)", all);
    if (x)
        cr_expect_eq(x->severity, sev, "%s", all);
    audit_report_free(&r);
    free(stats);
    gguf_close(f);
    free(buf);
}

Test(audit, healthy_writer_model_is_clean)
{
    uint8_t *buf;
    gguf_file *f = tiny_llama(NONE, &buf);
    audit_stats *stats;
    audit_report r = audit_of(f, &stats);
    char all[8192];
    list(&r, all, sizeof all);
    cr_expect_eq(r.n_errors, 0, "%s", all);
    cr_expect_eq(r.n_warnings, 0, "%s", all);
    cr_expect_eq(r.hp.g.n_embd, E);
    cr_expect_eq(r.hp.g.n_layer, L);
    cr_expect_eq(r.hp.g.head_dim_k, E / 4);
    /* roles: attn_q.weight over 4 layers */
    bool seen = false;
    for (size_t i = 0; i < r.n_roles; i++)
        if (strcmp(r.roles[i].role, "attn_q.weight") == 0) {
            seen = true;
            cr_expect_eq(r.roles[i].n_layers, L);
            cr_expect_str_eq(r.roles[i].types, "F32");
        }
    cr_expect(seen);
    audit_report_free(&r);
    free(stats);
    gguf_close(f);
    free(buf);
}

Test(audit, f16_matrices_labelled_bf16_are_an_error)
{
    expect_finding(F16_AS_BF16, "magnitude-implausible", "blk.0.attn_q.weight", AUDIT_ERROR);
}

Test(audit, missing_tensor_is_an_error)
{
    expect_finding(DROP_FFN_UP_2, "missing-tensor", "blk.2.ffn_up.weight", AUDIT_ERROR);
}
Test(audit, missing_layer_is_an_error) { expect_finding(ZERO_LAYER_1, "missing-layer", "blk.1.*", AUDIT_ERROR); }
Test(audit, layer_past_block_count_is_an_error)
{
    expect_finding(EXTRA_LAYER, "layer-out-of-range", "blk.4.attn_q.weight", AUDIT_ERROR);
}
Test(audit, shape_against_head_counts_is_an_error)
{
    expect_finding(WRONG_K_SHAPE, "shape", "blk.0.attn_k.weight", AUDIT_ERROR);
}
Test(audit, embedding_rows_vs_vocabulary_is_an_error)
{
    expect_finding(SHORT_VOCAB, "vocab-rows", "token_embd.weight", AUDIT_ERROR);
}
Test(audit, gqa_ratio_is_an_error) { expect_finding(BAD_GQA, "gqa-ratio", NULL, AUDIT_ERROR); }
Test(audit, negative_q8_0_scale_is_named_with_its_block)
{
    expect_finding(NEG_Q8_SCALE, "scale-negative", "blk.0.ffn_up.weight", AUDIT_ERROR);
    uint8_t *buf;
    gguf_file *f = tiny_llama(NEG_Q8_SCALE, &buf);
    audit_stats s;
    audit_tensor_stats(gguf_tensor_by_name(f, "blk.3.ffn_up.weight"), 0, &s);
    cr_expect_eq(s.n_scales, 1);
    cr_expect_eq(s.scale[0].n_negative, 1);
    cr_expect_eq(s.scale[0].first_negative, 5);
    gguf_close(f);
    free(buf);
}

/* Severity from evidence (docs/gguf-verify.md, "Severities"): past what training makes is an error, the band
 * between the warning line and that stays a warning. */
Test(audit, flipped_scale_exponent_is_an_error)
{
    expect_finding(FLIPPED_Q8_SCALE_EXPONENT, "scale-huge", "blk.0.ffn_up.weight", AUDIT_ERROR);
}
Test(audit, scale_2k_times_its_median_is_a_warning)
{
    expect_finding(Q8_SCALE_TIMES_2K, "scale-huge", "blk.0.ffn_up.weight", AUDIT_WARNING);
}
Test(audit, sign_flipped_norm_is_an_error)
{
    expect_finding(NEGATED_NORM, "norm-negative-mean", "blk.2.ffn_norm.weight", AUDIT_ERROR);
}
Test(audit, weight_2_17_times_the_median_is_an_error)
{
    expect_finding(WEIGHT_TIMES_2_17, "extreme-values", "blk.1.attn_q.weight", AUDIT_ERROR);
}
Test(audit, weight_2_13_times_the_median_is_a_warning)
{
    expect_finding(WEIGHT_TIMES_2_13, "extreme-values", "blk.1.attn_q.weight", AUDIT_WARNING);
}

Test(audit, scale_fields_follow_ggml_block_layouts)
{
    /* quant-testvectors: ggml's quantizer output of 19 types from the same real weights */
    char *path = model_path("quant-testvectors.gguf");
    if (!path)
        cr_skip_test("quant-testvectors.gguf not found: skipped");
    gguf_file *f;
    cr_assert_eq(gguf_open(path, &f, NULL), GGUF_OK);
    for (size_t i = 0; i < gguf_tensor_count(f); i++) {
        const gguf_tensor *t = gguf_tensor_at(f, i);
        if (strncmp(t->name, "q.", 2) != 0)
            continue;
        audit_stats s;
        audit_tensor_stats(t, 0, &s);
        for (int k = 0; k < s.n_scales; k++) {
            const audit_scale_stats *c = &s.scale[k];
            cr_expect_eq(c->n_nan + c->n_inf, 0, "%s %s", t->name, c->name);
            cr_expect_eq(c->n_huge, 0, "%s %s: %llu huge", t->name, c->name, (unsigned long long)c->n_huge);
            if (c->never_negative)
                cr_expect_eq(c->n_negative, 0, "%s %s: ggml wrote a negative one", t->name, c->name);
            /* a scale the size of the weights' own step: median within 2^-12..2^0 for weights ~0.1 */
            cr_expect(c->median_log2 > -20 && c->median_log2 < 2, "%s %s median 2^%d", t->name, c->name,
                      c->median_log2);
        }
    }
    gguf_close(f);
    free(path);
}

Test(audit, compare_tensors_measures_differences)
{
    uint8_t *b1, *b2;
    gguf_file *f = tiny_llama(NONE, &b1), *g = tiny_llama(NEG_Q8_SCALE, &b2);
    audit_diff d;
    cr_assert_eq(audit_compare_tensors(gguf_tensor_by_name(f, "blk.0.attn_q.weight"),
                                       gguf_tensor_by_name(g, "blk.0.attn_q.weight"), 0, &d), AUDIT_OK);
    cr_expect(d.bytes_equal && d.comparable);
    cr_expect_eq(d.n_different, 0);
    cr_expect_eq(d.max_abs_diff, 0.0);
    cr_assert_eq(audit_compare_tensors(gguf_tensor_by_name(f, "blk.0.ffn_up.weight"),
                                       gguf_tensor_by_name(g, "blk.0.ffn_up.weight"), 0, &d), AUDIT_OK);
    cr_expect(!d.bytes_equal);
    cr_expect(d.n_different > 0 && d.n_different <= 32, "only block 5 differs: %llu", (unsigned long long)d.n_different);
    cr_expect_geq(d.max_abs_index, 5 * 32);
    cr_expect_lt(d.max_abs_index, 6 * 32);
    /* a Q8_0 tensor against the F32 of another role: comparable by value, not by bytes */
    cr_assert_eq(audit_compare_tensors(gguf_tensor_by_name(f, "blk.0.ffn_up.weight"),
                                       gguf_tensor_by_name(f, "blk.0.ffn_gate.weight"), 0, &d), AUDIT_OK);
    cr_expect(d.comparable && !d.bytes_equal);
    cr_expect_gt(d.rel_rms, 0.0);
    gguf_close(f), gguf_close(g);
    free(b1), free(b2);
}

/* ---- the architectures' descriptions (gguf/arch.c) -------------------------------- */

/* A copy of the model at path with one tensor name's bytes replaced (same length; from NULL: none), audited. */
static audit_report audit_renamed_at(const char *path, const char *from, const char *to, tbuf *keep)
{
    *keep = read_whole_file(path);
    cr_assert(keep->p);
    if (!from)
        from = to = "";
    cr_assert_eq(strlen(from), strlen(to));
    if (*from) {
        uint64_t at = tensor_info_offset(keep, from);
        cr_assert_eq(memcmp(keep->p + at + 8, from, strlen(from)), 0);
        memcpy(keep->p + at + 8, to, strlen(to));
    }
    gguf_file *f;
    cr_assert_eq(gguf_open_memory(keep->p, keep->len, &f, NULL), GGUF_OK);
    audit_report r;
    cr_assert_eq(audit_model(f, NULL, &r), AUDIT_OK);
    gguf_close(f);
    return r;
}

/* The same for a shared model. */
static audit_report audit_renamed(const char *model, const char *from, const char *to, tbuf *keep)
{
    char *path = model_path(model);
    if (!path)
        cr_skip_test("%s not found: skipped", model);
    audit_report r = audit_renamed_at(path, from, to, keep);
    free(path);
    return r;
}

static const audit_finding *find_code(const audit_report *r, const char *code, const char *tensor)
{
    for (size_t i = 0; i < r->n_findings; i++)
        if (!strcmp(r->findings[i].code, code) && (!tensor || !strcmp(r->findings[i].tensor, tensor)))
            return &r->findings[i];
    return NULL;
}

/* qwen3 requires its per-head norms in every layer: one missing is an error naming the layer. */
Test(audit, a_required_role_missing_in_one_layer_is_named)
{
    tbuf b;
    audit_report r = audit_renamed("tiny-qwen3-f32.gguf", "blk.2.attn_q_norm.weight", "blk.2.attn_q_nrrm.weight", &b);
    const audit_finding *x = find_code(&r, "missing-tensor", "blk.2.attn_q_norm.weight");
    cr_assert(x, "no missing-tensor finding for blk.2.attn_q_norm.weight");
    cr_assert_eq(x->severity, AUDIT_ERROR);
    cr_assert_eq(x->layer, 2);
    cr_assert(strstr(x->expected, "qwen3") && strstr(x->meaning, "llama.cpp would refuse"), "%s / %s", x->expected,
              x->meaning);
    audit_report_free(&r);
    tbuf_free(&b);
}

/* GLM-4.5's layout (tests/py/moe_arch.py): a dense first layer among layers of experts, and a trailing
 * multi-token prediction block with tensors of its own. Neither is a missing tensor (a dense layer has no router or
 * shared expert, the other layers no dense block), while a layer of experts without its router still is. */
Test(audit, leading_dense_layers_and_prediction_blocks_are_not_missing_tensors)
{
    char dir[128], path[256], why[200];
    if (access(venv_python(), X_OK) != 0)
        cr_skip_test("build/venv not found: skipped");
    cr_assert(tmp_dir_make(dir, "glm4moe"));
    snprintf(path, sizeof path, "%s/glm4moe.gguf", dir);
    cr_assert(heldout_arch_write("heldout-glm4moe", path, why), "%s", why);
    tbuf b;
    audit_report r = audit_renamed_at(path, NULL, NULL, &b);
    char found[2048];
    list(&r, found, sizeof found);
    for (size_t i = 0; i < r.n_findings; i++)
        cr_assert_lt(r.findings[i].severity, AUDIT_WARNING, "findings: %s", found);
    audit_report_free(&r);
    tbuf_free(&b);
    r = audit_renamed_at(path, "blk.2.ffn_gate_inp.weight", "blk.2.ffn_gate_inq.weight", &b);
    const audit_finding *x = find_code(&r, "missing-tensor", "blk.2.ffn_gate_inp.weight");
    cr_assert(x && x->severity == AUDIT_ERROR, "no missing-tensor finding for blk.2's router");
    audit_report_free(&r);
    tbuf_free(&b);
    cr_assert(tmp_dir_remove(dir));
}

/* DeepSeek's latent attention in both forms llama.cpp loads (tests/py/mla_arch.py): neither form's file is missing
 * the other form's tensors, while a split file without one layer's attn_v_b is, by name; the per-head tensors are not
 * judged as experts (a head of attn_k_b is no expert). */
Test(audit, latent_attention_files_are_held_to_their_own_form)
{
    char dir[128], path[256], why[200];
    if (access(venv_python(), X_OK) != 0)
        cr_skip_test("build/venv not found: skipped");
    cr_assert(tmp_dir_make(dir, "deepseek2"));
    static const char *const forms[] = { "heldout-deepseek2", "heldout-deepseek2-whole" };
    for (int k = 0; k < 2; k++) {
        snprintf(path, sizeof path, "%s/%s.gguf", dir, forms[k]);
        cr_assert(heldout_arch_write(forms[k], path, why), "%s", why);
        tbuf b;
        audit_report r = audit_renamed_at(path, NULL, NULL, &b);
        char found[2048];
        list(&r, found, sizeof found);
        for (size_t i = 0; i < r.n_findings; i++)
            cr_assert_lt(r.findings[i].severity, AUDIT_WARNING, "%s findings: %s", forms[k], found);
        audit_report_free(&r);
        tbuf_free(&b);
    }
    tbuf b;
    snprintf(path, sizeof path, "%s/%s.gguf", dir, forms[0]);
    audit_report r = audit_renamed_at(path, "blk.2.attn_v_b.weight", "blk.2.attn_v_c.weight", &b);
    const audit_finding *x = find_code(&r, "missing-tensor", "blk.2.attn_v_b.weight");
    cr_assert(x && x->severity == AUDIT_ERROR, "no missing-tensor finding for blk.2's attn_v_b");
    audit_report_free(&r);
    tbuf_free(&b);
    cr_assert(tmp_dir_remove(dir));
}

/* A per-head norm of the wrong length is a shape error against key_length. */
Test(audit, a_per_head_norm_is_held_to_key_length)
{
    char *path = model_path("tiny-qwen3-f32.gguf");
    if (!path)
        cr_skip_test("tiny-qwen3-f32.gguf not found: skipped");
    tbuf b = read_whole_file(path);
    free(path);
    uint64_t at = tensor_dim_offset(&b, "blk.0.attn_k_norm.weight", 0);
    cr_assert_eq(get_u64le(b.p + at), 96, "tiny-qwen3's head dim");
    put_u64le(b.p + at, 48); /* half the values: the data shrinks, the file still opens */
    gguf_file *f;
    gguf_error ge;
    cr_assert_eq(gguf_open_memory(b.p, b.len, &f, &ge), GGUF_OK, "%s", ge.message);
    audit_report r;
    cr_assert_eq(audit_model(f, NULL, &r), AUDIT_OK);
    const audit_finding *x = find_code(&r, "shape", "blk.0.attn_k_norm.weight");
    cr_assert(x, "no shape finding");
    cr_assert(strstr(x->expected, "[96]") && strstr(x->expected, "key_length"), "%s", x->expected);
    audit_report_free(&r);
    gguf_close(f);
    tbuf_free(&b);
}

/* The two real trained models: no error, no warning; gemma's large norms and SmolLM2's small
 * first-layer norm are explained in notes. */
Test(audit, real_trained_models_have_no_errors_or_warnings)
{
    const char *models[] = { "SmolLM2-135M-Instruct.Q4_1.gguf", "gemma-3-270m-q4_k_m.gguf" };
    int checked = 0;
    for (int i = 0; i < 2; i++) {
        char *path = model_path(models[i]);
        if (!path)
            continue;
        gguf_file *f;
        cr_assert_eq(gguf_open(path, &f, NULL), GGUF_OK);
        audit_stats *st;
        audit_report r = audit_of(f, &st);
        for (size_t k = 0; k < r.n_findings; k++)
            cr_expect_eq(r.findings[k].severity, AUDIT_INFO, "%s: %s %s: %s", models[i], r.findings[k].code,
                         r.findings[k].tensor, r.findings[k].measured);
        cr_assert_not_null(r.hp.g.arch, "%s: its architecture is described", models[i]);
        if (i == 0) {
            const audit_finding *x = find_code(&r, "edge-layer-norm", "blk.0.attn_norm.weight");
            cr_assert(x, "SmolLM2's small layer-0 attn_norm is noted");
        } else {
            const audit_finding *x = find_code(&r, "final-norm-large", "output_norm.weight");
            cr_assert(x && strstr(x->expected, "+1"), "gemma's final norm is explained: %s", x ? x->expected : "");
        }
        audit_report_free(&r);
        free(st);
        gguf_close(f);
        free(path);
        checked++;
    }
    if (!checked)
        cr_skip_test("the real models are not fetched (make models): skipped");
}
