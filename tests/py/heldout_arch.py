#!/usr/bin/env python3
"""Writes a held-out shape of one of ../shared/tools/synth_arch.py's architectures: the same writer with other
expert counts, experts used per token, expert widths, sliding windows, layers and seeds than its presets, so that
a test passing on them does not rest on the presets' numbers. Deterministic, as synth_arch.py is.

    heldout_arch.py NAME OUT.gguf        (NAME one of HELDOUT below)

llama.cpp's goldens of each (../shared/tools/golden.c, the prompts of the presets' p0 and p1) are in
tests/data/golden/generate; test_engine_arch holds our engine to them."""
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
# synth_arch.py beside this file (scripts/gpu-pack.sh's tools/), else in ../shared/tools
sys.path[0:0] = [here, os.path.join(here, '..', '..', '..', 'shared', 'tools')]
import synth_arch  # noqa: E402

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
}


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in HELDOUT:
        sys.exit('usage: heldout_arch.py NAME OUT.gguf (NAME: %s)' % ', '.join(sorted(HELDOUT)))
    name, out = sys.argv[1], sys.argv[2]
    preset, changes = HELDOUT[name]
    synth_arch.PRESETS[name] = dict(synth_arch.PRESETS[preset], **changes)
    sys.argv = [sys.argv[0], name, out]
    synth_arch.main()


if __name__ == '__main__':
    main()
