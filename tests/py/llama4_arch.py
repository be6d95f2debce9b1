"""Writes a small random-weight llama4 file (Llama 4 Scout / Maverick's text decoder) as convert_hf_to_gguf.py's
Llama4Model lays one out (names: gguf-py's constants; what the loader and graph read: llama.cpp's src/models/llama4.cpp):
llama's attention with Llama 3's rope_freqs, every fourth layer without rotary positions (the others, chunked, norm q
and k without gains after rotating them), experts on the layers interleave_moe_layer_step picks (here every second:
dense feed-forward blocks between), each choosing 1 of n_exp experts by the sigmoid of its logit, that weight scaling
the expert's input, plus an ungated shared expert as wide; the gpt-4o (o200k) pre-tokenizer Llama 4 uses. A window
other than None is written as attention.sliding_window (llama.cpp's loader reads only whether it is 0). Deterministic:
the same arguments give the same bytes.

    from llama4_arch import write_llama4; write_llama4(path)"""
import numpy as np
import gguf

from gguf_copy import write_out

from moe_arch import add_bpe_vocab


def write_llama4(path, n_embd=128, n_layer=8, n_head=4, n_kv=2, hd=32, n_ff=256, n_exp=4, n_used=1, n_ffe=96,
                 step=2, window=None, n_vocab=1024, seed=5601):
    rs = np.random.RandomState(seed)
    E, L = n_embd, n_layer

    def rnd(shape, std, mean=0.0):
        return (rs.standard_normal(shape).astype(np.float32) * std + mean).astype(np.float32)

    arch = 'llama4'
    w = gguf.GGUFWriter(path, arch)
    w.add_name('synthetic llama4 (random weights)')
    w.add_embedding_length(E)
    w.add_block_count(L)
    w.add_feed_forward_length(n_ff)
    w.add_head_count(n_head)
    w.add_head_count_kv(n_kv)
    w.add_key_length(hd)
    w.add_value_length(hd)
    w.add_rope_dimension_count(hd)
    w.add_context_length(16384)
    w.add_file_type(0)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_rope_freq_base(500000.0)
    w.add_expert_count(n_exp)
    w.add_expert_used_count(n_used)
    w.add_expert_feed_forward_length(n_ffe)
    w.add_interleave_moe_layer_step(step)
    if window is not None:
        w.add_sliding_window(window)
    add_bpe_vocab(w, 'llama4', ['<|begin_of_text|>', '<|eot|>', '<|endoftext|>'], n_vocab, '<|begin_of_text|>', True)

    t = w.add_tensor
    t('token_embd.weight', rnd((n_vocab, E), 0.05))
    t('rope_freqs.weight', np.linspace(1.0, 6.0, hd // 2).astype(np.float32))
    for i in range(L):
        b = f'blk.{i}.'
        t(b + 'attn_norm.weight', rnd((E,), 0.1, 1.0))
        t(b + 'attn_q.weight', rnd((n_head * hd, E), 0.12))
        t(b + 'attn_k.weight', rnd((n_kv * hd, E), 0.12))
        t(b + 'attn_v.weight', rnd((n_kv * hd, E), 0.12))
        t(b + 'attn_output.weight', rnd((E, n_head * hd), 0.1))
        t(b + 'ffn_norm.weight', rnd((E,), 0.1, 1.0))
        if (i + 1) % step == 0:
            t(b + 'ffn_gate_inp.weight', rnd((n_exp, E), 0.3))
            t(b + 'ffn_gate_exps.weight', rnd((n_exp, n_ffe, E), 0.12))
            t(b + 'ffn_up_exps.weight', rnd((n_exp, n_ffe, E), 0.12))
            t(b + 'ffn_down_exps.weight', rnd((n_exp, E, n_ffe), 0.1))
            t(b + 'ffn_gate_shexp.weight', rnd((n_ffe, E), 0.12))
            t(b + 'ffn_up_shexp.weight', rnd((n_ffe, E), 0.12))
            t(b + 'ffn_down_shexp.weight', rnd((E, n_ffe), 0.1))
        else:
            t(b + 'ffn_gate.weight', rnd((n_ff, E), 0.12))
            t(b + 'ffn_up.weight', rnd((n_ff, E), 0.12))
            t(b + 'ffn_down.weight', rnd((E, n_ff), 0.1))
    t('output_norm.weight', rnd((E,), 0.1, 1.0))
    t('output.weight', rnd((n_vocab, E), 0.1))
    write_out(w)
