"""Writes a small random-weight Cohere file as convert_hf_to_gguf.py's CommandR2Model (command-r: Command R, Aya) and
Cohere2Model (cohere2: Command R7B, Command A) lay one out (names: gguf-py's constants; what the loader and graph read:
llama.cpp's src/models/command-r.cpp and cohere2.cpp): LayerNorms without bias (attention.layer_norm_epsilon), the
attention and the feed-forward block side by side on one norm, the output projection the token embedding, logits times
logit_scale; for cohere2 a window on three layers in four, which alone rotate; for command-r of 64 layers or more
(Command R+) a LayerNorm of each head of q and k with gains of its own. Gains around 1 with a spread, as a trained
model's LayerNorms have. Deterministic: the same arguments give the same bytes.

    from cohere_arch import write_cohere; write_cohere(path, 'cohere2')"""
import numpy as np
import gguf

from gguf_copy import write_out

from moe_arch import add_bpe_vocab


def write_cohere(path, arch, n_embd=192, n_layer=5, n_head=6, n_kv=2, n_ff=384, logit_scale=0.25, window=3,
                 n_vocab=1024, seed=5701):
    rs = np.random.RandomState(seed)
    E, L, hd = n_embd, n_layer, n_embd // n_head

    def rnd(shape, std, mean=0.0):
        return (rs.standard_normal(shape).astype(np.float32) * std + mean).astype(np.float32)

    w = gguf.GGUFWriter(path, arch)
    w.add_name(f'synthetic {arch} (random weights)')
    w.add_embedding_length(E)
    w.add_block_count(L)
    w.add_feed_forward_length(n_ff)
    w.add_head_count(n_head)
    w.add_head_count_kv(n_kv)
    w.add_context_length(8192)
    w.add_file_type(0)
    w.add_layer_norm_eps(1e-5)
    w.add_rope_freq_base(50000.0)
    w.add_logit_scale(logit_scale)
    if arch == 'cohere2':
        w.add_sliding_window(window)
        w.add_sliding_window_pattern(4)
    add_bpe_vocab(w, 'command-r', ['<BOS_TOKEN>', '<|END_OF_TURN_TOKEN|>', '<|endoftext|>'], n_vocab, '<BOS_TOKEN>',
                  True)

    t = w.add_tensor
    t('token_embd.weight', rnd((n_vocab, E), 0.08))
    for i in range(L):
        b = f'blk.{i}.'
        t(b + 'attn_norm.weight', rnd((E,), 0.2, 1.0))
        t(b + 'attn_q.weight', rnd((n_head * hd, E), 0.12))
        t(b + 'attn_k.weight', rnd((n_kv * hd, E), 0.12))
        t(b + 'attn_v.weight', rnd((n_kv * hd, E), 0.12))
        t(b + 'attn_output.weight', rnd((E, n_head * hd), 0.1))
        if arch == 'command-r' and L >= 64:  # Command R+: each head's own LayerNorm gains for q and k
            t(b + 'attn_q_norm.weight', rnd((n_head, hd), 0.2, 1.0))
            t(b + 'attn_k_norm.weight', rnd((n_kv, hd), 0.2, 1.0))
        t(b + 'ffn_gate.weight', rnd((n_ff, E), 0.12))
        t(b + 'ffn_up.weight', rnd((n_ff, E), 0.12))
        t(b + 'ffn_down.weight', rnd((E, n_ff), 0.1))
    t('output_norm.weight', rnd((E,), 0.2, 1.0))
    write_out(w)
