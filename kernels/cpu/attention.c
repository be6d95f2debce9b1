/*
 * Causal multi-head attention over one layer's KV cache (f32), with grouped
 * query heads and an optional sliding window (a query at position p sees keys
 * p - window + 1 .. p: llama.cpp's LLAMA_SWA_TYPE_STANDARD mask; or chunked, p - p % window .. p:
 * LLAMA_SWA_TYPE_CHUNKED, Llama 4's).
 *   q (T, n_head, d), K cache (pos0 + T, n_kv, d), V cache (pos0 + T, n_kv, dv) -> out (T, n_head, dv)
 *
 * One task is a block of up to Q_BLOCK tokens times the query heads that share
 * one KV head, so each key and value row is read once for all of them. In a
 * prompt (Q_BLOCK tokens or more, where AVX2 runs) the block's queries sit in
 * the lanes of 8 or 16-wide vectors: each key's scores for all of them come
 * out of one accumulator, a chain of fused multiply-adds over the head's values
 * (scores.c), stored key-major, and the softmax runs down each query's lane
 * (softmax.c's cpu_softmax_lanes). A generation step's few queries would fill
 * one lane in 8 or 16, so there (and under --numerics ggml, below) the scores
 * come from tiles of 2 keys x 3 queries (4 x 1-6 with AVX-512; dot.c's
 * cpu_dot_grid), each summed as kern_dot_f32 sums it, and the softmax runs per
 * query along a row. The values are summed by tiles of 6 queries x 16 dims
 * (12 x 32) that load each value vector once for them all, each output a chain
 * over the keys in turn. So every output has one defined order of arithmetic,
 * bit for bit whatever the tiles (test_attention). One task per (token, head),
 * as before, read every key and value row once per query: a 512-token prompt of
 * a Qwen3-0.6B-shaped model spent 45 % of its time there.
 */
#include "x86_target.h"
#include "cpu.h"
#include "dot.h"

#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__)
#include <immintrin.h>
#define X86 1
#else
#define X86 0
#endif

/* Q_BLOCK: tokens per task. Queries of a block share the keys up to the last one's position; the first one's
 * extra keys are masked out (at most Q_BLOCK - 1 wasted scores a query). PV_QUERIES: queries per value tile, 12
 * accumulators (6 x 2 vectors of 8) in AVX2's 16 registers; with AVX-512, 12 x 2 vectors of 16 in its 32. */
enum { Q_BLOCK = 8, PV_QUERIES = 6, PV_DIMS = 16, PV_QUERIES_ZMM = 12, PV_DIMS_ZMM = 32 };
/* Query heads per KV head at most: a block's output rows are listed on the stack (Q_BLOCK x this). Models have
 * 1-8 (latent attention 16-128); a file asking for more is refused (KERN_E_SHAPE) rather than given a heap list. */
enum { MAX_GROUP = 128 }; /* DeepSeek-V3's latent attention: 128 query heads on one */

#if X86
/* acc_a / acc_b += p * the value vector's two halves */
X86_AVX2 static inline __attribute__((always_inline)) void
pv_step(const float *p, __m256 v0, __m256 v1, __m256 *acc_a, __m256 *acc_b)
{
    const __m256 pm = _mm256_broadcast_ss(p);
    *acc_a = _mm256_fmadd_ps(pm, v0, *acc_a);
    *acc_b = _mm256_fmadd_ps(pm, v1, *acc_b);
}

/* o[m][c .. c + 16) = sum over j of p[m][j] v[j][c ..], for m < MQ (a constant where inlined). The accumulators
 * are named variables, not an array: with an array GCC 12 kept a copy of every accumulator on the stack, stored
 * at every key (12 stores beside the 12 multiply-adds; the AVX2 value tiles ran at ~40 % of the FMA's rate,
 * 6.4 % of a Qwen3-0.6B-shape pp512 on the AVX2 path). */
