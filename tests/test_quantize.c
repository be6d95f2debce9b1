/*
 * Whole-model quantization (quantize_model_write, gguf-quantize): the files
 * llama-quantize wrote for the shared models are reproduced byte for byte
 * from their F32 sources; on a writer-made model the tensor types follow
 * llama.cpp's Q4_K_M rules, the metadata is carried over and the weights
 * survive; what it cannot do is refused naming the tensor, with nothing
 * written and the input untouched.
 */
#include "fixture_model.h"
#include "golden.h"
#include "model_rules.h"
#include "quant.h"
#include "testutil.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char tmp_dir[64];
static void setup(void) { cr_assert(tmp_dir_make(tmp_dir, "quantize")); }
static void teardown(void) { cr_assert(tmp_dir_remove(tmp_dir)); }
TestSuite(quantize, .init = setup, .fini = teardown, .timeout = 300);

static void tmp_path(char *out, size_t len, const char *name) { snprintf(out, len, "%s/%s", tmp_dir, name); }

/* Files in tmp_dir: only the ones named (no temporary file left behind). */
static int files_in_tmp(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "ls -A '%s' | wc -l", tmp_dir);
    int st;
    char *out = run_capture(cmd, &st);
    int n = out ? atoi(out) : -1;
    free(out);
    return n;
}

static gguf_file *open_path(const char *path)
{
    gguf_file *f;
    gguf_error err;
    cr_assert_eq(gguf_open(path, &f, &err), GGUF_OK, "%s: %s", path, err.message);
    return f;
}

Test(quantize, shared_models_come_out_as_llama_quantize_wrote_them)
{
    static const char *const arches[] = { "llama", "qwen2", "qwen3" };
    static const char *const types[] = { "q4_k_m", "q6_k", "q8_0" };
    int compared = 0;
    for (int a = 0; a < 3; a++) {
        char name[64];
        snprintf(name, sizeof name, "tiny-%s-f32.gguf", arches[a]);
        char *src_path = model_path(name);
        if (!src_path)
            continue;
        gguf_file *src = open_path(src_path);
        for (int t = 0; t < 3; t++) {
            snprintf(name, sizeof name, "tiny-%s-%s.gguf", arches[a], types[t]);
            char *want_path = model_path(name);
            if (!want_path)
                continue;
            quantize_ftype ftype;
            cr_assert(quantize_ftype_parse(types[t], &ftype));
            char out[128];
            tmp_path(out, sizeof out, name);
            gguf_error err;
            cr_assert_eq(quantize_model_write(src, ftype, NULL, out, 2, &err), GGUF_OK, "%s: %s", name, err.message);
            tbuf got = read_whole_file(out), want = read_whole_file(want_path);
            cr_assert_eq(got.len, want.len, "%s: %zu bytes, llama-quantize wrote %zu", name, got.len, want.len);
            size_t i = 0;
            while (i < got.len && got.p[i] == want.p[i])
                i++;
            cr_assert_eq(i, got.len, "%s: first difference from llama-quantize's file at byte %zu", name, i);
            tbuf_free(&got);
            tbuf_free(&want);
            free(want_path);
            compared++;
        }
        gguf_close(src);
        free(src_path);
    }
    if (!compared)
        cr_skip_test("tiny-{llama,qwen2,qwen3}-{f32,q4_k_m,q6_k,q8_0}.gguf not in %s: skipped", models_dir());
    /* llama and qwen2 in three types, qwen3 in two (no tiny-qwen3-q6_k is shared) */
    cr_assert_eq(compared, 8, "every shared pair present is compared (%d)", compared);
}

/* 8 layers: llama.cpp's use_more_bits(i, 8) holds for i < 1, i >= 7 and (i - 1) % 3 == 2, so layers 0, 3, 6 and 7
 * get Q6_K for attn_v and ffn_down. */
static bool more_bits_layer(int l) { return l == 0 || l == 3 || l == 6 || l == 7; }

static void write_fixture(const char *path, uint32_t n_embd, bool f16_output)
{
    fixture_opts o = fixture_default_opts();
    o.n_layer = 8;
    o.n_embd = n_embd;
    o.n_ff = 2 * n_embd;
    o.n_vocab = 300;
    o.f16_output = f16_output;
    gguf_error err;
    cr_assert_eq(fixture_write_file(path, &o, &err), GGUF_OK, "%s", err.message);
}

