/*
 * Whole-model quantization as llama-quantize does it without an importance
 * matrix, for the architectures whose description (model/arch.c) says so: the same
 * tensor types (llama_tensor_get_type in llama.cpp's src/llama-quant.cpp),
 * the same tensor order (llama_model_loader's weight_name_comparer), the same
 * metadata and the same bytes in every block (quantize_k.c), so the file is
 * llama.cpp's byte for byte. Files are written atomically by the gguf writer.
 */
#include "model_rules.h"
#include "model.h"
#include "quant.h"

#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* The K-quants' super-block of 256 values (ggml's QK_K): a row not a multiple of it cannot be a K-quant. */
enum { QK_K = 256 };

static const struct {
    quantize_ftype ftype;
    const char *name;
    uint32_t base_type;
} FTYPES[] = {
    { QUANTIZE_FTYPE_Q8_0, "Q8_0", GGUF_TENSOR_Q8_0 },
    { QUANTIZE_FTYPE_Q4_K_M, "Q4_K_M", GGUF_TENSOR_Q4_K },
    { QUANTIZE_FTYPE_Q4_K_S, "Q4_K_S", GGUF_TENSOR_Q4_K },
    { QUANTIZE_FTYPE_Q5_K_M, "Q5_K_M", GGUF_TENSOR_Q5_K },
    { QUANTIZE_FTYPE_Q5_K_S, "Q5_K_S", GGUF_TENSOR_Q5_K },
    { QUANTIZE_FTYPE_Q6_K, "Q6_K", GGUF_TENSOR_Q6_K },
    { QUANTIZE_FTYPE_Q4_0, "Q4_0", GGUF_TENSOR_Q4_0 },
    { QUANTIZE_FTYPE_IQ4_NL, "IQ4_NL", GGUF_TENSOR_IQ4_NL },
    { QUANTIZE_FTYPE_IQ4_XS, "IQ4_XS", GGUF_TENSOR_IQ4_XS },
    { QUANTIZE_FTYPE_Q2_K, "Q2_K", GGUF_TENSOR_Q2_K },
    { QUANTIZE_FTYPE_Q3_K_S, "Q3_K_S", GGUF_TENSOR_Q3_K },
    { QUANTIZE_FTYPE_Q3_K_M, "Q3_K_M", GGUF_TENSOR_Q3_K },
    { QUANTIZE_FTYPE_Q3_K_L, "Q3_K_L", GGUF_TENSOR_Q3_K },
    { QUANTIZE_FTYPE_Q5_0, "Q5_0", GGUF_TENSOR_Q5_0 },
    { QUANTIZE_FTYPE_MXFP4_MOE, "MXFP4_MOE", GGUF_TENSOR_MXFP4 },
    { QUANTIZE_FTYPE_TQ1_0, "TQ1_0", GGUF_TENSOR_TQ1_0 },
    { QUANTIZE_FTYPE_TQ2_0, "TQ2_0", GGUF_TENSOR_TQ2_0 },
};
enum { N_FTYPES = sizeof FTYPES / sizeof FTYPES[0] };

bool quantize_ftype_parse(const char *name, quantize_ftype *out)
{
    for (int i = 0; name && i < N_FTYPES; i++) {
        if (strcasecmp(name, FTYPES[i].name) == 0) {
            *out = FTYPES[i].ftype;
            return true;
        }
    }
    return false;
}

const char *quantize_ftype_name(quantize_ftype ftype)
{
    for (int i = 0; i < N_FTYPES; i++)
        if (FTYPES[i].ftype == ftype)
            return FTYPES[i].name;
    return "?";
}

static uint32_t base_type(quantize_ftype ftype)
{
    for (int i = 0; i < N_FTYPES; i++)
        if (FTYPES[i].ftype == ftype)
            return FTYPES[i].base_type;
    return GGUF_TENSOR_COUNT;
}

/* The layer of "blk.N.…", -1 for tensors outside the blocks. */
static int layer_of(const char *name)
{
    if (strncmp(name, "blk.", 4) != 0)
        return -1;
    char *end;
    const long l = strtol(name + 4, &end, 10);
    return end != name + 4 && *end == '.' && l >= 0 && l < 1000000 ? (int)l : -1;
}

