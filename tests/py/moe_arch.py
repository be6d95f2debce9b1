"""Writes small random-weight files of mixture-of-experts families that ../shared/tools/synth_arch.py has no preset
for, each as its convert_hf_to_gguf.py class lays it out (names: gguf-py's constants; shapes and which tensors and
keys each loader reads: llama.cpp's src/models/<arch>.cpp):
  glm4moe     GLM-4.5 / 4.5-Air / 4.6: leading dense layers, experts chosen by sigmoid scores plus a per-expert
              selection bias (exp_probs_b), their weights renormalised and scaled (expert_weights_scale), an
              ungated shared expert, q/k/v biases, a rotary half of each head, post_attention_norm before the
              feed-forward block, and the trailing multi-token prediction block that generation does not run;
  minimax-m2  MiniMax-M2: sigmoid scores plus a selection bias, always renormalised, q and k normed over their whole
              rows, a rotary half of each head;
  olmoe       OLMoE: softmax routing, not renormalised, q and k normed over their whole rows;
  ernie4_5-moe  ERNIE-4.5-21B-A3B: a dense first layer, softmax routing plus a selection bias, always renormalised,
              a shared expert of its own width (expert_shared_feed_forward_length), NORM rotary, a SentencePiece
              vocabulary;
  bailingmoe2 Ling / Ring 2.0: q, k and v in one attn_qkv, per-head q/k norms, a dense first layer, sigmoid routing
              plus a selection bias, renormalised and scaled, shared experts of their own width, a rotary half of
              each head, and a trailing multi-token prediction block;
  bailingmoe  Ling 1.x (Ling-lite, -plus, -Coder-lite): q, k and v apart (the converter splits query_key_value),
              experts on every layer chosen by softmax, renormalised where norm_topk_prob is set, scaled by the 1.0
              the converter writes, shared experts an expert wide each, NORM rotary of whole heads;
  deepseek    DeepSeek-MoE 16B: dense first layers, experts chosen by softmax, not renormalised, scaled by the 1.0
              the converter writes, shared experts an expert wide each, NORM rotary of whole heads;
  dots1       dots.llm1: per-head q/k norms, a dense first layer, sigmoid routing plus a selection bias, renormalised
              and scaled, a shared expert;
  granitemoe  Granite 3.x MoE: granite's embedding, residual, attention and logit multipliers, softmax routing,
              renormalised, experts feed_forward_length wide, a shared expert of expert_shared_feed_forward_length
              (as granitemoeshared files add), NORM rotary;
  hunyuan-moe Hunyuan-A13B: per-head q/k norms (after the rotation, in its graph), softmax routing, renormalised,
              experts and an ungated shared expert as wide as feed_forward_length (its converter writes the experts'
              width and the shared one's, and the loader sizes the experts by feed_forward_length);
  hy_v3       Tencent Hy3: per-head q/k norms, a dense first layer (no key says so: it has no router), sigmoid
              routing plus a selection bias (named without .bias, as its loader asks), renormalised and scaled, one ungated shared expert of its own width, NEOX
              rotary of whole heads, and a trailing multi-token prediction block.
Deterministic: the same arguments give the same bytes.

    from moe_arch import write_moe; write_moe(path, 'glm4moe', **shape)"""
import numpy as np
import gguf

from gguf_copy import write_out
from synth_model import spm_vocab, train_bpe

