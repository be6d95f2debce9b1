#!/usr/bin/env python3
"""Writes a held-out shape of one of ../shared/tools/synth_arch.py's architectures: the same writer with other
expert counts, experts used per token, expert widths, sliding windows, layers and seeds than its presets, so that
a test passing on them does not rest on the presets' numbers. Deterministic, as synth_arch.py is.

    heldout_arch.py NAME OUT.gguf        (NAME one of HELDOUT below)

llama.cpp's goldens of each (../shared/tools/golden.c, the prompts of the presets' p0 and p1) are in
tests/data/golden/generate; test_engine_arch holds our engine to them."""
import os
import sys

# The state-space writers' exp and log run in numpy's SIMD kernels, whose AVX-512 forms round some values otherwise
# than the AVX2 ones these files' sha256 (and llama.cpp's goldens of them) were made with: numpy is kept to its AVX2
# kernels, so that every x86-64 machine writes the same bytes (names a machine lacks are ignored; numpy is pinned by
# scripts/setup-venv.sh, its feature names with it).
os.environ.setdefault('NPY_DISABLE_CPU_FEATURES', 'X86_V4 AVX512_ICL AVX512_SPR')

here = os.path.dirname(os.path.abspath(__file__))
# synth_arch.py beside this file (scripts/gpu-pack.sh's tools/), else in ../shared/tools
sys.path[0:0] = [here, os.path.join(here, '..', '..', '..', 'shared', 'tools')]
import synth_arch  # noqa: E402
import numpy as np  # noqa: E402
from gguf import GGUFReader, GGUFValueType  # noqa: E402

from gguf_copy import numpy_shape, write_out, writer_with_metadata  # noqa: E402
from moe_arch import write_moe  # noqa: E402
from mla_arch import write_deepseek2, write_whole_latent  # noqa: E402
from phimoe_arch import write_phimoe  # noqa: E402
from smallthinker_arch import write_smallthinker  # noqa: E402
from grok_arch import write_grok  # noqa: E402
from bitnet_arch import write_bitnet  # noqa: E402
from openelm_arch import write_openelm  # noqa: E402
from arctic_arch import write_arctic  # noqa: E402
from nanbeige_arch import write_nanbeige  # noqa: E402
from granite_swa_arch import write_granite_swa  # noqa: E402
from mimo2_arch import write_mimo2  # noqa: E402
from plamo3_arch import write_plamo3  # noqa: E402
from maple_arch import write_maple  # noqa: E402
from step35_arch import write_step35  # noqa: E402
from laguna_arch import write_laguna  # noqa: E402
from talkie_arch import write_talkie  # noqa: E402
from scaled_arch import write_scaled, write_scaled_copy  # noqa: E402
from nvfp4_arch import write_nvfp4  # noqa: E402
from spark_arch import write_spark  # noqa: E402
from renamed_arch import write_renamed  # noqa: E402
from exaone4_arch import write_exaone4  # noqa: E402
from glm4_arch import write_glm4  # noqa: E402
from llama4_arch import write_llama4  # noqa: E402
from cohere_arch import write_cohere, write_cohere2moe  # noqa: E402
from qwen35_arch import write_qwen35  # noqa: E402
from lfm2_arch import write_lfm2  # noqa: E402
from gemma4_arch import write_gemma4  # noqa: E402
from nemotron_h_arch import write_nemotron_h  # noqa: E402
from granitehybrid_arch import write_granitehybrid  # noqa: E402
from falcon_h1_arch import write_falcon_h1  # noqa: E402
from mamba_arch import write_mamba, write_mamba2  # noqa: E402
from jamba_arch import write_jamba  # noqa: E402
from layernorm_arch import write_falcon, write_gptneox, write_phi2, write_stablelm, write_starcoder2  # noqa: E402
from position_arch import write_bloom, write_gpt2, write_mpt, write_starcoder  # noqa: E402
from deci_arch import write_deci  # noqa: E402
from nemotron_arch import write_nemotron  # noqa: E402
from olmo_arch import write_olmo  # noqa: E402
from dbrx_arch import write_dbrx  # noqa: E402
from apertus_arch import write_apertus  # noqa: E402
from chatglm_arch import write_chatglm  # noqa: E402
from orion_arch import write_orion  # noqa: E402
from baichuan_arch import write_baichuan  # noqa: E402
from qwen_arch import write_qwen  # noqa: E402
from refact_arch import write_refact  # noqa: E402
from codeshell_arch import write_codeshell  # noqa: E402
from jais_arch import write_jais, write_jais2  # noqa: E402
from plamo_arch import write_plamo  # noqa: E402
from afmoe_arch import write_afmoe  # noqa: E402

# name: (the preset it varies, what differs)
HELDOUT = {
    # 16 experts, 4 used, narrow experts, 3 layers
    'heldout-qwen3moe': ('tiny-qwen3moe', dict(n_layer=3, n_exp=16, n_used=4, n_ffe=96, seed=4001)),
    # 20 experts, 10 used per token (as Qwen3-Next routes 10): more chosen experts' gate and up products than one
    # product takes (KERN_MATMUL_MANY), so a decode step's go in two
    'heldout-qwen3moe-k10': ('tiny-qwen3moe', dict(n_layer=2, n_exp=20, n_used=10, n_ffe=64, seed=4006)),
    # 6 experts, 3 used, a wider shared expert
    'heldout-qwen2moe': ('tiny-qwen2moe', dict(n_exp=6, n_used=3, n_ffe=64, n_ffs=320, seed=4002)),
    # Mixtral's llama with 8 experts, one used per token (top-1: the weight renormalised to 1)
    'heldout-mixtral': ('tiny-mixtral', dict(n_exp=8, n_used=1, n_ff=192, seed=4003)),
    # gpt-oss with 4 experts, 3 used, and a window of 6
    'heldout-gptoss': ('tiny-gptoss', dict(n_exp=4, n_used=3, n_ffe=192, swa=6, seed=4004)),
    # gemma2 with a window of 5 and 6 layers
    'heldout-gemma2': ('tiny-gemma2', dict(n_layer=6, swa=5, seed=4005)),
    # Olmo 3 as its converter writes it (arch olmo2): a window of 3 on the layers sliding_window_pattern lists (three
    # in four) and YaRN on the full ones (factor 8 from 512 positions; the converter's yarn_* keys, which llama.cpp's
    # olmo2 loader does not read)
    'heldout-olmo3': ('tiny-olmo2', dict(n_layer=8, seed=4007)),
}

