"""Writes the families whose files are another architecture's under a new name, as convert_hf_to_gguf.py lays them out:
a file of the base architecture (../shared/tools/synth_model.py's tiny-qwen2, tiny-qwen3 and tiny-llama, synth_arch.py's
tiny-qwen3moe and tiny-gemma2 held out to 3 layers, tests/py/mla_arch.py's deepseek2) under the family's name, its keys renamed, and the family's own keys:
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
  qwen3vlmoe  Qwen3-VL-MoE: qwen3moe with Qwen3-VL's rotation; 12, 10, 10, 0 of 32 pairs, 2 deepstack layers;
and the families whose layers are one of those already (their converters llama's, qwen2's or gemma's):
  exaone      EXAONE 3.x: qwen2's file (q/k/v biases, tied output; NEOX rotary as llama.cpp's exaone has it);
  internlm2   InternLM2: llama's (an output projection of its own, NORM rotary);
  ernie4_5    ERNIE 4.5 0.3B: llama's;
  gemma       Gemma 1: gemma2's held out to 3 layers without its post-norms, soft-capping and window;
  mistral4    Mistral 4: deepseek2's latent attention and routing (tests/py/mla_arch.py, split form, held out to 3
              layers of 6 heads and 8 experts, 2 used) with yarn_log_multiplier 0.0707, which llama.cpp's context treats
              otherwise than deepseek2's;
  hunyuan_vl   HunyuanOCR's text decoder: hunyuan-dense's keys with XD-RoPE's four rotary sections;
  hunyuan-dense  Hunyuan dense: qwen3's tensors (its per-head q/k norms, which Hunyuan's graph applies after the
              rotation), rope.scaling.alpha 1000 (the base scaled NTK-wise) and an expert_count of 1 (dense);
  arcee       Arcee AFM: llama's file (its converter is LlamaModel's) without ffn_gate: relu(x Wup)^2 Wdown;
  minicpm     MiniCPM: llama's file with granite's multipliers as its converter writes them (12, 0.35, 2.5);
  xverse      XVERSE: llama's (an output projection of its own, NORM rotary);
  pangu-embedded openPangu-Embedded: qwen2's file (q/k/v biases, NEOX rotary) with a bias on the attention output;
  maincoder   Maincoder: qwen3's tensors (its per-head q/k norms, which Maincoder's graph applies after a NORM
              rotation).
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
    'exaone': ('qwen2', ('synth_model', 'tiny-qwen2', None), None, 0),
    'internlm2': ('llama', ('synth_model', 'tiny-llama', None), None, 0),
    'ernie4_5': ('llama', ('synth_model', 'tiny-llama', None), None, 0),
    'gemma': ('gemma2', ('synth_arch', 'tiny-gemma2', dict(n_layer=3, seed=4202)), None, 0),
    'mistral4': ('deepseek2', ('mla_arch', None, dict(n_layer=3, n_head=6, n_exp=8, n_used=2, seed=4203)), None, 0),
    'hunyuan-dense': ('qwen3', ('synth_model', 'tiny-qwen3', None), None, 0),
    'hunyuan_vl': ('qwen3', ('synth_model', 'tiny-qwen3', None), [12, 12, 12, 12], 0),
    'arcee': ('llama', ('synth_model', 'tiny-llama', None), None, 0),
    'minicpm': ('llama', ('synth_model', 'tiny-llama', None), None, 0),
    'xverse': ('llama', ('synth_model', 'tiny-llama', None), None, 0),
    'maincoder': ('qwen3', ('synth_model', 'tiny-qwen3', None), None, 0),
    'pangu-embedded': ('qwen2', ('synth_model', 'tiny-qwen2', None), None, 0),
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
    # in place of the base's 0.1: a multiplier other than 1 (after the loader's division by 0.1), where llama.cpp's
    # context takes the magnitude ratio of mscale 1 for mistral4 and of the multiplier itself for deepseek2
    'mistral4': {'rope.scaling.yarn_log_multiplier': (0.0707, GGUFValueType.FLOAT32)},
    # Hunyuan's converter: the NTK alpha its loader turns into the base, and one "expert" for a dense model
    # MiniCPMModel.set_gguf_parameters: scale_emb, scale_depth / sqrt(layers), hidden_size / dim_model_base
    'minicpm': {'embedding_scale': (12.0, GGUFValueType.FLOAT32), 'residual_scale': (0.35, GGUFValueType.FLOAT32),
                'logit_scale': (2.5, GGUFValueType.FLOAT32)},
    'hunyuan-dense': {'rope.scaling.alpha': (1000.0, GGUFValueType.FLOAT32),
                      'expert_count': (1, GGUFValueType.UINT32), 'expert_used_count': (1, GGUFValueType.UINT32)},
    # HunyuanVLTextModel's XD-RoPE keys: alpha, scaling none with factor 1, the original context (the sections below)
    'hunyuan_vl': {'rope.scaling.alpha': (1000.0, GGUFValueType.FLOAT32),
                   'rope.scaling.type': ('none', GGUFValueType.STRING),
                   'rope.scaling.factor': (1.0, GGUFValueType.FLOAT32),
                   'rope.scaling.original_context_length': (4096, GGUFValueType.UINT32),
                   'expert_count': (1, GGUFValueType.UINT32), 'expert_used_count': (1, GGUFValueType.UINT32)},
}

# what a family's converter leaves out of the base's file: tensor name suffixes and key suffixes (gemma 1 has no
# norms after its blocks, no soft-capping and no window, and its output projection is the token embedding)
DROPPED = {
    # Arcee's feed-forward block has no gate: relu(x Wup)^2 Wdown
    'arcee': (('.ffn_gate.weight',), ()),
    'gemma': (('.post_attention_norm.weight', '.post_ffw_norm.weight', 'output.weight'),
              ('attn_logit_softcapping', 'final_logit_softcapping', 'attention.sliding_window')),
}

# tensors a family has that its base lacks: a per-layer suffix and the base tensor whose rows give its length
# (openPangu-Embedded's o_proj carries a bias, which llama.cpp's loader requires)
ADDED = {
    'pangu-embedded': (('.attn_output.bias', '.attn_output.weight'),),
}

# families whose converter names the feed-forward block's input norm post_attention_norm
TENSOR_RENAMED = ('seed_oss',)


def write_base(tool, preset, changes, out):
    argv = sys.argv
    try:
        if tool == 'mla_arch':
            from mla_arch import write_deepseek2
            write_deepseek2(out, split=True, **changes)
        elif tool == 'synth_model':
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
            suffix = key[len(arch) + 1:] if key.startswith(arch + '.') else None
            if suffix in EXTRA_KEYS.get(arch, {}) or suffix in DROPPED.get(arch, ((), ()))[1]:
                continue
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
            dropped = DROPPED.get(arch, ((), ()))[0]
            if t.name in dropped or t.name.endswith(tuple(d for d in dropped if d.startswith('.'))):
                continue
            name = t.name.replace('.ffn_norm.', '.post_attention_norm.') if arch in TENSOR_RENAMED else t.name
            w.add_tensor(name, np.array(t.data).reshape(numpy_shape(t)), raw_dtype=t.tensor_type)
            for added, like in ADDED.get(arch, ()):
                if t.name.endswith(like):
                    rng = np.random.default_rng(len(t.name) * 7919 + int(t.name.split('.')[1]))
                    rows = int(t.shape[1])
                    w.add_tensor(t.name[:-len(like)] + added, (rng.standard_normal(rows) * 0.05).astype(np.float32))
        write_out(w)
