#!/usr/bin/env bash
# Hash and audit throughput on a 1 GB F16 model (the qwen2.5-0.5b shape of the
# seed reports, written by ../shared/tools/synth_model.py into the build
# folder once by synth-model.sh), beside memory bandwidth and sha256sum in the same run.
set -euo pipefail
build=${1:-build}
model=${MODEL:-$("$(dirname "$0")/synth-model.sh" "$build" qwen2.5-0.5b f16)}
if [ -z "$model" ]; then
  echo "bench-verify: no model to measure: skipped" >&2
  exit 0
fi
"$build/bench-verify" "$model" "${RUNS:-5}"
