"""Writes a small random-weight Falcon-H1 file as convert_hf_to_gguf.py's FalconH1Model lays one out (its converter:
conversion/falcon_h1.py on Mamba2Model, the attention through LlamaModel's names; what the loader and graph read:
llama.cpp's src/models/falcon-h1.cpp). Every layer holds an attention block and a Mamba-2 mixer side by side, both on
attn_norm(x): x + attention + mixer, then ffn_norm, a SwiGLU block and the residual add. The mixer's width is its own
(ssm.inner_size, mamba_d_ssm, not twice the embedding), its grouped norm present only where the model has
mamba_rms_norm; the feed-forward norm is named blk.N.ffn_norm without .weight (the converter maps pre_ff_layernorm.weight
whole, to FFN_PRE_NORM's name; llama.cpp's loader asks for that name). The multipliers (mup) are folded into the weights
by the converter, so the file has none. Rotation NEOX-wise, over the whole head. Deterministic: the same arguments give
the same bytes.

    from falcon_h1_arch import write_falcon_h1; write_falcon_h1(path)"""
import numpy as np
import gguf

from gguf_copy import write_out

from moe_arch import add_bpe_vocab
from nemotron_h_arch import add_mamba2_layer


def write_falcon_h1(path, n_embd=128, n_layer=4, n_head=4, n_kv=2, head_dim=32, n_ff=256, ssm_heads=8,
                    ssm_head_dim=24, n_group=1, d_state=16, d_conv=4, ssm_norm=False, tied=False, n_vocab=1024,
                    seed=7301):
    rs = np.random.RandomState(seed)
    E, L = n_embd, n_layer
    inner = ssm_heads * ssm_head_dim

    def rnd(shape, std, mean=0.0):
        return (rs.standard_normal(shape).astype(np.float32) * std + mean).astype(np.float32)

    w = gguf.GGUFWriter(path, 'falcon-h1')
    w.add_name('synthetic falcon-h1 (random weights)')
    # Mamba2Model.set_gguf_parameters, then FalconH1Model's overrides (the same keys, written once)
    w.add_context_length(16384)
    w.add_embedding_length(E)
    w.add_feed_forward_length(n_ff)
    w.add_head_count(n_head)
    w.add_block_count(L)
    w.add_ssm_conv_kernel(d_conv)
    w.add_ssm_inner_size(inner)
    w.add_ssm_state_size(d_state)
    w.add_ssm_time_step_rank(ssm_heads)
    w.add_ssm_group_count(n_group)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_file_type(0)
    w.add_vocab_size(n_vocab)
    w.add_head_count_kv(n_kv)
    w.add_key_length(head_dim)
    w.add_value_length(head_dim)
    w.add_rope_freq_base(1e11)  # Falcon-H1's rope_theta
    add_bpe_vocab(w, 'falcon-h1', ['<|begin_of_text|>', '<|im_start|>', '<|im_end|>', '<|endoftext|>'], n_vocab,
                  '<|begin_of_text|>', False)

    t = w.add_tensor
    t('token_embd.weight', rnd((n_vocab, E), 0.08))
    for i in range(L):
        b = f'blk.{i}.'
        t(b + 'ffn_down.weight', rnd((E, n_ff), 0.1))
        t(b + 'ffn_gate.weight', rnd((n_ff, E), 0.12))
        t(b + 'ffn_up.weight', rnd((n_ff, E), 0.12))
        t(b + 'attn_norm.weight', rnd((E,), 0.2, 1.0))
        add_mamba2_layer(t, rs, rnd, b, E, ssm_heads, ssm_head_dim, n_group, d_state, d_conv, norm=ssm_norm)
        t(b + 'ffn_norm', rnd((E,), 0.2, 1.0))
        t(b + 'attn_k.weight', rnd((n_kv * head_dim, E), 0.12))
        t(b + 'attn_output.weight', rnd((E, n_head * head_dim), 0.1))
        t(b + 'attn_q.weight', rnd((n_head * head_dim, E), 0.12))
        t(b + 'attn_v.weight', rnd((n_kv * head_dim, E), 0.12))
    t('output_norm.weight', rnd((E,), 0.2, 1.0))
    if not tied:
        t('output.weight', rnd((n_vocab, E), 0.08))
    write_out(w)
