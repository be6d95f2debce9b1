"""Writes small random-weight grok files as convert_hf_to_gguf.py's GrokModel lays them out (TextModel's keys, then
attn_logit_softcapping, router_logit_softcapping, final_logit_softcapping where the config has it, the experts'
width where it differs, YaRN's keys for Grok-2's rope, attention.temperature_length, attention.output_scale,
embedding_scale and logit_scale; names: gguf-py's constants and tensor_mapping.py; shapes and what the loader
requires: llama.cpp's src/models/grok.cpp): q/k/v apart, attn_output_norm after the attention (Grok's rms_norm_1,
Grok-2's post_attn_norm), the experts beside a dense block of their own (Grok-2's) or alone (Grok-1's), and after
them post_ffw_norm (Grok-2's post_moe_norm) or layer_output_norm (Grok-1's rms_norm_3).

grok2=False writes what an older Grok-1 file holds: a SentencePiece vocabulary, no dense block, no expert width,
rope and none of the multipliers' keys (llama.cpp's loader then uses Grok-1's own: embeddings times 78.38, the
logits times 0.577, the scores times 0.0884 inside a soft-cap of 30). Deterministic: the same arguments give the
same bytes.

    from grok_arch import write_grok; write_grok(path)"""
import numpy as np
import gguf

from gguf_copy import write_out
from moe_arch import add_bpe_vocab, add_spm_vocab


def write_grok(path, grok2=True, n_embd=128, n_layer=4, n_head=4, n_kv=2, hd=32, n_exp=8, n_used=2, n_ff=160,
               n_ffe=64, n_vocab=1024, seed=7301):
    rs = np.random.RandomState(seed)
    E, H, KV, X = n_embd, n_head, n_kv, n_exp
    Fe = n_ffe if grok2 else n_ff  # Grok-1's experts are feed_forward_length wide (no key of their own)

    def rnd(shape, std, mean=0.0):
        return (rs.standard_normal(shape).astype(np.float32) * std + mean).astype(np.float32)

    w = gguf.GGUFWriter(path, 'grok')
    w.add_name(f'synthetic grok{"-2" if grok2 else "-1"} (random weights)')
    w.add_context_length(4096 if grok2 else 8192)
    w.add_embedding_length(E)
    w.add_block_count(n_layer)
    w.add_feed_forward_length(n_ff)
    w.add_head_count(H)
    w.add_head_count_kv(KV)
    w.add_rope_freq_base(208533496.0 if grok2 else 10000.0)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_expert_count(X)
    w.add_expert_used_count(n_used)
    w.add_file_type(0)
    if grok2:
        w.add_attn_logit_softcapping(30.0)
        w.add_router_logit_softcapping(30.0)
        w.add_final_logit_softcapping(50.0)
        w.add_expert_feed_forward_length(Fe)
        # Grok-2's "original" rope, which the converter writes as YaRN (here from 64 positions, so that the prompts
        # reach the ramp)
        w.add_rope_scaling_type(gguf.RopeScalingType.YARN)
        w.add_rope_scaling_factor(4.0)
        w.add_rope_scaling_orig_ctx_len(64)
        w.add_rope_scaling_yarn_ext_factor(1.0)
        w.add_rope_scaling_yarn_attn_factor(1.0)
        w.add_rope_scaling_yarn_beta_fast(8.0)
        w.add_rope_scaling_yarn_beta_slow(1.0)
        w.add_attn_temperature_length(1024)
        w.add_attn_output_scale(hd ** -0.5)
        w.add_embedding_scale(12.0)
        w.add_logit_scale(0.5)
        add_bpe_vocab(w, 'qwen2', ['<|endoftext|>', '<|separator|>'], n_vocab, '<|endoftext|>', False)
    else:
        add_spm_vocab(w, n_vocab)

    t = w.add_tensor
    # Grok-1's embeddings are scaled by 78.38: rows of about 1/78 of an RMS of 1
    t('token_embd.weight', rnd((n_vocab, E), 0.6 if grok2 else 0.013))
    for i in range(n_layer):
        b = f'blk.{i}.'
        t(b + 'attn_norm.weight', rnd((E,), 0.1, 1.0))
        t(b + 'attn_q.weight', rnd((H * hd, E), 0.15))
        t(b + 'attn_k.weight', rnd((KV * hd, E), 0.15))
        t(b + 'attn_v.weight', rnd((KV * hd, E), 0.08))
        t(b + 'attn_output.weight', rnd((E, H * hd), 0.08))
        t(b + 'attn_output_norm.weight', rnd((E,), 0.1, 1.0))
        t(b + 'ffn_norm.weight', rnd((E,), 0.1, 1.0))
        t(b + 'ffn_gate_inp.weight', rnd((X, E), 0.3))
        t(b + 'ffn_gate_exps.weight', rnd((X, Fe, E), 0.1))
        t(b + 'ffn_up_exps.weight', rnd((X, Fe, E), 0.08))
        t(b + 'ffn_down_exps.weight', rnd((X, E, Fe), 0.08))
        if grok2:
            t(b + 'ffn_gate.weight', rnd((n_ff, E), 0.1))
            t(b + 'ffn_up.weight', rnd((n_ff, E), 0.08))
            t(b + 'ffn_down.weight', rnd((E, n_ff), 0.08))
            t(b + 'post_ffw_norm.weight', rnd((E,), 0.1, 1.0))
        else:
            t(b + 'layer_output_norm.weight', rnd((E,), 0.1, 1.0))
    t('output_norm.weight', rnd((E,), 0.1, 1.0))
    t('output.weight', rnd((n_vocab, E), 0.08))
    write_out(w)


if __name__ == '__main__':
    import sys
    write_grok(sys.argv[1], grok2=len(sys.argv) < 3 or sys.argv[2] != 'grok1')
