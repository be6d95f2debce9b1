"""Writes a trace in the goldens' schema (docs/TRACE.md) from ../shared/tools/reference_forward.py's numpy
forward pass: another engine, independent of ours, whose per-layer residuals --against holds ours to.

    reference_trace.py MODEL.gguf OUT.json TOKEN... [--rope-base B] [--convention C] [--stats S,...]

--rope-base overrides the model's rotary base: a bug edited into their engine (as a wrong rope.freq_base read
from the file would be), which --against must place at layer 0 from position 1 on.

--convention numbers the entries as other dumps do, R[k] being the residual entering layer k (R[0] the
embeddings, R[n] what enters the final norm) and N the final norm's output:
  ours              layer k = R[k + 1], "result_norm" = N (the goldens' schema; the default)
  hf                layers 0..n = R[0], ..., R[n - 1], N: transformers' hidden_states as they come
  hf-tail           layers 0..n-1 = R[1], ..., R[n - 1], N: hidden_states[1:]
  embeddings-first  layers 0..n-1 = R[0], ..., R[n - 1]: hidden_states[:-1], the embeddings counted as layer 0
  one-based         layers 1..n = R[1], ..., R[n]
--stats keeps only these statistics (rms, mean, min, max).
--full F.npz also writes the residuals whole, as transformers' hidden_states: one (n_layer + 1, 1, n, n_embd)
float32 array, R[0], ..., R[n - 1], N.
--bug NAME edits a bug into their engine (BUGS below: the layer and prompt position where it first shows, for
stories260K's "Once upon a time", tokens 1 403 407 261 378).

The residual after layer il is what enters layer il+1's attn_norm (and the output norm after the last layer);
result_norm is the output norm's result. They are recorded by wrapping the reference's rmsnorm, which its
forward pass calls through the module's global name."""
import json
import os
import sys

import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, '..', '..', '..', 'shared', 'tools'))
import reference_forward as ref  # noqa: E402


# name: (what it does, the first layer and position it changes)
BUGS = {
    'channel-swap': ('residual channels 3 and 7 swapped after layer 2', 2, 0),
    'bad-block': ("one 32-weight block of layer 3's ffn_down read with twice its scale", 3, 0),
    'no-causal-mask': ('attention sees later positions too', 0, 0),
    'embedding-row': ("token 403's embedding row scaled by 1.5 (position 1)", 0, 1),
    'q-scale': ("layer 2's attn_q scaled by 1.5 (one key at position 0: no change there)", 2, 1),
    'gate-up-swapped': ("layer 1's ffn_gate and ffn_up swapped", 1, 0),
    'norm-scaled': ("layer 4's attn_norm scaled by 2", 4, 0),
    'v-scaled': ("layer 2's attn_v scaled by 1.25", 2, 0),
    'output-norm': ('the final norm scaled by 1.01', 5, 0),
    'eps': ('RMSNorm epsilon 1e-1 instead of the model\'s', 0, 0),
}


def edit_weights(bug, hp, W):
    if bug == 'bad-block':
        W['blk.3.ffn_down.weight'][5, 32:64] *= 2.0
    elif bug == 'embedding-row':
        W['token_embd.weight'][403] *= 1.5
    elif bug == 'q-scale':
        W['blk.2.attn_q.weight'] = W['blk.2.attn_q.weight'] * 1.5
    elif bug == 'gate-up-swapped':
        W['blk.1.ffn_gate.weight'], W['blk.1.ffn_up.weight'] = W['blk.1.ffn_up.weight'], W['blk.1.ffn_gate.weight']
    elif bug == 'norm-scaled':
        W['blk.4.attn_norm.weight'] = W['blk.4.attn_norm.weight'] * 2.0
    elif bug == 'v-scaled':
        W['blk.2.attn_v.weight'] = W['blk.2.attn_v.weight'] * 1.25
    elif bug == 'output-norm':
        W['output_norm.weight'] = W['output_norm.weight'] * 1.01
    elif bug == 'eps':
        hp['eps'] = 1e-1
    elif bug == 'no-causal-mask':
        triu = np.triu
        ref.np.triu = lambda m, k=0: np.zeros_like(triu(m, k))  # the mask reference_forward builds is all zeros


def take(args, flag, default=None):
    """The value after flag in args (both removed), or default."""
    if flag not in args:
        return default
    i = args.index(flag)
    value = args[i + 1]
    del args[i:i + 2]
    return value


def main():
    args = [a for a in sys.argv[1:]]
    base = take(args, '--rope-base')
    base = float(base) if base is not None else None
    convention = take(args, '--convention', 'ours')
    keep = take(args, '--stats', 'rms,mean,min,max').split(',')
    full, bug = take(args, '--full'), take(args, '--bug')
    if bug is not None and bug not in BUGS:
        sys.exit('unknown bug ' + bug)
    model, out, tokens = args[0], args[1], [int(t) for t in args[2:]]
    hp, W = ref.load(model)
    if base is not None:
        hp['base'] = base
    if bug:
        W = {k: np.array(v) for k, v in W.items()}  # writable copies
        edit_weights(bug, hp, W)
    layer_of = {id(W['blk.%d.attn_norm.weight' % il]): il for il in range(hp['n_layer'])}
    final = id(W['output_norm.weight'])
    residual_in, result = {}, {}
    plain = ref.rmsnorm

    def recording(x, w, eps):
        if bug == 'channel-swap' and id(w) in layer_of and layer_of[id(w)] == 3:
            x[:, [3, 7]] = x[:, [7, 3]]  # in place: the caller's residual, so layer 2's output and all after
        y = plain(x, w, eps)
        if id(w) in layer_of:
            residual_in[layer_of[id(w)]] = np.array(x, dtype=np.float64)
        elif id(w) == final:
            residual_in[hp['n_layer']] = np.array(x, dtype=np.float64)
            result['norm'] = np.array(y, dtype=np.float64)
        return y

    ref.rmsnorm = recording
    ref.forward(hp, W, np.array(tokens))

    def stats(x):
        all_ = {'rms': np.sqrt((x * x).mean(axis=1)).tolist(), 'mean': x.mean(axis=1).tolist(),
                'min': x.min(axis=1).tolist(), 'max': x.max(axis=1).tolist()}
        return {k: all_[k] for k in keep}

    n = hp['n_layer']
    R, N = [residual_in[k] for k in range(n + 1)], result['norm']
    if convention == 'ours':
        trace = [dict(layer=il, **stats(R[il + 1])) for il in range(n)]
        trace.append(dict(layer='result_norm', **stats(N)))
    elif convention == 'hf':
        trace = [dict(layer=k, **stats(x)) for k, x in enumerate(R[:n] + [N])]
    elif convention == 'hf-tail':
        trace = [dict(layer=k, **stats(x)) for k, x in enumerate(R[1:n] + [N])]
    elif convention == 'embeddings-first':
        trace = [dict(layer=k, **stats(x)) for k, x in enumerate(R[:n])]
    elif convention == 'one-based':
        trace = [dict(layer=k + 1, **stats(x)) for k, x in enumerate(R[1:])]
    else:
        sys.exit('unknown convention ' + convention)
    if full:
        stack = np.stack([R[k] for k in range(n)] + [N]).astype(np.float32)[:, None]
        np.savez(full, hidden_states=stack)
    json.dump({'prompt_tokens': tokens, 'n_layer': hp['n_layer'], 'prompt_trace': trace}, open(out, 'w'))


if __name__ == '__main__':
    main()
