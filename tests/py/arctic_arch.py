"""Writes small random-weight arctic files (Snowflake Arctic) as convert_hf_to_gguf.py's ArcticModel lays one out
(TextModel's keys: feed_forward_length the experts' width, expert_count, expert_used_count; vocab_size and
rope.dimension_count of a whole head; no key_length: a head is embedding_length / head_count wide; names: gguf-py's
constants, its arch_block_mappings_cfg mapping residual_layernorm to ffn_norm and post_attention_layernorm to
ffn_norm_exps; shapes and what the loader requires: llama.cpp's src/models/arctic.cpp): q/k/v apart and permuted to
NORM rotation (random here, so no permutation to undo), a dense block embedding_length wide in every layer beside the
router and the experts, a SentencePiece vocabulary. Deterministic: the same arguments give the same bytes.

    from arctic_arch import write_arctic; write_arctic(path)"""
import numpy as np
import gguf

from gguf_copy import write_out
from llama_layer import add_attention
from moe_arch import add_spm_vocab


def write_arctic(path, n_embd=128, n_layer=4, n_head=4, n_kv=2, n_exp=8, n_used=2, n_ffe=48, tied=False,
                 n_vocab=1024, seed=7301):
    rs = np.random.RandomState(seed)
    E, H, KV, X, Fe = n_embd, n_head, n_kv, n_exp, n_ffe
    hd = E // H

    def rnd(shape, std, mean=0.0):
        return (rs.standard_normal(shape).astype(np.float32) * std + mean).astype(np.float32)

    w = gguf.GGUFWriter(path, 'arctic')
    w.add_name('synthetic arctic (random weights)')
    w.add_context_length(4096)
    w.add_embedding_length(E)
    w.add_block_count(n_layer)
    w.add_feed_forward_length(Fe)  # intermediate_size: the experts' width (the dense block is E wide)
    w.add_head_count(H)
    w.add_head_count_kv(KV)
    w.add_rope_freq_base(10000.0)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_expert_count(X)
    w.add_expert_used_count(n_used)
    w.add_file_type(0)
    w.add_vocab_size(n_vocab)
    w.add_rope_dimension_count(hd)
    add_spm_vocab(w, n_vocab)

    t = w.add_tensor
    t('token_embd.weight', rnd((n_vocab, E), 0.5))
    for i in range(n_layer):
        b = f'blk.{i}.'
        add_attention(t, b, rnd, E, H, KV, hd)
        t(b + 'ffn_norm.weight', rnd((E,), 0.1, 1.0))
        t(b + 'ffn_gate.weight', rnd((E, E), 0.08))
        t(b + 'ffn_down.weight', rnd((E, E), 0.08))
        t(b + 'ffn_up.weight', rnd((E, E), 0.08))
        t(b + 'ffn_gate_inp.weight', rnd((X, E), 0.3))
        t(b + 'ffn_norm_exps.weight', rnd((E,), 0.1, 1.0))
        t(b + 'ffn_gate_exps.weight', rnd((X, Fe, E), 0.1))
        t(b + 'ffn_down_exps.weight', rnd((X, E, Fe), 0.08))
        t(b + 'ffn_up_exps.weight', rnd((X, Fe, E), 0.08))
    t('output_norm.weight', rnd((E,), 0.1, 1.0))
    if not tied:
        t('output.weight', rnd((n_vocab, E), 0.08))
    write_out(w)


if __name__ == '__main__':
    import sys
    write_arctic(sys.argv[1])