# per family: its tokenizer.ggml.pre, q/k/v biases, q/k norms ('head': per head, 'full': whole rows, None), the
# feed-forward block's input norm's name, a selection bias, a shared expert, a rotary part of each head, and the
# routing keys its converter writes
FAMILIES = {
    'glm4moe': dict(pre='glm4', qkv_bias=True, qk_norm=None, ffn_norm='post_attention_norm', select_bias=True,
                    shared=True, partial_rope=True, keys=True),
    'minimax-m2': dict(pre='minimax-m2', qkv_bias=False, qk_norm='full', ffn_norm='ffn_norm', select_bias=True,
                       shared=False, partial_rope=True, keys=False),
    'olmoe': dict(pre='olmo', qkv_bias=False, qk_norm='full', ffn_norm='ffn_norm', select_bias=False, shared=False,
                  partial_rope=False, keys=False),
    'ernie4_5-moe': dict(pre=None, qkv_bias=False, qk_norm=None, ffn_norm='ffn_norm', select_bias=True, shared=True,
                         partial_rope=False, keys=False),
    'bailingmoe2': dict(pre='bailingmoe2', qkv_bias=False, qk_norm='head', ffn_norm='ffn_norm', select_bias=True,
                        shared=True, partial_rope=True, keys=True, fused_qkv=True),
    'bailingmoe': dict(pre='bailingmoe', qkv_bias=False, qk_norm=None, ffn_norm='ffn_norm', select_bias=False,
                       shared=True, partial_rope=False, keys=True, nextn=False, rope_dim=True),
    'deepseek': dict(pre='deepseek-llm', qkv_bias=False, qk_norm=None, ffn_norm='ffn_norm', select_bias=False,
                     shared=True, partial_rope=False, keys=True, nextn=False, rope_dim=True, norm_key=False),
    'dots1': dict(pre='qwen2', qkv_bias=False, qk_norm='head', ffn_norm='ffn_norm', select_bias=True, shared=True,
                  partial_rope=False, keys=True, nextn=False),
    # K-EXAONE (ExaoneMoEModel, over Exaone4Model's keys): the sliding window on the layers sliding_window_pattern
    # marks, one shared expert as wide as the converter's moe_intermediate_size x num_shared_experts
    'exaone-moe': dict(pre='exaone4', qkv_bias=False, qk_norm='head', ffn_norm='ffn_norm', select_bias=True,
                       shared=True, partial_rope=False, keys=True, nextn=False, window=True, shared_width=True),
    # Mellum 2 (MellumModel: qwen3moe's layers): the sliding window, where the file has one, on three layers in four
    'mellum': dict(pre='mellum2', qkv_bias=False, qk_norm='head', ffn_norm='ffn_norm', select_bias=False, shared=False,
                   partial_rope=False, keys=False, window=True),
    'granitemoe': dict(pre='refact', qkv_bias=False, qk_norm=None, ffn_norm='ffn_norm', select_bias=False,
                       shared=True, partial_rope=False, keys=False),
    'hunyuan-moe': dict(pre='hunyuan', qkv_bias=False, qk_norm='head', ffn_norm='ffn_norm', select_bias=False,
                        shared=True, partial_rope=False, keys=False),
    # Tencent Hy3 (HYV3Model): no count of dense layers (a layer without a router is dense) nor of shared experts
    # (one, num_shared_experts experts wide), the gating function always written
    'hy_v3': dict(pre='hy_v4', qkv_bias=False, qk_norm='head', ffn_norm='ffn_norm', select_bias=True, shared=True,
                  partial_rope=False, keys=True, shared_width=True, count_keys=False),
}


def add_spm_vocab(w, n_vocab):
    """synth_model.py's SentencePiece-style vocabulary, BOS 1, EOS 2, UNK 0."""
    toks, scores, types = spm_vocab(n_vocab)
    w.add_tokenizer_model('llama')
    w.add_token_list(toks)
    w.add_token_scores(scores)
    w.add_token_types(types)
    w.add_bos_token_id(1)
    w.add_eos_token_id(2)
    w.add_unk_token_id(0)


def add_bpe_vocab(w, pre, specials, n_vocab, bos, add_bos):
    """A byte-level BPE vocabulary trained on synth_model's text, the specials after it, padded to n_vocab; BOS the
    special named bos, EOS <|endoftext|>."""
    vocab, merges = train_bpe(700)
    toks, types = vocab + specials, [1] * len(vocab) + [3] * len(specials)
    while len(toks) < n_vocab:
        toks.append(f'[PAD{len(toks)}]')
        types.append(5)
    w.add_tokenizer_model('gpt2')
    w.add_tokenizer_pre(pre)
    w.add_token_list(toks)
    w.add_token_types(types)
    w.add_token_merges(merges)
    w.add_bos_token_id(toks.index(bos))
    w.add_eos_token_id(toks.index('<|endoftext|>'))
    w.add_add_bos_token(add_bos)


def add_routed_experts(t, b, rnd, E, X, Fe, Fs, std=0.1, down_std=0.08):
    """Layer b's router, its selection bias exp_probs_b, X experts Fe wide and an ungated shared expert Fs wide (none
    where Fs is 0), in that order (AFMoE's, Step-3.5's and Laguna's writers)."""
    t(b + 'ffn_gate_inp.weight', rnd((X, E), 0.3))
    # as large as the sigmoid scores' spread, so that it changes which experts are chosen
    t(b + 'exp_probs_b.bias', rnd((X,), 0.1))
    t(b + 'ffn_gate_exps.weight', rnd((X, Fe, E), std))
    t(b + 'ffn_up_exps.weight', rnd((X, Fe, E), std))
    t(b + 'ffn_down_exps.weight', rnd((X, E, Fe), down_std))
    if Fs:
        t(b + 'ffn_gate_shexp.weight', rnd((Fs, E), std))
        t(b + 'ffn_up_shexp.weight', rnd((Fs, E), std))
        t(b + 'ffn_down_shexp.weight', rnd((E, Fs), down_std))