/* llama_model_loader's order: tensors outside the blocks first, then block by block; by name within each. */
static int loader_order(const void *a, const void *b)
{
    const gguf_tensor *ta = *(const gguf_tensor *const *)a, *tb = *(const gguf_tensor *const *)b;
    const int la = layer_of(ta->name), lb = layer_of(tb->name);
    return la != lb ? (la < lb ? -1 : 1) : strcmp(ta->name, tb->name);
}

static bool ends_with(const char *s, const char *tail)
{
    const size_t n = strlen(s), m = strlen(tail);
    return n >= m && strcmp(s + n - m, tail) == 0;
}

/* Q4_K_M's "more bits" layers: the first and last eighth, and every third one between. */
static bool use_more_bits(int i, int n) { return i < n / 8 || i >= 7 * n / 8 || (i - n / 8) % 3 == 2; }

/* llama-quantize's broad tensor categories (tensor_get_category), by the first substring of the name that
 * matches, in this order. */
typedef enum category {
    CAT_OUTPUT, CAT_TOKEN_EMBD, CAT_ATTN_QKV, CAT_ATTN_KV_B, CAT_ATTN_V, CAT_ATTN_K, CAT_ATTN_Q, CAT_ATTN_OUTPUT,
    CAT_FFN_UP, CAT_FFN_GATE, CAT_FFN_DOWN, CAT_OTHER
} category;

static category category_of(const char *name)
{
    if (strcmp(name, "output.weight") == 0)
        return CAT_OUTPUT;
    if (strcmp(name, "token_embd.weight") == 0 || strcmp(name, "per_layer_token_embd.weight") == 0) /* (Gemma 4's) */
        return CAT_TOKEN_EMBD;
    static const struct { const char *part; category c; } parts[] = {
        { "attn_qkv.weight", CAT_ATTN_QKV }, { "attn_kv_b.weight", CAT_ATTN_KV_B },
        { "attn_v.weight", CAT_ATTN_V },     { "attn_k.weight", CAT_ATTN_K },
        { "attn_q.weight", CAT_ATTN_Q },     { "attn_output.weight", CAT_ATTN_OUTPUT },
        { "ffn_up", CAT_FFN_UP },            { "ffn_gate", CAT_FFN_GATE },
        { "ffn_down", CAT_FFN_DOWN },
    };
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++)
        if (strstr(name, parts[i].part))
            return parts[i].c;
    return CAT_OTHER;
}

/* Where the attention's value rows are, alone or fused (llama-quantize's category_is_attn_v). */
static bool is_attn_v_like(category c) { return c == CAT_ATTN_V || c == CAT_ATTN_QKV || c == CAT_ATTN_KV_B; }

/* The model-wide facts and running counters llama-quantize's choice reads (its quantize_state_impl). */
typedef struct rules_state {
    quantize_ftype ftype;
    const quantize_overrides *ov;
    bool tied;                 /* no output.weight: token_embd is the output too */
    bool falcon;               /* model_arch.quantize_falcon_rules */
    bool type_70b;             /* llama.cpp's loader types the model LLM_TYPE_70B (model_arch.quantize_70b_layers) */
    bool gqa4;                 /* head_count / head_count_kv >= 4 (llama.cpp's n_gqa(), layer 0's) */
    int64_t n_expert, n_layer;
    int n_attn_v, i_attn_v, i_ffn_down;
} rules_state;

/* t's dimensions as ggml counts them (ggml_n_dims: the trailing 1s dropped, at least one): what llama-quantize writes in
 * a tensor's info and what its rules ask of a tensor's rank. */
static uint32_t ggml_rank(const gguf_tensor *t)
{
    uint32_t n = t->n_dims;
    while (n > 1 && t->ne[n - 1] == 1)
        n--;
    return n;
}