Test(quantize, q4_k_m_of_a_writer_made_model_follows_llama_cpp_s_rules)
{
    char in[128], out[128];
    tmp_path(in, sizeof in, "f16.gguf");
    tmp_path(out, sizeof out, "q4km.gguf");
    write_fixture(in, 256, true);
    gguf_file *src = open_path(in);
    gguf_error err;
    cr_assert_eq(quantize_model_write(src, QUANTIZE_FTYPE_Q4_K_M, NULL, out, 0, &err), GGUF_OK, "%s", err.message);
    gguf_file *q = open_path(out);

    /* metadata: the source's keys in order, then the two llama-quantize sets */
    size_t k = 0;
    for (size_t i = 0; i < gguf_kv_count(src); i++) {
        const gguf_kv *a = gguf_kv_at(src, i);
        if (strcmp(a->key, "general.file_type") == 0)
            continue;
        const gguf_kv *b = gguf_kv_at(q, k++);
        cr_assert_str_eq(b->key, a->key);
        cr_assert(gguf_value_equal(&a->value, &b->value), "key %s changed", a->key);
    }
    cr_assert_str_eq(gguf_kv_at(q, k)->key, "general.quantization_version");
    cr_assert_str_eq(gguf_kv_at(q, k + 1)->key, "general.file_type");
    uint32_t ft;
    cr_assert_eq(gguf_get_u32(q, "general.file_type", &ft, NULL), GGUF_OK);
    cr_assert_eq(ft, 15, "LLAMA_FTYPE_MOSTLY_Q4_K_M");

    /* order: tensors outside the blocks by name, then block by block */
    cr_assert_eq(gguf_tensor_count(q), gguf_tensor_count(src));
    cr_assert_str_eq(gguf_tensor_at(q, 0)->name, "output.weight");
    cr_assert_str_eq(gguf_tensor_at(q, 1)->name, "output_norm.weight");
    cr_assert_str_eq(gguf_tensor_at(q, 2)->name, "token_embd.weight");
    cr_assert_str_eq(gguf_tensor_at(q, 3)->name, "blk.0.attn_k.weight");

    for (size_t i = 0; i < gguf_tensor_count(q); i++) {
        const gguf_tensor *t = gguf_tensor_at(q, i), *s = gguf_tensor_by_name(src, t->name);
        cr_assert_not_null(s, "%s is not in the source", t->name);
        if (i > 3) {
            const char *prev = gguf_tensor_at(q, i - 1)->name;
            const int layer = atoi(t->name + 4), prev_layer = atoi(prev + 4);
            cr_assert(layer > prev_layer || (layer == prev_layer && strcmp(t->name, prev) > 0), "%s after %s",
                      t->name, prev);
        }
        uint32_t want;
        if (s->n_dims == 1)
            want = s->type;
        else if (strcmp(t->name, "output.weight") == 0)
            want = GGUF_TENSOR_Q6_K;
        else if (strstr(t->name, "attn_v") || strstr(t->name, "ffn_down"))
            want = more_bits_layer(atoi(t->name + 4)) ? GGUF_TENSOR_Q6_K : GGUF_TENSOR_Q4_K;
        else
            want = GGUF_TENSOR_Q4_K;
        cr_assert_eq(t->type, want, "%s: %s, llama.cpp's rule gives %s", t->name, gguf_type_traits_of(t->type)->name,
                     gguf_type_traits_of(want)->name);
        if (t->type == s->type) {
            cr_assert_eq(t->size, s->size);
            cr_assert(memcmp(t->data, s->data, t->size) == 0, "%s is copied as it is", t->name);
            continue;
        }
        /* the weights survive: the relative rms error is what 4 or 6 bits give */
        float *a = malloc(s->n_elements * sizeof(float)), *b = malloc(s->n_elements * sizeof(float));
        cr_assert_eq(quant_dequantize_rows(s, 0, s->n_elements / s->ne[0], a, 1), QUANT_OK);
        cr_assert_eq(quant_dequantize_rows(t, 0, t->n_elements / t->ne[0], b, 1), QUANT_OK);
        double e2 = 0, x2 = 0;
        for (uint64_t j = 0; j < s->n_elements; j++) {
            e2 += (a[j] - b[j]) * (double)(a[j] - b[j]);
            x2 += (double)a[j] * a[j];
        }
        const double rel = sqrt(e2 / x2);
        cr_assert_lt(rel, t->type == GGUF_TENSOR_Q4_K ? 0.12 : 0.03, "%s: relative rms error %.4f", t->name, rel);
        cr_assert_gt(rel, 0.0, "%s was quantized, not copied", t->name);
        free(a);
        free(b);
    }
    gguf_close(q);
    gguf_close(src);
}

