"""Writes small random-weight bitnet files as convert_hf_to_gguf.py's BitnetModel lays them out (TextModel's keys,
rope scaling linear with factor 1, a SentencePiece vocabulary; names: gguf-py's constants; shapes and what the
loader requires: llama.cpp's src/models/bitnet.cpp): q/k/v apart, attn_sub_norm and ffn_sub_norm inside the
blocks, no output projection, and the projections' weights ternary as the converter's weight_quant makes them
(each matrix rounded to -1, 0, 1 times the mean of its magnitudes). Deterministic: the same arguments give the same
bytes.

    from bitnet_arch import write_bitnet; write_bitnet(path)"""
import numpy as np
import gguf

from gguf_copy import write_out
from moe_arch import add_spm_vocab


def ternary(w):
    """BitnetModel.weight_quant: w rounded to -1, 0 or 1 in units of mean |w| (at least 1e-5), times that unit."""
    scale = max(float(np.abs(w).mean()), 1e-5)
    return (np.clip(np.round(w / scale), -1, 1) * scale).astype(np.float32)


def write_bitnet(path, n_embd=128, n_layer=4, n_head=4, n_kv=2, n_ff=320, n_vocab=1024, seed=7401):
    rs = np.random.RandomState(seed)
    E, H, KV, F, hd = n_embd, n_head, n_kv, n_ff, n_embd // n_head

    def rnd(shape, std, mean=0.0):
        return (rs.standard_normal(shape).astype(np.float32) * std + mean).astype(np.float32)

    w = gguf.GGUFWriter(path, 'bitnet')
    w.add_name('synthetic bitnet (random weights)')
    w.add_context_length(4096)
    w.add_embedding_length(E)
    w.add_block_count(n_layer)
    w.add_feed_forward_length(F)
    w.add_rope_freq_base(500000.0)
    w.add_head_count(H)
    w.add_head_count_kv(KV)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_file_type(0)
    w.add_rope_scaling_type(gguf.RopeScalingType.LINEAR)
    w.add_rope_scaling_factor(1.0)
    add_spm_vocab(w, n_vocab)

    t = w.add_tensor
    t('token_embd.weight', rnd((n_vocab, E), 0.5))
    for i in range(n_layer):
        b = f'blk.{i}.'
        t(b + 'attn_norm.weight', rnd((E,), 0.1, 1.0))
        t(b + 'attn_q.weight', ternary(rnd((H * hd, E), 0.15)))
        t(b + 'attn_k.weight', ternary(rnd((KV * hd, E), 0.15)))
        t(b + 'attn_v.weight', ternary(rnd((KV * hd, E), 0.1)))
        t(b + 'attn_sub_norm.weight', rnd((E,), 0.1, 1.0))
        t(b + 'attn_output.weight', ternary(rnd((E, H * hd), 0.05)))
        t(b + 'ffn_norm.weight', rnd((E,), 0.1, 1.0))
        t(b + 'ffn_gate.weight', ternary(rnd((F, E), 0.1)))
        t(b + 'ffn_up.weight', ternary(rnd((F, E), 0.1)))
        t(b + 'ffn_sub_norm.weight', rnd((F,), 0.1, 1.0))
        t(b + 'ffn_down.weight', ternary(rnd((E, F), 0.03)))
    t('output_norm.weight', rnd((E,), 0.1, 1.0))
    write_out(w)


if __name__ == '__main__':
    import sys
    write_bitnet(sys.argv[1])
