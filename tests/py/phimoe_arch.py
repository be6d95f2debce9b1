"""Writes small random-weight phimoe files (Phi-3.5-MoE) as convert_hf_to_gguf.py's PhiMoeModel lays one out (its
Phi3MiniModel keys, expert_count and expert_used_count; names: gguf-py's constants; shapes and what the loader requires:
llama.cpp's src/models/phimoe.cpp): norms with gains and biases (the checkpoint's LayerNorms, which llama.cpp runs as
RMSNorms plus the bias), q/k/v apart with biases (or fused without), the attention output's and the logits' biases,
experts feed_forward_length wide stacked per layer, the sliding window the checkpoint's config gives (llama.cpp's phi3
graph turns it off), LongRoPE's two divisor tables where asked (and rope.scaling.attn_factor as the converter computes
it), a SentencePiece vocabulary. Deterministic: the same arguments give the same bytes.

    from phimoe_arch import write_phimoe; write_phimoe(path)"""
import math

import numpy as np
import gguf

from gguf_copy import write_out
from moe_arch import add_spm_vocab


def write_phimoe(path, n_embd=192, n_layer=3, n_head=6, n_kv=2, n_ff=96, n_exp=6, n_used=2, n_vocab=1024,
                 fused_qkv=False, longrope=False, n_ctx=4096, n_ctx_orig=4096, seed=6101):
    rs = np.random.RandomState(seed)
    E, H, KV, X, F = n_embd, n_head, n_kv, n_exp, n_ff
    hd = E // H

    def rnd(shape, std, mean=0.0):
        return (rs.standard_normal(shape).astype(np.float32) * std + mean).astype(np.float32)

    w = gguf.GGUFWriter(path, 'phimoe')
    w.add_name('synthetic phimoe (random weights)')
    w.add_context_length(n_ctx)
    w.add_rope_scaling_orig_ctx_len(n_ctx_orig)
    w.add_embedding_length(E)
    w.add_feed_forward_length(F)
    w.add_block_count(n_layer)
    w.add_head_count(H)
    w.add_head_count_kv(KV)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_rope_dimension_count(hd)
    w.add_rope_freq_base(10000.0)
    w.add_file_type(0)
    w.add_sliding_window(n_ctx)
    if longrope:  # Phi3MiniModel's magnitude for a context past the original
        w.add_rope_scaling_attn_factors(math.sqrt(1 + math.log(n_ctx / n_ctx_orig) / math.log(n_ctx_orig)))
    w.add_expert_used_count(n_used)
    w.add_expert_count(X)
    add_spm_vocab(w, n_vocab)

    t = w.add_tensor
    t('token_embd.weight', rnd((n_vocab, E), 0.5))
    if longrope:  # divisors growing along the pairs, as a long-context model's
        half = np.arange(hd // 2, dtype=np.float32)
        t('rope_factors_long.weight', (1.0 + 0.75 * half).astype(np.float32))
        t('rope_factors_short.weight', (1.0 + 0.06 * half).astype(np.float32))
    for i in range(n_layer):
        b = f'blk.{i}.'
        # biases as large as a LayerNorm's trained ones, so that the mean the RMSNorm keeps matters
        t(b + 'attn_norm.weight', rnd((E,), 0.1, 1.0))
        t(b + 'attn_norm.bias', rnd((E,), 0.1))
        if fused_qkv:
            t(b + 'attn_qkv.weight', rnd(((H + 2 * KV) * hd, E), 0.08))
        else:
            t(b + 'attn_q.weight', rnd((H * hd, E), 0.08))
            t(b + 'attn_k.weight', rnd((KV * hd, E), 0.08))
            t(b + 'attn_v.weight', rnd((KV * hd, E), 0.08))
            t(b + 'attn_q.bias', rnd((H * hd,), 0.2))
            t(b + 'attn_k.bias', rnd((KV * hd,), 0.5))
            t(b + 'attn_v.bias', rnd((KV * hd,), 0.1))
        t(b + 'attn_output.weight', rnd((E, H * hd), 0.08))
        t(b + 'attn_output.bias', rnd((E,), 0.05))
        t(b + 'ffn_norm.weight', rnd((E,), 0.1, 1.0))
        t(b + 'ffn_norm.bias', rnd((E,), 0.1))
        t(b + 'ffn_gate_inp.weight', rnd((X, E), 0.3))
        t(b + 'ffn_gate_exps.weight', rnd((X, F, E), 0.08))
        t(b + 'ffn_up_exps.weight', rnd((X, F, E), 0.08))
        t(b + 'ffn_down_exps.weight', rnd((X, E, F), 0.06))
    t('output_norm.weight', rnd((E,), 0.1, 1.0))
    t('output_norm.bias', rnd((E,), 0.1))
    t('output.weight', rnd((n_vocab, E), 0.08))
    t('output.bias', rnd((n_vocab,), 0.05))
    write_out(w)


if __name__ == '__main__':
    import sys
    write_phimoe(sys.argv[1])