X86_AVX2 static inline __attribute__((always_inline)) void
pv_tile(const float *p, size_t sm, size_t sj, int nj, const float *v, size_t ldv, int MQ, float *o, size_t ldo)
{
    __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0;
    __m256 b0 = a0, b1 = a0, b2 = a0, b3 = a0, b4 = a0, b5 = a0;
    for (int j = 0; j < nj; j++) {
        const __m256 v0 = _mm256_loadu_ps(v + (size_t)j * ldv), v1 = _mm256_loadu_ps(v + (size_t)j * ldv + 8);
        const float *pj = p + (size_t)j * sj;
        pv_step(pj, v0, v1, &a0, &b0);
        if (MQ > 1)
            pv_step(pj + sm, v0, v1, &a1, &b1);
        if (MQ > 2)
            pv_step(pj + 2 * sm, v0, v1, &a2, &b2);
        if (MQ > 3)
            pv_step(pj + 3 * sm, v0, v1, &a3, &b3);
        if (MQ > 4)
            pv_step(pj + 4 * sm, v0, v1, &a4, &b4);
        if (MQ > 5)
            pv_step(pj + 5 * sm, v0, v1, &a5, &b5);
    }
    _Static_assert(PV_QUERIES == 6, "pv_tile names 6 accumulator pairs");
    const __m256 acc[PV_QUERIES][2] = { { a0, b0 }, { a1, b1 }, { a2, b2 }, { a3, b3 }, { a4, b4 }, { a5, b5 } };
    for (int m = 0; m < MQ; m++) {
        _mm256_storeu_ps(o + (size_t)m * ldo, acc[m][0]);
        _mm256_storeu_ps(o + (size_t)m * ldo + 8, acc[m][1]);
    }
}

#define PV_TILE(mq)                                                                                                \
    X86_AVX2 static void pv_tile_##mq(const float *p, size_t sm, size_t sj, int nj,  \
                                                                 const float *v, size_t ldv, float *o, size_t ldo) \
    {                                                                                                              \
        pv_tile(p, sm, sj, nj, v, ldv, mq, o, ldo);                                                                \
    }
PV_TILE(1)
PV_TILE(2)
PV_TILE(3)
PV_TILE(4)
PV_TILE(5)
PV_TILE(6)
typedef void (*pv_tile_fn)(const float *, size_t, size_t, int, const float *, size_t, float *, size_t);
static const pv_tile_fn pv_tiles[PV_QUERIES + 1] = { NULL,     pv_tile_1, pv_tile_2, pv_tile_3,
                                                     pv_tile_4, pv_tile_5, pv_tile_6 };

/* The same in 512-bit registers: 12 queries x 32 dims, 24 accumulators; each output value the same chain of
 * multiply-adds over the keys as in the AVX2 tile. */
X86_AVX512 static inline __attribute__((always_inline)) void
pv_tile_zmm(const float *p, size_t sm, size_t sj, int nj, const float *v, size_t ldv, int MQ, float *o, size_t ldo)
{
    __m512 acc[PV_QUERIES_ZMM][2];
    for (int m = 0; m < MQ; m++)
        acc[m][0] = acc[m][1] = _mm512_setzero_ps();
    for (int j = 0; j < nj; j++) {
        const __m512 v0 = _mm512_loadu_ps(v + (size_t)j * ldv), v1 = _mm512_loadu_ps(v + (size_t)j * ldv + 16);
        for (int m = 0; m < MQ; m++) {
            const __m512 pm = _mm512_set1_ps(p[(size_t)m * sm + (size_t)j * sj]);
            acc[m][0] = _mm512_fmadd_ps(pm, v0, acc[m][0]);
            acc[m][1] = _mm512_fmadd_ps(pm, v1, acc[m][1]);
        }
    }
    for (int m = 0; m < MQ; m++) {
        _mm512_storeu_ps(o + (size_t)m * ldo, acc[m][0]);
        _mm512_storeu_ps(o + (size_t)m * ldo + 16, acc[m][1]);
    }
}

#define PV_TILE_ZMM(mq)                                                                                            \
    X86_AVX512 static void pv_tile_zmm_##mq(const float *p, size_t sm, size_t sj, int nj, \
                                                                   const float *v, size_t ldv, float *o,         \
                                                                   size_t ldo)                                   \
    {                                                                                                              \
        pv_tile_zmm(p, sm, sj, nj, v, ldv, mq, o, ldo);                                                            \
    }