Test(quantize, what_it_cannot_write_is_refused_naming_the_tensor)
{
    char in[128], out[128];
    tmp_path(out, sizeof out, "never.gguf");
    gguf_error err;

    tmp_path(in, sizeof in, "q8out.gguf"); /* output.weight is already Q8_0 */
    write_fixture(in, 256, false);
    gguf_file *f = open_path(in);
    cr_assert_eq(quantize_model_write(f, QUANTIZE_FTYPE_Q4_K_M, NULL, out, 0, &err), GGUF_E_INVALID_ARG);
    cr_assert_str_eq(err.subject, "output.weight");
    cr_assert(strstr(err.message, "Q8_0") && strstr(err.message, "F16"), "%s", err.message);
    cr_assert_eq(quantize_model_write(f, QUANTIZE_FTYPE_Q8_0, NULL, out, 0, &err), GGUF_OK,
                 "Q8_0 keeps a Q8_0 output as it is: %s", err.message);
    unlink(out);
    gguf_close(f);

    /* rows of 96 values: no K block fits; llama.cpp falls back to Q5_0 for Q4_K and to Q8_0 for Q6_K */
    tmp_path(in, sizeof in, "e96.gguf");
    write_fixture(in, 96, true);
    f = open_path(in);
    char out96[128];
    tmp_path(out96, sizeof out96, "e96-q4_k_m.gguf");
    cr_assert_eq(quantize_model_write(f, QUANTIZE_FTYPE_Q4_K_M, NULL, out96, 0, &err), GGUF_OK, "%s", err.message);
    gguf_file *q = open_path(out96);
    cr_assert_eq(gguf_tensor_by_name(q, "blk.1.attn_q.weight")->type, GGUF_TENSOR_Q5_0);
    cr_assert_eq(gguf_tensor_by_name(q, "blk.0.attn_v.weight")->type, GGUF_TENSOR_Q8_0, "a more-bits Q6_K layer");
    gguf_close(q);
    unlink(out96);
    gguf_close(f);

    cr_assert_eq(files_in_tmp(), 2, "nothing written for the refused models");
}

Test(quantize, other_architectures_are_refused)
{
    tbuf b = base_file(); /* general.architecture of the base file is not a described one */
    gguf_file *f;
    gguf_error err;
    cr_assert_eq(gguf_open_memory(b.p, b.len, &f, &err), GGUF_OK);
    char out[128];
    tmp_path(out, sizeof out, "never.gguf");
    cr_assert_eq(quantize_model_write(f, QUANTIZE_FTYPE_Q8_0, NULL, out, 0, &err), GGUF_E_INVALID_ARG);
    cr_assert_str_eq(err.subject, "general.architecture");
    static const char *const named[] = { "llama, ", "qwen2, ", "qwen3, ", "qwen3moe", "deepseek2", "gemma3" };
    for (size_t i = 0; i < sizeof named / sizeof named[0]; i++)
        cr_assert(strstr(err.message, named[i]), "'%s' is not named: %s", named[i], err.message);
    cr_assert_eq(files_in_tmp(), 0);
    gguf_close(f);
    tbuf_free(&b);
}

