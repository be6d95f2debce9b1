/* quant/: bit-exact dequantization of every type against the reference
 * `gguf` package and ggml's own test vectors, exact f16/bf16 conversion,
 * and quantizers equal to the reference. */
#include "fixture_model.h"
#include "quant.h"
#include "row_kernels.h"
#include "random_blocks.h"
#include "testutil.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>


static void write_bytes(const char *path, const void *p, size_t n)
{
    FILE *fp = fopen(path, "wb");
    cr_assert_not_null(fp);
    cr_assert_eq(fwrite(p, 1, n, fp), n);
    fclose(fp);
}

static void *read_bytes(const char *path, size_t *n)
{
    FILE *fp = fopen(path, "rb");
    cr_assert_not_null(fp, "cannot read %s", path);
    fseek(fp, 0, SEEK_END);
    *n = (size_t)ftell(fp);
    fseek(fp, 0, SEEK_SET);
    void *p = malloc(*n ? *n : 1);
    cr_assert_eq(fread(p, 1, *n, fp), *n);
    fclose(fp);
    return p;
}

static void py(const char *args)
{
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "'%s' tests/py/quant_ref.py %s", venv_python(), args);
    int st;
    free(run_capture(cmd, &st));
    cr_assert_eq(st, 0, "reference failed: %s (is build/venv set up? run make test)", cmd);
}

Test(quant, random_blocks_of_every_type_match_the_gguf_package, .timeout = 300)
{
    int tested = 0;
    for (uint32_t type = 0; type < GGUF_TENSOR_COUNT; type++) {
        if (!quant_can_dequantize(type))
            continue;
        const gguf_type_traits *tt = gguf_type_traits_of(type);
        const size_t n_blocks = tt->block_size == 1 ? 4096 : 97;
        const size_t bytes = n_blocks * tt->type_size, n = n_blocks * tt->block_size;
        uint8_t *raw = malloc(bytes);
        for (size_t i = 0; i < n_blocks; i++)
            test_random_block(type, raw + i * tt->type_size, tt->type_size);
        char in[64], out[80], args[256];
        snprintf(in, sizeof in, "/tmp/ggufscope-q-%d-%s.bin", (int)getpid(), tt->name);
        snprintf(out, sizeof out, "%s.f32", in);
        write_bytes(in, raw, bytes);
        snprintf(args, sizeof args, "deq %u %s %s", type, in, out);
        py(args);
        size_t ref_len;
        float *ref = read_bytes(out, &ref_len);
        cr_assert_eq(ref_len, n * sizeof(float), "%s: reference gave %zu bytes", tt->name, ref_len);
        float *ours = malloc(n * sizeof(float));
        cr_assert_eq(quant_dequantize_row(type, raw, ours, (int64_t)n), QUANT_OK, "%s", tt->name);
        size_t nonzero = 0;
        for (size_t i = 0; i < n; i++) {
            uint32_t a, b;
            memcpy(&a, &ours[i], 4);
            memcpy(&b, &ref[i], 4);
            cr_assert_eq(a, b, "%s: element %zu (block %zu): ours %.9g (0x%08x), gguf %.9g (0x%08x)", tt->name, i,
                         i / tt->block_size, ours[i], a, ref[i], b);
            nonzero += ours[i] != 0.0f;
        }
        cr_assert_gt(nonzero, n / 2, "%s: mostly zeros proves nothing", tt->name);
        free(ours);
        free(ref);
        free(raw);
        unlink(in);
        unlink(out);
        tested++;
    }
    cr_assert_geq(tested, 28, "F32 F16 BF16, 6 legacy, 6 K-quants, 9 i-quants, TQ1_0 TQ2_0 MXFP4 NVFP4");
}

