/*
 * The --numerics ggml prompt panels' layout and packing, included by act_gemm_body.h (so compiled at its
 * two levels; GEMM_TARGET, GEMM_VNNI as it defines them): each type's kind (what the panel holds, how its
 * sums are added), the bytes of a panel of 8 or 16 rows, and the weight rows unpacked and transposed into it.
 */
enum { PANEL_ROWS = 8, WIDE_ROWS = 16, GEMM_TOKENS = 4 };

typedef enum act_layout { ACT_Q8_0, ACT_Q8_1, ACT_Q8_K } act_layout;
/* GMIN_LANES: Q6_K's -32 as ggml's vec_dot takes it, 32 * (s[2j] bsums[2j] + s[2j + 1] bsums[2j + 1]) off group j's
 * integer per block, the (s_lo, s_hi) pairs of chunk j kept where the mins' pairs go. GMIN_OFFSET: a scaled kind
 * stored as q + off, its off * (s_lo bsums[2c] + s_hi bsums[2c + 1]) taken off chunk c's integer, the pairs
 * (off s_lo, off s_hi) kept where the mins' pairs go (ORDER_ROWS; unscaled kinds take off * sum(a) as they are). */
typedef enum gemm_min { GMIN_NONE, GMIN_Q8_1_S, GMIN_GROUPED, GMIN_LANES, GMIN_OFFSET } gemm_min;
/* How a row's f32 sum is added up: ROWS, one lane per row, block after block (llama.cpp's repacked GEMM,
 * ggml-cpu/repack.cpp); GROUPS, 8 partial sums per row, one per group of 4 values, each block's scaled
 * in with an FMA, then added as hsum_float_8 adds its lanes (ggml's AVX2 vec_dot, and llamafile's tinyBLAS,
 * which llama.cpp's prompts of Q8_0 and Q5_0 go through; for Q3_K, Q5_K, Q6_K and IQ4_XS, whose vec_dot sums
 * each lane's scaled integers over the 256-value block first). Mins summed apart: Q8_1's, and Q5_K's. */
typedef enum gemm_order { ORDER_ROWS, ORDER_GROUPS } gemm_order;

/* What a type's panel holds and how its dot is summed (constants where the body is inlined). */
typedef struct gemm_kind {
    int sb;          /* values per weight block, one d (and dmin) each: 32 or 256 */
    act_layout act;  /* the activations' block layout */
    bool sign;       /* signed weights (|w| <= 128): |w| meets the activation with w's sign */
    int off;         /* unsigned weights stored as q + off; off * sum(a) is taken back (0: none; unscaled kinds only) */
    int depth;       /* ORDER_ROWS with maddubs: results added in 16 bits before widening,
                      * depth * 2 * max(q + off) * 128 < 2^15; 8 only where both halves of a chunk share one scale */
    bool scaled;     /* integer scales per 16 values (a pair per chunk, equal for per-32 types) */
    bool scale32;    /* scales per 32 values: a chunk's two halves share one */
    gemm_min min;    /* Q4_1/Q5_1: + m * s (ORDER_GROUPS);  Q2_K/Q4_K/Q5_K: - dmin * sum(m * bsums), per block (ORDER_ROWS),
                      * or summed apart and taken off at the end (ORDER_GROUPS: Q5_K, vec_dot's summs) */
    gemm_order order;
    int step;        /* ORDER_ROWS of 256-value blocks: chunks of 32 whose integer sums llama.cpp's repacked GEMM turns
                      * into f32 at a time (repack.cpp: Q4_K 2, Q2_K 4), the mins' in their own sum taken off at the
                      * end; its GEMV (a prompt's last T % 4 tokens) takes whole blocks. 0: one block a step. */
    bool tiled;      /* ORDER_ROWS in the f32 steps of llama.cpp's tiled K-quant kernel (act_gemm_body.h), per block:
                      * ((float)integer * d_w - dmin * (float)mins) then times d_a, each step one fused operation */
} gemm_kind;

/* ---- the panel of `rows` rows (8, or with VNNI 16 for the ORDER_ROWS kinds: what one 512-bit register's
 * lanes hold; the ORDER_GROUPS kinds, whose sums follow ggml's 8 lanes, hold two 8-row panels one after the
 * other), per weight block: d[rows] and dm[rows] (f32, one per row), then per chunk of 32 values the 8 groups
 * of 4 * rows bytes (lane r: quants 4j..4j+3 of row r), then, as the kind needs them, the scales of the
 * chunk's halves as int16 pairs (s, s), rows each, and the mins' pairs (m_lo, m_hi). */
