#!/usr/bin/env bash
# One model, the two engines in turn for ROUNDS rounds (bench-run, then
# llama-bench, same prompt/generation lengths and threads): on a shared or
# throttling machine the speed drifts between one engine's turn and the
# other's, so a ratio is only meaningful within a round; the median of the
# per-round ratios is what docs/BENCHMARKS.md reports. JSON lines on stdout,
# one per engine per round, then a summary line.
# BACKEND=cuda runs bench-run --backend cuda beside llama-bench with every layer
# on the GPU (-ngl 99; a CUDA build of llama-bench); BACKEND=cpu (the default)
# keeps llama-bench's layers on the CPU too (-ngl 0), whatever it was built with.
# BEFORE=other-build puts that build's bench-run in llama-bench's place (engine
# "before"), so a change's cost is read the same way: after/before per round.
# usage: LLAMA_BENCH=path/to/llama-bench [NUMERICS=ggml] [BACKEND=cuda] scripts/bench-interleaved.sh BUILD MODEL [ROUNDS]
#        BEFORE=path/to/old-build scripts/bench-interleaved.sh BUILD MODEL [ROUNDS]
set -euo pipefail
build=$1 model=$2 rounds=${3:-5}
PP=${PP:-64} TG=${TG:-32} RUNS=${RUNS:-5} THREADS=${THREADS:-2} BACKEND=${BACKEND:-cpu}
case $BACKEND in cuda) ngl=99 ;; *) ngl=0 ;; esac
: "${BEFORE:=}"
[ -n "$BEFORE" ] || : "${LLAMA_BENCH:?set LLAMA_BENCH to a llama-bench binary, or BEFORE to another build}"
lines=$(mktemp)
trap 'rm -f "$lines"' EXIT
for r in $(seq "$rounds"); do
  "$build/bench-run" "$model" --pp "$PP" --tg "$TG" --runs "$RUNS" --threads "$THREADS" --numerics "${NUMERICS:-exact}" \
    --backend "$BACKEND" | tee -a "$lines"
  if [ -n "$BEFORE" ]; then
    "$BEFORE/bench-run" "$model" --pp "$PP" --tg "$TG" --runs "$RUNS" --threads "$THREADS" --numerics "${NUMERICS:-exact}" \
      --backend "$BACKEND" | sed 's/"engine":"ggufscope"/"engine":"before"/' | tee -a "$lines"
  else
    "$LLAMA_BENCH" -m "$model" -t "$THREADS" -p "$PP" -n "$TG" -r "$RUNS" -ngl "$ngl" -o json 2>/dev/null |
      python3 "$(dirname "$0")/llama-bench-line.py" | tee -a "$lines"
  fi
done
python3 - "$lines" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
ours = [r for r in rows if r.get("engine") == "ggufscope"]
ref = [r for r in rows if r.get("engine") in ("llama.cpp", "before")]
ref_name = ref[0]["engine"]
out = {"bench": "interleaved", "model": ref[0]["model"], "reference": ref_name, "rounds": len(ref)}
for k in ("tg_tokens_per_s", "pp_tokens_per_s"):
    ratios = [o[k] / l[k] for o, l in zip(ours, ref)]
    out[k.split("_")[0] + "_ratios"] = [round(x, 3) for x in ratios]
    out[k.split("_")[0] + "_ratio_median"] = round(statistics.median(ratios), 3)
# both prompts' rates in the layers' multiply-adds a second (bench-run's count, the same for either engine), to
# read against bench-peak's ceilings
if ours and "layer_products_per_token" in ours[0]:
    n = ours[0]["layer_products_per_token"]
    rate = lambda lines: round(statistics.median(r["pp_tokens_per_s"] for r in lines) * n / 1e9, 1)
    out["pp_g_products_per_s"] = {"ggufscope": rate(ours), ref_name: rate(ref)}
print(json.dumps(out))
PY
