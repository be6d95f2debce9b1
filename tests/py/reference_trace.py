"""Writes a trace in the goldens' schema (docs/TRACE.md) from ../shared/tools/reference_forward.py's numpy
forward pass: another engine, independent of ours, whose per-layer residuals --against holds ours to.

    reference_trace.py MODEL.gguf OUT.json TOKEN... [--rope-base B]

--rope-base overrides the model's rotary base: a bug edited into their engine (as a wrong rope.freq_base read
from the file would be), which --against must place at layer 0 from position 1 on.

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
    base = None
    if '--rope-base' in args:
        i = args.index('--rope-base')
        base = float(args[i + 1])
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
        return {'rms': np.sqrt((x * x).mean(axis=1)).tolist(), 'mean': x.mean(axis=1).tolist(),
                'min': x.min(axis=1).tolist(), 'max': x.max(axis=1).tolist()}

    trace = [dict(layer=il, **stats(residual_in[il + 1])) for il in range(hp['n_layer'])]
    trace.append(dict(layer='result_norm', **stats(result['norm'])))
    json.dump({'prompt_tokens': tokens, 'n_layer': hp['n_layer'], 'prompt_trace': trace}, open(out, 'w'))


if __name__ == '__main__':
    main()
