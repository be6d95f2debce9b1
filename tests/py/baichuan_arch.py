"""Writes small random-weight files of Baichuan's layers as convert_hf_to_gguf.py's BaichuanModel writes them (names:
gguf-py's constants; what the loader and graph read: llama.cpp's src/models/baichuan.cpp): RMSNorms, q, k and v apart
(the converter splits W_pack and permutes q and k for the NORM rotation), SwiGLU, an output projection of its own,
rope.dimension_count the head's width, a SentencePiece vocabulary. llama.cpp's loader types the model by its depth and
gives it positions by that type: a NORM rotation at 32 layers (the 7B's), ALiBi with max_bias 8 at 40 (the 13B's),
none at any other depth; so the held-out files are 32 and 40 layers deep (narrow ones), and one of 3.
Deterministic: the same arguments give the same bytes.

    from baichuan_arch import write_baichuan; write_baichuan(path)"""
import gguf

from gguf_copy import write_out
from layernorm_arch import _random
from moe_arch import add_spm_vocab


def write_baichuan(path, n_embd=64, n_layer=32, n_head=4, n_kv=4, n_ff=160, n_vocab=1024, seed=9301):
    rnd = _random(seed)
    E, L, hd = n_embd, n_layer, n_embd // n_head

    w = gguf.GGUFWriter(path, 'baichuan')
    w.add_name('synthetic baichuan (random weights)')
    w.add_file_type(0)
    w.add_tensor_data_layout('Meta AI original pth')
    w.add_context_length(4096)
    w.add_embedding_length(E)
    w.add_block_count(L)
    w.add_feed_forward_length(n_ff)
    w.add_head_count(n_head)
    w.add_head_count_kv(n_kv)
    w.add_layer_norm_rms_eps(1e-6)
    w.add_rope_dimension_count(hd)
    add_spm_vocab(w, n_vocab)

    t = w.add_tensor
    t('token_embd.weight', rnd((n_vocab, E), 0.5))
    for i in range(L):
        b = f'blk.{i}.'
        t(b + 'attn_norm.weight', rnd((E,), 0.2, 1.0))
        t(b + 'attn_q.weight', rnd((n_head * hd, E), 0.15))
        t(b + 'attn_k.weight', rnd((n_kv * hd, E), 0.15))
        t(b + 'attn_v.weight', rnd((n_kv * hd, E), 0.12))
        t(b + 'attn_output.weight', rnd((E, n_head * hd), 0.08))
        t(b + 'ffn_norm.weight', rnd((E,), 0.2, 1.0))
        t(b + 'ffn_gate.weight', rnd((n_ff, E), 0.12))
        t(b + 'ffn_up.weight', rnd((n_ff, E), 0.12))
        t(b + 'ffn_down.weight', rnd((E, n_ff), 0.06))
    t('output_norm.weight', rnd((E,), 0.2, 1.0))
    t('output.weight', rnd((n_vocab, E), 0.1))
    write_out(w)
