"""Writes small random-weight deepseek2 files (latent attention), each as convert_hf_to_gguf.py's DeepseekV2Model
lays one out (names: gguf-py's constants; shapes and the keys the loader reads: llama.cpp's src/models/deepseek2.cpp):
  split  DeepSeek-V3 / R1 / Kimi K2 as converted today: the query through its compression (q_lora_rank), the keys' and
         values' decompression split per head (attn_k_b, attn_v_b; key_length = kv_lora_rank + rope, value_length =
         kv_lora_rank, one key/value head, key_length_mla / value_length_mla a head's sizes), YaRN with DeepSeek's
         yarn_log_multiplier, a dense first layer, experts chosen by sigmoid plus a selection bias within the best
         groups (expert_group_count, expert_group_used_count), renormalised and scaled, a shared expert, and a
         trailing multi-token prediction block;
  whole  DeepSeek-V2-Lite / V2 as converted before the split: the query straight from the input (q_lora_rank 0),
         the decompression whole (attn_kv_b, one key/value head per query head), softmax routing not renormalised,
         two shared experts, no rope scaling.
and the two dense families with deepseek2's latent attention decompressed whole (names and keys: their converters,
convert_hf_to_gguf.py's MiniCPM3Model and PLMModel; shapes: llama.cpp's src/models/minicpm3.cpp and plm.cpp):
  minicpm3  the query through its compression, key_length = nope + rope and no value_length (the loader's default,
            embedding_length / head_count, is the values' width), a SwiGLU block, LongRoPE's pair of divisors where
            asked, a SentencePiece vocabulary; the multipliers are in the graph, not the file;
  plm       the query straight from the input, key_length and value_length, relu^2 without a gate, no output.weight
            (the loader ties it), a byte-level BPE vocabulary.
Deterministic: the same arguments give the same bytes.

    from mla_arch import write_deepseek2; write_deepseek2(path, split=True)"""
import numpy as np
import gguf

from gguf_copy import write_out
from moe_arch import add_bpe_vocab, add_spm_vocab


def add_latent_attention(t, b, rnd, E, H, q_lora, kv_lora, nope, rope, v_head, split):
    """Layer b's attention norm and latent attention: the query through its compression (q_lora > 0) or straight,
    the keys' and values' compression with the rotary key, their decompression whole or split per head."""
    k_mla = nope + rope
    t(b + 'attn_norm.weight', rnd((E,), 0.1, 1.0))
    if q_lora:
        t(b + 'attn_q_a.weight', rnd((q_lora, E), 0.08))
        t(b + 'attn_q_a_norm.weight', rnd((q_lora,), 0.1, 1.0))
        t(b + 'attn_q_b.weight', rnd((H * k_mla, q_lora), 0.12))
    else:
        t(b + 'attn_q.weight', rnd((H * k_mla, E), 0.08))
    t(b + 'attn_kv_a_mqa.weight', rnd((kv_lora + rope, E), 0.08))
    t(b + 'attn_kv_a_norm.weight', rnd((kv_lora,), 0.1, 1.0))
    kv_b = rnd((H, nope + v_head, kv_lora), 0.15)  # per head: its keys' rows without rotation, then its values'
    if split:  # the converter's split: k_b transposed to (kv_lora x nope) per head, v_b (v_head x kv_lora)
        t(b + 'attn_k_b.weight', np.ascontiguousarray(kv_b[:, :nope, :].transpose(0, 2, 1)))
        t(b + 'attn_v_b.weight', np.ascontiguousarray(kv_b[:, nope:, :]))
    else:
        t(b + 'attn_kv_b.weight', kv_b.reshape(H * (nope + v_head), kv_lora))
    t(b + 'attn_output.weight', rnd((E, H * v_head), 0.1))


