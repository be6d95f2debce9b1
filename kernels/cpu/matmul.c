/*
 * Matrix products against weights in their file type, read in place.
 *
 * Rows of W are taken 16 at a time per thread: F32 rows are used where they
 * lie, F16 rows feed a fused convert-and-multiply kernel for one token, and
 * every other type is dequantized by quant/ into a per-thread scratch of 16
 * rows (16 x ne0 floats, L1/L2 sized) that then meets every token (as a GEMM
 * over a k-major panel from 8 tokens on where the CPU has AVX-512, gemm.c;
 * else in blocks of 16 tokens through the dot kernels, dot.c), so each weight
 * byte is read from memory once per call; for
 * one token, types with a fused quant/ dot (Q4_K, Q6_K, Q8_0) skip the
 * scratch. No f32 copy of a matrix ever exists.
 *
 * With --numerics ggml (cpu_numerics) the activations are first rounded as
 * llama.cpp's CPU backend rounds them for the weight type (quant/act_quant.c):
 * into Q8_0/Q8_1/Q8_K blocks that integer dots read (act_dot.c, x86/act_dot*.c), or,
 * for types without one, into the values those blocks or f16/bf16 hold,
 * which the path above then multiplies; F32, F16 and BF16 rows meet those
 * values in llama.cpp's own order (float_ggml.c).
 */
#include "dot.h"
#include "gemm.h"
#include "matmul_parts.h"

#include <omp.h>
#include <stdlib.h>

/* TOK_BLOCK: tokens per pass of those dot kernels, a multiple of their widest AVX2 tile (3 tokens): with 16,
 * every pass of a 64-token prompt ended in a lone token, which runs at half the rate (dot.c); 15 left one
 * such token per prompt and measured 2 % faster (AVX2, pp64, F16/Q4_0/Q2_K). */
enum { ROW_BLOCK = 16, TOK_BLOCK = 15 };
_Static_assert((int)ROW_BLOCK == (int)CPU_GEMM_ROWS, "a row block is one GEMM panel");

bool kern_cpu_supports(uint32_t type)
{
    return quant_can_dequantize(type);
}

static uint64_t row_bytes(const gguf_tensor *t)
{
    const gguf_type_traits *tr = gguf_type_traits_of(t->type);
    return t->ne[0] / tr->block_size * tr->type_size;
}

static bool aligned(const void *p, size_t a)
{
    return ((uintptr_t)p & (a - 1)) == 0;
}

kern_status cpu_vector(const kern_weight *w, int64_t n, const float **out, float **owned)
{
    const gguf_tensor *t = w->t;
    *owned = NULL;
    if ((int64_t)t->n_elements != n)
        return KERN_E_SHAPE;
    if (t->type == GGUF_TENSOR_F32 && aligned(t->data, sizeof(float))) {
        *out = (const float *)t->data;
        return KERN_OK;
    }
    if (!(*owned = malloc((size_t)n * sizeof(float))))
        return KERN_E_NOMEM;
    if (quant_dequantize_row(t->type, t->data, *owned, n) != QUANT_OK) {
        free(*owned);
        *owned = NULL;
        return KERN_E_UNSUPPORTED;
    }
    *out = *owned;
    return KERN_OK;
}

kern_status cpu_embed(kern_backend *b, const kern_weight *w, const int32_t *tokens, int T, float *out)
{
    (void)b;
    const gguf_tensor *t = w->t;
    quant_row_fn deq = quant_row_function(t->type, QUANT_IMPL_BEST);
    if (!deq)
        return KERN_E_UNSUPPORTED;
    uint64_t rb = row_bytes(t);
    for (int i = 0; i < T; i++) {
        if (tokens[i] < 0 || (uint64_t)tokens[i] >= t->ne[1])
            return KERN_E_SHAPE;
        deq(t->data + (uint64_t)tokens[i] * rb, out + (size_t)i * t->ne[0], (int64_t)t->ne[0]);
    }
    return KERN_OK;
}