Test(quantize, the_tool_writes_its_output_and_never_its_input)
{
    char in[128], out[128], args[512];
    tmp_path(in, sizeof in, "f16.gguf");
    tmp_path(out, sizeof out, "q8.gguf");
    write_fixture(in, 256, true);
    tbuf before = read_whole_file(in);
    int st;

    snprintf(args, sizeof args, "'%s' '%s' Q4_K_M --dry-run 2>&1", in, out);
    char *text = run_tool("gguf-quantize", args, &st);
    cr_assert_eq(st, 0, "%s", text);
    cr_assert(strstr(text, "blk.3.ffn_down.weight") && strstr(text, "Q6_K"), "the plan lists each tensor: %s", text);
    cr_assert_eq(access(out, F_OK), -1, "--dry-run writes nothing");
    free(text);

    snprintf(args, sizeof args, "'%s' '%s' q8_0 --threads 2 2>&1", in, out);
    text = run_tool("gguf-quantize", args, &st);
    cr_assert_eq(st, 0, "%s", text);
    free(text);
    gguf_file *q = open_path(out);
    cr_assert_eq(gguf_tensor_by_name(q, "blk.0.attn_q.weight")->type, GGUF_TENSOR_Q8_0);
    gguf_close(q);

    snprintf(args, sizeof args, "'%s' '%s' Q4_K_M 2>&1", in, in);
    text = run_tool("gguf-quantize", args, &st);
    cr_assert_eq(st, 2, "the output would replace the input: %s", text);
    free(text);
    snprintf(args, sizeof args, "'%s' '%s' Q3_K 2>&1", in, out);
    text = run_tool("gguf-quantize", args, &st);
    cr_assert_eq(st, 2);
    cr_assert(strstr(text, "unknown type 'Q3_K'"), "%s", text);
    free(text);
    snprintf(args, sizeof args, "'%s/missing.gguf' '%s' Q8_0 2>&1", tmp_dir, out);
    text = run_tool("gguf-quantize", args, &st);
    cr_assert_eq(st, 2, "%s", text);
    free(text);

    tbuf after = read_whole_file(in);
    cr_assert(before.len == after.len && memcmp(before.p, after.p, before.len) == 0, "the input is never written");
    cr_assert_eq(files_in_tmp(), 2, "no temporary file is left behind");
    tbuf_free(&before);
    tbuf_free(&after);
}

static void sha256_of(const char *path, char hex[65])
{
    gguf_digest d;
    gguf_error err;
    uint64_t size;
    cr_assert_eq(gguf_file_sha256_path(path, &d, &size, &err), GGUF_OK, "%s", err.message);
    gguf_digest_hex(&d, hex);
}

/* gemma3 and qwen3 models our writer makes (gguf-mkfixture OUT --arch A --layers 8 --embd E --ff 2E --vocab 300
 * --f16-output), quantized: the sha256 of what llama-quantize wrote for the same files (llama.cpp from the
 * llama-cpp-python 0.3.36 sdist, built outside the project; the vendored llama-quantize also reproduces the
 * shared tiny-llama-q4_k_m byte for byte). 96-value rows take llama.cpp's fallbacks (Q5_0 for Q4_K, Q8_0 for
 * Q6_K). The source's own sha256 is checked first, so a change of the fixture is not blamed on the quantizer. */
