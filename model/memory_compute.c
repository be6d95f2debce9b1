/*
 * The compute buffer llama.cpp reserves: its graph allocator (ggml-alloc.c) reuses a tensor's bytes once its
 * last reader has run, so the buffer is the largest set of tensors alive at one time in the worst-case graph
 * (one ubatch of T tokens, every output kept, a full cache). This models that set for the phases where it
 * peaks, each a list of the tensors alive in it (f32 activations of T columns unless said):
 *   - the output: the last hidden state, its norm and the logits (n_vocab x T): the peak of every model
 *     with a large vocabulary; the attention masks are freed by then;
 *   - the feed-forward: the residual, the normed input, gate, up and the activation (the gate/up width
 *     times the experts used per token; phi3's fused gate/up is the same bytes), plus the masks;
 *   - attention: with flash attention the residual, the normed input, q, k, v and the attention's output,
 *     plus the masks (f16 n_kv x T, one per cache: full and sliding-window); without it the scores of
 *     every head (f32 n_kv x T x n_head) and f32 masks dominate.
 * It does not replay the allocator's placement, so a small model whose peak is inside a layer can be a few
 * per cent off; tests/test_memory.c holds it to llama.cpp's printed figures (tests/data/llama_cpp_memory.tsv).
 */
#include "memory_internal.h"

static uint64_t max2(uint64_t a, uint64_t b)
{
    return a > b ? a : b;
}

uint64_t model_memory_compute(const model_hparams *hp, const model_memory *m)
{
    const uint64_t T = (uint64_t)m->n_tokens, f32 = 4;
    const uint64_t E = (uint64_t)hp->n_embd;
    const uint64_t V = (uint64_t)(hp->n_vocab > 0 ? hp->n_vocab : hp->vocab_size);
    const uint64_t Q = (uint64_t)(hp->n_head * hp->head_dim_k);
    const uint64_t Qv = (uint64_t)(hp->n_head * hp->head_dim_v);
    const uint64_t K = (uint64_t)(hp->n_head_kv * hp->head_dim_k), Vw = (uint64_t)(hp->n_head_kv * hp->head_dim_v);
    /* the feed-forward's widest product: a dense layer's, or the routed experts' together, or the shared one */
    uint64_t F = (uint64_t)hp->n_ff;
    if (hp->n_expert > 0) {
        uint64_t routed = (uint64_t)(hp->n_ff_exp > 0 ? hp->n_ff_exp : hp->n_ff) * (uint64_t)hp->n_expert_used;
        F = max2(routed, (uint64_t)hp->n_ff_shexp);
    }
    /* masks: n_kv x T per cache, f16 for flash attention, f32 otherwise */
    const uint64_t mask_elem = m->flash_attn ? 2 : 4;
    uint64_t masks = (uint64_t)m->kv_cells * T * mask_elem;
    if (m->n_layer_swa > 0)
        masks += (uint64_t)m->kv_cells_swa * T * mask_elem;

    uint64_t out = (V + 2 * E) * T * f32;
    uint64_t ffn = (2 * E + 3 * F) * T * f32 + masks;
    uint64_t attn = (2 * E + Q + K + Vw + Qv) * T * f32 + masks;
    if (!m->flash_attn) {
        /* the scores of the layer with the most cells (a full-attention one unless every layer slides) */
        uint64_t n_kv = (uint64_t)(m->n_layer_full > 0 ? m->kv_cells : m->kv_cells_swa);
        attn += n_kv * T * (uint64_t)hp->n_head * f32;
    }
    return max2(out, max2(ffn, attn));
}
