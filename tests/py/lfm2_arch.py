"""Writes a small random-weight LFM2 file as convert_hf_to_gguf.py's LFM2Model lays one out (names: gguf-py's constants;
what the loader and graph read: llama.cpp's src/models/lfm2.cpp): attention.head_count_kv one count per layer, 0 for a
short convolution layer (B, C and x from one projection, y = C * conv(B * x) over shortconv.l_cache taps), the others
attention with per-head q/k norms and NEOX rotation; the final norm named token_embd_norm; the output projection the
token embedding unless tied=False. Deterministic: the same arguments give the same bytes.

    from lfm2_arch import write_lfm2; write_lfm2(path)"""
import numpy as np
import gguf

from gguf_copy import write_out

from moe_arch import add_bpe_vocab


def write_lfm2(path, n_embd=128, kinds='ccacca', n_head=4, n_kv=2, n_ff=320, l_cache=3, tied=True, n_vocab=1024,
               seed=6201):
    rs = np.random.RandomState(seed)
    E, L, hd = n_embd, len(kinds), n_embd // n_head

    def rnd(shape, std, mean=0.0):
        return (rs.standard_normal(shape).astype(np.float32) * std + mean).astype(np.float32)

    w = gguf.GGUFWriter(path, 'lfm2')
    w.add_name('synthetic lfm2 (random weights)')
    w.add_embedding_length(E)
    w.add_block_count(L)
    w.add_feed_forward_length(n_ff)
    w.add_head_count(n_head)
    w.add_array('lfm2.attention.head_count_kv', [n_kv if k == 'a' else 0 for k in kinds])
    w.add_context_length(8192)
    w.add_file_type(0)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_rope_freq_base(1e6)
    w.add_uint32('lfm2.shortconv.l_cache', l_cache)
    add_bpe_vocab(w, 'lfm2', ['<|startoftext|>', '<|im_start|>', '<|im_end|>', '<|endoftext|>'], n_vocab,
                  '<|startoftext|>', True)

    t = w.add_tensor
    t('token_embd.weight', rnd((n_vocab, E), 0.08))
    for i, kind in enumerate(kinds):
        b = f'blk.{i}.'
        t(b + 'attn_norm.weight', rnd((E,), 0.2, 1.0))
        if kind == 'a':
            t(b + 'attn_q.weight', rnd((n_head * hd, E), 0.12))
            t(b + 'attn_k.weight', rnd((n_kv * hd, E), 0.12))
            t(b + 'attn_v.weight', rnd((n_kv * hd, E), 0.12))
            t(b + 'attn_output.weight', rnd((E, n_head * hd), 0.1))
            t(b + 'attn_q_norm.weight', rnd((hd,), 0.2, 1.0))
            t(b + 'attn_k_norm.weight', rnd((hd,), 0.2, 1.0))
        else:
            t(b + 'shortconv.in_proj.weight', rnd((3 * E, E), 0.15))
            t(b + 'shortconv.conv.weight', rnd((E, l_cache), 0.5))
            t(b + 'shortconv.out_proj.weight', rnd((E, E), 0.12))
        t(b + 'ffn_norm.weight', rnd((E,), 0.2, 1.0))
        t(b + 'ffn_gate.weight', rnd((n_ff, E), 0.12))
        t(b + 'ffn_up.weight', rnd((n_ff, E), 0.12))
        t(b + 'ffn_down.weight', rnd((E, n_ff), 0.1))
    t('token_embd_norm.weight', rnd((E,), 0.2, 1.0))
    if not tied:
        t('output.weight', rnd((n_vocab, E), 0.08))
    write_out(w)
