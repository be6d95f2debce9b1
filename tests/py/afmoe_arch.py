"""Writes small random-weight files of AFMoE's layers (Arcee Trinity) as convert_hf_to_gguf.py's AfmoeModel writes them
(names: gguf-py's constants; what the loader and graph read: llama.cpp's src/models/afmoe.cpp): per-head q/k RMSNorms,
an output gate of its own (attn_gate: the attention's output times sigmoid(x Wgate) before attn_output), norms before
and after the attention and the feed-forward block, the sliding window where the file sets one (three layers in four),
NoPE on every fourth layer (llama.cpp's default step), dense first layers, then experts chosen by sigmoid plus a
selection bias (exp_probs_b) beside expert_shared_count shared experts of an expert's width, a byte-level BPE
vocabulary. Deterministic: the same arguments give the same bytes.

    from afmoe_arch import write_afmoe; write_afmoe(path)"""
import numpy as np
import gguf

from gguf_copy import write_out
from moe_arch import add_bpe_vocab, add_routed_experts


def write_afmoe(path, n_embd=128, n_layer=5, n_head=4, n_kv=2, hd=32, n_ff=256, n_dense=1, n_exp=8, n_used=3,
                n_ffe=64, n_shared=1, norm=True, scale=2.5, window=3, swa_layers=None, tied=False, n_vocab=1024,
                seed=9901):
    rs = np.random.RandomState(seed)
    E, H, KV, X, Fe = n_embd, n_head, n_kv, n_exp, n_ffe

    def rnd(shape, std, mean=0.0):
        return (rs.standard_normal(shape).astype(np.float32) * std + mean).astype(np.float32)

    w = gguf.GGUFWriter(path, 'afmoe')
    w.add_name('synthetic afmoe (random weights)')
    w.add_block_count(n_layer)
    w.add_context_length(4096)
    w.add_embedding_length(E)
    w.add_feed_forward_length(n_ff)
    w.add_head_count(H)
    w.add_head_count_kv(KV)
    w.add_rope_freq_base(10000.0)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_file_type(0)
    w.add_rope_dimension_count(hd)
    w.add_key_length(hd)
    w.add_value_length(hd)
    w.add_expert_count(X)
    w.add_expert_used_count(n_used)
    w.add_expert_gating_func(gguf.ExpertGatingFuncType.SIGMOID)
    w.add_expert_shared_count(n_shared)
    w.add_expert_feed_forward_length(Fe)
    w.add_leading_dense_block_count(n_dense)
    w.add_expert_weights_norm(norm)
    w.add_expert_weights_scale(scale)
    if window:  # (a file without a window crashes llama.cpp's afmoe graph, which asks for a sliding-window cache)
        w.add_sliding_window(window)
    if swa_layers:
        w.add_sliding_window_pattern(swa_layers)
    add_bpe_vocab(w, 'llama-bpe', ['<|begin_of_text|>', '<|endoftext|>'], n_vocab, '<|begin_of_text|>', True)

    t = w.add_tensor
    t('token_embd.weight', rnd((n_vocab, E), 0.05))
    for i in range(n_layer):
        b = f'blk.{i}.'
        t(b + 'attn_norm.weight', rnd((E,), 0.1, 1.0))
        t(b + 'attn_q.weight', rnd((H * hd, E), 0.1))
        t(b + 'attn_k.weight', rnd((KV * hd, E), 0.1))
        t(b + 'attn_v.weight', rnd((KV * hd, E), 0.1))
        t(b + 'attn_q_norm.weight', rnd((hd,), 0.2, 1.0))
        t(b + 'attn_k_norm.weight', rnd((hd,), 0.2, 1.0))
        t(b + 'attn_gate.weight', rnd((H * hd, E), 0.2))
        t(b + 'attn_output.weight', rnd((E, H * hd), 0.1))
        t(b + 'post_attention_norm.weight', rnd((E,), 0.1, 1.0))
        t(b + 'ffn_norm.weight', rnd((E,), 0.1, 1.0))
        if i < n_dense:
            t(b + 'ffn_gate.weight', rnd((n_ff, E), 0.1))
            t(b + 'ffn_up.weight', rnd((n_ff, E), 0.1))
            t(b + 'ffn_down.weight', rnd((E, n_ff), 0.08))
        else:
            add_routed_experts(t, b, rnd, E, X, Fe, Fe * n_shared)
        t(b + 'post_ffw_norm.weight', rnd((E,), 0.1, 1.0))
    t('output_norm.weight', rnd((E,), 0.1, 1.0))
    if not tied:
        t('output.weight', rnd((n_vocab, E), 0.08))
    write_out(w)
