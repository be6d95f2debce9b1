/*
 * What llama.cpp allocates to run a file on the CPU, buffer by buffer, from the header alone: the same sums its
 * loader and context make, so that "will it fit?" is answered before anything is read or downloaded.
 *
 * Facts, from llama.cpp's sources (src/ and ggml/src/, as vendored by llama-cpp-python 0.3.36):
 * - Weights (llama-model.cpp, load_tensors): each weight goes to the first buffer type of the CPU's list whose
 *   backend supports the op that reads it. The list is CPU_REPACK, then CPU. CPU_REPACK takes 2-D matrices read
 *   by MUL_MAT (3-D experts by MUL_MAT_ID) of the types ggml-cpu/repack.cpp re-lays out on this CPU (AVX2: Q4_0,
 *   Q4_K, IQ4_NL, MXFP4; AVX-512 also Q2_K) when their row count is a multiple of 8; the token embedding is read
 *   by GET_ROWS and stays. Repacked tensors are copies, each padded to the buffer's 32-byte alignment. The plain
 *   ones stay in the mapping: "CPU_Mapped" is the file range from the first such tensor's start to the last's
 *   end (llama_model_loader::get_mapping_range), repacked tensors inside that range included.
 * - KV cache (llama-context.cpp, llama-kv-cache*.cpp): n_ctx padded to 256, split into one stream per sequence
 *   (n_ctx / n_seq cells each, padded to 256: the default, not --kv-unified); one K and one V row of
 *   n_head_kv x head_dim per cell and layer, in the cache types; a sliding-window layer holds
 *   pad256(min(n_ctx / n_seq, n_swa + n_ubatch)) cells per stream (the iSWA cache, swa_full off).
 * - Recurrent states (llama-memory-recurrent.cpp, llama-hparams.cpp's n_embd_r / n_embd_s): a hybrid's attention layers
 *   keep the KV cache above, its recurrent layers (Mamba-2 mixers, gated delta nets, short convolutions) two f32 tensors
 *   each of one row per sequence (max(1, n_seq) rows): the convolution's last taps - 1 columns of its channels, and the
 *   scan's state (ssm.state_size x ssm.inner_size; none for a short convolution); each padded to 32 bytes.
 * - Output (llama_context::output_reserve): n_vocab floats per sequence at creation.
 * - Compute: model_memory_compute (memory_compute.c).
 */
#include "model.h"
#include "memory_internal.h"
#include "model_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KV_PAD 256u          /* llama-context.cpp: cparams.n_ctx = GGML_PAD(n_ctx, 256) */
#define BUFFER_ALIGN 32u     /* the CPU buffer's alignment (ggml-cpu: TENSOR_ALIGNMENT) */

static uint64_t pad(uint64_t x, uint64_t to)
{
    return (x + to - 1) / to * to;
}

model_memory_params model_memory_params_default(void)
{
    model_memory_params p = {
        .n_batch = 2048, .n_ubatch = 512, .n_seq = 1, .type_k = GGUF_TENSOR_F16, .type_v = GGUF_TENSOR_F16,
        .flash_attn = -1,
    };
#if defined(__x86_64__) || defined(__i386__)
    __builtin_cpu_init();
    p.cpu_avx2 = __builtin_cpu_supports("avx2");
    p.cpu_avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw");
#endif
    return p;
}

/* The types ggml-cpu/repack.cpp re-lays out on an x86 CPU with these features. */
static bool repack_type(uint32_t type, const model_memory_params *p)
{
    switch (type) {
    case GGUF_TENSOR_Q4_0: case GGUF_TENSOR_Q4_K: case GGUF_TENSOR_IQ4_NL: case GGUF_TENSOR_MXFP4:
        return p->cpu_avx2;
    case GGUF_TENSOR_Q2_K: return p->cpu_avx512;
    default: return false;
    }
}