static INLINE int scales_at(int rows) { return 32 * rows; }
static INLINE int min_pairs_at(gemm_kind k, int rows) { return 32 * rows + (k.scaled ? 8 * rows : 0); }
static INLINE bool has_min_pairs(gemm_kind k) { return k.min >= GMIN_GROUPED; }
static INLINE int chunk_bytes(gemm_kind k, int rows) { return min_pairs_at(k, rows) + (has_min_pairs(k) ? 4 * rows : 0); }
static INLINE uint64_t block_panel_bytes(gemm_kind k, int rows)
{
    return 8 * (uint64_t)rows + (uint64_t)(k.sb / 32) * chunk_bytes(k, rows);
}

/* One row's block unpacked: its chunks of 32 quants (stored form), their half scales and mins, d, dm. */
typedef struct row_block {
    __m256i q[8];
    int16_t s_lo[8], s_hi[8], m_lo[8], m_hi[8];
    float d, dm;
} row_block;

/* G_*_TILED: the 256-value types as llama.cpp's tiled kernel multiplies them (from CPU_TILED_MIN_TOKENS
 * tokens), whose f32 steps come once per block: any order of the block's integers gives them, so these panels
 * take the ORDER_ROWS form (4 tokens a weight load, one vpdpbusd per 4 values with VNNI). */
typedef enum gemm_type { G_Q4_0, G_Q5_0, G_Q8_0, G_IQ4_NL, G_Q4_1, G_Q5_1, G_Q2_K, G_Q3_K, G_Q4_K, G_Q5_K, G_Q6_K,
                         G_IQ4_XS, G_Q2_K_TILED, G_Q3_K_TILED, G_Q5_K_TILED, G_Q6_K_TILED, G_IQ4_XS_TILED } gemm_type;

/* Each type's kind: the bounds on depth (maddubs only) are 2 * max(stored quant) * 128 per pair. Wide signed
 * types: sign moved to the activation for maddubs, + 128 for vpdpbusd. */
#define WIDE_OFF (GEMM_VNNI ? 128 : 0)
/* sv: values per integer scale (16, 32; 0: none) */
#define KIND(sb, act, sign, off, depth, sv, min, order, step) \
    { sb, act, sign, off, depth, (sv) != 0, (sv) == 32, min, order, step, false }
/* ORDER_ROWS in the tiled kernel's steps; signed weights with VNNI stored + off (vpdpbusd takes unsigned weights) */
#define TILED(sign, off, depth, sv, min) { 256, ACT_Q8_K, sign, off, depth, true, (sv) == 32, min, ORDER_ROWS, 0, true }
#define TILED_OFF(off) ((off) ? GMIN_OFFSET : GMIN_NONE)
static const gemm_kind kinds[] = {
    [G_Q4_0] = KIND(32, ACT_Q8_0, false, 8, 8, 0, GMIN_NONE, ORDER_ROWS, 0),        /* 0..15: 8 x 3840 */
    [G_Q5_0] = KIND(32, ACT_Q8_0, true, 0, 1, 0, GMIN_NONE, ORDER_GROUPS, 0),       /* -16..15 */
    [G_Q8_0] = KIND(32, ACT_Q8_0, true, 0, 1, 0, GMIN_NONE, ORDER_GROUPS, 0),       /* |w| <= 128 */
    [G_IQ4_NL] = KIND(32, ACT_Q8_0, !GEMM_VNNI, WIDE_OFF, 1, 0, GMIN_NONE, ORDER_ROWS, 0), /* -127..113 */
    [G_Q4_1] = KIND(32, ACT_Q8_1, false, 0, 8, 0, GMIN_Q8_1_S, ORDER_GROUPS, 0),    /* 0..15 */
    [G_Q5_1] = KIND(32, ACT_Q8_1, false, 0, 4, 0, GMIN_Q8_1_S, ORDER_GROUPS, 0),    /* 0..31 */
    [G_Q2_K] = KIND(256, ACT_Q8_K, false, 0, 4, 16, GMIN_GROUPED, ORDER_ROWS, 4),  /* 0..3, scales per 16 */
    [G_Q3_K] = KIND(256, ACT_Q8_K, true, 0, 1, 16, GMIN_NONE, ORDER_GROUPS, 0),       /* -4..3, per 16 */
    [G_Q4_K] = KIND(256, ACT_Q8_K, false, 0, 8, 32, GMIN_GROUPED, ORDER_ROWS, 2),  /* 0..15, per 32 */
    [G_Q5_K] = KIND(256, ACT_Q8_K, false, 0, 1, 32, GMIN_GROUPED, ORDER_GROUPS, 0),   /* 0..31, per 32 */
    [G_Q6_K] = KIND(256, ACT_Q8_K, false, 32, 1, 16, GMIN_LANES, ORDER_GROUPS, 0),    /* 0..63 (q - 32 + 32), per 16 */
    [G_IQ4_XS] = KIND(256, ACT_Q8_K, true, 0, 1, 32, GMIN_NONE, ORDER_GROUPS, 0),     /* -127..113, per 32 */
    [G_Q2_K_TILED] = TILED(false, 0, 4, 16, GMIN_GROUPED),                                 /* 0..3 */
    [G_Q3_K_TILED] = TILED(!GEMM_VNNI, GEMM_VNNI ? 4 : 0, 4, 16, TILED_OFF(GEMM_VNNI)),    /* -4..3 */
    [G_Q5_K_TILED] = TILED(false, 0, 4, 32, GMIN_GROUPED),                                 /* 0..31 */
    [G_Q6_K_TILED] = TILED(false, 32, 2, 16, GMIN_OFFSET),                                 /* 0..63 */
    [G_IQ4_XS_TILED] = TILED(!GEMM_VNNI, WIDE_OFF, 1, 32, TILED_OFF(GEMM_VNNI)),           /* -127..113 */
};