kern_status cpu_add_rows(kern_backend *b, const kern_weight *w, int row0, int T, float *x)
{
    (void)b;
    const gguf_tensor *t = w->t;
    quant_row_fn deq = quant_row_function(t->type, QUANT_IMPL_BEST);
    if (!deq)
        return KERN_E_UNSUPPORTED;
    if (row0 < 0 || T < 0 || (uint64_t)row0 + (uint64_t)T > t->ne[1])
        return KERN_E_SHAPE;
    const size_t n = (size_t)t->ne[0];
    float *row = malloc((n ? n : 1) * sizeof *row);
    if (!row)
        return KERN_E_NOMEM;
    const uint64_t rb = row_bytes(t);
    for (int i = 0; i < T; i++) {
        deq(t->data + (uint64_t)(row0 + i) * rb, row, (int64_t)n);
        for (size_t j = 0; j < n; j++) /* x + row: ggml_add(inpL, pos) adds in that order */
            x[(size_t)i * n + j] += row[j];
    }
    free(row);
    return KERN_OK;
}

/* Where a thread's rows decoded to f32 go (allocated on first need: the fused and F16/F32 one-token paths never
 * need them), and, for GEMM products, x packed once for all threads (NULL: dot kernels). */
typedef struct row_work {
    float *scratch; /* ROW_BLOCK rows of n floats for the dot tiles, or of one decode run for the GEMM */
    size_t scratch_floats; /* what scratch holds */
    float *panel;   /* the same rows packed for the GEMM: ROW_BLOCK x n words, for any share of the product */
    const float *xg;
    cpu_panel16_fn panel16; /* decodes 16 rows straight into the panel, or NULL */
} row_work;

/* wk's scratch, holding at least `floats` (allocated on first need, replaced when a share of the product needs
 * more); false when that allocation fails. */
static bool scratch_for(row_work *wk, size_t floats)
{
    if (wk->scratch_floats >= floats)
        return true;
    free(wk->scratch);
    wk->scratch_floats = (wk->scratch = alloc_floats64(floats)) ? floats : 0;
    return wk->scratch != NULL;
}

/* The block's nr rows at base as the kernels read them: where they lie when direct (aligned F32 rows), else decoded
 * to f32 into wk's scratch (ROW_BLOCK rows); false when its allocation fails. */
static bool block_rows(quant_row_fn deq, const uint8_t *base, uint64_t rb, int nr, int64_t n, bool direct,
                       row_work *wk, const void *rows[ROW_BLOCK])
{
    if (!direct && !scratch_for(wk, (size_t)ROW_BLOCK * (size_t)n))
        return false;
    for (int r = 0; r < nr; r++) {
        if (direct) {
            rows[r] = base + (uint64_t)r * rb;
        } else {
            deq(base + (uint64_t)r * rb, wk->scratch + (int64_t)r * n, n);
            rows[r] = wk->scratch + (int64_t)r * n;
        }
    }
    return true;
}

/* The block's nr rows decoded and packed into the GEMM panel DECODE_CHUNK values at a time, so what the decoder
 * writes is still in L1 when the transpose reads it (16 whole rows of 1024 values are 64 KiB, past L1). A chunk
 * is a whole number of blocks of every type: quant/'s row decoders take any such run of a row. */
