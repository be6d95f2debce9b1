"""Writes a small random-weight Jamba file as convert_hf_to_gguf.py's JambaModel lays one out (its converter:
conversion/jamba.py; what the loader and graph read: llama.cpp's src/models/jamba.cpp). Each layer is attn_norm, then
a Mamba-1 mixer with gains on its dt, B and C norms (attention.head_count_kv entry 0) or attention without positions
(its entry the key/value heads), the residual add, ffn_norm, then a SwiGLU block, or experts where the layer has a
router (ffn_gate_inp; the converter writes no key saying which layers: HF's expert_layer_period / offset), and the
residual add. The experts are feed_forward_length wide, chosen by softmax, not renormalised. A_log is written as
ssm_a = -exp(A_log). Deterministic: the same arguments give the same bytes.

    from jamba_arch import write_jamba; write_jamba(path)"""
import numpy as np
import gguf

from gguf_copy import write_out

from moe_arch import add_bpe_vocab
from mamba_arch import add_mamba1_layer


def write_jamba(path, n_embd=128, attn='..A...', experts='.E.E.E', n_head=4, n_kv=2, n_ff=96, n_exp=6, n_used=2,
                d_state=16, d_conv=4, dt_rank=8, n_vocab=1024, tied=False, seed=7601):
    rs = np.random.RandomState(seed)
    E, L = n_embd, len(attn)
    head_dim = E // n_head

    def rnd(shape, std, mean=0.0):
        return (rs.standard_normal(shape).astype(np.float32) * std + mean).astype(np.float32)

    w = gguf.GGUFWriter(path, 'jamba')
    w.add_name('synthetic jamba (random weights)')
    # JambaModel.set_gguf_parameters' keys, in its order
    w.add_block_count(L)
    w.add_context_length(4096)
    w.add_embedding_length(E)
    w.add_feed_forward_length(n_ff)
    w.add_head_count(n_head)
    w.add_head_count_kv([n_kv if k == 'A' else 0 for k in attn])
    w.add_ssm_conv_kernel(d_conv)
    w.add_ssm_inner_size(2 * E)
    w.add_ssm_state_size(d_state)
    w.add_ssm_time_step_rank(dt_rank)
    w.add_layer_norm_rms_eps(1e-6)
    w.add_expert_count(n_exp)
    w.add_expert_used_count(n_used)
    w.add_file_type(0)
    add_bpe_vocab(w, 'gpt-2', ['<|startoftext|>', '<|endoftext|>'], n_vocab, '<|startoftext|>', False)

    t = w.add_tensor
    t('token_embd.weight', rnd((n_vocab, E), 0.08))
    for i in range(L):
        b = f'blk.{i}.'
        t(b + 'attn_norm.weight', rnd((E,), 0.2, 1.0))
        if attn[i] == 'A':
            t(b + 'attn_q.weight', rnd((n_head * head_dim, E), 0.12))
            t(b + 'attn_k.weight', rnd((n_kv * head_dim, E), 0.12))
            t(b + 'attn_v.weight', rnd((n_kv * head_dim, E), 0.12))
            t(b + 'attn_output.weight', rnd((E, n_head * head_dim), 0.1))
        else:
            add_mamba1_layer(t, rs, rnd, b, E, d_state, d_conv, dt_rank, norms=True)
        t(b + 'ffn_norm.weight', rnd((E,), 0.2, 1.0))
        if experts[i] == 'E':
            t(b + 'ffn_gate_inp.weight', rnd((n_exp, E), 0.3))
            t(b + 'ffn_gate_exps.weight', rnd((n_exp, n_ff, E), 0.12))
            t(b + 'ffn_down_exps.weight', rnd((n_exp, E, n_ff), 0.1))
            t(b + 'ffn_up_exps.weight', rnd((n_exp, n_ff, E), 0.12))
        else:
            t(b + 'ffn_gate.weight', rnd((n_ff, E), 0.12))
            t(b + 'ffn_down.weight', rnd((E, n_ff), 0.1))
            t(b + 'ffn_up.weight', rnd((n_ff, E), 0.12))
    t('output_norm.weight', rnd((E,), 0.2, 1.0))
    if not tied:
        t('output.weight', rnd((n_vocab, E), 0.08))
    write_out(w)