/* What llama-quantize does with tensor t (llama_tensor_get_type without an importance matrix or overrides). */
static gguf_status choose_type(const gguf_tensor *t, rules_state *rs, uint32_t *type, gguf_error *err)
{
    const char *name = t->name;
    /* kept as they are (tensor_allows_quantization): 1-D tensors, anything not named *weight, the norms, the
     * experts' router, a delta net's and LFM2's convolution taps, Gemma 4's per-layer input projection, learned
     * positions */
    if (ggml_rank(t) < 2 || !ends_with(name, "weight") || strstr(name, "_norm.weight") ||
        !strcmp(name, "position_embd.weight") ||
        strstr(name, "ffn_gate_inp.weight") || strstr(name, "ssm_conv1d") || strstr(name, "shortconv.conv.weight") ||
        strstr(name, "per_layer_model_proj")) {
        *type = t->type;
        return GGUF_OK;
    }
    const category cat = category_of(name);
    const bool q4_k_m = rs->ftype == QUANTIZE_FTYPE_Q4_K_M, eight_experts = rs->n_expert == 8;
    const bool q5_k_m = rs->ftype == QUANTIZE_FTYPE_Q5_K_M, q4_k_s = rs->ftype == QUANTIZE_FTYPE_Q4_K_S;
    const bool q2_k = rs->ftype == QUANTIZE_FTYPE_Q2_K, q3_k_s = rs->ftype == QUANTIZE_FTYPE_Q3_K_S;
    const bool q3_k_m = rs->ftype == QUANTIZE_FTYPE_Q3_K_M, q3_k_l = rs->ftype == QUANTIZE_FTYPE_Q3_K_L;
    const bool iq4 = rs->ftype == QUANTIZE_FTYPE_IQ4_NL || rs->ftype == QUANTIZE_FTYPE_IQ4_XS;
    uint32_t nt = base_type(rs->ftype);
    const uint32_t manual = quantize_overrides_type(rs->ov, name);
    if (manual != GGUF_TENSOR_COUNT) /* the mix's rules skipped, their counters too, as llama-quantize does */
        nt = manual;
    else if (cat == CAT_OUTPUT || (rs->tied && cat == CAT_TOKEN_EMBD)) {
        nt = rs->ftype == QUANTIZE_FTYPE_MXFP4_MOE || rs->falcon || t->ne[0] % gguf_type_traits_of(nt)->block_size != 0
                 ? GGUF_TENSOR_Q8_0
             : nt != GGUF_TENSOR_Q8_0 ? GGUF_TENSOR_Q6_K
                                      : nt;
    } else if (cat == CAT_TOKEN_EMBD && (rs->ftype == QUANTIZE_FTYPE_TQ1_0 || rs->ftype == QUANTIZE_FTYPE_TQ2_0)) {
        nt = GGUF_TENSOR_Q4_K; /* llama_tensor_get_type: the ternary mixes' embeddings */
    } else if (rs->ftype == QUANTIZE_FTYPE_MXFP4_MOE) {
        nt = t->n_dims == 3 && t->ne[2] > 1 ? GGUF_TENSOR_MXFP4 : GGUF_TENSOR_Q8_0; /* experts, and the rest */
    } else if (is_attn_v_like(cat)) {
        if (q2_k)
            nt = rs->gqa4 ? GGUF_TENSOR_Q4_K : GGUF_TENSOR_Q3_K;
        else if (q3_k_m)
            nt = rs->i_attn_v < 2 ? GGUF_TENSOR_Q5_K : GGUF_TENSOR_Q4_K;
        else if (q3_k_l || (iq4 && rs->gqa4))
            nt = GGUF_TENSOR_Q5_K;
        else if ((q4_k_m || q5_k_m) && use_more_bits(rs->i_attn_v, rs->n_attn_v))
            nt = GGUF_TENSOR_Q6_K;
        else if (q4_k_s && rs->i_attn_v < 4)
            nt = GGUF_TENSOR_Q5_K;
        if (rs->type_70b && (nt == GGUF_TENSOR_Q3_K || nt == GGUF_TENSOR_Q4_K)) /* 8 heads share attn_v */
            nt = GGUF_TENSOR_Q5_K;
        if (eight_experts) /* "for the 8-expert model, bumping this to Q8_0 trades just ~128MB" */
            nt = GGUF_TENSOR_Q8_0;
        ++rs->i_attn_v;
    } else if (cat == CAT_ATTN_K) {
        if (eight_experts)
            nt = GGUF_TENSOR_Q8_0;
    } else if (cat == CAT_FFN_DOWN) {
        /* with experts the layer is read from the name (an expert's ffn_down and the shared one's count once) */
        int layer = rs->i_ffn_down;
        if (rs->n_expert > 1 && (layer = layer_of(name)) < 0)
            return gguf_fail(err, GGUF_E_INVALID_ARG, t->info_offset, name,
                             "tensor '%s': no layer in its name, which llama-quantize needs for an expert's tensor",
                             name);
        const int n = (int)rs->n_layer;
        if (q2_k)
            nt = GGUF_TENSOR_Q3_K;
        else if (q3_k_m)
            nt = layer < n / 16                                    ? GGUF_TENSOR_Q5_K
                 : !rs->falcon || use_more_bits(layer, n) ? GGUF_TENSOR_Q4_K
                                                          : GGUF_TENSOR_Q3_K;
        else if (q3_k_l)
            nt = rs->falcon ? GGUF_TENSOR_Q4_K : GGUF_TENSOR_Q5_K;
        else if (q4_k_m && rs->falcon)
            nt = layer < (int)rs->n_layer / 16                ? GGUF_TENSOR_Q6_K
                 : use_more_bits(layer, (int)rs->n_layer) ? GGUF_TENSOR_Q5_K
                                                          : GGUF_TENSOR_Q4_K;
        else if (iq4 && layer < n / 8) /* (without an importance matrix) */
            nt = GGUF_TENSOR_Q5_K;
        else if ((q4_k_m || q5_k_m) && use_more_bits(layer, (int)rs->n_layer))
            nt = GGUF_TENSOR_Q6_K;
        else if (q4_k_s && !rs->falcon && layer < (int)rs->n_layer / 8)
            nt = GGUF_TENSOR_Q5_K;
        ++rs->i_ffn_down;
    } else if (cat == CAT_ATTN_OUTPUT) {
        if (!rs->falcon && eight_experts && (q2_k || q3_k_s || q3_k_m || q4_k_m || q4_k_s || iq4))
            nt = GGUF_TENSOR_Q5_K;
        else if (!rs->falcon && !eight_experts && (q2_k || q3_k_m || q3_k_l))
            nt = q2_k ? GGUF_TENSOR_Q3_K : q3_k_m ? GGUF_TENSOR_Q4_K : GGUF_TENSOR_Q5_K;
        else if (rs->falcon && q3_k_l)
            nt = GGUF_TENSOR_Q4_K;
    }
    if (t->ne[0] % gguf_type_traits_of(nt)->block_size != 0) {
        /* llama.cpp's tensor_type_fallback: a 32-value type of about the same size, else F16 */
        uint32_t fallback = nt == GGUF_TENSOR_Q4_K                                ? GGUF_TENSOR_Q5_0
                            : nt == GGUF_TENSOR_TQ1_0 || nt == GGUF_TENSOR_TQ2_0 ? GGUF_TENSOR_Q4_0
                            : nt == GGUF_TENSOR_Q2_K || nt == GGUF_TENSOR_Q3_K   ? GGUF_TENSOR_Q4_0
                            : nt == GGUF_TENSOR_IQ4_XS                           ? GGUF_TENSOR_IQ4_NL
                            : nt == GGUF_TENSOR_Q5_K                             ? GGUF_TENSOR_Q5_1
                            : nt == GGUF_TENSOR_Q6_K                             ? GGUF_TENSOR_Q8_0
                                                                                 : nt;
        if (t->ne[0] % gguf_type_traits_of(fallback)->block_size != 0)
            fallback = GGUF_TENSOR_F16;
        nt = fallback;
    }
    *type = nt;
    return GGUF_OK;
}

