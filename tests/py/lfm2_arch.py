"""Writes a small random-weight LFM2 file as convert_hf_to_gguf.py's LFM2Model lays one out (names: gguf-py's constants;
what the loader and graph read: llama.cpp's src/models/lfm2.cpp): attention.head_count_kv one count per layer, 0 for a
short convolution layer (B, C and x from one projection, y = C * conv(B * x) over shortconv.l_cache taps), the others
attention with per-head q/k norms and NEOX rotation; the final norm named token_embd_norm; the output projection the
token embedding unless tied=False. With n_exp, lfm2moe (its lfm2moe loader): experts past dense_lead layers, chosen by
sigmoids with a selection bias (exp_probs_b). Deterministic: the same arguments give the same bytes.

    from lfm2_arch import write_lfm2; write_lfm2(path)"""
import numpy as np
import gguf

from gguf_copy import write_out

from moe_arch import add_bpe_vocab


def write_lfm2(path, n_embd=128, kinds='ccacca', n_head=4, n_kv=2, n_ff=320, l_cache=3, tied=True, n_vocab=1024,
               n_exp=0, n_used=0, n_ffe=0, dense_lead=0, seed=6201):
    rs = np.random.RandomState(seed)
    E, L, hd = n_embd, len(kinds), n_embd // n_head

    def rnd(shape, std, mean=0.0):
        return (rs.standard_normal(shape).astype(np.float32) * std + mean).astype(np.float32)

    arch = 'lfm2moe' if n_exp else 'lfm2'
    w = gguf.GGUFWriter(path, arch)
    w.add_name(f'synthetic {arch} (random weights)')
    w.add_embedding_length(E)
    w.add_block_count(L)
    w.add_feed_forward_length(n_ff)
    w.add_head_count(n_head)
    w.add_array(f'{arch}.attention.head_count_kv', [n_kv if k == 'a' else 0 for k in kinds])
    w.add_context_length(8192)
    w.add_file_type(0)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_rope_freq_base(1e6)
    w.add_uint32(f'{arch}.shortconv.l_cache', l_cache)
    if n_exp:  # lfm2moe: experts past the dense layers, chosen by sigmoids with a selection bias
        w.add_expert_count(n_exp)
        w.add_expert_used_count(n_used)
        w.add_expert_feed_forward_length(n_ffe)
        w.add_leading_dense_block_count(dense_lead)
        w.add_expert_gating_func(gguf.ExpertGatingFuncType.SIGMOID)
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
        if n_exp and i >= dense_lead:
            t(b + 'ffn_gate_inp.weight', rnd((n_exp, E), 0.2))
            t(b + 'ffn_gate_exps.weight', rnd((n_exp, n_ffe, E), 0.12))
            t(b + 'ffn_up_exps.weight', rnd((n_exp, n_ffe, E), 0.12))
            t(b + 'ffn_down_exps.weight', rnd((n_exp, E, n_ffe), 0.1))
            t(b + 'exp_probs_b.bias', rnd((n_exp,), 0.3))
        else:
            t(b + 'ffn_gate.weight', rnd((n_ff, E), 0.12))
            t(b + 'ffn_up.weight', rnd((n_ff, E), 0.12))
            t(b + 'ffn_down.weight', rnd((E, n_ff), 0.1))
    t('token_embd_norm.weight', rnd((E,), 0.2, 1.0))
    if not tied:
        t('output.weight', rnd((n_vocab, E), 0.08))
    write_out(w)
