"""Writes small random-weight files of the families with learned absolute positions, as convert_hf_to_gguf.py lays
them out (names: gguf-py's constants; what the loader and graph read: llama.cpp's src/models/gpt2.cpp and
starcoder.cpp, one graph): GPT-2 (GPT2Model: every head its own key/value head, no head_count_kv key, the output the
token embedding) and StarCoder (StarCoderModel, GPTBigCode: head_count_kv 1, an output projection of its own). Both:
position_embd (a row per position up to context_length) added to the token embeddings, no rotation, LayerNorms with
biases (attention.layer_norm_epsilon), q, k and v fused in attn_qkv with its bias (q's rows, then k's, then v's: the
converter only transposes HF's Conv1D), biases on every product, an ungated GELU block 4 x n_embd wide. Positions get
a larger spread than the tokens, as GPT-2's trained table has. Deterministic: the same arguments give the same bytes.

    from position_arch import write_gpt2; write_gpt2(path)   (write_starcoder, write_bloom, write_mpt)"""
import gguf

from gguf_copy import write_out
from layernorm_arch import _layernorm, _random
from moe_arch import add_bpe_vocab


def _norm(t, name, n, rnd, bias):
    """A LayerNorm's gains (and its bias where bias: MPT's no_bias files have none)."""
    if bias:
        _layernorm(t, name, n, rnd)
    else:
        t(name + '.weight', rnd((n,), 0.2, 1.0))


def _layers(t, rnd, L, E, kv_dim, F, biases=True, qk_ln=False, awq=False):
    """GPT-2's layers: LayerNorms with biases, q, k and v fused with their bias, biases on every product, the ungated
    block F wide; without biases where biases is false (MPT's no_bias), with LayerNorms of the whole q and k rows
    (attn_q_norm, attn_k_norm) where qk_ln (q's alone where it is 'q'), AWQ's activation scales where awq."""
    for i in range(L):
        b = f'blk.{i}.'
        _norm(t, b + 'attn_norm', E, rnd, biases)
        t(b + 'attn_qkv.weight', rnd((E + 2 * kv_dim, E), 0.12))
        if biases:
            t(b + 'attn_qkv.bias', rnd((E + 2 * kv_dim,), 0.1))
        t(b + 'attn_output.weight', rnd((E, E), 0.1))
        if biases:
            t(b + 'attn_output.bias', rnd((E,), 0.05))
        if qk_ln:
            _norm(t, b + 'attn_q_norm', E, rnd, biases)
        if qk_ln is True:
            _norm(t, b + 'attn_k_norm', kv_dim, rnd, biases)
        _norm(t, b + 'ffn_norm', E, rnd, biases)
        t(b + 'ffn_up.weight', rnd((F, E), 0.12))
        if biases:
            t(b + 'ffn_up.bias', rnd((F,), 0.1))
        if awq:
            t(b + 'ffn.act.scales', rnd((F,), 0.1, 1.0))
        t(b + 'ffn_down.weight', rnd((E, F), 0.06))
        if biases:
            t(b + 'ffn_down.bias', rnd((E,), 0.05))


def _write(path, arch, pre, n_embd, n_layer, n_head, n_kv, n_ctx, tied, n_vocab, seed):
    rnd = _random(seed)
    E, L, hd, F = n_embd, n_layer, n_embd // n_head, 4 * n_embd

    w = gguf.GGUFWriter(path, arch)
    w.add_name(f'synthetic {arch} (random weights)')
    w.add_block_count(L)
    w.add_context_length(n_ctx)
    w.add_embedding_length(E)
    w.add_feed_forward_length(F)
    w.add_head_count(n_head)
    if n_kv is not None:
        w.add_head_count_kv(n_kv)
    w.add_layer_norm_eps(1e-5)
    w.add_file_type(0)
    add_bpe_vocab(w, pre, ['<|endoftext|>'], n_vocab, '<|endoftext|>', False)

    kv_dim = (n_kv if n_kv is not None else n_head) * hd
    t = w.add_tensor
    t('token_embd.weight', rnd((n_vocab, E), 0.08))
    t('position_embd.weight', rnd((n_ctx, E), 0.15))
    _layers(t, rnd, L, E, kv_dim, F)
    _layernorm(t, 'output_norm', E, rnd)
    if not tied:
        t('output.weight', rnd((n_vocab, E), 0.08))
    write_out(w)