gguf_status quantize_model_plan(const gguf_file *in, quantize_ftype ftype, const quantize_overrides *ov,
                                quantize_plan_entry **out, size_t *n_out, gguf_error *err)
{
    *out = NULL;
    *n_out = 0;
    if (base_type(ftype) == GGUF_TENSOR_COUNT)
        return gguf_fail(err, GGUF_E_INVALID_ARG, 0, "", "unknown file type %d", (int)ftype);
    /* the architectures whose description says llama-quantize's rules for them are reproduced here */
    model_hparams hp;
    model_error hperr;
    const model_status hs = model_hparams_read(in, &hp, &hperr);
    const gguf_kv *arch_kv = gguf_find_kv(in, "general.architecture");
    if (!hp.arch || !hp.arch->quantize) {
        char names[GGUF_ERROR_MESSAGE_SIZE - 192] = ""; /* the message holds GGUF_ERROR_MESSAGE_SIZE bytes in all */
        for (size_t i = 0, at = 0; i < model_arch_count() && at < sizeof names; i++)
            if (model_arch_at(i)->quantize)
                at += (size_t)snprintf(names + at, sizeof names - at, "%s%s", at ? ", " : "", model_arch_at(i)->name);
        return gguf_fail(err, GGUF_E_INVALID_ARG, arch_kv ? arch_kv->offset : 0, "general.architecture",
                         "quantizing is implemented for the architectures %s (llama.cpp's rules for others are not "
                         "reproduced here); this file is '%s'", names, hp.arch_name);
    }
    if (hs != MODEL_OK)
        return gguf_fail(err, GGUF_E_INVALID_ARG, hperr.offset, hperr.subject, "%s", hperr.message);
    /* llama-quantize's n_layer_all: a looped model's (Nanbeige's) blocks counted once per pass */
    const int64_t n_layer = hp.n_layer * (hp.n_loops > 1 ? hp.n_loops : 1);
    gguf_status st = GGUF_OK;
    const size_t n = gguf_tensor_count(in);
    const gguf_tensor **order = malloc((n ? n : 1) * sizeof *order);
    quantize_plan_entry *plan = malloc((n ? n : 1) * sizeof *plan);
    if (!order || !plan) {
        free(order);
        free(plan);
        return gguf_fail(err, GGUF_E_NOMEM, 0, "", "out of memory");
    }
    const bool type_70b = hp.arch->quantize_70b_layers && hp.n_layer == hp.arch->quantize_70b_layers &&
                          (!hp.arch->quantize_70b_gqa_only || (hp.n_head != hp.n_head_kv && hp.n_expert != 8));
    rules_state rs = { .ftype = ftype, .ov = ov, .tied = true, .falcon = hp.arch->quantize_falcon_rules,
                       .type_70b = type_70b, .gqa4 = hp.n_head_kv > 0 && hp.n_head / hp.n_head_kv >= 4,
                       .n_expert = hp.n_expert, .n_layer = n_layer };
    for (size_t i = 0; i < n; i++) {
        order[i] = gguf_tensor_at(in, i);
        rs.n_attn_v += is_attn_v_like(category_of(order[i]->name));
        rs.tied &= strcmp(order[i]->name, "output.weight") != 0;
    }
    qsort(order, n, sizeof *order, loader_order);
    for (size_t i = 0; i < n && !st; i++) {
        const gguf_tensor *t = order[i];
        plan[i].src = t;
        st = choose_type(t, &rs, &plan[i].type, err);
        if (!st && plan[i].type != t->type && !quant_can_quantize(plan[i].type))
            st = gguf_fail(err, GGUF_E_INVALID_ARG, t->info_offset, t->name,
                           "tensor '%s': llama-quantize gives it %s, which this quantizer does not write", t->name,
                           gguf_type_traits_of(plan[i].type)->name);
        if (!st && plan[i].type != t->type && t->type != GGUF_TENSOR_F32 && t->type != GGUF_TENSOR_F16 &&
            t->type != GGUF_TENSOR_BF16 && !quantize_overrides_requantize(ov))
            st = gguf_fail(err, GGUF_E_INVALID_ARG, t->info_offset, t->name,
                           "tensor '%s' is %s: start from an F32, F16 or BF16 file (quantizing quantized weights again "
                           "compounds their rounding; --allow-requantize does it as llama-quantize's does)",
                           t->name, gguf_type_traits_of(t->type)->name);
        else if (!st && plan[i].type != t->type && !quant_can_dequantize(t->type))
            st = gguf_fail(err, GGUF_E_INVALID_ARG, t->info_offset, t->name,
                           "tensor '%s' is %s, which this quantizer cannot decode", t->name,
                           gguf_type_traits_of(t->type)->name);
    }
    free(order);
    if (st) {
        free(plan);
        return st;
    }
    *out = plan;
    *n_out = n;
    return GGUF_OK;
}