Test(quant, ggml_test_vectors_bit_exact, .timeout = 120)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/quant-testvectors.gguf", models_dir());
    if (access(path, R_OK) != 0)
        cr_skip_test("%s not present: skipped", path);
    gguf_file *f;
    gguf_error err;
    cr_assert_eq(gguf_open(path, &f, &err), GGUF_OK, "%s", err.message);
    int checked = 0;
    for (size_t i = 0; i < gguf_tensor_count(f); i++) {
        const gguf_tensor *q = gguf_tensor_at(f, i);
        if (strncmp(q->name, "q.", 2) != 0)
            continue;
        char want_name[64];
        snprintf(want_name, sizeof want_name, "deq.%s", q->name + 2);
        const gguf_tensor *want = gguf_tensor_by_name(f, want_name);
        cr_assert_not_null(want, "%s has no %s", q->name, want_name);
        cr_assert_eq(want->n_elements, q->n_elements);
        float *ours = malloc(q->n_elements * sizeof(float));
        cr_assert_eq(quant_dequantize_rows(q, 0, q->n_elements / q->ne[0], ours, 0), QUANT_OK, "%s", q->name);
        for (uint64_t k = 0; k < q->n_elements; k++) {
            uint32_t a, b;
            memcpy(&a, &ours[k], 4);
            memcpy(&b, want->data + 4 * k, 4);
            cr_assert_eq(a, b, "%s element %llu: ours 0x%08x, ggml 0x%08x", q->name, (unsigned long long)k, a, b);
        }
        free(ours);
        checked++;
    }
    cr_assert_eq(checked, 19, "19 quantized types in the test vectors");
    gguf_close(f);
}

Test(quant, every_tensor_of_every_shared_model_matches_the_gguf_package, .timeout = 600)
{
    static const char *models[] = {
        "stories260K.gguf", "stories260K-f16.gguf", "stories260K-bf16.gguf", "stories260K-q4_0mix.gguf",
        "stories260K-q5_0mix.gguf", "stories260K-q5_1mix.gguf", "stories260K-q8_0mix.gguf",
        "stories260K-iq4_nlmix.gguf", "llama-2-tiny-random.gguf", "tiny-llama-q4_k_m.gguf",
        "tiny-llama-q5_k_m.gguf", "tiny-llama-q6_k.gguf", "tiny-llama-q8_0.gguf", "tiny-llama-q4_0.gguf",
        "tiny-llama-f16.gguf", "tiny-qwen2-q4_k_m.gguf", "tiny-qwen2-q5_k_m.gguf", "tiny-qwen2-q6_k.gguf",
        "tiny-qwen2-q4_0.gguf", "tiny-qwen2-q8_0.gguf", "tiny-qwen2-f16.gguf",
    };
    int checked = 0;
    for (size_t m = 0; m < sizeof models / sizeof models[0]; m++) {
        char path[4096], out[64], args[4300];
        snprintf(path, sizeof path, "%s/%s", models_dir(), models[m]);
        if (access(path, R_OK) != 0)
            continue;
        snprintf(out, sizeof out, "/tmp/ggufscope-model-%d.f32", (int)getpid());
        snprintf(args, sizeof args, "model '%s' %s", path, out);
        py(args);
        size_t ref_len;
        float *ref = read_bytes(out, &ref_len);
        unlink(out);
        gguf_file *f;
        cr_assert_eq(gguf_open(path, &f, NULL), GGUF_OK);
        size_t at = 0;
        for (size_t i = 0; i < gguf_tensor_count(f); i++) {
            const gguf_tensor *t = gguf_tensor_at(f, i);
            cr_assert_leq((at + t->n_elements) * 4, ref_len);
            float *ours = malloc(t->n_elements * sizeof(float));
            cr_assert_eq(quant_dequantize_rows(t, 0, t->n_elements / t->ne[0], ours, 2), QUANT_OK, "%s", t->name);
            cr_assert(memcmp(ours, ref + at, t->n_elements * 4) == 0, "%s: %s (%s) differs from the gguf package",
                      models[m], t->name, gguf_type_traits_of(t->type)->name);
            at += t->n_elements;
            free(ours);
        }
        cr_assert_eq(at * 4, ref_len);
        gguf_close(f);
        free(ref);
        checked++;
    }
    if (checked == 0)
        cr_skip_test("no shared models in %s: skipped", models_dir());
}

/* ---- f16 / bf16 ---- */

Test(quant, every_f16_converts_as_numpy_does)
{
    char out[64], args[128];
    snprintf(out, sizeof out, "/tmp/ggufscope-f16-%d.f32", (int)getpid());
    snprintf(args, sizeof args, "f16 %s", out);
    py(args);
    size_t n;
    float *ref = read_bytes(out, &n);
    unlink(out);
    cr_assert_eq(n, 65536 * 4);
    for (uint32_t h = 0; h < 65536; h++) {
        float v = quant_f16_to_f32((uint16_t)h);
        uint32_t a, b;
        memcpy(&a, &v, 4);
        memcpy(&b, &ref[h], 4);
        cr_assert_eq(a, b, "f16 0x%04x: ours 0x%08x, numpy 0x%08x", h, a, b);
    }
    free(ref);
}