enum { DECODE_CHUNK = 256 };
static bool pack_decoded(const gguf_tensor *t, quant_row_fn deq, const uint8_t *base, uint64_t rb, int nr, int64_t n,
                         row_work *wk)
{
    if (wk->panel16 && nr == ROW_BLOCK) {
        wk->panel16(base, rb, 0, n, wk->panel);
        return true;
    }
    const int64_t stride = n < DECODE_CHUNK ? n : DECODE_CHUNK;
    /* a GEMM product never takes the dot path, so the scratch holds one run per row, not whole rows */
    if (!scratch_for(wk, (size_t)ROW_BLOCK * (size_t)stride))
        return false;
    const gguf_type_traits *tr = gguf_type_traits_of(t->type);
    const void *rows[ROW_BLOCK];
    for (int64_t k0 = 0; k0 < n; k0 += stride) {
        const int64_t kc = n - k0 < stride ? n - k0 : stride;
        const uint64_t at = (uint64_t)k0 / tr->block_size * tr->type_size;
        for (int r = 0; r < nr; r++) {
            float *dst = wk->scratch + (int64_t)r * stride;
            deq(base + (uint64_t)r * rb + at, dst, kc);
            rows[r] = dst;
        }
        cpu_gemm_pack_rows(rows, nr, kc, wk->panel + k0 * CPU_GEMM_ROWS);
    }
    return true;
}

/* Rows [r0, r0 + nr) against all T tokens, into y (T, ld), fetching the next block's bytes meanwhile; false when
 * a scratch allocation fails. */
static bool row_block(const gguf_tensor *t, quant_row_fn deq, cpu_dot_fn fused, uint64_t rb, int64_t r0, int nr,
                      const float *x, int T, row_work *wk, float *y, int64_t ld, block_span next)
{
    const int64_t n = (int64_t)t->ne[0];
    const uint8_t *base = t->data + (uint64_t)r0 * rb;
    if (T == 1 && t->type == GGUF_TENSOR_F16 && aligned(base, 2)) {
        for (int r = 0; r < nr; r += 4) {
            const uint16_t *w[4];
            int k = nr - r < 4 ? nr - r : 4;
            for (int j = 0; j < 4; j++)
                w[j] = (const uint16_t *)(base + (uint64_t)(r + (j < k ? j : 0)) * rb);
            cpu_dot_rows_f16(w, k, x, n, y + r0 + r);
        }
        return true;
    }
    if (fused) {
        for (int r = 0; r < nr; r++)
            y[r0 + r] = fused(base + (uint64_t)r * rb, x, n);
        return true;
    }
    const void *rows[ROW_BLOCK];
    const bool direct = t->type == GGUF_TENSOR_F32 && aligned(base, sizeof(float));
    if (wk->xg) {
        if (!wk->panel && !(wk->panel = alloc_floats64((size_t)ROW_BLOCK * (size_t)n)))
            return false;
        /* F16 and BF16 rows widen into the panel as they are transposed: no f32 copy of them written and read
         * back (Qwen3-0.6B-shape F16 prompts, where decode and pack were a fifth of the time) */
        bool packed = false;
        const bool half = t->type == GGUF_TENSOR_F16 || t->type == GGUF_TENSOR_BF16;
        if (half && aligned(base, 2)) {
            const uint16_t *h[ROW_BLOCK];
            for (int r = 0; r < nr; r++)
                h[r] = (const uint16_t *)(base + (uint64_t)r * rb);
            packed = cpu_gemm_pack_rows_half(h, t->type == GGUF_TENSOR_BF16, nr, n, wk->panel);
        }
        if (!packed && direct) {
            if (!block_rows(deq, base, rb, nr, n, true, wk, rows))
                return false;
            cpu_gemm_pack_rows(rows, nr, n, wk->panel);
        } else if (!packed && !pack_decoded(t, deq, base, rb, nr, n, wk)) {
            return false;
        }
        cpu_gemm_panel(wk->panel, nr, wk->xg, T, n, y + r0, ld, next.at, next.bytes);
        return true;
    }
    /* F16 rows meet the dot tiles as they lie, widened in registers */
    const bool f16_rows = t->type == GGUF_TENSOR_F16 && aligned(base, 2);
    if (f16_rows)
        for (int r = 0; r < nr; r++)
            rows[r] = base + (uint64_t)r * rb;
    else if (!block_rows(deq, base, rb, nr, n, direct, wk, rows))
        return false;
    next_rows nx = next_rows_over(next, (T + TOK_BLOCK - 1) / TOK_BLOCK * ((nr + 3) / 4));
    for (int t0 = 0; t0 < T; t0 += TOK_BLOCK) {
        int nt = T - t0 < TOK_BLOCK ? T - t0 : TOK_BLOCK;
        for (int r = 0; r < nr; r += 4) {
            next_rows_fetch(&nx);
            const void *w[4];
            int k = nr - r < 4 ? nr - r : 4;
            for (int j = 0; j < 4; j++)
                w[j] = rows[r + (j < k ? j : 0)];
            if (f16_rows)
                cpu_dot_rows_f16_tokens((const uint16_t *const *)w, k, x + (int64_t)t0 * n, nt, n,
                                        y + t0 * ld + r0 + r, ld);
            else
                cpu_dot_rows((const float *const *)w, k, x + (int64_t)t0 * n, nt, n, y + t0 * ld + r0 + r, ld);
        }
    }
    return true;
}