def write_moe(path, arch, n_embd=256, n_layer=4, n_nextn=1, n_dense=1, n_head=4, n_kv=2, hd=64, n_ff=384, n_exp=8,
              n_used=3, n_ffe=96, n_shared=1, scale=2.5, norm=True, tied=False, n_vocab=1024, window=3,
              swa_layers=None, gating=2, seed=4101):
    fam = FAMILIES[arch]
    rs = np.random.RandomState(seed)
    E, H, KV, X, Fe = n_embd, n_head, n_kv, n_exp, n_ffe
    ernie, granite, hunyuan = arch == 'ernie4_5-moe', arch == 'granitemoe', arch == 'hunyuan-moe'
    if not fam['keys']:  # prediction blocks and scaled weights are glm4moe's; a dense first layer ERNIE's too
        n_nextn, n_dense, n_shared = 0, (n_dense if ernie else 0), (n_shared if fam['shared'] else 0)
    if not fam.get('nextn', True):
        n_nextn = 0
    L = n_layer + n_nextn  # block_count counts the prediction blocks too

    def rnd(shape, std, mean=0.0):
        return (rs.standard_normal(shape).astype(np.float32) * std + mean).astype(np.float32)

    w = gguf.GGUFWriter(path, arch)
    w.add_name(f'synthetic {arch} (random weights)')
    w.add_embedding_length(E)
    w.add_block_count(L)
    # MiniMax-M2's and OLMoE's experts are feed_forward_length wide (their loaders read no expert width)
    w.add_feed_forward_length(n_ff if fam['keys'] or ernie else Fe)  # (Hunyuan's: its experts' width)
    w.add_head_count(H)
    w.add_head_count_kv(KV)
    w.add_key_length(hd)
    w.add_value_length(hd)
    w.add_context_length(4096)
    w.add_file_type(0)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_rope_freq_base(1000000.0)
    if fam['partial_rope']:
        w.add_rope_dimension_count(hd // 2)
    elif fam.get('rope_dim'):  # BailingMoeModel writes the whole head's
        w.add_rope_dimension_count(hd)
    w.add_expert_count(X)
    w.add_expert_used_count(n_used)
    if arch not in ('olmoe', 'granitemoe'):
        w.add_expert_feed_forward_length(Fe)
    if granite:  # its multipliers, and the shared expert's width
        w.add_embedding_scale(12.0)
        w.add_residual_scale(0.22)
        w.add_attention_scale(0.015625)
        w.add_logit_scale(8.0)
        w.add_uint32(f'{arch}.expert_shared_feed_forward_length', Fe * n_shared)
    if ernie:  # its loader's keys: the shared expert's width, the step between layers of experts, dense layers first
        w.add_uint32(f'{arch}.expert_shared_feed_forward_length', Fe * n_shared)
        w.add_uint32(f'{arch}.interleave_moe_layer_step', 1)
        w.add_uint32(f'{arch}.leading_dense_block_count', n_dense)
    if hunyuan:  # HunYuanMoEModel.set_gguf_parameters: the shared expert's width, one shared expert
        w.add_uint32(f'{arch}.expert_shared_feed_forward_length', Fe * n_shared)
        w.add_uint32(f'{arch}.expert_shared_count', n_shared)
    ling = arch == 'bailingmoe2'
    if ling:  # one shared expert's width, its own (here 1.5 times an expert's)
        w.add_uint32(f'{arch}.expert_shared_feed_forward_length', Fe * 3 // 2)
    if fam.get('window') and window:  # the window, and which layers have it (three in four unless swa_layers says)
        w.add_uint32(f'{arch}.attention.sliding_window', window)
        pattern = swa_layers or [(i + 1) % 4 != 0 for i in range(n_layer)]
        w.add_array(f'{arch}.attention.sliding_window_pattern', [bool(x) for x in pattern])
    if fam.get('shared_width'):  # K-EXAONE's: num_shared_experts experts' width, as one
        w.add_uint32(f'{arch}.expert_shared_feed_forward_length', Fe * n_shared)
    if fam['keys'] and fam.get('count_keys', True):
        w.add_uint32(f'{arch}.expert_shared_count', n_shared)
        w.add_uint32(f'{arch}.leading_dense_block_count', n_dense)
    if fam['keys']:
        w.add_float32(f'{arch}.expert_weights_scale', scale)
        if fam.get('norm_key', True):
            w.add_bool(f'{arch}.expert_weights_norm', norm)
    if fam['select_bias'] and not ernie and gating is not None:
        w.add_uint32(f'{arch}.expert_gating_func', gating)  # 2: sigmoid
    if fam['keys'] and fam.get('nextn', True):
        w.add_uint32(f'{arch}.nextn_predict_layers', n_nextn)

    if fam['pre'] is None:  # SentencePiece (ERNIE's tokenizer.model)
        add_spm_vocab(w, n_vocab)
    else:
        add_bpe_vocab(w, fam['pre'], ['<|endoftext|>', '[gMASK]', '<sop>', '<|user|>', '<|assistant|>'], n_vocab,
                      '[gMASK]' if arch == 'glm4moe' else '<|endoftext|>', False)

    t = w.add_tensor
    t('token_embd.weight', rnd((n_vocab, E), 0.5 if fam['pre'] is None else 0.05))
    for i in range(L):
        b = f'blk.{i}.'
        t(b + 'attn_norm.weight', rnd((E,), 0.1, 1.0))
        if fam.get('fused_qkv'):
            t(b + 'attn_qkv.weight', rnd(((H + 2 * KV) * hd, E), 0.08))
        else:
            t(b + 'attn_q.weight', rnd((H * hd, E), 0.08))
            t(b + 'attn_k.weight', rnd((KV * hd, E), 0.08))
            t(b + 'attn_v.weight', rnd((KV * hd, E), 0.08))
        if fam['qkv_bias']:
            t(b + 'attn_q.bias', rnd((H * hd,), 0.3))
            t(b + 'attn_k.bias', rnd((KV * hd,), 1.0))
            t(b + 'attn_v.bias', rnd((KV * hd,), 0.1))
        if fam['qk_norm'] == 'full':
            t(b + 'attn_q_norm.weight', rnd((H * hd,), 0.2, 1.0))
            t(b + 'attn_k_norm.weight', rnd((KV * hd,), 0.2, 1.0))
        elif fam['qk_norm'] == 'head':
            t(b + 'attn_q_norm.weight', rnd((hd,), 0.2, 1.0))
            t(b + 'attn_k_norm.weight', rnd((hd,), 0.2, 1.0))
        t(b + 'attn_output.weight', rnd((E, H * hd), 0.08))
        t(b + fam['ffn_norm'] + '.weight', rnd((E,), 0.1, 1.0))
        if i < n_dense:
            t(b + 'ffn_gate.weight', rnd((n_ff, E), 0.08))
            t(b + 'ffn_up.weight', rnd((n_ff, E), 0.08))
            t(b + 'ffn_down.weight', rnd((E, n_ff), 0.06))
        else:
            t(b + 'ffn_gate_inp.weight', rnd((X, E), 0.3))
            if fam['select_bias']:
                # as large as the sigmoid scores' spread, so that it changes which experts are chosen
                t(b + ('exp_probs_b' if arch == 'hy_v3' else 'exp_probs_b.bias'), rnd((X,), 0.1))
            t(b + 'ffn_gate_exps.weight', rnd((X, Fe, E), 0.08))
            t(b + 'ffn_up_exps.weight', rnd((X, Fe, E), 0.08))
            t(b + 'ffn_down_exps.weight', rnd((X, E, Fe), 0.06))
            if fam['shared'] and n_shared:
                Fs = (Fe * 3 // 2 if ling else Fe) * n_shared
                t(b + 'ffn_gate_shexp.weight', rnd((Fs, E), 0.08))
                t(b + 'ffn_up_shexp.weight', rnd((Fs, E), 0.08))
                t(b + 'ffn_down_shexp.weight', rnd((E, Fs), 0.06))
        if i >= n_layer:
            t(b + 'nextn.eh_proj.weight', rnd((E, 2 * E), 0.08))
            t(b + 'nextn.enorm.weight', rnd((E,), 0.1, 1.0))
            t(b + 'nextn.hnorm.weight', rnd((E,), 0.1, 1.0))
            t(b + 'nextn.shared_head_norm.weight', rnd((E,), 0.1, 1.0))
            if ling:
                t(b + 'layer_output_norm.weight', rnd((E,), 0.1, 1.0))
    t('output_norm.weight', rnd((E,), 0.1, 1.0))
    if not tied:  # (tied: the loader takes the token embedding)
        t('output.weight', rnd((n_vocab, E), 0.08))
    write_out(w)