PV_TILE_ZMM(1)
PV_TILE_ZMM(2)
PV_TILE_ZMM(3)
PV_TILE_ZMM(4)
PV_TILE_ZMM(5)
PV_TILE_ZMM(6)
PV_TILE_ZMM(7)
PV_TILE_ZMM(8)
PV_TILE_ZMM(9)
PV_TILE_ZMM(10)
PV_TILE_ZMM(11)
PV_TILE_ZMM(12)
static const pv_tile_fn pv_tiles_zmm[PV_QUERIES_ZMM + 1] = {
    NULL,           pv_tile_zmm_1, pv_tile_zmm_2, pv_tile_zmm_3,  pv_tile_zmm_4,  pv_tile_zmm_5,  pv_tile_zmm_6,
    pv_tile_zmm_7, pv_tile_zmm_8, pv_tile_zmm_9, pv_tile_zmm_10, pv_tile_zmm_11, pv_tile_zmm_12,
};
#endif

/* o[m] = sum over j < nj of p[m][j] v[j] for m < M, p[m][j] at p[m * sm + j * sj] (query-major scores or key-major
 * ones); row m of o at o_row[m] (d floats). */
static void weighted_sums(const float *p, size_t sm, size_t sj, int M, int nj, const float *v, size_t ldv, int d,
                          float *const *o_row)
{
#if X86
    const bool zmm = cpu_have_avx512vl() && d % PV_DIMS_ZMM == 0;
    if (zmm || (cpu_have_avx2() && d % PV_DIMS == 0)) {
        const int queries = zmm ? PV_QUERIES_ZMM : PV_QUERIES, dims = zmm ? PV_DIMS_ZMM : PV_DIMS;
        const pv_tile_fn *tiles = zmm ? pv_tiles_zmm : pv_tiles;
        float tile[PV_QUERIES_ZMM * PV_DIMS_ZMM];
        for (int m0 = 0; m0 < M; m0 += queries) {
            const int mq = M - m0 < queries ? M - m0 : queries;
            for (int c = 0; c < d; c += dims) {
                tiles[mq](p + (size_t)m0 * sm, sm, sj, nj, v + c, ldv, tile, (size_t)dims);
                /* sizes the compiler knows: a memcpy of a variable size was an 8-byte loop, 0.6 % of a pp64 */
                for (int m = 0; m < mq; m++)
                    if (zmm)
                        memcpy(o_row[m0 + m] + c, tile + m * PV_DIMS_ZMM, PV_DIMS_ZMM * sizeof(float));
                    else
                        memcpy(o_row[m0 + m] + c, tile + m * PV_DIMS, PV_DIMS * sizeof(float));
            }
        }
        return;
    }
#endif
    for (int m = 0; m < M; m++) {
        float *o = o_row[m];
        memset(o, 0, (size_t)d * sizeof(float));
        for (int j = 0; j < nj; j++) {
            const float pj = p[(size_t)m * sm + (size_t)j * sj], *vv = v + (size_t)j * ldv;
            for (int i = 0; i < d; i++)
                o[i] += pj * vv[i];
        }
    }
}

/* Per-thread buffers of one task: the block's queries packed (M x d, or value-major in lanes: Mp x d), their
 * scores / probabilities (M x ldp query-major, or nj x Mp key-major). */
typedef struct attn_scratch {
    float *q, *p;
} attn_scratch;

/* How a call lays out its blocks: lanes (8 or 16) for key-major scores with the queries in vector lanes (prompts
 * where AVX2 runs: scores.c), 0 for query-major ones through the dot tiles (a generation step's few queries,
 * which would fill one lane in 8 or 16); ldp, a query-major row's stride; Mp, a key-major row's lanes. */
typedef struct attn_layout {
    int lanes, Mp;
    size_t ldp;
} attn_layout;

/* The scores of a block (M queries by nj keys from key position jlo; p[m * ld + j], or p[j * ld + m] where key_major)
 * made final where a model changes them: gemma2's soft-capping (each scaled score s becomes c tanh(s / c)), ALiBi's
 * slope of the query's head times (key position - query position) added to the scaled score (row m is the query at
 * position q0 + m / group of head kh * group + m % group). Returns the scale the softmax is to apply: 1 where the
 * scores are final here, else the model's. */