/* One weight's share of a product: its rows, where they go, and x as they meet it. A share whose weight has the
 * type of an earlier one and reads the same x borrows that one's activations (rounded the same, prepared the
 * same): `owner` says which share frees them. */
typedef struct share {
    const gguf_tensor *t;
    const kern_weight *bias;
    const float *x; /* the activations its rows meet, as the caller gave them */
    float *y;
    quant_row_fn deq;
    cpu_panel16_fn panel16; /* its rows decoded straight into the GEMM's panel, or NULL */
    uint64_t rb;
    int64_t n_blocks, first_block; /* its row blocks, and the first one's index in the whole product */
    rounded_acts ra;
    cpu_dot_kernel fused; /* one token: a fused kernel decodes each row in registers */
    float *xp;              /* x rearranged once for the fused kernel, or NULL */
    const float *xd;        /* what the rows are multiplied with */
    int64_t xd_stride;      /* floats from one token's row of xd to the next */
    float *xg;              /* xd packed for the GEMM, or NULL (no GEMM) */
    bool owner, packs;      /* frees ra and xp; packs xg (else borrows it from an earlier share) */
    bool float_ggml;        /* F32, F16 or BF16 rows under --numerics ggml: llama.cpp's order (float_ggml.c) */
} share;

static void share_free(share *s)
{
    if (s->owner) {
        free(s->xp);
        cpu_rounded_acts_free(&s->ra);
    }
    if (s->packs)
        free(s->xg);
}

/* How weight t's rows meet x (T tokens): borrowed from the shares before it where they compute the same. With
 * `each`, the kernels a one-token product takes, every token's row prepared as that one's would be. */
