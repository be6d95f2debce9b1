"""Writes small random-weight files of Qwen 1's layers as convert_hf_to_gguf.py's QwenModel writes them (names:
gguf-py's constants; what the loader and graph read: llama.cpp's src/models/qwen.cpp): RMSNorms, q, k and v in one
attn_qkv with its bias (c_attn), every head its own, NEOX rotation, SwiGLU whose width is half of
feed_forward_length (the converter writes HF's intermediate_size, which counts w1's and w2's rows together), an output
projection of its own, a byte-level BPE vocabulary with Qwen's pre-tokenizer. Deterministic: the same arguments give
the same bytes.

    from qwen_arch import write_qwen; write_qwen(path)"""
import gguf

from gguf_copy import write_out
from layernorm_arch import _random
from moe_arch import add_bpe_vocab


def write_qwen(path, n_embd=128, n_layer=3, n_head=4, n_ff=512, rope_base=10000.0, n_vocab=1024, seed=9401):
    rnd = _random(seed)
    E, L, hd, F = n_embd, n_layer, n_embd // n_head, n_ff // 2

    w = gguf.GGUFWriter(path, 'qwen')
    w.add_name('synthetic qwen (random weights)')
    w.add_file_type(0)
    w.add_context_length(8192)
    w.add_embedding_length(E)
    w.add_block_count(L)
    w.add_feed_forward_length(n_ff)
    w.add_head_count(n_head)
    w.add_layer_norm_rms_eps(1e-6)
    w.add_rope_freq_base(rope_base)
    add_bpe_vocab(w, 'qwen2', ['<|endoftext|>', '<|im_start|>', '<|im_end|>'], n_vocab, '<|endoftext|>', False)

    t = w.add_tensor
    t('token_embd.weight', rnd((n_vocab, E), 0.5))
    for i in range(L):
        b = f'blk.{i}.'
        t(b + 'attn_norm.weight', rnd((E,), 0.2, 1.0))
        t(b + 'attn_qkv.weight', rnd((3 * E, E), 0.12))
        t(b + 'attn_qkv.bias', rnd((3 * E,), 0.3))
        t(b + 'attn_output.weight', rnd((E, E), 0.1))
        t(b + 'ffn_norm.weight', rnd((E,), 0.2, 1.0))
        t(b + 'ffn_gate.weight', rnd((F, E), 0.12))
        t(b + 'ffn_up.weight', rnd((F, E), 0.12))
        t(b + 'ffn_down.weight', rnd((E, F), 0.06))
    t('output_norm.weight', rnd((E,), 0.2, 1.0))
    t('output.weight', rnd((n_vocab, E), 0.08))
    write_out(w)
