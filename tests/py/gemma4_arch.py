"""Writes a small random-weight Gemma 4 file (arch gemma4) as convert_hf_to_gguf.py's Gemma4Model lays out the dense
31B form (names: gguf-py's constants; what the loader and graph read: llama.cpp's src/models/gemma4.cpp): the sliding
layers listed by attention.sliding_window_pattern, with heads of their own length (attention.key_length_swa) and more
key/value heads than the full layers (attention.head_count_kv one count per layer); the full layers without attn_v (the
values are the key projection's output), rotating a quarter of each head through rope_freqs (1 for the rotated pairs,
1e30 for the others: the converter's "proportional" rope) with the global base, the sliding ones with their own;
per-head q and k norms, v normed without gains, post-norms, a scale on each layer's output, tanh-GELU, logits
soft-capped. Gains around 1 with a spread (Gemma 4 stores them without Gemma 3's +1). Deterministic: the same arguments
give the same bytes.

    from gemma4_arch import write_gemma4; write_gemma4(path)"""
import numpy as np
import gguf

from gguf_copy import write_out

from moe_arch import add_bpe_vocab
from gemma4_vocab import add_gemma4_vocab


def write_gemma4(path, n_embd=192, swa_layers=(True, True, False, True, True, False, True), n_head=4, n_kv_swa=2,
                 n_kv_full=1, head_swa=48, head_full=64, rot_full_frac=0.25, n_ff=384, window=4, softcap=30.0,
                 n_vocab=1024, k_eq_v=True, out_scale=True, rot_swa=None, ff_wide_last=0, vocab='gpt2', weights=True,
                 n_ple=0, kv_shared=0, n_exp=0, n_used=0, n_ffe=0, seed=5801):
    """k_eq_v: the full layers without attn_v; out_scale: layer_output_scale in every layer; rot_swa: the sliding
    layers' rotated width (their whole head when None); ff_wide_last: that many last layers twice as wide (the
    converter's use_double_wide_mlp, feed_forward_length then one width per layer); vocab: 'gemma4' for Gemma 4's own
    tokenizer (gemma4_vocab.py), else a byte-level one; weights: False for the keys alone (a vocabulary file); n_ple:
    per-layer inputs of that width (E2B / E4B); kv_shared: that many last layers reading earlier layers' caches (their
    k and v projections still in the file, as the converter writes them, unread); n_exp: 26B-A4B's experts beside the
    dense block in every layer (n_used chosen, n_ffe wide; gate and up fused, a scale per expert, the router's input
    gains)"""
    rs = np.random.RandomState(seed)
    E, L = n_embd, len(swa_layers)

    def rnd(shape, std, mean=0.0):
        return (rs.standard_normal(shape).astype(np.float32) * std + mean).astype(np.float32)

    w = gguf.GGUFWriter(path, 'gemma4')
    w.add_name('synthetic gemma4 (random weights)')
    w.add_embedding_length(E)
    w.add_block_count(L)
    ff = [n_ff * 2 if i >= L - ff_wide_last else n_ff for i in range(L)]
    w.add_feed_forward_length(ff if ff_wide_last else n_ff)
    w.add_head_count(n_head)
    if n_kv_swa == n_kv_full:
        w.add_head_count_kv(n_kv_swa)
    else:
        w.add_head_count_kv([n_kv_swa if s else n_kv_full for s in swa_layers])
    w.add_key_length(head_full)
    w.add_value_length(head_full)
    w.add_key_length_swa(head_swa)
    w.add_value_length_swa(head_swa)
    w.add_rope_dimension_count(head_full)
    w.add_rope_dimension_count_swa(head_swa if rot_swa is None else rot_swa)
    w.add_context_length(8192)
    w.add_file_type(0)
    w.add_layer_norm_rms_eps(1e-6)
    w.add_rope_freq_base(1000000.0)
    w.add_rope_freq_base_swa(10000.0)
    w.add_sliding_window(window)
    w.add_sliding_window_pattern(list(swa_layers))
    if n_exp:
        w.add_expert_count(n_exp)
        w.add_expert_used_count(n_used)
        w.add_expert_feed_forward_length(n_ffe)
    w.add_shared_kv_layers(kv_shared)
    w.add_embedding_length_per_layer_input(n_ple)
    w.add_final_logit_softcapping(softcap)
    if vocab == 'gemma4':
        add_gemma4_vocab(w, n_vocab)
    else:
        add_bpe_vocab(w, 'gpt-2', ['<bos>', '<eos>', '<|endoftext|>'], n_vocab, '<bos>', True)
    if not weights:
        write_out(w)
        return

    t = w.add_tensor
    n_rot = int(head_full * rot_full_frac / 2)
    t('rope_freqs.weight', np.array([1.0] * n_rot + [1e30] * (head_full // 2 - n_rot), dtype=np.float32))
    t('token_embd.weight', rnd((n_vocab, E), 0.08))
    if n_ple:
        t('per_layer_token_embd.weight', rnd((n_vocab, L * n_ple), 0.1))
        t('per_layer_model_proj.weight', rnd((L * n_ple, E), 0.08))
        t('per_layer_proj_norm.weight', rnd((n_ple,), 0.2, 1.0))
    for i, swa in enumerate(swa_layers):
        b = f'blk.{i}.'
        hd, kv = (head_swa, n_kv_swa) if swa else (head_full, n_kv_full)
        t(b + 'attn_norm.weight', rnd((E,), 0.2, 1.0))
        t(b + 'attn_q.weight', rnd((n_head * hd, E), 0.12))
        t(b + 'attn_k.weight', rnd((kv * hd, E), 0.12))
        if swa or not k_eq_v:  # the full layers' values are their keys (attention_k_eq_v)
            t(b + 'attn_v.weight', rnd((kv * hd, E), 0.12))
        t(b + 'attn_q_norm.weight', rnd((hd,), 0.2, 1.0))
        t(b + 'attn_k_norm.weight', rnd((hd,), 0.2, 1.0))
        t(b + 'attn_output.weight', rnd((E, n_head * hd), 0.1))
        t(b + 'post_attention_norm.weight', rnd((E,), 0.2, 1.0))
        t(b + 'ffn_norm.weight', rnd((E,), 0.2, 1.0))
        t(b + 'ffn_gate.weight', rnd((ff[i], E), 0.12))
        t(b + 'ffn_up.weight', rnd((ff[i], E), 0.12))
        t(b + 'ffn_down.weight', rnd((E, ff[i]), 0.1))
        t(b + 'post_ffw_norm.weight', rnd((E,), 0.2, 1.0))
        if n_exp:
            t(b + 'ffn_gate_inp.weight', rnd((n_exp, E), 0.3))
            t(b + 'ffn_gate_inp.scale', rnd((E,), 0.2, 1.0))
            t(b + 'ffn_gate_up_exps.weight', rnd((n_exp, 2 * n_ffe, E), 0.12))
            t(b + 'ffn_down_exps.weight', rnd((n_exp, E, n_ffe), 0.1))
            t(b + 'ffn_down_exps.scale', rnd((n_exp,), 0.3, 1.0))
            t(b + 'pre_ffw_norm_2.weight', rnd((E,), 0.2, 1.0))
            t(b + 'post_ffw_norm_1.weight', rnd((E,), 0.2, 1.0))
            t(b + 'post_ffw_norm_2.weight', rnd((E,), 0.2, 1.0))
        if n_ple:
            t(b + 'inp_gate.weight', rnd((n_ple, E), 0.12))
            t(b + 'proj.weight', rnd((E, n_ple), 0.12))
            t(b + 'post_norm.weight', rnd((E,), 0.2, 1.0))
        if out_scale:
            t(b + 'layer_output_scale.weight', np.array([0.5 + rs.random_sample()], dtype=np.float32))
    t('output_norm.weight', rnd((E,), 0.2, 1.0))
    write_out(w)
