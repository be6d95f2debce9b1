#!/usr/bin/env bash
# Rewrites tests/data/llama_vocab_rules.jsonl from llama.cpp itself: writes tests/py/vocab_rules.py's files, builds
# scripts/llama-vocab-reference.c against a llama.cpp build outside the tree and asks llama.cpp's vocabulary loader
# which tokens end generation and what each token's attribute is, in those files and in every model at hand.
#   LLAMA_CPP=/path/to/llama.cpp (built in LLAMA_CPP/build) [PYTHON=build/venv/bin/python] scripts/llama-vocab-reference.sh
set -euo pipefail
: "${LLAMA_CPP:?set LLAMA_CPP to a llama.cpp source tree built in LLAMA_CPP/build}"
here=$(cd "$(dirname "$0")/.." && pwd)
python=${PYTHON:-$here/build/venv/bin/python}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
gcc "$here/scripts/llama-vocab-reference.c" -I"$LLAMA_CPP/include" -I"$LLAMA_CPP/ggml/include" \
  -L"$LLAMA_CPP/build/bin" -lllama -Wl,-rpath,"$LLAMA_CPP/build/bin" -o "$tmp/ref"
"$python" "$here/tests/py/vocab_rules.py" "$tmp"
# the rules' files, then every model with a vocabulary in ../shared/models (and moe/) and the real ones fetched from PyPI
shopt -s nullglob
"$tmp/ref" "$tmp/harmony.gguf" "$tmp/harmony-no-call.gguf" "$tmp/keyed.gguf" "$here"/../shared/models/*.gguf \
  "$here"/../shared/models/moe/*.gguf "$here"/build/models/real/*.gguf 2>/dev/null \
  >"$here/tests/data/llama_vocab_rules.jsonl"
echo "llama-vocab-reference: wrote tests/data/llama_vocab_rules.jsonl" >&2
