"""Writes small random-weight mimo2 files (Xiaomi MiMo-V2) as convert_hf_to_gguf.py's MimoV2Model lays them out
(block_count counting the trailing multi-token prediction blocks, nextn_predict_layers; head_count_kv per layer, the
sliding-window layers' count and the full layers' apart; attention.sliding_window and a sliding_window_pattern bool per
layer, the prediction blocks' sliding; value_length apart from key_length; rope.dimension_count a part of each head;
attention.value_scale; expert_feed_forward_length; q, k and v apart or fused in attn_qkv; a sink per head on the layers
that have them; a dense first layer, experts with exp_probs_b after; names: gguf-py's constants; what the loader
requires and how the graph runs: llama.cpp's src/models/mimo2.cpp), a byte-level BPE vocabulary. Deterministic: the
same arguments give the same bytes.

    from mimo2_arch import write_mimo2; write_mimo2(path)"""
import numpy as np
import gguf

from gguf_copy import write_out
from llama_layer import add_window_keys
from moe_arch import add_bpe_vocab


def write_mimo2(path, n_embd=128, n_layer=4, n_nextn=1, n_head=4, n_kv_full=1, n_kv_swa=2, hd=32, hd_v=24,
                n_rot=16, swa=None, window=3, base_swa=5000.0, value_scale=0.707, n_dense=1, n_ff=192, n_exp=6,
                n_used=2, n_ffe=48, fused_qkv=False, sinks='swa', n_vocab=1024, seed=8301):
    rs = np.random.RandomState(seed)
    E, H, X = n_embd, n_head, n_exp
    L = n_layer + n_nextn
    # the trunk's layers as the checkpoint's hybrid_layer_pattern, the prediction blocks sliding (the converter's 1)
    swa = list(swa or [i % 2 == 1 for i in range(n_layer)]) + [True] * n_nextn
    kv = [n_kv_swa if s else n_kv_full for s in swa]

    def rnd(shape, std, mean=0.0):
        return (rs.standard_normal(shape).astype(np.float32) * std + mean).astype(np.float32)

    arch = 'mimo2'
    w = gguf.GGUFWriter(path, arch)
    w.add_name('synthetic mimo2 (random weights)')
    add_window_keys(w, arch, E, L, n_ff, H, kv, hd, hd_v, n_rot, base_swa, n_vocab, window, swa)
    if value_scale is not None:
        w.add_float32(f'{arch}.attention.value_scale', value_scale)
    w.add_expert_count(X)
    w.add_expert_used_count(n_used)
    w.add_expert_feed_forward_length(n_ffe)
    if n_nextn:
        w.add_uint32(f'{arch}.nextn_predict_layers', n_nextn)
    add_bpe_vocab(w, 'qwen2', ['<|endoftext|>', '<|im_start|>', '<|im_end|>'], n_vocab, '<|endoftext|>', False)

    t = w.add_tensor
    t('token_embd.weight', rnd((n_vocab, E), 0.05))
    for i in range(L):
        b = f'blk.{i}.'
        KV = kv[i]
        t(b + 'attn_norm.weight', rnd((E,), 0.1, 1.0))
        if fused_qkv:
            t(b + 'attn_qkv.weight', rnd(((H + KV) * hd + KV * hd_v, E), 0.08))
        else:
            t(b + 'attn_q.weight', rnd((H * hd, E), 0.08))
            t(b + 'attn_k.weight', rnd((KV * hd, E), 0.08))
            t(b + 'attn_v.weight', rnd((KV * hd_v, E), 0.08))
        t(b + 'attn_output.weight', rnd((E, H * hd_v), 0.08))
        if sinks == 'all' or (sinks == 'swa' and swa[i]):
            t(b + 'attn_sinks.weight', rnd((H,), 1.0))
        t(b + 'ffn_norm.weight', rnd((E,), 0.1, 1.0))
        if i < n_dense or i >= n_layer:  # the dense layers and the prediction blocks: a dense block, no router
            t(b + 'ffn_gate.weight', rnd((n_ff, E), 0.08))
            t(b + 'ffn_up.weight', rnd((n_ff, E), 0.08))
            t(b + 'ffn_down.weight', rnd((E, n_ff), 0.06))
        else:
            t(b + 'ffn_gate_inp.weight', rnd((X, E), 0.3))
            # as large as the sigmoid scores' spread, so that it changes which experts are chosen
            t(b + 'exp_probs_b.bias', rnd((X,), 0.1))
            t(b + 'ffn_gate_exps.weight', rnd((X, n_ffe, E), 0.08))
            t(b + 'ffn_up_exps.weight', rnd((X, n_ffe, E), 0.08))
            t(b + 'ffn_down_exps.weight', rnd((X, E, n_ffe), 0.06))
        if i >= n_layer:
            t(b + 'nextn.eh_proj.weight', rnd((E, 2 * E), 0.08))
            t(b + 'nextn.enorm.weight', rnd((E,), 0.1, 1.0))
            t(b + 'nextn.hnorm.weight', rnd((E,), 0.1, 1.0))
    t('output_norm.weight', rnd((E,), 0.1, 1.0))
    t('output.weight', rnd((n_vocab, E), 0.08))
    write_out(w)


if __name__ == '__main__':
    import sys
    write_mimo2(sys.argv[1])