Test(quantize, gemma3_and_qwen3_come_out_as_llama_quantize_writes_them)
{
    static const struct {
        const char *arch;
        uint32_t embd;
        const char *type, *source, *want;
    } cases[] = {
        { "gemma3", 256, "Q4_K_M", "ba550186961cc718525969bf971445be67d6589048c67fc2dd186f92c2db19f4",
          "ee00994ac8f2b1ab65f3ad624b8aafeb2abe949c06e682579a04c95a6f1701e6" },
        { "gemma3", 256, "Q6_K", "ba550186961cc718525969bf971445be67d6589048c67fc2dd186f92c2db19f4",
          "97e92a5cf0c78c6a25f03e14f2d6a0490f697341d914023fbabab1b8e66ae4d8" },
        { "gemma3", 96, "Q4_K_M", "9e156ae29c34e3102d14bf68307c2e7950dc808decadc2f2e8a1c064b6bddb21",
          "50da1a1e680486989675488da568faaeee3ee7e558ba978f3706142cf7ce85b4" },
        { "gemma3", 96, "Q8_0", "9e156ae29c34e3102d14bf68307c2e7950dc808decadc2f2e8a1c064b6bddb21",
          "f3362abc800bfaffe3f9968d6ba4a1d20441c4a76bcef29d45589864a5726c09" },
        { "qwen3", 96, "Q4_K_M", "e0621fca7159f3a328768cee94e33da164f2e50b2aabf90008fcf66c0132b838",
          "e6718d39d6d098725952df0b9082178b6c9dd97d6c0f0dd60223bdf6fd9c00ee" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        fixture_opts o = fixture_default_opts();
        o.arch = cases[i].arch;
        o.n_layer = 8;
        o.n_embd = cases[i].embd;
        o.n_ff = 2 * cases[i].embd;
        o.n_vocab = 300;
        o.f16_output = true;
        char in[128], out[128], hex[65];
        tmp_path(in, sizeof in, "src.gguf");
        tmp_path(out, sizeof out, "q.gguf");
        gguf_error err;
        cr_assert_eq(fixture_write_file(in, &o, &err), GGUF_OK, "%s", err.message);
        sha256_of(in, hex);
        cr_assert_str_eq(hex, cases[i].source, "%s e%u: the writer's fixture changed; llama-quantize's digests are "
                         "of the old one", cases[i].arch, cases[i].embd);
        quantize_ftype ftype;
        cr_assert(quantize_ftype_parse(cases[i].type, &ftype));
        gguf_file *src = open_path(in);
        cr_assert_eq(quantize_model_write(src, ftype, NULL, out, 2, &err), GGUF_OK, "%s: %s", cases[i].arch, err.message);
        gguf_close(src);
        sha256_of(out, hex);
        cr_assert_str_eq(hex, cases[i].want, "%s e%u %s differs from llama-quantize's file", cases[i].arch,
                         cases[i].embd, cases[i].type);
        unlink(in);
        unlink(out);
    }
}

/* Every other architecture, and stories260K (whose n_ff of 172 fits no block: llama.cpp keeps those matrices in
 * F16), quantized to Q8_0, Q4_K_M and Q6_K, and the mixtures to MXFP4_MOE (the experts in MXFP4, as gpt-oss is
 * released; the shared tiny-gptoss-mxfp4.gguf is one): the sha256 of what llama-quantize wrote for the same source
 * (tests/data/llama_quantize_sha256.tsv), and the held-out GLM-4.5 shape (its dense first layer among layers of
 * experts, its selection bias, its prediction block). The mixtures exercise the experts' 3-D tensors, the router kept in F32,
 * the 8-expert rules (attn_v and attn_k in Q8_0, attn_output in Q5_K), ffn_down's layer read from the name; phi3
 * its fused attn_qkv; rows of 128 values the fallbacks; DeepSeek's latent attention (attn_kv_b counted as attn_v,
 * attn_output's rows of 96 taking Q5_K's fallback, Q5_1). The synthetic sources are checked against the golden
 * README's sha256 by synth_arch_write, so a changed source is not blamed on the quantizer. */
Test(quantize, every_architecture_comes_out_as_llama_quantize_writes_it, .timeout = 1200)
{
    FILE *fp = fopen("tests/data/llama_quantize_sha256.tsv", "r");
    cr_assert(fp, "tests/data/llama_quantize_sha256.tsv is missing");
    char line[256], done[64] = "";
    size_t checked = 0;
    while (fgets(line, sizeof line, fp)) {
        char source[64], type[16], want[65], in[160], out[160], hex[65], why[200] = "";
        if (line[0] == '#' || sscanf(line, "%63s %15s %64s", source, type, want) != 3)
            continue;
        if (strcmp(source, "stories260K") == 0) {
            char *p = model_path("stories260K.gguf");
            if (!p)
                continue;
            snprintf(in, sizeof in, "%s", p);
            free(p);
        } else {
            snprintf(in, sizeof in, "%s/%s-f32.gguf", tmp_dir, source);
            if (strcmp(done, source) != 0) { /* written once per source (the rows are grouped) */
                /* tests/py/heldout_arch.py's shapes (test_engine_arch checks their sha256), synth_arch.py's presets */
                int w = strncmp(source, "heldout-", 8) ? synth_arch_write(source, in, why)
                                                       : heldout_arch_write(source, in, why) ? 1 : -1;
                cr_assert_geq(w, 0, "%s: %s", source, why);
                if (w == 0)
                    cr_skip("synth_arch.py or the venv is not here: the synthetic architectures cannot be written");
                snprintf(done, sizeof done, "%s", source);
            }
        }
        quantize_ftype ftype;
        cr_assert(quantize_ftype_parse(type, &ftype));
        tmp_path(out, sizeof out, "q.gguf");
        gguf_file *src = open_path(in);
        gguf_error err;
        cr_assert_eq(quantize_model_write(src, ftype, NULL, out, 2, &err), GGUF_OK, "%s %s: %s", source, type,
                     err.message);
        gguf_close(src);
        sha256_of(out, hex);
        cr_expect_str_eq(hex, want, "%s %s differs from llama-quantize's file", source, type);
        unlink(out);
        checked++;
    }
    fclose(fp);
    cr_assert_geq(checked, 28, "%zu of the table's files checked", checked);
}

/* llama-quantize's --tensor-type NAME=TYPE: the sha256 of what it wrote with each override (made here like
 * tests/data/llama_quantize_sha256.tsv). A manual type skips the mix's rules and their counters: overriding blk.1's
 * attn_v moves Q4_K_M's "more bits" layers of the others (blk.2 stays Q4_K), which llama-quantize's file shows. */
Test(quantize, tensor_type_overrides_come_out_as_llama_quantize_writes_them)
{
    char *llama = model_path("tiny-llama-f32.gguf");
    if (!llama)
        cr_skip("tiny-llama-f32.gguf is not in the shared models");
    static const struct { const char *spec, *want; } cases[] = {
        { "blk\\.1\\.attn_v\\.weight=q8_0", "46eb19d4c4ac86c7a1a1019631e794955c44b5b8af3b7e84a88f33d15055ae0f" },
        { "ffn_down=Q5_0", "0df2f669efc92c99652cac25479223eaf38d1eaae3fc48b9ce131702f3a21140" },
        { "attn_(q|k)=q6_k", "15462016575afc4a0cd56bb6841992fe2a71fa56253030447ecd548de0356e1a" },
        { "token_embd=f16", "496e9103b06819b2944219b83405ae3618c4b2ce4c7e1027f041a593801d8edf" },
    };
    char out[160], hex[65], args[1024];
    tmp_path(out, sizeof out, "o.gguf");
    sha256_of(llama, hex);
    cr_assert_str_eq(hex, "8fee805ff27b2e9a4d8b4d921d59bcdeabab707d609d087c4dc0a7f3780f1238", "the source changed");
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        snprintf(args, sizeof args, "'%s' '%s' Q4_K_M --tensor-type '%s' 2>&1", llama, out, cases[i].spec);
        int st;
        char *log = run_tool("gguf-quantize", args, &st);
        cr_assert_eq(st, 0, "%s", log);
        free(log);
        sha256_of(out, hex);
        cr_expect_str_eq(hex, cases[i].want, "--tensor-type %s differs from llama-quantize's file", cases[i].spec);
        unlink(out);
    }
    static const char *const bad[] = { "attn_v", "=q8_0", "attn_v=iq2_xxs", "attn_(v=q8_0" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        snprintf(args, sizeof args, "'%s' '%s' Q4_K_M --tensor-type '%s' 2>&1", llama, out, bad[i]);
        int st;
        char *log = run_tool("gguf-quantize", args, &st);
        cr_expect(st == 2 && strstr(log, "--tensor-type"), "%s: %s", bad[i], log);
        free(log);
    }
    cr_expect_eq(access(out, F_OK), -1, "nothing written for a refused override");
    free(llama);
}