Test(quant, f16_round_trips_and_rounds_to_nearest_even)
{
    for (uint32_t h = 0; h < 65536; h++) {
        const float v = quant_f16_to_f32((uint16_t)h);
        const uint16_t back = quant_f32_to_f16(v);
        if (isnan(v)) {
            cr_assert_eq(back, h | 0x200u, "NaN 0x%04x keeps its payload, quieted", h);
            continue;
        }
        cr_assert_eq(back, h, "0x%04x -> %g -> 0x%04x", h, v, back);
        /* the midpoint to the next representable value rounds to the even one */
        if ((h & 0x7fffu) >= 0x7bffu)
            continue;
        const float next = quant_f16_to_f32((uint16_t)(h + 1));
        const float mid = (v + next) / 2; /* exact in f32 */
        cr_assert_eq(quant_f32_to_f16(mid), (h & 1u) ? h + 1 : h, "midpoint after 0x%04x", h);
        cr_assert_eq(quant_f32_to_f16(nextafterf(mid, next)), h + 1);
        cr_assert_eq(quant_f32_to_f16(nextafterf(mid, v)), h);
    }
    cr_assert_eq(quant_f32_to_f16(65520.0f), 0x7c00, "rounds up to infinity");
    cr_assert_eq(quant_f32_to_f16(65519.996f), 0x7bff);
    cr_assert_eq(quant_f32_to_f16(-INFINITY), 0xfc00);
    cr_assert_eq(quant_f32_to_f16(ldexpf(1, -25)), 0, "half of the smallest subnormal rounds to even (zero)");
    cr_assert_eq(quant_f32_to_f16(nextafterf(ldexpf(1, -25), 1)), 1);
}

Test(quant, bf16_is_exact_both_ways)
{
    for (uint32_t h = 0; h < 65536; h++) {
        const float v = quant_bf16_to_f32((uint16_t)h);
        uint32_t bits;
        memcpy(&bits, &v, 4);
        cr_assert_eq(bits, h << 16);
        const uint16_t back = quant_f32_to_bf16(v);
        cr_assert_eq(back, isnan(v) ? (h | 0x40u) : h, "0x%04x -> 0x%04x", h, back);
    }
    cr_assert_eq(quant_f32_to_bf16(1.00390625f), 0x3f80, "a tie rounds to even");
    cr_assert_eq(quant_f32_to_bf16(1.01171875f), 0x3f82, "a tie rounds to even (up)");
}

/* ---- quantizers ---- */

