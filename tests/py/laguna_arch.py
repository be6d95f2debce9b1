"""Writes small random-weight laguna files (poolside Laguna) as llama.cpp's conversion/laguna.py lays them out:
head_count one per layer (the sliding layers' own where they differ), head_count_kv one count, rope.dimension_count
the full layers' partial rotation and rope.dimension_count_swa the sliding layers', YaRN on the full layers, the
sliding window where the file sets one (three layers in four, the first of each four full, or as a pattern lists),
attn_gate per layer a gate per head (n_head rows) or per value (n_head x head_dim rows), leading_dense_block_count
dense layers, then experts chosen by sigmoid plus exp_probs_b beside one ungated shared expert of
expert_shared_feed_forward_length, a byte-level BPE vocabulary under the 'laguna' pre-tokenizer. Names: gguf-py's
constants; what the loader requires and how the graph runs: llama.cpp's src/models/laguna.cpp. Deterministic: the same
arguments give the same bytes.

    from laguna_arch import write_laguna; write_laguna(path)"""
import numpy as np
import gguf

from gguf_copy import write_out
from moe_arch import add_bpe_vocab, add_routed_experts


def write_laguna(path, n_embd=128, n_layer=5, heads=(4, 6), n_kv=2, hd=32, n_rot=16, n_rot_swa=32, window=3,
                 pattern=None, base_swa=None, yarn=(4.0, 256), gate_heads=None, n_dense=1, n_ff=192, n_exp=8, n_used=3,
                 n_ffe=48, n_ffs=64, n_shared=None, scale=2.5, norm=True, gating=True, tied=False, n_vocab=1024,
                 gate_rows=None, seed=9951):
    """heads: (full layers', sliding layers'); pattern: a list of bools per layer (sliding_window_pattern) or None for
    the loader's default; gate_heads: per layer True for a gate per head (alternating, per head first, where None);
    n_ffs None: no expert_shared_feed_forward_length (n_shared experts' width, one where n_shared is None too);
    yarn: (factor, original context) or None; gate_rows: {layer: rows} for a gate of another width (one llama.cpp's
    loader refuses)."""
    rs = np.random.RandomState(seed)
    E, X = n_embd, n_exp
    swa = [bool(window) and (pattern[i] if pattern is not None else i % 4 != 0) for i in range(n_layer)]
    H = [heads[1] if s else heads[0] for s in swa]
    gate_heads = [i % 2 == 0 for i in range(n_layer)] if gate_heads is None else gate_heads
    Fs = n_ffs if n_ffs else n_ffe * (1 if n_shared is None else n_shared)

    def rnd(shape, std, mean=0.0):
        return (rs.standard_normal(shape).astype(np.float32) * std + mean).astype(np.float32)

    arch = 'laguna'
    w = gguf.GGUFWriter(path, arch)
    w.add_name('synthetic laguna (random weights)')
    w.add_context_length(4096)
    w.add_embedding_length(E)
    w.add_block_count(n_layer)
    w.add_feed_forward_length(n_ff)
    w.add_head_count(H)
    w.add_head_count_kv(n_kv)
    w.add_key_length(hd)
    w.add_value_length(hd)
    w.add_rope_freq_base(500000.0)
    if base_swa:
        w.add_float32(f'{arch}.rope.freq_base_swa', base_swa)
    if yarn:
        w.add_rope_scaling_type(gguf.RopeScalingType.YARN)
        w.add_rope_scaling_factor(yarn[0])
        w.add_rope_scaling_orig_ctx_len(yarn[1])
    w.add_layer_norm_rms_eps(1e-6)
    w.add_file_type(0)
    w.add_vocab_size(n_vocab)
    if window:
        w.add_uint32(f'{arch}.attention.sliding_window', window)
        if pattern is not None:
            w.add_array(f'{arch}.attention.sliding_window_pattern', [bool(s) for s in pattern])
    w.add_expert_count(X)
    w.add_expert_used_count(n_used)
    w.add_expert_feed_forward_length(n_ffe)
    if n_ffs:
        w.add_uint32(f'{arch}.expert_shared_feed_forward_length', n_ffs)
    if n_shared is not None:
        w.add_uint32(f'{arch}.expert_shared_count', n_shared)
    w.add_expert_weights_norm(norm)
    w.add_expert_weights_scale(scale)
    if gating:
        w.add_expert_gating_func(gguf.ExpertGatingFuncType.SIGMOID)
    w.add_leading_dense_block_count(n_dense)
    w.add_rope_dimension_count(n_rot)
    if window:
        w.add_uint32(f'{arch}.rope.dimension_count_swa', n_rot_swa)
    add_bpe_vocab(w, 'laguna', ['<|endoftext|>', '<assistant>', '</assistant>'], n_vocab, '<|endoftext|>', False)

    t = w.add_tensor
    t('token_embd.weight', rnd((n_vocab, E), 0.05))
    for i in range(n_layer):
        b, h = f'blk.{i}.', H[i]
        t(b + 'attn_norm.weight', rnd((E,), 0.1, 1.0))
        t(b + 'attn_q.weight', rnd((h * hd, E), 0.08))
        t(b + 'attn_k.weight', rnd((n_kv * hd, E), 0.08))
        t(b + 'attn_v.weight', rnd((n_kv * hd, E), 0.08))
        t(b + 'attn_q_norm.weight', rnd((hd,), 0.2, 1.0))
        t(b + 'attn_k_norm.weight', rnd((hd,), 0.2, 1.0))
        # spread enough that softplus is neither linear nor flat over the gates
        rows = (gate_rows or {}).get(i, h if gate_heads[i] else h * hd)
        t(b + 'attn_gate.weight', rnd((rows, E), 0.4))
        t(b + 'attn_output.weight', rnd((E, h * hd), 0.08))
        t(b + 'ffn_norm.weight', rnd((E,), 0.1, 1.0))
        if i < n_dense:
            t(b + 'ffn_gate.weight', rnd((n_ff, E), 0.1))
            t(b + 'ffn_up.weight', rnd((n_ff, E), 0.1))
            t(b + 'ffn_down.weight', rnd((E, n_ff), 0.08))
        else:
            add_routed_experts(t, b, rnd, E, X, n_ffe, Fs)
    t('output_norm.weight', rnd((E,), 0.1, 1.0))
    if not tied:
        t('output.weight', rnd((n_vocab, E), 0.08))
    write_out(w)


if __name__ == '__main__':
    import sys
    write_laguna(sys.argv[1])
