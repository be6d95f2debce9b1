"""Writes small random-weight files of Orion's layers as convert_hf_to_gguf.py's OrionModel writes them (names:
gguf-py's constants; what the loader and graph read: llama.cpp's src/models/orion.cpp): LayerNorms with gains and
biases (the model's config says rms_norm_eps; its code is a LayerNorm, and the converter writes
attention.layer_norm_epsilon), q, k and v apart, NEOX rotation of whole heads with the default base (the converter
writes none), SwiGLU, an output projection of its own, a SentencePiece vocabulary. Deterministic: the same arguments give the same bytes.

    from orion_arch import write_orion; write_orion(path)"""
import gguf

from gguf_copy import write_out
from layernorm_arch import _layernorm, _random
from moe_arch import add_spm_vocab


def write_orion(path, n_embd=128, n_layer=3, n_head=4, n_kv=4, n_ff=384, n_vocab=1024, seed=9201):
    rnd = _random(seed)
    E, L, hd = n_embd, n_layer, n_embd // n_head

    w = gguf.GGUFWriter(path, 'orion')
    w.add_name('synthetic orion (random weights)')
    w.add_file_type(0)
    w.add_context_length(4096)
    w.add_embedding_length(E)
    w.add_block_count(L)
    w.add_feed_forward_length(n_ff)
    w.add_head_count(n_head)
    w.add_head_count_kv(n_kv)
    w.add_layer_norm_eps(1e-5)
    add_spm_vocab(w, n_vocab)

    t = w.add_tensor
    t('token_embd.weight', rnd((n_vocab, E), 0.5))
    for i in range(L):
        b = f'blk.{i}.'
        _layernorm(t, b + 'attn_norm', E, rnd)
        t(b + 'attn_q.weight', rnd((n_head * hd, E), 0.12))
        t(b + 'attn_k.weight', rnd((n_kv * hd, E), 0.12))
        t(b + 'attn_v.weight', rnd((n_kv * hd, E), 0.12))
        t(b + 'attn_output.weight', rnd((E, n_head * hd), 0.1))
        _layernorm(t, b + 'ffn_norm', E, rnd)
        t(b + 'ffn_gate.weight', rnd((n_ff, E), 0.12))
        t(b + 'ffn_up.weight', rnd((n_ff, E), 0.12))
        t(b + 'ffn_down.weight', rnd((E, n_ff), 0.06))
    _layernorm(t, 'output_norm', E, rnd)
    t('output.weight', rnd((n_vocab, E), 0.08))
    write_out(w)
