#!/usr/bin/env bash
# On a GPU machine, after scripts/gpu-pack.sh's payload is unpacked at $G (gpu-validate.sh does it; or
# python3's tarfile), one of the real models the fetch script brings, on the CUDA backend: llama.cpp's -deq
# goldens (exact numerics: prompt logits, every layer's trace, the greedy tokens), --compare cpu,cuda and
# cpu:ggml,cuda, a chat answer and bench-run. The real files are larger than one device call carries (64 MiB),
# so they travel in parts over consecutive calls to the warm machine, which keeps /tmp for 30 s after each:
#   here:   split -b 51000000 -d -a 1 build/models/real/M.gguf /tmp/part.   (one folder per part, each
#           ignored by .git/info/exclude, goldens beside the first: ../shared/golden/generate/M-deq.*)
#   there:  one call per part: mkdir -p $R && cp .gN/part $R/partN (and the goldens), then the last call:
#           cat $R/part* > $R/M.gguf && scripts/gpu-real.sh $R/M.gguf TOLERANCE [CHAT_TEMPLATE]
# TOLERANCE: the golden README's for the architecture (5e-4; 2e-3 for gemma3). CHAT_TEMPLATE: for a file without
# tokenizer.chat_template (gemma-3-270m: gemma). The goldens are read from the model's folder. G and R may be set.
set -uo pipefail
model=${1:?usage: gpu-real.sh MODEL.gguf TOLERANCE [CHAT_TEMPLATE]}
tol=${2:?usage: gpu-real.sh MODEL.gguf TOLERANCE [CHAT_TEMPLATE]}
chat=(--chat)
[ -n "${3:-}" ] && chat=(--chat-template "$3" --chat)
G=${G:-/tmp/ggufscope-gpu}
B=$G/bin
dir=$(dirname "$model")
export LD_LIBRARY_PATH=$G/lib:${LD_LIBRARY_PATH:-}
for lib in libcublas.so.13 libcudart.so.13; do  # the toolkit's, where ld.so does not look
  ldconfig -p | grep -q "$lib " && continue
  found=$(find /usr/local /opt /usr/lib -name "$lib" 2>/dev/null | head -1)
  [ -n "$found" ] && export LD_LIBRARY_PATH=$LD_LIBRARY_PATH:$(dirname "$found")
done
export GGUFSCOPE_CUDA_LIB=$B/libggufscope-cuda.so
status=0
echo "sha256 $(sha256sum "$model" | cut -c1-64) $(basename "$model")"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for j in "$dir"/*-deq.*.json; do
  [ -f "$j" ] || continue
  prompt=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["prompt"], end="")' "$j")
  as_chat=(); case $j in *.chat*) as_chat=("${chat[@]}") ;; esac
  echo "=== $(basename "$j") against --backend cuda"
  timeout 120 "$B/gguf-run" "$model" --backend cuda "${as_chat[@]}" -p "$prompt" --against "$j" \
    --against-logits "${j%.json}.prompt_logits.npy" --tolerance "$tol" >/tmp/gpu-real.log 2>&1 || status=1
  grep -E '^(greedy|layers|logits|verdict) ' /tmp/gpu-real.log
done
# cpu:ggml against cuda: every op beyond the tolerance re-derived on each side in its own numerics (explained: ~)
for pair in cpu,cuda cpu:ggml,cuda; do
  echo "=== compare $pair"
  timeout 180 "$B/gguf-run" "$model" "${chat[@]}" -p "What is the capital of France?" -n 16 --compare "$pair" \
    >/tmp/gpu-real.log 2>&1 || status=1
  grep -E '^(result_norm|greedy|verdict|explained|    re-derived) ' /tmp/gpu-real.log
done
echo "=== a chat answer"
timeout 60 "$B/gguf-run" "$model" --backend cuda "${chat[@]}" -p "Write a haiku about the sea." -n 48 2>&1 | tail -8
echo "=== speed"
for r in 1 2 3; do timeout 60 "$B/bench-run" "$model" --backend cuda --pp 512 --tg 128 --runs 3 || status=1; done
exit $status
