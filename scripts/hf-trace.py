#!/usr/bin/env python3
"""Dumps a Hugging Face transformers model's forward pass in what `gguf-run --against` reads.

    hf-trace.py MODEL PROMPT OUT.npz [--gguf FILE] [--json OUT.json] [--logits OUT.npy] [--tokens 1,2,3]
                [--bug channel-swap:L | --bug ffn-down-block:L]

MODEL is a transformers model folder or hub id; with --gguf FILE it is the folder holding the GGUF file, which
transformers dequantizes (it needs the `gguf` package). Written:

  OUT.npz       hidden_states as transformers returns them, stacked (n_layer + 1, 1, n, n_embd) float32: entry 0
                the embeddings, entry k the output of layer k - 1, the last after the final norm. `gguf-run
                MODEL.gguf -p PROMPT --against OUT.npz` compares them whole.
  --json F      their per-row statistics in the goldens' schema (docs/TRACE.md), numbered as hidden_states come:
                `--against F` recognises the numbering and says so.
  --logits F    the prompt's logits (1, n, n_vocab) float32: `--against-logits F`.

The prompt is tokenized by the model's tokenizer (BOS as it adds it) unless --tokens gives the ids; the ids are
in the JSON, so `--tokens-from` runs them as they are when the two tokenizers disagree.

--bug plants one of two bugs the per-row statistics cannot place, to see --against find it: channel-swap:L swaps
residual channels 3 and 7 after layer L (a forward hook); ffn-down-block:L doubles one 32-weight block of layer
L's down projection (row 5, columns 32-63).

`write_outputs` holds everything after the forward pass and needs numpy only: the tests call it with another
engine's arrays (tests/test_against.c). Needs torch and transformers for the forward pass itself.
"""
import argparse
import json

import numpy as np


def stats(x):
    x = np.asarray(x, dtype=np.float64)
    return {'rms': np.sqrt((x * x).mean(axis=1)).tolist(), 'mean': x.mean(axis=1).tolist(),
            'min': x.min(axis=1).tolist(), 'max': x.max(axis=1).tolist()}


def write_outputs(hidden_states, tokens, prompt, out_npz, out_json=None, logits=None, out_logits=None):
    """hidden_states: n_layer + 1 arrays of (n, n_embd) or (1, n, n_embd), transformers' order."""
    rows = [np.asarray(h, dtype=np.float32).reshape(-1, np.shape(h)[-1]) for h in hidden_states]
    np.savez(out_npz, hidden_states=np.stack(rows)[:, None])
    if out_json:
        doc = {'prompt': prompt, 'prompt_tokens': [int(t) for t in tokens], 'n_layer': len(rows) - 1,
               'prompt_trace': [dict(layer=k, **stats(r)) for k, r in enumerate(rows)]}
        with open(out_json, 'w') as f:
            json.dump(doc, f)
    if out_logits is not None and logits is not None:
        np.save(out_logits, np.asarray(logits, dtype=np.float32).reshape(1, len(tokens), -1))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('model')
    ap.add_argument('prompt')
    ap.add_argument('out_npz')
    ap.add_argument('--gguf')
    ap.add_argument('--json')
    ap.add_argument('--logits')
    ap.add_argument('--tokens', help='comma-separated ids to run instead of the tokenizer\'s')
    ap.add_argument('--bug', help='channel-swap:L or ffn-down-block:L')
    a = ap.parse_args()
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    extra = {'gguf_file': a.gguf} if a.gguf else {}
    model = AutoModelForCausalLM.from_pretrained(a.model, dtype=torch.float32, **extra)
    model.eval()
    if a.bug:
        kind, layer = a.bug.split(':')
        block = model.model.layers[int(layer)]
        if kind == 'channel-swap':
            def swap(module, inputs, output):
                h = output[0] if isinstance(output, tuple) else output
                h[..., [3, 7]] = h[..., [7, 3]]
            block.register_forward_hook(swap)
        elif kind == 'ffn-down-block':
            with torch.no_grad():
                block.mlp.down_proj.weight[5, 32:64] *= 2.0
        else:
            ap.error('unknown bug ' + kind)
    if a.tokens:
        ids = [int(t) for t in a.tokens.split(',')]
    else:
        ids = AutoTokenizer.from_pretrained(a.model, **extra)(a.prompt)['input_ids']
    with torch.no_grad():
        out = model(torch.tensor([ids]), output_hidden_states=True)
    write_outputs([h[0].numpy() for h in out.hidden_states], ids, a.prompt, a.out_npz, a.json,
                  out.logits[0].numpy(), a.logits)


if __name__ == '__main__':
    main()
