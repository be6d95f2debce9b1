"""Writes a small random-weight exaone4 file (EXAONE 4.0) as convert_hf_to_gguf.py's Exaone4Model lays one out (names:
gguf-py's constants; what the loader reads: llama.cpp's src/models/exaone4.cpp): no norm before the blocks, a norm after
each (post_attention_norm, post_ffw_norm), per-head q/k norms, Llama 3's rope_freqs divisors; with 64 layers, the
32B's shape of attention, which llama.cpp's loader gives the sliding window (here 3 positions) on three layers in four
(sliding_window_pattern's list) and rotary positions on those alone: the fourth attends to all without any.
Deterministic: the same arguments give the same bytes.

    from exaone4_arch import write_exaone4; write_exaone4(path)"""
import numpy as np
import gguf

from gguf_copy import write_out

from moe_arch import add_bpe_vocab


def write_exaone4(path, n_embd=64, n_layer=64, n_head=4, n_kv=2, hd=16, n_ff=128, window=3, n_vocab=1024, seed=5401):
    rs = np.random.RandomState(seed)
    E, L = n_embd, n_layer

    def rnd(shape, std, mean=0.0):
        return (rs.standard_normal(shape).astype(np.float32) * std + mean).astype(np.float32)

    arch = 'exaone4'
    w = gguf.GGUFWriter(path, arch)
    w.add_name('synthetic exaone4 (random weights)')
    w.add_embedding_length(E)
    w.add_block_count(L)
    w.add_feed_forward_length(n_ff)
    w.add_head_count(n_head)
    w.add_head_count_kv(n_kv)
    w.add_key_length(hd)
    w.add_value_length(hd)
    w.add_context_length(4096)
    w.add_file_type(0)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_rope_freq_base(1000000.0)
    w.add_vocab_size(n_vocab)
    w.add_sliding_window(window)
    w.add_sliding_window_pattern([(i + 1) % 4 != 0 for i in range(L)])
    add_bpe_vocab(w, 'exaone4', ['<|endoftext|>', '[|user|]', '[|assistant|]'], n_vocab, '<|endoftext|>', False)

    t = w.add_tensor
    t('token_embd.weight', rnd((n_vocab, E), 0.05))
    t('rope_freqs.weight', np.linspace(1.0, 8.0, hd // 2).astype(np.float32))
    for i in range(L):
        b = f'blk.{i}.'
        t(b + 'attn_q.weight', rnd((n_head * hd, E), 0.12))
        t(b + 'attn_k.weight', rnd((n_kv * hd, E), 0.12))
        t(b + 'attn_v.weight', rnd((n_kv * hd, E), 0.12))
        t(b + 'attn_q_norm.weight', rnd((hd,), 0.2, 1.0))
        t(b + 'attn_k_norm.weight', rnd((hd,), 0.2, 1.0))
        t(b + 'attn_output.weight', rnd((E, n_head * hd), 0.12))
        t(b + 'post_attention_norm.weight', rnd((E,), 0.1, 0.3))
        t(b + 'ffn_gate.weight', rnd((n_ff, E), 0.12))
        t(b + 'ffn_up.weight', rnd((n_ff, E), 0.12))
        t(b + 'ffn_down.weight', rnd((E, n_ff), 0.1))
        t(b + 'post_ffw_norm.weight', rnd((E,), 0.1, 0.3))
    t('output_norm.weight', rnd((E,), 0.1, 1.0))
    t('output.weight', rnd((n_vocab, E), 0.1))
    write_out(w)
