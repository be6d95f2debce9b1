#!/usr/bin/env bash
# On a machine with a GPU, after `make build` (and `make venv`): everything the
# CUDA backend has to show there, in one command.
#   1. the gpu-labelled tests (CUDA against the CPU, op by op and end to end);
#   2. gguf-run --compare cpu,cuda on every shared model and on the 0.5B-shaped
#      qwen2 (and the 1.1B-shaped TinyLlama), JSON lines;
#   3. bench-run --backend cuda (prompt and decode tokens/s, achieved weight
#      GB/s) on the F16 1.1B and 0.5B shapes and the Q4_K_M 1.1B (made by our
#      gguf-quantize), with graphs on and off, beside the CPU backend.
# The device's name is in every bench line; record the results in docs/BENCHMARKS.md.
set -uo pipefail
build=${1:-build}
here=$(cd "$(dirname "$0")" && pwd)
shared=${GGUFSCOPE_MODELS:-$here/../../shared/models}
PP=${PP:-256} TG=${TG:-128} RUNS=${RUNS:-5}
status=0
nvidia-smi --query-gpu=name,memory.total,clocks.max.memory --format=csv || true
ctest --test-dir "$build" -L gpu --output-on-failure || status=1
q05=$("$here/synth-model.sh" "$build" qwen2.5-0.5b f16)
tl=$("$here/synth-model.sh" "$build" tinyllama-1.1b f16)
q4=$("$here/synth-model.sh" "$build" tinyllama-1.1b q4_k_m)
for m in "$shared"/*.gguf $q05 $tl; do
  case $(basename "$m") in quant-testvectors.gguf) continue ;; esac
  "$build/gguf-run" "$m" -p "The capital of France is" -n 16 --compare cpu,cuda --json \
    | python3 -c 'import json,sys; d=json.load(sys.stdin); c=d["compare"]; f=c["first_divergence"]; print(json.dumps({"compare":d["file"].split("/")[-1],"agree":c["agree"],"logits_prompt":c["points"][-1]["rel_prompt"],"logits_decode":c["points"][-1]["rel_decode"],"greedy_disagree":c["greedy_disagree"],"first":f and "%s %s pos %d"%(f["layer"],f["op"],f["pos"])}))' \
    || status=1
done
for m in $tl $q05 $q4; do
  "$build/bench-run" "$m" --backend cuda --pp "$PP" --tg "$TG" --runs "$RUNS" || status=1
  GGUFSCOPE_CUDA_GRAPHS=0 "$build/bench-run" "$m" --backend cuda --pp "$PP" --tg "$TG" --runs "$RUNS" \
    | sed 's/"engine":"ggufscope"/"engine":"ggufscope (no graphs)"/' || status=1
  "$build/bench-run" "$m" --backend cpu --pp 64 --tg 16 --runs 3 --threads "$(nproc)" || status=1
done
exit $status
