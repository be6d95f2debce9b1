"""Writes small random-weight granite_swa files (IBM Granite with interleaved sliding windows) as
convert_hf_to_gguf.py's GraniteSWAModel and GraniteMoeSWAModel lay them out (LlamaModel's keys, q and k permuted to NORM
rotation: random here, so nothing to undo; granite's multipliers; attention.sliding_window and
attention.sliding_window_pattern from layer_types, attention.rope_pattern from no_rope_layers; a sink per head, named
attn_sinks.weight; the MoE form's experts' gate and up kept fused in ffn_gate_up_exps and the shared expert's in
ffn_up_shexp; names: gguf-py's constants; what the loader requires and how the graph runs: llama.cpp's
src/models/granite-swa.cpp), a byte-level BPE vocabulary. Deterministic: the same arguments give the same bytes.

    from granite_swa_arch import write_granite_swa; write_granite_swa(path)"""
import numpy as np
import gguf

from gguf_copy import write_out
from llama_layer import add_attention
from moe_arch import add_bpe_vocab


def write_granite_swa(path, n_embd=128, n_layer=5, n_head=4, n_kv=2, hd=32, n_ff=192, window=4, swa=None,
                      rope=None, n_exp=0, n_used=2, n_ffs=0, out_bias=False, tied=False, n_vocab=1024, seed=7701):
    rs = np.random.RandomState(seed)
    E, H, KV, F, X = n_embd, n_head, n_kv, n_ff, n_exp

    def rnd(shape, std, mean=0.0):
        return (rs.standard_normal(shape).astype(np.float32) * std + mean).astype(np.float32)

    arch = 'granite_swa'
    w = gguf.GGUFWriter(path, arch)
    w.add_name('synthetic granite_swa (random weights)')
    w.add_context_length(4096)
    w.add_embedding_length(E)
    w.add_block_count(n_layer)
    w.add_feed_forward_length(F)
    w.add_head_count(H)
    w.add_head_count_kv(KV)
    w.add_rope_freq_base(10000.0)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_file_type(0)
    w.add_vocab_size(n_vocab)
    w.add_rope_dimension_count(hd)
    w.add_float32(f'{arch}.attention.scale', 0.0234375)
    w.add_float32(f'{arch}.embedding_scale', 12.0)
    w.add_float32(f'{arch}.residual_scale', 0.22)
    w.add_float32(f'{arch}.logit_scale', 8.0)
    w.add_uint32(f'{arch}.attention.sliding_window', window)
    # layer_types, or the converter's own default: every layer but each fourth's first slides
    w.add_array(f'{arch}.attention.sliding_window_pattern', swa or [i % 4 != 0 for i in range(n_layer)])
    if rope:  # no_rope_layers: 1 rotates, 0 attends without positions
        w.add_array(f'{arch}.attention.rope_pattern', [bool(x) for x in rope])
    if X:
        w.add_expert_count(X)
        w.add_expert_used_count(n_used)
        if n_ffs:
            w.add_uint32(f'{arch}.expert_shared_feed_forward_length', n_ffs)
    add_bpe_vocab(w, 'refact', ['<|endoftext|>', '<|start_of_role|>', '<|end_of_role|>'], n_vocab, '<|endoftext|>',
                  False)

    t = w.add_tensor
    t('token_embd.weight', rnd((n_vocab, E), 0.05))
    for i in range(n_layer):
        b = f'blk.{i}.'
        add_attention(t, b, rnd, E, H, KV, hd)
        if out_bias:
            t(b + 'attn_output.bias', rnd((E,), 0.1))
        t(b + 'attn_sinks.weight', rnd((H,), 1.0))
        t(b + 'ffn_norm.weight', rnd((E,), 0.1, 1.0))
        if X:
            t(b + 'ffn_gate_inp.weight', rnd((X, E), 0.3))
            t(b + 'ffn_gate_up_exps.weight', rnd((X, 2 * F, E), 0.1))
            t(b + 'ffn_down_exps.weight', rnd((X, E, F), 0.08))
            if n_ffs:
                t(b + 'ffn_up_shexp.weight', rnd((2 * n_ffs, E), 0.1))
                t(b + 'ffn_down_shexp.weight', rnd((E, n_ffs), 0.08))
        else:
            t(b + 'ffn_gate.weight', rnd((F, E), 0.08))
            t(b + 'ffn_up.weight', rnd((F, E), 0.08))
            t(b + 'ffn_down.weight', rnd((E, F), 0.08))
    t('output_norm.weight', rnd((E,), 0.1, 1.0))
    if not tied:
        t('output.weight', rnd((n_vocab, E), 0.08))
    write_out(w)


if __name__ == '__main__':
    import sys
    write_granite_swa(sys.argv[1])