/* Whether llama.cpp's CPU backend puts t in its CPU_REPACK buffer. */
static bool is_repacked(const gguf_tensor *t, const model_memory_params *p)
{
    if (p->no_repack || !repack_type(t->type, p) || t->ne[1] % 8 != 0)
        return false;
    int64_t layer;
    model_role r = model_role_of_name(t->name, &layer);
    if (r == MODEL_ROLE_COUNT || r == MODEL_ROLE_TOKEN_EMBD)
        return false;
    const model_role_info *ri = model_role_info_of(r);
    if (ri->ne1 == MODEL_DIM_NONE || ri->expert_rows)
        return false; /* vectors and the experts' bias rows are read by MUL, ADD or ADD_ID */
    /* MUL_MAT takes a 2-D matrix, MUL_MAT_ID a 3-D stack of experts */
    return ri->ne2 == MODEL_DIM_NONE ? t->n_dims == 2 : t->n_dims == 3;
}

static void weights(const gguf_file *f, const model_memory_params *p, model_memory *m)
{
    /* one mapping per shard, each spanning its plain tensors (offsets are the shard's own) */
    const size_t n_shards = gguf_shard_count(f);
    uint64_t *first = malloc(n_shards * sizeof *first), *last = calloc(n_shards, sizeof *last);
    for (size_t s = 0; first && s < n_shards; s++)
        first[s] = UINT64_MAX;
    for (size_t i = 0; i < gguf_tensor_count(f); i++) {
        const gguf_tensor *t = gguf_tensor_at(f, i);
        m->weights_file += t->size;
        if (is_repacked(t, p)) {
            m->weights_repacked += pad(t->size, BUFFER_ALIGN);
            m->n_repacked++;
        } else if (p->no_mmap)
            m->weights_mapped += pad(t->size, BUFFER_ALIGN); /* read into a CPU buffer of the same alignment */
        else if (first && last) {
            first[t->shard] = t->offset < first[t->shard] ? t->offset : first[t->shard];
            last[t->shard] = t->offset + t->size > last[t->shard] ? t->offset + t->size : last[t->shard];
        }
    }
    for (size_t s = 0; first && last && !p->no_mmap && s < n_shards; s++)
        if (first[s] != UINT64_MAX)
            m->weights_mapped += last[s] - first[s];
    free(first);
    free(last);
}

/* Bytes of n elements of a cache type (row-wise: n a multiple of its block). */
static uint64_t row_bytes(uint32_t type, uint64_t n)
{
    const gguf_type_traits *tt = gguf_type_traits_of(type);
    return n / tt->block_size * tt->type_size;
}

/* llama.cpp stores a cache row per head, so a quantized cache type needs head dimensions its block divides */
static model_status cache_type_ok(uint32_t type, const char *which, int64_t head_dim, model_error *err)
{
    const gguf_type_traits *tt = gguf_type_traits_of(type);
    if (tt->state != GGUF_TYPE_OK || type == GGUF_TENSOR_Q8_K || (type >= GGUF_TENSOR_I8 && type <= GGUF_TENSOR_I64))
        return model_fail(err, MODEL_E_UNSUPPORTED, 0, which, "%s cannot be a cache type", tt->name ? tt->name : "?");
    if (head_dim % (int64_t)tt->block_size)
        return model_fail(err, MODEL_E_UNSUPPORTED, 0, which,
                          "a %s cache needs heads of a multiple of %u values; this model's are %lld", tt->name,
                          tt->block_size, (long long)head_dim);
    return MODEL_OK;
}

uint64_t model_memory_v_padded(const model_hparams *hp, bool flash_attn)
{
    uint64_t widest = 0;
    for (int64_t j = 0; !flash_attn && j < hp->n_layer; j++) {
        model_hparams lj;
        model_hparams_layer(hp, j, &lj);
        const uint64_t w = (uint64_t)(lj.n_head_kv * lj.head_dim_v);
        widest = w > widest ? w : widest;
    }
    return widest;
}

uint64_t model_memory_v_width(const model_hparams *hp, int64_t il, uint64_t padded)
{
    model_hparams l;
    model_hparams_layer(hp, il, &l);
    const uint64_t own = (uint64_t)(l.n_head_kv * l.head_dim_v);
    return padded > own ? padded : own;
}

