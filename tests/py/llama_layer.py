"""The attention tensors of a llama-style layer as the held-out writers lay them out (attn_norm, q, k, v apart, their
biases where asked, the output projection), drawn from the writer's own random stream in that order, so that a writer
using it writes the bytes it wrote before.

    from llama_layer import add_attention; add_attention(w.add_tensor, 'blk.0.', rnd, E, H, KV, hd)

add_window_keys writes the keys the sliding-window mixtures' writers (mimo2, maple, step35) share, in the order their
files have them."""


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


def add_window_keys(w, arch, E, L, n_ff, heads, kv, hd, hd_v, n_rot, base_swa, n_vocab, window, swa):
    """The model keys before a sliding-window writer's own: heads and kv one count or a list per layer, base_swa None
    for no rope.freq_base_swa, swa one bool per layer."""
    w.add_context_length(4096)
    w.add_embedding_length(E)
    w.add_block_count(L)
    w.add_feed_forward_length(n_ff)
    w.add_head_count(heads)
    w.add_head_count_kv(kv)
    w.add_key_length(hd)
    w.add_value_length(hd_v)
    w.add_rope_freq_base(10000.0)
    if base_swa:
        w.add_float32(f'{arch}.rope.freq_base_swa', base_swa)
    w.add_rope_dimension_count(n_rot)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_file_type(0)
    w.add_vocab_size(n_vocab)
    w.add_uint32(f'{arch}.attention.sliding_window', window)
    w.add_array(f'{arch}.attention.sliding_window_pattern', swa)
