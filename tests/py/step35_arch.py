"""Writes small random-weight step35 files (StepFun Step-3.5) as convert_hf_to_gguf.py's Step35Model lays them out
(block_count counting the trailing multi-token prediction blocks, nextn_predict_layers; head_count and head_count_kv
one per layer, the sliding layers' from attention_other_setting; attention.sliding_window and a sliding_window_pattern
bool per layer; rope.dimension_count the whole head, of which llama.cpp's loader rotates half on the full layers;
expert_feed_forward_length, expert_shared_feed_forward_length, expert_weights_scale and _norm, leading_dense_block_count
as the converter writes them (llama.cpp's graph goes by the router); swiglu_clamp_exp and swiglu_clamp_shexp one limit
per layer where given; a head-wise attn_gate (n_head rows) on the layers that have one; the router's bias as
exp_probs_b; names: gguf-py's constants; what the loader requires and how the graph runs: llama.cpp's
src/models/step35.cpp), a byte-level BPE vocabulary. Deterministic: the same arguments give the same bytes.

    from step35_arch import write_step35; write_step35(path)"""
import numpy as np
import gguf

from gguf_copy import write_out
from llama_layer import add_window_keys
from moe_arch import add_bpe_vocab, add_routed_experts


def write_step35(path, n_embd=128, n_layer=4, n_nextn=1, heads=(4, 2), kv=(2, 1), hd=32, swa=None, window=3,
                 base_swa=5000.0, rope_freqs=False, n_dense=1, n_ff=160, n_exp=6, n_used=2, n_ffe=48, n_ffs=40,
                 scale=2.5, norm=True, gating=None, clamp_exp=None, clamp_shexp=None, gate_layers=None, qk_norm=True,
                 n_vocab=1024, seed=8501):
    """heads, kv: (full layers', sliding layers'); gate_layers: the layers with attn_gate (all where None)."""
    rs = np.random.RandomState(seed)
    E, X = n_embd, n_exp
    L = n_layer + n_nextn
    swa = list(swa or [i % 2 == 1 for i in range(n_layer)]) + [False] * n_nextn
    H = [heads[1] if s else heads[0] for s in swa]
    KV = [kv[1] if s else kv[0] for s in swa]
    gate_layers = range(L) if gate_layers is None else gate_layers

    def rnd(shape, std, mean=0.0):
        return (rs.standard_normal(shape).astype(np.float32) * std + mean).astype(np.float32)

    arch = 'step35'
    w = gguf.GGUFWriter(path, arch)
    w.add_name('synthetic step35 (random weights)')
    add_window_keys(w, arch, E, L, n_ff, H, KV, hd, hd, hd, base_swa, n_vocab, window, swa)
    w.add_expert_count(X)
    w.add_expert_used_count(n_used)
    w.add_expert_feed_forward_length(n_ffe)
    w.add_uint32(f'{arch}.expert_shared_feed_forward_length', n_ffs)
    w.add_float32(f'{arch}.expert_weights_scale', scale)
    w.add_bool(f'{arch}.expert_weights_norm', norm)
    if gating is not None:
        w.add_uint32(f'{arch}.expert_gating_func', gating)
    w.add_uint32(f'{arch}.leading_dense_block_count', n_dense)
    w.add_uint32(f'{arch}.moe_every_n_layers', 1)
    if clamp_exp is not None:
        w.add_array(f'{arch}.swiglu_clamp_exp', [float(x) for x in clamp_exp] + [0.0] * n_nextn)
    if clamp_shexp is not None:
        w.add_array(f'{arch}.swiglu_clamp_shexp', [float(x) for x in clamp_shexp] + [0.0] * n_nextn)
    if n_nextn:
        w.add_uint32(f'{arch}.nextn_predict_layers', n_nextn)
    add_bpe_vocab(w, 'qwen2', ['<|endoftext|>', '<|im_start|>', '<|im_end|>'], n_vocab, '<|endoftext|>', False)

    t = w.add_tensor
    t('token_embd.weight', rnd((n_vocab, E), 0.05))
    if rope_freqs:  # the whole head's pairs; the full layers read the first half of them
        t('rope_freqs.weight', (1.0 + np.arange(hd // 2, dtype=np.float32) * 0.25).astype(np.float32))
    for i in range(L):
        b = f'blk.{i}.'
        t(b + 'attn_norm.weight', rnd((E,), 0.1, 1.0))
        t(b + 'attn_q.weight', rnd((H[i] * hd, E), 0.08))
        t(b + 'attn_k.weight', rnd((KV[i] * hd, E), 0.08))
        t(b + 'attn_v.weight', rnd((KV[i] * hd, E), 0.08))
        if qk_norm:
            t(b + 'attn_q_norm.weight', rnd((hd,), 0.2, 1.0))
            t(b + 'attn_k_norm.weight', rnd((hd,), 0.2, 1.0))
        if i in gate_layers:
            t(b + 'attn_gate.weight', rnd((H[i], E), 0.3))
        t(b + 'attn_output.weight', rnd((E, H[i] * hd), 0.08))
        t(b + 'ffn_norm.weight', rnd((E,), 0.1, 1.0))
        if i < n_dense or i >= n_layer:  # the dense layers and the prediction blocks: a dense block, no router
            t(b + 'ffn_gate.weight', rnd((n_ff, E), 0.12))
            t(b + 'ffn_up.weight', rnd((n_ff, E), 0.12))
            t(b + 'ffn_down.weight', rnd((E, n_ff), 0.06))
        else:
            # wide enough that the limits bind: the gate and up products spread past 1
            add_routed_experts(t, b, rnd, E, X, n_ffe, n_ffs, std=0.12, down_std=0.06)
        if i >= n_layer:
            t(b + 'nextn.eh_proj.weight', rnd((E, 2 * E), 0.08))
            t(b + 'nextn.enorm.weight', rnd((E,), 0.1, 1.0))
            t(b + 'nextn.hnorm.weight', rnd((E,), 0.1, 1.0))
    t('output_norm.weight', rnd((E,), 0.1, 1.0))
    t('output.weight', rnd((n_vocab, E), 0.08))
    write_out(w)


if __name__ == '__main__':
    import sys
    write_step35(sys.argv[1])
