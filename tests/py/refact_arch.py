"""Writes small random-weight files of Refact's layers as convert_hf_to_gguf.py's RefactModel writes them (names:
gguf-py's constants; what the loader and graph read: llama.cpp's src/models/refact.cpp): RMSNorms, q apart from k and
v (the converter splits HF's kv into one key/value head's k and v), no rotation (ALiBi, max_bias 8, fixed by the
loader), SwiGLU of the converter's width (2/3 of 4 x n_embd rounded up to a multiple of 256; gate_up_proj split in
two), the output projection where the file has one, a byte-level BPE vocabulary with Refact's pre-tokenizer.
Deterministic: the same arguments give the same bytes.

    from refact_arch import write_refact; write_refact(path)"""
import gguf

from gguf_copy import write_out
from layernorm_arch import _random
from moe_arch import add_bpe_vocab


def write_refact(path, n_embd=128, n_layer=3, n_head=4, tied=False, n_vocab=1024, seed=9501):
    rnd = _random(seed)
    E, L, hd = n_embd, n_layer, n_embd // n_head
    F = 256 * ((int(2 * 4 * E / 3) + 255) // 256)  # RefactModel.set_gguf_parameters' ff_dim

    w = gguf.GGUFWriter(path, 'refact')
    w.add_name('synthetic refact (random weights)')
    w.add_context_length(4096)
    w.add_embedding_length(E)
    w.add_feed_forward_length(F)
    w.add_block_count(L)
    w.add_head_count(n_head)
    w.add_head_count_kv(1)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_file_type(0)
    add_bpe_vocab(w, 'refact', ['<|endoftext|>', '<fim_prefix>', '<fim_middle>', '<fim_suffix>'], n_vocab,
                  '<|endoftext|>', False)

    t = w.add_tensor
    t('token_embd.weight', rnd((n_vocab, E), 0.5))
    for i in range(L):
        b = f'blk.{i}.'
        t(b + 'attn_norm.weight', rnd((E,), 0.2, 1.0))
        t(b + 'attn_q.weight', rnd((n_head * hd, E), 0.12))
        t(b + 'attn_k.weight', rnd((hd, E), 0.12))
        t(b + 'attn_v.weight', rnd((hd, E), 0.12))
        t(b + 'attn_output.weight', rnd((E, n_head * hd), 0.1))
        t(b + 'ffn_norm.weight', rnd((E,), 0.2, 1.0))
        t(b + 'ffn_gate.weight', rnd((F, E), 0.12))
        t(b + 'ffn_up.weight', rnd((F, E), 0.12))
        t(b + 'ffn_down.weight', rnd((E, F), 0.05))
    t('output_norm.weight', rnd((E,), 0.2, 1.0))
    if not tied:
        t('output.weight', rnd((n_vocab, E), 0.08))
    write_out(w)
