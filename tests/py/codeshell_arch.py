"""Writes small random-weight files of CodeShell's layers as convert_hf_to_gguf.py's CodeShellModel writes them
(names: gguf-py's constants; what the loader and graph read: llama.cpp's src/models/codeshell.cpp): GPT-2's layers
(LayerNorms with biases, q, k and v fused in attn_qkv with its bias, biases on every product, an ungated GELU block
4 x n_embd wide: tests/py/position_arch.py's) with NEOX rotation of whole heads in place of learned positions
(rope.freq_base 10000, linear scaling by 1 as the converter writes them), grouped key/value heads (num_query_groups),
an output projection of its own, a byte-level BPE vocabulary with CodeShell's pre-tokenizer. Deterministic: the same
arguments give the same bytes.

    from codeshell_arch import write_codeshell; write_codeshell(path)"""
import gguf

from gguf_copy import write_out
from layernorm_arch import _layernorm, _random
from moe_arch import add_bpe_vocab
from position_arch import _layers


def write_codeshell(path, n_embd=128, n_layer=3, n_head=4, n_kv=2, n_ctx=8192, n_vocab=1024, seed=9601):
    rnd = _random(seed)
    E, L, hd, F = n_embd, n_layer, n_embd // n_head, 4 * n_embd

    w = gguf.GGUFWriter(path, 'codeshell')
    w.add_name('synthetic codeshell (random weights)')
    w.add_context_length(n_ctx)
    w.add_embedding_length(E)
    w.add_feed_forward_length(F)
    w.add_block_count(L)
    w.add_head_count(n_head)
    w.add_head_count_kv(n_kv)
    w.add_layer_norm_eps(1e-5)
    w.add_file_type(0)
    w.add_rope_freq_base(10000.0)
    w.add_rope_scaling_type(gguf.RopeScalingType.LINEAR)
    w.add_rope_scaling_factor(1.0)
    add_bpe_vocab(w, 'codeshell', ['<|endoftext|>'], n_vocab, '<|endoftext|>', False)

    t = w.add_tensor
    t('token_embd.weight', rnd((n_vocab, E), 0.3))
    _layers(t, rnd, L, E, n_kv * hd, F)
    _layernorm(t, 'output_norm', E, rnd)
    t('output.weight', rnd((n_vocab, E), 0.08))
    write_out(w)
