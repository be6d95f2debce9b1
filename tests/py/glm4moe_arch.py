"""Writes a small random-weight glm4moe file (GLM-4.5, GLM-4.5-Air, GLM-4.6) as convert_hf_to_gguf.py's Glm4MoeModel
lays one out, which ../shared/tools/synth_arch.py has no preset for: leading dense layers, routed experts chosen by
sigmoid scores plus a per-expert selection bias (exp_probs_b: DeepSeek-V3's e_score_correction_bias), their weights
renormalised and scaled (expert_weights_scale), an ungated shared expert, q/k/v biases, a rotary half of each head
(partial_rotary_factor 0.5), and the trailing multi-token-prediction block (nextn_predict_layers) that llama.cpp
loads but does not run in generation. Shapes and names: llama.cpp's src/models/glm4-moe.cpp and gguf-py's constants.
Deterministic: the same arguments give the same bytes.

    from glm4moe_arch import write_glm4moe; write_glm4moe(path, **shape)"""
import numpy as np
import gguf
from synth_model import train_bpe


def write_glm4moe(path, n_embd=256, n_layer=4, n_nextn=1, n_dense=1, n_head=4, n_kv=2, hd=64, n_rot=32, n_ff=384,
                  n_exp=8, n_used=3, n_ffe=96, n_shared=1, scale=2.5, n_vocab=1024, seed=4101):
    rs = np.random.RandomState(seed)
    E, H, KV, X, Fe = n_embd, n_head, n_kv, n_exp, n_ffe
    L = n_layer + n_nextn  # block_count counts the prediction blocks too

    def rnd(shape, std, mean=0.0):
        return (rs.standard_normal(shape).astype(np.float32) * std + mean).astype(np.float32)

    arch = 'glm4moe'
    w = gguf.GGUFWriter(path, arch)
    w.add_name('synthetic glm4moe (random weights)')
    w.add_embedding_length(E)
    w.add_block_count(L)
    w.add_feed_forward_length(n_ff)
    w.add_head_count(H)
    w.add_head_count_kv(KV)
    w.add_key_length(hd)
    w.add_value_length(hd)
    w.add_context_length(4096)
    w.add_file_type(0)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_rope_freq_base(1000000.0)
    w.add_rope_dimension_count(n_rot)
    w.add_expert_count(X)
    w.add_expert_used_count(n_used)
    w.add_expert_feed_forward_length(Fe)
    w.add_uint32(f'{arch}.expert_shared_count', n_shared)
    w.add_uint32(f'{arch}.leading_dense_block_count', n_dense)
    w.add_float32(f'{arch}.expert_weights_scale', scale)
    w.add_bool(f'{arch}.expert_weights_norm', True)
    w.add_uint32(f'{arch}.expert_gating_func', 2)  # sigmoid
    w.add_uint32(f'{arch}.nextn_predict_layers', n_nextn)

    vocab, merges = train_bpe(700)
    specials = ['<|endoftext|>', '[gMASK]', '<sop>', '<|user|>', '<|assistant|>']
    toks, types = vocab + specials, [1] * len(vocab) + [3] * len(specials)
    while len(toks) < n_vocab:
        toks.append(f'[PAD{len(toks)}]')
        types.append(5)
    w.add_tokenizer_model('gpt2')
    w.add_tokenizer_pre('glm4')
    w.add_token_list(toks)
    w.add_token_types(types)
    w.add_token_merges(merges)
    w.add_bos_token_id(toks.index('[gMASK]'))
    w.add_eos_token_id(toks.index('<|endoftext|>'))
    w.add_add_bos_token(False)

    t = w.add_tensor
    t('token_embd.weight', rnd((n_vocab, E), 0.05))
    for i in range(L):
        b = f'blk.{i}.'
        t(b + 'attn_norm.weight', rnd((E,), 0.1, 1.0))
        t(b + 'attn_q.weight', rnd((H * hd, E), 0.08))
        t(b + 'attn_k.weight', rnd((KV * hd, E), 0.08))
        t(b + 'attn_v.weight', rnd((KV * hd, E), 0.08))
        t(b + 'attn_q.bias', rnd((H * hd,), 0.3))
        t(b + 'attn_k.bias', rnd((KV * hd,), 1.0))
        t(b + 'attn_v.bias', rnd((KV * hd,), 0.1))
        t(b + 'attn_output.weight', rnd((E, H * hd), 0.08))
        t(b + 'post_attention_norm.weight', rnd((E,), 0.1, 1.0))
        if i < n_dense:
            t(b + 'ffn_gate.weight', rnd((n_ff, E), 0.08))
            t(b + 'ffn_up.weight', rnd((n_ff, E), 0.08))
            t(b + 'ffn_down.weight', rnd((E, n_ff), 0.06))
        else:
            t(b + 'ffn_gate_inp.weight', rnd((X, E), 0.3))
            # a selection bias as large as the sigmoid scores' spread, so that it changes which experts are chosen
            t(b + 'exp_probs_b.bias', rnd((X,), 0.1))
            t(b + 'ffn_gate_exps.weight', rnd((X, Fe, E), 0.08))
            t(b + 'ffn_up_exps.weight', rnd((X, Fe, E), 0.08))
            t(b + 'ffn_down_exps.weight', rnd((X, E, Fe), 0.06))
            Fs = Fe * n_shared
            t(b + 'ffn_gate_shexp.weight', rnd((Fs, E), 0.08))
            t(b + 'ffn_up_shexp.weight', rnd((Fs, E), 0.08))
            t(b + 'ffn_down_shexp.weight', rnd((E, Fs), 0.06))
        if i >= n_layer:
            t(b + 'nextn.eh_proj.weight', rnd((E, 2 * E), 0.08))
            t(b + 'nextn.enorm.weight', rnd((E,), 0.1, 1.0))
            t(b + 'nextn.hnorm.weight', rnd((E,), 0.1, 1.0))
            t(b + 'nextn.shared_head_norm.weight', rnd((E,), 0.1, 1.0))
    t('output_norm.weight', rnd((E,), 0.1, 1.0))
    t('output.weight', rnd((n_vocab, E), 0.08))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
