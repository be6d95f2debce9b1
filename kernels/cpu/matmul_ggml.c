/*
 * --numerics ggml's side of the matrix products: activations rounded as llama.cpp's CPU backend rounds them for
 * each weight type (quant/act_quant.c), and the integer products that read them: 1- and 4-row dots, or panels
 * of 8 or 16 rows for prompts (act_dot.c, x86/act_dot*.c, x86/act_gemm*.c). matmul.c schedules them.
 */
#include "gemm.h"
#include "matmul_parts.h"

/* Rows [r0, r0 + nr) against T rows of quantized activations (xq, arb bytes each), into y (T, ld):
 * 4 tokens at a time where the kernel takes 4 (each weight block unpacked once for the four). */
void cpu_act_rows(const gguf_tensor *t, cpu_act_kernel k, uint64_t rb, int64_t r0, int nr,
                  const uint8_t *xq, uint64_t arb, int T, float *y, int64_t ld)
{
    const int64_t n = (int64_t)t->ne[0];
    const uint8_t *base = t->data + (uint64_t)r0 * rb;
    if (k.gemv) { /* llama.cpp's order for these few tokens is its repacked GEMV's, rows side by side */
        for (int tok = 0; tok < T; tok++)
            for (int r = 0; r < nr; r += k.gemv_rows)
                k.gemv(base + (uint64_t)r * rb, rb, nr - r < k.gemv_rows ? nr - r : k.gemv_rows,
                       xq + (uint64_t)tok * arb, n, y + tok * ld + r0 + r);
        return;
    }
    int tok = 0;
    if (k.dot4)
        for (; tok + 4 <= T; tok += 4)
            for (int r = 0; r < nr; r++) {
                float out[4];
                k.dot4(base + (uint64_t)r * rb, xq + (uint64_t)tok * arb, arb, n, out);
                for (int j = 0; j < 4; j++)
                    y[(tok + j) * ld + r0 + r] = out[j];
            }
    for (; tok < T; tok++)
        for (int r = 0; r < nr; r++)
            k.dot(base + (uint64_t)r * rb, xq + (uint64_t)tok * arb, n, &y[tok * ld + r0 + r]);
}

/* Rows [r0, r0 + nr) against all T rows of quantized activations through panels packed into *panel
 * (allocated on first need; false when that fails), into y (T, ld), fetching the next block's bytes meanwhile. */
bool cpu_act_panel_rows(const gguf_tensor *t, const cpu_act_gemm *g, uint64_t rb, int64_t r0, int nr,
                        const uint8_t *xq, uint64_t arb, const int16_t *sums, int T, uint8_t **panel, float *y,
                        int64_t ld, block_span next)
{
    const int64_t n = (int64_t)t->ne[0];
    if (!*panel && !(*panel = aligned_alloc(64, (g->panel_bytes(n) + 63) / 64 * 64)))
        return false;
    next_rows nx = next_rows_over(next, (nr + g->rows - 1) / g->rows);
    for (int r = 0; r < nr; r += g->rows) {
        int k = nr - r < g->rows ? nr - r : g->rows;
        g->pack(t->data + (uint64_t)(r0 + r) * rb, rb, k, n, *panel);
        next_rows_fetch(&nx);
        g->multiply(*panel, xq, arb, sums, T, n, y + r0 + r, ld, k);
    }
    return true;
}



void cpu_rounded_acts_free(rounded_acts *r)
{
    free(r->xq), free(r->sums), free(r->xf);
}

kern_status cpu_round_activations(const gguf_tensor *t, const float *x, int T, int order_T, int threads,
                                  rounded_acts *r)
{
    const int64_t n = (int64_t)t->ne[0];
    const uint32_t at = quant_act_type(t->type);
    *r = (rounded_acts){ 0 };
    if (at == GGUF_TENSOR_F32 || at == GGUF_TENSOR_COUNT)
        return KERN_OK;
    if (!(r->arb = quant_act_row_bytes(at, n)))
        return KERN_E_SHAPE;
    r->dot = cpu_act_dot_function(t->type, QUANT_IMPL_BEST);
    if (r->dot.dot && order_T >= PANEL_MIN_TOKENS) {
        /* only where llama.cpp adds the blocks in the panel's order: --numerics ggml is there to reproduce it */
        r->gemm = cpu_act_gemm_function(t->type, QUANT_IMPL_BEST, T);
        if (!r->gemm.llama_cpp_order)
            r->gemm = (cpu_act_gemm){ 0 };
    }
    bool ok = (r->xq = malloc((size_t)r->arb * (size_t)T)) != NULL;
    if (ok && r->gemm.pack)
        ok = (r->sums = malloc((size_t)T * (size_t)(n / 16) * sizeof(int16_t))) != NULL;
    if (ok && !r->dot.dot)
        ok = (r->xf = alloc_floats64((size_t)T * (size_t)n)) != NULL;
    if (!ok) {
        cpu_rounded_acts_free(r);
        return KERN_E_NOMEM;
    }
#pragma omp parallel for num_threads(threads) if (T >= 8)
    for (int tok = 0; tok < T; tok++) {
        uint8_t *q = r->xq + (uint64_t)tok * r->arb;
        quant_act_quantize(at, x + (int64_t)tok * n, q, n);
        if (r->sums)
            quant_act_sums16(at, q, n, r->sums + (int64_t)tok * (n / 16));
        if (r->xf)
            quant_dequantize_row(at, q, r->xf + (int64_t)tok * n, n);
    }
    if (r->xf && at != GGUF_TENSOR_BF16) { /* bf16 rows stay beside their values: vdpbf16ps reads them */
        free(r->xq);
        r->xq = NULL;
    }
    if (r->dot.prep && !r->gemm.pack) {
        /* the dot reads each row as its prep leaves it: rewritten here once for every weight row */
        const uint64_t stride = (r->dot.prep_bytes(n) + 63) / 64 * 64;
        uint8_t *prepped = aligned_alloc(64, stride * (uint64_t)T);
        if (!prepped) {
            cpu_rounded_acts_free(r);
            return KERN_E_NOMEM;
        }
        for (int tok = 0; tok < T; tok++)
            r->dot.prep(r->xq + (uint64_t)tok * r->arb, prepped + (uint64_t)tok * stride, n);
        free(r->xq);
        r->xq = prepped, r->arb = stride;
    }
    return KERN_OK;
}
