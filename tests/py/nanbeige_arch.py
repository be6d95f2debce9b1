"""Writes small random-weight nanbeige files (Nanbeige 4.x) as convert_hf_to_gguf.py's NanbeigeModel lays one out
(LlamaModel's keys and tensors, q and k permuted to NORM rotation: random here, so nothing to undo; then num_loops and
skip_loop_final_norm from the config; names: gguf-py's constants; what the loader requires and how the graph runs the
loops: llama.cpp's src/models/nanbeige.cpp): the blocks run num_loops times over, the final norm between passes
unless skip_loop_final_norm; q/k/v biases where asked (the loader takes them), a SentencePiece vocabulary.
Deterministic: the same arguments give the same bytes.

    from nanbeige_arch import write_nanbeige; write_nanbeige(path)"""
import numpy as np
import gguf

from gguf_copy import write_out
from llama_layer import add_attention
from moe_arch import add_spm_vocab


def write_nanbeige(path, n_embd=128, n_layer=3, n_head=4, n_kv=2, hd=32, n_ff=256, loops=2, skip_norm=False,
                   qkv_bias=False, tied=False, n_vocab=1024, seed=7601):
    rs = np.random.RandomState(seed)
    E, H, KV, F = n_embd, n_head, n_kv, n_ff

    def rnd(shape, std, mean=0.0):
        return (rs.standard_normal(shape).astype(np.float32) * std + mean).astype(np.float32)

    arch = 'nanbeige'
    w = gguf.GGUFWriter(path, arch)
    w.add_name('synthetic nanbeige (random weights)')
    w.add_context_length(4096)
    w.add_embedding_length(E)
    w.add_block_count(n_layer)
    w.add_feed_forward_length(F)
    w.add_head_count(H)
    w.add_head_count_kv(KV)
    w.add_rope_freq_base(70000.0)
    w.add_layer_norm_rms_eps(1e-6)
    w.add_file_type(0)
    w.add_vocab_size(n_vocab)
    w.add_rope_dimension_count(hd)
    w.add_key_length(hd)
    w.add_value_length(hd)
    w.add_uint32(f'{arch}.num_loops', loops)
    w.add_bool(f'{arch}.skip_loop_final_norm', skip_norm)
    add_spm_vocab(w, n_vocab)

    t = w.add_tensor
    t('token_embd.weight', rnd((n_vocab, E), 0.5))
    for i in range(n_layer):
        b = f'blk.{i}.'
        add_attention(t, b, rnd, E, H, KV, hd, (0.3, 0.5, 0.1) if qkv_bias else None)
        t(b + 'ffn_norm.weight', rnd((E,), 0.1, 1.0))
        t(b + 'ffn_gate.weight', rnd((F, E), 0.08))
        t(b + 'ffn_up.weight', rnd((F, E), 0.08))
        t(b + 'ffn_down.weight', rnd((E, F), 0.08))
    t('output_norm.weight', rnd((E,), 0.1, 1.0))
    if not tied:
        t('output.weight', rnd((n_vocab, E), 0.08))
    write_out(w)


if __name__ == '__main__':
    import sys
    write_nanbeige(sys.argv[1])
