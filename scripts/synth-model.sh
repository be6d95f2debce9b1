#!/usr/bin/env bash
# Writes a full-size synthetic model (../shared/tools/synth_model.py: a preset
# of the seed reports' shapes, deterministic random weights) into BUILD/models
# once, and prints its path. Nothing is printed (exit 0) when the synth script
# is not beside the repository: callers skip then. DTYPE q4_k_m, q6_k or q8_0:
# the f16 model quantized by our gguf-quantize (what llama-quantize would write).
#   synth-model.sh BUILD PRESET DTYPE      e.g. build qwen2.5-0.5b f16
set -euo pipefail
build=${1:-build}
preset=${2:-qwen2.5-0.5b}
dtype=${3:-f16}
synth=$(cd "$(dirname "$0")/.." && pwd)/../shared/tools/synth_model.py
model=$build/models/$preset-shape-$dtype.gguf
case $dtype in
q4_k_m | q6_k | q8_0)
  if [ ! -f "$model" ]; then
    f16=$("$0" "$build" "$preset" f16)
    [ -n "$f16" ] || exit 0
    echo "synth-model: writing $model with gguf-quantize" >&2
    "$build/gguf-quantize" "$f16" "$model" "$dtype" >&2
  fi
  echo "$model"
  exit 0
  ;;
esac
if [ ! -f "$model" ]; then
  if [ ! -f "$synth" ]; then
    echo "synth-model: no $synth: cannot write $model" >&2
    exit 0
  fi
  mkdir -p "$build/models"
  echo "synth-model: writing $model with synth_model.py (about 30 s per GB)" >&2
  "$build/venv/bin/python" "$synth" "$preset" "$model.tmp" --dtype "$dtype" >&2
  mv "$model.tmp" "$model"
fi
echo "$model"