# shapes of families synth_arch.py has no preset for, each from tests/py/moe_arch.py: GLM-4.5's one dense layer first,
# then 8 experts, 3 chosen by sigmoid scores plus a selection bias, renormalised and scaled by 2.5, an ungated shared
# expert, half of each head rotating, and a trailing multi-token prediction block; MiniMax-M2's sigmoid routing with
# its bias and full-row q/k norms (12 experts, 4 used); OLMoE's softmax routing with full-row q/k norms (6 experts, 2
# used, no grouped heads as the released model has none); ERNIE 4.5's dense first layer, softmax routing with a selection
# bias, always renormalised, and a shared expert of its own width (10 experts, 3 used); Ling 2.0's fused q/k/v with
# per-head norms, sigmoid routing with its bias, two shared experts of their own width, a prediction block (16, 4 used);
# dots.llm1's per-head q/k norms, sigmoid routing with its bias, scaled by 2, a shared expert (8, 2 used; no grouped
# heads: its loader sizes k and v as q); Granite 3.x MoE's multipliers, softmax routing renormalised and a shared
# expert (10, 4 used)
OWN_WRITERS = {
    'heldout-glm4moe': lambda out: write_moe(out, 'glm4moe'),
    # qwen2's layers with llama.cpp's per-tensor scales beside some weights (before the q/k/v biases), and an input
    # scale it does not read
    'heldout-scaled': lambda out: write_scaled(out),
    # qwen3moe's layers with one scale per expert beside the experts' matrices in some layers
    'heldout-scaled-moe': lambda out: write_scaled(out, moe=True),
    # scaled copies (a scale beside every weight llama.cpp's loader takes one for) of families whose graphs apply them
    # their own ways: Qwen3.5's delta net (its own products scaled), Qwen3-Next's (its delta net's left unscaled, the
    # experts scaled), DeciLM's linear attention (its output product unscaled), Nanbeige's loops (the later passes
    # unscaled), Gemma 4's experts (beside its own per-expert output scale)
    'heldout-scaled-qwen35': lambda out: write_scaled_copy(out, OWN_WRITERS['heldout-qwen35'], 11),
    'heldout-scaled-qwen3next': lambda out: write_scaled_copy(out, OWN_WRITERS['heldout-qwen3next'], 12),
    'heldout-scaled-deci': lambda out: write_scaled_copy(out, OWN_WRITERS['heldout-deci'], 13),
    'heldout-scaled-nanbeige': lambda out: write_scaled_copy(out, OWN_WRITERS['heldout-nanbeige'], 14),
    'heldout-scaled-gemma4-moe': lambda out: write_scaled_copy(out, OWN_WRITERS['heldout-gemma4-moe'], 15),
    # MiMo-V2's with scales in its prediction block too, whose weights llama.cpp's loader skips: refused
    'heldout-scaled-mimo2-nextn': lambda out: write_scaled_copy(out, OWN_WRITERS['heldout-mimo2'], 16, nextn=True),
    # llama's layers in NVFP4 with their per-tensor scales (no f32 twin: the file is written quantized)
    'heldout-nvfp4': lambda out: write_nvfp4(out),
    # llama's layers in NVFP4, output.weight's second scale beside it as output.scale (which llama.cpp's llama graph
    # multiplies the logits by)
    'heldout-nvfp4-out': lambda out: write_nvfp4(out, seed=7302, output_scale=True),
    # Laguna's layers with layer 1's gate of neither width (half a value per head): refused, as llama.cpp's loader aborts
    'heldout-laguna-badgate': lambda out: write_laguna(out, gate_rows={1: 6 * 16}),
    # PLaMo 3's layers: a window on every other layer (sliding_window_pattern 2) with its own base; and the loader's
    # period (seven layers in eight), key/value heads and widths per layer, values 24 wide under keys of 32, a tied
    # output and PLaMo's own vocabulary
    'heldout-plamo3': lambda out: write_plamo3(out),
    'heldout-plamo3-b': lambda out: write_plamo3(out, n_embd=96, n_layer=9, n_head=3, n_kv=[1, 3, 1, 3, 1, 3, 1, 3, 1],
                                                 hd=32, hd_v=24, n_ff=[128, 160, 128, 160, 128, 160, 128, 160, 128],
                                                 window=4, pattern=None, base_swa=None, tied=True, vocab='plamo2',
                                                 seed=8702),
    'heldout-hy_v3': lambda out: write_moe(out, 'hy_v3'),
    # no gating key (the loader's sigmoid), weights neither renormalised nor scaled, no dense layer nor prediction
    # block, two shared experts' width, a tied output
    'heldout-hy_v3-b': lambda out: write_moe(out, 'hy_v3', n_embd=192, n_layer=3, n_nextn=0, n_dense=0, n_head=6,
                                             n_kv=3, hd=32, n_ff=256, n_exp=5, n_used=2, n_ffe=64, n_shared=2,
                                             scale=1.0, norm=False, tied=True, gating=None, seed=4131),
    'heldout-minimax-m2': lambda out: write_moe(out, 'minimax-m2', n_layer=3, n_exp=12, n_used=4, n_ffe=80,
                                                seed=4102),
    'heldout-olmoe': lambda out: write_moe(out, 'olmoe', n_layer=3, n_head=4, n_kv=4, n_exp=6, n_used=2, n_ffe=112,
                                           seed=4103),
    'heldout-ernie4_5-moe': lambda out: write_moe(out, 'ernie4_5-moe', n_layer=4, n_exp=10, n_used=3, n_ffe=64,
                                                  n_shared=2, n_vocab=512, seed=4104),
    'heldout-bailingmoe2': lambda out: write_moe(out, 'bailingmoe2', n_layer=4, n_exp=16, n_used=4, n_ffe=64,
                                                 n_shared=2, scale=1.5, seed=4105),
    # Ling 1.x's layers: experts on every layer, 4 of 12 renormalised beside two shared experts; and 2 of 6 not
    # renormalised beside one, a key/value head of 4, heads of 32 (scaled by the 1.0 the converter writes)
    'heldout-bailingmoe': lambda out: write_moe(out, 'bailingmoe', n_layer=3, n_dense=0, n_exp=12, n_used=4, n_ffe=64,
                                                n_shared=2, scale=1.0, seed=4111),
    'heldout-bailingmoe-b': lambda out: write_moe(out, 'bailingmoe', n_embd=128, n_layer=2, n_dense=0, n_head=4, n_kv=1,
                                                  hd=32, n_exp=6, n_used=2, n_ffe=96, n_shared=1, scale=1.0,
                                                  norm=False, seed=4112),
    # DeepSeek-MoE's layers: a dense first layer, then 3 of 10 experts beside two shared ones, not renormalised; and
    # two dense layers, 2 of 6 beside one, a key/value head of 4, heads of 32, tied
    'heldout-deepseek': lambda out: write_moe(out, 'deepseek', n_layer=3, n_dense=1, n_exp=10, n_used=3, n_ffe=64,
                                              n_shared=2, scale=1.0, seed=4121),
    'heldout-deepseek-b': lambda out: write_moe(out, 'deepseek', n_embd=128, n_layer=4, n_dense=2, n_head=4, n_kv=1,
                                                hd=32, n_ff=256, n_exp=6, n_used=2, n_ffe=96, n_shared=1, scale=1.0,
                                                tied=True, seed=4122),
    # K-EXAONE's layers: a window of 3 on three layers in four, which alone rotate, a dense first layer, 3 of 8 experts
    # by sigmoid and selection bias beside one shared expert; and 2 shared experts' width as one (the converter's
    # num_shared_experts x width: llama.cpp makes one expert of it), 2 dense layers, windows on layers 0, 2 and 3
    'heldout-exaone-moe': lambda out: write_moe(out, 'exaone-moe', n_layer=5, n_dense=1, n_exp=8, n_used=3, n_ffe=64,
                                                n_shared=1, scale=2.5, seed=4131),
    'heldout-exaone-moe-b': lambda out: write_moe(out, 'exaone-moe', n_embd=128, n_layer=4, n_dense=2, n_head=4, n_kv=1,
                                                  hd=32, n_ff=256, n_exp=6, n_used=2, n_ffe=48, n_shared=2, scale=1.0,
                                                  norm=False, window=4, swa_layers=[True, False, True, True],
                                                  seed=4132),
    # Arcee Trinity's layers: a window of 3 on three layers in four, NoPE on the fourth, the attention's own output
    # gate, norms before and after each block, a dense first layer, 3 of 8 experts beside one shared; and windows of 4
    # on layers 0, 2 and 3 (the last of them NoPE), two dense layers, 2 of 6 not renormalised beside two shared
    # experts, tied
    'heldout-afmoe': lambda out: write_afmoe(out),
    'heldout-afmoe-b': lambda out: write_afmoe(out, n_embd=96, n_layer=4, n_head=3, n_kv=1, hd=32, n_ff=192, n_dense=2,
                                               n_exp=6, n_used=2, n_ffe=48, n_shared=2, norm=False, scale=1.0,
                                               window=4, swa_layers=[True, False, True, True], tied=True,
                                               seed=9902),
    # (no golden: llama.cpp crashes on an AFMoE file without a window; gguf-verify says so, test_positions)
    'heldout-afmoe-nowin': lambda out: write_afmoe(out, window=0),
    # Mellum 2's layers (qwen3moe's): a window of 3 on three layers in four, rotated with the global base unscaled,
    # linear scaling by 2 on the others, 3 of 8 experts; and no window, 2 of 6 experts
    'heldout-mellum': lambda out: write_mellum(out, scaled=True),
    'heldout-mellum-b': lambda out: write_mellum(out, n_embd=128, n_layer=3, n_head=4, n_kv=1, hd=32, n_ff=192,
                                                 n_exp=6, n_used=2, window=0, seed=4142),
    # Phi-3.5-MoE's layers: 2 of 6 experts, q/k/v apart with biases; and q/k/v fused, 3 of 8 experts, LongRoPE's long
    # divisors (an original context of 128, under any context llama.cpp makes)
    'heldout-phimoe': lambda out: write_phimoe(out),
    'heldout-phimoe-b': lambda out: write_phimoe(out, n_embd=128, n_layer=4, n_head=4, n_kv=4, n_ff=64, n_exp=8,
                                                 n_used=3, fused_qkv=True, longrope=True, n_ctx_orig=128, seed=6102),
    # SmallThinker's layers: a window (so 4096 wide, every fourth layer full and without positions), 2 of 8 experts by
    # softmax; and no window (every layer rotates), 3 of 6 by sigmoid, tied
    'heldout-smallthinker': lambda out: write_smallthinker(out),
    'heldout-smallthinker-b': lambda out: write_smallthinker(out, n_embd=96, n_layer=3, n_head=3, n_kv=3, n_exp=6,
                                                             n_used=3, n_ffe=40, window=0, sigmoid=True, tied=True,
                                                             seed=7102),
    # Grok-2 as its converter writes it (a dense block beside 2 of 8 experts, YaRN from 64 positions, the file's
    # multipliers, a final soft-cap); Grok-1's older layout (no dense block, layer_output_norm, the loader's own
    # multipliers, 2 of 8 experts feed_forward_length wide, a SentencePiece vocabulary)
    'heldout-grok': lambda out: write_grok(out),
    'heldout-grok-b': lambda out: write_grok(out, grok2=False),
    # BitNet b1.58 as its converter writes it (ternary projections, the sub-norms), GQA; and rows of 256 and 768, a
    # multiple of TQ1_0's and TQ2_0's blocks, without GQA
    'heldout-bitnet': lambda out: write_bitnet(out),
    'heldout-bitnet-b': lambda out: write_bitnet(out, n_embd=256, n_layer=3, n_head=4, n_kv=4, n_ff=768, seed=7402),
    # OpenELM's layers of their own widths: 2 to 5 heads of 32 (the last wider than the embedding) over 1, 1, 2, 5
    # key/value heads; and 4, 4, 2 heads of 64 over 2, 1, 2, rows of 256
    'heldout-openelm': lambda out: write_openelm(out),
    'heldout-openelm-b': lambda out: write_openelm(out, n_embd=256, hd=64, heads=(4, 4, 2), kv_heads=(2, 1, 2),
                                                   ffs=(512, 768, 256), seed=7502),
    # Snowflake Arctic's layers: a dense block beside 2 of 8 experts that read the layer's input, GQA; and 3 of 6
    # experts, no GQA, tied, other widths
    'heldout-arctic': lambda out: write_arctic(out),
    'heldout-arctic-b': lambda out: write_arctic(out, n_embd=96, n_layer=3, n_head=3, n_kv=3, n_exp=6, n_used=3,
                                                 n_ffe=40, tied=True, seed=7302),
    # Nanbeige's looped layers: 3 blocks run twice, the final norm between the passes, GQA; and 2 blocks run three
    # times without that norm (skip_loop_final_norm), q/k/v biases, no GQA, tied
    'heldout-nanbeige': lambda out: write_nanbeige(out),
    'heldout-nanbeige-b': lambda out: write_nanbeige(out, n_embd=96, n_layer=2, n_head=3, n_kv=3, n_ff=160, loops=3,
                                                     skip_norm=True, qkv_bias=True, tied=True, seed=7602),
    # IBM Granite's iSWA files: dense, a window of 4 on the converter's default layers, the fifth layer without
    # positions, the attention output's bias; and the MoE form, 2 of 6 experts (gate and up fused) beside a shared
    # expert (fused too), its window of 5 on the layers layer_types marks, tied
    'heldout-granite_swa': lambda out: write_granite_swa(out, rope=[1, 1, 1, 1, 0], out_bias=True),
    'heldout-granite_swa-moe': lambda out: write_granite_swa(out, n_embd=96, n_layer=4, n_head=3, n_kv=1, n_ff=48,
                                                             window=5, swa=[True, False, True, True], n_exp=6,
                                                             n_used=2, n_ffs=64, tied=True, seed=7702),
    # Xiaomi MiMo-V2's layers: q/k/v apart, values 24 wide under keys of 32, half of each head rotated, the sliding
    # layers' own base and 2 key/value heads (the full layers' 1), sinks on the sliding layers, the value scale, a dense
    # first layer, 2 of 6 experts, a prediction block; and q/k/v fused, whole heads rotated, the sliding base 10000 (no
    # key), a value scale of 1 (none), sinks everywhere, two dense layers, 3 of 8 experts, no prediction block
    'heldout-mimo2': lambda out: write_mimo2(out),
    'heldout-mimo2-b': lambda out: write_mimo2(out, n_embd=96, n_layer=5, n_nextn=0, n_head=3, n_kv_full=3, n_kv_swa=1,
                                               hd=32, hd_v=32, n_rot=32, swa=[False, True, True, False, True],
                                               window=4, base_swa=None, value_scale=1.0, n_dense=2, n_ff=160, n_exp=8,
                                               n_used=3, n_ffe=64, fused_qkv=True, sinks='all', seed=8302),
    # deepgrove Maple's layers: the experts' SwiGLU limited by layer (0.5, 1, none, 2), whole heads rotated, the sliding
    # layers' own base; and one limit (0.8) for every layer, half of each head rotated, no sliding base, q/k/v biases
    'heldout-maple': lambda out: write_maple(out),
    'heldout-maple-b': lambda out: write_maple(out, n_embd=96, n_layer=5, n_head=3, n_kv=1, hd=32, n_rot=16,
                                               swa=[True, False, True, True, False], window=4, base_swa=None, n_exp=8,
                                               n_used=3, n_ffe=64, clamp=0.8, qkv_bias=True, seed=8402),
    # StepFun Step-3.5's layers: 4 and 2 heads on the full and sliding layers, a gate per head everywhere, per-head q/k
    # norms, the sliding layers' own base, a dense first layer whose block is limited, experts limited by layer beside
    # a shared expert limited too, 2 of 6 experts, a prediction block; and 3 and 6 heads, gates on three layers,
    # rope_freqs, no sliding base, two dense layers, softmax gating not renormalised, 3 of 8 experts, no limits
    'heldout-step35': lambda out: write_step35(out, clamp_exp=[0.0, 0.6, 1.2, 0.8], clamp_shexp=[0.5, 0.9, 0.0, 1.5]),
    'heldout-step35-b': lambda out: write_step35(out, n_embd=96, n_layer=5, n_nextn=0, heads=(3, 6), kv=(3, 2),
                                                 swa=[True, True, False, True, False], window=4, base_swa=None,
                                                 rope_freqs=True, n_dense=2, n_ff=128, n_exp=8, n_used=3, n_ffe=64,
                                                 n_ffs=64, scale=1.0, norm=False, gating=1, gate_layers=[0, 2, 3],
                                                 qk_norm=False, seed=8502),
    # poolside Laguna's layers (XS.2's form): 4 and 6 heads on the full and sliding layers, the sliding window on three
    # layers in four with a base of their own and all of each head rotating, the full ones a quarter of it under YaRN,
    # gates per head and per value by turns, a dense first layer, 3 of 8 experts renormalised and scaled beside a
    # shared expert of its own width; and (M.1's form) no window, 3 heads sharing one key/value head, a gate per value
    # everywhere, two dense layers, 2 of 6 experts neither renormalised nor scaled, no gating key, the shared expert an
    # expert's width (no key for it), no YaRN, tied
    'heldout-laguna': lambda out: write_laguna(out, base_swa=10000.0, n_rot=8),
    'heldout-laguna-b': lambda out: write_laguna(out, n_embd=96, n_layer=4, heads=(3, 3), n_kv=1, hd=32, n_rot=32,
                                                 window=0, yarn=None, gate_heads=[False] * 4, n_dense=2, n_ff=160,
                                                 n_exp=6, n_used=2, n_ffe=64, n_ffs=None, scale=1.0, norm=False,
                                                 gating=False, tied=True, seed=9952),
    # Talkie's layers: no norm gains, one q gain per head after the rotation, k normed without gains, each layer's
    # skip of the normed embeddings, the attention's and MLP's gains as per-tensor scales in every layer, a logit scale
    # under 1, float32's epsilon, 4 heads on 2 key/value heads; and 6 heads with no grouping, narrower heads, the
    # scales in one layer only, a logit scale over 1, another epsilon and base
    'heldout-talkie': lambda out: write_talkie(out),
    'heldout-talkie-b': lambda out: write_talkie(out, n_embd=96, n_layer=3, n_head=6, n_kv=6, hd=16, n_ff=160,
                                                 base=500000.0, eps=1e-5, logit_scale=1.7, scaled_layers=[1],
                                                 seed=7714),
    # Talkie's layers without logit_scale: refused, as llama.cpp's loader requires the key
    'heldout-talkie-nologit': lambda out: write_talkie(out, logit_scale=None),
    # Spark X2.5's layers: q/k/v fused, a gate per head, the full layers rotating half of each head and the sliding
    # ones all of it; and q/k/v with a bias, a sliding base of its own, rotating 16 and 8 of 32, no GQA, tied
    'heldout-spark2_5': lambda out: write_spark(out),
    'heldout-spark2_5-b': lambda out: write_spark(out, n_embd=96, n_layer=5, n_head=3, n_kv=3, n_rot=16, n_rot_swa=8,
                                                  swa=[True, False, True, True, False], window=4, base_swa=20000.0,
                                                  n_ff=160, qkv_bias=True, tied=True, seed=8602),
    'heldout-dots1': lambda out: write_moe(out, 'dots1', n_layer=3, n_kv=4, n_exp=8, n_used=2, n_ffe=80, scale=2.0,
                                           seed=4106),
    'heldout-granitemoe': lambda out: write_moe(out, 'granitemoe', n_layer=3, n_exp=10, n_used=4, n_ffe=64,
                                                seed=4107),
    # Hunyuan-A13B's layers: 8 experts, 2 chosen and renormalised, an ungated shared expert, q/k normed per head
    'heldout-hunyuan-moe': lambda out: write_moe(out, 'hunyuan-moe', n_layer=3, n_exp=8, n_used=2, n_ffe=96,
                                                 seed=4108),
    'heldout-deepseek2': lambda out: write_deepseek2(out, split=True),
    'heldout-deepseek2-whole': lambda out: write_deepseek2(out, split=False, n_layer=3, n_head=6, n_exp=6, n_used=2,
                                                           v_head=40),
    # MiniCPM3's layers: the query through its compression, LongRoPE's long divisors (the training context of 128 is
    # shorter than any context llama.cpp makes, 256 at least); and six heads without LongRoPE
    'heldout-minicpm3': lambda out: write_whole_latent(out, 'minicpm3', longrope=True, n_ctx=128),
    'heldout-minicpm3-b': lambda out: write_whole_latent(out, 'minicpm3', n_embd=192, n_layer=2, n_head=6, q_lora=64,
                                                         kv_lora=48, nope=24, rope=8, n_ff=256, seed=5312),
    # PLM's layers: the query straight, values of 40 beside keys of 48; and eight heads of 32 over four layers
    'heldout-plm': lambda out: write_whole_latent(out, 'plm', v_head=40, seed=5313),
    'heldout-plm-b': lambda out: write_whole_latent(out, 'plm', n_embd=128, n_layer=4, n_head=8, kv_lora=32, nope=16,
                                                    rope=16, v_head=16, n_ff=192, seed=5314),
    'heldout-qwen2vl': lambda out: write_renamed(out, 'qwen2vl'),
    'heldout-qwen3vl': lambda out: write_renamed(out, 'qwen3vl'),
    'heldout-qwen3vlmoe': lambda out: write_renamed(out, 'qwen3vlmoe'),
    'heldout-smollm3': lambda out: write_renamed(out, 'smollm3'),
    'heldout-seed_oss': lambda out: write_renamed(out, 'seed_oss'),
    'heldout-mistral3': lambda out: write_renamed(out, 'mistral3'),
    'heldout-exaone4': lambda out: write_exaone4(out),
    'heldout-exaone': lambda out: write_renamed(out, 'exaone'),
    'heldout-internlm2': lambda out: write_renamed(out, 'internlm2'),
    'heldout-ernie4_5': lambda out: write_renamed(out, 'ernie4_5'),
    'heldout-gemma': lambda out: write_renamed(out, 'gemma'),
    'heldout-pangu-embedded': lambda out: write_renamed(out, 'pangu-embedded'),
    'heldout-hunyuan_vl': lambda out: write_renamed(out, 'hunyuan_vl'),
    'heldout-mistral4': lambda out: write_renamed(out, 'mistral4'),
    'heldout-hunyuan-dense': lambda out: write_renamed(out, 'hunyuan-dense'),
    'heldout-arcee': lambda out: write_renamed(out, 'arcee'),
    'heldout-minicpm': lambda out: write_renamed(out, 'minicpm'),
    'heldout-xverse': lambda out: write_renamed(out, 'xverse'),
    'heldout-maincoder': lambda out: write_renamed(out, 'maincoder'),
    'heldout-glm4': lambda out: write_glm4(out),
    'heldout-llama4': lambda out: write_llama4(out),
    'heldout-llama4-k2': lambda out: write_llama4(out, n_layer=6, n_head=6, n_kv=3, n_exp=6, n_used=2, n_ffe=80,
                                                  step=1, seed=5602),
    'heldout-cohere2': lambda out: write_cohere(out, 'cohere2'),
    # Cohere2 MoE's layers: LayerNorms, a dense first layer (which rotates, though it does not slide), a full layer
    # without positions, 2 of 6 experts by sigmoid, renormalised, a shared expert averaged in, a prediction block the
    # pattern does not list; and RMSNorms, two dense layers, 3 of 5 experts by softmax scaled 1.5, their gate and up
    # fused, no shared expert, an output of its own
    'heldout-cohere2moe': lambda out: write_cohere2moe(out),
    'heldout-cohere2moe-b': lambda out: write_cohere2moe(out, n_embd=96, n_layer=6, n_nextn=0, n_head=3, n_kv=1,
                                                         n_dense=2, n_ff=192, n_exp=5, n_used=3, n_ffe=48, n_shared=0,
                                                         norm=False, scale=1.5, gating=1, rms=True, fused=True,
                                                         swa=(True, False, True, True, True, False), window=4,
                                                         tied=False, seed=5802),
    'heldout-command-r': lambda out: write_cohere(out, 'command-r', n_layer=3, n_head=4, n_kv=4, n_ff=320,
                                                  logit_scale=0.0625, seed=5702),
    'heldout-command-r-plus': lambda out: write_cohere(out, 'command-r', n_embd=64, n_layer=64, n_head=4, n_kv=2,
                                                       n_ff=128, logit_scale=0.125, seed=5703),
    'heldout-qwen35': lambda out: write_qwen35(out, 'qwen35'),
    'heldout-qwen35moe': lambda out: write_qwen35(out, 'qwen35moe', n_layer=6, n_head=6, n_kv=3, head_dim=24,
                                                  n_rot=12, sections=(2, 2, 2, 0), d_state=24, k_heads=1,
                                                  v_heads=3, interval=3, seed=6102),
    'heldout-qwen3next': lambda out: write_qwen35(out, 'qwen3next', n_layer=4, k_heads=2, v_heads=6, interval=2,
                                                  n_exp=6, n_used=3, seed=6103),
    'heldout-qwen3next-legacy': lambda out: write_qwen35(out, 'qwen3next', n_layer=4, d_state=32, k_heads=1,
                                                         v_heads=2, legacy=True, seed=6104),
    'heldout-lfm2': lambda out: write_lfm2(out),
    'heldout-lfm2-untied': lambda out: write_lfm2(out, n_embd=96, kinds='cacacca', n_head=3, n_kv=1, n_ff=256,
                                                  l_cache=4, tied=False, seed=6202),
    'heldout-lfm2moe': lambda out: write_lfm2(out, kinds='cacacc', n_exp=8, n_used=2, n_ffe=64, dense_lead=2,
                                              seed=6203),
    'heldout-gemma4': lambda out: write_gemma4(out),
    'heldout-gemma4-b': lambda out: write_gemma4(out, n_embd=96, swa_layers=(True, False, True, True, False),
                                                 n_head=3, n_kv_swa=3, n_kv_full=3, head_swa=32, head_full=96,
                                                 rot_full_frac=0.5, n_ff=160, window=3, softcap=0.0, k_eq_v=False,
                                                 out_scale=False, rot_swa=16, ff_wide_last=2, vocab='gemma4',
                                                 seed=5802),
    'heldout-gemma4-e': lambda out: write_gemma4(out, n_embd=128, swa_layers=(True, True, True, False, True, False),
                                                 n_head=4, n_kv_swa=1, n_kv_full=1, head_swa=32, head_full=64,
                                                 n_ff=192, window=3, k_eq_v=False, ff_wide_last=2, vocab='gemma4',
                                                 n_ple=16, kv_shared=2, seed=5803),
    'heldout-gemma4-moe': lambda out: write_gemma4(out, n_embd=128, swa_layers=(True, True, False, True), n_head=4,
                                                   n_kv_swa=2, n_kv_full=1, head_swa=32, head_full=64, n_ff=96,
                                                   window=3, n_exp=6, n_used=2, n_ffe=64, seed=5804),
    'heldout-nemotron_h': lambda out: write_nemotron_h(out),
    # another pattern (attention first, two mixers in a row), one group, wider states, three taps
    'heldout-nemotron_h-b': lambda out: write_nemotron_h(out, n_embd=96, pattern='*MM-M-', n_head=3, n_kv=1,
                                                         head_dim=32, n_ff=192, ssm_heads=6, ssm_head_dim=16,
                                                         n_group=1, d_state=32, d_conv=3,
                                                         seed=7102),
    # Nemotron 3 Nano's layers: 8 experts without a gate, 3 chosen by sigmoids and a selection bias, renormalised and
    # scaled by 2.5, an ungated shared expert; and 6 experts, 1 chosen, not renormalised
    'heldout-nemotron_h_moe': lambda out: write_nemotron_h(out, pattern='MEM*EM', n_exp=8, n_used=3, n_ffe=64, n_ffs=96,
                                                           scale=2.5, seed=7103),
    'heldout-nemotron_h_moe-b': lambda out: write_nemotron_h(out, n_embd=96, pattern='*EMEME', n_head=3, n_kv=1,
                                                             ssm_heads=6, n_group=3, d_state=8, n_exp=6, n_used=1,
                                                             n_ffe=48, n_ffs=80, norm=False, seed=7104),
    # Granite 4.0-H as Micro-H is (dense SwiGLU after each mixer) and as Tiny-H is (10 experts, 3 chosen, a shared
    # expert), without rotation, tied output
    'heldout-granitehybrid': lambda out: write_granitehybrid(out),
    'heldout-granitehybrid-moe': lambda out: write_granitehybrid(out, n_embd=96, pattern='M*MMM*M', n_head=3, n_kv=1,
                                                                 n_ff=64, ssm_heads=6, n_group=2, d_state=8, d_conv=3,
                                                                 n_exp=10, n_used=3, n_ffs=96, seed=7202),
    # Bamba's form of it: rope.scaling.finetuned true, so the attention layers rotate
    'heldout-granitehybrid-rope': lambda out: write_granitehybrid(out, pattern='*MM*', n_ff=192, rope=True, seed=7203),
    # Falcon-H1: attention and a Mamba-2 mixer side by side in every layer; the mixer's own width (not 2 x embedding)
    'heldout-falcon-h1': lambda out: write_falcon_h1(out),
    # grouped norm on (mamba_rms_norm), 2 groups, state 32, 3 taps, 1 kv head of 3, tied output
    'heldout-falcon-h1-b': lambda out: write_falcon_h1(out, n_embd=96, n_layer=3, n_head=3, n_kv=1, head_dim=32,
                                                      n_ff=192, ssm_heads=6, ssm_head_dim=16, n_group=2, d_state=32,
                                                      d_conv=3, ssm_norm=True, tied=True, seed=7302),
    # pure Mamba-2 (Mamba-Codestral's layers: x + mixer(attn_norm(x)), nothing else): 8 heads of 32, one group; and 2
    # groups, heads of 16, state 16, 3 taps, tied output
    'heldout-mamba2': lambda out: write_mamba2(out),
    'heldout-mamba2-b': lambda out: write_mamba2(out, n_embd=96, n_layer=3, head_dim=16, n_group=2, d_state=16,
                                                 d_conv=3, tied=True, seed=7402),
    # Mamba-1 (state-spaces/mamba-*): a state of 16 per channel, dt of rank 6; Falcon-Mamba's form: dt, B and C
    # RMS-normed, rank 8, state 8, 3 taps, untied
    'heldout-mamba': lambda out: write_mamba(out),
    'heldout-mamba-falcon': lambda out: write_mamba(out, n_embd=128, n_layer=4, d_state=8, d_conv=3, dt_rank=8,
                                                    dt_b_c_rms=True, tied=False, seed=7502),
    # Jamba: Mamba-1 mixers (dt, B, C normed with gains) and one attention layer without positions, experts (6, 2
    # chosen) on every other layer; and 8 experts, 3 chosen, on the first and third layers, two attention layers with
    # one key/value head, state 8, rank 4, 3 taps, tied
    'heldout-jamba': lambda out: write_jamba(out),
    'heldout-jamba-b': lambda out: write_jamba(out, n_embd=96, attn='.A.A', experts='E.E.', n_head=3, n_kv=1, n_ff=64,
                                               n_exp=8, n_used=3, d_state=8, d_conv=3, dt_rank=4, tied=True,
                                               seed=7602),
    # StarCoder2: LayerNorms with biases, biases everywhere, ungated GELU, tied (3B's form); and untied, one key/value
    # head, a wider block (7B / 15B's form)
    'heldout-starcoder2': lambda out: write_starcoder2(out),
    'heldout-starcoder2-b': lambda out: write_starcoder2(out, n_embd=96, n_layer=3, n_head=6, n_kv=1, n_ff=448,
                                                         tied=False, seed=7702),
    # StableLM 2 1.6B's form (q/k/v biases, a quarter of each head rotating); StableLM 3B 4E1T's (no biases, grouped
    # heads here, 4 of 16 values rotating)
    'heldout-stablelm': lambda out: write_stablelm(out),
    'heldout-stablelm-b': lambda out: write_stablelm(out, n_embd=96, n_layer=3, n_head=6, n_kv=2, n_ff=256,
                                                     qkv_bias=False, seed=7802),
    # Phi-2's layers as today's checkpoints hold them (q, k, v apart, 16 of 40 values rotating) and as its first GGUF
    # files were written (attn_qkv with its bias, 4 layers, 8 of 32 rotating)
    'heldout-phi2': lambda out: write_phi2(out),
    'heldout-phi2-fused': lambda out: write_phi2(out, n_embd=128, n_layer=4, rot=8, fused=True, seed=7902),
    # Falcon-7B's layers (one key/value head, tied) and Falcon-40B's (the attention's own norm, 2 key/value heads of 8,
    # untied; rows of 256, so that llama-quantize's K-quant rules for falcon apply rather than their fallbacks)
    'heldout-falcon': lambda out: write_falcon(out),
    'heldout-falcon-40b': lambda out: write_falcon(out, n_embd=256, n_layer=4, n_head=8, n_kv=2, own_attn_norm=True,
                                                   tied=False, seed=8002),
    # Pythia's layers (parallel residual, a quarter of each head rotating) and GPT-NeoX's other form, one block after
    # the other (use_parallel_residual false), rows of 256, half of each head rotating
    'heldout-gptneox': lambda out: write_gptneox(out),
    'heldout-gptneox-seq': lambda out: write_gptneox(out, n_embd=256, n_layer=3, n_head=8, n_ff=768, rot_frac=0.5,
                                                     parallel=False, seed=8102),
    # GPT-2's layers (learned positions, every head its own, tied, a table of 256 positions) and StarCoder's (one
    # key/value head, untied, rows of 256 so that llama-quantize's K-quants apply, 512 positions)
    'heldout-gpt2': lambda out: write_gpt2(out),
    'heldout-starcoder': lambda out: write_starcoder(out),
    # BLOOM's layers (ALiBi over 8 heads, the embeddings' LayerNorm, tied) and another head count (12: ALiBi's
    # slopes past the largest power of two), untied, rows of 384 (K-quant blocks of 256 do not fit: the fallbacks)
    'heldout-bloom': lambda out: write_bloom(out),
    'heldout-bloom-b': lambda out: write_bloom(out, n_embd=384, n_layer=2, n_head=12, n_ctx=1024, tied=False,
                                               seed=8402),
    # MPT-7B's layers (ALiBi over 8 heads, no biases anywhere, tied; q, k and v clamped to +-2) and MPT's other
    # options: learned positions without ALiBi, biases, 2 key/value heads of 8, untied, rows of 256, no clamp
    'heldout-mpt': lambda out: write_mpt(out),
    'heldout-mpt-b': lambda out: write_mpt(out, n_embd=256, n_layer=3, n_head=8, n_kv=2, n_ctx=512, alibi=0.0,
                                           clamp=None, positions=True, biases=True, tied=False, seed=8502),
    # MPT's q/k LayerNorms (qk_ln), on which llama.cpp aborts: held to tests/py/mpt_reference.py's numpy instead
    # (2 key/value heads of 8: k's norm spans their rows; clamped to +-3, ALiBi, biases); a layer's q norm without
    # its k norm; AWQ's activation scales
    'heldout-mpt-qkln': lambda out: write_mpt(out, n_kv=2, clamp=3.0, biases=True, qk_ln=True, seed=8503),
    'heldout-mpt-q-only': lambda out: write_mpt(out, n_layer=2, qk_ln='q', seed=8504),
    'heldout-mpt-awq': lambda out: write_mpt(out, n_layer=2, awq=True, seed=8505),
    # DeciLM's pruned layers as the Nemotron 51B / 49B / 253B have them (attention with 2 and 4 and 1 key/value heads,
    # a linear attention, a feed-forward layer alone, a layer of neither; Llama 3.1's rope_freqs, untied) and attention
    # everywhere with another key/value count per layer, rows of 256, no rope_freqs, tied; a layer that attends
    # without a feed-forward block (llama.cpp drops its attention: refused)
    'heldout-deci': lambda out: write_deci(out),
    'heldout-deci-b': lambda out: write_deci(out, n_embd=256, heads=(16, 16, 16, 16), kv=(4, 1, 2, 16),
                                             ff=(512, 768, 256, 512), base=10000.0, llama3_ctx=None, tied=True,
                                             seed=8602),
    'heldout-deci-attn-no-ffn': lambda out: write_deci(out, heads=(8, 8), kv=(2, 2), ff=(256, 0), seed=8603),
    # Minitron's layers (2 key/value heads of 8, half of each head rotating, no biases but the LayerNorms') and the
    # optional biases on the attention output and the squared-ReLU block, every head its own, a quarter rotating, rows
    # of 256
    'heldout-nemotron': lambda out: write_nemotron(out),
    'heldout-nemotron-b': lambda out: write_nemotron(out, n_embd=256, n_layer=3, n_head=4, n_kv=4, n_ff=768,
                                                     rot_frac=0.25, biases=True, seed=8702),
    # OLMo 1's layers: OLMo-7B-0424's form (clip_qkv: q, k and v clamped to +-2, which bites on these weights; untied)
    # and OLMo-1B's (no clamp, tied), 2 key/value heads of 4, rows of 256
    'heldout-olmo': lambda out: write_olmo(out),
    'heldout-olmo-b': lambda out: write_olmo(out, n_embd=256, n_layer=3, n_head=4, n_kv=2, n_ff=512, clamp=None,
                                             tied=True, seed=8802),
    # DBRX's layers: 8 experts, 3 used, 2 key/value heads of 8, q, k and v clamped to +-1.5 (which bites on these
    # weights); and DBRX-132B's 16 experts, 4 used, its clip_qkv of 8, one key/value head of 4, rows of 256
    'heldout-dbrx': lambda out: write_dbrx(out),
    'heldout-dbrx-b': lambda out: write_dbrx(out, n_embd=256, n_layer=2, n_head=4, n_kv=1, n_ff=64, n_exp=16, n_used=4,
                                             clamp=8.0, seed=8902),
    # Apertus's layers: xIELU's parameters one per layer as the converter writes them, Llama 3.1's rope_freqs, 2
    # key/value heads of 8; and one value of each for every layer, no rope_freqs, every head its own, rows of 256
    'heldout-apertus': lambda out: write_apertus(out),
    'heldout-apertus-b': lambda out: write_apertus(out, n_embd=256, n_layer=3, n_head=4, n_kv=4, n_ff=512,
                                                   base=10000.0, llama3_ctx=None, scalar_xielu=True, seed=9002),
    # GLM-4-9B's layers: q, k and v fused with their bias, 2 multi-query groups of 4 heads, half of each head
    # rotating, gate and up fused; and q, k and v apart without biases, one group, tied, rows of 256
    'heldout-chatglm': lambda out: write_chatglm(out),
    'heldout-chatglm-b': lambda out: write_chatglm(out, n_embd=256, n_layer=2, n_head=8, n_kv=1, n_ff=384,
                                                   rope_ratio=1.0, fused=False, bias=False, tied=True, seed=9102),
    # Orion-14B's layers (LayerNorms with biases, every head its own); and 2 key/value heads of 8, rows of 256
    'heldout-orion': lambda out: write_orion(out),
    'heldout-orion-b': lambda out: write_orion(out, n_embd=256, n_layer=2, n_head=8, n_kv=2, n_ff=512, seed=9202),
    # Baichuan's positions by depth: 32 layers rotate (the 7B's), 40 attend with ALiBi (the 13B's: here 5 heads, a
    # count that is not a power of two as its 40 are not, and 1 key/value head), 3 with neither
    'heldout-baichuan': lambda out: write_baichuan(out),
    'heldout-baichuan-b': lambda out: write_baichuan(out, n_embd=80, n_layer=40, n_head=5, n_kv=1, n_ff=128,
                                                     seed=9302),
    'heldout-baichuan-c': lambda out: write_baichuan(out, n_embd=96, n_layer=3, n_head=3, n_kv=3, n_ff=256,
                                                     seed=9303),
    # Qwen 1's layers (fused q/k/v with bias, SwiGLU half of feed_forward_length); and 3 heads of 32, a wider block
    'heldout-qwen': lambda out: write_qwen(out),
    'heldout-qwen-b': lambda out: write_qwen(out, n_embd=96, n_layer=2, n_head=3, n_ff=640, seed=9402),
    # Refact's layers (ALiBi over 4 heads sharing one key/value head); and 6 heads of 32, tied
    'heldout-refact': lambda out: write_refact(out),
    'heldout-refact-b': lambda out: write_refact(out, n_embd=192, n_layer=2, n_head=6, tied=True, seed=9502),
    # CodeShell's layers (GPT-2's with NEOX rotation: 4 heads over 2 key/value heads); and one key/value head of 8
    'heldout-codeshell': lambda out: write_codeshell(out),
    'heldout-codeshell-b': lambda out: write_codeshell(out, n_embd=256, n_layer=2, n_head=8, n_kv=1, seed=9602),
    # Jais's layers (ALiBi over 4 heads, muP's 1/d attention scale, SwiGLU with biases); and 6 heads of 32 whose slopes
    # are not a power of two's, a max_bias of 4
    'heldout-jais': lambda out: write_jais(out),
    'heldout-jais-b': lambda out: write_jais(out, n_embd=192, n_layer=2, n_head=6, n_ff=512, alibi=4.0, seed=9702),
    # Jais 2's layers (StarCoder2's with a squared ReLU, tied); and every head its own, untied
    'heldout-jais2': lambda out: write_jais2(out),
    'heldout-jais2-b': lambda out: write_jais2(out, n_embd=192, n_layer=2, n_head=6, n_kv=6, n_ff=512, tied=False,
                                               seed=9712),
    # PLaMo's parallel layers (4 heads over 2 key/value heads); and PLaMo-13B's 8 to 1 grouping, 8 heads of 32
    'heldout-plamo': lambda out: write_plamo(out),
    'heldout-plamo-b': lambda out: write_plamo(out, n_embd=256, n_layer=2, n_head=8, n_kv=1, n_ff=512, seed=9802),
}

