"""Writes small random-weight files of the families whose LayerNorms have biases, as convert_hf_to_gguf.py lays them
out (names: gguf-py's constants; what the loaders and graphs read: llama.cpp's src/models/<arch>.cpp): StarCoder2
(StarCoder2Model, a TextModel with no hooks of its own: biases on q, k, v and the output projection, an ungated
feed-forward block GELU(x Wup + b) Wdown + b, NEOX rotation, the output projection the token embedding where tied) and
StableLM (StableLMModel: q/k/v biases where the model has them, part of each head rotating, SwiGLU) and Phi-2
(Phi2Model: the attention and the feed-forward block side by side on one norm, the logits with a bias) and Falcon
(FalconModel: the same side by side blocks without biases, q, k and v fused) and GPT-NeoX (GPTNeoXModel: q, k and v
fused with their bias, the blocks side by side or one after the other). Epsilons in
attention.layer_norm_epsilon; gains around 1 and biases around 0 with a spread, as a trained model's have.
Deterministic: the same arguments give the same bytes.

    from layernorm_arch import write_starcoder2; write_starcoder2(path)   (write_stablelm, write_phi2, write_falcon,
    write_gptneox)"""
import numpy as np
import gguf

from gguf_copy import write_out

from moe_arch import add_bpe_vocab


def _random(seed):
    """rnd(shape, std, mean): float32 normals of a seeded stream, drawn in call order."""
    rs = np.random.RandomState(seed)

    def rnd(shape, std, mean=0.0):
        return (rs.standard_normal(shape).astype(np.float32) * std + mean).astype(np.float32)
    return rnd


def _layernorm(t, name, n, rnd):
    """A LayerNorm's gains around 1 and its bias around 0, as name.weight and name.bias."""
    t(name + '.weight', rnd((n,), 0.2, 1.0))
    t(name + '.bias', rnd((n,), 0.1))


# StarCoder2's converter's keys and vocabulary, and Jais 2's (its layers StarCoder2's: write_jais2 in jais_arch.py)
STARCODER2_FORMS = {
    'starcoder2': dict(n_ctx=16384, rope_base=100000.0, rope_dim=False, pre='starcoder',
                       specials=['<|endoftext|>', '<fim_prefix>', '<fim_middle>', '<fim_suffix>']),
    'jais2': dict(n_ctx=8192, rope_base=500000.0, rope_dim=True, pre='jais-2', specials=['<|endoftext|>']),
}


def write_starcoder2(path, n_embd=128, n_layer=4, n_head=4, n_kv=2, n_ff=384, tied=True, n_vocab=1024, seed=7701,
                     arch='starcoder2'):
    form = STARCODER2_FORMS[arch]
    rnd = _random(seed)
    E, L, hd = n_embd, n_layer, n_embd // n_head

    w = gguf.GGUFWriter(path, arch)
    w.add_name(f'synthetic {arch} (random weights)')
    w.add_context_length(form['n_ctx'])
    w.add_embedding_length(E)
    w.add_feed_forward_length(n_ff)
    w.add_block_count(L)
    w.add_head_count(n_head)
    w.add_head_count_kv(n_kv)
    w.add_rope_freq_base(form['rope_base'])
    w.add_layer_norm_eps(1e-5)
    w.add_file_type(0)
    if form['rope_dim']:  # Jais2Model.set_gguf_parameters: the head's width
        w.add_rope_dimension_count(hd)
    add_bpe_vocab(w, form['pre'], form['specials'], n_vocab, '<|endoftext|>', False)

    t = w.add_tensor
    t('token_embd.weight', rnd((n_vocab, E), 0.08))
    for i in range(L):
        b = f'blk.{i}.'
        _layernorm(t, b + 'attn_norm', E, rnd)
        t(b + 'attn_q.weight', rnd((n_head * hd, E), 0.12))
        t(b + 'attn_q.bias', rnd((n_head * hd,), 0.1))
        t(b + 'attn_k.weight', rnd((n_kv * hd, E), 0.12))
        t(b + 'attn_k.bias', rnd((n_kv * hd,), 0.1))
        t(b + 'attn_v.weight', rnd((n_kv * hd, E), 0.12))
        t(b + 'attn_v.bias', rnd((n_kv * hd,), 0.1))
        t(b + 'attn_output.weight', rnd((E, n_head * hd), 0.1))
        t(b + 'attn_output.bias', rnd((E,), 0.05))
        _layernorm(t, b + 'ffn_norm', E, rnd)
        t(b + 'ffn_up.weight', rnd((n_ff, E), 0.12))
        t(b + 'ffn_up.bias', rnd((n_ff,), 0.1))
        t(b + 'ffn_down.weight', rnd((E, n_ff), 0.08))
        t(b + 'ffn_down.bias', rnd((E,), 0.05))
    _layernorm(t, 'output_norm', E, rnd)
    if not tied:
        t('output.weight', rnd((n_vocab, E), 0.08))
    write_out(w)