/* A quantized download made into another type (an NVFP4 conversion or a Q8_0 file into Q4_K_M for a CPU), as
 * llama-quantize --allow-requantize writes it: refused without the option, naming it; with it, each weight decoded
 * from its blocks (NVFP4's 64 values under Q8_0's 32) and quantized again, byte for byte llama-quantize's file (its
 * sha256 from llama-cpp-python 0.3.36's llama-quantize SRC OUT TYPE 1 --allow-requantize). */
Test(quantize, a_quantized_file_is_requantized_as_llama_quantize_does, .timeout = 300)
{
    char dir[128], src[256], out[256], hex[65], why[200], args[1024];
    if (access(venv_python(), X_OK) != 0)
        cr_skip_test("build/venv not found: skipped");
    cr_assert(tmp_dir_make(dir, "requant"));
    snprintf(src, sizeof src, "%s/nvfp4.gguf", dir);
    snprintf(out, sizeof out, "%s/out.gguf", dir);
    cr_assert(heldout_arch_write("heldout-nvfp4", src, why), "%s", why);
    char *q8 = model_path("tiny-llama-q8_0.gguf");
    const struct { const char *src, *type, *want; } cases[] = {
        { src, "Q8_0", "8a92fdac7f642527a96c3019e8559a8da63502652c4c087ddaf2a0791ef0f97e" },
        { src, "Q4_K_M", "71bcd15d06de97358002ff2f578b0a855551c2a3ee0cce7eec7d933e8d49449c" },
        { q8, "Q4_K_M", "103417cd337d5590cc077b861b6d0a511284a293a44b2bf32941a275266864eb" },
    };
    int st;
    snprintf(args, sizeof args, "'%s' '%s' Q8_0 2>&1", src, out);
    char *log = run_tool("gguf-quantize", args, &st);
    cr_expect(st == 2 && strstr(log, "is NVFP4") && strstr(log, "--allow-requantize"), "%s", log);
    free(log);
    cr_expect_eq(access(out, F_OK), -1, "nothing written without the option");
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        if (!cases[i].src) {
            cr_log_warn("tiny-llama-q8_0.gguf is not in the shared models: its case skipped");
            continue;
        }
        snprintf(args, sizeof args, "'%s' '%s' %s --allow-requantize 2>&1", cases[i].src, out, cases[i].type);
        log = run_tool("gguf-quantize", args, &st);
        cr_assert_eq(st, 0, "%s", log);
        free(log);
        sha256_of(out, hex);
        cr_expect_str_eq(hex, cases[i].want, "%s to %s differs from llama-quantize's file", cases[i].src,
                         cases[i].type);
        unlink(out);
    }
    free(q8);
    cr_assert(tmp_dir_remove(dir));
}