static float final_scores(float *p, int M, int nj, size_t ld, bool key_major, int q0, int group, int kh, int jlo,
                          const kern_attn *a)
{
    if (a->softcap <= 0.0f && a->alibi_max_bias <= 0.0f)
        return a->scale;
    for (int m = 0; m < M; m++) {
        const float slope = a->alibi_max_bias > 0.0f ? kern_alibi_slope(a->alibi_max_bias, a->n_head, kh * group + m % group)
                                                     : 0.0f;
        const int qpos = q0 + m / group;
        for (int j = 0; j < nj; j++) {
            float *sc = key_major ? p + (size_t)j * ld + m : p + (size_t)m * ld + j;
            float v = *sc * a->scale;
            if (a->softcap > 0.0f)
                v = a->softcap * tanhf(a->softcap_in > 0.0f ? v * a->softcap_in : v / a->softcap);
            if (slope != 0.0f)
                v += slope * (float)(jlo + j - qpos);
            *sc = v;
        }
    }
    return 1.0f;
}

/* Row m of a block is token t0 + m / group, head kh * group + m % group. Keys [jlo, jhi) cover every query of the
 * block; row m's own are [j0(m), n_keys(m)), the rest of its row is zero after the softmax. */
static void attend_block(const float *q, const float *k_cache, const float *v_cache, int t0, int nt, int kh, int pos0,
                         const kern_attn *a, attn_scratch *s, const attn_layout *lay, float *out)
{
    const int n_head = a->n_head, d = a->head_dim, dv = kern_attn_v_dim(a), group = n_head / a->n_kv_head;
    const int M = nt * group;
    const size_t kv_dim = (size_t)a->n_kv_head * (size_t)d, vv_dim = (size_t)a->n_kv_head * (size_t)dv;
    const int first_keys = pos0 + t0 + 1, jhi = pos0 + t0 + nt;
    const int jlo = kern_attn_first_key(a, first_keys - 1);
    const int nj = jhi - jlo;
    float *o_row[Q_BLOCK * MAX_GROUP];
    const float *q_row[Q_BLOCK * MAX_GROUP];
    int lo[Q_BLOCK * MAX_GROUP + 16], hi[Q_BLOCK * MAX_GROUP + 16];
    for (int m = 0; m < M; m++) {
        const size_t row = (size_t)(t0 + m / group) * (size_t)n_head + (size_t)(kh * group + m % group);
        q_row[m] = q + row * (size_t)d;
        o_row[m] = out + row * (size_t)dv;
        const int n_keys = pos0 + t0 + m / group + 1;
        const int j0 = kern_attn_first_key(a, n_keys - 1);
        lo[m] = j0 - jlo, hi[m] = n_keys - jlo; /* this query's keys within the block's */
    }
    const float *keys = k_cache + (size_t)jlo * kv_dim + (size_t)kh * d;
    const float *values = v_cache + (size_t)jlo * vv_dim + (size_t)kh * dv;
    if (lay->lanes) {
        const int W = lay->lanes, Mp = (M + W - 1) / W * W;
        for (int m = M; m < Mp; m++)
            lo[m] = hi[m] = 0; /* lanes with no query: no keys */
        cpu_scores_pack_queries(q_row, M, d, W, s->q);
        cpu_scores_lanes(s->q, M, d, W, keys, (int64_t)kv_dim, nj, s->p, lay->Mp);
        const float scale = final_scores(s->p, M, nj, (size_t)lay->Mp, true, pos0 + t0, group, kh, jlo, a);
        cpu_softmax_lanes(s->p, lay->Mp, nj, Mp, lo, hi, scale);
        weighted_sums(s->p, 1, (size_t)lay->Mp, M, nj, values, vv_dim, dv, o_row);
        return;
    }
    for (int m = 0; m < M; m++)
        memcpy(s->q + (size_t)m * d, q_row[m], (size_t)d * sizeof(float));
    cpu_dot_grid(keys, (int64_t)kv_dim, nj, s->q, d, M, d, s->p, (int64_t)lay->ldp);
    const float scale = final_scores(s->p, M, nj, lay->ldp, false, pos0 + t0, group, kh, jlo, a);
    const float *sinks = a->sinks ? (const float *)a->sinks->t->data : NULL;
    for (int m = 0; m < M; m++)
        cpu_softmax_scaled(s->p + (size_t)m * lay->ldp, lo[m], hi[m], nj, scale,
                           sinks ? sinks[kh * group + m % group] : -INFINITY);
    weighted_sums(s->p, lay->ldp, 1, M, nj, values, vv_dim, dv, o_row);
}

