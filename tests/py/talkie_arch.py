"""Writes small random-weight talkie files (Talkie, talkie-1930) as llama.cpp's conversion/talkie.py lays them out: no
norm gains anywhere (the checkpoint's RMSNorms have none), attn_q_norm one gain per head ({1, head_count}: the
checkpoint's head_gain unsqueezed), no attn_k_norm, the attention's and the MLP's gains as attn_output.scale and
ffn_down.scale (one value each, in the layers given), each layer's layer_output_scale (its weight of the normed embeddings
added to its output), logit_scale (the lm head's gain), layer_norm_rms_epsilon float32's epsilon as its converter
writes it, output.weight always, a byte-level BPE vocabulary under the 'talkie' pre-tokenizer. Names: gguf-py's
constants; what the loader requires and how the graph runs: llama.cpp's src/models/talkie.cpp. Deterministic: the same
arguments give the same bytes.

    from talkie_arch import write_talkie; write_talkie(path)"""
import numpy as np
import gguf

from gguf_copy import write_out
from moe_arch import add_bpe_vocab


def write_talkie(path, n_embd=128, n_layer=4, n_head=4, n_kv=2, hd=32, n_ff=192, base=10000.0,
                 eps=float(np.finfo(np.float32).eps), logit_scale=0.6, scaled_layers=None, n_vocab=1024, seed=7713):
    """scaled_layers: the layers with attn_output.scale and ffn_down.scale (every layer where None, as the converter
    writes them); logit_scale None: no such key (a file llama.cpp's loader refuses)."""
    rs = np.random.RandomState(seed)
    E = n_embd
    scaled_layers = range(n_layer) if scaled_layers is None else scaled_layers

    def rnd(shape, std, mean=0.0):
        return (rs.standard_normal(shape).astype(np.float32) * std + mean).astype(np.float32)

    arch = 'talkie'
    w = gguf.GGUFWriter(path, arch)
    w.add_name('synthetic talkie (random weights)')
    w.add_context_length(2048)
    w.add_embedding_length(E)
    w.add_block_count(n_layer)
    w.add_feed_forward_length(n_ff)
    w.add_head_count(n_head)
    w.add_head_count_kv(n_kv)
    w.add_key_length(hd)
    w.add_value_length(hd)
    w.add_rope_dimension_count(hd)
    w.add_rope_freq_base(base)
    w.add_layer_norm_rms_eps(eps)
    if logit_scale is not None:
        w.add_logit_scale(logit_scale)
    w.add_file_type(0)
    w.add_vocab_size(n_vocab)
    add_bpe_vocab(w, 'talkie', ['<|endoftext|>', '<|user|>', '<|assistant|>'], n_vocab, '<|endoftext|>', False)

    t = w.add_tensor
    # embeddings far from unit RMS, so that the norm before the first layer matters
    t('token_embd.weight', rnd((n_vocab, E), 0.05))
    for i in range(n_layer):
        b = f'blk.{i}.'
        t(b + 'attn_q.weight', rnd((n_head * hd, E), 0.08))
        t(b + 'attn_k.weight', rnd((n_kv * hd, E), 0.08))
        t(b + 'attn_v.weight', rnd((n_kv * hd, E), 0.08))
        # each head's gain apart (numpy (n_head, 1): GGUF {1, n_head}), spread enough to sharpen some heads' scores
        t(b + 'attn_q_norm.weight', rs.uniform(0.4, 2.5, (n_head, 1)).astype(np.float32))
        t(b + 'attn_output.weight', rnd((E, n_head * hd), 0.08))
        t(b + 'ffn_gate.weight', rnd((n_ff, E), 0.1))
        t(b + 'ffn_up.weight', rnd((n_ff, E), 0.1))
        t(b + 'ffn_down.weight', rnd((E, n_ff), 0.08))
        if i in scaled_layers:
            t(b + 'attn_output.scale', rs.uniform(0.5, 2.0, (1,)).astype(np.float32))
            t(b + 'ffn_down.scale', rs.uniform(0.5, 2.0, (1,)).astype(np.float32))
        t(b + 'layer_output_scale.weight', rs.uniform(-0.5, 1.0, (1,)).astype(np.float32))
    t('output.weight', rnd((n_vocab, E), 0.08))
    write_out(w)


if __name__ == '__main__':
    import sys
    write_talkie(sys.argv[1])
