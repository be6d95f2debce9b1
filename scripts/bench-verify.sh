#!/usr/bin/env bash
# Hash and audit throughput on a 1 GB F16 model (the qwen2.5-0.5b shape of the
# seed reports, written by ../shared/tools/synth_model.py into the build
# folder once), beside memory bandwidth and sha256sum in the same run.
set -euo pipefail
build=${1:-build}
model=${MODEL:-$build/bench/qwen2.5-0.5b-shape-f16.gguf}
synth=$(dirname "$0")/../../shared/tools/synth_model.py
if [ ! -f "$model" ]; then
  if [ ! -f "$synth" ]; then
    echo "bench-verify: no $model and no $synth to write it: skipped" >&2
    exit 0
  fi
  mkdir -p "$(dirname "$model")"
  echo "bench-verify: writing $model with synth_model.py (about 30 s)" >&2
  "$build/venv/bin/python" "$synth" qwen2.5-0.5b "$model" --dtype f16 >&2
fi
"$build/bench-verify" "$model" "${RUNS:-5}"
