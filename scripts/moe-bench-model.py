#!/usr/bin/env python3
"""Writes the mixture-of-experts model the benchmarks measure: Qwen3-30B-A3B's layer in its real proportions
(n_embd 2048, 32 query heads and 4 key/value heads of 128, 64 experts of width 768 with 8 used per token, as the
issue asks; the real model has 128) over 4 layers instead of 48, so its F32 file (4.9 GB) is written in memory on a
24 GB machine; llama-quantize or gguf-quantize makes the Q4_K_M (about 0.7 GB) the benchmarks run. Its layer reads
what a real one's does, so per-token speeds scale by the layer count. Deterministic random weights, written by
../shared/tools/synth_arch.py's writer (the qwen3moe preset's tokenizer and norms).

    moe-bench-model.py OUT-f32.gguf"""
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, '..', '..', 'shared', 'tools'))
import synth_arch  # noqa: E402

PRESET = dict(synth_arch.PRESETS['tiny-qwen3moe'], n_embd=2048, n_layer=4, n_head=32, n_kv=4, hd=128, n_ff=6144,
              n_exp=64, n_used=8, n_ffe=768, seed=5001)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__.split('\n\n')[1])
    synth_arch.PRESETS['qwen3moe-a3b-layers'] = PRESET
    sys.argv = [sys.argv[0], 'qwen3moe-a3b-layers', sys.argv[1]]
    synth_arch.main()


if __name__ == '__main__':
    main()
