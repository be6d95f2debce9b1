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


def main():
    args = [a for a in sys.argv[1:]]
    base, convention, keep = None, 'ours', ['rms', 'mean', 'min', 'max']
    if '--rope-base' in args:
        i = args.index('--rope-base')
        base = float(args[i + 1])
        del args[i:i + 2]
    if '--convention' in args:
        i = args.index('--convention')
        convention = args[i + 1]
        del args[i:i + 2]
    if '--stats' in args:
        i = args.index('--stats')
        keep = args[i + 1].split(',')
        del args[i:i + 2]
    model, out, tokens = args[0], args[1], [int(t) for t in args[2:]]
    hp, W = ref.load(model)
    if base is not None:
        hp['base'] = base
    layer_of = {id(W['blk.%d.attn_norm.weight' % il]): il for il in range(hp['n_layer'])}
    final = id(W['output_norm.weight'])
    residual_in, result = {}, {}
    plain = ref.rmsnorm

    def recording(x, w, eps):
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
    json.dump({'prompt_tokens': tokens, 'n_layer': hp['n_layer'], 'prompt_trace': trace}, open(out, 'w'))


if __name__ == '__main__':
    main()