def write_deepseek2(path, split=True, n_embd=256, n_layer=4, n_head=4, q_lora=96, kv_lora=64, nope=32, rope=16,
                    v_head=24, n_ff=384, n_exp=8, n_used=3, n_ffe=64, n_vocab=1024, seed=5303):
    rs = np.random.RandomState(seed + (0 if split else 1))
    E, H, X, Fe = n_embd, n_head, n_exp, n_ffe
    n_dense, n_nextn = (1, 1) if split else (1, 0)
    n_shared = 1 if split else 2
    if not split:
        q_lora = 0
    L = n_layer + n_nextn
    k_mla = nope + rope

    def rnd(shape, std, mean=0.0):
        return (rs.standard_normal(shape).astype(np.float32) * std + mean).astype(np.float32)

    arch = 'deepseek2'
    w = gguf.GGUFWriter(path, arch)
    w.add_name(f'synthetic deepseek2, decompression {"split" if split else "whole"} (random weights)')
    w.add_embedding_length(E)
    w.add_block_count(L)
    w.add_feed_forward_length(n_ff)
    w.add_head_count(H)
    w.add_context_length(4096)
    w.add_file_type(0)
    w.add_layer_norm_rms_eps(1e-6)
    w.add_rope_freq_base(10000.0)
    w.add_vocab_size(n_vocab)
    w.add_leading_dense_block_count(n_dense)
    w.add_q_lora_rank(q_lora)
    w.add_kv_lora_rank(kv_lora)
    if split:
        w.add_head_count_kv(1)
        w.add_key_length(kv_lora + rope)
        w.add_value_length(kv_lora)
        w.add_key_length_mla(k_mla)
        w.add_value_length_mla(v_head)
    else:
        w.add_head_count_kv(H)
        w.add_key_length(k_mla)
        w.add_value_length(v_head)
    w.add_rope_dimension_count(rope)
    w.add_expert_count(X)
    w.add_expert_used_count(n_used)
    w.add_expert_feed_forward_length(Fe)
    w.add_expert_shared_count(n_shared)
    if split:
        w.add_expert_weights_scale(2.5)
        w.add_expert_weights_norm(True)
        w.add_expert_gating_func(gguf.ExpertGatingFuncType.SIGMOID)
        w.add_expert_group_count(4)
        w.add_expert_group_used_count(2)
        w.add_rope_scaling_type(gguf.RopeScalingType.YARN)
        w.add_rope_scaling_factor(40.0)
        w.add_rope_scaling_orig_ctx_len(4096)
        w.add_rope_scaling_yarn_log_mul(0.1 * 1.0)  # 0.1 mscale_all_dim, as the converter writes it
        w.add_nextn_predict_layers(n_nextn)
    else:
        w.add_expert_weights_scale(1.0)
        w.add_expert_gating_func(gguf.ExpertGatingFuncType.SOFTMAX)

    add_bpe_vocab(w, 'qwen2', ['<|endoftext|>', '<|User|>', '<|Assistant|>'], n_vocab, '<|endoftext|>', True)

    t = w.add_tensor
    t('token_embd.weight', rnd((n_vocab, E), 0.05))
    for i in range(L):
        b = f'blk.{i}.'
        add_latent_attention(t, b, rnd, E, H, q_lora, kv_lora, nope, rope, v_head, split)
        t(b + 'ffn_norm.weight', rnd((E,), 0.1, 1.0))
        if i < n_dense:
            t(b + 'ffn_gate.weight', rnd((n_ff, E), 0.08))
            t(b + 'ffn_up.weight', rnd((n_ff, E), 0.08))
            t(b + 'ffn_down.weight', rnd((E, n_ff), 0.06))
        else:
            t(b + 'ffn_gate_inp.weight', rnd((X, E), 0.3))
            if split:  # as large as the sigmoid scores' spread, so that it changes which experts are chosen
                t(b + 'exp_probs_b.bias', rnd((X,), 0.1))
            t(b + 'ffn_gate_exps.weight', rnd((X, Fe, E), 0.08))
            t(b + 'ffn_up_exps.weight', rnd((X, Fe, E), 0.08))
            t(b + 'ffn_down_exps.weight', rnd((X, E, Fe), 0.06))
            Fs = Fe * n_shared
            t(b + 'ffn_gate_shexp.weight', rnd((Fs, E), 0.08))
            t(b + 'ffn_up_shexp.weight', rnd((Fs, E), 0.08))
            t(b + 'ffn_down_shexp.weight', rnd((E, Fs), 0.06))
        if i >= n_layer:
            t(b + 'nextn.eh_proj.weight', rnd((E, 2 * E), 0.08))
            t(b + 'nextn.enorm.weight', rnd((E,), 0.1, 1.0))
            t(b + 'nextn.hnorm.weight', rnd((E,), 0.1, 1.0))
            t(b + 'nextn.shared_head_norm.weight', rnd((E,), 0.1, 1.0))
    t('output_norm.weight', rnd((E,), 0.1, 1.0))
    t('output.weight', rnd((n_vocab, E), 0.08))
    write_out(w)


