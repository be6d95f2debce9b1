#!/usr/bin/env python3
"""Times gguf-py's GGUFReader on the same file as bench-open; one JSON line, same fields."""
import json
import statistics
import sys
import time

import gguf


def main() -> int:
    path = sys.argv[1]
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    times = []
    n_tensors = n_keys = 0
    for _ in range(runs):
        t0 = time.perf_counter()
        r = gguf.GGUFReader(path)
        n_tensors = len(r.tensors)
        n_keys = sum(1 for k in r.fields if not k.startswith("GGUF."))
        del r
        times.append((time.perf_counter() - t0) * 1e3)
    times.sort()
    print(json.dumps({"bench": "open", "impl": f"gguf-py {gguf.__version__ if hasattr(gguf, '__version__') else ''}".strip(),
                      "file": path, "tensors": n_tensors, "keys": n_keys, "runs": runs,
                      "median_ms": round(statistics.median(times), 3), "min_ms": round(times[0], 3),
                      "max_ms": round(times[-1], 3)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