static const legacy_kind legacy_of[] = { [G_Q4_0] = LEG_Q4_0, [G_Q5_0] = LEG_Q5_0, [G_Q8_0] = LEG_Q8_0,
                                         [G_IQ4_NL] = LEG_IQ4_NL, [G_Q4_1] = LEG_Q4_1, [G_Q5_1] = LEG_Q5_1 };
static const kquant_kind kquant_of[] = { [G_Q2_K] = KQ_Q2_K, [G_Q3_K] = KQ_Q3_K, [G_Q4_K] = KQ_Q4_K,
                                         [G_Q5_K] = KQ_Q5_K, [G_Q6_K] = KQ_Q6_K, [G_IQ4_XS] = KQ_IQ4_XS,
                                         [G_Q2_K_TILED] = KQ_Q2_K, [G_Q3_K_TILED] = KQ_Q3_K,
                                         [G_Q5_K_TILED] = KQ_Q5_K, [G_Q6_K_TILED] = KQ_Q6_K,
                                         [G_IQ4_XS_TILED] = KQ_IQ4_XS };

GEMM_TARGET static INLINE void unpack_row_block(gemm_type g, gemm_kind k, const uint8_t *b, row_block *u)
{
    const __m256i off = _mm256_set1_epi8((char)k.off);
    if (k.sb == 32) {
        u->q[0] = _mm256_add_epi8(legacy_quants(legacy_of[g], b), off);
        u->d = f16c(b);
        u->dm = k.min == GMIN_Q8_1_S ? f16c(b + 2) : 0.0f;
        return;
    }
    kblock kb;
    kblock_unpack(kquant_of[g], b, &kb);
    for (int c = 0; c < 8; c++) {
        u->q[c] = _mm256_add_epi8(kb.q[c], off);
        u->s_lo[c] = kb.s_lo[c], u->s_hi[c] = kb.s_hi[c];
        if (k.min == GMIN_OFFSET) /* the offset's share of each half: off times its scale */
            u->m_lo[c] = (int16_t)(k.off * kb.s_lo[c]), u->m_hi[c] = (int16_t)(k.off * kb.s_hi[c]);
        else if (kquant_of[g] == KQ_Q2_K) /* the mins: the scale bytes' high nibbles, per 16 values (byte 2c, 2c + 1) */
            u->m_lo[c] = b[2 * c] >> 4, u->m_hi[c] = b[2 * c + 1] >> 4;
        else if (kquant_of[g] == KQ_Q6_K) /* GMIN_LANES: the halves' scales themselves */
            u->m_lo[c] = kb.s_lo[c], u->m_hi[c] = kb.s_hi[c];
        else
            u->m_lo[c] = u->m_hi[c] = kb.m[c];
    }
    u->d = kb.d;
    u->dm = kb.dmin;
}