/* Produces the bytes [at, at + len) of one output tensor: the whole blocks covering them are dequantized from
 * the source and quantized again, in parallel, then the requested range is copied out. The source is read in whole
 * blocks of its own too (a requantized one's: NVFP4's 64 values under Q8_0's 32), so the values go through in runs of
 * both block lengths' least common multiple, which divides every row. */
typedef struct tensor_job {
    const gguf_tensor *src;
    uint32_t type;
    int threads;
} tensor_job;

static uint64_t gcd_u64(uint64_t a, uint64_t b)
{
    while (b) {
        const uint64_t r = a % b;
        a = b;
        b = r;
    }
    return a;
}

static gguf_status fill_tensor(void *user, uint8_t *dst, uint64_t at, size_t len)
{
    const tensor_job *job = user;
    const gguf_type_traits *tt = gguf_type_traits_of(job->type), *st = gguf_type_traits_of(job->src->type);
    const uint64_t run = tt->block_size / gcd_u64(tt->block_size, st->block_size) * st->block_size;
    /* a run's bytes in the output and in the source (whole blocks of each) */
    const uint64_t out_bytes = run / tt->block_size * tt->type_size, src_bytes = run / st->block_size * st->type_size;
    if (run > QK_K)
        return GGUF_E_INVALID_ARG; /* (no pair of the types here: 256 at most) */
    const uint64_t first = at / out_bytes, last = (at + len - 1) / out_bytes, n_runs = last - first + 1;
    uint8_t *out = malloc(n_runs * out_bytes);
    if (!out)
        return GGUF_E_NOMEM;
    int failed = 0;
#pragma omp parallel num_threads(job->threads > 0 ? job->threads : omp_get_max_threads()) reduction(| : failed)
    {
        float x[QK_K];
#pragma omp for schedule(dynamic, 4)
        for (uint64_t b = 0; b < n_runs; b++) {
            failed |= quant_dequantize_row(job->src->type, job->src->data + (first + b) * src_bytes, x, (int64_t)run) !=
                      QUANT_OK;
            failed |= quant_quantize_row(job->type, x, out + b * out_bytes, (int64_t)run) != QUANT_OK;
        }
    }
    memcpy(dst, out + (at - first * out_bytes), len);
    free(out);
    return failed ? GGUF_E_INVALID_ARG : GGUF_OK;
}