def write_gpt2(path, n_embd=128, n_layer=4, n_head=4, n_ctx=256, n_vocab=1024, seed=8201):
    _write(path, 'gpt2', 'gpt-2', n_embd, n_layer, n_head, None, n_ctx, True, n_vocab, seed)


def write_starcoder(path, n_embd=256, n_layer=3, n_head=8, n_ctx=512, n_vocab=1024, seed=8301):
    _write(path, 'starcoder', 'starcoder', n_embd, n_layer, n_head, 1, n_ctx, False, n_vocab, seed)


def write_bloom(path, n_embd=128, n_layer=4, n_head=8, n_ctx=2048, tied=True, n_vocab=1024, seed=8401):
    """BLOOM as convert_hf_to_gguf.py's BloomModel writes it: GPT-2's layers without position_embd (ALiBi, which the
    loader fixes at max_bias 8: no key), token_embd_norm and its bias after the embedding, head_count_kv written equal
    to head_count, attn_qkv's rows regrouped from HF's per-head q, k, v to all q's, then k's, then v's."""
    rnd = _random(seed)
    E, L, F = n_embd, n_layer, 4 * n_embd

    w = gguf.GGUFWriter(path, 'bloom')
    w.add_name('synthetic bloom (random weights)')
    w.add_context_length(n_ctx)
    w.add_embedding_length(E)
    w.add_feed_forward_length(F)
    w.add_block_count(L)
    w.add_head_count(n_head)
    w.add_head_count_kv(n_head)
    w.add_layer_norm_eps(1e-5)
    w.add_file_type(0)
    add_bpe_vocab(w, 'bloom', ['<unk>', '<s>', '</s>', '<pad>', '<|endoftext|>'], n_vocab, '<s>', False)

    t = w.add_tensor
    t('token_embd.weight', rnd((n_vocab, E), 0.08))
    _layernorm(t, 'token_embd_norm', E, rnd)
    _layers(t, rnd, L, E, E, F)
    _layernorm(t, 'output_norm', E, rnd)
    if not tied:
        t('output.weight', rnd((n_vocab, E), 0.08))
    write_out(w)


def write_mpt(path, n_embd=128, n_layer=4, n_head=8, n_kv=None, n_ctx=2048, alibi=8.0, clamp=2.0, positions=False,
              biases=False, qk_ln=False, awq=False, tied=True, n_vocab=1024, seed=8501):
    """MPT as convert_hf_to_gguf.py's MPTModel writes it: GPT-2's layers, the feed-forward block 4 x n_embd wide,
    attention.max_alibi_bias (alibi_bias_max, or 0.0 for a file without ALiBi), attention.clamp_kqv where clip_qkv is
    set (clamp: None for none), head_count_kv where kv_n_heads is (n_kv), position_embd where learned_pos_emb
    (positions), no biases in no_bias files (biases false: MPT-7B's), q/k LayerNorms where qk_ln, AWQ's activation
    scales where awq, the gpt-neox tokenizer ('mpt'). The clamp of 2 bites on a few percent of the q, k and v values
    of these weights."""
    rnd = _random(seed)
    E, L, hd, F = n_embd, n_layer, n_embd // n_head, 4 * n_embd

    w = gguf.GGUFWriter(path, 'mpt')
    w.add_name('synthetic mpt (random weights)')
    w.add_context_length(n_ctx)
    w.add_embedding_length(E)
    w.add_block_count(L)
    w.add_feed_forward_length(F)
    w.add_head_count(n_head)
    if n_kv is not None:
        w.add_head_count_kv(n_kv)
    w.add_layer_norm_eps(1e-5)
    if clamp is not None:
        w.add_clamp_kqv(clamp)
    w.add_max_alibi_bias(alibi)
    w.add_file_type(0)
    add_bpe_vocab(w, 'mpt', ['<|endoftext|>', '<|padding|>'], n_vocab, '<|endoftext|>', False)

    kv_dim = (n_kv if n_kv is not None else n_head) * hd
    t = w.add_tensor
    t('token_embd.weight', rnd((n_vocab, E), 0.08))
    if positions:
        t('position_embd.weight', rnd((n_ctx, E), 0.15))
    _layers(t, rnd, L, E, kv_dim, F, biases, qk_ln, awq)
    _norm(t, 'output_norm', E, rnd, biases)
    if not tied:
        t('output.weight', rnd((n_vocab, E), 0.08))
    write_out(w)
