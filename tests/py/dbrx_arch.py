"""Writes small random-weight files of DBRX's layers as convert_hf_to_gguf.py's DbrxModel writes them (names: gguf-py's
constants; what the loader and graph read: llama.cpp's src/models/dbrx.cpp): LayerNorms with gains and no bias
(norm_1 as attn_norm, norm_2 as attn_output_norm, norm_f as output_norm), q, k and v in one attn_qkv clamped to
+-clip_qkv (attention.clamp_kqv, which the loader requires), NEOX rotation of whole heads, experts as wide as
feed_forward_length (ffn_hidden_size; the converter writes no expert width) chosen by softmax and renormalised, an
output projection of its own, layer_norm_epsilon 1e-5 as the converter fixes it, the cl100k tokenizer ('dbrx').
Deterministic: the same arguments give the same bytes.

    from dbrx_arch import write_dbrx; write_dbrx(path)"""
import gguf

from gguf_copy import write_out
from layernorm_arch import _random
from moe_arch import add_bpe_vocab


def write_dbrx(path, n_embd=128, n_layer=3, n_head=8, n_kv=2, n_ff=96, n_exp=8, n_used=3, clamp=1.5, n_vocab=1024,
               seed=8901):
    rnd = _random(seed)
    E, L, hd, X = n_embd, n_layer, n_embd // n_head, n_exp

    w = gguf.GGUFWriter(path, 'dbrx')
    w.add_name('synthetic dbrx (random weights)')
    w.add_block_count(L)
    w.add_context_length(32768)
    w.add_embedding_length(E)
    w.add_feed_forward_length(n_ff)
    w.add_head_count(n_head)
    w.add_head_count_kv(n_kv)
    w.add_rope_freq_base(500000.0)
    w.add_clamp_kqv(clamp)
    w.add_expert_count(X)
    w.add_expert_used_count(n_used)
    w.add_layer_norm_eps(1e-5)
    w.add_file_type(0)
    add_bpe_vocab(w, 'dbrx', ['<|endoftext|>', '<|im_start|>', '<|im_end|>', '<|pad|>'], n_vocab, '<|endoftext|>',
                  False)

    t = w.add_tensor
    t('token_embd.weight', rnd((n_vocab, E), 0.08))
    for i in range(L):
        b = f'blk.{i}.'
        t(b + 'attn_norm.weight', rnd((E,), 0.2, 1.0))
        t(b + 'attn_qkv.weight', rnd(((n_head + 2 * n_kv) * hd, E), 0.12))
        t(b + 'attn_output.weight', rnd((E, n_head * hd), 0.1))
        t(b + 'attn_output_norm.weight', rnd((E,), 0.2, 1.0))
        t(b + 'ffn_gate_inp.weight', rnd((X, E), 0.3))
        t(b + 'ffn_gate_exps.weight', rnd((X, n_ff, E), 0.12))
        t(b + 'ffn_up_exps.weight', rnd((X, n_ff, E), 0.12))
        t(b + 'ffn_down_exps.weight', rnd((X, E, n_ff), 0.08))
    t('output_norm.weight', rnd((E,), 0.2, 1.0))
    t('output.weight', rnd((n_vocab, E), 0.08))
    write_out(w)
