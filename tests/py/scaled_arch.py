"""Writes a file with per-tensor scales as NVFP4 conversions carry them and llama.cpp's loader takes them in any
architecture (src/llama-model.cpp's generic pass: blk.N.W.scale, one value, which its graphs multiply W's product by
before the bias, and blk.N.W.input_scale, which they load and do not read): ../shared/tools/synth_model.py's
tiny-qwen2 (q/k/v biases, so that the order of scale and bias shows) with a scale beside attn_q, attn_k, attn_v,
attn_output, ffn_gate, ffn_up and ffn_down in some layers and not others, and one input scale; and
../shared/tools/synth_arch.py's tiny-qwen3moe held out to 3 layers with one scale per expert beside ffn_gate_exps,
ffn_up_exps and ffn_down_exps (llama.cpp's build_lora_mm_id: each chosen expert's product times its own) in some layers.
Deterministic, as synth_model.py and synth_arch.py are.

    from scaled_arch import write_scaled; write_scaled(path)            (or write_scaled(path, moe=True))

write_scaled_copy(out, write, seed) adds a scale beside every weight the loader takes one for to the file another
writer makes."""
import os
import tempfile

import numpy as np
from gguf import GGUFReader

from gguf_copy import numpy_shape, write_out, writer_with_metadata
from renamed_arch import write_base

# (layer, weight): the scale; far enough from 1 that a scale left out or applied after the bias moves the logits
SCALES = {(0, 'attn_q'): 0.75, (0, 'attn_output'): 2.0, (0, 'ffn_down'): 0.6, (1, 'attn_k'): 1.5, (1, 'attn_v'): 0.5,
          (1, 'ffn_gate'): 0.8, (1, 'ffn_up'): 1.25, (2, 'attn_q'): 1.3}
INPUT_SCALES = {(0, 'attn_q'): 3.0}
# (layer, experts' weight): the seed of its per-expert scales in [0.5, 2)
EXPERT_SCALES = {(0, 'ffn_up_exps'): 1, (0, 'ffn_down_exps'): 2, (1, 'ffn_gate_exps'): 3, (2, 'ffn_down_exps'): 4,
                 (2, 'attn_output'): None}


def write_scaled(out, moe=False):
    with tempfile.TemporaryDirectory() as d:
        src = os.path.join(d, 'base.gguf')
        if moe:
            write_base('synth_arch', 'tiny-qwen3moe', dict(n_layer=3, seed=4301), src)
        else:
            write_base('synth_model', 'tiny-qwen2', None, src)
        r = GGUFReader(src)
        w = writer_with_metadata(r, out)
        for t in r.tensors:
            w.add_tensor(t.name, np.array(t.data).reshape(numpy_shape(t)), raw_dtype=t.tensor_type)
            parts = t.name.split('.')
            if len(parts) != 4 or parts[0] != 'blk' or parts[3] != 'weight':
                continue
            key = (int(parts[1]), parts[2])
            if moe and key in EXPERT_SCALES:
                seed = EXPERT_SCALES[key]
                n = int(t.shape[2]) if seed else 1  # one per expert (GGUF order: ne2 the experts)
                value = np.random.RandomState(seed).uniform(0.5, 2.0, n) if seed else np.array([1.5])
                w.add_tensor(f'blk.{key[0]}.{key[1]}.scale', value.astype(np.float32))
                continue
            for suffix, table in (('scale', SCALES), ('input_scale', INPUT_SCALES)):
                if key in table and not moe:
                    w.add_tensor(f'blk.{key[0]}.{key[1]}.{suffix}', np.array([table[key]], dtype=np.float32))
        write_out(w)


# The weights llama.cpp's generic pass takes a blk.N.W.scale beside (src/llama-model.cpp, "load optional
# per-tensor/per-expert .scale tensors"), where the layer has W
GENERIC = {'attn_q', 'attn_k', 'attn_v', 'attn_qkv', 'attn_output', 'attn_gate', 'ffn_gate', 'ffn_up', 'ffn_down',
           'ffn_gate_shexp', 'ffn_up_shexp', 'ffn_down_shexp', 'ffn_gate_exps', 'ffn_up_exps', 'ffn_down_exps', 'ssm_in',
           'ssm_out', 'ssm_alpha', 'ssm_beta'}


def write_scaled_copy(out, write, seed, nextn=False):
    """The file write(path) makes, with a scale in [0.5, 2) beside every weight of GENERIC in the generating blocks
    (one per expert for the experts'; none in trailing prediction blocks, whose weights the loader skips unless nextn,
    nor where the file has that scale already: Gemma 4's per-expert output scale is ffn_down_exps.scale)."""
    rs = np.random.RandomState(seed)
    with tempfile.TemporaryDirectory() as d:
        src = os.path.join(d, 'base.gguf')
        write(src)
        r = GGUFReader(src)
        arch = bytes(r.fields['general.architecture'].parts[-1]).decode()

        def key(k):
            f = r.fields.get(f'{arch}.{k}')
            return int(f.parts[-1][0]) if f else 0
        n_gen = key('block_count') - key('nextn_predict_layers')
        have = {t.name for t in r.tensors}
        w = writer_with_metadata(r, out)
        for t in r.tensors:
            w.add_tensor(t.name, np.array(t.data).reshape(numpy_shape(t)), raw_dtype=t.tensor_type)
            parts = t.name.split('.')
            if len(parts) != 4 or parts[0] != 'blk' or parts[3] != 'weight' or parts[2] not in GENERIC:
                continue
            name = f'blk.{parts[1]}.{parts[2]}.scale'
            if (nextn or int(parts[1]) < n_gen) and name not in have:
                n = int(t.shape[2]) if parts[2].endswith('_exps') else 1
                w.add_tensor(name, rs.uniform(0.5, 2.0, n).astype(np.float32))
        write_out(w)


if __name__ == '__main__':
    import sys
    write_scaled(sys.argv[1])
