"""Writes a small random-weight Nemotron-H file as convert_hf_to_gguf.py's NemotronHModel lays one out (its converter:
conversion/nemotron.py and the GraniteHybridModel and Mamba2Model it builds on; what the loader and graph read:
llama.cpp's src/models/nemotron-h.cpp and mamba-base.cpp's build_mamba2_layer). Each layer is one block after its
attn_norm, by the pattern's letter: M a Mamba-2 mixer (attention.head_count_kv and feed_forward_length entries 0), *
attention without positions (head_count_kv above 0), - a feed-forward block without a gate (relu(x Wup)^2 Wdown,
feed_forward_length above 0). A_log is written as ssm_a = -exp(A_log) (heads, 1), D as (heads, 1), the norm's gains as
(groups, inner / groups), the convolution's taps squeezed to (channels, taps). With n_exp, nemotron_h_moe (Nemotron 3
Nano): the letter E a layer of experts without a gate (ffn_up_exps, ffn_down_exps), their router and selection bias
(exp_probs_b), an ungated shared expert, expert_weights_norm and expert_weights_scale. Deterministic: the same
arguments give the same bytes.

    from nemotron_h_arch import write_nemotron_h; write_nemotron_h(path)"""
import numpy as np
import gguf

from gguf_copy import write_out

from moe_arch import add_bpe_vocab


def add_mamba2_layer(t, rs, rnd, b, E, heads, head_dim, n_group, d_state, d_conv, norm=True):
    """Layer b's Mamba-2 mixer tensors (t: the writer's add_tensor; rs, rnd: the writer's random state and normal
    draws), as Mamba2Model.modify_tensors writes them; norm=False: no grouped norm (Falcon-H1's mamba_rms_norm off)."""
    inner = heads * head_dim
    channels = inner + 2 * n_group * d_state
    t(b + 'ssm_in.weight', rnd((2 * inner + 2 * n_group * d_state + heads, E), 0.12))
    t(b + 'ssm_conv1d.weight', rnd((channels, d_conv), 0.4))
    t(b + 'ssm_conv1d.bias', rnd((channels,), 0.1))
    dt = np.exp(rs.uniform(np.log(1e-3), np.log(1e-1), heads)).astype(np.float32)
    t(b + 'ssm_dt.bias', (dt + np.log(-np.expm1(-dt))).astype(np.float32))  # softplus(bias) = dt
    a_log = np.log(rs.uniform(1.0, 16.0, heads)).astype(np.float32)
    t(b + 'ssm_a', (-np.exp(a_log)).reshape(heads, 1).astype(np.float32))
    t(b + 'ssm_d', rnd((heads, 1), 0.3, 1.0))
    if norm:
        t(b + 'ssm_norm.weight', rnd((n_group, inner // n_group), 0.2, 1.0))
    t(b + 'ssm_out.weight', rnd((E, inner), 0.1))


def write_nemotron_h(path, n_embd=128, pattern='M-M*M-', n_head=4, n_kv=2, head_dim=32, n_ff=256, ssm_heads=8,
                     ssm_head_dim=16, n_group=2, d_state=16, d_conv=4, n_vocab=1024, n_exp=0, n_used=0, n_ffe=0,
                     n_ffs=0, norm=True, scale=1.0, seed=7101):
    rs = np.random.RandomState(seed)
    E, L = n_embd, len(pattern)
    inner = ssm_heads * ssm_head_dim

    def rnd(shape, std, mean=0.0):
        return (rs.standard_normal(shape).astype(np.float32) * std + mean).astype(np.float32)

    arch = 'nemotron_h_moe' if n_exp else 'nemotron_h'
    ffn = 'E' if n_exp else '-'
    w = gguf.GGUFWriter(path, arch)
    w.add_name(f'synthetic {arch} (random weights)')
    w.add_embedding_length(E)
    w.add_block_count(L)
    w.add_context_length(1 << 20)  # the converter's for a hybrid without rotary positions
    w.add_head_count(n_head)
    w.add_head_count_kv([n_kv if k == '*' else 0 for k in pattern])
    w.add_feed_forward_length([(n_ffe if n_exp else n_ff) if k == ffn else 0 for k in pattern])
    w.add_key_length(head_dim)
    w.add_value_length(head_dim)
    w.add_layer_norm_eps(1e-5)
    w.add_rope_scaling_finetuned(False)
    w.add_ssm_conv_kernel(d_conv)
    w.add_ssm_state_size(d_state)
    w.add_ssm_group_count(n_group)
    w.add_ssm_inner_size(inner)
    w.add_ssm_time_step_rank(ssm_heads)
    if n_exp:  # the converter's keys for the experts (NemotronHModel.set_gguf_parameters)
        w.add_expert_used_count(n_used)
        w.add_expert_feed_forward_length(n_ffe)
        w.add_expert_shared_feed_forward_length(n_ffs)
        w.add_expert_count(n_exp)
        w.add_expert_shared_count(1)
        w.add_expert_weights_norm(norm)
        w.add_expert_weights_scale(scale)
        w.add_expert_group_count(1)
    w.add_file_type(0)
    add_bpe_vocab(w, 'qwen2', ['<s>', '<|im_start|>', '<|im_end|>', '<|endoftext|>'], n_vocab, '<s>', True)

    t = w.add_tensor
    t('token_embd.weight', rnd((n_vocab, E), 0.08))
    for i, kind in enumerate(pattern):
        b = f'blk.{i}.'
        t(b + 'attn_norm.weight', rnd((E,), 0.2, 1.0))
        if kind == 'M':
            add_mamba2_layer(t, rs, rnd, b, E, ssm_heads, ssm_head_dim, n_group, d_state, d_conv)
        elif kind == '*':
            t(b + 'attn_q.weight', rnd((n_head * head_dim, E), 0.12))
            t(b + 'attn_k.weight', rnd((n_kv * head_dim, E), 0.12))
            t(b + 'attn_v.weight', rnd((n_kv * head_dim, E), 0.12))
            t(b + 'attn_output.weight', rnd((E, n_head * head_dim), 0.1))
        elif n_exp:
            t(b + 'ffn_gate_inp.weight', rnd((n_exp, E), 0.2))
            t(b + 'exp_probs_b.bias', rnd((n_exp,), 0.3))
            t(b + 'ffn_up_exps.weight', rnd((n_exp, n_ffe, E), 0.12))
            t(b + 'ffn_down_exps.weight', rnd((n_exp, E, n_ffe), 0.1))
            t(b + 'ffn_up_shexp.weight', rnd((n_ffs, E), 0.12))
            t(b + 'ffn_down_shexp.weight', rnd((E, n_ffs), 0.1))
        else:
            t(b + 'ffn_up.weight', rnd((n_ff, E), 0.12))
            t(b + 'ffn_down.weight', rnd((E, n_ff), 0.1))
    t('output_norm.weight', rnd((E,), 0.2, 1.0))
    t('output.weight', rnd((n_vocab, E), 0.08))
    write_out(w)
