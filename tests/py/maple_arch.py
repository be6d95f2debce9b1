"""Writes small random-weight maple files (deepgrove's Maple) as convert_hf_to_gguf.py's MapleModel lays them out
(TextModel's keys, rope.dimension_count a part of each head, attention.sliding_window and a sliding_window_pattern bool
per layer from layer_types, expert_feed_forward_length, swiglu_clamp_exp one limit per layer (the converter's 7.0 each:
here limits that bind, a layer of 0 among them, or one limit for every layer as llama.cpp's get_key_or_arr also
takes); per-head q/k norms; q, k and v apart, with biases where asked (the loader's create_tensor_qkv takes them; it
takes a fused attn_qkv too, which the converter never writes); names: gguf-py's constants; what the loader requires
and how the graph runs: llama.cpp's src/models/maple.cpp), a byte-level BPE vocabulary. Deterministic: the same
arguments give the same bytes.

    from maple_arch import write_maple; write_maple(path)"""
import numpy as np
import gguf

from gguf_copy import write_out
from llama_layer import add_window_keys
from moe_arch import add_bpe_vocab


def write_maple(path, n_embd=128, n_layer=4, n_head=4, n_kv=2, hd=32, n_rot=32, swa=None, window=3, base_swa=20000.0,
                n_exp=6, n_used=2, n_ffe=64, clamp=(0.5, 1.0, 0.0, 2.0), qkv_bias=False, n_vocab=1024,
                seed=8401):
    rs = np.random.RandomState(seed)
    E, H, KV, X = n_embd, n_head, n_kv, n_exp
    swa = list(swa or [i % 4 != 3 for i in range(n_layer)])

    def rnd(shape, std, mean=0.0):
        return (rs.standard_normal(shape).astype(np.float32) * std + mean).astype(np.float32)

    arch = 'maple'
    w = gguf.GGUFWriter(path, arch)
    w.add_name('synthetic maple (random weights)')
    add_window_keys(w, arch, E, n_layer, n_ffe, H, KV, hd, hd, n_rot, base_swa, n_vocab, window, swa)
    w.add_expert_count(X)
    w.add_expert_used_count(n_used)
    w.add_expert_feed_forward_length(n_ffe)
    if isinstance(clamp, (list, tuple)):
        w.add_array(f'{arch}.swiglu_clamp_exp', [float(x) for x in clamp])
    else:
        w.add_float32(f'{arch}.swiglu_clamp_exp', float(clamp))
    add_bpe_vocab(w, 'qwen2', ['<|endoftext|>', '<|im_start|>', '<|im_end|>'], n_vocab, '<|endoftext|>', False)

    t = w.add_tensor
    t('token_embd.weight', rnd((n_vocab, E), 0.05))
    for i in range(n_layer):
        b = f'blk.{i}.'
        t(b + 'attn_norm.weight', rnd((E,), 0.1, 1.0))
        t(b + 'attn_q.weight', rnd((H * hd, E), 0.08))
        t(b + 'attn_k.weight', rnd((KV * hd, E), 0.08))
        t(b + 'attn_v.weight', rnd((KV * hd, E), 0.08))
        if qkv_bias:
            t(b + 'attn_q.bias', rnd((H * hd,), 0.2))
            t(b + 'attn_k.bias', rnd((KV * hd,), 0.2))
            t(b + 'attn_v.bias', rnd((KV * hd,), 0.2))
        t(b + 'attn_q_norm.weight', rnd((hd,), 0.2, 1.0))
        t(b + 'attn_k_norm.weight', rnd((hd,), 0.2, 1.0))
        t(b + 'attn_output.weight', rnd((E, H * hd), 0.08))
        t(b + 'ffn_norm.weight', rnd((E,), 0.1, 1.0))
        t(b + 'ffn_gate_inp.weight', rnd((X, E), 0.3))
        # wide enough that the limits bind: the gate and up products spread past 1
        t(b + 'ffn_gate_exps.weight', rnd((X, n_ffe, E), 0.12))
        t(b + 'ffn_up_exps.weight', rnd((X, n_ffe, E), 0.12))
        t(b + 'ffn_down_exps.weight', rnd((X, E, n_ffe), 0.06))
    t('output_norm.weight', rnd((E,), 0.1, 1.0))
    t('output.weight', rnd((n_vocab, E), 0.08))  # (its loader requires it: no tied form)
    write_out(w)


if __name__ == '__main__':
    import sys
    write_maple(sys.argv[1])
