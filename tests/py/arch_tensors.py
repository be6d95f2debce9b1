"""The tensor names gguf-py (llama.cpp's own Python package) lists for an architecture, as JSON:
{"arch": [name, ...]}, names without their .weight/.bias suffix ("blk.{bid}.attn_q", "token_embd").
usage: arch_tensors.py ARCH [ARCH...]"""
import json
import sys

from gguf.constants import MODEL_ARCH_NAMES, MODEL_TENSORS, TENSOR_NAMES

by_name = {v: k for k, v in MODEL_ARCH_NAMES.items()}
print(json.dumps({a: sorted(TENSOR_NAMES[t] for t in MODEL_TENSORS[by_name[a]]) for a in sys.argv[1:]}))