Test(quant, quantizers_equal_the_gguf_package_and_stay_within_bounds, .timeout = 120)
{
    static const uint32_t types[] = { GGUF_TENSOR_F16, GGUF_TENSOR_BF16, GGUF_TENSOR_Q8_0, GGUF_TENSOR_Q4_0,
                                      GGUF_TENSOR_Q5_1 };
    const size_t n = 32 * 512;
    float *x = malloc(n * sizeof(float)), *back = malloc(n * sizeof(float));
    for (size_t i = 0; i < n; i++) /* blocks of very different magnitudes, and some exact ties */
        x[i] = fixture_value(7, i, 1.0f) * ldexpf(1.0f, (int)((i / 32) % 24) - 12);
    for (size_t i = 0; i < n; i += 97)
        x[i] = 0.5f * ldexpf(1.0f, (int)((i / 32) % 24) - 12);
    for (size_t k = 0; k < sizeof types / sizeof types[0]; k++) {
        const gguf_type_traits *tt = gguf_type_traits_of(types[k]);
        const size_t bytes = n / tt->block_size * tt->type_size;
        uint8_t *ours = malloc(bytes);
        cr_assert_eq(quant_quantize_row(types[k], x, ours, (int64_t)n), QUANT_OK);
        char in[64], out[80], args[256];
        snprintf(in, sizeof in, "/tmp/ggufscope-qin-%d.f32", (int)getpid());
        snprintf(out, sizeof out, "%s.%s", in, tt->name);
        write_bytes(in, x, n * sizeof(float));
        snprintf(args, sizeof args, "quant %u %s %s", types[k], in, out);
        py(args);
        size_t ref_len;
        uint8_t *ref = read_bytes(out, &ref_len);
        cr_assert_eq(ref_len, bytes);
        for (size_t i = 0; i < bytes; i++)
            cr_assert_eq(ours[i], ref[i], "%s: byte %zu (block %zu) differs from the gguf package", tt->name, i,
                         i / tt->type_size);
        quant_dequantize_row(types[k], ours, back, (int64_t)n);
        for (size_t b = 0; b < n / 32; b++) {
            float amax = 0, lo = INFINITY, hi = -INFINITY;
            for (int j = 0; j < 32; j++) {
                amax = fmaxf(amax, fabsf(x[b * 32 + j]));
                lo = fminf(lo, x[b * 32 + j]), hi = fmaxf(hi, x[b * 32 + j]);
            }
            if (types[k] == GGUF_TENSOR_Q5_1) { /* half of 31 steps over [min, max], plus the f16 d and m */
                for (int j = 0; j < 32; j++)
                    cr_assert_leq(fabsf(back[b * 32 + j] - x[b * 32 + j]),
                                  (hi - lo) / 62.0f + (fabsf(lo) + hi - lo) * 2e-3f + 32 * ldexpf(1.0f, -24),
                                  "Q5_1: %g -> %g", x[b * 32 + j], back[b * 32 + j]);
                continue;
            }
            /* bounds: half a step of the type (Q4_0's extreme can be clamped a full step),
             * plus the f16 rounding of the scale: relative 2^-11 when d is normal, up to
             * 2^-25 absolute per unit of q when it is subnormal */
            const float step = types[k] == GGUF_TENSOR_Q8_0 ? amax / 127 : types[k] == GGUF_TENSOR_Q4_0 ? amax / 8 : 0;
            for (int j = 0; j < 32; j++) {
                const float v = x[b * 32 + j], err = fabsf(back[b * 32 + j] - v);
                const float qmax = types[k] == GGUF_TENSOR_Q8_0 ? 127.0f : 8.0f;
                const float bound = step > 0 ? step * (types[k] == GGUF_TENSOR_Q4_0 ? 1.0f : 0.5f) + amax * 2e-3f +
                                                   qmax * ldexpf(1.0f, -25)
                                             : fabsf(v) * (types[k] == GGUF_TENSOR_F16 ? 1e-3f : 4e-3f) + 1e-7f;
                cr_assert_leq(err, bound, "%s: %g -> %g", tt->name, v, back[b * 32 + j]);
            }
        }
        free(ours);
        free(ref);
        unlink(in);
        unlink(out);
    }
    free(x);
    free(back);
}

/* ggml quantized the test vectors' src.f32 itself (q.q2_K, q.q3_K, q.q4_K, q.q5_K, q.q6_K, q.q8_0, q.q5_0, q.q5_1,
 * q.q4_0): our quantizers must choose the same scales, mins and quants in every block, byte for byte. */
Test(quant, quantizers_reproduce_ggml_s_test_vectors, .timeout = 120)
{
    char *path = model_path("quant-testvectors.gguf");
    if (!path)
        cr_skip_test("quant-testvectors.gguf not present in %s: skipped", models_dir());
    gguf_file *f;
    gguf_error err;
    cr_assert_eq(gguf_open(path, &f, &err), GGUF_OK, "%s", err.message);
    const gguf_tensor *src = gguf_tensor_by_name(f, "src.f32");
    cr_assert_not_null(src);
    static const struct { const char *name; uint32_t type; } want[] = {
        { "q.q2_K", GGUF_TENSOR_Q2_K }, { "q.q3_K", GGUF_TENSOR_Q3_K }, { "q.iq4_nl", GGUF_TENSOR_IQ4_NL },
        { "q.iq4_xs", GGUF_TENSOR_IQ4_XS },
        { "q.q4_K", GGUF_TENSOR_Q4_K }, { "q.q5_K", GGUF_TENSOR_Q5_K }, { "q.q6_K", GGUF_TENSOR_Q6_K },
        { "q.q8_0", GGUF_TENSOR_Q8_0 },
        { "q.q5_0", GGUF_TENSOR_Q5_0 }, { "q.q5_1", GGUF_TENSOR_Q5_1 }, { "q.q4_0", GGUF_TENSOR_Q4_0 },
    };
    for (size_t k = 0; k < sizeof want / sizeof want[0]; k++) {
        const gguf_tensor *q = gguf_tensor_by_name(f, want[k].name);
        cr_assert_not_null(q);
        uint8_t *ours = malloc(q->size);
        cr_assert_eq(quant_quantize_row(want[k].type, (const float *)src->data, ours, (int64_t)src->n_elements),
                     QUANT_OK);
        const size_t bs = gguf_type_traits_of(want[k].type)->type_size;
        for (size_t i = 0; i < q->size; i++)
            cr_assert_eq(ours[i], q->data[i], "%s: block %zu byte %zu: ours 0x%02x, ggml 0x%02x", want[k].name, i / bs,
                         i % bs, ours[i], q->data[i]);
        free(ours);
    }
    gguf_close(f);
    free(path);
}

