"""The tensor names gguf-py (llama.cpp's own Python package) lists for an architecture, as JSON:
{"arch": [name, ...]}, names without their .weight/.bias suffix ("blk.{bid}.attn_q", "token_embd"). An architecture
newer than the pinned gguf on PyPI takes its names from tests/data/gguf_py_tensors_newer.json (llama.cpp's own gguf-py,
as llama-cpp-python vendors it); one the installed gguf knows takes the installed gguf's names, and those that file's
"added" lists for it (names the vendored gguf-py gives an architecture the pinned one lists without them).
usage: arch_tensors.py ARCH [ARCH...]"""
import json
import os
import sys

from gguf.constants import MODEL_ARCH_NAMES, MODEL_TENSORS, TENSOR_NAMES

by_name = {v: k for k, v in MODEL_ARCH_NAMES.items()}
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'data', 'gguf_py_tensors_newer.json')) as f:
    recorded = json.load(f)
newer, added = recorded['tensors'], recorded.get('added', {})
print(json.dumps({a: sorted({TENSOR_NAMES[t] for t in MODEL_TENSORS[by_name[a]]} | set(added.get(a, [])))
                  if a in by_name else newer.get(a) for a in sys.argv[1:]}))
