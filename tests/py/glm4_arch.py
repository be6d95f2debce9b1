"""Writes a small random-weight glm4 file (GLM-4-0414, GLM-Z1) as convert_hf_to_gguf.py's Glm4Model lays one out (names:
gguf-py's constants; what the loader reads: llama.cpp's src/models/glm4.cpp): q/k/v with biases, a norm before and after
the attention and before and after the feed-forward block, gate and up fused in ffn_up (gate rows first), half of each
head rotating (partial_rotary_factor 0.5, NORM pairs), an output projection of its own. Deterministic: the same
arguments give the same bytes.

    from glm4_arch import write_glm4; write_glm4(path)"""
import numpy as np
import gguf

from gguf_copy import write_out

from moe_arch import add_bpe_vocab


def write_glm4(path, n_embd=192, n_layer=3, n_head=6, n_kv=2, hd=32, n_ff=320, n_vocab=1024, seed=5501):
    rs = np.random.RandomState(seed)
    E, L = n_embd, n_layer

    def rnd(shape, std, mean=0.0):
        return (rs.standard_normal(shape).astype(np.float32) * std + mean).astype(np.float32)

    arch = 'glm4'
    w = gguf.GGUFWriter(path, arch)
    w.add_name('synthetic glm4 (random weights)')
    w.add_embedding_length(E)
    w.add_block_count(L)
    w.add_feed_forward_length(n_ff)
    w.add_head_count(n_head)
    w.add_head_count_kv(n_kv)
    w.add_key_length(hd)
    w.add_value_length(hd)
    w.add_rope_dimension_count(hd // 2)
    w.add_context_length(4096)
    w.add_file_type(0)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_rope_freq_base(10000.0)
    add_bpe_vocab(w, 'glm4', ['<|endoftext|>', '<|user|>', '<|assistant|>'], n_vocab, '<|endoftext|>', False)

    t = w.add_tensor
    t('token_embd.weight', rnd((n_vocab, E), 0.05))
    for i in range(L):
        b = f'blk.{i}.'
        t(b + 'attn_norm.weight', rnd((E,), 0.1, 1.0))
        t(b + 'attn_q.weight', rnd((n_head * hd, E), 0.1))
        t(b + 'attn_q.bias', rnd((n_head * hd,), 0.05))
        t(b + 'attn_k.weight', rnd((n_kv * hd, E), 0.1))
        t(b + 'attn_k.bias', rnd((n_kv * hd,), 0.05))
        t(b + 'attn_v.weight', rnd((n_kv * hd, E), 0.1))
        t(b + 'attn_v.bias', rnd((n_kv * hd,), 0.05))
        t(b + 'attn_output.weight', rnd((E, n_head * hd), 0.1))
        t(b + 'post_attention_norm.weight', rnd((E,), 0.1, 0.5))
        t(b + 'ffn_norm.weight', rnd((E,), 0.1, 1.0))
        t(b + 'ffn_up.weight', rnd((2 * n_ff, E), 0.1))
        t(b + 'ffn_down.weight', rnd((E, n_ff), 0.1))
        t(b + 'post_ffw_norm.weight', rnd((E,), 0.1, 0.5))
    t('output_norm.weight', rnd((E,), 0.1, 1.0))
    t('output.weight', rnd((n_vocab, E), 0.1))
    write_out(w)