def write_whole_latent(path, arch, n_embd=256, n_layer=3, n_head=4, q_lora=96, kv_lora=64, nope=32, rope=16,
                       v_head=None, n_ff=320, n_vocab=1024, longrope=False, n_ctx=4096, seed=5311):
    """A minicpm3 (q_lora > 0, gated, SentencePiece; v_head must be n_embd / n_head, which the file does not say)
    or plm (q_lora 0, relu^2, byte-level BPE) file."""
    rs = np.random.RandomState(seed)
    E, H = n_embd, n_head
    minicpm3 = arch == 'minicpm3'
    if v_head is None:
        v_head = E // H

    def rnd(shape, std, mean=0.0):
        return (rs.standard_normal(shape).astype(np.float32) * std + mean).astype(np.float32)

    w = gguf.GGUFWriter(path, arch)
    w.add_name(f'synthetic {arch} (random weights)')
    w.add_context_length(n_ctx)
    w.add_embedding_length(E)
    w.add_block_count(n_layer)
    w.add_feed_forward_length(n_ff)
    w.add_head_count(H)
    w.add_head_count_kv(H)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_file_type(0)
    w.add_vocab_size(n_vocab)
    if minicpm3:
        assert v_head == E // H, 'the converter writes no value_length: the loader takes n_embd / n_head'
        w.add_q_lora_rank(q_lora)
    else:
        w.add_rope_freq_base(10000.0)
        w.add_value_length(v_head)
    w.add_kv_lora_rank(kv_lora)
    w.add_key_length(nope + rope)
    w.add_rope_dimension_count(rope)
    if minicpm3:
        add_spm_vocab(w, n_vocab)
    else:
        add_bpe_vocab(w, 'qwen2', ['<|endoftext|>', '<|im_start|>', '<|im_end|>'], n_vocab, '<|endoftext|>', False)

    t = w.add_tensor
    t('token_embd.weight', rnd((n_vocab, E), 0.05))
    if longrope:  # divisors growing along the pairs, as a long-context model's (the converter writes both)
        half = np.arange(rope // 2, dtype=np.float32)
        t('rope_factors_long.weight', (1.0 + 0.75 * half).astype(np.float32))
        t('rope_factors_short.weight', (1.0 + 0.06 * half).astype(np.float32))
    for i in range(n_layer):
        b = f'blk.{i}.'
        add_latent_attention(t, b, rnd, E, H, q_lora if minicpm3 else 0, kv_lora, nope, rope, v_head, False)
        t(b + 'ffn_norm.weight', rnd((E,), 0.1, 1.0))
        if minicpm3:
            t(b + 'ffn_gate.weight', rnd((n_ff, E), 0.08))
        t(b + 'ffn_up.weight', rnd((n_ff, E), 0.08))
        t(b + 'ffn_down.weight', rnd((E, n_ff), 0.06))
    t('output_norm.weight', rnd((E,), 0.1, 1.0))
    if minicpm3:
        t('output.weight', rnd((n_vocab, E), 0.08))
    write_out(w)


if __name__ == '__main__':
    import sys
    write_deepseek2(sys.argv[1], split=sys.argv[2] == 'split')
