"""Writes small random-weight files of DeciLM's pruned Llama layers as convert_hf_to_gguf.py's DeciModel writes them
for Llama-3.1-Nemotron-51B, Llama-3.3-Nemotron-Super-49B and -Ultra-253B (block_configs): head_count_kv, head_count
and feed_forward_length as a count per layer (a layer of 0 heads has no attention block; heads with 0 key/value heads
a "linear attention", attn_output of the normed input alone; a width of 0 no feed-forward block), key_length and
value_length, rope.dimension_count, vocab_size, and Llama 3.1's rope_freqs where the rope is llama3's. Names:
gguf-py's constants; what the loader and graph read: llama.cpp's src/models/deci.cpp. Deterministic: the same
arguments give the same bytes.

    from deci_arch import write_deci; write_deci(path)"""
import math

import gguf
import numpy as np

from gguf_copy import write_out
from layernorm_arch import _random
from moe_arch import add_bpe_vocab


def llama3_rope_factors(base, dim, factor=8.0, low=1.0, high=4.0, old_ctx=8192):
    """Llama 3.1's frequency divisors, as the converter computes them from rope_scaling (rope_type llama3)."""
    lo_wave, hi_wave = old_ctx / low, old_ctx / high
    out = []
    for i in range(0, dim, 2):
        wave = 2 * math.pi / (1.0 / base ** (i / dim))
        if wave < hi_wave:
            out.append(1.0)
        elif wave > lo_wave:
            out.append(factor)
        else:
            smooth = (old_ctx / wave - low) / (high - low)
            out.append(1 / ((1 - smooth) / factor + smooth))
    return np.array(out, dtype=np.float32)


def write_deci(path, n_embd=128, head_dim=16, heads=(8, 8, 0, 8, 0, 8), kv=(2, 0, 0, 4, 0, 1),
               ff=(384, 256, 512, 320, 0, 448), base=500000.0, llama3_ctx=64, tied=False, n_vocab=1024, seed=8601):
    """heads, kv, ff: each layer's head_count, head_count_kv and feed_forward_length (the default: an attention layer,
    a linear-attention one, a feed-forward layer, another attention layer, a layer of neither, one more attention
    layer); llama3_ctx: the original context of Llama 3.1's rope scaling, whose divisors become rope_freqs (None:
    no llama3 rope, no rope_freqs)."""
    rnd = _random(seed)
    E, L = n_embd, len(heads)

    w = gguf.GGUFWriter(path, 'deci')
    w.add_name('synthetic deci (random weights)')
    w.add_rope_freq_base(base)
    w.add_head_count_kv(list(kv))
    w.add_head_count(list(heads))
    w.add_feed_forward_length(list(ff))
    w.add_block_count(L)
    w.add_context_length(4096)
    w.add_embedding_length(E)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_key_length(head_dim)
    w.add_value_length(head_dim)
    w.add_file_type(0)
    w.add_vocab_size(n_vocab)
    w.add_rope_dimension_count(head_dim)
    add_bpe_vocab(w, 'llama-bpe', ['<|begin_of_text|>', '<|endoftext|>'], n_vocab, '<|begin_of_text|>', True)

    t = w.add_tensor
    t('token_embd.weight', rnd((n_vocab, E), 0.08))
    for i in range(L):
        b = f'blk.{i}.'
        if heads[i]:
            t(b + 'attn_norm.weight', rnd((E,), 0.2, 1.0))
        if heads[i] and kv[i]:
            t(b + 'attn_q.weight', rnd((heads[i] * head_dim, E), 0.12))
            t(b + 'attn_k.weight', rnd((kv[i] * head_dim, E), 0.12))
            t(b + 'attn_v.weight', rnd((kv[i] * head_dim, E), 0.12))
            t(b + 'attn_output.weight', rnd((E, heads[i] * head_dim), 0.1))
        elif heads[i]:
            t(b + 'attn_output.weight', rnd((E, E), 0.1))
        if ff[i]:
            t(b + 'ffn_norm.weight', rnd((E,), 0.2, 1.0))
            t(b + 'ffn_gate.weight', rnd((ff[i], E), 0.12))
            t(b + 'ffn_down.weight', rnd((E, ff[i]), 0.06))
            t(b + 'ffn_up.weight', rnd((ff[i], E), 0.12))
    t('output_norm.weight', rnd((E,), 0.2, 1.0))
    if not tied:
        t('output.weight', rnd((n_vocab, E), 0.08))
    if llama3_ctx is not None:
        t('rope_freqs.weight', llama3_rope_factors(base, head_dim, old_ctx=llama3_ctx))
    write_out(w)
