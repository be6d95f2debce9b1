"""Writes small random-weight files of Apertus's layers as convert_hf_to_gguf.py's ApertusModel (a LlamaModel) writes
them (names: gguf-py's constants; what the loader and graph read: llama.cpp's src/models/apertus.cpp): q, k and v apart
and not permuted (NEOX rotation), per-head q/k RMSNorm gains, Llama 3.1's rope_freqs where the rope is llama3's, a block
without a gate, ffn_up then xIELU then ffn_down, whose four parameters per layer the converter collects from each
layer's act_fn into the global arrays xielu.alpha_n, xielu.alpha_p, xielu.beta and xielu.eps; an output projection of
its own, the tekken tokenizer. The parameters are drawn around the model's initial values (alpha_p and alpha_n 0.8
before their softplus, beta 0.5, eps -1e-6). Deterministic: the same arguments give the same bytes.

    from apertus_arch import write_apertus; write_apertus(path)"""
import numpy as np
import gguf

from gguf_copy import write_out
from layernorm_arch import _random
from moe_arch import add_bpe_vocab
from deci_arch import llama3_rope_factors


def write_apertus(path, n_embd=128, n_layer=4, n_head=8, n_kv=2, n_ff=384, base=500000.0, llama3_ctx=8192,
                  scalar_xielu=False, n_vocab=1024, seed=9001):
    rnd = _random(seed)
    E, L, hd = n_embd, n_layer, n_embd // n_head

    w = gguf.GGUFWriter(path, 'apertus')
    w.add_name('synthetic apertus (random weights)')
    w.add_block_count(L)
    w.add_context_length(65536)
    w.add_embedding_length(E)
    w.add_feed_forward_length(n_ff)
    w.add_head_count(n_head)
    w.add_head_count_kv(n_kv)
    w.add_rope_freq_base(base)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_file_type(0)
    w.add_vocab_size(n_vocab)
    w.add_rope_dimension_count(hd)
    add_bpe_vocab(w, 'tekken', ['<s>', '</s>', '<|endoftext|>', '<pad>'], n_vocab, '<s>', True)
    # one value per layer as the converter collects them, around the initial ones; or one for all (a file written
    # otherwise, which get_key_or_arr reads as every layer's)
    rs = np.random.RandomState(seed + 1)
    params = {'alpha_n': 0.8 + rs.uniform(-0.5, 0.5, L), 'alpha_p': 0.8 + rs.uniform(-0.5, 0.5, L),
              'beta': 0.5 + rs.uniform(-0.2, 0.2, L), 'eps': np.full(L, -1e-6)}
    for k, v in params.items():
        if scalar_xielu:
            w.add_float32(f'xielu.{k}', float(v[0]))
        else:
            w.add_array(f'xielu.{k}', [float(x) for x in v])

    t = w.add_tensor
    t('token_embd.weight', rnd((n_vocab, E), 0.08))
    if llama3_ctx is not None:
        t('rope_freqs.weight', llama3_rope_factors(base, hd, old_ctx=llama3_ctx))
    for i in range(L):
        b = f'blk.{i}.'
        t(b + 'attn_norm.weight', rnd((E,), 0.2, 1.0))
        t(b + 'attn_q.weight', rnd((n_head * hd, E), 0.12))
        t(b + 'attn_k.weight', rnd((n_kv * hd, E), 0.12))
        t(b + 'attn_v.weight', rnd((n_kv * hd, E), 0.12))
        t(b + 'attn_q_norm.weight', rnd((hd,), 0.2, 1.0))
        t(b + 'attn_k_norm.weight', rnd((hd,), 0.2, 1.0))
        t(b + 'attn_output.weight', rnd((E, n_head * hd), 0.1))
        t(b + 'ffn_norm.weight', rnd((E,), 0.2, 1.0))
        t(b + 'ffn_up.weight', rnd((n_ff, E), 0.12))
        t(b + 'ffn_down.weight', rnd((E, n_ff), 0.06))
    t('output_norm.weight', rnd((E,), 0.2, 1.0))
    t('output.weight', rnd((n_vocab, E), 0.08))
    write_out(w)
