"""Writes a small random-weight Granite 4.0-H file as convert_hf_to_gguf.py's GraniteHybridModel lays one out (its
converter: conversion/granite.py, on Mamba2Model and GraniteMoeModel; what the loader and graph read: llama.cpp's
src/models/granite-hybrid.cpp). Each layer is attn_norm, a mixer, the residual add, ffn_norm, a feed-forward block and
the residual add, granite's multipliers on the way (embedding_scale, residual_scale, attention.scale, logit_scale). The
pattern's letter M is a Mamba-2 mixer (attention.head_count_kv entry 0; nemotron_h_arch.py's tensors), * attention;
rope.scaling.finetuned false, as the converter writes it for the hybrids, so no layer rotates (rope=True: Bamba's, which
rotate). The feed-forward block is
SwiGLU, or with n_exp experts each feed_forward_length wide chosen by softmax and renormalised, beside a shared expert of
expert_shared_feed_forward_length. Deterministic: the same arguments give the same bytes.

    from granitehybrid_arch import write_granitehybrid; write_granitehybrid(path)"""
import numpy as np
import gguf

from gguf_copy import write_out

from moe_arch import add_bpe_vocab
from nemotron_h_arch import add_mamba2_layer


def write_granitehybrid(path, n_embd=128, pattern='MM*MM*', n_head=4, n_kv=2, n_ff=256, ssm_heads=8, n_group=1,
                        d_state=16, d_conv=4, n_exp=0, n_used=0, n_ffs=0, scales=(12.0, 0.22, 0.0078125, 8.0),
                        rope=False, n_vocab=1024, seed=7201):
    rs = np.random.RandomState(seed)
    E, L, hd = n_embd, len(pattern), n_embd // n_head
    inner = 2 * E  # llama.cpp's loader asserts an expansion of 2
    embd_scale, residual_scale, attn_scale, logit_scale = scales

    def rnd(shape, std, mean=0.0):
        return (rs.standard_normal(shape).astype(np.float32) * std + mean).astype(np.float32)

    w = gguf.GGUFWriter(path, 'granitehybrid')
    w.add_name('synthetic granitehybrid (random weights)')
    w.add_embedding_length(E)
    w.add_block_count(L)
    w.add_context_length(1 << 20)  # the converter's for a hybrid without rotary positions
    w.add_feed_forward_length(n_ff)
    w.add_head_count(n_head)
    w.add_head_count_kv([n_kv if k == '*' else 0 for k in pattern])
    w.add_rope_freq_base(10000.0)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_attention_scale(attn_scale)
    w.add_embedding_scale(embd_scale)
    w.add_residual_scale(residual_scale)
    w.add_logit_scale(logit_scale)
    if n_exp:
        w.add_expert_count(n_exp)
        w.add_expert_used_count(n_used)
        w.add_expert_shared_feed_forward_length(n_ffs)
    w.add_ssm_conv_kernel(d_conv)
    w.add_ssm_state_size(d_state)
    w.add_ssm_group_count(n_group)
    w.add_ssm_inner_size(inner)
    w.add_ssm_time_step_rank(ssm_heads)
    w.add_rope_scaling_finetuned(rope)  # the converter's: True for Bamba only
    w.add_file_type(0)
    add_bpe_vocab(w, 'qwen2', ['<|start_of_role|>', '<|end_of_role|>', '<|end_of_text|>', '<|endoftext|>'], n_vocab,
                  '<|end_of_text|>', False)

    t = w.add_tensor
    t('token_embd.weight', rnd((n_vocab, E), 0.02))
    for i, kind in enumerate(pattern):
        b = f'blk.{i}.'
        t(b + 'attn_norm.weight', rnd((E,), 0.2, 1.0))
        if kind == 'M':
            add_mamba2_layer(t, rs, rnd, b, E, ssm_heads, inner // ssm_heads, n_group, d_state, d_conv)
        else:
            t(b + 'attn_q.weight', rnd((n_head * hd, E), 0.12))
            t(b + 'attn_k.weight', rnd((n_kv * hd, E), 0.12))
            t(b + 'attn_v.weight', rnd((n_kv * hd, E), 0.12))
            t(b + 'attn_output.weight', rnd((E, n_head * hd), 0.1))
        t(b + 'ffn_norm.weight', rnd((E,), 0.2, 1.0))
        if n_exp:
            t(b + 'ffn_gate_inp.weight', rnd((n_exp, E), 0.2))
            t(b + 'ffn_gate_exps.weight', rnd((n_exp, n_ff, E), 0.12))
            t(b + 'ffn_up_exps.weight', rnd((n_exp, n_ff, E), 0.12))
            t(b + 'ffn_down_exps.weight', rnd((n_exp, E, n_ff), 0.1))
            t(b + 'ffn_gate_shexp.weight', rnd((n_ffs, E), 0.12))
            t(b + 'ffn_up_shexp.weight', rnd((n_ffs, E), 0.12))
            t(b + 'ffn_down_shexp.weight', rnd((E, n_ffs), 0.1))
        else:
            t(b + 'ffn_gate.weight', rnd((n_ff, E), 0.12))
            t(b + 'ffn_up.weight', rnd((n_ff, E), 0.12))
            t(b + 'ffn_down.weight', rnd((E, n_ff), 0.1))
    t('output_norm.weight', rnd((E,), 0.2, 1.0))
    write_out(w)
