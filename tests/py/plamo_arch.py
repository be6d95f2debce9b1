"""Writes small random-weight files of PLaMo's layers as convert_hf_to_gguf.py's PlamoModel writes them (names:
gguf-py's constants; what the loader and graph read: llama.cpp's src/models/plamo.cpp): one RMSNorm per layer read by
the attention and the feed-forward block side by side, their outputs summed before the residual, q, k and v apart
(the converter regroups q's heads for ggml's grouping; random weights need no regrouping), NEOX rotation of whole
heads, SwiGLU, an output projection of its own, a SentencePiece vocabulary. Deterministic: the same arguments give
the same bytes.

    from plamo_arch import write_plamo; write_plamo(path)"""
import gguf

from gguf_copy import write_out
from layernorm_arch import _random
from moe_arch import add_spm_vocab


def write_plamo(path, n_embd=128, n_layer=3, n_head=4, n_kv=2, n_ff=320, n_vocab=1024, seed=9801):
    rnd = _random(seed)
    E, L, hd = n_embd, n_layer, n_embd // n_head

    w = gguf.GGUFWriter(path, 'plamo')
    w.add_name('synthetic plamo (random weights)')
    w.add_context_length(4096)
    w.add_embedding_length(E)
    w.add_feed_forward_length(n_ff)
    w.add_block_count(L)
    w.add_head_count(n_head)
    w.add_head_count_kv(n_kv)
    w.add_layer_norm_rms_eps(1e-6)
    w.add_file_type(0)
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
        t(b + 'ffn_gate.weight', rnd((n_ff, E), 0.12))
        t(b + 'ffn_up.weight', rnd((n_ff, E), 0.12))
        t(b + 'ffn_down.weight', rnd((E, n_ff), 0.06))
    t('output_norm.weight', rnd((E,), 0.2, 1.0))
    t('output.weight', rnd((n_vocab, E), 0.08))
    write_out(w)
