#!/usr/bin/env python3
"""Dequantization side by side with llama.cpp, in the same run.

  compare_llama_dequant.py LLAMA_TEST_QUANTIZE_PERF [BUILD_DIR] [RUNS]

Runs llama.cpp's test-quantize-perf (built by you, outside this project) and
our bench-dequant on the same sizes (16384 values, 2000 iterations, one
thread, cache-resident) for each type, alternating, and prints one JSON line
per type with both medians (GB/s of f32 output). Nothing here builds llama.cpp.
"""
import json
import re
import statistics
import subprocess
import sys

TYPES = ["f16", "bf16", "q4_0", "q8_0", "q4_K", "q5_K", "q6_K", "q4_1", "q5_0", "q2_K", "q3_K",
         "iq4_nl", "iq4_xs", "iq2_xxs", "iq3_s", "tq2_0", "mxfp4"]


def llama_once(binary: str, t: str):
    """GB/s, or None when test-quantize-perf skips the type (it only times types it can quantize)."""
    out = subprocess.run([binary, "--op", "dequantize_row_q", "--type", t, "--size", "16384", "-i", "2000"],
                         capture_output=True, text=True, check=True).stdout
    m = re.search(r"float32 throughput\s*:\s*([\d.]+) GB/s", out)
    return float(m.group(1)) if m else None


def ours_once(build: str, t: str) -> dict:
    out = subprocess.run([f"{build}/bench-dequant", "--big-mib", "0", "--runs", "3", "--types", t.upper()],
                         capture_output=True, text=True, check=True).stdout
    best = {}
    for line in out.splitlines():
        d = json.loads(line)
        if d["type"] == t.upper():
            best[d["impl"]] = d["gb_s_f32_out"]
    return best


def main() -> int:
    binary = sys.argv[1]
    build = sys.argv[2] if len(sys.argv) > 2 else "build"
    runs = int(sys.argv[3]) if len(sys.argv) > 3 else 5
    for t in TYPES:
        llama, ours = [], {}
        if llama_once(binary, t) is None:
            print(json.dumps({"bench": "dequant-vs-llama.cpp", "type": t.upper(),
                              "skipped": "test-quantize-perf does not time this type"}), flush=True)
            continue
        for _ in range(runs):  # alternate so both see the same machine state
            llama.append(llama_once(binary, t))
            for impl, v in ours_once(build, t).items():
                ours.setdefault(impl, []).append(v)
        row = {"bench": "dequant-vs-llama.cpp", "type": t.upper(), "values": 16384, "iterations": 2000,
               "threads": 1, "runs": runs, "llama_cpp_gb_s": round(statistics.median(llama), 2)}
        for impl, vs in ours.items():
            row[f"ggufscope_{impl}_gb_s"] = round(statistics.median(vs), 2)
        fastest = max(v for k, v in row.items() if k.startswith("ggufscope_"))
        row["best_ratio"] = round(fastest / row["llama_cpp_gb_s"], 2)
        print(json.dumps(row), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