/* Blocks a model rarely has: all zero, constant, one outlier, magnitudes from 2^-30 to 2^20, NaN. The quantizers
 * must not crash, must keep zeros zero, and must stay within what the format can hold. */
Test(quant, k_quantizers_handle_degenerate_blocks)
{
    enum { N = 256 * 8 };
    float x[N], back[N];
    for (int i = 0; i < N; i++)
        x[i] = fixture_value(3, (uint64_t)i, 1.0f);
    for (int i = 0; i < 256; i++)
        x[i] = 0.0f;                                 /* block 0: all zero */
    for (int i = 256; i < 512; i++)
        x[i] = 0.75f;                                /* block 1: constant */
    for (int i = 512; i < 768; i++)
        x[i] = i == 600 ? 1000.0f : 1e-3f * x[i];   /* block 2: one outlier */
    for (int b = 3; b < 7; b++)                      /* blocks 3-6: tiny to large magnitudes */
        for (int i = 256 * b; i < 256 * (b + 1); i++)
            x[i] *= ldexpf(1.0f, b == 3 ? -30 : b == 4 ? -12 : b == 5 ? 8 : 20);
    static const uint32_t types[] = { GGUF_TENSOR_Q4_K, GGUF_TENSOR_Q6_K };
    for (size_t k = 0; k < 2; k++) {
        const gguf_type_traits *tt = gguf_type_traits_of(types[k]);
        uint8_t q[8 * 210];
        cr_assert_eq(quant_quantize_row(types[k], x, q, N), QUANT_OK);
        cr_assert_eq(quant_dequantize_row(types[k], q, back, N), QUANT_OK);
        for (int i = 0; i < 256; i++)
            cr_assert_eq(back[i], 0.0f, "%s: a zero block stays zero", tt->name);
        for (int i = 256; i < 512; i++) /* a constant is the largest level times a 6-bit scale in f16 */
            cr_assert_float_eq(back[i], 0.75f, 0.75f * 2e-3f, "%s: constant 0.75 -> %g", tt->name, back[i]);
        /* the blocks of normal magnitude: the rms error is a small fraction of the block's rms */
        for (int b = 4; b < 8; b++) {
            double e2 = 0, x2 = 0;
            for (int i = 256 * b; i < 256 * (b + 1); i++) {
                e2 += (back[i] - x[i]) * (double)(back[i] - x[i]);
                x2 += (double)x[i] * x[i];
            }
            const double rel = sqrt(e2 / x2);
            cr_assert_lt(rel, types[k] == GGUF_TENSOR_Q4_K ? 0.12 : 0.03, "%s block %d: relative rms error %.4f",
                         tt->name, b, rel);
        }
        cr_assert(fabsf(back[600] - 1000.0f) < 1000.0f * 0.07f, "%s: the outlier survives (%g)", tt->name,
                  back[600]);
    }
    /* Q2_K and Q3_K: a zero block stays zero, a constant one comes back within a few of its f16 steps */
    static const uint32_t low[] = { GGUF_TENSOR_Q2_K, GGUF_TENSOR_Q3_K };
    for (size_t k = 0; k < 2; k++) {
        uint8_t q[8 * 110];
        cr_assert_eq(quant_quantize_row(low[k], x, q, N), QUANT_OK);
        cr_assert_eq(quant_dequantize_row(low[k], q, back, N), QUANT_OK);
        for (int i = 0; i < 256; i++)
            cr_assert_eq(back[i], 0.0f, "%s: a zero block stays zero", gguf_type_traits_of(low[k])->name);
        for (int i = 256; i < 512; i++)
            cr_assert_float_eq(back[i], 0.75f, 0.75f * 0.1f, "%s: constant 0.75 -> %g",
                               gguf_type_traits_of(low[k])->name, back[i]);
    }
    x[5] = NAN; /* garbage in, no crash and no undefined behaviour (the sanitizer build runs this) */
    uint8_t q[8 * 210];
    cr_assert_eq(quant_quantize_row(GGUF_TENSOR_Q4_K, x, q, N), QUANT_OK);
    cr_assert_eq(quant_quantize_row(GGUF_TENSOR_Q6_K, x, q, N), QUANT_OK);
    cr_assert_eq(quant_quantize_row(GGUF_TENSOR_Q2_K, x, q, N), QUANT_OK);
    cr_assert_eq(quant_quantize_row(GGUF_TENSOR_Q3_K, x, q, N), QUANT_OK);
}