static model_status kv_cache(const model_hparams *hp, const model_memory_params *p, model_memory *m, model_error *err)
{
    /* latent attention split per head keeps no V cache: its values are the first kv_lora_rank of each key row */
    const bool k_only = hp->arch && hp->arch->mla && hp->head_dim_k_mla > 0;
    /* one stream of cells per sequence (llama-completion's default, not --kv-unified): n_ctx / n_seq cells each,
     * a sliding-window layer min(that, window + ubatch) */
    m->kv_cells = m->n_ctx / p->n_seq;
    if (hp->swa_window > 0) {
        uint64_t swa = (uint64_t)hp->swa_window + (uint64_t)p->n_ubatch;
        m->kv_cells_swa = (int64_t)pad(swa < (uint64_t)m->kv_cells ? swa : (uint64_t)m->kv_cells, KV_PAD);
    }
    /* the trailing multi-token prediction blocks have no cache (llama.cpp's KV cache filters them out) */
    const uint64_t v_padded = model_memory_v_padded(hp, m->flash_attn); /* once: the layers' loop reads it */
    /* (a looped model's every pass keeps its own: its layers are its blocks' again) */
    for (int64_t run = 0; run < model_hparams_layers_run(hp); run++) {
        const int64_t il = model_hparams_layer_block(hp, run);
        if (model_hparams_layer_kv_source(hp, il) != il)
            continue; /* Gemma 4 E2B / E4B: it reads an earlier layer's cache and has none of its own */
        if (model_hparams_layer_is_recurrent(hp, il) || model_hparams_layer_is_ffn_only(hp, il))
            continue; /* a hybrid's layers that do not attend (llama_memory_hybrid's attention filter) */
        model_hparams l; /* the layer's heads (a sliding window's own lengths, a count per layer) */
        model_hparams_layer(hp, il, &l);
        const uint64_t k_width = (uint64_t)(l.n_head_kv * l.head_dim_k);
        const uint64_t v_width = k_only ? 0 : model_memory_v_width(hp, il, v_padded);
        model_status s = cache_type_ok(p->type_k, "-ctk", l.head_dim_k, err);
        if (s == MODEL_OK && !k_only)
            s = cache_type_ok(p->type_v, "-ctv", l.head_dim_v, err);
        if (s != MODEL_OK)
            return s;
        bool swa = model_hparams_layer_is_swa(hp, il);
        uint64_t cells = (uint64_t)(swa ? m->kv_cells_swa : m->kv_cells);
        if (swa)
            m->n_layer_swa++;
        else
            m->n_layer_full++;
        m->kv_k += row_bytes(p->type_k, k_width) * cells * (uint64_t)p->n_seq;
        m->kv_v += row_bytes(p->type_v, v_width) * cells * (uint64_t)p->n_seq;
    }
    m->kv_bytes = m->kv_k + m->kv_v;
    return MODEL_OK;
}

/* The recurrent layers' states (llama_memory_recurrent): per layer a conv row and a scan row per sequence. */
static void recurrent_states(const model_hparams *hp, const model_memory_params *p, model_memory *m)
{
    if (!model_hparams_layer_has_state(hp, -1))
        return;
    if (hp->arch->shortconv) {
        m->state_conv = hp->n_embd * (hp->shortconv_l_cache - 1);
    } else {
        m->state_conv = (hp->ssm_d_conv - 1) * (hp->ssm_d_inner + 2 * hp->ssm_n_k_heads * hp->ssm_d_state);
        m->state_scan = hp->ssm_d_state * hp->ssm_d_inner;
    }
    const uint64_t rows = (uint64_t)p->n_seq, f = sizeof(float);
    for (int64_t il = 0; il < hp->n_layer; il++)
        if (model_hparams_layer_has_state(hp, il)) {
            m->n_layer_recurrent++;
            m->recurrent += pad((uint64_t)m->state_conv * rows * f, BUFFER_ALIGN) +
                            pad((uint64_t)m->state_scan * rows * f, BUFFER_ALIGN);
        }
}

