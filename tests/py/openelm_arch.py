"""Writes small random-weight openelm files as convert_hf_to_gguf.py's OpenELMModel lays them out (block_count,
context_length, embedding_length, then feed_forward_length, head_count and head_count_kv as one entry per layer,
rope_freq_base, layer_norm_rms_eps 1e-6, rope dimension, key and value length the head size; names: gguf-py's
constants; shapes and what the loader requires: llama.cpp's src/models/openelm.cpp): q, k and v in one attn_qkv
(each layer's query heads, then its key heads, then its value heads), per-head q and k norms, the feed-forward
block's proj_1 split into gate and up, no output projection, a SentencePiece vocabulary. Deterministic: the same
arguments give the same bytes.

    from openelm_arch import write_openelm; write_openelm(path)"""
import numpy as np
import gguf

from gguf_copy import write_out
from moe_arch import add_spm_vocab


def write_openelm(path, n_embd=128, hd=32, heads=(2, 3, 4, 5), kv_heads=(1, 1, 2, 5), ffs=(128, 192, 256, 320),
                  n_vocab=1024, seed=7501):
    rs = np.random.RandomState(seed)
    E, n_layer = n_embd, len(heads)

    def rnd(shape, std, mean=0.0):
        return (rs.standard_normal(shape).astype(np.float32) * std + mean).astype(np.float32)

    w = gguf.GGUFWriter(path, 'openelm')
    w.add_name('synthetic openelm (random weights)')
    w.add_block_count(n_layer)
    w.add_context_length(2048)
    w.add_embedding_length(E)
    w.add_feed_forward_length(list(ffs))
    w.add_head_count(list(heads))
    w.add_head_count_kv(list(kv_heads))
    w.add_rope_freq_base(10000.0)
    w.add_layer_norm_rms_eps(1e-6)
    w.add_rope_dimension_count(hd)
    w.add_key_length(hd)
    w.add_value_length(hd)
    w.add_file_type(0)
    add_spm_vocab(w, n_vocab)

    t = w.add_tensor
    t('token_embd.weight', rnd((n_vocab, E), 0.5))
    for i in range(n_layer):
        b = f'blk.{i}.'
        H, KV, F = heads[i], kv_heads[i], ffs[i]
        t(b + 'attn_norm.weight', rnd((E,), 0.1, 1.0))
        t(b + 'attn_qkv.weight', rnd(((H + 2 * KV) * hd, E), 0.1))
        t(b + 'attn_q_norm.weight', rnd((hd,), 0.1, 1.0))
        t(b + 'attn_k_norm.weight', rnd((hd,), 0.1, 1.0))
        t(b + 'attn_output.weight', rnd((E, H * hd), 0.08))
        t(b + 'ffn_norm.weight', rnd((E,), 0.1, 1.0))
        t(b + 'ffn_gate.weight', rnd((F, E), 0.1))
        t(b + 'ffn_up.weight', rnd((F, E), 0.1))
        t(b + 'ffn_down.weight', rnd((E, F), 0.08))
    t('output_norm.weight', rnd((E,), 0.1, 1.0))
    write_out(w)


if __name__ == '__main__':
    import sys
    write_openelm(sys.argv[1])
