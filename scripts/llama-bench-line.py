#!/usr/bin/env python3
"""llama-bench's JSON (stdin) as one line in bench-run's format: the median of
its samples per test, as bench-run reports, rather than llama-bench's mean."""
import json
import sys

rows = json.load(sys.stdin)
out = {"bench": "run", "engine": "llama.cpp", "model": rows[0]["model_filename"].split("/")[-1],
       "threads": rows[0]["n_threads"], "pp": 0, "tg": 0, "runs": len(rows[0]["samples_ts"])}
# Where its layers ran: the GPU when any were offloaded to a GPU backend (-ngl > 0 in a CUDA build).
on_gpu = rows[0].get("n_gpu_layers", 0) > 0 and rows[0].get("gpu_info", "") != ""
out["backend"] = "cuda" if on_gpu else "cpu"
out["device"] = rows[0].get("gpu_info") if on_gpu else rows[0].get("cpu_info", "cpu")
for r in rows:
    s = sorted(r["samples_ts"])
    med = s[len(s) // 2]
    if r["n_prompt"]:
        out["pp"], out["pp_tokens_per_s"] = r["n_prompt"], round(med, 2)
    else:
        out["tg"], out["tg_tokens_per_s"] = r["n_gen"], round(med, 2)
print(json.dumps(out))
