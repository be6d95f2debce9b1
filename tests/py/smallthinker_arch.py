"""Writes small random-weight smallthinker files (SmallThinker-4B / 21B) as convert_hf_to_gguf.py's SmallThinkerModel
lays one out (TextModel's keys, then expert_count, expert_used_count, expert_feed_forward_length written as
feed_forward_length too, expert_gating_func softmax or sigmoid, attention.sliding_window where the config's layout
slides any layer; names: gguf-py's constants; shapes and what the loader requires: llama.cpp's
src/models/smallthinker.cpp): q/k/v apart, the router (ffn_gate_inp) beside ReGLU experts, a byte-level BPE
vocabulary. Deterministic: the same arguments give the same bytes.

    from smallthinker_arch import write_smallthinker; write_smallthinker(path)"""
import numpy as np
import gguf

from gguf_copy import write_out
from moe_arch import add_bpe_vocab


def write_smallthinker(path, n_embd=128, n_layer=5, n_head=4, n_kv=2, hd=32, n_exp=8, n_used=2, n_ffe=48,
                       window=64, sigmoid=False, tied=False, n_vocab=1024, seed=7101):
    rs = np.random.RandomState(seed)
    E, H, KV, X, Fe = n_embd, n_head, n_kv, n_exp, n_ffe

    def rnd(shape, std, mean=0.0):
        return (rs.standard_normal(shape).astype(np.float32) * std + mean).astype(np.float32)

    w = gguf.GGUFWriter(path, 'smallthinker')
    w.add_name('synthetic smallthinker (random weights)')
    w.add_context_length(4096)
    w.add_embedding_length(E)
    w.add_block_count(n_layer)
    w.add_head_count(H)
    w.add_head_count_kv(KV)
    w.add_key_length(hd)
    w.add_value_length(hd)
    w.add_rope_freq_base(1000000.0)
    w.add_layer_norm_rms_eps(1e-6)
    w.add_file_type(0)
    w.add_expert_count(X)
    w.add_expert_used_count(n_used)
    w.add_expert_feed_forward_length(Fe)
    w.add_feed_forward_length(Fe)
    w.add_expert_gating_func(gguf.ExpertGatingFuncType.SIGMOID if sigmoid else gguf.ExpertGatingFuncType.SOFTMAX)
    if window:  # the loader slides 4096 whatever the key says; written as the config's sliding_window_size
        w.add_sliding_window(window)
    add_bpe_vocab(w, 'qwen2', ['<|endoftext|>', '<|im_start|>', '<|im_end|>'], n_vocab, '<|endoftext|>', False)

    t = w.add_tensor
    t('token_embd.weight', rnd((n_vocab, E), 0.05))
    for i in range(n_layer):
        b = f'blk.{i}.'
        t(b + 'attn_norm.weight', rnd((E,), 0.1, 1.0))
        t(b + 'attn_q.weight', rnd((H * hd, E), 0.08))
        t(b + 'attn_k.weight', rnd((KV * hd, E), 0.08))
        t(b + 'attn_v.weight', rnd((KV * hd, E), 0.08))
        t(b + 'attn_output.weight', rnd((E, H * hd), 0.08))
        t(b + 'ffn_norm.weight', rnd((E,), 0.1, 1.0))
        # the router reads the layer's input (before attn_norm): scaled to the residual's size, not a norm's
        t(b + 'ffn_gate_inp.weight', rnd((X, E), 2.0))
        t(b + 'ffn_gate_exps.weight', rnd((X, Fe, E), 0.1))
        t(b + 'ffn_up_exps.weight', rnd((X, Fe, E), 0.08))
        t(b + 'ffn_down_exps.weight', rnd((X, E, Fe), 0.08))
    t('output_norm.weight', rnd((E,), 0.1, 1.0))
    if not tied:
        t('output.weight', rnd((n_vocab, E), 0.08))
    write_out(w)


if __name__ == '__main__':
    import sys
    write_smallthinker(sys.argv[1])
