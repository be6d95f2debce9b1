"""Writes small random-weight spark2_5 files (Spark X2.5) as convert_hf_to_gguf.py's Spark2_5Model lays them out
(TextModel's keys, attention.sliding_window and a sliding_window_pattern bool per layer from layer_types,
rope.dimension_count and rope.dimension_count_swa from the full and sliding layers' partial_rotary_factor; q, k and v
fused in attn_qkv (q_k_v_proj), with a bias where asked; a head-wise attn_gate (n_head rows) in every layer; a GeGLU block;
names: gguf-py's constants; what the loader requires and how the graph runs: llama.cpp's src/models/spark2-5.cpp), a
byte-level BPE vocabulary. Deterministic: the same arguments give the same bytes.

    from spark_arch import write_spark; write_spark(path)"""
import numpy as np
import gguf

from gguf_copy import write_out
from llama_layer import add_window_keys
from moe_arch import add_bpe_vocab


def write_spark(path, n_embd=128, n_layer=4, n_head=4, n_kv=2, hd=32, n_rot=16, n_rot_swa=32, swa=None, window=3,
                base_swa=None, n_ff=192, qkv_bias=False, tied=False, n_vocab=1024, seed=8601):
    rs = np.random.RandomState(seed)
    E, H, KV, F = n_embd, n_head, n_kv, n_ff
    swa = list(swa or [i % 4 != 3 for i in range(n_layer)])

    def rnd(shape, std, mean=0.0):
        return (rs.standard_normal(shape).astype(np.float32) * std + mean).astype(np.float32)

    arch = 'spark2_5'
    w = gguf.GGUFWriter(path, arch)
    w.add_name('synthetic spark2_5 (random weights)')
    add_window_keys(w, arch, E, n_layer, F, H, KV, hd, hd, n_rot, base_swa, n_vocab, window, swa)
    w.add_uint32(f'{arch}.rope.dimension_count_swa', n_rot_swa)
    add_bpe_vocab(w, 'qwen2', ['<|endoftext|>', '<|im_start|>', '<|im_end|>'], n_vocab, '<|endoftext|>', False)

    t = w.add_tensor
    t('token_embd.weight', rnd((n_vocab, E), 0.05))
    for i in range(n_layer):
        b = f'blk.{i}.'
        t(b + 'attn_norm.weight', rnd((E,), 0.1, 1.0))
        t(b + 'attn_qkv.weight', rnd(((H + 2 * KV) * hd, E), 0.08))
        if qkv_bias:
            t(b + 'attn_qkv.bias', rnd(((H + 2 * KV) * hd,), 0.2))
        t(b + 'attn_gate.weight', rnd((H, E), 0.3))
        t(b + 'attn_output.weight', rnd((E, H * hd), 0.08))
        t(b + 'ffn_norm.weight', rnd((E,), 0.1, 1.0))
        t(b + 'ffn_gate.weight', rnd((F, E), 0.08))
        t(b + 'ffn_up.weight', rnd((F, E), 0.08))
        t(b + 'ffn_down.weight', rnd((E, F), 0.06))
    t('output_norm.weight', rnd((E,), 0.1, 1.0))
    if not tied:  # (tied: the loader takes the token embedding)
        t('output.weight', rnd((n_vocab, E), 0.08))
    write_out(w)


if __name__ == '__main__':
    import sys
    write_spark(sys.argv[1])
