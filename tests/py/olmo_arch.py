"""Writes small random-weight files of OLMo 1's layers as convert_hf_to_gguf.py's OlmoModel writes them (names: gguf-py's
constants; what the loader and graph read: llama.cpp's src/models/olmo.cpp): no norm tensors at all (its LayerNorms
have neither gains nor bias), q, k and v apart, clamped to +-clip_qkv where the model sets it (attention.clamp_kqv),
NORM rotation of whole heads, SwiGLU, the output the token embedding where the model ties it (OLMo 1B), the gpt-neox
tokenizer ('olmo'). Deterministic: the same arguments give the same bytes.

    from olmo_arch import write_olmo; write_olmo(path)"""
import gguf

from gguf_copy import write_out
from layernorm_arch import _random
from moe_arch import add_bpe_vocab


def write_olmo(path, n_embd=128, n_layer=4, n_head=8, n_kv=None, n_ff=384, clamp=2.0, tied=False, n_vocab=1024,
               seed=8801):
    rnd = _random(seed)
    E, L, hd = n_embd, n_layer, n_embd // n_head
    kv = n_kv if n_kv is not None else n_head

    w = gguf.GGUFWriter(path, 'olmo')
    w.add_name('synthetic olmo (random weights)')
    w.add_context_length(2048)
    w.add_embedding_length(E)
    w.add_block_count(L)
    w.add_feed_forward_length(n_ff)
    w.add_head_count(n_head)
    if n_kv is not None:
        w.add_head_count_kv(n_kv)
    w.add_file_type(0)
    w.add_layer_norm_eps(1e-5)
    if clamp is not None:
        w.add_clamp_kqv(clamp)
    add_bpe_vocab(w, 'olmo', ['<|endoftext|>', '<|padding|>'], n_vocab, '<|endoftext|>', False)

    t = w.add_tensor
    t('token_embd.weight', rnd((n_vocab, E), 0.08))
    for i in range(L):
        b = f'blk.{i}.'
        t(b + 'attn_q.weight', rnd((n_head * hd, E), 0.12))
        t(b + 'attn_k.weight', rnd((kv * hd, E), 0.12))
        t(b + 'attn_v.weight', rnd((kv * hd, E), 0.12))
        t(b + 'attn_output.weight', rnd((E, n_head * hd), 0.1))
        t(b + 'ffn_gate.weight', rnd((n_ff, E), 0.12))
        t(b + 'ffn_down.weight', rnd((E, n_ff), 0.06))
        t(b + 'ffn_up.weight', rnd((n_ff, E), 0.12))
    if not tied:
        t('output.weight', rnd((n_vocab, E), 0.08))
    write_out(w)
