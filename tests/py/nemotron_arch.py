"""Writes small random-weight files of Nemotron-4's Minitron layers as convert_hf_to_gguf.py's NemotronModel writes them
(names: gguf-py's constants; what the loader and graph read: llama.cpp's src/models/nemotron.cpp): LayerNorms with
biases whose gains carry LayerNorm1P's +1 (the converter adds it), q, k and v apart, part of each head rotating
(rope.dimension_count from partial_rotary_factor) in NEOX pairs, an ungated squared-ReLU block with biases where the
model has them, an output projection of its own, vocab_size, rope.scaling.type none, a SentencePiece vocabulary (pad
0, unk 1). Deterministic: the same arguments give the same bytes.

    from nemotron_arch import write_nemotron; write_nemotron(path)"""
import gguf

from gguf_copy import write_out
from layernorm_arch import _layernorm, _random
from synth_model import spm_vocab


def write_nemotron(path, n_embd=128, n_layer=4, n_head=8, n_kv=2, n_ff=512, rot_frac=0.5, biases=False,
                   n_vocab=1024, seed=8701):
    rnd = _random(seed)
    E, L, hd = n_embd, n_layer, n_embd // n_head

    w = gguf.GGUFWriter(path, 'nemotron')
    w.add_name('synthetic nemotron (random weights)')
    w.add_context_length(4096)
    w.add_embedding_length(E)
    w.add_block_count(L)
    w.add_feed_forward_length(n_ff)
    w.add_head_count(n_head)
    w.add_head_count_kv(n_kv)
    w.add_rope_freq_base(10000.0)
    w.add_layer_norm_eps(1e-5)
    w.add_file_type(0)
    w.add_vocab_size(n_vocab)
    w.add_rope_dimension_count(int(rot_frac * E) // n_head)
    w.add_rope_scaling_type(gguf.RopeScalingType.NONE)
    toks, scores, types = spm_vocab(n_vocab)
    w.add_tokenizer_model('llama')
    w.add_token_list(toks)
    w.add_token_scores(scores)
    w.add_token_types(types)
    w.add_bos_token_id(1)
    w.add_eos_token_id(2)
    w.add_pad_token_id(0)
    w.add_unk_token_id(1)

    t = w.add_tensor
    t('token_embd.weight', rnd((n_vocab, E), 0.5))
    for i in range(L):
        b = f'blk.{i}.'
        _layernorm(t, b + 'attn_norm', E, rnd)
        t(b + 'attn_q.weight', rnd((n_head * hd, E), 0.12))
        t(b + 'attn_k.weight', rnd((n_kv * hd, E), 0.12))
        t(b + 'attn_v.weight', rnd((n_kv * hd, E), 0.12))
        t(b + 'attn_output.weight', rnd((E, n_head * hd), 0.1))
        if biases:
            t(b + 'attn_output.bias', rnd((E,), 0.05))
        _layernorm(t, b + 'ffn_norm', E, rnd)
        t(b + 'ffn_up.weight', rnd((n_ff, E), 0.12))
        if biases:
            t(b + 'ffn_up.bias', rnd((n_ff,), 0.1))
        t(b + 'ffn_down.weight', rnd((E, n_ff), 0.06))
        if biases:
            t(b + 'ffn_down.bias', rnd((E,), 0.05))
    _layernorm(t, 'output_norm', E, rnd)
    t('output.weight', rnd((n_vocab, E), 0.08))
    write_out(w)