def write_stablelm(path, n_embd=128, n_layer=4, n_head=4, n_kv=4, n_ff=352, rot_frac=0.25, qkv_bias=True,
                   n_vocab=1024, seed=7801):
    """StableLM as convert_hf_to_gguf.py's StableLMModel writes it: LayerNorms with biases, q/k/v biases where the model
    has them (StableLM 2), part of each head rotating (rope.dimension_count from partial_rotary_factor), SwiGLU, an
    output projection of its own."""
    rnd = _random(seed)
    E, L, hd = n_embd, n_layer, n_embd // n_head

    w = gguf.GGUFWriter(path, 'stablelm')
    w.add_name('synthetic stablelm (random weights)')
    w.add_context_length(4096)
    w.add_embedding_length(E)
    w.add_block_count(L)
    w.add_feed_forward_length(n_ff)
    w.add_rope_dimension_count(int(rot_frac * hd))
    w.add_head_count(n_head)
    w.add_head_count_kv(n_kv)
    w.add_parallel_residual(False)
    w.add_layer_norm_eps(1e-5)
    w.add_file_type(0)
    add_bpe_vocab(w, 'stablelm2', ['<|endoftext|>', '<|im_start|>', '<|im_end|>'], n_vocab, '<|endoftext|>', False)

    t = w.add_tensor
    t('token_embd.weight', rnd((n_vocab, E), 0.08))
    for i in range(L):
        b = f'blk.{i}.'
        _layernorm(t, b + 'attn_norm', E, rnd)
        for name, rows in (('attn_q', n_head * hd), ('attn_k', n_kv * hd), ('attn_v', n_kv * hd)):
            t(b + name + '.weight', rnd((rows, E), 0.12))
            if qkv_bias:
                t(b + name + '.bias', rnd((rows,), 0.1))
        t(b + 'attn_output.weight', rnd((E, n_head * hd), 0.1))
        _layernorm(t, b + 'ffn_norm', E, rnd)
        t(b + 'ffn_gate.weight', rnd((n_ff, E), 0.12))
        t(b + 'ffn_up.weight', rnd((n_ff, E), 0.12))
        t(b + 'ffn_down.weight', rnd((E, n_ff), 0.08))
    _layernorm(t, 'output_norm', E, rnd)
    t('output.weight', rnd((n_vocab, E), 0.08))
    write_out(w)


def write_phi2(path, n_embd=160, n_layer=3, n_head=4, rot=16, fused=False, n_vocab=1024, seed=7901):
    """Phi-2 as convert_hf_to_gguf.py's Phi2Model writes it: one LayerNorm with bias before the attention and the
    feed-forward block side by side, q, k and v with biases (separate as today's HF checkpoints hold them, or fused in
    attn_qkv with its bias as the older ones did), rot values of each head rotating, feed_forward_length 4 x
    n_embd, GELU without a gate, the logits with a bias."""
    rnd = _random(seed)
    E, L, hd, F = n_embd, n_layer, n_embd // n_head, 4 * n_embd

    w = gguf.GGUFWriter(path, 'phi2')
    w.add_name('synthetic phi2 (random weights)')
    w.add_context_length(2048)
    w.add_embedding_length(E)
    w.add_feed_forward_length(F)
    w.add_block_count(L)
    w.add_head_count(n_head)
    w.add_head_count_kv(n_head)
    w.add_layer_norm_eps(1e-5)
    w.add_rope_dimension_count(rot)
    w.add_file_type(0)
    add_bpe_vocab(w, 'phi-2', ['<|endoftext|>'], n_vocab, '<|endoftext|>', False)

    t = w.add_tensor
    t('token_embd.weight', rnd((n_vocab, E), 0.08))
    for i in range(L):
        b = f'blk.{i}.'
        _layernorm(t, b + 'attn_norm', E, rnd)
        qkv = [(name, rnd((E, E), 0.12), rnd((E,), 0.1)) for name in ('attn_q', 'attn_k', 'attn_v')]
        if fused:
            t(b + 'attn_qkv.weight', np.concatenate([m for _, m, _ in qkv], axis=0))
            t(b + 'attn_qkv.bias', np.concatenate([v for _, _, v in qkv]))
        else:
            for name, m, v in qkv:
                t(b + name + '.weight', m)
                t(b + name + '.bias', v)
        t(b + 'attn_output.weight', rnd((E, E), 0.1))
        t(b + 'attn_output.bias', rnd((E,), 0.05))
        t(b + 'ffn_up.weight', rnd((F, E), 0.12))
        t(b + 'ffn_up.bias', rnd((F,), 0.1))
        t(b + 'ffn_down.weight', rnd((E, F), 0.06))
        t(b + 'ffn_down.bias', rnd((E,), 0.05))
    _layernorm(t, 'output_norm', E, rnd)
    t('output.weight', rnd((n_vocab, E), 0.08))
    t('output.bias', rnd((n_vocab,), 0.1))
    write_out(w)