/* ---- API edges ---- */

Test(quant, unsupported_types_and_bad_shapes_are_errors)
{
    uint8_t block[64] = { 0 };
    float out[256];
    cr_assert_eq(quant_dequantize_row(GGUF_TENSOR_Q1_0, block, out, 128), QUANT_E_UNSUPPORTED);
    cr_assert_eq(quant_dequantize_row(4, block, out, 32), QUANT_E_UNSUPPORTED, "removed type");
    cr_assert_eq(quant_dequantize_row(999, block, out, 32), QUANT_E_UNSUPPORTED);
    cr_assert_eq(quant_dequantize_row(GGUF_TENSOR_Q4_0, block, out, 31), QUANT_E_SHAPE);
    cr_assert_eq(quant_quantize_row(GGUF_TENSOR_IQ2_XXS, out, block, 256), QUANT_E_UNSUPPORTED);
    cr_assert_eq(quant_quantize_row(GGUF_TENSOR_Q4_K, out, block, 32), QUANT_E_SHAPE,
                 "K-quants take whole 256-value blocks");
    cr_assert_null(quant_row_function(GGUF_TENSOR_Q1_0, QUANT_IMPL_SCALAR));
}

Test(quant, threaded_rows_and_f16_output_equal_the_row_function)
{
    fixture_opts o = fixture_default_opts();
    tbuf b;
    cr_assert_eq(fixture_write_buffer(&o, &b.p, &b.len, NULL), GGUF_OK);
    gguf_file *f;
    cr_assert_eq(gguf_open_memory(b.p, b.len, &f, NULL), GGUF_OK);
    const gguf_tensor *t = gguf_tensor_by_name(f, "output.weight"); /* Q8_0, 64 x 288 */
    const uint64_t rows = t->n_elements / t->ne[0];
    float *all = malloc(t->n_elements * 4), *one = malloc(t->ne[0] * 4);
    uint16_t *h = malloc(t->ne[0] * 2);
    cr_assert_eq(quant_dequantize_rows(t, 0, rows, all, 2), QUANT_OK);
    cr_assert_eq(quant_dequantize_rows(t, rows, 1, all, 2), QUANT_E_INVALID_ARG);
    const uint64_t row_bytes = t->ne[0] / 32 * 34;
    for (uint64_t r = 0; r < rows; r++) {
        quant_dequantize_row(t->type, t->data + r * row_bytes, one, (int64_t)t->ne[0]);
        cr_assert(memcmp(one, all + r * t->ne[0], t->ne[0] * 4) == 0, "row %llu", (unsigned long long)r);
        quant_dequantize_row_f16(t->type, t->data + r * row_bytes, h, (int64_t)t->ne[0]);
        for (uint64_t j = 0; j < t->ne[0]; j++)
            cr_assert_eq(h[j], quant_f32_to_f16(one[j]));
    }
    gguf_close(f);
    free(all);
    free(one);
    free(h);
    tbuf_free(&b);
}

