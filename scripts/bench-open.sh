#!/usr/bin/env bash
# Open benchmark: a writer-made file with 100 000 tensors and a 150 000-entry
# token array, opened by gguf_open and by gguf-py's GGUFReader in the same run.
# Prints JSON lines (medians of several runs).
set -euo pipefail
build=${1:-build}
file=$build/bench/open-100k.gguf
mkdir -p "$build/bench"
[ -f "$file" ] || "$build/bench-open" "$file" --make --runs 1 >/dev/null
"$build/bench-open" "$file" --runs 15
"$build/venv/bin/python" bench/bench_open_gguf_py.py "$file" 5