# metadata the converter of a family writes on top of the preset's, by held-out shape
EXTRA_KEYS = {
    'heldout-olmo3': lambda arch, n_layer: {
        f'{arch}.attention.sliding_window': (3, GGUFValueType.UINT32),
        f'{arch}.attention.sliding_window_pattern': ([(i + 1) % 4 != 0 for i in range(n_layer)], GGUFValueType.ARRAY),
        f'{arch}.rope.scaling.type': ('yarn', GGUFValueType.STRING),
        f'{arch}.rope.scaling.factor': (8.0, GGUFValueType.FLOAT32),
        f'{arch}.rope.scaling.original_context_length': (512, GGUFValueType.UINT32),
        f'{arch}.rope.scaling.yarn_attn_factor': (1.2079441541679836, GGUFValueType.FLOAT32),
        f'{arch}.rope.scaling.yarn_beta_fast': (32.0, GGUFValueType.FLOAT32),
        f'{arch}.rope.scaling.yarn_beta_slow': (1.0, GGUFValueType.FLOAT32),
    },
}


def write_mellum(out, scaled=False, **shape):
    """Mellum 2's layers (moe_arch.py's 'mellum'), with linear rope scaling by 2 where scaled: llama.cpp's mellum graph
    rotates the sliding-window layers with the global base and no scaling, the others scaled."""
    write_moe(out, 'mellum', **dict(dict(n_layer=5, n_exp=8, n_used=3, n_ffe=64, seed=4141), **shape))
    if scaled:
        add_keys(out, {'mellum.rope.scaling.type': ('linear', GGUFValueType.STRING),
                       'mellum.rope.scaling.factor': (2.0, GGUFValueType.FLOAT32)})


