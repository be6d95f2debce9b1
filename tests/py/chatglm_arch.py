"""Writes small random-weight files of ChatGLM's layers (GLM-4-9B, ChatGLM3-6B) as convert_hf_to_gguf.py's
ChatGLMModel writes them (names: gguf-py's constants; what the loader and graph read: llama.cpp's
src/models/chatglm.cpp): q, k and v in one attn_qkv with its bias (query_key_value), or apart as a file may have them
(create_tensor_qkv takes either), multi-query groups as key/value heads, the first half of each head rotating in NORM
pairs (partial_rotary_factor 0.5), the base 10000 x rope_ratio, gate and up fused in ffn_up (dense_h_to_4h: gate
rows first), no BOS, an output projection of its own or none (the loader then takes the token embedding), the
chatglm-bpe tokenizer. Deterministic: the same arguments give the same bytes.

    from chatglm_arch import write_chatglm; write_chatglm(path)"""
import gguf

from gguf_copy import write_out
from layernorm_arch import _random
from moe_arch import add_bpe_vocab


def write_chatglm(path, n_embd=128, n_layer=3, n_head=4, n_kv=2, n_ff=256, rope_ratio=500.0, fused=True, bias=True,
                  tied=False, n_vocab=1024, seed=9101):
    rnd = _random(seed)
    E, L, hd = n_embd, n_layer, n_embd // n_head

    w = gguf.GGUFWriter(path, 'chatglm')
    w.add_name('synthetic chatglm (random weights)')
    w.add_context_length(131072)
    w.add_embedding_length(E)
    w.add_feed_forward_length(n_ff)
    w.add_block_count(L)
    w.add_head_count(n_head)
    w.add_head_count_kv(n_kv)
    w.add_layer_norm_rms_eps(1.5625e-07)
    w.add_file_type(0)
    w.add_rope_dimension_count(hd // 2)
    w.add_rope_freq_base(10000.0 * rope_ratio)
    add_bpe_vocab(w, 'chatglm-bpe', ['<|endoftext|>', '[gMASK]', '<sop>', '<|user|>', '<|assistant|>'], n_vocab,
                  '[gMASK]', False)

    t = w.add_tensor
    t('token_embd.weight', rnd((n_vocab, E), 0.08))
    q, kv = n_head * hd, n_kv * hd
    for i in range(L):
        b = f'blk.{i}.'
        t(b + 'attn_norm.weight', rnd((E,), 0.2, 1.0))
        if fused:
            t(b + 'attn_qkv.weight', rnd((q + 2 * kv, E), 0.12))
            if bias:
                t(b + 'attn_qkv.bias', rnd((q + 2 * kv,), 0.2))
        else:
            for name, rows in (('attn_q', q), ('attn_k', kv), ('attn_v', kv)):
                t(b + name + '.weight', rnd((rows, E), 0.12))
                if bias:
                    t(b + name + '.bias', rnd((rows,), 0.2))
        t(b + 'attn_output.weight', rnd((E, q), 0.1))
        t(b + 'ffn_norm.weight', rnd((E,), 0.2, 1.0))
        t(b + 'ffn_up.weight', rnd((2 * n_ff, E), 0.12))
        t(b + 'ffn_down.weight', rnd((E, n_ff), 0.06))
    t('output_norm.weight', rnd((E,), 0.2, 1.0))
    if not tied:
        t('output.weight', rnd((n_vocab, E), 0.08))
    write_out(w)