static kern_status share_prepare(kern_backend *b, const kern_weight *w, const kern_weight *bias, const float *x,
                                 int T, bool each, float *y, share *all, int i)
{
    const int order_T = each ? 1 : T; /* the token count that picks the kernels, and with them the order */
    share *s = &all[i];
    const gguf_tensor *t = w->t;
    *s = (share){ .t = t, .bias = bias, .y = y, .x = x, .rb = row_bytes(t) };
    s->deq = quant_row_function(t->type, QUANT_IMPL_BEST);
    s->panel16 = cpu_panel16_function(t->type, QUANT_IMPL_BEST);
    if (!s->deq)
        return KERN_E_UNSUPPORTED;
    if (t->ne[2] != 1 || t->ne[3] != 1 || (i > 0 && t->ne[0] != all[0].t->ne[0]))
        return KERN_E_SHAPE;
    const int64_t n = (int64_t)t->ne[0];
    const bool floats = t->type == GGUF_TENSOR_F16 || t->type == GGUF_TENSOR_BF16 || t->type == GGUF_TENSOR_F32;
    s->float_ggml = floats && cpu_numerics(b) == KERN_NUMERICS_GGML && cpu_vector_lanes() > 0 &&
                    aligned(t->data, t->type == GGUF_TENSOR_F32 ? 4 : 2);
    s->n_blocks = ((int64_t)t->ne[1] + ROW_BLOCK - 1) / ROW_BLOCK;
    s->first_block = i > 0 ? all[i - 1].first_block + all[i - 1].n_blocks : 0;
    int twin = 0;
    while (twin < i && (all[twin].t->type != t->type || all[twin].x != x))
        twin++;
    if (twin < i) {
        const share *o = &all[twin];
        s->ra = o->ra, s->fused = o->fused, s->xp = o->xp, s->xd = o->xd, s->xd_stride = o->xd_stride;
    } else {
        s->owner = true;
        if (cpu_numerics(b) == KERN_NUMERICS_GGML) {
            kern_status st = cpu_round_activations(t, x, T, order_T, cpu_threads(b), &s->ra);
            if (st)
                return st;
        }
        const float *xr = s->ra.xf ? s->ra.xf : x;
        if (order_T == 1 && !s->ra.dot.dot && !s->float_ggml)
            s->fused = cpu_dot_function(t->type, QUANT_IMPL_BEST);
        s->xd_stride = n;
        if (s->fused.prep) {
            const int64_t pf = cpu_dot_prep_floats(n);
            if (!(s->xp = alloc_floats64((size_t)pf * (size_t)T)))
                return KERN_E_NOMEM;
            for (int tok = 0; tok < T; tok++)
                s->fused.prep(xr + (int64_t)tok * n, s->xp + (int64_t)tok * pf, n);
            s->xd_stride = pf;
        }
        s->xd = s->xp ? s->xp : xr;
    }
    /* Prompts whose rows are multiplied in f32 (no integer dot): a GEMM where the CPU has one, x packed once for
     * every share that multiplies the same x, by all threads together at the start of the parallel region */
    if (order_T < GEMM_MIN_TOKENS || s->ra.dot.dot || s->float_ggml || !cpu_have_gemm())
        return KERN_OK;
    for (int j = 0; j < i; j++)
        if (all[j].xg && all[j].xd == s->xd) {
            s->xg = all[j].xg;
            return KERN_OK;
        }
    s->packs = true;
    return (s->xg = alloc_floats64(cpu_gemm_x_words(T, n))) ? KERN_OK : KERN_E_NOMEM;
}

/* Where block blk (an index over the whole product) lies: its share, and its rows [r0, r0 + nr) there. */
typedef struct block_at {
    int share;
    int64_t r0;
    int nr;
} block_at;

static block_at locate_block(const share *sh, int n_w, int64_t blk)
{
    int p = 0;
    while (p + 1 < n_w && blk >= sh[p + 1].first_block)
        p++;
    const int64_t rows = (int64_t)sh[p].t->ne[1], r0 = (blk - sh[p].first_block) * ROW_BLOCK;
    return (block_at){ p, r0, rows - r0 < ROW_BLOCK ? (int)(rows - r0) : ROW_BLOCK };
}

/* Block blk's bytes in its matrix. */
static block_span block_of(const share *sh, int n_w, int64_t blk)
{
    const block_at a = locate_block(sh, n_w, blk);
    const share *s = &sh[a.share];
    return (block_span){ s->t->data + (uint64_t)a.r0 * s->rb, (uint64_t)a.nr * s->rb };
}

/* Claims the next run of blocks [*lo, *hi) from *next_free, as OpenMP's schedule(guided, 1) sizes them: the
 * unclaimed blocks over the team, rounded up. False when none are left. Guided gives long contiguous runs of rows
 * first (what the hardware prefetchers stream best) and single 16-row blocks at the end, so neither thread idles
 * long at the join: against dynamic,4 / dynamic,16 / static on the TinyLlama-1.1B-shape Q4_K_M's matrices,
 * 2 threads, 10 alternating rounds, 6-8 % less time than dynamic,4 and 2-3 % less than static. Claimed by hand
 * (not an omp for) so that a thread knows its next block before it finishes this one. */