Test(quant, simd_paths_equal_scalar_bit_for_bit)
{
    cr_log_info("SIMD level: %s", quant_simd_level());
    int compared = 0;
    for (uint32_t type = 0; type < GGUF_TENSOR_COUNT; type++) {
        quant_row_fn ref = quant_row_function(type, QUANT_IMPL_SCALAR);
        quant_row_fn paths[2] = { quant_row_function(type, QUANT_IMPL_AVX2), quant_row_function(type, QUANT_IMPL_BEST) };
        for (int p = 0; p < 2; p++) {
            if (!paths[p] || paths[p] == ref || (p == 1 && paths[1] == paths[0]))
                continue;
            const gguf_type_traits *tt = gguf_type_traits_of(type);
            /* odd lengths for the plain types exercise the scalar tails */
            const size_t n_blocks = tt->block_size == 1 ? 4099 : 203;
            uint8_t *raw = malloc(n_blocks * tt->type_size);
            for (size_t i = 0; i < n_blocks; i++)
                test_random_block(type, raw + i * tt->type_size, tt->type_size);
            const size_t n = n_blocks * tt->block_size;
            float *a = malloc(n * 4), *b = malloc(n * 4);
            paths[p](raw, a, (int64_t)n);
            ref(raw, b, (int64_t)n);
            for (size_t i = 0; i < n; i++) {
                uint32_t x, y;
                memcpy(&x, &a[i], 4);
                memcpy(&y, &b[i], 4);
                cr_assert_eq(x, y, "%s element %zu: %s 0x%08x, scalar 0x%08x", tt->name, i,
                             p ? quant_simd_level() : "avx2", x, y);
            }
            free(raw);
            free(a);
            free(b);
            compared++;
        }
    }
    /* F16 BF16 Q8_0 Q4_0 Q4_1 Q5_0 Q5_1 IQ4_NL Q2_K Q3_K Q4_K Q5_K Q6_K IQ4_XS for AVX2; all but BF16, Q2_K and
     * Q3_K again when AVX-512 is the best level */
    if (strcmp(quant_simd_level(), "avx2") == 0)
        cr_assert_eq(compared, 14);
    else if (strcmp(quant_simd_level(), "avx512") == 0)
        cr_assert_eq(compared, 25);
}

/* The panel decoders (16 rows straight into a GEMM's k-major panel) give the scalar row decoder's floats bit for
 * bit, at panel[(k - k0) * 16 + r]: random and saturated blocks (every fifth bit and min), rows further apart than
 * the values decoded, a run from the middle of the rows as well as all of them. */
Test(quant, panel_decoders_equal_the_scalar_rows_bit_for_bit)
{
    int compared = 0;
    for (uint32_t type = 0; type < GGUF_TENSOR_COUNT; type++) {
        cpu_panel16_fn panel16 = cpu_panel16_function(type, QUANT_IMPL_BEST);
        if (!panel16)
            continue;
        const gguf_type_traits *tt = gguf_type_traits_of(type);
        quant_row_fn ref = quant_row_function(type, QUANT_IMPL_SCALAR);
        const int64_t n = 8 * (int64_t)tt->block_size; /* values per row; each row is 9 blocks apart */
        const uint64_t rb = 9 * tt->type_size;
        uint8_t *raw = malloc(16 * rb);
        for (int r = 0; r < 16; r++)
            for (int i = 0; i < 9; i++)
                (r % 3 == 2 ? test_saturated_block : test_random_block)(type, raw + r * rb + i * tt->type_size,
                                                                        tt->type_size);
        float *rows = malloc(16 * (size_t)n * 4), *panel = malloc(16 * (size_t)n * 4);
        for (int r = 0; r < 16; r++)
            ref(raw + r * rb, rows + r * n, n);
        const int64_t runs[][2] = { { 0, n }, { 2 * (int64_t)tt->block_size, 3 * (int64_t)tt->block_size } };
        for (int u = 0; u < 2; u++) {
            const int64_t k0 = runs[u][0], kc = runs[u][1];
            memset(panel, 0xff, 16 * (size_t)n * 4);
            panel16(raw, rb, k0, kc, panel);
            for (int64_t k = k0; k < k0 + kc; k++)
                for (int r = 0; r < 16; r++)
                    cr_assert_eq(memcmp(&panel[(k - k0) * 16 + r], &rows[r * n + k], 4), 0,
                                 "%s value %lld of row %d (values %lld..%lld): %g, the scalar decoder %g", tt->name,
                                 (long long)k, r, (long long)k0, (long long)(k0 + kc), panel[(k - k0) * 16 + r],
                                 rows[r * n + k]);
        }
        free(raw);
        free(rows);
        free(panel);
        compared++;
    }
    if (strcmp(quant_simd_level(), "avx512") == 0)
        cr_assert_eq(compared, 11, "Q4_0, Q4_1, Q5_0, Q5_1, IQ4_NL, the K-quants Q2_K-Q6_K and IQ4_XS have panel "
                                   "decoders on AVX-512");
    else
        cr_skip_test("SIMD level %s: panel decoders are AVX-512 only, none compared", quant_simd_level());
}

