"""The attention tensors of a llama-style layer as the held-out writers lay them out (attn_norm, q, k, v apart, their
biases where asked, the output projection), drawn from the writer's own random stream in that order, so that a writer
using it writes the bytes it wrote before.

    from llama_layer import add_attention; add_attention(w.add_tensor, 'blk.0.', rnd, E, H, KV, hd)"""


def add_attention(t, b, rnd, E, H, KV, hd, bias_std=None):
    """bias_std: (q, k, v) standard deviations of the biases, None for none."""
    t(b + 'attn_norm.weight', rnd((E,), 0.1, 1.0))
    t(b + 'attn_q.weight', rnd((H * hd, E), 0.08))
    t(b + 'attn_k.weight', rnd((KV * hd, E), 0.08))
    t(b + 'attn_v.weight', rnd((KV * hd, E), 0.08))
    if bias_std:
        t(b + 'attn_q.bias', rnd((H * hd,), bias_std[0]))
        t(b + 'attn_k.bias', rnd((KV * hd,), bias_std[1]))
        t(b + 'attn_v.bias', rnd((KV * hd,), bias_std[2]))
    t(b + 'attn_output.weight', rnd((E, H * hd), 0.08))
