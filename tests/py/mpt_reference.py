#!/usr/bin/env python3
"""MPT's forward pass in numpy float64, from Hugging Face transformers' modeling_mpt.py (MptModel) and the MosaicML
configuration keys as convert_hf_to_gguf.py's MPTModel writes them into GGUF: an engine independent of ours for the
files llama.cpp cannot run (MPT with q/k LayerNorms, qk_ln: its mpt.cpp reshapes a view of the fused q/k/v product,
and ggml_reshape_2d asserts a contiguous tensor).

Per layer: a = LayerNorm(x) (norm_1, its bias where the file has one); q, k, v = a Wqkv (+ b), clamped to
+-clip_qkv (attention.clamp_kqv) where set; q and k LayerNormed over their whole rows where the file has
attn_q_norm / attn_k_norm (q_ln, k_ln); causal attention scaled by 1/sqrt(head_dim) with ALiBi (slope(h) x (key
position - query position), the BLOOM paper's slopes as MPT's gen_slopes makes them, alibi_bias_max) where
attention.max_alibi_bias > 0; x += out_proj; x += down(GELU(up(LayerNorm(x)))); learned positions added to the
embeddings where the file has position_embd. GELU is the tanh form llama.cpp uses (MPT's own is erf's), exact here
where llama.cpp rounds it through an f16 table.

    mpt_reference.py [--without-qk-norm] MODEL.gguf OUT.npy TOKEN...
        (OUT: the prompt logits, tokens x vocabulary, f32; --without-qk-norm leaves q's and k's norms out, the
        engine a test must tell apart)"""
import sys

import numpy as np
from gguf import GGUFReader


def _field(r, key, default=None):
    f = r.fields.get(key)
    if f is None:
        return default
    return f.parts[f.data[0]][0].item()


def _tensors(r):
    return {t.name: np.asarray(t.data, dtype=np.float64).reshape([int(n) for n in reversed(t.shape)]) for t in r.tensors}


def _layernorm(x, w, b, eps):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    y = (x - mu) / np.sqrt(var + eps) * w
    return y + b if b is not None else y


def _gelu_tanh(x):
    return 0.5 * x * (1.0 + np.tanh(np.sqrt(2.0 / np.pi) * (x + 0.044715 * x ** 3)))


def alibi_slopes(n_head, max_bias):
    """MPT's gen_slopes: 1 / 2^(i max_bias / n) for i = 1..n over the next power of two n, the odd ones first where
    the heads are fewer."""
    n = 1 << (n_head - 1).bit_length()
    s = 1.0 / np.power(2.0, np.arange(1, n + 1) * (max_bias / n))
    if n != n_head:
        s = np.concatenate([s[1::2], s[::2]])[:n_head]
    return s


def forward(path, tokens, qk_norm=True):
    r = GGUFReader(path)
    assert _field(r, 'general.architecture') is not None
    t = _tensors(r)
    E = _field(r, 'mpt.embedding_length')
    L = _field(r, 'mpt.block_count')
    H = _field(r, 'mpt.attention.head_count')
    KV = _field(r, 'mpt.attention.head_count_kv', H)
    eps = _field(r, 'mpt.attention.layer_norm_epsilon')
    clip = _field(r, 'mpt.attention.clamp_kqv', 0.0)
    alibi = _field(r, 'mpt.attention.max_alibi_bias', 0.0)
    hd = E // H
    T = len(tokens)
    x = t['token_embd.weight'][tokens]
    if 'position_embd.weight' in t:
        x = x + t['position_embd.weight'][:T]
    pos = np.arange(T)
    causal = pos[None, :] <= pos[:, None]
    slopes = alibi_slopes(H, alibi) if alibi > 0 else np.zeros(H)
    for i in range(L):
        p = f'blk.{i}.'
        a = _layernorm(x, t[p + 'attn_norm.weight'], t.get(p + 'attn_norm.bias'), eps)
        qkv = a @ t[p + 'attn_qkv.weight'].T
        if p + 'attn_qkv.bias' in t:
            qkv = qkv + t[p + 'attn_qkv.bias']
        if clip > 0:
            qkv = np.clip(qkv, -clip, clip)
        q, k, v = qkv[:, :E], qkv[:, E:E + KV * hd], qkv[:, E + KV * hd:]
        if qk_norm and p + 'attn_q_norm.weight' in t:
            q = _layernorm(q, t[p + 'attn_q_norm.weight'], t.get(p + 'attn_q_norm.bias'), eps)
            k = _layernorm(k, t[p + 'attn_k_norm.weight'], t.get(p + 'attn_k_norm.bias'), eps)
        out = np.zeros((T, E))
        for h in range(H):
            g = h // (H // KV)
            qh, kh, vh = q[:, h * hd:(h + 1) * hd], k[:, g * hd:(g + 1) * hd], v[:, g * hd:(g + 1) * hd]
            s = qh @ kh.T / np.sqrt(hd) + slopes[h] * (pos[None, :] - pos[:, None])
            s = np.where(causal, s, -np.inf)
            s = np.exp(s - s.max(-1, keepdims=True))
            out[:, h * hd:(h + 1) * hd] = (s / s.sum(-1, keepdims=True)) @ vh
        o = out @ t[p + 'attn_output.weight'].T
        if p + 'attn_output.bias' in t:
            o = o + t[p + 'attn_output.bias']
        x = x + o
        m = _layernorm(x, t[p + 'ffn_norm.weight'], t.get(p + 'ffn_norm.bias'), eps)
        u = m @ t[p + 'ffn_up.weight'].T
        if p + 'ffn_up.bias' in t:
            u = u + t[p + 'ffn_up.bias']
        d = _gelu_tanh(u) @ t[p + 'ffn_down.weight'].T
        if p + 'ffn_down.bias' in t:
            d = d + t[p + 'ffn_down.bias']
        x = x + d
    x = _layernorm(x, t['output_norm.weight'], t.get('output_norm.bias'), eps)
    return x @ t.get('output.weight', t['token_embd.weight']).T


def main():
    args = sys.argv[1:]
    qk_norm = args[:1] != ['--without-qk-norm']
    args = args if qk_norm else args[1:]
    if len(args) < 3:
        sys.exit(__doc__)
    logits = forward(args[0], [int(a) for a in args[2:]], qk_norm)
    np.save(args[1], logits.astype(np.float32))


if __name__ == '__main__':
    main()