/* Every fused dot, at every level the CPU has, against the scalar decoder's values summed in
 * double: within f32 rounding of the sum of |w x| (the x rearrangement some kernels read is
 * exercised through cpu_dot_prep_floats like the matrix-vector path does). */
Test(quant, fused_dots_equal_dequantize_then_dot_at_every_level)
{
    const uint32_t types[] = { GGUF_TENSOR_Q4_K, GGUF_TENSOR_Q5_K, GGUF_TENSOR_Q6_K, GGUF_TENSOR_Q8_0, GGUF_TENSOR_Q4_0,
                               GGUF_TENSOR_Q4_1, GGUF_TENSOR_Q5_0, GGUF_TENSOR_Q5_1, GGUF_TENSOR_IQ4_NL,
                               GGUF_TENSOR_IQ4_XS, GGUF_TENSOR_BF16, GGUF_TENSOR_Q2_K,
                               GGUF_TENSOR_Q3_K, GGUF_TENSOR_MXFP4 };
    const quant_impl impls[] = { QUANT_IMPL_AVX2, QUANT_IMPL_BEST };
    int checked = 0;
    for (size_t k = 0; k < sizeof types / sizeof types[0]; k++)
        for (size_t p = 0; p < 2; p++) {
            const uint32_t type = types[k];
            cpu_dot_kernel dk = cpu_dot_function(type, impls[p]);
            if (!dk.dot)
                continue;
            const gguf_type_traits *tt = gguf_type_traits_of(type);
            /* BF16's blocks are single values: 203 of them reach its 32-value loop, its 8-value one and its tail */
            const size_t n_blocks = tt->block_size == 1 ? 203 : 24, n = n_blocks * tt->block_size;
            uint8_t *raw = malloc(n_blocks * tt->type_size);
            float *w = malloc(n * 4), *x = malloc(n * 4), *xp = malloc((size_t)cpu_dot_prep_floats((int64_t)n) * 4);
            for (int row = 0; row < 16; row++) {
                for (size_t i = 0; i < n_blocks; i++)
                    test_random_block(type, raw + i * tt->type_size, tt->type_size);
                /* BF16: weights of a weight's size, any mantissa and sign, exponents 2^-17..2^12 */
                if (type == GGUF_TENSOR_BF16)
                    for (size_t i = 0; i < n_blocks; i++) {
                        uint16_t v = (uint16_t)(raw[2 * i] | raw[2 * i + 1] << 8);
                        v = (uint16_t)((v & 0x807f) | (uint16_t)(110 + test_rnd() % 30) << 7);
                        raw[2 * i] = (uint8_t)v, raw[2 * i + 1] = (uint8_t)(v >> 8);
                    }
                for (size_t i = 0; i < n; i++)
                    x[i] = (float)((int)(test_rnd() % 20001) - 10000) / 997.0f;
                quant_row_function(type, QUANT_IMPL_SCALAR)(raw, w, (int64_t)n);
                /* lengths of 1, 3, 5, 18 and all the blocks: the AVX-512 quads (four 32-value blocks a step) end
                 * in a partial quad of 1 to 3 blocks alone or after whole ones (5: one; 18 = SmolLM2's 576 values:
                 * two), or in none */
                const int64_t lens[5] = { (int64_t)n, 1, 3, 5, 18 };
                const int64_t len = row % 5 == 0 ? lens[0] : lens[row % 5] * tt->block_size;
                double ref = 0, mag = 0;
                for (int64_t i = 0; i < len; i++) {
                    ref += (double)w[i] * x[i];
                    mag += fabs((double)w[i] * x[i]);
                }
                if (dk.prep)
                    dk.prep(x, xp, len);
                const float got = dk.dot(raw, dk.prep ? xp : x, len);
                cr_assert(isfinite(ref), "%s: random blocks gave a non-finite reference", tt->name);
                cr_assert_leq(fabs(got - ref), 1e-6 * mag + 1e-30, "%s %s row %d (n %lld): %.9g, reference %.9g",
                              tt->name, p ? quant_simd_level() : "avx2", row, (long long)len, got, ref);
            }
            free(raw);
            free(w);
            free(x);
            free(xp);
            checked++;
        }
    if (strcmp(quant_simd_level(), "scalar") != 0)
        cr_assert_geq(checked, 2 * 14, "a fused dot is missing at %s", quant_simd_level()); /* 14 types, 2 levels */
}
