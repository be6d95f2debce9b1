"""Writes small random-weight files of Jais's layers as convert_hf_to_gguf.py's JaisModel writes them (names: gguf-py's
constants; what the loader and graph read: llama.cpp's src/models/jais.cpp): LayerNorms with biases, q, k and v fused
in attn_qkv with its bias (every head its own: no head_count_kv key), no rotation but ALiBi with the max_bias the
converter recovers from HF's slopes (attention.max_alibi_bias), q.k scaled by 1/key_length (muP), a SwiGLU block
(c_fc the up product, c_fc2 the gate) with biases on gate, up and down, an output projection of its own, the embedding
and output multipliers folded into those tensors as the converter folds them, a byte-level BPE vocabulary with Jais's
pre-tokenizer. Deterministic: the same arguments give the same bytes.

Jais 2 (write_jais2: its converter is the base TextModel's with rope.dimension_count) is StarCoder2's layers, written
by layernorm_arch.py's StarCoder2 writer with Jais 2's keys and pre-tokenizer: LayerNorms with biases, q, k and v apart
with their biases, biases on every product, NEOX rotation of whole heads, an ungated block relu(x Wup + b)^2 Wdown + b
(llama.cpp's graph, not the file, squares), the output the token embedding where the file has none.

    from jais_arch import write_jais; write_jais(path)   (write_jais2)"""
import gguf

from gguf_copy import write_out
from layernorm_arch import _layernorm, _random, write_starcoder2
from moe_arch import add_bpe_vocab


def write_jais(path, n_embd=128, n_layer=3, n_head=4, n_ff=352, alibi=8.0, embd_scale=14.6, width_scale=0.0625,
               n_vocab=1024, seed=9701):
    rnd = _random(seed)
    E, L, F = n_embd, n_layer, n_ff

    w = gguf.GGUFWriter(path, 'jais')
    w.add_name('synthetic jais (random weights)')
    w.add_block_count(L)
    w.add_context_length(2048)
    w.add_embedding_length(E)
    w.add_feed_forward_length(F)
    w.add_head_count(n_head)
    w.add_layer_norm_eps(1e-5)
    w.add_file_type(0)
    w.add_max_alibi_bias(alibi)
    add_bpe_vocab(w, 'jais', ['<|endoftext|>'], n_vocab, '<|endoftext|>', False)

    t = w.add_tensor
    t('token_embd.weight', rnd((n_vocab, E), 0.03) * embd_scale)
    for i in range(L):
        b = f'blk.{i}.'
        _layernorm(t, b + 'attn_norm', E, rnd)
        t(b + 'attn_qkv.weight', rnd((3 * E, E), 0.2))
        t(b + 'attn_qkv.bias', rnd((3 * E,), 0.1))
        t(b + 'attn_output.weight', rnd((E, E), 0.1))
        t(b + 'attn_output.bias', rnd((E,), 0.05))
        _layernorm(t, b + 'ffn_norm', E, rnd)
        t(b + 'ffn_up.weight', rnd((F, E), 0.12))
        t(b + 'ffn_up.bias', rnd((F,), 0.1))
        t(b + 'ffn_gate.weight', rnd((F, E), 0.12))
        t(b + 'ffn_gate.bias', rnd((F,), 0.1))
        t(b + 'ffn_down.weight', rnd((E, F), 0.06))
        t(b + 'ffn_down.bias', rnd((E,), 0.05))
    _layernorm(t, 'output_norm', E, rnd)
    t('output.weight', rnd((n_vocab, E), 1.2) * width_scale)
    write_out(w)


def write_jais2(path, n_embd=128, n_layer=3, n_head=4, n_kv=2, n_ff=384, tied=True, n_vocab=1024, seed=9711):
    write_starcoder2(path, n_embd=n_embd, n_layer=n_layer, n_head=n_head, n_kv=n_kv, n_ff=n_ff, tied=tied,
                     n_vocab=n_vocab, seed=seed, arch='jais2')
