"""Writes small random-weight pure state-space files as convert_hf_to_gguf.py lays them out (its converter:
conversion/mamba.py's MambaModel and Mamba2Model; what the loader and graph read: llama.cpp's src/models/mamba.cpp,
mamba2.cpp and mamba-base.cpp). Every layer is x + mixer(attn_norm(x)), no attention, no feed-forward block; the
converter writes attention.head_count 0 and feed_forward_length 0 ("unused, but seemingly required when loading") and a
context length of 2^20.

- mamba2 (Mamba-Codestral, state-spaces/mamba2-*): nemotron_h's Mamba-2 mixer, its grouped norm required; the
  inner width expand (2) x the embedding, heads of head_dim.
- mamba (Mamba-1: state-spaces/mamba-*, Falcon-Mamba): ssm_in gives x and z (inner each), a short convolution of x
  with its bias and SiLU, ssm_x projects x to dt (time_step_rank), B and C (state_size each), ssm_dt widens dt to inner
  with its bias; the scan decays each channel's state_size values by exp(softplus(dt) A[c][j]) (A: inner x state),
  y = the scan + D x, gated by SiLU(z), then ssm_out. Falcon-Mamba (ssm.dt_b_c_rms) RMS-norms dt, B and C without
  gains before they are used.

A_log is written as ssm_a = -exp(A_log). Deterministic: the same arguments give the same bytes.

    from mamba_arch import write_mamba2, write_mamba; write_mamba2(path)"""
import numpy as np
import gguf

from gguf_copy import write_out

from moe_arch import add_bpe_vocab
from nemotron_h_arch import add_mamba2_layer


def add_mamba1_layer(t, rs, rnd, b, E, d_state, d_conv, dt_rank, norms=False):
    """Layer b's Mamba-1 mixer tensors (t: the writer's add_tensor; rs, rnd: its random state and normal draws), as
    MambaModel.modify_tensors writes them (inner = 2 E); norms: the gains of dt's, B's and C's norms (Jamba's)."""
    inner = 2 * E
    t(b + 'ssm_in.weight', rnd((2 * inner, E), 0.12))
    t(b + 'ssm_conv1d.weight', rnd((inner, d_conv), 0.4))
    t(b + 'ssm_conv1d.bias', rnd((inner,), 0.1))
    t(b + 'ssm_x.weight', rnd((dt_rank + 2 * d_state, inner), 0.1))
    if norms:
        t(b + 'ssm_dt_norm.weight', rnd((dt_rank,), 0.2, 1.0))
    t(b + 'ssm_dt.weight', rnd((inner, dt_rank), 0.3))
    dt = np.exp(rs.uniform(np.log(1e-3), np.log(1e-1), inner)).astype(np.float32)
    t(b + 'ssm_dt.bias', (dt + np.log(-np.expm1(-dt))).astype(np.float32))  # softplus(bias) = dt
    if norms:
        t(b + 'ssm_b_norm.weight', rnd((d_state,), 0.2, 1.0))
        t(b + 'ssm_c_norm.weight', rnd((d_state,), 0.2, 1.0))
    # Mamba's A_log init is log(1 .. state) for every channel; jittered so that channels differ
    a_log = np.log(np.arange(1, d_state + 1, dtype=np.float32))[None, :] + rnd((inner, d_state), 0.3)
    t(b + 'ssm_a', (-np.exp(a_log)).astype(np.float32))
    t(b + 'ssm_d', rnd((inner,), 0.3, 1.0))
    t(b + 'ssm_out.weight', rnd((E, inner), 0.1))


def _write(path, arch, E, L, d_conv, d_state, n_vocab, tied, seed, keys, mixer):
    """The file both write: the converter's keys (keys(w) adds the mixer's own after the shared ones), the vocabulary,
    the embedding, each layer's attn_norm then its mixer (mixer(t, rs, rnd, prefix)), the final norm and the output."""
    rs = np.random.RandomState(seed)

    def rnd(shape, std, mean=0.0):
        return (rs.standard_normal(shape).astype(np.float32) * std + mean).astype(np.float32)

    w = gguf.GGUFWriter(path, arch)
    w.add_name(f'synthetic {arch} (random weights)')
    w.add_context_length(1 << 20)
    w.add_embedding_length(E)
    w.add_feed_forward_length(0)
    w.add_head_count(0)
    w.add_block_count(L)
    w.add_ssm_conv_kernel(d_conv)
    w.add_ssm_inner_size(2 * E)
    w.add_ssm_state_size(d_state)
    keys(w)
    w.add_file_type(0)
    add_bpe_vocab(w, 'gpt-2', ['<|endoftext|>', '<|padding|>'], n_vocab, '<|endoftext|>', False)

    t = w.add_tensor
    t('token_embd.weight', rnd((n_vocab, E), 0.08))
    for i in range(L):
        b = f'blk.{i}.'
        t(b + 'attn_norm.weight', rnd((E,), 0.2, 1.0))
        mixer(t, rs, rnd, b)
    t('output_norm.weight', rnd((E,), 0.2, 1.0))
    if not tied:
        t('output.weight', rnd((n_vocab, E), 0.08))
    write_out(w)


def write_mamba2(path, n_embd=128, n_layer=4, head_dim=32, n_group=1, d_state=32, d_conv=4, n_vocab=1024,
                 tied=False, seed=7401):
    heads = 2 * n_embd // head_dim

    def keys(w):
        w.add_ssm_time_step_rank(heads)
        w.add_ssm_group_count(n_group)
        w.add_layer_norm_rms_eps(1e-5)

    def mixer(t, rs, rnd, b):
        add_mamba2_layer(t, rs, rnd, b, n_embd, heads, head_dim, n_group, d_state, d_conv)

    _write(path, 'mamba2', n_embd, n_layer, d_conv, d_state, n_vocab, tied, seed, keys, mixer)


def write_mamba(path, n_embd=96, n_layer=3, d_state=16, d_conv=4, dt_rank=None, dt_b_c_rms=False, n_vocab=1024,
                tied=True, seed=7501):
    E = n_embd
    dt_rank = dt_rank or -(E // -16)  # the converter's default: ceil(d_model / 16)

    def keys(w):
        w.add_ssm_time_step_rank(dt_rank)
        w.add_layer_norm_rms_eps(1e-5)
        w.add_ssm_dt_b_c_rms(dt_b_c_rms)

    def mixer(t, rs, rnd, b):
        add_mamba1_layer(t, rs, rnd, b, E, d_state, d_conv, dt_rank)

    _write(path, 'mamba', E, n_layer, d_conv, d_state, n_vocab, tied, seed, keys, mixer)