model_status model_memory_estimate(const gguf_file *f, const model_hparams *hp, const model_memory_params *p,
                                   model_memory *out, model_error *err)
{
    memset(out, 0, sizeof *out);
    if (!hp->arch)
        return model_fail(err, MODEL_E_UNSUPPORTED, 0, "general.architecture",
                    "architecture '%s' is not one whose graph this estimate knows (%s)", hp->arch_name,
                    model_arch_names());
    const bool attends = !hp->arch->attention_free; /* (a state-space model keeps no cache rows) */
    if (hp->n_layer <= 0 || hp->n_embd <= 0 || (attends && (hp->n_head_kv <= 0 || hp->head_dim_k <= 0)))
        return model_fail(err, MODEL_E_MALFORMED, 0, "", "the hyperparameters do not give the layers' shapes");
    if (p->n_ubatch <= 0 || p->n_batch <= 0 || p->n_seq <= 0)
        return model_fail(err, MODEL_E_UNSUPPORTED, 0, "-ub", "batch sizes and sequences must be at least 1");
    int64_t n_ctx = p->n_ctx > 0 ? p->n_ctx : hp->n_ctx_train;
    if (n_ctx <= 0)
        return model_fail(err, MODEL_E_MALFORMED, 0, "context_length", "no context length: give -c");
    /* llama_context: n_ctx padded to 256, then each sequence's share of it too (so n_ctx may grow) */
    out->n_ctx = (int64_t)(pad(pad((uint64_t)n_ctx, KV_PAD) / (uint64_t)p->n_seq, KV_PAD) * (uint64_t)p->n_seq);
    /* llama_context: -b is at most the context asked for (before its padding: a file trained on 128 tokens run at
     * -c 0 has batches of 128 in a cache of 256), -ub at most -b; the worst-case graph is one ubatch */
    const int64_t n_batch = p->n_batch < n_ctx ? p->n_batch : n_ctx;
    const int64_t n_ubatch = p->n_ubatch < n_batch ? p->n_ubatch : n_batch;
    out->n_tokens = n_ubatch < out->n_ctx ? n_ubatch : out->n_ctx;
    model_memory_params q = *p;
    q.n_ubatch = n_ubatch;
    /* auto turns flash attention on when the backend that holds the cache supports it: the CPU does; a quantized
     * V cache needs it; llama.cpp's context turns it off for some architectures whatever -fa says (Grok's) */
    const bool never = hp->arch && hp->arch->flash_attn_never;
    out->flash_attn = p->flash_attn != 0 && !never;
    if (!out->flash_attn && gguf_type_traits_of(p->type_v)->quantized && never)
        return model_fail(err, MODEL_E_UNSUPPORTED, 0, "-ctv", "a quantized V cache needs flash attention, which "
                          "llama.cpp turns off for every %s model", hp->arch->name);
    if (!out->flash_attn && gguf_type_traits_of(p->type_v)->quantized)
        return model_fail(err, MODEL_E_UNSUPPORTED, 0, "-ctv", "a quantized V cache needs flash attention (-fa on)");
    weights(f, &q, out);
    model_status s = kv_cache(hp, &q, out, err);
    if (s != MODEL_OK)
        return s;
    recurrent_states(hp, &q, out);
    int64_t n_vocab = hp->n_vocab > 0 ? hp->n_vocab : hp->vocab_size;
    out->output = (uint64_t)n_vocab * (uint64_t)p->n_seq * sizeof(float);
    if (!(out->compute = model_memory_compute(f, hp, &q, out)))
        return model_fail(err, MODEL_E_UNSUPPORTED, 0, "general.architecture",
                          "the compute buffer was not estimated: llama.cpp's graph for '%s' with %lld layers is not "
                          "replayed here (unknown, past a million nodes, or out of memory)",
                          hp->arch->name, (long long)hp->n_layer);
    out->total = out->weights_mapped + out->weights_repacked + out->kv_bytes + out->recurrent + out->output +
                 out->compute;
    return MODEL_OK;
}

int64_t model_memory_fit(const gguf_file *f, const model_hparams *hp, const model_memory_params *p, uint64_t budget)
{
    /* the total grows with the context: bisect over multiples of 256 */
    int64_t lo = 0, hi = (hp->n_ctx_train + KV_PAD - 1) / KV_PAD;
    while (lo < hi) {
        int64_t mid = (lo + hi + 1) / 2;
        model_memory_params q = *p;
        q.n_ctx = mid * KV_PAD;
        model_memory m;
        if (model_memory_estimate(f, hp, &q, &m, NULL) == MODEL_OK && m.total <= budget)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo * KV_PAD;
}