/* llama.cpp's loader types an 80-layer llama with grouped key/value heads LLM_TYPE_70B (Llama 2/3 70B; qwen2's and
 * OLMo's 80 layers, DeciLM's, Jais 2's 68 likewise: model_arch.quantize_70b_layers), and llama-quantize then gives its
 * attn_v Q5_K where a mix gives Q4_K. llama-quantize's files of an 80-layer llama of these shapes (n_embd 256, 4
 * heads on 2) have attn_v in Q6_K in 40 layers and Q5_K in 40 for Q4_K_M and Q5_K_M, Q5_K in all 80 for Q4_K_S; 79
 * layers are no 70B: its Q4_K_M file has 39 in Q6_K and the other 40 in Q4_K. */
Test(quantize, a_70b_model_s_attn_v_gets_llama_quantize_s_extra_bits, .timeout = 120)
{
    const struct { uint32_t n_layer; quantize_ftype ftype; int q6_k, q5_k, q4_k; } cases[] = {
        { 80, QUANTIZE_FTYPE_Q4_K_M, 40, 40, 0 }, { 80, QUANTIZE_FTYPE_Q5_K_M, 40, 40, 0 },
        { 80, QUANTIZE_FTYPE_Q4_K_S, 0, 80, 0 },  { 79, QUANTIZE_FTYPE_Q4_K_M, 39, 0, 40 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        fixture_opts o = fixture_default_opts();
        o.n_layer = cases[i].n_layer;
        o.n_embd = 256;
        o.n_ff = 256;
        o.n_vocab = 300;
        o.f16_output = true;
        uint8_t *buf;
        size_t len;
        gguf_error err;
        cr_assert_eq(fixture_write_buffer(&o, &buf, &len, &err), GGUF_OK, "%s", err.message);
        gguf_file *f;
        cr_assert_eq(gguf_open_memory(buf, len, &f, &err), GGUF_OK, "%s", err.message);
        quantize_plan_entry *plan;
        size_t n;
        cr_assert_eq(quantize_model_plan(f, cases[i].ftype, NULL, &plan, &n, &err), GGUF_OK, "%s", err.message);
        int q6_k = 0, q5_k = 0, q4_k = 0;
        for (size_t k = 0; k < n; k++) {
            if (!strstr(plan[k].src->name, "attn_v.weight"))
                continue;
            q6_k += plan[k].type == GGUF_TENSOR_Q6_K, q5_k += plan[k].type == GGUF_TENSOR_Q5_K;
            q4_k += plan[k].type == GGUF_TENSOR_Q4_K;
        }
        cr_expect(q6_k == cases[i].q6_k && q5_k == cases[i].q5_k && q4_k == cases[i].q4_k,
                  "%u layers, %s: attn_v %d Q6_K, %d Q5_K, %d Q4_K", cases[i].n_layer,
                  quantize_ftype_name(cases[i].ftype), q6_k, q5_k, q4_k);
        free(plan);
        gguf_close(f);
        free(buf);
    }
}