def write_falcon(path, n_embd=128, n_layer=3, n_head=4, n_kv=1, own_attn_norm=False, tied=True, n_vocab=1024,
                 seed=8001):
    """Falcon as convert_hf_to_gguf.py's FalconModel writes it: q, k and v fused in attn_qkv (regrouped as all q rows,
    then k's, then v's: tensor_data_layout 'jploski'), no biases but the LayerNorms', feed_forward_length 4 x n_embd;
    the 40B's form (own_attn_norm) with attn_norm_2 for the attention, attn_norm for the feed-forward block."""
    rnd = _random(seed)
    E, L, hd, F = n_embd, n_layer, n_embd // n_head, 4 * n_embd

    w = gguf.GGUFWriter(path, 'falcon')
    w.add_name('synthetic falcon (random weights)')
    w.add_context_length(2048)
    w.add_tensor_data_layout('jploski')
    w.add_embedding_length(E)
    w.add_feed_forward_length(F)
    w.add_block_count(L)
    w.add_head_count(n_head)
    w.add_head_count_kv(n_kv)
    w.add_layer_norm_eps(1e-5)
    w.add_file_type(0)
    add_bpe_vocab(w, 'falcon', ['<|endoftext|>', '>>ABSTRACT<<', '>>INTRODUCTION<<'], n_vocab, '<|endoftext|>', False)

    t = w.add_tensor
    t('token_embd.weight', rnd((n_vocab, E), 0.08))
    for i in range(L):
        b = f'blk.{i}.'
        _layernorm(t, b + 'attn_norm', E, rnd)
        if own_attn_norm:
            _layernorm(t, b + 'attn_norm_2', E, rnd)
        t(b + 'attn_qkv.weight', rnd(((n_head + 2 * n_kv) * hd, E), 0.12))
        t(b + 'attn_output.weight', rnd((E, E), 0.1))
        t(b + 'ffn_up.weight', rnd((F, E), 0.12))
        t(b + 'ffn_down.weight', rnd((E, F), 0.06))
    _layernorm(t, 'output_norm', E, rnd)
    if not tied:
        t('output.weight', rnd((n_vocab, E), 0.08))
    write_out(w)


def write_gptneox(path, n_embd=128, n_layer=4, n_head=4, n_ff=512, rot_frac=0.25, parallel=True, n_vocab=1024,
                  seed=8101):
    """GPT-NeoX as convert_hf_to_gguf.py's GPTNeoXModel writes it: no head_count_kv (every head its own), q, k and v
    fused in attn_qkv with its bias (each head's rows regrouped as all q's, then k's, then v's), biases everywhere,
    rotary_pct of each head rotating, use_parallel_residual."""
    rnd = _random(seed)
    E, L, hd = n_embd, n_layer, n_embd // n_head

    w = gguf.GGUFWriter(path, 'gptneox')
    w.add_name('synthetic gptneox (random weights)')
    w.add_context_length(2048)
    w.add_embedding_length(E)
    w.add_block_count(L)
    w.add_feed_forward_length(n_ff)
    w.add_rope_dimension_count(int(rot_frac * hd))
    w.add_head_count(n_head)
    w.add_parallel_residual(parallel)
    w.add_layer_norm_eps(1e-5)
    add_bpe_vocab(w, 'gpt-2', ['<|endoftext|>', '<|padding|>'], n_vocab, '<|endoftext|>', False)

    t = w.add_tensor
    t('token_embd.weight', rnd((n_vocab, E), 0.08))
    for i in range(L):
        b = f'blk.{i}.'
        _layernorm(t, b + 'attn_norm', E, rnd)
        t(b + 'attn_qkv.weight', rnd((3 * E, E), 0.12))
        t(b + 'attn_qkv.bias', rnd((3 * E,), 0.1))
        t(b + 'attn_output.weight', rnd((E, E), 0.1))
        t(b + 'attn_output.bias', rnd((E,), 0.05))
        _layernorm(t, b + 'ffn_norm', E, rnd)
        t(b + 'ffn_up.weight', rnd((n_ff, E), 0.12))
        t(b + 'ffn_up.bias', rnd((n_ff,), 0.1))
        t(b + 'ffn_down.weight', rnd((E, n_ff), 0.06))
        t(b + 'ffn_down.bias', rnd((E,), 0.05))
    _layernorm(t, 'output_norm', E, rnd)
    t('output.weight', rnd((n_vocab, E), 0.08))
    write_out(w)
