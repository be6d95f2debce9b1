#!/usr/bin/env bash
# Rewrites tests/data/golden/tokenize/pre-NAME@BASE.jsonl from llama.cpp itself: for each tokenizer.ggml.pre name the
# tokenizer runs (tok_pretok_name; test_tokenizer checks that each has its files), tiny-qwen2's and SmolLM2-135M-
# Instruct's vocabularies under that name (tests/py/pre_vocab.py) tokenized by llama.cpp (../shared/tools/tok.c built against a llama.cpp
# build outside the tree), line by line of tests/data/pretok_strings.txt.
#   LLAMA_CPP=/path/to/llama.cpp (built in LLAMA_CPP/build) [PYTHON=build/venv/bin/python] scripts/pretok-reference.sh
set -euo pipefail
: "${LLAMA_CPP:?set LLAMA_CPP to a llama.cpp source tree built in LLAMA_CPP/build}"
here=$(cd "$(dirname "$0")/.." && pwd)
python=${PYTHON:-$here/build/venv/bin/python}
# two vocabularies: tiny-qwen2's (../shared/models; merges of digits and spaces) and SmolLM2's (make models)
bases="tiny-qwen2:$here/../shared/models/tiny-qwen2-f32.gguf smollm2:$here/build/models/real/SmolLM2-135M-Instruct.Q4_1.gguf"
names="default gpt-2 phi-2 jina-es jina-de gigachat jina-v2-es jina-v2-de a.x-4.0 mellum modern-bert exaone4 mpt olmo
jais trillion granite-docling llama3 llama-v3 llama-bpe falcon3 falcon-h1 pixtral midm-2.0 lfm2 jina-v5-nano dbrx
smaug-bpe chatglm-bpe glm4 glm5 qwen2 qwen35 deepseek-r1-qwen kormo f2llmv2 stablelm2 hunyuan solar-open megrez smollm starcoder refact command-r
codeshell exaone minerva-7b mellum2 gpt-4o llama4 kanana2 talkie minimax-m2 tekken poro-chat bloom gpt3-finnish viking
deepseek-llm deepseek-coder deepseek-v3 hunyuan-dense joyai-llm hy_v4 kimi-k2 bailingmoe bailingmoe2 llada-moe falcon
jais-2 laguna"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
gcc "$here/../shared/tools/tok.c" -I"$LLAMA_CPP/include" -I"$LLAMA_CPP/ggml/include" \
  -L"$LLAMA_CPP/build/bin" -lllama -Wl,-rpath,"$LLAMA_CPP/build/bin" -o "$tmp/tok"
mkdir -p "$here/tests/data/golden/tokenize"
for b in $bases; do
  [ -f "${b#*:}" ] || { echo "pretok-reference: ${b#*:} not found" >&2; exit 1; }
  rm -f "$tmp"/*.gguf
  # shellcheck disable=SC2086
  "$python" "$here/tests/py/pre_vocab.py" "${b#*:}" "$tmp" $names
  for n in $names; do
    "$tmp/tok" "$tmp/$n.gguf" "$here/tests/data/pretok_strings.txt" 2>/dev/null \
      >"$here/tests/data/golden/tokenize/pre-$n@${b%%:*}.jsonl"
  done
done
echo "pretok-reference: wrote tests/data/golden/tokenize/pre-*.jsonl" >&2