def add_keys(path, keys):
    """Rewrites the file at path with keys (name: (value, GGUFValueType)) added after its own."""
    r = GGUFReader(path)
    tmp = path + '.keys'
    w = writer_with_metadata(r, tmp)
    for name, (value, vt) in keys.items():
        if vt == GGUFValueType.ARRAY:
            w.add_array(name, value)
        else:
            w.add_key_value(name, value, vt)
    for t in r.tensors:
        w.add_tensor(t.name, np.array(t.data).reshape(numpy_shape(t)), raw_dtype=t.tensor_type)
    write_out(w)
    os.replace(tmp, path)


def main():
    names = sorted(HELDOUT) + sorted(OWN_WRITERS)
    if len(sys.argv) != 3 or sys.argv[1] not in names:
        sys.exit('usage: heldout_arch.py NAME OUT.gguf (NAME: %s)' % ', '.join(names))
    name, out = sys.argv[1], sys.argv[2]
    if name in OWN_WRITERS:
        OWN_WRITERS[name](out)
        return
    preset, changes = HELDOUT[name]
    synth_arch.PRESETS[name] = dict(synth_arch.PRESETS[preset], **changes)
    sys.argv = [sys.argv[0], name, out]
    synth_arch.main()
    if name in EXTRA_KEYS:
        p = synth_arch.PRESETS[name]
        add_keys(out, EXTRA_KEYS[name](p['arch'], p['n_layer']))


if __name__ == '__main__':
    main()
