"""Writes a small random-weight Qwen3.5 file as convert_hf_to_gguf.py's Qwen3_5TextModel (qwen35) and
Qwen3_5MoeTextModel (qwen35moe) lay one out, or a Qwen3-Next one (qwen3next, Qwen3NextModel) (names: gguf-py's
constants; what the loader and graph read: llama.cpp's src/models/qwen35.cpp, qwen35moe.cpp, qwen3next.cpp and
delta-net-base.cpp): gated delta net layers with an attention layer every full_attention_interval-th, the attention's q
rows holding each head's query and output gate, per-head q/k norms, a part of each head rotated (by interleaved
sections in Qwen3.5); the delta nets' q, k, v through a short convolution, the decay's rate a = -exp(A_log) negative,
post_attention_norm before the feed-forward block. Key heads fewer than value heads, so that the mapping of one to the
other is exercised. qwen3next: experts, beta and alpha in one ssm_ba, and with legacy=True q, k, v and z in one ssm_in
(each key head's rows together, as older converters wrote them). Deterministic: the same arguments give the same bytes.

    from qwen35_arch import write_qwen35; write_qwen35(path, 'qwen35')"""
import numpy as np
import gguf

from gguf_copy import write_out

from moe_arch import add_bpe_vocab


def write_qwen35(path, arch, n_embd=128, n_layer=5, n_head=4, n_kv=2, head_dim=32, n_rot=16, sections=(3, 3, 2, 0),
                 n_ff=256, d_conv=4, d_state=16, k_heads=2, v_heads=4, interval=4, n_exp=8, n_used=2, n_ffe=64,
                 n_ffs=96, n_vocab=1024, legacy=False, seed=6101):
    rs = np.random.RandomState(seed)
    E, L = n_embd, n_layer
    inner, conv_ch = d_state * v_heads, 2 * k_heads * d_state + d_state * v_heads

    def rnd(shape, std, mean=0.0):
        return (rs.standard_normal(shape).astype(np.float32) * std + mean).astype(np.float32)

    w = gguf.GGUFWriter(path, arch)
    w.add_name(f'synthetic {arch} (random weights)')
    w.add_embedding_length(E)
    w.add_block_count(L)
    w.add_feed_forward_length(n_ff)
    w.add_head_count(n_head)
    w.add_head_count_kv(n_kv)
    w.add_key_length(head_dim)
    w.add_value_length(head_dim)
    w.add_context_length(8192)
    w.add_file_type(0)
    w.add_layer_norm_rms_eps(1e-6)
    w.add_rope_freq_base(1e7)
    w.add_rope_dimension_count(n_rot)
    nxt = arch == 'qwen3next'
    if not nxt:
        w.add_array(f'{arch}.rope.dimension_sections', list(sections))
    w.add_uint32(f'{arch}.ssm.conv_kernel', d_conv)
    w.add_uint32(f'{arch}.ssm.inner_size', inner)
    w.add_uint32(f'{arch}.ssm.state_size', d_state)
    w.add_uint32(f'{arch}.ssm.time_step_rank', v_heads)
    w.add_uint32(f'{arch}.ssm.group_count', k_heads)
    w.add_uint32(f'{arch}.full_attention_interval', interval)
    moe = arch in ('qwen35moe', 'qwen3next')
    if moe:
        w.add_expert_count(n_exp)
        w.add_expert_used_count(n_used)
        w.add_expert_feed_forward_length(n_ffe)
        w.add_expert_shared_feed_forward_length(n_ffs)
    add_bpe_vocab(w, 'qwen2' if nxt else 'qwen35', ['<|im_start|>', '<|im_end|>', '<|endoftext|>'], n_vocab, '<|endoftext|>', False)

    t = w.add_tensor
    t('token_embd.weight', rnd((n_vocab, E), 0.08))
    for i in range(L):
        b = f'blk.{i}.'
        t(b + 'attn_norm.weight', rnd((E,), 0.2, 1.0))
        if (i + 1) % interval == 0:
            t(b + 'attn_q.weight', rnd((2 * n_head * head_dim, E), 0.12))
            t(b + 'attn_k.weight', rnd((n_kv * head_dim, E), 0.12))
            t(b + 'attn_v.weight', rnd((n_kv * head_dim, E), 0.12))
            t(b + 'attn_output.weight', rnd((E, n_head * head_dim), 0.1))
            t(b + 'attn_q_norm.weight', rnd((head_dim,), 0.2, 1.0))
            t(b + 'attn_k_norm.weight', rnd((head_dim,), 0.2, 1.0))
        else:
            if legacy:  # per key head: its q, k, its value heads' v, then their z
                t(b + 'ssm_in.weight', rnd((conv_ch + inner, E), 0.12))
            else:
                t(b + 'attn_qkv.weight', rnd((conv_ch, E), 0.12))
                t(b + 'attn_gate.weight', rnd((inner, E), 0.12))
            t(b + 'ssm_conv1d.weight', rnd((conv_ch, d_conv), 0.4))
            t(b + 'ssm_dt.bias', rnd((v_heads,), 0.5))
            t(b + 'ssm_a', -np.exp(rnd((v_heads,), 0.5, -0.5)).astype(np.float32))
            if nxt:  # per key head: its value heads' beta, then their alpha
                t(b + 'ssm_ba.weight', rnd((2 * v_heads, E), 0.15))
            else:
                t(b + 'ssm_beta.weight', rnd((v_heads, E), 0.15))
                t(b + 'ssm_alpha.weight', rnd((v_heads, E), 0.15))
            t(b + 'ssm_norm.weight', rnd((d_state,), 0.2, 1.0))
            t(b + 'ssm_out.weight', rnd((E, inner), 0.1))
        t(b + 'post_attention_norm.weight', rnd((E,), 0.2, 1.0))
        if moe:
            t(b + 'ffn_gate_inp.weight', rnd((n_exp, E), 0.2))
            t(b + 'ffn_gate_exps.weight', rnd((n_exp, n_ffe, E), 0.12))
            t(b + 'ffn_up_exps.weight', rnd((n_exp, n_ffe, E), 0.12))
            t(b + 'ffn_down_exps.weight', rnd((n_exp, E, n_ffe), 0.1))
            t(b + 'ffn_gate_inp_shexp.weight', rnd((E,), 0.2))
            t(b + 'ffn_gate_shexp.weight', rnd((n_ffs, E), 0.12))
            t(b + 'ffn_up_shexp.weight', rnd((n_ffs, E), 0.12))
            t(b + 'ffn_down_shexp.weight', rnd((E, n_ffs), 0.1))
        else:
            t(b + 'ffn_gate.weight', rnd((n_ff, E), 0.12))
            t(b + 'ffn_up.weight', rnd((n_ff, E), 0.12))
            t(b + 'ffn_down.weight', rnd((E, n_ff), 0.1))
    t('output_norm.weight', rnd((E,), 0.2, 1.0))
    t('output.weight', rnd((n_vocab, E), 0.08))
    write_out(w)