/* v[r] holds row r's 8 groups of 4 bytes; afterwards v[j] holds group j of rows 0..7 (an 8 x 8 transpose
 * of 32-bit elements). */
GEMM_TARGET static inline void transpose8x32(__m256i v[8])
{
    __m256i t[8], u[8];
    for (int i = 0; i < 4; i++) {
        t[2 * i] = _mm256_unpacklo_epi32(v[2 * i], v[2 * i + 1]);     /* rows 2i, 2i+1: groups 0 1 | 4 5 */
        t[2 * i + 1] = _mm256_unpackhi_epi32(v[2 * i], v[2 * i + 1]); /* groups 2 3 | 6 7 */
    }
    for (int h = 0; h < 2; h++) { /* rows 4h..4h+3 */
        const __m256i *s = t + 4 * h;
        u[4 * h + 0] = _mm256_unpacklo_epi64(s[0], s[2]); /* group 0 | 4 */
        u[4 * h + 1] = _mm256_unpackhi_epi64(s[0], s[2]); /* group 1 | 5 */
        u[4 * h + 2] = _mm256_unpacklo_epi64(s[1], s[3]); /* group 2 | 6 */
        u[4 * h + 3] = _mm256_unpackhi_epi64(s[1], s[3]); /* group 3 | 7 */
    }
    for (int j = 0; j < 4; j++) {
        v[j] = _mm256_permute2x128_si256(u[j], u[4 + j], 0x20);
        v[j + 4] = _mm256_permute2x128_si256(u[j], u[4 + j], 0x31);
    }
}

static inline int32_t pair16(int lo, int hi)
{
    return (int32_t)((uint32_t)(uint16_t)lo | (uint32_t)(uint16_t)hi << 16);
}

/* Rows w, w + rb, ... (nr <= rows of them, rows 8 or 16; missing rows repeat the last) of n values into the
 * panel p: with 16 rows, each group's 64 bytes hold rows 0-7 then rows 8-15. */
GEMM_TARGET static INLINE void pack_body(gemm_type g, gemm_kind k, int rows, const uint8_t *w, uint64_t rb, int nr,
                                         int64_t n, uint8_t *p)
{
    enum { MOST = 16 };
    const uint64_t bb = rb / (uint64_t)(n / k.sb); /* bytes per weight block (a row is whole blocks) */
    for (int64_t i = 0; i < n / k.sb; i++, p += block_panel_bytes(k, rows)) {
        row_block u[MOST];
        for (int r = 0; r < rows; r++)
            unpack_row_block(g, k, w + (uint64_t)(r < nr ? r : nr - 1) * rb + (uint64_t)i * bb, &u[r]);
        float d[MOST], dm[MOST];
        for (int r = 0; r < rows; r++)
            d[r] = u[r].d, dm[r] = u[r].dm;
        memcpy(p, d, 4 * (size_t)rows);
        memcpy(p + 4 * rows, dm, 4 * (size_t)rows);
        for (int c = 0; c < k.sb / 32; c++) {
            uint8_t *q = p + 8 * rows + (uint64_t)c * chunk_bytes(k, rows);
            for (int h = 0; h < rows / 8; h++) {
                __m256i v[8];
                for (int r = 0; r < 8; r++)
                    v[r] = u[8 * h + r].q[c];
                transpose8x32(v);
                for (int j = 0; j < 8; j++)
                    _mm256_storeu_si256((__m256i *)(q + 4 * rows * j + 32 * h), v[j]);
            }
            int32_t lo[MOST], hi[MOST], mins[MOST];
            for (int r = 0; r < rows; r++) {
                lo[r] = pair16(u[r].s_lo[c], u[r].s_lo[c]);
                hi[r] = pair16(u[r].s_hi[c], u[r].s_hi[c]);
                mins[r] = pair16(u[r].m_lo[c], u[r].m_hi[c]);
            }
            if (k.scaled) {
                memcpy(q + scales_at(rows), lo, 4 * (size_t)rows);
                memcpy(q + scales_at(rows) + 4 * rows, hi, 4 * (size_t)rows);
            }
            if (has_min_pairs(k))
                memcpy(q + min_pairs_at(k, rows), mins, 4 * (size_t)rows);
        }
    }
}

