"""Writes small random-weight plamo3 files (PLaMo 3) as convert_hf_to_gguf.py's Plamo3Model lays them out (TextModel's
keys, vocab_size, attention.sliding_window and sliding_window_pattern as the checkpoint's config has them: a period;
q, k and v fused in attn_qkv, per-head q/k norms, norms before and after both blocks, the post-norms named without
.weight (the converter maps post_mixer_norm.weight and post_mlp_norm.weight whole), gate and up fused in ffn_up; names:
gguf-py's constants; what the loader requires and how the graph runs: llama.cpp's src/models/plamo3.cpp), a byte-level
BPE vocabulary or PLaMo's own (plamo2_vocab.py). Deterministic: the same arguments give the same bytes.

    from plamo3_arch import write_plamo3; write_plamo3(path)"""
import numpy as np
import gguf

from gguf_copy import write_out
from moe_arch import add_bpe_vocab
from plamo2_vocab import add_plamo2_vocab


def write_plamo3(path, n_embd=128, n_layer=4, n_head=4, n_kv=2, hd=32, hd_v=32, n_ff=192, window=3, pattern=2,
                 base_swa=5000.0, tied=False, n_vocab=1024, vocab='bpe', weights=True, not_byte=None, seed=8701):
    """n_kv and n_ff: one value, or a list per layer; window None for no sliding window, pattern None for the
    loader's period (8); vocab 'bpe' or 'plamo2' (not_byte: plamo2_vocab's); weights False for the keys and vocabulary
    alone."""
    rs = np.random.RandomState(seed)
    E, H = n_embd, n_head
    kv = n_kv if isinstance(n_kv, list) else [n_kv] * n_layer
    ff = n_ff if isinstance(n_ff, list) else [n_ff] * n_layer

    def rnd(shape, std, mean=0.0):
        return (rs.standard_normal(shape).astype(np.float32) * std + mean).astype(np.float32)

    arch = 'plamo3'
    w = gguf.GGUFWriter(path, arch)
    w.add_name('synthetic plamo3 (random weights)')
    w.add_context_length(4096)
    w.add_embedding_length(E)
    w.add_block_count(n_layer)
    w.add_feed_forward_length(n_ff)
    w.add_head_count(H)
    w.add_head_count_kv(n_kv)
    w.add_key_length(hd)
    w.add_value_length(hd_v)
    w.add_rope_freq_base(10000.0)
    if base_swa:
        w.add_float32(f'{arch}.rope.freq_base_swa', base_swa)
    w.add_layer_norm_rms_eps(1e-6)
    w.add_file_type(0)
    w.add_vocab_size(n_vocab)
    if window:
        w.add_uint32(f'{arch}.attention.sliding_window', window)
        if pattern:
            w.add_uint32(f'{arch}.attention.sliding_window_pattern', pattern)
    if vocab == 'plamo2':
        add_plamo2_vocab(w, n_vocab, not_byte)
    else:
        add_bpe_vocab(w, 'qwen2', ['<|endoftext|>', '<|plamo:bos|>', '<|plamo:eos|>'], n_vocab, '<|plamo:bos|>', True)
    if not weights:
        write_out(w)
        return

    t = w.add_tensor
    t('token_embd.weight', rnd((n_vocab, E), 0.05))
    for i in range(n_layer):
        b = f'blk.{i}.'
        KV, F = kv[i], ff[i]
        t(b + 'attn_norm.weight', rnd((E,), 0.1, 1.0))
        t(b + 'attn_qkv.weight', rnd(((H + KV) * hd + KV * hd_v, E), 0.08))
        t(b + 'attn_q_norm.weight', rnd((hd,), 0.2, 1.0))
        t(b + 'attn_k_norm.weight', rnd((hd,), 0.2, 1.0))
        t(b + 'attn_output.weight', rnd((E, H * hd_v), 0.08))
        # the converter's offsets folded in: 1/5 and 1/5^1.5 about which the trained gains sit
        t(b + 'post_attention_norm', rnd((E,), 0.05, 0.2))
        t(b + 'ffn_norm.weight', rnd((E,), 0.1, 1.0))
        t(b + 'ffn_up.weight', rnd((2 * F, E), 0.08))
        t(b + 'ffn_down.weight', rnd((E, F), 0.06))
        t(b + 'post_ffw_norm', rnd((E,), 0.03, 0.09))
    t('output_norm.weight', rnd((E,), 0.1, 1.0))
    if not tied:  # (tied: the loader takes the token embedding)
        t('output.weight', rnd((n_vocab, E), 0.08))
    write_out(w)


if __name__ == '__main__':
    import sys
    write_plamo3(sys.argv[1])
