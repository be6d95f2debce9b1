"""Writes the families whose files are another architecture's under a new name, as convert_hf_to_gguf.py lays them out:
a file of the base architecture (../shared/tools/synth_model.py's tiny-qwen2, tiny-qwen3 and tiny-llama, synth_arch.py's
tiny-qwen3moe held out to 3 layers) under the family's name, its keys renamed, and the family's own keys:
  smollm3     SmolLM3: llama's file (its converter is llama's), every fourth layer without rotary positions (fixed by
              llama.cpp's loader: no key);
  mistral3    Ministral 3 (the architecture of Mistral Small 3.x's text decoder): llama's file with YaRN (factor 16, betas
              16 and 2 as the file says, yarn_log_multiplier 1) and the attention temperature (0.1 over floors of an
              original context of 4 positions, so that a prompt's positions cross several);
  seed_oss    Seed-OSS: qwen2's layers (q/k/v biases, NEOX rotary) with the feed-forward block's input norm named
              post_attention_norm;
and the text decoders of Qwen's vision-language models, with rope.dimension_sections (four counts of rotating pairs:
time, height, width, extra) and, for Qwen3-VL, n_deepstack_layers:
  qwen2vl     Qwen2-VL / Qwen2.5-VL: qwen2 rotated by sections in turn; here sections 6, 10, 10, 6 of the head's 32
              pairs, so the extra axis's last 6 keep a text token's position 0;
  qwen3vl     Qwen3-VL: qwen3 rotated by interleaved sections; here 16, 14, 14, 0 of 48 pairs (the sections wrap, and a
              pair past the height's interleave falls to the extra axis), 3 deepstack layers;
  qwen3vlmoe  Qwen3-VL-MoE: qwen3moe with Qwen3-VL's rotation; 12, 10, 10, 0 of 32 pairs, 2 deepstack layers.
Deterministic, as its sources are.

    from renamed_arch import write_renamed; write_renamed(path, 'qwen3vl')"""
import os
import sys
import tempfile

import numpy as np
from gguf import GGUFReader, GGUFValueType, GGUFWriter

from gguf_copy import numpy_shape, write_out

# arch: (base arch, how the base file is made (tool, preset, held-out changes), sections, deepstack layers)
FAMILIES = {
    'smollm3': ('llama', ('synth_model', 'tiny-llama', None), None, 0),
    'seed_oss': ('qwen2', ('synth_model', 'tiny-qwen2', None), None, 0),
    'mistral3': ('llama', ('synth_model', 'tiny-llama', None), None, 0),
    'qwen2vl': ('qwen2', ('synth_model', 'tiny-qwen2', None), [6, 10, 10, 6], 0),
    'qwen3vl': ('qwen3', ('synth_model', 'tiny-qwen3', None), [16, 14, 14, 0], 3),
    'qwen3vlmoe': ('qwen3moe', ('synth_arch', 'tiny-qwen3moe', dict(n_layer=3, seed=4201)), [12, 10, 10, 0], 2),
}


# keys a family's converter adds (suffix after the architecture's name: value, type)
EXTRA_KEYS = {
    'mistral3': {'rope.scaling.type': ('yarn', GGUFValueType.STRING),
                 'rope.scaling.factor': (16.0, GGUFValueType.FLOAT32),
                 'rope.scaling.original_context_length': (4, GGUFValueType.UINT32),
                 'rope.scaling.yarn_beta_fast': (16.0, GGUFValueType.FLOAT32),
                 'rope.scaling.yarn_beta_slow': (2.0, GGUFValueType.FLOAT32),
                 'rope.scaling.yarn_log_multiplier': (1.0, GGUFValueType.FLOAT32),
                 'attention.temperature_scale': (0.1, GGUFValueType.FLOAT32)},
}

# families whose converter names the feed-forward block's input norm post_attention_norm
TENSOR_RENAMED = ('seed_oss',)


def write_base(tool, preset, changes, out):
    argv = sys.argv
    try:
        if tool == 'synth_model':
            import synth_model
            sys.argv = [argv[0], preset, out]
            synth_model.main()
        else:
            import synth_arch
            name = preset if changes is None else preset + '-vl'
            synth_arch.PRESETS[name] = dict(synth_arch.PRESETS[preset], **(changes or {}))
            sys.argv = [argv[0], name, out]
            synth_arch.main()
    finally:
        sys.argv = argv


def write_renamed(out, arch):
    base, (tool, preset, changes), sections, deepstack = FAMILIES[arch]
    with tempfile.TemporaryDirectory() as d:
        src = os.path.join(d, 'base.gguf')
        write_base(tool, preset, changes, src)
        r = GGUFReader(src)
        w = GGUFWriter(out, arch)
        for name, field in r.fields.items():
            if name.startswith('GGUF.') or name == 'general.architecture':
                continue
            key = arch + name[len(base):] if name.startswith(base + '.') else name
            if key == 'general.name':
                w.add_name(f'synthetic {arch}{" text decoder" if sections else ""} (random weights)')
                continue
            vt = field.types[0]
            if vt == GGUFValueType.ARRAY:
                w.add_array(key, field.contents())
            else:
                w.add_key_value(key, field.contents(), vt)
        if sections:
            w.add_array(f'{arch}.rope.dimension_sections', sections)
        if deepstack:
            w.add_uint32(f'{arch}.n_deepstack_layers', deepstack)
        for suffix, (value, vt) in EXTRA_KEYS.get(arch, {}).items():
            w.add_key_value(f'{arch}.{suffix}', value, vt)
        for t in r.tensors:
            name = t.name.replace('.ffn_norm.', '.post_attention_norm.') if arch in TENSOR_RENAMED else t.name
            w.add_tensor(name, np.array(t.data).reshape(numpy_shape(t)), raw_dtype=t.tensor_type)
        write_out(w)
