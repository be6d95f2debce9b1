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
--ops F.npz writes every op whole under llama.cpp's cb_eval names (as llama-eval-callback prints them), float32
(n, width): inp_embd (the lookup, before gemma's scale), and per layer N attn_norm-N, Qcur-N and Kcur-N (after
rotary), Vcur-N, kqv_out-N (the attention before its output projection), attn_out-N (after it), ffn_norm-N, ffn_out-N
(after ffn_down), l_out-N; then result_norm.
--bug NAME edits a bug into their engine (BUGS below: the layer and prompt position where it first shows, for
stories260K's "Once upon a time", tokens 1 403 407 261 378).

The residual after layer il is what enters layer il+1's attn_norm (and the output norm after the last layer);
result_norm is the output norm's result. They are recorded by wrapping the reference's rmsnorm and rope, which its
forward pass calls through the module's global names, and the weights it multiplies by (x @ W.T) whose inputs or
outputs are ops: attn_v, attn_output, ffn_down."""
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


class _Product:
    """W.T for a recorded weight: x @ W.T computed as reference_forward computes it, then shown to on(x, y)."""
    __array_ufunc__ = None  # numpy leaves x @ this to __rmatmul__

    def __init__(self, w, on):
        self.w, self.on = w, on

    def __rmatmul__(self, x):
        y = x @ self.w.T
        self.on(x, y)
        return y


class _Recorded:
    """A weight whose products are recorded: reference_forward only ever multiplies by its .T."""
    def __init__(self, w, on):
        self.w, self.on = w, on

    @property
    def T(self):
        return _Product(self.w, self.on)


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
    full, ops_path, bug = take(args, '--full'), take(args, '--ops'), take(args, '--bug')
    if bug is not None and bug not in BUGS:
        sys.exit('unknown bug ' + bug)
    model, out, tokens = args[0], args[1], [int(t) for t in args[2:]]
    hp, W = ref.load(model)
    if base is not None:
        hp['base'] = base
    if bug:
        W = {k: np.array(v) for k, v in W.items()}  # writable copies
        edit_weights(bug, hp, W)
    n = hp['n_layer']
    layer_of = {id(W['blk.%d.attn_norm.weight' % il]): il for il in range(n)}
    ffn_norm_of = {id(W['blk.%d.ffn_norm.weight' % il]): il for il in range(n)}
    final = id(W['output_norm.weight'])
    residual_in, result, ops = {}, {}, {'inp_embd': W['token_embd.weight'][tokens]}
    at = {'layer': 0, 'ropes': 0}  # the layer running, and how many rope calls it made (q, then k)
    plain_norm, plain_rope = ref.rmsnorm, ref.rope

    def recording(x, w, eps):
        if bug == 'channel-swap' and id(w) in layer_of and layer_of[id(w)] == 3:
            x[:, [3, 7]] = x[:, [7, 3]]  # in place: the caller's residual, so layer 2's output and all after
        y = plain_norm(x, w, eps)
        if id(w) in layer_of:
            il = at['layer'] = layer_of[id(w)]
            at['ropes'] = 0
            residual_in[il] = np.array(x, dtype=np.float64)
            ops['attn_norm-%d' % il] = y
        elif id(w) in ffn_norm_of:
            ops['ffn_norm-%d' % ffn_norm_of[id(w)]] = y
        elif id(w) == final:
            residual_in[n] = np.array(x, dtype=np.float64)
            result['norm'] = np.array(y, dtype=np.float64)
        return y

    def recording_rope(x, pos, base, neox):
        y = plain_rope(x, pos, base, neox)
        ops['%s-%d' % ('Kcur' if at['ropes'] else 'Qcur', at['layer'])] = y.reshape(len(y), -1)
        at['ropes'] += 1
        return y

    def product(name, il):
        """A weight of layer il whose product's input or output is an op."""
        key = 'blk.%d.%s.weight' % (il, name)

        def on(x, y):
            if name == 'attn_v':
                bias = W.get('blk.%d.attn_v.bias' % il)
                ops['Vcur-%d' % il] = y if bias is None else y + bias
            elif name == 'attn_output':
                ops['kqv_out-%d' % il], ops['attn_out-%d' % il] = x, y
            else:
                ops['ffn_out-%d' % il] = y
        return _Recorded(W[key], on)

    run_W = dict(W)
    for il in range(n):
        for name in ('attn_v', 'attn_output', 'ffn_down'):
            run_W['blk.%d.%s.weight' % (il, name)] = product(name, il)
    ref.rmsnorm, ref.rope = recording, recording_rope
    ref.forward(hp, run_W, np.array(tokens))

    def stats(x):
        all_ = {'rms': np.sqrt((x * x).mean(axis=1)).tolist(), 'mean': x.mean(axis=1).tolist(),
                'min': x.min(axis=1).tolist(), 'max': x.max(axis=1).tolist()}
        return {k: all_[k] for k in keep}

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
    if ops_path:
        for il in range(n):
            ops['l_out-%d' % il] = R[il + 1]
        ops['result_norm'] = N
        np.savez(ops_path, **{k: np.asarray(v, dtype=np.float32) for k, v in ops.items()})
    json.dump({'prompt_tokens': tokens, 'n_layer': hp['n_layer'], 'prompt_trace': trace}, open(out, 'w'))


if __name__ == '__main__':
    main()
