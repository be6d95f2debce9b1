"""Writes a small random-weight Cohere file as convert_hf_to_gguf.py's CommandR2Model (command-r: Command R, Aya) and
Cohere2Model (cohere2: Command R7B, Command A) lay one out (names: gguf-py's constants; what the loader and graph read:
llama.cpp's src/models/command-r.cpp and cohere2.cpp): LayerNorms without bias (attention.layer_norm_epsilon), the
attention and the feed-forward block side by side on one norm, the output projection the token embedding, logits times
logit_scale; for cohere2 a window on three layers in four, which alone rotate; for command-r of 64 layers or more
(Command R+) a LayerNorm of each head of q and k with gains of its own. Gains around 1 with a spread, as a trained
model's LayerNorms have. write_cohere2moe writes Cohere2 MoE's (Cohere2MoeModel; llama.cpp's cohere2moe.cpp).
Deterministic: the same arguments give the same bytes.

    from cohere_arch import write_cohere; write_cohere(path, 'cohere2')"""
import numpy as np
import gguf

from gguf_copy import write_out

from moe_arch import add_bpe_vocab


def add_attention(t, b, rnd, E, H, KV, hd):
    """A layer's norm and attention tensors, drawn in the order both writers draw them."""
    t(b + 'attn_norm.weight', rnd((E,), 0.2, 1.0))
    t(b + 'attn_q.weight', rnd((H * hd, E), 0.12))
    t(b + 'attn_k.weight', rnd((KV * hd, E), 0.12))
    t(b + 'attn_v.weight', rnd((KV * hd, E), 0.12))
    t(b + 'attn_output.weight', rnd((E, H * hd), 0.1))


def add_dense_ffn(t, b, rnd, E, F):
    t(b + 'ffn_gate.weight', rnd((F, E), 0.12))
    t(b + 'ffn_up.weight', rnd((F, E), 0.12))
    t(b + 'ffn_down.weight', rnd((E, F), 0.1))


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
        add_attention(t, b, rnd, E, n_head, n_kv, hd)
        if arch == 'command-r' and L >= 64:  # Command R+: each head's own LayerNorm gains for q and k
            t(b + 'attn_q_norm.weight', rnd((n_head, hd), 0.2, 1.0))
            t(b + 'attn_k_norm.weight', rnd((n_kv, hd), 0.2, 1.0))
        add_dense_ffn(t, b, rnd, E, n_ff)
    t('output_norm.weight', rnd((E,), 0.2, 1.0))
    write_out(w)


def write_cohere2moe(path, n_embd=128, n_layer=5, n_nextn=1, n_head=4, n_kv=2, n_dense=1, n_ff=256, n_exp=6,
                     n_used=2, n_ffe=64, n_shared=1, norm=True, scale=None, gating=None, rms=False, fused=False,
                     swa=(False, True, True, True, False), window=3, logit_scale=0.5, tied=True, n_vocab=1024,
                     seed=5801):
    """Cohere2 MoE (Cohere2MoeModel): block_count counting the prediction blocks, a sliding_window_pattern bool per
    trunk layer (the checkpoint's layer_types), leading_dense_block_count, expert_weights_norm, the shared experts'
    count and whole width where it has them, rope.dimension_count a head; LayerNorms (attention.layer_norm_epsilon)
    or, with rms, RMSNorms (attention.layer_norm_rms_epsilon); the experts' gate and up apart, or fused in
    ffn_gate_up_exps (which llama.cpp's loader takes too)."""
    rs = np.random.RandomState(seed)
    E, H, KV, X = n_embd, n_head, n_kv, n_exp
    hd, L = n_embd // n_head, n_layer + n_nextn

    def rnd(shape, std, mean=0.0):
        return (rs.standard_normal(shape).astype(np.float32) * std + mean).astype(np.float32)

    arch = 'cohere2moe'
    w = gguf.GGUFWriter(path, arch)
    w.add_name(f'synthetic {arch} (random weights)')
    w.add_context_length(8192)
    w.add_embedding_length(E)
    w.add_block_count(L)
    w.add_feed_forward_length(n_ff)
    w.add_head_count(H)
    w.add_head_count_kv(KV)
    w.add_rope_freq_base(50000.0)
    if rms:
        w.add_layer_norm_rms_eps(1e-5)
    else:
        w.add_layer_norm_eps(1e-5)
    w.add_expert_count(X)
    w.add_expert_used_count(n_used)
    w.add_file_type(0)
    w.add_logit_scale(logit_scale)
    w.add_sliding_window(window)
    w.add_sliding_window_pattern([bool(s) for s in swa])
    w.add_vocab_size(n_vocab)
    w.add_expert_feed_forward_length(n_ffe)
    w.add_leading_dense_block_count(n_dense)
    w.add_expert_weights_norm(norm)
    if n_shared:
        w.add_expert_shared_count(n_shared)
        w.add_expert_shared_feed_forward_length(n_ffe * n_shared)
    if n_nextn:
        w.add_nextn_predict_layers(n_nextn)
    if scale is not None:
        w.add_expert_weights_scale(scale)
    if gating is not None:
        w.add_uint32(f'{arch}.expert_gating_func', gating)  # 1 softmax, 2 sigmoid, 3 softmax over the chosen
    w.add_rope_dimension_count(hd)
    w.add_rope_scaling_type(gguf.RopeScalingType.NONE)
    add_bpe_vocab(w, 'command-r', ['<BOS_TOKEN>', '<|END_OF_TURN_TOKEN|>', '<|endoftext|>'], n_vocab, '<BOS_TOKEN>',
                  True)

    t = w.add_tensor
    t('token_embd.weight', rnd((n_vocab, E), 0.08))
    for i in range(L):
        b = f'blk.{i}.'
        add_attention(t, b, rnd, E, H, KV, hd)
        if i < n_dense:
            add_dense_ffn(t, b, rnd, E, n_ff)
            continue
        t(b + 'ffn_gate_inp.weight', rnd((X, E), 0.3))
        if fused:
            t(b + 'ffn_gate_up_exps.weight', rnd((X, 2 * n_ffe, E), 0.12))
        else:
            t(b + 'ffn_gate_exps.weight', rnd((X, n_ffe, E), 0.12))
            t(b + 'ffn_up_exps.weight', rnd((X, n_ffe, E), 0.12))
        t(b + 'ffn_down_exps.weight', rnd((X, E, n_ffe), 0.1))
        if n_shared:
            Fs = n_ffe * n_shared
            t(b + 'ffn_gate_shexp.weight', rnd((Fs, E), 0.12))
            t(b + 'ffn_up_shexp.weight', rnd((Fs, E), 0.12))
            t(b + 'ffn_down_shexp.weight', rnd((E, Fs), 0.1))
        if i >= n_layer:
            t(b + 'nextn.eh_proj.weight', rnd((E, 2 * E), 0.08))
            t(b + 'nextn.enorm.weight', rnd((E,), 0.1, 1.0))
            t(b + 'nextn.hnorm.weight', rnd((E,), 0.1, 1.0))
    t('output_norm.weight', rnd((E,), 0.2, 1.0))
    if not tied:
        t('output.weight', rnd((n_vocab, E), 0.08))
    write_out(w)