kern_status cpu_attention(kern_backend *b, const float *q, const float *k_cache, const float *v_cache, int T, int pos0,
                          const kern_attn *a, float *out)
{
    const int n_head = a->n_head, n_kv_head = a->n_kv_head, head_dim = a->head_dim;
    if (n_kv_head <= 0 || n_head % n_kv_head || a->window < 0 || head_dim <= 0 || n_head / n_kv_head > MAX_GROUP ||
        a->v_dim < 0)
        return KERN_E_SHAPE;
    if (a->sinks && (a->sinks->t->type != GGUF_TENSOR_F32 || a->sinks->t->n_elements != (uint64_t)n_head))
        return KERN_E_SHAPE;
    kern_status ggml_status;
    if (cpu_numerics(b) == KERN_NUMERICS_GGML &&
        cpu_attention_ggml(b, q, k_cache, v_cache, T, pos0, a, out, &ggml_status))
        return ggml_status;
    const int group = n_head / n_kv_head, n_ctx = pos0 + T;
    const int n_blocks = (T + Q_BLOCK - 1) / Q_BLOCK, M_max = (T < Q_BLOCK ? T : Q_BLOCK) * group;
    /* a block's keys: up to its last query's, or the window plus the block's own spread */
    const int keys_max = a->window > 0 && a->window < n_ctx - Q_BLOCK ? a->window + Q_BLOCK : n_ctx; /* no overflow */
    /* --numerics ggml without AVX2 (llama.cpp's order needs its vector lanes) keeps kern_dot_f32's order for every
     * score */
    const bool lanes = T >= Q_BLOCK && cpu_numerics(b) != KERN_NUMERICS_GGML && !a->sinks; /* a sink per lane: not yet */
    attn_layout lay = { .lanes = lanes ? cpu_score_lanes() : 0, .ldp = ((size_t)keys_max + 7) / 8 * 8 };
    lay.Mp = lay.lanes ? (M_max + lay.lanes - 1) / lay.lanes * lay.lanes : 0;
    const size_t q_floats = (size_t)(lay.lanes ? lay.Mp : M_max) * (size_t)head_dim;
    const size_t p_floats = lay.lanes ? (size_t)keys_max * (size_t)lay.Mp : (size_t)M_max * lay.ldp;
    int failed = 0;
    const bool wide = (double)T * n_head * n_ctx * head_dim >= 1 << 15;
#pragma omp parallel num_threads(cpu_threads(b)) if (wide)
    {
        attn_scratch s = { .q = malloc(q_floats * sizeof(float)), .p = malloc(p_floats * sizeof(float)) };
        if (!s.q || !s.p) {
#pragma omp atomic write
            failed = 1;
        }
        /* the last blocks see the most keys: handed out first, so the threads finish together */
#pragma omp for schedule(dynamic, 1) collapse(2)
        for (int i = 0; i < n_blocks; i++)
            for (int kh = 0; kh < n_kv_head; kh++) {
                if (!s.q || !s.p)
                    continue;
                const int blk = n_blocks - 1 - i, t0 = blk * Q_BLOCK;
                const int nt = T - t0 < Q_BLOCK ? T - t0 : Q_BLOCK;
                attend_block(q, k_cache, v_cache, t0, nt, kh, pos0, a, &s, &lay, out);
            }
        free(s.q);
        free(s.p);
    }
    return failed ? KERN_E_NOMEM : KERN_OK;
}