static bool claim_run(int64_t *next_free, int64_t total, int team, int64_t *lo, int64_t *hi)
{
    int64_t start = __atomic_load_n(next_free, __ATOMIC_RELAXED);
    for (;;) {
        if (start >= total)
            return false;
        const int64_t run = (total - start + team - 1) / team;
        if (__atomic_compare_exchange_n(next_free, &start, start + run, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
            *lo = start, *hi = start + run;
            return true;
        }
    }
}

/* ys[i] = xs[i] @ ws[i]^T (+ biases[i]) for the n_w weights; with `each`, every token's row through the kernels of
 * a one-token product, a row block's weights read once and then met by each token in turn (matmul_each). */
static kern_status products(kern_backend *b, int n_w, const kern_weight *const ws[], const kern_weight *const biases[],
                            const float *const xs[], int T, bool each, float *const ys[])
{
    if (n_w < 1 || n_w > KERN_MATMUL_MANY)
        return KERN_E_SHAPE;
    share sh[KERN_MATMUL_MANY] = { 0 };
    kern_status st = KERN_OK;
    int ready = 0;
    for (; ready < n_w && !st; ready++)
        st = share_prepare(b, ws[ready], biases ? biases[ready] : NULL, xs[ready], T, each, ys[ready], sh, ready);
    if (st) {
        for (int i = 0; i < ready; i++)
            share_free(&sh[i]);
        return st;
    }
    const int64_t total = sh[n_w - 1].first_block + sh[n_w - 1].n_blocks;
    double work = 0.0;
    for (int i = 0; i < n_w; i++)
        work += (double)sh[i].t->ne[0] * (double)sh[i].t->ne[1] * T;
    /* Small products run on one thread: waking a team costs more than they do. */
    const bool wide = work >= 1 << 17;
    int failed = 0;
    int64_t next_free = 0; /* the first block no thread has claimed (claim_run) */
#pragma omp parallel num_threads(cpu_threads(b)) if (wide)
    {
        const int me = omp_get_thread_num(), team = omp_get_num_threads();
        bool packed = false;
        for (int i = 0; i < n_w; i++)
            if (sh[i].packs) {
                const int64_t wd = (int64_t)sh[i].t->ne[0];
                cpu_gemm_pack_x(sh[i].xd, T, wd, wd * me / team, wd * (me + 1) / team, sh[i].xg);
                packed = true;
            }
        if (packed) {
#pragma omp barrier
        }
        /* This thread's buffers, for every share: allocated by row_block only where rows are decoded (an
         * unconditional one cost an mmap/munmap pair per thread per call). One set per share held 0.5-1 MiB more
         * private memory in a chat (the heap keeps what it freed). The ggml panels differ by weight type. */
        row_work wk = { 0 };
        uint8_t *panel[KERN_MATMUL_MANY] = { 0 };
        bool ok = true;
        int64_t lo, hi, next_lo = 0, next_hi = 0;
        for (bool more = claim_run(&next_free, total, team, &lo, &hi); more; lo = next_lo, hi = next_hi)
            for (int64_t blk = lo; blk < hi; blk++) {
                /* the next run is claimed as the last block of this one starts, so its first rows can be
                 * fetched during this block too */
                if (blk + 1 == hi)
                    more = claim_run(&next_free, total, team, &next_lo, &next_hi);
                const int64_t after = blk + 1 < hi ? blk + 1 : more ? next_lo : -1;
                if (!ok)
                    continue;
                const block_at a = locate_block(sh, n_w, blk);
                const int p = a.share, nr = a.nr;
                const share *s = &sh[p];
                const int64_t rows = (int64_t)s->t->ne[1], r0 = a.r0;
                const block_span next = after < 0 ? (block_span){ 0 } : block_of(sh, n_w, after);
                /* each: the block's rows (in L1 after the first token) meet one token at a time */
                const int runs = each ? T : 1, Tk = each ? 1 : T;
                for (int tok = 0; tok < runs && ok; tok++) {
                    float *y = s->y + (int64_t)tok * rows;
                    const uint8_t *xq = s->ra.xq ? s->ra.xq + (uint64_t)tok * s->ra.arb : NULL;
                    const float *xd = s->xd + (int64_t)tok * s->xd_stride;
                    if (s->ra.gemm.pack)
                        ok = cpu_act_panel_rows(s->t, &s->ra.gemm, s->rb, r0, nr, xq, s->ra.arb, s->ra.sums, Tk,
                                                &panel[p], y, rows, next);
                    else if (s->ra.dot.dot)
                        cpu_act_rows(s->t, s->ra.dot, s->rb, r0, nr, xq, s->ra.arb, Tk, y, rows);
                    else if (s->float_ggml)
                        cpu_float_rows_ggml(s->t->data + (uint64_t)r0 * s->rb, s->rb, nr, s->t->type, xd,
                                            (const uint16_t *)xq, Tk, (int64_t)s->t->ne[0], y + r0, rows);
                    else {
                        wk.xg = s->xg, wk.panel16 = s->panel16;
                        ok = row_block(s->t, s->deq, s->fused.dot, s->rb, r0, nr, xd, Tk, &wk, y, rows, next);
                    }
                }
            }
        if (!ok) {
#pragma omp atomic write
            failed = 1;
        }
        free(wk.scratch);
        free(wk.panel);
        for (int i = 0; i < n_w; i++)
            free(panel[i]);
    }
    for (int i = 0; i < n_w; i++)
        share_free(&sh[i]);
    if (failed)
        return KERN_E_NOMEM;
    for (int i = 0; i < n_w; i++) {
        if (!sh[i].bias)
            continue;
        const int64_t rows = (int64_t)sh[i].t->ne[1];
        const float *bv;
        float *buf;
        kern_status s = cpu_vector(sh[i].bias, rows, &bv, &buf);
        if (s)
            return s;
        for (int tok = 0; tok < T; tok++)
            for (int64_t r = 0; r < rows; r++)
                sh[i].y[tok * rows + r] += bv[r];
        free(buf);
    }
    return KERN_OK;
}

/* The one x of matmul_many / matmul_each as the xs products takes, for 1..KERN_MATMUL_MANY weights. */
static void same_x(const float *x, int n_w, const float *xs[KERN_MATMUL_MANY])
{
    for (int i = 0; i < n_w && i < KERN_MATMUL_MANY; i++)
        xs[i] = x;
}

kern_status cpu_matmul_many(kern_backend *b, int n_w, const kern_weight *const ws[], const kern_weight *const biases[],
                            const float *x, int T, float *const ys[])
{
    const float *xs[KERN_MATMUL_MANY];
    same_x(x, n_w, xs);
    return products(b, n_w, ws, biases, xs, T, false, ys);
}

kern_status cpu_matmul_many_x(kern_backend *b, int n_w, const kern_weight *const ws[],
                              const kern_weight *const biases[], const float *const xs[], int T, float *const ys[])
{
    return products(b, n_w, ws, biases, xs, T, false, ys);
}

kern_status cpu_matmul_each(kern_backend *b, int n_w, const kern_weight *const ws[], const kern_weight *const biases[],
                            const float *x, int T, float *const ys[])
{
    const float *xs[KERN_MATMUL_MANY];
    same_x(x, n_w, xs);
    return products(b, n_w, ws, biases, xs, T, true, ys);
}

kern_status cpu_matmul(kern_backend *b, const kern_weight *w, const kern_weight *bias, const float *x, int T,
                       float *y)
{
    const kern_weight *bs[1] = { bias };
    return cpu_matmul_many(b, 1, &w, bs, x, T, &y);
}