gguf_status quantize_model_write(const gguf_file *in, quantize_ftype ftype, const quantize_overrides *ov,
                                 const char *path, int threads, gguf_error *err)
{
    quantize_plan_entry *plan;
    size_t n;
    gguf_status st = quantize_model_plan(in, ftype, ov, &plan, &n, err);
    if (st)
        return st;
    gguf_writer *w = gguf_writer_create(gguf_version(in));
    tensor_job *jobs = malloc((n ? n : 1) * sizeof *jobs);
    if (!w || !jobs) {
        st = gguf_fail(err, GGUF_E_NOMEM, 0, "", "out of memory");
        goto done;
    }
    /* the source's keys in order, less the two llama-quantize sets last and the split keys it drops */
    for (size_t i = 0; i < gguf_kv_count(in) && !st; i++) {
        const gguf_kv *kv = gguf_kv_at(in, i);
        if (strcmp(kv->key, "general.quantization_version") == 0 || strcmp(kv->key, "general.file_type") == 0 ||
            strncmp(kv->key, "split.", 6) == 0)
            continue;
        st = gguf_writer_add_copy(w, kv->key, &kv->value, err);
    }
    if (!st)
        st = gguf_writer_add_u32(w, "general.quantization_version", 2, err); /* ggml's GGML_QNT_VERSION */
    if (!st)
        st = gguf_writer_add_u32(w, "general.file_type", (uint32_t)ftype, err);
    for (size_t i = 0; i < n && !st; i++) {
        const gguf_tensor *t = plan[i].src;
        if (plan[i].type == t->type) {
            st = gguf_writer_add_tensor(w, t->name, t->type, ggml_rank(t), t->ne, t->data, err);
        } else {
            jobs[i] = (tensor_job){ t, plan[i].type, threads };
            st = gguf_writer_add_tensor_fill(w, t->name, plan[i].type, ggml_rank(t), t->ne, fill_tensor, &jobs[i], err);
        }
    }
    if (!st)
        st = gguf_writer_write_file(w, path, err);
done:
    gguf_writer_free(w);
    free(jobs);
    free(plan);
    return st;
}
